//! The synthetic market: generated once from a seed, then every quantity is a function of
//! the clock.

use std::sync::Arc;

use svc_domain::Clock;

pub(crate) const DAY_MS: i64 = 86_400_000;
pub(crate) const HOUR_MS: i64 = 3_600_000;
/// The perpetual markets' rng stream.
const PERPS_SALT: u64 = 0x7065_7270_7300_0001;

mod defi;
mod launchpad;
mod perps;

pub use defi::{DefiPosition, EvmToken, NATIVE_SENTINEL, NontokenizedPosition, SolToken, YieldPool, Yields};
pub use launchpad::{Coin, CoinState};
pub use perps::{BookSide, PerpAccount, PerpLedgerOrder, PerpMarket, PerpMarketState, PerpPosition};

mod market;

pub(crate) use market::mix;
pub use market::{
    DcaOrder, EventTime, MARKET_CHAINS, MAX_EVENT_WINDOW_MS, MINUTE_MS, PerpCoin, PerpTrade, Position, Scenario, Token,
    TokenKind, Trade, Transfer, WHALE_TRADE_USD, Wallet, WalletKind, WalletPerpPosition,
};

/// The simulated market.
#[derive(Debug)]
pub struct World {
    clock: Arc<dyn Clock>,
    genesis_ms: i64,
    coins: Vec<Coin>,
    perp_markets: Vec<PerpMarket>,
    perp_accounts: Vec<PerpAccount>,
    perp_ledger: perps::PerpLedger,
    market: market::Market,
    defi: defi::Defi,
}

impl World {
    /// A world grown from `seed`. Its coins were created in the two weeks before the start
    /// of the clock's current UTC day, so simulators started the same day agree.
    pub fn new(seed: u64, clock: Arc<dyn Clock>) -> Self {
        let genesis_ms = clock.now_ms().div_euclid(DAY_MS) * DAY_MS;
        // Each part of the world draws from its own stream, so adding a part never changes
        // another part's data.
        let coins = launchpad::grow(&mut fastrand::Rng::with_seed(seed), genesis_ms);
        let (perp_markets, perp_accounts) = perps::grow(&mut fastrand::Rng::with_seed(seed ^ PERPS_SALT));
        let market = market::grow(seed, genesis_ms);
        let defi = defi::grow(seed);
        World {
            clock,
            genesis_ms,
            coins,
            perp_markets,
            perp_accounts,
            perp_ledger: perps::PerpLedger::default(),
            market,
            defi,
        }
    }

    /// The current time of the world.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The start of the UTC day the world was grown on.
    pub fn genesis_ms(&self) -> i64 {
        self.genesis_ms
    }
}

/// A random 32-byte Solana address.
pub(crate) fn address(rng: &mut fastrand::Rng) -> String {
    let bytes: [u8; 32] = std::array::from_fn(|_| rng.u8(..));
    bs58::encode(bytes).into_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::FixedClock;

    const NOW: i64 = 1_795_341_600_000;

    #[test]
    fn the_same_seed_grows_the_same_world() {
        let a = World::new(7, Arc::new(FixedClock::at_ms(NOW)));
        let b = World::new(7, Arc::new(FixedClock::at_ms(NOW + 1000)));
        let c = World::new(8, Arc::new(FixedClock::at_ms(NOW)));
        assert_eq!(a.coins()[0].mint, b.coins()[0].mint);
        assert_ne!(a.coins()[0].mint, c.coins()[0].mint);
    }
}
