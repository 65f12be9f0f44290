//! The order-book exchange's public indexer (v4): markets, books, candles, funding and trades
//! by ticker, every number a decimal string, every time RFC 3339, errors as
//! `{"errors":[{"msg":…}]}` with 400 for a bad parameter and 404 for an unknown market.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use svc_domain::rfc3339;

use crate::Simulator;
use crate::world::{PerpMarket, World};

pub(super) fn router(sim: Simulator) -> Router {
    Router::new()
        .route("/v4/perpetualMarkets", get(markets))
        .route("/v4/orderbooks/perpetualMarket/{ticker}", get(orderbook))
        .route("/v4/candles/perpetualMarkets/{ticker}", get(candles))
        .route("/v4/historicalFunding/{ticker}", get(funding))
        .route("/v4/trades/perpetualMarket/{ticker}", get(trades))
        .with_state(sim)
}

type Params = Query<HashMap<String, String>>;

fn bad_param(param: &str, value: &str, msg: &str) -> Response {
    let body = json!({"errors": [{"type": "field", "value": value, "msg": msg, "path": param, "location": "query"}]});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

fn unknown_market(ticker: &str) -> Response {
    let body = json!({"errors": [{"msg": format!("No perpetual market found with ticker {ticker}")}]});
    (StatusCode::NOT_FOUND, Json(body)).into_response()
}

/// A decimal string with at most `decimals` decimals and no trailing zeros.
fn num(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    let trimmed = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    // A tiny negative rounds to "-0", which no exchange writes.
    if trimmed == "-0" { "0".to_owned() } else { trimmed.to_owned() }
}

/// Decimals of the market's tick.
fn px_decimals(m: &PerpMarket) -> usize {
    usize::try_from((-m.tick().log10().round() as i64).max(0)).unwrap_or(0)
}

/// `limit` within 1..=100, default 100.
fn limit(params: &HashMap<String, String>) -> Result<usize, Box<Response>> {
    match params.get("limit") {
        None => Ok(100),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=100).contains(&n) => Ok(n),
            _ => Err(Box::new(bad_param(
                "limit",
                v,
                "limit must be a positive integer that is not greater than max: 100",
            ))),
        },
    }
}

fn market_json(world: &World, m: &PerpMarket, clob_pair: usize) -> Value {
    let s = world.perp_state(m);
    let step_exp = -i32::from(m.sz_decimals);
    json!({
        "clobPairId": clob_pair.to_string(),
        "ticker": m.ticker(),
        "status": "ACTIVE",
        "oraclePrice": num(s.oracle, px_decimals(m) + 1),
        "priceChange24H": num(s.mark - s.prev_day, px_decimals(m) + 1),
        "volume24H": num(s.day_volume_usd, 2),
        "trades24H": (s.day_volume_usd / 5_000.0) as u64,
        "nextFundingRate": num(s.funding, 10),
        "initialMarginFraction": num(1.0 / f64::from(m.max_leverage), 4),
        "maintenanceMarginFraction": num(0.6 / f64::from(m.max_leverage), 4),
        "openInterest": num(s.open_interest, usize::from(m.sz_decimals)),
        "atomicResolution": step_exp - 5,
        "quantumConversionExponent": -9,
        "tickSize": num(m.tick(), px_decimals(m)),
        "stepSize": num(m.step(), usize::from(m.sz_decimals)),
        "stepBaseQuantums": 100_000,
        "subticksPerTick": 1_000_000,
        "marketType": "CROSS",
        "openInterestLowerCap": "0",
        "openInterestUpperCap": "0",
        "baseOpenInterest": num(s.open_interest * 0.9, usize::from(m.sz_decimals)),
        "defaultFundingRate1H": "0",
    })
}

