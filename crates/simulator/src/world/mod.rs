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
mod mints;
mod perps;
mod predmkt;
mod social;

pub use defi::{DefiPosition, EvmToken, NATIVE_SENTINEL, NontokenizedPosition, SolToken, YieldPool, Yields};
pub use launchpad::{Coin, CoinState};
pub use mints::{Mint, TOKEN_PROGRAM};
pub use perps::{BookSide, PerpAccount, PerpLedgerOrder, PerpMarket, PerpMarketState, PerpPosition};

mod market;

pub(crate) use market::mix;
pub use market::{
    DcaOrder, EventTime, MARKET_CHAINS, MAX_EVENT_WINDOW_MS, MINUTE_MS, PerpCoin, PerpTrade, Position, Scenario, Token,
    TokenKind, Trade, Transfer, WHALE_TRADE_USD, Wallet, WalletKind, WalletPerpPosition,
};
pub use predmkt::{PAYOUT, Planted, PredBook, PredEvent, PredMarket};
pub use social::{PostKind, PostMetrics, RECENT_WINDOW_MS, SOCIAL_TOKENS, SocialAccount, SocialPost};

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
    pred_events: Vec<PredEvent>,
    pred_markets: Vec<PredMarket>,
    social_seed: u64,
    social_accounts: Vec<SocialAccount>,
    social_posters: Vec<usize>,
    /// Seed of the mints' authorities (see [`World::mint`]).
    mints_seed: u64,
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
        let (pred_events, pred_markets) = predmkt::grow(&mut fastrand::Rng::with_seed(seed ^ PREDMKT_SALT), genesis_ms);
        let social_accounts = social::grow(&mut fastrand::Rng::with_seed(seed ^ SOCIAL_SALT), genesis_ms);
        let social_posters = (0..social_accounts.len()).filter(|&i| !social_accounts[i].protected).collect();
        World {
            clock,
            genesis_ms,
            coins,
            perp_markets,
            perp_accounts,
            perp_ledger: perps::PerpLedger::default(),
            market,
            defi,
            pred_events,
            pred_markets,
            social_seed: seed ^ SOCIAL_SALT,
            social_accounts,
            social_posters,
            mints_seed: seed ^ mints::MINTS_SALT,
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

/// Salt of the prediction markets' random stream.
const PREDMKT_SALT: u64 = 0x7072_6564_6d6b_7400;

/// Salt of the social network's random stream.
const SOCIAL_SALT: u64 = 0x736f_6369_616c_0000;

/// A well-mixed hash of three numbers (splitmix64 steps), for quantities that must vary
/// with time yet be the same on every call.
pub(crate) fn mix3(a: u64, b: u64, c: u64) -> u64 {
    let step = |mut z: u64| {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    step(step(step(a) ^ b) ^ c)
}

/// A stable number for a string (FNV-1a), to seed [`mix3`] with an identifier.
pub(crate) fn seed_of(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
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
