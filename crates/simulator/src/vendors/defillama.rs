//! The yields index: `GET /pools`, every pool of every chain in one
//! `{"status":"success","data":[…]}` answer, keyless.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::Simulator;

pub(super) fn router(sim: Simulator) -> Router {
    Router::new().route("/pools", get(pools)).with_state(sim)
}

async fn pools(State(sim): State<Simulator>) -> Json<Value> {
    let world = &sim.world;
    let data: Vec<Value> = world
        .yield_pools()
        .iter()
        .map(|pool| {
            let yields = world.pool_yields(pool);
            let reward = (yields.apy_reward > 0.0).then_some(yields.apy_reward);
            json!({
                "chain": pool.chain,
                "project": pool.project,
                "symbol": pool.symbol,
                "tvlUsd": yields.tvl_usd.round(),
                "apyBase": yields.apy_base,
                "apyReward": reward,
                "apy": yields.apy(),
                "rewardTokens": reward.map(|_| vec![pool.underlying[0].clone()]),
                "pool": pool.pool,
                "apyPct1D": 0.01,
                "apyPct7D": -0.2,
                "apyPct30D": 0.5,
                "stablecoin": pool.stablecoin,
                "ilRisk": if pool.exposure_single { "no" } else { "yes" },
                "exposure": if pool.exposure_single { "single" } else { "multi" },
                "predictions": {"predictedClass": "Stable/Up", "predictedProbability": 70, "binnedConfidence": 2},
                "poolMeta": null,
                "mu": yields.apy(),
                "sigma": 0.1,
                "count": 400,
                "outlier": false,
                "underlyingTokens": pool.underlying,
                "il7d": null,
                "apyBase7d": null,
                "apyMean30d": yields.apy(),
                "volumeUsd1d": null,
                "volumeUsd7d": null,
                "apyBaseInception": null,
            })
        })
        .collect();
    Json(json!({"status": "success", "data": data}))
}
