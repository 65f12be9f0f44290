#!/usr/bin/env bash
# svc as two replicas on one PostgreSQL database and one Redis, over one simulated market
# (`svc simulator`), checked from outside (the checks are interop/replicas.py, paying with the
# official x402 Python client):
#   1. one payment sent to both replicas at the same moment is served once: for 20 payments
#      (20 payers), exactly one 200 per payment, the other replica refuses it (402, a fresh
#      challenge whose `error` is payment_in_progress or payment_already_used), each sent again
#      later to either replica is payment_already_used, and the store holds one payment row per
#      authorization;
#   2. limits hold across the replicas: 5 previews an hour per IP (the sixth, on either
#      replica, is 429 preview_quota_exceeded), and a per-minute rate limit of 6
#      (SVC_RATE_PER_MINUTE) per IP for unpaid calls and per paying wallet for paid calls
#      (the seventh is 429 rate_limited, even from a fresh IP);
#   3. the replica holding the signal engine's lease (a PostgreSQL advisory lock) is killed
#      with kill -9, and the other takes the lease within one refresh interval (1 minute, the
#      shortest SVC_SIGNAL_REFRESH_MINUTES) and serves a snapshot computed after the kill.
# Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust; PGURL overrides the admin URL) and
# Redis on 127.0.0.1:6379 (REDIS_DB, default 7, is flushed at start and at exit). A scratch
# database is created and dropped. Takes about 65 s, most of it waiting for the engine's
# takeover; the bounded waits keep a failing run under 2 minutes.
# Usage: interop/replicas.sh [path to the svc binary]
set -euo pipefail
# The binary: the argument (relative to where this is run from), else the debug build.
if [ $# -ge 1 ]; then
  svc="$1"
elif [ -n "${CARGO_TARGET_DIR:-}" ]; then
  svc="$CARGO_TARGET_DIR/debug/svc"
else
  svc="$(dirname "$0")/../target/debug/svc"
fi
[ -x "$svc" ] || { echo "no svc binary at $svc (cargo build first)" >&2; exit 1; }
svc="$(cd "$(dirname "$svc")" && pwd)/$(basename "$svc")"
cd "$(dirname "$0")"
for tool in psql redis-cli curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done

if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt

started=$(date +%s)
pg_admin="${PGURL:-postgres://postgres@127.0.0.1:5432/test}"
db_name="svc_replicas_$$"
db_url="${pg_admin%/*}/$db_name"
redis_db="${REDIS_DB:-7}"
redis_url="redis://127.0.0.1:6379/$redis_db"
scratch="$(mktemp -d)"
pids=()
db_created=0

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ "$rc" -ne 0 ]; then
    for log in "$scratch"/replica-*.log "$scratch/simulator.log"; do
      [ -f "$log" ] || continue
      echo "--- last lines of $(basename "$log")" >&2
      tail -n 30 "$log" | sed 's/\x1b\[[0-9;]*m//g' >&2
    done
  fi
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" -eq 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$db_created" -eq 1 ]; then
    psql "$pg_admin" -Xq -c "DROP DATABASE IF EXISTS $db_name WITH (FORCE)" >/dev/null || true
  fi
  redis-cli -u "$redis_url" FLUSHDB >/dev/null 2>&1 || true
  rm -rf "$scratch"
  if [ "$rc" -eq 0 ]; then echo "all replica checks passed in $(( $(date +%s) - started )) s"; else echo "FAILED" >&2; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
# free_port and wait_for.
source ./chain.sh

psql "$pg_admin" -Xq -c "CREATE DATABASE $db_name" >/dev/null
db_created=1
[ "$(redis-cli -u "$redis_url" FLUSHDB)" = OK ] || fail "could not flush Redis db $redis_db"

sim_port="$(free_port)"
"$svc" simulator --listen "127.0.0.1:$sim_port" >"$scratch/simulator.log" 2>&1 &
pids+=($!)
wait_for curl -sf "http://127.0.0.1:$sim_port/"
mint="$(curl -sf "http://127.0.0.1:$sim_port/" | python3 -c 'import json,sys; print(json.load(sys.stdin)["launchpad"]["coins"][0]["mint"])')"
route="/api/x402/svc-tools/launchpad/coin/$mint"

