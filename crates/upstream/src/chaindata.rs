//! The on-chain analytics vendor (API v1): smart money, wallet profiler, perp leaderboard and
//! token god mode. Every call is a `POST` of a JSON body with the `apikey` header.
//!
//! svc's route paths mostly match the vendor's; the differences live in [`Endpoint::path`]:
//! DCA feeds are `smart-money/dcas` and `tgm/jup-dca`, balances are `current-balance`, the
//! screeners sit at the top level, and labels are a beta endpoint taking a `parameters`
//! wrapper. The profiler takes up to 20 wallets where the vendor takes one address, so a
//! profiler call is one vendor call per wallet, joined. `profiler/address/token-transfers`
//! has no vendor endpoint: it is the token movements of the wallets' transactions.
//!
//! Answers are cached per normalised request body, for a time that suits how fast each
//! answer changes (seconds for trades, a day for labels).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, HeaderMap, HeaderName, HeaderValue};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use svc_catalogue::routes::chaindata::{
    ChaindataBalanceRow, ChaindataCandle, ChaindataCounterpartyRow, ChaindataDateRange, ChaindataFilterPayload,
    ChaindataFlowIntelligence, ChaindataHistoricalBalanceRow, ChaindataHistoricalHoldingRow,
    ChaindataHistoricalHoldingsPayload, ChaindataHolderRow, ChaindataHoldingRow, ChaindataIndicatorRow,
    ChaindataLabelRow, ChaindataList, ChaindataNetflowPayload, ChaindataNetflowRow, ChaindataNftHoldingRow,
    ChaindataObject, ChaindataPagination, ChaindataPaging, ChaindataPerpLeaderRow, ChaindataPerpPayload,
    ChaindataPerpPnlLeaderRow, ChaindataPerpPositionRow, ChaindataPerpScreenerRow, ChaindataPerpTradeRow,
    ChaindataPnlLeaderRow, ChaindataPnlRow, ChaindataPnlSummary, ChaindataProfilerPayload, ChaindataRelatedWalletRow,
    ChaindataScreenerPayload, ChaindataScreenerRow, ChaindataSmartMoneyDcaRow, ChaindataSmartMoneyDexTradeRow,
    ChaindataSmartMoneyPayload, ChaindataSmartMoneyPerpPayload, ChaindataSort, ChaindataTgmDcaRow, ChaindataTgmPayload,
    ChaindataTokenDexTradeRow, ChaindataTokenFlowRow, ChaindataTokenInformation, ChaindataTransactionRow,
    ChaindataTransferRow, ChaindataWhoBoughtSoldRow,
};
use svc_catalogue::routes::common::Timestamp;
use svc_catalogue::routes::public::{TokenStat, TokenStatsResponse};
use svc_domain::{Address, Clock, rfc3339};

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig};

/// One vendor endpoint behind a route: its path and how long its answers are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `smart-money/netflow`.
    SmartMoneyNetflow,
    /// `smart-money/holdings`.
    SmartMoneyHoldings,
    /// `smart-money/dex-trades`.
    SmartMoneyDexTrades,
    /// `smart-money/agg-dca` (the vendor's `dcas`).
    SmartMoneyDcas,
    /// `smart-money/historical-holdings`.
    SmartMoneyHistoricalHoldings,
    /// `smart-money/perp-trades`.
    SmartMoneyPerpTrades,
    /// `profiler/address/balances` (the vendor's `current-balance`).
    ProfilerBalances,
    /// `profiler/address/historical-balances`.
    ProfilerHistoricalBalances,
    /// `profiler/address/transactions` (also the source of token transfers).
    ProfilerTransactions,
    /// `profiler/address/counterparties`.
    ProfilerCounterparties,
    /// `profiler/address/related-wallets`.
    ProfilerRelatedWallets,
    /// `profiler/address/pnl-summary`.
    ProfilerPnlSummary,
    /// `profiler/address/pnl`.
    ProfilerPnl,
    /// `profiler/address/nft-holdings`.
    ProfilerNftHoldings,
    /// `profiler/address/labels` (a beta endpoint).
    ProfilerLabels,
    /// `perp-leaderboard`.
    PerpLeaderboard,
    /// `tgm/flow-intelligence`.
    TgmFlowIntelligence,
    /// `tgm/who-bought-sold`.
    TgmWhoBoughtSold,
    /// `tgm/dex-trades`.
    TgmDexTrades,
    /// `tgm/transfers`.
    TgmTransfers,
    /// `tgm/holders`.
    TgmHolders,
    /// `tgm/flows`.
    TgmFlows,
    /// `tgm/pnl-leaderboard`.
    TgmPnlLeaderboard,
    /// `tgm/agg-dca` (the vendor's `jup-dca`).
    TgmJupDca,
    /// `tgm/token-screener` (top level at the vendor).
    TokenScreener,
    /// `tgm/perp-screener` (top level at the vendor).
    PerpScreener,
    /// `tgm/perp-trades`.
    TgmPerpTrades,
    /// `tgm/perp-pnl-leaderboard`.
    TgmPerpPnlLeaderboard,
    /// `tgm/perp-positions`.
    TgmPerpPositions,
    /// `tgm/token-information`.
    TgmTokenInformation,
    /// `tgm/indicators`.
    TgmIndicators,
    /// `tgm/token-ohlcv`.
    TgmTokenOhlcv,
}

const SECOND: u64 = 1;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;

