#!/usr/bin/env bash
# Interop: the official x402 clients (TypeScript @x402/fetch + @x402/evm from the npm registry,
# Python x402 from PyPI; versions locked in package-lock.json and requirements.txt) pay a running
# svc. Usage: interop/run.sh [path to the svc binary]
set -euo pipefail
cd "$(dirname "$0")"
svc="${1:-${CARGO_TARGET_DIR:-../target}/debug/svc}"
svc="$(cd "$(dirname "$svc")" && pwd)/$(basename "$svc")"
[ -x "$svc" ] || { echo "no svc binary at $svc (cargo build first)" >&2; exit 1; }

npm ci --no-audit --no-fund --loglevel=error >/dev/null
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt

scratch="$(mktemp -d)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
sim_port="$(free_port)"; svc_port="$(free_port)"
cleanup() { kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$scratch"; }
trap cleanup EXIT

"$svc" simulator --listen "127.0.0.1:$sim_port" >"$scratch/simulator.log" 2>&1 &
SVC_SIMULATOR_URL="http://127.0.0.1:$sim_port" SVC_DATA_DIR="$scratch" \
  "$svc" serve --listen "127.0.0.1:$svc_port" >"$scratch/svc.log" 2>&1 &
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$svc_port/healthz" >/dev/null 2>&1 && curl -sf "http://127.0.0.1:$sim_port/" >/dev/null 2>&1 && break
  sleep 0.1
done
base="http://127.0.0.1:$svc_port"
mints=($(curl -sf "http://127.0.0.1:$sim_port/" | python3 -c 'import json,sys; print(" ".join(c["mint"] for c in json.load(sys.stdin)["launchpad"]["coins"]))'))

# The vectors' throwaway payer; in verify-only mode nothing moves.
export PAYER_KEY=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318
status=0
node pay.mjs "$base" GET "/api/x402/svc-tools/launchpad/coin/${mints[0]}" || status=1
.venv/bin/python pay.py "$base" GET "/api/x402/svc-tools/launchpad/coin/${mints[1]}" || status=1
if [ "$status" -ne 0 ]; then
  echo "--- svc log" >&2; tail -n 30 "$scratch/svc.log" >&2
fi
exit "$status"
