//! Signal products: Top Picks, Exodus, Whale Alerts, Top Picks lite and the data products.
//! svc computes them from upstream flows every 30 minutes; a request reads the latest
//! snapshot, so every answer says when it was made and when the next one is due.

use crate::ids;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::Chain;

use super::common::{LabelledWallet, NoInput, SourceStatus, Timestamp, TokenRef};
use crate::{Group, InputSource, PreviewPolicy, RatePolicy, RouteInput, RouteSpec};

/// The signal routes.
pub fn routes() -> Vec<RouteSpec> {
    let signal = |r: RouteSpec| r.group(Group::Signals).tag("signals");
    vec![
        signal(RouteSpec::get::<NoInput, TopPicksResponse>(
            ids::alpha::TOP_PICKS,
            alpha!("/top-picks"),
            "Top 3 smart-money tokens per chain, ranked by a 0-100 composite of on-chain flow, social, price, freshness, market and safety, each with a one-sentence thesis.",
        ))
        .rate(RatePolicy::PerMinute(30))
        .preview(PreviewPolicy::Truncate { max_items: 1, omit: &["thesis"] }),
        signal(RouteSpec::get::<NoInput, ExodusResponse>(
            ids::alpha::EXODUS,
            alpha!("/exodus"),
            "Tokens smart money is leaving: exit score, wallet exodus count, net outflow in USD and a thesis per token.",
        ))
        .preview(PreviewPolicy::Truncate { max_items: 1, omit: &["thesis"] }),
        signal(RouteSpec::get::<NoInput, WhaleAlertsResponse>(
            ids::alpha::WHALE_ALERTS,
            alpha!("/whale-alerts"),
            "Large buys and sells by tracked wallets in the last hour: wallet label, token, USD amount and transaction hash.",
        ))
        .preview(PreviewPolicy::Truncate { max_items: 2, omit: &[] }),
        signal(RouteSpec::get::<NoInput, TopPicksLiteResponse>(
            ids::alpha::TOP_PICKS_LITE,
            alpha!("/top-picks-lite"),
            "Top Picks from on-chain flow, price and market data only (no social or safety dimensions), at a lower price.",
        ))
        .preview(PreviewPolicy::Truncate { max_items: 1, omit: &["thesis"] }),
        signal(RouteSpec::new::<DataProductRequest, DataProductResponse>(
            ids::tools::DATA_PRODUCTS,
            crate::HttpMethod::Post,
            tools!("/data-products/{product_id}"),
            InputSource::OptionalBody,
            "Packaged signal data: smart-money-signals (net-flow leaders, whale alerts, exodus), top-alpha-picks (picks ranked across chains) or agent-strategies (entries, invalidation and sizing per agent style).",
        ))
        .preview(PreviewPolicy::Truncate { max_items: 1, omit: &["thesis"] }),
    ]
}

/// Freshness fields every signal answer carries.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SnapshotMeta {
    /// When the snapshot behind this answer was computed.
    pub generated_at: Timestamp,
    /// When the next snapshot is due (every 30 minutes).
    pub next_refresh_at: Timestamp,
    /// Health of each upstream source at computation time.
    pub sources: Vec<SourceStatus>,
}

/// `GET {alpha}/top-picks`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TopPicksResponse {
    /// Snapshot freshness.
    #[serde(flatten)]
    pub meta: SnapshotMeta,
    /// Picks per chain, best first, at most 3 per chain.
    pub picks: PicksByChain<TopPick>,
}

/// Picks keyed by chain; the EVM layer-2 is `base`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct PicksByChain<T> {
    /// Solana picks.
    pub solana: Vec<T>,
    /// Base picks.
    pub base: Vec<T>,
    /// Ethereum picks.
    pub ethereum: Vec<T>,
    /// BNB Smart Chain picks.
    pub bnb: Vec<T>,
    /// Arbitrum picks.
    pub arbitrum: Vec<T>,
}

/// One Top Pick.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TopPick {
    /// 1-based rank on its chain.
    #[schemars(range(min = 1, max = 3))]
    pub rank: u8,
    /// Token symbol (the contract's `token` field).
    pub token: String,
    /// The token in full.
    pub token_info: TokenRef,
    /// Composite score 0–100.
    #[schemars(range(max = 100))]
    pub score: u8,
    /// The six sub-scores the composite is built from.
    pub dimensions: Dimensions,
    /// Smart-money flows in the token.
    pub flow: SmartMoneyFlow,
    /// Where the price stands.
    pub price: PricePosition,
    /// What social networks say.
    pub social: SocialAnalysis,
    /// One sentence naming the strongest reasons, with numbers.
    pub thesis: String,
}

