//! Prediction markets (Polymarket Gamma for discovery and outcome prices, CLOB for books and
//! quotes). Market ids are condition ids: `0x` and 64 hex digits.

use crate::ids;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Timestamp;
use crate::{Group, InputSource, RouteInput, RouteSpec};

/// The prediction-market routes.
pub fn routes() -> Vec<RouteSpec> {
    let data = |r: RouteSpec| r.group(Group::Data).tag("predmkt");
    vec![
        data(RouteSpec::post::<PredmktSearchRequest, PredmktSearchResponse>(
            ids::predmkt::SEARCH,
            tools!("/predmkt/search"),
            "Search prediction markets by keyword: question, outcomes with prices and token ids, volume, liquidity, end date.",
        )),
        data(RouteSpec::post::<PredmktQuoteRequest, PredmktQuoteResponse>(
            ids::predmkt::QUOTE,
            tools!("/predmkt/quote"),
            "Quote one outcome of a market: buy and sell price, midpoint and spread from the order book.",
        )),
        data(RouteSpec::post::<PredmktOrderbookRequest, PredmktOrderbookResponse>(
            ids::predmkt::ORDERBOOK,
            tools!("/predmkt/orderbook"),
            "Order book of one outcome of a market: bids and asks with sizes, tick size and minimum order.",
        )),
        data(RouteSpec::post::<PredmktCompareRequest, PredmktCompareResponse>(
            ids::predmkt::COMPARE,
            tools!("/predmkt/compare"),
            "Compare each outcome's displayed price with its order book (bid, ask, mid) and show the divergence.",
        )),
        data(RouteSpec::post::<PredmktArbitrageRequest, PredmktArbitrageResponse>(
            ids::predmkt::ARBITRAGE,
            tools!("/predmkt/arbitrage"),
            "Find markets whose outcomes can be bought together for less than the payout (binary YES+NO, multi-outcome sums).",
        ))
        .source(InputSource::OptionalBody),
    ]
}

fn default_search_limit() -> u32 {
    20
}

fn default_outcome() -> String {
    "Yes".to_owned()
}

fn default_min_spread() -> f64 {
    1.0
}

/// Input of `POST {tools}/predmkt/search`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct PredmktSearchRequest {
    /// Words to look for in market questions.
    #[garde(length(chars, min = 1, max = 200))]
    pub keyword: String,
    /// Markets to return (1–100, default 20).
    #[serde(default = "default_search_limit")]
    #[garde(range(min = 1, max = 100))]
    pub limit: u32,
    /// Markets to skip, for paging (default 0).
    #[serde(default)]
    #[garde(range(max = 10_000))]
    pub offset: u32,
}

impl RouteInput for PredmktSearchRequest {}

/// Input of `POST {tools}/predmkt/quote`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct PredmktQuoteRequest {
    /// Market condition id.
    #[garde(pattern("^0x[0-9a-fA-F]{64}$"))]
    pub condition_id: String,
    /// Outcome name, case-insensitive (default `Yes`).
    #[serde(default = "default_outcome")]
    #[garde(length(chars, min = 1, max = 100))]
    pub outcome: String,
}

impl RouteInput for PredmktQuoteRequest {}

/// Input of `POST {tools}/predmkt/orderbook`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct PredmktOrderbookRequest {
    /// Market condition id.
    #[garde(pattern("^0x[0-9a-fA-F]{64}$"))]
    pub condition_id: String,
    /// Outcome whose book to return (default `Yes`).
    #[serde(default = "default_outcome")]
    #[garde(length(chars, min = 1, max = 100))]
    pub outcome: String,
}

impl RouteInput for PredmktOrderbookRequest {}

/// Input of `POST {tools}/predmkt/compare`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct PredmktCompareRequest {
    /// Market condition id.
    #[garde(pattern("^0x[0-9a-fA-F]{64}$"))]
    pub condition_id: String,
}

impl RouteInput for PredmktCompareRequest {}

/// Input of `POST {tools}/predmkt/arbitrage` (body optional).
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct PredmktArbitrageRequest {
    /// Smallest edge to report, percent of the payout (0–100, default 1).
    #[serde(default = "default_min_spread")]
    #[garde(range(min = 0.0, max = 100.0))]
    pub min_spread: f64,
    /// Opportunities to return (1–100, default 20).
    #[serde(default = "default_search_limit")]
    #[garde(range(min = 1, max = 100))]
    pub limit: u32,
}

impl RouteInput for PredmktArbitrageRequest {}

