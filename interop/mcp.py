"""The MCP server with the official clients: the MCP Python SDK (PyPI `mcp`, streamable HTTP)
lists and calls svc's tools; a paid tool is paid by the official x402 client (PyPI `x402`): its
MCP binding (`x402.mcp`) reads the PaymentRequired tool result and retries with the payment in
`_meta["x402/payment"]`, its exact-EVM client signs; an API key with credits pays instead.

Usage: python mcp.py BASE_URL API_KEY_WITH_CREDITS API_KEY_WITHOUT_CREDITS MINT [OTHER_MINT]
(two launchpad coins' mints from the simulator; the payer's key in PAYER_KEY)."""

import os
import sys

# This file is named like the SDK's package: import the package, not this file.
here = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.getcwd()) != here]

# The imports below come after that (flake8: E402).
import asyncio
import importlib.metadata
import json
from contextlib import asynccontextmanager
from datetime import timedelta
from types import SimpleNamespace

import httpx2
from eth_account import Account
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from x402 import x402Client
from x402.http.utils import encode_payment_signature_header
from x402.mcp import MCP_PAYMENT_META_KEY, MCP_PAYMENT_RESPONSE_META_KEY, x402MCPClient
from x402.mcp.utils import attach_payment_to_meta, convert_mcp_result, extract_payment_required_from_result
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner

base, full_key, empty_key, mint = sys.argv[1:5]
other_mint = sys.argv[5] if len(sys.argv) > 5 else mint[::-1]
FREE, PAID = "public_tokens_stats", "infra_launchpad_coin"
# Another paid tool, for a payment made for the launchpad coin: yield pools (every argument optional).
OTHER_PAID, OTHER_ARGS = "infra_defi_discover", {}
ERROR_META_KEY = "x402/error"


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


@asynccontextmanager
async def connect(path, bearer=None, mode="auto"):
    """An MCP SDK client on BASE+path over streamable HTTP, with a bearer token if given. The
    SDK's default ("auto") speaks the newest protocol the server offers; "legacy" is the
    initialize handshake (2025-11-25) most deployed clients still use."""
    headers = {"authorization": f"Bearer {bearer}"} if bearer else None
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(base + path, http_client=http), mode=mode) as client:
            yield client


class Tools:
    """The MCP SDK client as `x402.mcp` calls it, `call_tool({"name", "arguments", "_meta"})`,
    answering in the wire shape it reads (`isError`, `structuredContent`, `_meta`, content items
    as objects): x402 2.25.0's MCP binding reads camelCase attributes, which mcp 2 results
    (snake_case pydantic models) do not have. Nothing else is changed on the way."""

    def __init__(self, client):
        self.client = client
        self.last = None

    async def call_tool(self, params, read_timeout_seconds=None, **_):
        if isinstance(read_timeout_seconds, timedelta):
            read_timeout_seconds = read_timeout_seconds.total_seconds()
        result = await self.client.call_tool(
            params["name"], params.get("arguments"), read_timeout_seconds=read_timeout_seconds, meta=params.get("_meta")
        )
        self.last = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return SimpleNamespace(**self.last)

    async def call(self, name, arguments, meta=None):
        params = {"name": name, "arguments": arguments}
        if meta is not None:
            params["_meta"] = meta
        await self.call_tool(params)
        return self.last


def payment_required_of(result, what):
    """Checks a payment-required tool result and returns its PaymentRequired, as the official
    binding reads it."""
    check(result.get("isError") is True, f"{what}: isError", short(result))
    required = result.get("structuredContent")
    check(
        isinstance(required, dict) and required.get("x402Version") == 2 and isinstance(required.get("accepts"), list) and required["accepts"],
        f"{what}: structuredContent is an x402 v2 PaymentRequired",
        short(result),
    )
    content = result.get("content") or []
    text = content[0].get("text") if content and content[0].get("type") == "text" else None
    try:
        same = json.loads(text) == required
    except (TypeError, ValueError):
        same = False
    check(same, f"{what}: content[0].text is the same JSON", short(text))
    check((result.get("_meta") or {}).get(ERROR_META_KEY) == required, f'{what}: _meta["x402/error"] is the same object', short(result.get("_meta")))
    parsed = extract_payment_required_from_result(convert_mcp_result(SimpleNamespace(**result)))
    check(parsed is not None, f"{what}: the official x402 MCP binding reads it", short(required))
    return parsed


