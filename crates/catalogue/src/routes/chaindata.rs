//! The on-chain analytics proxy: 33 upstream routes, each its own catalogue entry with its own
//! price. `POST {tools}/data-provider/chaindata/{path}` with body `{"payload": {...}}`; the
//! payload is typed per route kind (nine kinds) and forwarded to the upstream under the names
//! the upstream uses, except the profiler's `walletAddresses`/`entityId`, which the contract
//! names (the handler maps them to the upstream's `address`/`entity_name`). Any other `{path}`
//! is a 422 listing [`allowed_paths`].
//!
//! Answers keep the upstream's envelope: `{"data": [row, ...], "pagination": {...}}` for list
//! routes ([`ChaindataList`]) and `{"data": {...}}` for the three object routes
//! ([`ChaindataObject`]). Rows keep the upstream's field names.

use crate::ids;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use svc_domain::{Address, Chain};

use super::common::Timestamp;
use crate::{FieldError, Group, Loc, RouteInput, RouteSpec};

/// Path prefix of the chain-data proxy routes; `{path}` is what follows it.
pub const CHAINDATA_PREFIX: &str = "/api/x402/svc-tools/data-provider/chaindata/";

/// The `{path}` values the proxy serves (`smart-money/netflow`, ...), derived from [`routes`].
pub fn allowed_paths() -> Vec<&'static str> {
    routes().iter().filter_map(|r| r.path.strip_prefix(CHAINDATA_PREFIX)).collect()
}

/// The chain-data routes.
pub fn routes() -> Vec<RouteSpec> {
    let data = |r: RouteSpec| r.group(Group::Data).tag("chaindata");
    type L<T> = ChaindataList<T>;
    type O<T> = ChaindataObject<T>;
    vec![
        // smart-money/
        data(RouteSpec::post::<ChaindataNetflowRequest, L<ChaindataNetflowRow>>(
            ids::chaindata::smart_money::NETFLOW,
            tools!("/data-provider/chaindata/smart-money/netflow"),
            "Tokens ranked by smart-money net flow in USD over 1 h, 24 h, 7 d and 30 d on the chains you name, with trader count, sectors and market cap.",
        )),
        data(RouteSpec::post::<ChaindataSmartMoneyRequest, L<ChaindataHoldingRow>>(
            ids::chaindata::smart_money::HOLDINGS,
            tools!("/data-provider/chaindata/smart-money/holdings"),
            "What smart-money wallets hold now per token: USD value, 24 h balance change, holder count and share of all smart-money holdings.",
        )),
        data(RouteSpec::post::<ChaindataSmartMoneyRequest, L<ChaindataSmartMoneyDexTradeRow>>(
            ids::chaindata::smart_money::DEX_TRADES,
            tools!("/data-provider/chaindata/smart-money/dex-trades"),
            "Recent DEX swaps by smart-money wallets: trader label, tokens bought and sold, amounts and USD value.",
        )),
        data(RouteSpec::post::<ChaindataFilterRequest, L<ChaindataSmartMoneyDcaRow>>(
            ids::chaindata::smart_money::AGG_DCA,
            tools!("/data-provider/chaindata/smart-money/agg-dca"),
            "Aggregator DCA orders opened by smart-money wallets on Solana: tokens, deposit in USD, amounts spent and redeemed, status.",
        )),
        data(RouteSpec::post::<ChaindataHistoricalHoldingsRequest, L<ChaindataHistoricalHoldingRow>>(
            ids::chaindata::smart_money::HISTORICAL_HOLDINGS,
            tools!("/data-provider/chaindata/smart-money/historical-holdings"),
            "Daily smart-money holdings per token over a date range: balance, USD value, holder count and share of holdings.",
        )),
        data(RouteSpec::post::<ChaindataSmartMoneyPerpRequest, L<ChaindataPerpTradeRow>>(
            ids::chaindata::smart_money::PERP_TRADES,
            tools!("/data-provider/chaindata/smart-money/perp-trades"),
            "Perpetual trades by smart-money wallets on the perp DEX: coin, side, open/close action, size, price and USD value.",
        )),
        // profiler/address/
        data(RouteSpec::post::<ChaindataProfilerRequest, L<ChaindataBalanceRow>>(
            ids::chaindata::profiler::ADDRESS_BALANCES,
            tools!("/data-provider/chaindata/profiler/address/balances"),
            "Current token balances of up to 20 wallets or one entity: amount, price and USD value per token.",
        )),
        data(RouteSpec::post::<ChaindataProfilerRequest, L<ChaindataHistoricalBalanceRow>>(
            ids::chaindata::profiler::ADDRESS_HISTORICAL_BALANCES,
            tools!("/data-provider/chaindata/profiler/address/historical-balances"),
            "Token balances of wallets or an entity over a date range, with USD values at each point.",
        )),
        data(RouteSpec::post::<ChaindataProfilerRequest, L<ChaindataTransactionRow>>(
            ids::chaindata::profiler::ADDRESS_TRANSACTIONS,
            tools!("/data-provider/chaindata/profiler/address/transactions"),
            "Transactions of wallets with the method called, tokens sent and received, counterparties' labels and USD volume.",
        )),
        data(RouteSpec::post::<ChaindataProfilerRequest, L<ChaindataCounterpartyRow>>(
            ids::chaindata::profiler::ADDRESS_COUNTERPARTIES,
            tools!("/data-provider/chaindata/profiler/address/counterparties"),
            "Who wallets interact with most: counterparty labels, interaction count, USD volume in and out, tokens exchanged.",
        )),
        data(RouteSpec::post::<ChaindataProfilerRequest, L<ChaindataRelatedWalletRow>>(
            ids::chaindata::profiler::ADDRESS_RELATED_WALLETS,
            tools!("/data-provider/chaindata/profiler/address/related-wallets"),
            "Wallets linked to the given ones (first funder, deployer, shared signer, ...) with the linking transaction.",
        )),
        data(RouteSpec::post::<ChaindataProfilerRequest, O<ChaindataPnlSummary>>(
            ids::chaindata::profiler::ADDRESS_PNL_SUMMARY,
            tools!("/data-provider/chaindata/profiler/address/pnl-summary"),
            "Realised PnL summary of wallets: USD and percent PnL, win rate, trade and token counts, five best tokens.",
        )),
        data(RouteSpec::post::<ChaindataProfilerRequest, L<ChaindataPnlRow>>(
            ids::chaindata::profiler::ADDRESS_PNL,
            tools!("/data-provider/chaindata/profiler/address/pnl"),
            "PnL of wallets per token: realised and unrealised USD and ROI, bought, sold and still held, buy and sell counts.",
        )),
        data(RouteSpec::post::<ChaindataProfilerRequest, L<ChaindataNftHoldingRow>>(
            ids::chaindata::profiler::ADDRESS_NFT_HOLDINGS,
            tools!("/data-provider/chaindata/profiler/address/nft-holdings"),
            "NFTs held by wallets: collection, token id, floor price and estimated USD value.",
        )),
        data(RouteSpec::post::<ChaindataProfilerRequest, L<ChaindataTransferRow>>(
            ids::chaindata::profiler::ADDRESS_TOKEN_TRANSFERS,
            tools!("/data-provider/chaindata/profiler/address/token-transfers"),
            "Token transfers into and out of wallets with sender and recipient labels and USD value.",
        )),
        data(RouteSpec::post::<ChaindataProfilerRequest, L<ChaindataLabelRow>>(
            ids::chaindata::profiler::ADDRESS_LABELS,
            tools!("/data-provider/chaindata/profiler/address/labels"),
            "Every label of a wallet (smart-money cohorts, funds, exchanges, entity name) with category and definition; premium data, \
             priced above the 1 USD a call x402 clients pay by default (raise the client's limit, or use the credit twin).",
        )),
        // perp-leaderboard
        data(RouteSpec::post::<ChaindataFilterRequest, L<ChaindataPerpLeaderRow>>(
            ids::chaindata::PERP_LEADERBOARD,
            tools!("/data-provider/chaindata/perp-leaderboard"),
            "Top perp-DEX traders over a date range by PnL and ROI, with account value and labels.",
        )),
        // tgm/
        data(RouteSpec::post::<ChaindataTgmRequest, O<ChaindataFlowIntelligence>>(
            ids::chaindata::tgm::FLOW_INTELLIGENCE,
            tools!("/data-provider/chaindata/tgm/flow-intelligence"),
            "Net USD flow of one token by holder cohort (whales, smart traders, top-PnL wallets, public figures, exchanges, fresh wallets) with wallet counts.",
        )),
        data(RouteSpec::post::<ChaindataTgmRequest, L<ChaindataWhoBoughtSoldRow>>(
            ids::chaindata::tgm::WHO_BOUGHT_SOLD,
            tools!("/data-provider/chaindata/tgm/who-bought-sold"),
            "Who bought and who sold one token over a date range, with labels, token volumes and USD volumes.",
        )),
        data(RouteSpec::post::<ChaindataTgmRequest, L<ChaindataTokenDexTradeRow>>(
            ids::chaindata::tgm::DEX_TRADES,
            tools!("/data-provider/chaindata/tgm/dex-trades"),
            "DEX trades of one token: buy or sell, trader label, amounts, swap price and USD value; optionally smart money only.",
        )),
        data(RouteSpec::post::<ChaindataTgmRequest, L<ChaindataTransferRow>>(
            ids::chaindata::tgm::TRANSFERS,
            tools!("/data-provider/chaindata/tgm/transfers"),
            "Transfers of one token with sender and recipient labels, transfer type and USD value.",
        )),
        data(RouteSpec::post::<ChaindataTgmRequest, L<ChaindataHolderRow>>(
            ids::chaindata::tgm::HOLDERS,
            tools!("/data-provider/chaindata/tgm/holders"),
            "Top holders of one token with labels, ownership share, USD value and 24 h / 7 d / 30 d balance changes.",
        )),
        data(RouteSpec::post::<ChaindataTgmRequest, L<ChaindataTokenFlowRow>>(
            ids::chaindata::tgm::FLOWS,
            tools!("/data-provider/chaindata/tgm/flows"),
            "Daily balance, inflow and outflow counts of one token for a holder segment over a date range.",
        )),
        data(RouteSpec::post::<ChaindataTgmRequest, L<ChaindataPnlLeaderRow>>(
            ids::chaindata::tgm::PNL_LEADERBOARD,
            tools!("/data-provider/chaindata/tgm/pnl-leaderboard"),
            "Most profitable traders of one token: realised, unrealised and total PnL in USD, ROI, holdings and trade count.",
        )),
        data(RouteSpec::post::<ChaindataTgmRequest, L<ChaindataTgmDcaRow>>(
            ids::chaindata::tgm::AGG_DCA,
            tools!("/data-provider/chaindata/tgm/agg-dca"),
            "Aggregator DCA orders into or out of one Solana token: trader label, mints, deposit in USD, amounts spent and redeemed, status.",
        )),
        data(RouteSpec::post::<ChaindataScreenerRequest, L<ChaindataScreenerRow>>(
            ids::chaindata::tgm::TOKEN_SCREENER,
            tools!("/data-provider/chaindata/tgm/token-screener"),
            "Screen tokens on the chains you name by market cap, liquidity, age, volume, buyers and sellers, and smart-money net flow.",
        )),
        data(RouteSpec::post::<ChaindataFilterRequest, L<ChaindataPerpScreenerRow>>(
            ids::chaindata::tgm::PERP_SCREENER,
            tools!("/data-provider/chaindata/tgm/perp-screener"),
            "Screen perp-DEX markets by volume, buy/sell pressure, open interest, funding and smart-money positioning.",
        )),
        data(RouteSpec::post::<ChaindataPerpRequest, L<ChaindataPerpTradeRow>>(
            ids::chaindata::tgm::PERP_TRADES,
            tools!("/data-provider/chaindata/tgm/perp-trades"),
            "Perpetual trades of one perp-DEX coin: trader label, side, open/close action, size, price and USD value.",
        )),
        data(RouteSpec::post::<ChaindataPerpRequest, L<ChaindataPerpPnlLeaderRow>>(
            ids::chaindata::tgm::PERP_PNL_LEADERBOARD,
            tools!("/data-provider/chaindata/tgm/perp-pnl-leaderboard"),
            "Most profitable traders of one perp-DEX coin: realised, unrealised and total PnL in USD, ROI and position value.",
        )),
        data(RouteSpec::post::<ChaindataPerpRequest, L<ChaindataPerpPositionRow>>(
            ids::chaindata::tgm::PERP_POSITIONS,
            tools!("/data-provider/chaindata/tgm/perp-positions"),
            "Open positions in one perp-DEX coin: side, USD value, leverage, entry, mark and liquidation prices, unrealised PnL.",
        )),
        data(RouteSpec::post::<ChaindataTgmRequest, O<ChaindataTokenInformation>>(
            ids::chaindata::tgm::TOKEN_INFORMATION,
            tools!("/data-provider/chaindata/tgm/token-information"),
            "Profile of one token: deployment date, links, market cap, FDV, supply, and volume, buyers, sellers, liquidity and holders over a time frame.",
        )),
        data(RouteSpec::post::<ChaindataTgmRequest, L<ChaindataIndicatorRow>>(
            ids::chaindata::tgm::INDICATORS,
            tools!("/data-provider/chaindata/tgm/indicators"),
            "Risk and momentum indicators of one token, each with a value and a bullish, bearish or neutral reading.",
        )),
        data(RouteSpec::post::<ChaindataTgmRequest, L<ChaindataCandle>>(
            ids::chaindata::tgm::TOKEN_OHLCV,
            tools!("/data-provider/chaindata/tgm/token-ohlcv"),
            "Price candles of one token (open, high, low, close in USD and USD volume) at a time frame from 1m to 1M.",
        )),
    ]
}

