//! Prediction markets: events holding one binary market (YES/NO) or several (one per
//! outcome, `negRisk`), each outcome with an order book that moves with the clock.
//!
//! Prices are kept in tenths of a cent (1/1000 of the payout) so books and sums are exact.
//! Two scenarios are planted for the arbitrage route: one binary market whose YES and NO
//! best asks sum to less than the payout, and one multi-outcome event whose YES best asks
//! sum to less than the payout. Every other book is priced so that no such set exists.

use super::{DAY_MS, HOUR_MS, MINUTE_MS, World, mix3, seed_of};

/// Payout of one winning share, in the world's price units (tenths of a cent).
pub const PAYOUT: u32 = 1000;
/// Price step of every book, in price units (one cent).
const TICK: u32 = 10;
/// Levels on each side of a book.
const DEPTH: u32 = 5;
/// How long the displayed (catalogue) price lags the books: it is refreshed every 5 minutes.
const DISPLAY_LAG_MS: i64 = 5 * MINUTE_MS;

/// An event: one question, or one set of mutually exclusive outcomes.
#[derive(Debug, Clone)]
pub struct PredEvent {
    /// Catalogue id (decimal).
    pub id: String,
    /// Title.
    pub title: String,
    /// URL slug.
    pub slug: String,
    /// Several markets, exactly one of which resolves YES.
    pub neg_risk: bool,
    /// Indexes of its markets in [`World::pred_markets`].
    pub markets: Vec<usize>,
}

/// A market: a YES/NO question with one order book per outcome.
#[derive(Debug, Clone)]
pub struct PredMarket {
    /// Catalogue id (decimal).
    pub id: String,
    /// Condition id, `0x` and 64 hex digits.
    pub condition_id: String,
    /// Question id, `0x` and 64 hex digits.
    pub question_id: String,
    /// The question.
    pub question: String,
    /// Short label inside its event (the outcome it stands for), for multi-outcome events.
    pub group_item_title: String,
    /// URL slug.
    pub slug: String,
    /// Index of its event in [`World::pred_events`].
    pub event: usize,
    /// Resolution time, unix ms.
    pub end_ms: i64,
    /// Outcome names, index-aligned with `token_ids`.
    pub outcomes: [String; 2],
    /// Order-book token ids (decimal, 77 digits).
    pub token_ids: [String; 2],
    /// Part of a multi-outcome event.
    pub neg_risk: bool,
    /// Volume traded by the world's genesis, USD.
    pub base_volume: f64,
    /// Liquidity resting in the books, USD.
    pub liquidity: f64,
    /// The planted scenario this market belongs to, if any.
    pub planted: Option<Planted>,
    /// YES price around which it moves, price units.
    center: f64,
    /// Swing of the YES price, price units.
    swing: f64,
    /// Where in its cycle it starts, radians.
    phase: f64,
    /// Cycle length, ms.
    period_ms: f64,
    /// Half the bid-ask gap, in ticks.
    half_spread_ticks: u32,
}

/// A scenario planted for the arbitrage scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Planted {
    /// YES and NO best asks of this market sum to 970 (a 3% edge).
    BinaryArbitrage,
    /// YES best asks of every market of this event sum to 970 (a 3% edge).
    MultiOutcomeArbitrage,
}

/// One side of a book at one moment: `(price units, shares)`, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct PredBook {
    /// Bids, highest first.
    pub bids: Vec<(u32, u64)>,
    /// Asks, lowest first.
    pub asks: Vec<(u32, u64)>,
}

impl PredBook {
    /// The best bid, price units.
    pub fn best_bid(&self) -> Option<u32> {
        self.bids.first().map(|l| l.0)
    }

    /// The best ask, price units.
    pub fn best_ask(&self) -> Option<u32> {
        self.asks.first().map(|l| l.0)
    }

    /// Midpoint, in half price units (`bid + ask`), exact.
    pub fn mid_x2(&self) -> Option<u32> {
        Some(self.best_bid()? + self.best_ask()?)
    }
}