/// The six dimensions of a Top Pick score.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Dimensions {
    /// Smart-money net flow and participation.
    pub onchain_flow: DimensionScore,
    /// Mention velocity and engagement.
    pub social: DimensionScore,
    /// Momentum and position in the 7-day range.
    pub price: DimensionScore,
    /// Token age and recency of the first smart-money buys.
    pub freshness: DimensionScore,
    /// Market cap, liquidity and holders.
    pub market: DimensionScore,
    /// Scan verdict (an EVM token's contract scan; a Solana token's mint and freeze
    /// authorities) and holder concentration; also a gate.
    pub safety: DimensionScore,
}

/// One sub-score with what it was computed from.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DimensionScore {
    /// Sub-score 0–100.
    #[schemars(range(max = 100))]
    pub score: u8,
    /// Named numeric inputs, e.g. `net_flow_24h_usd`; `null` where the input is unknown (never
    /// a stand-in number).
    pub inputs: BTreeMap<String, Option<f64>>,
    /// When the newest input was observed.
    pub as_of: Timestamp,
    /// True when an input behind this dimension is unknown or its source failed: the score
    /// then follows the no-reward-for-ignorance rule (at most neutral, 50).
    pub degraded: bool,
    /// What is missing, when degraded (`holder concentration unknown`, ...).
    pub degraded_reason: Option<String>,
}

/// Smart-money flow in one token.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SmartMoneyFlow {
    /// Net USD flow over the last hour.
    pub net_flow_1h_usd: f64,
    /// Net USD flow over the last 24 hours.
    pub net_flow_24h_usd: f64,
    /// Net USD flow over the last 7 days.
    pub net_flow_7d_usd: f64,
    /// Distinct smart-money buyers in 24 hours.
    pub buyer_wallets: u32,
    /// Distinct smart-money sellers in 24 hours.
    pub seller_wallets: u32,
    /// The largest participants.
    pub top_wallets: Vec<LabelledWallet>,
}

/// Price and its position in the recent range.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PricePosition {
    /// Price in USD.
    pub price_usd: f64,
    /// Change over 24 hours, percent.
    pub change_24h_pct: f64,
    /// Change over 7 days, percent.
    pub change_7d_pct: f64,
    /// Distance below the 7-day high, percent (0 = at the high).
    pub from_7d_high_pct: f64,
    /// Distance above the 7-day low, percent (0 = at the low).
    pub from_7d_low_pct: f64,
}

/// Social activity around a token.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialAnalysis {
    /// Mentions in the last hour.
    pub mentions_1h: u32,
    /// Last hour's mentions over the 24-hour hourly average (1.0 = normal).
    pub mention_velocity: f64,
    /// Likes, reposts and replies on recent mentions.
    pub engagement: u64,
    /// Usernames of notable accounts that mentioned the token.
    pub notable_accounts: Vec<String>,
}

/// `GET {alpha}/exodus`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ExodusResponse {
    /// Snapshot freshness.
    #[serde(flatten)]
    pub meta: SnapshotMeta,
    /// Sell signals, strongest first.
    pub picks: Vec<ExodusPick>,
}

/// One token smart money is leaving.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ExodusPick {
    /// Token symbol.
    pub token: String,
    /// The token in full.
    pub token_info: TokenRef,
    /// Exit score 0–100.
    #[schemars(range(max = 100))]
    pub exit_score: u8,
    /// Distinct smart-money wallets that sold in the window.
    pub wallet_exodus_count: u32,
    /// Net USD leaving the token in the window (positive number = outflow).
    pub net_outflow_usd: f64,
    /// The window, e.g. `24h`.
    pub window: String,
    /// The largest sellers.
    pub top_sellers: Vec<Seller>,
    /// USD deposited to exchanges in the window, when known.
    pub exchange_inflow_usd: Option<f64>,
    /// One sentence with the numbers behind the signal.
    pub thesis: String,
}

/// A wallet that sold.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Seller {
    /// Wallet address.
    pub address: String,
    /// Its label, when known.
    pub label: Option<String>,
    /// USD sold in the window.
    pub sold_usd: f64,
}

