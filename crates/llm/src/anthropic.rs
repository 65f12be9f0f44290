//! Anthropic's Messages API behind OpenAI's chat-completions shapes: the request translated
//! one way, the answer (whole or streamed) the other, usage included.
//!
//! System and developer messages join the top-level `system`; consecutive messages of one
//! role merge (Anthropic needs user and assistant turns to alternate); tool calls become
//! `tool_use` blocks and tool results `tool_result` blocks of a user turn; `max_tokens` is
//! required, so it is the request's limit or the model's. Fields Anthropic does not know are
//! dropped. Thinking is not requested: its signed blocks cannot survive OpenAI's format.

use futures::StreamExt as _;
use serde_json::{Map, Value, json};

use crate::error::LlmError;
use crate::transport::{Answer, ENDED_EARLY, ProviderConfig, check, transport};

/// The API version sent.
const VERSION: &str = "2023-06-01";

/// Sends an OpenAI chat `request` to an Anthropic provider.
pub(crate) async fn send(
    config: &ProviderConfig,
    client: &reqwest::Client,
    request: Map<String, Value>,
    stream: bool,
    default_max: u64,
) -> Result<Answer, LlmError> {
    let body = to_messages(&request, stream, default_max);
    if body["messages"].as_array().is_none_or(Vec::is_empty) {
        return Err(LlmError::BadRequest {
            message: "the messages hold no user or assistant turn with content".into(),
            param: Some("messages".into()),
            code: "invalid_value",
        });
    }
    let mut builder =
        client.post(format!("{}/messages", config.base_url)).header("anthropic-version", VERSION).json(&body);
    if let Some(key) = &config.key {
        builder = builder.header("x-api-key", key);
    }
    let response = check(builder.send().await.map_err(transport)?).await?;
    let model = request.get("model").cloned().unwrap_or(Value::Null);
    if !stream {
        let body = response.bytes().await.map_err(transport)?;
        let message = serde_json::from_slice::<Value>(&body)
            .map_err(|e| LlmError::Upstream(format!("the provider answered something other than JSON: {e}")))?;
        return Ok(Answer::Whole(to_completion(&message, model)));
    }
    let mut state = StreamState { model, ..StreamState::default() };
    let mut events = eventsource_stream::Eventsource::eventsource(response.bytes_stream());
    let chunks = async_stream::stream! {
        loop {
            let step = match events.next().await {
                Some(Ok(event)) => state.chunks(&event.event, &event.data),
                Some(Err(e)) => Step::Emit(vec![Err(LlmError::Upstream(format!("the provider's stream broke: {e}")))]),
                None => Step::Emit(vec![Err(LlmError::Upstream(ENDED_EARLY.into()))]),
            };
            let Step::Emit(chunks) = step else { break };
            for chunk in chunks {
                let failed = chunk.is_err();
                yield chunk;
                if failed {
                    return;
                }
            }
        }
    };
    Ok(Answer::Stream(Box::pin(chunks)))
}

/// What one Anthropic event becomes.
enum Step {
    /// These chunks (perhaps none).
    Emit(Vec<Result<Value, LlmError>>),
    /// The end of the message.
    Stop,
}

impl Step {
    #[cfg(test)]
    fn into_chunks(self) -> Vec<Result<Value, LlmError>> {
        match self {
            Step::Emit(chunks) => chunks,
            Step::Stop => Vec::new(),
        }
    }
}

