//! Prediction-market routes: search, quotes, books, displayed price against the book, and
//! the arbitrage scan.

use svc_catalogue::ids;
use svc_catalogue::routes::predmkt::{
    PredmktArbitrageRequest, PredmktArbitrageResponse, PredmktCompareRequest, PredmktCompareResponse,
    PredmktOrderbookRequest, PredmktOrderbookResponse, PredmktQuoteRequest, PredmktQuoteResponse, PredmktSearchRequest,
    PredmktSearchResponse,
};

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add(ids::predmkt::SEARCH, search);
    handlers.add(ids::predmkt::QUOTE, quote);
    handlers.add(ids::predmkt::ORDERBOOK, orderbook);
    handlers.add(ids::predmkt::COMPARE, compare);
    handlers.add(ids::predmkt::ARBITRAGE, arbitrage);
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