impl Endpoint {
    /// Every endpoint, for tests and start-up checks that walk them.
    pub const ALL: [Endpoint; 32] = {
        use Endpoint as E;
        [
            E::SmartMoneyNetflow,
            E::SmartMoneyHoldings,
            E::SmartMoneyDexTrades,
            E::SmartMoneyDcas,
            E::SmartMoneyHistoricalHoldings,
            E::SmartMoneyPerpTrades,
            E::ProfilerBalances,
            E::ProfilerHistoricalBalances,
            E::ProfilerTransactions,
            E::ProfilerCounterparties,
            E::ProfilerRelatedWallets,
            E::ProfilerPnlSummary,
            E::ProfilerPnl,
            E::ProfilerNftHoldings,
            E::ProfilerLabels,
            E::PerpLeaderboard,
            E::TgmFlowIntelligence,
            E::TgmWhoBoughtSold,
            E::TgmDexTrades,
            E::TgmTransfers,
            E::TgmHolders,
            E::TgmFlows,
            E::TgmPnlLeaderboard,
            E::TgmJupDca,
            E::TokenScreener,
            E::PerpScreener,
            E::TgmPerpTrades,
            E::TgmPerpPnlLeaderboard,
            E::TgmPerpPositions,
            E::TgmTokenInformation,
            E::TgmIndicators,
            E::TgmTokenOhlcv,
        ]
    };

    /// The vendor's path.
    pub fn path(self) -> &'static str {
        use Endpoint as E;
        match self {
            E::SmartMoneyNetflow => "/api/v1/smart-money/netflow",
            E::SmartMoneyHoldings => "/api/v1/smart-money/holdings",
            E::SmartMoneyDexTrades => "/api/v1/smart-money/dex-trades",
            E::SmartMoneyDcas => "/api/v1/smart-money/dcas",
            E::SmartMoneyHistoricalHoldings => "/api/v1/smart-money/historical-holdings",
            E::SmartMoneyPerpTrades => "/api/v1/smart-money/perp-trades",
            E::ProfilerBalances => "/api/v1/profiler/address/current-balance",
            E::ProfilerHistoricalBalances => "/api/v1/profiler/address/historical-balances",
            E::ProfilerTransactions => "/api/v1/profiler/address/transactions",
            E::ProfilerCounterparties => "/api/v1/profiler/address/counterparties",
            E::ProfilerRelatedWallets => "/api/v1/profiler/address/related-wallets",
            E::ProfilerPnlSummary => "/api/v1/profiler/address/pnl-summary",
            E::ProfilerPnl => "/api/v1/profiler/address/pnl",
            E::ProfilerNftHoldings => "/api/v1/profiler/address/nft-holdings",
            E::ProfilerLabels => "/api/beta/profiler/address/labels",
            E::PerpLeaderboard => "/api/v1/perp-leaderboard",
            E::TgmFlowIntelligence => "/api/v1/tgm/flow-intelligence",
            E::TgmWhoBoughtSold => "/api/v1/tgm/who-bought-sold",
            E::TgmDexTrades => "/api/v1/tgm/dex-trades",
            E::TgmTransfers => "/api/v1/tgm/transfers",
            E::TgmHolders => "/api/v1/tgm/holders",
            E::TgmFlows => "/api/v1/tgm/flows",
            E::TgmPnlLeaderboard => "/api/v1/tgm/pnl-leaderboard",
            E::TgmJupDca => "/api/v1/tgm/jup-dca",
            E::TokenScreener => "/api/v1/token-screener",
            E::PerpScreener => "/api/v1/perp-screener",
            E::TgmPerpTrades => "/api/v1/tgm/perp-trades",
            E::TgmPerpPnlLeaderboard => "/api/v1/tgm/perp-pnl-leaderboard",
            E::TgmPerpPositions => "/api/v1/tgm/perp-positions",
            E::TgmTokenInformation => "/api/v1/tgm/token-information",
            E::TgmIndicators => "/api/v1/tgm/indicators",
            E::TgmTokenOhlcv => "/api/v1/tgm/token-ohlcv",
        }
    }

    /// How long an answer is kept: trades and flows change by the minute, leaderboards and
    /// daily series by the hour, labels and wallet relations hardly ever.
    pub fn ttl(self) -> Duration {
        use Endpoint as E;
        let secs = match self {
            E::SmartMoneyDexTrades | E::SmartMoneyPerpTrades | E::TgmDexTrades | E::TgmTransfers | E::TgmPerpTrades => {
                30 * SECOND
            }
            E::SmartMoneyNetflow
            | E::ProfilerBalances
            | E::ProfilerTransactions
            | E::TgmFlowIntelligence
            | E::TokenScreener
            | E::PerpScreener
            | E::TgmPerpPositions
            | E::TgmTokenOhlcv => MINUTE,
            E::SmartMoneyDcas | E::TgmWhoBoughtSold | E::TgmJupDca => 2 * MINUTE,
            E::SmartMoneyHoldings | E::ProfilerPnl | E::TgmHolders | E::TgmTokenInformation => 5 * MINUTE,
            E::ProfilerHistoricalBalances
            | E::ProfilerCounterparties
            | E::ProfilerPnlSummary
            | E::PerpLeaderboard
            | E::TgmFlows
            | E::TgmPnlLeaderboard
            | E::TgmPerpPnlLeaderboard
            | E::TgmIndicators => 10 * MINUTE,
            E::SmartMoneyHistoricalHoldings | E::ProfilerNftHoldings => HOUR,
            E::ProfilerRelatedWallets | E::ProfilerLabels => 24 * HOUR,
        };
        Duration::from_secs(secs)
    }
}

/// The chain-data adapter.
#[derive(Debug)]
pub struct Chaindata {
    client: VendorClient,
    cache: TtlCache<Bytes>,
    clock: Arc<dyn Clock>,
    top: TtlCache<TopTokens>,
}

