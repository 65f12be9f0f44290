//! `POST /x402/agents/{agent_id}/invoke`: a seller's agent, paid per call over x402 through the
//! same paywall as every catalogue route.
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
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use std::sync::{Arc, Mutex};
use svc_paywall::{Buyer, Outcome, Sale, Sold};

use svc_sellers::Sellers;
use svc_sellers::invoke::{Invocable, Invoked, Taken};

use crate::error::ApiError;
use crate::limits::rate_headers;
use crate::state::AppState;
use crate::x402::Challenge;
use svc_catalogue::challenge::{Offered, Schemas};
use svc_x402::codec::Presented;

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

async fn run(state: &AppState, agent_id: &str, parts: &Parts, body: Body) -> Result<Response, ApiError> {
    // The agent id is looked up in the store, and the query is read for `preview`.
    svc_catalogue::input::check_names(&[("agent_id", agent_id)], parts.uri.query())?;
    let sellers = &state.sellers;
    let invocable = sellers.invocable(agent_id).await?;
    let body = crate::pipeline::read_body(&parts.headers, body, state.config.body_limit_bytes).await?;
    let now = state.clock.now_ms();
    // A seller's schema can make checking a body cost more than a route's types do, so the
    // client's quota or rate limit is counted before the body is checked, not after.
    if svc_catalogue::preview::requested(parts.uri.query())? {
        let (quota, _) = match crate::preview::take_quota(state, parts, now).await {
            Ok(taken) => taken,
            Err(refused) => return Ok(refused),
        };
        sellers.check_body(&invocable, body.clone()).await?;
        let mut response = (StatusCode::OK, axum::Json(sellers.preview(&invocable, now)?)).into_response();
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        rate_headers(response.headers_mut(), &quota, now);
        return Ok(response);
    }
    let product = invocable.product();
    let counted = crate::rate::Counted { product: &product, limit: state.config.rate_per_minute, bucket: "default" };
    let presented = crate::x402::presented(&parts.headers);
    let payer = presented.claimed_payer();
    let paid = Box::pin(sell(state, &invocable, &product, parts, body, presented));
    Ok(crate::rate::x402(state, counted, parts, payer, paid).await)
}

/// The x402 side of an invoke, under the client's rate limit: a challenge, or a payment charged
/// for the forwarded call. The agent's own limits are looked at before a challenge and counted
/// only once a payment verified, so junk payments cannot use up an agent's calls.
async fn sell(
    state: &AppState,
    invocable: &Invocable,
    product: &str,
    parts: &Parts,
    body: Bytes,
    presented: Presented,
) -> Result<Response, ApiError> {
    let sellers = &state.sellers;
    let value = sellers.check_body(invocable, body.clone()).await?;
    let now = state.clock.now_ms();
    let description = invocable.description();
    let price = invocable.price();
    let offered = Offered::Agent { description: &description, schema: invocable.input_schema(), body: &value };
    let challenge = Challenge { state, offered, parts, body: Some(&body), price };
    // A call the agent's limits refuse is a 429 where its challenge would be.
    let payment = match presented {
        Presented::Payment(payment) => payment,
        Presented::TooLarge(bytes) => {
            return Err(ApiError::PaymentHeaderTooLarge { bytes, limit: svc_x402::codec::MAX_HEADER_BYTES });
        }
        Presented::Junk => {
            sellers.peek_limits(invocable).await?;
            return Err(challenge.unpaid(true));
        }
        Presented::Nothing => {
            let room = sellers.peek_limits(invocable).await?;
            let mut response = challenge.unpaid(false).into_response();
            rate_headers(response.headers_mut(), &room, now);
            return Ok(response);
        }
    };
    let advertised = svc_paywall::echoes_extensions(&payment).then(|| challenge.extensions(Schemas::Omitted));
    let sale = Sale { product, price, discountable: false, advertised: advertised.as_ref() };
    let slot = Slot { sellers: state.sellers.clone(), invocable: invocable.clone(), taken: Mutex::new(None) };
    let (slot_ref, body_ref) = (&slot, &body);
    let work = move |buyer: Buyer| async move {
        slot_ref.hold(sellers.take_limits(invocable).await?);
        let answer = sellers.forward(invocable, body_ref.clone(), &buyer.payer, &buyer.payment).await?;
        Ok::<_, ApiError>(Sold { json: answer.clone(), answer, then: None })
    };
    let charged = state.paywall.charge(sale, &payment, work).await;
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
