// The reference point for bench/settle.sh: the official x402 facilitator (@x402/core's
// x402Facilitator with @x402/evm's exact scheme, on a viem wallet with viem's nonce manager, as
// its documentation sets it up) verifying and settling distinct payments on the same local
// chain, at the same concurrency, signed the same way as settle-load.mjs's. It is called in
// process, with no HTTP server in front, so its number is what its pipeline can do at best.
// Prints one JSON line: counts, settled/s, latency percentiles.
// Usage: node official-settle.mjs   (env: RPC_URL, TOKEN, PAY_TO, DEPLOYER_KEY, RELAYER_KEY,
//   COUNT (200), PAYERS (8), CONCURRENCY (16))
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createPublicClient, createWalletClient, http, nonceManager, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { fundedPayers, signedFor } from "./payers.mjs";

const { RPC_URL, TOKEN, PAY_TO, DEPLOYER_KEY, RELAYER_KEY } = process.env;
const COUNT = Number(process.env.COUNT ?? 200);
const PAYERS = Number(process.env.PAYERS ?? 8);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const transport = http(RPC_URL);
const chain = createPublicClient({ chain: hardhat, transport });

const requirements = {
  scheme: "exact", network: "eip155:31337", asset: TOKEN, amount: "1000", payTo: PAY_TO,
  maxTimeoutSeconds: 300, extra: { name: "USD Coin", version: "2" },
};
const challenge = { x402Version: 2, resource: { url: "http://bench.invalid/", description: "", mimeType: "application/json" }, accepts: [requirements] };
const payers = await fundedPayers({ chain, transport, token: TOKEN, deployerKey: DEPLOYER_KEY, count: PAYERS });
const { payments } = await signedFor({ challenge, token: TOKEN, payers, count: COUNT });

// Receipts polled every 10 ms, not viem's default of seconds: its best case on a chain that mines on send.
const wallet = createWalletClient({ account: privateKeyToAccount(RELAYER_KEY, { nonceManager }), chain: hardhat, transport, pollingInterval: 10 }).extend(publicActions);
const facilitator = new x402Facilitator();
registerExactEvmScheme(facilitator, { signer: toFacilitatorEvmSigner(wallet), networks: "eip155:31337" });

const results = new Array(COUNT);
let next = 0;
const started = performance.now();
await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
  while (next < COUNT) {
    const i = next++;
    const t0 = performance.now();
    try {
      const verified = await facilitator.verify(payments[i].payload, requirements);
      const settled = verified.isValid ? await facilitator.settle(payments[i].payload, requirements) : { success: false, errorReason: verified.invalidReason };
      results[i] = { ok: settled.success === true, ms: performance.now() - t0, why: settled.errorReason };
    } catch (e) {
      results[i] = { ok: false, ms: performance.now() - t0, why: e.shortMessage ?? e.message };
    }
  }
}));
const seconds = (performance.now() - started) / 1000;
const settled = results.filter((r) => r.ok);
const ms = settled.map((r) => r.ms).sort((a, b) => a - b);
const pct = (p) => (ms.length ? ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))] : 0);
const failures = results.filter((r) => !r.ok).map((r) => r.why);
const reasons = {};
for (const why of failures) reasons[String(why).slice(0, 120)] = (reasons[String(why).slice(0, 120)] ?? 0) + 1;
if (failures.length) console.error(`${failures.length} not settled: ${JSON.stringify(reasons)}`);
console.log(JSON.stringify({ payments: COUNT, settled: settled.length, settled_per_s: settled.length / seconds, p50_ms: pct(50), p99_ms: pct(99) }));
