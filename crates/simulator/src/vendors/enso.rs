//! The EVM router's API: token prices, DeFi position listings, non-tokenized positions,
//! swap routes and action bundles, behind `Authorization: Bearer <key>`. Errors are NestJS
//! style `{"statusCode","message","error"}` bodies.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::world::{DefiPosition, EvmToken, NATIVE_SENTINEL};
use crate::{SIMULATED_KEY, Simulator};

/// The router contract transactions are sent to.
const ROUTER: &str = "0xf75584ef6673ad213a685a1b58cc0330b8ea22cf";

pub(super) fn router(sim: Simulator) -> Router {
    Router::new()
        .route("/api/v1/prices/{chain_id}/{address}", get(price))
        .route("/api/v1/tokens", get(tokens))
        .route("/api/v1/nontokenized", get(nontokenized))
        .route("/api/v1/shortcuts/route", get(route))
        .route("/api/v1/shortcuts/bundle", post(bundle))
        .with_state(sim)
}

fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"statusCode": status.as_u16(), "message": message, "error": status.canonical_reason()});
    (status, Json(body)).into_response()
}

/// The refusal when the bearer key is missing or wrong.
fn refusal(headers: &HeaderMap) -> Option<Response> {
    let given = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default();
    (given != format!("Bearer {SIMULATED_KEY}")).then(|| error(StatusCode::UNAUTHORIZED, "Unauthorized"))
}

type Params = Query<HashMap<String, String>>;

fn chain_of(query: &HashMap<String, String>) -> Option<u64> {
    query.get("chainId").and_then(|c| c.parse().ok())
}

fn page_of(query: &HashMap<String, String>) -> (usize, usize) {
    let read = |name: &str, default: usize| query.get(name).and_then(|v| v.parse().ok()).unwrap_or(default);
    (read("page", 1).max(1), read("pageSize", 1000).clamp(1, 1000))
}

fn meta(total: usize, page: usize, per_page: usize) -> Value {
    let last = total.div_ceil(per_page).max(1);
    json!({
        "total": total, "lastPage": last, "currentPage": page, "perPage": per_page,
        "prev": (page > 1).then(|| page - 1), "next": (page < last).then(|| page + 1), "cursor": null,
    })
}

fn token_json(token: &EvmToken) -> Value {
    json!({
        "address": token.address, "chainId": token.chain_id, "type": "base", "decimals": token.decimals,
        "symbol": token.symbol, "name": token.name, "logosUri": [format!("https://logos.example/{}.png", token.symbol)],
    })
}

async fn price(
    State(sim): State<Simulator>,
    headers: HeaderMap,
    Path((chain_id, address)): Path<(String, String)>,
) -> Response {
    if let Some(refused) = refusal(&headers) {
        return refused;
    }
    let Ok(chain_id) = chain_id.parse::<u64>() else {
        return error(StatusCode::BAD_REQUEST, "chainId must be a number");
    };
    let Some(token) = sim.world.evm_token(chain_id, &address) else {
        return error(StatusCode::NOT_FOUND, "Token not found");
    };
    Json(json!({
        "decimals": token.decimals,
        "price": sim.world.evm_token_usd(token),
        "address": token.address,
        "symbol": token.symbol,
        "name": token.name,
        "timestamp": sim.world.now_ms() / 1000,
        "chainId": chain_id,
        "confidence": 0.99,
    }))
    .into_response()
}

fn position_json(sim: &Simulator, position: &DefiPosition) -> Value {
    let yields = sim.world.position_yields(position);
    json!({
        "address": position.address,
        "chainId": position.chain_id,
        "type": "defi",
        "decimals": position.underlying.decimals,
        "symbol": position.symbol,
        "name": position.name,
        "logosUri": [],
        "underlyingTokens": [token_json(&position.underlying)],
        "project": position.protocol.split('-').next().unwrap_or(&position.protocol),
        "protocol": position.protocol,
        "depositType": 0,
        "redeemType": 0,
        "apy": yields.apy(),
        "apyBase": yields.apy_base,
        "apyReward": yields.apy_reward,
        "borrowApyBase": null,
        "borrowApyReward": null,
        "tvl": yields.tvl_usd,
        "primaryAddress": position.primary_address,
    })
}

/// Does `token` match an `underlyingTokens` filter? The native sentinel matches wrapped ether.
fn underlying_matches(token: &EvmToken, wanted: &str) -> bool {
    token.address.eq_ignore_ascii_case(wanted)
        || (wanted.eq_ignore_ascii_case(NATIVE_SENTINEL) && token.symbol == "WETH")
}

