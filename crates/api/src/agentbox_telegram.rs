//! The chat-bot channel's two machine-facing routes, beside the catalogue:
//!
//! - `POST /api/agentbox/telegram/webhook/{token_hash}`: the chat platform's deliveries,
//!   authenticated by the secret it sends back (`X-Telegram-Bot-Api-Secret-Token`); answered at
//!   once, the update kept for the agent.
//! - `/api/agentbox/telegram/bot<token>/<method>`: the Bot-API shim the sandboxed agent talks
//!   to instead of the platform (its `apiRoot`), answering in the platform's own shape.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, post};
use serde_json::{Value, json};
use svc_agentbox::telegram::{MAX_UPDATE_BYTES, RelayRefusal, TELEGRAM_PATH};

use crate::error::ApiError;
use crate::state::AppState;

/// The relay and the shim.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(&format!("{TELEGRAM_PATH}/webhook/{{token_hash}}"), post(relay))
        .route(&format!("{TELEGRAM_PATH}/{{bot}}/{{method}}"), any(shim))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_UPDATE_BYTES * 50))
}

async fn relay(State(state): State<AppState>, Path(hash): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    if body.len() > MAX_UPDATE_BYTES {
        return ApiError::PayloadTooLarge { limit: MAX_UPDATE_BYTES }.into_response();
    }
    let secret = headers.get("x-telegram-bot-api-secret-token").and_then(|v| v.to_str().ok());
    match state.agentbox.telegram().relay(&hash, secret, &body).await {
        Ok(()) => (StatusCode::OK, axum::Json(json!({"ok": true}))).into_response(),
        Err(RelayRefusal::UnknownBot) => ApiError::Missing("no bot is relayed here".into()).into_response(),
        Err(RelayRefusal::BadSecret) => {
            ApiError::Unauthorized("The secret token does not match this bot's webhook.").into_response()
        }
        Err(RelayRefusal::Malformed) => ApiError::field(
            vec!["body".into(), "update_id".into()],
            "a delivery is one update with an integer update_id",
            "value_error",
        )
        .into_response(),
    }
}

async fn shim(
    State(state): State<AppState>,
    Path((bot, method)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(token) = bot.strip_prefix("bot") else {
        return ApiError::NotFound.into_response();
    };
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    // Parameters as the platform takes them: query string, form or JSON body.
    let mut params = serde_json::Map::new();
    let mut add_pairs = |text: &str| {
        for (key, value) in serde_urlencoded::from_str::<Vec<(String, String)>>(text).unwrap_or_default() {
            params.insert(key, Value::from(value));
        }
    };
    if let Some(query) = &query {
        add_pairs(query);
    }
    if content_type.starts_with("application/x-www-form-urlencoded") {
        add_pairs(&String::from_utf8_lossy(&body));
    } else if content_type.starts_with("application/json")
        && let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&body)
    {
        params.extend(fields);
    }
    let (status, answer) =
        state.agentbox.telegram().bot_api(token, &method, &Value::Object(params), &body, &content_type).await;
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    (status, [(header::CONTENT_TYPE, "application/json")], answer).into_response()
}
