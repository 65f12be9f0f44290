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
# svc is stopped first, so it ends what it runs; a sandbox left by a failure is ended by name.
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; pkill -9 -f "$scratch" 2>/dev/null || true; rm -rf "$scratch"' EXIT
# Agent sandboxes with a stand-in gateway (the tests' own), so a start runs in seconds.
mkdir -p "$scratch/snapshot"
cp ../crates/server/tests/fixtures/standin_gateway.py "$scratch/snapshot/gateway.py"
echo '{"command": ["/usr/bin/python3", "/opt/agent/gateway.py"]}' >"$scratch/snapshot/snapshot.json"
cat >"$scratch/svc.toml" <<TOML
[agentbox]
snapshot = "$scratch/snapshot"
memory_mb = 128
pool_size = 0
probe_interval_secs = 1
stop_grace_secs = 2

[sellers]
allow_http_hosts = ["127.0.0.1"]
TOML
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SVC_DATA_DIR="$scratch/data" "$svc" serve --listen "127.0.0.1:$port" --config "$scratch/svc.toml" >"$scratch/svc.log" 2>&1 &
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
operator() { SVC_DATA_DIR="$scratch/data" "$svc" "$@" 2>/dev/null | tail -n1; }
account="$(operator accounts create --name "Console tester")"
operator credits grant "$account" 5 >/dev/null
key="$(operator keys create "$account" --scopes data,gateway)"
shots="${SVC_CONSOLE_SHOTS:-$scratch/shots}"
SVC_BIN="$svc" node console.mjs "http://127.0.0.1:$port" "$key" "$shots" || { tail -n 40 "$scratch/svc.log" >&2; exit 1; }