async fn tokens(State(sim): State<Simulator>, headers: HeaderMap, Query(query): Params) -> Response {
    if let Some(refused) = refusal(&headers) {
        return refused;
    }
    let Some(chain_id) = chain_of(&query) else {
        return error(StatusCode::BAD_REQUEST, "chainId must be a number");
    };
    if query.get("type").is_some_and(|t| t != "defi" && t != "base") {
        return error(StatusCode::BAD_REQUEST, "type must be one of: defi, base");
    }
    let number = |name: &str| query.get(name).and_then(|v| v.parse::<f64>().ok());
    let (apy_from, tvl_from) = (number("apyFrom"), number("tvlFrom"));
    let mut matching: Vec<&DefiPosition> = sim
        .world
        .defi_positions()
        .iter()
        .filter(|p| p.chain_id == chain_id)
        .filter(|p| query.get("protocolSlug").is_none_or(|slug| &p.protocol == slug))
        .filter(|p| query.get("underlyingTokens").is_none_or(|u| underlying_matches(&p.underlying, u)))
        .filter(|p| query.get("primaryAddress").is_none_or(|a| p.primary_address.eq_ignore_ascii_case(a)))
        .filter(|p| {
            let yields = sim.world.position_yields(p);
            apy_from.is_none_or(|min| yields.apy() >= min) && tvl_from.is_none_or(|min| yields.tvl_usd >= min)
        })
        .collect();
    matching.sort_by(|a, b| a.address.cmp(&b.address));
    let (page, per_page) = page_of(&query);
    let data: Vec<Value> =
        matching.iter().skip((page - 1) * per_page).take(per_page).map(|p| position_json(&sim, p)).collect();
    Json(json!({"data": data, "meta": meta(matching.len(), page, per_page)})).into_response()
}

async fn nontokenized(State(sim): State<Simulator>, headers: HeaderMap, Query(query): Params) -> Response {
    if let Some(refused) = refusal(&headers) {
        return refused;
    }
    let Some(chain_id) = chain_of(&query) else {
        return error(StatusCode::BAD_REQUEST, "chainId must be a number");
    };
    let matching: Vec<Value> = sim
        .world
        .nontokenized_positions()
        .iter()
        .filter(|p| p.chain_id == chain_id)
        .filter(|p| query.get("protocolSlug").is_none_or(|slug| &p.protocol == slug))
        .map(|p| {
            let underlying: Vec<Value> =
                p.underlying.iter().filter_map(|a| sim.world.evm_token(chain_id, a)).map(token_json).collect();
            json!({
                "chainId": p.chain_id, "project": p.project, "protocol": p.protocol, "address": p.address,
                "positionId": p.position_id, "primaryAddress": p.primary_address, "name": p.name,
                "logosUri": [], "underlyingTokens": underlying,
            })
        })
        .collect();
    let (page, per_page) = page_of(&query);
    let total = matching.len();
    let data: Vec<Value> = matching.into_iter().skip((page - 1) * per_page).take(per_page).collect();
    Json(json!({"data": data, "meta": meta(total, page, per_page)})).into_response()
}

/// Calldata that depends on what is called, so two different requests never share it.
fn calldata(selector: &str, parts: &[&str]) -> String {
    let mut data = format!("0x{selector}");
    for part in parts {
        let hex: String = part.bytes().map(|b| format!("{b:02x}")).collect();
        data.push_str(&format!("{:0>64}", &hex[hex.len().saturating_sub(64)..]));
    }
    data
}

async fn route(State(sim): State<Simulator>, headers: HeaderMap, Query(query): Params) -> Response {
    if let Some(refused) = refusal(&headers) {
        return refused;
    }
    let Some(chain_id) = chain_of(&query) else {
        return error(StatusCode::BAD_REQUEST, "chainId must be a number");
    };
    let param = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
    let world = &sim.world;
    let (Some(from), Some(to)) =
        (world.evm_token(chain_id, param("tokenIn")), world.evm_token(chain_id, param("tokenOut")))
    else {
        return error(StatusCode::BAD_REQUEST, "Could not find a route for the given tokens");
    };
    let Some(amount) = param("amountIn").parse::<u128>().ok().filter(|a| *a > 0) else {
        return error(StatusCode::BAD_REQUEST, "amountIn must be a positive integer");
    };
    let slippage = match query.get("slippage").map(|s| s.parse::<u128>()) {
        None => 50,
        Some(Ok(bps)) if bps <= 10_000 => bps,
        Some(_) => return error(StatusCode::BAD_REQUEST, "slippage must be at most 10000"),
    };
    let from_address = param("fromAddress");
    if from_address.len() != 42 {
        return error(StatusCode::BAD_REQUEST, "fromAddress must be an address");
    }
    // Amounts can exceed what a float holds exactly; the world's price ratio is applied to a
    // float approximation, as any market maker's quote is.
    let value_usd = amount as f64 / 10f64.powi(i32::from(from.decimals)) * world.evm_token_usd(from);
    let impact = value_usd / (value_usd + 50_000_000.0);
    let out_whole = value_usd * (1.0 - 0.0005) * (1.0 - impact) / world.evm_token_usd(to);
    let amount_out = (out_whole * 10f64.powi(i32::from(to.decimals))).floor() as u128;
    let min_out = amount_out * (10_000 - slippage) / 10_000;
    let native_in = from.address == NATIVE_SENTINEL;
    Json(json!({
        "gas": (180_000 + (amount % 7) * 1_000).to_string(),
        "amountOut": amount_out.to_string(),
        "minAmountOut": min_out.to_string(),
        "priceImpact": (impact * 10_000.0 * 100.0).round() / 100.0,
        "feeAmount": [],
        "createdAt": 20_000_000 + world.now_ms() / 2_000,
        "tx": {
            "to": ROUTER,
            "from": from_address,
            "data": calldata("b35d7e73", &[&from.address, &to.address, &amount.to_string(), &min_out.to_string()]),
            "value": if native_in { amount.to_string() } else { "0".to_owned() },
        },
        "route": [{
            "tokenIn": [from.address], "tokenOut": [to.address], "protocol": "uniswap-v3", "action": "swap",
            "primary": ROUTER, "internalRoutes": [],
        }],
    }))
    .into_response()
}