/// The Messages API request for an OpenAI chat request.
pub(crate) fn to_messages(request: &Map<String, Value>, stream: bool, default_max: u64) -> Value {
    let mut system = Vec::new();
    let mut turns: Vec<(String, Vec<Value>)> = Vec::new();
    let no_messages = Vec::new();
    for message in request.get("messages").and_then(Value::as_array).unwrap_or(&no_messages) {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("user");
        let (role, blocks) = match role {
            "system" | "developer" => {
                system.push(text_of(message.get("content")));
                continue;
            }
            "assistant" => ("assistant", assistant_blocks(message)),
            "tool" => ("user", vec![tool_result(message)]),
            _ => ("user", content_blocks(message.get("content"))),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if last == role => existing.extend(blocks),
            _ => turns.push((role.to_owned(), blocks)),
        }
    }
    // In a user turn, tool results come before anything else.
    for (_, blocks) in &mut turns {
        blocks.sort_by_key(|b| b.get("type").and_then(Value::as_str) != Some("tool_result"));
    }
    let mut body = Map::new();
    body.insert("model".into(), request.get("model").cloned().unwrap_or(Value::Null));
    let max = ["max_completion_tokens", "max_tokens"].iter().find_map(|k| request.get(*k).and_then(Value::as_u64));
    body.insert("max_tokens".into(), json!(max.unwrap_or(default_max)));
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    let messages: Vec<Value> =
        turns.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect();
    body.insert("messages".into(), Value::Array(messages));
    // Anthropic takes a temperature from 0 to 1, and not both it and top_p.
    match (request.get("temperature").and_then(Value::as_f64), request.get("top_p")) {
        (Some(t), _) => {
            body.insert("temperature".into(), json!(t.clamp(0.0, 1.0)));
        }
        (None, Some(top_p)) => {
            body.insert("top_p".into(), top_p.clone());
        }
        (None, None) => {}
    }
    match request.get("stop") {
        Some(Value::String(s)) => {
            body.insert("stop_sequences".into(), json!([s]));
        }
        Some(Value::Array(list)) => {
            body.insert("stop_sequences".into(), Value::Array(list.clone()));
        }
        _ => {}
    }
    if let Some(tools) = request.get("tools").and_then(Value::as_array).filter(|t| !t.is_empty()) {
        let tools: Vec<Value> = tools
            .iter()
            .filter_map(|t| t.get("function"))
            .map(|f| {
                json!({
                    "name": f.get("name").cloned().unwrap_or(Value::Null),
                    "description": f.get("description").cloned().unwrap_or(json!("")),
                    "input_schema": f.get("parameters").cloned().unwrap_or(json!({"type": "object"})),
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let mut choice = match request.get("tool_choice") {
        Some(Value::String(s)) if s == "required" => Some(json!({"type": "any"})),
        Some(Value::String(s)) if s == "none" => Some(json!({"type": "none"})),
        Some(Value::String(_)) => Some(json!({"type": "auto"})),
        Some(named @ Value::Object(_)) => {
            named.pointer("/function/name").map(|name| json!({"type": "tool", "name": name}))
        }
        _ => None,
    };
    if request.get("parallel_tool_calls") == Some(&Value::Bool(false)) && body.contains_key("tools") {
        let choice = choice.get_or_insert_with(|| json!({"type": "auto"}));
        choice["disable_parallel_tool_use"] = Value::Bool(true);
    }
    if let Some(choice) = choice.filter(|_| body.contains_key("tools")) {
        body.insert("tool_choice".into(), choice);
    }
    if stream {
        body.insert("stream".into(), Value::Bool(true));
    }
    Value::Object(body)
}

/// A message's content as plain text.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// User content as Anthropic blocks: text and images.
fn content_blocks(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(s)) if !s.is_empty() => vec![json!({"type": "text", "text": s})],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = part.get("text").and_then(Value::as_str).filter(|t| !t.is_empty())?;
                    Some(json!({"type": "text", "text": text}))
                }
                Some("image_url") => {
                    let url = part.pointer("/image_url/url").and_then(Value::as_str)?;
                    Some(image(url))
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// An image part: a data URL becomes base64 source, anything else a URL source.
fn image(url: &str) -> Value {
    if let Some(rest) = url.strip_prefix("data:")
        && let Some((media_type, data)) = rest.split_once(";base64,")
    {
        return json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}});
    }
    json!({"type": "image", "source": {"type": "url", "url": url}})
}

/// An assistant turn: its text, then its tool calls as `tool_use` blocks.
fn assistant_blocks(message: &Value) -> Vec<Value> {
    let mut blocks = content_blocks(message.get("content"));
    for call in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
        let arguments = call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("{}");
        // Arguments that are not a JSON object still reach the model, wrapped.
        let input = match serde_json::from_str::<Value>(arguments) {
            Ok(object @ Value::Object(_)) => object,
            _ => json!({"raw": arguments}),
        };
        blocks.push(json!({
            "type": "tool_use",
            "id": call.get("id").cloned().unwrap_or(json!("")),
            "name": call.pointer("/function/name").cloned().unwrap_or(json!("")),
            "input": input,
        }));
    }
    blocks
}

/// A tool message as a `tool_result` block.
fn tool_result(message: &Value) -> Value {
    json!({
        "type": "tool_result",
        "tool_use_id": message.get("tool_call_id").cloned().unwrap_or(json!("")),
        "content": text_of(message.get("content")),
    })
}

/// OpenAI's finish reason for an Anthropic stop reason.
fn finish_reason(stop: Option<&str>) -> &'static str {
    match stop {
        Some("max_tokens") => "length",
        Some("tool_use") => "tool_calls",
        Some("refusal") => "content_filter",
        _ => "stop",
    }
}