/// The largest tokens of the market, as the token screener ranks them.
#[derive(Debug, Clone)]
pub struct TopTokens {
    /// When the screener answered, unix ms.
    pub as_of_ms: i64,
    /// Tokens, largest market cap first.
    pub rows: Vec<ChaindataScreenerRow>,
}

/// Answers kept at most: a page is up to ~100 kB, so this bounds the cache near 50 MB.
const CACHE_ENTRIES: usize = 512;

/// How long the market overview is kept: it backs a free route, so agents polling it share
/// one vendor call a minute.
const TOP_TOKENS_TTL: Duration = Duration::from_secs(60);

/// A vendor request body under construction; absent optional fields are left out, as the
/// vendor's own client does.
#[derive(Default)]
struct Body(Map<String, Value>);

impl Body {
    fn set(mut self, key: &str, value: impl serde::Serialize) -> Self {
        if let Ok(value) = serde_json::to_value(value) {
            self.0.insert(key.to_owned(), value);
        }
        self
    }

    fn opt<T: serde::Serialize>(self, key: &str, value: Option<T>) -> Self {
        match value {
            Some(v) => self.set(key, v),
            None => self,
        }
    }

    fn date(self, key: &str, range: Option<&ChaindataDateRange>) -> Self {
        self.opt(key, range.map(|r| json!({"from": r.from, "to": r.to})))
    }

    /// `filters`, `pagination` and `order_by`, which every list query may carry.
    fn paged(
        self,
        filters: Option<&Map<String, Value>>,
        pagination: Option<&ChaindataPaging>,
        order_by: Option<&Vec<ChaindataSort>>,
    ) -> Self {
        self.opt("filters", filters.filter(|f| !f.is_empty())).opt("pagination", pagination).opt("order_by", order_by)
    }

    fn done(self) -> Value {
        Value::Object(self.0)
    }
}

/// Decodes a vendor list answer the way the adapter does; for contract tests against
/// recorded answers.
pub fn decode_list<T: DeserializeOwned>(bytes: &[u8]) -> Result<ChaindataList<T>, String> {
    list_from(serde_json::from_slice(bytes).map_err(|e| e.to_string())?, None)
}

/// Decodes a vendor object answer the way the adapter does; for contract tests.
pub fn decode_object<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    object_from(serde_json::from_slice(bytes).map_err(|e| e.to_string())?)
}

/// Fields holding a time, which svc answers in RFC 3339 UTC.
const TIME_FIELDS: &[&str] = &[
    "block_timestamp",
    "dca_created_at",
    "dca_updated_at",
    "since_timestamp",
    "last_timestamp",
    "token_deployment_date",
    "t",
];

/// Gives zone-less vendor times (`2025-01-01T12:00:00`, `2025-01-01 12:00:00`) their UTC
/// `Z`, at any depth, so every answer's times are RFC 3339 as the schema says.
fn normalise_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                match field {
                    Value::String(text) if TIME_FIELDS.contains(&key.as_str()) => {
                        if let Some(fixed) = utc_time(text) {
                            *text = fixed;
                        }
                    }
                    other => normalise_times(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalise_times),
        _ => {}
    }
}

/// `text` with a `T` separator and a `Z` zone, when it is a date-time lacking them.
fn utc_time(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if bytes.len() < 19 || !matches!(bytes[10], b'T' | b' ') || bytes[4] != b'-' || bytes[13] != b':' {
        return None;
    }
    let zoned = text.ends_with('Z') || text.ends_with('z') || bytes[19..].iter().any(|b| matches!(b, b'+' | b'-'));
    if zoned && bytes[10] == b'T' {
        return None;
    }
    let mut fixed = text.to_owned();
    fixed.replace_range(10..11, "T");
    if !zoned {
        fixed.push('Z');
    }
    Some(fixed)
}

/// The list envelope, decoded leniently: some beta endpoints send a bare array or leave out
/// `pagination`.
fn list_from<T: DeserializeOwned>(
    mut value: Value,
    paging: Option<&ChaindataPaging>,
) -> Result<ChaindataList<T>, String> {
    normalise_times(&mut value);
    let (data, pagination) = match value {
        Value::Array(rows) => (Value::Array(rows), None),
        Value::Object(mut map) => (map.remove("data").unwrap_or(Value::Array(Vec::new())), map.remove("pagination")),
        _ => return Err("expected an object or a list".into()),
    };
    let data: Vec<T> =
        serde_path_to_error::deserialize(data).map_err(|e| format!("at data.{}: {}", e.path(), e.inner()))?;
    let pagination = match pagination {
        Some(p) => serde_json::from_value(p).map_err(|e| format!("at pagination: {e}"))?,
        None => ChaindataPagination {
            page: paging.map_or(1, |p| p.page),
            per_page: paging.map_or(100, |p| p.per_page).max(u32::try_from(data.len()).unwrap_or(u32::MAX)),
            is_last_page: true,
        },
    };
    Ok(ChaindataList { data, pagination })
}

/// An object answer, decoded leniently: the vendor sends it as `{"data": {...}}`, as a
/// one-row `{"data": [{...}]}`, or bare.
fn object_from<T: DeserializeOwned>(mut value: Value) -> Result<T, String> {
    normalise_times(&mut value);
    let object = match value {
        Value::Object(mut map) => match map.remove("data") {
            Some(Value::Array(rows)) => rows.into_iter().next().ok_or("the one-row list is empty")?,
            Some(inner @ Value::Object(_)) => inner,
            Some(other) => return Err(format!("data is {other}")),
            None => Value::Object(map),
        },
        other => other,
    };
    serde_path_to_error::deserialize(object).map_err(|e| format!("at data.{}: {}", e.path(), e.inner()))
}

