//! A fake E2B-compatible sandbox service, the network edge of svc's remote sandbox backend.
//!
//! * Control plane (`X-API-Key: simulated-sandbox-key`): `POST /sandboxes`, `GET /sandboxes`
//!   (filtered by `metadata=key=value`), `POST /sandboxes/{id}/connect`,
//!   `POST /sandboxes/{id}/timeout`, `DELETE /sandboxes/{id}`.
//! * Each sandbox's agent at `/envd/{id}` (`X-Access-Token`): `GET|POST /files?path=`
//!   (uploads as `multipart/form-data`, field `file`) and `POST /process.Process/Start` in
//!   Connect's JSON envelopes.
//! * Its "shell" knows the few commands a backend runs: starting a detached process
//!   (`nohup setsid`) makes the sandbox's gateway live and log a line; a `curl` of
//!   `$SVC_PROBE_URL` answers 200 while it lives; `kill -0` tells whether it lives; `kill -TERM`
//!   stops it; `printf … "$SVC_NOTE" >> log` appends to its log; `tail -c +$SVC_LOG_FROM … |
//!   head -c $SVC_LOG_MAX` and `wc -c` read it. Anything else exits 127.
//!   [`FakeSandboxes::crash`] ends a gateway as a crash would.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use serde_json::{Value, json};

/// The control-plane key the fake accepts.
pub const SANDBOX_API_KEY: &str = "simulated-sandbox-key";
/// Where the fake's gateways log (the remote backend's log path).
const LOG: &str = "/home/agent/.svc/gateway.log";

/// One fake sandbox.
#[derive(Debug, Clone, Default)]
pub struct FakeSandbox {
    /// Its metadata, as created.
    pub metadata: Value,
    /// Its files by absolute path.
    pub files: HashMap<String, Vec<u8>>,
    /// Whether its gateway runs.
    pub alive: bool,
    /// The environment its gateway was started with.
    pub gateway_env: HashMap<String, String>,
    /// The gateway's command line.
    pub gateway_argv: Vec<String>,
    /// Its agent's token.
    token: String,
}

/// The fake service; cheap to clone (shared state).
#[derive(Debug, Clone, Default)]
pub struct FakeSandboxes {
    state: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    sandboxes: HashMap<String, FakeSandbox>,
    next: u32,
    renewals: u32,
}

