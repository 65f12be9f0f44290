//! Prediction-market routes: search, quotes, books, displayed price against the book, and
//! the arbitrage scan.

use svc_catalogue::routes::predmkt::{
    PredmktArbitrageRequest, PredmktArbitrageResponse, PredmktCompareRequest, PredmktCompareResponse,
    PredmktOrderbookRequest, PredmktOrderbookResponse, PredmktQuoteRequest, PredmktQuoteResponse, PredmktSearchRequest,
    PredmktSearchResponse,
};

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add("predmkt.search", search);
    handlers.add("predmkt.quote", quote);
    handlers.add("predmkt.orderbook", orderbook);
    handlers.add("predmkt.compare", compare);
    handlers.add("predmkt.arbitrage", arbitrage);
}

/// `POST {tools}/predmkt/search`.
async fn search(state: AppState, input: PredmktSearchRequest) -> Result<PredmktSearchResponse, ApiError> {
    Ok(state.upstreams.predmkt.search(&input.keyword, input.limit, input.offset).await?)
}

/// `POST {tools}/predmkt/quote`.
async fn quote(state: AppState, input: PredmktQuoteRequest) -> Result<PredmktQuoteResponse, ApiError> {
    Ok(state.upstreams.predmkt.quote(&input.condition_id, &input.outcome).await?)
}

/// `POST {tools}/predmkt/orderbook`.
async fn orderbook(state: AppState, input: PredmktOrderbookRequest) -> Result<PredmktOrderbookResponse, ApiError> {
    Ok(state.upstreams.predmkt.orderbook(&input.condition_id, &input.outcome).await?)
}

/// `POST {tools}/predmkt/compare`.
async fn compare(state: AppState, input: PredmktCompareRequest) -> Result<PredmktCompareResponse, ApiError> {
    Ok(state.upstreams.predmkt.compare(&input.condition_id).await?)
}

/// `POST {tools}/predmkt/arbitrage`.
async fn arbitrage(state: AppState, input: PredmktArbitrageRequest) -> Result<PredmktArbitrageResponse, ApiError> {
    Ok(state.upstreams.predmkt.arbitrage(input.min_spread, input.limit).await?)
}
