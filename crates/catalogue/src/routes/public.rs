//! Free routes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::Chain;

use super::common::{NoInput, Timestamp};
use crate::{Group, RouteSpec};

/// The free routes.
pub fn routes() -> Vec<RouteSpec> {
    vec![
        RouteSpec::get::<NoInput, TokenStatsResponse>(
            "public.tokens_stats",
            "/api/public/tokens/stats",
            "Market data for the top tokens: price, 24 h change, volume, market cap and liquidity. Free.",
        )
        .group(Group::Free)
        .tag("public"),
    ]
}

/// `GET /api/public/tokens/stats`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TokenStatsResponse {
    /// Where the numbers come from (`store` until the market-data feed is wired).
    pub source: String,
    /// When the newest row was updated; absent when there is no data yet.
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
