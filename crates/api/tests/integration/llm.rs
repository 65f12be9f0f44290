//! The LLM proxy, driven as OpenAI SDKs drive it, against the simulator's fake providers.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use svc_accounts::Scope;
use svc_simulator::Fault;
use tower::ServiceExt as _;

use crate::support::{BASE_URL, Reply, Setup, TestApp, sign_challenge};

const COMPLETIONS: &str = "/api/v1/llm/chat/completions";

/// An account with `usd` of credits, and its proxy token.
async fn account_with_token(app: &TestApp, usd: &str) -> (String, String, String) {
    let (account, key) = app.account_with_credits(usd, &[Scope::Data]).await;
    let reply = app.call_with(&Method::POST, "/api/account/llm-token", None, &[("x-api-key", &key)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let token = reply.json()["token"].as_str().expect("token").to_owned();
    (account, key, token)
}

async fn chat(app: &TestApp, token: &str, body: &Value) -> Reply {
    let bearer = format!("Bearer {token}");
    app.call_with(&Method::POST, COMPLETIONS, Some(&body.to_string()), &[("authorization", &bearer)]).await
}

fn hello(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "hello there"}]})
}

/// A call that carries a payment, as an x402 client retries it.
async fn chat_paying(app: &TestApp, token: &str, body: &Value, payment: &str) -> Reply {
    let bearer = format!("Bearer {token}");
    let headers = [("authorization", bearer.as_str()), ("payment-signature", payment)];
    app.call_with(&Method::POST, COMPLETIONS, Some(&body.to_string()), &headers).await
}

/// Asserts OpenAI's error shape with `code`.
fn assert_openai_error(reply: &Reply, status: StatusCode, code: &str) -> Value {
    assert_eq!(reply.status, status, "{}", reply.text());
    let body = reply.json();
    let error = &body["error"];
    assert_eq!(error["code"], code, "{body}");
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    assert!(error["type"].as_str().is_some_and(|t| !t.is_empty()), "{body}");
    assert!(error.get("param").is_some(), "{body}");
    body
}

/// The x402 challenge a 402's `PAYMENT-REQUIRED` header carries.
fn challenge_in_header(reply: &Reply) -> svc_x402::PaymentRequired {
    use base64::Engine as _;
    let header = reply.headers.get("payment-required").expect("a challenge").to_str().expect("ascii");
    let json = base64::engine::general_purpose::STANDARD.decode(header).expect("base64");
    serde_json::from_slice(&json).expect("challenge")
}

/// Pays the challenge in a 402's header, as x402 clients do when the body is not theirs.
fn sign_header_challenge(reply: &Reply, nonce: u8) -> String {
    let challenge = challenge_in_header(reply);
    let body = serde_json::to_vec(&challenge).expect("json");
    sign_challenge(&Reply { status: StatusCode::PAYMENT_REQUIRED, headers: reply.headers.clone(), body }, nonce)
}

/// Credits the account's LLM calls cost so far, from the call records.
async fn llm_costs(app: &TestApp, account: &str) -> u64 {
    app.store.llm_calls(account, 1000).await.expect("calls").iter().map(|c| c.cost).sum()
}

/// Waits until no call of the account is still running.
async fn settled(app: &TestApp, account: &str) -> Vec<svc_store::LlmCallRecord> {
    for _ in 0..200 {
        let calls = app.store.llm_calls(account, 1000).await.expect("calls");
        if calls.iter().all(|c| c.status != "reserved") {
            return calls;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("a call never finished");
}

/// The cost of `usage` at svc-default's prices ($0.40 / $1.60 per million), rounded up.
fn default_cost(usage: &Value) -> u64 {
    let prompt = usage["prompt_tokens"].as_u64().expect("prompt");
    let completion = usage["completion_tokens"].as_u64().expect("completion");
    (prompt * 400_000 + completion * 1_600_000).div_ceil(1_000_000)
}

#[tokio::test]
async fn a_completion_names_the_alias_reaches_the_provider_as_its_model_and_costs_its_usage() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    let reply = chat(&app, &token, &hello("svc-default")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_eq!(body["model"], "svc-default");
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["content"], "You said: hello there");
    let sent = app.sim.llm_requests();
    assert_eq!(sent.last().expect("request")["model"], "openai/gpt-4.1-mini");
    let cost = default_cost(&body["usage"]);
    assert!(cost > 0);
    assert_eq!(app.balance(&account).await, 1_000_000 - cost);
    let calls = app.store.llm_calls(&account, 10).await.expect("calls");
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].status.as_str(), calls[0].cost, calls[0].alias.as_str()), ("ok", cost, "svc-default"));
    let usage = app.call_with(&Method::GET, "/api/account/usage", None, &[("authorization", "")]).await;
    assert_eq!(usage.status, StatusCode::UNAUTHORIZED, "usage needs the account");
}