// ---- inputs: shared pieces ----------------------------------------------------------------

fn first_page() -> u32 {
    1
}

fn full_page() -> u32 {
    100
}

/// Which page of a list answer to return.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataPaging {
    /// Page number, from 1 (default 1).
    #[serde(default = "first_page")]
    #[garde(range(min = 1, max = 10_000))]
    pub page: u32,
    /// Rows per page, 1–100 (default 100).
    #[serde(default = "full_page")]
    #[garde(range(min = 1, max = 100))]
    pub per_page: u32,
}

/// One sort key, as the upstream takes it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataSort {
    /// A field of the answer's rows, e.g. `net_flow_24h_usd`.
    #[garde(pattern("^[a-z0-9_]{1,64}$"))]
    pub field: String,
    /// `ASC` or `DESC`.
    #[garde(skip)]
    pub direction: ChaindataSortDirection,
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ChaindataSortDirection {
    /// Smallest first.
    Asc,
    /// Largest first.
    Desc,
}

/// A range of days, both ends included.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataDateRange {
    /// First day, `YYYY-MM-DD`.
    #[garde(pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub from: String,
    /// Last day, `YYYY-MM-DD`, not before `from`.
    #[garde(pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub to: String,
}

impl ChaindataDateRange {
    /// `to` before `from`, reported at `[field, "to"]`. Ill-formed days are left to the pattern.
    fn rule(range: Option<&Self>, field: &str) -> Vec<FieldError> {
        let day =
            |s: &str| s.len() == 10 && s.bytes().enumerate().all(|(i, b)| b.is_ascii_digit() != (i == 4 || i == 7));
        match range {
            Some(r) if day(&r.from) && day(&r.to) && r.to < r.from => {
                vec![FieldError::new([Loc::from(field), Loc::from("to")], "`to` is before `from`", "value_error")]
            }
            _ => Vec::new(),
        }
    }
}

/// Cross-field rules of a payload, with locations relative to the payload.
trait ChaindataPayloadRules {
    /// None by default: most payloads have only the per-field rules of their type.
    fn rules(&self) -> Vec<FieldError> {
        Vec::new()
    }
}

/// Declares a route input `{ "payload": P }` whose cross-field errors sit under `payload`.
macro_rules! chaindata_request {
    ($(#[doc = $doc:literal])* $name:ident($payload:ty)) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
        pub struct $name {
            /// The upstream query.
            #[garde(dive)]
            pub payload: $payload,
        }

        impl RouteInput for $name {
            fn check(&self) -> Vec<FieldError> {
                let mut errors = self.payload.rules();
                for e in &mut errors {
                    e.loc.insert(0, Loc::from("payload"));
                }
                errors
            }
        }
    };
}

// ---- inputs: payload kinds ----------------------------------------------------------------

/// Payload of `smart-money/netflow`: `chains` is required.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataNetflowPayload {
    /// Chains to cover, at least one (lowercase names such as `solana`, `base`).
    #[garde(length(min = 1, max = 15))]
    pub chains: Vec<Chain>,
    /// Upstream filters, forwarded unchanged: smart-money label lists
    /// (`include_smart_money_labels`, `exclude_smart_money_labels`), `include_stablecoins`,
    /// `include_native_tokens`, and ranges as `{"min": x, "max": y}` (`trader_count`,
    /// `token_age_days`, `market_cap_usd`).
    #[garde(skip)]
    pub filters: Option<Map<String, Value>>,
    /// Page to return (default page 1 of 100 rows).
    #[garde(dive)]
    pub pagination: Option<ChaindataPaging>,
    /// Sort keys, at most 5, e.g. `[{"field": "net_flow_24h_usd", "direction": "DESC"}]`.
    #[garde(length(max = 5), dive)]
    pub order_by: Option<Vec<ChaindataSort>>,
}

impl ChaindataPayloadRules for ChaindataNetflowPayload {}

chaindata_request!(
    /// Body of `smart-money/netflow`.
    ChaindataNetflowRequest(ChaindataNetflowPayload)
);

/// Payload of `smart-money/holdings` and `smart-money/dex-trades`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataSmartMoneyPayload {
    /// Chains to cover, at least one when given (the upstream's default when absent).
    #[garde(length(min = 1, max = 15))]
    pub chains: Option<Vec<Chain>>,
    /// Upstream filters, forwarded unchanged: smart-money label lists, `include_stablecoins`,
    /// `include_native_tokens`, ranges as `{"min": x, "max": y}` (`value_usd`,
    /// `trade_value_usd`, `token_bought_age_days`), `trader_address`, `token_bought_address`,
    /// `token_sold_address`.
    #[garde(skip)]
    pub filters: Option<Map<String, Value>>,
    /// Page to return (default page 1 of 100 rows).
    #[garde(dive)]
    pub pagination: Option<ChaindataPaging>,
    /// Sort keys, at most 5.
    #[garde(length(max = 5), dive)]
    pub order_by: Option<Vec<ChaindataSort>>,
}

impl ChaindataPayloadRules for ChaindataSmartMoneyPayload {}

chaindata_request!(
    /// Body of the smart-money holdings and DEX-trades routes.
    ChaindataSmartMoneyRequest(ChaindataSmartMoneyPayload)
);

/// Payload of `smart-money/historical-holdings`; the upstream names its range `date_range`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataHistoricalHoldingsPayload {
    /// Chains to cover, at least one when given.
    #[garde(length(min = 1, max = 15))]
    pub chains: Option<Vec<Chain>>,
    /// Days to cover (the upstream's default window when absent).
    #[garde(dive)]
    pub date_range: Option<ChaindataDateRange>,
    /// Upstream filters, forwarded unchanged (smart-money label lists, `value_usd` range, ...).
    #[garde(skip)]
    pub filters: Option<Map<String, Value>>,
    /// Page to return (default page 1 of 100 rows).
    #[garde(dive)]
    pub pagination: Option<ChaindataPaging>,
    /// Sort keys, at most 5.
    #[garde(length(max = 5), dive)]
    pub order_by: Option<Vec<ChaindataSort>>,
}

impl ChaindataPayloadRules for ChaindataHistoricalHoldingsPayload {
    fn rules(&self) -> Vec<FieldError> {
        ChaindataDateRange::rule(self.date_range.as_ref(), "date_range")
    }
}

chaindata_request!(
    /// Body of `smart-money/historical-holdings`.
    ChaindataHistoricalHoldingsRequest(ChaindataHistoricalHoldingsPayload)
);