/// OpenAI's usage for Anthropic's.
fn usage(usage: &Value, output_tokens: u64) -> Value {
    let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    let cached = n("cache_read_input_tokens");
    let prompt = n("input_tokens") + cached + n("cache_creation_input_tokens");
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": output_tokens,
        "total_tokens": prompt + output_tokens,
        "prompt_tokens_details": {"cached_tokens": cached},
    })
}

/// An OpenAI completion for a whole Anthropic message.
pub(crate) fn to_completion(message: &Value, model: Value) -> Value {
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => calls.push(json!({
                "id": block.get("id").cloned().unwrap_or(json!("")),
                "type": "function",
                "function": {
                    "name": block.get("name").cloned().unwrap_or(json!("")),
                    "arguments": block.get("input").map_or_else(|| "{}".to_owned(), Value::to_string),
                },
            })),
            _ => {}
        }
    }
    let mut reply = json!({"role": "assistant", "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) }});
    if !calls.is_empty() {
        reply["tool_calls"] = Value::Array(calls);
    }
    let empty = json!({});
    let used = message.get("usage").unwrap_or(&empty);
    json!({
        "id": message.get("id").cloned().unwrap_or(json!("")),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{
            "index": 0,
            "message": reply,
            "logprobs": null,
            "finish_reason": finish_reason(message.get("stop_reason").and_then(Value::as_str)),
        }],
        "usage": usage(used, used.get("output_tokens").and_then(Value::as_u64).unwrap_or(0)),
    })
}

/// What a stream's translation remembers between events.
#[derive(Default)]
struct StreamState {
    id: Value,
    model: Value,
    /// The usage of `message_start` (input and cache counts).
    usage: Value,
    /// Anthropic block index → OpenAI tool-call index.
    tools: Vec<(u64, usize)>,
}

