//! Perpetual futures: one set of markets quoted by both derivatives venues (the perp exchange
//! by coin, `BTC`; the order-book exchange's indexer by ticker, `BTC-USD`). Mark and oracle
//! prices, funding, open interest, books, candles and trades are functions of the clock;
//! a few accounts hold positions; orders the agent places rest or fill in a small ledger.

use std::f64::consts::TAU;
use std::sync::Mutex;

use super::{DAY_MS, HOUR_MS, World};

/// A perpetual market's fixed facts; everything that moves follows from the time.
#[derive(Debug, Clone)]
pub struct PerpMarket {
    /// Coin, as the perp exchange names it (`BTC`).
    pub coin: String,
    /// Position in the perp exchange's universe: the asset id its orders carry.
    pub asset: u32,
    /// Decimals of order sizes on the perp exchange.
    pub sz_decimals: u8,
    /// Largest leverage.
    pub max_leverage: u32,
    /// Price around which the market swings, USD.
    base_price: f64,
    /// Amplitudes of the daily, three-hourly and seven-minute swings (log-price).
    swings: [f64; 3],
    /// Phases of those swings and of the premium.
    phases: [f64; 4],
    /// Average premium of mark over oracle.
    premium_bias: f64,
    /// Open interest around which it swings, coin units.
    base_open_interest: f64,
    /// Notional traded per day, USD.
    base_day_volume: f64,
}

/// One market at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct PerpMarketState {
    /// Mark price.
    pub mark: f64,
    /// Oracle (index) price.
    pub oracle: f64,
    /// Mark 24 hours ago.
    pub prev_day: f64,
    /// Hourly funding rate.
    pub funding: f64,
    /// (mark - oracle) / oracle.
    pub premium: f64,
    /// Open interest, coin units.
    pub open_interest: f64,
    /// Notional traded in the last 24 hours, USD.
    pub day_volume_usd: f64,
}

/// One side of a book, best first: (price, size, orders).
pub type BookSide = Vec<(f64, f64, u32)>;

/// A position an account holds.
#[derive(Debug, Clone)]
pub struct PerpPosition {
    /// Market index.
    pub market: usize,
    /// Signed size: positive long, negative short.
    pub szi: f64,
    /// Average entry price.
    pub entry_px: f64,
    /// Leverage.
    pub leverage: u32,
}

/// An account on the perp exchange.
#[derive(Debug, Clone)]
pub struct PerpAccount {
    /// Address, 0x and 40 lowercase hex digits.
    pub address: String,
    /// USD deposited.
    pub deposit_usd: f64,
    /// Open positions.
    pub positions: Vec<PerpPosition>,
}

/// An order the agent placed, as the exchange remembers it.
#[derive(Debug, Clone, PartialEq)]
pub struct PerpLedgerOrder {
    /// Order id.
    pub oid: u64,
    /// Asset id.
    pub asset: u32,
    /// Buy side.
    pub is_buy: bool,
    /// Limit price as sent.
    pub limit_px: String,
    /// Size as sent.
    pub sz: String,
    /// When it was placed, unix ms.
    pub time_ms: i64,
    /// Filled at once (else resting).
    pub filled: bool,
    /// Cancelled since.
    pub cancelled: bool,
}

/// What the agent's orders did: resting and filled orders, newest last.
#[derive(Debug, Default)]
pub struct PerpLedger {
    orders: Mutex<Vec<PerpLedgerOrder>>,
}

/// (coin, price USD, size decimals, max leverage).
const MARKETS: [(&str, f64, u8, u32); 12] = [
    ("BTC", 97_000.0, 5, 40),
    ("ETH", 3_400.0, 4, 25),
    ("SOL", 190.0, 2, 20),
    ("DOGE", 0.32, 0, 10),
    ("AVAX", 38.0, 2, 10),
    ("LINK", 22.0, 1, 10),
    ("ARB", 0.85, 1, 10),
    ("SUI", 4.2, 1, 10),
    ("XRP", 2.3, 0, 20),
    ("APT", 9.5, 2, 10),
    ("OP", 2.1, 1, 10),
    ("LTC", 105.0, 2, 10),
];