/// The canonical form of an address for `chain`, so cache keys and vendor bodies agree on
/// case. Input is validated before it gets here; anything else passes unchanged.
fn canonical(chain: svc_domain::Chain, address: &str) -> String {
    Address::parse_for(chain, address).map(|a| a.as_str().to_owned()).unwrap_or_else(|_| address.to_owned())
}

impl Chaindata {
    pub(crate) fn new(config: &VendorConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(key) = &config.key {
            let mut value = HeaderValue::from_str(key.trim()).map_err(|_| UpstreamError::Config {
                vendor: Vendor::Chaindata,
                cause: "the API key has characters a header cannot carry".into(),
            })?;
            value.set_sensitive(true);
            headers.insert(HeaderName::from_static("apikey"), value);
        }
        let client = VendorClient::new(Vendor::Chaindata, config, headers)?;
        Ok(Chaindata {
            client,
            cache: TtlCache::new(Vendor::Chaindata.family(), clock.clone(), CACHE_ENTRIES),
            top: TtlCache::new(Vendor::Chaindata.family(), clock.clone(), 16),
            clock,
        })
    }

    /// The `limit` largest tokens by market cap on `chains`, with 24 h price change, volume
    /// and liquidity: the token screener over a 24 h time frame.
    pub async fn top_tokens(&self, chains: &[svc_domain::Chain], limit: u32) -> Result<TopTokens, UpstreamError> {
        let key = format!("{chains:?}/{limit}");
        self.top
            .get_or_fetch(key, TOP_TOKENS_TTL, || async {
                let query = ChaindataScreenerPayload {
                    chains: chains.to_vec(),
                    timeframe: Some("24h".into()),
                    filters: None,
                    pagination: Some(ChaindataPaging { page: 1, per_page: limit.clamp(1, 100) }),
                    order_by: Some(vec![ChaindataSort {
                        field: "market_cap_usd".into(),
                        direction: svc_catalogue::routes::chaindata::ChaindataSortDirection::Desc,
                    }]),
                };
                let page = self.token_screener(&query).await?;
                Ok(TopTokens { as_of_ms: self.clock.now_ms(), rows: page.data })
            })
            .await
    }

    /// The free market overview of the `limit` largest tokens on `chains`, from
    /// [`Chaindata::top_tokens`]; rows on a chain svc does not know are left out.
    pub async fn token_stats(
        &self,
        chains: &[svc_domain::Chain],
        limit: u32,
    ) -> Result<TokenStatsResponse, UpstreamError> {
        let top = self.top_tokens(chains, limit).await?;
        let updated_at = Timestamp(rfc3339(top.as_of_ms));
        let tokens = top
            .rows
            .into_iter()
            .filter_map(|r| {
                Some(TokenStat {
                    chain: r.chain.parse().ok()?,
                    price_usd: r.price_usd,
                    change_24h_pct: r.price_change,
                    volume_24h_usd: Some(r.volume),
                    market_cap_usd: r.market_cap_usd,
                    liquidity_usd: r.liquidity_usd,
                    updated_at: updated_at.clone(),
                    address: r.token_address,
                    symbol: r.token_symbol,
                    name: r.token_name,
                })
            })
            .collect();
        Ok(TokenStatsResponse { source: "chaindata".into(), as_of: Some(updated_at), tokens })
    }

    /// The raw answer of `endpoint` to `body`, from the cache while fresh. Only answers
    /// that `check` accepts are kept, so a misshapen answer is never served twice.
    async fn fetch<T>(
        &self,
        endpoint: Endpoint,
        body: &Value,
        decode: impl Fn(Value) -> Result<T, String>,
    ) -> Result<T, UpstreamError> {
        let key = format!("{}\n{body}", endpoint.path());
        let shape = |cause: String| UpstreamError::Decode { vendor: Vendor::Chaindata, cause };
        let parse = |bytes: &[u8]| {
            serde_json::from_slice::<Value>(bytes)
                .map_err(|e| shape(format!("not JSON: {e}")))
                .and_then(|v| decode(v).map_err(shape))
        };
        if let Some(hit) = self.cache.get(&key) {
            metrics::counter!("svc_upstream_cache_hits_total", "vendor" => Vendor::Chaindata.family()).increment(1);
            return parse(&hit);
        }
        metrics::counter!("svc_upstream_cache_misses_total", "vendor" => Vendor::Chaindata.family()).increment(1);
        let bytes = self.client.post_json_bytes(endpoint.path(), body).await?;
        let value = parse(&bytes)?;
        self.cache.put(key, bytes, endpoint.ttl());
        Ok(value)
    }

    async fn list<T: DeserializeOwned>(
        &self,
        endpoint: Endpoint,
        body: Value,
        paging: Option<&ChaindataPaging>,
    ) -> Result<ChaindataList<T>, UpstreamError> {
        self.fetch(endpoint, &body, |v| list_from(v, paging)).await
    }

    async fn object<T: DeserializeOwned>(
        &self,
        endpoint: Endpoint,
        body: Value,
    ) -> Result<ChaindataObject<T>, UpstreamError> {
        Ok(ChaindataObject { data: self.fetch(endpoint, &body, object_from).await? })
    }

    // ---- smart money ----------------------------------------------------------------------

    /// `smart-money/netflow`.
    pub async fn netflow(
        &self,
        p: &ChaindataNetflowPayload,
    ) -> Result<ChaindataList<ChaindataNetflowRow>, UpstreamError> {
        let body = Body::default().set("chains", &p.chains).paged(
            p.filters.as_ref(),
            p.pagination.as_ref(),
            p.order_by.as_ref(),
        );
        self.list(Endpoint::SmartMoneyNetflow, body.done(), p.pagination.as_ref()).await
    }

