//! The scoring: six sub-scores per token, the safety gate, the per-chain ranking, exits,
//! whale alerts and net-flow leaders.

use std::collections::{BTreeMap, HashMap, HashSet};

use svc_catalogue::routes::common::{LabelledWallet, Timestamp};
use svc_catalogue::routes::signals::{
    DimensionScore, Dimensions, ExodusPick, LiteDimensions, LitePick, NetflowLeader, PicksByChain, PricePosition,
    Seller, SmartMoneyFlow, SocialAnalysis, TopPick, TradeSide, WhaleAlert,
};
use svc_domain::Chain;

use crate::config::SignalConfig;
use crate::input::{SafetyFacts, SignalInput, TokenInput, TradeInput};
use crate::subscores::{SubScores, finite};
use crate::{Snapshot, thesis, timestamp};

/// The neutral sub-score given where a dimension has no data.
const NEUTRAL: f64 = 50.0;
/// Safety points a live mint authority costs a Solana token, as much as a scanner's warning:
/// its holder can mint more and dilute every holder, yet holders can still sell.
const LIVE_MINT_PENALTY: f64 = 30.0;
/// Safety points a live freeze authority costs a Solana token. Its holder can freeze any
/// holder's tokens, so a buyer may never sell: the gate refuses such a token outright.
const LIVE_FREEZE_PENALTY: f64 = 50.0;
/// One hour, ms.
const HOUR_MS: i64 = 60 * 60 * 1000;

/// A score clamped to 0–100 (NaN becomes the neutral score).
fn clamp(x: f64) -> f64 {
    if x.is_nan() { NEUTRAL } else { x.clamp(0.0, 100.0) }
}

/// A signed amount squashed into -1..1, reaching ±0.76 at `scale`.
fn squash(x: f64, scale: f64) -> f64 {
    (finite(x) / scale).tanh()
}

/// Trade facts of one token in the exodus window.
#[derive(Debug, Default)]
struct TradeStats {
    /// Smart-money buyers.
    buyers: HashSet<usize>,
    /// Smart-money sellers.
    sellers: HashSet<usize>,
    /// Net USD per smart-money wallet (negative = sold).
    per_wallet: HashMap<usize, f64>,
    /// First smart-money buy in the window.
    first_buy_ms: Option<i64>,
}

/// Interned wallets, so per-token sets hold integers rather than strings.
#[derive(Default)]
struct Wallets<'a> {
    index: HashMap<(Chain, &'a str), usize>,
    list: Vec<(&'a str, Option<&'a str>)>,
}

impl<'a> Wallets<'a> {
    fn id(&mut self, t: &'a TradeInput) -> usize {
        if let Some(&i) = self.index.get(&(t.chain, t.wallet.as_str())) {
            if self.list[i].1.is_none() {
                self.list[i].1 = t.label.as_deref();
            }
            return i;
        }
        let i = self.list.len();
        self.list.push((&t.wallet, t.label.as_deref()));
        self.index.insert((t.chain, &t.wallet), i);
        i
    }

    fn address(&self, w: usize) -> String {
        self.list[w].0.to_owned()
    }

    fn label(&self, w: usize) -> Option<String> {
        self.list[w].1.map(str::to_owned)
    }
}