async fn bundle(State(sim): State<Simulator>, headers: HeaderMap, Query(query): Params, body: Bytes) -> Response {
    if let Some(refused) = refusal(&headers) {
        return refused;
    }
    let Some(chain_id) = chain_of(&query) else {
        return error(StatusCode::BAD_REQUEST, "chainId must be a number");
    };
    let from_address = query.get("fromAddress").map(String::as_str).unwrap_or_default();
    if from_address.len() != 42 {
        return error(StatusCode::BAD_REQUEST, "fromAddress must be an address");
    }
    let Ok(Value::Array(actions)) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "body must be an array of actions");
    };
    let mut amounts_out = serde_json::Map::new();
    let mut value = 0u128;
    let mut parts: Vec<String> = Vec::new();
    for action in &actions {
        let arg = |name: &str| action["args"][name].as_str().unwrap_or_default().to_owned();
        let kind = action["action"].as_str().unwrap_or_default();
        let protocol = action["protocol"].as_str().unwrap_or_default();
        // Markets of one protocol share their primary contract; the token picks the market.
        let token = if kind == "borrow" || kind == "withdraw" { arg("tokenOut") } else { arg("tokenIn") };
        let Some(position) = sim.world.defi_positions().iter().find(|p| {
            p.chain_id == chain_id
                && p.protocol == protocol
                && p.primary_address.eq_ignore_ascii_case(&arg("primaryAddress"))
                && underlying_matches(&p.underlying, &token)
        }) else {
            return error(StatusCode::BAD_REQUEST, "primaryAddress has no market for this token");
        };
        let amount_field = if matches!(kind, "withdraw" | "borrow") { "amountOut" } else { "amountIn" };
        let Some(amount) = arg(amount_field).parse::<u128>().ok().filter(|a| *a > 0) else {
            return error(StatusCode::BAD_REQUEST, &format!("{amount_field} must be a positive integer"));
        };
        let required = match kind {
            "deposit" | "repay" => "tokenIn",
            "withdraw" => "tokenOut",
            "borrow" => "collateral",
            _ => return error(StatusCode::BAD_REQUEST, "unsupported action"),
        };
        if arg(required).is_empty() {
            return error(StatusCode::BAD_REQUEST, &format!("{required} is required for {kind}"));
        }
        if arg("tokenIn").eq_ignore_ascii_case(NATIVE_SENTINEL) {
            value += amount;
        }
        // Deposits mint position tokens slightly under par (accrued interest); the rest
        // pay out the underlying.
        let (out_token, out_amount) = match kind {
            "deposit" => (position.address.clone(), amount * 9_990 / 10_000),
            "withdraw" | "borrow" => (position.underlying.address.clone(), amount),
            _ => (position.address.clone(), 0),
        };
        if out_amount > 0 {
            amounts_out.insert(out_token, Value::from(out_amount.to_string()));
        }
        parts.push(position.primary_address.clone());
        parts.push(amount.to_string());
    }
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    Json(json!({
        "bundle": actions,
        "gas": (250_000 + 90_000 * actions.len()).to_string(),
        "amountsOut": amounts_out,
        "minAmountsOut": {},
        "priceImpact": null,
        "feeAmount": {},
        "createdAt": 20_000_000 + sim.world.now_ms() / 2_000,
        "tx": {"to": ROUTER, "from": from_address, "data": calldata("8fd8d1ab", &parts), "value": value.to_string()},
        "route": [],
    }))
    .into_response()
}
