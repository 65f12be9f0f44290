//! Times one snapshot computation at production scale: 10 000 candidate tokens and 1 000 000
//! trades in the window, on one core. Run with `cargo bench -p svc-signals` (release build);
//! it prints the time of each run and the best.
#![allow(clippy::print_stdout, missing_docs)]

use std::time::Instant;

use svc_catalogue::routes::common::TokenRef;
use svc_signals::{
    FlowFacts, MarketFacts, PriceFacts, SafetyFacts, SignalConfig, SignalInput, SocialFacts, TokenInput, TradeInput,
    compute,
};

const TOKENS: usize = 10_000;
const TRADES: usize = 1_000_000;
const WALLETS: usize = 50_000;
const NOW: i64 = 1_795_000_000_000;
const DAY_MS: i64 = 86_400_000;

/// A small deterministic generator, so every run scores the same market.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 11
    }

    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 53) as f64
    }
}

fn market() -> SignalInput {
    let mut rng = Lcg(7);
    let chains = svc_signals::SIGNAL_CHAINS;
    let tokens: Vec<TokenInput> = (0..TOKENS)
        .map(|i| {
            let chain = chains[i % chains.len()];
            let net = (rng.unit() - 0.45) * 2e6;
            TokenInput {
                token: TokenRef {
                    chain,
                    address: format!("token-{i:05}"),
                    symbol: format!("T{i}"),
                    name: format!("Token {i}"),
                },
                flow: Some(FlowFacts {
                    net_1h_usd: net / 20.0,
                    net_24h_usd: net,
                    net_7d_usd: net * 4.0,
                    trader_count: (rng.next() % 60) as u32,
                    exchange_inflow_usd: None,
                }),
                market: Some(MarketFacts {
                    market_cap_usd: 10f64.powf(5.0 + rng.unit() * 5.0),
                    liquidity_usd: 10f64.powf(3.0 + rng.unit() * 5.0),
                    holders: rng.next() % 200_000,
                    volume_24h_usd: rng.unit() * 1e7,
                }),
                price: Some(PriceFacts {
                    price_usd: rng.unit() * 10.0 + 0.0001,
                    change_24h_pct: (rng.unit() - 0.5) * 40.0,
                    change_7d_pct: (rng.unit() - 0.5) * 100.0,
                    high_7d_usd: None,
                    low_7d_usd: None,
                }),
                age_days: Some((rng.next() % 2_000) as u32),
                social: (i.is_multiple_of(3)).then(|| SocialFacts {
                    mentions_1h: (rng.next() % 500) as u32,
                    mentions_24h: (rng.next() % 5_000) as u32,
                    engagement: rng.next() % 100_000,
                    notable_accounts: Vec::new(),
                }),
                safety: Some(SafetyFacts {
                    malicious: rng.next().is_multiple_of(200),
                    warning: false,
                    top10_holder_pct: Some(rng.unit() * 80.0),
                    scanned: true,
                    scan_missing: false,
                    mint_authority_live: false,
                    freeze_authority_live: false,
                }),
            }
        })
        .collect();
    let trades: Vec<TradeInput> = (0..TRADES)
        .map(|i| {
            let t = (rng.next() as usize) % TOKENS;
            let token = &tokens[t].token;
            let wallet = (rng.next() as usize) % WALLETS;
            TradeInput {
                chain: token.chain,
                tx_hash: format!("0x{i:064x}"),
                wallet: format!("wallet-{wallet:05}"),
                label: (!wallet.is_multiple_of(4)).then(|| format!("Smart Trader: {wallet}")),
                smart_money: !wallet.is_multiple_of(5),
                token_address: token.address.clone(),
                token_symbol: token.symbol.clone(),
                buy: rng.next().is_multiple_of(2),
                value_usd: 100.0 + rng.unit() * rng.unit() * 200_000.0,
                at_ms: NOW - (rng.next() as i64).rem_euclid(DAY_MS),
            }
        })
        .collect();
    SignalInput { now_ms: NOW, tokens, trades, sources: Vec::new(), degraded: Vec::new() }
}

fn main() {
    let input = market();
    let config = SignalConfig::default();
    let mut best = f64::MAX;
    for run in 1..=5 {
        let started = Instant::now();
        let snapshot = compute(&input, &config);
        let took = started.elapsed().as_secs_f64();
        best = best.min(took);
        println!(
            "run {run}: {TOKENS} tokens, {TRADES} trades -> {:.3} s ({} exits, {} whale alerts)",
            took,
            snapshot.exodus.len(),
            snapshot.whale_alerts.len()
        );
    }
    println!("snapshot computation: best {best:.3} s over 5 runs (target < 2 s)");
}