# What every replica shares: the store, the counters, the market, the secrets and the limits.
export SVC_DATABASE_URL="$db_url" SVC_REDIS_URL="$redis_url" SVC_SIMULATOR_URL="http://127.0.0.1:$sim_port"
SVC_JWT_SECRET="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
SVC_LLM_TOKEN_SECRET="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
SVC_SECRETS_KEY="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
export SVC_JWT_SECRET SVC_LLM_TOKEN_SECRET SVC_SECRETS_KEY
refresh_minutes=1
rate=6
export SVC_SIGNAL_REFRESH_MINUTES=$refresh_minutes SVC_RATE_PER_MINUTE=$rate NO_COLOR=1
unset SVC_PREVIEWS_PER_HOUR SVC_CONFIG SVC_TRUSTED_PROXIES

declare -A port pid log
for r in A B; do
  port[$r]="$(free_port)"
  log[$r]="$scratch/replica-$r.log"
  mkdir -p "$scratch/data-$r"
done
# Started together: both migrate the fresh database and race for the engine lease.
for r in A B; do
  SVC_DATA_DIR="$scratch/data-$r" "$svc" serve --listen "127.0.0.1:${port[$r]}" >"${log[$r]}" 2>&1 &
  pid[$r]=$!
  pids+=($!)
done
for r in A B; do
  wait_for curl -sf "http://127.0.0.1:${port[$r]}/readyz" || fail "replica $r did not become ready"
done
url_a="http://127.0.0.1:${port[A]}"
url_b="http://127.0.0.1:${port[B]}"
ok "replicas A ($url_a) and B ($url_b) ready on one PostgreSQL database ($db_name) and Redis db $redis_db"

lease_line="this replica runs the signal engine"
leads() { grep -c "$lease_line" "${log[$1]}" || true; }
leader=""
for _ in $(seq 1 300); do
  if [ "$(leads A)" -gt 0 ] || [ "$(leads B)" -gt 0 ]; then break; fi
  sleep 0.1
done
sleep 1
case "$(leads A)$(leads B)" in
  10) leader=A follower=B ;;
  01) leader=B follower=A ;;
  *) fail "exactly one replica should lead the signal engine; A logged '$lease_line' $(leads A) times, B $(leads B)" ;;
esac
ok "replica $leader holds the signal engine lease (PostgreSQL advisory lock); $follower follows"

py=.venv/bin/python
# The interop's payer (its public test vector key); replicas.py derives the other payers.
export PAYER_KEY=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318
replicas="$url_a,$url_b"
echo "== 1. one payment, sent to both replicas at the same moment, is served once"
"$py" replicas.py double-spend --replicas "$replicas" --route "$route" --count 20 --db "$db_url"
echo "== 2. preview and rate limits hold across the replicas"
"$py" replicas.py previews --replicas "$replicas" --route "$route" --quota 5
"$py" replicas.py rate --replicas "$replicas" --route "$route" --limit "$rate" --db "$db_url"

echo "== 3. the signal engine's leader is killed; the other replica takes over"
before_ms="$(psql "$db_url" -XAtc "SELECT COALESCE(MAX(generated_at), 0) FROM signal_snapshots")"
[ "$before_ms" -gt 0 ] || fail "the leader stored no signal snapshot"
killed_at="$(date +%s.%N)"
kill -9 "${pid[$leader]}"
wait "${pid[$leader]}" 2>/dev/null || true
ok "replica $leader killed with kill -9; the newest stored snapshot was made at $(date -u -d "@$((before_ms / 1000))" +%T)"
if [ "$follower" = A ]; then survivor="$url_a"; else survivor="$url_b"; fi
"$py" replicas.py takeover --survivor "$survivor" --label "$follower" --log "${log[$follower]}" \
  --killed-at "$killed_at" --before-ms "$before_ms" --interval $((refresh_minutes * 60)) --slack 5 --compute-bound 30
after_ms="$(psql "$db_url" -XAtc "SELECT COALESCE(MAX(generated_at), 0) FROM signal_snapshots")"
[ "$after_ms" -gt "$before_ms" ] || fail "no snapshot newer than the dead leader's in the store"
ok "the store holds the new leader's snapshot ($(( (after_ms - before_ms) / 1000 )) s after the dead leader's last)"
