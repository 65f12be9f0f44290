//! What the scoring reads: plain facts the engine gathered, one struct per source, each
//! optional so a failed source leaves its dimension neutral and marked instead of failing
//! the whole snapshot.

use svc_catalogue::routes::common::{SourceStatus, TokenRef};
use svc_domain::Chain;

/// Everything one snapshot is computed from.
#[derive(Debug, Clone, Default)]
pub struct SignalInput {
    /// The instant of the snapshot, unix ms.
    pub now_ms: i64,
    /// Candidate tokens (traded tokens only: no stablecoins or wrapped native coins).
    pub tokens: Vec<TokenInput>,
    /// Smart-money and tracked-wallet trades of the exodus window, any order, maybe with
    /// duplicates (pages of a feed overlap).
    pub trades: Vec<TradeInput>,
    /// Health of every source the inputs came from.
    pub sources: Vec<SourceStatus>,
    /// Dimensions whose source failed at this refresh: `flow`, `social`, `price`, `market`,
    /// `safety`. Their scores are neutral where data is missing and marked degraded.
    pub degraded: Vec<&'static str>,
}

/// One candidate token with what is known about it.
#[derive(Debug, Clone)]
pub struct TokenInput {
    /// The token.
    pub token: TokenRef,
    /// Smart-money flows, when the flow source answered.
    pub flow: Option<FlowFacts>,
    /// Market figures, when the screener answered.
    pub market: Option<MarketFacts>,
    /// Price history, when the screener answered.
    pub price: Option<PriceFacts>,
    /// Days since deployment, when known.
    pub age_days: Option<u32>,
    /// Social counts, when fetched for this token.
    pub social: Option<SocialFacts>,
    /// Safety facts, when fetched for this token.
    pub safety: Option<SafetyFacts>,
}

/// Smart-money net flows of one token.
#[derive(Debug, Clone, Copy, Default)]
pub struct FlowFacts {
    /// Net USD over the last hour (negative = outflow).
    pub net_1h_usd: f64,
    /// Net USD over 24 hours.
    pub net_24h_usd: f64,
    /// Net USD over 7 days.
    pub net_7d_usd: f64,
    /// Smart-money wallets in the token.
    pub trader_count: u32,
    /// USD deposited to exchanges over 24 hours (a sign holders mean to sell), when fetched.
    pub exchange_inflow_usd: Option<f64>,
}

/// Market size and depth of one token.
#[derive(Debug, Clone, Copy, Default)]
pub struct MarketFacts {
    /// Market cap, USD.
    pub market_cap_usd: f64,
    /// DEX liquidity, USD.
    pub liquidity_usd: f64,
    /// Holders.
    pub holders: u64,
    /// 24-hour volume, USD.
    pub volume_24h_usd: f64,
}

/// Price now and its recent path.
#[derive(Debug, Clone, Copy, Default)]
pub struct PriceFacts {
    /// Price now, USD.
    pub price_usd: f64,
    /// Change over 24 hours, percent.
    pub change_24h_pct: f64,
    /// Change over 7 days, percent.
    pub change_7d_pct: f64,
    /// Highest price of the last 7 days, when candles were fetched.
    pub high_7d_usd: Option<f64>,
    /// Lowest price of the last 7 days, when candles were fetched.
    pub low_7d_usd: Option<f64>,
}

/// Social counts of one token.
#[derive(Debug, Clone, Default)]
pub struct SocialFacts {
    /// Mentions in the last hour.
    pub mentions_1h: u32,
    /// Mentions in the last 24 hours.
    pub mentions_24h: u32,
    /// Likes, reposts and replies on recent mentions.
    pub engagement: u64,
    /// Notable accounts that mentioned it.
    pub notable_accounts: Vec<String>,
}

/// What is known about a token's safety.
#[derive(Debug, Clone, Copy, Default)]
pub struct SafetyFacts {
    /// A scanner flagged the token (or its contract) as malicious.
    pub malicious: bool,
    /// A scanner warned about it without calling it malicious.
    pub warning: bool,
    /// Share of supply the ten largest holders own, percent, when known.
    pub top10_holder_pct: Option<f64>,
    /// The token's scan gave its verdict: the contract scan of an EVM token, the mint's
    /// authorities of a Solana token. Without it the token's safety is unknown, never clean.
    pub scanned: bool,
    /// The scan was asked for but failed (or the chain's answer was no token at all): its
    /// verdict is unknown, not clean.
    pub scan_missing: bool,
    /// Solana: the mint authority is live, so whoever holds it can mint more and dilute
    /// every holder.
    pub mint_authority_live: bool,
    /// Solana: the freeze authority is live, so whoever holds it can freeze any holder's
    /// tokens, and a buyer may never be able to sell.
    pub freeze_authority_live: bool,
}

impl SafetyFacts {
    /// Whether everything the safety score reads is known: the holder concentration, and a
    /// scan verdict.
    pub fn complete(&self) -> bool {
        self.top10_holder_pct.is_some() && self.scanned && !self.scan_missing
    }
}

/// One DEX trade by a tracked wallet, already turned around so `token` is the traded token
/// (never the stablecoin or native coin on the other side).
#[derive(Debug, Clone)]
pub struct TradeInput {
    /// Chain.
    pub chain: Chain,
    /// Transaction hash.
    pub tx_hash: String,
    /// Trader wallet.
    pub wallet: String,
    /// Its label, when known.
    pub label: Option<String>,
    /// Counted as smart money (exits count only these sellers).
    pub smart_money: bool,
    /// Traded token address.
    pub token_address: String,
    /// Traded token symbol.
    pub token_symbol: String,
    /// The wallet bought the token (else sold it).
    pub buy: bool,
    /// Trade value, USD.
    pub value_usd: f64,
    /// Block time, unix ms.
    pub at_ms: i64,
}