#[tokio::test]
async fn usage_shows_the_accounts_llm_calls() {
    let app = TestApp::new().await;
    let (_, key, token) = account_with_token(&app, "1").await;
    let reply = chat(&app, &token, &hello("svc-fast")).await;
    assert_eq!(reply.status, StatusCode::OK);
    let usage = app.call_with(&Method::GET, "/api/account/usage", None, &[("x-api-key", &key)]).await;
    assert_eq!(usage.status, StatusCode::OK, "{}", usage.text());
    let body = usage.json();
    crate::support::assert_matches_schema("get", "/api/account/usage", &body);
    assert_eq!(body["llm"]["calls"], 1);
    assert_eq!(body["llm"]["recent"][0]["model"], "svc-fast");
    assert_eq!(body["llm"]["recent"][0]["upstream_model"], "openai/gpt-4.1-nano");
    assert_eq!(body["llm"]["prompt_tokens"], reply.json()["usage"]["prompt_tokens"]);
    // Another account sees none of it.
    let (_, other_key, _) = account_with_token(&app, "1").await;
    let theirs = app.call_with(&Method::GET, "/api/account/usage", None, &[("x-api-key", &other_key)]).await;
    assert_eq!(theirs.json()["llm"]["calls"], 0);
}

#[tokio::test]
async fn everything_but_the_model_reaches_the_provider_untouched() {
    let app = TestApp::new().await;
    let (_, _, token) = account_with_token(&app, "1").await;
    let request = json!({
        "model": "svc-default",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}}]},
        ],
        "tools": [{"type": "function", "function": {"name": "exec", "description": "run", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}, "strict": true}}],
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "response_format": {"type": "json_object"},
        "max_tokens": 300,
        "max_completion_tokens": 200,
        "temperature": 0.2,
        "x_vendor_extension": {"anything": [1, 2, 3]},
    });
    let reply = chat(&app, &token, &request).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let mut sent = app.sim.llm_requests().pop().expect("request");
    assert_eq!(sent["model"], "openai/gpt-4.1-mini");
    sent["model"] = json!("svc-default");
    assert_eq!(sent, request, "only the model may change on the way");
    let call = &reply.json()["choices"][0];
    assert_eq!(call["finish_reason"], "tool_calls");
    assert_eq!(call["message"]["tool_calls"][0]["function"]["name"], "exec");
}

#[tokio::test]
async fn a_tool_result_round_trips_unchanged() {
    let app = TestApp::new().await;
    let (_, _, token) = account_with_token(&app, "1").await;
    let request = json!({
        "model": "svc-default",
        "messages": [
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "callabc123", "type": "function", "function": {"name": "exec", "arguments": "{\"command\":\"ls\"}"}}]},
            {"role": "tool", "tool_call_id": "callabc123", "content": "a.txt"},
        ],
        "tools": [{"type": "function", "function": {"name": "exec", "parameters": {"type": "object"}}}],
    });
    let reply = chat(&app, &token, &request).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["choices"][0]["message"]["content"], "The tool answered: a.txt");
    let sent = app.sim.llm_requests().pop().expect("request");
    assert_eq!(sent["messages"], request["messages"]);
}

#[tokio::test]
async fn after_a_tool_result_the_simulated_model_answers_in_words_even_past_an_agents_own_message() {
    // An agent that adds a message of its own after each tool result was sent into a loop of
    // tool calls (hundreds a minute, burning its credits); the model now answers instead.
    let app = TestApp::new().await;
    let (_, _, token) = account_with_token(&app, "1").await;
    let request = json!({
        "model": "svc-default",
        "messages": [
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "exec", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
            {"role": "user", "content": "(agent's own context)"},
        ],
        "tools": [{"type": "function", "function": {"name": "exec", "parameters": {"type": "object"}}}],
    });
    let reply = chat(&app, &token, &request).await;
    assert_eq!(reply.json()["choices"][0]["message"]["content"], "The tool answered: a.txt", "{}", reply.text());
}

#[tokio::test]
async fn a_scripted_agent_turn_calls_the_named_tool_then_quotes_its_result_past_the_agents_own_messages() {
    let app = TestApp::new().await;
    let (_, _, token) = account_with_token(&app, "1").await;
    let tools = json!([
        {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "exec", "parameters": {"type": "object"}}},
    ]);
    let ask = r#"please [call exec {"command": "echo [1]"}] now"#;
    let first = json!({"model": "svc-default", "messages": [{"role": "user", "content": ask}], "tools": tools});
    let reply = chat(&app, &token, &first).await;
    let call = &reply.json()["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "exec", "the named tool, not the first: {}", reply.text());
    assert_eq!(
        serde_json::from_str::<Value>(call["arguments"].as_str().expect("args")).expect("json"),
        json!({"command": "echo [1]"})
    );
    // The agent answers the call and adds a message of its own; the directive is still found.
    let follow = json!({"model": "svc-default", "tools": tools, "messages": [
        {"role": "user", "content": [{"type": "text", "text": ask}]},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "exec", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "[1]"},
        {"role": "user", "content": "internal context"},
    ]});
    let reply = chat(&app, &token, &follow).await;
    assert_eq!(reply.json()["choices"][0]["message"]["content"], "The tool answered: [1]", "{}", reply.text());
}

#[tokio::test]
async fn the_larger_token_limit_bounds_the_hold_and_n_multiplies_it() {
    let app = TestApp::new().await;
    // Enough for a hold of 100 completion tokens, not of 10,000.
    let (account, _, token) = account_with_token(&app, "0.001").await;
    let mut request = hello("svc-default");
    request["max_completion_tokens"] = json!(100);
    assert_eq!(chat(&app, &token, &request).await.status, StatusCode::OK);
    request["max_tokens"] = json!(10_000);
    let refused = chat(&app, &token, &request).await;
    assert_openai_error(&refused, StatusCode::PAYMENT_REQUIRED, "insufficient_credits");
    request.as_object_mut().expect("object").remove("max_tokens");
    request["n"] = json!(8);
    assert_openai_error(&chat(&app, &token, &request).await, StatusCode::PAYMENT_REQUIRED, "insufficient_credits");
    request["n"] = json!(9);
    assert_openai_error(&chat(&app, &token, &request).await, StatusCode::BAD_REQUEST, "invalid_value");
    assert_eq!(app.balance(&account).await, 1_000 - llm_costs(&app, &account).await);
}

