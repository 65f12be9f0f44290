"""The LLM proxy with the official clients: the `openai` Python SDK (non-stream, stream, a tool
call and its result), and a credit top-up paid by the official x402 client (PyPI `x402`,
requests adapter) on an account whose credits are exhausted.

Usage: python llm.py BASE_URL TOKEN EMPTY_ACCOUNT_TOKEN
(the second token's account has no credits and automatic top-up on)."""

import json
import os
import sys

import openai
import requests
from eth_account import Account
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.http.utils import decode_payment_response_header
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner

base, token, empty_token = sys.argv[1:4]
llm = openai.OpenAI(base_url=base + "/api/v1/llm", api_key=token)
problems = []


def check(ok, what):
    if not ok:
        problems.append(what)


# Non-stream: the alias comes back as the model, with usage.
done = llm.chat.completions.create(model="svc-default", messages=[{"role": "user", "content": "hello proxy"}])
check(done.model == "svc-default", f"model {done.model}")
check(done.choices[0].message.content == "You said: hello proxy", f"content {done.choices[0].message.content!r}")
check(done.usage is not None and done.usage.completion_tokens > 0, f"usage {done.usage}")

# Stream, with the usage chunk asked for.
text, usage = "", None
for chunk in llm.chat.completions.create(
    model="svc-fast",
    messages=[{"role": "user", "content": "stream me"}],
    stream=True,
    stream_options={"include_usage": True},
):
    if chunk.choices and chunk.choices[0].delta.content:
        text += chunk.choices[0].delta.content
    if chunk.usage:
        usage = chunk.usage
check(text == "You said: stream me", f"streamed {text!r}")
check(usage is not None and usage.prompt_tokens > 0, f"stream usage {usage}")

# A tool call, then its result, through the Anthropic translation too.
tools = [{"type": "function", "function": {"name": "exec", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
for model in ["svc-default", "svc-smart"]:
    asked = llm.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "list files"}], tools=tools, tool_choice="auto"
    )
    calls = asked.choices[0].message.tool_calls or []
    check(len(calls) == 1 and calls[0].function.name == "exec", f"{model} tool calls {calls}")
    if calls:
        follow = llm.chat.completions.create(
            model=model,
            messages=[
                {"role": "user", "content": "list files"},
                {"role": "assistant", "content": None, "tool_calls": [c.model_dump() for c in calls]},
                {"role": "tool", "tool_call_id": calls[0].id, "content": "a.txt"},
            ],
            tools=tools,
        )
        check(follow.choices[0].message.content == "The tool answered: a.txt", f"{model} after the tool: {follow.choices[0].message.content!r}")

# A bad token is OpenAI's 401.
try:
    openai.OpenAI(base_url=base + "/api/v1/llm", api_key="svc_not_a_token").chat.completions.create(
        model="svc-default", messages=[{"role": "user", "content": "x"}]
    )
    check(False, "a bad token was accepted")
except openai.AuthenticationError as e:
    check(e.code == "invalid_api_key", f"401 code {e.code}")

# Exhausted credits: the SDK sees a 402 with code insufficient_credits ...
empty = openai.OpenAI(base_url=base + "/api/v1/llm", api_key=empty_token, max_retries=0)
request = {"model": "svc-default", "messages": [{"role": "user", "content": "top me up"}]}
try:
    empty.chat.completions.create(**request)
    check(False, "an account without credits got a completion")
except openai.APIStatusError as e:
    check(e.status_code == 402 and e.code == "insufficient_credits", f"402 {e.status_code} {e.code}")

# ... and the official x402 client pays the top-up challenge and gets the completion.
client = x402ClientSync()
register_exact_evm_client(client, EthAccountSigner(Account.from_key(os.environ["PAYER_KEY"])))
session = wrapRequestsWithPayment(requests.Session(), client)
paid = session.post(
    base + "/api/v1/llm/chat/completions",
    data=json.dumps(request),
    headers={"content-type": "application/json", "authorization": f"Bearer {empty_token}"},
    timeout=60,
)
check(paid.status_code == 200, f"top-up call: {paid.status_code} {paid.text}")
header = paid.headers.get("payment-response")
check(header is not None and decode_payment_response_header(header).success, f"settlement {header}")
if paid.status_code == 200:
    check(paid.json()["choices"][0]["message"]["content"] == "You said: top me up", paid.text)
# The credits bought serve the next call without a payment.
after = empty.chat.completions.create(**request)
check(after.choices[0].message.content == "You said: top me up", "the bought credits do not serve the next call")

print(json.dumps({"client": f"openai {openai.__version__} + x402", "problems": problems}))
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
