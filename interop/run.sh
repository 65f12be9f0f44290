#!/usr/bin/env bash
# Interop with the official x402 clients, versions locked in package-lock.json and
# requirements.txt:
#   1. verify-only: TypeScript @x402/fetch + @x402/evm, Python x402 and `svc pay` each pay a
#      running svc; a payer at a volume tier signs in first (@x402/extensions sign-in-with-x,
#      and `svc pay`) and pays the discounted price it is quoted;
#   2. the LLM proxy: the official `openai` Python SDK (non-stream, stream, tool calls, both
#      provider kinds) with a proxy token, and an x402 credit top-up paid by the Python client;
#   3. MCP: the official MCP Python SDK lists and calls svc's tools (full and compact servers), a
#      paid tool is paid by the official x402 client's MCP binding, or from credits by an API key;
#      and, over stdio, `svc mcp` started by the SDK pays from a wallet within its caps (per call,
#      per session, allowed tools), refusing what passes them;
#   4. real settlement: a local EVM chain (Hardhat) with an EIP-3009 token compiled here; svc's
#      built-in facilitator settles on it from two relayer keys; the TypeScript client pays, the
#      balances move exactly once, and a replay or 20 concurrent copies of one payment move
#      nothing more; then 200 distinct payments from 8 payers at concurrency 32 all settle, with
#      a transaction sent from a relayer key behind svc's back mid-run;
#   5. sellers on that chain: the official client pays a seller's agent (an endpoint that checks
#      svc's signature), and svc pays the withdrawn balance out to the seller's wallet, once, also
#      when svc is killed between sending a payout and recording it;
#   6. svc killed (kill -9) a third of the way through 200 distinct payments at concurrency 32,
#      on SQLite and on PostgreSQL, and started again: within 30 s every client has its answer or
#      a clear error, and a transfer landed exactly for the payments answered.
# Usage: interop/run.sh [path to the svc binary]
set -euo pipefail
cd "$(dirname "$0")"
svc="${1:-${CARGO_TARGET_DIR:-../target}/debug/svc}"
svc="$(cd "$(dirname "$svc")" && pwd)/$(basename "$svc")"
[ -x "$svc" ] || { echo "no svc binary at $svc (cargo build first)" >&2; exit 1; }

npm ci --no-audit --no-fund --loglevel=error >/dev/null
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt

scratch="$(mktemp -d)"
crash_db=""
cleanup() {
  kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$scratch"
  if [ -n "$crash_db" ]; then
    psql -h 127.0.0.1 -U postgres -d test -qc "DROP DATABASE IF EXISTS $crash_db WITH (FORCE)" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
status=0
fail() { status=1; echo "--- $1 log" >&2; tail -n 30 "$2" >&2; }

# Public development keys of the local chain's default accounts, and the vectors' payer.
export PAYER_KEY=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318
payer=0x2c7536E3605D9C16a7a3D7b1898e529396a65c23
source ./chain.sh

sim_port="$(free_port)"
"$svc" simulator --listen "127.0.0.1:$sim_port" >"$scratch/simulator.log" 2>&1 &
wait_for curl -sf "http://127.0.0.1:$sim_port/"
mints=($(curl -sf "http://127.0.0.1:$sim_port/" | python3 -c 'import json,sys; print(" ".join(c["mint"] for c in json.load(sys.stdin)["launchpad"]["coins"]))'))
route() { echo "/api/x402/svc-tools/launchpad/coin/${mints[$1]}"; }

echo "== verify-only: the official clients pay"
port="$(free_port)"
mkdir -p "$scratch/verify-only"
SVC_SIMULATOR_URL="http://127.0.0.1:$sim_port" SVC_DATA_DIR="$scratch/verify-only" \
  "$svc" serve --listen "127.0.0.1:$port" >"$scratch/verify-only.log" 2>&1 &
wait_for curl -sf "http://127.0.0.1:$port/healthz"
node pay.mjs "http://127.0.0.1:$port" GET "$(route 0)" || fail svc "$scratch/verify-only.log"
.venv/bin/python pay.py "http://127.0.0.1:$port" GET "$(route 1)" || fail svc "$scratch/verify-only.log"
# The largest input a route's schema allows is paid for like any other, by both official
# clients: 64 KiB of calldata to simulate (the challenge echoes a bounded part of it, so the
# payment that copies the challenge stays small).
python3 -c 'import json; print(json.dumps({"from_address": "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23",
  "tx_data": {"to": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "data": "0x" + "ab" * 65536}}))' >"$scratch/largest.json"
