#!/usr/bin/env bash
# Paywall benchmark: starts the real app in release mode (bench/src/main.rs) and drives it with
# wrk on loopback, printing one table:
#   (a) unpaid requests -> 402 challenges, beside a bare axum route answering the same bytes;
#   (b) paid requests, each with its own pre-signed EIP-3009 authorization (built-in verifier,
#       SQLite store, settlement stubbed by verify-only mode), at concurrency 64 and 1.
# Usage: bench/run.sh [seconds per run, default 5]. Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-5}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
PORT=${PORT:-18500}
command -v wrk >/dev/null || { echo "bench: wrk is required (Debian: apt-get install wrk)" >&2; exit 1; }

cargo build --release --locked -q -p svc-bench
BIN="${CARGO_TARGET_DIR:-target}/release/svc-bench"
WORK=$(mktemp -d)
trap 'kill "${SERVER:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

# Enough distinct payments that no run runs out (checked below: unexpected answers are shown).
"$BIN" presign --count $((SECS * 14000)) --out "$WORK/bulk.txt"
"$BIN" presign --count $((SECS * 4000)) --out "$WORK/serial.txt"

"$BIN" serve --listen "127.0.0.1:$PORT" --db "$WORK/bench.db" &
SERVER=$!
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  sleep 0.1
done

URL="http://127.0.0.1:$PORT"
run() { # name, then wrk arguments; prints "name requests rps p50 p99 unexpected"
  local name=$1; shift
  local line
  line=$(wrk "$@" | grep '^RESULT' || true)
  [ -n "$line" ] || { echo "bench: wrk gave no result for $name" >&2; exit 1; }
  echo "$name ${line#RESULT }"
}

results=$(
  # Warm-up so the first measured run does not pay for page faults and connection setup.
  wrk -t"$THREADS" -c"$CONNS" -d1s "$URL/bare" >/dev/null
  EXPECT=402 run bare_402 -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s bench/report.lua "$URL/bare"
  EXPECT=402 run challenge_402 -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s bench/report.lua "$URL/api/x402/alpha/top-picks"
  PAYMENTS="$WORK/bulk.txt" THREADS=$THREADS \
    run paid_c$CONNS -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s bench/paid.lua "$URL/api/x402/alpha/top-picks"
  PAYMENTS="$WORK/serial.txt" THREADS=1 \
    run paid_c1 -t1 -c1 -d"${SECS}s" -s bench/paid.lua "$URL/api/x402/alpha/top-picks"
)

echo
echo "svc paywall benchmark ($(nproc) cores, wrk -t$THREADS -c$CONNS, ${SECS}s per run, SQLite)"
printf '%-16s %10s %10s %10s %10s %11s\n' run requests "req/s" "p50 µs" "p99 µs" unexpected
echo "$results" | while read -r name n rps p50 p99 bad; do
  printf '%-16s %10s %10s %10s %10s %11s\n' "$name" "$n" "$rps" "$p50" "$p99" "$bad"
done
bare=$(echo "$results" | awk '$1=="bare_402"{print $3}')
chal=$(echo "$results" | awk '$1=="challenge_402"{print $3}')
awk -v c="$chal" -v b="$bare" 'BEGIN { printf "challenge / bare = %.0f%% (target >= 85%%)\n", 100 * c / b }'
