//! Volume discounts: the more a caller paid for in the trailing 30 days, the less each call
//! costs. The tiers are the contract's: 1–99 calls 0 %, 100–999 calls 20 %, 1,000 or more 40 %.

use serde::{Deserialize, Serialize};

use crate::Money;

/// The window over which paid calls are counted for a discount.
pub const DISCOUNT_WINDOW_MS: i64 = DISCOUNT_WINDOW_DAYS as i64 * 24 * 60 * 60 * 1000;

/// Days in [`DISCOUNT_WINDOW_MS`], as answers state the window.
pub const DISCOUNT_WINDOW_DAYS: u32 = 30;

/// Paid calls in the window from which each tier above the standard one starts.
const VOLUME_FROM: u64 = 100;
const WHALE_FROM: u64 = 1_000;

/// A caller's discount tier, derived from its paid calls in the trailing window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscountTier {
    /// Fewer than 100 calls: list price.
    Standard,
    /// 100–999 calls: 20 % off.
    Volume,
    /// 1,000 calls or more: 40 % off.
    Whale,
}

impl DiscountTier {
    /// Paid calls from which no further call changes the tier: counting a payer's calls can
    /// stop there.
    pub const TOP_FROM: u64 = WHALE_FROM;

    /// The tier for a number of paid calls in the window.
    pub fn for_calls(calls: u64) -> Self {
        match calls {
            c if c >= WHALE_FROM => DiscountTier::Whale,
            c if c >= VOLUME_FROM => DiscountTier::Volume,
            _ => DiscountTier::Standard,
        }
    }

    /// Paid calls still needed after `calls` to reach the next tier; `None` at the top.
    pub fn calls_to_next(calls: u64) -> Option<u64> {
        [VOLUME_FROM, WHALE_FROM].into_iter().find(|from| calls < *from).map(|from| from - calls)
    }

    /// Percent taken off the list price.
    pub fn percent_off(self) -> u8 {
        match self {
            DiscountTier::Standard => 0,
            DiscountTier::Volume => 20,
            DiscountTier::Whale => 40,
        }
    }

    /// The price this tier pays for a list price.
    pub fn apply(self, list: Money) -> Money {
        list.discounted(self.percent_off())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tier_boundaries_follow_the_contract() {
        assert_eq!(DiscountTier::for_calls(0), DiscountTier::Standard);
        assert_eq!(DiscountTier::for_calls(99), DiscountTier::Standard);
        assert_eq!(DiscountTier::for_calls(100), DiscountTier::Volume);
        assert_eq!(DiscountTier::for_calls(999), DiscountTier::Volume);
        assert_eq!(DiscountTier::for_calls(1000), DiscountTier::Whale);
        assert_eq!(DiscountTier::Whale.apply(Money::from_atomic(500_000)).atomic(), 300_000);
    }

    #[test]
    fn calls_to_the_next_tier_count_down_to_each_boundary() {
        assert_eq!(DiscountTier::calls_to_next(0), Some(100));
        assert_eq!(DiscountTier::calls_to_next(99), Some(1));
        assert_eq!(DiscountTier::calls_to_next(100), Some(900));
        assert_eq!(DiscountTier::calls_to_next(999), Some(1));
        assert_eq!(DiscountTier::calls_to_next(1000), None);
        assert_eq!(u64::from(DISCOUNT_WINDOW_DAYS) * 86_400_000, DISCOUNT_WINDOW_MS as u64);
    }
}
