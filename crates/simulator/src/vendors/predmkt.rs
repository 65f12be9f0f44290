//! The prediction market's two public APIs, no key needed:
//!
//! * the catalogue (`/public-search`, `/markets`, `/events`): camelCase fields, ids and
//!   amounts as strings, and `outcomes`, `outcomePrices`, `clobTokenIds` as JSON arrays
//!   encoded inside strings;
//! * the order books (`/markets/{condition_id}`, `/book`, `POST /books`, `/price`,
//!   `/midpoint`): snake_case fields and decimal strings. Books list bids lowest first and
//!   asks highest first (best last), as the real service does. `/price?side=BUY` is the best
//!   bid and `side=SELL` the best ask.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use svc_domain::rfc3339;

use crate::Simulator;
use crate::world::{PAYOUT, PredEvent, PredMarket, World};

pub(super) fn gamma(sim: Simulator) -> Router {
    Router::new()
        .route("/public-search", get(public_search))
        .route("/markets", get(markets))
        .route("/events", get(events))
        .with_state(sim)
}

pub(super) fn clob(sim: Simulator) -> Router {
    Router::new()
        .route("/markets/{condition_id}", get(clob_market))
        .route("/book", get(book))
        .route("/books", post(books))
        .route("/price", get(price))
        .route("/midpoint", get(midpoint))
        .with_state(sim)
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}

/// A price in the world's units as the vendors write it: a short decimal string.
fn decimal(units: u32) -> String {
    (f64::from(units) / f64::from(PAYOUT)).to_string()
}

fn gamma_market(world: &World, market: &PredMarket) -> Value {
    let event = &world.pred_events()[market.event];
    let prices = world.pred_display_prices(market);
    let yes = world.pred_book(market, 0);
    let volume = world.pred_volume(market);
    let encoded = |items: Vec<String>| serde_json::to_string(&items).unwrap_or_default();
    json!({
        "id": market.id,
        "question": market.question,
        "conditionId": market.condition_id,
        "slug": market.slug,
        "endDate": rfc3339(market.end_ms),
        "description": format!("This market resolves to \"Yes\" if: {}", market.question),
        "outcomes": encoded(market.outcomes.to_vec()),
        "outcomePrices": encoded(prices.iter().map(|p| decimal(*p)).collect()),
        "clobTokenIds": encoded(market.token_ids.to_vec()),
        "volume": volume.to_string(),
        "liquidity": market.liquidity.to_string(),
        "volumeNum": volume,
        "liquidityNum": market.liquidity,
        "volume24hr": (volume * 0.02).round(),
        "active": true,
        "closed": false,
        "archived": false,
        "enableOrderBook": true,
        "acceptingOrders": true,
        "negRisk": market.neg_risk,
        "groupItemTitle": market.group_item_title,
        "orderPriceMinTickSize": 0.01,
        "orderMinSize": 5,
        "bestBid": yes.best_bid().map(|p| f64::from(p) / f64::from(PAYOUT)),
        "bestAsk": yes.best_ask().map(|p| f64::from(p) / f64::from(PAYOUT)),
        "questionID": market.question_id,
        "events": [{"id": event.id, "title": event.title, "slug": event.slug, "negRisk": event.neg_risk}],
    })
}

fn gamma_event(world: &World, event: &PredEvent) -> Value {
    let markets: Vec<Value> = event.markets.iter().map(|&i| gamma_market(world, &world.pred_markets()[i])).collect();
    let volume: f64 = event.markets.iter().map(|&i| world.pred_volume(&world.pred_markets()[i])).sum();
    json!({
        "id": event.id,
        "title": event.title,
        "slug": event.slug,
        "active": true,
        "closed": false,
        "negRisk": event.neg_risk,
        "volume": volume,
        "markets": markets,
    })
}

#[derive(Deserialize)]
struct SearchQuery {
    q: Option<String>,
    limit_per_type: Option<usize>,
    page: Option<usize>,
}

