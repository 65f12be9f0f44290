#!/usr/bin/env python3
"""Agent sandbox benchmark: the real agent gateway (a prepared snapshot) in local sandboxes, in
one run:

  (a) cold starts: N starts per template with no warm pool, time from the start request to
      `running` and from `running` to the first answer of a chat through the gateway;
  (b) pooled starts: the same with one warm gateway per template (each start waits until its
      template's warm gateway is back), and the memory a warm gateway holds;
  (c) waking: the same chat message answered awake and when it has to wake the gateway (an
      account with a chat bot on the simulated platform, `idle_sleep_secs` short).

Usage: SNAPSHOT=<dir prepared by `svc agentbox prepare`> bench/agentbox.py [starts per template,
default 10]. Builds the release svc unless SVC names a binary. Needs bubblewrap and curl, and
reads each gateway's operator token from its process environment (the sandboxes run as the
caller's user).
"""
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATES = ["trader", "shitcoin-trader", "degen", "analyst"]
QUESTION = "What are the top picks right now?"
BOT = "7001234567:AAHsimulatedTokenOfTheSandboxBench_x"


def svc_binary():
    if os.environ.get("SVC"):
        return os.environ["SVC"]
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "svc-server"], cwd=ROOT, check=True)
    return os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "svc")


class Svc:
    """`svc serve` on a fresh data directory with `settings` in its [agentbox] table."""

    def __init__(self, binary, snapshot, settings):
        self.binary, self.dir = binary, tempfile.mkdtemp(prefix="svc-agentbox-bench-")
        self.data = os.path.join(self.dir, "data")
        config = os.path.join(self.dir, "svc.toml")
        with open(config, "w") as out:
            out.write(f'[agentbox]\nsnapshot = "{snapshot}"\nhealth_timeout_secs = 240\n{settings}\n')
        env = dict(os.environ, SVC_DATA_DIR=self.data, RUST_LOG="info,sqlx=warn", NO_COLOR="1")
        self.proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--config", config],
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.base = self.simulator = None
        for line in self.proc.stdout:
            self.simulator = self.simulator or _address(line, "simulator=http://")
            self.base = _address(line, "svc listening on http://")
            if self.base:
                break
        threading_drain(self.proc.stdout)

    def cli(self, *args):
        env = dict(os.environ, SVC_DATA_DIR=self.data)
        return subprocess.run([self.binary, *args], env=env, check=True, capture_output=True, text=True).stdout.strip()

    def account(self, name):
        account = self.cli("accounts", "create", "--name", name)
        self.cli("credits", "grant", account, "100")
        return self.cli("keys", "create", account, "--scopes", "gateway")

    def call(self, method, path, key, body=None):
        request = urllib.request.Request(self.base + path, method=method, headers={"X-API-Key": key},
                                         data=None if body is None else json.dumps(body).encode())
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as err:
            return json.loads(err.read() or b"null")

    def until(self, key, done, limit=300):
        started = time.monotonic()
        while time.monotonic() - started < limit:
            view = self.call("GET", "/api/agentbox/gateway", key)
            if done(view):
                return view
            if view.get("state") == "failed":
                raise SystemExit(f"bench: the gateway failed: {view}")
            time.sleep(0.05)
        raise SystemExit(f"bench: gave up waiting: {view}")

    def warm(self, key, template):
        view = self.call("GET", "/api/agentbox/templates", key)
        return next(t["warm"] for t in view["templates"] if t["name"] == template)

    def close(self):
        # Stopped, svc ends its warm gateways; running ones outlive it by design: end this run's
        # (thawed first: a frozen process cannot die).
        self.proc.terminate()
        self.proc.wait()
        for state in glob.glob("/sys/fs/cgroup/freezer/svc-agentbox/*/freezer.state"):
            try:
                with open(state, "w") as out:
                    out.write("THAWED")
            except OSError:
                pass
        for pid in pids_with(f"{self.dir}"):
            subprocess.run(["kill", "-9", str(pid)], check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


def threading_drain(stream):
    import threading
    threading.Thread(target=lambda: [None for _ in stream], daemon=True).start()


def _address(line, after):
    if after not in line:
        return None
    rest = line.split(after, 1)[1]
    return "http://" + re.match(r"[0-9.:]+", rest).group(0)


def pids_with(needle, file="cmdline"):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/{file}", "rb") as source:
                if needle.encode() in source.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def ask(svc, gateway, question):
    """A chat through the gateway's own endpoint; its answer."""
    token = None
    for pid in pids_with(f"SVC_GATEWAY_ID={gateway}", "environ"):
        with open(f"/proc/{pid}/environ", "rb") as source:
            for var in source.read().split(b"\0"):
                if var.startswith(b"SVC_GATEWAY_TOKEN="):
                    token = var.split(b"=", 1)[1].decode()
    socket = os.path.join(svc.data, "agentbox/sandboxes", gateway, "run/gateway.sock")
    body = json.dumps({"model": "openclaw", "messages": [{"role": "user", "content": question}]})
    out = subprocess.run(["curl", "-s", "--max-time", "180", "--unix-socket", socket, "-H",
                          f"Authorization: Bearer {token}", "-H", "Content-Type: application/json", "-d", body,
                          "http://sandbox/v1/chat/completions"], capture_output=True, check=True).stdout
    answer = json.loads(out)
    if "choices" not in answer:
        raise SystemExit(f"bench: the gateway did not answer: {answer}")
    return answer["choices"][0]["message"]["content"]


def starts(svc, n, pooled):
    """Per template: seconds to running and to the first chat answer, over n starts."""
    key = svc.account("bench")
    results = {}
    for template in TEMPLATES:
        to_running, to_answer = [], []
        for _ in range(n):
            if pooled:
                waited = time.monotonic()
                while svc.warm(key, template) < 1:
                    if time.monotonic() - waited > 300:
                        raise SystemExit(f"bench: no warm {template} after 300 s")
                    time.sleep(0.2)
            asked = time.monotonic()
            gateway = svc.call("POST", "/api/agentbox/gateway/start", key, {"template": template})["id"]
            svc.until(key, lambda v: v.get("state") == "running")
            running = time.monotonic()
            answer = ask(svc, gateway, QUESTION)
            if "The tool answered" not in answer:
                raise SystemExit(f"bench: unexpected answer: {answer[:300]}")
            to_running.append(running - asked)
            to_answer.append(time.monotonic() - running)
            svc.call("POST", "/api/agentbox/gateway/stop", key)
            svc.until(key, lambda v: v.get("state") == "stopped")
        results[template] = (to_running, to_answer)
    return results


def warm_memory_mib(svc):
    """Memory of each warm gateway now, MiB (cgroup v1 or v2)."""
    sizes = []
    for sandbox in os.listdir(os.path.join(svc.data, "agentbox/sandboxes")):
        for path in (f"/sys/fs/cgroup/memory/svc-agentbox/{sandbox}/memory.usage_in_bytes",
                     f"/sys/fs/cgroup/svc-agentbox/{sandbox}/memory.current"):
            if os.path.exists(path):
                with open(path) as source:
                    sizes.append(int(source.read()) >> 20)
    return sizes


def chat(svc, text):
    """A user's message to the bot on the simulated platform; seconds to the agent's answer."""
    def sent():
        with urllib.request.urlopen(f"{svc.simulator}/telegram/simulate/{BOT}/sent") as answer:
            return [m for m in json.load(answer) if str(m["chat"]["id"]) == "555"]
    before = len(sent())
    request = urllib.request.Request(f"{svc.simulator}/telegram/simulate/{BOT}/message", method="POST",
                                     data=json.dumps({"chat_id": 555, "text": text}).encode(),
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request).read()
    asked = time.monotonic()
    while len(sent()) <= before:
        if time.monotonic() - asked > 120:
            raise SystemExit("bench: no chat answer in 120 s")
        time.sleep(0.05)
    return time.monotonic() - asked


def waking(svc, rounds):
    key = svc.account("bench-chat")
    svc.call("PUT", "/api/agentbox/telegram/config", key,
             {"bot_token": BOT, "dm_policy": "open", "group_policy": "allowlist"})
    svc.call("POST", "/api/agentbox/gateway/start", key, {"template": "analyst"})
    svc.until(key, lambda v: v.get("state") == "running")
    awake, woken = [], []
    for _ in range(rounds):
        awake.append(chat(svc, "Any whale alerts?"))
        svc.until(key, lambda v: v.get("asleep") is True)
        woken.append(chat(svc, "Any whale alerts?"))
    return awake, woken


def pct(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    snapshot = os.path.abspath(os.environ.get("SNAPSHOT", os.path.join(ROOT, "data/agentbox/snapshot")))
    if not os.path.exists(os.path.join(snapshot, "snapshot.json")):
        raise SystemExit(f"bench: no snapshot in {snapshot}; run `svc agentbox prepare --dir {snapshot}`")
    binary = svc_binary()
    row = "{:<34} {:>9} {:>9} {:>12} {:>12}".format
    print(row("sandboxes, starts per template: " + str(n), "run p50", "run p95", "answer p50", "answer p95"))
    for label, settings, pooled in [("cold", "pool_size = 0\nidle_sleep_secs = 0", False),
                                    ("pooled", "pool_size = 1\nidle_sleep_secs = 0", True)]:
        svc = Svc(binary, snapshot, settings)
        try:
            results = starts(svc, n, pooled)
            memory = warm_memory_mib(svc) if pooled else []
        finally:
            svc.close()
        every_run, every_answer = [], []
        for template, (run, answer) in results.items():
            every_run += run
            every_answer += answer
            print(row(f"{label} {template}", f"{pct(run, .5):.2f} s", f"{pct(run, .95):.2f} s",
                      f"{pct(answer, .5):.2f} s", f"{pct(answer, .95):.2f} s"))
        print(row(f"{label} all", f"{pct(every_run, .5):.2f} s", f"{pct(every_run, .95):.2f} s",
                  f"{pct(every_answer, .5):.2f} s", f"{pct(every_answer, .95):.2f} s"))
        if memory:
            print(f"warm gateway memory: {statistics.mean(memory):.0f} MiB each ({len(memory)} warm)")
    svc = Svc(binary, snapshot, "pool_size = 0\nidle_sleep_secs = 5")
    try:
        awake, woken = waking(svc, max(2, n // 2))
    finally:
        svc.close()
    print(f"chat answer awake p50 {statistics.median(awake):.2f} s, woken p50 {statistics.median(woken):.2f} s, "
          f"wake adds {statistics.median(woken) - statistics.median(awake):.2f} s")


main()
