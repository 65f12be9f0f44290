//! The signal routes: Top Picks, Top Picks lite, Exodus, Whale Alerts and the data products.
//! Every one answers from the engine's newest snapshot and never calls an upstream, so a burst
//! of requests costs no vendor calls and every answer says when its data was computed.

use svc_catalogue::ids;
use svc_catalogue::routes::common::NoInput;
use svc_catalogue::routes::signals::{
    DataProductRequest, DataProductResponse, ExodusResponse, TopPicksLiteResponse, TopPicksResponse,
    TrackRecordResponse, WhaleAlertsResponse,
};

use svc_signals::parse_time;

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

/// How far back the track record looks.
const TRACK_WINDOW_MS: i64 = 30 * 24 * 60 * 60 * 1000;
/// Most snapshots the track record reads (30 days of half-hourly snapshots).
const TRACK_MAX_SNAPSHOTS: u32 = 1_500;

/// `GET /api/public/alpha/track-record`: computed from stored snapshots only (a free route
/// never triggers a gathering), and cached until the next snapshot lands.
async fn track_record(state: AppState, _: NoInput) -> Result<TrackRecordResponse, ApiError> {
    let newest = state.store.latest_signal_snapshot_at().await?;
    if let Some(hit) = state.signals.track_record_for(newest) {
        return Ok((*hit).clone());
    }
    let since = state.clock.now_ms() - TRACK_WINDOW_MS;
    let history: Vec<svc_signals::Snapshot> = state
        .store
        .signal_snapshots_since(since, TRACK_MAX_SNAPSHOTS)
        .await?
        .into_iter()
        .filter_map(|s| serde_json::from_str(&s.body).ok())
        .collect();
    let record = std::sync::Arc::new(svc_signals::track_record(&history));
    state.signals.keep_track_record(history.last().map(|s| s.generated_at_ms), record.clone());
    Ok((*record).clone())
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

/// `GET {alpha}/whale-alerts`: the snapshot's alerts still inside the last hour now (a
/// snapshot is up to one refresh old, and an alert must never be older than an hour).
async fn whale_alerts(state: AppState, _: NoInput) -> Result<WhaleAlertsResponse, ApiError> {
    let s = &state.signals.latest().await?.snapshot;
    let from = state.clock.now_ms() - state.signals.config().whale_window_ms;
    let alerts = s.whale_alerts.iter().filter(|a| parse_time(&a.at.0).is_some_and(|at| at > from)).cloned().collect();
    Ok(WhaleAlertsResponse { meta: s.meta(), threshold_usd: s.whale_threshold_usd, alerts })
}

/// `POST {tools}/data-products/{product_id}`.
async fn data_product(state: AppState, input: DataProductRequest) -> Result<DataProductResponse, ApiError> {
    let s = state.signals.latest().await?;
    Ok(svc_signals::data_product(&s.snapshot, input.product_id, &input.params))
}