/// Payload of `smart-money/perp-trades` (perp DEX only, so no chains).
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataSmartMoneyPerpPayload {
    /// Only trades that open a new position (default false).
    #[garde(skip)]
    pub only_new_positions: Option<bool>,
    /// Upstream filters, forwarded unchanged: smart-money label lists, `trader_address`,
    /// `token_symbol`, `type`.
    #[garde(skip)]
    pub filters: Option<Map<String, Value>>,
    /// Page to return (default page 1 of 100 rows).
    #[garde(dive)]
    pub pagination: Option<ChaindataPaging>,
    /// Sort keys, at most 5.
    #[garde(length(max = 5), dive)]
    pub order_by: Option<Vec<ChaindataSort>>,
}

impl ChaindataPayloadRules for ChaindataSmartMoneyPerpPayload {}

chaindata_request!(
    /// Body of `smart-money/perp-trades`.
    ChaindataSmartMoneyPerpRequest(ChaindataSmartMoneyPerpPayload)
);

/// Payload of the routes that take only filters and a date range: `smart-money/agg-dca`,
/// `perp-leaderboard` and `tgm/perp-screener`. Every field is optional, so `{}` is valid.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataFilterPayload {
    /// Days to cover (leaderboard and perp screener; the upstream's default window when absent).
    #[garde(dive)]
    pub date: Option<ChaindataDateRange>,
    /// Upstream filters, forwarded unchanged: smart-money label lists, `only_smart_money`,
    /// `dca_created_at` (`{"from", "to"}`), `transaction_hash`, ranges as `{"min": x, "max": y}`.
    #[garde(skip)]
    pub filters: Option<Map<String, Value>>,
    /// Page to return (default page 1 of 100 rows).
    #[garde(dive)]
    pub pagination: Option<ChaindataPaging>,
    /// Sort keys, at most 5.
    #[garde(length(max = 5), dive)]
    pub order_by: Option<Vec<ChaindataSort>>,
}

impl ChaindataPayloadRules for ChaindataFilterPayload {
    fn rules(&self) -> Vec<FieldError> {
        ChaindataDateRange::rule(self.date.as_ref(), "date")
    }
}

chaindata_request!(
    /// Body of the smart-money DCA feed, the perp leaderboard and the perp screener.
    ChaindataFilterRequest(ChaindataFilterPayload)
);

fn chain_ethereum() -> Chain {
    Chain::Ethereum
}

/// Payload of the `profiler/address/*` routes: `walletAddresses` or `entityId`, at least one.
/// The upstream takes one `address` or an `entity_name`; svc queries each wallet and joins the
/// rows. When both are given the wallets are profiled and `entityId` is ignored.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[schemars(extend("anyOf" = [{ "required": ["walletAddresses"] }, { "required": ["entityId"] }]))]
pub struct ChaindataProfilerPayload {
    /// Wallets to profile, 1–20, each well-formed for `chain` (0x + 40 hex on EVM chains,
    /// base58 on Solana).
    #[serde(rename = "walletAddresses")]
    #[schemars(length(min = 1, max = 20))]
    #[garde(skip)] // checked in `rules`: garde would name the field `wallet_addresses`
    pub wallet_addresses: Option<Vec<String>>,
    /// An entity to profile instead of wallets, e.g. `Binance` (1–128 characters).
    #[serde(rename = "entityId")]
    #[schemars(length(min = 1, max = 128))]
    #[garde(skip)] // checked in `rules`, like `walletAddresses`
    pub entity_id: Option<String>,
    /// Chain of the wallets (default `ethereum`).
    #[serde(default = "chain_ethereum")]
    #[garde(skip)]
    pub chain: Chain,
    /// Days to cover (historical balances, transactions, counterparties, PnL, transfers).
    #[garde(dive)]
    pub date: Option<ChaindataDateRange>,
    /// Leave out tokens the upstream flags as spam (balances and transactions; upstream default true).
    #[garde(skip)]
    pub hide_spam_token: Option<bool>,
    /// Upstream filters, forwarded unchanged (ranges as `{"min": x, "max": y}`, token lists).
    #[garde(skip)]
    pub filters: Option<Map<String, Value>>,
    /// Page to return (default page 1 of 100 rows; labels and PnL summary are not paged).
    #[garde(dive)]
    pub pagination: Option<ChaindataPaging>,
    /// Sort keys, at most 5.
    #[garde(length(max = 5), dive)]
    pub order_by: Option<Vec<ChaindataSort>>,
}

impl ChaindataPayloadRules for ChaindataProfilerPayload {
    fn rules(&self) -> Vec<FieldError> {
        let mut errors = ChaindataDateRange::rule(self.date.as_ref(), "date");
        let at = |field: &str| [Loc::from(field)];
        match (&self.wallet_addresses, &self.entity_id) {
            // Neither field is required alone, so this is not a `missing` field error.
            (None, None) => errors.push(FieldError::new(
                at("walletAddresses"),
                "give walletAddresses (1-20 wallets) or entityId",
                "value_error",
            )),
            (Some(wallets), _) if wallets.is_empty() || wallets.len() > 20 => errors.push(FieldError::new(
                at("walletAddresses"),
                format!("give 1 to 20 wallets, not {}", wallets.len()),
                "value_error",
            )),
            (Some(wallets), _) => {
                for (i, wallet) in wallets.iter().enumerate() {
                    if let Err(e) = Address::parse_for(self.chain, wallet) {
                        errors.push(FieldError::new(
                            [Loc::from("walletAddresses"), Loc::Index(i)],
                            format!("{e} for chain {}", self.chain),
                            "value_error",
                        ));
                    }
                }
            }
            (None, Some(entity)) if entity.trim().is_empty() || entity.chars().count() > 128 => {
                errors.push(FieldError::new(
                    at("entityId"),
                    "entityId must be 1-128 characters, not blank",
                    "value_error",
                ));
            }
            (None, Some(_)) => {}
        }
        errors
    }
}

chaindata_request!(
    /// Body of the profiler routes.
    ChaindataProfilerRequest(ChaindataProfilerPayload)
);

/// Side of a who-bought-sold query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChaindataBuyOrSell {
    /// Buyers only.
    Buy,
    /// Sellers only.
    Sell,
}

/// Payload of the token routes (`tgm/*` except the screeners and the perp routes):
/// `token_address` and `chain` are required, and the address must be well-formed for the chain.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataTgmPayload {
    /// Token contract (0x + 40 hex on EVM chains) or mint (base58 on Solana).
    #[garde(length(min = 1, max = 64))]
    pub token_address: String,
    /// Chain of the token (DCA routes: `solana`).
    #[garde(skip)]
    pub chain: Chain,
    /// Days to cover (who-bought-sold and flows: default yesterday and today, UTC; trades,
    /// transfers, leaderboards).
    #[garde(dive)]
    pub date: Option<ChaindataDateRange>,
    /// Time frame such as `5m`, `1h`, `1d`, `7d`, `1M` (flow intelligence, token information, OHLCV).
    #[garde(pattern("^[0-9]{1,3}[mhdwM]$"))]
    pub timeframe: Option<String>,
    /// Buyers or sellers only (who-bought-sold).
    #[garde(skip)]
    pub buy_or_sell: Option<ChaindataBuyOrSell>,
    /// Smart-money trades only (DEX trades).
    #[garde(skip)]
    pub only_smart_money: Option<bool>,
    /// Holder segment, e.g. `all_holders` (default), `smart_money`, `whale`, `exchange` (holders).
    #[garde(pattern("^[a-z_]{1,40}$"))]
    pub label_type: Option<String>,
    /// One row per entity instead of per wallet (holders).
    #[garde(skip)]
    pub aggregate_by_entity: Option<bool>,
    /// Holder segment whose flows to return, e.g. `smart_money`, `whale`, `exchange` (flows).
    #[garde(pattern("^[a-z_]{1,40}$"))]
    pub label: Option<String>,
    /// Upstream filters, forwarded unchanged (smart-money label lists, ranges as `{"min": x, "max": y}`).
    #[garde(skip)]
    pub filters: Option<Map<String, Value>>,
    /// Page to return (default page 1 of 100 rows).
    #[garde(dive)]
    pub pagination: Option<ChaindataPaging>,
    /// Sort keys, at most 5.
    #[garde(length(max = 5), dive)]
    pub order_by: Option<Vec<ChaindataSort>>,
}

impl ChaindataPayloadRules for ChaindataTgmPayload {
    fn rules(&self) -> Vec<FieldError> {
        let mut errors = ChaindataDateRange::rule(self.date.as_ref(), "date");
        if let Err(e) = Address::parse_for(self.chain, &self.token_address) {
            errors.push(FieldError::new(
                [Loc::from("token_address")],
                format!("{e} for chain {}", self.chain),
                "value_error",
            ));
        }
        errors
    }
}

chaindata_request!(
    /// Body of the token routes.
    ChaindataTgmRequest(ChaindataTgmPayload)
);

/// Payload of `tgm/token-screener`: it screens many tokens, so it takes `chains` instead of a
/// token address.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataScreenerPayload {
    /// Chains to screen, at least one.
    #[garde(length(min = 1, max = 15))]
    pub chains: Vec<Chain>,
    /// Window of the volume and flow columns, e.g. `1h`, `24h`, `7d`.
    #[garde(pattern("^[0-9]{1,3}[mhdwM]$"))]
    pub timeframe: Option<String>,
    /// Upstream filters, forwarded unchanged: `only_smart_money`, ranges as `{"min": x, "max": y}`
    /// (`market_cap_usd`, `liquidity`, `token_age_days`, `volume`, ...).
    #[garde(skip)]
    pub filters: Option<Map<String, Value>>,
    /// Page to return (default page 1 of 100 rows).
    #[garde(dive)]
    pub pagination: Option<ChaindataPaging>,
    /// Sort keys, at most 5.
    #[garde(length(max = 5), dive)]
    pub order_by: Option<Vec<ChaindataSort>>,
}

impl ChaindataPayloadRules for ChaindataScreenerPayload {}