/// Events whose title or a market question holds every word of `q`.
async fn public_search(State(sim): State<Simulator>, Query(query): Query<SearchQuery>) -> Response {
    let Some(q) = query.q.filter(|q| !q.trim().is_empty()) else {
        return error(StatusCode::BAD_REQUEST, "q is required");
    };
    let world = &sim.world;
    let words: Vec<String> = q.to_lowercase().split_whitespace().map(str::to_owned).collect();
    let matches = |text: &str| {
        let text = text.to_lowercase();
        words.iter().all(|w| text.contains(w.as_str()))
    };
    let found: Vec<&PredEvent> = world
        .pred_events()
        .iter()
        .filter(|e| matches(&e.title) || e.markets.iter().any(|&m| matches(&world.pred_markets()[m].question)))
        .collect();
    let per_page = query.limit_per_type.unwrap_or(10).clamp(1, 100);
    let page = query.page.unwrap_or(1).max(1);
    let start = (page - 1).saturating_mul(per_page);
    let events: Vec<Value> = found.iter().skip(start).take(per_page).map(|e| gamma_event(world, e)).collect();
    Json(json!({
        "events": events,
        "tags": [],
        "profiles": [],
        "pagination": {"hasMore": start.saturating_add(per_page) < found.len(), "totalResults": found.len()},
    }))
    .into_response()
}

#[derive(Deserialize)]
struct ListQuery {
    condition_ids: Option<String>,
    limit: Option<usize>,
    offset: Option<usize>,
    closed: Option<bool>,
}

/// Markets, optionally by condition ids (comma-separated); open ones only, as none close.
async fn markets(State(sim): State<Simulator>, Query(query): Query<ListQuery>) -> Response {
    let world = &sim.world;
    if query.closed == Some(true) {
        return Json(json!([])).into_response();
    }
    let wanted: Option<Vec<String>> =
        query.condition_ids.map(|ids| ids.split(',').map(|s| s.trim().to_lowercase()).collect());
    let list: Vec<Value> = world
        .pred_markets()
        .iter()
        .filter(|m| wanted.as_ref().is_none_or(|w| w.contains(&m.condition_id.to_lowercase())))
        .skip(query.offset.unwrap_or(0))
        .take(query.limit.unwrap_or(20).min(500))
        .map(|m| gamma_market(world, m))
        .collect();
    Json(list).into_response()
}

/// Events with their markets embedded, by volume, open ones only.
async fn events(State(sim): State<Simulator>, Query(query): Query<ListQuery>) -> Response {
    let world = &sim.world;
    if query.closed == Some(true) {
        return Json(json!([])).into_response();
    }
    let list: Vec<Value> = world
        .pred_events()
        .iter()
        .skip(query.offset.unwrap_or(0))
        .take(query.limit.unwrap_or(20).min(500))
        .map(|e| gamma_event(world, e))
        .collect();
    Json(list).into_response()
}

async fn clob_market(State(sim): State<Simulator>, Path(condition_id): Path<String>) -> Response {
    let world = &sim.world;
    let Some(market) = world.pred_market(&condition_id) else {
        return error(StatusCode::NOT_FOUND, "market not found");
    };
    let prices = world.pred_display_prices(market);
    let tokens: Vec<Value> = (0..2)
        .map(|i| {
            json!({
                "token_id": market.token_ids[i],
                "outcome": market.outcomes[i],
                "price": f64::from(prices[i]) / f64::from(PAYOUT),
                "winner": false,
            })
        })
        .collect();
    Json(json!({
        "enable_order_book": true,
        "active": true,
        "closed": false,
        "archived": false,
        "accepting_orders": true,
        "minimum_order_size": 5,
        "minimum_tick_size": 0.01,
        "condition_id": market.condition_id,
        "question_id": market.question_id,
        "question": market.question,
        "description": format!("This market resolves to \"Yes\" if: {}", market.question),
        "market_slug": market.slug,
        "end_date_iso": rfc3339(market.end_ms),
        "neg_risk": market.neg_risk,
        "maker_base_fee": 0,
        "taker_base_fee": 0,
        "is_50_50_outcome": false,
        "tags": ["Crypto"],
        "tokens": tokens,
    }))
    .into_response()
}

