//! The perp exchange's API: `POST /info` dispatched on `type`, answered with the exchange's
//! field names and decimal strings; `POST /exchange` that re-hashes the action it received
//! (msgpack, nonce, vault, expiry), recovers the EIP-712 phantom-agent signer and acts only
//! for the approved agent, so a signing bug fails a test instead of passing quietly.

use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_sol_types::{Eip712Domain, SolStruct as _, sol};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::Simulator;
use crate::world::{PerpAccount, PerpMarket, World};

sol! {
    /// The phantom agent the exchange has agents sign.
    struct Agent {
        string source;
        bytes32 connectionId;
    }
}

pub(super) fn router(sim: Simulator) -> Router {
    Router::new().route("/info", post(info)).route("/exchange", post(exchange)).with_state(sim)
}

/// The exchange answers a body it cannot read as plain text with 422.
fn unreadable() -> Response {
    (StatusCode::UNPROCESSABLE_ENTITY, "Failed to deserialize the JSON body into the target type").into_response()
}

/// A number in the exchange's decimal-string form: at most `decimals` decimals, no trailing
/// zeros.
fn num(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    let trimmed = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    // A tiny negative rounds to "-0", which no exchange writes.
    if trimmed == "-0" { "0".to_owned() } else { trimmed.to_owned() }
}

/// A price to five significant figures, as the exchange quotes them.
fn px(x: f64) -> String {
    let decimals = (4 - x.abs().max(1e-12).log10().floor() as i64).clamp(0, 8);
    num(x, usize::try_from(decimals).unwrap_or(0))
}

fn meta(world: &World) -> Value {
    let universe: Vec<Value> = world
        .perp_markets()
        .iter()
        .map(|m| json!({"name": m.coin, "szDecimals": m.sz_decimals, "maxLeverage": m.max_leverage, "marginTableId": m.max_leverage}))
        .collect();
    json!({"universe": universe, "marginTables": []})
}

fn asset_ctx(world: &World, m: &PerpMarket) -> Value {
    let s = world.perp_state(m);
    let (bids, asks) = world.perp_book(m, 1);
    json!({
        "funding": num(s.funding, 8),
        "openInterest": num(s.open_interest, usize::from(m.sz_decimals)),
        "prevDayPx": px(s.prev_day),
        "dayNtlVlm": num(s.day_volume_usd, 2),
        "premium": num(s.premium, 8),
        "oraclePx": px(s.oracle),
        "markPx": px(s.mark),
        "midPx": px((bids[0].0 + asks[0].0) / 2.0),
        "impactPxs": [px(bids[0].0), px(asks[0].0)],
        "dayBaseVlm": num(s.day_volume_usd / s.mark, usize::from(m.sz_decimals)),
    })
}

fn user_of(body: &Value) -> Option<String> {
    let user = body.get("user")?.as_str()?;
    let valid = user.len() == 42 && user.starts_with("0x") && user[2..].bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| user.to_lowercase())
}

fn clearinghouse(world: &World, account: Option<&PerpAccount>) -> Value {
    let now = world.now_ms();
    let mut positions = Vec::new();
    let (mut ntl, mut margin, mut pnl_total) = (0.0, 0.0, 0.0);
    for p in account.map(|a| a.positions.as_slice()).unwrap_or_default() {
        let m = &world.perp_markets()[p.market];
        let mark = world.perp_state(m).mark;
        let value = p.szi.abs() * mark;
        let pnl = p.szi * (mark - p.entry_px);
        let used = value / f64::from(p.leverage);
        let liq = p.entry_px * (1.0 - p.szi.signum() * 0.9 / f64::from(p.leverage));
        ntl += value;
        margin += used;
        pnl_total += pnl;
        positions.push(json!({
            "type": "oneWay",
            "position": {
                "coin": m.coin,
                "szi": num(p.szi, usize::from(m.sz_decimals)),
                "leverage": {"type": "cross", "value": p.leverage},
                "entryPx": px(p.entry_px),
                "positionValue": num(value, 2),
                "unrealizedPnl": num(pnl, 2),
                "returnOnEquity": num(pnl / used.max(1e-9), 4),
                "liquidationPx": px(liq.max(0.0)),
                "marginUsed": num(used, 2),
                "maxLeverage": m.max_leverage,
                "cumFunding": {"allTime": "0.0", "sinceOpen": "0.0", "sinceChange": "0.0"},
            }
        }));
    }
    let equity = account.map_or(0.0, |a| a.deposit_usd) + pnl_total;
    let summary = json!({
        "accountValue": num(equity, 2),
        "totalNtlPos": num(ntl, 2),
        "totalRawUsd": num(equity - pnl_total, 2),
        "totalMarginUsed": num(margin, 2),
    });
    json!({
        "marginSummary": summary,
        "crossMarginSummary": summary,
        "crossMaintenanceMarginUsed": num(margin / 2.0, 2),
        "withdrawable": num((equity - margin).max(0.0), 2),
        "assetPositions": positions,
        "time": now,
    })
}

