// Compiles TestUSDC with solc (offline, for cancun), deploys it on the local chain at RPC_URL
// and mints to the payer. Prints {"token": address}.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createWalletClient, createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";

const require = createRequire(import.meta.url);
const solc = require("solc");

const source = readFileSync(new URL("./contracts/TestUSDC.sol", import.meta.url), "utf8");
const input = {
  language: "Solidity",
  sources: { "TestUSDC.sol": { content: source } },
  settings: { evmVersion: "cancun", optimizer: { enabled: true, runs: 200 }, outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } },
};
const findImports = (path) => {
  try { return { contents: readFileSync(require.resolve(path), "utf8") }; } catch { return { error: `not found: ${path}` }; }
};
const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
const errors = (output.errors ?? []).filter((e) => e.severity === "error");
if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join("\n"));
const { abi, evm } = output.contracts["TestUSDC.sol"].TestUSDC;

const transport = http(process.env.RPC_URL);
const deployer = privateKeyToAccount(process.env.DEPLOYER_KEY);
const wallet = createWalletClient({ account: deployer, chain: hardhat, transport });
const chain = createPublicClient({ chain: hardhat, transport });
const hash = await wallet.deployContract({ abi, bytecode: `0x${evm.bytecode.object}` });
const { contractAddress: token } = await chain.waitForTransactionReceipt({ hash });
const minted = await wallet.writeContract({ address: token, abi, functionName: "mint", args: [process.env.PAYER, 100_000_000n] });
await chain.waitForTransactionReceipt({ hash: minted });
console.log(JSON.stringify({ token }));
