//! The on-chain analytics vendor (API v1): every endpoint is a `POST` with a JSON body under
//! `/api/v1/...` (labels under `/api/beta/...`), authenticated by an `apikey` header, with the
//! vendor's `filters`, `order_by` and `pagination`, its `{"data": [...], "pagination": {...}}`
//! envelope and its FastAPI-style error bodies. Answers come from the simulated market.
//!
//! Keys: any non-blank key is accepted except [`REVOKED_KEY`], which answers 401 like a
//! revoked key would; a missing key is a 401 too.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Map, Value, json};
use svc_domain::{Chain, rfc3339};

use crate::Simulator;
use crate::world::{
    DAY_MS, HOUR_MS, MARKET_CHAINS, MINUTE_MS, Position, Scenario, TokenKind, Wallet, WalletKind, World,
};

/// The key the fake refuses, as a revoked key: tests set it to see a vendor auth failure.
pub const REVOKED_KEY: &str = "revoked-key";

/// Largest page the fake serves.
const MAX_PER_PAGE: u64 = 1000;

type Endpoint = fn(&Query<'_>) -> Result<Answer, Reject>;

/// Every endpoint: vendor path and what answers it.
const ENDPOINTS: &[(&str, Endpoint)] = &[
    ("/api/v1/smart-money/netflow", sm_netflow),
    ("/api/v1/smart-money/holdings", sm_holdings),
    ("/api/v1/smart-money/dex-trades", sm_dex_trades),
    ("/api/v1/smart-money/dcas", sm_dcas),
    ("/api/v1/smart-money/historical-holdings", sm_historical_holdings),
    ("/api/v1/smart-money/perp-trades", sm_perp_trades),
    ("/api/v1/profiler/address/current-balance", profiler_balances),
    ("/api/v1/profiler/address/historical-balances", profiler_historical_balances),
    ("/api/v1/profiler/address/transactions", profiler_transactions),
    ("/api/v1/profiler/address/counterparties", profiler_counterparties),
    ("/api/v1/profiler/address/related-wallets", profiler_related_wallets),
    ("/api/v1/profiler/address/pnl-summary", profiler_pnl_summary),
    ("/api/v1/profiler/address/pnl", profiler_pnl),
    ("/api/v1/profiler/address/nft-holdings", profiler_nft_holdings),
    ("/api/beta/profiler/address/labels", profiler_labels),
    ("/api/v1/perp-leaderboard", perp_leaderboard),
    ("/api/v1/tgm/flow-intelligence", tgm_flow_intelligence),
    ("/api/v1/tgm/who-bought-sold", tgm_who_bought_sold),
    ("/api/v1/tgm/dex-trades", tgm_dex_trades),
    ("/api/v1/tgm/transfers", tgm_transfers),
    ("/api/v1/tgm/holders", tgm_holders),
    ("/api/v1/tgm/flows", tgm_flows),
    ("/api/v1/tgm/pnl-leaderboard", tgm_pnl_leaderboard),
    ("/api/v1/tgm/jup-dca", tgm_jup_dca),
    ("/api/v1/token-screener", token_screener),
    ("/api/v1/perp-screener", perp_screener),
    ("/api/v1/tgm/perp-trades", tgm_perp_trades),
    ("/api/v1/tgm/perp-pnl-leaderboard", tgm_perp_pnl_leaderboard),
    ("/api/v1/tgm/perp-positions", tgm_perp_positions),
    ("/api/v1/tgm/token-information", tgm_token_information),
    ("/api/v1/tgm/indicators", tgm_indicators),
    ("/api/v1/tgm/token-ohlcv", tgm_token_ohlcv),
];

pub(super) fn router(sim: Simulator) -> Router {
    let mut router = Router::new();
    for (path, endpoint) in ENDPOINTS {
        let endpoint = *endpoint;
        router = router.route(
            path,
            post(move |State(sim): State<Simulator>, headers: HeaderMap, body: Bytes| async move {
                serve(&sim, &headers, &body, endpoint)
            }),
        );
    }
    router.with_state(sim)
}

/// What an endpoint answers before paging.
enum Answer {
    /// Rows to filter, sort and page. Keys starting with `_` are for filtering only.
    Rows(Vec<Value>),
    /// A whole body, sent as is.
    Body(Value),
}

/// An error answer: status and the vendor's body.
struct Reject(StatusCode, Value);

impl Reject {
    /// FastAPI's 422 for a body field: `{"detail": [{"loc", "msg", "type"}]}`.
    fn field(loc: &[&str], msg: impl Into<String>, kind: &str) -> Self {
        let mut path = vec![json!("body")];
        path.extend(loc.iter().map(|l| json!(l)));
        Reject(StatusCode::UNPROCESSABLE_ENTITY, json!({"detail": [{"loc": path, "msg": msg.into(), "type": kind}]}))
    }

    /// A 400 with the vendor's `message`.
    fn bad(msg: impl Into<String>) -> Self {
        Reject(StatusCode::BAD_REQUEST, json!({"message": msg.into()}))
    }

    fn not_found(msg: &str) -> Self {
        Reject(StatusCode::NOT_FOUND, json!({"message": msg}))
    }
}

fn serve(sim: &Simulator, headers: &HeaderMap, body: &[u8], endpoint: Endpoint) -> Response {
    let key = headers.get("apikey").and_then(|v| v.to_str().ok()).map(str::trim).unwrap_or_default();
    if key.is_empty() || key == REVOKED_KEY {
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({"message": "Unauthorized"}))).into_response();
    }
    let body: Map<String, Value> = match serde_json::from_slice(body) {
        Ok(Value::Object(map)) => map,
        _ => {
            let reject = Reject::field(&[], "Input should be a valid dictionary or object", "model_attributes_type");
            return (reject.0, axum::Json(reject.1)).into_response();
        }
    };
    let query = Query { world: &sim.world, body: &body, now: sim.world.now_ms() };
    let answer = endpoint(&query).and_then(|answer| match answer {
        Answer::Body(value) => Ok(value),
        Answer::Rows(rows) => page(&body, rows),
    });
    match answer {
        Ok(value) => axum::Json(value).into_response(),
        Err(Reject(status, value)) => (status, axum::Json(value)).into_response(),
    }
}

// ---- filters, sorting, paging -------------------------------------------------------------

/// Filter keys every endpoint understands even when its rows do not carry the field: they
/// choose which wallets an aggregate counts, or are switches.
const SPECIAL_FILTERS: &[&str] = &[
    "include_smart_money_labels",
    "exclude_smart_money_labels",
    "include_stablecoins",
    "include_native_tokens",
    "only_smart_money",
];

/// Applies `filters`, `order_by` and `pagination` to `rows` and wraps the page.
fn page(body: &Map<String, Value>, mut rows: Vec<Value>) -> Result<Value, Reject> {
    let fields: std::collections::BTreeSet<String> =
        rows.iter().filter_map(Value::as_object).flat_map(|r| r.keys().cloned()).collect();
    let known = |field: &str| fields.is_empty() || fields.contains(field);
    if let Some(filters) = body.get("filters") {
        let Some(filters) = filters.as_object() else {
            return Err(Reject::field(&["filters"], "Input should be a valid dictionary", "dict_type"));
        };
        for field in filters.keys() {
            if !SPECIAL_FILTERS.contains(&field.as_str()) && !known(field) {
                return Err(Reject::bad(format!("Filter field '{field}' not recognized")));
            }
        }
        rows.retain(|row| filters.iter().all(|(field, want)| keeps(row, field, want)));
    }
    if let Some(order) = body.get("order_by") {
        let Some(order) = order.as_array() else {
            return Err(Reject::field(&["order_by"], "Input should be a valid list", "list_type"));
        };
        let mut keys = Vec::new();
        for (i, key) in order.iter().enumerate() {
            let field = key.get("field").and_then(Value::as_str).unwrap_or_default();
            let desc = match key.get("direction").and_then(Value::as_str) {
                Some("DESC") => true,
                Some("ASC") => false,
                _ => {
                    let at = i.to_string();
                    return Err(Reject::field(
                        &["order_by", &at, "direction"],
                        "Input should be 'ASC' or 'DESC'",
                        "enum",
                    ));
                }
            };
            if !known(field) {
                return Err(Reject::bad(format!("order_by field '{field}' not recognized")));
            }
            keys.push((field.to_owned(), desc));
        }
        rows.sort_by(|a, b| {
            for (field, desc) in &keys {
                let ord = compare(a.get(field), b.get(field));
                let ord = if *desc { ord.reverse() } else { ord };
                if ord.is_ne() {
                    return ord;
                }
            }
            std::cmp::Ordering::Equal
        });
    }
    let paging = body.get("pagination").cloned().unwrap_or(json!({}));
    let page = paging.get("page").map_or(Some(1), Value::as_u64).filter(|p| *p >= 1);
    let per_page = paging.get("per_page").map_or(Some(100), Value::as_u64).filter(|p| (1..=MAX_PER_PAGE).contains(p));
    let Some(page) = page else {
        return Err(Reject::field(
            &["pagination", "page"],
            "Input should be greater than or equal to 1",
            "greater_than_equal",
        ));
    };
    let Some(per_page) = per_page else {
        return Err(Reject::field(
            &["pagination", "per_page"],
            "Input should be between 1 and 1000",
            "less_than_equal",
        ));
    };
    let start = usize::try_from((page - 1).saturating_mul(per_page)).unwrap_or(usize::MAX);
    let total = rows.len();
    let data: Vec<Value> = rows.into_iter().skip(start).take(per_page as usize).map(public).collect();
    let is_last_page = start.saturating_add(per_page as usize) >= total;
    Ok(json!({"data": data, "pagination": {"page": page, "per_page": per_page, "is_last_page": is_last_page}}))
}

