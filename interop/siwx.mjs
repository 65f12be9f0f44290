// A payer at a volume tier signs in with the official sign-in-with-x hook of @x402/extensions
// (wrapFetchWithSIWx) before it pays with @x402/fetch: the challenge it is answered quotes its
// own, discounted price, and that is what it pays. Usage: node siwx.mjs BASE_URL PATH
// It first pays SEED calls (default 100) at list price, so the payer reaches the 20 % tier.
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { privateKeyToAccount } from "viem/accounts";

const [base, path] = process.argv.slice(2);
const payer = privateKeyToAccount(process.env.PAYER_KEY);

// Records what each request carried and what came back, to check the flow afterwards.
const seen = [];
const recording = async (input, init) => {
  const request = new Request(input, init);
  const response = await fetch(request);
  seen.push({
    signedIn: request.headers.has("sign-in-with-x"),
    payment: request.headers.get("payment-signature"),
    status: response.status,
    challenge: response.headers.get("payment-required"),
  });
  return response;
};
const client = new x402Client();
registerExactEvmScheme(client, { signer: payer });
const paidFetch = wrapFetchWithPayment(wrapFetchWithSIWx(recording, payer), client);

const plainFetch = wrapFetchWithPayment(fetch, client);
for (let i = 0; i < Number(process.env.SEED ?? 100); i++) {
  const seeded = await plainFetch(base + path, { method: "GET" });
  if (seeded.status !== 200) throw new Error(`seed payment ${i}: ${seeded.status} ${await seeded.text()}`);
}

const response = await paidFetch(base + path, { method: "GET" });
const text = await response.text();
const decode = (b64) => JSON.parse(Buffer.from(b64, "base64").toString());
const problems = [];
const list = seen[0]?.challenge ? BigInt(decode(seen[0].challenge).accepts[0].amount) : null;
const quoted = seen.find((s) => s.signedIn && s.status === 402);
const paid = seen.find((s) => s.payment);
const amount = (s) => BigInt(decode(s.payment).accepted.amount);
if (response.status !== 200) problems.push(`status ${response.status}: ${text}`);
if (!quoted) problems.push(`the client never signed in: ${JSON.stringify(seen.map((s) => [s.signedIn, s.status]))}`);
else if (BigInt(decode(quoted.challenge).accepts[0].amount) * 5n !== list * 4n) {
  problems.push(`signed in, quoted ${decode(quoted.challenge).accepts[0].amount} against a list price of ${list}`);
}
if (!paid) problems.push("no payment was sent");
else if (amount(paid) * 5n !== list * 4n) problems.push(`paid ${amount(paid)} against a list price of ${list}`);
const header = response.headers.get("payment-response");
const settlement = header ? decodePaymentResponseHeader(header) : null;
if (!settlement?.success) problems.push(`settlement: ${JSON.stringify(settlement)}`);

console.log(JSON.stringify({ client: "@x402/extensions sign-in-with-x", list: String(list), paid: paid ? String(amount(paid)) : null, status: response.status }));
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