node pay.mjs "http://127.0.0.1:$port" POST /api/x402/svc-tools/shield/simulate "@$scratch/largest.json" \
  || fail svc "$scratch/verify-only.log"
.venv/bin/python pay.py "http://127.0.0.1:$port" POST /api/x402/svc-tools/shield/simulate "@$scratch/largest.json" \
  || fail svc "$scratch/verify-only.log"
# svc's own client, `svc pay`, pays the same way and prints the answer and the settlement.
SVC_PAYER_KEY="$PAYER_KEY" "$svc" pay GET "$(route 0)" --url "http://127.0.0.1:$port" \
  >"$scratch/svc-pay.json" 2>"$scratch/svc-pay.log" || fail "svc pay" "$scratch/svc-pay.log"
python3 - "$scratch/svc-pay.json" <<'PY' || fail "svc pay" "$scratch/svc-pay.log"
import json, sys
out = json.load(open(sys.argv[1]))
assert out["status"] == 200, out
assert out["payment_response"]["success"] is True, out
assert out["body"]["mint"], out
print("svc pay: 200, settlement", out["payment_response"]["network"])
PY
# It fails loudly: an answer that is not a 2xx is a non-zero exit, and so is a bad key.
if SVC_PAYER_KEY="$PAYER_KEY" "$svc" pay GET "/api/x402/svc-tools/launchpad/coin/xyz" --url "http://127.0.0.1:$port" \
  >"$scratch/svc-pay-422.json" 2>"$scratch/svc-pay-422.log"; then
  status=1; echo "svc pay exited 0 on a 422" >&2
fi
grep -q '"status": 422' "$scratch/svc-pay-422.json" || { status=1; echo "svc pay did not print the 422" >&2; }
if SVC_PAYER_KEY=0x1234 "$svc" pay GET "$(route 0)" --url "http://127.0.0.1:$port" 2>"$scratch/svc-pay-key.log"; then
  status=1; echo "svc pay exited 0 with a bad key" >&2
fi
grep -q "not a private key" "$scratch/svc-pay-key.log" || { status=1; echo "svc pay did not name the bad key" >&2; }
# Volume discounts at the challenge: after 100 paid calls, the official sign-in-with-x hook
# signs in first and pays the 20 % lower price it is quoted; `svc pay` does the same by itself.
node siwx.mjs "http://127.0.0.1:$port" "$(route 4)" || fail svc "$scratch/verify-only.log"
SVC_PAYER_KEY="$PAYER_KEY" "$svc" pay GET "$(route 4)" --url "http://127.0.0.1:$port" \
  >"$scratch/svc-pay-siwx.json" 2>"$scratch/svc-pay-siwx.log" || fail "svc pay" "$scratch/svc-pay-siwx.log"
list="$(curl -s "http://127.0.0.1:$port$(route 4)" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accepts"][0]["amount"])')"
paid="$(sed -n 's/^paying \([0-9]*\) atomic units.*/\1/p' "$scratch/svc-pay-siwx.log")"
if [ $(( paid * 5 )) -ne $(( list * 4 )) ]; then
  status=1; echo "svc pay paid $paid after signing in; the list price is $list" >&2
else
  echo "svc pay signed in and paid $paid against a list price of $list"
fi

