//! Control characters in every field a client names, on SQLite and on PostgreSQL (which refuses
//! NUL in text, so a NUL that reached it was a 500): path parameters, query values, body strings
//! and object keys of every documented operation, the seller invoke, the chat relay, the LLM
//! proxy and the gateway log. Each is a 422 naming the field, never a 5xx.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use svc_accounts::Scope;

use crate::support::{Database, Reply, Setup, TestApp};

/// Control characters refused in identifiers, path and query values, percent-encoded: NUL, the
/// other C0 controls (tab and newline among them), DEL and C1 controls (NEL, the last one).
const IN_IDS: [&str; 8] = ["%00", "%01", "%09", "%0A", "%1B", "%7F", "%C2%85", "%C2%9F"];

/// What a body string may not carry: NUL, the one character free text never needs and
/// PostgreSQL cannot keep.
const NUL: &str = "\u{0}";

/// Control characters refused in a body's object keys (a key is a name): NUL, a C0 control,
/// DEL and a C1 control.
const IN_KEYS: [&str; 4] = ["\u{0}", "\u{1b}", "\u{7f}", "\u{85}"];

/// One hostile request, and the field its 422 must name.
struct Case {
    method: Method,
    uri: String,
    body: Option<String>,
    headers: Vec<(&'static str, String)>,
    loc: Vec<Value>,
}

impl Case {
    fn new(method: &Method, uri: String, body: Option<String>, loc: Vec<Value>) -> Self {
        Case { method: method.clone(), uri, body, headers: Vec::new(), loc }
    }
}

/// `template` with each `{param}` filled: `hostile` for `target`, a harmless value elsewhere.
fn fill(template: &str, target: Option<&str>, hostile: &str) -> String {
    template
        .split('/')
        .map(|segment| match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) if Some(name) == target => format!("ab{hostile}cd"),
            Some(_) => "x1".to_owned(),
            None => segment.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The property names of a body schema, following a `$ref` into the document's components.
fn body_properties(document: &Value, schema: &Value) -> Vec<String> {
    let resolved = match schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")) {
        Some(name) => &document["components"]["schemas"][name],
        None => schema,
    };
    resolved["properties"].as_object().map(|props| props.keys().cloned().collect()).unwrap_or_default()
}

/// Every hostile case of every operation the OpenAPI document lists.
fn documented_cases() -> Vec<Case> {
    let document = svc_catalogue::openapi::document(svc_catalogue::catalogue());
    let mut cases = Vec::new();
    for (template, operations) in document["paths"].as_object().expect("paths") {
        // The LLM proxy speaks OpenAI's dialect and authenticates first: its own cases below.
        if template.starts_with(svc_catalogue::routes::llm::BASE_PATH) {
            continue;
        }
        for (method, operation) in operations.as_object().expect("operations") {
            let Ok(method) = method.to_uppercase().parse::<Method>() else { continue };
            let parameters = operation["parameters"].as_array().cloned().unwrap_or_default();
            let named = |place: &str| -> Vec<String> {
                parameters
                    .iter()
                    .filter(|p| p["in"] == place)
                    .filter_map(|p| p["name"].as_str().map(str::to_owned))
                    .collect()
            };
            let body = operation["requestBody"]["content"]["application/json"]["schema"].clone();
            // A harmless body where one is required, so the case is judged by its hostile part.
            let plain_body = (!body.is_null()).then(|| "{}".to_owned());
            for name in named("path") {
                for hostile in IN_IDS {
                    let uri = fill(template, Some(&name), hostile);
                    cases.push(Case::new(&method, uri, plain_body.clone(), vec![json!("path"), json!(name)]));
                }
            }
            for name in named("query") {
                for hostile in IN_IDS {
                    let uri = format!("{}?{name}=ab{hostile}cd", fill(template, None, ""));
                    cases.push(Case::new(&method, uri, plain_body.clone(), vec![json!("query"), json!(name)]));
                }
            }
            if method == Method::GET {
                // A query parameter no route names is refused for its name alike.
                let uri = format!("{}?ab%00cd=1", fill(template, None, ""));
                cases.push(Case::new(&method, uri, None, vec![json!("query"), json!("ab\u{0}cd")]));
            }
            // The chat platform's deliveries are kept as sent (a NUL in one is an escape, text
            // that any store keeps); an invoke's body needs an agent that sells: below.
            let delivered = template.contains("/telegram/webhook/") || template.contains("/invoke");
            if body.is_null() || delivered {
                continue;
            }
            let uri = fill(template, None, "");
            let properties = body_properties(&document, &body);
            for property in &properties {
                let text = json!({ property: format!("ab{NUL}cd") }).to_string();
                cases.push(Case::new(&method, uri.clone(), Some(text), vec![json!("body"), json!(property)]));
            }
            if let Some(first) = properties.first() {
                let nested = json!({ first: {"inner": [format!("ab{NUL}cd")]} }).to_string();
                let loc = vec![json!("body"), json!(first), json!("inner"), json!(0)];
                cases.push(Case::new(&method, uri.clone(), Some(nested), loc));
            }
            for hostile in IN_KEYS {
                let key = format!("ab{hostile}cd");
                let text = json!({ &key: "x" }).to_string();
                cases.push(Case::new(&method, uri.clone(), Some(text), vec![json!("body"), json!(key)]));
            }
        }
    }
    cases
}

/// Asserts no 5xx, and a 422 naming `loc` among its errors.
fn check(case: &Case, reply: &Reply) -> Result<(), String> {
    let what = format!("{} {} {:?}", case.method, case.uri, case.body);
    if reply.status.is_server_error() {
        return Err(format!("{what}: {} {}", reply.status, reply.text()));
    }
    if reply.status != StatusCode::UNPROCESSABLE_ENTITY {
        return Err(format!("{what}: {} instead of a 422: {}", reply.status, reply.text()));
    }
    let body: Value = serde_json::from_slice(&reply.body).map_err(|e| format!("{what}: not JSON ({e})"))?;
    let named = body["detail"]
        .as_array()
        .is_some_and(|errors| errors.iter().any(|e| e["loc"].as_array().map(Vec::as_slice) == Some(&case.loc)));
    if !named {
        return Err(format!("{what}: no error at {:?} in {body}", case.loc));
    }
    Ok(())
}

/// Sends every case and collects what went wrong, so one run shows every field at fault. A
/// case with no credentials of its own is sent signed in: account routes ask who calls before
/// they read what was sent, and a stranger's hostile input is a 401 there.
async fn sweep(app: &TestApp, cases: &[Case]) -> Vec<String> {
    let wallet = svc_chain_evm::Payer::from_key(crate::support::PAYER_KEY).expect("key");
    let signed_in = format!("Bearer {}", app.sign_in(&wallet).await);
    let mut failures = Vec::new();
    for case in cases {
        let mut headers: Vec<(&str, &str)> = case.headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        if headers.is_empty() {
            headers.push(("authorization", &signed_in));
        }
        let reply = app.call_with(&case.method, &case.uri, case.body.as_deref(), &headers).await;
        if let Err(failure) = check(case, &reply) {
            failures.push(failure);
        }
    }
    failures
}

/// An agent registered and selling, so its invoke reaches the body check.
async fn selling_agent(app: &TestApp) -> String {
    let (_, key) = app.account_with_credits("0", &[Scope::Agents]).await;
    let headers = [("x-api-key", key.as_str())];
    let body = json!({"name": "Echo", "endpoint": "http://127.0.0.1:9/run"}).to_string();
    let created = app.call_with(&Method::POST, "/agents", Some(&body), &headers).await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.text());
    let id = created.json()["agent"]["id"].as_str().expect("id").to_owned();
    let config = json!({
        "enabled": true,
        "pricing": {"model": "per_request", "amount": "0.05", "currency": "USDC"},
        "wallet_address": "0x209693bc6afc0c5328ba36faf03c514ef312287c",
        "network": "ethereum",
    })
    .to_string();
    let sold = app.call_with(&Method::PUT, &format!("/agents/{id}/x402-config"), Some(&config), &headers).await;
    assert_eq!(sold.status, StatusCode::OK, "{}", sold.text());
    id
}

