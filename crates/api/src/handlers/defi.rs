//! Swap quotes, DeFi discovery and quotes, token prices and transaction scans: validated
//! input to the vendor adapters and back, nothing else.

use svc_catalogue::routes::infra::{SwapQuoteRequest, SwapQuoteResponse};

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add("infra.swap_quote", swap_quote);
}

/// `POST {tools}/swap-quote`: both Solana aggregators at once.
async fn swap_quote(state: AppState, input: SwapQuoteRequest) -> Result<SwapQuoteResponse, ApiError> {
    Ok(state.upstreams.solana_swap.quote(&input).await?)
}