fn interval_ms(interval: &str) -> Option<i64> {
    let minute = 60_000;
    Some(match interval {
        "1m" => minute,
        "3m" => 3 * minute,
        "5m" => 5 * minute,
        "15m" => 15 * minute,
        "30m" => 30 * minute,
        "1h" => 60 * minute,
        "2h" => 120 * minute,
        "4h" => 240 * minute,
        "8h" => 480 * minute,
        "12h" => 720 * minute,
        "1d" => 1_440 * minute,
        "3d" => 4_320 * minute,
        "1w" => 10_080 * minute,
        "1M" => 43_200 * minute,
        _ => return None,
    })
}

async fn info(State(sim): State<Simulator>, body: Bytes) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else { return unreadable() };
    let world = &sim.world;
    let coin = || body.get("coin").and_then(Value::as_str).map(str::to_owned);
    let time = |key: &str| body.get(key).and_then(Value::as_i64);
    let answer = match body.get("type").and_then(Value::as_str).unwrap_or_default() {
        "meta" => meta(world),
        "metaAndAssetCtxs" => {
            let ctxs: Vec<Value> = world.perp_markets().iter().map(|m| asset_ctx(world, m)).collect();
            json!([meta(world), ctxs])
        }
        "allMids" => {
            let mids: serde_json::Map<String, Value> = world
                .perp_markets()
                .iter()
                .map(|m| (m.coin.clone(), Value::from(px(world.perp_state(m).mark))))
                .collect();
            Value::Object(mids)
        }
        "spotMeta" => json!({
            "universe": [{"tokens": [1, 0], "name": "PURR/USDC", "index": 0, "isCanonical": true}],
            "tokens": [
                {"name": "USDC", "szDecimals": 8, "weiDecimals": 8, "index": 0, "tokenId": "0x6d1e7cde53ba9467b783cb7c530ce054", "isCanonical": true, "evmContract": null, "fullName": null},
                {"name": "PURR", "szDecimals": 0, "weiDecimals": 5, "index": 1, "tokenId": "0xc1fb593aeffbeb02f85e0308e9956a90", "isCanonical": true, "evmContract": null, "fullName": null},
            ],
        }),
        "l2Book" => {
            let Some(coin) = coin() else { return unreadable() };
            // The exchange answers `null` for a coin it does not list.
            let Some(m) = world.perp_market(&coin) else { return Json(Value::Null).into_response() };
            let (bids, asks) = world.perp_book(m, 20);
            let level =
                |(p, s, n): &(f64, f64, u32)| json!({"px": px(*p), "sz": num(*s, usize::from(m.sz_decimals)), "n": n});
            json!({
                "coin": m.coin,
                "time": world.now_ms(),
                "levels": [bids.iter().map(level).collect::<Vec<_>>(), asks.iter().map(level).collect::<Vec<_>>()],
            })
        }
        "candleSnapshot" => {
            let req = body.get("req").cloned().unwrap_or(Value::Null);
            let (Some(coin), Some(interval), Some(start), Some(end)) = (
                req.get("coin").and_then(Value::as_str),
                req.get("interval").and_then(Value::as_str),
                req.get("startTime").and_then(Value::as_i64),
                req.get("endTime").and_then(Value::as_i64),
            ) else {
                return unreadable();
            };
            let Some(step) = interval_ms(interval) else { return unreadable() };
            let Some(m) = world.perp_market(coin) else { return Json(json!([])).into_response() };
            let candles: Vec<Value> = world
                .perp_candles(m, step, start, end, 5000)
                .into_iter()
                .map(|(t, o, h, l, c, v, n)| {
                    json!({"t": t, "T": t + step - 1, "s": m.coin, "i": interval, "o": px(o), "c": px(c), "h": px(h), "l": px(l), "v": num(v, usize::from(m.sz_decimals)), "n": n})
                })
                .collect();
            Value::from(candles)
        }
        "fundingHistory" => {
            let (Some(coin), Some(start)) = (coin(), time("startTime")) else { return unreadable() };
            let end = time("endTime").unwrap_or(i64::MAX);
            let Some(m) = world.perp_market(&coin) else { return Json(json!([])).into_response() };
            let rows: Vec<Value> = world
                .perp_funding_history(m, start, 500)
                .into_iter()
                .filter(|(at, ..)| *at <= end)
                .map(|(at, rate, premium, _)| json!({"coin": m.coin, "fundingRate": num(rate, 8), "premium": num(premium, 8), "time": at}))
                .collect();
            Value::from(rows)
        }
        kind @ ("clearinghouseState" | "spotClearinghouseState" | "openOrders" | "userFills" | "userFunding") => {
            let Some(user) = user_of(&body) else { return unreadable() };
            let account = world.perp_account(&user);
            let is_master = world.perp_accounts().first().is_some_and(|a| a.address == user);
            match kind {
                "clearinghouseState" => clearinghouse(world, account),
                "spotClearinghouseState" => json!({"balances": [
                    {"coin": "USDC", "token": 0, "hold": "0.0", "total": num(account.map_or(0.0, |a| a.deposit_usd / 10.0), 2), "entryNtl": "0.0"}
                ]}),
                "openOrders" => {
                    let ledger = if is_master { world.perp_ledger() } else { Vec::new() };
                    let rows: Vec<Value> = ledger
                        .iter()
                        .rev()
                        .filter(|o| !o.filled && !o.cancelled)
                        .map(|o| {
                            let coin = world.perp_markets().get(o.asset as usize).map_or("?", |m| m.coin.as_str());
                            json!({"coin": coin, "limitPx": o.limit_px, "oid": o.oid, "side": if o.is_buy { "B" } else { "A" }, "sz": o.sz, "timestamp": o.time_ms, "origSz": o.sz})
                        })
                        .collect();
                    Value::from(rows)
                }
                "userFills" => {
                    let mut rows: Vec<Value> = Vec::new();
                    if is_master {
                        for o in world.perp_ledger().iter().rev().filter(|o| o.filled) {
                            let coin = world.perp_markets().get(o.asset as usize).map_or("?", |m| m.coin.as_str());
                            rows.push(json!({
                                "coin": coin, "px": o.limit_px, "sz": o.sz, "side": if o.is_buy { "B" } else { "A" },
                                "time": o.time_ms, "startPosition": "0.0", "dir": if o.is_buy { "Open Long" } else { "Open Short" },
                                "closedPnl": "0.0", "hash": format!("0x{:064x}", o.oid), "oid": o.oid, "crossed": true,
                                "fee": "0.0", "tid": o.oid * 7, "feeToken": "USDC",
                            }));
                        }
                    }
                    for (i, p) in account.map(|a| a.positions.as_slice()).unwrap_or_default().iter().enumerate() {
                        let m = &world.perp_markets()[p.market];
                        let at = world.genesis_ms() - 3_600_000 * (i as i64 + 1);
                        rows.push(json!({
                            "coin": m.coin, "px": px(p.entry_px), "sz": num(p.szi.abs(), usize::from(m.sz_decimals)),
                            "side": if p.szi > 0.0 { "B" } else { "A" }, "time": at, "startPosition": "0.0",
                            "dir": if p.szi > 0.0 { "Open Long" } else { "Open Short" }, "closedPnl": "0.0",
                            "hash": format!("0x{:064x}", at), "oid": at / 1000, "crossed": true,
                            "fee": num(p.szi.abs() * p.entry_px * 0.00045, 6), "tid": at / 100, "feeToken": "USDC",
                        }));
                    }
                    Value::from(rows)
                }
                _ => {
                    let Some(start) = time("startTime") else { return unreadable() };
                    let mut rows = Vec::new();
                    for p in account.map(|a| a.positions.as_slice()).unwrap_or_default() {
                        let m = &world.perp_markets()[p.market];
                        let since = start.max(world.now_ms() - 86_400_000);
                        for (at, rate, _, oracle) in world.perp_funding_history(m, since, 24) {
                            rows.push(json!({
                                "time": at,
                                "hash": "0x0000000000000000000000000000000000000000000000000000000000000000",
                                "delta": {"type": "funding", "coin": m.coin, "usdc": num(-p.szi * oracle * rate, 6), "szi": num(p.szi, usize::from(m.sz_decimals)), "fundingRate": num(rate, 8), "nSamples": null},
                            }));
                        }
                    }
                    Value::from(rows)
                }
            }
        }
        _ => return unreadable(),
    };
    Json(answer).into_response()
}

