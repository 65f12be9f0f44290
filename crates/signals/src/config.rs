//! Tunables of the signal products, with documented defaults.

use serde::{Deserialize, Serialize};

/// How the composite Top Pick score weighs its six dimensions. The weights need not sum to
/// one: the composite divides by their sum, so only their ratios matter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// Smart-money net flow and participation (default 0.30: the product's core signal).
    pub flow: f64,
    /// Mention velocity and engagement (default 0.15: noisy and easy to game).
    pub social: f64,
    /// Momentum and range position (default 0.15).
    pub price: f64,
    /// Token age and recency of smart-money buying (default 0.10).
    pub freshness: f64,
    /// Market cap, liquidity and holders: can a position be entered and left (default 0.15).
    pub market: f64,
    /// Scan verdict (EVM contract scan, Solana mint authorities) and holder concentration
    /// (default 0.15; it is also a gate).
    pub safety: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights { flow: 0.30, social: 0.15, price: 0.15, freshness: 0.10, market: 0.15, safety: 0.15 }
    }
}

/// When a token may never be a pick, whatever its score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SafetyGate {
    /// DEX liquidity below this (USD) cannot absorb an exit (default 50 000).
    pub min_liquidity_usd: f64,
    /// The top ten holders owning more than this share (percent) can dump on everyone
    /// else (default 60).
    pub max_top10_holder_pct: f64,
    /// Unknown is never safe. A token whose holder concentration or scan (an EVM token's
    /// contract scan, a Solana token's mint authorities) is unknown scores at most neutral (50)
    /// on safety, and is a pick only if its flow scores at least this (default 75)...
    pub unknown_safety_min_flow: f64,
    /// ...and its market at least this (default 50, neutral; the liquidity floor above holds
    /// as well): strong buying into a market deep enough to leave is the only evidence that
    /// can stand in for a safety check.
    pub unknown_safety_min_market: f64,
}

impl Default for SafetyGate {
    fn default() -> Self {
        SafetyGate {
            min_liquidity_usd: 50_000.0,
            max_top10_holder_pct: 60.0,
            unknown_safety_min_flow: 75.0,
            unknown_safety_min_market: 50.0,
        }
    }
}

/// Everything the scoring reads besides its inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignalConfig {
    /// Dimension weights of the composite.
    pub weights: Weights,
    /// The safety gate.
    pub gate: SafetyGate,
    /// Picks per chain (default 3, as the contract says).
    pub picks_per_chain: usize,
    /// The smallest trade that is a whale alert, USD (default 50 000).
    pub whale_threshold_usd: f64,
    /// How far back whale alerts reach, ms (default one hour).
    pub whale_window_ms: i64,
    /// The window of exit signals, ms (default 24 hours).
    pub exodus_window_ms: i64,
    /// Fewest distinct smart-money sellers for an exit signal (default 2: one seller is a
    /// trade, not an exodus).
    pub exodus_min_sellers: u32,
    /// Smallest net outflow that is an exit signal, USD (default 10 000: below that, selling
    /// is noise however many wallets take part).
    pub exodus_min_outflow_usd: f64,
    /// Most exit signals kept (default 20).
    pub exodus_limit: usize,
    /// Most net-flow leaders kept (default 20).
    pub leaders_limit: usize,
    /// Time between snapshots, ms (default 30 minutes).
    pub refresh_interval_ms: i64,
}

impl Default for SignalConfig {
    fn default() -> Self {
        SignalConfig {
            weights: Weights::default(),
            gate: SafetyGate::default(),
            picks_per_chain: 3,
            whale_threshold_usd: 50_000.0,
            whale_window_ms: 60 * 60 * 1000,
            exodus_window_ms: 24 * 60 * 60 * 1000,
            exodus_min_sellers: 2,
            exodus_min_outflow_usd: 10_000.0,
            exodus_limit: 20,
            leaders_limit: 20,
            refresh_interval_ms: 30 * 60 * 1000,
        }
    }
}
