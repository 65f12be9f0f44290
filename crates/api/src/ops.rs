//! Free operational and discovery routes: health, readiness, metrics, and the documents
//! generated from the catalogue.

use std::sync::OnceLock;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::json;
use svc_catalogue::routes::sellers::MarketplaceAgent;
use svc_catalogue::{discovery, openapi};

use crate::answer::Answer;
use crate::answer::json_response;
use crate::error::ApiError;
use crate::state::AppState;

/// `GET /`: what this server is and where its documents are.
pub async fn index(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(discovery::index(state.config.base_url()))
}

/// `GET /healthz`: the process is up.
pub async fn healthz() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

/// `GET /readyz`: the store answers, and every network that settles on chain can (some
/// relayer has gas).
pub async fn readyz(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    state.store.ping().await.map_err(|e| ApiError::Unavailable(format!("store: {e}")))?;
    let unready = state.paywall.facilitator().unready_networks();
    if !unready.is_empty() {
        tracing::warn!(networks = ?unready, "not ready: no relayer can pay for gas");
        return Err(ApiError::Unavailable(format!("no relayer can pay for gas on {}; fund one", unready.join(", "))));
    }
    Ok(Json(json!({ "status": "ok", "store": state.store.backend().to_string() })))
}

/// `GET /metrics`: Prometheus text.
pub async fn metrics(State(state): State<AppState>) -> Response {
    let mut response = state.metrics.render().into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4"));
    response
}

/// `GET /openapi.json`: generated and gzipped once per process; it is most of a megabyte,
/// and the gzip copy about a tenth of that.
pub async fn openapi_json(State(state): State<AppState>, headers: HeaderMap) -> Response {
    static DOC: OnceLock<Answer> = OnceLock::new();
    let doc = DOC.get_or_init(|| {
        let json = openapi::document_text(state.catalogue);
        let gzip = crate::encoding::gzip(json.as_bytes()).ok().map(Bytes::from);
        Answer { json: Bytes::from(json), gzip }
    });
    crate::encoding::negotiate(json_response(doc.clone()), &headers)
}

/// Sellers' listed agents, for the discovery documents; a store that fails leaves them out
/// (the routes are still worth listing).
pub(crate) async fn listed_agents(state: &AppState) -> Vec<MarketplaceAgent> {
    state.sellers.all_listed().await.unwrap_or_else(|err| {
        tracing::warn!(error = %err, "could not list sellers' agents for discovery");
        Vec::new()
    })
}

/// `GET /api/x402/catalogue`.
pub async fn catalogue(State(state): State<AppState>) -> Json<serde_json::Value> {
    let config = &state.config;
    let agents = listed_agents(&state).await;
    let base = config.base_url();
    Json(discovery::catalogue_document(state.catalogue, &agents, base, |r| config.shown_rate_limit(r)))
}

/// `GET /.well-known/x402`.
pub async fn well_known(State(state): State<AppState>) -> Json<serde_json::Value> {
    let agents = listed_agents(&state).await;
    Json(discovery::well_known(state.catalogue, &agents, state.config.base_url()))
}

/// `GET /llms.txt`.
pub async fn llms_txt(State(state): State<AppState>) -> Response {
    let agents = listed_agents(&state).await;
    let mut response = discovery::llms_txt(state.catalogue, &agents, state.config.base_url()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}