/// Grows the markets and the accounts holding positions in them.
pub(super) fn grow(rng: &mut fastrand::Rng) -> (Vec<PerpMarket>, Vec<PerpAccount>) {
    let markets: Vec<PerpMarket> = MARKETS
        .iter()
        .enumerate()
        .map(|(i, &(coin, base_price, sz_decimals, max_leverage))| PerpMarket {
            coin: coin.to_owned(),
            asset: u32::try_from(i).unwrap_or(u32::MAX),
            sz_decimals,
            max_leverage,
            base_price,
            swings: [0.02 + rng.f64() * 0.03, 0.005 + rng.f64() * 0.01, 0.001 + rng.f64() * 0.002],
            phases: std::array::from_fn(|_| rng.f64() * TAU),
            premium_bias: (rng.f64() - 0.4) * 0.0006,
            base_open_interest: 2e8 / base_price * (0.2 + rng.f64()),
            base_day_volume: 5e8 * (0.05 + rng.f64()),
        })
        .collect();
    let accounts = (0..6)
        .map(|_| {
            let count = rng.usize(1..=3);
            let positions = (0..count)
                .map(|_| {
                    let market = rng.usize(..markets.len());
                    let m = &markets[market];
                    let notional = 500.0 + rng.f64() * 20_000.0;
                    let side = if rng.bool() { 1.0 } else { -1.0 };
                    let szi = round_to(side * notional / m.base_price, i32::from(m.sz_decimals));
                    PerpPosition {
                        market,
                        szi,
                        entry_px: sig_figs(m.base_price * (0.9 + rng.f64() * 0.2), 5),
                        leverage: rng.u32(1..=m.max_leverage.min(20)),
                    }
                })
                .filter(|p| p.szi != 0.0)
                .collect();
            let address: String = (0..20).map(|_| format!("{:02x}", rng.u8(..))).collect();
            PerpAccount { address: format!("0x{address}"), deposit_usd: 1_000.0 + rng.f64() * 50_000.0, positions }
        })
        .collect();
    (markets, accounts)
}

impl PerpMarket {
    /// The order-book exchange's ticker for this market (`BTC-USD`).
    pub fn ticker(&self) -> String {
        format!("{}-USD", self.coin)
    }

    /// Mark price at `ms`.
    pub fn mark_at(&self, ms: i64) -> f64 {
        let t = ms as f64;
        let wave = |period: f64, amp: f64, phase: f64| amp * (TAU * t / period + phase).sin();
        let log = wave(DAY_MS as f64, self.swings[0], self.phases[0])
            + wave(3.0 * HOUR_MS as f64, self.swings[1], self.phases[1])
            + wave(7.0 * 60_000.0, self.swings[2], self.phases[2]);
        self.base_price * log.exp()
    }

    /// Premium of mark over oracle at `ms`.
    pub fn premium_at(&self, ms: i64) -> f64 {
        self.premium_bias + 0.0003 * (TAU * ms as f64 / (5.0 * HOUR_MS as f64) + self.phases[3]).sin()
    }

    /// Oracle price at `ms`.
    pub fn oracle_at(&self, ms: i64) -> f64 {
        self.mark_at(ms) / (1.0 + self.premium_at(ms))
    }

    /// Hourly funding rate at `ms`: the base interest rate plus an eighth of the premium.
    pub fn funding_at(&self, ms: i64) -> f64 {
        (0.000_012_5 + self.premium_at(ms) / 8.0).clamp(-0.004, 0.004)
    }

    /// The smallest price step: five significant figures of the mark, as the perp exchange
    /// allows.
    pub fn tick(&self) -> f64 {
        10f64.powi(self.base_price.log10().floor() as i32 - 4)
    }

    /// The smallest size step.
    pub fn step(&self) -> f64 {
        10f64.powi(-i32::from(self.sz_decimals))
    }
}

impl World {
    /// Every perpetual market.
    pub fn perp_markets(&self) -> &[PerpMarket] {
        &self.perp_markets
    }

    /// The market of coin `coin` (perp exchange) or ticker `coin`-USD (indexer).
    pub fn perp_market(&self, coin: &str) -> Option<&PerpMarket> {
        self.perp_markets.iter().find(|m| m.coin == coin)
    }

    /// The market with this indexer ticker.
    pub fn perp_market_by_ticker(&self, ticker: &str) -> Option<&PerpMarket> {
        self.perp_markets.iter().find(|m| m.ticker() == ticker)
    }

    /// Accounts holding positions.
    pub fn perp_accounts(&self) -> &[PerpAccount] {
        &self.perp_accounts
    }

    /// The account with this address (any case).
    pub fn perp_account(&self, address: &str) -> Option<&PerpAccount> {
        self.perp_accounts.iter().find(|a| a.address.eq_ignore_ascii_case(address))
    }