/// The six sub-scores of `t` (first buy: the first smart-money buy of the window, if any).
pub fn sub_scores(t: &TokenInput, first_buy_ms: Option<i64>, now_ms: i64) -> SubScores {
    let flow = t.flow.map_or(NEUTRAL, |f| {
        let participation = (f64::from(f.trader_count) / 20.0).min(1.0) * 2.0 - 1.0;
        let cap = t.market.map_or(0.0, |m| finite(m.market_cap_usd)).max(1_000_000.0);
        // Flows relative to the market cap, so a large token needs a large flow to score.
        let raw = 0.40 * squash(f.net_24h_usd / cap * 100.0, 1.0)
            + 0.25 * squash(f.net_7d_usd / cap * 100.0, 3.0)
            + 0.15 * squash(f.net_1h_usd / cap * 100.0, 0.2)
            + 0.20 * if f.net_24h_usd > 0.0 { participation.max(0.0) } else { 0.0 };
        50.0 + 50.0 * raw
    });
    let social = t.social.as_ref().map_or(NEUTRAL, |s| {
        let baseline = (f64::from(s.mentions_24h) / 24.0).max(0.5);
        let velocity = f64::from(s.mentions_1h) / baseline;
        let engagement = ((s.engagement as f64 + 1.0).log10() / 5.0).min(1.0);
        let notable = (s.notable_accounts.len() as f64 / 3.0).min(1.0);
        55.0 * (1.0 - (-velocity / 2.0).exp()) + 30.0 * engagement + 15.0 * notable
    });
    let price = t.price.map_or(NEUTRAL, |p| {
        let range = range_position(p);
        // Momentum, with a small penalty for buying at the very top of the range.
        50.0 + 25.0 * squash(p.change_24h_pct, 10.0) + 25.0 * squash(p.change_7d_pct, 30.0)
            - 10.0 * (range - 0.9).max(0.0) * 10.0
    });
    let freshness = {
        let age = t.age_days.map_or(NEUTRAL, |d| 100.0 * (-f64::from(d) / 365.0).exp());
        let recent = first_buy_ms.map_or(0.0, |at| {
            let hours = ((now_ms - at).max(0) as f64) / HOUR_MS as f64;
            100.0 * (1.0 - hours / 24.0).clamp(0.0, 1.0)
        });
        0.7 * age + 0.3 * recent
    };
    let market = t.market.map_or(NEUTRAL, |m| {
        let liquidity = ((finite(m.liquidity_usd).max(1.0) / 10_000.0).log10() / 3.0).clamp(0.0, 1.0);
        let holders = ((m.holders as f64 + 1.0).log10() / 5.0).clamp(0.0, 1.0);
        let cap = finite(m.market_cap_usd).max(1.0).log10();
        // Best between $5M and $500M: room to grow, yet enough depth to trade.
        let size = if (6.7..=8.7).contains(&cap) { 1.0 } else { (1.0 - (cap - 7.7).abs().min(3.0) / 3.0).max(0.0) };
        100.0 * (0.40 * liquidity + 0.30 * holders + 0.30 * size)
    });
    let safety = t.safety.map_or(NEUTRAL, |s| {
        if s.malicious {
            return 0.0;
        }
        let concentration = s.top10_holder_pct.map_or(0.0, |p| (finite(p) - 20.0).max(0.0) * 1.25);
        let flagged = |on: bool, points: f64| if on { points } else { 0.0 };
        let known = 100.0
            - concentration
            - flagged(s.warning, 30.0)
            - flagged(s.mint_authority_live, LIVE_MINT_PENALTY)
            - flagged(s.freeze_authority_live, LIVE_FREEZE_PENALTY);
        // What is not known cannot make a token look safe: at most neutral.
        if s.complete() { known } else { known.min(NEUTRAL) }
    });
    SubScores {
        flow: clamp(flow),
        social: clamp(social),
        price: clamp(price),
        freshness: clamp(freshness),
        market: clamp(market),
        safety: clamp(safety),
    }
}

/// Where the price sits in its 7-day range, 0 (low) to 1 (high).
fn range_position(p: crate::input::PriceFacts) -> f64 {
    let (high, low) = range(p);
    if high > low { ((finite(p.price_usd) - low) / (high - low)).clamp(0.0, 1.0) } else { 0.5 }
}

/// The 7-day high and low: from candles when fetched, else the range of the three observed
/// points (now, 24 hours ago, 7 days ago) the price changes imply.
fn range(p: crate::input::PriceFacts) -> (f64, f64) {
    let now = finite(p.price_usd);
    let back = |pct: f64| {
        let k = 1.0 + finite(pct) / 100.0;
        if k > 0.0 { now / k } else { now }
    };
    let points = [now, back(p.change_24h_pct), back(p.change_7d_pct)];
    let high = p.high_7d_usd.map(finite).unwrap_or_else(|| points.iter().copied().fold(f64::MIN, f64::max));
    let low = p.low_7d_usd.map(finite).unwrap_or_else(|| points.iter().copied().fold(f64::MAX, f64::min));
    (high.max(now), low.min(now))
}

