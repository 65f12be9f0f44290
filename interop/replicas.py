"""The checks of interop/replicas.sh, against two svc replicas sharing PostgreSQL and Redis.

Payments are made with the official x402 Python client (PyPI `x402`: x402ClientSync with the
exact EVM scheme and an eth-account signer), from the challenge's PAYMENT-REQUIRED header, as
pay.py's client does. Each check speaks from its own client IPs: every 127.x.y.z address is
this machine's loopback, so a socket bound to one reaches svc on 127.0.0.1 and svc counts it
as that IP, with no proxy header in between.

Usage: python replicas.py COMMAND [options]; see --help. Prints one `ok:` line per check
passed; exits 1 on the first check that fails, saying what was seen.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import urlsplit

from eth_account import Account
from eth_utils import keccak
from x402 import x402ClientSync
from x402.http.utils import (
    decode_payment_required_header,
    decode_payment_response_header,
    encode_payment_signature_header,
)
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner


class CheckFailed(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def ok(message: str) -> None:
    print(f"ok: {message}", flush=True)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    at: float

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def brief(self) -> str:
        text = self.body.decode("utf-8", "replace")
        return f"{self.status} {text[:300]}"


class Replica:
    """One replica's base URL, with a label for messages."""

    def __init__(self, label: str, url: str):
        parts = urlsplit(url)
        self.label, self.host, self.port = label, parts.hostname, parts.port

    def connect(self, source_ip: str, timeout: float = 60) -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout, source_address=(source_ip, 0))
        conn.connect()
        return conn

    def get(self, path: str, source_ip: str, headers: dict[str, str] | None = None) -> Answer:
        conn = self.connect(source_ip)
        try:
            return send(conn, path, headers or {})
        finally:
            conn.close()


def send(conn: http.client.HTTPConnection, path: str, headers: dict[str, str]) -> Answer:
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    body = response.read()
    return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, body, time.time())


def replicas(arg: str) -> list[Replica]:
    urls = arg.split(",")
    check(len(urls) == 2, f"two replica URLs expected, got {arg}")
    return [Replica("A", urls[0]), Replica("B", urls[1])]


def payer_account(i: int):
    """Payer `i`: the interop's payer for 0, else a key derived from the index (fresh
    wallets, since the database is new on every run)."""
    if i == 0:
        return Account.from_key(os.environ["PAYER_KEY"])
    return Account.from_key(keccak(text=f"svc interop replicas payer {i}"))


class Payer:
    def __init__(self, account):
        self.account = account
        self.client = x402ClientSync()
        register_exact_evm_client(self.client, EthAccountSigner(account))

    def sign(self, challenge: Answer) -> tuple[str, dict]:
        """The PAYMENT-SIGNATURE header for `challenge`, and the authorization it signs."""
        header = challenge.headers.get("payment-required")
        check(challenge.status == 402 and header is not None, f"expected a 402 challenge, got {challenge.brief()}")
        required = decode_payment_required_header(header)
        payload = self.client.create_payment_payload(required)
        check(payload.accepted.network.startswith("eip155:"), f"the client chose {payload.accepted.network}")
        return encode_payment_signature_header(payload), dict(payload.payload["authorization"])


def psql(db: str, sql: str) -> list[list[str]]:
    out = subprocess.run(["psql", db, "-XAt", "-F", "\t", "-c", sql], check=True, capture_output=True, text=True)
    return [line.split("\t") for line in out.stdout.splitlines() if line]


def stored_payments(db: str, payers: list[str]) -> list[list[str]]:
    wanted = ",".join(f"'{p.lower()}'" for p in payers)
    return psql(
        db,
        f"SELECT lower(payer), lower(nonce), status, route_id FROM payments WHERE lower(payer) IN ({wanted})",
    )


def refusal_reason(answer: Answer) -> str:
    """The `error` of a 402 refusal (x402's PaymentRequired JSON), '' if it is none."""
    body = answer.json()
    if answer.status != 402 or not isinstance(body, dict):
        return ""
    return str(body.get("error") or "")


# --- 1. one payment, both replicas, at once -------------------------------------------------

REFUSALS = ("payment_in_progress", "payment_already_used")


