#!/usr/bin/env bash
# Paywall benchmark: starts the real app in release mode (bench/src/main.rs) and drives it with
# wrk on loopback, printing one table:
#   (a) unpaid requests -> 402 challenges, beside a bare axum route answering the same bytes;
#   (b) Top Picks served from a real signal snapshot through the same middleware and pipeline,
#       without the payment (bench-only route), beside the challenge path: gzipped, as clients
#       that send Accept-Encoding get it, and plain (signal_plain);
#   (c) paid requests, each with its own pre-signed EIP-3009 authorization (built-in verifier,
#       SQLite store, settlement stubbed by verify-only mode), at concurrency 64 and 1; and a
#       seller agent's paid invoke at concurrency 1, forwarded to a fake seller on loopback
#       (target: at most 0.5 ms p50 more than the paid catalogue route); and the paid route called
#       as an MCP tool, its payment in the call's `_meta` (target: at most 0.3 ms p50 more);
#   (d) resident memory: of the bench server, idle after start and after the runs; and of `svc
#       serve` itself on its defaults (SQLite, simulated market, built-in facilitator), idle once
#       start-up has settled and after a load of unpaid and paid calls (target: idle < 30 MB);
#   (e) what the MCP servers' tools/list costs: bytes, and tokens (o200k) on the wire and as a
#       host shows its model the tools (name, description, input schema).
# Usage: bench/run.sh [seconds per run, default 5]; ROUNDS=n sets how many times the unpaid runs
# repeat (default 3; the median is shown). Needs wrk (Debian: apt-get install wrk).
# BASELINE=/path/to/an/older/svc-bench runs the same measurements on it in the same run, for
# before/after ratios; BASELINE_SVC=/path/to/an/older/svc does the same for the memory of
# `svc serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-5}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
PORT=${PORT:-18500}
command -v wrk >/dev/null || { echo "bench: wrk is required (Debian: apt-get install wrk)" >&2; exit 1; }

