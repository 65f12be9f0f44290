//! The second Solana aggregator's DEX quote API (`GET /api/v6/dex/aggregator/quote`): every
//! answer in the `{"code","msg","data":[…]}` envelope, amounts as strings, and each request
//! signed with HMAC-SHA256 over `timestamp + method + path?query`, checked here as the
//! vendor does (401 with its own error code on a bad key, passphrase or signature).

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::world::SolToken;
use crate::{SIMULATED_KEY, SIMULATED_PASSPHRASE, SIMULATED_SECRET, Simulator};

/// The vendor's chain index for Solana.
const SOLANA_INDEX: &str = "501";

pub(super) fn router(sim: Simulator) -> Router {
    Router::new().route("/api/v6/dex/aggregator/quote", get(quote)).with_state(sim)
}

/// How far a request's timestamp may be from the vendor's clock.
const MAX_SKEW_MS: i64 = 30_000;

/// `YYYY-MM-DDTHH:MM:SS[.fff]Z` as unix milliseconds (the signed timestamp's format).
fn unix_ms(text: &str) -> Option<i64> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut ymd = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (ymd.next()??, ymd.next()??, ymd.next()??);
    let (clock, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let mut hms = clock.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (hour, minute, second) = (hms.next()??, hms.next()??, hms.next()??);
    let millis: i64 = format!("{fraction:0<3}").get(..3)?.parse().ok()?;
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis)
}

/// The vendor's envelope with an error code; auth failures come as HTTP 401.
fn envelope_error(status: StatusCode, code: &str, msg: &str) -> Response {
    (status, Json(json!({"code": code, "msg": msg, "data": []}))).into_response()
}

/// Checks the four auth headers (the signature is Base64(HMAC-SHA256(secret, prehash)));
/// the refusal to send when one is wrong.
fn refusal(headers: &HeaderMap, method: &Method, uri: &Uri, now_ms: i64) -> Option<Response> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let unauthorized = |code: &str, msg: &str| envelope_error(StatusCode::UNAUTHORIZED, code, msg);
    if header("ok-access-key") != SIMULATED_KEY {
        return Some(unauthorized("50111", "Invalid OK-ACCESS-KEY"));
    }
    if header("ok-access-passphrase") != SIMULATED_PASSPHRASE {
        return Some(unauthorized("50105", "Invalid OK-ACCESS-PASSPHRASE"));
    }
    let timestamp = header("ok-access-timestamp");
    let Some(signed_at) = unix_ms(timestamp) else {
        return Some(unauthorized("50107", "OK-ACCESS-TIMESTAMP header is required"));
    };
    if (signed_at - now_ms).abs() > MAX_SKEW_MS {
        return Some(unauthorized("50102", "Timestamp request expired"));
    }
    let path = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(SIMULATED_SECRET.as_bytes()) else {
        return Some(unauthorized("50113", "Invalid Sign"));
    };
    mac.update(format!("{timestamp}{method}{path}").as_bytes());
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    if header("ok-access-sign") != expected {
        return Some(unauthorized("50113", "Invalid Sign"));
    }
    None
}

fn token_json(sim: &Simulator, token: &SolToken) -> Value {
    json!({
        "decimal": token.decimals.to_string(),
        "isHoneyPot": false,
        "taxRate": "0",
        "tokenContractAddress": token.mint,
        "tokenSymbol": token.symbol,
        "tokenUnitPrice": format!("{:.8}", sim.world.sol_token_usd(token)),
    })
}

async fn quote(
    State(sim): State<Simulator>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if let Some(refused) = refusal(&headers, &method, &uri, sim.world.now_ms()) {
        return refused;
    }
    let param = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
    if param("chainIndex") != SOLANA_INDEX {
        return envelope_error(StatusCode::OK, "51000", "Parameter chainIndex error");
    }
    let Some(amount) = param("amount").parse::<u64>().ok().filter(|a| *a > 0) else {
        return envelope_error(StatusCode::OK, "51000", "Parameter amount error");
    };
    let world = &sim.world;
    let (Some(from), Some(to)) = (world.sol_token(param("fromTokenAddress")), world.sol_token(param("toTokenAddress")))
    else {
        return envelope_error(StatusCode::OK, "82000", "Insufficient liquidity.");
    };
    if from.mint == to.mint {
        return envelope_error(StatusCode::OK, "51000", "Parameter toTokenAddress error");
    }
    let fee_bps = world.aggregator_fee_bps(std::f64::consts::PI);
    let mut routers = Vec::new();
    let mut hop_in = amount;
    let mut impact_total = 0.0;
    for (index, (a, b)) in super::jupiter::hops(&sim, from, to).into_iter().enumerate() {
        let (hop_out, impact) = world.swap_out(
            hop_in,
            (world.sol_token_usd(a), a.decimals),
            (world.sol_token_usd(b), b.decimals),
            fee_bps,
            25_000_000.0,
        );
        impact_total += impact;
        let dex = ["Raydium", "Orca Whirlpools", "Meteora DLMM"][index % 3];
        routers.push(json!({
            "dexProtocol": {"dexName": dex, "percent": "100"},
            "fromToken": token_json(&sim, a),
            "toToken": token_json(&sim, b),
            "fromTokenIndex": index.to_string(),
            "toTokenIndex": (index + 1).to_string(),
        }));
        hop_in = hop_out;
    }
    Json(json!({
        "code": "0",
        "msg": "",
        "data": [{
            "chainIndex": SOLANA_INDEX,
            "contextSlot": 300_000_000 + world.now_ms() / 400,
            "dexRouterList": routers,
            "estimateGasFee": "5000",
            "fromToken": token_json(&sim, from),
            "toToken": token_json(&sim, to),
            "fromTokenAmount": amount.to_string(),
            "toTokenAmount": hop_in.to_string(),
            "priceImpactPercent": format!("{:.4}", -impact_total * 100.0),
            "quoteCompareList": [],
            "swapMode": "exactIn",
            "tradeFee": "0.00025",
        }],
    }))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::unix_ms;

    #[test]
    fn signed_timestamps_read_as_unix_milliseconds() {
        assert_eq!(unix_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_ms("2026-11-22T10:00:00Z"), Some(1_795_341_600_000));
        assert_eq!(unix_ms("2020-12-08T09:08:57.715Z"), Some(1_607_418_537_715));
        assert_eq!(unix_ms("2020-12-08 09:08:57"), None);
    }
}