def cmd_double_spend(args) -> None:
    a, b = replicas(args.replicas)
    check(1 <= args.count <= 100, "--count is 1 to 100 (each payment speaks from its own IPs)")
    served_by = {"A": 0, "B": 0}
    refusals: dict[str, int] = {}
    overlaps = 0
    expected = []
    headers = []
    for i in range(args.count):
        ip = f"127.0.1.{i + 1}"
        payer = Payer(payer_account(i))
        # The challenge comes from either replica; the one payment then goes to both.
        header, auth = payer.sign((a if i % 2 == 0 else b).get(args.route, ip))
        expected.append((auth["from"].lower(), auth["nonce"].lower()))
        headers.append(header)
        conns = [a.connect(ip), b.connect(ip)]  # connected before the start line
        start = threading.Barrier(2)
        answers: list[Answer | Exception | None] = [None, None]
        began = [0.0, 0.0]

        def go(k: int) -> None:
            try:
                start.wait()
                began[k] = time.time()
                answers[k] = send(conns[k], args.route, {"PAYMENT-SIGNATURE": header})
            except Exception as e:  # noqa: BLE001 - reported below
                answers[k] = e
            finally:
                conns[k].close()

        threads = [threading.Thread(target=go, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for k, ans in enumerate(answers):
            check(isinstance(ans, Answer), f"payment {i}: replica {'AB'[k]} did not answer: {ans!r}")
        statuses = [ans.status for ans in answers]
        check(
            statuses.count(200) == 1,
            f"payment {i} ({auth['from']} nonce {auth['nonce']}): expected exactly one 200 across the replicas, "
            f"got A: {answers[0].brief()} | B: {answers[1].brief()}",
        )
        won = statuses.index(200)
        winner, loser = answers[won], answers[1 - won]
        receipt = winner.headers.get("payment-response")
        check(receipt is not None, f"payment {i}: the 200 from replica {'AB'[won]} has no PAYMENT-RESPONSE")
        settled = decode_payment_response_header(receipt)
        check(
            settled.success and (settled.payer or "").lower() == auth["from"].lower(),
            f"payment {i}: PAYMENT-RESPONSE {settled}",
        )
        check((winner.json() or {}).get("mint"), f"payment {i}: the 200 is not the coin: {winner.brief()}")
        reason = refusal_reason(loser)
        check(
            reason.startswith(REFUSALS),
            f"payment {i}: the other replica ({'AB'[1 - won]}) must refuse with 402 and an error starting with one of "
            f"{REFUSALS}; got {loser.brief()}",
        )
        check(
            "payment-required" in loser.headers and "payment-response" not in loser.headers,
            f"payment {i}: the refusal should carry a fresh challenge and no settlement; headers {loser.headers}",
        )
        served_by["AB"[won]] += 1
        code = reason.split(":", 1)[0]
        refusals[code] = refusals.get(code, 0) + 1
        # Both requests were in flight together when the loser's began before the winner's answer.
        if max(began) < winner.at:
            overlaps += 1
    ok(
        f"{args.count} payments, each sent to both replicas at once: exactly one 200 each "
        f"(served by A {served_by['A']}, B {served_by['B']}); the other refused with 402 "
        f"({', '.join(f'{k} {v}' for k, v in sorted(refusals.items()))}); {overlaps} of {args.count} "
        f"pairs had both requests in flight together"
    )

    # Sent again later, to either replica, each payment is spent.
    for i, header in enumerate(headers):  # from IPs of their own: refusals count against an IP
        for replica in (a, b):
            again = replica.get(args.route, f"127.0.1.{101 + i}", {"PAYMENT-SIGNATURE": header})
            check(
                refusal_reason(again).startswith("payment_already_used"),
                f"payment {i} sent again to replica {replica.label}: expected 402 payment_already_used, "
                f"got {again.brief()}",
            )
    ok(f"each of the {len(headers)} payments sent again to each replica: 402 payment_already_used")

    rows = stored_payments(args.db, sorted({p for p, _ in expected}))
    keys = [(payer, nonce) for payer, nonce, _, _ in rows]
    check(
        len(rows) == len(expected) and sorted(keys) == sorted(expected),
        f"the store should hold exactly the {len(expected)} payments, one row each; it holds {len(rows)}: {rows}",
    )
    statuses = {status for _, _, status, _ in rows}
    check(statuses == {"unsettled"}, f"every payment should be recorded unsettled (verify-only); statuses {statuses}")
    ok(f"the store records each payment once: {len(rows)} rows for {len(expected)} payments, all 'unsettled'")


# --- 2. limits shared by the replicas ------------------------------------------------------


def cmd_previews(args) -> None:
    a, b = replicas(args.replicas)
    ip = args.ip
    path = args.route + ("&" if "?" in args.route else "?") + "preview=true"
    seen = []
    for i in range(args.quota + 1):
        replica = (a, b)[i % 2]
        ans = replica.get(path, ip)
        body = ans.json() or {}
        seen.append(f"{replica.label}:{ans.status}")
        if i < args.quota:
            check(ans.status == 200, f"preview {i + 1} of {args.quota} on replica {replica.label}: {ans.brief()}")
            remaining = (body.get("preview") or {}).get("remaining")
            check(
                remaining == args.quota - 1 - i,
                f"preview {i + 1} on replica {replica.label}: preview.remaining {remaining}, expected "
                f"{args.quota - 1 - i} (the count is not shared?)",
            )
        else:
            check(
                ans.status == 429 and body.get("code") == "preview_quota_exceeded",
                f"preview {i + 1} (past the quota of {args.quota}) on replica {replica.label}: expected 429 "
                f"preview_quota_exceeded, got {ans.brief()}",
            )
            check("retry-after" in ans.headers, f"the 429 has no Retry-After: {ans.headers}")
    ok(
        f"previews from one IP ({ip}) alternating between the replicas: {' '.join(seen)}; "
        f"remaining counted down {args.quota - 1}..0 across both, then 429 preview_quota_exceeded"
    )


def cmd_rate(args) -> None:
    a, b = replicas(args.replicas)
    limit = args.limit

    # Unpaid calls count against the IP.
    ip = "127.0.2.1"
    seen = []
    for i in range(limit + 1):
        replica = (a, b)[i % 2]
        ans = replica.get(args.route, ip)
        body = ans.json() or {}
        seen.append(f"{replica.label}:{ans.status}")
        if i < limit:
            check(ans.status == 402, f"unpaid call {i + 1} of {limit} on replica {replica.label}: {ans.brief()}")
            remaining = ans.headers.get("ratelimit-remaining")
            check(
                remaining == str(limit - 1 - i),
                f"unpaid call {i + 1} on replica {replica.label}: RateLimit-Remaining {remaining}, "
                f"expected {limit - 1 - i}",
            )
        else:
            check(
                ans.status == 429 and body.get("code") == "rate_limited" and "retry-after" in ans.headers,
                f"unpaid call {i + 1} (past {limit}/min) on replica {replica.label}: expected 429 rate_limited "
                f"with Retry-After, got {ans.brief()}",
            )
    ok(f"rate limit {limit}/min for one IP ({ip}), unpaid calls alternating between the replicas: {' '.join(seen)}")

    # Paid calls count against the paying wallet, whatever IP they come from: each from its
    # own IP here, so only the wallet's shared count can refuse the last one.
    payer = Payer(payer_account(args.wallet_index))
    challenge = a.get(args.route, "127.0.2.2")
    signed = [payer.sign(challenge) for _ in range(limit + 1)]
    seen = []
    for i, (header, _) in enumerate(signed):
        replica = (a, b)[i % 2]
        ans = replica.get(args.route, f"127.0.3.{i + 1}", {"PAYMENT-SIGNATURE": header})
        body = ans.json() or {}
        seen.append(f"{replica.label}:{ans.status}")
        if i < limit:
            check(ans.status == 200, f"paid call {i + 1} of {limit} on replica {replica.label}: {ans.brief()}")
            remaining = ans.headers.get("ratelimit-remaining")
            check(
                remaining == str(limit - 1 - i),
                f"paid call {i + 1} on replica {replica.label}: RateLimit-Remaining {remaining}, "
                f"expected {limit - 1 - i}",
            )
        else:
            check(
                ans.status == 429 and body.get("code") == "rate_limited",
                f"paid call {i + 1} (past {limit}/min for wallet {payer.account.address}) on replica "
                f"{replica.label}: expected 429 rate_limited, got {ans.brief()}",
            )
    rows = stored_payments(args.db, [payer.account.address])
    check(
        len(rows) == limit,
        f"the store should hold the {limit} payments served and not the one refused for rate; it holds {len(rows)}",
    )
    ok(
        f"rate limit {limit}/min for one paying wallet, paid calls from {limit + 1} different IPs alternating "
        f"between the replicas: {' '.join(seen)}; {len(rows)} payments stored"
    )


# --- 3. the signal engine's leader -----------------------------------------------------------

LEASE_LINE = "this replica runs the signal engine"
SNAPSHOT_LINE = "signal snapshot computed"
LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)Z")


def log_times(path: str, needle: str) -> list[float]:
    """Unix times of the log lines of `path` containing `needle`."""
    times = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if needle in line:
                line = re.sub(r"\x1b\[[0-9;]*m", "", line)
                m = LOG_TIME.match(line)
                if m:
                    times.append(parse_time(m.group(1) + "Z"))
    return times


def parse_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def top_picks(replica: Replica, n: int) -> dict:
    ans = replica.get("/api/x402/alpha/top-picks?preview=true", f"127.0.5.{n}")
    check(ans.status == 200, f"Top Picks preview on replica {replica.label}: {ans.brief()}")
    return ans.json()


def cmd_takeover(args) -> None:
    survivor = Replica(args.label, args.survivor)
    interval = args.interval
    killed = args.killed_at
    args.before = args.before_ms / 1000
    check(
        not any(t < killed for t in log_times(args.log, LEASE_LINE)),
        f"replica {args.label} held the engine lease before the leader was killed",
    )
    # The follower retries the lease once per refresh interval (plus the time of a snapshot
    # reload), so it must hold it within one interval of the kill.
    lease_deadline = killed + interval + args.slack
    took = None
    while time.time() < lease_deadline + 1:
        after = [t for t in log_times(args.log, LEASE_LINE) if t >= killed]
        if after:
            took = after[0]
            break
        time.sleep(0.5)
    check(
        took is not None and took <= lease_deadline,
        f"replica {args.label} did not log '{LEASE_LINE}' within {interval + args.slack:.0f} s of the kill "
        f"(refresh interval {interval:.0f} s); it logged it at "
        f"{'never' if took is None else f'+{took - killed:.1f} s'}",
    )
    ok(f"replica {args.label} took the engine lease {took - killed:.1f} s after the leader's kill -9 "
       f"(bound: one refresh interval, {interval:.0f} s, + {args.slack:.0f} s)")

    # Its first snapshot follows at once; the signal routes then answer from it.
    deadline = took + args.compute_bound
    computed = None
    while time.time() < deadline + 1:
        after = [t for t in log_times(args.log, SNAPSHOT_LINE) if t >= took]
        if after:
            computed = after[0]
            break
        time.sleep(0.5)
    check(
        computed is not None and computed <= deadline,
        f"replica {args.label} computed no snapshot within {args.compute_bound:.0f} s of taking the lease",
    )
    body = top_picks(survivor, 1)
    generated = parse_time(body["generated_at"])
    check(
        generated > args.before and generated >= killed,
        f"replica {args.label}'s Top Picks still come from a snapshot of {body['generated_at']} (the dead "
        f"leader's last was {iso(args.before)}, killed at {iso(killed)})",
    )
    next_refresh = parse_time(body["next_refresh_at"])
    check(
        abs(next_refresh - generated - interval) < 1,
        f"next_refresh_at {body['next_refresh_at']} is not one interval after generated_at {body['generated_at']}",
    )
    ok(
        f"replica {args.label} computed a snapshot {computed - killed:.1f} s after the kill; its Top Picks preview "
        f"now says generated_at {body['generated_at']} (the dead leader's last: {iso(args.before)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("double-spend", help="each payment sent to both replicas at once is served once")
    p.add_argument("--replicas", required=True, help="URL_A,URL_B")
    p.add_argument("--route", required=True)
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--db", required=True, help="the replicas' PostgreSQL URL")
    p.set_defaults(run=cmd_double_spend)

    p = sub.add_parser("previews", help="the preview quota holds across the replicas")
    p.add_argument("--replicas", required=True)
    p.add_argument("--route", required=True)
    p.add_argument("--quota", type=int, default=5)
    p.add_argument("--ip", default="127.0.4.1")
    p.set_defaults(run=cmd_previews)

    p = sub.add_parser("rate", help="the per-minute limit holds across the replicas, per IP and per wallet")
    p.add_argument("--replicas", required=True)
    p.add_argument("--route", required=True)
    p.add_argument("--limit", type=int, required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--wallet-index", type=int, default=1000)
    p.set_defaults(run=cmd_rate)

    p = sub.add_parser("takeover", help="the surviving replica takes the engine over from a killed leader")
    p.add_argument("--survivor", required=True)
    p.add_argument("--label", default="B")
    p.add_argument("--log", required=True)
    p.add_argument("--killed-at", type=float, required=True)
    p.add_argument("--before-ms", type=int, required=True, help="the newest stored snapshot before the kill, unix ms")
    p.add_argument("--interval", type=float, required=True, help="refresh interval, seconds")
    p.add_argument("--slack", type=float, default=5)
    p.add_argument("--compute-bound", type=float, default=30)
    p.set_defaults(run=cmd_takeover)

    args = parser.parse_args()
    try:
        args.run(args)
    except CheckFailed as e:
        print(f"FAIL: {e}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