/// `GET {alpha}/whale-alerts`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WhaleAlertsResponse {
    /// Snapshot freshness.
    #[serde(flatten)]
    pub meta: SnapshotMeta,
    /// The smallest trade reported, USD.
    pub threshold_usd: f64,
    /// Trades in the last hour, newest first.
    pub alerts: Vec<WhaleAlert>,
}

/// One large trade by a tracked wallet.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WhaleAlert {
    /// Wallet address.
    pub wallet: String,
    /// Wallet label, when known.
    pub label: Option<String>,
    /// Buy or sell of `token`.
    pub side: TradeSide,
    /// Token symbol.
    pub token: String,
    /// Token contract address or mint.
    pub token_address: String,
    /// Chain of the trade.
    pub chain: Chain,
    /// Trade value in USD.
    pub amount_usd: f64,
    /// Transaction hash.
    pub tx_hash: String,
    /// Block time.
    pub at: Timestamp,
}

/// Direction of a trade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TradeSide {
    /// Bought the token.
    Buy,
    /// Sold the token.
    Sell,
}

/// `GET {alpha}/top-picks-lite`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TopPicksLiteResponse {
    /// Snapshot freshness.
    #[serde(flatten)]
    pub meta: SnapshotMeta,
    /// Picks per chain, best first, at most 3 per chain.
    pub picks: PicksByChain<LitePick>,
}

/// A Top Pick scored on flow, price and market only.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LitePick {
    /// 1-based rank on its chain.
    #[schemars(range(min = 1, max = 3))]
    pub rank: u8,
    /// Token symbol.
    pub token: String,
    /// The token in full.
    pub token_info: TokenRef,
    /// Composite of the three dimensions, 0–100.
    #[schemars(range(max = 100))]
    pub score: u8,
    /// The three sub-scores.
    pub dimensions: LiteDimensions,
    /// Smart-money flows.
    pub flow: SmartMoneyFlow,
    /// Price position.
    pub price: PricePosition,
    /// One sentence with the numbers behind the pick.
    pub thesis: String,
}

/// The dimensions a lite pick is scored on.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LiteDimensions {
    /// Smart-money net flow and participation.
    pub onchain_flow: DimensionScore,
    /// Momentum and range position.
    pub price: DimensionScore,
    /// Market cap, liquidity and holders.
    pub market: DimensionScore,
}

/// The data product names of `POST {tools}/data-products/{product_id}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DataProductId {
    /// Net-flow leaders, whale alerts and exodus together.
    SmartMoneySignals,
    /// Picks ranked across all chains.
    TopAlphaPicks,
    /// Entries, invalidation and sizing per agent style.
    AgentStrategies,
}

/// Input of `POST {tools}/data-products/{product_id}`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct DataProductRequest {
    /// Which product (path parameter).
    #[garde(skip)]
    pub product_id: DataProductId,
    /// Optional filters.
    #[garde(dive)]
    #[serde(default)]
    pub params: DataProductParams,
}

impl RouteInput for DataProductRequest {}

/// Filters of a data product.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, garde::Validate)]
pub struct DataProductParams {
    /// Only these chains (default: all five signal chains).
    #[garde(length(max = 5))]
    pub chains: Option<Vec<SignalChain>>,
    /// Only items scoring at least this (0–100).
    #[garde(range(min = 0, max = 100))]
    pub min_score: Option<u8>,
    /// At most this many items (1–50, default 10).
    #[garde(range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

/// The chains signal products rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SignalChain {
    /// Solana.
    Solana,
    /// Base.
    Base,
    /// Ethereum.
    Ethereum,
    /// BNB Smart Chain.
    Bnb,
    /// Arbitrum.
    Arbitrum,
}

/// Output of a data product, tagged by `product_id`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "product_id", rename_all = "kebab-case")]
pub enum DataProductResponse {
    /// `smart-money-signals`.
    SmartMoneySignals(SmartMoneySignals),
    /// `top-alpha-picks`.
    TopAlphaPicks(TopAlphaPicks),
    /// `agent-strategies`.
    AgentStrategies(AgentStrategies),
}

/// Net-flow leaders, whale alerts and exits in one answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SmartMoneySignals {
    /// Snapshot freshness.
    #[serde(flatten)]
    pub meta: SnapshotMeta,
    /// Tokens with the largest 24-hour smart-money inflow.
    pub netflow_leaders: Vec<NetflowLeader>,
    /// Whale trades of the last hour.
    pub whale_alerts: Vec<WhaleAlert>,
    /// Exit signals.
    pub exodus: Vec<ExodusPick>,
}

