"""Pays one svc route with the official x402 Python client (PyPI `x402`, requests adapter) and
checks what a paying agent relies on: 200, a successful PAYMENT-RESPONSE for the network it paid
on, and a JSON answer. Usage: python pay.py BASE_URL METHOD PATH [JSON_BODY | @FILE]"""

import json
import os
import sys

import requests
from eth_account import Account
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.http.utils import decode_payment_response_header
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner

base, method, path = sys.argv[1:4]
body = sys.argv[4] if len(sys.argv) > 4 else None
if body and body.startswith("@"):  # a large body does not fit in one argument
    with open(body[1:], encoding="utf-8") as f:
        body = f.read()
payer = Account.from_key(os.environ["PAYER_KEY"])

client = x402ClientSync()
register_exact_evm_client(client, EthAccountSigner(payer))
session = wrapRequestsWithPayment(requests.Session(), client)

headers = {"content-type": "application/json"} if body else {}
response = session.request(method, base + path, data=body, headers=headers, timeout=60)
header = response.headers.get("payment-response")
settlement = decode_payment_response_header(header) if header else None

problems = []
if response.status_code != 200:
    problems.append(f"status {response.status_code}: {response.text}")
if settlement is None:
    problems.append("no PAYMENT-RESPONSE header")
else:
    if not settlement.success:
        problems.append(f"settlement failed: {settlement}")
    if (settlement.payer or "").lower() != payer.address.lower():
        problems.append(f"payer {settlement.payer}")
    if not settlement.network.startswith("eip155:"):
        problems.append(f"network {settlement.network}")
try:
    response.json()
except ValueError:
    problems.append("answer is not JSON")

summary = settlement.model_dump(by_alias=True, exclude_none=True) if settlement else None
print(json.dumps({"client": "x402 (PyPI)", "status": response.status_code, "settlement": summary}))
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