#[tokio::test]
async fn token_limits_cut_the_answer() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    let mut request = hello("svc-default");
    request["max_completion_tokens"] = json!(2);
    let reply = chat(&app, &token, &request).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_eq!(body["choices"][0]["finish_reason"], "length");
    assert_eq!(body["usage"]["completion_tokens"], 2);
    let mut other = hello("svc-default");
    other["max_tokens"] = json!(1);
    let reply = chat(&app, &token, &other).await;
    assert_eq!(reply.json()["usage"]["completion_tokens"], 1);
    // Both holds were released down to the usage.
    assert_eq!(app.balance(&account).await, 1_000_000 - llm_costs(&app, &account).await);
}

/// Sends a call and returns its answer before reading the body, to read it chunk by chunk.
async fn open_stream(app: &TestApp, token: &str, request: &Value) -> axum::response::Response {
    let request = Request::post(COMPLETIONS)
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from(request.to_string()))
        .expect("request");
    app.router.clone().oneshot(request).await.expect("infallible")
}

/// Reads a streamed answer's events (the `data:` payloads) until the stream ends.
fn events(body: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(body)
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: ").map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_stream_reaches_the_client_before_the_provider_has_finished() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    app.sim.llm_gate.hold();
    let mut request = hello("svc-default");
    request["stream"] = json!(true);
    let response = open_stream(&app, &token, &request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let first = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .expect("the first chunk arrives while the provider holds the rest")
        .expect("a frame")
        .expect("no error");
    let first = String::from_utf8_lossy(first.data_ref().expect("data")).into_owned();
    assert!(first.starts_with("data: {"), "{first}");
    assert!(first.contains(r#""model":"svc-default""#), "{first}");
    assert_eq!(app.store.llm_calls(&account, 1).await.expect("calls")[0].status, "reserved");
    app.sim.llm_gate.release();
    let rest = body.collect().await.expect("body").to_bytes();
    let all = events(&[first.as_bytes(), &rest].concat());
    assert_eq!(all.last().map(String::as_str), Some("[DONE]"));
    let text: String = all
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(e).ok())
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "You said: hello there");
    assert!(all.iter().all(|e| !e.contains("\"usage\"")), "the client did not ask for usage");
    let sent = app.sim.llm_requests().pop().expect("request");
    assert_eq!(sent["stream_options"]["include_usage"], true, "usage is always asked of the provider");
    let calls = settled(&app, &account).await;
    assert_eq!(calls[0].status, "ok");
    assert!(calls[0].cost > 0);
    assert_eq!(app.balance(&account).await, 1_000_000 - calls[0].cost);
}

#[tokio::test]
async fn a_stream_passes_the_usage_chunk_on_when_asked() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    let mut request = hello("svc-default");
    request["stream"] = json!(true);
    request["stream_options"] = json!({"include_usage": true});
    let reply = chat(&app, &token, &request).await;
    let all = events(&reply.body);
    let usage: Value = all
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(e).ok())
        .find(|c| c["usage"].is_object())
        .expect("a usage chunk")["usage"]
        .clone();
    assert_eq!(settled(&app, &account).await[0].cost, default_cost(&usage));
}

#[tokio::test]
async fn usage_is_asked_of_the_provider_whatever_stream_options_the_client_sent() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    for options in [json!(null), json!("yes"), json!({"include_usage": false})] {
        let mut request = hello("svc-default");
        request["stream"] = json!(true);
        request["stream_options"] = options;
        let reply = chat(&app, &token, &request).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        let sent = app.sim.llm_requests().pop().expect("request");
        assert_eq!(sent["stream_options"]["include_usage"], true);
    }
    let calls = settled(&app, &account).await;
    assert!(calls.iter().all(|c| c.status == "ok" && c.prompt_tokens > 0), "charged from usage: {calls:?}");
}

#[tokio::test]
async fn a_stream_the_provider_cuts_short_ends_in_an_error_and_costs_nothing() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    let request = json!({"model": "svc-default", "messages": [{"role": "user", "content": "[cut]"}], "stream": true});
    let reply = chat(&app, &token, &request).await;
    let all = events(&reply.body);
    assert!(all.last().is_some_and(|e| e.contains("\"error\"")), "the last event is an error: {all:?}");
    assert!(!all.iter().any(|e| e == "[DONE]"), "a truncated answer is no success");
    let calls = settled(&app, &account).await;
    assert_eq!((calls[0].status.as_str(), calls[0].cost), ("failed", 0));
    assert_eq!(app.balance(&account).await, 1_000_000);
}

#[tokio::test]
async fn a_client_that_leaves_before_the_answer_begins_gets_its_hold_back_at_once() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    app.sim.faults.push("llm", Fault::Delay(Duration::from_secs(2)));
    let mut request = hello("svc-default");
    request["stream"] = json!(true);
    let gave_up = tokio::time::timeout(Duration::from_millis(300), chat(&app, &token, &request)).await;
    assert!(gave_up.is_err(), "the provider was still thinking");
    let calls = settled(&app, &account).await;
    assert_eq!((calls[0].status.as_str(), calls[0].cost), ("failed", 0));
    assert_eq!(app.balance(&account).await, 1_000_000);
}

