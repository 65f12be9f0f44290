//! `GET /api/x402/pricing`: what each route costs a payer, so an agent can budget before it
//! pays and see how far it is from the next volume tier.

use svc_catalogue::ids;
use svc_catalogue::routes::public::{PricingRequest, PricingResponse};

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add(ids::x402::PRICING, pricing);
}

async fn pricing(state: AppState, input: PricingRequest) -> Result<PricingResponse, ApiError> {
    let payer = input.payer.map(|p| svc_x402::codec::payer_key(p.as_str()));
    let calls = match &payer {
        Some(payer) => state.paywall.paid_calls(payer).await?,
        None => 0,
    };
    Ok(state.catalogue.pricing(payer, calls))
}