    fn smart_money_body(p: &ChaindataSmartMoneyPayload) -> Value {
        Body::default()
            .opt("chains", p.chains.as_ref())
            .paged(p.filters.as_ref(), p.pagination.as_ref(), p.order_by.as_ref())
            .done()
    }

    /// `smart-money/holdings`.
    pub async fn holdings(
        &self,
        p: &ChaindataSmartMoneyPayload,
    ) -> Result<ChaindataList<ChaindataHoldingRow>, UpstreamError> {
        self.list(Endpoint::SmartMoneyHoldings, Self::smart_money_body(p), p.pagination.as_ref()).await
    }

    /// `smart-money/dex-trades`.
    pub async fn smart_money_dex_trades(
        &self,
        p: &ChaindataSmartMoneyPayload,
    ) -> Result<ChaindataList<ChaindataSmartMoneyDexTradeRow>, UpstreamError> {
        self.list(Endpoint::SmartMoneyDexTrades, Self::smart_money_body(p), p.pagination.as_ref()).await
    }

    /// `smart-money/agg-dca`: the vendor's DCA feed has no chains and no date range.
    pub async fn smart_money_dcas(
        &self,
        p: &ChaindataFilterPayload,
    ) -> Result<ChaindataList<ChaindataSmartMoneyDcaRow>, UpstreamError> {
        let body = Body::default().paged(p.filters.as_ref(), p.pagination.as_ref(), p.order_by.as_ref());
        self.list(Endpoint::SmartMoneyDcas, body.done(), p.pagination.as_ref()).await
    }

    /// `smart-money/historical-holdings`.
    pub async fn historical_holdings(
        &self,
        p: &ChaindataHistoricalHoldingsPayload,
    ) -> Result<ChaindataList<ChaindataHistoricalHoldingRow>, UpstreamError> {
        let body = Body::default().opt("chains", p.chains.as_ref()).date("date_range", p.date_range.as_ref()).paged(
            p.filters.as_ref(),
            p.pagination.as_ref(),
            p.order_by.as_ref(),
        );
        self.list(Endpoint::SmartMoneyHistoricalHoldings, body.done(), p.pagination.as_ref()).await
    }

    /// `smart-money/perp-trades`.
    pub async fn smart_money_perp_trades(
        &self,
        p: &ChaindataSmartMoneyPerpPayload,
    ) -> Result<ChaindataList<ChaindataPerpTradeRow>, UpstreamError> {
        let body = Body::default().opt("only_new_positions", p.only_new_positions).paged(
            p.filters.as_ref(),
            p.pagination.as_ref(),
            p.order_by.as_ref(),
        );
        self.list(Endpoint::SmartMoneyPerpTrades, body.done(), p.pagination.as_ref()).await
    }

    // ---- profiler -------------------------------------------------------------------------

    /// One vendor body per profiled wallet (or one for the entity).
    fn profiler_bodies(p: &ChaindataProfilerPayload, paged: bool) -> Vec<Value> {
        let subject = |body: Body| match &p.wallet_addresses {
            Some(wallets) => wallets.iter().map(|w| body_with(&body, "address", canonical(p.chain, w))).collect(),
            None => vec![body_with(&body, "entity_name", p.entity_id.clone().unwrap_or_default())],
        };
        let mut body = Body::default()
            .set("chain", p.chain)
            .date("date", p.date.as_ref())
            .opt("hide_spam_token", p.hide_spam_token);
        if paged {
            body = body.paged(p.filters.as_ref(), p.pagination.as_ref(), p.order_by.as_ref());
        } else {
            body = body.opt("filters", p.filters.as_ref().filter(|f| !f.is_empty()));
        }
        subject(body)
    }

