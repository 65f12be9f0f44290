#!/usr/bin/env bash
# Paywall benchmark: starts the real app in release mode (bench/src/main.rs) and drives it with
# wrk on loopback, printing one table:
#   (a) unpaid requests -> 402 challenges, beside a bare axum route answering the same bytes;
#   (b) paid requests, each with its own pre-signed EIP-3009 authorization (built-in verifier,
#       SQLite store, settlement stubbed by verify-only mode), at concurrency 64 and 1.
# Usage: bench/run.sh [seconds per run, default 5]. Needs wrk (Debian: apt-get install wrk).
# BASELINE=/path/to/an/older/svc-bench runs the same measurements on it in the same run, for
# before/after ratios.
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
SERVER=0
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
URL="http://127.0.0.1:$PORT"

run() { # label name, then wrk arguments; prints "label name requests rps p50 p99 unexpected"
  local label=$1 name=$2; shift 2
  local line
  line=$(wrk "$@" | grep '^RESULT' || true)
  [ -n "$line" ] || { echo "bench: wrk gave no result for $label $name" >&2; exit 1; }
  echo "$label $name ${line#RESULT }"
}

measure() { # label, binary
  local label=$1 bin=$2
  # Enough distinct payments that no run runs out (unexpected answers are shown if one does).
  "$bin" presign --count $((SECS * 14000)) --out "$WORK/bulk.txt"
  "$bin" presign --count $((SECS * 4000)) --out "$WORK/serial.txt"
  rm -f "$WORK"/bench.db*
  "$bin" serve --listen "127.0.0.1:$PORT" --db "$WORK/bench.db" &
  SERVER=$!
  for _ in $(seq 100); do
    curl -s -o /dev/null "$URL/healthz" && break
    sleep 0.1
  done
  # Warm-up so the first measured run does not pay for page faults and connection setup.
  wrk -t"$THREADS" -c"$CONNS" -d1s "$URL/bare" >/dev/null
  EXPECT=402 run "$label" bare_402 -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s bench/report.lua "$URL/bare"
  EXPECT=402 run "$label" challenge_402 -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s bench/report.lua \
    "$URL/api/x402/alpha/top-picks"
  PAYMENTS="$WORK/bulk.txt" THREADS=$THREADS run "$label" "paid_c$CONNS" -t"$THREADS" -c"$CONNS" -d"${SECS}s" \
    -s bench/paid.lua "$URL/api/x402/alpha/top-picks"
  PAYMENTS="$WORK/serial.txt" THREADS=1 run "$label" paid_c1 -t1 -c1 -d"${SECS}s" -s bench/paid.lua \
    "$URL/api/x402/alpha/top-picks"
  kill "$SERVER"
  wait "$SERVER" 2>/dev/null || true
}

results=$(
  measure current "$BIN"
  if [ -n "${BASELINE:-}" ]; then measure baseline "$BASELINE"; fi
)

echo
echo "svc paywall benchmark ($(nproc) cores, wrk -t$THREADS -c$CONNS, ${SECS}s per run, SQLite, rate limits off: one client)"
printf '%-9s %-14s %9s %9s %9s %9s %10s\n' build run requests "req/s" "p50 µs" "p99 µs" unexpected
echo "$results" | while read -r label name n rps p50 p99 bad; do
  printf '%-9s %-14s %9s %9s %9s %9s %10s\n' "$label" "$name" "$n" "$rps" "$p50" "$p99" "$bad"
done
rps() { echo "$results" | awk -v l="$1" -v n="$2" '$1==l && $2==n {print $4}'; }
awk -v c="$(rps current challenge_402)" -v b="$(rps current bare_402)" \
  'BEGIN { printf "challenge / bare = %.0f%% (target >= 85%%)\n", 100 * c / b }'
if [ -n "${BASELINE:-}" ]; then
  for name in challenge_402 "paid_c$CONNS" paid_c1; do
    awk -v n="$name" -v c="$(rps current "$name")" -v b="$(rps baseline "$name")" \
      'BEGIN { printf "%s: current / baseline = %.2fx\n", n, c / b }'
  done
fi
