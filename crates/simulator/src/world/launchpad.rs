//! Launchpad coins: each on a bonding curve that fills at its own pace and graduates to a
//! pool when full.

use super::{DAY_MS, HOUR_MS, World, address};

/// Virtual SOL on a fresh bonding curve, lamports (the launchpad's constant).
const CURVE_START_SOL: u64 = 30_000_000_000;
/// SOL that a full curve has taken in, lamports, before it graduates to a pool.
const CURVE_RAISE_SOL: u64 = 85_000_000_000;
/// Virtual tokens on a fresh curve, smallest units (6 decimals).
const CURVE_START_TOKENS: u64 = 1_073_000_000_000_000;
/// Supply of every launchpad coin, smallest units.
const LAUNCHPAD_SUPPLY: u64 = 1_000_000_000_000_000;

/// A launchpad coin's fixed facts; its curve position follows from the time.
#[derive(Debug, Clone)]
pub struct Coin {
    /// Mint address (base58).
    pub mint: String,
    /// Name.
    pub name: String,
    /// Ticker.
    pub symbol: String,
    /// Creator wallet (base58).
    pub creator: String,
    /// Creation time, unix ms.
    pub created_ms: i64,
    /// Curve progress at creation, 0..1.
    start_progress: f64,
    /// Curve progress per ms.
    progress_per_ms: f64,
    /// Has social links.
    pub socials: bool,
}

/// A coin's state at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct CoinState {
    /// Virtual SOL reserves, lamports.
    pub virtual_sol_reserves: u64,
    /// Virtual token reserves, smallest units.
    pub virtual_token_reserves: u64,
    /// Total supply, smallest units.
    pub total_supply: u64,
    /// The curve is done and the coin trades in a pool.
    pub complete: bool,
    /// When the coin passed half its curve, unix ms.
    pub king_of_the_hill_ms: Option<i64>,
    /// Market cap in SOL.
    pub market_cap_sol: f64,
    /// Market cap in USD.
    pub market_cap_usd: f64,
    /// Last trade, unix ms.
    pub last_trade_ms: i64,
}

const WORDS: [&str; 24] = [
    "Moon", "Frog", "Pepe", "Cat", "Dog", "Rocket", "Based", "Giga", "Chad", "Wojak", "Banana", "Laser", "Turbo",
    "Degen", "Whale", "Pixel", "Ghost", "Sushi", "Taco", "Neon", "Bonk", "Zen", "Cyber", "Llama",
];

/// The coins of a world grown on `genesis_ms`: created in the two weeks before it.
pub(super) fn grow(rng: &mut fastrand::Rng, genesis_ms: i64) -> Vec<Coin> {
    (0..48)
        .map(|i| {
            let first = WORDS[rng.usize(..WORDS.len())];
            let second = WORDS[rng.usize(..WORDS.len())];
            let name = format!("{first} {second}");
            let symbol = format!("{}{}", &first[..first.len().min(3)], &second[..1]).to_uppercase();
            let created_ms = genesis_ms - rng.i64(HOUR_MS..14 * DAY_MS);
            // Every fourth coin races through its curve; the rest crawl for weeks.
            let hours_to_finish = if i % 4 == 0 { rng.f64() * 48.0 + 1.0 } else { rng.f64() * 2_000.0 + 200.0 };
            Coin {
                mint: address(rng),
                name,
                symbol,
                creator: address(rng),
                created_ms,
                start_progress: rng.f64() * 0.05,
                progress_per_ms: 1.0 / (hours_to_finish * HOUR_MS as f64),
                socials: rng.bool(),
            }
        })
        .collect()
}

impl World {
    /// Every launchpad coin.
    pub fn coins(&self) -> &[Coin] {
        &self.coins
    }

    /// The coin with this mint.
    pub fn coin(&self, mint: &str) -> Option<&Coin> {
        self.coins.iter().find(|c| c.mint == mint)
    }

    /// SOL in USD now: drifts a few percent over the day.
    pub fn sol_usd(&self) -> f64 {
        let t = self.now_ms() as f64 / DAY_MS as f64;
        180.0 * (1.0 + 0.04 * (t * std::f64::consts::TAU).sin())
    }

    /// `coin`'s curve now: SOL flows in at its pace, reserves keep the constant product.
    pub fn coin_state(&self, coin: &Coin) -> CoinState {
        let now = self.now_ms().max(coin.created_ms);
        let progress_at =
            |ms: i64| (coin.start_progress + (ms - coin.created_ms) as f64 * coin.progress_per_ms).min(1.0);
        let progress = progress_at(now);
        let virtual_sol = CURVE_START_SOL + (CURVE_RAISE_SOL as f64 * progress) as u64;
        let k = u128::from(CURVE_START_SOL) * u128::from(CURVE_START_TOKENS);
        let virtual_tokens = u64::try_from(k / u128::from(virtual_sol)).unwrap_or(u64::MAX);
        // Price per whole token in SOL: (lamports / 1e9) / (units / 1e6).
        let price_sol = (virtual_sol as f64 / 1e9) / (virtual_tokens as f64 / 1e6);
        let market_cap_sol = price_sol * LAUNCHPAD_SUPPLY as f64 / 1e6;
        let half_ms = ((0.5 - coin.start_progress) / coin.progress_per_ms) as i64 + coin.created_ms;
        CoinState {
            virtual_sol_reserves: virtual_sol,
            virtual_token_reserves: virtual_tokens,
            total_supply: LAUNCHPAD_SUPPLY,
            complete: progress >= 1.0,
            king_of_the_hill_ms: (half_ms <= now).then_some(half_ms),
            market_cap_sol,
            market_cap_usd: market_cap_sol * self.sol_usd(),
            last_trade_ms: now - now.rem_euclid(60_000),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use svc_domain::FixedClock;

    const NOW: i64 = 1_795_341_600_000;

    #[test]
    fn curves_fill_with_time_and_graduate() {
        let clock = FixedClock::at_ms(NOW);
        let world = World::new(1, Arc::new(clock.clone()));
        let coin = world.coins()[0].clone();
        let before = world.coin_state(&coin);
        clock.advance_ms(HOUR_MS);
        let after = world.coin_state(&coin);
        assert!(after.virtual_sol_reserves >= before.virtual_sol_reserves);
        assert!(after.virtual_token_reserves <= before.virtual_token_reserves);
        clock.advance_ms(200 * DAY_MS);
        let done = world.coin_state(&coin);
        assert!(done.complete && done.king_of_the_hill_ms.is_some());
        assert_eq!(done.virtual_sol_reserves, CURVE_START_SOL + CURVE_RAISE_SOL);
    }
}
