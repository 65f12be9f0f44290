// Pays one svc route with the official x402 TypeScript client (@x402/fetch + @x402/evm) and
// checks what a paying agent relies on: 200, a successful PAYMENT-RESPONSE for the network it
// paid on, and a JSON answer. Usage: node pay.mjs BASE_URL METHOD PATH [JSON_BODY | @FILE]
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const [base, method, path, bodyArg] = process.argv.slice(2);
// `@file` reads the body from a file (a large body does not fit in one argument).
const body = bodyArg?.startsWith("@") ? (await import("node:fs")).readFileSync(bodyArg.slice(1), "utf8") : bodyArg;
const payer = privateKeyToAccount(process.env.PAYER_KEY);

const client = new x402Client();
registerExactEvmScheme(client, { signer: payer });
const paidFetch = wrapFetchWithPayment(fetch, client);

const init = { method, headers: body ? { "content-type": "application/json" } : {}, body };
const response = await paidFetch(base + path, init);
const text = await response.text();
const header = response.headers.get("payment-response");
const settlement = header ? decodePaymentResponseHeader(header) : null;

const problems = [];
if (response.status !== 200) problems.push(`status ${response.status}: ${text}`);
if (!settlement) problems.push("no PAYMENT-RESPONSE header");
else {
  if (settlement.success !== true) problems.push(`settlement failed: ${JSON.stringify(settlement)}`);
  if (settlement.payer?.toLowerCase() !== payer.address.toLowerCase()) problems.push(`payer ${settlement.payer}`);
  if (!String(settlement.network).startsWith("eip155:")) problems.push(`network ${settlement.network}`);
}
try { JSON.parse(text); } catch { problems.push("answer is not JSON"); }

console.log(JSON.stringify({ client: "@x402/fetch", status: response.status, settlement }));
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