const BINARY: [&str; 10] = [
    "Will Bitcoin reach $150,000 by December 31?",
    "Will Ethereum close above $5,000 this month?",
    "Will Solana flip Ethereum in daily DEX volume this week?",
    "Will a spot SOL ETF be approved this year?",
    "Will Tether's market cap exceed $200B by year end?",
    "Will the Fed cut rates at the next meeting?",
    "Will Bitcoin dominance be above 60% on Friday?",
    "Will a memecoin enter the top 10 by market cap this year?",
    "Will an exchange list a new layer-1 token this week?",
    "Will Ethereum gas average below 5 gwei tomorrow?",
];

/// Which binary question carries the planted binary arbitrage.
const PLANTED_BINARY: usize = 2;

struct Multi {
    title: &'static str,
    question: &'static str,
    items: &'static [&'static str],
    planted: bool,
}

const MULTI: [Multi; 3] = [
    Multi {
        title: "Largest crypto by market cap on December 31",
        question: "Will {} be the largest crypto by market cap on December 31?",
        items: &["Bitcoin", "Ethereum", "Solana", "Another coin"],
        planted: false,
    },
    Multi {
        title: "Bitcoin price range on Friday",
        question: "Will Bitcoin trade {} on Friday?",
        items: &["below $90k", "between $90k and $110k", "above $110k"],
        planted: true,
    },
    Multi {
        title: "Next Fed rate decision",
        question: "Will the Fed decide: {}?",
        items: &["cut 50+ bps", "cut 25 bps", "no change", "hike"],
        planted: false,
    },
];

/// The events and markets of a world grown on `genesis_ms`.
pub(super) fn grow(rng: &mut fastrand::Rng, genesis_ms: i64) -> (Vec<PredEvent>, Vec<PredMarket>) {
    let mut events = Vec::new();
    let mut markets = Vec::new();
    for (i, question) in BINARY.iter().enumerate() {
        let event = events.len();
        let planted = (i == PLANTED_BINARY).then_some(Planted::BinaryArbitrage);
        let center = 150.0 + rng.f64() * 700.0;
        let market = market(rng, genesis_ms, event, question, "", center, planted, false);
        events.push(PredEvent {
            id: (16_000 + event * 7).to_string(),
            title: (*question).to_owned(),
            slug: market.slug.clone(),
            neg_risk: false,
            markets: vec![markets.len()],
        });
        markets.push(market);
    }
    for multi in &MULTI {
        let event = events.len();
        // YES prices of an event's outcomes share the payout.
        let weights: Vec<f64> = multi.items.iter().map(|_| rng.f64() + 0.3).collect();
        let sum: f64 = weights.iter().sum();
        let planted = multi.planted.then_some(Planted::MultiOutcomeArbitrage);
        let mut ids = Vec::new();
        for (item, weight) in multi.items.iter().zip(&weights) {
            let question = multi.question.replace("{}", item);
            let center = (weight / sum * f64::from(PAYOUT)).clamp(60.0, 900.0);
            ids.push(markets.len());
            markets.push(market(rng, genesis_ms, event, &question, item, center, planted, true));
        }
        events.push(PredEvent {
            id: (16_000 + event * 7).to_string(),
            title: multi.title.to_owned(),
            slug: slugify(multi.title),
            neg_risk: true,
            markets: ids,
        });
    }
    (events, markets)
}

#[allow(clippy::too_many_arguments)]
fn market(
    rng: &mut fastrand::Rng,
    genesis_ms: i64,
    event: usize,
    question: &str,
    item: &str,
    center: f64,
    planted: Option<Planted>,
    neg_risk: bool,
) -> PredMarket {
    let token = |rng: &mut fastrand::Rng| {
        let mut id = rng.u8(1..=9).to_string();
        id.extend((0..76).map(|_| char::from(b'0' + rng.u8(..10))));
        id
    };
    PredMarket {
        id: (500_000 + rng.u32(..400_000)).to_string(),
        condition_id: hex32(rng),
        question_id: hex32(rng),
        question: question.to_owned(),
        group_item_title: item.to_owned(),
        slug: slugify(question),
        event,
        end_ms: genesis_ms + rng.i64(3 * DAY_MS..120 * DAY_MS),
        outcomes: ["Yes".to_owned(), "No".to_owned()],
        token_ids: [token(rng), token(rng)],
        neg_risk,
        base_volume: (rng.f64() * 4_000_000.0 + 20_000.0).round(),
        liquidity: (rng.f64() * 300_000.0 + 5_000.0).round(),
        planted,
        center,
        swing: if neg_risk { 20.0 } else { 40.0 + rng.f64() * 60.0 },
        phase: rng.f64() * std::f64::consts::TAU,
        period_ms: (6.0 + rng.f64() * 42.0) * HOUR_MS as f64,
        half_spread_ticks: rng.u32(1..=3),
    }
}