cargo build --release --locked -q -p svc-bench -p svc-server
BIN="${CARGO_TARGET_DIR:-target}/release/svc-bench"
SVC="${CARGO_TARGET_DIR:-target}/release/svc"
WORK=$(mktemp -d)
SERVER=0
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
URL="http://127.0.0.1:$PORT"
GZIP="Accept-Encoding: gzip"
INVOKE_BODY='{"query":"bench"}'

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
  rm -f "$WORK/agent.txt"
  # Builds from before sellers have no agent to invoke: their table has no invoke row.
  local agent=()
  if "$bin" serve --help | grep -q agent-out; then agent=(--agent-out "$WORK/agent.txt"); fi
  "$bin" serve --listen "127.0.0.1:$PORT" --db "$WORK/bench.db" "${agent[@]}" &
  SERVER=$!
  for _ in $(seq 100); do
    curl -s -o /dev/null "$URL/healthz" && break
    sleep 0.1
  done
  local invoke=""
  if [ -s "$WORK/agent.txt" ]; then
    invoke=$(cat "$WORK/agent.txt")
    "$bin" presign --count $((SECS * 4000)) --out "$WORK/invoke.txt" --db "$WORK/bench.db" --path "$invoke" \
      --body "$INVOKE_BODY"
  fi
  sleep 1
  local idle_kb
  idle_kb=$(rss_kb "$SERVER")
  # Warm-up so the first measured run does not pay for page faults and connection setup.
  wrk -t"$THREADS" -c"$CONNS" -d1s "$URL/bare" >/dev/null
  # The unpaid runs alternate, ROUNDS times, and the table keeps each one's median: this
  # machine's throughput drifts between runs, and the ratios compare runs made side by side.
  # Requests say they accept gzip, as Node's fetch, httpx and requests do; signal_plain is the
  # signal route for a client that does not.
  for _ in $(seq "$ROUNDS"); do
    EXPECT=402 run "$label" bare_402 -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s bench/report.lua -H "$GZIP" \
      "$URL/bare"
    EXPECT=402 run "$label" challenge_402 -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s bench/report.lua -H "$GZIP" \
      "$URL/api/x402/alpha/top-picks"
    EXPECT=200 run "$label" signal_200 -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s bench/report.lua -H "$GZIP" \
      "$URL/signal/top-picks"
    EXPECT=200 run "$label" signal_plain -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s bench/report.lua \
      "$URL/signal/top-picks"
  done
  PAYMENTS="$WORK/bulk.txt" THREADS=$THREADS run "$label" "paid_c$CONNS" -t"$THREADS" -c"$CONNS" -d"${SECS}s" \
    -s bench/paid.lua "$URL/api/x402/alpha/top-picks"
  PAYMENTS="$WORK/serial.txt" THREADS=1 run "$label" paid_c1 -t1 -c1 -d"${SECS}s" -s bench/paid.lua \
    "$URL/api/x402/alpha/top-picks"
  if [ -n "$invoke" ]; then
    PAYMENTS="$WORK/invoke.txt" THREADS=1 BODY="$INVOKE_BODY" run "$label" invoke_c1 -t1 -c1 -d"${SECS}s" \
      -s bench/paid.lua "$URL$invoke"
  fi
  # The same paid route as an MCP tool (the payment in the call's `_meta`), at concurrency 1,
  # then the route over HTTP again: every paid call adds to the store, and a later run is a
  # little slower, so the tool call is compared with the HTTP runs on both sides of it.
  if "$bin" presign --help | grep -q mcp-tool; then
    "$bin" presign --count $((SECS * 4000)) --out "$WORK/mcp.txt" --mcp-tool alpha_top_picks
    "$bin" presign --count $((SECS * 4000)) --out "$WORK/serial2.txt"
    PAYMENTS="$WORK/mcp.txt" THREADS=1 MCP=1 run "$label" mcp_paid_c1 -t1 -c1 -d"${SECS}s" -s bench/paid.lua \
      "$URL/mcp"
    PAYMENTS="$WORK/serial2.txt" THREADS=1 run "$label" paid_c1_after -t1 -c1 -d"${SECS}s" -s bench/paid.lua \
      "$URL/api/x402/alpha/top-picks"
  fi
  echo "$label $idle_kb $(rss_kb "$SERVER")" >>"$WORK/rss.txt"
  kill "$SERVER"
  wait "$SERVER" 2>/dev/null || true
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# `svc serve` on its defaults: resident memory once start-up (the first signal snapshot) is done
# and the allocator has had IDLE_SECS to give back what start-up freed, then after SECS of
# unpaid calls over 64 connections and 50 paid calls (verify-only, a throwaway key).
IDLE_SECS=${IDLE_SECS:-30}
serve_memory() { # label, svc binary; prints "label idle_kb loaded_kb"
  local label=$1 bin=$2 data="$WORK/serve-$1"
  "$bin" serve --listen "127.0.0.1:$PORT" --data-dir "$data" --rate-per-minute 1000000000 >"$data.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 600); do
    grep -q 'signal snapshot computed' "$data.log" && break
    sleep 0.1
  done
  sleep "$IDLE_SECS"
  local idle_kb key
  idle_kb=$(rss_kb "$SERVER")
  wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" -H "$GZIP" "$URL/api/x402/alpha/top-picks" >/dev/null
  key=0x$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
  for _ in $(seq 50); do
    SVC_PAYER_KEY=$key "$bin" pay GET /api/x402/alpha/top-picks --url "$URL" >/dev/null 2>&1
  done
  echo "$label $idle_kb $(rss_kb "$SERVER")"
  kill "$SERVER"
  wait "$SERVER" 2>/dev/null || true
}

