//! Free routes.

use crate::ids;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::{Address, Chain, DiscountTier, Money};

use super::common::{NoInput, Timestamp};
use crate::{Group, RouteSpec};

/// The free routes.
pub fn routes() -> Vec<RouteSpec> {
    vec![
        RouteSpec::get::<NoInput, TokenStatsResponse>(
            ids::public::TOKENS_STATS,
            "/api/public/tokens/stats",
            "Market data for the top tokens: price, 24 h change, volume, market cap and liquidity. Free.",
        )
        .group(Group::Free)
        .tag("public"),
        RouteSpec::get::<NoInput, super::signals::TrackRecordResponse>(
            ids::public::ALPHA_TRACK_RECORD,
            "/api/public/alpha/track-record",
            "How past Top Picks and Exodus signals turned out: price at the signal and now, best and worst since, \
             and hit rates per chain and overall. Free.",
        )
        .group(Group::Free)
        .tag("signals"),
        RouteSpec::get::<PricingRequest, PricingResponse>(
            ids::x402::PRICING,
            "/api/x402/pricing",
            "Every paid route's price for a payer: its volume-discount tier, its paid calls in the trailing 30 days, \
             and the price it may pay per route. Free.",
        )
        .group(Group::Free)
        .tag("payments"),
    ]
}

/// Input of `GET /api/x402/pricing`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct PricingRequest {
    /// The paying wallet; list prices when absent.
    #[garde(skip)]
    pub payer: Option<Address>,
}

impl crate::RouteInput for PricingRequest {}

/// `GET /api/x402/pricing`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PricingResponse {
    /// The payer asked about, normalised; absent for list prices.
    pub payer: Option<String>,
    /// Its discount tier.
    pub tier: DiscountTier,
    /// Percent off list prices.
    pub percent_off: u8,
    /// Its successful paid calls in the window.
    pub calls_in_window: u64,
    /// The window, in days.
    pub window_days: u32,
    /// Calls still needed for the next tier; absent at the top tier.
    pub calls_to_next_tier: Option<u64>,
    /// Every paid route with its price for this payer.
    pub routes: Vec<RoutePrice>,
}

/// One route's price.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RoutePrice {
    /// Route id.
    pub id: String,
    /// HTTP method.
    pub method: String,
    /// Path template.
    pub path: String,
    /// List price per call (the lowest, for per-unit routes).
    pub list: Money,
    /// What this payer pays: the list price with its discount, rounded up to the atomic unit.
    pub price: Money,
    /// The most one call can cost (per-unit routes); equal to `list` otherwise.
    pub max: Money,
    /// Price of the credit-billed twin.
    pub credits: Money,
}

/// `GET /api/public/tokens/stats`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TokenStatsResponse {
    /// Where the numbers come from: `chaindata` (the chain-data token screener), or `store`
    /// (the last stored rows, served while that source fails).
    pub source: String,
    /// When the numbers were fetched; absent when there is no data yet.
    pub as_of: Option<Timestamp>,
    /// Tokens, largest first.
    pub tokens: Vec<TokenStat>,
}

/// Market data for one token. Market figures are analytics, not money svc moves, so they are
/// plain numbers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TokenStat {
    /// Chain.
    pub chain: Chain,
    /// Contract address or mint.
    pub address: String,
    /// Ticker symbol.
    pub symbol: String,
    /// Display name.
    pub name: String,
    /// Price in USD.
    pub price_usd: f64,
    /// 24-hour change, percent.
    pub change_24h_pct: Option<f64>,
    /// 24-hour trading volume, USD.
    pub volume_24h_usd: Option<f64>,
    /// Market capitalisation, USD.
    pub market_cap_usd: Option<f64>,
    /// DEX liquidity, USD.
    pub liquidity_usd: Option<f64>,
    /// When this row was updated.
    pub updated_at: Timestamp,
}