def paid_answer(result, what):
    """Checks an answered paid call: the answer and a successful settlement in `_meta`."""
    check(result.get("isError") is not True, f"{what}: not an error", short(result))
    check(isinstance(result.get("structuredContent"), dict) and "x402Version" not in result["structuredContent"], f"{what}: structuredContent is the answer", short(result))
    settled = (result.get("_meta") or {}).get(MCP_PAYMENT_RESPONSE_META_KEY)
    check(isinstance(settled, dict) and settled.get("success") is True, f'{what}: _meta["x402/payment-response"] success', short(result.get("_meta")))


def refused(result, what):
    """A payment that is not for this call: an error result, so no answer, and no settlement."""
    settled = (result.get("_meta") or {}).get(MCP_PAYMENT_RESPONSE_META_KEY) or {}
    said = (result.get("content") or [{}])[0].get("text", "")
    check(result.get("isError") is True and settled.get("success") is not True, f"{what} is refused ({short(said, 120)})", short(result))


async def main():
    signer = EthAccountSigner(Account.from_key(os.environ["PAYER_KEY"]))
    payer = register_exact_evm_client(x402Client(), signer)

    async with connect("/mcp") as client:
        # tools/list, every page.
        tools, cursor = [], None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        by_name = {tool.name: tool for tool in tools}
        protocol = client.protocol_version
        check(len(tools) > 60, f"tools/list ({protocol}): {len(tools)} tools", [t.name for t in tools])
        no_schema = [t.name for t in tools if not isinstance(t.input_schema, dict) or t.input_schema.get("type") != "object"]
        check(not no_schema, "tools/list: every tool has an object inputSchema", no_schema)
        check(FREE in by_name and PAID in by_name and OTHER_PAID in by_name, f"tools/list: {FREE}, {PAID} and {OTHER_PAID} are listed")
        check("mint" in by_name[PAID].input_schema.get("properties", {}), f"tools/list: {PAID} takes a mint", short(by_name[PAID].input_schema))

        tools_api = Tools(client)
        # A free tool answers.
        free = await tools_api.call(FREE, {})
        check(free.get("isError") is not True and isinstance(free.get("structuredContent"), dict), f"tools/call {FREE}: an answer in structuredContent", short(free))

        # A paid tool, unpaid: the PaymentRequired result, three ways.
        payment_required_of(await tools_api.call(PAID, {"mint": mint}), f"tools/call {PAID} unpaid")

        # Paid by the official client's MCP binding: it reads the PaymentRequired, has the
        # exact-EVM client sign, and calls again with the payload in _meta["x402/payment"].
        paying = x402MCPClient(tools_api, payer, auto_payment=True)
        payments = []
        paying.on_after_payment(lambda ctx: payments.append(ctx.payment_payload))
        done = await paying.call_tool(PAID, {"mint": mint})
        check(done.payment_made and len(payments) == 1, f"tools/call {PAID}: x402.mcp paid", short(tools_api.last))
        paid_answer(tools_api.last, f"tools/call {PAID} paid")
        check(tools_api.last["structuredContent"].get("mint") == mint, f"tools/call {PAID} paid: the answer is for the mint asked", short(tools_api.last))
        check(done.payment_response is not None and done.payment_response.success, f"tools/call {PAID} paid: x402.mcp reads the settlement", short(tools_api.last.get("_meta")))
        payload = payments[0]

        # The same payment again, for other arguments, then for another paid tool.
        await tools_api.call_tool(attach_payment_to_meta({"name": PAID, "arguments": {"mint": other_mint}}, payload))
        refused(tools_api.last, f"tools/call {PAID}: the payment again with another mint")
        await tools_api.call_tool(attach_payment_to_meta({"name": OTHER_PAID, "arguments": OTHER_ARGS}, payload))
        refused(tools_api.last, f"tools/call {OTHER_PAID}: the payment for {PAID}")

        # A fresh payment, base64-encoded as a string (as older clients send it).
        required = payment_required_of(await tools_api.call(PAID, {"mint": other_mint}), f"tools/call {PAID} unpaid, another mint")
        fresh = await payer.create_payment_payload(required)
        encoded = await tools_api.call(PAID, {"mint": other_mint}, {MCP_PAYMENT_META_KEY: encode_payment_signature_header(fresh)})
        paid_answer(encoded, f'tools/call {PAID}: _meta["x402/payment"] as a base64 string')
        check(encoded["structuredContent"].get("mint") == other_mint, f"tools/call {PAID} paid in base64: the answer is for the mint asked", short(encoded))

        # resources: llms.txt.
        listed = await client.list_resources()
        llms = [r for r in listed.resources if str(r.uri).endswith("llms.txt") or r.name == "llms.txt"]
        check(llms, "resources/list: llms.txt is listed", [str(r.uri) for r in listed.resources])
        read = await client.read_resource(str(llms[0].uri))
        text = "".join(getattr(c, "text", "") or "" for c in read.contents)
        check(text.strip() != "", f"resources/read {llms[0].uri}: {len(text)} characters of text", short(read.model_dump(mode="json")))

    # Credits: an API key as a bearer token on the transport pays instead.
    async with connect("/mcp", bearer=full_key) as client:
        result = await Tools(client).call(PAID, {"mint": mint})
        check(
            result.get("isError") is not True and isinstance(result.get("structuredContent"), dict) and "x402Version" not in result["structuredContent"],
            f"tools/call {PAID} with an API key with credits: the answer, no payment",
            short(result),
        )
        meta = result.get("_meta") or {}
        check(
            ERROR_META_KEY not in meta and MCP_PAYMENT_RESPONSE_META_KEY not in meta and result["structuredContent"].get("mint") == mint,
            f"tools/call {PAID} with credits: the mint's answer, no payment required, nothing settled over x402",
            short(result),
        )
    async with connect("/mcp", bearer=empty_key) as client:
        result = await Tools(client).call(PAID, {"mint": mint})
        text = " ".join(c.get("text", "") for c in result.get("content") or [])
        check(result.get("isError") is True and "credits" in text, f"tools/call {PAID} with an API key without credits: an error that says how to buy credits", short(result))

    # The same with the initialize handshake, as older clients connect.
    async with connect("/mcp", mode="legacy") as client:
        listed = await client.list_tools()
        check(len(listed.tools) == len(tools), f"legacy ({client.protocol_version}) tools/list: {len(listed.tools)} tools", len(tools))
        tools_api = Tools(client)
        payment_required_of(await tools_api.call(PAID, {"mint": mint}), f"legacy tools/call {PAID} unpaid")
        done = await x402MCPClient(tools_api, payer, auto_payment=True).call_tool(PAID, {"mint": mint})
        check(done.payment_made, f"legacy tools/call {PAID}: x402.mcp paid", short(tools_api.last))
        paid_answer(tools_api.last, f"legacy tools/call {PAID} paid")

    # The compact server: three tools that reach all the others.
    async with connect("/mcp/compact") as client:
        listed = await client.list_tools()
        names = sorted(t.name for t in listed.tools)
        check(names == ["call_tool", "describe_tool", "search_tools"] and not listed.next_cursor, "compact tools/list: search_tools, describe_tool, call_tool", names)
        tools_api = Tools(client)
        found = await tools_api.call("search_tools", {"query": "launchpad coin"})
        hits = [hit.get("name") for hit in (found.get("structuredContent") or {}).get("tools", [])]
        check(found.get("isError") is not True and PAID in hits, f"compact search_tools 'launchpad coin': finds {PAID}", short(found))
        described = await tools_api.call("describe_tool", {"name": PAID})
        schema = (described.get("structuredContent") or {}).get("inputSchema")
        check(
            described.get("isError") is not True and schema == by_name[PAID].input_schema,
            f"compact describe_tool {PAID}: its input schema, as /mcp lists it",
            short(described),
        )
        via = {"name": PAID, "arguments": {"mint": mint}}
        payment_required_of(await tools_api.call("call_tool", via), f"compact call_tool {PAID} unpaid")
        paying = x402MCPClient(tools_api, payer, auto_payment=True)
        done = await paying.call_tool("call_tool", via)
        check(done.payment_made, f"compact call_tool {PAID}: x402.mcp paid", short(tools_api.last))
        paid_answer(tools_api.last, f"compact call_tool {PAID} paid")

    versions = " + ".join(f"{name} {importlib.metadata.version(name)}" for name in ["mcp", "x402"])
    print(json.dumps({"client": f"{versions} (PyPI)", "protocol": protocol, "tools": len(tools)}))


def failures(error):
    """The Failed among what the SDK's task groups raise, or the error itself."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = failures(inner)
            if isinstance(found, Failed):
                return found
        return error.exceptions[0] if error.exceptions else error
    return error


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BaseException as error:  # noqa: BLE001 - one clear line, whatever ended the run
        found = failures(error)
        if isinstance(found, Failed):
            print(f"FAIL {found}", file=sys.stderr)
        else:
            print(f"FAIL the MCP client raised {type(found).__name__}: {found}", file=sys.stderr)
        sys.exit(1)