runs=$(
  measure current "$BIN"
  if [ -n "${BASELINE:-}" ]; then measure baseline "$BASELINE"; fi
)
serve_rss=$(
  serve_memory current "$SVC"
  if [ -n "${BASELINE_SVC:-}" ]; then serve_memory baseline "$BASELINE_SVC"; fi
)
# The median run (by req/s) of each build and name, in the order first seen.
results=$(echo "$runs" | awk '
  { key = $1 " " $2; if (!(key in n)) order[++keys] = key; row[key, ++n[key]] = $0; rps[key, n[key]] = $4 }
  END {
    for (k = 1; k <= keys; k++) {
      key = order[k]; m = n[key]
      for (i = 1; i <= m; i++) idx[i] = i
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
        if (rps[key, idx[j]] < rps[key, idx[i]]) { t = idx[i]; idx[i] = idx[j]; idx[j] = t }
      print row[key, idx[int((m + 1) / 2)]]
    }
  }')

echo
echo "svc paywall benchmark ($(nproc) cores, wrk -t$THREADS -c$CONNS, ${SECS}s per run, unpaid runs: median of $ROUNDS, SQLite, rate limits off: one client)"
printf '%-9s %-14s %9s %9s %9s %9s %10s\n' build run requests "req/s" "p50 µs" "p99 µs" unexpected
echo "$results" | while read -r label name n rps p50 p99 bad; do
  printf '%-9s %-14s %9s %9s %9s %9s %10s\n' "$label" "$name" "$n" "$rps" "$p50" "$p99" "$bad"
done
rps() { echo "$results" | awk -v l="$1" -v n="$2" '$1==l && $2==n {print $4}'; }
awk -v c="$(rps current challenge_402)" -v b="$(rps current bare_402)" \
  'BEGIN { printf "challenge / bare = %.0f%% (target >= 85%%)\n", 100 * c / b }'
awk -v s="$(rps current signal_200)" -v c="$(rps current challenge_402)" \
  'BEGIN { printf "signal from snapshot / challenge = %.0f%% (target >= 90%%)\n", 100 * s / c }'
awk -v s="$(rps current signal_plain)" -v c="$(rps current challenge_402)" \
  'BEGIN { printf "signal without gzip / challenge = %.0f%%\n", 100 * s / c }'
p50() { echo "$results" | awk -v l="$1" -v n="$2" '$1==l && $2==n {print $5}'; }
awk -v i="$(p50 current invoke_c1)" -v p="$(p50 current paid_c1)" \
  'BEGIN { printf "paid invoke p50 - paid route p50 = %d µs (target <= 500 µs)\n", i - p }'
awk -v m="$(p50 current mcp_paid_c1)" -v p="$(p50 current paid_c1)" -v q="$(p50 current paid_c1_after)" \
  'BEGIN { printf "paid MCP tool call p50 - paid route p50 (the runs before and after) = %d µs (target <= 300 µs)\n", m - (p + q) / 2 }'
"$BIN" mcp-list | while read -r _ path _ tools _ bytes _ wire _ model; do
  printf 'MCP tools/list %-12s %3s tools, %7s bytes, %6s tokens on the wire, %6s tokens a model reads\n' \
    "$path" "$tools" "$bytes" "$wire" "$model"
done
while read -r label idle loaded; do
  printf '%-9s bench server resident memory: idle %s KB, after the runs %s KB\n' "$label" "$idle" "$loaded"
done <"$WORK/rss.txt"
echo "$serve_rss" | while read -r label idle loaded; do
  printf '%-9s svc serve resident memory: idle %s KB, after load %s KB (target: idle < 30 MB)\n' \
    "$label" "$idle" "$loaded"
done
if [ -n "${BASELINE:-}" ]; then
  for name in challenge_402 signal_200 signal_plain "paid_c$CONNS" paid_c1; do
    awk -v n="$name" -v c="$(rps current "$name")" -v b="$(rps baseline "$name")" \
      'BEGIN { printf "%s: current / baseline = %.2fx\n", n, c / b }'
  done
fi
