// Sellers on a local chain: a seller registers an agent (an endpoint served here, which checks
// svc's signature), the official client (@x402/fetch + @x402/evm) pays two invokes that settle
// on chain, the seller withdraws the balance, and svc's payout moves exactly the withdrawn
// amount to the seller's wallet, once, under the EIP-3009 nonce the withdrawal names.
// Usage: node seller.mjs BASE_URL   (env: RPC_URL, TOKEN, PAYER_KEY, SELLER_KEY, TREASURY)
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createPublicClient, http, keccak256, parseAbi, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { sellerApi } from "./seller-api.mjs";

const [base] = process.argv.slice(2);
const { RPC_URL, TOKEN, SELLER_KEY, TREASURY } = process.env;
const payer = privateKeyToAccount(process.env.PAYER_KEY);
const wallet = privateKeyToAccount(generatePrivateKey()).address;
const chain = createPublicClient({ chain: hardhat, transport: http(RPC_URL) });
const abi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function authorizationState(address, bytes32) view returns (bool)",
]);
const balanceOf = (who) => chain.readContract({ address: TOKEN, abi, functionName: "balanceOf", args: [who] });
const problems = [];
const check = (ok, message) => { if (!ok) problems.push(message); };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The seller's endpoint: answers JSON, and only to calls svc signed with the agent's secret.
let secret = "";
let refused = 0;
const endpoint = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const raw = Buffer.concat(chunks);
    const fields = Object.fromEntries((req.headers["x-svc-signature"] ?? "").split(",").map((p) => p.split("=", 2)));
    const good = createHmac("sha256", secret).update(`${fields.t}.`).update(raw).digest();
    const given = Buffer.from(fields.v1 ?? "", "hex");
    if (given.length !== good.length || !timingSafeEqual(given, good)) {
      refused += 1;
      res.writeHead(401).end();
      return;
    }
    const { query } = JSON.parse(raw.toString());
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ answer: `flows for ${query}` }));
  });
});
await new Promise((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
const port = endpoint.address().port;

const api = sellerApi(base, SELLER_KEY);

try {
  const created = await api("POST", "/agents", {
    name: "Flow explainer",
    endpoint: `http://127.0.0.1:${port}/`,
    description: "Explains on-chain flows for a token, in plain words.",
    category: "research",
  });
  const id = created.agent.id;
  secret = created.signing.secret;
  await api("PUT", `/agents/${id}/x402-config`, {
    enabled: true,
    pricing: { model: "per_request", amount: "0.25", currency: "USDC" },
    wallet_address: wallet,
    network: "ethereum",
    limits: { max_requests_per_day: 100, rate_limit_per_minute: 60 },
  });

  // The official client pays two invokes; each settles on chain.
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: payer });
  client.setSpendControls({ allowedAssets: [{ network: "eip155:31337", asset: TOKEN }] });
  const paidFetch = wrapFetchWithPayment(fetch, client);
  for (const query of ["PEPE", "WIF"]) {
    const response = await paidFetch(`${base}/x402/agents/${id}/invoke`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query }),
    });
    const text = await response.text();
    check(response.status === 200, `invoke: status ${response.status}: ${text}`);
    check(text.includes(`flows for ${query}`), `invoke answer: ${text}`);
    const settlement = decodePaymentResponseHeader(response.headers.get("payment-response") ?? "");
    check(/^0x[0-9a-f]{64}$/i.test(settlement?.transaction ?? ""), `invoke settlement: ${JSON.stringify(settlement)}`);
  }
  check(refused === 0, `the endpoint refused ${refused} calls as unsigned`);
  const revenue = await api("GET", `/agents/${id}/revenue`);
  check(revenue.balance === "0.5" && revenue.unsettled === "0", `revenue: ${JSON.stringify(revenue)}`);

  // Withdraw it all; svc pays it out on chain.
  const before = await balanceOf(wallet);
  const withdrawal = await api("POST", `/agents/${id}/withdrawals`, { amount: "0.5" });
  let status = withdrawal.status;
  let row = withdrawal;
  for (let i = 0; i < 60 && status !== "paid" && status !== "failed"; i += 1) {
    await sleep(500);
    row = (await api("GET", `/agents/${id}/withdrawals`)).withdrawals[0];
    status = row.status;
  }
  check(status === "paid", `payout: ${JSON.stringify(row)}`);
  const paid = (await balanceOf(wallet)) - before;
  check(paid === 500000n, `the wallet got ${paid}, withdrew 500000`);
  const nonce = keccak256(toHex(`svc-payout:${withdrawal.id}`));
  const used = await chain.readContract({ address: TOKEN, abi, functionName: "authorizationState", args: [TREASURY, nonce] });
  check(used === true, "the payout's authorization is not used on chain");
  // Another round of payouts moves nothing more.
  await sleep(11000);
  check((await balanceOf(wallet)) - before === 500000n, "a later round paid again");
  const after = await api("GET", `/agents/${id}/revenue`);
  check(after.balance === "0" && after.pending_payouts === "0", `revenue after: ${JSON.stringify(after)}`);
  console.log(JSON.stringify({ check: "seller paid and paid out on a local chain", agent: id, payout: row.transaction, amount: String(paid) }));
} catch (err) {
  problems.push(String(err?.stack ?? err));
} finally {
  endpoint.close();
}
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
