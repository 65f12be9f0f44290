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
