//! The proxy's routes, and the one place its errors become OpenAI's error body
//! `{"error": {"message", "type", "code", "param"}}`.
//!
//! - `POST /api/v1/llm/chat/completions`: `Authorization: Bearer <proxy token>`; a payment
//!   header (`PAYMENT-SIGNATURE` or `X-PAYMENT`) buys credits first when the account has
//!   automatic top-up on.
//! - `GET /api/v1/llm/models`: the aliases, in OpenAI's list shape.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::Llm;
use crate::error::LlmError;
use crate::proxy::{Chat, ChatCall};

/// Where the proxy's routes hang.
pub use svc_catalogue::routes::llm::BASE_PATH;
use svc_catalogue::routes::llm::{CHAT_COMPLETIONS_PATH, MODELS_PATH};

/// The proxy's routes, over `llm`.
pub fn router<S: Clone + Send + Sync + 'static>(llm: Arc<Llm>) -> Router<S> {
    Router::new()
        .route(
            CHAT_COMPLETIONS_PATH,
            post(chat_completions).fallback(|| async { error_response(&LlmError::MethodNotAllowed { allow: "POST" }) }),
        )
        .route(
            MODELS_PATH,
            get(models).fallback(|| async { error_response(&LlmError::MethodNotAllowed { allow: "GET" }) }),
        )
        .with_state(llm)
}

static PAYMENT_SIGNATURE: HeaderName = HeaderName::from_static(svc_x402::PAYMENT_SIGNATURE);
static X_PAYMENT: HeaderName = HeaderName::from_static(svc_x402::X_PAYMENT);

/// `POST /api/v1/llm/chat/completions`.
async fn chat_completions(State(llm): State<Arc<Llm>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let token = svc_accounts::bearer_token(parts.headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()));
    // Who calls, and whether the rate limit admits them, before the body is read.
    let caller = match llm.admit(token).await {
        Ok(caller) => caller,
        Err(err) => return error_response(&err),
    };
    let limit = llm.body_limit();
    let declared =
        parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return error_response(&LlmError::TooLarge { limit });
    }
    let Ok(body) = axum::body::to_bytes(body, limit).await else {
        return error_response(&LlmError::TooLarge { limit });
    };
    let payment_header = parts.headers.get(&PAYMENT_SIGNATURE).or_else(|| parts.headers.get(&X_PAYMENT));
    let payment = match payment_header {
        None => None,
        Some(h) if h.len() > svc_x402::codec::MAX_HEADER_BYTES => {
            return error_response(&LlmError::PaymentRefused {
                reason: "the payment header is too large".into(),
                top_up: None,
            });
        }
        Some(h) => match svc_x402::decode_payment(h.as_bytes()) {
            Some(payment) => Some(payment),
            None => {
                return error_response(&LlmError::PaymentRefused {
                    reason: "the payment header does not decode as an x402 payment".into(),
                    top_up: None,
                });
            }
        },
    };
    let resource = format!("{}{}", base_url(&llm, &parts.headers), parts.uri.path());
    let call = ChatCall { caller, body: &body, payment: payment.as_ref(), resource };
    match llm.chat(call).await {
        Ok(Chat::Whole { json, receipt }) => {
            let mut response = (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], json).into_response();
            add_receipt(&mut response, receipt.as_ref());
            response
        }
        Ok(Chat::Stream { events, receipt }) => {
            let mut response = Response::new(Body::from_stream(events));
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            // Tells a buffering reverse proxy in front to pass each event on at once.
            headers.insert(HeaderName::from_static("x-accel-buffering"), HeaderValue::from_static("no"));
            add_receipt(&mut response, receipt.as_ref());
            response
        }
        Err(err) => error_response(&err),
    }
}

