//! The perp exchange: read-only market and account data, and orders, cancels and leverage
//! that svc signs with its own agent key.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::EvmAddress;

use super::infra;
use crate::{PreviewPolicy, RouteInput, RouteSpec, ids};

/// The perpdex routes, in catalogue order.
pub(super) fn routes() -> Vec<RouteSpec> {
    vec![
        infra(RouteSpec::post::<PerpInfoRequest, PerpInfoResponse>(ids::infra::PERPDEX_INFO, tools!("/perpdex/info"),
            "Read-only market and account data of the perp exchange: metadata, mids, books, candles, positions, fills, funding."), "perpdex"),
        infra(RouteSpec::post::<PerpExchangeRequest, PerpExchangeResponse>(ids::infra::PERPDEX_EXCHANGE, tools!("/perpdex/exchange"),
            "Place or cancel orders or set leverage on the perp exchange; svc builds and signs the action with its own agent key.")
            .preview(PreviewPolicy::QuoteOnly).moves_funds(), "perpdex"),
    ]
}

/// Input of `POST {tools}/perpdex/info`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct PerpInfoRequest {
    /// The read-only request.
    #[garde(dive)]
    pub body: PerpInfoQuery,
}

impl RouteInput for PerpInfoRequest {}

/// Read-only info requests, by `type`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PerpInfoQuery {
    /// Perp universe.
    Meta,
    /// Universe with live contexts (funding, open interest, prices).
    MetaAndAssetCtxs,
    /// Mid prices of every coin.
    AllMids,
    /// Spot universe.
    SpotMeta,
    /// Order book of a coin.
    L2Book {
        /// Coin, e.g. `BTC`.
        #[garde(length(min = 1, max = 32))]
        coin: String,
    },
    /// Candles of a coin.
    CandleSnapshot {
        /// Candle request.
        #[garde(dive)]
        req: PerpCandleRequest,
    },
    /// Funding history of a coin.
    FundingHistory {
        /// Coin.
        #[garde(length(min = 1, max = 32))]
        coin: String,
        /// From, unix ms.
        #[serde(rename = "startTime")]
        #[garde(skip)]
        start_time: u64,
        /// To, unix ms.
        #[serde(rename = "endTime")]
        #[garde(skip)]
        end_time: Option<u64>,
    },
    /// Positions and margin of a user.
    ClearinghouseState {
        /// User address.
        #[garde(skip)]
        user: EvmAddress,
    },
    /// Spot balances of a user.
    SpotClearinghouseState {
        /// User address.
        #[garde(skip)]
        user: EvmAddress,
    },
    /// Open orders of a user.
    OpenOrders {
        /// User address.
        #[garde(skip)]
        user: EvmAddress,
    },
    /// Fills of a user.
    UserFills {
        /// User address.
        #[garde(skip)]
        user: EvmAddress,
    },
    /// Funding payments of a user.
    UserFunding {
        /// User address.
        #[garde(skip)]
        user: EvmAddress,
        /// From, unix ms.
        #[serde(rename = "startTime")]
        #[garde(skip)]
        start_time: u64,
    },
}

/// A candle request.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(rename_all = "camelCase")]
pub struct PerpCandleRequest {
    /// Coin.
    #[garde(length(min = 1, max = 32))]
    pub coin: String,
    /// Interval: 1m 5m 15m 1h 4h 1d.
    #[garde(pattern("^(1m|3m|5m|15m|30m|1h|2h|4h|8h|12h|1d|3d|1w|1M)$"))]
    pub interval: String,
    /// From, unix ms.
    #[garde(skip)]
    pub start_time: u64,
    /// To, unix ms.
    #[garde(skip)]
    pub end_time: u64,
}

/// Input of `POST {tools}/perpdex/exchange`: an action svc signs itself. Client signatures
/// are refused: unknown fields (`signature`, `nonce`, `action`) are an error.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct PerpExchangeRequest {
    /// The action.
    #[garde(dive)]
    pub body: PerpAction,
}