#[tokio::test]
async fn a_client_that_leaves_mid_stream_pays_for_what_the_provider_produced() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    app.sim.llm_gate.hold();
    let mut request = hello("svc-default");
    request["stream"] = json!(true);
    let response = open_stream(&app, &token, &request).await;
    let mut body = response.into_body();
    let _first = body.frame().await.expect("a frame").expect("no error");
    drop(body);
    app.sim.llm_gate.release();
    let calls = settled(&app, &account).await;
    assert_eq!(calls[0].status, "ok", "the rest was drained and its usage charged");
    assert!(calls[0].completion_tokens > 0);
    assert_eq!(app.balance(&account).await, 1_000_000 - calls[0].cost);
}

#[tokio::test]
async fn an_anthropic_alias_is_translated_both_ways() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "5").await;
    let request = json!({
        "model": "svc-smart",
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}, {"role": "user", "content": "again"}],
        "tools": [{"type": "function", "function": {"name": "exec", "parameters": {"type": "object"}}}],
        "tool_choice": "required",
    });
    let reply = chat(&app, &token, &request).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_eq!(body["model"], "svc-smart");
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"], r#"{"query":"simulated"}"#);
    let sent = app.sim.llm_requests().pop().expect("request");
    assert_eq!(sent["model"], "claude-sonnet-4-5");
    assert_eq!(sent["system"], "be brief");
    assert_eq!(sent["tool_choice"], json!({"type": "any"}));
    assert_eq!(sent["messages"].as_array().map(Vec::len), Some(1), "two user turns merge into one");
    // A stream, translated chunk by chunk, with usage for the meter.
    let stream =
        json!({"model": "svc-smart", "messages": [{"role": "user", "content": "hello there"}], "stream": true});
    let reply = chat(&app, &token, &stream).await;
    let all = events(&reply.body);
    assert_eq!(all.last().map(String::as_str), Some("[DONE]"));
    let text: String = all
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(e).ok())
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "You said: hello there");
    let calls = settled(&app, &account).await;
    assert!(calls.iter().all(|c| c.status == "ok" && c.cost > 0), "{calls:?}");
    assert_eq!(app.balance(&account).await, 5_000_000 - llm_costs(&app, &account).await);
}

#[tokio::test]
async fn bad_forged_and_rotated_tokens_all_get_the_same_401() {
    let app = TestApp::new().await;
    let (account, key, token) = account_with_token(&app, "1").await;
    // The signature's last digit changed (to another digit, whatever it was).
    let last = if token.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &token[..token.len() - 1]);
    let other_account = token.replacen(&account, "acct_00000000000000000000000000000000", 1);
    let mut bodies = Vec::new();
    for bad in ["", "sk-not-ours", &forged, &other_account] {
        let reply = chat(&app, bad, &hello("svc-default")).await;
        bodies.push(assert_openai_error(&reply, StatusCode::UNAUTHORIZED, "invalid_api_key"));
    }
    let none = app.call(&Method::POST, COMPLETIONS, Some(&hello("svc-default").to_string())).await;
    bodies.push(assert_openai_error(&none, StatusCode::UNAUTHORIZED, "invalid_api_key"));
    let by_key = app.call_with(&Method::POST, "/api/account/llm-token/rotate", None, &[("x-api-key", &key)]).await;
    assert_eq!(by_key.status, StatusCode::UNAUTHORIZED, "a key cannot lock its owner out: {}", by_key.text());
    let (signed_in, _) = svc_accounts::auth::token_for(&app.state.config.sign_in, &account, crate::support::NOW_MS);
    let bearer = format!("Bearer {signed_in}");
    let rotated =
        app.call_with(&Method::POST, "/api/account/llm-token/rotate", None, &[("authorization", &bearer)]).await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.text());
    let fresh = rotated.json()["token"].as_str().expect("token").to_owned();
    assert_ne!(fresh, token);
    let old = chat(&app, &token, &hello("svc-default")).await;
    bodies.push(assert_openai_error(&old, StatusCode::UNAUTHORIZED, "invalid_api_key"));
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "every refusal reads the same");
    assert_eq!(chat(&app, &fresh, &hello("svc-default")).await.status, StatusCode::OK);
    // The token endpoint hands out the current token, the same each time.
    let again = app.call_with(&Method::POST, "/api/account/llm-token", None, &[("x-api-key", &key)]).await;
    assert_eq!(again.json()["token"], fresh.as_str());
    assert_eq!(app.sim.llm_requests().len(), 1, "no refused call reached the provider");
    assert!(!app.store.llm_calls(&account, 10).await.expect("calls").is_empty());
}

