//! The perp exchange: read-only `POST /info` requests forwarded by type, and `POST /exchange`
//! actions that svc builds, checks against its limits and signs with its own agent key.
//! A client never sends an action or a signature of its own: the catalogue input has neither,
//! and this adapter writes the exchange's wire action itself from validated fields.

pub mod sign;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::header::{HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use svc_catalogue::routes::infra::{
    PerpAction, PerpAsset, PerpAssetCtx, PerpAssetPosition, PerpExchangeResponse, PerpInfoData, PerpInfoQuery,
    PerpInfoResponse, PerpLevel, PerpOrderStatus, PerpScalar, PerpSpotBalance, PerpSpotPair, PerpSpotToken, PerpTif,
};
use svc_catalogue::{FieldError, Loc};
use svc_domain::Clock;

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig};
pub use sign::{AgentKey, PerpNetwork, SignError, WireSignature};

/// The universe (coins, size decimals, leverage caps) changes when a coin is listed.
const META_TTL: Duration = Duration::from_secs(300);
/// Live reads (mids, books, contexts, accounts) are worth a couple of seconds at most.
const LIVE_TTL: Duration = Duration::from_secs(2);
/// Candles and funding history close at most once a minute.
const HISTORY_TTL: Duration = Duration::from_secs(10);

/// What svc's agent may trade in one call. Checked before anything is signed or sent; a call
/// over a limit is refused as invalid input and charges nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerpLimits {
    /// Largest notional (size × limit price) of one order, whole USD.
    pub max_order_notional_usd: u64,
    /// Largest notional of all orders of one call together, whole USD.
    pub max_action_notional_usd: u64,
}

impl Default for PerpLimits {
    /// Small by default: an operator who wants larger orders says so.
    fn default() -> Self {
        PerpLimits { max_order_notional_usd: 1_000, max_action_notional_usd: 5_000 }
    }
}

/// Why an exchange call did not produce the exchange's verdict.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// Input the exchange would refuse or that breaks a limit (422, nothing charged).
    #[error("invalid action")]
    Invalid(Vec<FieldError>),
    /// Trading is not enabled: no agent key is configured (503, nothing charged).
    #[error("trading on the perp exchange is not enabled on this server: no agent key is configured")]
    Disabled,
    /// The vendor failed or refused svc's own credentials (502/504).
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
}

/// The perp exchange adapter.
#[derive(Debug)]
pub struct Perpdex {
    client: VendorClient,
    /// Sends actions, never twice: when an answer is lost, a second send could place an
    /// order the client was told had failed.
    actions: VendorClient,
    agent: Option<AgentKey>,
    network: PerpNetwork,
    limits: PerpLimits,
    clock: Arc<dyn Clock>,
    info: TtlCache<PerpInfoResponse>,
    universe: TtlCache<Arc<Vec<PerpAsset>>>,
    last_nonce: AtomicU64,
}

/// An asset of `meta` as the exchange sends it (extra fields ignored).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireMeta {
    universe: Vec<WireAsset>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireAsset {
    name: String,
    sz_decimals: u8,
    max_leverage: u32,
}

impl From<WireAsset> for PerpAsset {
    fn from(a: WireAsset) -> Self {
        PerpAsset { name: a.name, sz_decimals: a.sz_decimals, max_leverage: a.max_leverage }
    }
}

#[derive(Debug, Deserialize)]
struct WireBook {
    coin: String,
    levels: Vec<Vec<PerpLevel>>,
    time: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireAccount {
    asset_positions: Vec<PerpAssetPosition>,
    withdrawable: String,
}

#[derive(Debug, Deserialize)]
struct WireSpotMeta {
    universe: Vec<PerpSpotPair>,
    tokens: Vec<PerpSpotToken>,
}

#[derive(Debug, Deserialize)]
struct WireSpotState {
    balances: Vec<PerpSpotBalance>,
}

/// The action as the exchange hashes it: field order is wire order, optional keys are left
/// out when absent (see [`sign`]).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum WireAction {
    Order {
        orders: Vec<WireOrder>,
        grouping: &'static str,
    },
    Cancel {
        cancels: Vec<WireCancel>,
    },
    UpdateLeverage {
        asset: u32,
        #[serde(rename = "isCross")]
        is_cross: bool,
        leverage: u32,
    },
}