impl RouteInput for PerpExchangeRequest {
    fn price_units(&self) -> u64 {
        match &self.body {
            PerpAction::Order { orders } => orders.len() as u64,
            PerpAction::Cancel { cancels } => cancels.len() as u64,
            PerpAction::UpdateLeverage { .. } => 1,
        }
    }
}

/// Exchange actions, by `type`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum PerpAction {
    /// Place 1–20 orders.
    Order {
        /// The orders.
        #[garde(length(min = 1, max = 20), dive)]
        orders: Vec<PerpOrder>,
    },
    /// Cancel 1–20 orders.
    Cancel {
        /// The cancels.
        #[garde(length(min = 1, max = 20), dive)]
        cancels: Vec<PerpCancel>,
    },
    /// Set a coin's leverage.
    UpdateLeverage {
        /// Coin.
        #[garde(length(min = 1, max = 32))]
        coin: String,
        /// Cross (true) or isolated margin.
        #[garde(skip)]
        is_cross: bool,
        /// Leverage, 1–50.
        #[garde(range(min = 1, max = 50))]
        leverage: u32,
    },
}

/// One order.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct PerpOrder {
    /// Coin, e.g. `ETH`.
    #[garde(length(min = 1, max = 32))]
    pub coin: String,
    /// Buy (true) or sell.
    #[garde(skip)]
    pub is_buy: bool,
    /// Size in coin units, decimal string.
    #[garde(pattern("^[0-9]{1,12}(\\.[0-9]{1,8})?$"))]
    pub sz: String,
    /// Limit price, decimal string.
    #[garde(pattern("^[0-9]{1,12}(\\.[0-9]{1,8})?$"))]
    pub limit_px: String,
    /// Time in force (default `Gtc`).
    #[serde(default)]
    #[garde(skip)]
    pub tif: PerpTif,
    /// Only reduce a position.
    #[serde(default)]
    #[garde(skip)]
    pub reduce_only: bool,
    /// Client order id, `0x` and 32 hex digits.
    #[garde(pattern("^0x[0-9a-fA-F]{32}$"))]
    pub cloid: Option<String>,
}

/// Time in force.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PerpTif {
    /// Good till cancelled.
    #[default]
    Gtc,
    /// Immediate or cancel.
    Ioc,
    /// Add liquidity only.
    Alo,
}

/// One cancel.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct PerpCancel {
    /// Coin.
    #[garde(length(min = 1, max = 32))]
    pub coin: String,
    /// Order id.
    #[garde(skip)]
    pub oid: u64,
}

/// Answer of `perpdex/info`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PerpInfoResponse {
    /// The request type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The exchange's answer.
    pub data: PerpInfoData,
}

/// Answers of the info types svc forwards.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PerpInfoData {
    /// `meta`: the perp universe.
    Meta {
        /// Assets.
        universe: Vec<PerpAsset>,
    },
    /// `metaAndAssetCtxs`: the universe and each asset's live context, index for index.
    Markets {
        /// Assets.
        universe: Vec<PerpAsset>,
        /// Live context of each asset, in universe order.
        #[serde(rename = "assetCtxs")]
        asset_ctxs: Vec<PerpAssetCtx>,
    },
    /// `spotMeta`: spot pairs and tokens.
    SpotMeta {
        /// Pairs.
        universe: Vec<PerpSpotPair>,
        /// Tokens.
        tokens: Vec<PerpSpotToken>,
    },
    /// `spotClearinghouseState`: spot balances.
    SpotBalances {
        /// Balances.
        balances: Vec<PerpSpotBalance>,
    },
    /// `l2Book`.
    Book {
        /// Coin.
        coin: String,
        /// `[bids, asks]`.
        levels: Vec<Vec<PerpLevel>>,
        /// Time, unix ms.
        time: u64,
    },
    /// `clearinghouseState`: positions and margin.
    Account {
        /// Positions.
        #[serde(rename = "assetPositions")]
        asset_positions: Vec<PerpAssetPosition>,
        /// Withdrawable USD.
        withdrawable: String,
    },
    /// `candleSnapshot`, `userFills`, `openOrders`, `fundingHistory`, `userFunding`: rows of
    /// scalars, with the fields of a nested object (`userFunding`'s `delta`) lifted into the row.
    Rows(Vec<BTreeMap<String, PerpScalar>>),
    /// `allMids` and other name → value maps.
    Map(BTreeMap<String, String>),
}

