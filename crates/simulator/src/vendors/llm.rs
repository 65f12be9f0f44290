//! A fake LLM provider speaking OpenAI's chat-completions wire format, so the LLM proxy answers
//! offline and its tests run against the real proxy code.
//!
//! * `Authorization: Bearer simulated-key`; anything else is OpenAI's 401 `invalid_api_key`.
//! * An agent's request (offering `read` and `exec`, its system prompt listing skills) gets an
//!   agent's turns: a skill picked by the person's words, read, its route run, svc's answer
//!   quoted (`llm_agent`).
//! * Otherwise the answer is made from the request: with `tools` offered (and `tool_choice` not
//!   `"none"`) and no tool result yet, a call of the named or first tool; once a tool has
//!   answered (wherever in the conversation), a sentence quoting the latest answer; otherwise `You said: <the last user text>`. The user text
//!   `[empty]` gets an empty completion; a stream for `[slow]` waits a second between chunks
//!   (for benchmarks that hold many streams open); a stream for `[cut]` stops before its last
//!   event, as a provider whose connection drops.
//! * A user message holding `[call <tool> <json arguments>]` scripts an agent's turn: while no
//!   tool result follows that message, the answer is a call of that tool with those arguments
//!   (when it is offered); once one does, a sentence quoting the latest result. Agents add
//!   messages of their own between the turns, so the directive is found wherever it is.
//! * One completion token per word, cut at `max_completion_tokens` (else `max_tokens`) with
//!   `finish_reason: "length"`; prompt tokens are a quarter of the messages' JSON bytes.
//! * `stream: true` sends one chunk per word, the usage chunk only when
//!   `stream_options.include_usage` asks for it, then `data: [DONE]`. While the simulator's
//!   [`LlmGate`] is held, a stream stops after its first chunk until it is released.
//! * Every request body is kept ([`crate::Simulator::llm_requests`]) so tests can see what
//!   reached the provider.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::Simulator;