/// Whether the safety gate lets a scored token be a pick. A malicious token, one whose top
/// holders own too much, and a Solana token whose freeze authority is live (its holder can
/// freeze a buyer's tokens so they can never be sold: a honeypot by another name) never are.
/// A token whose safety data is incomplete (no scan verdict, or no holder concentration) must
/// clear the stricter bar of [`crate::config::SafetyGate`] on flow and market.
fn passes_gate(s: &Scored<'_>, config: &SignalConfig) -> bool {
    let gate = &config.gate;
    let t = s.token;
    if let Some(safety) = t.safety
        && (safety.malicious
            || safety.freeze_authority_live
            || safety.top10_holder_pct.is_some_and(|p| p > gate.max_top10_holder_pct))
    {
        return false;
    }
    if !t.safety.is_some_and(|f| f.complete())
        && (s.subs.flow < gate.unknown_safety_min_flow || s.subs.market < gate.unknown_safety_min_market)
    {
        return false;
    }
    t.market.is_none_or(|m| finite(m.liquidity_usd) >= gate.min_liquidity_usd)
}

/// One scored candidate.
struct Scored<'a> {
    token: &'a TokenInput,
    subs: SubScores,
    composite: f64,
    lite: f64,
    stats: Option<&'a TradeStats>,
}

/// Computes the snapshot of `input` under `config`.
pub fn compute(input: &SignalInput, config: &SignalConfig) -> Snapshot {
    let now = input.now_ms;
    let mut wallets = Wallets::default();
    let mut stats: HashMap<(Chain, &str), TradeStats> = HashMap::new();
    let from = now - config.exodus_window_ms;
    let mut seen: HashSet<(Chain, &str, &str)> = HashSet::new();
    for t in &input.trades {
        if !t.smart_money || t.at_ms <= from || t.at_ms > now || !seen.insert((t.chain, &t.tx_hash, &t.wallet)) {
            continue;
        }
        let w = wallets.id(t);
        let s = stats.entry((t.chain, t.token_address.as_str())).or_default();
        let value = finite(t.value_usd);
        if t.buy {
            s.buyers.insert(w);
            *s.per_wallet.entry(w).or_default() += value;
            s.first_buy_ms = Some(s.first_buy_ms.map_or(t.at_ms, |f| f.min(t.at_ms)));
        } else {
            s.sellers.insert(w);
            *s.per_wallet.entry(w).or_default() -= value;
        }
    }
    let weights = config.weights;
    let weight_sum =
        weights.flow + weights.social + weights.price + weights.freshness + weights.market + weights.safety;
    let lite_sum = weights.flow + weights.price + weights.market;
    let scored: Vec<Scored<'_>> = input
        .tokens
        .iter()
        .map(|token| {
            let st = stats.get(&(token.token.chain, token.token.address.as_str()));
            let subs = sub_scores(token, st.and_then(|s| s.first_buy_ms), now);
            let composite = (weights.flow * subs.flow
                + weights.social * subs.social
                + weights.price * subs.price
                + weights.freshness * subs.freshness
                + weights.market * subs.market
                + weights.safety * subs.safety)
                / weight_sum.max(f64::EPSILON);
            let lite = (weights.flow * subs.flow + weights.price * subs.price + weights.market * subs.market)
                / lite_sum.max(f64::EPSILON);
            Scored { token, subs, composite: clamp(composite), lite: clamp(lite), stats: st }
        })
        .collect();

    let mut picks = empty_lists();
    let mut lite = empty_lists();
    for chain in crate::SIGNAL_CHAINS {
        let eligible = |s: &&Scored<'_>| {
            s.token.token.chain == chain && passes_gate(s, config) && s.token.flow.is_some_and(|f| f.net_24h_usd > 0.0)
        };
        let mut full: Vec<&Scored<'_>> = scored.iter().filter(eligible).collect();
        full.sort_by(|a, b| {
            b.composite.total_cmp(&a.composite).then_with(|| a.token.token.address.cmp(&b.token.token.address))
        });
        let top: Vec<TopPick> = full
            .iter()
            .take(config.picks_per_chain)
            .enumerate()
            .map(|(i, s)| top_pick(s, i, input, &wallets))
            .collect();
        let mut light: Vec<&Scored<'_>> = scored.iter().filter(eligible).collect();
        light.sort_by(|a, b| b.lite.total_cmp(&a.lite).then_with(|| a.token.token.address.cmp(&b.token.token.address)));
        let top_lite: Vec<LitePick> = light
            .iter()
            .take(config.picks_per_chain)
            .enumerate()
            .map(|(i, s)| lite_pick(s, i, input, &wallets))
            .collect();
        *chain_slot(&mut picks, chain) = top;
        *chain_slot(&mut lite, chain) = top_lite;
    }

    let exodus = exodus(&scored, config, &wallets);
    let whale_alerts = whale_alerts(&input.trades, now, config);
    let mut leaders: Vec<NetflowLeader> = input
        .tokens
        .iter()
        .filter_map(|t| {
            let f = t.flow?;
            (finite(f.net_24h_usd) > 0.0).then(|| NetflowLeader {
                token: t.token.clone(),
                net_flow_24h_usd: finite(f.net_24h_usd),
                net_flow_7d_usd: finite(f.net_7d_usd),
                trader_count: f.trader_count,
            })
        })
        .collect();
    leaders.sort_by(|a, b| {
        b.net_flow_24h_usd.total_cmp(&a.net_flow_24h_usd).then_with(|| a.token.address.cmp(&b.token.address))
    });
    leaders.truncate(config.leaders_limit);

    Snapshot {
        generated_at_ms: now,
        next_refresh_at_ms: now + config.refresh_interval_ms,
        sources: input.sources.clone(),
        picks,
        lite,
        exodus,
        whale_alerts,
        whale_threshold_usd: config.whale_threshold_usd,
        netflow_leaders: leaders,
        prices: crate::track::prices_of(&input.tokens),
    }
}