/// The agent the simulated exchange has approved, and the account it trades for.
fn approved_agent(sim: &Simulator) -> (Address, String) {
    let master = sim.world.perp_accounts().first().map(|a| a.address.clone()).unwrap_or_default();
    (crate::perpdex_agent_address(), master)
}

fn err(message: impl Into<String>) -> Response {
    Json(json!({"status": "err", "response": message.into()})).into_response()
}

/// The L1-action digest: the official scheme, computed here independently from the JSON the
/// client sent (keys in the order they arrived).
fn digest(action: &Value, nonce: u64, vault: Option<Address>, expires_after: Option<u64>) -> Option<B256> {
    let mut data = rmp_serde::to_vec_named(action).ok()?;
    data.extend_from_slice(&nonce.to_be_bytes());
    match vault {
        None => data.push(0),
        Some(v) => {
            data.push(1);
            data.extend_from_slice(v.as_slice());
        }
    }
    if let Some(e) = expires_after {
        data.push(0);
        data.extend_from_slice(&e.to_be_bytes());
    }
    let domain = Eip712Domain::new(
        Some("Exchange".into()),
        Some("1".into()),
        Some(U256::from(1337u64)),
        Some(Address::ZERO),
        None,
    );
    Some(Agent { source: "a".into(), connectionId: keccak256(&data) }.eip712_signing_hash(&domain))
}