/// Holds fake LLM streams after their first chunk, so a test can see that chunks reach the
/// client before the provider has finished.
#[derive(Debug, Clone)]
pub struct LlmGate(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for LlmGate {
    fn default() -> Self {
        LlmGate(Arc::new(tokio::sync::watch::Sender::new(false)))
    }
}

impl LlmGate {
    /// Streams started from now on wait after their first chunk.
    pub fn hold(&self) {
        self.0.send_replace(true);
    }

    /// Lets every waiting stream go on.
    pub fn release(&self) {
        self.0.send_replace(false);
    }

    async fn pass(&self) {
        let mut held = self.0.subscribe();
        let _ = held.wait_for(|held| !held).await;
    }
}

/// Request bodies the fake received, oldest first.
pub(crate) type Received = Arc<Mutex<Vec<Value>>>;

pub(super) fn router(sim: Simulator) -> Router {
    Router::new().route("/v1/chat/completions", post(completions)).with_state(sim)
}

/// The fake Anthropic Messages API (`/anthropic/v1/messages`): `x-api-key: simulated-key`
/// and an `anthropic-version` header, `max_tokens` required; the same answers as the OpenAI
/// fake, in Anthropic's content blocks and stream events.
pub(super) fn anthropic(sim: Simulator) -> Router {
    Router::new().route("/v1/messages", post(messages)).with_state(sim)
}

async fn messages(State(sim): State<Simulator>, headers: HeaderMap, body: Bytes) -> Response {
    let anthropic_error = |status: StatusCode, kind: &str, message: &str| {
        (status, Json(json!({"type": "error", "error": {"type": kind, "message": message}}))).into_response()
    };
    let key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
    if key != Some(crate::SIMULATED_KEY) {
        return anthropic_error(StatusCode::UNAUTHORIZED, "authentication_error", "invalid x-api-key");
    }
    if headers.get("anthropic-version").is_none() {
        return anthropic_error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "anthropic-version: header is required",
        );
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return anthropic_error(StatusCode::BAD_REQUEST, "invalid_request_error", "invalid JSON");
    };
    if let Ok(mut received) = sim.llm_received.lock() {
        received.push(request.clone());
    }
    let Some(max_tokens) = request.get("max_tokens").and_then(Value::as_u64) else {
        return anthropic_error(StatusCode::BAD_REQUEST, "invalid_request_error", "max_tokens: Field required");
    };
    let messages = request.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let last_blocks: Vec<Value> = match messages.last().and_then(|m| m.get("content")) {
        Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => Vec::new(),
    };
    let tool_result = last_blocks.iter().find(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
    let tools = request.get("tools").and_then(Value::as_array).filter(|t| !t.is_empty());
    let choice = request.pointer("/tool_choice/type").and_then(Value::as_str);
    let input_tokens = request.get("messages").map_or(0, |m| m.to_string().len().div_ceil(4));
    let id = format!("msg_sim{:016x}", fastrand::u64(..));
    let model = request.get("model").cloned().unwrap_or(Value::Null);
    let (blocks, output_tokens, stop_reason) = match (tools, tool_result, choice) {
        (Some(tools), None, choice) if choice != Some("none") => {
            let named = request.pointer("/tool_choice/name").and_then(Value::as_str);
            let name =
                named.or_else(|| tools.first().and_then(|t| t.get("name")).and_then(Value::as_str)).unwrap_or("tool");
            let call = json!({"type": "tool_use", "id": format!("toolu_sim{:08x}", fastrand::u32(..)), "name": name, "input": {"query": "simulated"}});
            (vec![call], 12, "tool_use")
        }
        _ => {
            let said = match tool_result {
                Some(result) => format!(
                    "The tool answered: {}",
                    content_text(&json!({"content": result.get("content").cloned().unwrap_or(Value::Null)}))
                ),
                None => format!(
                    "You said: {}",
                    last_blocks
                        .iter()
                        .filter_map(|b| b.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            };
            let mut words: Vec<&str> = said.split_whitespace().collect();
            let mut stop = "end_turn";
            if words.len() as u64 > max_tokens {
                words.truncate(usize::try_from(max_tokens).unwrap_or(usize::MAX));
                stop = "max_tokens";
            }
            (vec![json!({"type": "text", "text": words.join(" ")})], words.len(), stop)
        }
    };
    if request.get("stream").and_then(Value::as_bool) != Some(true) {
        return Json(json!({
            "id": id, "type": "message", "role": "assistant", "model": model, "content": blocks,
            "stop_reason": stop_reason, "stop_sequence": null,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
        }))
        .into_response();
    }
    let event = |name: &str, data: Value| Bytes::from(format!("event: {name}\ndata: {data}\n\n"));
    let mut events = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant", "model": model, "content": [], "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
    )];
    events.push(event("ping", json!({"type": "ping"})));
    for (index, block) in blocks.iter().enumerate() {
        if block["type"] == "tool_use" {
            events.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})));
            let input = block["input"].to_string();
            let (head, tail) = input.split_at(input.len() / 2);
            for part in [head, tail] {
                events.push(event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": part}})));
            }
        } else {
            events.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            ));
            for (i, word) in block["text"].as_str().unwrap_or("").split_whitespace().enumerate() {
                let piece = if i == 0 { word.to_owned() } else { format!(" {word}") };
                events.push(event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})));
            }
        }
        events.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
    }
    events.push(event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output_tokens}})));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    let held = *sim.llm_gate.0.borrow();
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(chunked_body(events, held.then_some(sim.llm_gate.clone()), false))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

async fn completions(State(sim): State<Simulator>, headers: HeaderMap, body: Bytes) -> Response {
    let bearer = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    if bearer != Some(&format!("Bearer {}", crate::SIMULATED_KEY)) {
        return error(
            StatusCode::UNAUTHORIZED,
            "Incorrect API key provided.",
            "invalid_request_error",
            "invalid_api_key",
        );
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            "We could not parse the JSON body of your request.",
            "invalid_request_error",
            "invalid_json",
        );
    };
    if let Ok(mut received) = sim.llm_received.lock() {
        received.push(request.clone());
    }
    let Some(model) = request.get("model").and_then(Value::as_str).map(str::to_owned) else {
        return error(
            StatusCode::BAD_REQUEST,
            "you must provide a model parameter",
            "invalid_request_error",
            "missing_model",
        );
    };
    if request.get("messages").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        return error(
            StatusCode::BAD_REQUEST,
            "messages must be a non-empty array",
            "invalid_request_error",
            "invalid_messages",
        );
    }
    let reply = Reply::to(&request);
    let prompt_tokens = request.get("messages").map_or(0, |m| m.to_string().len().div_ceil(4));
    let usage = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": reply.tokens,
        "total_tokens": prompt_tokens + reply.tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    });
    let id = format!("chatcmpl-sim{:016x}", fastrand::u64(..));
    let created = sim.world.now_ms() / 1000;
    if request.get("stream").and_then(Value::as_bool) == Some(true) {
        let include_usage = request.pointer("/stream_options/include_usage").and_then(Value::as_bool) == Some(true);
        return stream(sim, id, created, model, reply, include_usage.then_some(usage));
    }
    let message = match &reply.kind {
        Kind::Text(words) => json!({"role": "assistant", "content": Kind::text(words)}),
        Kind::ToolCall { id, name, arguments } => json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}],
        }),
    };
    Json(json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": reply.finish_reason}],
        "usage": usage,
    }))
    .into_response()
}