fn empty_lists<T>() -> PicksByChain<T> {
    PicksByChain { solana: Vec::new(), base: Vec::new(), ethereum: Vec::new(), bnb: Vec::new(), arbitrum: Vec::new() }
}

fn chain_slot<T>(p: &mut PicksByChain<T>, chain: Chain) -> &mut Vec<T> {
    match chain {
        Chain::Solana => &mut p.solana,
        Chain::Base => &mut p.base,
        Chain::Ethereum => &mut p.ethereum,
        Chain::Bnb => &mut p.bnb,
        _ => &mut p.arbitrum,
    }
}

fn round_score(x: f64) -> u8 {
    clamp(x).round() as u8
}

/// One dimension block: `inputs` are `None` where unknown; `missing` names what is unknown
/// (or which source failed), and makes the block degraded.
fn dimension(score: f64, inputs: &[(&str, Option<f64>)], as_of: &Timestamp, missing: Option<String>) -> DimensionScore {
    DimensionScore {
        score: round_score(score),
        inputs: inputs.iter().map(|(k, v)| ((*k).to_owned(), v.map(finite))).collect::<BTreeMap<_, _>>(),
        as_of: as_of.clone(),
        degraded: missing.is_some(),
        degraded_reason: missing,
    }
}

/// Why a dimension is degraded: its data is absent, or its source failed this refresh.
fn missing_reason(input: &SignalInput, source: &str, present: bool, what: &str) -> Option<String> {
    if !present {
        Some(format!("no {what} data"))
    } else if input.degraded.contains(&source) {
        Some(format!("the {what} source failed this refresh; older data"))
    } else {
        None
    }
}

