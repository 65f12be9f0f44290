//! A fake of the chat platform's Bot API (`/bot<token>/<method>`), the network edge of svc's
//! chat-bot channel, plus a way to play a user so the channel can be tried offline.
//!
//! * A token is `<digits>:<30 or more of [A-Za-z0-9_-]>`; one holding `revoked` is refused
//!   as the platform refuses a revoked one (401). `getMe` names the bot `sim_<digits>_bot`.
//! * `setWebhook {url, secret_token}` registers where updates go; `deleteWebhook` removes it;
//!   `getUpdates` while a webhook is set is the platform's 409.
//! * `sendMessage` and the other outbound methods are recorded and answered as the platform does.
//! * `POST /simulate/{token}/message {"chat_id", "text"}` plays a user: the update is posted to
//!   the bot's webhook with its secret header, as the platform delivers it (`update_id`s
//!   increase). `GET /simulate/{token}/sent` lists what the bot sent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// The fake Bot API's state; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct FakeBotApi {
    state: Arc<Mutex<BotState>>,
}

#[derive(Debug, Default)]
struct BotState {
    /// Webhook (url, secret) by token.
    webhooks: HashMap<String, (String, String)>,
    /// What each bot sent, oldest first.
    sent: HashMap<String, Vec<Value>>,
    /// Every method called, as `token method`.
    calls: Vec<String>,
    next_update: i64,
}

impl FakeBotApi {
    /// The Bot API and the user-playing routes.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/simulate/{token}/message", post(simulate_message))
            .route("/simulate/{token}/sent", get(simulate_sent))
            .route("/{bot}/{method}", post(method).get(method))
            .route("/file/{bot}/{*path}", get(file))
            .with_state(self.clone())
    }

    /// What bot `token` sent through `sendMessage`, oldest first.
    pub fn sent(&self, token: &str) -> Vec<Value> {
        self.lock().sent.get(token).cloned().unwrap_or_default()
    }

    /// The webhook registered for `token`: (url, secret).
    pub fn webhook(&self, token: &str) -> Option<(String, String)> {
        self.lock().webhooks.get(token).cloned()
    }

    /// Every method called on bot `token`, in order.
    pub fn calls(&self, token: &str) -> Vec<String> {
        let prefix = format!("{token} ");
        self.lock().calls.iter().filter_map(|c| c.strip_prefix(&prefix).map(str::to_owned)).collect()
    }

    /// A user's update for `token`'s bot, as the platform would deliver it: (update, webhook).
    pub fn user_update(&self, token: &str, chat_id: i64, text: &str) -> (Value, Option<(String, String)>) {
        let mut state = self.lock();
        state.next_update += 1;
        let id = 100_000 + state.next_update;
        let update = json!({
            "update_id": id,
            "message": {
                "message_id": id,
                "from": {"id": chat_id, "is_bot": false, "first_name": "Sim", "language_code": "en"},
                "chat": {"id": chat_id, "type": "private", "first_name": "Sim"},
                "date": 1_790_000_000 + id,
                "text": text,
            },
        });
        (update, state.webhooks.get(token).cloned())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BotState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn valid(token: &str) -> bool {
    let Some((id, secret)) = token.split_once(':') else { return false };
    !id.is_empty()
        && id.chars().all(|c| c.is_ascii_digit())
        && secret.len() >= 30
        && secret.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !token.contains("revoked")
}

fn ok(result: Value) -> Response {
    axum::Json(json!({"ok": true, "result": result})).into_response()
}

fn refused(status: StatusCode, description: &str) -> Response {
    (status, axum::Json(json!({"ok": false, "error_code": status.as_u16(), "description": description})))
        .into_response()
}

/// A method's parameters, from a JSON or form body.
fn params(headers: &HeaderMap, body: &[u8]) -> Value {
    let kind = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
    if kind.starts_with("application/x-www-form-urlencoded") {
        let pairs: serde_json::Map<String, Value> = String::from_utf8_lossy(body)
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| (k.to_owned(), Value::from(v.replace('+', " "))))
            .collect();
        return Value::Object(pairs);
    }
    serde_json::from_slice(body).unwrap_or_else(|_| json!({}))
}

