// The console's only script: signing in with a browser wallet (EIP-1193). Everything else
// works without it. The server writes the message (its address in EIP-55 form, a fresh
// nonce); the wallet signs it with personal_sign; the form posts both.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("wallet-sign-in");
  if (!form) return;
  const button = form.querySelector("[data-needs-wallet]");
  const status = form.querySelector("[data-wallet-status]");
  const wallet = window.ethereum;
  if (!wallet || typeof wallet.request !== "function") {
    status.textContent = "No browser wallet found: install one, or sign in with an API key.";
    return;
  }
  button.disabled = false;
  status.textContent = "Your wallet will ask you to sign a message.";
  form.addEventListener("submit", async (event) => {
    if (form.elements.signature.value) return;
    event.preventDefault();
    button.disabled = true;
    try {
      const [address] = await wallet.request({ method: "eth_requestAccounts" });
      const body = new URLSearchParams({ token: form.elements.token.value, address });
      const answer = await fetch("/console/sign-in/message", { method: "POST", body, credentials: "same-origin" });
      if (!answer.ok) throw new Error(`svc answered ${answer.status}`);
      const message = await answer.text();
      const signature = await wallet.request({ method: "personal_sign", params: [message, address] });
      form.elements.message.value = message;
      form.elements.signature.value = signature;
      form.submit();
    } catch (error) {
      status.textContent = `The wallet sign-in did not complete: ${error.message || error}`;
      button.disabled = false;
    }
  });
});

// The agent's log, live: the page shows its newest lines; the stream (server-sent events,
// resumed by the browser where it broke off) sends them again and then every new one.
document.addEventListener("DOMContentLoaded", () => {
  const log = document.querySelector("[data-log-source]");
  if (!log || !window.EventSource) return;
  const source = new EventSource(log.dataset.logSource);
  let fresh = true;
  const append = (text) => {
    if (fresh) { log.textContent = ""; fresh = false; }
    const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    log.append(document.createTextNode(`${text}\n`));
    if (atEnd) log.scrollTop = log.scrollHeight;
  };
  source.onmessage = (event) => append(event.data);
  source.addEventListener("end", () => { append("[the agent has ended]"); source.close(); });
});

// Buying credits with a browser wallet, over x402: the purchase route answers 402 with what
// to pay; the wallet signs the EIP-3009 authorization the challenge asks for
// (eth_signTypedData_v4); the call is sent again with the payment.
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("buy-credits");
  if (!form) return;
  const button = form.querySelector("[data-needs-wallet]");
  const status = form.querySelector("[data-wallet-status]");
  const wallet = window.ethereum;
  if (!wallet || typeof wallet.request !== "function") {
    status.textContent = "No browser wallet found: buying credits here needs one.";
    return;
  }
  button.disabled = false;
  status.textContent = "Your wallet will ask you to sign a USDC transfer of the amount.";
  const toBase64 = (text) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));
  const randomHex = (bytes) => `0x${[...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      const [from] = await wallet.request({ method: "eth_requestAccounts" });
      const body = JSON.stringify({ amount: form.elements.amount.value, account_id: form.dataset.account });
      const send = (headers) => fetch(form.dataset.purchasePath, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
      const challenge = await send({});
      if (challenge.status !== 402) throw new Error((await challenge.json()).detail ?? `svc answered ${challenge.status}`);
      const required = await challenge.json();
      const offer = required.accepts.find((r) => r.scheme === "exact" && r.network.startsWith("eip155:"));
      if (!offer) throw new Error("svc offers no EVM payment here");
      const authorization = {
        from, to: offer.payTo, value: offer.amount, validAfter: "0",
        validBefore: String(Math.floor(Date.now() / 1000) + offer.maxTimeoutSeconds), nonce: randomHex(32),
      };
      const typed = {
        types: {
          EIP712Domain: [
            { name: "name", type: "string" }, { name: "version", type: "string" },
            { name: "chainId", type: "uint256" }, { name: "verifyingContract", type: "address" },
          ],
          TransferWithAuthorization: [
            { name: "from", type: "address" }, { name: "to", type: "address" }, { name: "value", type: "uint256" },
            { name: "validAfter", type: "uint256" }, { name: "validBefore", type: "uint256" }, { name: "nonce", type: "bytes32" },
          ],
        },
        primaryType: "TransferWithAuthorization",
        domain: { name: offer.extra.name, version: offer.extra.version, chainId: Number(offer.network.slice(7)), verifyingContract: offer.asset },
        message: authorization,
      };
      const signature = await wallet.request({ method: "eth_signTypedData_v4", params: [from, JSON.stringify(typed)] });
      const payment = { x402Version: 2, payload: { signature, authorization }, resource: required.resource, accepted: offer };
      if (required.extensions) payment.extensions = required.extensions;
      const paid = await send({ "payment-signature": toBase64(JSON.stringify(payment)) });
      const answer = await paid.json();
      if (!paid.ok) throw new Error(answer.detail ?? answer.error ?? `svc answered ${paid.status}`);
      status.textContent = `Bought ${answer.amount} USD of credits.`;
      location.reload();
    } catch (error) {
      status.textContent = `The purchase did not complete: ${error.message || error}`;
      button.disabled = false;
    }
  });
});