/// The six dimension blocks of a scored token.
fn dimensions(s: &Scored<'_>, input: &SignalInput) -> Dimensions {
    let t = s.token;
    let as_of = timestamp(input.now_ms);
    let flow = t.flow;
    let market = t.market;
    let price = t.price;
    let social = t.social.as_ref();
    let safety = t.safety;
    let solana = t.token.chain == Chain::Solana;
    // A Solana token's scan is its mint's authorities; an EVM token's, its contract scan.
    let (scan, scan_unknown) = if solana {
        ("mint/freeze authority", "mint/freeze authority unknown")
    } else {
        ("contract scan", "contract scan unavailable")
    };
    let unscanned = |f: &SafetyFacts| !f.scanned || f.scan_missing;
    let safety_missing = match safety {
        None => Some(format!("no safety data: holder concentration and {scan} unknown")),
        Some(f) if f.top10_holder_pct.is_none() && unscanned(&f) => {
            Some(format!("holder concentration unknown; {scan_unknown}"))
        }
        Some(f) if f.top10_holder_pct.is_none() => Some("holder concentration unknown".to_owned()),
        Some(f) if unscanned(&f) => Some(scan_unknown.to_owned()),
        Some(_) => missing_reason(input, "safety", true, "safety"),
    };
    let flag = |on: bool| if on { 1.0 } else { 0.0 };
    let verdict = safety.filter(|f| !unscanned(f));
    let mut safety_inputs = vec![
        // Solana has no malicious-contract scan: known only when something flagged it.
        ("malicious", safety.filter(|f| f.malicious || (!solana && !unscanned(f))).map(|f| flag(f.malicious))),
        ("top10_holder_pct", safety.and_then(|f| f.top10_holder_pct)),
    ];
    if solana {
        safety_inputs.push(("mint_authority_live", verdict.map(|f| flag(f.mint_authority_live))));
        safety_inputs.push(("freeze_authority_live", verdict.map(|f| flag(f.freeze_authority_live))));
    }
    let first_buy = s.stats.and_then(|x| x.first_buy_ms);
    Dimensions {
        onchain_flow: dimension(
            s.subs.flow,
            &[
                ("net_flow_1h_usd", flow.map(|f| f.net_1h_usd)),
                ("net_flow_24h_usd", flow.map(|f| f.net_24h_usd)),
                ("net_flow_7d_usd", flow.map(|f| f.net_7d_usd)),
                ("trader_count", flow.map(|f| f64::from(f.trader_count))),
            ],
            &as_of,
            missing_reason(input, "flow", flow.is_some(), "flow"),
        ),
        social: dimension(
            s.subs.social,
            &[
                ("mentions_1h", social.map(|s| f64::from(s.mentions_1h))),
                ("mentions_24h", social.map(|s| f64::from(s.mentions_24h))),
                ("engagement", social.map(|s| s.engagement as f64)),
            ],
            &as_of,
            missing_reason(input, "social", social.is_some(), "social"),
        ),
        price: dimension(
            s.subs.price,
            &[
                ("price_usd", price.map(|p| p.price_usd)),
                ("change_24h_pct", price.map(|p| p.change_24h_pct)),
                ("change_7d_pct", price.map(|p| p.change_7d_pct)),
            ],
            &as_of,
            missing_reason(input, "price", price.is_some(), "price"),
        ),
        freshness: dimension(
            s.subs.freshness,
            &[
                ("token_age_days", t.age_days.map(f64::from)),
                ("hours_since_first_smart_buy", first_buy.map(|at| (input.now_ms - at) as f64 / HOUR_MS as f64)),
            ],
            &as_of,
            missing_reason(input, "flow", t.age_days.is_some(), "token age"),
        ),
        market: dimension(
            s.subs.market,
            &[
                ("market_cap_usd", market.map(|m| m.market_cap_usd)),
                ("liquidity_usd", market.map(|m| m.liquidity_usd)),
                ("holders", market.map(|m| m.holders as f64)),
            ],
            &as_of,
            missing_reason(input, "market", market.is_some(), "market"),
        ),
        safety: dimension(s.subs.safety, &safety_inputs, &as_of, safety_missing),
    }
}

