//! The first Solana aggregator's quote API: `GET /swap/v1/quote` with string amounts, a
//! route plan of hops and `{"error","errorCode"}` 400s. Keyless, like its free host.

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::Simulator;
use crate::world::SolToken;

pub(super) fn router(sim: Simulator) -> Router {
    Router::new().route("/swap/v1/quote", get(quote)).with_state(sim)
}

fn refuse(message: &str, code: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"error": message, "errorCode": code}))).into_response()
}

/// Venues the simulated routes go through.
const VENUES: [&str; 4] = ["Whirlpool", "Raydium CLMM", "Meteora DLMM", "SolFi"];

/// The hops from `from` to `to`: direct against SOL or USDC, otherwise through SOL.
pub(super) fn hops<'a>(sim: &'a Simulator, from: &'a SolToken, to: &'a SolToken) -> Vec<(&'a SolToken, &'a SolToken)> {
    let hub = &sim.world.sol_tokens()[0];
    let usdc = &sim.world.sol_tokens()[1];
    let direct = [from, to].iter().any(|t| t.mint == hub.mint || t.mint == usdc.mint);
    if direct { vec![(from, to)] } else { vec![(from, hub), (hub, to)] }
}

async fn quote(State(sim): State<Simulator>, Query(query): Query<HashMap<String, String>>) -> Response {
    let param = |name: &str| query.get(name).map(String::as_str);
    let (Some(input), Some(output)) = (param("inputMint"), param("outputMint")) else {
        return refuse("Query parameters inputMint and outputMint are required", "INVALID_REQUEST");
    };
    let Some(amount) = param("amount").and_then(|a| a.parse::<u64>().ok()).filter(|a| *a > 0) else {
        return refuse("Query parameter amount cannot be parsed", "INVALID_REQUEST");
    };
    let slippage_bps = param("slippageBps").map_or(Some(50), |s| s.parse::<u32>().ok());
    let Some(slippage_bps) = slippage_bps.filter(|s| *s <= 10_000) else {
        return refuse("Query parameter slippageBps cannot be parsed", "INVALID_REQUEST");
    };
    if input == output {
        return refuse("Circular arbitrage is disabled", "CIRCULAR_ARBITRAGE_IS_DISABLED");
    }
    let world = &sim.world;
    let (Some(from), Some(to)) = (world.sol_token(input), world.sol_token(output)) else {
        let unknown = if world.sol_token(input).is_none() { input } else { output };
        return refuse(&format!("The token {unknown} is not tradable"), "TOKEN_NOT_TRADABLE");
    };
    let fee_bps = world.aggregator_fee_bps(0.0);
    let mut plan: Vec<Value> = Vec::new();
    let mut hop_in = amount;
    let mut impact_total = 0.0;
    for (index, (a, b)) in hops(&sim, from, to).into_iter().enumerate() {
        let (hop_out, impact) = world.swap_out(
            hop_in,
            (world.sol_token_usd(a), a.decimals),
            (world.sol_token_usd(b), b.decimals),
            fee_bps,
            20_000_000.0,
        );
        impact_total += impact;
        plan.push(json!({
            "swapInfo": {
                "ammKey": format!("{}{}", &a.mint[..22], &b.mint[..22]),
                "label": VENUES[(index + a.symbol.len()) % VENUES.len()],
                "inputMint": a.mint,
                "outputMint": b.mint,
                "inAmount": hop_in.to_string(),
                "outAmount": hop_out.to_string(),
                "feeAmount": (hop_in / 400).to_string(),
                "feeMint": a.mint,
            },
            "percent": 100,
            "bps": 10_000,
        }));
        hop_in = hop_out;
    }
    let out = hop_in;
    let threshold = u128::from(out) * u128::from(10_000 - slippage_bps) / 10_000;
    Json(json!({
        "inputMint": from.mint,
        "inAmount": amount.to_string(),
        "outputMint": to.mint,
        "outAmount": out.to_string(),
        "otherAmountThreshold": threshold.to_string(),
        "swapMode": "ExactIn",
        "slippageBps": slippage_bps,
        "platformFee": null,
        "priceImpactPct": format!("{impact_total:.8}"),
        "routePlan": plan,
        "contextSlot": 300_000_000 + world.now_ms() / 400,
        "timeTaken": 0.004,
        "swapUsdValue": format!("{:.4}", amount as f64 / 10f64.powi(i32::from(from.decimals)) * world.sol_token_usd(from)),
        "simplerRouteUsed": false,
    }))
    .into_response()
}