#[tokio::test]
async fn the_token_routes_need_the_account() {
    let app = TestApp::new().await;
    let reply = app.call(&Method::POST, "/api/account/llm-token", None).await;
    crate::support::assert_error(&reply, StatusCode::UNAUTHORIZED, "unauthorized");
    let reply = app.call(&Method::PUT, "/api/account/llm-top-up", Some(r#"{"enabled":true,"amount":"5"}"#)).await;
    crate::support::assert_error(&reply, StatusCode::UNAUTHORIZED, "unauthorized");
}

#[tokio::test]
async fn requests_svc_can_refuse_get_openais_error_body_and_reach_no_provider() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    let cases = [
        (
            json!({"model": "gpt-9", "messages": [{"role": "user", "content": "x"}]}),
            StatusCode::NOT_FOUND,
            "model_not_found",
        ),
        (
            json!({"messages": [{"role": "user", "content": "x"}]}),
            StatusCode::BAD_REQUEST,
            "missing_required_parameter",
        ),
        (json!({"model": "svc-default"}), StatusCode::BAD_REQUEST, "missing_required_parameter"),
        (json!({"model": "svc-default", "messages": []}), StatusCode::BAD_REQUEST, "invalid_value"),
        (json!({"model": "svc-default", "messages": "hi"}), StatusCode::BAD_REQUEST, "invalid_type"),
        (
            json!({"model": "svc-default", "messages": [{"role": "user", "content": "x"}], "max_tokens": -1}),
            StatusCode::BAD_REQUEST,
            "invalid_value",
        ),
        (
            json!({"model": "svc-default", "messages": [{"role": "user", "content": "x"}], "stream": "yes"}),
            StatusCode::BAD_REQUEST,
            "invalid_type",
        ),
        (json!([1, 2]), StatusCode::BAD_REQUEST, "invalid_request"),
    ];
    for (body, status, code) in cases {
        let reply = chat(&app, &token, &body).await;
        assert_openai_error(&reply, status, code);
    }
    let bearer = format!("Bearer {token}");
    let junk = app.call_with(&Method::POST, COMPLETIONS, Some("{not json"), &[("authorization", &bearer)]).await;
    assert_openai_error(&junk, StatusCode::BAD_REQUEST, "invalid_json");
    assert!(app.sim.llm_requests().is_empty());
    assert_eq!(app.balance(&account).await, 1_000_000);
}

#[tokio::test]
async fn an_oversized_body_is_a_413() {
    let app = TestApp::with(Setup {
        llm: Box::new(|config| svc_llm::LlmConfig { body_limit_bytes: 1024, ..config }),
        ..Setup::default()
    })
    .await;
    let (_, _, token) = account_with_token(&app, "1").await;
    let big = json!({"model": "svc-default", "messages": [{"role": "user", "content": "x".repeat(2000)}]});
    assert_openai_error(&chat(&app, &token, &big).await, StatusCode::PAYLOAD_TOO_LARGE, "request_too_large");
}

#[tokio::test]
async fn provider_failures_map_as_openai_clients_expect_and_charge_nothing() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    let cases = [
        (Fault::Status { status: 401, retry_after: None }, StatusCode::BAD_GATEWAY, "upstream_error", None),
        (Fault::Status { status: 403, retry_after: None }, StatusCode::BAD_GATEWAY, "upstream_error", None),
        (
            Fault::Status { status: 429, retry_after: Some(7) },
            StatusCode::TOO_MANY_REQUESTS,
            "upstream_rate_limited",
            Some("7"),
        ),
        (Fault::Status { status: 500, retry_after: None }, StatusCode::BAD_GATEWAY, "upstream_error", None),
        (Fault::Status { status: 400, retry_after: None }, StatusCode::BAD_REQUEST, "upstream_rejected", None),
    ];
    for (fault, status, code, retry_after) in cases {
        app.sim.faults.push("llm", fault);
        let reply = chat(&app, &token, &hello("svc-default")).await;
        assert_openai_error(&reply, status, code);
        assert_eq!(reply.headers.get("retry-after").and_then(|v| v.to_str().ok()), retry_after);
    }
    assert_eq!(app.balance(&account).await, 1_000_000, "a failed call costs nothing");
    let calls = app.store.llm_calls(&account, 10).await.expect("calls");
    assert!(calls.iter().all(|c| c.status == "failed" && c.cost == 0), "{calls:?}");
}

#[tokio::test]
async fn an_empty_completion_costs_nothing() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "1").await;
    let reply =
        chat(&app, &token, &json!({"model": "svc-default", "messages": [{"role": "user", "content": "[empty]"}]}))
            .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(app.balance(&account).await, 1_000_000);
}

#[tokio::test]
async fn exhausted_credits_are_a_retryable_402_that_holds_nothing() {
    let app = TestApp::new().await;
    let (account, _, token) = account_with_token(&app, "0").await;
    let reply = chat(&app, &token, &hello("svc-default")).await;
    let body = assert_openai_error(&reply, StatusCode::PAYMENT_REQUIRED, "insufficient_credits");
    let message = body["error"]["message"].as_str().unwrap_or_default().to_lowercase();
    assert!(message.contains("retry later"), "worded as a retryable limit: {message}");
    assert!(!message.contains("insufficient credits"), "agent gateways lock keys on that wording: {message}");
    assert!(reply.headers.get("payment-required").is_none(), "top-up is off: nothing to pay");
    assert!(app.sim.llm_requests().is_empty());
    assert_eq!(app.balance(&account).await, 0);
    let ledger = app.store.ledger(&account, 10).await.expect("ledger");
    assert!(ledger.is_empty(), "a refused call leaves nothing behind: {ledger:?}");
}

