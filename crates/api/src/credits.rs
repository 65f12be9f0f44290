//! The credit channel: every paid route's twin under `/api/svc-tools/*`, billed to the
//! account of the API key that calls it.
//!
//! The price is the route's credit price less the account's volume discount, charged by
//! [`svc_accounts::credits::charge`]: taken before the handler runs, given back if it fails.

use crate::answer::json_response;
use crate::call::Call;
use crate::error::ApiError;
use axum::http::{HeaderMap, HeaderName, header};
use axum::response::{IntoResponse, Response};
use svc_accounts::credits::{self, Charged};
use svc_accounts::{Scope, authenticate, presented_key};
use svc_catalogue::ValidInput;

/// Serves one credit-billed call.
pub(crate) async fn serve(call: Call<'_>, input: ValidInput) -> Result<Response, ApiError> {
    let Call { state, route, parts, .. } = call;
    let now = state.clock.now_ms();
    let accepted = Scope::named(route.twin_key_scopes());
    let holder = authenticate(&state.store, presented_key_in(&parts.headers), &accepted, now).await??;
    let account = &holder.account.id;
    let rate = crate::rate::count(state, route, &format!("account:{account}"), now).await;
    if !rate.allowed {
        return Ok(crate::rate::refused(&rate, now));
    }
    let response = charge_and_run(call, account, input, now).await.unwrap_or_else(IntoResponse::into_response);
    Ok(crate::rate::with_headers(response, &rate, now))
}

/// Takes the price, less the account's volume discount, runs the handler, and gives the price
/// back if it fails.
async fn charge_and_run(call: Call<'_>, account: &str, input: ValidInput, now: i64) -> Result<Response, ApiError> {
    let Call { state, handlers, route, parts } = call;
    let tier = credits::account_tier(&state.store, account, now).await?;
    let price = tier.apply(route.credit_price_for(input.price_units()));
    let work = handlers.call(route.id, state.clone(), input);
    match credits::charge(&state.store, state.clock.as_ref(), account, price, route.id, work).await? {
        Charged::Done(answer) => Ok(json_response(answer)),
        Charged::Failed(err) => Err(err),
        Charged::Insufficient { balance } => {
            let x402_path = svc_catalogue::route::x402_twin(route, parts.uri.path());
            Err(ApiError::InsufficientCredits { balance, price, x402_path })
        }
    }
}

/// The key a request presents in its headers: `X-API-Key`, or a bearer token with the key
/// prefix.
pub(crate) fn presented_key_in(headers: &HeaderMap) -> Option<&str> {
    let header = |name: &HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    presented_key(header(&X_API_KEY), header(&header::AUTHORIZATION))
}

static X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");