    /// The agent's orders so far.
    pub fn perp_ledger(&self) -> Vec<PerpLedgerOrder> {
        self.perp_ledger.orders.lock().map(|o| o.clone()).unwrap_or_default()
    }

    /// `market` now.
    pub fn perp_state(&self, market: &PerpMarket) -> PerpMarketState {
        let now = self.now_ms();
        let wave = |period: f64| (TAU * now as f64 / period + market.phases[1]).sin();
        PerpMarketState {
            mark: market.mark_at(now),
            oracle: market.oracle_at(now),
            prev_day: market.mark_at(now - DAY_MS),
            funding: market.funding_at(now),
            premium: market.premium_at(now),
            open_interest: market.base_open_interest * (1.0 + 0.1 * wave(11.0 * HOUR_MS as f64)),
            day_volume_usd: market.base_day_volume * (1.0 + 0.2 * wave(DAY_MS as f64)),
        }
    }

    /// The book of `market` now: `depth` levels a side, (price, size, orders), best first.
    /// Sizes change every second.
    pub fn perp_book(&self, market: &PerpMarket, depth: usize) -> (BookSide, BookSide) {
        let now = self.now_ms();
        let tick = market.tick();
        let mid = (market.mark_at(now) / tick).round() * tick;
        let second = u64::try_from(now.div_euclid(1000)).unwrap_or(0);
        let side = |sign: f64, salt: u64| -> BookSide {
            (1..=depth)
                .map(|level| {
                    let h = mix(u64::from(market.asset) << 32 ^ (level as u64) << 8 ^ salt, second);
                    // Two ticks a level, one more at random: strictly away from the mid.
                    let px = round_to(mid + sign * tick * (2.0 * level as f64 + (h % 2) as f64), 10);
                    let notional = 2_000.0 + (h >> 8) as f64 % 60_000.0 * (level as f64).sqrt();
                    let sz = round_to((notional / px).max(market.step()), i32::from(market.sz_decimals));
                    (px, sz, 1 + (h >> 20) as u32 % 12)
                })
                .collect()
        };
        (side(-1.0, 1), side(1.0, 2))
    }