/// Flows of a token with its largest participants.
fn flow_block(s: &Scored<'_>, wallets: &Wallets<'_>) -> SmartMoneyFlow {
    let f = s.token.flow.unwrap_or_default();
    let mut top: Vec<LabelledWallet> = s
        .stats
        .map(|st| {
            st.per_wallet
                .iter()
                .map(|(w, net)| LabelledWallet {
                    address: wallets.address(*w),
                    label: wallets.label(*w),
                    net_flow_usd: *net,
                })
                .collect()
        })
        .unwrap_or_default();
    top.sort_by(|a, b| b.net_flow_usd.abs().total_cmp(&a.net_flow_usd.abs()).then_with(|| a.address.cmp(&b.address)));
    top.truncate(5);
    SmartMoneyFlow {
        net_flow_1h_usd: finite(f.net_1h_usd),
        net_flow_24h_usd: finite(f.net_24h_usd),
        net_flow_7d_usd: finite(f.net_7d_usd),
        buyer_wallets: s.stats.map_or(0, |st| st.buyers.len() as u32),
        seller_wallets: s.stats.map_or(0, |st| st.sellers.len() as u32),
        top_wallets: top,
    }
}

fn price_block(t: &TokenInput) -> PricePosition {
    let p = t.price.unwrap_or_default();
    let (high, low) = range(p);
    let now = finite(p.price_usd);
    PricePosition {
        price_usd: now,
        change_24h_pct: finite(p.change_24h_pct),
        change_7d_pct: finite(p.change_7d_pct),
        from_7d_high_pct: if high > 0.0 { finite((high - now) / high * 100.0) } else { 0.0 },
        from_7d_low_pct: if low > 0.0 { finite((now - low) / low * 100.0) } else { 0.0 },
    }
}

fn top_pick(s: &Scored<'_>, i: usize, input: &SignalInput, wallets: &Wallets<'_>) -> TopPick {
    let social = s.token.social.clone().unwrap_or_default();
    let baseline = (f64::from(social.mentions_24h) / 24.0).max(0.5);
    let flow = flow_block(s, wallets);
    let price = price_block(s.token);
    let score = round_score(s.composite);
    TopPick {
        rank: (i + 1) as u8,
        token: s.token.token.symbol.clone(),
        token_info: s.token.token.clone(),
        score,
        dimensions: dimensions(s, input),
        thesis: thesis::pick(
            &s.token.token,
            score,
            &s.subs,
            &flow,
            s.token.price.is_some().then_some(&price),
            s.token.social.as_ref(),
            thesis::risk(s.token.token.chain, s.token.safety.as_ref()).as_deref(),
        ),
        social: SocialAnalysis {
            mentions_1h: social.mentions_1h,
            mention_velocity: f64::from(social.mentions_1h) / baseline,
            engagement: social.engagement,
            notable_accounts: social.notable_accounts,
        },
        flow,
        price,
    }
}

fn lite_pick(s: &Scored<'_>, i: usize, input: &SignalInput, wallets: &Wallets<'_>) -> LitePick {
    let d = dimensions(s, input);
    let flow = flow_block(s, wallets);
    let price = price_block(s.token);
    let score = round_score(s.lite);
    let subs = SubScores { social: 0.0, freshness: 0.0, safety: 0.0, ..s.subs };
    LitePick {
        rank: (i + 1) as u8,
        token: s.token.token.symbol.clone(),
        token_info: s.token.token.clone(),
        score,
        dimensions: LiteDimensions { onchain_flow: d.onchain_flow, price: d.price, market: d.market },
        thesis: thesis::pick(
            &s.token.token,
            score,
            &subs,
            &flow,
            s.token.price.is_some().then_some(&price),
            None,
            thesis::risk(s.token.token.chain, s.token.safety.as_ref()).as_deref(),
        ),
        flow,
        price,
    }
}