/// What the fake answers.
struct Reply {
    kind: Kind,
    tokens: usize,
    finish_reason: &'static str,
    /// Stream a chunk a second.
    slow: bool,
    /// Stop the stream early.
    cut: bool,
}

enum Kind {
    Text(Vec<String>),
    ToolCall { id: String, name: String, arguments: String },
}

impl Kind {
    fn text(words: &[String]) -> String {
        words.join(" ")
    }
}

impl Reply {
    fn to(request: &Value) -> Reply {
        let messages = request.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        if let Some(reply) = Reply::scripted(request, messages) {
            return reply;
        }
        if let Some(turn) = super::llm_agent::turn(request, messages) {
            return Reply::of(turn);
        }
        let last = messages.last();
        // Once any tool has answered, the reply quotes the latest answer: an agent that adds
        // messages of its own after a tool result must not be sent into a loop of calls.
        let last_tool = messages.iter().rev().find(|m| m.get("role").and_then(Value::as_str) == Some("tool"));
        let after_tool = last_tool.is_some();
        let tools = request.get("tools").and_then(Value::as_array).filter(|t| !t.is_empty());
        let choice = request.get("tool_choice");
        if let (Some(tools), false, false) = (tools, after_tool, choice.and_then(Value::as_str) == Some("none")) {
            let named = choice.and_then(|c| c.pointer("/function/name")).and_then(Value::as_str);
            let first = tools.first().and_then(|t| t.pointer("/function/name")).and_then(Value::as_str);
            if let Some(name) = named.or(first) {
                return Reply {
                    kind: Kind::ToolCall {
                        id: format!("call_sim{:08x}", fastrand::u32(..)),
                        name: name.to_owned(),
                        arguments: r#"{"query":"simulated"}"#.to_owned(),
                    },
                    tokens: 12,
                    finish_reason: "tool_calls",
                    slow: false,
                    cut: false,
                };
            }
        }
        let said = last_tool.or(last).map(content_text).unwrap_or_default();
        let text = if after_tool {
            format!("The tool answered: {said}")
        } else if said.trim() == "[empty]" {
            String::new()
        } else {
            format!("You said: {said}")
        };
        let mut words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
        let limit = ["max_completion_tokens", "max_tokens"]
            .iter()
            .find_map(|k| request.get(*k).and_then(Value::as_u64))
            .and_then(|n| usize::try_from(n).ok());
        let mut finish_reason = "stop";
        if let Some(limit) = limit.filter(|l| words.len() > *l) {
            words.truncate(limit);
            finish_reason = "length";
        }
        let (slow, cut) = (said.trim() == "[slow]", said.trim() == "[cut]");
        Reply { tokens: words.len(), kind: Kind::Text(words), finish_reason, slow, cut }
    }
}

impl Reply {
    /// An agent's turn as an answer.
    fn of(turn: super::llm_agent::Turn) -> Reply {
        let (kind, finish_reason) = match turn {
            super::llm_agent::Turn::Call { name, arguments } => (
                Kind::ToolCall {
                    id: format!("call_sim{:08x}", fastrand::u32(..)),
                    name,
                    arguments: arguments.to_string(),
                },
                "tool_calls",
            ),
            super::llm_agent::Turn::Say(text) => {
                (Kind::Text(text.split_whitespace().map(str::to_owned).collect()), "stop")
            }
        };
        let tokens = match &kind {
            Kind::Text(words) => words.len(),
            Kind::ToolCall { .. } => 12,
        };
        Reply { kind, tokens, finish_reason, slow: false, cut: false }
    }

