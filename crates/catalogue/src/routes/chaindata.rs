//! The on-chain analytics proxy: 33 upstream routes, each its own catalogue entry with its own
//! price, sharing five payload kinds. `POST {tools}/data-provider/chaindata/{path}` with body
//! `{"payload": {...}}`; any other `{path}` is a 422 listing [`allowed_paths`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use svc_domain::{Address, Chain};

use super::common::Timestamp;
use crate::{FieldError, Group, Loc, RouteInput, RouteSpec};

/// Path prefix of the chain-data proxy routes.
pub const CHAINDATA_PREFIX: &str = "/api/x402/svc-tools/data-provider/chaindata/";

/// The `{path}` values the proxy serves, derived from [`routes`].
pub fn allowed_paths() -> Vec<&'static str> {
    routes().iter().filter_map(|r| r.path.strip_prefix(CHAINDATA_PREFIX)).collect()
}

macro_rules! chaindata {
    ($id:literal, $path:literal, $input:ty, $output:ty, $desc:literal) => {
        RouteSpec::post::<$input, $output>(
            concat!("chaindata.", $id),
            concat!("/api/x402/svc-tools/data-provider/chaindata/", $path),
            $desc,
        )
        .group(Group::Data)
        .tag("chaindata")
    };
}

/// The chain-data routes.
pub fn routes() -> Vec<RouteSpec> {
    type L<T> = ChaindataList<T>;
    type O<T> = ChaindataObject<T>;
    vec![
        chaindata!(
            "smart_money.netflow",
            "smart-money/netflow",
            ChaindataNetflowRequest,
            L<NetflowRow>,
            "Tokens by smart-money net flow over 1 h, 24 h, 7 d and 30 d, per chain."
        ),
        chaindata!(
            "smart_money.holdings",
            "smart-money/holdings",
            ChaindataSmartMoneyRequest,
            L<HoldingRow>,
            "What smart money holds now: value, 24 h balance change, holder count, share of holdings."
        ),
        chaindata!(
            "smart_money.dex_trades",
            "smart-money/dex-trades",
            ChaindataSmartMoneyRequest,
            L<SmartDexTradeRow>,
            "Recent DEX trades by smart-money wallets with labels and USD values."
        ),
        chaindata!(
            "smart_money.agg_dca",
            "smart-money/agg-dca",
            ChaindataSmartMoneyRequest,
            L<DcaRow>,
            "Aggregator DCA orders opened by smart money on Solana."
        ),
        chaindata!(
            "smart_money.historical_holdings",
            "smart-money/historical-holdings",
            ChaindataSmartMoneyRequest,
            L<HistoricalHoldingRow>,
            "Daily smart-money holdings over a date range."
        ),
        chaindata!(
            "smart_money.perp_trades",
            "smart-money/perp-trades",
            ChaindataSmartMoneyRequest,
            L<PerpTradeRow>,
            "Perpetual trades by smart-money wallets."
        ),
        chaindata!(
            "profiler.address_balances",
            "profiler/address/balances",
            ChaindataProfilerRequest,
            L<BalanceRow>,
            "Current token balances of wallets or an entity, with USD values."
        ),
        chaindata!(
            "profiler.address_historical_balances",
            "profiler/address/historical-balances",
            ChaindataProfilerRequest,
            L<HistoricalBalanceRow>,
            "Token balances of wallets over time."
        ),
        chaindata!(
            "profiler.address_transactions",
            "profiler/address/transactions",
            ChaindataProfilerRequest,
            L<TransactionRow>,
            "Transactions of wallets with tokens sent and received."
        ),
        chaindata!(
            "profiler.address_counterparties",
            "profiler/address/counterparties",
            ChaindataProfilerRequest,
            L<CounterpartyRow>,
            "Who wallets trade with most: interaction counts and volumes."
        ),
        chaindata!(
            "profiler.address_related_wallets",
            "profiler/address/related-wallets",
            ChaindataProfilerRequest,
            L<RelatedWalletRow>,
            "Wallets related to the given ones (funders, deployers, linked accounts)."
        ),
        chaindata!(
            "profiler.address_pnl_summary",
            "profiler/address/pnl-summary",
            ChaindataProfilerRequest,
            O<PnlSummary>,
            "Realised PnL summary of wallets: win rate, top tokens, trade counts."
        ),
        chaindata!(
            "profiler.address_pnl",
            "profiler/address/pnl",
            ChaindataProfilerRequest,
            L<PnlRow>,
            "PnL of wallets per token, realised and unrealised."
        ),
        chaindata!(
            "profiler.address_nft_holdings",
            "profiler/address/nft-holdings",
            ChaindataProfilerRequest,
            L<NftHoldingRow>,
            "NFTs held by wallets with floor values."
        ),
        chaindata!(
            "profiler.address_token_transfers",
            "profiler/address/token-transfers",
            ChaindataProfilerRequest,
            L<TransferRow>,
            "Token transfers in and out of wallets."
        ),
        chaindata!(
            "profiler.address_labels",
            "profiler/address/labels",
            ChaindataProfilerRequest,
            L<LabelRow>,
            "Labels of a wallet: smart-money cohorts, funds, exchanges, entities."
        ),
        chaindata!(
            "perp_leaderboard",
            "perp-leaderboard",
            ChaindataLeaderboardRequest,
            L<PerpLeaderRow>,
            "Top perpetual traders by PnL and ROI."
        ),
        chaindata!(
            "tgm.flow_intelligence",
            "tgm/flow-intelligence",
            ChaindataTokenRequest,
            O<FlowIntelligence>,
            "Net flows of a token by holder cohort: whales, smart traders, funds, exchanges, fresh wallets."
        ),
        chaindata!(
            "tgm.who_bought_sold",
            "tgm/who-bought-sold",
            ChaindataTokenRequest,
            L<BuyerSellerRow>,
            "Who bought and sold a token, with labels and volumes."
        ),
        chaindata!(
            "tgm.dex_trades",
            "tgm/dex-trades",
            ChaindataTokenRequest,
            L<TokenDexTradeRow>,
            "DEX trades of a token with trader labels."
        ),
        chaindata!(
            "tgm.transfers",
            "tgm/transfers",
            ChaindataTokenRequest,
            L<TransferRow>,
            "Transfers of a token with sender and recipient labels."
        ),
        chaindata!(
            "tgm.holders",
            "tgm/holders",
            ChaindataTokenRequest,
            L<HolderRow>,
            "Top holders of a token with ownership share and balance changes."
        ),
        chaindata!(
            "tgm.flows",
            "tgm/flows",
            ChaindataTokenRequest,
            L<TokenFlowRow>,
            "Daily inflows and outflows of a token by holder segment."
        ),
        chaindata!(
            "tgm.pnl_leaderboard",
            "tgm/pnl-leaderboard",
            ChaindataTokenRequest,
            L<TokenPnlLeaderRow>,
            "Most profitable traders of a token."
        ),
        chaindata!(
            "tgm.agg_dca",
            "tgm/agg-dca",
            ChaindataTokenRequest,
            L<DcaRow>,
            "Aggregator DCA orders into or out of a Solana token."
        ),
        chaindata!(
            "tgm.token_screener",
            "tgm/token-screener",
            ChaindataScreenerRequest,
            L<ScreenerRow>,
            "Screen tokens by market cap, liquidity, age, volume and smart-money flow."
        ),
        chaindata!(
            "tgm.perp_screener",
            "tgm/perp-screener",
            ChaindataLeaderboardRequest,
            L<PerpScreenerRow>,
            "Screen perpetual markets by volume, open interest, funding and smart-money positioning."
        ),
        chaindata!(
            "tgm.perp_trades",
            "tgm/perp-trades",
            ChaindataPerpRequest,
            L<PerpTradeRow>,
            "Perpetual trades of one coin."
        ),
        chaindata!(
            "tgm.perp_pnl_leaderboard",
            "tgm/perp-pnl-leaderboard",
            ChaindataPerpRequest,
            L<TokenPnlLeaderRow>,
            "Most profitable traders of one perpetual coin."
        ),
        chaindata!(
            "tgm.perp_positions",
            "tgm/perp-positions",
            ChaindataPerpRequest,
            L<PerpPositionRow>,
            "Open positions in one perpetual coin with leverage and liquidation prices."
        ),
        chaindata!(
            "tgm.token_information",
            "tgm/token-information",
            ChaindataTokenRequest,
            O<TokenInformation>,
            "Token profile: supply, market cap, FDV, links, trading and holder metrics."
        ),
        chaindata!(
            "tgm.indicators",
            "tgm/indicators",
            ChaindataTokenRequest,
            L<IndicatorRow>,
            "Risk and momentum indicators of a token with a bullish/bearish reading."
        ),
        chaindata!(
            "tgm.token_ohlcv",
            "tgm/token-ohlcv",
            ChaindataTokenRequest,
            L<CandleRow>,
            "Price candles of a token (open, high, low, close, volume)."
        ),
    ]
}

