#!/usr/bin/env bash
# Real-settlement benchmark: a local EVM chain (Hardhat, from interop/), an EIP-3009 token
# deployed on it, svc (release build) settling every paid call on it through its built-in
# facilitator, and distinct payments pre-signed by the official x402 client from 8 payers, sent
# at concurrency 16 (interop/settle-load.mjs, which also checks that every payment settled
# exactly once and no nonce was left behind). Runs with one relayer key, then two; then, for
# reference, the official x402 facilitator (interop/official-settle.mjs: @x402/core and
# @x402/evm on a viem wallet with its nonce manager) verifying and settling the same kind of
# payments on the same chain at the same concurrency, in process with no HTTP in front.
# Usage: bench/settle.sh [payments per run, default 1000]; SVC=/path/to/svc measures another
# build; BASELINE=/path/to/older/svc measures an older build in the same run (before the pool of
# relayer keys it has one key). Needs Node.js 20 and npm (interop packages installed on first run).
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${1:-1000}
CONCURRENCY=${CONCURRENCY:-16}
if [ -z "${SVC:-}" ]; then
  cargo build --release --locked -q -p svc-server
  SVC="${CARGO_TARGET_DIR:-target}/release/svc"
fi
SVC="$(cd "$(dirname "$SVC")" && pwd)/$(basename "$SVC")"
cd interop
npm ci --no-audit --no-fund --loglevel=error >/dev/null

work="$(mktemp -d)"
cleanup() { kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

source ./chain.sh
keys=("$relayer_key" "$relayer2_key")
addresses=("$relayer" "$relayer2")

sim_port="$(free_port)"
"$SVC" simulator --listen "127.0.0.1:$sim_port" >"$work/simulator.log" 2>&1 &
wait_for curl -sf "http://127.0.0.1:$sim_port/"
mint="$(curl -sf "http://127.0.0.1:$sim_port/" | python3 -c 'import json,sys; print(json.load(sys.stdin)["launchpad"]["coins"][0]["mint"])')"

echo "svc real-settlement benchmark ($(nproc) cores; $COUNT distinct payments from 8 payers at concurrency $CONCURRENCY; Hardhat automine)"
# "svc CPU ms" is svc's own CPU time (user + system) per settled call over the whole run: what
# one settled call costs the server, apart from the chain and the client on the same cores.
printf '%-9s %-9s %9s %9s %12s %9s %9s %11s  %s\n' build relayers payments settled "settled/s" "p50 ms" "p99 ms" "svc CPU ms" problems
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
status=0
measure() { # label, binary, relayer count
  local label=$1 bin=$2 n=$3
  start_chain "$work/chain.log" "$work/svc.toml"
  port="$(free_port)"
  rm -rf "$work/data"; mkdir -p "$work/data"
  # The first key as SVC_EVM_RELAYER_KEY, which every build reads; the others as the pool.
  SVC_SIMULATOR_URL="http://127.0.0.1:$sim_port" SVC_DATA_DIR="$work/data" SVC_CONFIG="$work/svc.toml" \
    SVC_EVM_RELAYER_KEY="${keys[0]}" SVC_EVM_RELAYER_KEYS="$(IFS=,; echo "${keys[*]:1:$((n - 1))}")" \
    SVC_RATE_PER_MINUTE=1000000 RUST_LOG=warn "$bin" serve --listen "127.0.0.1:$port" >"$work/svc.log" 2>&1 &
  local svc_pid=$!
  wait_for curl -sf "http://127.0.0.1:$port/healthz"
  local ticks_before ticks_after
  ticks_before="$(cpu_ticks "$svc_pid")"
  local result problems=none
  result="$(RPC_URL="$rpc" TOKEN="$token" PAY_TO="$pay_to" DEPLOYER_KEY="$deployer_key" \
    RELAYERS="$(IFS=,; echo "${addresses[*]:0:$n}")" COUNT="$COUNT" PAYERS=8 CONCURRENCY="$CONCURRENCY" TIMEOUT_MS=10000 \
    node settle-load.mjs "http://127.0.0.1:$port" "/api/x402/svc-tools/launchpad/coin/$mint" 2>"$work/problems")" ||
    { problems="$(head -c 160 "$work/problems" | tr '\n' ' ')"; [ "$label" = baseline ] || status=1; }
  ticks_after="$(cpu_ticks "$svc_pid")"
  echo "$result" | tail -n 1 | python3 -c '
import json, sys
r = json.load(sys.stdin)
ms = (int(sys.argv[5]) - int(sys.argv[4])) * 1000 / int(sys.argv[6]) / max(r["settled"], 1)
print("%-9s %-9s %9d %9d %12.1f %9.1f %9.1f %11.2f  %s" % (sys.argv[1], sys.argv[2], r["payments"], r["settled"], r["settled_per_s"], r["p50_ms"], r["p99_ms"], ms, sys.argv[3]))
' "$label" "$n" "$problems" "$ticks_before" "$ticks_after" "$(getconf CLK_TCK)"
  kill "$svc_pid" "$chain_pid"
  wait "$svc_pid" "$chain_pid" 2>/dev/null || true
}
measure current "$SVC" 1
measure current "$SVC" 2
if [ -n "${BASELINE:-}" ]; then measure baseline "$BASELINE" 1; fi

# The official facilitator: its failures are shown, not fatal (it is the reference, not svc).
start_chain "$work/chain.log" "$work/svc.toml"
problems=none
result="$(RPC_URL="$rpc" TOKEN="$token" PAY_TO="$pay_to" DEPLOYER_KEY="$deployer_key" RELAYER_KEY="${keys[0]}" \
  COUNT="$COUNT" PAYERS=8 CONCURRENCY="$CONCURRENCY" node official-settle.mjs 2>"$work/problems")" ||
  problems="the script failed"
[ -s "$work/problems" ] && problems="$(head -c 160 "$work/problems" | tr '\n' ' ')"
echo "$result" | tail -n 1 | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("%-9s %-9s %9d %9d %12.1f %9.1f %9.1f %11s  %s" % ("official", "1", r["payments"], r["settled"], r["settled_per_s"], r["p50_ms"], r["p99_ms"], "-", sys.argv[1]))
' "$problems"
kill "$chain_pid"
wait "$chain_pid" 2>/dev/null || true
exit "$status"