#[tokio::test]
async fn with_top_up_on_the_402_carries_a_challenge_and_paying_it_completes_the_same_call() {
    let app = TestApp::new().await;
    let (account, key, token) = account_with_token(&app, "0").await;
    let set = app
        .call_with(
            &Method::PUT,
            "/api/account/llm-top-up",
            Some(r#"{"enabled":true,"amount":"2"}"#),
            &[("x-api-key", &key)],
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text());
    let shown = app.call_with(&Method::GET, "/api/account/llm-top-up", None, &[("x-api-key", &key)]).await;
    assert_eq!(shown.json(), json!({"enabled": true, "amount": "2"}));
    let request = hello("svc-default");
    let refused = chat(&app, &token, &request).await;
    assert_openai_error(&refused, StatusCode::PAYMENT_REQUIRED, "insufficient_credits");
    let challenge = challenge_in_header(&refused);
    assert_eq!(challenge.accepts[0].amount, "2000000");
    assert!(challenge.resource.url.ends_with(COMPLETIONS));
    // The x402 client signs the challenge from the header and retries the same call.
    let payment = sign_header_challenge(&refused, 41);
    let paid = chat_paying(&app, &token, &request, &payment).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    assert!(paid.headers.get("payment-response").is_some());
    let cost = default_cost(&paid.json()["usage"]);
    assert_eq!(app.balance(&account).await, 2_000_000 - cost);
    // The same payment again buys nothing more.
    let again = chat_paying(&app, &token, &request, &payment).await;
    assert_openai_error(&again, StatusCode::PAYMENT_REQUIRED, "payment_refused");
    let purchases =
        app.store.ledger(&account, 50).await.expect("ledger").into_iter().filter(|e| e.kind == "purchase").count();
    assert_eq!(purchases, 1);
    assert_eq!(app.balance(&account).await, 2_000_000 - cost);
}

#[tokio::test]
async fn a_top_up_buys_at_least_the_calls_shortfall() {
    let app = TestApp::new().await;
    let (account, key, token) = account_with_token(&app, "0").await;
    let on = r#"{"enabled":true,"amount":"1"}"#;
    app.call_with(&Method::PUT, "/api/account/llm-top-up", Some(on), &[("x-api-key", &key)]).await;
    // Eight choices of svc-smart's full output hold about 2 USD: one dollar would not do.
    let request = json!({"model": "svc-smart", "messages": [{"role": "user", "content": "hi"}], "n": 8});
    let refused = chat(&app, &token, &request).await;
    let asked: u64 = challenge_in_header(&refused).accepts[0].amount.parse().expect("amount");
    assert!(asked > 1_900_000, "the challenge covers the call: {asked}");
    let payment = sign_header_challenge(&refused, 43);
    let paid = chat_paying(&app, &token, &request, &payment).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    assert_eq!(app.balance(&account).await, asked - llm_costs(&app, &account).await);
}

#[tokio::test]
async fn a_payment_without_top_up_on_buys_nothing() {
    let app = TestApp::new().await;
    let (account, key, token) = account_with_token(&app, "0").await;
    let on = r#"{"enabled":true,"amount":"1"}"#;
    app.call_with(&Method::PUT, "/api/account/llm-top-up", Some(on), &[("x-api-key", &key)]).await;
    let refused = chat(&app, &token, &hello("svc-default")).await;
    let payment = sign_header_challenge(&refused, 42);
    let off = r#"{"enabled":false,"amount":"1"}"#;
    app.call_with(&Method::PUT, "/api/account/llm-top-up", Some(off), &[("x-api-key", &key)]).await;
    let reply = chat_paying(&app, &token, &hello("svc-default"), &payment).await;
    assert_openai_error(&reply, StatusCode::PAYMENT_REQUIRED, "payment_refused");
    assert_eq!(app.balance(&account).await, 0);
    assert_eq!(app.paid_calls().await, 0, "the payment was never taken");
    let junk = chat_paying(&app, &token, &hello("svc-default"), "junk").await;
    assert_openai_error(&junk, StatusCode::PAYMENT_REQUIRED, "payment_refused");
}

/// Turns the account's automatic top-up on, buying `usd` at a time.
async fn top_up_on(app: &TestApp, key: &str, usd: &str) {
    let on = json!({"enabled": true, "amount": usd}).to_string();
    let set = app.call_with(&Method::PUT, "/api/account/llm-top-up", Some(&on), &[("x-api-key", key)]).await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text());
}

#[tokio::test]
async fn a_payment_header_too_large_to_be_a_payment_is_a_431_in_openais_shape() {
    let app = TestApp::new().await;
    let (account, key, token) = account_with_token(&app, "1").await;
    top_up_on(&app, &key, "1").await;
    let huge = "A".repeat(svc_x402::codec::MAX_HEADER_BYTES + 1);
    let bearer = format!("Bearer {token}");
    for name in ["payment-signature", "x-payment"] {
        let headers = [("authorization", bearer.as_str()), (name, huge.as_str())];
        let body = hello("svc-default").to_string();
        let reply = app.call_with(&Method::POST, COMPLETIONS, Some(&body), &headers).await;
        let body = assert_openai_error(&reply, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "payment_header_too_large");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(&svc_x402::codec::MAX_HEADER_BYTES.to_string()), "says the limit: {message}");
        assert!(reply.headers.get("payment-required").is_none(), "not a challenge to loop on");
    }
    assert!(app.sim.llm_requests().is_empty());
    assert_eq!(app.balance(&account).await, 1_000_000);
}

#[tokio::test]
async fn a_junk_payment_with_top_up_on_gets_a_fresh_challenge_that_pays() {
    let app = TestApp::new().await;
    let (account, key, token) = account_with_token(&app, "0").await;
    top_up_on(&app, &key, "1").await;
    let junk = chat_paying(&app, &token, &hello("svc-default"), "junk").await;
    assert_openai_error(&junk, StatusCode::PAYMENT_REQUIRED, "payment_refused");
    assert_eq!(challenge_in_header(&junk).accepts[0].amount, "1000000");
    let payment = sign_header_challenge(&junk, 44);
    let paid = chat_paying(&app, &token, &hello("svc-default"), &payment).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    assert_eq!(app.balance(&account).await, 1_000_000 - llm_costs(&app, &account).await);
}