// ---- inputs -------------------------------------------------------------------------------

/// Page of results.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, garde::Validate)]
pub struct ChaindataPage {
    /// Page number, from 1.
    #[garde(range(min = 1, max = 10_000))]
    pub page: u32,
    /// Rows per page (1–100).
    #[garde(range(min = 1, max = 100))]
    pub per_page: u32,
}

/// A sort key.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, garde::Validate)]
pub struct ChaindataOrder {
    /// Field to sort by, e.g. `net_flow_24h_usd`.
    #[garde(pattern("^[a-z0-9_]{1,64}$"))]
    pub field: String,
    /// `ASC` or `DESC`.
    #[garde(skip)]
    pub direction: ChaindataDirection,
}

/// Sort direction.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
pub enum ChaindataDirection {
    /// Ascending.
    #[serde(rename = "ASC")]
    Asc,
    /// Descending.
    #[serde(rename = "DESC")]
    Desc,
}

/// A date range, `YYYY-MM-DD`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, garde::Validate)]
pub struct ChaindataDates {
    /// First day.
    #[garde(pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub from: String,
    /// Last day.
    #[garde(pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub to: String,
}

macro_rules! wrapper {
    ($name:ident, $payload:ident, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
        pub struct $name {
            /// The upstream query.
            #[garde(dive)]
            pub payload: $payload,
        }

        impl RouteInput for $name {
            fn check(&self) -> Vec<FieldError> {
                self.payload
                    .check()
                    .into_iter()
                    .map(|mut e| {
                        e.loc.insert(0, Loc::from("payload"));
                        e
                    })
                    .collect()
            }
        }
    };
}

