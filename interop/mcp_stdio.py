"""`svc mcp` with the official MCP Python SDK (PyPI `mcp`) over stdio, as a desktop host runs it:
the SDK's stdio client starts `svc mcp` as a subprocess with a wallet (SVC_PAYER_KEY) and caps,
lists and calls its tools; a paid tool is paid from the wallet within `--max-per-call`,
`--max-per-session` and `--allow`, a call over a cap is refused with an error result saying which,
and what was spent is on svc mcp's stderr (kept in a file through the SDK's `errlog`). The SDK
connects as it does by default (the newest protocol svc mcp offers). Then the same with
`--compact`, where `call_tool` runs the paid tool, connected with the initialize handshake.

Usage: python mcp_stdio.py SVC_BINARY BASE_URL MINT
(a launchpad coin's mint from the simulator; the payer's key in SVC_PAYER_KEY, or PAYER_KEY)."""

import os
import sys

# interop/mcp.py is named like the SDK's package: import the package, not that file.
here = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.getcwd()) != here]

# The imports below come after that (flake8: E402).
import asyncio
import importlib.metadata
import json
import re
import tempfile
from contextlib import asynccontextmanager
from decimal import Decimal

from mcp import Client, StdioServerParameters, stdio_client

svc, base, mint = sys.argv[1:4]
payer_key = os.environ.get("SVC_PAYER_KEY") or os.environ["PAYER_KEY"]
FREE, PAID, DEAR, NOT_ALLOWED = "public_tokens_stats", "infra_launchpad_coin", "alpha_top_picks", "infra_evm_token_price"
ALLOWED = [PAID, DEAR, FREE]
PER_CALL, PER_SESSION = "0.01", "0.012"
SETTLED_META_KEY = "x402/payment-response"


class Failed(Exception):
    pass


def check(ok, what, detail=""):
    """One line per check; the first one that fails ends the run."""
    if not ok:
        raise Failed(f"{what}: {detail}" if detail else what)
    print(f"ok  {what}")


def short(value, limit=300):
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[:limit] + "..."


class Stderr:
    """svc mcp's stderr, as the SDK's `errlog` file holds it."""

    def __init__(self):
        self.file = tempfile.NamedTemporaryFile("w+", prefix="svc-mcp-", suffix=".log", encoding="utf-8")

    def text(self):
        with open(self.file.name, encoding="utf-8") as f:
            return f.read()

    def lines(self, start=0):
        return self.text().splitlines()[start:]

    def paid(self):
        """(amount, tool, spent) of every "svc mcp: paid ..." line."""
        pattern = re.compile(r"^svc mcp: paid ([0-9.]+) USDC for (\S+); ([0-9.]+) of ([0-9.]+) USDC spent this session$")
        return [(Decimal(m[1]), m[2], Decimal(m[3]), Decimal(m[4])) for m in map(pattern.match, self.lines()) if m]


@asynccontextmanager
async def svc_mcp(stderr, *extra, mode="auto"):
    """The SDK's stdio client on `svc mcp` with the caps, the wallet and nothing else in its
    environment (the SDK passes only HOME, PATH and the like through). The SDK's default
    ("auto") speaks the newest protocol the server offers; "legacy" is the initialize
    handshake (2025-11-25) most deployed hosts still use."""
    args = ["mcp", "--url", base, "--max-per-call", PER_CALL, "--max-per-session", PER_SESSION, "--allow", ",".join(ALLOWED), *extra]
    server = StdioServerParameters(command=svc, args=args, env={"SVC_PAYER_KEY": payer_key})
    async with Client(stdio_client(server, errlog=stderr.file), read_timeout_seconds=120, mode=mode) as client:
        yield client


async def call(client, name, arguments):
    result = await client.call_tool(name, arguments)
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def text_of(result):
    return " ".join(c.get("text", "") for c in result.get("content") or [] if c.get("type") == "text")