async fn markets(State(sim): State<Simulator>, Query(params): Params) -> Response {
    let world = &sim.world;
    let wanted = params.get("ticker");
    if let Some(ticker) = wanted
        && world.perp_market_by_ticker(ticker).is_none()
    {
        return unknown_market(ticker);
    }
    let markets: serde_json::Map<String, Value> = world
        .perp_markets()
        .iter()
        .enumerate()
        .filter(|(_, m)| wanted.is_none_or(|t| *t == m.ticker()))
        .map(|(i, m)| (m.ticker(), market_json(world, m, i)))
        .collect();
    Json(json!({"markets": markets})).into_response()
}

async fn orderbook(State(sim): State<Simulator>, Path(ticker): Path<String>) -> Response {
    let world = &sim.world;
    let Some(m) = world.perp_market_by_ticker(&ticker) else { return unknown_market(&ticker) };
    let (bids, asks) = world.perp_book(m, 25);
    let level = |(p, s, _): &(f64, f64, u32)| json!({"price": num(*p, px_decimals(m)), "size": num(*s, usize::from(m.sz_decimals))});
    Json(
        json!({"bids": bids.iter().map(level).collect::<Vec<_>>(), "asks": asks.iter().map(level).collect::<Vec<_>>()}),
    )
    .into_response()
}

fn resolution_ms(resolution: &str) -> Option<i64> {
    let minute = 60_000;
    Some(match resolution {
        "1MIN" => minute,
        "5MINS" => 5 * minute,
        "15MINS" => 15 * minute,
        "30MINS" => 30 * minute,
        "1HOUR" => 60 * minute,
        "4HOURS" => 240 * minute,
        "1DAY" => 1_440 * minute,
        _ => return None,
    })
}

/// An RFC 3339 time parameter as unix ms.
fn iso_ms(params: &HashMap<String, String>, key: &str) -> Result<Option<i64>, Box<Response>> {
    let Some(value) = params.get(key) else { return Ok(None) };
    iso_time::parse(value)
        .map(Some)
        .ok_or_else(|| Box::new(bad_param(key, value, &format!("{key} must be a valid ISO 8601 timestamp"))))
}