/// Fields every payload may carry, forwarded to the upstream as given.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataCommon {
    /// Upstream filters (ranges as `{"min":x,"max":y}`, label lists), forwarded unchanged.
    #[garde(skip)]
    pub filters: Option<Map<String, Value>>,
    /// Paging (default page 1, 100 per page).
    #[garde(dive)]
    pub pagination: Option<ChaindataPage>,
    /// Sort keys.
    #[garde(dive)]
    pub order_by: Option<Vec<ChaindataOrder>>,
    /// Date range.
    #[garde(dive)]
    pub date: Option<ChaindataDates>,
}

/// Payload of `smart-money/netflow`: `chains` is required.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataNetflowPayload {
    /// Chains to cover (at least one).
    #[garde(length(min = 1, max = 15))]
    pub chains: Vec<Chain>,
    /// Filters, paging, sorting.
    #[serde(flatten)]
    #[garde(dive)]
    pub common: ChaindataCommon,
}

impl ChaindataNetflowPayload {
    fn check(&self) -> Vec<FieldError> {
        Vec::new()
    }
}
wrapper!(ChaindataNetflowRequest, ChaindataNetflowPayload, "Body of `smart-money/netflow`.");

/// Payload of the other smart-money routes.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataSmartMoneyPayload {
    /// Chains to cover (all when absent).
    #[garde(inner(length(min = 1, max = 15)))]
    pub chains: Option<Vec<Chain>>,
    /// Date range (historical holdings).
    #[garde(dive)]
    pub date_range: Option<ChaindataDates>,
    /// Filters, paging, sorting.
    #[serde(flatten)]
    #[garde(dive)]
    pub common: ChaindataCommon,
}