def paid_answer(result, what):
    """An answered paid call: the answer, for the mint asked, and a successful settlement in `_meta`."""
    check(result.get("isError") is not True, f"{what}: not an error", short(result))
    answer = result.get("structuredContent")
    check(isinstance(answer, dict) and "x402Version" not in answer and answer.get("mint") == mint, f"{what}: the answer for the mint asked", short(result))
    settled = (result.get("_meta") or {}).get(SETTLED_META_KEY)
    check(isinstance(settled, dict) and settled.get("success") is True, f'{what}: _meta["{SETTLED_META_KEY}"] success', short(result.get("_meta")))


def refused(result, what, says):
    """A refused call: an error result whose text says why, and nothing settled."""
    said = text_of(result)
    check(result.get("isError") is True and says in said, f"{what} is refused naming {says} ({short(said, 140)})", short(result))
    check(SETTLED_META_KEY not in (result.get("_meta") or {}), f"{what}: nothing settled", short(result.get("_meta")))


def paid_lines(stderr, count, what):
    """The stderr says `count` calls were paid so far; returns its "paid" lines."""
    paid = stderr.paid()
    check(len(paid) == count, f"{what} ({count} paid call{'' if count == 1 else 's'} on stderr so far)", short(stderr.text(), 1000))
    return paid


async def full(stderr):
    async with svc_mcp(stderr) as client:
        protocol = client.protocol_version
        # tools/list, every page: the allowed tools and no others.
        tools, cursor = [], None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        names = sorted(t.name for t in tools)
        check(names == sorted(ALLOWED), f"tools/list ({protocol}): exactly the --allow tools {', '.join(sorted(ALLOWED))}", names)

        # A free tool answers, and costs nothing.
        free = await call(client, FREE, {})
        check(free.get("isError") is not True and isinstance(free.get("structuredContent"), dict), f"tools/call {FREE}: an answer in structuredContent", short(free))
        paid_lines(stderr, 0, f"tools/call {FREE}")

        # The paid tool, 0.005 USDC, under both caps: paid from the wallet.
        paid_answer(await call(client, PAID, {"mint": mint}), f"tools/call {PAID}")
        amount, tool, spent, cap = paid_lines(stderr, 1, f"tools/call {PAID}")[0]
        check(
            (amount, tool, spent, cap) == (Decimal("0.005"), PAID, Decimal("0.005"), Decimal(PER_SESSION)),
            f"tools/call {PAID}: stderr says paid 0.005 USDC, 0.005 of {PER_SESSION} spent",
            short(stderr.text(), 1000),
        )

        # A tool over --max-per-call (0.5 USDC): refused, and nothing paid for it.
        before = len(stderr.lines())
        refused(await call(client, DEAR, {}), f"tools/call {DEAR} (0.5 USDC)", "--max-per-call")
        said = stderr.lines(before)
        check(
            any(line.startswith(f"svc mcp refused to pay 0.5 USDC for {DEAR}") and "--max-per-call" in line for line in said),
            f"tools/call {DEAR}: stderr says it refused to pay 0.5 USDC",
            short(said),
        )
        paid_lines(stderr, 1, f"tools/call {DEAR}: nothing paid for it")

        # The paid tool again: paid, 0.01 of 0.012 spent; a third time would pass 0.012: refused.
        paid_answer(await call(client, PAID, {"mint": mint}), f"tools/call {PAID} a second time")
        amount, tool, spent, _ = paid_lines(stderr, 2, f"tools/call {PAID} a second time")[1]
        check((amount, tool, spent) == (Decimal("0.005"), PAID, Decimal("0.01")), f"tools/call {PAID} a second time: stderr says 0.01 of {PER_SESSION} spent", short(stderr.text(), 1000))
        before = len(stderr.lines())
        refused(await call(client, PAID, {"mint": mint}), f"tools/call {PAID} a third time (0.015 > {PER_SESSION})", "--max-per-session")
        said = stderr.lines(before)
        check(
            any(line.startswith(f"svc mcp refused to pay 0.005 USDC for {PAID}") and "--max-per-session" in line for line in said),
            f"tools/call {PAID} a third time: stderr says it refused to pay",
            short(said),
        )
        paid_lines(stderr, 2, f"tools/call {PAID} a third time: nothing paid for it")

        # A tool not in --allow: refused before it reaches svc.
        refused(await call(client, NOT_ALLOWED, {"chain": "base", "token": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}), f"tools/call {NOT_ALLOWED} (not allowed)", "--allow")
        paid_lines(stderr, 2, f"tools/call {NOT_ALLOWED}: nothing paid for it")
    # The session is closed: svc mcp has exited and said what it spent.
    last = stderr.lines()[-1:] or [""]
    check(last[0] == "svc mcp: spent 0.01 USDC in 2 paid calls", "session closed: stderr says 'svc mcp: spent 0.01 USDC in 2 paid calls'", short(stderr.text(), 1000))
    return protocol


