#!/usr/bin/env bash
# Records which functions a running svc executes and writes their linker names to
# crates/server/link-order.txt, which the release build (crates/server/build.rs) places together:
# a default run then keeps a fraction of its code resident (see docs/operating.md, "Memory").
#
# The run: `svc serve` on its defaults (a scratch data directory) under valgrind's callgrind,
# until the first signal snapshot and IDLE_SECS (40) after it; then the free documents, an
# unpaid request to every catalogue route (402 or 422), a preview and two paid calls
# (verify-only, a throwaway key). Run it after changes that move much code (a new dependency, a
# new toolchain); a stale list only costs memory.
# Usage: bench/link-order.sh. Needs valgrind, curl and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-18590}
for tool in valgrind callgrind_control curl python3; do
  command -v "$tool" >/dev/null || { echo "link-order: $tool is required" >&2; exit 1; }
done

cargo build --release --locked -q -p svc-server
BIN="$(pwd)/${CARGO_TARGET_DIR:-target}/release/svc"
WORK=$(mktemp -d)
SERVER=0
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
URL="http://127.0.0.1:$PORT"

valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/run.out" \
  "$BIN" serve --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" >"$WORK/log.txt" 2>&1 &
SERVER=$!
for _ in $(seq 600); do
  grep -q 'signal snapshot computed' "$WORK/log.txt" && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/log.txt" >&2; exit 1; }
  sleep 0.5
done
grep -q 'signal snapshot computed' "$WORK/log.txt" || { echo "link-order: no signal snapshot" >&2; exit 1; }
# What start-up and the first minute of idling ran (the allocator giving memory back, periodic
# tasks), recorded apart: it is listed first, so an idle server's code is together.
sleep "${IDLE_SECS:-40}"
callgrind_control --dump=started "$SERVER" >/dev/null

get() { curl -s -o /dev/null -H 'Accept-Encoding: gzip' "$@" || true; }
for path in /healthz /llms.txt /openapi.json /.well-known/x402 /api/x402/catalogue /metrics; do
  get "$URL$path"
done
# Every catalogue route once, unpaid: path parameters as placeholders, an empty JSON body.
curl -s "$URL/api/x402/catalogue" | python3 -c '
import json, re, sys
for route in json.load(sys.stdin)["resources"]:
    path = re.sub(r"^https?://[^/]+", "", route["url"])
    print(route["method"], re.sub(r"\{[^}]+\}", "x", path))
' | while read -r method path; do
  if [ "$method" = GET ]; then get "$URL$path"; else get -X "$method" -H 'Content-Type: application/json' -d '{}' "$URL$path"; fi
done
get "$URL/api/x402/alpha/top-picks?preview=true"
key=0x$(python3 -c 'import secrets; print(secrets.token_hex(32))')
for path in /api/x402/alpha/top-picks /api/x402/alpha/top-picks; do
  SVC_PAYER_KEY=$key "$BIN" pay GET "$path" --url "$URL" >/dev/null 2>&1 || true
done

kill -INT "$SERVER"
wait "$SERVER" 2>/dev/null || true
# Every function of svc's own binary that ran: start-up's first, then the requests'.
python3 - "$BIN" "$WORK/run.out.1" "$WORK/run.out" >crates/server/link-order.txt <<'EOF'
import sys
binary, paths = sys.argv[1], sys.argv[2:]
# Callgrind names an object or function once, on the first line that mentions it (ob=, cob=,
# fn= or cfn=), and by its number after that.
objects, functions, order, listed = {}, {}, [], set()
for path in paths:
    current = None
    for line in open(path, encoding="utf-8", errors="replace"):
        key, _, rest = line.partition("=")
        if key not in ("ob", "cob", "fn", "cfn"):
            continue
        ref, _, name = rest.strip().partition(" ")
        table = objects if key in ("ob", "cob") else functions
        if name:
            table[ref] = name.split("'")[0]  # recursion levels are marked name'2
        if key == "ob":
            current = objects.get(ref)
        elif key == "fn" and current == binary:
            name = functions.get(ref)
            # Linker names only: not callgrind's "(below main)" nor a bare address.
            if name and " " not in name and not name.startswith("0x") and name not in listed:
                listed.add(name)
                order.append(name)
print("\n".join(order))
EOF
echo "link-order: $(wc -l <crates/server/link-order.txt) functions written to crates/server/link-order.txt"