impl ChaindataSmartMoneyPayload {
    fn check(&self) -> Vec<FieldError> {
        Vec::new()
    }
}
wrapper!(ChaindataSmartMoneyRequest, ChaindataSmartMoneyPayload, "Body of the smart-money routes.");

fn ethereum() -> Chain {
    Chain::Ethereum
}

/// Payload of the profiler routes: `walletAddresses` or `entityId`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(rename_all = "camelCase")]
pub struct ChaindataProfilerPayload {
    /// Wallets to profile (1–20), well-formed for `chain`.
    #[garde(inner(length(min = 1, max = 20)))]
    pub wallet_addresses: Option<Vec<String>>,
    /// An entity name instead of wallets (e.g. `Binance`).
    #[garde(inner(length(chars, min = 1, max = 128)))]
    pub entity_id: Option<String>,
    /// Chain (default `ethereum`).
    #[serde(default = "ethereum")]
    #[garde(skip)]
    pub chain: Chain,
    /// Filters, paging, sorting, dates.
    #[serde(flatten)]
    #[garde(dive)]
    pub common: ChaindataCommon,
}

impl ChaindataProfilerPayload {
    fn check(&self) -> Vec<FieldError> {
        match (&self.wallet_addresses, &self.entity_id) {
            (None, None) => vec![FieldError::new(
                [Loc::from("walletAddresses")],
                "Field required: give walletAddresses or entityId",
                "missing",
            )],
            (Some(addresses), _) => addresses
                .iter()
                .enumerate()
                .filter(|(_, a)| Address::parse_for(self.chain, a).is_err())
                .map(|(i, _)| {
                    FieldError::new(
                        [Loc::from("walletAddresses"), Loc::Index(i)],
                        format!("not a {} address", self.chain),
                        "value_error",
                    )
                })
                .collect(),
            (None, Some(_)) => Vec::new(),
        }
    }
}
wrapper!(ChaindataProfilerRequest, ChaindataProfilerPayload, "Body of the profiler routes.");

/// Payload of the token routes: `token_address` and `chain`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataTokenPayload {
    /// Token contract (EVM) or mint (Solana), well-formed for `chain`.
    #[garde(length(max = 64))]
    pub token_address: String,
    /// Chain of the token.
    #[garde(skip)]
    pub chain: Chain,
    /// Time frame such as `1h`, `1d`, `7d` (routes that take one).
    #[garde(inner(pattern("^[0-9]{1,3}[mhdwM]$")))]
    pub timeframe: Option<String>,
    /// Filters, paging, sorting, dates.
    #[serde(flatten)]
    #[garde(dive)]
    pub common: ChaindataCommon,
}

impl ChaindataTokenPayload {
    fn check(&self) -> Vec<FieldError> {
        match Address::parse_for(self.chain, &self.token_address) {
            Ok(_) => Vec::new(),
            Err(e) => vec![FieldError::new([Loc::from("token_address")], e.to_string(), "value_error")],
        }
    }
}
wrapper!(ChaindataTokenRequest, ChaindataTokenPayload, "Body of the token routes.");