chaindata_request!(
    /// Body of the token screener.
    ChaindataScreenerRequest(ChaindataScreenerPayload)
);

/// Payload of the per-coin perp-DEX routes (`tgm/perp-trades`, `tgm/perp-pnl-leaderboard`,
/// `tgm/perp-positions`): perp-DEX markets have no chain or contract, so the coin is named by
/// `token_symbol`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataPerpPayload {
    /// Perp-DEX coin, e.g. `BTC`, `ETH`, `kPEPE`.
    #[garde(pattern("^[A-Za-z0-9]{1,20}$"))]
    pub token_symbol: String,
    /// Days to cover (trades and PnL leaderboard).
    #[garde(dive)]
    pub date: Option<ChaindataDateRange>,
    /// Holder segment, e.g. `all_traders`, `smart_money`, `whale` (positions).
    #[garde(pattern("^[a-z_]{1,40}$"))]
    pub label_type: Option<String>,
    /// Upstream filters, forwarded unchanged (ranges as `{"min": x, "max": y}`, `side`, ...).
    #[garde(skip)]
    pub filters: Option<Map<String, Value>>,
    /// Page to return (default page 1 of 100 rows).
    #[garde(dive)]
    pub pagination: Option<ChaindataPaging>,
    /// Sort keys, at most 5.
    #[garde(length(max = 5), dive)]
    pub order_by: Option<Vec<ChaindataSort>>,
}

impl ChaindataPayloadRules for ChaindataPerpPayload {
    fn rules(&self) -> Vec<FieldError> {
        ChaindataDateRange::rule(self.date.as_ref(), "date")
    }
}

chaindata_request!(
    /// Body of the per-coin perp-DEX routes.
    ChaindataPerpRequest(ChaindataPerpPayload)
);

// ---- outputs: envelopes -------------------------------------------------------------------

/// Paging facts of a list answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPagination {
    /// Page number, from 1.
    pub page: u32,
    /// Rows per page.
    pub per_page: u32,
    /// True when no page follows this one.
    pub is_last_page: bool,
}

/// A list answer: one page of rows.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "{T}List")]
pub struct ChaindataList<T> {
    /// The rows of this page.
    pub data: Vec<T>,
    /// Where this page sits.
    pub pagination: ChaindataPagination,
}

/// An object answer (token information, PnL summary, flow intelligence).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "{T}Response")]
pub struct ChaindataObject<T> {
    /// The object.
    pub data: T,
}

/// The upstream sends some counts as strings (`"12"`); svc answers integers.
fn count_from_number_or_text<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Count {
        Number(u64),
        Text(String),
    }
    match Count::deserialize(d)? {
        Count::Number(n) => Ok(n),
        Count::Text(s) => s.trim().parse().map_err(serde::de::Error::custom),
    }
}

// ---- outputs: smart money -----------------------------------------------------------------

/// A token with its smart-money net flows (`smart-money/netflow`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataNetflowRow {
    /// Token contract or mint.
    pub token_address: String,
    /// Ticker.
    pub token_symbol: String,
    /// Net USD flow of smart money over the last hour (negative = outflow).
    pub net_flow_1h_usd: f64,
    /// Net USD flow over 24 hours.
    pub net_flow_24h_usd: f64,
    /// Net USD flow over 7 days.
    pub net_flow_7d_usd: f64,
    /// Net USD flow over 30 days.
    pub net_flow_30d_usd: f64,
    /// Chain, lowercase (e.g. `solana`).
    pub chain: String,
    /// Sectors, e.g. `Memecoins`.
    #[serde(default)]
    pub token_sectors: Vec<String>,
    /// Smart-money wallets trading the token.
    pub trader_count: u32,
    /// Days since the token's deployment.
    pub token_age_days: Option<u32>,
    /// Market cap in USD, when known.
    pub market_cap_usd: Option<f64>,
}

/// A token smart money holds (`smart-money/holdings`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataHoldingRow {
    /// Chain, lowercase.
    pub chain: String,
    /// Token contract or mint.
    pub token_address: String,
    /// Ticker.
    pub token_symbol: String,
    /// Sectors.
    #[serde(default)]
    pub token_sectors: Vec<String>,
    /// USD value smart money holds.
    pub value_usd: f64,
    /// Change of the held balance over 24 hours, percent.
    pub balance_24h_percent_change: Option<f64>,
    /// Smart-money wallets holding it.
    pub holders_count: u32,
    /// Share of all smart-money holdings on the chain, percent.
    pub share_of_holdings_percent: Option<f64>,
    /// Days since deployment.
    pub token_age_days: Option<u32>,
    /// Market cap in USD.
    pub market_cap_usd: Option<f64>,
}

/// A DEX swap by a smart-money wallet (`smart-money/dex-trades`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataSmartMoneyDexTradeRow {
    /// Chain, lowercase.
    pub chain: String,
    /// Block time.
    pub block_timestamp: Timestamp,
    /// Transaction hash.
    pub transaction_hash: String,
    /// Trader wallet.
    pub trader_address: String,
    /// Trader label, e.g. `Smart Trader`.
    pub trader_address_label: Option<String>,
    /// Token bought.
    pub token_bought_address: String,
    /// Token sold.
    pub token_sold_address: String,
    /// Amount bought, in token units.
    pub token_bought_amount: f64,
    /// Amount sold, in token units.
    pub token_sold_amount: f64,
    /// Ticker bought.
    pub token_bought_symbol: String,
    /// Ticker sold.
    pub token_sold_symbol: String,
    /// Age of the token bought, days.
    pub token_bought_age_days: Option<u32>,
    /// Age of the token sold, days.
    pub token_sold_age_days: Option<u32>,
    /// Market cap of the token bought, USD.
    pub token_bought_market_cap: Option<f64>,
    /// Market cap of the token sold, USD.
    pub token_sold_market_cap: Option<f64>,
    /// Fully diluted value of the token bought, USD.
    pub token_bought_fdv: Option<f64>,
    /// Fully diluted value of the token sold, USD.
    pub token_sold_fdv: Option<f64>,
    /// Trade value, USD.
    pub trade_value_usd: f64,
}

/// An aggregator DCA order by a smart-money wallet (`smart-money/agg-dca`, Solana).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataSmartMoneyDcaRow {
    /// When the order was created.
    pub dca_created_at: Timestamp,
    /// When the order last changed.
    pub dca_updated_at: Option<Timestamp>,
    /// Trader wallet.
    pub trader_address: String,
    /// Creating transaction.
    pub transaction_hash: String,
    /// Trader label.
    pub trader_address_label: Option<String>,
    /// The order's vault account.
    pub dca_vault_address: String,
    /// Mint of the token spent.
    pub input_token_address: String,
    /// Mint of the token bought.
    pub output_token_address: String,
    /// Amount deposited, in input-token units.
    pub deposit_token_amount: f64,
    /// Amount spent so far, in input-token units.
    pub token_spent_amount: f64,
    /// Amount received so far, in output-token units.
    pub output_token_redeemed_amount: f64,
    /// Order status as the upstream states it, e.g. `Active`, `Closed`.
    pub dca_status: String,
    /// Ticker spent.
    pub input_token_symbol: String,
    /// Ticker bought.
    pub output_token_symbol: String,
    /// Deposit in USD.
    pub deposit_value_usd: f64,
}

/// One day of a smart-money holding (`smart-money/historical-holdings`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataHistoricalHoldingRow {
    /// Day, `YYYY-MM-DD`.
    pub date: String,
    /// Chain, lowercase.
    pub chain: String,
    /// Token contract or mint.
    pub token_address: String,
    /// Ticker.
    pub token_symbol: String,
    /// Sectors.
    #[serde(default)]
    pub token_sectors: Vec<String>,
    /// Smart-money labels among the holders.
    #[serde(default)]
    pub smart_money_labels: Vec<String>,
    /// Balance held, token units.
    pub balance: f64,
    /// Value held, USD.
    pub value_usd: f64,
    /// Balance change over the previous 24 hours, percent.
    pub balance_24h_percent_change: Option<f64>,
    /// Smart-money wallets holding it.
    pub holders_count: u32,
    /// Share of all smart-money holdings, percent.
    pub share_of_holdings_percent: Option<f64>,
    /// Days since deployment.
    pub token_age_days: Option<u32>,
    /// Market cap in USD.
    pub market_cap_usd: Option<f64>,
}

/// A perp-DEX trade (`smart-money/perp-trades`, `tgm/perp-trades`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPerpTradeRow {
    /// Trader label.
    pub trader_address_label: Option<String>,
    /// Trader wallet.
    pub trader_address: String,
    /// Coin, e.g. `BTC`.
    pub token_symbol: String,
    /// `Long` or `Short`.
    pub side: String,
    /// What the trade did to the position, e.g. `Open`, `Add`, `Reduce`, `Close`.
    pub action: String,
    /// Size, in coins.
    pub token_amount: f64,
    /// Fill price, USD.
    pub price_usd: f64,
    /// Trade value, USD.
    pub value_usd: f64,
    /// Order type as the upstream names it, e.g. `Market`, `Limit`.
    #[serde(rename = "type")]
    pub order_type: Option<String>,
    /// Fill time.
    pub block_timestamp: Timestamp,
    /// Transaction hash.
    pub transaction_hash: String,
}

// ---- outputs: profiler --------------------------------------------------------------------

/// A token balance of a wallet (`profiler/address/balances`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataBalanceRow {
    /// Chain, lowercase.
    pub chain: String,
    /// Wallet holding the balance.
    pub address: String,
    /// Token contract or mint.
    pub token_address: String,
    /// Ticker.
    pub token_symbol: String,
    /// Token name.
    pub token_name: String,
    /// Balance, token units.
    pub token_amount: f64,
    /// Price, USD (absent for unpriced tokens).
    pub price_usd: Option<f64>,
    /// Value, USD (absent for unpriced tokens).
    pub value_usd: Option<f64>,
}

/// A token balance at a point in time (`profiler/address/historical-balances`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataHistoricalBalanceRow {
    /// Time of the balance.
    pub block_timestamp: Timestamp,
    /// Token contract or mint.
    pub token_address: String,
    /// Chain, lowercase.
    pub chain: String,
    /// Ticker.
    pub token_symbol: String,
    /// Balance, token units.
    pub token_amount: f64,
    /// Value then, USD.
    pub value_usd: Option<f64>,
}