echo "== the LLM proxy with the official openai SDK, topped up by the official x402 client"
llm_token() { curl -sf -X POST "http://127.0.0.1:$port/api/account/llm-token" -H "x-api-key: $1" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])'; }
operator() { SVC_DATA_DIR="$scratch/verify-only" "$svc" "$@" 2>/dev/null | tail -n1; }
full="$(operator accounts create --name llm-full)"
operator credits grant "$full" 5 >/dev/null
full_token="$(llm_token "$(operator keys create "$full")")"
empty="$(operator accounts create --name llm-empty)"
empty_key="$(operator keys create "$empty")"
curl -sf -X PUT "http://127.0.0.1:$port/api/account/llm-top-up" -H "x-api-key: $empty_key" \
  -H 'content-type: application/json' -d '{"enabled":true,"amount":"1"}' >/dev/null
.venv/bin/python llm.py "http://127.0.0.1:$port" "$full_token" "$(llm_token "$empty_key")" \
  || fail svc "$scratch/verify-only.log"
if grep -q "svc_acct_" "$scratch/verify-only.log"; then status=1; echo "an LLM token reached the log" >&2; fi

echo "== MCP: the official MCP Python SDK, paid by the official x402 client and from credits, and svc mcp on stdio"
# A svc of its own, without the per-client rate limit: the calls above, all from this one
# address, would otherwise count against the MCP checks' unpaid calls.
mcp_port="$(free_port)"
mcp_url="http://127.0.0.1:$mcp_port"
mkdir -p "$scratch/mcp"
SVC_SIMULATOR_URL="http://127.0.0.1:$sim_port" SVC_DATA_DIR="$scratch/mcp" SVC_RATE_PER_MINUTE=0 \
  "$svc" serve --listen "127.0.0.1:$mcp_port" >"$scratch/mcp.log" 2>&1 &
mcp_pid=$!
wait_for curl -sf "$mcp_url/healthz"
mcp_operator() { SVC_DATA_DIR="$scratch/mcp" "$svc" "$@" 2>/dev/null | tail -n1; }
mcp_full="$(mcp_operator accounts create --name mcp-full)"
mcp_operator credits grant "$mcp_full" 5 >/dev/null
mcp_empty="$(mcp_operator accounts create --name mcp-empty)"
.venv/bin/python mcp.py "$mcp_url" "$(mcp_operator keys create "$mcp_full")" "$(mcp_operator keys create "$mcp_empty")" \
  "${mints[0]}" "${mints[1]}" || fail svc "$scratch/mcp.log"
SVC_PAYER_KEY="$PAYER_KEY" .venv/bin/python mcp_stdio.py "$svc" "$mcp_url" "${mints[0]}" || fail svc "$scratch/mcp.log"
kill "$mcp_pid"; wait "$mcp_pid" 2>/dev/null || true
if grep -q "svck_" "$scratch/mcp.log"; then status=1; echo "an API key sent over MCP reached the log" >&2; fi

echo "== settlement on a local EVM chain"
start_chain "$scratch/chain.log" "$scratch/svc.toml" "$payer"
# Sellers' endpoints in this run are on loopback; payouts are authorized by the recipient of
# the payments, which holds the USDC buyers paid.
printf '\n[sellers]\nallow_http_hosts = ["127.0.0.1"]\n' >>"$scratch/svc.toml"
port="$(free_port)"
mkdir -p "$scratch/settle"
settle_db="" rate_off=""
serve_settling() {
  env ${settle_db:+SVC_DATABASE_URL="$settle_db"} ${rate_off:+SVC_RATE_PER_MINUTE=0} \
    SVC_SIMULATOR_URL="http://127.0.0.1:$sim_port" SVC_DATA_DIR="$scratch/settle" SVC_CONFIG="$scratch/svc.toml" \
    SVC_EVM_RELAYER_KEYS="$relayer_key,$relayer2_key" SVC_PAYOUT_KEY="$pay_to_key" \
    "$svc" serve --listen "127.0.0.1:$port" >>"$scratch/settle.log" 2>&1 &
  settle_pid=$!
}
serve_settling
wait_for curl -sf "http://127.0.0.1:$port/healthz"
RPC_URL="$rpc" TOKEN="$token" PAY_TO="$pay_to" DEPLOYER_KEY="$deployer_key" node settle.mjs "http://127.0.0.1:$port" "$(route 2)" \
  || fail svc "$scratch/settle.log"
