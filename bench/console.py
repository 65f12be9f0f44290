#!/usr/bin/env python3
"""Console benchmark: what each page weighs on the wire (gzip, as browsers take it) and how long
svc takes to answer it on loopback, for an account with 10,000 paid calls in its history (9,000
billed to its credits, 1,000 paid by its wallet over x402), signed in with a key.

Usage: bench/console.py [requests per page, default 200]. Builds the release svc unless SVC
names a binary. Prints a table: page, bytes (gzip), bytes (plain), p50 and p95 ms. The times
are the client's (a keep-alive connection on loopback), so they include the loopback round
trip: an upper bound of svc's own.
"""
import http.client
import os
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WALLET = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
CALLS, PAID = 9_000, 1_000


def svc_binary():
    if os.environ.get("SVC"):
        return os.environ["SVC"]
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "svc-server", "--bin", "svc"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "svc")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    svc = svc_binary()
    data = tempfile.mkdtemp(prefix="svc-console-bench-")
    env = {**os.environ, "SVC_DATA_DIR": data}
    cli = lambda *args: subprocess.run([svc, *args], env=env, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    account = cli("accounts", "create", "--name", "bench", "--wallet", WALLET)
    cli("credits", "grant", account, "1000")
    key = cli("keys", "create", account, "--scopes", "data,gateway,agents")

    # 10,000 calls of history, written straight into svc's database.
    db = sqlite3.connect(os.path.join(data, "svc.db"))
    now = int(time.time() * 1000)
    db.executemany(
        "INSERT INTO credit_ledger (id, account_id, delta, kind, route_id, reference, created_at) VALUES (?, ?, ?, 'call', ?, NULL, ?)",
        [(f"cl_bench{n:06d}", account, -1000, "alpha.top_picks", now - n * 60_000) for n in range(CALLS)],
    )
    db.executemany(
        "INSERT INTO payments (id, route_id, network, payer, nonce, amount, asset, pay_to, status, tx_hash, error, created_at, updated_at) "
        "VALUES (?, 'alpha.top_picks', 'eip155:8453', ?, ?, 10000, '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913', "
        "'0x209693bc6afc0c5328ba36faf03c514ef312287c', 'settled', ?, NULL, ?, ?)",
        [(f"pay_bench{n:06d}", WALLET, f"0x{n:064x}", f"0x{n:064x}", now - n * 90_000, now - n * 90_000 + 40) for n in range(PAID)],
    )
    db.commit()
    db.close()

    port = free_port()
    server = subprocess.Popen([svc, "serve", "--listen", f"127.0.0.1:{port}"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        for _ in range(100):
            try:
                conn.request("GET", "/healthz")
                conn.getresponse().read()
                break
            except OSError:
                time.sleep(0.1)
                conn = http.client.HTTPConnection("127.0.0.1", port)
        cookies = {}

        def request(method, path, body=None, gzip=True):
            headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())}
            if gzip:
                headers["Accept-Encoding"] = "gzip"
            if body is not None:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                headers["Origin"] = f"http://127.0.0.1:{port}"
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            payload = response.read()
            for value in response.headers.get_all("Set-Cookie") or []:
                name, _, rest = value.partition("=")
                cookies[name] = rest.split(";")[0]
            return response.status, payload

        _, page = request("GET", "/console/sign-in", gzip=False)
        token = re.search(rb'name="token" value="([0-9a-f]+)"', page).group(1).decode()
        status, _ = request("POST", "/console/sign-in", urllib.parse.urlencode({"token": token, "key": key}))
        assert status == 303, status
        pages = ["/console", "/console/calls", "/console/calls?rail=x402", "/console/calls/pay_bench000500",
                 "/console/credits", "/console/sandbox", "/console/agents", "/console/keys",
                 "/console/assets/console.css", "/console/assets/console.js"]
        print(f"{'page':<34} {'gzip B':>8} {'plain B':>8} {'p50 ms':>7} {'p95 ms':>7}")
        for path in pages:
            status, plain = request("GET", path, gzip=False)
            assert status == 200, (path, status)
            _, zipped = request("GET", path)
            times = []
            for _ in range(rounds):
                started = time.perf_counter()
                request("GET", path)
                times.append((time.perf_counter() - started) * 1000)
            times.sort()
            p95 = times[int(len(times) * 0.95) - 1]
            print(f"{path:<34} {len(zipped):>8} {len(plain):>8} {statistics.median(times):>7.2f} {p95:>7.2f}")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