    /// Runs `endpoint` for every profiled wallet and joins the pages: rows in wallet order,
    /// the last page only when every wallet's page was its last.
    async fn profiler_list<T: DeserializeOwned>(
        &self,
        endpoint: Endpoint,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataList<T>, UpstreamError> {
        let calls = Self::profiler_bodies(p, true)
            .into_iter()
            .map(|body| self.list::<T>(endpoint, body, p.pagination.as_ref()));
        let pages = futures::future::try_join_all(calls).await?;
        Ok(join_pages(pages, p.pagination.as_ref()))
    }

    /// `profiler/address/balances` (the vendor's `current-balance`).
    pub async fn address_balances(
        &self,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataList<ChaindataBalanceRow>, UpstreamError> {
        self.profiler_list(Endpoint::ProfilerBalances, p).await
    }

    /// `profiler/address/historical-balances`.
    pub async fn address_historical_balances(
        &self,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataList<ChaindataHistoricalBalanceRow>, UpstreamError> {
        self.profiler_list(Endpoint::ProfilerHistoricalBalances, p).await
    }

    /// `profiler/address/transactions`.
    pub async fn address_transactions(
        &self,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataList<ChaindataTransactionRow>, UpstreamError> {
        self.profiler_list(Endpoint::ProfilerTransactions, p).await
    }

    /// `profiler/address/counterparties`.
    pub async fn address_counterparties(
        &self,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataList<ChaindataCounterpartyRow>, UpstreamError> {
        self.profiler_list(Endpoint::ProfilerCounterparties, p).await
    }

    /// `profiler/address/related-wallets`.
    pub async fn address_related_wallets(
        &self,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataList<ChaindataRelatedWalletRow>, UpstreamError> {
        self.profiler_list(Endpoint::ProfilerRelatedWallets, p).await
    }

    /// `profiler/address/pnl`.
    pub async fn address_pnl(
        &self,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataList<ChaindataPnlRow>, UpstreamError> {
        self.profiler_list(Endpoint::ProfilerPnl, p).await
    }

    /// `profiler/address/nft-holdings`.
    pub async fn address_nft_holdings(
        &self,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataList<ChaindataNftHoldingRow>, UpstreamError> {
        self.profiler_list(Endpoint::ProfilerNftHoldings, p).await
    }

    /// `profiler/address/token-transfers`: every token movement of the wallets'
    /// transactions, one row per movement.
    pub async fn address_token_transfers(
        &self,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataList<ChaindataTransferRow>, UpstreamError> {
        let transactions = self.address_transactions(p).await?;
        let data = transactions
            .data
            .into_iter()
            .flat_map(|tx| {
                let kind = tx.source_type.clone().unwrap_or_else(|| tx.method.clone());
                tx.tokens_sent.into_iter().chain(tx.tokens_received).map(move |m| ChaindataTransferRow {
                    block_timestamp: tx.block_timestamp.clone(),
                    transaction_hash: tx.transaction_hash.clone(),
                    from_address: m.from_address,
                    to_address: m.to_address,
                    from_address_label: m.from_address_label,
                    to_address_label: m.to_address_label,
                    transaction_type: kind.clone(),
                    transfer_amount: m.token_amount,
                    transfer_value_usd: m.value_usd,
                })
            })
            .collect();
        Ok(ChaindataList { data, pagination: transactions.pagination })
    }

    /// `profiler/address/labels`: the beta endpoint takes `{"parameters": {...}}` and is not
    /// paged.
    pub async fn address_labels(
        &self,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataList<ChaindataLabelRow>, UpstreamError> {
        let bodies: Vec<Value> = match &p.wallet_addresses {
            Some(wallets) => wallets
                .iter()
                .map(|w| json!({"parameters": {"address": canonical(p.chain, w), "chain": p.chain}, "pagination": {"page": 1, "per_page": 100}}))
                .collect(),
            None => vec![json!({"parameters": {"entity_name": p.entity_id, "chain": p.chain}, "pagination": {"page": 1, "per_page": 100}})],
        };
        let calls = bodies.into_iter().map(|body| self.list::<ChaindataLabelRow>(Endpoint::ProfilerLabels, body, None));
        let pages = futures::future::try_join_all(calls).await?;
        Ok(join_pages(pages, None))
    }

    /// `profiler/address/pnl-summary`: one summary per wallet, combined: sums of PnL and
    /// counts, the win rate weighted by tokens traded, the percentage over the summed cost,
    /// and the five best tokens across all wallets.
    pub async fn address_pnl_summary(
        &self,
        p: &ChaindataProfilerPayload,
    ) -> Result<ChaindataObject<ChaindataPnlSummary>, UpstreamError> {
        let calls = Self::profiler_bodies(p, false)
            .into_iter()
            .map(|body| self.object::<ChaindataPnlSummary>(Endpoint::ProfilerPnlSummary, body));
        let summaries: Vec<ChaindataPnlSummary> =
            futures::future::try_join_all(calls).await?.into_iter().map(|o| o.data).collect();
        Ok(ChaindataObject { data: combine_pnl(summaries) })
    }

    // ---- perp leaderboard -----------------------------------------------------------------

    /// `perp-leaderboard`.
    pub async fn perp_leaderboard(
        &self,
        p: &ChaindataFilterPayload,
    ) -> Result<ChaindataList<ChaindataPerpLeaderRow>, UpstreamError> {
        let body = Body::default().date("date", p.date.as_ref()).paged(
            p.filters.as_ref(),
            p.pagination.as_ref(),
            p.order_by.as_ref(),
        );
        self.list(Endpoint::PerpLeaderboard, body.done(), p.pagination.as_ref()).await
    }

    // ---- token god mode -------------------------------------------------------------------

    fn tgm_body(p: &ChaindataTgmPayload, paged: bool) -> Value {
        let body = Body::default()
            .set("token_address", canonical(p.chain, &p.token_address))
            .set("chain", p.chain)
            .date("date", p.date.as_ref())
            .opt("timeframe", p.timeframe.as_ref())
            .opt("buy_or_sell", p.buy_or_sell)
            .opt("only_smart_money", p.only_smart_money)
            .opt("label_type", p.label_type.as_ref())
            .opt("aggregate_by_entity", p.aggregate_by_entity)
            .opt("label", p.label.as_ref());
        let body = if paged {
            body.paged(p.filters.as_ref(), p.pagination.as_ref(), p.order_by.as_ref())
        } else {
            body.opt("filters", p.filters.as_ref().filter(|f| !f.is_empty()))
        };
        body.done()
    }

    async fn tgm_list<T: DeserializeOwned>(
        &self,
        endpoint: Endpoint,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataList<T>, UpstreamError> {
        self.list(endpoint, Self::tgm_body(p, true), p.pagination.as_ref()).await
    }

    /// `tgm/flow-intelligence`.
    pub async fn flow_intelligence(
        &self,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataObject<ChaindataFlowIntelligence>, UpstreamError> {
        self.object(Endpoint::TgmFlowIntelligence, Self::tgm_body(p, false)).await
    }

    /// `p` with its date range, or the last day (yesterday and today, UTC) when it has none:
    /// the vendor refuses these queries without one, and the spec's minimal payload has none.
    fn with_default_date(&self, p: &ChaindataTgmPayload) -> ChaindataTgmPayload {
        let mut p = p.clone();
        if p.date.is_none() {
            let day = |ms: i64| svc_domain::rfc3339(ms)[..10].to_owned();
            let now = self.clock.now_ms();
            p.date = Some(ChaindataDateRange { from: day(now - 86_400_000), to: day(now) });
        }
        p
    }

    /// `tgm/who-bought-sold` (default range: the last day).
    pub async fn who_bought_sold(
        &self,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataList<ChaindataWhoBoughtSoldRow>, UpstreamError> {
        self.tgm_list(Endpoint::TgmWhoBoughtSold, &self.with_default_date(p)).await
    }

    /// `tgm/dex-trades`.
    pub async fn token_dex_trades(
        &self,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataList<ChaindataTokenDexTradeRow>, UpstreamError> {
        self.tgm_list(Endpoint::TgmDexTrades, p).await
    }

    /// `tgm/transfers`.
    pub async fn token_transfers(
        &self,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataList<ChaindataTransferRow>, UpstreamError> {
        self.tgm_list(Endpoint::TgmTransfers, p).await
    }

    /// `tgm/holders`.
    pub async fn token_holders(
        &self,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataList<ChaindataHolderRow>, UpstreamError> {
        self.tgm_list(Endpoint::TgmHolders, p).await
    }

    /// `tgm/flows` (default range: the last day).
    pub async fn token_flows(
        &self,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataList<ChaindataTokenFlowRow>, UpstreamError> {
        self.tgm_list(Endpoint::TgmFlows, &self.with_default_date(p)).await
    }

    /// `tgm/pnl-leaderboard`.
    pub async fn token_pnl_leaderboard(
        &self,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataList<ChaindataPnlLeaderRow>, UpstreamError> {
        self.tgm_list(Endpoint::TgmPnlLeaderboard, p).await
    }

    /// `tgm/agg-dca` (the vendor's `jup-dca`; Solana only, so no chain is sent).
    pub async fn token_dcas(
        &self,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataList<ChaindataTgmDcaRow>, UpstreamError> {
        let body = Body::default().set("token_address", canonical(p.chain, &p.token_address)).paged(
            p.filters.as_ref(),
            p.pagination.as_ref(),
            p.order_by.as_ref(),
        );
        self.list(Endpoint::TgmJupDca, body.done(), p.pagination.as_ref()).await
    }

    /// `tgm/token-screener` (the vendor's top-level `token-screener`).
    pub async fn token_screener(
        &self,
        p: &ChaindataScreenerPayload,
    ) -> Result<ChaindataList<ChaindataScreenerRow>, UpstreamError> {
        let body = Body::default().set("chains", &p.chains).opt("timeframe", p.timeframe.as_ref()).paged(
            p.filters.as_ref(),
            p.pagination.as_ref(),
            p.order_by.as_ref(),
        );
        self.list(Endpoint::TokenScreener, body.done(), p.pagination.as_ref()).await
    }

    /// `tgm/perp-screener` (the vendor's top-level `perp-screener`).
    pub async fn perp_screener(
        &self,
        p: &ChaindataFilterPayload,
    ) -> Result<ChaindataList<ChaindataPerpScreenerRow>, UpstreamError> {
        let body = Body::default().date("date", p.date.as_ref()).paged(
            p.filters.as_ref(),
            p.pagination.as_ref(),
            p.order_by.as_ref(),
        );
        self.list(Endpoint::PerpScreener, body.done(), p.pagination.as_ref()).await
    }

    fn perp_body(p: &ChaindataPerpPayload) -> Value {
        Body::default()
            .set("token_symbol", &p.token_symbol)
            .date("date", p.date.as_ref())
            .opt("label_type", p.label_type.as_ref())
            .paged(p.filters.as_ref(), p.pagination.as_ref(), p.order_by.as_ref())
            .done()
    }

    /// `tgm/perp-trades`.
    pub async fn perp_trades(
        &self,
        p: &ChaindataPerpPayload,
    ) -> Result<ChaindataList<ChaindataPerpTradeRow>, UpstreamError> {
        self.list(Endpoint::TgmPerpTrades, Self::perp_body(p), p.pagination.as_ref()).await
    }

    /// `tgm/perp-pnl-leaderboard`.
    pub async fn perp_pnl_leaderboard(
        &self,
        p: &ChaindataPerpPayload,
    ) -> Result<ChaindataList<ChaindataPerpPnlLeaderRow>, UpstreamError> {
        self.list(Endpoint::TgmPerpPnlLeaderboard, Self::perp_body(p), p.pagination.as_ref()).await
    }

    /// `tgm/perp-positions`.
    pub async fn perp_positions(
        &self,
        p: &ChaindataPerpPayload,
    ) -> Result<ChaindataList<ChaindataPerpPositionRow>, UpstreamError> {
        self.list(Endpoint::TgmPerpPositions, Self::perp_body(p), p.pagination.as_ref()).await
    }

    /// `tgm/token-information`; an unknown token is a 404.
    pub async fn token_information(
        &self,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataObject<ChaindataTokenInformation>, UpstreamError> {
        match self.object(Endpoint::TgmTokenInformation, Self::tgm_body(p, false)).await {
            Err(UpstreamError::Status { status: 404, vendor }) => Err(UpstreamError::NotFound {
                vendor,
                what: "token",
                id: format!("{} on {}", p.token_address, p.chain),
            }),
            other => other,
        }
    }

    /// `tgm/indicators`.
    pub async fn token_indicators(
        &self,
        p: &ChaindataTgmPayload,
    ) -> Result<ChaindataList<ChaindataIndicatorRow>, UpstreamError> {
        self.tgm_list(Endpoint::TgmIndicators, p).await
    }

    /// `tgm/token-ohlcv`.
    pub async fn token_ohlcv(&self, p: &ChaindataTgmPayload) -> Result<ChaindataList<ChaindataCandle>, UpstreamError> {
        self.tgm_list(Endpoint::TgmTokenOhlcv, p).await
    }
}

fn body_with(body: &Body, key: &str, value: String) -> Value {
    let mut map = body.0.clone();
    map.insert(key.to_owned(), Value::String(value));
    Value::Object(map)
}

/// Pages of several wallets as one page.
fn join_pages<T>(pages: Vec<ChaindataList<T>>, paging: Option<&ChaindataPaging>) -> ChaindataList<T> {
    let is_last_page = pages.iter().all(|p| p.pagination.is_last_page);
    let first = pages.first().map(|p| p.pagination.clone());
    let data: Vec<T> = pages.into_iter().flat_map(|p| p.data).collect();
    let pagination = ChaindataPagination {
        page: paging.map(|p| p.page).or(first.as_ref().map(|p| p.page)).unwrap_or(1),
        per_page: paging.map(|p| p.per_page).or(first.as_ref().map(|p| p.per_page)).unwrap_or(100),
        is_last_page,
    };
    ChaindataList { data, pagination }
}

/// Several wallets' PnL summaries as one.
fn combine_pnl(summaries: Vec<ChaindataPnlSummary>) -> ChaindataPnlSummary {
    if summaries.len() == 1 {
        if let Some(one) = summaries.into_iter().next() {
            return one;
        }
        unreachable!("one summary");
    }
    let realized: f64 = summaries.iter().map(|s| s.realized_pnl_usd).sum();
    // Cost behind each wallet's percentage: pnl / (percent / 100).
    let cost: f64 = summaries
        .iter()
        .filter(|s| s.realized_pnl_percent.abs() > f64::EPSILON)
        .map(|s| s.realized_pnl_usd / (s.realized_pnl_percent / 100.0))
        .sum();
    let tokens: u32 = summaries.iter().map(|s| s.traded_token_count).sum();
    let wins: f64 = summaries.iter().map(|s| s.win_rate * f64::from(s.traded_token_count)).sum();
    let mut top: Vec<_> = summaries.iter().flat_map(|s| s.top5_tokens.iter().cloned()).collect();
    top.sort_by(|a, b| b.realized_pnl.total_cmp(&a.realized_pnl));
    top.truncate(5);
    ChaindataPnlSummary {
        top5_tokens: top,
        traded_token_count: tokens,
        traded_times: summaries.iter().map(|s| s.traded_times).sum(),
        realized_pnl_usd: realized,
        realized_pnl_percent: if cost.abs() > f64::EPSILON { realized / cost * 100.0 } else { 0.0 },
        win_rate: if tokens > 0 { wins / f64::from(tokens) } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_decode_bare_arrays_and_objects_decode_one_row_lists() {
        let list: ChaindataList<ChaindataLabelRow> =
            list_from(json!([{"label": "Fund", "category": "fund", "definition": "d"}]), None).expect("bare list");
        assert!(list.pagination.is_last_page);
        assert_eq!(list.data.len(), 1);
        let one: Value = object_from(json!({"data": [{"a": 1}]})).expect("one row");
        assert_eq!(one, json!({"a": 1}));
        let bare: Value = object_from(json!({"a": 2})).expect("bare");
        assert_eq!(bare, json!({"a": 2}));
        assert!(object_from::<Value>(json!({"data": []})).is_err());
    }

    #[test]
    fn zone_less_times_become_utc_and_zoned_ones_stay() {
        let mut rows = json!({"data": [{"block_timestamp": "2025-01-01T12:00:00", "x": {"t": "2025-01-01 12:00:00.5"}},
            {"block_timestamp": "2025-01-01T12:00:00+02:00", "date": "2025-01-01"}, {"block_timestamp": "2025-01-01T12:00:00Z"}]});
        normalise_times(&mut rows);
        assert_eq!(rows["data"][0]["block_timestamp"], "2025-01-01T12:00:00Z");
        assert_eq!(rows["data"][0]["x"]["t"], "2025-01-01T12:00:00.5Z");
        assert_eq!(rows["data"][1]["block_timestamp"], "2025-01-01T12:00:00+02:00");
        assert_eq!(rows["data"][1]["date"], "2025-01-01");
        assert_eq!(rows["data"][2]["block_timestamp"], "2025-01-01T12:00:00Z");
    }

    #[test]
    fn summaries_of_several_wallets_combine() {
        let summary = |pnl: f64, pct: f64, tokens: u32, win: f64| ChaindataPnlSummary {
            top5_tokens: Vec::new(),
            traded_token_count: tokens,
            traded_times: tokens * 2,
            realized_pnl_usd: pnl,
            realized_pnl_percent: pct,
            win_rate: win,
        };
        // 100 on a cost of 1000, and 300 on a cost of 1000: 400 on 2000 is 20 %.
        let both = combine_pnl(vec![summary(100.0, 10.0, 2, 0.5), summary(300.0, 30.0, 6, 1.0)]);
        assert!((both.realized_pnl_percent - 20.0).abs() < 1e-9);
        assert!((both.win_rate - 7.0 / 8.0).abs() < 1e-9);
        assert_eq!(both.traded_times, 16);
    }

    #[test]
    fn every_endpoint_has_its_own_vendor_path_and_a_ttl() {
        let paths: std::collections::BTreeSet<_> = Endpoint::ALL.iter().map(|e| e.path()).collect();
        assert_eq!(paths.len(), Endpoint::ALL.len());
        for e in Endpoint::ALL {
            assert!(e.path().starts_with("/api/v1/") || e.path().starts_with("/api/beta/"), "{e:?}");
            assert!(e.ttl() >= Duration::from_secs(30) && e.ttl() <= Duration::from_secs(86_400), "{e:?}");
        }
        assert_eq!(Endpoint::ProfilerLabels.path(), "/api/beta/profiler/address/labels");
        assert!(Endpoint::ProfilerLabels.ttl() > Endpoint::SmartMoneyNetflow.ttl());
    }
}