/// One token movement inside a wallet transaction.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataTokenMovement {
    /// Ticker.
    pub token_symbol: String,
    /// Amount, token units.
    pub token_amount: f64,
    /// Price, USD.
    pub price_usd: Option<f64>,
    /// Value, USD.
    pub value_usd: Option<f64>,
    /// Token contract or mint.
    pub token_address: String,
    /// Chain, lowercase.
    pub chain: String,
    /// Sender.
    pub from_address: String,
    /// Recipient.
    pub to_address: String,
    /// Sender label.
    pub from_address_label: Option<String>,
    /// Recipient label.
    pub to_address_label: Option<String>,
}

/// A wallet transaction (`profiler/address/transactions`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataTransactionRow {
    /// Chain, lowercase.
    pub chain: String,
    /// Method or program instruction called, e.g. `swap`.
    pub method: String,
    /// Tokens that left the wallet.
    #[serde(default)]
    pub tokens_sent: Vec<ChaindataTokenMovement>,
    /// Tokens that reached the wallet.
    #[serde(default)]
    pub tokens_received: Vec<ChaindataTokenMovement>,
    /// Total value moved, USD.
    pub volume_usd: Option<f64>,
    /// Block time.
    pub block_timestamp: Timestamp,
    /// Transaction hash.
    pub transaction_hash: String,
    /// Where the upstream saw the transaction, e.g. `Transfer`, `DEX`.
    pub source_type: Option<String>,
}

/// A token exchanged with a counterparty.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataCounterpartyToken {
    /// Token contract or mint.
    pub token_address: String,
    /// Ticker.
    pub token_symbol: String,
    /// Token name.
    pub token_name: Option<String>,
    /// Transfers of this token with the counterparty (the upstream sends a string).
    #[serde(deserialize_with = "count_from_number_or_text")]
    pub num_transfer: u64,
}

/// A wallet's counterparty (`profiler/address/counterparties`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataCounterpartyRow {
    /// Counterparty wallet.
    pub counterparty_address: String,
    /// Its labels (a list upstream).
    #[serde(default)]
    pub counterparty_address_label: Vec<String>,
    /// Interactions with it.
    pub interaction_count: u32,
    /// Volume with it both ways, USD.
    pub total_volume_usd: f64,
    /// Received from it, USD.
    pub volume_in_usd: f64,
    /// Sent to it, USD.
    pub volume_out_usd: f64,
    /// Tokens exchanged with it.
    #[serde(default)]
    pub tokens_info: Vec<ChaindataCounterpartyToken>,
}

/// A wallet related to a profiled one (`profiler/address/related-wallets`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataRelatedWalletRow {
    /// Related wallet.
    pub address: String,
    /// Its label.
    pub address_label: Option<String>,
    /// How it relates, e.g. `First Funder`, `Deployed Contract`.
    pub relation: String,
    /// Transaction establishing the relation.
    pub transaction_hash: String,
    /// When.
    pub block_timestamp: Timestamp,
    /// Rank of the relation as the upstream orders them.
    pub order: Option<u32>,
    /// Chain, lowercase.
    pub chain: String,
}

/// A token among a wallet's best realised trades.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPnlTopToken {
    /// Realised PnL, USD.
    pub realized_pnl: f64,
    /// Realised ROI, percent.
    pub realized_roi: f64,
    /// Token contract or mint.
    pub token_address: String,
    /// Ticker.
    pub token_symbol: String,
    /// Chain, lowercase.
    pub chain: String,
}

/// Realised PnL summary of wallets (`profiler/address/pnl-summary`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPnlSummary {
    /// The five tokens with the largest realised PnL.
    #[serde(default)]
    pub top5_tokens: Vec<ChaindataPnlTopToken>,
    /// Tokens traded.
    pub traded_token_count: u32,
    /// Trades.
    pub traded_times: u32,
    /// Realised PnL, USD.
    pub realized_pnl_usd: f64,
    /// Realised PnL, percent of cost.
    pub realized_pnl_percent: f64,
    /// Share of profitable tokens, 0–1.
    pub win_rate: f64,
}

/// A wallet's PnL in one token (`profiler/address/pnl`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPnlRow {
    /// Token contract or mint.
    pub token_address: String,
    /// Ticker.
    pub token_symbol: String,
    /// Price now, USD.
    pub token_price: Option<f64>,
    /// Realised ROI, percent.
    pub roi_percent_realised: Option<f64>,
    /// Realised PnL, USD.
    pub pnl_usd_realised: f64,
    /// Unrealised PnL, USD.
    pub pnl_usd_unrealised: f64,
    /// Unrealised ROI, percent.
    pub roi_percent_unrealised: Option<f64>,
    /// Bought, token units.
    pub bought_amount: f64,
    /// Bought, USD.
    pub bought_usd: f64,
    /// Cost basis of what is still held, USD.
    pub cost_basis_usd: Option<f64>,
    /// Sold, token units.
    pub sold_amount: f64,
    /// Sold, USD.
    pub sold_usd: f64,
    /// Average sale price, USD.
    pub avg_sold_price_usd: Option<f64>,
    /// Held now, token units.
    pub holding_amount: f64,
    /// Held now, USD.
    pub holding_usd: f64,
    /// Buys (the upstream sends a string).
    #[serde(deserialize_with = "count_from_number_or_text")]
    pub nof_buys: u64,
    /// Sells (the upstream sends a string).
    #[serde(deserialize_with = "count_from_number_or_text")]
    pub nof_sells: u64,
    /// Largest balance ever held, token units.
    pub max_balance_held: Option<f64>,
    /// Largest balance ever held, USD.
    pub max_balance_held_usd: Option<f64>,
}

/// An NFT a wallet holds (`profiler/address/nft-holdings`). The upstream's shape is
/// unconfirmed; svc answers this normalised row.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataNftHoldingRow {
    /// Collection contract.
    pub collection_address: String,
    /// Collection name.
    pub collection_name: String,
    /// Token id within the collection (a decimal string; ids exceed 64 bits).
    pub token_id: String,
    /// Chain, lowercase.
    pub chain: String,
    /// Collection floor price, USD.
    pub floor_price_usd: Option<f64>,
    /// Estimated value of this NFT, USD.
    pub value_usd: Option<f64>,
}

/// A token transfer (`tgm/transfers`; also `profiler/address/token-transfers`, whose upstream
/// shape is unconfirmed and is answered in this same row).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataTransferRow {
    /// Block time.
    pub block_timestamp: Timestamp,
    /// Transaction hash.
    pub transaction_hash: String,
    /// Sender.
    pub from_address: String,
    /// Recipient.
    pub to_address: String,
    /// Sender label.
    pub from_address_label: Option<String>,
    /// Recipient label.
    pub to_address_label: Option<String>,
    /// Kind of transfer as the upstream names it, e.g. `Transfer`, `DEX`, `CEX`.
    pub transaction_type: String,
    /// Amount, token units.
    pub transfer_amount: f64,
    /// Value, USD.
    pub transfer_value_usd: Option<f64>,
}

/// A label of a wallet (`profiler/address/labels`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataLabelRow {
    /// Label, e.g. `Smart Trader`, `Binance: Hot Wallet`.
    pub label: String,
    /// Category, e.g. `smart_money`, `cex`, `fund`.
    pub category: String,
    /// What the label means.
    pub definition: String,
    /// When a smart-money label was earned, `YYYY-MM-DD` (smart-money labels only).
    #[serde(rename = "smEarnedDate")]
    pub sm_earned_date: Option<String>,
    /// Full name of the entity behind the wallet.
    pub fullname: Option<String>,
}

// ---- outputs: perp leaderboard ------------------------------------------------------------

/// A perp-DEX trader on the leaderboard (`perp-leaderboard`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPerpLeaderRow {
    /// Trader wallet.
    pub trader_address: String,
    /// Trader label.
    pub trader_address_label: Option<String>,
    /// PnL over the range, USD.
    pub total_pnl: f64,
    /// ROI over the range, percent.
    pub roi: f64,
    /// Account value now, USD.
    pub account_value: f64,
}

// ---- outputs: token god mode --------------------------------------------------------------

/// Net flows of one token by holder cohort (`tgm/flow-intelligence`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataFlowIntelligence {
    /// Public figures' net flow, USD (positive = accumulating).
    pub public_figure_net_flow_usd: f64,
    /// Public figures' average flow per wallet, USD.
    pub public_figure_avg_flow_usd: f64,
    /// Public-figure wallets.
    pub public_figure_wallet_count: u32,
    /// Top-PnL wallets' net flow, USD.
    pub top_pnl_net_flow_usd: f64,
    /// Top-PnL wallets' average flow, USD.
    pub top_pnl_avg_flow_usd: f64,
    /// Top-PnL wallets.
    pub top_pnl_wallet_count: u32,
    /// Whales' net flow, USD.
    pub whale_net_flow_usd: f64,
    /// Whales' average flow, USD.
    pub whale_avg_flow_usd: f64,
    /// Whale wallets.
    pub whale_wallet_count: u32,
    /// Smart traders' net flow, USD.
    pub smart_trader_net_flow_usd: f64,
    /// Smart traders' average flow, USD.
    pub smart_trader_avg_flow_usd: f64,
    /// Smart-trader wallets.
    pub smart_trader_wallet_count: u32,
    /// Exchanges' net flow, USD (positive = deposits to exchanges).
    pub exchange_net_flow_usd: f64,
    /// Exchanges' average flow, USD.
    pub exchange_avg_flow_usd: f64,
    /// Exchange wallets.
    pub exchange_wallet_count: u32,
    /// Fresh wallets' net flow, USD.
    pub fresh_wallets_net_flow_usd: f64,
    /// Fresh wallets' average flow, USD.
    pub fresh_wallets_avg_flow_usd: f64,
    /// Fresh wallets.
    pub fresh_wallets_wallet_count: u32,
}