/// Exit signals: tokens with a net smart-money outflow and at least the configured number of
/// distinct smart-money sellers in the window.
fn exodus(scored: &[Scored<'_>], config: &SignalConfig, wallets: &Wallets<'_>) -> Vec<ExodusPick> {
    let window = format!("{}h", config.exodus_window_ms / HOUR_MS);
    let mut out: Vec<ExodusPick> = scored
        .iter()
        .filter_map(|s| {
            let st = s.stats?;
            let sellers = st.sellers.len() as u32;
            let flow = s.token.flow.unwrap_or_default();
            let sold: f64 = st.per_wallet.values().filter(|v| **v < 0.0).map(|v| -v).sum();
            let outflow = if s.token.flow.is_some() { -finite(flow.net_24h_usd) } else { sold };
            if outflow <= 0.0 || outflow < config.exodus_min_outflow_usd || sellers < config.exodus_min_sellers {
                return None;
            }
            let cap = s.token.market.map_or(0.0, |m| finite(m.market_cap_usd)).max(1_000_000.0);
            let seller_share = f64::from(sellers) / (st.buyers.len() as f64 + f64::from(sellers)).max(1.0);
            let exchange_inflow = flow.exchange_inflow_usd.map(|x| finite(x).max(0.0));
            let raw = 0.35 * squash(outflow / cap * 100.0, 1.0)
                + 0.30 * (f64::from(sellers) / 10.0).min(1.0)
                + 0.15 * seller_share
                + 0.10 * squash(-finite(flow.net_7d_usd) / cap * 100.0, 3.0).max(0.0)
                + 0.10 * squash(exchange_inflow.unwrap_or(0.0) / cap * 100.0, 1.0);
            let exit_score = round_score(100.0 * raw);
            let mut top: Vec<Seller> = st
                .per_wallet
                .iter()
                .filter(|(_, v)| **v < 0.0)
                .map(|(w, v)| Seller { address: wallets.address(*w), label: wallets.label(*w), sold_usd: -v })
                .collect();
            top.sort_by(|a, b| b.sold_usd.total_cmp(&a.sold_usd).then_with(|| a.address.cmp(&b.address)));
            top.truncate(5);
            Some(ExodusPick {
                token: s.token.token.symbol.clone(),
                token_info: s.token.token.clone(),
                exit_score,
                wallet_exodus_count: sellers,
                net_outflow_usd: outflow,
                thesis: thesis::exit(&s.token.token, exit_score, sellers, outflow, exchange_inflow, &window),
                window: window.clone(),
                top_sellers: top,
                exchange_inflow_usd: exchange_inflow,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.exit_score
            .cmp(&a.exit_score)
            .then_with(|| b.net_outflow_usd.total_cmp(&a.net_outflow_usd))
            .then_with(|| a.token_info.address.cmp(&b.token_info.address))
    });
    out.truncate(config.exodus_limit);
    out
}

/// Trades of tracked wallets at or above the threshold in the whale window, one per
/// transaction hash on its chain, newest first.
fn whale_alerts(trades: &[TradeInput], now: i64, config: &SignalConfig) -> Vec<WhaleAlert> {
    let from = now - config.whale_window_ms;
    let mut seen: HashSet<(Chain, &str)> = HashSet::new();
    let mut big: Vec<&TradeInput> = trades
        .iter()
        .filter(|t| t.at_ms > from && t.at_ms <= now && finite(t.value_usd) >= config.whale_threshold_usd)
        .collect();
    big.sort_by(|a, b| b.at_ms.cmp(&a.at_ms).then_with(|| a.tx_hash.cmp(&b.tx_hash)));
    big.into_iter()
        .filter(|t| seen.insert((t.chain, t.tx_hash.as_str())))
        .map(|t| WhaleAlert {
            wallet: t.wallet.clone(),
            label: t.label.clone(),
            side: if t.buy { TradeSide::Buy } else { TradeSide::Sell },
            token: t.token_symbol.clone(),
            token_address: t.token_address.clone(),
            chain: t.chain,
            amount_usd: finite(t.value_usd),
            tx_hash: t.tx_hash.clone(),
            at: timestamp(t.at_ms),
        })
        .collect()
}
