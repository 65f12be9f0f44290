#!/usr/bin/env bash
# LLM proxy benchmark: the release svc in front of the simulated market's fake OpenAI provider,
# beside the fake called directly, on loopback, in one run:
#   (a) non-stream completions at concurrency 1 (wrk): p50 through svc minus p50 direct is the
#       proxy's overhead (token, hold, relay, charge: two store writes and a read);
#   (b) streams: time to the first `data:` byte, through svc and direct, over sequential streams;
#   (c) 1,000 streams held open at once through svc (a chunk a second from the fake): svc's
#       resident memory idle, with all of them open, and after they ended.
# Usage: bench/llm.sh [seconds per wrk run, default 5]. Needs wrk and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-5}
STREAMS=${STREAMS:-1000}
PORT=${PORT:-18600}
SIM_PORT=${SIM_PORT:-18601}
command -v wrk >/dev/null || { echo "bench: wrk is required (Debian: apt-get install wrk)" >&2; exit 1; }
# 1,000 held streams are 2,000 sockets here (client and server ends) plus the fake's.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

cargo build --release --locked -q -p svc-server
SVC="${CARGO_TARGET_DIR:-target}/release/svc"
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT

"$SVC" simulator --listen "127.0.0.1:$SIM_PORT" >"$WORK/sim.log" 2>&1 &
# No per-account limits, and no cap on one client's connections (1,000 streams come from here): the bench
# measures the proxy, not its limits.
printf '[llm]\nrate_per_minute = 0\ndaily_cap_usd = "0"\n' >"$WORK/svc.toml"
SVC_SIMULATOR_URL="http://127.0.0.1:$SIM_PORT" SVC_DATA_DIR="$WORK/data" SVC_CONFIG="$WORK/svc.toml" \
  SVC_MAX_CONNECTIONS=8192 SVC_MAX_CONNECTIONS_PER_CLIENT=0 RUST_LOG=warn "$SVC" serve --listen "127.0.0.1:$PORT" >"$WORK/svc.log" 2>&1 &
SVC_PID=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
operator() { SVC_DATA_DIR="$WORK/data" "$SVC" "$@" 2>/dev/null | tail -n1; }
ACCOUNT=$(operator accounts create --name bench)
operator credits grant "$ACCOUNT" 1000 >/dev/null
KEY=$(operator keys create "$ACCOUNT")
TOKEN=$(curl -sf -X POST "http://127.0.0.1:$PORT/api/account/llm-token" -H "x-api-key: $KEY" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

PROXY="http://127.0.0.1:$PORT/api/v1/llm/chat/completions"
DIRECT="http://127.0.0.1:$SIM_PORT/llm/v1/chat/completions"
ask() { printf '{"model":"%s","messages":[{"role":"user","content":"%s"}]%s}' "$1" "$2" "${3:-}"; }
row() { printf '%-34s %10s %10s %8s %s\n' "$@"; }

wrk_p50() { # url auth body -> "p50_us p99_us rps unexpected"
  local line
  line=$(EXPECT=200 BODY="$3" AUTH="$2" wrk -t1 -c1 -d"${SECS}s" -s bench/report.lua "$1" | grep '^RESULT')
  set -- $line
  echo "$4 $5 $3 $6"
}
wrk_p50 "$PROXY" "Bearer $TOKEN" "$(ask svc-default warm)" >/dev/null
read -r direct_p50 direct_p99 direct_rps direct_bad < <(wrk_p50 "$DIRECT" "Bearer simulated-key" "$(ask openai/gpt-4.1-mini 'hello there')")
read -r proxy_p50 proxy_p99 proxy_rps proxy_bad < <(wrk_p50 "$PROXY" "Bearer $TOKEN" "$(ask svc-default 'hello there')")

STREAM=',"stream":true'
read -r _ direct_ttfb direct_ttfb99 < <(python3 bench/llm_streams.py ttfb "$DIRECT" "Bearer simulated-key" "$(ask openai/gpt-4.1-mini 'hello there' "$STREAM")" 300)
read -r _ proxy_ttfb proxy_ttfb99 < <(python3 bench/llm_streams.py ttfb "$PROXY" "Bearer $TOKEN" "$(ask svc-default 'hello there' "$STREAM")" 300)

read -r _ held idle_kb open_kb after_kb < <(python3 bench/llm_streams.py hold "$PROXY" "Bearer $TOKEN" "$(ask svc-default '[slow]' "$STREAM")" "$STREAMS" "$SVC_PID")

echo
row "measure" "direct" "via svc" "overhead"
row "non-stream p50 (us, c1)" "$direct_p50" "$proxy_p50" "$((proxy_p50 - direct_p50))"
row "non-stream p99 (us, c1)" "$direct_p99" "$proxy_p99" "$((proxy_p99 - direct_p99))"
row "non-stream req/s (c1)" "$direct_rps" "$proxy_rps" ""
row "stream first byte p50 (us)" "$direct_ttfb" "$proxy_ttfb" "$((proxy_ttfb - direct_ttfb))"
row "stream first byte p99 (us)" "$direct_ttfb99" "$proxy_ttfb99" "$((proxy_ttfb99 - direct_ttfb99))"
echo
echo "$held of $STREAMS streams held open at once and ended with [DONE]; svc RSS: idle ${idle_kb} KB," \
  "all open ${open_kb} KB ($(( (open_kb - idle_kb) / STREAMS )) KB per stream), after ${after_kb} KB"
[ "$direct_bad" = 0 ] && [ "$proxy_bad" = 0 ] || echo "unexpected answers: direct $direct_bad, via svc $proxy_bad" >&2
