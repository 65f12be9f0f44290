//! `GET /api/x402/pricing`: what each route costs a payer, so an agent can budget before it
//! pays and see how far it is from the next volume tier.

use svc_catalogue::ids;
use svc_catalogue::routes::public::{PricingRequest, PricingResponse, RoutePrice};
use svc_domain::DiscountTier;
use svc_domain::discount::DISCOUNT_WINDOW_DAYS;

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
    let tier = DiscountTier::for_calls(calls);
    let routes = state
        .catalogue
        .routes()
        .iter()
        .filter(|r| r.is_paid())
        .map(|r| RoutePrice {
            id: r.id.to_owned(),
            method: r.method.as_str().to_owned(),
            path: r.path.to_owned(),
            list: r.price.min(),
            price: tier.apply(r.price.min()),
            max: r.price.max(),
            credits: r.credit_price,
        })
        .collect();
    Ok(PricingResponse {
        payer,
        tier,
        percent_off: tier.percent_off(),
        calls_in_window: calls,
        window_days: DISCOUNT_WINDOW_DAYS,
        calls_to_next_tier: DiscountTier::calls_to_next(calls),
        routes,
    })
}