RPC_URL="$rpc" TOKEN="$token" PAY_TO="$pay_to" DEPLOYER_KEY="$deployer_key" RELAYERS="$relayer,$relayer2" \
  COUNT=200 PAYERS=8 CONCURRENCY=32 INJECT_KEY="$relayer_key" \
  node settle-load.mjs "http://127.0.0.1:$port" "$(route 3)" || fail svc "$scratch/settle.log"

echo "== sellers on the local chain: an invoke paid by the official client, a payout on chain"
seller="$(SVC_DATA_DIR="$scratch/settle" "$svc" accounts create --name seller 2>/dev/null | tail -n1)"
seller_key="$(SVC_DATA_DIR="$scratch/settle" "$svc" keys create "$seller" --scopes agents 2>/dev/null | tail -n1)"
RPC_URL="$rpc" TOKEN="$token" SELLER_KEY="$seller_key" TREASURY="$pay_to" node seller.mjs "http://127.0.0.1:$port" \
  || fail svc "$scratch/settle.log"
echo "== a payout when svc stops between sending it and recording it"
export RPC_URL="$rpc" TOKEN="$token" SELLER_KEY="$seller_key" TREASURY="$pay_to"
if crash_state="$(node payout-crash.mjs send "http://127.0.0.1:$port")"; then
  kill -9 "$settle_pid"; wait "$settle_pid" 2>/dev/null || true
  serve_settling
  wait_for curl -sf "http://127.0.0.1:$port/healthz"
  node payout-crash.mjs settle "http://127.0.0.1:$port" "$crash_state" || fail svc "$scratch/settle.log"
else
  fail svc "$scratch/settle.log"
fi
if grep -q "whsec_" "$scratch/settle.log"; then status=1; echo "a seller's signing secret reached the log" >&2; fi

# crash_load LABEL: 200 distinct payments from 40 payers at concurrency 32; the script kills svc
# (kill -9) a third of the way in, svc is started again on the same store, and the clients retry.
crash_load() {
  RPC_URL="$rpc" TOKEN="$token" PAY_TO="$pay_to" DEPLOYER_KEY="$deployer_key" RELAYERS="$relayer,$relayer2" \
    SVC_PID="$settle_pid" COUNT=200 PAYERS=40 CONCURRENCY=32 DEADLINE_S=30 \
    node crash-load.mjs "http://127.0.0.1:$port" "$(route 5)" &
  local loader=$! ended=""
  # All the clients retry from this one address: past the per-IP rate limit they would be told
  # to come back in a minute, which real clients, each from its own address, are not.
  rate_off=1
  # Whichever ends first: svc, killed by the script, or the script, failing before it killed.
  wait -n -p ended "$settle_pid" "$loader" 2>/dev/null || true
  if [ "$ended" = "$loader" ]; then
    wait "$loader" || true; fail "svc ($1)" "$scratch/settle.log"; return
  fi
  serve_settling
  rate_off=""
  wait "$loader" || fail "svc ($1)" "$scratch/settle.log"
}
echo "== kill -9 during 200 concurrent paid calls, on SQLite"
crash_load sqlite
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "== kill -9 during 200 concurrent paid calls, on PostgreSQL"
  kill "$settle_pid"; wait "$settle_pid" 2>/dev/null || true
  crash_db="svc_crash_$$"
  psql -h 127.0.0.1 -U postgres -d test -qc "CREATE DATABASE $crash_db" >/dev/null
  settle_db="postgres://postgres@127.0.0.1:5432/$crash_db"
  serve_settling
  wait_for curl -sf "http://127.0.0.1:$port/healthz"
  crash_load postgres
else
  echo "== kill -9 during paid calls on PostgreSQL: skipped, no PostgreSQL at 127.0.0.1:5432"
fi

exit "$status"