fn recover(digest: B256, signature: &Value) -> Option<Address> {
    let word = |k: &str| U256::from_str_radix(signature.get(k)?.as_str()?.strip_prefix("0x")?, 16).ok();
    let v = signature.get("v")?.as_u64()?;
    let mut bytes = [0u8; 65];
    bytes[..32].copy_from_slice(&word("r")?.to_be_bytes::<32>());
    bytes[32..64].copy_from_slice(&word("s")?.to_be_bytes::<32>());
    bytes[64] = u8::try_from(v).ok()?;
    alloy_primitives::Signature::try_from(bytes.as_slice()).ok()?.recover_address_from_prehash(&digest).ok()
}

/// Whether `p` is a price the exchange accepts for a market with `sz_decimals`: at most five
/// significant figures (any integer is fine) and at most `6 - sz_decimals` decimals.
fn valid_price(p: &str, sz_decimals: u8) -> bool {
    let (whole, fraction) = p.split_once('.').unwrap_or((p, ""));
    let significant = format!("{}{fraction}", whole.trim_start_matches('0')).trim_start_matches('0').len();
    !whole.is_empty()
        && whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit())
        && fraction.len() <= usize::from(6u8.saturating_sub(sz_decimals))
        && (fraction.is_empty() || significant <= 5)
}

fn valid_size(s: &str, sz_decimals: u8) -> bool {
    let (whole, fraction) = s.split_once('.').unwrap_or((s, ""));
    !whole.is_empty()
        && whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit())
        && fraction.len() <= usize::from(sz_decimals)
}

