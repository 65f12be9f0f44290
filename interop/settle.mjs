// Real settlement: the official client (@x402/fetch + @x402/evm) pays svc, whose built-in
// facilitator sends transferWithAuthorization to the local chain. Checks that the funds moved
// exactly once, and that replaying the same signed payment is refused and moves nothing; that
// the token's own refusals, found by simulating the transfer before the call is served, reach
// the client by their x402 reason: a payer without the funds, and an authorization used on
// chain behind svc's back.
// Usage: node settle.mjs BASE_URL PATH   (env: RPC_URL, TOKEN, PAYER_KEY, PAY_TO, DEPLOYER_KEY)
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createPublicClient, createWalletClient, http, parseAbi, parseSignature } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";

const [base, path] = process.argv.slice(2);
const { RPC_URL, TOKEN, PAY_TO } = process.env;
const payer = privateKeyToAccount(process.env.PAYER_KEY);
const chain = createPublicClient({ chain: hardhat, transport: http(RPC_URL) });
const abi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function authorizationState(address, bytes32) view returns (bool)",
]);
const balances = async () => ({
  payer: await chain.readContract({ address: TOKEN, abi, functionName: "balanceOf", args: [payer.address] }),
  payTo: await chain.readContract({ address: TOKEN, abi, functionName: "balanceOf", args: [PAY_TO] }),
});
const problems = [];
const check = (ok, message) => { if (!ok) problems.push(message); };

// The local token is not one of the client's default assets: allow it explicitly, as an
// agent paying a new network would.
const client = new x402Client();
registerExactEvmScheme(client, { signer: payer });
client.setSpendControls({ allowedAssets: [{ network: "eip155:31337", asset: TOKEN }] });
let sentHeader = null;
const recording = async (input, init) => {
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  sentHeader = headers.get("payment-signature") ?? sentHeader;
  return fetch(input, init);
};
const paidFetch = wrapFetchWithPayment(recording, client);

const before = await balances();
const response = await paidFetch(base + path, { method: "GET" });
const text = await response.text();
check(response.status === 200, `paid call: status ${response.status}: ${text}`);
const header = response.headers.get("payment-response");
const settlement = header ? decodePaymentResponseHeader(header) : null;
check(settlement?.success === true, `settlement: ${JSON.stringify(settlement)}`);
check(/^0x[0-9a-f]{64}$/i.test(settlement?.transaction ?? ""), `transaction hash: ${settlement?.transaction}`);
if (settlement?.transaction) {
  const receipt = await chain.getTransactionReceipt({ hash: settlement.transaction });
  check(receipt.status === "success", `receipt status ${receipt.status}`);
}
const after = await balances();
const price = before.payer - after.payer;
check(price > 0n, "the payer's balance did not move");
check(after.payTo - before.payTo === price, `recipient got ${after.payTo - before.payTo}, payer paid ${price}`);

// Replay the very same signed payment: refused, and nothing moves.
check(sentHeader !== null, "no PAYMENT-SIGNATURE was sent");
const replay = await fetch(base + path, { headers: { "payment-signature": sentHeader } });
const replayBody = await replay.json().catch(() => ({}));
check(replay.status === 402, `replay: status ${replay.status}`);
// Refused by the store's record, or by the token's own record when verify asks the chain first.
check(/^(payment_already_used|invalid_exact_evm_nonce_already_used)/.test(String(replayBody.error)), `replay reason: ${replayBody.error}`);
const afterReplay = await balances();
check(afterReplay.payer === after.payer && afterReplay.payTo === after.payTo, "the replay moved funds");

// The same signed payment sent 20 times at once: one answer, one transfer.
const burst = async (input, init) => {
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  if (!headers.get("payment-signature")) return fetch(input, init);
  const replies = await Promise.all(Array.from({ length: 20 }, () => fetch(input instanceof Request ? input.clone() : input, init)));
  burstStatuses = replies.map((r) => r.status);
  return replies.find((r) => r.status === 200) ?? replies[0];
};
let burstStatuses = [];
const beforeBurst = await balances();
const burstResponse = await wrapFetchWithPayment(burst, client)(base + path, { method: "GET" });
await burstResponse.text();
const afterBurst = await balances();
check(burstStatuses.filter((s) => s === 200).length === 1, `concurrent copies: statuses ${burstStatuses}`);
check(beforeBurst.payer - afterBurst.payer === price, `concurrent copies moved ${beforeBurst.payer - afterBurst.payer}, one payment is ${price}`);
check(afterBurst.payTo - beforeBurst.payTo === price, "the recipient did not get exactly one payment");

// Signed by the official client for the route's challenge, sent by hand.
const signedBy = async (signer) => {
  const challenge = decodePaymentRequiredHeader((await fetch(base + path)).headers.get("payment-required"));
  const c = new x402Client();
  registerExactEvmScheme(c, { signer });
  c.setSpendControls({ allowedAssets: [{ network: "eip155:31337", asset: TOKEN }] });
  return c.createPaymentPayload(challenge);
};
const refusal = async (payload) => {
  const reply = await fetch(base + path, { headers: { "payment-signature": encodePaymentSignatureHeader(payload) } });
  return { status: reply.status, error: String((await reply.json().catch(() => ({}))).error) };
};

// A payer without the funds: refused before the call is served, by the token's own check.
const broke = await refusal(await signedBy(privateKeyToAccount(generatePrivateKey())));
check(broke.status === 402 && broke.error.startsWith("invalid_exact_evm_insufficient_balance"), `unfunded payer: ${JSON.stringify(broke)}`);

// An authorization used on chain behind svc's back (anyone may submit it): refused as used,
// and nothing more moves.
const used = await signedBy(payer);
const a = used.payload.authorization;
const { v, r, s } = parseSignature(used.payload.signature);
const submitter = createWalletClient({ account: privateKeyToAccount(process.env.DEPLOYER_KEY), chain: hardhat, transport: http(RPC_URL) });
const transferAbi = parseAbi(["function transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)"]);
const direct = await submitter.writeContract({
  address: TOKEN, abi: transferAbi, functionName: "transferWithAuthorization",
  args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, Number(v), r, s],
});
await chain.waitForTransactionReceipt({ hash: direct });
const beforeUsed = await balances();
const usedReply = await refusal(used);
check(usedReply.status === 402 && usedReply.error.startsWith("invalid_exact_evm_nonce_already_used"), `used on chain: ${JSON.stringify(usedReply)}`);
const afterUsed = await balances();
check(afterUsed.payer === beforeUsed.payer && afterUsed.payTo === beforeUsed.payTo, "a payment used behind svc's back moved funds again");

console.log(JSON.stringify({ check: "settlement on a local chain", status: response.status, transaction: settlement?.transaction, price: String(price), replay: replay.status, concurrent: burstStatuses.join(","), unfunded: broke.error, usedOnChain: usedReply.error }));
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