async fn method(
    State(fake): State<FakeBotApi>,
    Path((bot, name)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(token) = bot.strip_prefix("bot").filter(|t| valid(t)) else {
        return refused(StatusCode::UNAUTHORIZED, "Unauthorized");
    };
    let p = params(&headers, &body);
    let mut state = fake.lock();
    state.calls.push(format!("{token} {name}"));
    let id: i64 = token.split(':').next().and_then(|n| n.parse().ok()).unwrap_or(0);
    match name.as_str() {
        "getMe" => ok(
            json!({"id": id, "is_bot": true, "first_name": "svc agent", "username": format!("sim_{id}_bot"), "can_join_groups": true}),
        ),
        "setWebhook" => {
            let url = p["url"].as_str().unwrap_or_default().to_owned();
            if url.is_empty() {
                state.webhooks.remove(token);
            } else {
                let secret = p["secret_token"].as_str().unwrap_or_default().to_owned();
                state.webhooks.insert(token.to_owned(), (url, secret));
            }
            ok(json!(true))
        }
        "deleteWebhook" => {
            state.webhooks.remove(token);
            ok(json!(true))
        }
        "getWebhookInfo" => {
            let url = state.webhooks.get(token).map(|w| w.0.clone()).unwrap_or_default();
            ok(json!({"url": url, "has_custom_certificate": false, "pending_update_count": 0}))
        }
        "getUpdates" if state.webhooks.contains_key(token) => refused(
            StatusCode::CONFLICT,
            "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
        ),
        "getUpdates" => ok(json!([])),
        "sendMessage" => {
            let sent = state.sent.entry(token.to_owned()).or_default();
            let message = json!({
                "message_id": sent.len() + 1,
                "from": {"id": id, "is_bot": true, "first_name": "svc agent"},
                "chat": {"id": p["chat_id"], "type": "private"},
                "date": 1_790_000_000,
                "text": p["text"],
            });
            sent.push(message.clone());
            ok(message)
        }
        "sendChatAction" | "setMyCommands" | "deleteMyCommands" | "setMyDescription" | "setChatMenuButton" => {
            ok(json!(true))
        }
        "getMyCommands" => ok(json!([])),
        _ => refused(StatusCode::NOT_FOUND, "Not Found: method not found"),
    }
}

/// `/file/bot<token>/<path>`: a user's file, made up from its path.
async fn file(Path((bot, path)): Path<(String, String)>) -> Response {
    if !bot.strip_prefix("bot").is_some_and(valid) {
        return refused(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    format!("simulated file {path}").into_response()
}

async fn simulate_message(State(fake): State<FakeBotApi>, Path(token): Path<String>, body: Bytes) -> Response {
    let p: Value = serde_json::from_slice(&body).unwrap_or_else(|_| json!({}));
    let chat_id = p["chat_id"].as_i64().unwrap_or(555);
    let text = p["text"].as_str().unwrap_or("hello");
    let (update, webhook) = fake.user_update(&token, chat_id, text);
    let Some((url, secret)) = webhook else {
        return (StatusCode::CONFLICT, axum::Json(json!({"error": "this bot has no webhook set"}))).into_response();
    };
    let delivered = post_json(&url, &secret, &update).await;
    axum::Json(json!({"update_id": update["update_id"], "delivered": delivered})).into_response()
}

async fn simulate_sent(State(fake): State<FakeBotApi>, Path(token): Path<String>) -> Response {
    axum::Json(fake.sent(&token)).into_response()
}

/// Posts an update to a webhook as the platform does; the status it got (0 when unreachable).
async fn post_json(url: &str, secret: &str, update: &Value) -> u16 {
    let Ok(uri) = url.parse::<axum::http::Uri>() else { return 0 };
    let Some(authority) = uri.authority().map(|a| a.to_string()) else { return 0 };
    let Ok(stream) = tokio::net::TcpStream::connect(&authority).await else { return 0 };
    let Ok((mut sender, conn)) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await
    else {
        return 0;
    };
    tokio::spawn(conn);
    let request = axum::http::Request::post(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header("host", authority)
        .header("content-type", "application/json")
        .header("x-telegram-bot-api-secret-token", secret)
        .body(http_body_util::Full::new(Bytes::from(update.to_string())));
    let Ok(request) = request else { return 0 };
    sender.send_request(request).await.map_or(0, |r| r.status().as_u16())
}