/// Payload of the screener.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataScreenerPayload {
    /// Chains to screen (at least one).
    #[garde(length(min = 1, max = 15))]
    pub chains: Vec<Chain>,
    /// Time frame such as `24h`.
    #[garde(inner(pattern("^[0-9]{1,3}[mhdwM]$")))]
    pub timeframe: Option<String>,
    /// Filters, paging, sorting.
    #[serde(flatten)]
    #[garde(dive)]
    pub common: ChaindataCommon,
}

impl ChaindataScreenerPayload {
    fn check(&self) -> Vec<FieldError> {
        Vec::new()
    }
}
wrapper!(ChaindataScreenerRequest, ChaindataScreenerPayload, "Body of the token screener.");

/// Payload of the per-coin perpetual routes: `token_symbol`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataPerpPayload {
    /// Perpetual coin, e.g. `BTC`.
    #[garde(pattern("^[A-Za-z0-9]{1,20}$"))]
    pub token_symbol: String,
    /// Holder segment (positions).
    #[garde(inner(length(max = 64)))]
    pub label_type: Option<String>,
    /// Filters, paging, sorting, dates.
    #[serde(flatten)]
    #[garde(dive)]
    pub common: ChaindataCommon,
}

impl ChaindataPerpPayload {
    fn check(&self) -> Vec<FieldError> {
        Vec::new()
    }
}
wrapper!(ChaindataPerpRequest, ChaindataPerpPayload, "Body of the per-coin perpetual routes.");

/// Payload of leaderboards and the perp screener (dates and filters only).
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ChaindataLeaderboardPayload {
    /// Filters, paging, sorting, dates.
    #[serde(flatten)]
    #[garde(dive)]
    pub common: ChaindataCommon,
}

impl ChaindataLeaderboardPayload {
    fn check(&self) -> Vec<FieldError> {
        Vec::new()
    }
}
wrapper!(ChaindataLeaderboardRequest, ChaindataLeaderboardPayload, "Body of the leaderboard routes.");

// ---- outputs ------------------------------------------------------------------------------

/// Paging facts of a list answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataPagination {
    /// Page number.
    pub page: u32,
    /// Rows per page.
    pub per_page: u32,
    /// No page follows.
    pub is_last_page: bool,
}

/// A list answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataList<T> {
    /// Rows.
    pub data: Vec<T>,
    /// Paging.
    pub pagination: ChaindataPagination,
}

/// An object answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChaindataObject<T> {
    /// The object.
    pub data: T,
}

