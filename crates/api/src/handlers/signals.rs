//! The signal routes: Top Picks, Top Picks lite, Exodus, Whale Alerts and the data products.
//! Every one answers from the engine's newest snapshot and never calls an upstream, so a burst
//! of requests costs no vendor calls and every answer says when its data was computed.

use svc_catalogue::ids;
use svc_catalogue::routes::common::NoInput;
use svc_catalogue::routes::signals::{
    DataProductRequest, DataProductResponse, ExodusResponse, TopPicksLiteResponse, TopPicksResponse,
    TrackRecordResponse, WhaleAlertsResponse,
};

use super::Handlers;
use crate::answer::Encoded;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add_encoded(ids::alpha::TOP_PICKS, top_picks);
    handlers.add_encoded(ids::alpha::TOP_PICKS_LITE, top_picks_lite);
    handlers.add_encoded(ids::alpha::EXODUS, exodus);
    handlers.add(ids::alpha::WHALE_ALERTS, whale_alerts);
    handlers.add(ids::tools::DATA_PRODUCTS, data_product);
    handlers.add(ids::public::ALPHA_TRACK_RECORD, track_record);
}

/// `GET /api/public/alpha/track-record`.
async fn track_record(state: AppState, _: NoInput) -> Result<TrackRecordResponse, ApiError> {
    Ok((*state.signals.track_record().await?).clone())
}

/// `GET {alpha}/top-picks`.
async fn top_picks(state: AppState, _: NoInput) -> Result<Encoded<TopPicksResponse>, ApiError> {
    Ok(state.signals.latest().await?.published.top_picks.clone())
}

/// `GET {alpha}/top-picks-lite`.
async fn top_picks_lite(state: AppState, _: NoInput) -> Result<Encoded<TopPicksLiteResponse>, ApiError> {
    Ok(state.signals.latest().await?.published.top_picks_lite.clone())
}

/// `GET {alpha}/exodus`.
async fn exodus(state: AppState, _: NoInput) -> Result<Encoded<ExodusResponse>, ApiError> {
    Ok(state.signals.latest().await?.published.exodus.clone())
}

/// `GET {alpha}/whale-alerts`.
async fn whale_alerts(state: AppState, _: NoInput) -> Result<WhaleAlertsResponse, ApiError> {
    Ok(state.signals.whale_alerts().await?)
}

/// `POST {tools}/data-products/{product_id}`.
async fn data_product(state: AppState, input: DataProductRequest) -> Result<DataProductResponse, ApiError> {
    let s = state.signals.latest().await?;
    Ok(svc_signals::data_product(&s.snapshot, input.product_id, &input.params))
}