async def compact(stderr):
    # With the initialize handshake, as most deployed hosts connect.
    async with svc_mcp(stderr, "--compact", mode="legacy") as client:
        protocol = client.protocol_version
        listed = await client.list_tools()
        names = sorted(t.name for t in listed.tools)
        check(names == ["call_tool", "describe_tool", "search_tools"] and not listed.next_cursor, f"--compact ({protocol}) tools/list: search_tools, describe_tool, call_tool", names)
        paid_answer(await call(client, "call_tool", {"name": PAID, "arguments": {"mint": mint}}), f"--compact call_tool {PAID}")
        amount, tool, spent, _ = paid_lines(stderr, 1, f"--compact call_tool {PAID}")[0]
        check((amount, tool, spent) == (Decimal("0.005"), PAID, Decimal("0.005")), f"--compact call_tool {PAID}: stderr says paid 0.005 USDC for it", short(stderr.text(), 1000))
        refused(await call(client, "call_tool", {"name": DEAR, "arguments": {}}), f"--compact call_tool {DEAR} (0.5 USDC)", "--max-per-call")
        refused(await call(client, "call_tool", {"name": NOT_ALLOWED, "arguments": {}}), f"--compact call_tool {NOT_ALLOWED} (not allowed)", "--allow")
        paid_lines(stderr, 1, "--compact: nothing paid for the refused calls")
    last = stderr.lines()[-1:] or [""]
    check(last[0] == "svc mcp: spent 0.005 USDC in 1 paid calls", "--compact session closed: stderr says 'svc mcp: spent 0.005 USDC in 1 paid calls'", short(stderr.text(), 1000))
    return protocol


async def main():
    stderr = Stderr()
    try:
        protocol = await full(stderr)
    except BaseException:
        print(f"--- svc mcp stderr\n{stderr.text()}", file=sys.stderr)
        raise
    stderr = Stderr()
    try:
        legacy = await compact(stderr)
    except BaseException:
        print(f"--- svc mcp --compact stderr\n{stderr.text()}", file=sys.stderr)
        raise
    print(json.dumps({"client": f"mcp {importlib.metadata.version('mcp')} (PyPI), stdio", "protocols": [protocol, legacy]}))


def failures(error):
    """The Failed among what the SDK's task groups raise, else the first error inside them."""
    if isinstance(error, BaseExceptionGroup):
        found = [failures(inner) for inner in error.exceptions]
        return next((f for f in found if isinstance(f, Failed)), found[0] if found else error)
    return error


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BaseException as error:  # noqa: BLE001 - one clear line, whatever ended the run
        found = failures(error)
        if isinstance(found, Failed):
            print(f"FAIL {found}", file=sys.stderr)
        else:
            print(f"FAIL the MCP client raised {type(found).__name__}: {short(' '.join(str(found).split()), 600)}", file=sys.stderr)
        sys.exit(1)
