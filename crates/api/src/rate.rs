//! Rate limits per client on the paid routes and their credit twins.
//!
//! The client is the paying wallet, the API key's account, or else the IP. Top picks allow
//! 30 calls a minute (the contract); every other route shares a configurable default.
//!
//! A 402 challenge holds the client's slot: the paid retry of a challenge, sent within the
//! challenge's 300 s, is never refused for rate. An agent that was told what to pay and paid
//! must get its answer, not a 429 for having asked first.

use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use svc_catalogue::{RatePolicy, RouteSpec};

use crate::error::ApiError;
use crate::limits::{Decision, client_label, rate_headers};
use crate::state::AppState;

/// The window of every rate limit.
const MINUTE_MS: i64 = 60_000;

/// How long a challenge holds its slot: its `maxTimeoutSeconds`.
pub const HOLD_MS: i64 = 300_000;

/// The limit of `route` per minute, and the bucket its calls count in.
fn bucket(state: &AppState, route: &RouteSpec) -> (u32, &'static str) {
    match route.rate {
        RatePolicy::PerMinute(limit) => (limit, route.id),
        RatePolicy::Default => (state.config.rate_per_minute, "default"),
    }
}

/// Counts one call of `client` to `route` at `now_ms`.
pub async fn count(state: &AppState, route: &RouteSpec, client: &str, now_ms: i64) -> Decision {
    let (limit, bucket) = bucket(state, route);
    if !state.config.rate_limits {
        return Decision { allowed: true, limit: u32::MAX, remaining: u32::MAX, reset_at_ms: 0 };
    }
    state.limiter.hit(&format!("rate:{bucket}:{client}"), limit, MINUTE_MS, now_ms).await
}

/// The answer to a call past its limit.
pub fn refused(decision: &Decision, now_ms: i64) -> Response {
    let mut response = ApiError::RateLimited { reset_secs: decision.reset_secs(now_ms) }.into_response();
    rate_headers(response.headers_mut(), decision, now_ms);
    response
}

/// Serves an x402 call under its rate limit. An unpaid call counts against its IP, and a
/// challenge it gets holds a slot for the paid retry; a paid call uses a slot its IP holds
/// for this route, or else counts against the paying wallet.
pub async fn x402<F>(state: &AppState, route: &'static RouteSpec, parts: &Parts, serve: F) -> Response
where
    F: std::future::Future<Output = Response>,
{
    if !state.config.rate_limits {
        return serve.await;
    }
    // Boxed: the limiter's futures (a Redis round trip) would otherwise enlarge every
    // request's future.
    Box::pin(limited(state, route, parts, serve)).await
}

async fn limited<F>(state: &AppState, route: &'static RouteSpec, parts: &Parts, serve: F) -> Response
where
    F: std::future::Future<Output = Response>,
{
    let now = state.clock.now_ms();
    let ip = client_label(parts, &state.config.trusted_proxies);
    let hold_key = format!("hold:{}:{ip}", route.id);
    let payer = crate::paywall::payment_header(&parts.headers)
        .and_then(|h| svc_x402::decode_payment(h.as_bytes()))
        .and_then(|p| p.replay_key())
        .map(|(payer, _)| payer);
    let (mut decision, admitted) = match &payer {
        Some(payer) if state.limiter.take_hold(&hold_key, now).await => {
            // The retry of a challenge: admitted whatever the window says; it is reported as
            // it stands.
            let (limit, bucket) = bucket(state, route);
            (state.limiter.peek(&format!("rate:{bucket}:wallet:{payer}"), limit, MINUTE_MS, now).await, true)
        }
        Some(payer) => {
            let decision = count(state, route, &format!("wallet:{payer}"), now).await;
            (decision, decision.allowed)
        }
        None => {
            let decision = count(state, route, &format!("ip:{ip}"), now).await;
            (decision, decision.allowed)
        }
    };
    if !admitted {
        return refused(&decision, now);
    }
    decision.allowed = true;
    let mut response = serve.await;
    if response.status() == StatusCode::PAYMENT_REQUIRED {
        state.limiter.hold(&hold_key, now + HOLD_MS, now).await;
    }
    rate_headers(response.headers_mut(), &decision, now);
    response
}

/// Adds the rate headers of `decision` to a credit-billed answer.
pub fn with_headers(mut response: Response, decision: &Decision, now_ms: i64) -> Response {
    rate_headers(response.headers_mut(), decision, now_ms);
    response
}