/// The row without its filter-only `_` fields.
fn public(mut row: Value) -> Value {
    if let Some(map) = row.as_object_mut() {
        map.retain(|k, _| !k.starts_with('_'));
    }
    row
}

/// Whether `row` passes the filter `field: want`.
fn keeps(row: &Value, field: &str, want: &Value) -> bool {
    let labels = || row.get("_sm").and_then(Value::as_array).cloned();
    let listed = |list: &Value, label: &Value| list.as_array().is_some_and(|l| l.contains(label));
    match field {
        "include_smart_money_labels" => labels().is_none_or(|have| have.iter().any(|l| listed(want, l))),
        "exclude_smart_money_labels" => labels().is_none_or(|have| !have.iter().any(|l| listed(want, l))),
        "include_stablecoins" => want.as_bool() != Some(false) || row.get("_kind") != Some(&json!("stable")),
        "include_native_tokens" => want.as_bool() != Some(false) || row.get("_kind") != Some(&json!("native")),
        "only_smart_money" => want.as_bool() != Some(true) || row.get("_smart") != Some(&json!(false)),
        _ => {
            let Some(have) = row.get(field) else { return true };
            match want {
                Value::Object(range) if range.contains_key("min") || range.contains_key("max") => {
                    let x = have.as_f64();
                    let lo = range.get("min").and_then(Value::as_f64);
                    let hi = range.get("max").and_then(Value::as_f64);
                    x.is_some_and(|x| lo.is_none_or(|lo| x >= lo) && hi.is_none_or(|hi| x <= hi))
                }
                Value::Object(range) => {
                    let day_of = |s: &str| s.get(..10).unwrap_or(s).to_owned();
                    let day = have.as_str().map(day_of).unwrap_or_default();
                    let from = range.get("from").and_then(Value::as_str).map(day_of);
                    let to = range.get("to").and_then(Value::as_str).map(day_of);
                    from.is_none_or(|f| day >= f) && to.is_none_or(|t| day <= t)
                }
                Value::Array(options) => options.iter().any(|o| same(have, o)),
                other => same(have, other),
            }
        }
    }
}

/// Equality as the vendor filters: strings case-insensitively, numbers by value.
fn same(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::String(a), Value::String(b)) => a.eq_ignore_ascii_case(b),
        (Value::Array(list), w) => list.iter().any(|x| same(x, w)),
        (a, b) => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() < 1e-9,
            _ => a == b,
        },
    }
}

fn compare(a: Option<&Value>, b: Option<&Value>) -> std::cmp::Ordering {
    match (a.and_then(Value::as_f64), b.and_then(Value::as_f64)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => {
            let text = |v: Option<&Value>| v.map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
            text(a).cmp(&text(b))
        }
    }
}

// ---- request reading ----------------------------------------------------------------------

/// One request: the body and the world it is answered from.
struct Query<'a> {
    world: &'a World,
    body: &'a Map<String, Value>,
    now: i64,
}

impl Query<'_> {
    fn str(&self, key: &str) -> Option<&str> {
        self.body.get(key).and_then(Value::as_str)
    }

    fn flag(&self, key: &str) -> bool {
        self.body.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    fn filters(&self) -> Option<&Map<String, Value>> {
        self.body.get("filters").and_then(Value::as_object)
    }

    /// `chains`, required or defaulting to every chain of the market.
    fn chains(&self, required: bool) -> Result<Vec<Chain>, Reject> {
        match self.body.get("chains") {
            None if required => Err(Reject::field(&["chains"], "Field required", "missing")),
            None => Ok(MARKET_CHAINS.to_vec()),
            Some(Value::Array(names)) if !names.is_empty() => names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let at = i.to_string();
                    let bad = || Reject::field(&["chains", &at], "Input should be a supported chain", "enum");
                    name.as_str().and_then(|n| n.parse::<Chain>().ok()).ok_or_else(bad)
                })
                .collect(),
            Some(_) => Err(Reject::field(&["chains"], "Input should be a non-empty list", "list_type")),
        }
    }

    /// `chain`, required, or `default`.
    fn chain(&self, default: Option<Chain>) -> Result<Chain, Reject> {
        match (self.str("chain"), default) {
            (Some(name), _) => {
                name.parse().map_err(|_| Reject::field(&["chain"], "Input should be a supported chain", "enum"))
            }
            (None, Some(chain)) => Ok(chain),
            (None, None) => Err(Reject::field(&["chain"], "Field required", "missing")),
        }
    }

    /// `key: {"from", "to"}` as `[from_ms, to_ms)`, or the last `default_days` days.
    fn range(&self, key: &str, default_days: Option<i64>) -> Result<(i64, i64), Reject> {
        match self.body.get(key) {
            Some(range) => {
                let day = |end: &str| {
                    range.get(end).and_then(Value::as_str).and_then(day_start_ms).ok_or_else(|| {
                        Reject::field(
                            &[key, end],
                            "Input should be a valid date (YYYY-MM-DD)",
                            "date_from_datetime_parsing",
                        )
                    })
                };
                let (from, to) = (day("from")?, day("to")? + DAY_MS);
                if to <= from {
                    return Err(Reject::bad(format!("{key}.to must not be before {key}.from")));
                }
                Ok((from, to))
            }
            None => match default_days {
                Some(days) => Ok((self.now - days * DAY_MS, self.now)),
                None => Err(Reject::field(&[key], "Field required", "missing")),
            },
        }
    }

    /// The token named by `token_address` and `chain`.
    fn token(&self) -> Result<Option<usize>, Reject> {
        let chain = self.chain(None)?;
        let address =
            self.str("token_address").ok_or_else(|| Reject::field(&["token_address"], "Field required", "missing"))?;
        Ok(self.world.token_index(chain, address))
    }

    /// The perp coin named by `token_symbol`.
    fn coin(&self) -> Result<Option<usize>, Reject> {
        let symbol =
            self.str("token_symbol").ok_or_else(|| Reject::field(&["token_symbol"], "Field required", "missing"))?;
        Ok(self.world.perp_coin_index(symbol))
    }

    /// The wallets a profiler query names: `address`, or every wallet of `entity_name`.
    fn profiled(&self) -> Result<(Chain, Vec<usize>), Reject> {
        let params = self.body.get("parameters").and_then(Value::as_object).unwrap_or(self.body);
        let chain = match params.get("chain").and_then(Value::as_str) {
            Some(name) => {
                name.parse().map_err(|_| Reject::field(&["chain"], "Input should be a supported chain", "enum"))?
            }
            None => Chain::Ethereum,
        };
        let wallets = self.world.wallets();
        match (params.get("address").and_then(Value::as_str), params.get("entity_name").and_then(Value::as_str)) {
            (Some(address), _) => Ok((chain, self.world.wallet_index(chain, address).into_iter().collect())),
            (None, Some(entity)) => Ok((
                chain,
                (0..wallets.len())
                    .filter(|w| {
                        wallets[*w].chain == chain
                            && wallets[*w].entity.as_deref().is_some_and(|e| e.eq_ignore_ascii_case(entity))
                    })
                    .collect(),
            )),
            (None, None) => Err(Reject::field(&["address"], "address or entity_name is required", "missing")),
        }
    }

    /// Which wallets count as smart money for this query's label filters.
    fn smart(&self) -> impl Fn(&Wallet) -> bool + '_ {
        let list = |key: &str| {
            self.filters()
                .and_then(|f| f.get(key))
                .and_then(Value::as_array)
                .map(|l| l.iter().filter_map(Value::as_str).map(str::to_owned).collect::<Vec<_>>())
        };
        let include = list("include_smart_money_labels");
        let exclude = list("exclude_smart_money_labels").unwrap_or_default();
        move |w: &Wallet| {
            let Some(label) = w.smart_money_label else { return false };
            include.as_ref().is_none_or(|inc| inc.iter().any(|l| l == label)) && !exclude.iter().any(|l| l == label)
        }
    }
}