/// A buyer or seller of one token (`tgm/who-bought-sold`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataWhoBoughtSoldRow {
    /// Wallet.
    pub address: String,
    /// Its label.
    pub address_label: Option<String>,
    /// Bought, token units.
    pub bought_token_volume: f64,
    /// Sold, token units.
    pub sold_token_volume: f64,
    /// Traded both ways, token units.
    pub token_trade_volume: f64,
    /// Bought, USD.
    pub bought_volume_usd: f64,
    /// Sold, USD.
    pub sold_volume_usd: f64,
    /// Traded both ways, USD.
    pub trade_volume_usd: f64,
}

/// Direction of a token DEX trade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ChaindataTradeAction {
    /// The trader bought the token.
    Buy,
    /// The trader sold the token.
    Sell,
}

/// A DEX trade of one token (`tgm/dex-trades`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataTokenDexTradeRow {
    /// Block time.
    pub block_timestamp: Timestamp,
    /// Transaction hash.
    pub transaction_hash: String,
    /// Trader wallet.
    pub trader_address: String,
    /// Trader label.
    pub trader_address_label: Option<String>,
    /// `BUY` or `SELL` of the token.
    pub action: ChaindataTradeAction,
    /// The token.
    pub token_address: String,
    /// Its name.
    pub token_name: Option<String>,
    /// Amount of the token, token units.
    pub token_amount: f64,
    /// The other side of the swap.
    pub traded_token_address: String,
    /// Its name.
    pub traded_token_name: Option<String>,
    /// Amount of the other token.
    pub traded_token_amount: f64,
    /// Swap price of the token, USD.
    pub estimated_swap_price_usd: Option<f64>,
    /// Trade value, USD.
    pub estimated_value_usd: Option<f64>,
}

/// A holder of one token (`tgm/holders`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataHolderRow {
    /// Wallet (or entity, when aggregated).
    pub address: String,
    /// Its label.
    pub address_label: Option<String>,
    /// Balance, token units.
    pub token_amount: f64,
    /// Tokens sent out, all time.
    pub total_outflow: Option<f64>,
    /// Tokens received, all time.
    pub total_inflow: Option<f64>,
    /// Balance change over 24 hours, token units.
    pub balance_change_24h: Option<f64>,
    /// Balance change over 7 days, token units.
    pub balance_change_7d: Option<f64>,
    /// Balance change over 30 days, token units.
    pub balance_change_30d: Option<f64>,
    /// Share of supply, percent.
    pub ownership_percentage: f64,
    /// Value, USD.
    pub value_usd: Option<f64>,
}

/// One day of a token's flows for a holder segment (`tgm/flows`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataTokenFlowRow {
    /// Day, `YYYY-MM-DD`.
    pub date: String,
    /// Price that day, USD.
    pub price_usd: Option<f64>,
    /// Held by the segment, token units.
    pub token_amount: f64,
    /// Held by the segment, USD.
    pub value_usd: Option<f64>,
    /// Holders in the segment.
    pub holders_count: u32,
    /// Inflow transfers that day.
    pub total_inflows_count: u32,
    /// Outflow transfers that day.
    pub total_outflows_count: u32,
}

/// A trader on a token's PnL leaderboard (`tgm/pnl-leaderboard`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPnlLeaderRow {
    /// Trader wallet.
    pub trader_address: String,
    /// Trader label.
    pub trader_address_label: Option<String>,
    /// Token price now, USD.
    pub price_usd: Option<f64>,
    /// Realised PnL, USD.
    pub pnl_usd_realised: f64,
    /// Unrealised PnL, USD.
    pub pnl_usd_unrealised: f64,
    /// Total PnL, USD.
    pub pnl_usd_total: f64,
    /// Held now, token units.
    pub holding_amount: Option<f64>,
    /// Held now, USD.
    pub holding_usd: Option<f64>,
    /// Largest balance held, token units.
    pub max_balance_held: Option<f64>,
    /// Largest balance held, USD.
    pub max_balance_held_usd: Option<f64>,
    /// Share of the largest balance still held, 0–1.
    pub still_holding_balance_ratio: Option<f64>,
    /// Net flow into the wallet, USD.
    pub netflow_amount_usd: Option<f64>,
    /// Net flow into the wallet, token units.
    pub netflow_amount: Option<f64>,
    /// Total ROI, percent.
    pub roi_percent_total: Option<f64>,
    /// Realised ROI, percent.
    pub roi_percent_realised: Option<f64>,
    /// Unrealised ROI, percent.
    pub roi_percent_unrealised: Option<f64>,
    /// Trades in the token.
    #[serde(deserialize_with = "count_from_number_or_text")]
    pub nof_trades: u64,
}

/// An aggregator DCA order in one token (`tgm/agg-dca`, Solana).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataTgmDcaRow {
    /// When the order was created.
    pub since_timestamp: Timestamp,
    /// When it last executed.
    pub last_timestamp: Option<Timestamp>,
    /// Trader wallet.
    pub trader_address: String,
    /// Creating transaction.
    pub creation_hash: String,
    /// Trader label.
    pub trader_label: Option<String>,
    /// The order's vault account.
    pub dca_vault_address: String,
    /// Mint spent.
    pub input_mint_address: String,
    /// Mint bought.
    pub output_mint_address: String,
    /// Deposited, input-token units.
    pub deposit_amount: f64,
    /// Spent so far, input-token units.
    pub deposit_spent: f64,
    /// Received so far, output-token units.
    pub other_token_redeemed: f64,
    /// Status as the upstream states it, e.g. `Active`, `Closed`.
    pub status: String,
    /// Ticker spent.
    pub token_input: String,
    /// Ticker bought.
    pub token_output: String,
    /// Deposit, USD.
    pub deposit_usd_value: f64,
}

/// A token found by the screener (`tgm/token-screener`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataScreenerRow {
    /// Chain, lowercase.
    pub chain: String,
    /// Token contract or mint.
    pub token_address: String,
    /// Ticker.
    pub token_symbol: String,
    /// Token name.
    pub token_name: String,
    /// Market cap, USD.
    pub market_cap_usd: Option<f64>,
    /// Price, USD.
    pub price_usd: f64,
    /// Price change over the time frame, percent.
    pub price_change: Option<f64>,
    /// Volume over the time frame, USD.
    pub volume: f64,
    /// Buy volume, USD.
    pub buy_volume: Option<f64>,
    /// Sell volume, USD.
    pub sell_volume: Option<f64>,
    /// Distinct buyers.
    pub unique_buyers: Option<u32>,
    /// Distinct sellers.
    pub unique_sellers: Option<u32>,
    /// Distinct traders (some upstream versions send this instead of buyers and sellers).
    pub nof_traders: Option<u32>,
    /// Buys.
    pub total_buys: Option<u32>,
    /// Sells.
    pub total_sells: Option<u32>,
    /// Net flow, USD.
    pub netflow: f64,
    /// Smart-money net flow, USD.
    pub smart_money_netflow: Option<f64>,
    /// Smart-money inflow, USD.
    pub smart_money_inflow: Option<f64>,
    /// Smart-money outflow, USD.
    pub smart_money_outflow: Option<f64>,
    /// Smart-money buy volume, USD.
    pub smart_money_buy_volume: Option<f64>,
    /// Smart-money sell volume, USD.
    pub smart_money_sell_volume: Option<f64>,
    /// Holders.
    pub total_holders: Option<u64>,
    /// Days since deployment.
    pub token_age_days: Option<u32>,
    /// Liquidity, USD (some upstream versions call it `liquidity`).
    #[serde(alias = "liquidity")]
    pub liquidity_usd: Option<f64>,
    /// Fully diluted value, USD.
    pub fdv_usd: Option<f64>,
}

/// A perp-DEX market found by the perp screener (`tgm/perp-screener`). The smart-money fields
/// are present when the query asks for smart money only.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPerpScreenerRow {
    /// Coin, e.g. `BTC`.
    pub token_symbol: String,
    /// Volume, USD.
    pub volume: f64,
    /// Buy volume, USD.
    pub buy_volume: Option<f64>,
    /// Sell volume, USD.
    pub sell_volume: Option<f64>,
    /// Buy volume minus sell volume, USD.
    pub buy_sell_pressure: Option<f64>,
    /// Distinct traders.
    pub trader_count: u32,
    /// Mark price, USD.
    pub mark_price: f64,
    /// Funding rate per hour, as a fraction.
    pub funding: f64,
    /// Open interest, USD.
    pub open_interest: f64,
    /// Price at the start of the range, USD.
    pub previous_price_usd: Option<f64>,
    /// Smart-money volume, USD.
    pub smart_money_volume: Option<f64>,
    /// Smart-money buy volume, USD.
    pub smart_money_buy_volume: Option<f64>,
    /// Smart-money sell volume, USD.
    pub smart_money_sell_volume: Option<f64>,
    /// Net change of smart-money positions, USD.
    pub net_position_change: Option<f64>,
    /// Smart-money longs open now, USD.
    pub current_smart_money_position_longs_usd: Option<f64>,
    /// Smart-money shorts open now, USD.
    pub current_smart_money_position_shorts_usd: Option<f64>,
    /// Smart-money wallets long.
    pub smart_money_longs_count: Option<u32>,
    /// Smart-money wallets short.
    pub smart_money_shorts_count: Option<u32>,
}

/// A trader on a perp coin's PnL leaderboard (`tgm/perp-pnl-leaderboard`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPerpPnlLeaderRow {
    /// Trader wallet.
    pub trader_address: String,
    /// Trader label.
    pub trader_address_label: Option<String>,
    /// Coin price now, USD.
    pub price_usd: Option<f64>,
    /// Realised PnL, USD.
    pub pnl_usd_realised: f64,
    /// Unrealised PnL, USD.
    pub pnl_usd_unrealised: f64,
    /// Total PnL, USD.
    pub pnl_usd_total: f64,
    /// Position size now, coins.
    pub holding_amount: Option<f64>,
    /// Position value now, USD.
    pub position_value_usd: Option<f64>,
    /// Largest position held, coins.
    pub max_balance_held: Option<f64>,
    /// Largest position held, USD.
    pub max_balance_held_usd: Option<f64>,
    /// Share of the largest position still held, 0–1.
    pub still_holding_balance_ratio: Option<f64>,
    /// Net flow, USD.
    pub netflow_amount_usd: Option<f64>,
    /// Net flow, coins.
    pub netflow_amount: Option<f64>,
    /// Total ROI, percent.
    pub roi_percent_total: Option<f64>,
    /// Realised ROI, percent.
    pub roi_percent_realised: Option<f64>,
    /// Unrealised ROI, percent.
    pub roi_percent_unrealised: Option<f64>,
    /// Trades in the coin.
    #[serde(deserialize_with = "count_from_number_or_text")]
    pub nof_trades: u64,
}