fn hex32(rng: &mut fastrand::Rng) -> String {
    let mut s = String::from("0x");
    for _ in 0..32 {
        s.push_str(&format!("{:02x}", rng.u8(..)));
    }
    s
}

fn slugify(text: &str) -> String {
    let mut slug = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_owned()
}

impl World {
    /// Every prediction-market event.
    pub fn pred_events(&self) -> &[PredEvent] {
        &self.pred_events
    }

    /// Every prediction market.
    pub fn pred_markets(&self) -> &[PredMarket] {
        &self.pred_markets
    }

    /// The market with this condition id (any case).
    pub fn pred_market(&self, condition_id: &str) -> Option<&PredMarket> {
        self.pred_markets.iter().find(|m| m.condition_id.eq_ignore_ascii_case(condition_id))
    }

    /// The market and outcome index of an order-book token.
    pub fn pred_token(&self, token_id: &str) -> Option<(&PredMarket, usize)> {
        self.pred_markets.iter().find_map(|m| m.token_ids.iter().position(|t| t == token_id).map(|i| (m, i)))
    }

    /// The market's YES price at `ms`, price units on the tick grid: its cycle, sampled once
    /// a minute. The YES prices of a multi-outcome event are scaled to share the payout
    /// exactly, so only a planted event can be bought whole for less.
    fn yes_center_at(&self, market: &PredMarket, ms: i64) -> u32 {
        let minute = ms - ms.rem_euclid(MINUTE_MS);
        let raw = |m: &PredMarket| {
            let angle = m.phase + minute as f64 / m.period_ms * std::f64::consts::TAU;
            (m.center + m.swing * angle.sin()).max(f64::from(4 * TICK))
        };
        if !market.neg_risk {
            let ticks = (raw(market) / f64::from(TICK)).round().clamp(4.0, 96.0);
            return ticks as u32 * TICK;
        }
        let siblings = &self.pred_events[market.event].markets;
        let raws: Vec<f64> = siblings.iter().map(|&i| raw(&self.pred_markets[i])).collect();
        let total: f64 = raws.iter().sum();
        let slots = PAYOUT / TICK;
        let exact: Vec<f64> = raws.iter().map(|r| r / total * f64::from(slots)).collect();
        let mut ticks: Vec<u32> = exact.iter().map(|e| e.floor() as u32).collect();
        // Largest remainders take the ticks lost to rounding down.
        let mut order: Vec<usize> = (0..ticks.len()).collect();
        order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
        let missing = slots.saturating_sub(ticks.iter().sum());
        for &i in order.iter().cycle().take(missing as usize) {
            ticks[i] += 1;
        }
        let me = siblings.iter().position(|&i| self.pred_markets[i].condition_id == market.condition_id);
        me.map_or(PAYOUT / 2, |i| ticks[i] * TICK)
    }