async fn exchange(State(sim): State<Simulator>, body: Bytes) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else { return unreadable() };
    let (Some(action), Some(nonce), Some(signature)) =
        (body.get("action"), body.get("nonce").and_then(Value::as_u64), body.get("signature"))
    else {
        return unreadable();
    };
    let vault = match body.get("vaultAddress") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_str().and_then(|s| s.parse::<Address>().ok()) {
            Some(a) => Some(a),
            None => return unreadable(),
        },
    };
    let expires_after = body.get("expiresAfter").and_then(Value::as_u64);
    let world = &sim.world;
    let (agent, _master) = approved_agent(&sim);
    let signer = digest(action, nonce, vault, expires_after).and_then(|d| recover(d, signature));
    match signer {
        Some(signer) if signer == agent => {}
        // A wrong hash recovers to some other address, which the exchange does not know.
        Some(other) => return err(format!("User or API Wallet {other:#x} does not exist.")),
        None => return err("Invalid signature."),
    }
    let now = u64::try_from(world.now_ms()).unwrap_or(0);
    if nonce + 2 * 86_400_000 < now || nonce > now + 86_400_000 {
        return err(format!("Invalid nonce: {nonce} is too far from the current time {now}."));
    }
    if !sim.perpdex_nonces.lock().map(|mut seen| seen.insert(nonce)).unwrap_or(false) {
        return err(format!("Invalid nonce: duplicate nonce {nonce}."));
    }
    let markets = world.perp_markets();
    let market = |a: &Value| a.as_u64().and_then(|a| markets.get(usize::try_from(a).ok()?));
    match action.get("type").and_then(Value::as_str).unwrap_or_default() {
        "order" => {
            let Some(orders) = action.get("orders").and_then(Value::as_array) else { return unreadable() };
            let statuses: Vec<Value> = orders
                .iter()
                .map(|o| {
                    let Some(m) = o.get("a").and_then(market) else { return json!({"error": "Invalid asset."}) };
                    let is_buy = o.get("b").and_then(Value::as_bool).unwrap_or(false);
                    let p = o.get("p").and_then(Value::as_str).unwrap_or_default();
                    let s = o.get("s").and_then(Value::as_str).unwrap_or_default();
                    let tif = o.pointer("/t/limit/tif").and_then(Value::as_str).unwrap_or("Gtc");
                    if !valid_price(p, m.sz_decimals) {
                        return json!({"error": format!("Order has invalid price. asset={}", m.asset)});
                    }
                    if !valid_size(s, m.sz_decimals) {
                        return json!({"error": format!("Order has invalid size. asset={}", m.asset)});
                    }
                    let (price, size) = (p.parse::<f64>().unwrap_or(0.0), s.parse::<f64>().unwrap_or(0.0));
                    if price * size < 10.0 {
                        return json!({"error": "Order must have minimum value of $10."});
                    }
                    let (bids, asks) = world.perp_book(m, 1);
                    let (best_bid, best_ask) = (bids[0].0, asks[0].0);
                    let crosses = if is_buy { price >= best_ask } else { price <= best_bid };
                    match (tif, crosses) {
                        ("Alo", true) => json!({"error": format!("Post only order would have immediately matched, bbo was {} {}. asset={}", px(best_bid), px(best_ask), m.asset)}),
                        ("Ioc", false) => json!({"error": format!("Order could not immediately match against any resting orders. asset={}", m.asset)}),
                        (_, true) => {
                            let oid = world.perp_place(m.asset, is_buy, p, s, true);
                            json!({"filled": {"totalSz": s, "avgPx": px(if is_buy { best_ask } else { best_bid }), "oid": oid}})
                        }
                        (_, false) => json!({"resting": {"oid": world.perp_place(m.asset, is_buy, p, s, false)}}),
                    }
                })
                .collect();
            Json(json!({"status": "ok", "response": {"type": "order", "data": {"statuses": statuses}}})).into_response()
        }
        "cancel" => {
            let Some(cancels) = action.get("cancels").and_then(Value::as_array) else { return unreadable() };
            let statuses: Vec<Value> = cancels
                .iter()
                .map(|c| {
                    let asset =
                        c.get("a").and_then(Value::as_u64).and_then(|a| u32::try_from(a).ok()).unwrap_or(u32::MAX);
                    let oid = c.get("o").and_then(Value::as_u64).unwrap_or(0);
                    if world.perp_cancel(asset, oid) {
                        Value::from("success")
                    } else {
                        json!({"error": format!("Order was never placed, already canceled, or filled. asset={asset}")})
                    }
                })
                .collect();
            Json(json!({"status": "ok", "response": {"type": "cancel", "data": {"statuses": statuses}}}))
                .into_response()
        }
        "updateLeverage" => {
            let Some(m) = action.get("asset").and_then(market) else { return err("Invalid asset.") };
            let leverage = action.get("leverage").and_then(Value::as_u64).unwrap_or(0);
            if leverage == 0 || leverage > u64::from(m.max_leverage) {
                return err("Invalid leverage value");
            }
            Json(json!({"status": "ok", "response": {"type": "default"}})).into_response()
        }
        _ => unreadable(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_follow_the_exchange_tick_rules() {
        assert!(valid_price("97000", 5) && valid_price("3400.5", 4) && valid_price("0.32145", 0));
        assert!(!valid_price("3400.55", 4), "more than 5 significant figures");
        assert!(!valid_price("0.1234567", 0), "more than 6 decimals");
        assert!(!valid_price("190.123", 4), "more than 6 - szDecimals decimals");
        assert!(valid_size("0.0147", 4) && !valid_size("0.01471", 4) && !valid_size("1.5", 0));
    }

    #[test]
    fn numbers_are_written_as_the_exchange_writes_them() {
        assert_eq!(
            (num(1.50, 4), num(2.0, 2), px(97_123.456), px(0.321_456)),
            ("1.5".into(), "2".into(), "97123".into(), "0.32146".into())
        );
    }
}
