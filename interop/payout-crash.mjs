// A payout when svc stops between sending it and recording it: the chain stops mining, svc
// claims the withdrawal and broadcasts its transfer, and is then killed (by run.sh) while the
// transfer waits in the node's mempool. The chain mines it; svc, restarted, finds the payout
// paid by asking the token and records it without sending it again.
// Usage: node payout-crash.mjs send BASE_URL     (prints the state for the second phase)
//        node payout-crash.mjs settle BASE_URL STATE
// env: RPC_URL, TOKEN, PAYER_KEY, SELLER_KEY, TREASURY
import { createServer } from "node:http";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createPublicClient, http, keccak256, parseAbi, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { sellerApi } from "./seller-api.mjs";

const [phase, base, state] = process.argv.slice(2);
const { RPC_URL, TOKEN, SELLER_KEY, TREASURY } = process.env;
const chain = createPublicClient({ chain: hardhat, transport: http(RPC_URL) });
const abi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function authorizationState(address, bytes32) view returns (bool)",
]);
const balanceOf = (who) => chain.readContract({ address: TOKEN, abi, functionName: "balanceOf", args: [who] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const api = sellerApi(base, SELLER_KEY);
const fail = (message) => {
  console.error(message);
  process.exit(1);
};

if (phase === "send") {
  const endpoint = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"answer":"ok"}'));
  });
  await new Promise((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
  const wallet = privateKeyToAccount(generatePrivateKey()).address;
  const created = await api("POST", "/agents", { name: "Crash test", endpoint: `http://127.0.0.1:${endpoint.address().port}/` });
  const id = created.agent.id;
  await api("PUT", `/agents/${id}/x402-config`, {
    enabled: true,
    pricing: { model: "per_request", amount: "0.3", currency: "USDC" },
    wallet_address: wallet,
  });
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(process.env.PAYER_KEY) });
  client.setSpendControls({ allowedAssets: [{ network: "eip155:31337", asset: TOKEN }] });
  const paid = await wrapFetchWithPayment(fetch, client)(`${base}/x402/agents/${id}/invoke`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: "crash" }),
  });
  if (paid.status !== 200) fail(`invoke: ${paid.status} ${await paid.text()}`);
  endpoint.close();
  // The chain stops mining: the payout's transfer will wait in the mempool.
  await chain.request({ method: "evm_setAutomine", params: [false] });
  const withdrawal = await api("POST", `/agents/${id}/withdrawals`, { amount: "0.3" });
  for (let i = 0; i < 100; i += 1) {
    const pending = await chain.getBlock({ blockTag: "pending" });
    const row = (await api("GET", `/agents/${id}/withdrawals`)).withdrawals[0];
    if (row.status === "sending" && pending.transactions.length > 0) {
      console.log(JSON.stringify({ agent: id, withdrawal: withdrawal.id, wallet, before: String(await balanceOf(wallet)) }));
      process.exit(0);
    }
    await sleep(300);
  }
  fail("the payout was never broadcast");
} else {
  const { agent, withdrawal, wallet, before } = JSON.parse(state);
  await chain.request({ method: "evm_mine", params: [] });
  await chain.request({ method: "evm_setAutomine", params: [true] });
  const moved = (await balanceOf(wallet)) - BigInt(before);
  if (moved !== 300000n) fail(`the mined payout moved ${moved}`);
  // The restarted svc asks the token once the payout has waited a minute, and records it.
  let row;
  for (let i = 0; i < 200; i += 1) {
    row = (await api("GET", `/agents/${agent}/withdrawals`)).withdrawals[0];
    if (row.status === "paid" || row.status === "failed") break;
    await sleep(500);
  }
  if (row.status !== "paid") fail(`after the restart the payout is ${JSON.stringify(row)}`);
  await sleep(11000);
  const total = (await balanceOf(wallet)) - BigInt(before);
  if (total !== 300000n) fail(`the wallet got ${total} in all; the payout was sent again`);
  const used = await chain.readContract({
    address: TOKEN, abi, functionName: "authorizationState", args: [TREASURY, keccak256(toHex(`svc-payout:${withdrawal}`))],
  });
  if (!used) fail("the payout's authorization is not used on chain");
  console.log(JSON.stringify({ check: "a payout survives svc stopping between send and record", withdrawal, status: row.status, amount: String(total) }));
}
