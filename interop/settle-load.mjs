// Many distinct payments settled at once on the local chain, paid by the official client
// (@x402/core + @x402/evm). Each payer signs its payments ahead of time from one challenge,
// then all are sent at the given concurrency, so the run measures svc and the chain, not the
// client. Checks: every call answers 200 with a settlement, every settlement is its own
// successful transaction, balances move by exactly the sum, each relayer's nonces have no gap
// and nothing is left stuck, and (with two relayers) both carried transfers. With INJECT set,
// a transaction is sent from the first relayer key behind svc's back mid-run, so svc's next
// nonce is stale: that must cost at most a retry.
// Prints one JSON line: counts, settled/s, latency percentiles.
// Usage: node settle-load.mjs BASE_URL PATH
//   env: RPC_URL, TOKEN, PAY_TO, DEPLOYER_KEY (mints to the payers), RELAYERS (comma-separated
//   addresses), COUNT (200), PAYERS (8), CONCURRENCY (32), INJECT_KEY (a relayer key; optional),
//   TIMEOUT_MS (15000 per call)
import { decodePaymentResponseHeader } from "@x402/core/http";
import { createPublicClient, createWalletClient, http, parseAbi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { fundedPayers, presigned } from "./payers.mjs";

const [base, path] = process.argv.slice(2);
const { RPC_URL, TOKEN, PAY_TO, DEPLOYER_KEY } = process.env;
const COUNT = Number(process.env.COUNT ?? 200);
const PAYERS = Number(process.env.PAYERS ?? 8);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
// A call not answered in this time counts as not settled (a wedged settler holds calls open).
const TIMEOUT_MS = Number(process.env.TIMEOUT_MS ?? 15000);
const relayers = (process.env.RELAYERS ?? "").split(",").filter(Boolean);
const transport = http(RPC_URL);
const chain = createPublicClient({ chain: hardhat, transport });
const abi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
]);
const balanceOf = (who) => chain.readContract({ address: TOKEN, abi, functionName: "balanceOf", args: [who] });
const problems = [];
const check = (ok, message) => { if (!ok) problems.push(message); };

const payers = await fundedPayers({ chain, transport, token: TOKEN, deployerKey: DEPLOYER_KEY, count: PAYERS });
const signed = await presigned({ url: base + path, token: TOKEN, payers, count: COUNT });
check(signed.status === 402, `challenge: status ${signed.status}`);
const challenge = signed.challenge;
const headers = signed.payments.map((p) => p.header);

const nonces = async (tag) => Promise.all(relayers.map((r) => chain.getTransactionCount({ address: r, blockTag: tag })));
const noncesBefore = await nonces("latest");
const before = { payers: await Promise.all(payers.map((p) => balanceOf(p.address))), payTo: await balanceOf(PAY_TO) };

// Send them all, CONCURRENCY at a time.
const results = new Array(COUNT);
let next = 0;
let injected = null;
const started = performance.now();
const worker = async () => {
  while (next < COUNT) {
    const i = next++;
    if (process.env.INJECT_KEY && i === Math.floor(COUNT / 3) && injected === null) {
      // Behind svc's back: a transaction from its first relayer key.
      injected = "pending";
      const relayer = createWalletClient({ account: privateKeyToAccount(process.env.INJECT_KEY), chain: hardhat, transport });
      // svc is sending from the key too, so the nonce read here may be taken before this
      // lands: try again until the chain takes it.
      (async () => {
        for (let attempt = 0; attempt < 200; attempt++) {
          try { injected = await relayer.sendTransaction({ to: PAY_TO, value: 1n }); return; }
          catch (e) { injected = `failed: ${e.shortMessage ?? e.message}`; }
        }
      })();
    }
    const t0 = performance.now();
    try {
      const response = await fetch(base + path, { headers: { "payment-signature": headers[i] }, signal: AbortSignal.timeout(TIMEOUT_MS) });
      const body = await response.text();
      const header = response.headers.get("payment-response");
      results[i] = { status: response.status, ms: performance.now() - t0, body, settlement: header ? decodePaymentResponseHeader(header) : null };
    } catch (e) {
      results[i] = { status: 0, ms: performance.now() - t0, body: `no answer: ${e.name}`, settlement: null };
    }
  }
};
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
const seconds = (performance.now() - started) / 1000;

const ok = results.filter((r) => r.status === 200 && r.settlement?.success === true);
check(ok.length === COUNT, `${COUNT - ok.length} of ${COUNT} not settled: ${[...new Set(results.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.body.slice(0, 160)}`))].slice(0, 5).join(" | ")}`);
const hashes = ok.map((r) => r.settlement.transaction);
check(new Set(hashes).size === hashes.length, "two payments share a transaction");

// Every settlement is a successful transfer from one of the relayers.
const from = {};
for (const hash of hashes) {
  const receipt = await chain.getTransactionReceipt({ hash });
  check(receipt.status === "success", `${hash}: ${receipt.status}`);
  from[receipt.from.toLowerCase()] = (from[receipt.from.toLowerCase()] ?? 0) + 1;
}
const perRelayer = relayers.map((r) => from[r.toLowerCase()] ?? 0);
check(perRelayer.reduce((a, b) => a + b, 0) === hashes.length, `transfers from unknown senders: ${JSON.stringify(from)}`);
if (relayers.length > 1) check(perRelayer.every((n) => n > 0), `a relayer carried nothing: ${perRelayer}`);

// Balances moved by exactly the sum; nothing is stuck behind a nonce gap.
const price = BigInt(challenge.accepts.find((a) => a.network === "eip155:31337").amount);
const after = { payers: await Promise.all(payers.map((p) => balanceOf(p.address))), payTo: await balanceOf(PAY_TO) };
const paid = before.payers.reduce((sum, b, i) => sum + (b - after.payers[i]), 0n);
check(paid === price * BigInt(ok.length), `payers paid ${paid}, ${ok.length} payments are ${price * BigInt(ok.length)}`);
check(after.payTo - before.payTo === paid, `recipient got ${after.payTo - before.payTo}, payers paid ${paid}`);
const [latest, pending] = [await nonces("latest"), await nonces("pending")];
check(latest.every((n, i) => n === pending[i]), `transactions stuck behind a nonce gap: latest ${latest}, pending ${pending}`);
const used = latest.map((n, i) => n - noncesBefore[i]);
const injectedCount = typeof injected === "string" && injected.startsWith("0x") ? 1 : 0;
check(used.reduce((a, b) => a + b, 0) >= hashes.length + injectedCount, `relayer nonces used ${used}, transfers ${hashes.length}`);
if (process.env.INJECT_KEY) check(injectedCount === 1, `the injected transaction: ${injected}`);

const ms = results.map((r) => r.ms).sort((a, b) => a - b);
const pct = (p) => ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))].toFixed(1);
console.log(JSON.stringify({
  check: "distinct payments settled at once",
  payments: COUNT, payers: PAYERS, concurrency: CONCURRENCY, settled: ok.length,
  settled_per_s: Number((ok.length / seconds).toFixed(1)), p50_ms: Number(pct(50)), p99_ms: Number(pct(99)),
  per_relayer: perRelayer, relayer_nonces_used: used, injected: injected ?? undefined,
}));
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