#[derive(Debug, Serialize)]
struct WireOrder {
    a: u32,
    b: bool,
    p: String,
    s: String,
    r: bool,
    t: WireOrderType,
    #[serde(skip_serializing_if = "Option::is_none")]
    c: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
enum WireOrderType {
    Limit { tif: PerpTif },
}

#[derive(Debug, Serialize)]
struct WireCancel {
    a: u32,
    o: u64,
}

/// The `/exchange` body.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ExchangeBody<'a> {
    action: &'a WireAction,
    nonce: u64,
    signature: WireSignature,
    vault_address: Option<String>,
    expires_after: Option<u64>,
}

/// The exchange's answer: `{"status":"ok","response":{…}}` or `{"status":"err","response":"…"}`.
#[derive(Debug, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
enum WireReply {
    Ok { response: WireOk },
    Err { response: String },
}

#[derive(Debug, Deserialize)]
struct WireOk {
    #[serde(default)]
    data: Option<WireStatuses>,
}

#[derive(Debug, Deserialize)]
struct WireStatuses {
    statuses: Vec<WireStatus>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum WireStatus {
    /// `"success"` (cancels) and the waiting states of trigger orders.
    Word(String),
    Object(WireStatusObject),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireStatusObject {
    resting: Option<WireResting>,
    filled: Option<WireFilled>,
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireResting {
    oid: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireFilled {
    total_sz: String,
    avg_px: String,
    oid: u64,
}

impl From<WireStatus> for PerpOrderStatus {
    fn from(status: WireStatus) -> Self {
        match status {
            WireStatus::Word(word) if matches!(word.as_str(), "success" | "waitingForFill" | "waitingForTrigger") => {
                PerpOrderStatus::Success
            }
            WireStatus::Word(word) => PerpOrderStatus::Error(format!("the exchange answered {word:?}")),
            WireStatus::Object(WireStatusObject { filled: Some(f), .. }) => {
                PerpOrderStatus::Filled { total_sz: f.total_sz, avg_px: f.avg_px, oid: f.oid }
            }
            WireStatus::Object(WireStatusObject { resting: Some(r), .. }) => PerpOrderStatus::Resting { oid: r.oid },
            WireStatus::Object(WireStatusObject { error: Some(e), .. }) => PerpOrderStatus::Error(e),
            WireStatus::Object(_) => PerpOrderStatus::Error("the exchange gave no status for this order".into()),
        }
    }
}

impl Perpdex {
    /// The adapter. `config.key` is the agent's private key (`SVC_PERPDEX_KEY`); without it
    /// reads work and actions answer [`ExchangeError::Disabled`].
    pub(crate) fn new(config: &VendorConfig, limits: PerpLimits, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::ACCEPT, HeaderValue::from_static("application/json"));
        let client = VendorClient::new(Vendor::Perpdex, config, headers.clone())?;
        let actions = VendorClient::new(Vendor::Perpdex, &VendorConfig { retries: 0, ..config.clone() }, headers)?;
        let agent = match config.key.as_deref() {
            None => None,
            Some(key) => Some(AgentKey::from_hex(key).map_err(|e| UpstreamError::Config {
                vendor: Vendor::Perpdex,
                cause: format!("SVC_PERPDEX_KEY: {e}"),
            })?),
        };
        // The test deployment is told apart by its address; everything else signs for mainnet.
        let network = if config.base_url.contains("testnet") { PerpNetwork::Testnet } else { PerpNetwork::Mainnet };
        Ok(Perpdex {
            client,
            actions,
            agent,
            network,
            limits,
            info: TtlCache::new(Vendor::Perpdex.family(), clock.clone(), 4096),
            universe: TtlCache::new(Vendor::Perpdex.family(), clock.clone(), 4),
            clock,
            last_nonce: AtomicU64::new(0),
        })
    }

    /// The address of svc's agent wallet, when trading is enabled.
    pub fn agent_address(&self) -> Option<String> {
        self.agent.as_ref().map(|a| format!("{:#x}", a.address()))
    }

    /// Forwards a read-only request and maps the answer into the catalogue's shape.
    pub async fn info(&self, query: &PerpInfoQuery) -> Result<PerpInfoResponse, UpstreamError> {
        let (kind, body, ttl) = info_body(query);
        let key = body.to_string();
        self.info
            .get_or_fetch(key, ttl, || async {
                let answer: Value = self.client.post_json("/info", &body).await?;
                let data = decode_info(query, answer)?;
                Ok(PerpInfoResponse { kind: kind.to_owned(), data })
            })
            .await
    }

    /// The perp universe, for coin → asset id and the size and price rules.
    async fn universe(&self) -> Result<Arc<Vec<PerpAsset>>, UpstreamError> {
        self.universe
            .get_or_fetch("meta".into(), META_TTL, || async {
                let meta: WireMeta = self.client.post_json("/info", &json!({"type": "meta"})).await?;
                Ok(Arc::new(meta.universe.into_iter().map(Into::into).collect()))
            })
            .await
    }

    /// A nonce for the next action: the time in ms, strictly increasing, so two actions in
    /// the same millisecond do not collide (the exchange takes each nonce once).
    fn next_nonce(&self) -> u64 {
        let now = u64::try_from(self.clock.now_ms()).unwrap_or(0);
        let mut last = self.last_nonce.load(Ordering::SeqCst);
        loop {
            let next = now.max(last + 1);
            match self.last_nonce.compare_exchange(last, next, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return next,
                Err(seen) => last = seen,
            }
        }
    }

    /// Checks `action` against the exchange's rules and svc's limits without signing it: what
    /// [`Perpdex::exchange`] would refuse, known before anyone pays for the call.
    pub async fn check(&self, action: &PerpAction) -> Result<(), ExchangeError> {
        self.agent.as_ref().ok_or(ExchangeError::Disabled)?;
        let universe = self.universe().await?;
        build_action(action, &universe, self.limits).map(|_| ()).map_err(ExchangeError::Invalid)
    }

    /// Checks `action` against the exchange's rules and svc's limits, signs it with the agent
    /// key and sends it; answers the exchange's verdict per order.
    pub async fn exchange(&self, action: &PerpAction) -> Result<PerpExchangeResponse, ExchangeError> {
        let agent = self.agent.as_ref().ok_or(ExchangeError::Disabled)?;
        let universe = self.universe().await?;
        let wire = build_action(action, &universe, self.limits).map_err(ExchangeError::Invalid)?;
        let nonce = self.next_nonce();
        let signature = agent
            .sign_l1_action(&wire, None, nonce, None, self.network)
            .map_err(|e| UpstreamError::Config { vendor: Vendor::Perpdex, cause: e.to_string() })?;
        let body = ExchangeBody { action: &wire, nonce, signature, vault_address: None, expires_after: None };
        let reply: WireReply = self.actions.post_json("/exchange", &body).await?;
        match reply {
            WireReply::Ok { response } => Ok(PerpExchangeResponse {
                status: "ok".into(),
                statuses: response.data.map(|d| d.statuses.into_iter().map(Into::into).collect()).unwrap_or_default(),
                nonce,
            }),
            // The exchange refusing svc's own signature or nonce is svc's fault, not the agent's.
            WireReply::Err { response } if refuses_credentials(&response) => {
                Err(UpstreamError::Refused { vendor: Vendor::Perpdex, cause: response }.into())
            }
            WireReply::Err { response } => Ok(PerpExchangeResponse {
                status: "err".into(),
                statuses: vec![PerpOrderStatus::Error(response)],
                nonce,
            }),
        }
    }
}

/// Maps the exchange's answer to `query` into the catalogue's shape; public so recorded
/// answers can be checked against it.
pub fn decode_info(query: &PerpInfoQuery, answer: Value) -> Result<PerpInfoData, UpstreamError> {
    let kind = info_body(query).0;
    Ok(match kind {
        "meta" => PerpInfoData::Meta {
            universe: decode_value::<WireMeta>(answer)?.universe.into_iter().map(Into::into).collect(),
        },
        "metaAndAssetCtxs" => {
            let (meta, ctxs): (WireMeta, Vec<PerpAssetCtx>) = decode_value(answer)?;
            PerpInfoData::Markets { universe: meta.universe.into_iter().map(Into::into).collect(), asset_ctxs: ctxs }
        }
        "spotMeta" => {
            let spot: WireSpotMeta = decode_value(answer)?;
            PerpInfoData::SpotMeta { universe: spot.universe, tokens: spot.tokens }
        }
        "spotClearinghouseState" => {
            PerpInfoData::SpotBalances { balances: decode_value::<WireSpotState>(answer)?.balances }
        }
        "allMids" => PerpInfoData::Map(decode_value(answer)?),
        "l2Book" => {
            // The exchange answers `null` for a coin it does not list.
            if answer.is_null() {
                let coin = match query {
                    PerpInfoQuery::L2Book { coin } => coin.clone(),
                    _ => String::new(),
                };
                return Err(UpstreamError::NotFound { vendor: Vendor::Perpdex, what: "coin", id: coin });
            }
            let book: WireBook = decode_value(answer)?;
            PerpInfoData::Book { coin: book.coin, levels: book.levels, time: book.time }
        }
        "clearinghouseState" => {
            let account: WireAccount = decode_value(answer)?;
            PerpInfoData::Account { asset_positions: account.asset_positions, withdrawable: account.withdrawable }
        }
        _ => PerpInfoData::Rows(rows(decode_value::<Vec<serde_json::Map<String, Value>>>(answer)?)),
    })
}

/// Decodes an answer into its documented shape, reporting where it differs.
fn decode_value<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, UpstreamError> {
    serde_path_to_error::deserialize(value).map_err(|e| UpstreamError::Decode {
        vendor: Vendor::Perpdex,
        cause: format!("at {}: {}", e.path(), e.inner()),
    })
}

/// Whether an `err` answer is about svc's signer or nonce rather than the action.
fn refuses_credentials(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    ["api wallet", "signature", "nonce", "does not exist"].iter().any(|needle| lower.contains(needle))
}

/// The `/info` body for `query`, its type name and how long its answer stays fresh.
fn info_body(query: &PerpInfoQuery) -> (&'static str, Value, Duration) {
    match query {
        PerpInfoQuery::Meta => ("meta", json!({"type": "meta"}), META_TTL),
        PerpInfoQuery::MetaAndAssetCtxs => ("metaAndAssetCtxs", json!({"type": "metaAndAssetCtxs"}), LIVE_TTL),
        PerpInfoQuery::AllMids => ("allMids", json!({"type": "allMids"}), LIVE_TTL),
        PerpInfoQuery::SpotMeta => ("spotMeta", json!({"type": "spotMeta"}), META_TTL),
        PerpInfoQuery::L2Book { coin } => ("l2Book", json!({"type": "l2Book", "coin": coin}), LIVE_TTL),
        PerpInfoQuery::CandleSnapshot { req } => (
            "candleSnapshot",
            json!({"type": "candleSnapshot", "req": {"coin": req.coin, "interval": req.interval, "startTime": req.start_time, "endTime": req.end_time}}),
            HISTORY_TTL,
        ),
        PerpInfoQuery::FundingHistory { coin, start_time, end_time } => {
            let mut body = json!({"type": "fundingHistory", "coin": coin, "startTime": start_time});
            if let Some(end) = end_time {
                body["endTime"] = json!(end);
            }
            ("fundingHistory", body, HISTORY_TTL)
        }
        PerpInfoQuery::ClearinghouseState { user } => {
            ("clearinghouseState", json!({"type": "clearinghouseState", "user": user.as_str()}), LIVE_TTL)
        }
        PerpInfoQuery::SpotClearinghouseState { user } => {
            ("spotClearinghouseState", json!({"type": "spotClearinghouseState", "user": user.as_str()}), LIVE_TTL)
        }
        PerpInfoQuery::OpenOrders { user } => {
            ("openOrders", json!({"type": "openOrders", "user": user.as_str()}), LIVE_TTL)
        }
        PerpInfoQuery::UserFills { user } => {
            ("userFills", json!({"type": "userFills", "user": user.as_str()}), LIVE_TTL)
        }
        PerpInfoQuery::UserFunding { user, start_time } => {
            ("userFunding", json!({"type": "userFunding", "user": user.as_str(), "startTime": start_time}), HISTORY_TTL)
        }
    }
}

/// Row answers as rows of scalars: a nested object's scalar fields are lifted into the row
/// (unless the row has that name already); arrays and nulls are left out.
fn rows(raw: Vec<serde_json::Map<String, Value>>) -> Vec<BTreeMap<String, PerpScalar>> {
    fn scalar(value: &Value) -> Option<PerpScalar> {
        match value {
            Value::String(s) => Some(PerpScalar::Text(s.clone())),
            Value::Number(n) => n.as_f64().map(PerpScalar::Number),
            Value::Bool(b) => Some(PerpScalar::Flag(*b)),
            _ => None,
        }
    }
    raw.into_iter()
        .map(|row| {
            let mut out: BTreeMap<String, PerpScalar> =
                row.iter().filter_map(|(k, v)| Some((k.clone(), scalar(v)?))).collect();
            for value in row.values() {
                if let Value::Object(inner) = value {
                    for (k, v) in inner {
                        if let (false, Some(s)) = (out.contains_key(k), scalar(v)) {
                            out.insert(k.clone(), s);
                        }
                    }
                }
            }
            out
        })
        .collect()
}

/// A non-negative decimal as an integer count of 1e-8 units; `None` past 8 decimals.
fn e8(value: &str) -> Option<u128> {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    if fraction.len() > 8 {
        return None;
    }
    let whole: u128 = whole.parse().ok()?;
    let fraction: u128 = if fraction.is_empty() { 0 } else { format!("{fraction:0<8}").parse().ok()? };
    whole.checked_mul(100_000_000)?.checked_add(fraction)
}

/// Decimals written in a canonical decimal string.
fn decimals(wire: &str) -> usize {
    wire.split_once('.').map_or(0, |(_, f)| f.len())
}

/// Significant figures of a canonical decimal string.
fn significant_figures(wire: &str) -> usize {
    wire.replace('.', "").trim_start_matches('0').len()
}

/// The wire action for `action`, or every reason the exchange or svc's limits would refuse it.
fn build_action(
    action: &PerpAction,
    universe: &[PerpAsset],
    limits: PerpLimits,
) -> Result<WireAction, Vec<FieldError>> {
    let mut errors = Vec::new();
    let asset_of = |coin: &str| {
        universe.iter().position(|a| a.name == coin).map(|i| (u32::try_from(i).unwrap_or(u32::MAX), &universe[i]))
    };
    let at = |parts: &[Loc]| -> Vec<Loc> {
        let mut loc = vec![Loc::from("body"), Loc::from("body")];
        loc.extend_from_slice(parts);
        loc
    };
    let wire = match action {
        PerpAction::Order { orders } => {
            let mut total: u128 = 0;
            let mut wire_orders = Vec::new();
            for (i, order) in orders.iter().enumerate() {
                let field = |name: &str| at(&[Loc::from("orders"), Loc::Index(i), Loc::from(name)]);
                let Some((asset, meta)) = asset_of(&order.coin) else {
                    errors.push(FieldError::new(
                        field("coin"),
                        format!("{} is not listed on the exchange", order.coin),
                        "value_error",
                    ));
                    continue;
                };
                let (Some(sz), Some(px)) = (sign::decimal_to_wire(&order.sz), sign::decimal_to_wire(&order.limit_px))
                else {
                    errors.push(FieldError::new(
                        field("sz"),
                        "sizes and prices are decimals with at most 8 decimals",
                        "value_error",
                    ));
                    continue;
                };
                if sz == "0" {
                    errors.push(FieldError::new(field("sz"), "size must be positive", "value_error"));
                }
                if decimals(&sz) > usize::from(meta.sz_decimals) {
                    errors.push(FieldError::new(
                        field("sz"),
                        format!("{} sizes take at most {} decimals", meta.name, meta.sz_decimals),
                        "value_error",
                    ));
                }
                let max_px_decimals = usize::from(6u8.saturating_sub(meta.sz_decimals));
                if px == "0" || decimals(&px) > max_px_decimals || (decimals(&px) > 0 && significant_figures(&px) > 5) {
                    errors.push(FieldError::new(
                        field("limit_px"),
                        format!(
                            "{} prices are positive, with at most 5 significant figures and {max_px_decimals} decimals",
                            meta.name
                        ),
                        "value_error",
                    ));
                }
                // Notional in 1e-16 USD; an overflow is far past any limit.
                let notional = e8(&sz).zip(e8(&px)).and_then(|(s, p)| s.checked_mul(p)).unwrap_or(u128::MAX);
                let limit = u128::from(limits.max_order_notional_usd) * 10u128.pow(16);
                if notional > limit {
                    errors.push(FieldError::new(
                        at(&[Loc::from("orders"), Loc::Index(i)]),
                        format!(
                            "order notional (size × limit price) is over this server's limit of {} USD",
                            limits.max_order_notional_usd
                        ),
                        "value_error",
                    ));
                }
                total = total.saturating_add(notional);
                wire_orders.push(WireOrder {
                    a: asset,
                    b: order.is_buy,
                    p: px,
                    s: sz,
                    r: order.reduce_only,
                    t: WireOrderType::Limit { tif: order.tif },
                    c: order.cloid.as_ref().map(|c| c.to_ascii_lowercase()),
                });
            }
            if total > u128::from(limits.max_action_notional_usd) * 10u128.pow(16) {
                errors.push(FieldError::new(
                    at(&[Loc::from("orders")]),
                    format!(
                        "total notional of the orders is over this server's limit of {} USD per call",
                        limits.max_action_notional_usd
                    ),
                    "value_error",
                ));
            }
            WireAction::Order { orders: wire_orders, grouping: "na" }
        }
        PerpAction::Cancel { cancels } => {
            let mut wire_cancels = Vec::new();
            for (i, cancel) in cancels.iter().enumerate() {
                match asset_of(&cancel.coin) {
                    Some((asset, _)) => wire_cancels.push(WireCancel { a: asset, o: cancel.oid }),
                    None => errors.push(FieldError::new(
                        at(&[Loc::from("cancels"), Loc::Index(i), Loc::from("coin")]),
                        format!("{} is not listed on the exchange", cancel.coin),
                        "value_error",
                    )),
                }
            }
            WireAction::Cancel { cancels: wire_cancels }
        }
        PerpAction::UpdateLeverage { coin, is_cross, leverage } => match asset_of(coin) {
            Some((asset, meta)) if *leverage <= meta.max_leverage => {
                WireAction::UpdateLeverage { asset, is_cross: *is_cross, leverage: *leverage }
            }
            Some((_, meta)) => {
                errors.push(FieldError::new(
                    at(&[Loc::from("leverage")]),
                    format!("{} allows at most {}x", meta.name, meta.max_leverage),
                    "value_error",
                ));
                WireAction::UpdateLeverage { asset: 0, is_cross: *is_cross, leverage: *leverage }
            }
            None => {
                errors.push(FieldError::new(
                    at(&[Loc::from("coin")]),
                    format!("{coin} is not listed on the exchange"),
                    "value_error",
                ));
                WireAction::UpdateLeverage { asset: 0, is_cross: *is_cross, leverage: *leverage }
            }
        },
    };
    if errors.is_empty() { Ok(wire) } else { Err(errors) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SDK_KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";

    fn universe() -> Vec<PerpAsset> {
        [("BTC", 5, 40), ("ETH", 4, 25), ("DOGE", 0, 10)]
            .into_iter()
            .map(|(name, sz_decimals, max_leverage)| PerpAsset { name: name.into(), sz_decimals, max_leverage })
            .collect()
    }

    fn order(coin: &str, sz: &str, px: &str) -> svc_catalogue::routes::infra::PerpOrder {
        serde_json::from_value(json!({"coin": coin, "is_buy": true, "sz": sz, "limit_px": px})).expect("order")
    }

    #[test]
    fn the_typed_order_action_hashes_like_the_sdk_vector() {
        // signing_test.py `test_l1_action_signing_order_matches`: ETH is asset 1, buy 100 @ 100 Gtc.
        let action = PerpAction::Order { orders: vec![order("ETH", "100", "100.0")] };
        let limits = PerpLimits { max_order_notional_usd: 1_000_000, max_action_notional_usd: 1_000_000 };
        let wire = build_action(&action, &universe(), limits).expect("valid");
        let agent = AgentKey::from_hex(SDK_KEY).expect("key");
        let signature = agent.sign_l1_action(&wire, None, 0, None, PerpNetwork::Mainnet).expect("sign");
        assert_eq!(signature.r, "0xd65369825a9df5d80099e513cce430311d7d26ddf477f5b3a33d2806b100d78e");
        assert_eq!(signature.s, "0x2b54116ff64054968aa237c20ca9ff68000f977c93289157748a3162b6ea940e");
        assert_eq!(signature.v, 28);
    }

    #[test]
    fn orders_over_a_limit_or_off_the_exchange_rules_are_refused_with_their_field() {
        let limits = PerpLimits { max_order_notional_usd: 1_000, max_action_notional_usd: 1_500 };
        let locs = |action: PerpAction| -> Vec<String> {
            build_action(&action, &universe(), limits)
                .expect_err("invalid")
                .into_iter()
                .map(|e| format!("{:?}", e.loc.last().expect("loc")))
                .collect()
        };
        // Over the per-order limit, and so over the per-call one too.
        assert_eq!(
            locs(PerpAction::Order { orders: vec![order("BTC", "1", "97000")] }),
            vec!["Index(0)", "Key(\"orders\")"]
        );
        let two = PerpAction::Order { orders: vec![order("ETH", "0.25", "3400"), order("ETH", "0.25", "3400")] };
        assert_eq!(locs(two), vec!["Key(\"orders\")"]);
        assert_eq!(locs(PerpAction::Order { orders: vec![order("ZZZ", "1", "1")] }), vec!["Key(\"coin\")"]);
        assert_eq!(locs(PerpAction::Order { orders: vec![order("DOGE", "10.5", "0.32")] }), vec!["Key(\"sz\")"]);
        assert_eq!(
            locs(PerpAction::Order { orders: vec![order("ETH", "0.01", "3400.55")] }),
            vec!["Key(\"limit_px\")"]
        );
        let leverage = PerpAction::UpdateLeverage { coin: "DOGE".into(), is_cross: true, leverage: 20 };
        assert_eq!(locs(leverage), vec!["Key(\"leverage\")"]);
        assert!(
            build_action(&PerpAction::Order { orders: vec![order("ETH", "0.2", "3400")] }, &universe(), limits).is_ok()
        );
    }

    #[test]
    fn notional_is_exact_decimal_arithmetic() {
        assert_eq!(e8("0.1").zip(e8("3")).map(|(a, b)| a * b), Some(3 * 10u128.pow(15)));
        assert_eq!(e8("1.000000001"), None);
        assert_eq!(e8("123456789012.12345678"), Some(12_345_678_901_212_345_678));
    }

    #[test]
    fn nested_row_fields_are_lifted_and_arrays_dropped() {
        let raw: Vec<serde_json::Map<String, Value>> = serde_json::from_value(json!([
            {"time": 1, "hash": "0x1", "delta": {"type": "funding", "coin": "BTC", "usdc": "-0.1", "nSamples": null}, "tags": [1]}
        ]))
        .expect("rows");
        let row = &rows(raw)[0];
        assert_eq!(row.keys().map(String::as_str).collect::<Vec<_>>(), ["coin", "hash", "time", "type", "usdc"]);
    }

    #[test]
    fn credential_refusals_are_told_apart_from_action_refusals() {
        assert!(refuses_credentials("User or API Wallet 0xabc does not exist."));
        assert!(refuses_credentials("Invalid nonce: duplicate nonce 5."));
        assert!(!refuses_credentials("Invalid leverage value"));
    }
}
