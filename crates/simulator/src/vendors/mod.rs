//! The fake vendor servers: one router per vendor, nested under its prefix, sharing one
//! fault layer.

mod launchpad;
mod predmkt;
pub(crate) mod social;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::{Fault, Simulator};

pub(crate) fn router(sim: Simulator) -> Router {
    Router::new()
        .route("/", axum::routing::get(index).with_state(sim.clone()))
        .nest("/launchpad", launchpad::router(sim.clone()))
        .nest("/predmkt-gamma", predmkt::gamma(sim.clone()))
        .nest("/predmkt-clob", predmkt::clob(sim.clone()))
        .nest("/social", social::router(sim.clone()))
        .layer(axum::middleware::from_fn_with_state(sim, faults))
}

/// Logs every request and applies the vendor's next queued fault.
async fn faults(State(sim): State<Simulator>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let vendor = path.trim_start_matches('/').split('/').next().unwrap_or_default().to_owned();
    let line = format!("{} {}", request.method(), request.uri());
    match sim.faults.on_request(&vendor, line) {
        Some(Fault::Status { status, retry_after }) => {
            let status =
                axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
            let body =
                axum::Json(serde_json::json!({"statusCode": status.as_u16(), "message": status.canonical_reason()}));
            match retry_after {
                Some(secs) => (status, [("retry-after", secs.to_string())], body).into_response(),
                None => (status, body).into_response(),
            }
        }
        Some(Fault::Delay(wait)) => {
            tokio::time::sleep(wait).await;
            next.run(request).await
        }
        None => next.run(request).await,
    }
}

/// What the world holds, so a person trying the default run has identifiers to ask for.
async fn index(State(sim): State<Simulator>) -> axum::Json<serde_json::Value> {
    let coins: Vec<_> =
        sim.world.coins().iter().take(10).map(|c| serde_json::json!({"mint": c.mint, "symbol": c.symbol})).collect();
    let markets: Vec<_> = sim
        .world
        .pred_markets()
        .iter()
        .map(|m| serde_json::json!({"condition_id": m.condition_id, "question": m.question}))
        .collect();
    let usernames: Vec<_> = sim.world.social_accounts().iter().take(10).map(|a| a.username.clone()).collect();
    axum::Json(serde_json::json!({
        "simulated": true,
        "launchpad": {"coins": coins},
        "predmkt": {"markets": markets},
        "social": {"usernames": usernames},
    }))
}