/// The routes served beside the catalogue, with what each needs to reach its checks.
async fn beside_the_catalogue(app: &TestApp) -> Vec<Case> {
    let mut cases = Vec::new();
    // The gateway log's one input: where to resume, which must be a log position (a header
    // carries no C0 control but tab, and may carry obs-text).
    let (_, key) = app.account_with_credits("0", &[Scope::Gateway]).await;
    for value in ["1\t2", "\u{85}1", "1\u{9f}"] {
        let mut case = Case::new(
            &Method::GET,
            "/api/agentbox/gateway/logs".into(),
            None,
            vec![json!("header"), json!("last-event-id")],
        );
        case.headers = vec![("x-api-key", key.clone()), ("last-event-id", value.to_owned())];
        cases.push(case);
    }
    // The invoke's body: the agent's schema is `{query: string}`.
    let agent = selling_agent(app).await;
    let invoke = format!("/x402/agents/{agent}/invoke");
    let text = json!({ "query": format!("ab{NUL}cd") }).to_string();
    cases.push(Case::new(&Method::POST, invoke.clone(), Some(text), vec![json!("body"), json!("query")]));
    for hostile in IN_KEYS {
        let key = format!("ab{hostile}cd");
        let text = json!({ "query": "hi", &key: "x" }).to_string();
        cases.push(Case::new(&Method::POST, invoke.clone(), Some(text), vec![json!("body"), json!(key)]));
    }
    cases
}