    /// Candles of `market` of `interval_ms` from `start_ms` to `end_ms` (at most `limit`, the
    /// latest kept), each (open time, open, high, low, close, base volume, trades). Candles
    /// after now are not there yet.
    pub fn perp_candles(
        &self,
        market: &PerpMarket,
        interval_ms: i64,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> Vec<(i64, f64, f64, f64, f64, f64, u64)> {
        let interval = interval_ms.max(60_000);
        let end = end_ms.min(self.now_ms());
        let first = start_ms.div_euclid(interval) * interval;
        let count = usize::try_from((end - first).div_euclid(interval) + 1).unwrap_or(0);
        let skip = count.saturating_sub(limit);
        (skip..count)
            .map(|i| {
                let open_ms = first + interval * i as i64;
                let close_ms = (open_ms + interval - 1).min(end);
                let samples: Vec<f64> =
                    (0..=4).map(|k| market.mark_at(open_ms + (close_ms - open_ms) * k / 4)).collect();
                let high = samples.iter().copied().fold(f64::MIN, f64::max);
                let low = samples.iter().copied().fold(f64::MAX, f64::min);
                let h = mix(u64::from(market.asset), u64::try_from(open_ms).unwrap_or(0));
                let share = interval as f64 / DAY_MS as f64;
                let volume = market.base_day_volume * share * (0.5 + (h % 1000) as f64 / 1000.0) / samples[0];
                (open_ms, samples[0], high, low, samples[4], volume, 10 + h % 500)
            })
            .collect()
    }

    /// Hourly funding of `market` from `start_ms` to now (at most `limit`, the latest kept):
    /// (time, rate, premium, oracle price).
    pub fn perp_funding_history(&self, market: &PerpMarket, start_ms: i64, limit: usize) -> Vec<(i64, f64, f64, f64)> {
        let now = self.now_ms();
        let first = (start_ms + HOUR_MS - 1).div_euclid(HOUR_MS) * HOUR_MS;
        let count = usize::try_from((now - first).div_euclid(HOUR_MS) + 1).unwrap_or(0);
        (count.saturating_sub(limit)..count)
            .map(|i| {
                let at = first + HOUR_MS * i as i64;
                (at, market.funding_at(at), market.premium_at(at), market.oracle_at(at))
            })
            .collect()
    }

    /// The last `count` trades of `market`, newest first: (id, time, is buy, price, size).
    pub fn perp_trades(&self, market: &PerpMarket, count: usize) -> Vec<(u64, i64, bool, f64, f64)> {
        let now = self.now_ms();
        // A trade every 7 s, on a grid so the same trade keeps its id and time.
        let last = now.div_euclid(7_000);
        (0..count as i64)
            .map(|k| {
                let slot = last - k;
                let at = slot * 7_000;
                let h = mix(u64::from(market.asset) ^ 0x7a, u64::try_from(slot).unwrap_or(0));
                let px = round_to((market.mark_at(at) / market.tick()).round() * market.tick(), 10);
                let sz =
                    round_to(((100.0 + (h % 20_000) as f64) / px).max(market.step()), i32::from(market.sz_decimals));
                (h >> 4, at, h & 1 == 0, px, sz)
            })
            .collect()
    }

    /// Records an order of the agent; `filled` says whether it crossed the book at once.
    /// Returns its order id.
    pub fn perp_place(&self, asset: u32, is_buy: bool, limit_px: &str, sz: &str, filled: bool) -> u64 {
        let Ok(mut orders) = self.perp_ledger.orders.lock() else { return 0 };
        let oid = 77_738_308 + orders.len() as u64;
        orders.push(PerpLedgerOrder {
            oid,
            asset,
            is_buy,
            limit_px: limit_px.to_owned(),
            sz: sz.to_owned(),
            time_ms: self.now_ms(),
            filled,
            cancelled: false,
        });
        oid
    }

    /// Cancels a resting order of the agent; false if there is none with this id and asset.
    pub fn perp_cancel(&self, asset: u32, oid: u64) -> bool {
        let Ok(mut orders) = self.perp_ledger.orders.lock() else { return false };
        match orders.iter_mut().find(|o| o.oid == oid && o.asset == asset && !o.filled && !o.cancelled) {
            Some(order) => {
                order.cancelled = true;
                true
            }
            None => false,
        }
    }
}

/// A cheap, well-spread hash of two numbers (splitmix64 finaliser), for per-moment noise that
/// needs no stored state.
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_add(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `x` rounded to `decimals` decimals.
pub(crate) fn round_to(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// `x` rounded to `figures` significant figures.
pub(crate) fn sig_figs(x: f64, figures: i32) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    let decimals = figures - 1 - x.abs().log10().floor() as i32;
    round_to(x, decimals.max(0))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use svc_domain::FixedClock;

    const NOW: i64 = 1_795_341_600_000;

    #[test]
    fn prices_move_with_the_clock_and_stay_near_their_base() {
        let clock = FixedClock::at_ms(NOW);
        let world = World::new(1, Arc::new(clock.clone()));
        let btc = world.perp_market("BTC").expect("btc").clone();
        let before = world.perp_state(&btc);
        clock.advance_ms(HOUR_MS);
        let after = world.perp_state(&btc);
        assert_ne!(before.mark, after.mark);
        assert!((after.mark / 97_000.0 - 1.0).abs() < 0.15, "{}", after.mark);
        assert!(after.funding.abs() < 0.004 && after.open_interest > 0.0);
    }

    #[test]
    fn the_book_is_crossed_nowhere_and_candles_stop_at_now() {
        let world = World::new(2, Arc::new(FixedClock::at_ms(NOW)));
        let eth = world.perp_market_by_ticker("ETH-USD").expect("eth");
        let (bids, asks) = world.perp_book(eth, 10);
        assert!(bids[0].0 < asks[0].0);
        assert!(bids.windows(2).all(|w| w[0].0 > w[1].0) && asks.windows(2).all(|w| w[0].0 < w[1].0));
        let candles = world.perp_candles(eth, HOUR_MS, NOW - 5 * HOUR_MS, NOW + 5 * HOUR_MS, 100);
        assert_eq!(candles.len(), 6);
        assert!(candles.iter().all(|c| c.2 >= c.1.max(c.4) && c.3 <= c.1.min(c.4)));
    }

    #[test]
    fn the_ledger_cancels_only_resting_orders() {
        let world = World::new(3, Arc::new(FixedClock::at_ms(NOW)));
        let resting = world.perp_place(1, true, "3000", "0.1", false);
        let filled = world.perp_place(1, true, "9999", "0.1", true);
        assert!(!world.perp_cancel(1, filled));
        assert!(!world.perp_cancel(2, resting));
        assert!(world.perp_cancel(1, resting));
        assert!(!world.perp_cancel(1, resting));
    }
}