/// The base URL the challenge names: the configured public URL, else the request's host.
fn base_url(llm: &Llm, headers: &HeaderMap) -> String {
    if let Some(url) = &llm.config.public_url {
        return url.trim_end_matches('/').to_owned();
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
    format!("http://{host}")
}

fn add_receipt(response: &mut Response, receipt: Option<&svc_x402::SettleResponse>) {
    if let Some(value) = receipt.and_then(|r| HeaderValue::from_str(&svc_x402::encode_header(r)).ok()) {
        response.headers_mut().insert(svc_x402::PAYMENT_RESPONSE, value);
    }
}

/// `GET /api/v1/llm/models`.
async fn models(State(llm): State<Arc<Llm>>) -> Response {
    let data: Vec<Value> = llm
        .models()
        .iter()
        .map(|(alias, model)| {
            json!({
                "id": alias,
                "object": "model",
                "created": 0,
                "owned_by": "svc",
                "context_window": model.context,
                "max_output_tokens": model.max_output,
                "pricing": {
                    "currency": "USD",
                    "input_per_million": model.input_per_million,
                    "cached_input_per_million": model.cached_input_per_million,
                    "output_per_million": model.output_per_million,
                },
            })
        })
        .collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

/// The status, type and code of an error.
fn classify(err: &LlmError) -> (StatusCode, &'static str, &'static str) {
    match err {
        LlmError::Unauthorized => (StatusCode::UNAUTHORIZED, "invalid_request_error", "invalid_api_key"),
        LlmError::MethodNotAllowed { .. } => {
            (StatusCode::METHOD_NOT_ALLOWED, "invalid_request_error", "method_not_allowed")
        }
        LlmError::ModelNotFound(_) => (StatusCode::NOT_FOUND, "invalid_request_error", "model_not_found"),
        LlmError::BadRequest { code, .. } => (StatusCode::BAD_REQUEST, "invalid_request_error", code),
        LlmError::Unprocessable { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request_error", "invalid_value"),
        LlmError::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "invalid_request_error", "request_too_large"),
        LlmError::InsufficientCredits { .. } => {
            (StatusCode::PAYMENT_REQUIRED, "insufficient_quota", "insufficient_credits")
        }
        LlmError::PaymentRefused { .. } => (StatusCode::PAYMENT_REQUIRED, "invalid_request_error", "payment_refused"),
        LlmError::TopUpUnsettled { .. } => (StatusCode::PAYMENT_REQUIRED, "invalid_request_error", "payment_unsettled"),
        LlmError::PaymentIdConflict => (StatusCode::CONFLICT, "invalid_request_error", "payment_id_conflict"),
        LlmError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "api_error", "service_unavailable"),
        LlmError::RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limit_error", "rate_limit_exceeded"),
        LlmError::DailyCap { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limit_error", "daily_limit_reached"),
        LlmError::UpstreamRejected { .. } => (StatusCode::BAD_REQUEST, "invalid_request_error", "upstream_rejected"),
        LlmError::UpstreamBusy { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limit_error", "upstream_rate_limited"),
        LlmError::Upstream(_) => (StatusCode::BAD_GATEWAY, "api_error", "upstream_error"),
        LlmError::UpstreamTimeout => (StatusCode::GATEWAY_TIMEOUT, "api_error", "upstream_timeout"),
        LlmError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "api_error", "internal_error"),
    }
}

/// The message a client reads. Credits running out is worded as a retryable limit: agent
/// gateways that read "insufficient credits" lock the key for minutes, even after a top-up.
fn message(err: &LlmError) -> String {
    match err {
        LlmError::Unauthorized => {
            "Invalid LLM token. Get the account's token with POST /api/account/llm-token.".to_owned()
        }
        LlmError::ModelNotFound(alias) => {
            format!("The model `{alias}` does not exist; GET /api/v1/llm/models lists the models.")
        }
        LlmError::InsufficientCredits { balance, needed, top_up } => {
            let how = if top_up.is_some() {
                "pay the PAYMENT-REQUIRED challenge with this request to top up automatically, or buy credits"
            } else {
                "buy credits (POST /api/x402/credits/purchase) or turn on automatic top-up (PUT /api/account/llm-top-up)"
            };
            format!(
                "Credit limit reached for this account; retry later. This call can cost up to {needed} USD and the \
                 balance is {balance} USD: {how}."
            )
        }
        LlmError::RateLimited { limit, retry_after } => {
            format!("Rate limit reached for this account ({limit} calls per minute); retry in {retry_after} s.")
        }
        LlmError::DailyCap { cap, .. } => {
            format!("Daily usage limit reached for this account ({cap} USD per day); retry later, after the reset.")
        }
        LlmError::Internal(_) => "The proxy failed; nothing was charged. Retry later.".to_owned(),
        LlmError::Unavailable(_) => {
            "Payments cannot be checked right now; nothing was charged. Retry later.".to_owned()
        }
        other => other.to_string(),
    }
}

/// OpenAI's error body for `err`.
pub(crate) fn error_body(err: &LlmError) -> Value {
    let (_, kind, code) = classify(err);
    let (code, param) = match err {
        LlmError::UpstreamRejected { code: Some(upstream), param, .. } => (json!(upstream), json!(param)),
        LlmError::UpstreamRejected { param, .. } => (json!(code), json!(param)),
        LlmError::BadRequest { param, .. } => (json!(code), json!(param)),
        LlmError::Unprocessable { param, .. } => (json!(code), json!(param)),
        _ => (json!(code), Value::Null),
    };
    json!({"error": {"message": message(err), "type": kind, "code": code, "param": param}})
}

/// The answer for `err`.
pub(crate) fn error_response(err: &LlmError) -> Response {
    if let LlmError::Internal(detail) | LlmError::Unavailable(detail) = err {
        tracing::error!(error = %detail, "LLM proxy failed");
    }
    let (status, _, _) = classify(err);
    let mut response = (status, axum::Json(error_body(err))).into_response();
    let headers = response.headers_mut();
    let retry_after = match err {
        LlmError::RateLimited { retry_after, .. } | LlmError::DailyCap { retry_after, .. } => Some(*retry_after),
        LlmError::UpstreamBusy { retry_after } => *retry_after,
        _ => None,
    };
    if let LlmError::MethodNotAllowed { allow } = err {
        headers.insert(header::ALLOW, HeaderValue::from_static(allow));
    }
    if let Some(secs) = retry_after {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if let LlmError::InsufficientCredits { top_up: Some(challenge), .. }
    | LlmError::PaymentRefused { top_up: Some(challenge), .. } = err
        && let Ok(value) = HeaderValue::from_str(&challenge.header)
    {
        headers.insert(svc_x402::PAYMENT_REQUIRED, value);
    }
    response
}