impl StreamState {
    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id, "object": "chat.completion.chunk", "created": 0, "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        })
    }

    /// The OpenAI chunks one Anthropic event becomes.
    fn chunks(&mut self, event: &str, data: &str) -> Step {
        Step::Emit(match self.translate(event, data) {
            Some(chunks) => chunks,
            None => return Step::Stop,
        })
    }

    /// The chunks of one event; `None` at the message's end.
    fn translate(&mut self, event: &str, data: &str) -> Option<Vec<Result<Value, LlmError>>> {
        let Ok(data) = serde_json::from_str::<Value>(data) else {
            return Some(vec![Err(LlmError::Upstream("the provider streamed something other than JSON".into()))]);
        };
        let kind = if event.is_empty() { data.get("type").and_then(Value::as_str).unwrap_or("") } else { event };
        Some(match kind {
            "message_start" => {
                self.id = data.pointer("/message/id").cloned().unwrap_or(Value::Null);
                self.usage = data.pointer("/message/usage").cloned().unwrap_or(json!({}));
                vec![Ok(self.chunk(json!({"role": "assistant", "content": ""}), None))]
            }
            "content_block_start"
                if data.pointer("/content_block/type").and_then(Value::as_str) == Some("tool_use") =>
            {
                let block = data.get("index").and_then(Value::as_u64).unwrap_or(0);
                let k = self.tools.len();
                self.tools.push((block, k));
                let call = json!({
                    "index": k,
                    "id": data.pointer("/content_block/id").cloned().unwrap_or(Value::Null),
                    "type": "function",
                    "function": {"name": data.pointer("/content_block/name").cloned().unwrap_or(Value::Null), "arguments": ""},
                });
                vec![Ok(self.chunk(json!({"tool_calls": [call]}), None))]
            }
            "content_block_delta" => match data.pointer("/delta/type").and_then(Value::as_str) {
                Some("text_delta") => {
                    let text = data.pointer("/delta/text").cloned().unwrap_or(json!(""));
                    vec![Ok(self.chunk(json!({"content": text}), None))]
                }
                Some("input_json_delta") => {
                    let block = data.get("index").and_then(Value::as_u64).unwrap_or(0);
                    let Some(&(_, k)) = self.tools.iter().find(|(b, _)| *b == block) else { return Some(Vec::new()) };
                    let part = data.pointer("/delta/partial_json").cloned().unwrap_or(json!(""));
                    vec![Ok(self.chunk(json!({"tool_calls": [{"index": k, "function": {"arguments": part}}]}), None))]
                }
                _ => Vec::new(),
            },
            "message_delta" => {
                let stop = data.pointer("/delta/stop_reason").and_then(Value::as_str);
                let output = data.pointer("/usage/output_tokens").and_then(Value::as_u64).unwrap_or(0);
                let finish = self.chunk(json!({}), Some(finish_reason(stop)));
                let usage = json!({
                    "id": self.id, "object": "chat.completion.chunk", "created": 0, "model": self.model,
                    "choices": [], "usage": usage(&self.usage, output),
                });
                vec![Ok(finish), Ok(usage)]
            }
            "message_stop" => return None,
            "error" => {
                let message = data.pointer("/error/message").and_then(Value::as_str).unwrap_or("the provider failed");
                vec![Err(LlmError::Upstream(message.to_owned()))]
            }
            _ => Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn system_joins_roles_alternate_and_tool_turns_become_blocks() {
        let body = to_messages(
            &request(json!({
                "model": "claude",
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "developer", "content": [{"type": "text", "text": "use tools"}]},
                    {"role": "user", "content": "hi"},
                    {"role": "user", "content": [{"type": "text", "text": "there"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
                    {"role": "assistant", "content": null, "tool_calls": [{"id": "callabc", "type": "function", "function": {"name": "exec", "arguments": "{\"command\":\"ls\"}"}}]},
                    {"role": "tool", "tool_call_id": "callabc", "content": "a\nb"},
                    {"role": "user", "content": "and?"},
                ],
                "tools": [{"type": "function", "function": {"name": "exec", "description": "run", "parameters": {"type": "object"}}}],
                "tool_choice": {"type": "function", "function": {"name": "exec"}},
                "parallel_tool_calls": false,
                "max_completion_tokens": 99,
                "stop": "END",
                "logprobs": true,
            })),
            true,
            4096,
        );
        assert_eq!(body["system"], "be brief\n\nuse tools");
        assert_eq!(body["max_tokens"], 99);
        assert_eq!(body["stop_sequences"], json!(["END"]));
        assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "exec", "disable_parallel_tool_use": true}));
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
        assert!(body.get("logprobs").is_none(), "unknown fields are dropped for Anthropic");
        let roles: Vec<&str> =
            body["messages"].as_array().into_iter().flatten().filter_map(|m| m["role"].as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(body["messages"][0]["content"][2]["source"]["media_type"], "image/png");
        assert_eq!(body["messages"][1]["content"][0]["input"], json!({"command": "ls"}));
        assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
        assert_eq!(body["messages"][2]["content"][0]["tool_use_id"], "callabc");
        assert_eq!(body["messages"][2]["content"][1]["text"], "and?");
    }

    #[test]
    fn what_anthropic_refuses_is_left_out() {
        let body = to_messages(
            &request(json!({
                "model": "m",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "x"}]},
                    {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "not json"}}]},
                    {"role": "user", "content": "and"},
                    {"role": "tool", "tool_call_id": "c1", "content": "done"},
                ],
                "tools": [],
                "tool_choice": "auto",
                "temperature": 1.7,
                "top_p": 0.5,
            })),
            false,
            64,
        );
        assert_eq!(body["messages"][0]["content"], json!([{"type": "text", "text": "x"}]));
        assert_eq!(body["messages"][1]["content"][0]["input"], json!({"raw": "not json"}));
        assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result", "tool results lead their turn");
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "no tools, no tool choice");
        assert_eq!(body["temperature"], 1.0);
        assert!(body.get("top_p").is_none());
    }

    #[test]
    fn a_request_without_a_limit_gets_the_models() {
        let body =
            to_messages(&request(json!({"model": "m", "messages": [{"role": "user", "content": "x"}]})), false, 512);
        assert_eq!(body["max_tokens"], 512);
        assert!(body.get("stream").is_none());
    }

    #[test]
    fn a_message_becomes_a_completion_with_tool_calls_and_usage() {
        let completion = to_completion(
            &json!({
                "id": "msg_1", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": "Let me look."}, {"type": "tool_use", "id": "toolu_1", "name": "exec", "input": {"command": "ls"}}],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 3, "cache_creation_input_tokens": 2},
            }),
            json!("claude"),
        );
        assert_eq!(completion["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(completion["choices"][0]["message"]["content"], "Let me look.");
        assert_eq!(completion["choices"][0]["message"]["tool_calls"][0]["id"], "toolu_1");
        assert_eq!(
            completion["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
            r#"{"command":"ls"}"#
        );
        assert_eq!(completion["usage"]["prompt_tokens"], 15);
        assert_eq!(completion["usage"]["prompt_tokens_details"]["cached_tokens"], 3);
        assert_eq!(completion["usage"]["completion_tokens"], 5);
    }

    #[test]
    fn stream_events_become_chunks() {
        let mut state = StreamState { model: json!("claude"), ..StreamState::default() };
        let mut out = Vec::new();
        for (event, data) in [
            ("message_start", r#"{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":7}}}"#),
            ("ping", r#"{"type":"ping"}"#),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"exec"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\""}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":4}}"#,
            ),
        ] {
            out.extend(state.chunks(event, data).into_chunks().into_iter().map(|c| c.expect("chunk")));
        }
        assert_eq!(out.len(), 6);
        assert_eq!(out[0]["choices"][0]["delta"]["role"], "assistant");
        assert_eq!(out[1]["choices"][0]["delta"]["content"], "Hi");
        assert_eq!(out[2]["choices"][0]["delta"]["tool_calls"][0]["id"], "toolu_9");
        assert_eq!(out[3]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"], "{\"a\"");
        assert_eq!(out[4]["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(out[5]["usage"]["prompt_tokens"], 7);
        assert_eq!(out[5]["usage"]["completion_tokens"], 4);
        assert!(matches!(state.chunks("message_stop", "{}"), Step::Stop));
        let error =
            state.chunks("error", r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#);
        assert!(matches!(error.into_chunks().as_slice(), [Err(LlmError::Upstream(m))] if m == "Overloaded"));
    }
}
