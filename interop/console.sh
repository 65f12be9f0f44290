#!/usr/bin/env bash
# The console in a real browser: Debian's Chromium, driven by playwright-core (interop/console.mjs),
# against svc's default run. Screenshots go to $SVC_CONSOLE_SHOTS (default: a temporary directory).
# Usage: interop/console.sh [path to the svc binary]
set -euo pipefail
cd "$(dirname "$0")"
svc="${1:-${CARGO_TARGET_DIR:-../target}/debug/svc}"
svc="$(cd "$(dirname "$svc")" && pwd)/$(basename "$svc")"
[ -x "$svc" ] || { echo "no svc binary at $svc (cargo build first)" >&2; exit 1; }
if ! command -v chromium >/dev/null; then
  (apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; })
fi
[ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund --loglevel=error >/dev/null

scratch="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$scratch"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SVC_DATA_DIR="$scratch/data" "$svc" serve --listen "127.0.0.1:$port" >"$scratch/svc.log" 2>&1 &
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
operator() { SVC_DATA_DIR="$scratch/data" "$svc" "$@" 2>/dev/null | tail -n1; }
account="$(operator accounts create --name "Console tester")"
operator credits grant "$account" 5 >/dev/null
key="$(operator keys create "$account" --scopes data)"
shots="${SVC_CONSOLE_SHOTS:-$scratch/shots}"
node console.mjs "http://127.0.0.1:$port" "$key" "$shots" || { tail -n 40 "$scratch/svc.log" >&2; exit 1; }