/// RFC 3339 parsing without pulling a date library into the fake: `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
mod iso_time {
    pub(super) fn parse(value: &str) -> Option<i64> {
        let b = value.as_bytes();
        if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
            return None;
        }
        if !value.ends_with('Z') {
            return None;
        }
        let n = |r: std::ops::Range<usize>| value.get(r)?.parse::<i64>().ok();
        let (y, mo, d, h, mi, s) = (n(0..4)?, n(5..7)?, n(8..10)?, n(11..13)?, n(14..16)?, n(17..19)?);
        let millis = match &value[19..value.len() - 1] {
            "" => 0,
            frac => {
                let digits = frac.strip_prefix('.')?;
                if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|c| c.is_ascii_digit()) {
                    return None;
                }
                format!("{digits:0<3}")[..3].parse::<i64>().ok()?
            }
        };
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
            return None;
        }
        // Days from the civil date (Howard Hinnant's algorithm).
        let y = if mo <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (mo + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        Some(((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + millis)
    }
}

async fn candles(State(sim): State<Simulator>, Path(ticker): Path<String>, Query(params): Params) -> Response {
    let world = &sim.world;
    let Some(resolution) = params.get("resolution") else {
        return bad_param(
            "resolution",
            "",
            "resolution must be a valid Candle Resolution, one of 1MIN,5MINS,15MINS,30MINS,1HOUR,4HOURS,1DAY",
        );
    };
    let Some(step) = resolution_ms(resolution) else {
        return bad_param(
            "resolution",
            resolution,
            "resolution must be a valid Candle Resolution, one of 1MIN,5MINS,15MINS,30MINS,1HOUR,4HOURS,1DAY",
        );
    };
    let limit = match limit(&params) {
        Ok(l) => l,
        Err(e) => return *e,
    };
    let (from, to) = match (iso_ms(&params, "fromISO"), iso_ms(&params, "toISO")) {
        (Ok(f), Ok(t)) => (f, t),
        (Err(e), _) | (_, Err(e)) => return *e,
    };
    let Some(m) = world.perp_market_by_ticker(&ticker) else { return unknown_market(&ticker) };
    let to = to.unwrap_or_else(|| world.now_ms());
    let from = from.unwrap_or(to - step * limit as i64);
    let decimals = px_decimals(m);
    let mut rows: Vec<Value> = world
        .perp_candles(m, step, from, to, limit)
        .into_iter()
        .map(|(t, o, h, l, c, v, n)| {
            json!({
                "startedAt": rfc3339(t), "ticker": m.ticker(), "resolution": resolution,
                "low": num(l, decimals), "high": num(h, decimals), "open": num(o, decimals), "close": num(c, decimals),
                "baseTokenVolume": num(v, usize::from(m.sz_decimals)), "usdVolume": num(v * c, 2), "trades": n,
                "startingOpenInterest": num(world.perp_state(m).open_interest, usize::from(m.sz_decimals)),
                "id": format!("{}-{resolution}-{t}", m.ticker()),
            })
        })
        .collect();
    // The indexer lists the newest candle first.
    rows.reverse();
    Json(json!({"candles": rows})).into_response()
}

async fn funding(State(sim): State<Simulator>, Path(ticker): Path<String>, Query(params): Params) -> Response {
    let world = &sim.world;
    let limit = match limit(&params) {
        Ok(l) => l,
        Err(e) => return *e,
    };
    let before = match iso_ms(&params, "effectiveBeforeOrAt") {
        Ok(b) => b,
        Err(e) => return *e,
    };
    let Some(m) = world.perp_market_by_ticker(&ticker) else { return unknown_market(&ticker) };
    let until = before.unwrap_or(i64::MAX);
    let mut rows: Vec<Value> = world
        .perp_funding_history(m, world.now_ms() - 30 * 86_400_000, 720)
        .into_iter()
        .filter(|(at, ..)| *at <= until)
        .map(|(at, rate, _, oracle)| {
            json!({"ticker": m.ticker(), "rate": num(rate, 10), "price": num(oracle, px_decimals(m) + 2),
                   "effectiveAtHeight": (at / 1000 - 1_700_000_000).to_string(), "effectiveAt": rfc3339(at)})
        })
        .collect();
    rows.reverse();
    rows.truncate(limit);
    Json(json!({"historicalFunding": rows})).into_response()
}

async fn trades(State(sim): State<Simulator>, Path(ticker): Path<String>, Query(params): Params) -> Response {
    let world = &sim.world;
    let limit = match limit(&params) {
        Ok(l) => l,
        Err(e) => return *e,
    };
    let Some(m) = world.perp_market_by_ticker(&ticker) else { return unknown_market(&ticker) };
    let rows: Vec<Value> = world
        .perp_trades(m, limit)
        .into_iter()
        .map(|(id, at, is_buy, p, s)| {
            json!({"id": format!("{id:032x}"), "side": if is_buy { "BUY" } else { "SELL" },
                   "size": num(s, usize::from(m.sz_decimals)), "price": num(p, px_decimals(m)), "type": "LIMIT",
                   "createdAt": rfc3339(at), "createdAtHeight": (at / 1000 - 1_700_000_000).to_string()})
        })
        .collect();
    Json(json!({"trades": rows})).into_response()
}

#[cfg(test)]
mod tests {
    use super::iso_time::parse;

    #[test]
    fn indexer_times_parse_as_rfc3339_utc() {
        assert_eq!(parse("2026-11-18T11:06:40Z"), Some(1_795_000_000_000));
        assert_eq!(parse("2026-11-18T11:06:40.123Z"), Some(1_795_000_000_123));
        assert_eq!(parse("2026-13-18T11:06:40Z"), None);
        assert_eq!(parse("yesterday"), None);
    }
}