/// An open position in one perp coin (`tgm/perp-positions`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPerpPositionRow {
    /// Wallet.
    pub address: String,
    /// Its label.
    pub address_label: Option<String>,
    /// `Long` or `Short`.
    pub side: String,
    /// Position value, USD.
    pub position_value_usd: f64,
    /// Position size, coins.
    pub position_size: f64,
    /// Leverage as the upstream writes it, e.g. `10X`.
    pub leverage: String,
    /// `cross` or `isolated`.
    pub leverage_type: Option<String>,
    /// Entry price, USD.
    pub entry_price: f64,
    /// Mark price, USD.
    pub mark_price: f64,
    /// Liquidation price, USD (absent when the position cannot be liquidated).
    pub liquidation_price: Option<f64>,
    /// Funding paid or received, USD.
    pub funding_usd: Option<f64>,
    /// Unrealised PnL, USD.
    pub upnl_usd: f64,
}

/// Supply, market and link facts of a token.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataTokenDetails {
    /// When the token was deployed.
    pub token_deployment_date: Option<Timestamp>,
    /// Website.
    pub website: Option<String>,
    /// Account on the social network.
    pub x: Option<String>,
    /// Telegram link.
    pub telegram: Option<String>,
    /// Market cap, USD.
    pub market_cap_usd: Option<f64>,
    /// Fully diluted value, USD.
    pub fdv_usd: Option<f64>,
    /// Circulating supply, token units.
    pub circulating_supply: Option<f64>,
    /// Total supply, token units.
    pub total_supply: Option<f64>,
}

/// Spot trading facts of a token over the requested time frame.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataSpotMetrics {
    /// Volume, USD.
    pub volume_total_usd: f64,
    /// Buy volume, USD.
    pub buy_volume_usd: Option<f64>,
    /// Sell volume, USD.
    pub sell_volume_usd: Option<f64>,
    /// Buys.
    pub total_buys: Option<u32>,
    /// Sells.
    pub total_sells: Option<u32>,
    /// Distinct buyers.
    pub unique_buyers: Option<u32>,
    /// Distinct sellers.
    pub unique_sellers: Option<u32>,
    /// Liquidity, USD.
    pub liquidity_usd: Option<f64>,
    /// Holders.
    pub total_holders: Option<u64>,
}

/// Profile of one token (`tgm/token-information`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataTokenInformation {
    /// Token name.
    pub name: String,
    /// Ticker.
    pub symbol: String,
    /// Token contract or mint.
    pub contract_address: String,
    /// Logo URL.
    pub logo: Option<String>,
    /// Supply, market and links.
    pub token_details: ChaindataTokenDetails,
    /// Trading over the time frame.
    pub spot_metrics: ChaindataSpotMetrics,
}

/// Reading of an indicator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChaindataIndicatorSignal {
    /// Points up.
    Bullish,
    /// Points down.
    Bearish,
    /// Points neither way.
    Neutral,
}

/// One indicator of a token (`tgm/indicators`). The upstream's shape is unconfirmed; svc
/// answers this normalised row.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataIndicatorRow {
    /// Indicator name, e.g. `smart_money_netflow_7d`, `holder_concentration`.
    pub indicator: String,
    /// Its value, in the indicator's own unit.
    pub value: f64,
    /// What the value suggests.
    pub signal: ChaindataIndicatorSignal,
    /// What the indicator measures, in one sentence.
    pub description: String,
}

