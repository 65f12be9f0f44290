//! Free previews: `?preview=true` on any paid route and on a seller's agent. The input is
//! validated as for a paid call; a route's real answer is then cut down and labelled by
//! [`svc_catalogue::preview`], an agent's is its listing's examples and price.
//!
//! Each client IP gets a few an hour (sliding window); a preview that fails on our side (a 5xx:
//! a vendor down, a timeout) is given back. One that fails on the client's own input (an
//! unknown id, a query the vendor refuses) still reached the vendor, so it counts: otherwise
//! failing previews would be free and uncapped.

use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use svc_catalogue::{PreviewPolicy, RouteSpec, ValidInput, preview};
use svc_domain::rfc3339;

use crate::call::Call;
use crate::error::ApiError;
use crate::limits::{client_label, rate_headers};
use crate::state::AppState;
use svc_limits::Decision;

/// The preview window.
const HOUR_MS: i64 = 3_600_000;

/// Serves a preview under the client's hourly quota: `answer` is what it shows, given the quota
/// taken and the time. Whatever sells previews through here (a route, an agent) gets the same
/// quota, `no-store`, rate headers, and a preview given back when it fails on our side.
pub(crate) async fn serve<F, Fut>(state: &AppState, parts: &Parts, answer: F) -> Response
where
    F: FnOnce(Decision, i64) -> Fut,
    Fut: std::future::Future<Output = Result<Value, ApiError>>,
{
    let now = state.clock.now_ms();
    let (quota, key) = match take_quota(state, parts, now).await {
        Ok(taken) => taken,
        Err(refused) => return refused,
    };
    let mut response = match answer(quota, now).await {
        Ok(body) => {
            let mut response = (StatusCode::OK, axum::Json(body)).into_response();
            response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(err) => {
            if err.status().is_server_error() && !quota.is_unlimited() {
                state.limiter.give_back(&key, now).await;
            }
            err.into_response()
        }
    };
    rate_headers(response.headers_mut(), &quota, now);
    response
}

/// Counts one preview against the client's hourly quota: the decision and the counter's key,
/// or the 429 to answer.
async fn take_quota(state: &AppState, parts: &Parts, now: i64) -> Result<(Decision, String), Response> {
    let key = format!("preview:{}", client_label(parts, &state.config.trusted_proxies));
    let quota = match state.config.previews_per_hour {
        0 => Decision::unlimited(),
        quota => state.limiter.hit(&key, quota, HOUR_MS, now).await,
    };
    if !quota.allowed {
        let mut response = ApiError::PreviewQuota { reset_secs: quota.reset_secs(now) }.into_response();
        rate_headers(response.headers_mut(), &quota, now);
        return Err(response);
    }
    Ok((quota, key))
}

/// The preview of a catalogue route for validated `input`: its price, and its real answer cut
/// down where the route's policy allows.
pub(crate) async fn route_answer(
    call: Call<'_>,
    input: ValidInput,
    quota: Decision,
    now: i64,
) -> Result<Value, ApiError> {
    let Call { state, handlers, route, parts } = call;
    let units = input.price_units();
    let limited = (!quota.is_unlimited()).then(|| (quota.remaining, rfc3339(quota.reset_at_ms)));
    let mut about = preview::about(route, units, rfc3339(now), limited);
    if let Some((tier, price)) = identified_price(state, route, parts, units, now).await? {
        about.price.your_tier = Some(tier);
        about.price.your_credits = Some(price.to_string());
    }
    let PreviewPolicy::Truncate { max_items, omit } = route.preview else {
        return Ok(preview::quote_only(about));
    };
    let body = handlers.call(route.id, state.clone(), input).await?;
    preview::cut_down(&body.json, about, max_items, omit)
        .map_err(|e| ApiError::Internal(format!("preview of {}: {e}", route.id)))
}

/// The credit price for a caller that presents a live API key of an account: the account's
/// volume discount applied. Anyone else sees list prices only.
async fn identified_price(
    state: &AppState,
    route: &RouteSpec,
    parts: &Parts,
    units: u64,
    now: i64,
) -> Result<Option<(svc_domain::DiscountTier, svc_domain::Money)>, ApiError> {
    if !route.billed_as_data {
        return Ok(None);
    }
    let key = crate::credits::presented_key_in(&parts.headers);
    if key.is_none() {
        return Ok(None);
    }
    let scopes = svc_accounts::Scope::ALL;
    let Ok(holder) = svc_accounts::authenticate(&state.store, key, &scopes, now).await? else { return Ok(None) };
    let tier = svc_accounts::credits::account_tier(&state.store, &holder.account.id, now).await?;
    Ok(Some((tier, tier.apply(route.credit_price_for(units)))))
}
