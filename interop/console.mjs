// The console in a real browser (Chromium from the distribution, driven by playwright-core):
// sign in with a key and with a wallet (an EIP-1193 provider injected into the page that signs
// with a fixed test key), see the balance, the spend chart and the calls, make a key, use it,
// revoke it, buy credits over x402 from the page, register and price a seller agent and see
// its revenue after a paid invoke, start an agent sandbox (a stand-in gateway) and watch its log arrive live, sign out; every page
// screenshotted, no console error anywhere (a Content-Security-Policy violation is one), and
// no serious or critical accessibility violation (axe-core).
// Usage: node console.mjs <svc url> <api key of an account with 5 USD> <screenshot dir>
import { createRequire } from "node:module";
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { privateKeyToAccount } from "viem/accounts";

const require = createRequire(import.meta.url);
const [url, key, shots] = process.argv.slice(2);
if (!url || !key || !shots) throw new Error("usage: node console.mjs <svc url> <api key> <screenshot dir>");
mkdirSync(shots, { recursive: true });
const wallet = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"],
});
const problems = [];
function check(ok, what) {
  if (!ok) problems.push(what);
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
}
async function opened(context) {
  const page = await context.newPage();
  // The browser reports every 4xx as an error; a 402 challenge is how x402 begins, so it is not one.
  const expected = (m) => m.text().includes("status of 402 (Payment Required)");
  page.on("console", (m) => m.type() === "error" && !expected(m) && problems.push(`console error on ${page.url()}: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error on ${page.url()}: ${e}`));
  return page;
}
async function shot(page, name) {
  await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
}
async function apiStatus(path, apiKey) {
  return (await fetch(`${url}${path}`, { headers: { "x-api-key": apiKey } })).status;
}