impl FakeSandboxes {
    /// Serves the fake on a free loopback port; its base URL.
    pub async fn spawn(&self) -> std::io::Result<String> {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let addr = listener.local_addr()?;
        let router = Router::new()
            .route("/sandboxes", post(create).get(list))
            .route("/sandboxes/{id}", axum::routing::delete(kill))
            .route("/sandboxes/{id}/connect", post(connect))
            .route("/sandboxes/{id}/timeout", post(renew))
            .route("/envd/{id}/files", get(read_file).post(write_file))
            .route("/envd/{id}/process.Process/Start", post(start))
            .with_state(self.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(format!("http://{addr}"))
    }

    /// The sandboxes that exist (not killed), by the provider's id.
    pub fn sandboxes(&self) -> HashMap<String, FakeSandbox> {
        self.lock().sandboxes.clone()
    }

    /// How often lifetimes were renewed.
    pub fn renewals(&self) -> u32 {
        self.lock().renewals
    }

    /// Ends the gateway of the sandbox tagged `gateway` as a crash would.
    pub fn crash(&self, gateway: &str) {
        for sandbox in self.lock().sandboxes.values_mut() {
            if sandbox.metadata["svc_gateway"] == gateway {
                sandbox.alive = false;
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn authorised(headers: &HeaderMap) -> bool {
    headers.get("x-api-key").and_then(|v| v.to_str().ok()) == Some(SANDBOX_API_KEY)
}

fn described(id: &str, sandbox: &FakeSandbox) -> Value {
    json!({"sandboxID": id, "templateID": "svc-agent", "envdAccessToken": sandbox.token, "domain": "fake", "metadata": sandbox.metadata})
}

async fn create(State(fake): State<FakeSandboxes>, headers: HeaderMap, body: Bytes) -> Response {
    if !authorised(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else { return StatusCode::BAD_REQUEST.into_response() };
    if request["templateID"].as_str().is_none_or(str::is_empty) {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let mut inner = fake.lock();
    inner.next += 1;
    let id = format!("sbx{:04}", inner.next);
    let sandbox = FakeSandbox {
        metadata: request["metadata"].clone(),
        token: format!("envd-token-{}", inner.next),
        ..FakeSandbox::default()
    };
    let answer = described(&id, &sandbox);
    inner.sandboxes.insert(id, sandbox);
    (StatusCode::CREATED, axum::Json(answer)).into_response()
}

async fn list(
    State(fake): State<FakeSandboxes>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if !authorised(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let filter = query.get("metadata").and_then(|m| m.split_once('='));
    let listed: Vec<Value> = fake
        .lock()
        .sandboxes
        .iter()
        .filter(|(_, s)| filter.is_none_or(|(k, v)| s.metadata[k] == v))
        .map(|(id, s)| json!({"sandboxID": id, "metadata": s.metadata}))
        .collect();
    axum::Json(listed).into_response()
}

async fn connect(State(fake): State<FakeSandboxes>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    if !authorised(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    match fake.lock().sandboxes.get(&id) {
        Some(sandbox) => axum::Json(described(&id, sandbox)).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn renew(State(fake): State<FakeSandboxes>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    if !authorised(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let mut inner = fake.lock();
    if !inner.sandboxes.contains_key(&id) {
        return StatusCode::NOT_FOUND.into_response();
    }
    inner.renewals += 1;
    StatusCode::NO_CONTENT.into_response()
}

async fn kill(State(fake): State<FakeSandboxes>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    if !authorised(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    match fake.lock().sandboxes.remove(&id) {
        Some(_) => StatusCode::NO_CONTENT.into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Runs `work` on sandbox `id` if the request carries its token.
fn with_sandbox<T>(
    fake: &FakeSandboxes,
    id: &str,
    headers: &HeaderMap,
    work: impl FnOnce(&mut FakeSandbox) -> T,
) -> Result<T, StatusCode> {
    let mut inner = fake.lock();
    let sandbox = inner.sandboxes.get_mut(id).ok_or(StatusCode::NOT_FOUND)?;
    if headers.get("x-access-token").and_then(|v| v.to_str().ok()) != Some(sandbox.token.as_str()) {
        return Err(StatusCode::UNAUTHORIZED);
    }
    Ok(work(sandbox))
}

async fn read_file(
    State(fake): State<FakeSandboxes>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let path = query.get("path").cloned().unwrap_or_default();
    match with_sandbox(&fake, &id, &headers, |s| s.files.get(&path).cloned()) {
        Ok(Some(bytes)) => bytes.into_response(),
        Ok(None) => StatusCode::NOT_FOUND.into_response(),
        Err(status) => status.into_response(),
    }
}

async fn write_file(
    State(fake): State<FakeSandboxes>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let Some(path) = query.get("path").cloned().filter(|p| p.starts_with('/')) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(contents) = multipart_file(&headers, &body) else { return StatusCode::BAD_REQUEST.into_response() };
    match with_sandbox(&fake, &id, &headers, |s| s.files.insert(path, contents)) {
        Ok(_) => axum::Json(json!([{"path": query.get("path"), "type": "file"}])).into_response(),
        Err(status) => status.into_response(),
    }
}

/// The `file` field of a `multipart/form-data` body.
fn multipart_file(headers: &HeaderMap, body: &[u8]) -> Option<Vec<u8>> {
    let kind = headers.get("content-type")?.to_str().ok()?;
    let boundary = format!("--{}", kind.split("boundary=").nth(1)?.trim_matches('"'));
    let text = body;
    let start = find(text, boundary.as_bytes())? + boundary.len();
    let rest = &text[start..];
    let headers_end = find(rest, b"\r\n\r\n")? + 4;
    if !String::from_utf8_lossy(&rest[..headers_end]).contains("name=\"file\"") {
        return None;
    }
    let content = &rest[headers_end..];
    let end = find(content, format!("\r\n{boundary}").as_bytes())?;
    Some(content[..end].to_vec())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

async fn start(State(fake): State<FakeSandboxes>, headers: HeaderMap, Path(id): Path<String>, body: Bytes) -> Response {
    if headers.get("content-type").and_then(|v| v.to_str().ok()) != Some("application/connect+json") || body.len() < 5 {
        return StatusCode::UNSUPPORTED_MEDIA_TYPE.into_response();
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body[5..]) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let process = &request["process"];
    let args: Vec<String> =
        process["args"].as_array().into_iter().flatten().filter_map(|a| a.as_str().map(str::to_owned)).collect();
    let env: HashMap<String, String> = process["envs"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .collect();
    let script = args.get(1).cloned().unwrap_or_default();
    let outcome = with_sandbox(&fake, &id, &headers, |sandbox| shell(sandbox, &script, &args, env));
    let (code, stdout) = match outcome {
        Ok(done) => done,
        Err(status) => return status.into_response(),
    };
    let mut events = envelope(0, &json!({"event": {"start": {"pid": 100}}}));
    if !stdout.is_empty() {
        let data = base64::engine::general_purpose::STANDARD.encode(stdout);
        events.extend(envelope(0, &json!({"event": {"data": {"stdout": data}}})));
    }
    events.extend(envelope(0, &json!({"event": {"end": {"exitCode": code, "exited": true}}})));
    events.extend(envelope(2, &json!({})));
    ([("content-type", "application/connect+json")], events).into_response()
}

/// The few commands the remote backend runs.
fn shell(sandbox: &mut FakeSandbox, script: &str, args: &[String], env: HashMap<String, String>) -> (i64, String) {
    let mut log = |line: &str| {
        let file = sandbox.files.entry(LOG.to_owned()).or_default();
        file.extend_from_slice(line.as_bytes());
        file.push(b'\n');
    };
    if script.contains("nohup setsid") {
        let note = format!("fake gateway listening on 127.0.0.1:18789 ({} variables)", env.len());
        log(&note);
        sandbox.gateway_argv = args.iter().skip(3).cloned().collect();
        sandbox.gateway_env = env;
        sandbox.alive = true;
        sandbox.files.insert("/home/agent/.svc/pid".into(), b"4242\n".to_vec());
        return (0, "4242\n".into());
    }
    if script.contains("SVC_LOG_FROM") {
        let log = sandbox.files.get(LOG).cloned().unwrap_or_default();
        let number = |key: &str| env.get(key).and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
        let from = number("SVC_LOG_FROM").saturating_sub(1).min(log.len());
        let end = from.saturating_add(number("SVC_LOG_MAX")).min(log.len());
        return (0, String::from_utf8_lossy(&log[from..end]).into_owned());
    }
    if script.starts_with("wc -c") {
        return (0, sandbox.files.get(LOG).map_or(0, Vec::len).to_string());
    }
    if script.contains("SVC_NOTE") {
        log(env.get("SVC_NOTE").map_or("", String::as_str));
        return (0, String::new());
    }
    if script.contains("SVC_PROBE_URL") {
        return (0, if sandbox.alive { "200" } else { "000" }.into());
    }
    if script.contains("kill -TERM") {
        if sandbox.alive {
            log("fake gateway stopping");
        }
        sandbox.alive = false;
        return (0, String::new());
    }
    if script.starts_with("kill -0") {
        return (if sandbox.alive { 0 } else { 1 }, String::new());
    }
    (127, String::new())
}

fn envelope(flags: u8, message: &Value) -> Vec<u8> {
    let json = serde_json::to_vec(message).unwrap_or_default();
    let mut out = vec![flags];
    out.extend_from_slice(&u32::try_from(json.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(&json);
    out
}
