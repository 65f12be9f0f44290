//! A Solana node's JSON-RPC API, at the vendor's root: `getMultipleAccounts` (at most 100
//! addresses) and `getAccountInfo` of the world's token mints, in `jsonParsed` encoding (the
//! token program's parsed mint, revoked authorities `null`) or as the raw 82-byte mint in
//! `base64` or `base58`. Keyless, like a public node; errors are JSON-RPC error objects
//! answered with HTTP 200, as nodes send them.

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use base64::Engine as _;
use serde_json::{Value, json};

use crate::Simulator;
use crate::world::{Mint, TOKEN_PROGRAM};

/// Most addresses one `getMultipleAccounts` may name.
const MAX_ACCOUNTS: usize = 100;
/// Size of a classic token mint account, bytes.
const MINT_SPACE: u64 = 82;
/// The rent-exempt balance of an 82-byte account, lamports.
const MINT_LAMPORTS: u64 = 1_461_600;

pub(super) fn router(sim: Simulator) -> Router {
    Router::new().route("/", post(rpc)).with_state(sim)
}

fn failure(id: &Value, code: i64, message: &str) -> Json<Value> {
    Json(json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id}))
}

async fn rpc(State(sim): State<Simulator>, body: Bytes) -> Json<Value> {
    let Ok(call) = serde_json::from_slice::<Value>(&body) else {
        return failure(&Value::Null, -32700, "Parse error");
    };
    let id = &call["id"];
    let params = &call["params"];
    let encoding = params[1]["encoding"].as_str().unwrap_or("base64");
    if !matches!(encoding, "jsonParsed" | "base64" | "base58") {
        return failure(id, -32602, "Invalid params: the simulated node serves jsonParsed, base64 and base58");
    }
    let world = &sim.world;
    let context = json!({"apiVersion": "2.2.7", "slot": 300_000_000 + world.now_ms() / 400});
    let account = |key: &Value| -> Result<Value, Json<Value>> {
        let key = key.as_str().filter(|k| k.parse::<svc_domain::SolanaAddress>().is_ok());
        let key = key.ok_or_else(|| failure(id, -32602, "Invalid param: Invalid"))?;
        Ok(world.mint(key).map_or(Value::Null, |mint| render(&mint, encoding)))
    };
    let result = match call["method"].as_str() {
        Some("getMultipleAccounts") => {
            let Some(keys) = params[0].as_array() else {
                return failure(id, -32602, "Invalid params: expected an array of addresses");
            };
            if keys.len() > MAX_ACCOUNTS {
                return failure(id, -32602, &format!("Too many inputs provided; max {MAX_ACCOUNTS}"));
            }
            match keys.iter().map(account).collect::<Result<Vec<Value>, _>>() {
                Ok(value) => json!({"context": context, "value": value}),
                Err(refused) => return refused,
            }
        }
        Some("getAccountInfo") => match account(&params[0]) {
            Ok(value) => json!({"context": context, "value": value}),
            Err(refused) => return refused,
        },
        _ => return failure(id, -32601, "Method not found"),
    };
    Json(json!({"jsonrpc": "2.0", "result": result, "id": id}))
}

/// A mint account as a node answers it in `encoding`.
fn render(mint: &Mint, encoding: &str) -> Value {
    let data = match encoding {
        "jsonParsed" => json!({
            "program": "spl-token",
            "parsed": {
                "type": "mint",
                "info": {
                    "mintAuthority": mint.mint_authority,
                    "supply": mint.supply.to_string(),
                    "decimals": mint.decimals,
                    "isInitialized": true,
                    "freezeAuthority": mint.freeze_authority,
                },
            },
            "space": MINT_SPACE,
        }),
        "base58" => json!([bs58::encode(layout(mint)).into_string(), "base58"]),
        _ => json!([base64::engine::general_purpose::STANDARD.encode(layout(mint)), "base64"]),
    };
    json!({
        "data": data,
        "executable": false,
        "lamports": MINT_LAMPORTS,
        "owner": TOKEN_PROGRAM,
        "rentEpoch": u64::MAX,
        "space": MINT_SPACE,
    })
}

/// The token program's 82-byte mint: optional mint authority, supply, decimals, initialised
/// flag, optional freeze authority (an option is a 4-byte tag and 32 bytes).
fn layout(mint: &Mint) -> Vec<u8> {
    let option = |key: &Option<String>, out: &mut Vec<u8>| {
        let bytes = key.as_deref().and_then(|k| bs58::decode(k).into_vec().ok()).filter(|b| b.len() == 32);
        out.extend_from_slice(&u32::from(bytes.is_some()).to_le_bytes());
        out.extend_from_slice(&bytes.unwrap_or_else(|| vec![0; 32]));
    };
    let mut out = Vec::with_capacity(82);
    option(&mint.mint_authority, &mut out);
    out.extend_from_slice(&mint.supply.to_le_bytes());
    out.push(mint.decimals);
    out.push(1);
    option(&mint.freeze_authority, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raw_mint_has_the_token_programs_layout() {
        let authority = "7dGbd2QZcCKcTndnHcTL8q7SMVXAkp688NTQYwrRCrar";
        let mint = Mint {
            address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".into(),
            decimals: 6,
            supply: 1_000_000,
            mint_authority: None,
            freeze_authority: Some(authority.into()),
        };
        let bytes = layout(&mint);
        assert_eq!(bytes.len(), 82);
        assert_eq!(bytes[..36], [0; 36], "a revoked mint authority: tag 0, zero key");
        assert_eq!(bytes[36..44], 1_000_000u64.to_le_bytes());
        assert_eq!((bytes[44], bytes[45]), (6, 1), "decimals, initialised");
        assert_eq!(bytes[46..50], 1u32.to_le_bytes());
        assert_eq!(bs58::encode(&bytes[50..]).into_string(), authority);
    }
}
