//! The launchpad's coin API: `GET /coins/{mint}` with the launchpad's field names, ms
//! timestamps, market cap in SOL and USD, and `null` for absent links.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::Simulator;

pub(super) fn router(sim: Simulator) -> Router {
    Router::new().route("/coins/{mint}", get(coin)).with_state(sim)
}

async fn coin(State(sim): State<Simulator>, Path(mint): Path<String>) -> Response {
    let world = &sim.world;
    let Some(coin) = world.coin(&mint) else {
        return (StatusCode::NOT_FOUND, Json(json!({"statusCode": 404, "message": "Coin not found"}))).into_response();
    };
    let state = world.coin_state(coin);
    let link = |kind: &str| coin.socials.then(|| format!("https://{kind}.example/{}", coin.symbol.to_lowercase()));
    let pool = state.complete.then(|| format!("{}pool", &coin.mint[..coin.mint.len().min(39)]));
    Json(json!({
        "mint": coin.mint,
        "name": coin.name,
        "symbol": coin.symbol,
        "description": format!("{} to the moon.", coin.name),
        "image_uri": format!("https://ipfs.example/ipfs/{}", &coin.mint[..16]),
        "video_uri": null,
        "metadata_uri": format!("https://ipfs.example/ipfs/{}", &coin.mint[16..32]),
        "twitter": link("x"),
        "telegram": link("t"),
        "website": link("www"),
        "bonding_curve": format!("{}curve", &coin.mint[..coin.mint.len().min(38)]),
        "associated_bonding_curve": format!("{}assoc", &coin.mint[..coin.mint.len().min(38)]),
        "creator": coin.creator,
        "created_timestamp": coin.created_ms,
        "raydium_pool": null,
        "pump_swap_pool": pool,
        "complete": state.complete,
        "virtual_sol_reserves": state.virtual_sol_reserves,
        "virtual_token_reserves": state.virtual_token_reserves,
        "total_supply": state.total_supply,
        "hidden": null,
        "show_name": true,
        "last_trade_timestamp": state.last_trade_ms,
        "king_of_the_hill_timestamp": state.king_of_the_hill_ms,
        "market_cap": state.market_cap_sol,
        "reply_count": 0,
        "last_reply": null,
        "nsfw": false,
        "market_id": null,
        "inverted": null,
        "is_currently_live": false,
        "username": null,
        "profile_image": null,
        "usd_market_cap": state.market_cap_usd,
    }))
    .into_response()
}
