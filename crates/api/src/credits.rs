//! The credit channel: every paid route's twin under `/api/svc-tools/*` (and an MCP tool call
//! that sends credentials), billed to the account of the API key or sign-in token that calls it.
//!
//! The price is the route's credit price less the account's volume discount, charged by
//! [`svc_accounts::credits::charge`]: taken before the handler runs, given back if it fails.

use crate::answer::json_response;
use crate::call::Call;
use crate::error::ApiError;
use axum::http::{HeaderMap, HeaderName, header};
use axum::response::{IntoResponse, Response};
use svc_accounts::credits::{self, Charged};
use svc_accounts::{KeysAccepted, Scope, authenticate, bearer_token, calling_account, presented_key};
use svc_catalogue::ValidInput;

/// Serves one credit-billed call.
pub(crate) async fn serve(call: Call<'_>, input: ValidInput) -> Result<Response, ApiError> {
    let Call { state, route, parts, .. } = call;
    let now = state.clock.now_ms();
    let accepted = Scope::named(route.twin_key_scopes());
    let (account, key_id) = payer_account(state, route, &parts.headers, &accepted, now).await?;
    let account = &account.id;
    let rate = crate::rate::count(state, route, &format!("account:{account}"), now).await;
    if !rate.allowed {
        return Ok(crate::rate::refused(&rate, now));
    }
    let payer = Payer { account, key_id: key_id.as_deref() };
    let response = charge_and_run(call, payer, input, now).await.unwrap_or_else(IntoResponse::into_response);
    Ok(crate::rate::with_headers(response, &rate, now))
}

/// Who pays a credit-billed call: the account, and the key it came with (none for a sign-in
/// token).
struct Payer<'a> {
    account: &'a str,
    key_id: Option<&'a str>,
}

/// The account a credit-billed call is charged to, and the key it came with: the holder of an
/// API key with one of `accepted` scopes, or the owner signed in with a wallet (a sign-in token
/// as bearer). A call that moves funds takes a key made for trading only, never a sign-in token.
async fn payer_account(
    state: &crate::state::AppState,
    route: &svc_catalogue::RouteSpec,
    headers: &HeaderMap,
    accepted: &[Scope],
    now: i64,
) -> Result<(svc_store::Account, Option<String>), ApiError> {
    let key = presented_key_in(headers);
    let authorization = authorization(headers);
    let token = bearer_token(authorization).filter(|_| key.is_none() && !route.moves_funds);
    if token.is_none() {
        let holder = authenticate(&state.store, key, accepted, now).await??;
        return Ok((holder.account, Some(holder.key.id)));
    }
    let keys = KeysAccepted::WithScope(accepted);
    match calling_account(&state.store, &state.config.sign_in, None, authorization, keys, now).await? {
        Ok(account) => Ok((account, None)),
        Err(_) => Err(ApiError::Unauthorized(
            "This bearer token is neither a live API key nor a valid sign-in token (unknown, revoked or expired).",
        )),
    }
}

/// Takes the price, less the account's volume discount, runs the handler, and gives the price
/// back if it fails.
async fn charge_and_run(call: Call<'_>, payer: Payer<'_>, input: ValidInput, now: i64) -> Result<Response, ApiError> {
    let Call { state, handlers, route, parts } = call;
    let tier = credits::account_tier(&state.store, payer.account, now).await?;
    let price = tier.apply(route.credit_price_for(input.price_units()));
    let work = handlers.call(route.id, state.clone(), input);
    let clock = state.clock.as_ref();
    match credits::charge(&state.store, clock, payer.account, payer.key_id, price, route.id, work).await? {
        Charged::Done(answer) => Ok(json_response(answer)),
        Charged::Failed(err) => Err(err),
        Charged::Insufficient { balance } => {
            let x402_path = svc_catalogue::route::x402_twin(route, parts.uri.path());
            Err(ApiError::InsufficientCredits { balance, price, x402_path })
        }
    }
}

/// Whether a request presents credentials a credit-billed call is charged to: a key, or any
/// bearer token (a sign-in token, or one refused as neither).
pub(crate) fn presents_credentials(headers: &HeaderMap) -> bool {
    presented_key_in(headers).is_some() || bearer_token(authorization(headers)).is_some()
}

fn authorization(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok())
}

/// The key a request presents in its headers: `X-API-Key`, or a bearer token with the key
/// prefix.
pub(crate) fn presented_key_in(headers: &HeaderMap) -> Option<&str> {
    let header = |name: &HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    presented_key(header(&X_API_KEY), header(&header::AUTHORIZATION))
}

static X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");