    /// The turn a `[call <tool> <json>]` directive in a user message scripts, if there is one.
    fn scripted(request: &Value, messages: &[Value]) -> Option<Reply> {
        let role = |m: &Value| m.get("role").and_then(Value::as_str).unwrap_or("").to_owned();
        let (at, text) = messages.iter().enumerate().rev().find_map(|(i, m)| {
            let text = content_text(m);
            (role(m) == "user" && text.contains("[call ")).then_some((i, text))
        })?;
        let directive = &text[text.find("[call ")? + "[call ".len()..];
        let (name, rest) = directive.trim_start().split_once(char::is_whitespace)?;
        let arguments: Value = serde_json::Deserializer::from_str(rest.trim_start()).into_iter().next()?.ok()?;
        if let Some(result) = messages[at..].iter().rev().find(|m| role(m) == "tool") {
            let words: Vec<String> =
                format!("The tool answered: {}", content_text(result)).split_whitespace().map(str::to_owned).collect();
            return Some(Reply {
                tokens: words.len(),
                kind: Kind::Text(words),
                finish_reason: "stop",
                slow: false,
                cut: false,
            });
        }
        let offered = request.get("tools").and_then(Value::as_array).is_some_and(|tools| {
            tools.iter().any(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(name))
        });
        offered.then(|| Reply {
            kind: Kind::ToolCall {
                id: format!("call_sim{:08x}", fastrand::u32(..)),
                name: name.to_owned(),
                arguments: arguments.to_string(),
            },
            tokens: 12,
            finish_reason: "tool_calls",
            slow: false,
            cut: false,
        })
    }
}

/// A message's text: its string content, or its text parts joined.
pub(super) fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join(" ")
        }
        _ => String::new(),
    }
}

fn stream(sim: Simulator, id: String, created: i64, model: String, reply: Reply, usage: Option<Value>) -> Response {
    let chunk = |delta: Value, finish: Option<&str>| {
        let chunk = json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        Bytes::from(format!("data: {chunk}\n\n"))
    };
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    match &reply.kind {
        Kind::Text(words) => {
            for (i, word) in words.iter().enumerate() {
                let piece = if i == 0 { word.clone() } else { format!(" {word}") };
                chunks.push(chunk(json!({"content": piece}), None));
            }
        }
        Kind::ToolCall { id: call, name, arguments } => {
            let (head, tail) = arguments.split_at(arguments.len() / 2);
            chunks.push(chunk(
                json!({"tool_calls": [{"index": 0, "id": call, "type": "function", "function": {"name": name, "arguments": ""}}]}),
                None,
            ));
            for part in [head, tail] {
                chunks.push(chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}), None));
            }
        }
    }
    chunks.push(chunk(json!({}), Some(reply.finish_reason)));
    if let Some(usage) = usage {
        let last = json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": usage});
        chunks.push(Bytes::from(format!("data: {last}\n\n")));
    }
    if reply.cut {
        chunks.truncate(2);
    } else {
        chunks.push(Bytes::from_static(b"data: [DONE]\n\n"));
    }
    // Whether to hold is decided when the stream starts, not when it reaches its second chunk.
    let held = *sim.llm_gate.0.borrow();
    let gate = sim.llm_gate.clone();
    let body = chunked_body(chunks, held.then_some(gate), reply.slow);
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// The chunks as a body, waiting at `gate` after the first when given, and a second between
/// chunks when `slow`.
fn chunked_body(chunks: Vec<Bytes>, gate: Option<LlmGate>, slow: bool) -> Body {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, Infallible>>(chunks.len().max(1));
    tokio::spawn(async move {
        for (i, chunk) in chunks.into_iter().enumerate() {
            if i == 1
                && let Some(gate) = &gate
            {
                gate.pass().await;
            }
            if slow && i > 0 {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            if tx.send(Ok(chunk)).await.is_err() {
                return;
            }
        }
    });
    Body::from_stream(tokio_stream(rx))
}

/// A receiver as a stream.
fn tokio_stream<T>(mut rx: tokio::sync::mpsc::Receiver<T>) -> impl futures::Stream<Item = T> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// OpenAI's error body.
fn error(status: StatusCode, message: &str, kind: &str, code: &str) -> Response {
    (status, Json(json!({"error": {"message": message, "type": kind, "param": null, "code": code}}))).into_response()
}
