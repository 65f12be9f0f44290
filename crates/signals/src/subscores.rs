//! What the scoring and the sentences it writes both read: a token's six sub-scores, and the
//! rule that keeps a vendor's NaN out of either. Below both, so the scoring can call the
//! sentences without the sentences reaching back into the scoring.

/// The six sub-scores of one token, 0–100, before rounding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubScores {
    /// On-chain flow.
    pub flow: f64,
    /// Social.
    pub social: f64,
    /// Price.
    pub price: f64,
    /// Freshness.
    pub freshness: f64,
    /// Market.
    pub market: f64,
    /// Safety.
    pub safety: f64,
}

/// A finite number or zero: vendor numbers can be NaN or infinite, and neither may leak into
/// a score or a thesis.
pub(crate) fn finite(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}
