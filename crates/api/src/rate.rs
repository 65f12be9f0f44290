//! Rate limits per client on the paid routes and their credit twins.
//!
//! The client is the paying wallet, the API key's account, or else the IP. Top picks allow
//! 30 calls a minute (the contract); every other route shares a configurable default.
//!
//! A 402 challenge holds the client's slot: the paid retry of a challenge, sent within the
//! challenge's 300 s, is never refused for rate. An agent that was told what to pay and paid
//! must get its answer, not a 429 for having asked first.
//!
//! The payer a payment names is only a claim until the payment verifies. So a paid call is
//! counted against its wallet, and also needs its IP to be within its limit unless it uses a
//! held slot; when the payment is refused (junk, a forged signature, a replay) the wallet's
//! count is given back, a slot it used is held again, and the call counts against the IP like
//! any unpaid request (and against the IP's refused payments, which, once over the limit, may
//! not use held slots either). Only a challenge to an unpaid request, or to a verified payment
//! whose settlement failed, holds a slot.

use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use svc_catalogue::RouteSpec;

use crate::error::ApiError;
use crate::limits::{client_label, rate_headers};
use crate::state::AppState;
use svc_limits::Decision;

/// The window of every rate limit.
const MINUTE_MS: i64 = 60_000;

/// How long a challenge holds its slot: its `maxTimeoutSeconds`.
pub const HOLD_MS: i64 = 300_000;

/// The limit of `route` per minute, and the bucket its calls count in (0: no limit).
fn bucket(state: &AppState, route: &RouteSpec) -> (u32, &'static str) {
    state.config.rate_of(route)
}

/// Counts one call of `client` to `route` at `now_ms`.
pub async fn count(state: &AppState, route: &RouteSpec, client: &str, now_ms: i64) -> Decision {
    let (limit, bucket) = bucket(state, route);
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
enum Served {
    /// A challenge was issued (to an unpaid request, or after a verified payment's settlement
    /// failed): its paid retry gets a slot.
    Challenged,
    /// The payment was refused before it verified: the call was the IP's.
    Refused,
    /// Anything else.
    Other,
}

impl Served {
    fn of(result: &Result<Response, ApiError>) -> Self {
        match result {
            Err(ApiError::PaymentRequired { refused: true, .. }) => Served::Refused,
            Err(ApiError::PaymentRequired { refused: false, .. } | ApiError::SettlementFailed { .. }) => {
                Served::Challenged
            }
            _ => Served::Other,
        }
    }
}

/// Serves an x402 call under its rate limit. An unpaid call counts against its IP, and a
/// challenge it gets holds a slot for the paid retry; a paid call uses a slot its IP holds
/// for this route, or else counts against `payer`, the wallet its payment names.
pub async fn x402<F>(
    state: &AppState,
    route: &'static RouteSpec,
    parts: &Parts,
    payer: Option<String>,
    serve: F,
) -> Response
where
    F: std::future::Future<Output = Result<Response, ApiError>>,
{
    if !state.config.rate_limits || bucket(state, route).0 == 0 {
        return serve.await.unwrap_or_else(IntoResponse::into_response);
    }
    // Boxed: the limiter's futures (a Redis round trip) would otherwise enlarge every
    // request's future.
    Box::pin(async move {
        let now = state.clock.now_ms();
        let ip = client_label(parts, &state.config.trusted_proxies);
        let hold_key = format!("hold:{}:{ip}", route.id);
        let (limit, bucket) = bucket(state, route);
        let ip_key = format!("rate:{bucket}:ip:{ip}");
        let junk_key = format!("rate:{bucket}:refused:{ip}");
        let wallet_key = payer.as_ref().map(|payer| format!("rate:{bucket}:wallet:{payer}"));
        let (mut decision, held, wallet_counted) = match &wallet_key {
            Some(wallet_key) => {
                let by_ip = state.limiter.peek(&ip_key, limit, MINUTE_MS, now).await;
                let by_wallet = state.limiter.peek(wallet_key, limit, MINUTE_MS, now).await;
                let held = if by_ip.allowed && by_wallet.allowed {
                    false
                } else {
                    // Over a limit: only the retry of a challenge gets in, and not while this IP's
                    // refused payments are over the limit too (each would put its slot back).
                    let junk = state.limiter.peek(&junk_key, limit, MINUTE_MS, now).await;
                    if !junk.allowed {
                        return refused(&junk, now);
                    }
                    state.limiter.take_hold(&hold_key, now).await
                };
                if !held && !by_ip.allowed {
                    return refused(&by_ip, now);
                }
                // Counted either way; the retry of a challenge is admitted whatever the window says.
                let decision = state.limiter.hit(wallet_key, limit, MINUTE_MS, now).await;
                if !decision.allowed && !held {
                    return refused(&decision, now);
                }
                (decision, held, decision.allowed)
            }
            None => {
                let decision = count(state, route, &format!("ip:{ip}"), now).await;
                if !decision.allowed {
                    return refused(&decision, now);
                }
                (decision, false, false)
            }
        };
        decision.allowed = true;
        let result = serve.await;
        let served = Served::of(&result);
        let mut response = result.unwrap_or_else(IntoResponse::into_response);
        let refused_payment = matches!(served, Served::Refused);
        if let (Some(wallet_key), true) = (&wallet_key, refused_payment) {
            // The payer was never proven: the call was the IP's, not the wallet's.
            if wallet_counted {
                state.limiter.give_back(wallet_key, now).await;
            }
            if held {
                state.limiter.hold(&hold_key, now + HOLD_MS, now).await;
            }
            state.limiter.hit(&junk_key, limit, MINUTE_MS, now).await;
            decision = state.limiter.hit(&ip_key, limit, MINUTE_MS, now).await;
            decision.allowed = true;
        } else if refused_payment {
            // Junk in the payment header, no payer named: counted against the IP already.
        } else if matches!(served, Served::Challenged) {
            state.limiter.hold(&hold_key, now + HOLD_MS, now).await;
        } else if wallet_key.is_some() && !held {
            // A payment that went through is the retry of this client's challenge, if it had
            // one: slots do not pile up to be spent later.
            state.limiter.take_hold(&hold_key, now).await;
        }
        rate_headers(response.headers_mut(), &decision, now);
        response
    })
    .await
}

/// Adds the rate headers of `decision` to a credit-billed answer.
pub fn with_headers(mut response: Response, decision: &Decision, now_ms: i64) -> Response {
    rate_headers(response.headers_mut(), decision, now_ms);
    response
}