try {
  // A call billed in credits first, so the overview and the calls have something to show.
  const billed = await fetch(`${url}/api/svc-tools/top-picks-lite`, { headers: { "x-api-key": key } });
  check(billed.status === 200, `a call billed in credits (${billed.status})`);

  // 1. With an API key.
  const byKey = await browser.newContext();
  let page = await opened(byKey);
  await page.goto(`${url}/console`);
  check(page.url() === `${url}/console/sign-in`, "a browser without a session is sent to sign in");
  await shot(page, "sign-in");
  await page.fill("#key", key);
  await page.click("text=Sign in with the key");
  await page.waitForURL(`${url}/console`);
  const balance = (await (await fetch(`${url}/api/account`, { headers: { "x-api-key": key } })).json()).balance;
  check((await page.textContent(".balance")).includes(`${balance} USD`), `the overview shows the balance (${balance})`);
  check((await page.$$("svg.chart rect.data")).length === 1, "the chart has today's data spend");
  await shot(page, "overview");
  await page.click("nav >> text=Calls");
  check((await page.textContent("main")).includes("alpha.top_picks_lite"), "the call is listed");
  await shot(page, "calls");
  await page.click("main table a");
  check((await page.textContent("main")).includes("charged"), "the call's detail");
  await shot(page, "call");
  // The agent sandbox: start one (a stand-in gateway), see its log arrive live, stop it.
  await page.click("nav >> text=Agent sandbox");
  await shot(page, "sandbox");
  await page.selectOption("#f-template", "analyst");
  await page.click("text=Start the agent");
  await page.waitForURL(`${url}/console/sandbox`);
  const live = await page
    .waitForFunction(() => document.querySelector("pre.log")?.textContent.includes("listening on 127.0.0.1:18789"), null, { timeout: 30000 })
    .then(() => true, () => false);
  check(live, "the agent's log arrives live in the page");
  await shot(page, "sandbox-running");
  await page.reload();
  await page.waitForFunction(() => document.querySelector("[data-gateway-state]")?.textContent.startsWith("running"), null, { timeout: 30000 });
  await page.click("text=Stop the agent");
  const ended = await page
    .waitForFunction(() => document.querySelector("pre.log")?.textContent.includes("[the agent has ended]"), null, { timeout: 30000 })
    .then(() => true, () => false);
  check(ended, "the log says when the agent has ended");
  await page.click("nav >> text=Keys");
  check((await page.textContent("main")).includes("a key cannot do it"), "a key's session cannot manage keys");
  await shot(page, "keys-as-key");
  await page.click("text=Sign out");
  await page.waitForURL(`${url}/console/sign-in`);
  await page.goto(`${url}/console`);
  check(page.url() === `${url}/console/sign-in`, "signed out for good");

  // 2. With a wallet: the page's script asks the injected provider to sign.
  const byWallet = await browser.newContext();
  await byWallet.exposeFunction("__svcTestSign", (message) => wallet.signMessage({ message }));
  await byWallet.exposeFunction("__svcTestSignTyped", (json) => {
    const { types, domain, primaryType, message } = JSON.parse(json);
    delete types.EIP712Domain;
    const values = { ...message, value: BigInt(message.value), validAfter: BigInt(message.validAfter), validBefore: BigInt(message.validBefore) };
    return wallet.signTypedData({ types, domain, primaryType, message: values });
  });
  await byWallet.addInitScript((address) => {
    window.ethereum = {
      request: async ({ method, params }) => {
        if (method === "eth_requestAccounts") return [address];
        if (method === "personal_sign") return window.__svcTestSign(params[0]);
        if (method === "eth_signTypedData_v4") return window.__svcTestSignTyped(params[1]);
        throw new Error(`unsupported ${method}`);
      },
    };
  }, wallet.address);
  page = await opened(byWallet);
  await page.goto(`${url}/console/sign-in`);
  await page.click("text=Sign in with a wallet");
  await page.waitForURL(`${url}/console`, { timeout: 10000 }).catch(async (e) => {
    throw new Error(`the wallet sign-in ended on ${page.url()}: ${await page.textContent("main")}`);
  });
  check((await page.textContent("header")).includes(wallet.address.toLowerCase()), "signed in as the wallet");
  await page.click("nav >> text=Keys");
  await page.fill("#f-name", "browser <made>");
  await page.check("input[name=scopes][value=data]");
  await page.click("text=Make the key");
  const made = (await page.textContent("code.secret")).trim();
  check(/^svck_[0-9a-f]{64}$/.test(made), "the new key is shown once");
  await shot(page, "keys-made");
  check((await apiStatus("/api/account", made)) === 200, "the new key works on the API");
  await page.click('button[aria-label="Revoke browser <made>"]');
  await page.waitForURL(`${url}/console/keys`);
  check((await page.textContent("main")).includes("revoked"), "the key is listed as revoked");
  check((await apiStatus("/api/account", made)) === 401, "the revoked key no longer works");
  check((await page.textContent("tbody tr td:nth-child(6)")).trim() !== "never", "the key says when it was last used");
  await shot(page, "keys-revoked");

  // The LLM proxy's token, shown on asking, and its automatic top-up set through its form.
  await page.click("text=Show the LLM token");
  const llmToken = (await page.textContent("code.secret")).trim();
  check(llmToken.startsWith("svc") && llmToken.length > 20, "the LLM token is shown when asked");
  await page.check("#t-enabled");
  await page.fill("#t-amount", "5");
  await page.click("text=Save the top-up");
  await page.waitForURL(`${url}/console/keys`);
  check((await page.textContent("main")).includes("On: a proxied call that finds the credits exhausted may buy 5 USD"), "the top-up is on");
  await shot(page, "keys-llm");

  // Credits bought from the page: the wallet signs the x402 payment the purchase route asks for.
  await page.click("nav >> text=Credits");
  const before = await page.textContent("[data-balance]");
  await page.fill("#amount", "2.5");
  await page.click("text=Buy with a wallet");
  const bought = await page
    .waitForFunction((was) => document.querySelector("[data-balance]")?.textContent !== was, before, { timeout: 15000 })
    .then(() => true, () => false);
  const after = await page.textContent("[data-balance]");
  check(bought && after.includes("2.5 USD"), `credits bought over x402 from the page (${before} -> ${after})`);
  check((await page.textContent("main")).includes("purchase"), "the purchase is listed");
  await shot(page, "credits");

  // A seller agent: registered and priced from the page, invoked and paid over x402 (svc pay),
  // its revenue on its chart.
  const seller = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ answer: "whales bought" }));
    });
  });
  await new Promise((done) => seller.listen(0, "127.0.0.1", done));
  try {
    await page.click("nav >> text=Seller agents");
    await page.fill("#new-name", "Flow explainer");
    await page.fill("#new-endpoint", `http://127.0.0.1:${seller.address().port}/agent`);
    await page.fill("#new-description", "Answers questions about on-chain flows in plain words.");
    await page.click("text=Register the agent");
    check((await page.textContent("code.secret")).startsWith("whsec_"), "the agent's signing secret is shown once");
    const agent = (await page.textContent("dl.detail code")).trim();
    await page.check("#x402-enabled");
    await page.fill("#x402-pricing", JSON.stringify({ model: "per_request", amount: "0.05", currency: "USDC" }));
    await page.fill("#x402-wallet_address", wallet.address);
    await page.click("text=Save how it sells");
    await page.waitForURL(`${url}/console/agents/${agent}`);
    check((await page.textContent("main")).includes("0.05 USDC a call"), "the agent sells at its price");
    const env = { ...process.env, SVC_PAYER_KEY: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318" };
    const invoked = await promisify(execFile)(process.env.SVC_BIN, ["pay", "POST", `/x402/agents/${agent}/invoke`, "--body", '{"query":"who bought?"}', "--url", url], { env })
      .then(() => true, (e) => { console.log(e.stderr); return false; });
    check(invoked, "the agent is invoked and paid over x402");
    await page.reload();
    check((await page.$$("svg.chart rect.revenue")).length === 1, "its revenue is on its chart");
    await shot(page, "agent");
  } finally {
    seller.close();
  }

  // 3. Accessibility of every page (axe-core, injected, so this context waives the CSP).
  const audit = await browser.newContext({ bypassCSP: true });
  page = await audit.newPage();
  const pages = ["/console/sign-in"];
  await page.goto(`${url}/console/sign-in`);
  await page.fill("#key", key);
  await page.click("text=Sign in with the key");
  await page.waitForURL(`${url}/console`);
  pages.push("/console", "/console/calls", "/console/credits", "/console/sandbox", "/console/agents", "/console/keys", "/console/nowhere");
  for (const path of pages) {
    await page.goto(`${url}${path}`);
    await page.addScriptTag({ path: require.resolve("axe-core/axe.min.js") });
    const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
    const serious = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    for (const v of serious) console.log(`  ${path}: ${v.id} (${v.impact}): ${v.help}`);
    check(serious.length === 0, `${path}: no serious accessibility violation (${result.violations.length} minor)`);
  }
} finally {
  await browser.close();
}
for (const p of problems) console.error(`problem: ${p}`);
if (problems.length) process.exit(1);
console.log(`the console passed in a real browser; screenshots in ${shots}`);
