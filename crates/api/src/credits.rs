//! The credit channel: every paid route's twin under `/api/svc-tools/*`, billed to the
//! account of the API key that calls it.
//!
//! The price (the route's credit price less the account's volume discount) is taken from the
//! balance in one atomic ledger entry before the handler runs, and given back if the handler
//! fails, so the balance never goes negative, concurrent calls cannot overspend, and a failed
//! call costs nothing.

use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use svc_catalogue::{RouteSpec, ValidInput};
use svc_domain::discount::DISCOUNT_WINDOW_MS;
use svc_domain::{DiscountTier, Money};
use svc_store::{Debit, NewCredit};

use crate::accounts::{Scope, authenticate, presented_key_in};
use crate::error::ApiError;
use crate::pipeline::json_response;
use crate::state::AppState;

/// Scopes that may spend credits on data routes: an account's own keys and a sandbox's.
const DATA_SCOPES: [Scope; 2] = [Scope::Data, Scope::GatewayData];

/// Serves one credit-billed call.
pub async fn serve(
    state: &AppState,
    route: &'static RouteSpec,
    parts: &Parts,
    input: svc_catalogue::ValidInput,
) -> Result<Response, ApiError> {
    let now = state.clock.now_ms();
    let holder = authenticate(&state.store, presented_key_in(&parts.headers), &DATA_SCOPES, now).await??;
    let account = &holder.account.id;
    let rate = crate::rate::count(state, route, &format!("account:{account}"), now).await;
    if !rate.allowed {
        return Ok(crate::rate::refused(&rate, now));
    }
    let response = charge_and_run(state, route, account, input, now).await.unwrap_or_else(IntoResponse::into_response);
    Ok(crate::rate::with_headers(response, &rate, now))
}

/// Takes the price, runs the handler, and gives the price back if it fails.
async fn charge_and_run(
    state: &AppState,
    route: &'static RouteSpec,
    account: &str,
    input: ValidInput,
    now: i64,
) -> Result<Response, ApiError> {
    let price = account_tier(state, account, now).await?.apply(route.credit_price_for(input.price_units()));
    let entry = format!("cl_{}", uuid::Uuid::now_v7().simple());
    if price > Money::ZERO {
        match state.store.debit_credits(&entry, account, price.atomic(), route.id, now).await? {
            Debit::Taken => {}
            Debit::Insufficient { balance } => {
                return Err(ApiError::InsufficientCredits { balance: Money::from_atomic(balance), price });
            }
        }
    }
    match run(state, route, input).await {
        Ok(response) => Ok(response),
        Err(err) => {
            if price > Money::ZERO {
                refund(state, account, &entry, price, route.id).await;
            }
            Err(err)
        }
    }
}

async fn run(state: &AppState, route: &'static RouteSpec, input: ValidInput) -> Result<Response, ApiError> {
    state.handlers.call(route.id, state.clone(), input).await.map(json_response)
}

/// Gives a failed call's credits back. Keyed on the call's entry, so it happens once.
async fn refund(state: &AppState, account: &str, entry: &str, price: Money, route_id: &str) {
    let reference = format!("refund:{entry}");
    let credit = NewCredit {
        id: &format!("cl_{}", uuid::Uuid::now_v7().simple()),
        account_id: account,
        amount: price.atomic(),
        kind: "refund",
        route_id: Some(route_id),
        reference: Some(&reference),
        now_ms: state.clock.now_ms(),
    };
    if let Err(err) = state.store.add_credits(&credit).await {
        // The debit stands in the ledger with its call; an operator can see and repair it.
        tracing::error!(account, entry, error = %err, "could not refund a failed call");
    }
}

/// An account's volume-discount tier, by its credit-billed calls in the trailing window.
pub async fn account_tier(state: &AppState, account_id: &str, now_ms: i64) -> Result<DiscountTier, ApiError> {
    let (calls, _) = state.store.credit_calls_since(account_id, now_ms - DISCOUNT_WINDOW_MS).await?;
    Ok(DiscountTier::for_calls(calls))
}