/// A token ranked by smart-money inflow.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NetflowLeader {
    /// The token.
    pub token: TokenRef,
    /// Net USD inflow over 24 hours.
    pub net_flow_24h_usd: f64,
    /// Net USD inflow over 7 days.
    pub net_flow_7d_usd: f64,
    /// Smart-money wallets trading it.
    pub trader_count: u32,
}

/// Picks across every chain, ranked by score.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TopAlphaPicks {
    /// Snapshot freshness.
    #[serde(flatten)]
    pub meta: SnapshotMeta,
    /// Picks, best first.
    pub picks: Vec<TopPick>,
}

/// Ready-to-act plans per agent style, derived from the current picks.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgentStrategies {
    /// Snapshot freshness.
    #[serde(flatten)]
    pub meta: SnapshotMeta,
    /// One strategy per style.
    pub strategies: Vec<Strategy>,
}

/// A style's plan.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Strategy {
    /// The agent style.
    pub style: StrategyStyle,
    /// What the style is for, in one sentence.
    pub summary: String,
    /// Largest share of the portfolio one position may take, percent (conservative: 10).
    pub max_position_pct: f64,
    /// Positions to consider.
    pub entries: Vec<StrategyEntry>,
}

/// Agent styles, matching the sandbox templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StrategyStyle {
    /// Risk-first, 10 % position-size rule.
    Conservative,
    /// Meme-aware, larger positions.
    Aggressive,
    /// Watches many tokens, suggests no trades.
    Scanner,
    /// Deep research, no sizing.
    Research,
}

/// One suggested position.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StrategyEntry {
    /// The token.
    pub token: TokenRef,
    /// The pick's score.
    #[schemars(range(max = 100))]
    pub score: u8,
    /// Suggested entry price, USD.
    pub entry_price_usd: f64,
    /// Price at which the idea is wrong, USD.
    pub invalidation_price_usd: f64,
    /// Suggested position size, percent of portfolio (0 for styles that do not trade).
    pub position_size_pct: f64,
    /// Why, in one sentence.
    pub rationale: String,
}

/// `GET /api/public/alpha/track-record`: how past signals turned out, so an agent can judge
/// the product before paying for it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TrackRecordResponse {
    /// The newest snapshot, whose prices are "now" below.
    pub as_of: Option<Timestamp>,
    /// The oldest snapshot looked at.
    pub since: Option<Timestamp>,
    /// Snapshots looked at.
    pub snapshots: u32,
    /// Hit rates: `overall` first, then one per chain.
    pub hit_rates: Vec<HitRate>,
    /// Past signals, newest first: each token's first appearance in a run of snapshots.
    pub signals: Vec<TrackedSignal>,
}

/// What kind of signal a tracked signal was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SignalKind {
    /// A Top Pick: a hit when the price rose since.
    Pick,
    /// An Exodus signal: a hit when the price fell since.
    Exit,
}

/// One past signal and how its token's price moved since.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TrackedSignal {
    /// Pick or exit.
    pub kind: SignalKind,
    /// The token.
    pub token: TokenRef,
    /// When the signal was first published.
    pub signalled_at: Timestamp,
    /// Its score then (composite for picks, exit score for exits).
    #[schemars(range(max = 100))]
    pub score: u8,
    /// Price when the signal was published, USD.
    pub price_at_signal_usd: f64,
    /// Price in the newest snapshot, USD; absent when the token is no longer tracked.
    pub price_now_usd: Option<f64>,
    /// Change from the signal to now, percent.
    pub change_pct: Option<f64>,
    /// Highest price seen in snapshots since, USD.
    pub best_price_since_usd: Option<f64>,
    /// Lowest price seen in snapshots since, USD.
    pub worst_price_since_usd: Option<f64>,
    /// Whether the price went the signal's way; absent until a later snapshot exists.
    pub hit: Option<bool>,
}

/// Share of decided signals that went their way.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HitRate {
    /// `overall` or a chain name.
    pub scope: String,
    /// Signals with an outcome.
    pub decided: u32,
    /// Of which went the signal's way.
    pub hits: u32,
    /// `hits / decided` in percent; absent when nothing is decided yet.
    pub hit_rate_pct: Option<f64>,
}
