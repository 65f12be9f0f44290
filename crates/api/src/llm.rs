//! The LLM proxy's HTTP layer: its routes, the reading of a call, and the one place the proxy's
//! errors become OpenAI's error body `{"error": {"message", "type", "code", "param"}}`.
//!
//! - `POST /api/v1/llm/chat/completions`: `Authorization: Bearer <proxy token>`; a payment
//!   header (`PAYMENT-SIGNATURE` or `X-PAYMENT`) buys credits first when the account has
//!   automatic top-up on.
//! - `GET /api/v1/llm/models`: the aliases, in OpenAI's list shape.
//!
//! A top-up is sold through the front door every route uses: the payment header is read by
//! `x402::presented` (so a header too large to be a payment is a 431 here too), and
//! its challenge is built by `x402::Challenge` on the configured public base URL,
//! with the same extensions as a route's.

use std::convert::Infallible;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt as _;
use serde_json::{Value, json};
use svc_catalogue::challenge::Offered;
use svc_catalogue::routes::llm::{CHAT_COMPLETIONS_PATH, MODELS_PATH};
use svc_domain::Money;
use svc_llm::{Chat, ChatCall, Event, LlmError};
use svc_x402::codec::Presented;

use crate::state::AppState;
use crate::x402::{Challenge, Front};

/// The proxy's routes.
pub(crate) fn router() -> Router<AppState> {
    let refuse = |allow| move || async move { error_response(&LlmError::MethodNotAllowed { allow }) };
    Router::new()
        .route(CHAT_COMPLETIONS_PATH, post(chat_completions).fallback(refuse("POST")))
        .route(MODELS_PATH, get(models).fallback(refuse("GET")))
}

/// Why a proxied call got no completion, as this layer answers it: the proxy's own reasons,
/// and the front door's.
#[derive(Debug)]
enum Failure {
    /// The proxy's.
    Llm(LlmError),
    /// A payment header too large to be a payment to svc: refused before the body is read,
    /// as on every route.
    PaymentHeaderTooLarge {
        /// The header's size.
        bytes: usize,
    },
}

/// What the challenge of a failed top-up says when the account simply ran out.
const TOP_UP_REQUIRED: &str = "Payment required: buys LLM credits, then the call proceeds";

/// `POST /api/v1/llm/chat/completions`.
async fn chat_completions(State(state): State<AppState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    match Box::pin(chat(&state, &parts, body)).await {
        Ok(response) => response,
        Err(failure) => failure.response(Front { state: &state, parts: &parts, body: None }),
    }
}

async fn chat(state: &AppState, parts: &Parts, body: Body) -> Result<Response, Failure> {
    let llm = &state.llm;
    let token = svc_accounts::bearer_token(parts.headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()));
    // Who calls, and whether the rate limit admits them, before anything else is read.
    let caller = llm.admit(token).await.map_err(Failure::Llm)?;
    let presented = crate::x402::presented(&parts.headers);
    if let Presented::TooLarge(bytes) = presented {
        return Err(Failure::PaymentHeaderTooLarge { bytes });
    }
    let limit = llm.body_limit();
    let declared =
        parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(Failure::Llm(LlmError::TooLarge { limit }));
    }
    let body = axum::body::to_bytes(body, limit).await.map_err(|_| Failure::Llm(LlmError::TooLarge { limit }))?;
    // The extensions a top-up's challenge advertises, which a v2 payment echoes: they do not
    // depend on the amount.
    let front = Front { state, parts, body: None };
    let advertised = match &presented {
        Presented::Payment(payment) => top_up_challenge(front, Money::ZERO).advertised(payment),
        _ => None,
    };
    let call = ChatCall { caller, body: &body, payment: &presented, advertised: advertised.as_ref() };
    let (mut response, receipt) = match llm.chat(call).await.map_err(Failure::Llm)? {
        Chat::Whole { json, receipt } => {
            ((StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], json).into_response(), receipt)
        }
        Chat::Stream { events, receipt } => {
            let events = events.map(|event| {
                Ok::<_, Infallible>(match event {
                    Event::Data(data) => data,
                    Event::Failed(err) => error_event(&err),
                })
            });
            let mut response = Response::new(Body::from_stream(events));
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            // Tells a buffering reverse proxy in front to pass each event on at once.
            headers.insert(HeaderName::from_static("x-accel-buffering"), HeaderValue::from_static("no"));
            (response, receipt)
        }
    };
    if let Some(value) = receipt.as_ref().and_then(crate::x402::payment_response_header) {
        response.headers_mut().insert(svc_x402::PAYMENT_RESPONSE, value);
    }
    Ok(response)
}

/// The challenge of a top-up buying `amount` of credits for this call.
fn top_up_challenge(front: Front<'_>, amount: Money) -> Challenge<'_> {
    front.challenge(Offered::TopUp { amount }, amount)
}

/// `GET /api/v1/llm/models`.
async fn models(State(state): State<AppState>) -> Response {
    let data: Vec<Value> = state
        .llm
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

impl Failure {
    /// The answer to a call at `front`: a refusal that names a top-up carries its challenge in
    /// `PAYMENT-REQUIRED`, built like every route's.
    fn response(self, front: Front<'_>) -> Response {
        let err = match self {
            Failure::Llm(err) => err,
            Failure::PaymentHeaderTooLarge { bytes } => {
                let limit = svc_x402::codec::MAX_HEADER_BYTES;
                let message = format!(
                    "The payment header is {bytes} bytes; a payment to this service is at most {limit} bytes. \
                     Nothing was charged; sign the payment again from the challenge."
                );
                let body =
                    openai_error(&message, "invalid_request_error", json!("payment_header_too_large"), Value::Null);
                return (StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, axum::Json(body)).into_response();
            }
        };
        let top_up = match &err {
            LlmError::InsufficientCredits { top_up: Some(amount), .. } => Some((*amount, TOP_UP_REQUIRED)),
            LlmError::PaymentRefused { top_up: Some(amount), reason } => Some((*amount, reason.as_str())),
            _ => None,
        };
        let mut response = error_response(&err);
        if let Some((amount, why)) = top_up {
            let requirements = front.state.paywall.requirements(amount);
            match top_up_challenge(front, amount).encoded(&requirements, why) {
                Ok((_, header)) => {
                    response.headers_mut().insert(svc_x402::PAYMENT_REQUIRED, header);
                }
                Err(failed) => return error_response(&LlmError::Internal(failed.to_string())),
            }
        }
        response
    }
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

/// OpenAI's error body.
fn openai_error(message: &str, kind: &str, code: Value, param: Value) -> Value {
    json!({"error": {"message": message, "type": kind, "code": code, "param": param}})
}

/// OpenAI's error body for `err`.
fn error_body(err: &LlmError) -> Value {
    let (_, kind, code) = classify(err);
    let (code, param) = match err {
        LlmError::UpstreamRejected { code: Some(upstream), param, .. } => (json!(upstream), json!(param)),
        LlmError::UpstreamRejected { param, .. } => (json!(code), json!(param)),
        LlmError::BadRequest { param, .. } => (json!(code), json!(param)),
        LlmError::Unprocessable { param, .. } => (json!(code), json!(param)),
        _ => (json!(code), Value::Null),
    };
    openai_error(&message(err), kind, code, param)
}

/// The answer for `err`, without a challenge.
fn error_response(err: &LlmError) -> Response {
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
    response
}

/// A failure after a streamed answer began: an `error` event, OpenAI's shape, as the last event.
fn error_event(err: &LlmError) -> bytes::Bytes {
    bytes::Bytes::from(format!("data: {}\n\n", error_body(err)))
}
