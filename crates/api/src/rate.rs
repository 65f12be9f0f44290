//! Rate limits per client on the paid routes and their credit twins.
//!
//! The client is the paying wallet, the API key's account, or else the IP. Top picks allow
//! 30 calls a minute (the contract); every other route shares a configurable default. How a
//! 402 challenge holds the client's slot for its paid retry is [`svc_limits::paid`]'s.

use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use svc_catalogue::RouteSpec;
use svc_limits::MINUTE_MS;
use svc_limits::paid::{PaidCall, Served};

use crate::error::ApiError;
use crate::limits::{client_label, rate_headers};
use crate::state::AppState;
use svc_limits::Decision;

/// Counts one call of `client` to `route` at `now_ms`.
pub async fn count(state: &AppState, route: &RouteSpec, client: &str, now_ms: i64) -> Decision {
    let (limit, bucket) = state.config.rate_of(route);
    if !state.config.rate_limits || limit == 0 {
        return Decision::unlimited();
    }
    state.limiter.hit(&format!("rate:{bucket}:{client}"), limit, MINUTE_MS, now_ms).await
}

/// The answer to a call past its limit.
pub fn refused(decision: &Decision, now_ms: i64) -> Response {
    let mut response = ApiError::RateLimited { reset_secs: decision.reset_secs(now_ms) }.into_response();
    rate_headers(response.headers_mut(), decision, now_ms);
    response
}

/// What an x402 answer means for the slot a challenge holds.
fn served(result: &Result<Response, ApiError>) -> Served {
    match result {
        Err(ApiError::PaymentRequired { refused: true, .. }) => Served::Refused,
        Err(ApiError::PaymentRequired { refused: false, .. } | ApiError::SettlementFailed { .. }) => Served::Challenged,
        // A challenge already made into an answer (a seller agent's, with the agent's own rate
        // headers on it).
        Ok(response)
            if response.status() == StatusCode::PAYMENT_REQUIRED
                && response.headers().contains_key(svc_x402::PAYMENT_REQUIRED) =>
        {
            Served::Challenged
        }
        _ => Served::Other,
    }
}

/// What an x402 call counts as: what its challenges hold slots for, its calls per minute per
/// client (0: none), and the bucket they count in.
#[derive(Debug, Clone, Copy)]
pub struct Counted<'a> {
    /// A route id, or a seller agent's product.
    pub product: &'a str,
    /// Calls per client per minute.
    pub limit: u32,
    /// The bucket calls count in.
    pub bucket: &'a str,
}

impl Counted<'static> {
    /// How calls of a catalogue route count.
    pub fn route(state: &AppState, route: &'static RouteSpec) -> Self {
        let (limit, bucket) = state.config.rate_of(route);
        Counted { product: route.id, limit, bucket }
    }
}

/// Serves an x402 call under its rate limit. An unpaid call counts against its IP, and a
/// challenge it gets holds a slot for the paid retry; a paid call uses a slot its IP holds
/// for this product, or else counts against `payer`, the wallet its payment names. An answer
/// that already carries rate headers (a seller agent's own limits, tighter than the client's)
/// keeps them.
pub async fn x402<F>(state: &AppState, counted: Counted<'_>, parts: &Parts, payer: Option<String>, serve: F) -> Response
where
    F: std::future::Future<Output = Result<Response, ApiError>>,
{
    let Counted { product, limit, bucket } = counted;
    if !state.config.rate_limits || limit == 0 {
        return serve.await.unwrap_or_else(IntoResponse::into_response);
    }
    // Boxed: the limiter's futures (a Redis round trip) would otherwise enlarge every
    // request's future.
    Box::pin(async move {
        let now = state.clock.now_ms();
        let ip = client_label(parts, &state.config.trusted_proxies);
        let call = PaidCall { route: product, bucket, limit, ip: &ip, payer: payer.as_deref() };
        let admitted = match state.limiter.paid_admit(call, now).await {
            Ok(admitted) => admitted,
            Err(decision) => return refused(&decision, now),
        };
        let result = serve.await;
        let served = served(&result);
        let mut response = result.unwrap_or_else(IntoResponse::into_response);
        let decision = state.limiter.paid_served(admitted, served, now).await;
        if !response.headers().contains_key("ratelimit-limit") {
            rate_headers(response.headers_mut(), &decision, now);
        }
        response
    })
    .await
}

/// Adds the rate headers of `decision` to a credit-billed answer.
pub fn with_headers(mut response: Response, decision: &Decision, now_ms: i64) -> Response {
    rate_headers(response.headers_mut(), decision, now_ms);
    response
}