#[tokio::test]
async fn the_top_up_challenge_names_the_configured_base_url_whatever_the_host() {
    let app = TestApp::new().await;
    let (_, key, token) = account_with_token(&app, "0").await;
    top_up_on(&app, &key, "1").await;
    let bearer = format!("Bearer {token}");
    let headers = [("authorization", bearer.as_str()), ("host", "evil.example")];
    let body = hello("svc-default").to_string();
    let refused = app.call_with(&Method::POST, COMPLETIONS, Some(&body), &headers).await;
    assert_openai_error(&refused, StatusCode::PAYMENT_REQUIRED, "insufficient_credits");
    let challenge = challenge_in_header(&refused);
    assert_eq!(challenge.resource.url, format!("{BASE_URL}{COMPLETIONS}"));
    assert!(challenge.resource.description.contains("1 USD"), "{}", challenge.resource.description);
}

#[tokio::test]
async fn the_top_up_challenge_carries_the_extensions_a_routes_challenge_does() {
    let app = TestApp::new().await;
    let (_, key, token) = account_with_token(&app, "0").await;
    top_up_on(&app, &key, "1").await;
    let refused = chat(&app, &token, &hello("svc-default")).await;
    let top_up = challenge_in_header(&refused).extensions.expect("extensions");
    let route = app.get("/api/x402/alpha/top-picks").await;
    assert_eq!(route.status, StatusCode::PAYMENT_REQUIRED, "{}", route.text());
    let route = route.json();
    assert!(top_up.get("payment-identifier").is_some(), "{top_up:?}");
    assert_eq!(top_up["payment-identifier"], route["extensions"]["payment-identifier"]);
}

#[tokio::test]
async fn a_top_up_amount_out_of_range_is_a_422() {
    let app = TestApp::new().await;
    let (_, key, _) = account_with_token(&app, "0").await;
    for body in [r#"{"enabled":true,"amount":"0.5"}"#, r#"{"enabled":true,"amount":"5000"}"#, r#"{"amount":"2"}"#] {
        let reply = app.call_with(&Method::PUT, "/api/account/llm-top-up", Some(body), &[("x-api-key", &key)]).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {}", reply.text());
    }
    for amount in crate::support::huge_amounts() {
        let body = json!({"enabled": true, "amount": amount}).to_string();
        let reply = app.call_with(&Method::PUT, "/api/account/llm-top-up", Some(&body), &[("x-api-key", &key)]).await;
        crate::support::assert_invalid_at(&reply, &[json!("body"), json!("amount")]);
    }
}

#[tokio::test]
async fn fifty_concurrent_calls_never_spend_more_than_the_balance() {
    let app = TestApp::new().await;
    // Each call holds what 1,000 completion tokens and a prompt of its body's length cost at
    // svc-default's prices; the balance covers ten such holds.
    let request = |i: usize| json!({"model": "svc-default", "messages": [{"role": "user", "content": format!("call number {i:03}")}], "max_completion_tokens": 1000});
    let hold = (request(0).to_string().len() as u64 * 400_000 + 1000 * 1_600_000).div_ceil(1_000_000);
    let (account, key, token) = account_with_token(&app, "0").await;
    svc_accounts::grant_credits(
        &app.store,
        &account,
        svc_domain::Money::from_atomic(hold * 10),
        "grant:ten",
        crate::support::NOW_MS,
    )
    .await
    .expect("grant");
    let _ = key;
    let replies = futures::future::join_all((0..50).map(|i| {
        let body = request(i);
        let token = token.clone();
        let app = &app;
        async move { chat(app, &token, &body).await }
    }))
    .await;
    let ok = replies.iter().filter(|r| r.status == StatusCode::OK).count();
    let refused = replies.iter().filter(|r| r.status == StatusCode::PAYMENT_REQUIRED).count();
    assert_eq!(ok + refused, 50, "every call either ran or was refused for credits");
    assert!(ok >= 10, "the balance covers ten holds: {ok}");
    let calls = settled(&app, &account).await;
    let charged: u64 = calls.iter().filter(|c| c.status == "ok").map(|c| c.cost).sum();
    assert_eq!(calls.iter().filter(|c| c.status == "ok").count(), ok);
    assert_eq!(app.balance(&account).await, hold * 10 - charged, "the ledger adds up to the calls' costs");
}