macro_rules! row {
    ($(#[doc = $doc:literal])* $name:ident { $($(#[doc = $fdoc:literal])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
        pub struct $name {
            $($(#[doc = $fdoc])* pub $field: $ty,)*
        }
    };
}

row!(/// Smart-money net flow of a token.
NetflowRow { /// Token.
token_address: String, /// Ticker.
token_symbol: String, /// Chain.
chain: String, /// Net flow 1 h, USD.
net_flow_1h_usd: f64, /// Net flow 24 h, USD.
net_flow_24h_usd: f64, /// Net flow 7 d, USD.
net_flow_7d_usd: f64, /// Net flow 30 d, USD.
net_flow_30d_usd: f64, /// Sectors.
token_sectors: Vec<String>, /// Smart-money traders.
trader_count: u32, /// Token age, days.
token_age_days: u32, /// Market cap, USD.
market_cap_usd: Option<f64> });
row!(/// A smart-money holding.
HoldingRow { /// Chain.
chain: String, /// Token.
token_address: String, /// Ticker.
token_symbol: String, /// Value held, USD.
value_usd: f64, /// Balance change over 24 h, percent.
balance_24h_percent_change: f64, /// Holders among smart money.
holders_count: u32, /// Share of smart-money holdings, percent.
share_of_holdings_percent: f64, /// Market cap, USD.
market_cap_usd: Option<f64> });
row!(/// A smart-money DEX trade.
SmartDexTradeRow { /// Chain.
chain: String, /// Block time.
block_timestamp: Timestamp, /// Transaction.
transaction_hash: String, /// Trader.
trader_address: String, /// Trader label.
trader_address_label: Option<String>, /// Token bought.
token_bought_address: String, /// Token sold.
token_sold_address: String, /// Ticker bought.
token_bought_symbol: String, /// Ticker sold.
token_sold_symbol: String, /// Amount bought.
token_bought_amount: f64, /// Amount sold.
token_sold_amount: f64, /// Trade value, USD.
trade_value_usd: f64 });
row!(/// A DCA order.
DcaRow { /// Created.
dca_created_at: Timestamp, /// Trader.
trader_address: String, /// Trader label.
trader_address_label: Option<String>, /// Transaction.
transaction_hash: String, /// Token spent.
input_token_symbol: String, /// Token bought.
output_token_symbol: String, /// Deposit, USD.
deposit_value_usd: f64, /// Status.
dca_status: String });
row!(/// A day of smart-money holdings.
HistoricalHoldingRow { /// Day.
date: String, /// Chain.
chain: String, /// Token.
token_address: String, /// Ticker.
token_symbol: String, /// Balance.
balance: f64, /// Value, USD.
value_usd: f64, /// Holders.
holders_count: u32 });
row!(/// A perpetual trade.
PerpTradeRow { /// Trader.
trader_address: String, /// Trader label.
trader_address_label: Option<String>, /// Coin.
token_symbol: String, /// Long or short.
side: String, /// Open, add, reduce or close.
action: String, /// Size in coin.
token_amount: f64, /// Price, USD.
price_usd: f64, /// Value, USD.
value_usd: f64, /// Time.
block_timestamp: Timestamp, /// Transaction.
transaction_hash: String });
row!(/// A token balance.
BalanceRow { /// Chain.
chain: String, /// Wallet.
address: String, /// Token.
token_address: String, /// Ticker.
token_symbol: String, /// Name.
token_name: String, /// Amount.
token_amount: f64, /// Price, USD.
price_usd: f64, /// Value, USD.
value_usd: f64 });
row!(/// A balance at a time.
HistoricalBalanceRow { /// Time.
block_timestamp: Timestamp, /// Token.
token_address: String, /// Chain.
chain: String, /// Ticker.
token_symbol: String, /// Amount.
token_amount: f64, /// Value, USD.
value_usd: f64 });
row!(/// A token movement inside a transaction.
TokenMovement { /// Ticker.
token_symbol: String, /// Amount.
token_amount: f64, /// Value, USD.
value_usd: f64, /// Token.
token_address: String, /// From.
from_address: String, /// To.
to_address: String });
row!(/// A wallet transaction.
TransactionRow { /// Chain.
chain: String, /// Method called.
method: String, /// Tokens sent.
tokens_sent: Vec<TokenMovement>, /// Tokens received.
tokens_received: Vec<TokenMovement>, /// Volume, USD.
volume_usd: f64, /// Time.
block_timestamp: Timestamp, /// Transaction.
transaction_hash: String });
row!(/// A counterparty.
CounterpartyRow { /// Counterparty.
counterparty_address: String, /// Its labels.
counterparty_address_label: Vec<String>, /// Interactions.
interaction_count: u32, /// Volume, USD.
total_volume_usd: f64, /// Received from it, USD.
volume_in_usd: f64, /// Sent to it, USD.
volume_out_usd: f64 });
row!(/// A related wallet.
RelatedWalletRow { /// Wallet.
address: String, /// Label.
address_label: Option<String>, /// Relation, e.g. `First Funder`.
relation: String, /// Transaction linking them.
transaction_hash: String, /// When.
block_timestamp: Timestamp, /// Chain.
chain: String });
row!(/// A token in a PnL summary.
PnlTopToken { /// Token.
token_address: String, /// Ticker.
token_symbol: String, /// Realised PnL, USD.
realized_pnl: f64, /// Realised ROI, percent.
realized_roi: f64 });
row!(/// PnL summary.
PnlSummary { /// Best tokens.
top5_tokens: Vec<PnlTopToken>, /// Tokens traded.
traded_token_count: u32, /// Trades.
traded_times: u32, /// Realised PnL, USD.
realized_pnl_usd: f64, /// Realised PnL, percent.
realized_pnl_percent: f64, /// Share of winning trades, 0–1.
win_rate: f64 });
row!(/// PnL in one token.
PnlRow { /// Token.
token_address: String, /// Ticker.
token_symbol: String, /// Price now, USD.
token_price: f64, /// Realised PnL, USD.
pnl_usd_realised: f64, /// Unrealised PnL, USD.
pnl_usd_unrealised: f64, /// Realised ROI, percent.
roi_percent_realised: f64, /// Bought, USD.
bought_usd: f64, /// Sold, USD.
sold_usd: f64, /// Held now, USD.
holding_usd: f64 });
row!(/// An NFT held.
NftHoldingRow { /// Collection contract.
collection_address: String, /// Collection name.
collection_name: String, /// Token id.
token_id: String, /// Chain.
chain: String, /// Floor price, USD.
floor_price_usd: Option<f64>, /// Estimated value, USD.
value_usd: Option<f64> });
row!(/// A token transfer.
TransferRow { /// Time.
block_timestamp: Timestamp, /// Transaction.
transaction_hash: String, /// From.
from_address: String, /// To.
to_address: String, /// From label.
from_address_label: Option<String>, /// To label.
to_address_label: Option<String>, /// Transfer type.
transaction_type: String, /// Amount.
transfer_amount: f64, /// Value, USD.
transfer_value_usd: f64 });
row!(/// A wallet label.
LabelRow { /// Label.
label: String, /// Category.
category: String, /// What it means.
definition: String, /// Full name of the entity.
fullname: Option<String> });
row!(/// A perpetual trader.
PerpLeaderRow { /// Trader.
trader_address: String, /// Label.
trader_address_label: Option<String>, /// PnL, USD.
total_pnl: f64, /// ROI, percent.
roi: f64, /// Account value, USD.
account_value: f64 });
row!(/// Net flows by cohort.
FlowIntelligence { /// Whales, USD.
whale_net_flow_usd: f64, /// Smart traders, USD.
smart_trader_net_flow_usd: f64, /// Top-PnL wallets, USD.
top_pnl_net_flow_usd: f64, /// Public figures, USD.
public_figure_net_flow_usd: f64, /// Exchanges, USD (positive = deposits).
exchange_net_flow_usd: f64, /// Fresh wallets, USD.
fresh_wallets_net_flow_usd: f64, /// Whale wallets.
whale_wallet_count: u32, /// Smart-trader wallets.
smart_trader_wallet_count: u32 });
row!(/// A buyer or seller.
BuyerSellerRow { /// Wallet.
address: String, /// Label.
address_label: Option<String>, /// Bought, USD.
bought_volume_usd: f64, /// Sold, USD.
sold_volume_usd: f64, /// Traded, USD.
trade_volume_usd: f64 });
row!(/// A DEX trade of a token.
TokenDexTradeRow { /// Time.
block_timestamp: Timestamp, /// Transaction.
transaction_hash: String, /// Trader.
trader_address: String, /// Label.
trader_address_label: Option<String>, /// BUY or SELL.
action: String, /// Amount of the token.
token_amount: f64, /// Other token.
traded_token_address: String, /// Price, USD.
estimated_swap_price_usd: f64, /// Value, USD.
estimated_value_usd: f64 });
row!(/// A holder.
HolderRow { /// Wallet.
address: String, /// Label.
address_label: Option<String>, /// Amount.
token_amount: f64, /// Share of supply, percent.
ownership_percentage: f64, /// Value, USD.
value_usd: f64, /// Balance change 24 h.
balance_change_24h: f64, /// Balance change 7 d.
balance_change_7d: f64 });
row!(/// A day of flows.
TokenFlowRow { /// Day.
date: String, /// Price, USD.
price_usd: f64, /// Amount held by the segment.
token_amount: f64, /// Value, USD.
value_usd: f64, /// Holders.
holders_count: u32, /// Inflows.
total_inflows_count: u32, /// Outflows.
total_outflows_count: u32 });
row!(/// A trader on a PnL leaderboard.
TokenPnlLeaderRow { /// Trader.
trader_address: String, /// Label.
trader_address_label: Option<String>, /// Realised PnL, USD.
pnl_usd_realised: f64, /// Unrealised PnL, USD.
pnl_usd_unrealised: f64, /// Total PnL, USD.
pnl_usd_total: f64, /// Total ROI, percent.
roi_percent_total: f64, /// Trades.
nof_trades: u32 });
row!(/// A screened token.
ScreenerRow { /// Chain.
chain: String, /// Token.
token_address: String, /// Ticker.
token_symbol: String, /// Name.
token_name: String, /// Price, USD.
price_usd: f64, /// Price change, percent.
price_change: Option<f64>, /// Market cap, USD.
market_cap_usd: Option<f64>, /// Liquidity, USD.
liquidity_usd: Option<f64>, /// Volume, USD.
volume: f64, /// Net flow, USD.
netflow: f64, /// Smart-money net flow, USD.
smart_money_netflow: f64, /// Age, days.
token_age_days: u32 });
row!(/// A screened perpetual market.
PerpScreenerRow { /// Coin.
token_symbol: String, /// Volume, USD.
volume: f64, /// Buy/sell pressure.
buy_sell_pressure: f64, /// Traders.
trader_count: u32, /// Mark price.
mark_price: f64, /// Funding rate.
funding: f64, /// Open interest, USD.
open_interest: f64 });
row!(/// An open perpetual position.
PerpPositionRow { /// Wallet.
address: String, /// Label.
address_label: Option<String>, /// Long or short.
side: String, /// Value, USD.
position_value_usd: f64, /// Size.
position_size: f64, /// Leverage.
leverage: String, /// Entry price.
entry_price: f64, /// Mark price.
mark_price: f64, /// Liquidation price.
liquidation_price: Option<f64>, /// Unrealised PnL, USD.
upnl_usd: f64 });
row!(/// Token profile.
TokenInformation { /// Name.
name: String, /// Ticker.
symbol: String, /// Contract.
contract_address: String, /// Deployed.
token_deployment_date: Option<Timestamp>, /// Market cap, USD.
market_cap_usd: Option<f64>, /// Fully diluted value, USD.
fdv_usd: Option<f64>, /// Circulating supply.
circulating_supply: Option<f64>, /// Total supply.
total_supply: Option<f64>, /// Volume, USD.
volume_total_usd: f64, /// Unique buyers.
unique_buyers: u32, /// Unique sellers.
unique_sellers: u32, /// Liquidity, USD.
liquidity_usd: Option<f64>, /// Holders.
total_holders: Option<u32> });
row!(/// An indicator reading.
IndicatorRow { /// Indicator name.
indicator: String, /// Value.
value: f64, /// Reading.
signal: IndicatorSignal, /// What it measures.
description: String });
row!(/// A price candle.
CandleRow { /// Candle start.
t: Timestamp, /// Open, USD.
open: f64, /// High, USD.
high: f64, /// Low, USD.
low: f64, /// Close, USD.
close: f64, /// Volume, USD.
volume_usd: f64 });

/// Direction an indicator points.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IndicatorSignal {
    /// Up.
    Bullish,
    /// Down.
    Bearish,
    /// Neither.
    Neutral,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_three_routes_are_served() {
        assert_eq!(allowed_paths().len(), 33);
    }
}