    /// The book of outcome `outcome` (0 = YES, 1 = NO) of `market` at `ms`.
    fn pred_book_at(&self, market: &PredMarket, outcome: usize, ms: i64) -> PredBook {
        let yes = self.yes_center_at(market, ms);
        let center = if outcome == 0 { yes } else { PAYOUT - yes };
        let half = market.half_spread_ticks * TICK;
        // Planted books sit below their fair value: asks one (YES) and two (NO) ticks under
        // the centre for the binary market, one tick under for every YES of the event.
        let (best_bid, best_ask) = match (market.planted, outcome) {
            (Some(Planted::BinaryArbitrage), 0) | (Some(Planted::MultiOutcomeArbitrage), 0) => {
                (center - 2 * TICK, center - TICK)
            }
            (Some(Planted::BinaryArbitrage), _) => (center - 3 * TICK, center - 2 * TICK),
            _ => (center.saturating_sub(half).max(TICK), (center + half).min(PAYOUT - TICK)),
        };
        let minute = ms.div_euclid(MINUTE_MS) as u64;
        let token = seed_of(&market.token_ids[outcome]);
        let size = |side: u64, level: u32| 50 + mix3(token, minute, side * 16 + u64::from(level)) % 4_950;
        let bids = (0..DEPTH)
            .filter_map(|l| best_bid.checked_sub(l * TICK).filter(|p| *p >= TICK).map(|p| (p, size(1, l))))
            .collect();
        let asks = (0..DEPTH)
            .map(|l| best_ask + l * TICK)
            .filter(|p| *p <= PAYOUT - TICK)
            .enumerate()
            .map(|(l, p)| (p, size(2, l as u32)))
            .collect();
        PredBook { bids, asks }
    }

    /// The book of outcome `outcome` (0 = YES, 1 = NO) of `market` now.
    pub fn pred_book(&self, market: &PredMarket, outcome: usize) -> PredBook {
        self.pred_book_at(market, outcome, self.now_ms())
    }

    /// The displayed prices of `market`'s outcomes (YES, NO), price units: the book midpoints
    /// as of the last 5-minute refresh of the catalogue, so they lag the books a little.
    pub fn pred_display_prices(&self, market: &PredMarket) -> [u32; 2] {
        let now = self.now_ms();
        let at = now - now.rem_euclid(DISPLAY_LAG_MS);
        let yes = self.pred_book_at(market, 0, at).mid_x2().map_or(PAYOUT / 2, |m| m / 2);
        [yes, PAYOUT - yes]
    }

    /// Volume traded so far, USD: grows through the day.
    pub fn pred_volume(&self, market: &PredMarket) -> f64 {
        let hours = (self.now_ms() - self.genesis_ms()) as f64 / HOUR_MS as f64;
        (market.base_volume + market.liquidity * 0.05 * hours.max(0.0)).round()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use svc_domain::FixedClock;

    const NOW: i64 = 1_795_341_600_000;

    fn world(clock: &FixedClock) -> World {
        World::new(crate::DEFAULT_SEED, Arc::new(clock.clone()))
    }

    #[test]
    fn only_the_planted_scenarios_can_be_bought_for_less_than_the_payout() {
        let clock = FixedClock::at_ms(NOW);
        let world = world(&clock);
        for _ in 0..24 {
            for market in world.pred_markets() {
                let yes = world.pred_book(market, 0).best_ask().expect("ask");
                let no = world.pred_book(market, 1).best_ask().expect("ask");
                let planted = market.planted == Some(Planted::BinaryArbitrage);
                assert_eq!(yes + no < PAYOUT, planted, "{}", market.question);
                if planted {
                    assert_eq!(yes + no, 970);
                }
            }
            for event in world.pred_events().iter().filter(|e| e.neg_risk) {
                let asks: u32 = event
                    .markets
                    .iter()
                    .map(|&m| world.pred_book(&world.pred_markets()[m], 0).best_ask().expect("ask"))
                    .sum();
                let planted = world.pred_markets()[event.markets[0]].planted.is_some();
                assert_eq!(asks < PAYOUT, planted, "{} sums to {asks}", event.title);
            }
            clock.advance_ms(HOUR_MS);
        }
    }

    #[test]
    fn books_are_ordered_uncrossed_and_move_with_the_clock() {
        let clock = FixedClock::at_ms(NOW);
        let world = world(&clock);
        let market = &world.pred_markets()[0];
        let before = world.pred_book(market, 0);
        assert!(before.bids.windows(2).all(|w| w[0].0 > w[1].0));
        assert!(before.asks.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(before.best_bid() < before.best_ask());
        let moved = (1..48).any(|_| {
            clock.advance_ms(HOUR_MS);
            world.pred_book(market, 0).best_ask() != before.best_ask()
        });
        assert!(moved, "the book moves over two days");
    }
}