/// LLM proxy calls with a NUL in a body string or key; answered in OpenAI's error shape, with
/// the field in `param`.
async fn llm_failures(app: &TestApp) -> Vec<String> {
    let (_, key) = app.account_with_credits("5", &[Scope::Data]).await;
    let reply = app.call_with(&Method::POST, "/api/account/llm-token", None, &[("x-api-key", &key)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let bearer = format!("Bearer {}", reply.json()["token"].as_str().expect("token"));
    let hostile = format!("ab{NUL}cd");
    let cases = [
        (json!({"model": hostile, "messages": [{"role": "user", "content": "hi"}]}), "model"),
        (json!({"model": "svc-default", "messages": [{"role": "user", "content": hostile}]}), "messages[0].content"),
        (
            json!({"model": "svc-default", "messages": [{"role": "user", "content": [{"type": "text", "text": hostile}]}]}),
            "messages[0].content[0].text",
        ),
        (json!({"model": "svc-default", "messages": [{"role": "user", "content": "hi"}], "user": hostile}), "user"),
        (json!({"model": "svc-default", "messages": [{"role": "user", "content": "hi"}], &hostile: 1}), &*hostile),
    ];
    let chat = |body: Value| {
        let bearer = bearer.clone();
        async move {
            let headers = [("authorization", bearer.as_str())];
            app.call_with(&Method::POST, "/api/v1/llm/chat/completions", Some(&body.to_string()), &headers).await
        }
    };
    let mut failures = Vec::new();
    for (body, param) in cases {
        let reply = chat(body.clone()).await;
        let answer: Value = serde_json::from_slice(&reply.body).unwrap_or(Value::Null);
        if reply.status != StatusCode::UNPROCESSABLE_ENTITY || answer["error"]["param"] != param {
            failures.push(format!("LLM {body}: {} {}", reply.status, reply.text()));
        }
    }
    // Newlines and tabs are text: a message with them is served.
    let reply =
        chat(json!({"model": "svc-default", "messages": [{"role": "user", "content": "line one\n\tline two\r\n"}]}))
            .await;
    if reply.status != StatusCode::OK {
        failures.push(format!("LLM with newlines and tabs: {} {}", reply.status, reply.text()));
    }
    failures
}

/// The Bot-API shim takes no field a 422 could name (it answers in the platform's shape, and
/// hashes the token before any lookup), nor do the gateway log's credentials: none of their
/// inputs may be a 5xx.
async fn unnamed_failures(app: &TestApp) -> Vec<String> {
    let (_, key) = app.account_with_credits("0", &[Scope::Gateway]).await;
    let plain = |method: &Method, uri: String| Case::new(method, uri, None, Vec::new());
    let mut cases = Vec::new();
    for hostile in IN_IDS {
        cases.push(plain(&Method::POST, format!("/api/agentbox/telegram/bot1:ab{hostile}cd/getMe")));
        cases.push(plain(&Method::POST, format!("/api/agentbox/telegram/bot1:abcd/get{hostile}Me")));
        cases.push(plain(&Method::GET, format!("/api/agentbox/telegram/file/bot1:ab{hostile}cd/photos/x.jpg")));
        cases.push(plain(&Method::GET, format!("/api/agentbox/telegram/file/bot1:abcd/photos/{hostile}.jpg")));
    }
    // A header carries no C0 control but tab, and no NUL at all; obs-text bytes it may.
    for value in ["a\tb", "\u{85}", "\u{9f}"] {
        let mut case = plain(&Method::GET, "/api/agentbox/gateway/logs".into());
        case.headers = vec![("x-api-key", format!("{key}{value}"))];
        cases.push(case);
        let mut case = plain(&Method::GET, "/api/agentbox/gateway/logs".into());
        case.headers = vec![("authorization", format!("Bearer a{value}b"))];
        cases.push(case);
    }
    let mut failures = Vec::new();
    for case in cases {
        let headers: Vec<(&str, &str)> = case.headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let reply = app.call_with(&case.method, &case.uri, None, &headers).await;
        if reply.status.is_server_error() {
            failures.push(format!("{} {}: {} {}", case.method, case.uri, reply.status, reply.text()));
        }
    }
    failures
}

async fn every_control_character_is_refused_by_name(database: Database) {
    let app = TestApp::on(database, Setup::default()).await;
    let mut cases = documented_cases();
    cases.extend(beside_the_catalogue(&app).await);
    let mut failures = sweep(&app, &cases).await;
    failures.extend(llm_failures(&app).await);
    failures.extend(unnamed_failures(&app).await);
    assert!(
        failures.is_empty(),
        "{} of {} cases on {database:?}:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[tokio::test]
async fn control_characters_are_422s_naming_the_field_on_sqlite() {
    every_control_character_is_refused_by_name(Database::Sqlite).await;
}

#[tokio::test]
async fn control_characters_are_422s_naming_the_field_on_postgres() {
    if Database::available().contains(&Database::Postgres) {
        every_control_character_is_refused_by_name(Database::Postgres).await;
    }
}