fn book_json(world: &World, market: &PredMarket, outcome: usize) -> Value {
    let book = world.pred_book(market, outcome);
    let level = |&(price, size): &(u32, u64)| json!({"price": decimal(price), "size": size.to_string()});
    // The vendor lists both sides worst first, so the best price is last.
    let bids: Vec<Value> = book.bids.iter().rev().map(level).collect();
    let asks: Vec<Value> = book.asks.iter().rev().map(level).collect();
    let now = world.now_ms();
    json!({
        "market": market.condition_id,
        "asset_id": market.token_ids[outcome],
        "timestamp": now.to_string(),
        "hash": format!("{:016x}", crate::world::mix3(now as u64, outcome as u64, market.end_ms as u64)),
        "bids": bids,
        "asks": asks,
        "min_order_size": "5",
        "tick_size": "0.01",
        "neg_risk": market.neg_risk,
        "last_trade_price": decimal(world.pred_display_prices(market)[outcome]),
    })
}

#[derive(Deserialize)]
struct TokenQuery {
    token_id: Option<String>,
    side: Option<String>,
}

const NO_BOOK: &str = "No orderbook exists for the requested token id";

async fn book(State(sim): State<Simulator>, Query(query): Query<TokenQuery>) -> Response {
    let Some(token) = query.token_id else { return error(StatusCode::BAD_REQUEST, "Invalid payload") };
    match sim.world.pred_token(&token) {
        Some((market, outcome)) => Json(book_json(&sim.world, market, outcome)).into_response(),
        None => error(StatusCode::NOT_FOUND, NO_BOOK),
    }
}

#[derive(Deserialize)]
struct BookParams {
    token_id: String,
}

/// Several books at once; tokens without a book are left out.
async fn books(State(sim): State<Simulator>, body: axum::body::Bytes) -> Response {
    let Ok(params) = serde_json::from_slice::<Vec<BookParams>>(&body) else {
        return error(StatusCode::BAD_REQUEST, "Invalid payload");
    };
    if params.len() > 500 {
        return error(StatusCode::BAD_REQUEST, "Too many token ids");
    }
    let world = &sim.world;
    let list: Vec<Value> = params
        .iter()
        .filter_map(|p| world.pred_token(&p.token_id))
        .map(|(market, outcome)| book_json(world, market, outcome))
        .collect();
    Json(list).into_response()
}

async fn price(State(sim): State<Simulator>, Query(query): Query<TokenQuery>) -> Response {
    let Some(token) = query.token_id else { return error(StatusCode::BAD_REQUEST, "Invalid payload") };
    let Some((market, outcome)) = sim.world.pred_token(&token) else { return error(StatusCode::NOT_FOUND, NO_BOOK) };
    let book = sim.world.pred_book(market, outcome);
    let best = match query.side.as_deref() {
        Some("BUY") => book.best_bid(),
        Some("SELL") => book.best_ask(),
        _ => return error(StatusCode::BAD_REQUEST, "Invalid side"),
    };
    match best {
        Some(p) => Json(json!({"price": decimal(p)})).into_response(),
        None => error(StatusCode::NOT_FOUND, NO_BOOK),
    }
}

async fn midpoint(State(sim): State<Simulator>, Query(query): Query<TokenQuery>) -> Response {
    let Some(token) = query.token_id else { return error(StatusCode::BAD_REQUEST, "Invalid payload") };
    let Some((market, outcome)) = sim.world.pred_token(&token) else { return error(StatusCode::NOT_FOUND, NO_BOOK) };
    match sim.world.pred_book(market, outcome).mid_x2() {
        Some(x2) => Json(json!({"mid": (f64::from(x2) / f64::from(2 * PAYOUT)).to_string()})).into_response(),
        None => error(StatusCode::NOT_FOUND, NO_BOOK),
    }
}