/// Answer of `search`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktSearchResponse {
    /// Matching markets.
    pub markets: Vec<PredmktMarket>,
    /// Matches in total (for paging).
    pub total: u64,
}

/// A market.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktMarket {
    /// Condition id.
    pub condition_id: String,
    /// The question.
    pub question: String,
    /// URL slug.
    pub slug: String,
    /// Outcomes with their displayed prices.
    pub outcomes: Vec<PredmktOutcome>,
    /// Traded volume, USD.
    pub volume_usd: f64,
    /// Liquidity, USD.
    pub liquidity_usd: f64,
    /// Resolution date.
    pub end_date: Option<Timestamp>,
    /// Open for trading.
    pub active: bool,
    /// Resolved or closed.
    pub closed: bool,
}

/// An outcome and its price (the implied probability, 0–1).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktOutcome {
    /// Outcome name, e.g. `Yes`.
    pub name: String,
    /// Displayed price, 0–1.
    pub price: f64,
    /// Order-book token id of the outcome.
    pub token_id: String,
}

/// Answer of `quote`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktQuoteResponse {
    /// Condition id.
    pub condition_id: String,
    /// Outcome quoted.
    pub outcome: String,
    /// Its token id.
    pub token_id: String,
    /// Best price to buy, 0–1.
    pub buy_price: Option<f64>,
    /// Best price to sell, 0–1.
    pub sell_price: Option<f64>,
    /// Midpoint, 0–1.
    pub midpoint: Option<f64>,
    /// Ask minus bid.
    pub spread: Option<f64>,
}

/// Answer of `orderbook`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktOrderbookResponse {
    /// Condition id.
    pub condition_id: String,
    /// Outcome.
    pub outcome: String,
    /// Its token id.
    pub token_id: String,
    /// Bids, best (highest) first.
    pub bids: Vec<PredmktLevel>,
    /// Asks, best (lowest) first.
    pub asks: Vec<PredmktLevel>,
    /// Price increment.
    pub tick_size: f64,
    /// Smallest order, in shares.
    pub min_order_size: f64,
    /// When the book was read.
    pub timestamp: Timestamp,
}

/// One price level.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktLevel {
    /// Price, 0–1.
    pub price: f64,
    /// Shares available.
    pub size: f64,
}

/// Answer of `compare`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktCompareResponse {
    /// Condition id.
    pub condition_id: String,
    /// The question.
    pub question: String,
    /// Per outcome, displayed price against the book.
    pub outcomes: Vec<PredmktComparison>,
}

/// One outcome compared.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktComparison {
    /// Outcome name.
    pub name: String,
    /// Token id.
    pub token_id: String,
    /// Displayed (Gamma) price.
    pub gamma_price: f64,
    /// Best bid in the book.
    pub clob_bid: Option<f64>,
    /// Best ask in the book.
    pub clob_ask: Option<f64>,
    /// Book midpoint.
    pub clob_mid: Option<f64>,
    /// Ask minus bid.
    pub spread: Option<f64>,
    /// Displayed price minus midpoint.
    pub divergence: Option<f64>,
}

/// Answer of `arbitrage`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktArbitrageResponse {
    /// Opportunities, largest edge first.
    pub opportunities: Vec<PredmktOpportunity>,
    /// The threshold applied, percent.
    pub min_spread: f64,
    /// Markets examined.
    pub scanned_markets: u32,
}

/// One set of outcomes that pays 1 and costs less.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktOpportunity {
    /// Binary (YES+NO of one market) or multi-outcome (YES of every market of an event).
    pub kind: PredmktArbitrageKind,
    /// Event id (multi-outcome) or condition id (binary).
    pub id: String,
    /// Question or event title.
    pub question: String,
    /// What to buy.
    pub legs: Vec<PredmktLeg>,
    /// Sum of the best asks.
    pub total_cost: f64,
    /// `(1 - total_cost) × 100`.
    pub spread_pct: f64,
    /// Profit per unit of payout before fees.
    pub expected_profit_per_unit: f64,
}

/// Kind of arbitrage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PredmktArbitrageKind {
    /// YES and NO of one market.
    Binary,
    /// YES of every outcome of one event.
    MultiOutcome,
}

/// One purchase of an opportunity.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PredmktLeg {
    /// Outcome (or market question, for multi-outcome events).
    pub outcome: String,
    /// Token id to buy.
    pub token_id: String,
    /// Best ask.
    pub best_ask: f64,
}