/// A price candle (`tgm/token-ohlcv`). The upstream's field names are unconfirmed; svc answers
/// this normalised row.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataCandle {
    /// Start of the candle.
    pub t: Timestamp,
    /// Opening price, USD.
    pub open: f64,
    /// Highest price, USD.
    pub high: f64,
    /// Lowest price, USD.
    pub low: f64,
    /// Closing price, USD.
    pub close: f64,
    /// Volume in the candle, USD.
    pub volume_usd: f64,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use schemars::generate::SchemaSettings;
    use serde_json::json;

    use super::*;
    use crate::{InputError, RawInput};

    const USDC_BASE: &str = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913";
    const WSOL: &str = "So11111111111111111111111111111111111111112";

    fn route(path: &str) -> RouteSpec {
        routes().into_iter().find(|r| r.path.strip_prefix(CHAINDATA_PREFIX) == Some(path)).expect("route")
    }

    fn parse(spec: &RouteSpec, body: &Value) -> Result<(), InputError> {
        let bytes = serde_json::to_vec(body).expect("json");
        spec.parse_input(&RawInput { path: &[], query: None, body: Some(&bytes) }).map(|_| ())
    }

    fn locs(err: &InputError) -> Vec<Value> {
        err.errors.iter().map(|e| serde_json::to_value(&e.loc).expect("loc")).collect()
    }

    /// Asserts `body` is refused with an error at `loc` (relative to the payload).
    fn refused_at(spec: &RouteSpec, body: Value, loc: &[Value]) {
        let mut want = vec![json!("body"), json!("payload")];
        want.extend_from_slice(loc);
        let err = parse(spec, &body).expect_err(&format!("{} accepted {body}", spec.id));
        assert!(locs(&err).contains(&Value::Array(want.clone())), "{}: {body} gave {:?}, want {want:?}", spec.id, err);
    }

    /// A valid payload and the payloads breaking each rule of one payload kind, with the
    /// location the error must name (relative to the payload).
    fn payload_cases(kind: &str) -> (Value, Vec<(Value, Vec<Value>)>) {
        let dates = |from: &str, to: &str| json!({"from": from, "to": to});
        match kind {
            "ChaindataNetflowRequest" => (
                json!({"chains": ["solana", "base"]}),
                vec![
                    (json!({}), vec![json!("chains")]),
                    (json!({"chains": []}), vec![json!("chains")]),
                    (json!({"chains": ["dogechain"]}), vec![json!("chains"), json!(0)]),
                ],
            ),
            "ChaindataSmartMoneyRequest" => (
                json!({"chains": ["ethereum"]}),
                vec![
                    (json!({"chains": []}), vec![json!("chains")]),
                    (json!({"chains": "solana"}), vec![json!("chains")]),
                ],
            ),
            "ChaindataHistoricalHoldingsRequest" => (
                json!({"chains": ["solana"], "date_range": dates("2026-01-01", "2026-01-31")}),
                vec![
                    (
                        json!({"date_range": dates("2026/01/01", "2026-01-31")}),
                        vec![json!("date_range"), json!("from")],
                    ),
                    (json!({"date_range": dates("2026-02-01", "2026-01-31")}), vec![json!("date_range"), json!("to")]),
                    (json!({"chains": []}), vec![json!("chains")]),
                ],
            ),
            "ChaindataSmartMoneyPerpRequest" => (
                json!({"only_new_positions": true}),
                vec![(json!({"only_new_positions": "yes"}), vec![json!("only_new_positions")])],
            ),
            "ChaindataFilterRequest" => (
                json!({"date": dates("2026-01-01", "2026-01-07"), "filters": {"only_smart_money": true}}),
                vec![
                    (json!({"date": dates("2026-01-01", "7 Jan")}), vec![json!("date"), json!("to")]),
                    (json!({"date": dates("2026-01-08", "2026-01-07")}), vec![json!("date"), json!("to")]),
                    (json!({"filters": ["only_smart_money"]}), vec![json!("filters")]),
                ],
            ),
            "ChaindataProfilerRequest" => (
                json!({"walletAddresses": [USDC_BASE], "date": dates("2026-01-01", "2026-01-07")}),
                vec![
                    (json!({}), vec![json!("walletAddresses")]),
                    (json!({"chain": "solana"}), vec![json!("walletAddresses")]),
                    (json!({"walletAddresses": []}), vec![json!("walletAddresses")]),
                    (json!({"walletAddresses": vec![USDC_BASE; 21]}), vec![json!("walletAddresses")]),
                    (json!({"walletAddresses": [USDC_BASE, WSOL]}), vec![json!("walletAddresses"), json!(1)]),
                    (
                        json!({"walletAddresses": [USDC_BASE], "chain": "solana"}),
                        vec![json!("walletAddresses"), json!(0)],
                    ),
                    (json!({"entityId": ""}), vec![json!("entityId")]),
                    (json!({"entityId": "   "}), vec![json!("entityId")]),
                    (json!({"entityId": "Binance", "chain": "tron"}), vec![json!("chain")]),
                ],
            ),
            "ChaindataTgmRequest" => (
                json!({"token_address": USDC_BASE, "chain": "base", "timeframe": "1d"}),
                vec![
                    (json!({"chain": "base"}), vec![json!("token_address")]),
                    (json!({"token_address": USDC_BASE}), vec![json!("chain")]),
                    (json!({"token_address": USDC_BASE, "chain": "solana"}), vec![json!("token_address")]),
                    (json!({"token_address": WSOL, "chain": "ethereum"}), vec![json!("token_address")]),
                    (json!({"token_address": "0x1234", "chain": "base"}), vec![json!("token_address")]),
                    (
                        json!({"token_address": USDC_BASE, "chain": "base", "timeframe": "daily"}),
                        vec![json!("timeframe")],
                    ),
                    (
                        json!({"token_address": USDC_BASE, "chain": "base", "buy_or_sell": "hold"}),
                        vec![json!("buy_or_sell")],
                    ),
                    (
                        json!({"token_address": USDC_BASE, "chain": "base", "date": dates("2026-01-09", "2026-01-01")}),
                        vec![json!("date"), json!("to")],
                    ),
                ],
            ),
            "ChaindataScreenerRequest" => (
                json!({"chains": ["solana"], "timeframe": "24h"}),
                vec![
                    (json!({}), vec![json!("chains")]),
                    (json!({"chains": []}), vec![json!("chains")]),
                    (json!({"chains": ["solana"], "timeframe": "a day"}), vec![json!("timeframe")]),
                ],
            ),
            "ChaindataPerpRequest" => (
                json!({"token_symbol": "BTC", "label_type": "smart_money"}),
                vec![
                    (json!({}), vec![json!("token_symbol")]),
                    (json!({"token_symbol": "BTC-PERP"}), vec![json!("token_symbol")]),
                    (json!({"token_symbol": ""}), vec![json!("token_symbol")]),
                    (json!({"token_symbol": "ETH", "label_type": "Smart Money!"}), vec![json!("label_type")]),
                ],
            ),
            other => panic!("no cases for payload kind {other}: add them"),
        }
    }

    #[test]
    fn allowed_paths_has_the_thirty_three_listed_routes_once_each() {
        let paths = allowed_paths();
        assert_eq!(paths.len(), 33);
        assert_eq!(paths.iter().collect::<BTreeSet<_>>().len(), 33);
        assert_eq!(routes().len(), 33, "every route sits under CHAINDATA_PREFIX");
        for p in ["smart-money/netflow", "profiler/address/labels", "perp-leaderboard", "tgm/token-ohlcv"] {
            assert!(paths.contains(&p), "{p}");
        }
        assert!(paths.iter().all(|p| !p.contains('{') && !p.starts_with('/')));
    }

    #[test]
    fn every_route_is_priced_inside_the_contract_band() {
        let catalogue = crate::Catalogue::load().expect("catalogue");
        for r in routes() {
            let price = catalogue.get(r.id).expect("loaded").price;
            assert!((12_000..=1_200_000).contains(&price.min().atomic()), "{} costs {}", r.id, price.min());
            assert_eq!(price.min(), price.max(), "{} has a fixed price", r.id);
        }
    }

    #[test]
    fn route_ids_follow_the_paths_and_every_route_is_a_tagged_data_post() {
        for r in routes() {
            let path = r.path.strip_prefix(CHAINDATA_PREFIX).expect("prefix");
            let expected =
                format!("chaindata.{}", path.replace("/address/", ".address_").replace('/', ".").replace('-', "_"));
            assert_eq!(r.id, expected);
            assert_eq!(r.method, crate::HttpMethod::Post);
            assert_eq!(r.group, Group::Data);
            assert_eq!(r.tag, "chaindata");
            assert!(!r.description.is_empty() && !r.description.contains('\n'));
        }
    }

    #[test]
    fn every_route_accepts_a_valid_payload_and_refuses_each_broken_rule_at_its_field() {
        for spec in routes() {
            let (valid, broken) = payload_cases(&(spec.input.name)());
            parse(&spec, &json!({ "payload": valid })).unwrap_or_else(|e| panic!("{} refused {valid}: {e:?}", spec.id));
            for (payload, loc) in broken {
                refused_at(&spec, json!({ "payload": payload }), &loc);
            }
        }
    }

    #[test]
    fn every_route_bounds_paging_sorting_and_requires_the_payload() {
        for spec in routes() {
            let (valid, _) = payload_cases(&(spec.input.name)());
            let with = |key: &str, value: Value| {
                let mut p = valid.clone();
                p.as_object_mut().expect("object").insert(key.to_owned(), value);
                json!({ "payload": p })
            };
            parse(&spec, &with("pagination", json!({"page": 2, "per_page": 100}))).expect("page 2");
            parse(&spec, &with("order_by", json!([{"field": "value_usd", "direction": "DESC"}]))).expect("sort");
            refused_at(
                &spec,
                with("pagination", json!({"page": 0, "per_page": 10})),
                &[json!("pagination"), json!("page")],
            );
            refused_at(&spec, with("pagination", json!({"per_page": 101})), &[json!("pagination"), json!("per_page")]);
            refused_at(
                &spec,
                with("order_by", json!([{"field": "value_usd", "direction": "UP"}])),
                &[json!("order_by"), json!(0), json!("direction")],
            );
            refused_at(
                &spec,
                with("order_by", json!([{"field": "Value USD", "direction": "ASC"}])),
                &[json!("order_by"), json!(0), json!("field")],
            );
            let err = parse(&spec, &json!({})).expect_err("no payload");
            assert_eq!(locs(&err), vec![json!(["body", "payload"])], "{}", spec.id);
            let err = spec.parse_input(&RawInput::default()).expect_err("no body");
            assert_eq!(locs(&err), vec![json!(["body"])], "{}", spec.id);
        }
    }

    #[test]
    fn profiler_accepts_an_entity_alone_and_solana_wallets_on_solana() {
        let spec = route("profiler/address/balances");
        parse(&spec, &json!({"payload": {"entityId": "Binance"}})).expect("entity");
        parse(&spec, &json!({"payload": {"walletAddresses": [WSOL], "chain": "solana", "hide_spam_token": true}}))
            .expect("solana wallet");
        parse(&spec, &json!({"payload": {"walletAddresses": vec![USDC_BASE; 20]}})).expect("twenty wallets");
        let err = parse(&spec, &json!({"payload": {}})).expect_err("neither");
        assert_eq!(err.errors[0].kind, "value_error", "neither field is required alone");
        assert!(err.errors[0].msg.contains("entityId"), "{}", err.errors[0].msg);
    }

    #[test]
    fn the_perp_screener_needs_no_token_and_dca_feeds_take_an_empty_payload() {
        for path in ["tgm/perp-screener", "perp-leaderboard", "smart-money/agg-dca", "smart-money/holdings"] {
            parse(&route(path), &json!({"payload": {}})).unwrap_or_else(|e| panic!("{path}: {e:?}"));
        }
    }

    #[test]
    fn every_output_is_an_object_schema_with_documented_properties() {
        let mut generator = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true).into_generator();
        for spec in routes() {
            let schema = serde_json::to_value((spec.output.schema)(&mut generator)).expect("schema");
            assert_eq!(schema["type"], "object", "{}", spec.id);
            let props = schema["properties"].as_object().expect("properties");
            let data = &props["data"];
            let row = if data["type"] == "array" {
                assert!(props.contains_key("pagination"), "{}", spec.id);
                &data["items"]
            } else {
                data
            };
            let fields = row["properties"].as_object().unwrap_or_else(|| panic!("{}: row has no properties", spec.id));
            assert!(!fields.is_empty(), "{}", spec.id);
            for (name, field) in fields {
                assert!(field.get("description").is_some(), "{}.{name} undocumented", spec.id);
            }
        }
    }

    #[test]
    fn schema_names_are_family_prefixed_and_readable() {
        let mut generator = SchemaSettings::draft2020_12().into_generator();
        for spec in routes() {
            (spec.input.schema)(&mut generator);
            (spec.output.schema)(&mut generator);
        }
        let names: BTreeSet<String> = generator.definitions().keys().cloned().collect();
        for name in &names {
            assert!(name.starts_with("Chaindata") || name == "Timestamp" || name == "Chain", "{name}");
            assert!(!name.ends_with(|c: char| c.is_ascii_digit()), "{name} was renamed to avoid a clash");
        }
        for name in ["ChaindataNetflowRowList", "ChaindataTransferRowList", "ChaindataPnlSummaryResponse"] {
            assert!(names.contains(name), "{name} missing from {names:?}");
        }
    }

    #[test]
    fn input_schemas_show_the_limits() {
        let schema = schemars::generate::SchemaSettings::draft2020_12()
            .into_generator()
            .into_root_schema_for::<ChaindataProfilerPayload>();
        let schema = serde_json::to_value(schema).expect("schema");
        assert_eq!(schema["properties"]["walletAddresses"]["maxItems"], 20);
        assert_eq!(schema["properties"]["chain"]["default"], "ethereum");
        let paging = serde_json::to_value(
            SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<ChaindataPaging>(),
        )
        .expect("schema");
        assert_eq!(paging["properties"]["per_page"]["maximum"], 100);
        assert_eq!(paging["properties"]["page"]["minimum"], 1);
    }

    #[test]
    fn upstream_rows_deserialise_including_counts_sent_as_strings() {
        let netflow: ChaindataList<ChaindataNetflowRow> = serde_json::from_value(json!({
            "data": [{"token_address": "9BB6NFEcjBCtnNLFko2FqVQBq8HHM13kCyYcdQbgpump", "token_symbol": "FARTCOIN",
                "net_flow_1h_usd": 12034.5, "net_flow_24h_usd": 250000.0, "net_flow_7d_usd": -10000.0,
                "net_flow_30d_usd": 900000.0, "chain": "solana", "token_sectors": ["Memecoins"], "trader_count": 14,
                "token_age_days": 400, "market_cap_usd": 1.2e9}],
            "pagination": {"page": 1, "per_page": 100, "is_last_page": true}
        }))
        .expect("netflow fixture");
        assert_eq!(netflow.data[0].trader_count, 14);
        let token: ChaindataCounterpartyToken = serde_json::from_value(
            json!({"token_address": USDC_BASE, "token_symbol": "USDC", "token_name": "USD Coin", "num_transfer": "12"}),
        )
        .expect("string count");
        assert_eq!(token.num_transfer, 12);
        let screener: ChaindataScreenerRow = serde_json::from_value(json!({
            "chain": "base", "token_address": USDC_BASE, "token_symbol": "USDC", "token_name": "USD Coin",
            "price_usd": 1.0, "volume": 5.0, "netflow": 1.0, "liquidity": 7.0, "nof_traders": 3
        }))
        .expect("screener variant");
        assert_eq!(screener.liquidity_usd, Some(7.0));
        let label: ChaindataLabelRow = serde_json::from_value(
            json!({"label": "Smart Trader", "category": "smart_money", "definition": "d", "smEarnedDate": "2025-01-01"}),
        )
        .expect("label");
        assert_eq!(serde_json::to_value(&label).expect("json")["smEarnedDate"], "2025-01-01");
    }
}