/// `YYYY-MM-DD` (or a longer ISO time starting with one) as the start of that UTC day.
fn day_start_ms(text: &str) -> Option<i64> {
    let day = text.get(..10)?;
    let mut parts = day.split('-');
    let (y, m, d): (i64, i64, i64) =
        (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || day.as_bytes().get(4) != Some(&b'-') {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some((era * 146_097 + doe - 719_468) * DAY_MS)
}

fn iso(ms: i64) -> String {
    rfc3339(ms)
}

fn date(ms: i64) -> String {
    rfc3339(ms)[..10].to_owned()
}

fn round(x: f64, places: i32) -> f64 {
    let k = 10f64.powi(places);
    (x * k).round() / k
}

fn kind_name(kind: TokenKind) -> &'static str {
    match kind {
        TokenKind::Native => "native",
        TokenKind::Stable => "stable",
        TokenKind::Traded => "traded",
    }
}

fn sm_labels(w: &Wallet) -> Value {
    json!(w.smart_money_label.into_iter().collect::<Vec<_>>())
}

// ---- smart money --------------------------------------------------------------------------

fn sm_netflow(q: &Query<'_>) -> Result<Answer, Reject> {
    let chains = q.chains(true)?;
    let smart = q.smart();
    let world = q.world;
    let rows = (0..world.tokens().len())
        .filter(|t| chains.contains(&world.tokens()[*t].chain))
        .map(|t| {
            let token = &world.tokens()[t];
            let flow = |window| round(world.netflow_usd(t, window, &smart), 2);
            json!({
                "token_address": token.address, "token_symbol": token.symbol,
                "net_flow_1h_usd": flow(HOUR_MS), "net_flow_24h_usd": flow(DAY_MS),
                "net_flow_7d_usd": flow(7 * DAY_MS), "net_flow_30d_usd": flow(30 * DAY_MS),
                "chain": token.chain, "token_sectors": token.sectors,
                "trader_count": world.holders_count(t, &smart),
                "token_age_days": world.token_age_days(t, q.now),
                "market_cap_usd": round(world.market_cap_at(t, q.now), 0),
                "_kind": kind_name(token.kind),
            })
        })
        .filter(|row| row["trader_count"].as_u64() != Some(0))
        .collect();
    Ok(Answer::Rows(rows))
}

/// Smart-money value held in token `t` at `at_ms`.
fn smart_value(world: &World, t: usize, at_ms: i64, smart: &impl Fn(&Wallet) -> bool) -> (f64, u32) {
    let mut balance = 0.0;
    let mut holders = 0;
    for p in world.holders_of(t).filter(|p| smart(&world.wallets()[p.wallet])) {
        balance += world.balance_at(p, at_ms);
        holders += 1;
    }
    (balance, holders)
}

fn sm_holdings(q: &Query<'_>) -> Result<Answer, Reject> {
    let chains = q.chains(false)?;
    let smart = q.smart();
    let world = q.world;
    let mut rows: Vec<Value> = Vec::new();
    for chain in chains {
        let tokens: Vec<usize> = (0..world.tokens().len()).filter(|t| world.tokens()[*t].chain == chain).collect();
        let values: Vec<(usize, f64, f64, u32)> = tokens
            .iter()
            .map(|&t| {
                let (now, holders) = smart_value(world, t, q.now, &smart);
                let (before, _) = smart_value(world, t, q.now - DAY_MS, &smart);
                (t, now, before, holders)
            })
            .filter(|(_, _, _, holders)| *holders > 0)
            .collect();
        let total: f64 = values.iter().map(|(t, now, _, _)| now * world.token_price(*t)).sum();
        for (t, now, before, holders) in values {
            let token = &world.tokens()[t];
            let value = now * world.token_price(t);
            rows.push(json!({
                "chain": chain, "token_address": token.address, "token_symbol": token.symbol,
                "token_sectors": token.sectors, "value_usd": round(value, 2),
                "balance_24h_percent_change": round((now / before - 1.0) * 100.0, 4),
                "holders_count": holders,
                "share_of_holdings_percent": round(value / total * 100.0, 4),
                "token_age_days": world.token_age_days(t, q.now),
                "market_cap_usd": round(world.market_cap_at(t, q.now), 0),
                "_kind": kind_name(token.kind),
            }));
        }
    }
    Ok(Answer::Rows(rows))
}

fn sm_dex_trades(q: &Query<'_>) -> Result<Answer, Reject> {
    let chains = q.chains(false)?;
    let world = q.world;
    // The feed carries labelled large traders too (whales), which is what whale alerts read.
    let smart = |w: &Wallet| w.kind.is_smart_money() || w.kind == WalletKind::Whale;
    let rows = world
        .trades_between(q.now - DAY_MS, q.now)
        .into_iter()
        .rev()
        .filter(|t| chains.contains(&world.tokens()[t.token].chain) && smart(&world.wallets()[t.wallet]))
        .map(|t| {
            let (bought, sold) = if t.buy { (t.token, t.counter) } else { (t.counter, t.token) };
            let (bought_amount, sold_amount) =
                if t.buy { (t.token_amount, t.counter_amount) } else { (t.counter_amount, t.token_amount) };
            let (b, s) = (&world.tokens()[bought], &world.tokens()[sold]);
            let wallet = &world.wallets()[t.wallet];
            json!({
                "chain": b.chain, "block_timestamp": iso(t.at_ms), "transaction_hash": t.tx_hash,
                "trader_address": wallet.address, "trader_address_label": wallet.label,
                "token_bought_address": b.address, "token_sold_address": s.address,
                "token_bought_amount": bought_amount, "token_sold_amount": sold_amount,
                "token_bought_symbol": b.symbol, "token_sold_symbol": s.symbol,
                "token_bought_age_days": world.token_age_days(bought, t.at_ms),
                "token_sold_age_days": world.token_age_days(sold, t.at_ms),
                "token_bought_market_cap": round(world.market_cap_at(bought, t.at_ms), 0),
                "token_sold_market_cap": round(world.market_cap_at(sold, t.at_ms), 0),
                "token_bought_fdv": round(world.market_cap_at(bought, t.at_ms), 0),
                "token_sold_fdv": round(world.market_cap_at(sold, t.at_ms), 0),
                "trade_value_usd": round(t.value_usd, 2),
                "_sm": sm_labels(wallet),
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

fn dca_rows(q: &Query<'_>, keep: impl Fn(usize, usize) -> bool, smart_only: bool) -> Vec<(Value, Value)> {
    let world = q.world;
    world
        .dca_orders_between(q.now - 7 * DAY_MS, q.now)
        .into_iter()
        .rev()
        .filter(|o| keep(o.input, o.output))
        .filter(|o| !smart_only || world.wallets()[o.wallet].kind.is_smart_money())
        .map(|o| {
            let progress = o.progress(q.now);
            let (input, output) = (&world.tokens()[o.input], &world.tokens()[o.output]);
            let spent = o.deposit * progress;
            let redeemed = spent * world.token_price(o.input) / world.token_price(o.output);
            let updated = o.created_ms + ((q.now - o.created_ms) as f64 * 0.9) as i64;
            let status = if progress >= 1.0 { "Closed" } else { "Active" };
            let wallet = &world.wallets()[o.wallet];
            let smart = json!({
                "dca_created_at": iso(o.created_ms), "dca_updated_at": iso(updated),
                "trader_address": wallet.address, "transaction_hash": o.tx_hash,
                "trader_address_label": wallet.label, "dca_vault_address": o.vault,
                "input_token_address": input.address, "output_token_address": output.address,
                "deposit_token_amount": round(o.deposit, 6), "token_spent_amount": round(spent, 6),
                "output_token_redeemed_amount": round(redeemed, 6), "dca_status": status,
                "input_token_symbol": input.symbol, "output_token_symbol": output.symbol,
                "deposit_value_usd": round(o.deposit_usd, 2), "_sm": sm_labels(wallet),
            });
            let token = json!({
                "since_timestamp": iso(o.created_ms), "last_timestamp": iso(updated),
                "trader_address": wallet.address, "creation_hash": o.tx_hash, "trader_label": wallet.label,
                "dca_vault_address": o.vault, "input_mint_address": input.address,
                "output_mint_address": output.address, "deposit_amount": round(o.deposit, 6),
                "deposit_spent": round(spent, 6), "other_token_redeemed": round(redeemed, 6),
                "status": status, "token_input": input.symbol, "token_output": output.symbol,
                "deposit_usd_value": round(o.deposit_usd, 2), "_sm": sm_labels(wallet),
            });
            (smart, token)
        })
        .collect()
}

fn sm_dcas(q: &Query<'_>) -> Result<Answer, Reject> {
    if q.body.contains_key("chains") {
        return Err(Reject::bad("Filter field 'chains' not recognized: DCA orders are on Solana only"));
    }
    Ok(Answer::Rows(dca_rows(q, |_, _| true, true).into_iter().map(|(smart, _)| smart).collect()))
}

fn sm_historical_holdings(q: &Query<'_>) -> Result<Answer, Reject> {
    let chains = q.chains(false)?;
    let (from, to) = q.range("date_range", Some(7))?;
    let smart = q.smart();
    let world = q.world;
    let from = from.max(to - 31 * DAY_MS);
    let mut rows = Vec::new();
    let mut day = from.div_euclid(DAY_MS) * DAY_MS;
    while day < to.min(q.now) {
        let end = (day + DAY_MS - 1).min(q.now);
        for t in (0..world.tokens().len()).filter(|t| chains.contains(&world.tokens()[*t].chain)) {
            let token = &world.tokens()[t];
            let (balance, holders) = smart_value(world, t, end, &smart);
            if holders == 0 {
                continue;
            }
            let (before, _) = smart_value(world, t, end - DAY_MS, &smart);
            let price = world.token_price_at(t, end);
            let labels: Vec<&str> = world
                .holders_of(t)
                .filter_map(|p| world.wallets()[p.wallet].smart_money_label)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            rows.push(json!({
                "date": date(day), "chain": token.chain, "token_address": token.address,
                "token_symbol": token.symbol, "token_sectors": token.sectors, "smart_money_labels": labels,
                "balance": round(balance, 6), "value_usd": round(balance * price, 2),
                "balance_24h_percent_change": round((balance / before - 1.0) * 100.0, 4),
                "holders_count": holders, "share_of_holdings_percent": null,
                "token_age_days": world.token_age_days(t, end),
                "market_cap_usd": round(world.market_cap_at(t, end), 0), "_kind": kind_name(token.kind),
            }));
        }
        day += DAY_MS;
    }
    Ok(Answer::Rows(rows))
}

fn perp_trade_row(world: &World, t: &crate::world::PerpTrade) -> Value {
    let wallet = &world.wallets()[t.wallet];
    json!({
        "trader_address_label": wallet.label, "trader_address": wallet.address,
        "token_symbol": world.perp_coins()[t.coin].symbol, "side": if t.long { "Long" } else { "Short" },
        "action": t.action, "token_amount": round(t.size, 6), "price_usd": round(t.price, 6),
        "value_usd": round(t.size * t.price, 2), "type": t.order_type,
        "block_timestamp": iso(t.at_ms), "transaction_hash": t.tx_hash,
        "_sm": sm_labels(wallet), "_smart": wallet.kind.is_smart_money(),
    })
}

fn sm_perp_trades(q: &Query<'_>) -> Result<Answer, Reject> {
    let world = q.world;
    let only_new = q.flag("only_new_positions");
    let rows = world
        .perp_trades_between(q.now - DAY_MS, q.now)
        .iter()
        .rev()
        .filter(|t| world.wallets()[t.wallet].kind.is_smart_money() && (!only_new || t.action == "Open"))
        .map(|t| perp_trade_row(world, t))
        .collect();
    Ok(Answer::Rows(rows))
}

// ---- profiler -----------------------------------------------------------------------------

fn profiler_balances(q: &Query<'_>) -> Result<Answer, Reject> {
    let (chain, wallets) = q.profiled()?;
    let world = q.world;
    let mut rows = Vec::new();
    for w in wallets {
        for p in world.holdings_of(w) {
            let token = &world.tokens()[p.token];
            let amount = world.balance_at(p, q.now);
            let price = world.token_price(p.token);
            rows.push(json!({
                "chain": chain, "address": world.wallets()[w].address, "token_address": token.address,
                "token_symbol": token.symbol, "token_name": token.name, "token_amount": round(amount, 6),
                "price_usd": round(price, 8), "value_usd": round(amount * price, 2),
            }));
        }
    }
    Ok(Answer::Rows(rows))
}

fn profiler_historical_balances(q: &Query<'_>) -> Result<Answer, Reject> {
    let (chain, wallets) = q.profiled()?;
    let (from, to) = q.range("date", Some(7))?;
    let world = q.world;
    let mut rows = Vec::new();
    for w in wallets {
        let mut day = from.max(to - 31 * DAY_MS).div_euclid(DAY_MS) * DAY_MS;
        while day < to.min(q.now) {
            let at = (day + DAY_MS - 1).min(q.now);
            for p in world.holdings_of(w) {
                let token = &world.tokens()[p.token];
                let amount = world.balance_at(p, at);
                rows.push(json!({
                    "block_timestamp": iso(at), "token_address": token.address, "chain": chain,
                    "token_symbol": token.symbol, "token_amount": round(amount, 6),
                    "value_usd": round(amount * world.token_price_at(p.token, at), 2),
                }));
            }
            day += DAY_MS;
        }
    }
    Ok(Answer::Rows(rows))
}

fn movement(
    world: &World,
    token: usize,
    amount: f64,
    at_ms: i64,
    from: &str,
    to: &str,
    labels: [Option<&String>; 2],
) -> Value {
    let t = &world.tokens()[token];
    let price = world.token_price_at(token, at_ms);
    json!({
        "token_symbol": t.symbol, "token_amount": round(amount, 6), "price_usd": round(price, 8),
        "value_usd": round(amount * price, 2), "token_address": t.address, "chain": t.chain,
        "from_address": from, "to_address": to, "from_address_label": labels[0], "to_address_label": labels[1],
    })
}

/// Where a DEX pool sits for a wallet's swaps: a stable fake pool address per chain.
fn pool_address(chain: Chain) -> &'static str {
    if chain.is_evm() { "0x000000000000000000000000000000000000dead" } else { "11111111111111111111111111111111" }
}

fn profiler_transactions(q: &Query<'_>) -> Result<Answer, Reject> {
    let (chain, wallets) = q.profiled()?;
    let (from, to) = q.range("date", Some(1))?;
    let world = q.world;
    let mut rows = Vec::new();
    for w in wallets {
        let wallet = &world.wallets()[w];
        let me = wallet.address.as_str();
        let pool = pool_address(chain);
        for t in world.trades_between(from, to).into_iter().filter(|t| t.wallet == w) {
            let (sent, received) = if t.buy {
                (
                    movement(world, t.counter, t.counter_amount, t.at_ms, me, pool, [wallet.label.as_ref(), None]),
                    movement(world, t.token, t.token_amount, t.at_ms, pool, me, [None, wallet.label.as_ref()]),
                )
            } else {
                (
                    movement(world, t.token, t.token_amount, t.at_ms, me, pool, [wallet.label.as_ref(), None]),
                    movement(world, t.counter, t.counter_amount, t.at_ms, pool, me, [None, wallet.label.as_ref()]),
                )
            };
            rows.push(json!({
                "chain": chain, "method": "swap", "tokens_sent": [sent], "tokens_received": [received],
                "volume_usd": round(t.value_usd, 2), "block_timestamp": iso(t.at_ms),
                "transaction_hash": t.tx_hash, "source_type": "DEX",
            }));
        }
        for t in world.transfers_between(from, to).into_iter().filter(|t| t.from == w || t.to == w) {
            let (a, b) = (&world.wallets()[t.from], &world.wallets()[t.to]);
            let moved = movement(
                world,
                t.token,
                t.amount,
                t.at_ms,
                &a.address,
                &b.address,
                [a.label.as_ref(), b.label.as_ref()],
            );
            let (sent, received) = if t.from == w { (vec![moved], vec![]) } else { (vec![], vec![moved]) };
            rows.push(json!({
                "chain": chain, "method": "transfer", "tokens_sent": sent, "tokens_received": received,
                "volume_usd": round(t.value_usd, 2), "block_timestamp": iso(t.at_ms),
                "transaction_hash": t.tx_hash, "source_type": "Transfer",
            }));
        }
    }
    rows.sort_by(|a, b| b["block_timestamp"].as_str().cmp(&a["block_timestamp"].as_str()));
    Ok(Answer::Rows(rows))
}

fn profiler_counterparties(q: &Query<'_>) -> Result<Answer, Reject> {
    let (_, wallets) = q.profiled()?;
    let (from, to) = q.range("date", Some(7))?;
    let world = q.world;
    // counterparty -> (count, in, out, token -> transfers)
    let mut by: std::collections::BTreeMap<usize, (u32, f64, f64, std::collections::BTreeMap<usize, u32>)> =
        std::collections::BTreeMap::new();
    for t in world.transfers_between(from, to) {
        let (other, incoming) = if wallets.contains(&t.from) {
            (t.to, false)
        } else if wallets.contains(&t.to) {
            (t.from, true)
        } else {
            continue;
        };
        let entry = by.entry(other).or_default();
        entry.0 += 1;
        if incoming {
            entry.1 += t.value_usd
        } else {
            entry.2 += t.value_usd
        }
        *entry.3.entry(t.token).or_default() += 1;
    }
    let rows = by
        .into_iter()
        .map(|(other, (count, vin, vout, tokens))| {
            let wallet = &world.wallets()[other];
            let info: Vec<Value> = tokens
                .into_iter()
                .map(|(t, n)| {
                    let token = &world.tokens()[t];
                    json!({"token_address": token.address, "token_symbol": token.symbol, "token_name": token.name, "num_transfer": n.to_string()})
                })
                .collect();
            json!({
                "counterparty_address": wallet.address,
                "counterparty_address_label": wallet.label.iter().collect::<Vec<_>>(),
                "interaction_count": count, "total_volume_usd": round(vin + vout, 2),
                "volume_in_usd": round(vin, 2), "volume_out_usd": round(vout, 2), "tokens_info": info,
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

fn profiler_related_wallets(q: &Query<'_>) -> Result<Answer, Reject> {
    let (chain, wallets) = q.profiled()?;
    let world = q.world;
    let mut rows = Vec::new();
    for w in wallets {
        let wallet = &world.wallets()[w];
        let peers: Vec<usize> =
            (0..world.wallets().len()).filter(|o| *o != w && world.wallets()[*o].chain == chain).collect();
        let exchange = peers.iter().copied().find(|o| world.wallets()[*o].kind == WalletKind::Exchange);
        let mut rng = fastrand::Rng::with_seed(crate::world::mix(w as u64, 7));
        let relations = [
            ("First Funder", exchange.unwrap_or(peers[0])),
            ("Sent Funds To", peers[rng.usize(..peers.len())]),
            ("Received Funds From", peers[rng.usize(..peers.len())]),
        ];
        for (order, (relation, other)) in relations.into_iter().enumerate() {
            let peer = &world.wallets()[other];
            let at = wallet.created_ms + i64::try_from(order).unwrap_or(0) * DAY_MS;
            let hash = format!("{:0>64x}", crate::world::mix(w as u64, other as u64));
            let hash = if chain.is_evm() { format!("0x{hash}") } else { bs58::encode(hash.as_bytes()).into_string() };
            rows.push(json!({
                "address": peer.address, "address_label": peer.label, "relation": relation,
                "transaction_hash": hash, "block_timestamp": iso(at), "order": order + 1, "chain": chain,
            }));
        }
    }
    Ok(Answer::Rows(rows))
}

/// A wallet's PnL in one position, at `now`.
struct Pnl {
    bought_amount: f64,
    bought_usd: f64,
    sold_amount: f64,
    sold_usd: f64,
    realised: f64,
    unrealised: f64,
    holding: f64,
    price: f64,
}

fn pnl_of(world: &World, p: &Position, now: i64) -> Pnl {
    let holding = world.balance_at(p, now);
    let price = world.token_price(p.token);
    let sold_amount = holding * f64::from(p.sells) / f64::from(p.buys.max(1)) * 0.5;
    let bought_amount = holding + sold_amount;
    let avg_sell = price * (0.8 + 0.4 * (p.sells % 7) as f64 / 7.0);
    Pnl {
        bought_amount,
        bought_usd: bought_amount * p.cost_basis,
        sold_amount,
        sold_usd: sold_amount * avg_sell,
        realised: sold_amount * (avg_sell - p.cost_basis),
        unrealised: holding * (price - p.cost_basis),
        holding,
        price,
    }
}

fn profiler_pnl_summary(q: &Query<'_>) -> Result<Answer, Reject> {
    let (chain, wallets) = q.profiled()?;
    let world = q.world;
    let mut tokens: Vec<(f64, f64, usize)> = Vec::new();
    let (mut trades, mut realised, mut cost) = (0u32, 0.0, 0.0);
    for w in wallets {
        for p in world.holdings_of(w).filter(|p| world.tokens()[p.token].kind == TokenKind::Traded) {
            let pnl = pnl_of(world, p, q.now);
            trades += p.buys + p.sells;
            realised += pnl.realised;
            let sold_cost = pnl.sold_amount * p.cost_basis;
            cost += sold_cost;
            let roi = if sold_cost > 0.0 { pnl.realised / sold_cost * 100.0 } else { 0.0 };
            tokens.push((pnl.realised, roi, p.token));
        }
    }
    let wins = tokens.iter().filter(|t| t.0 > 0.0).count();
    let win_rate = if tokens.is_empty() { 0.0 } else { wins as f64 / tokens.len() as f64 };
    tokens.sort_by(|a, b| b.0.total_cmp(&a.0));
    let top5: Vec<Value> = tokens
        .iter()
        .take(5)
        .map(|(pnl, roi, t)| {
            let token = &world.tokens()[*t];
            json!({"realized_pnl": round(*pnl, 2), "realized_roi": round(*roi, 4), "token_address": token.address,
                   "token_symbol": token.symbol, "chain": chain})
        })
        .collect();
    Ok(Answer::Body(json!({
        "top5_tokens": top5, "traded_token_count": tokens.len(), "traded_times": trades,
        "realized_pnl_usd": round(realised, 2),
        "realized_pnl_percent": round(if cost > 0.0 { realised / cost * 100.0 } else { 0.0 }, 4),
        "win_rate": round(win_rate, 4),
    })))
}

fn profiler_pnl(q: &Query<'_>) -> Result<Answer, Reject> {
    let (_, wallets) = q.profiled()?;
    let world = q.world;
    let mut rows = Vec::new();
    for w in wallets {
        for p in world.holdings_of(w) {
            let token = &world.tokens()[p.token];
            let pnl = pnl_of(world, p, q.now);
            let max_held = pnl.bought_amount;
            rows.push(json!({
                "token_address": token.address, "token_symbol": token.symbol, "token_price": round(pnl.price, 8),
                "roi_percent_realised": round(if pnl.sold_amount > 0.0 { pnl.realised / (pnl.sold_amount * p.cost_basis) * 100.0 } else { 0.0 }, 4),
                "pnl_usd_realised": round(pnl.realised, 2), "pnl_usd_unrealised": round(pnl.unrealised, 2),
                "roi_percent_unrealised": round((pnl.price / p.cost_basis - 1.0) * 100.0, 4),
                "bought_amount": round(pnl.bought_amount, 6), "bought_usd": round(pnl.bought_usd, 2),
                "cost_basis_usd": round(pnl.holding * p.cost_basis, 2),
                "sold_amount": round(pnl.sold_amount, 6), "sold_usd": round(pnl.sold_usd, 2),
                "avg_sold_price_usd": if pnl.sold_amount > 0.0 { json!(round(pnl.sold_usd / pnl.sold_amount, 8)) } else { Value::Null },
                "holding_amount": round(pnl.holding, 6), "holding_usd": round(pnl.holding * pnl.price, 2),
                "nof_buys": p.buys.to_string(), "nof_sells": p.sells.to_string(),
                "max_balance_held": round(max_held, 6), "max_balance_held_usd": round(max_held * pnl.price, 2),
            }));
        }
    }
    Ok(Answer::Rows(rows))
}

fn profiler_nft_holdings(q: &Query<'_>) -> Result<Answer, Reject> {
    let (chain, wallets) = q.profiled()?;
    let mut rows = Vec::new();
    for w in wallets {
        let mut rng = fastrand::Rng::with_seed(crate::world::mix(w as u64, 0x006e_6674));
        for i in 0..rng.usize(0..6) {
            let floor = 50.0 + rng.f64() * 20_000.0;
            let collection = crate::world::mix(w as u64, i as u64);
            let address = if chain.is_evm() {
                format!("0x{:0>40x}", u128::from(collection) << 32 | u128::from(rng.u32(..)))
            } else {
                bs58::encode(collection.to_be_bytes().repeat(4)).into_string()
            };
            rows.push(json!({
                "collection_address": address,
                "collection_name": format!("Collection #{}", collection % 1000),
                "token_id": rng.u64(1..100_000).to_string(), "chain": chain,
                "floor_price_usd": round(floor, 2), "value_usd": round(floor * (1.0 + rng.f64()), 2),
            }));
        }
    }
    Ok(Answer::Rows(rows))
}

fn profiler_labels(q: &Query<'_>) -> Result<Answer, Reject> {
    if !q.body.contains_key("parameters") {
        return Err(Reject::field(&["parameters"], "Field required", "missing"));
    }
    let (_, wallets) = q.profiled()?;
    let world = q.world;
    let mut rows = Vec::new();
    for w in wallets {
        let wallet = &world.wallets()[w];
        if let Some(sm) = wallet.smart_money_label {
            rows.push(json!({
                "label": sm, "category": "smart_money",
                "definition": "A wallet with a record of profitable trades over the period the label names.",
                "smEarnedDate": date(wallet.labelled_ms), "fullname": wallet.entity,
            }));
        }
        if let Some(label) = &wallet.label {
            rows.push(json!({
                "label": label, "category": wallet.kind.category(),
                "definition": format!("Wallet identified as {}.", wallet.kind.category().replace('_', " ")),
                "smEarnedDate": null, "fullname": wallet.entity,
            }));
        }
    }
    Ok(Answer::Body(json!({"data": rows})))
}

// ---- perp leaderboard ---------------------------------------------------------------------

fn perp_leaderboard(q: &Query<'_>) -> Result<Answer, Reject> {
    let (from, to) = q.range("date", Some(30))?;
    let world = q.world;
    let span = ((to.min(q.now) - from) as f64 / (30 * DAY_MS) as f64).clamp(0.05, 4.0);
    let mut by: std::collections::BTreeMap<usize, (f64, f64)> = std::collections::BTreeMap::new();
    for p in world.perp_positions() {
        let mark = world.perp_price_at(p.coin, q.now);
        let upnl = (mark - p.entry_price) * p.size * if p.long { 1.0 } else { -1.0 };
        let entry = by.entry(p.wallet).or_default();
        entry.0 += (p.realised_usd + upnl) * span;
        entry.1 += p.size * mark / f64::from(p.leverage);
    }
    let rows = by
        .into_iter()
        .map(|(w, (pnl, margin))| {
            let wallet = &world.wallets()[w];
            let account = margin * 1.5 + pnl.max(0.0);
            json!({
                "trader_address": wallet.address, "trader_address_label": wallet.label,
                "total_pnl": round(pnl, 2), "roi": round(pnl / account.max(1.0) * 100.0, 4),
                "account_value": round(account, 2), "_sm": sm_labels(wallet), "_smart": wallet.kind.is_smart_money(),
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

// ---- token god mode -----------------------------------------------------------------------

/// A time frame such as `1h`, `1d`, `7d` in ms.
fn timeframe_ms(text: &str) -> Option<i64> {
    let unit = text.chars().last()?;
    let n: i64 = text[..text.len() - unit.len_utf8()].parse().ok().filter(|n| *n > 0)?;
    let unit = match unit {
        'm' => MINUTE_MS,
        'h' => HOUR_MS,
        'd' => DAY_MS,
        'w' => 7 * DAY_MS,
        'M' => 30 * DAY_MS,
        _ => return None,
    };
    n.checked_mul(unit).filter(|ms| *ms <= 3_650 * DAY_MS)
}

fn timeframe(q: &Query<'_>, default: &str) -> Result<i64, Reject> {
    let text = q.str("timeframe").unwrap_or(default);
    timeframe_ms(text).ok_or_else(|| Reject::field(&["timeframe"], format!("Unsupported timeframe '{text}'"), "enum"))
}

/// A holder cohort of flow intelligence: its field prefix and who is in it.
type Cohort = (&'static str, fn(&Wallet) -> bool);

fn tgm_flow_intelligence(q: &Query<'_>) -> Result<Answer, Reject> {
    let token = q.token()?;
    let window = timeframe(q, "1d")?;
    let world = q.world;
    let mut row = Map::new();
    let cohorts: [Cohort; 6] = [
        ("public_figure", |w| w.kind == WalletKind::PublicFigure),
        ("top_pnl", |w| w.kind == WalletKind::SmartTrader && w.smart_money_label != Some("Smart Trader")),
        ("whale", |w| w.kind == WalletKind::Whale),
        ("smart_trader", |w| w.kind.is_smart_money()),
        ("exchange", |w| w.kind == WalletKind::Exchange),
        ("fresh_wallets", |w| w.kind == WalletKind::Fresh),
    ];
    for (name, who) in cohorts {
        let (flow, count) = match token {
            Some(t) => (world.netflow_usd(t, window, who), world.holders_count(t, who)),
            None => (0.0, 0),
        };
        row.insert(format!("{name}_net_flow_usd"), json!(round(flow, 2)));
        row.insert(
            format!("{name}_avg_flow_usd"),
            json!(round(if count > 0 { flow / f64::from(count) } else { 0.0 }, 2)),
        );
        row.insert(format!("{name}_wallet_count"), json!(count));
    }
    Ok(Answer::Body(json!({"data": [row]})))
}

fn tgm_who_bought_sold(q: &Query<'_>) -> Result<Answer, Reject> {
    let token = q.token()?;
    let (from, to) = q.range("date", None)?;
    let side = q.str("buy_or_sell");
    if side.is_some_and(|s| s != "buy" && s != "sell") {
        return Err(Reject::field(&["buy_or_sell"], "Input should be 'buy' or 'sell'", "enum"));
    }
    let world = q.world;
    let Some(t) = token else { return Ok(Answer::Rows(Vec::new())) };
    let mut by: std::collections::BTreeMap<usize, [f64; 4]> = std::collections::BTreeMap::new();
    for trade in world.trades_between(from, to).into_iter().filter(|x| x.token == t) {
        let e = by.entry(trade.wallet).or_default();
        let i = if trade.buy { 0 } else { 1 };
        e[i] += trade.token_amount;
        e[i + 2] += trade.value_usd;
    }
    let rows = by
        .into_iter()
        .filter(|(_, v)| match side {
            Some("buy") => v[0] > 0.0,
            Some("sell") => v[1] > 0.0,
            _ => true,
        })
        .map(|(w, v)| {
            let wallet = &world.wallets()[w];
            json!({
                "address": wallet.address, "address_label": wallet.label,
                "bought_token_volume": round(v[0], 6), "sold_token_volume": round(v[1], 6),
                "token_trade_volume": round(v[0] + v[1], 6), "bought_volume_usd": round(v[2], 2),
                "sold_volume_usd": round(v[3], 2), "trade_volume_usd": round(v[2] + v[3], 2),
                "_sm": sm_labels(wallet),
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

fn tgm_dex_trades(q: &Query<'_>) -> Result<Answer, Reject> {
    let token = q.token()?;
    let (from, to) = q.range("date", Some(1))?;
    let only_smart = q.flag("only_smart_money");
    let world = q.world;
    let Some(t) = token else { return Ok(Answer::Rows(Vec::new())) };
    let rows = world
        .trades_between(from, to)
        .into_iter()
        .rev()
        .filter(|x| x.token == t && (!only_smart || world.wallets()[x.wallet].kind.is_smart_money()))
        .map(|x| {
            let wallet = &world.wallets()[x.wallet];
            let (token, counter) = (&world.tokens()[x.token], &world.tokens()[x.counter]);
            json!({
                "block_timestamp": iso(x.at_ms), "transaction_hash": x.tx_hash,
                "trader_address": wallet.address, "trader_address_label": wallet.label,
                "action": if x.buy { "BUY" } else { "SELL" }, "token_address": token.address,
                "token_name": token.name, "token_amount": round(x.token_amount, 6),
                "traded_token_address": counter.address, "traded_token_name": counter.name,
                "traded_token_amount": round(x.counter_amount, 6),
                "estimated_swap_price_usd": round(x.value_usd / x.token_amount, 10),
                "estimated_value_usd": round(x.value_usd, 2), "_sm": sm_labels(wallet),
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

fn tgm_transfers(q: &Query<'_>) -> Result<Answer, Reject> {
    let token = q.token()?;
    let (from, to) = q.range("date", Some(1))?;
    let world = q.world;
    let Some(t) = token else { return Ok(Answer::Rows(Vec::new())) };
    let rows = world
        .transfers_between(from, to)
        .into_iter()
        .rev()
        .filter(|x| x.token == t)
        .map(|x| {
            let (a, b) = (&world.wallets()[x.from], &world.wallets()[x.to]);
            json!({
                "block_timestamp": iso(x.at_ms), "transaction_hash": x.tx_hash,
                "from_address": a.address, "to_address": b.address,
                "from_address_label": a.label, "to_address_label": b.label,
                "transaction_type": x.kind(world), "transfer_amount": round(x.amount, 6),
                "transfer_value_usd": round(x.value_usd, 2),
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

/// Wallets of a holder segment (`all_holders`, `smart_money`, `whale`, `exchange`, ...).
fn segment(name: &str) -> Option<fn(&Wallet) -> bool> {
    Some(match name {
        "all_holders" | "all" | "top_100_holders" => |_| true,
        "smart_money" => |w| w.kind.is_smart_money(),
        "whale" | "whales" => |w| w.kind == WalletKind::Whale,
        "exchange" | "exchanges" => |w| w.kind == WalletKind::Exchange,
        "public_figure" | "public_figures" => |w| w.kind == WalletKind::PublicFigure,
        "fresh_wallets" => |w| w.kind == WalletKind::Fresh,
        _ => return None,
    })
}

fn tgm_holders(q: &Query<'_>) -> Result<Answer, Reject> {
    let token = q.token()?;
    let label = q.str("label_type").unwrap_or("all_holders");
    let who = segment(label)
        .ok_or_else(|| Reject::field(&["label_type"], format!("Unsupported label_type '{label}'"), "enum"))?;
    let world = q.world;
    let Some(t) = token else { return Ok(Answer::Rows(Vec::new())) };
    if label == "smart_money" && world.holders_count(t, who) == 0 {
        return Err(Reject::bad("UNSUPPORTED_FILTER: smart money holders are not tracked for this token"));
    }
    let supply = world.tokens()[t].supply;
    let price = world.token_price(t);
    // (address, label, amount, changes 24h/7d/30d)
    let mut rows: Vec<(String, Option<String>, f64, [f64; 3])> = Vec::new();
    for p in world.holders_of(t).filter(|p| who(&world.wallets()[p.wallet])) {
        let wallet = &world.wallets()[p.wallet];
        let now = world.balance_at(p, q.now);
        let change = |ago: i64| now - world.balance_at(p, q.now - ago);
        let changes = [change(DAY_MS), change(7 * DAY_MS), change(30 * DAY_MS)];
        let (address, label) = match (&wallet.entity, q.flag("aggregate_by_entity")) {
            (Some(entity), true) => (entity.clone(), wallet.label.clone()),
            _ => (wallet.address.clone(), wallet.label.clone()),
        };
        match rows.iter_mut().find(|r| r.0 == address) {
            Some(row) => {
                row.2 += now;
                for (sum, change) in row.3.iter_mut().zip(changes) {
                    *sum += change;
                }
            }
            None => rows.push((address, label, now, changes)),
        }
    }
    rows.sort_by(|a, b| b.2.total_cmp(&a.2));
    let rows = rows
        .into_iter()
        .map(|(address, label, amount, ch)| {
            json!({
                "address": address, "address_label": label, "token_amount": round(amount, 6),
                "total_outflow": round((-ch[2]).max(0.0), 6), "total_inflow": round(ch[2].max(0.0), 6),
                "balance_change_24h": round(ch[0], 6), "balance_change_7d": round(ch[1], 6),
                "balance_change_30d": round(ch[2], 6), "ownership_percentage": round(amount / supply * 100.0, 6),
                "value_usd": round(amount * price, 2),
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

fn tgm_flows(q: &Query<'_>) -> Result<Answer, Reject> {
    let token = q.token()?;
    let (from, to) = q.range("date", None)?;
    let label = q.str("label").unwrap_or("all_holders");
    let who =
        segment(label).ok_or_else(|| Reject::field(&["label"], format!("Unsupported label '{label}'"), "enum"))?;
    let world = q.world;
    let Some(t) = token else { return Ok(Answer::Rows(Vec::new())) };
    let mut rows = Vec::new();
    let mut day = from.max(to - 90 * DAY_MS).div_euclid(DAY_MS) * DAY_MS;
    while day < to.min(q.now) {
        let end = (day + DAY_MS - 1).min(q.now);
        let (mut amount, mut holders, mut ins, mut outs) = (0.0, 0u32, 0u32, 0u32);
        for p in world.holders_of(t).filter(|p| who(&world.wallets()[p.wallet])) {
            let now = world.balance_at(p, end);
            amount += now;
            holders += 1;
            if now >= world.balance_at(p, end - DAY_MS) { ins += 1 } else { outs += 1 }
        }
        let price = world.token_price_at(t, end);
        rows.push(json!({
            "date": date(day), "price_usd": round(price, 8), "token_amount": round(amount, 6),
            "value_usd": round(amount * price, 2), "holders_count": holders,
            "total_inflows_count": ins, "total_outflows_count": outs,
        }));
        day += DAY_MS;
    }
    Ok(Answer::Rows(rows))
}

fn tgm_pnl_leaderboard(q: &Query<'_>) -> Result<Answer, Reject> {
    let token = q.token()?;
    q.range("date", Some(30))?;
    let world = q.world;
    let Some(t) = token else { return Ok(Answer::Rows(Vec::new())) };
    let mut rows: Vec<Value> = world
        .holders_of(t)
        .filter(|p| world.wallets()[p.wallet].kind != WalletKind::Exchange)
        .map(|p| {
            let wallet = &world.wallets()[p.wallet];
            let pnl = pnl_of(world, p, q.now);
            let total = pnl.realised + pnl.unrealised;
            let basis = pnl.bought_usd.max(1.0);
            json!({
                "trader_address": wallet.address, "trader_address_label": wallet.label,
                "price_usd": round(pnl.price, 8), "pnl_usd_realised": round(pnl.realised, 2),
                "pnl_usd_unrealised": round(pnl.unrealised, 2), "pnl_usd_total": round(total, 2),
                "holding_amount": round(pnl.holding, 6), "holding_usd": round(pnl.holding * pnl.price, 2),
                "max_balance_held": round(pnl.bought_amount, 6),
                "max_balance_held_usd": round(pnl.bought_amount * pnl.price, 2),
                "still_holding_balance_ratio": round(pnl.holding / pnl.bought_amount, 6),
                "netflow_amount_usd": round(pnl.bought_usd - pnl.sold_usd, 2),
                "netflow_amount": round(pnl.bought_amount - pnl.sold_amount, 6),
                "roi_percent_total": round(total / basis * 100.0, 4),
                "roi_percent_realised": round(pnl.realised / basis * 100.0, 4),
                "roi_percent_unrealised": round(pnl.unrealised / basis * 100.0, 4),
                "nof_trades": p.buys + p.sells, "_sm": sm_labels(wallet),
            })
        })
        .collect();
    rows.sort_by(|a, b| compare(b.get("pnl_usd_total"), a.get("pnl_usd_total")));
    Ok(Answer::Rows(rows))
}

fn tgm_jup_dca(q: &Query<'_>) -> Result<Answer, Reject> {
    let address =
        q.str("token_address").ok_or_else(|| Reject::field(&["token_address"], "Field required", "missing"))?;
    let Some(t) = q.world.token_index(Chain::Solana, address) else { return Ok(Answer::Rows(Vec::new())) };
    let rows = dca_rows(q, |input, output| input == t || output == t, false);
    Ok(Answer::Rows(rows.into_iter().map(|(_, token)| token).collect()))
}

fn token_screener(q: &Query<'_>) -> Result<Answer, Reject> {
    let chains = q.chains(true)?;
    let window = timeframe(q, "24h")?;
    let world = q.world;
    let smart = |w: &Wallet| w.kind.is_smart_money();
    let rows = (0..world.tokens().len())
        .filter(|t| chains.contains(&world.tokens()[*t].chain))
        .map(|t| {
            let token = &world.tokens()[t];
            let price = world.token_price(t);
            let before = world.token_price_at(t, q.now - window);
            let volume = world.volume_between(t, q.now - window, q.now);
            let sm_flow = world.netflow_usd(t, window, smart);
            let all_flow = world.netflow_usd(t, window, |_| true);
            let tilt = (all_flow / volume.max(1.0)).clamp(-0.4, 0.4);
            let buy_volume = volume * (0.5 + tilt / 2.0);
            let trades = (volume / 900.0).max(1.0) as u64;
            let sm_gross = sm_flow.abs() * 1.6 + 1_000.0;
            json!({
                "chain": token.chain, "token_address": token.address, "token_symbol": token.symbol,
                "token_name": token.name, "market_cap_usd": round(price * token.supply, 0),
                "price_usd": round(price, 10), "price_change": round((price / before - 1.0) * 100.0, 4),
                "volume": round(volume, 2), "buy_volume": round(buy_volume, 2),
                "sell_volume": round(volume - buy_volume, 2),
                "unique_buyers": trades / 7, "unique_sellers": trades / 8,
                "total_buys": trades / 2 + 1, "total_sells": trades / 2,
                "netflow": round(all_flow, 2), "smart_money_netflow": round(sm_flow, 2),
                "smart_money_inflow": round((sm_gross + sm_flow) / 2.0, 2),
                "smart_money_outflow": round((sm_gross - sm_flow) / 2.0, 2),
                "smart_money_buy_volume": round((sm_gross + sm_flow) / 2.0, 2),
                "smart_money_sell_volume": round((sm_gross - sm_flow) / 2.0, 2),
                "total_holders": world.holders_at(t, q.now), "token_age_days": world.token_age_days(t, q.now),
                "liquidity_usd": round(world.liquidity_at(t, q.now), 2),
                "fdv_usd": round(price * token.supply, 0),
                "_kind": kind_name(token.kind), "_smart": world.holders_count(t, smart) > 0,
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

fn perp_screener(q: &Query<'_>) -> Result<Answer, Reject> {
    let (from, to) = q.range("date", Some(1))?;
    let world = q.world;
    let span = ((to.min(q.now) - from).max(HOUR_MS)) as f64 / DAY_MS as f64;
    let rows = world
        .perp_coins()
        .iter()
        .enumerate()
        .map(|(c, coin)| {
            let mark = world.perp_price_at(c, q.now);
            let previous = world.perp_price_at(c, from.max(q.now - 90 * DAY_MS));
            let volume = coin.daily_volume * span;
            let pressure = ((mark / previous - 1.0) * 5.0).clamp(-0.3, 0.3);
            let positions: Vec<_> = world.perp_positions().iter().filter(|p| p.coin == c).collect();
            let smart: Vec<_> = positions.iter().filter(|p| world.wallets()[p.wallet].kind.is_smart_money()).collect();
            let side_usd = |long: bool| smart.iter().filter(|p| p.long == long).map(|p| p.size * mark).sum::<f64>();
            let sm_volume = volume * 0.08;
            json!({
                "token_symbol": coin.symbol, "volume": round(volume, 2),
                "buy_volume": round(volume * (0.5 + pressure / 2.0), 2),
                "sell_volume": round(volume * (0.5 - pressure / 2.0), 2),
                "buy_sell_pressure": round(volume * pressure, 2), "trader_count": positions.len() * 37,
                "mark_price": round(mark, 6), "funding": coin.funding,
                "open_interest": round(coin.open_interest * mark / world.perp_price_at(c, world.genesis_ms()), 2),
                "previous_price_usd": round(previous, 6),
                "smart_money_volume": round(sm_volume, 2),
                "smart_money_buy_volume": round(sm_volume * (0.5 + pressure), 2),
                "smart_money_sell_volume": round(sm_volume * (0.5 - pressure), 2),
                "net_position_change": round(side_usd(true) - side_usd(false), 2) ,
                "current_smart_money_position_longs_usd": round(side_usd(true), 2),
                "current_smart_money_position_shorts_usd": round(side_usd(false), 2),
                "smart_money_longs_count": smart.iter().filter(|p| p.long).count(),
                "smart_money_shorts_count": smart.iter().filter(|p| !p.long).count(),
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

fn tgm_perp_trades(q: &Query<'_>) -> Result<Answer, Reject> {
    let coin = q.coin()?;
    let (from, to) = q.range("date", Some(1))?;
    let world = q.world;
    let Some(c) = coin else { return Ok(Answer::Rows(Vec::new())) };
    let rows = world
        .perp_trades_between(from, to)
        .iter()
        .rev()
        .filter(|t| t.coin == c)
        .map(|t| perp_trade_row(world, t))
        .collect();
    Ok(Answer::Rows(rows))
}

fn tgm_perp_pnl_leaderboard(q: &Query<'_>) -> Result<Answer, Reject> {
    let coin = q.coin()?;
    q.range("date", Some(30))?;
    let world = q.world;
    let Some(c) = coin else { return Ok(Answer::Rows(Vec::new())) };
    let mark = world.perp_price_at(c, q.now);
    let mut rows: Vec<Value> = world
        .perp_positions()
        .iter()
        .filter(|p| p.coin == c)
        .map(|p| {
            let wallet = &world.wallets()[p.wallet];
            let upnl = (mark - p.entry_price) * p.size * if p.long { 1.0 } else { -1.0 };
            let total = p.realised_usd + upnl;
            let basis = (p.size * p.entry_price / f64::from(p.leverage)).max(1.0);
            json!({
                "trader_address": wallet.address, "trader_address_label": wallet.label,
                "price_usd": round(mark, 6), "pnl_usd_realised": round(p.realised_usd, 2),
                "pnl_usd_unrealised": round(upnl, 2), "pnl_usd_total": round(total, 2),
                "holding_amount": round(p.size, 6), "position_value_usd": round(p.size * mark, 2),
                "max_balance_held": round(p.size * 1.2, 6), "max_balance_held_usd": round(p.size * 1.2 * mark, 2),
                "still_holding_balance_ratio": round(1.0 / 1.2, 6),
                "netflow_amount_usd": round(p.size * p.entry_price, 2), "netflow_amount": round(p.size, 6),
                "roi_percent_total": round(total / basis * 100.0, 4),
                "roi_percent_realised": round(p.realised_usd / basis * 100.0, 4),
                "roi_percent_unrealised": round(upnl / basis * 100.0, 4),
                "nof_trades": p.trades.to_string(), "_sm": sm_labels(wallet),
            })
        })
        .collect();
    rows.sort_by(|a, b| compare(b.get("pnl_usd_total"), a.get("pnl_usd_total")));
    Ok(Answer::Rows(rows))
}

fn tgm_perp_positions(q: &Query<'_>) -> Result<Answer, Reject> {
    let coin = q.coin()?;
    let label = q.str("label_type").unwrap_or("all_traders");
    let who: fn(&Wallet) -> bool = match label {
        "all_traders" | "all_holders" => |_| true,
        other => segment(other)
            .ok_or_else(|| Reject::field(&["label_type"], format!("Unsupported label_type '{label}'"), "enum"))?,
    };
    let world = q.world;
    let Some(c) = coin else { return Ok(Answer::Rows(Vec::new())) };
    let mark = world.perp_price_at(c, q.now);
    let rows = world
        .perp_positions()
        .iter()
        .filter(|p| p.coin == c && who(&world.wallets()[p.wallet]))
        .map(|p| {
            let wallet = &world.wallets()[p.wallet];
            let sign = if p.long { 1.0 } else { -1.0 };
            let liquidation = p.entry_price * (1.0 - sign / f64::from(p.leverage) * 0.9);
            json!({
                "address": wallet.address, "address_label": wallet.label,
                "side": if p.long { "Long" } else { "Short" }, "position_value_usd": round(p.size * mark, 2),
                "position_size": round(p.size * sign, 6), "leverage": format!("{}X", p.leverage),
                "leverage_type": if p.cross { "cross" } else { "isolated" },
                "entry_price": round(p.entry_price, 6), "mark_price": round(mark, 6),
                "liquidation_price": round(liquidation, 6),
                "funding_usd": round(-sign * p.size * mark * world.perp_coins()[c].funding * 24.0, 2),
                "upnl_usd": round((mark - p.entry_price) * p.size * sign, 2),
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

fn tgm_token_information(q: &Query<'_>) -> Result<Answer, Reject> {
    let token = q.token()?.ok_or_else(|| Reject::not_found("Token not found"))?;
    let window = timeframe(q, "1d")?;
    let world = q.world;
    let t = &world.tokens()[token];
    let price = world.token_price(token);
    let volume = world.volume_between(token, q.now - window, q.now);
    let trades = (volume / 900.0).max(1.0) as u64;
    let site = t.symbol.to_lowercase();
    Ok(Answer::Body(json!({"data": {
        "name": t.name, "symbol": t.symbol, "contract_address": t.address,
        "logo": format!("https://logos.example/{site}.png"),
        "token_details": {
            "token_deployment_date": iso(t.deployed_ms), "website": format!("https://{site}.example"),
            "x": format!("https://x.example/{site}"), "telegram": null,
            "market_cap_usd": round(price * t.supply, 0), "fdv_usd": round(price * t.supply, 0),
            "circulating_supply": t.supply, "total_supply": t.supply,
        },
        "spot_metrics": {
            "volume_total_usd": round(volume, 2), "buy_volume_usd": round(volume * 0.51, 2),
            "sell_volume_usd": round(volume * 0.49, 2), "total_buys": trades / 2 + 1, "total_sells": trades / 2,
            "unique_buyers": trades / 7, "unique_sellers": trades / 8,
            "liquidity_usd": round(world.liquidity_at(token, q.now), 2), "total_holders": world.holders_at(token, q.now),
        },
    }})))
}

fn tgm_indicators(q: &Query<'_>) -> Result<Answer, Reject> {
    let Some(t) = q.token()? else { return Ok(Answer::Rows(Vec::new())) };
    let world = q.world;
    let smart = |w: &Wallet| w.kind.is_smart_money();
    let reading = |x: f64, lo: f64, hi: f64| {
        if x > hi {
            "bullish"
        } else if x < lo {
            "bearish"
        } else {
            "neutral"
        }
    };
    let flow = world.netflow_usd(t, 7 * DAY_MS, smart);
    let mcap = world.market_cap_at(t, q.now);
    let change = (world.token_price(t) / world.token_price_at(t, q.now - DAY_MS) - 1.0) * 100.0;
    let mut balances: Vec<f64> = world.holders_of(t).map(|p| world.balance_at(p, q.now)).collect();
    balances.sort_by(|a, b| b.total_cmp(a));
    let top10 = balances.iter().take(10).sum::<f64>() / world.tokens()[t].supply * 100.0;
    let exchange = world.netflow_usd(t, DAY_MS, |w| w.kind == WalletKind::Exchange);
    let scenario_hint = matches!(world.tokens()[t].scenario, Scenario::Accumulated);
    let rows = vec![
        json!({"indicator": "smart_money_netflow_7d", "value": round(flow, 2), "signal": reading(flow, -1.0, 1.0),
               "description": "Net USD flow of smart-money wallets into the token over 7 days."}),
        json!({"indicator": "price_change_24h", "value": round(change, 4), "signal": reading(change, -2.0, 2.0),
               "description": "Price change over 24 hours, percent."}),
        json!({"indicator": "holder_concentration", "value": round(top10, 4), "signal": reading(-top10, -50.0, -10.0),
               "description": "Share of supply held by the ten largest tracked holders, percent."}),
        json!({"indicator": "exchange_netflow_24h", "value": round(exchange, 2), "signal": reading(-exchange, -1.0, 1.0),
               "description": "Net USD flow into exchange wallets over 24 hours; deposits point to selling."}),
        json!({"indicator": "smart_money_netflow_to_mcap", "value": round(flow / mcap * 100.0, 6),
               "signal": if scenario_hint { "bullish" } else { reading(flow / mcap, -1e-4, 1e-4) },
               "description": "Seven-day smart-money net flow as a share of market cap, percent."}),
    ];
    Ok(Answer::Rows(rows))
}

fn tgm_token_ohlcv(q: &Query<'_>) -> Result<Answer, Reject> {
    let token = q.token()?;
    let step = timeframe(q, "1h")?;
    let world = q.world;
    let Some(t) = token else { return Ok(Answer::Rows(Vec::new())) };
    let last = q.now.div_euclid(step) * step;
    let rows = (0..200)
        .rev()
        .map(|i| last - i * step)
        .map(|start| {
            let end = (start + step).min(q.now);
            let samples: Vec<f64> = (0..=8).map(|k| world.token_price_at(t, start + (end - start) * k / 8)).collect();
            let high = samples.iter().copied().fold(f64::MIN, f64::max);
            let low = samples.iter().copied().fold(f64::MAX, f64::min);
            json!({
                "t": iso(start), "open": round(samples[0], 10), "high": round(high, 10), "low": round(low, 10),
                "close": round(samples[8], 10), "volume_usd": round(world.volume_between(t, start, end), 2),
            })
        })
        .collect();
    Ok(Answer::Rows(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_parse_to_utc_midnight() {
        assert_eq!(day_start_ms("1970-01-01"), Some(0));
        assert_eq!(day_start_ms("2026-11-22"), Some(1_795_305_600_000));
        assert_eq!(day_start_ms("2026-13-01"), None);
        assert_eq!(day_start_ms("2026/11/22"), None);
        assert_eq!(timeframe_ms("24h"), Some(DAY_MS));
        assert_eq!(timeframe_ms("1M"), Some(30 * DAY_MS));
        assert_eq!(timeframe_ms("x"), None);
        assert_eq!(timeframe_ms("99999999999999999d"), None);
        assert_eq!(timeframe_ms("1é"), None);
        let row = json!({"dca_created_at": "2026-11-20T10:00:00Z"});
        assert!(keeps(&row, "dca_created_at", &json!({"from": "2026-11-19", "to": "éé"})));
    }

    #[test]
    fn filters_ranges_lists_and_labels_select_rows() {
        let row = json!({"value_usd": 10.0, "chain": "base", "_sm": ["Fund"], "_kind": "stable"});
        assert!(keeps(&row, "value_usd", &json!({"min": 5})));
        assert!(!keeps(&row, "value_usd", &json!({"min": 5, "max": 9})));
        assert!(keeps(&row, "chain", &json!("BASE")));
        assert!(keeps(&row, "chain", &json!(["solana", "base"])));
        assert!(keeps(&row, "include_smart_money_labels", &json!(["Fund"])));
        assert!(!keeps(&row, "exclude_smart_money_labels", &json!(["Fund"])));
        assert!(!keeps(&row, "include_stablecoins", &json!(false)));
    }

    #[test]
    fn paging_sorting_and_unknown_fields() {
        let rows: Vec<Value> = (0..5).map(|i| json!({"n": i, "_hidden": true})).collect();
        let body = |v: Value| v.as_object().cloned().unwrap_or_default();
        let out = page(
            &body(json!({"order_by": [{"field": "n", "direction": "DESC"}], "pagination": {"page": 2, "per_page": 2}})),
            rows.clone(),
        )
        .unwrap_or_else(|_| panic!("page"));
        assert_eq!(out["data"], json!([{"n": 2}, {"n": 1}]));
        assert_eq!(out["pagination"]["is_last_page"], false);
        let last = page(&body(json!({"pagination": {"page": 3, "per_page": 2}})), rows.clone())
            .unwrap_or_else(|_| panic!("page"));
        assert_eq!(last["pagination"]["is_last_page"], true);
        let Err(Reject(status, _)) = page(&body(json!({"filters": {"nope": 1}})), rows.clone()) else {
            panic!("accepted")
        };
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let Err(Reject(status, _)) = page(&body(json!({"pagination": {"per_page": 0}})), rows) else {
            panic!("accepted")
        };
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    }
}