/// A scalar cell of a row answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PerpScalar {
    /// Text or decimal string.
    Text(String),
    /// Number.
    Number(f64),
    /// Flag.
    Flag(bool),
}

/// A perp asset.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpAsset {
    /// Coin.
    pub name: String,
    /// Size decimals.
    pub sz_decimals: u8,
    /// Largest leverage.
    pub max_leverage: u32,
}

/// An asset's live context (decimal strings, as the exchange sends them).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpAssetCtx {
    /// Current hourly funding rate.
    pub funding: String,
    /// Open interest, coin units.
    pub open_interest: String,
    /// Mark 24 hours ago.
    pub prev_day_px: String,
    /// Notional volume over 24 hours, USD.
    pub day_ntl_vlm: String,
    /// Premium of mark over oracle, when quoted.
    pub premium: Option<String>,
    /// Oracle price.
    pub oracle_px: String,
    /// Mark price.
    pub mark_px: String,
    /// Mid of the book, when it has both sides.
    pub mid_px: Option<String>,
}

/// A spot pair.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpSpotPair {
    /// Pair name, e.g. `PURR/USDC`, or `@index`.
    pub name: String,
    /// Pair index (spot asset id is 10000 + index).
    pub index: u32,
    /// Base and quote token indexes.
    pub tokens: Vec<u32>,
    /// Listed under its canonical name.
    pub is_canonical: bool,
}

/// A spot token.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpSpotToken {
    /// Token name.
    pub name: String,
    /// Token index.
    pub index: u32,
    /// Size decimals.
    pub sz_decimals: u8,
    /// On-chain decimals.
    pub wei_decimals: u8,
    /// Token id, hex.
    pub token_id: String,
}

/// A spot balance.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpSpotBalance {
    /// Token name.
    pub coin: String,
    /// Token index.
    pub token: u32,
    /// Held by open orders.
    pub hold: String,
    /// Total.
    pub total: String,
    /// Entry notional, USD.
    pub entry_ntl: String,
}

/// A book level.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PerpLevel {
    /// Price.
    pub px: String,
    /// Size.
    pub sz: String,
    /// Orders at this level.
    pub n: u32,
}

/// A position.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PerpAssetPosition {
    /// Position details.
    pub position: PerpPosition,
}

/// Position details.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpPosition {
    /// Coin.
    pub coin: String,
    /// Signed size.
    pub szi: String,
    /// Entry price.
    pub entry_px: Option<String>,
    /// Liquidation price.
    pub liquidation_px: Option<String>,
    /// Unrealised PnL, USD.
    pub unrealized_pnl: String,
    /// Position value, USD.
    pub position_value: String,
}

/// Answer of `perpdex/exchange`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PerpExchangeResponse {
    /// `ok` or `err`.
    pub status: String,
    /// One status per order or cancel.
    pub statuses: Vec<PerpOrderStatus>,
    /// Nonce svc signed with.
    pub nonce: u64,
}

/// The outcome of one order or cancel.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PerpOrderStatus {
    /// Resting on the book.
    Resting {
        /// Order id.
        oid: u64,
    },
    /// Filled.
    Filled {
        /// Size filled.
        total_sz: String,
        /// Average price.
        avg_px: String,
        /// Order id.
        oid: u64,
    },
    /// Cancelled or accepted without a fill.
    Success,
    /// Refused.
    Error(String),
}
