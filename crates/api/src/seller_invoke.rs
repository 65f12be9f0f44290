//! `POST /x402/agents/{agent_id}/invoke`: a seller's agent, paid per call over x402 through the
//! same paywall as every catalogue route.
//!
//! The order is the contract's promise that nobody signs for a call that will be refused: the
//! agent must be selling (404), the body must match its schema (422), and its limits must leave
//! room (429) before a challenge is given. A paid call is counted against the limits, forwarded
//! to the seller as the paywall's work, and settled only if the seller answered; a call that was
//! not served gives its count back.

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use svc_paywall::{Buyer, Outcome, Sale, Sold};
use svc_sellers::invoke::Invoked;

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
    let value = sellers.check_body(&invocable, &body)?;
    let now = state.clock.now_ms();
    if svc_catalogue::preview::requested(parts.uri.query())? {
        let (quota, _) = match crate::preview::take_quota(state, parts, now).await {
            Ok(taken) => taken,
            Err(refused) => return Ok(refused),
        };
        let mut response = (StatusCode::OK, axum::Json(sellers.preview(&invocable, now)?)).into_response();
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        rate_headers(response.headers_mut(), &quota, now);
        return Ok(response);
    }
    let description = invocable.description();
    let price = invocable.price();
    let offered = Offered::Agent { description: &description, schema: invocable.input_schema(), body: &value };
    let challenge = Challenge { state, offered, parts, body: Some(&body), price };
    // A call the agent's limits refuse is a 429 where its challenge would be; a paid call is
    // counted against them below, and refused the same way.
    let payment = match crate::x402::presented(&parts.headers) {
        Presented::Payment(payment) => payment,
        Presented::TooLarge(bytes) => {
            return Err(ApiError::PaymentHeaderTooLarge { bytes, limit: svc_x402::codec::MAX_HEADER_BYTES });
        }
        Presented::Junk => {
            sellers.peek_limits(&invocable).await?;
            return Err(challenge.unpaid(true));
        }
        Presented::Nothing => {
            let room = sellers.peek_limits(&invocable).await?;
            let mut response = challenge.unpaid(false).into_response();
            rate_headers(response.headers_mut(), &room, now);
            return Ok(response);
        }
    };
    let taken = sellers.take_limits(&invocable).await?;
    let advertised = svc_paywall::echoes_extensions(&payment).then(|| challenge.extensions(Schemas::Omitted));
    let product = invocable.product();
    let sale = Sale { product: &product, price, discountable: false, advertised: advertised.as_ref() };
    let forwarded = body.clone();
    let invocable_ref = &invocable;
    let work = move |buyer: Buyer| async move {
        let answer = sellers.forward(invocable_ref, forwarded, &buyer.payer, &buyer.payment).await?;
        Ok::<_, ApiError>(Sold { json: answer.clone(), answer, then: None })
    };
    let outcome = match state.paywall.charge(sale, &payment, work).await {
        Ok(outcome) => outcome,
        Err(err) => {
            sellers.invoked(&invocable, taken, Invoked::NotServed).await;
            return Err(err.into());
        }
    };
    let ended = match &outcome {
        Outcome::Paid { receipt, .. } => Invoked::Paid { on_chain: !receipt.transaction.is_empty() },
        // The seller worked; its answer is only withheld until the transfer confirms.
        Outcome::Unsettled { .. } => Invoked::Withheld,
        Outcome::Kept { .. } | Outcome::Refused { .. } | Outcome::Failed(_) => Invoked::NotServed,
    };
    sellers.invoked(&invocable, taken, ended).await;
    let mut response = crate::x402::respond::<Bytes>(outcome, &challenge)?;
    rate_headers(response.headers_mut(), &taken.minute, now);
    Ok(response)
}
