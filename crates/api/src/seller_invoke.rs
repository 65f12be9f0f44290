//! `POST /x402/agents/{agent_id}/invoke`: a seller's agent, sold through the same preview and
//! x402 branches as every catalogue route (`preview::serve`, `x402::dispatch`).
//! This module is the adapter: what an agent's sale checks, offers, charges and does.
//!
//! The order is the contract's promise that nobody signs for a call that will be refused: the
//! agent must be selling (404), the client within its rate limit (429), the body must match the
//! agent's schema (422), and the agent's limits must leave room (429) before a challenge is
//! given. A payment takes one of the agent's calls only once it verified; the call is forwarded
//! to the seller as the paywall's work, and settled only if the seller answered; a call that
//! was not served gives its count back.

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use svc_catalogue::challenge::Offered;
use svc_domain::Money;
use svc_limits::Decision;
use svc_paywall::{Buyer, Outcome, Sold};
use svc_x402::codec::DecodedPayment;

use svc_sellers::Sellers;
use svc_sellers::invoke::{Invocable, Invoked, Taken};

use crate::error::ApiError;
use crate::limits::rate_headers;
use crate::rate::Counted;
use crate::state::AppState;
use crate::x402::{Front, Wares};

/// The invoke route, beside the route table.
pub fn router() -> Router<AppState> {
    let path = svc_catalogue::routes::sellers::INVOKE_PATH;
    Router::new()
        .route(path, axum::routing::post(invoke).fallback(|| async { ApiError::MethodNotAllowed { allow: "POST" } }))
}

async fn invoke(State(state): State<AppState>, Path(agent_id): Path<String>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let response = match Box::pin(run(&state, &agent_id, &parts, body)).await {
        Ok(response) => response,
        Err(err) => err.into_response(),
    };
    crate::encoding::negotiate(response, &parts.headers)
}

/// Sells one invoke of `agent_id` (an MCP tool call of the agent comes here too).
pub(crate) async fn run(state: &AppState, agent_id: &str, parts: &Parts, body: Body) -> Result<Response, ApiError> {
    // The agent id is looked up in the store, and the query is read for `preview`.
    svc_catalogue::input::check_names(&[("agent_id", agent_id)], parts.uri.query())?;
    let sellers = &state.sellers;
    let invocable = sellers.invocable(agent_id).await?;
    let body = crate::pipeline::read_body(&parts.headers, body, state.config.body_limit_bytes).await?;
    // A seller's schema can make checking a body cost more than a route's types do, so the
    // client's quota or rate limit is counted before the body is checked, not after.
    if svc_catalogue::preview::requested(parts.uri.query())? {
        let answer = |_, now| async move {
            sellers.check_body(&invocable, body).await?;
            Ok(sellers.preview(&invocable, now)?)
        };
        return Ok(crate::preview::serve(state, parts, answer).await);
    }
    let product = invocable.product();
    let counted = Counted { product: &product, limit: state.config.rate_per_minute, bucket: "default" };
    let front = Front { state, parts, body: Some(&body) };
    let wares = async {
        let value = sellers.check_body(&invocable, body.clone()).await?;
        let description = invocable.description();
        Ok(AgentCall { invocable: &invocable, product: &product, description, body: body.clone(), value })
    };
    Ok(crate::x402::dispatch(front, counted, wares).await)
}

/// One call of a seller's agent, its body checked against the agent's schema: what the x402
/// branch sells.
pub(crate) struct AgentCall<'a> {
    invocable: &'a Invocable,
    /// What its payments are recorded as.
    product: &'a str,
    /// One line about it, for its challenge.
    description: String,
    /// The body as received, forwarded to the seller.
    body: Bytes,
    /// The same, parsed, for its challenge's `bazaar` example.
    value: Value,
}

impl Wares for AgentCall<'_> {
    /// The seller's price.
    fn price(&self) -> Money {
        self.invocable.price()
    }

    /// What its challenge offers.
    fn offered(&self) -> Offered<'_> {
        Offered::Agent { description: &self.description, schema: self.invocable.input_schema(), body: &self.value }
    }

    /// The room the agent's own limits leave, looked at (not taken) before a challenge: a call
    /// they refuse is a 429 where its challenge would be.
    async fn room(&self, state: &AppState) -> Result<Option<Decision>, ApiError> {
        Ok(Some(state.sellers.peek_limits(self.invocable).await?))
    }

    /// Charges `payment` for the call forwarded to the seller. The agent's limits are counted
    /// only once the payment verified, so junk payments cannot use up an agent's calls.
    async fn sell(self, front: Front<'_>, price: Money, payment: &DecodedPayment) -> Result<Response, ApiError> {
        let state = front.state;
        let sellers = &state.sellers;
        let now = state.clock.now_ms();
        let invocable = self.invocable;
        let challenge = front.challenge(self.offered(), price);
        let slot = Slot { sellers: state.sellers.clone(), invocable: invocable.clone(), taken: Mutex::new(None) };
        let (slot_ref, body_ref) = (&slot, &self.body);
        let work = move |buyer: Buyer| async move {
            slot_ref.hold(sellers.take_limits(invocable).await?);
            let answer = sellers.forward(invocable, body_ref.clone(), &buyer.payer, &buyer.payment).await?;
            Ok::<_, ApiError>(Sold { json: answer.clone(), answer, then: None })
        };
        let charged = challenge.charge(self.product, payment, work).await;
        let ended = match &charged {
            Ok(Outcome::Paid { receipt, .. }) => Invoked::Paid { on_chain: !receipt.transaction.is_empty() },
            // The seller worked; its answer is only withheld until the transfer confirms.
            Ok(Outcome::Unsettled { .. }) => Invoked::Withheld,
            Ok(Outcome::Kept { .. } | Outcome::Refused { .. } | Outcome::Failed(_)) | Err(_) => Invoked::NotServed,
        };
        let slot = slot.release();
        if let Some(slot) = slot {
            sellers.invoked(invocable, slot, ended).await;
        }
        let mut response = crate::x402::respond::<Bytes>(charged?, &challenge)?;
        if let Some(slot) = slot {
            rate_headers(response.headers_mut(), &slot.minute, now);
        }
        Ok(response)
    }
}

/// The agent's call a paid invoke took once its payment verified. Settled by the invoke when it
/// ends; a request dropped before that (its client hung up mid-call) gives the call back, so
/// abandoned calls cannot use up an agent's limits.
struct Slot {
    sellers: Arc<Sellers>,
    invocable: Invocable,
    taken: Mutex<Option<Taken>>,
}

impl Slot {
    fn hold(&self, taken: Taken) {
        *self.taken.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(taken);
    }

    /// The call taken, now the invoke settles it itself.
    fn release(&self) -> Option<Taken> {
        self.taken.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(taken) = self.release() {
            let (sellers, invocable) = (self.sellers.clone(), self.invocable.clone());
            tokio::spawn(async move { sellers.invoked(&invocable, taken, Invoked::NotServed).await });
        }
    }
}
