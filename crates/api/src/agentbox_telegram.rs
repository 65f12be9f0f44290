//! The chat-bot channel's two machine-facing routes, beside the catalogue:
//!
//! - `POST /api/agentbox/telegram/webhook/{token_hash}`: the chat platform's deliveries,
//!   authenticated by the secret it sends back (`X-Telegram-Bot-Api-Secret-Token`); answered at
//!   once, the update kept for the agent.
//! - `/api/agentbox/telegram/bot<token>/<method>`: the Bot-API shim the sandboxed agent talks
//!   to instead of the platform (its `apiRoot`), answering in the platform's own shape; and
//!   `/api/agentbox/telegram/file/bot<token>/<path>`, the files users send.

use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, post};
use serde_json::json;
use svc_agentbox::telegram::{
    MAX_FORWARD, MAX_POLL_PARAMS, MAX_UPDATE_BYTES, RelayRefusal, ShimMethod, TELEGRAM_PATH, shim_params,
};

use crate::error::ApiError;
use crate::state::AppState;

/// The relay and the shim. The relay reads at most one update's worth; the shim checks the
/// token before it reads a body at all.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            &format!("{TELEGRAM_PATH}/webhook/{{token_hash}}"),
            post(relay).fallback(|| async { ApiError::MethodNotAllowed { allow: "POST" } }),
        )
        .route(&format!("{TELEGRAM_PATH}/{{bot}}/{{method}}"), any(shim))
        .route(
            &format!("{TELEGRAM_PATH}/file/{{bot}}/{{*path}}"),
            axum::routing::get(file).fallback(|| async { ApiError::MethodNotAllowed { allow: "GET" } }),
        )
}

async fn relay(State(state): State<AppState>, Path(hash): Path<String>, request: axum::extract::Request) -> Response {
    // The hash is looked up in the store. The update itself is kept as the platform sent it:
    // JSON text, where a NUL can only be an escape, which every store keeps.
    if let Err(refused) = svc_catalogue::input::check_names(&[("token_hash", &hash)], None) {
        return ApiError::from(refused).into_response();
    }
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_UPDATE_BYTES).await else {
        return ApiError::PayloadTooLarge { limit: MAX_UPDATE_BYTES }.into_response();
    };
    let secret = parts.headers.get("x-telegram-bot-api-secret-token").and_then(|v| v.to_str().ok());
    match state.agentbox.telegram().relay(&hash, secret, &body).await {
        Ok(()) => (StatusCode::OK, axum::Json(json!({"ok": true}))).into_response(),
        Err(RelayRefusal::UnknownBot) => ApiError::Missing("no bot is relayed here".into()).into_response(),
        // The platform retries what is not answered 2xx: nothing is lost.
        Err(RelayRefusal::NotKept) => ApiError::Unavailable("could not keep a chat update".into()).into_response(),
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
    request: axum::extract::Request,
) -> Response {
    let telegram = state.agentbox.telegram();
    // Who is asking comes first: an unknown token reads no body.
    let Some(token) = bot.strip_prefix("bot") else {
        return ApiError::NotFound.into_response();
    };
    let answer = match telegram.shim_method(token, &method).await {
        Err((status, body)) => (status, body),
        Ok(ShimMethod::GetUpdates { hash }) => {
            let content_type = content_type(request.headers());
            let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_POLL_PARAMS).await else {
                return ApiError::PayloadTooLarge { limit: MAX_POLL_PARAMS }.into_response();
            };
            telegram.get_updates(&hash, &shim_params(query.as_deref(), &content_type, &body)).await
        }
        Ok(ShimMethod::Answer(status, body)) => (status, body),
        Ok(ShimMethod::Forward { method }) => {
            let content_type = content_type(request.headers());
            let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_FORWARD).await else {
                return ApiError::PayloadTooLarge { limit: MAX_FORWARD }.into_response();
            };
            telegram.forward(token, &method, query.as_deref(), &body, &content_type).await
        }
    };
    let status = StatusCode::from_u16(answer.0).unwrap_or(StatusCode::BAD_GATEWAY);
    (status, [(header::CONTENT_TYPE, "application/json")], answer.1).into_response()
}

async fn file(State(state): State<AppState>, Path((bot, path)): Path<(String, String)>) -> Response {
    let Some(token) = bot.strip_prefix("bot") else {
        return ApiError::NotFound.into_response();
    };
    let (status, body) = state.agentbox.telegram().forward_file(token, &path).await;
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let kind = if status.is_success() { "application/octet-stream" } else { "application/json" };
    (status, [(header::CONTENT_TYPE, kind)], body).into_response()
}

fn content_type(headers: &HeaderMap) -> String {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned()
}
