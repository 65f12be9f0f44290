// Payers for the load scripts (settle-load.mjs, crash-load.mjs): fresh wallets funded with the
// test token, and payments signed ahead of time by the official client (@x402/core +
// @x402/evm) from one challenge, so a run measures svc and the chain, not the client.
import { x402Client } from "@x402/fetch";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createWalletClient, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";

const mintAbi = parseAbi(["function mint(address, uint256)"]);

/// `count` new wallets, each minted 1,000 test USDC by the deployer.
export async function fundedPayers({ chain, transport, token, deployerKey, count }) {
  const deployer = createWalletClient({ account: privateKeyToAccount(deployerKey), chain: hardhat, transport });
  const payers = Array.from({ length: count }, () => privateKeyToAccount(generatePrivateKey()));
  for (const payer of payers) {
    const hash = await deployer.writeContract({ address: token, abi: mintAbi, functionName: "mint", args: [payer.address, 1_000_000_000n] });
    await chain.waitForTransactionReceipt({ hash });
  }
  return payers;
}

/// The route's challenge, and `count` payments for it signed in turn by `payers`: each as its
/// header and the authorization's payer and nonce.
export async function presigned({ url, token, payers, count }) {
  const response = await fetch(url);
  const challenge = decodePaymentRequiredHeader(response.headers.get("payment-required"));
  return { status: response.status, ...(await signedFor({ challenge, token, payers, count })) };
}

/// `count` payments for `challenge` signed in turn by `payers`: each as its payload, its header
/// and the authorization's payer and nonce.
export async function signedFor({ challenge, token, payers, count }) {
  const payments = [];
  for (let i = 0; i < count; i++) {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: payers[i % payers.length] });
    client.setSpendControls?.({ allowedAssets: [{ network: "eip155:31337", asset: token }] });
    const payload = await client.createPaymentPayload(challenge);
    const { from, nonce } = payload.payload.authorization;
    payments.push({ payload, header: encodePaymentSignatureHeader(payload), from, nonce });
  }
  return { challenge, payments };
}
