//! The transaction scanner: `POST /v0/evm/transaction/scan` behind `X-API-Key`, answering
//! a `validation` verdict and/or a `simulation` of balance changes as `options` ask. Any
//! transaction touching the world's planted drainer (called directly, or sent tokens or an
//! allowance) is Malicious; an unlimited allowance to anyone else is a Warning.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::world::NATIVE_SENTINEL;
use crate::{SIMULATED_KEY, Simulator};

const TRANSFER: &str = "a9059cbb";
const APPROVE: &str = "095ea7b3";

pub(super) fn router(sim: Simulator) -> Router {
    Router::new().route("/v0/evm/transaction/scan", post(scan)).with_state(sim)
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}

/// Chain ids of the chain names the world has tokens on.
fn chain_id(chain: &str) -> Option<u64> {
    match chain {
        "ethereum" => Some(1),
        "base" => Some(8453),
        _ => None,
    }
}

/// The `index`th 32-byte argument of `data` (after the selector), as 64 hex digits.
fn word(data: &str, index: usize) -> Option<&str> {
    let start = 10 + index * 64;
    data.get(start..start + 64)
}

fn wei(value: &str) -> Option<u128> {
    match value.strip_prefix("0x") {
        Some("") => Some(0),
        Some(hex) => u128::from_str_radix(hex, 16).ok(),
        None => value.parse().ok(),
    }
}

fn human(raw: u128, decimals: u8) -> f64 {
    raw as f64 / 10f64.powi(i32::from(decimals))
}

async fn scan(State(sim): State<Simulator>, headers: HeaderMap, body: Bytes) -> Response {
    if headers.get("x-api-key").and_then(|v| v.to_str().ok()) != Some(SIMULATED_KEY) {
        return refuse(StatusCode::UNAUTHORIZED, "Invalid API key");
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return refuse(StatusCode::UNPROCESSABLE_ENTITY, "body is not JSON");
    };
    let text = |v: &Value| v.as_str().map(str::to_lowercase);
    let (Some(chain), Some(account), Some(to)) =
        (text(&request["chain"]), text(&request["account_address"]), text(&request["data"]["to"]))
    else {
        return refuse(StatusCode::UNPROCESSABLE_ENTITY, "chain, account_address and data.to are required");
    };
    let data = text(&request["data"]["data"]).unwrap_or_else(|| "0x".to_owned());
    let Some(value) = wei(&text(&request["data"]["value"]).unwrap_or_else(|| "0x0".to_owned())) else {
        return refuse(StatusCode::UNPROCESSABLE_ENTITY, "data.value must be hex");
    };
    let options: Vec<String> = request["options"]
        .as_array()
        .map(|o| o.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let world = &sim.world;
    let drainer = world.drainer_address().to_lowercase();
    let selector = data.get(2..10).unwrap_or_default();
    let target = word(&data, 0).map(|w| format!("0x{}", &w[24..]));
    let amount = word(&data, 1).and_then(|w| u128::from_str_radix(w.trim_start_matches('0'), 16).ok().or(Some(0)));
    let unlimited = word(&data, 1).is_some_and(|w| w.chars().all(|c| c == 'f'));
    let ids = chain_id(&chain);
    let token = ids.and_then(|id| world.evm_token(id, &to));

    let honeypot = world.honeypot_token().map(|t| t.address.to_lowercase());
    let mut features = Vec::new();
    let (result_type, classification, description) = if honeypot.as_deref() == Some(to.as_str()) {
        features.push(json!({"type": "Malicious", "feature_id": "HONEYPOT", "description": "Token cannot be sold once bought", "address": to}));
        ("Malicious", "honeypot", "The token's contract blocks selling: buyers cannot get out.")
    } else if to == drainer {
        features.push(json!({"type": "Malicious", "feature_id": "KNOWN_MALICIOUS", "description": "Interaction with a known malicious address", "address": drainer}));
        ("Malicious", "known_malicious", "The transaction calls a contract known to steal funds.")
    } else if selector == APPROVE && target.as_deref() == Some(drainer.as_str()) {
        features.push(json!({"type": "Malicious", "feature_id": "KNOWN_MALICIOUS", "description": "Approval to a known malicious spender", "address": drainer}));
        ("Malicious", "approval_farming", "The transaction lets a known drainer spend the account's tokens.")
    } else if selector == TRANSFER && target.as_deref() == Some(drainer.as_str()) {
        features.push(json!({"type": "Malicious", "feature_id": "KNOWN_MALICIOUS", "description": "Transfer to a known malicious address", "address": drainer}));
        ("Malicious", "transfer_farming", "The transaction sends tokens to a known drainer.")
    } else if selector == APPROVE && unlimited {
        features.push(json!({"type": "Warning", "feature_id": "UNLIMITED_APPROVAL", "description": "Unlimited allowance", "address": target}));
        ("Warning", "", "The transaction grants an unlimited allowance.")
    } else {
        if token.is_some() {
            features.push(json!({"type": "Benign", "feature_id": "VERIFIED_CONTRACT", "description": "Interaction with a verified token contract", "address": to}));
        }
        ("Benign", "", "")
    };

    let mut answer =
        json!({"block": (20_000_000 + world.now_ms() / 2_000).to_string(), "chain": chain, "account_address": account});
    if options.iter().any(|o| o == "validation") {
        answer["validation"] = json!({
            "status": "Success", "result_type": result_type, "classification": classification,
            "description": description, "reason": if result_type == "Benign" { "" } else { "known_attacker" },
            "features": features,
        });
    }
    if options.iter().any(|o| o == "simulation") {
        let mut diffs = Vec::new();
        let mut out_usd = 0.0;
        let native = ids.and_then(|id| world.evm_token(id, NATIVE_SENTINEL));
        if value > 0 {
            let usd = native.map_or(0.0, |eth| human(value, 18) * world.evm_token_usd(eth));
            out_usd += usd;
            diffs.push(json!({
                "asset_type": "NATIVE",
                "asset": {"type": "NATIVE", "decimals": 18, "symbol": "ETH", "name": "Ether", "logo_url": null},
                "in": [],
                "out": [{"raw_value": format!("0x{value:x}"), "value": human(value, 18).to_string(), "usd_price": format!("{usd:.6}"), "summary": format!("Sent {} ETH", human(value, 18))}],
            }));
        }
        if let (Some(token), TRANSFER, Some(amount)) = (token, selector, amount) {
            let usd = human(amount, token.decimals) * world.evm_token_usd(token);
            out_usd += usd;
            diffs.push(json!({
                "asset_type": "ERC20",
                "asset": {"type": "ERC20", "address": token.address, "decimals": token.decimals, "symbol": token.symbol, "name": token.name, "logo_url": null},
                "in": [],
                "out": [{"raw_value": format!("0x{amount:x}"), "value": human(amount, token.decimals).to_string(), "usd_price": format!("{usd:.6}"), "summary": format!("Sent {} {}", human(amount, token.decimals), token.symbol)}],
            }));
        }
        let totals = json!({"in": "0", "out": format!("{out_usd:.6}"), "total": format!("{:.6}", -out_usd)});
        answer["simulation"] = json!({
            "status": "Success",
            "account_summary": {"assets_diffs": diffs, "exposures": [], "total_usd_diff": totals, "total_usd_exposure": {}},
            "assets_diffs": {account.clone(): diffs},
            "exposures": {},
            "total_usd_diff": {account.clone(): totals},
            "address_details": {},
            "params": request["data"],
        });
    }
    Json(answer).into_response()
}
