#!/usr/bin/env bash
# Real-settlement benchmark: a local EVM chain (Hardhat, from interop/), an EIP-3009 token
# deployed on it, svc (release build) settling every paid call on it through its built-in
# facilitator, and distinct payments pre-signed by the official x402 client from 8 payers, sent
# at concurrency 16 (interop/settle-load.mjs, which also checks that every payment settled
# exactly once and no nonce was left behind). Runs with one relayer key, then two.
# Usage: bench/settle.sh [payments per run, default 1000]; SVC=/path/to/svc measures another
# build. Needs Node.js 20 and npm (the interop packages are installed on first run).
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
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 1 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "timed out: $*" >&2; return 1; }

source ./chain.sh
keys=("$relayer_key" "$relayer2_key")
addresses=("$relayer" "$relayer2")

sim_port="$(free_port)"
"$SVC" simulator --listen "127.0.0.1:$sim_port" >"$work/simulator.log" 2>&1 &
wait_for curl -sf "http://127.0.0.1:$sim_port/"
mint="$(curl -sf "http://127.0.0.1:$sim_port/" | python3 -c 'import json,sys; print(json.load(sys.stdin)["launchpad"]["coins"][0]["mint"])')"

echo "svc real-settlement benchmark ($(nproc) cores; $COUNT distinct payments from 8 payers at concurrency $CONCURRENCY; Hardhat automine)"
printf '%-9s %9s %9s %12s %9s %9s\n' relayers payments settled "settled/s" "p50 ms" "p99 ms"
for n in 1 2; do
  start_chain "$work/chain-$n.log" "$work/svc.toml"
  port="$(free_port)"
  mkdir -p "$work/data-$n"
  relayer_keys="$(IFS=,; echo "${keys[*]:0:$n}")"
  relayers="$(IFS=,; echo "${addresses[*]:0:$n}")"
  SVC_SIMULATOR_URL="http://127.0.0.1:$sim_port" SVC_DATA_DIR="$work/data-$n" SVC_CONFIG="$work/svc.toml" \
    SVC_EVM_RELAYER_KEYS="$relayer_keys" SVC_RATE_PER_MINUTE=1000000 RUST_LOG=warn \
    "$SVC" serve --listen "127.0.0.1:$port" >"$work/svc-$n.log" 2>&1 &
  svc_pid=$!
  wait_for curl -sf "http://127.0.0.1:$port/healthz"
  result="$(RPC_URL="$rpc" TOKEN="$token" PAY_TO="$pay_to" DEPLOYER_KEY="$deployer_key" RELAYERS="$relayers" \
    COUNT="$COUNT" PAYERS=8 CONCURRENCY="$CONCURRENCY" \
    node settle-load.mjs "http://127.0.0.1:$port" "/api/x402/svc-tools/launchpad/coin/$mint")" ||
    { echo "$result"; tail -n 20 "$work/svc-$n.log" >&2; exit 1; }
  echo "$result" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("%-9s %9d %9d %12.1f %9.1f %9.1f" % (sys.argv[1], r["payments"], r["settled"], r["settled_per_s"], r["p50_ms"], r["p99_ms"]))
' "$n"
  kill "$svc_pid" "$chain_pid"
  wait "$svc_pid" "$chain_pid" 2>/dev/null || true
done
