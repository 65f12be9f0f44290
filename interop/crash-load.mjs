// svc killed (kill -9) in the middle of many distinct paid calls settling on the local chain,
// then started again on the same store: no payment may be lost or taken twice. Each payment
// is signed ahead of time by the official client (@x402/core + @x402/evm); they are sent at
// the given concurrency, and once KILL_AFTER have been answered the script kills svc (SVC_PID)
// itself. Whoever started svc starts it again. Every payment without its answer is then sent
// again, as a client retries, until it is answered or refused with a clear error, for at most
// DEADLINE_S seconds after svc answers again.
// Checks: every payment ends answered (200) or refused with a JSON error that names its
// code (svc's `code`, or the x402 challenge's `error`); no answer is given for a payment whose transfer did not land, and every transfer that
// landed was answered (the token's authorizationState per payment); the recipient gained
// exactly the price times the payments answered; no relayer nonce is left behind.
// Prints one JSON line: counts, how many were interrupted, how long until all were decided.
// Usage: node crash-load.mjs BASE_URL PATH
//   env: RPC_URL, TOKEN, PAY_TO, DEPLOYER_KEY, RELAYERS, SVC_PID, COUNT (200), PAYERS (8),
//   CONCURRENCY (32), KILL_AFTER (COUNT / 3), DEADLINE_S (30)
import { createPublicClient, http, parseAbi } from "viem";
import { hardhat } from "viem/chains";
import { fundedPayers, presigned } from "./payers.mjs";

const [base, path] = process.argv.slice(2);
const { RPC_URL, TOKEN, PAY_TO, DEPLOYER_KEY, SVC_PID } = process.env;
const COUNT = Number(process.env.COUNT ?? 200);
const PAYERS = Number(process.env.PAYERS ?? 8);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const KILL_AFTER = Number(process.env.KILL_AFTER ?? Math.floor(COUNT / 3));
const DEADLINE_S = Number(process.env.DEADLINE_S ?? 30);
const relayers = (process.env.RELAYERS ?? "").split(",").filter(Boolean);
const transport = http(RPC_URL);
const chain = createPublicClient({ chain: hardhat, transport });
const abi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function authorizationState(address, bytes32) view returns (bool)",
]);
const balanceOf = (who) => chain.readContract({ address: TOKEN, abi, functionName: "balanceOf", args: [who] });
const problems = [];
const check = (ok, message) => { if (!ok) problems.push(message); };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const payers = await fundedPayers({ chain, transport, token: TOKEN, deployerKey: DEPLOYER_KEY, count: PAYERS });
const signed = await presigned({ url: base + path, token: TOKEN, payers, count: COUNT });
check(signed.status === 402, `challenge: status ${signed.status}`);
const challenge = signed.challenge;
const payments = signed.payments.map((p) => ({ ...p, answers: 0, last: null, tries: 0 }));
const price = BigInt(challenge.accepts.find((a) => a.network === "eip155:31337").amount);
const payToBefore = await balanceOf(PAY_TO);

const send = async (p) => {
  p.tries += 1;
  try {
    const response = await fetch(base + path, { headers: { "payment-signature": p.header }, signal: AbortSignal.timeout(15000) });
    const text = await response.text();
    // What the error says: svc's `code`, or the x402 challenge's `error` (its code before `:`).
    let code = null;
    try {
      const body = JSON.parse(text);
      code = body.code ?? (typeof body.error === "string" ? body.error.split(":")[0] : null);
    } catch { /* not JSON */ }
    p.last = { status: response.status, code, body: text.slice(0, 200) };
    if (response.status === 200) p.answers += 1;
  } catch (e) {
    p.last = { status: 0, code: null, body: `no answer: ${e.cause?.code ?? e.name}` };
  }
};

// Phase 1: all of them at once; svc is killed once KILL_AFTER are answered.
let next = 0;
let answered = 0;
let killedAt = null;
const worker = async () => {
  while (next < COUNT) {
    const p = payments[next++];
    await send(p);
    if (p.last.status !== 0) answered += 1;
    if (answered >= KILL_AFTER && killedAt === null) {
      killedAt = performance.now();
      process.kill(Number(SVC_PID), "SIGKILL");
    }
  }
};
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
check(killedAt !== null, "svc was never killed");
const interrupted = payments.filter((p) => p.last.status !== 200);

// Phase 2: svc is started again by the caller; clients retry what got no answer.
let up = null;
for (let i = 0; i < 600 && up === null; i++) {
  try { if ((await fetch(base + "/healthz")).ok) up = performance.now(); } catch { await sleep(100); }
}
check(up !== null, "svc did not come back");
// Errors that say to wait, or that the server is not there: a client retries them.
const retryable = (last) =>
  last.status === 0 || last.status >= 500 || last.code === "payment_in_progress" || last.code === "payment_pending";
const deadline = (up ?? performance.now()) + DEADLINE_S * 1000;
let decidedAt = null;
while (performance.now() < deadline) {
  const pending = payments.filter((p) => p.answers === 0 && retryable(p.last));
  if (pending.length === 0) { decidedAt = performance.now(); break; }
  await Promise.all(pending.map(send));
  // Every 3 s, as a patient client would: 5 payments a payer stay under the rate limit.
  if (payments.some((p) => p.answers === 0 && retryable(p.last))) await sleep(3000);
}
check(decidedAt !== null, `not decided ${DEADLINE_S}s after svc came back: ${payments.filter((p) => p.answers === 0).slice(0, 3).map((p) => JSON.stringify(p.last)).join(" | ")}`);

// Every payment answered, or refused with a clear JSON error.
const refused = payments.filter((p) => p.answers === 0);
for (const p of refused) check(p.last.code !== null && p.last.status >= 400 && p.last.status < 500, `a payment ended without an answer or a clear error: ${JSON.stringify(p.last)}`);

// The chain agrees: a transfer landed exactly for the payments answered.
for (const p of payments) {
  const used = await chain.readContract({ address: TOKEN, abi, functionName: "authorizationState", args: [p.from, p.nonce] });
  if (used && p.answers === 0) check(false, `charged without an answer: ${p.from} ${p.nonce} (last ${JSON.stringify(p.last)})`);
  if (!used && p.answers > 0) check(false, `answered without a transfer: ${p.from} ${p.nonce}`);
}
const answeredCount = payments.filter((p) => p.answers > 0).length;
const gained = (await balanceOf(PAY_TO)) - payToBefore;
check(gained === price * BigInt(answeredCount), `recipient gained ${gained}; ${answeredCount} payments answered at ${price}`);
const nonces = async (tag) => Promise.all(relayers.map((r) => chain.getTransactionCount({ address: r, blockTag: tag })));
const [latest, pendingNonces] = [await nonces("latest"), await nonces("pending")];
check(latest.every((n, i) => n === pendingNonces[i]), `transactions stuck behind a nonce gap: latest ${latest}, pending ${pendingNonces}`);

console.log(JSON.stringify({
  check: "kill -9 during concurrent paid calls",
  payments: COUNT, concurrency: CONCURRENCY, killed_after: KILL_AFTER,
  interrupted: interrupted.length, answered: answeredCount, refused: refused.length,
  retried_answered_twice: payments.filter((p) => p.answers > 1).length,
  decided_after_restart_s: decidedAt && up ? Number(((decidedAt - up) / 1000).toFixed(1)) : null,
}));
if (problems.length) {
  console.error(problems.slice(0, 20).join("\n"));
  process.exit(1);
}