#[tokio::test]
async fn the_rate_limit_and_the_daily_cap_answer_429_with_retry_after() {
    let app = TestApp::with(Setup {
        llm: Box::new(|config| svc_llm::LlmConfig { rate_per_minute: 2, ..config }),
        ..Setup::default()
    })
    .await;
    let (_, _, token) = account_with_token(&app, "1").await;
    assert_eq!(chat(&app, &token, &hello("svc-default")).await.status, StatusCode::OK);
    assert_eq!(chat(&app, &token, &hello("svc-default")).await.status, StatusCode::OK);
    let limited = chat(&app, &token, &hello("svc-default")).await;
    assert_openai_error(&limited, StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded");
    assert!(limited.headers.get("retry-after").is_some());
    // Another account has its own window.
    let (_, _, other) = account_with_token(&app, "1").await;
    assert_eq!(chat(&app, &other, &hello("svc-default")).await.status, StatusCode::OK);

    // The cap covers exactly one call's hold: the first call fits, the second, with the first's
    // cost spent, does not.
    let mut small = hello("svc-default");
    small["max_completion_tokens"] = json!(1);
    let hold = (small.to_string().len() as u64 * 400_000 + 1_600_000).div_ceil(1_000_000);
    let capped = TestApp::with(Setup {
        llm: Box::new(move |config| svc_llm::LlmConfig { daily_cap: svc_domain::Money::from_atomic(hold), ..config }),
        ..Setup::default()
    })
    .await;
    let (_, _, token) = account_with_token(&capped, "1").await;
    assert_eq!(chat(&capped, &token, &small).await.status, StatusCode::OK);
    let reply = chat(&capped, &token, &small).await;
    let body = assert_openai_error(&reply, StatusCode::TOO_MANY_REQUESTS, "daily_limit_reached");
    assert!(body["error"]["message"].as_str().unwrap_or_default().contains("Daily usage limit reached"));
    let retry: u64 = reply.headers["retry-after"].to_str().expect("ascii").parse().expect("seconds");
    assert!(retry > 0 && retry <= 86_400);
}

#[tokio::test]
async fn a_hundred_concurrent_calls_never_hold_more_than_the_daily_cap() {
    // Every call holds what 1,000 completion tokens and a prompt of its body's length cost; the
    // cap covers ten holds. The provider keeps every stream open, so no hold is given back
    // while the calls arrive.
    let mut request = hello("svc-default");
    request["stream"] = json!(true);
    request["max_completion_tokens"] = json!(1000);
    let hold = (request.to_string().len() as u64 * 400_000 + 1000 * 1_600_000).div_ceil(1_000_000);
    let cap = hold * 10;
    let app = TestApp::with(Setup {
        llm: Box::new(move |config| svc_llm::LlmConfig { daily_cap: svc_domain::Money::from_atomic(cap), ..config }),
        ..Setup::default()
    })
    .await;
    let (account, _, token) = account_with_token(&app, "100").await;
    app.sim.llm_gate.hold();
    let responses = futures::future::join_all((0..100).map(|_| open_stream(&app, &token, &request))).await;
    let admitted = responses.iter().filter(|r| r.status() == StatusCode::OK).count();
    let capped = responses.iter().filter(|r| r.status() == StatusCode::TOO_MANY_REQUESTS).count();
    assert_eq!((admitted, capped), (10, 90), "ten holds fit under the cap, the others are refused");
    let held = app.state.llm.usage(&account, 0).await.expect("usage").spent;
    assert_eq!(held, cap);

    app.sim.llm_gate.release();
    for response in responses {
        response.into_body().collect().await.expect("body");
    }
    let calls = settled(&app, &account).await;
    assert_eq!(calls.iter().filter(|c| c.status == "ok").count(), 10);
    assert!(llm_costs(&app, &account).await <= cap);
}

#[tokio::test]
async fn the_models_are_listed_in_openais_shape() {
    let app = TestApp::new().await;
    let reply = app.get("/api/v1/llm/models").await;
    assert_eq!(reply.status, StatusCode::OK);
    let body = reply.json();
    assert_eq!(body["object"], "list");
    let ids: Vec<&str> = body["data"].as_array().into_iter().flatten().filter_map(|m| m["id"].as_str()).collect();
    assert_eq!(ids.len(), 6);
    assert_eq!(ids.iter().filter(|id| id.starts_with("svc-")).count(), 4);
    assert!(body["data"].as_array().into_iter().flatten().all(|m| m["object"] == "model"));
}

#[tokio::test]
async fn holds_of_a_process_that_stopped_mid_call_are_given_back() {
    let app = TestApp::new().await;
    let (account, _, _) = account_with_token(&app, "1").await;
    let call = |id: &'static str| svc_store::NewLlmCall {
        id,
        account_id: &account,
        alias: "svc-default",
        provider: "openai",
        upstream_model: "openai/gpt-4.1-mini",
        stream: false,
        reserved: 250_000,
        cap: None,
        now_ms: crate::support::NOW_MS,
    };
    app.store.begin_llm_call(&call("llm_crashed")).await.expect("begin");
    assert_eq!(app.balance(&account).await, 750_000);
    // Another row the process wrote before it could take the hold: nothing to give back.
    app.store
        .execute_unprepared(&format!(
            "INSERT INTO llm_calls (id, account_id, alias, provider, upstream_model, stream, reserved, status, created_at) \
             VALUES ('llm_unheld', '{account}', 'svc-default', 'openai', 'm', 0, 999, 'reserved', {})",
            crate::support::NOW_MS
        ))
        .await
        .expect("insert");
    assert_eq!(app.state.llm.release_stale(svc_llm::STALE_AFTER_MS).await.expect("sweep"), 0, "not stale yet");
    app.clock.advance_ms(svc_llm::STALE_AFTER_MS + 1);
    assert_eq!(app.state.llm.release_stale(svc_llm::STALE_AFTER_MS).await.expect("sweep"), 2);
    assert_eq!(app.balance(&account).await, 1_000_000, "the hold came back, and only the hold");
    assert_eq!(app.state.llm.release_stale(svc_llm::STALE_AFTER_MS).await.expect("sweep"), 0, "once");
    assert_eq!(app.balance(&account).await, 1_000_000);
}
