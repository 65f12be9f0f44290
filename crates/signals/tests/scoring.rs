//! Scoring properties: scores stay in 0–100, the safety gate holds, ranking ignores
//! irrelevant tokens, exits and whale alerts follow their rules, theses are clean sentences.

use proptest::prelude::*;
use svc_catalogue::routes::common::TokenRef;
use svc_catalogue::routes::signals::{DataProductId, DataProductParams, DataProductResponse, StrategyStyle};
use svc_domain::Chain;
use svc_signals::{
    FlowFacts, MarketFacts, PriceFacts, SafetyFacts, SignalConfig, SignalInput, SocialFacts, TokenInput, TradeInput,
    chain_lists, compute, data_product, sub_scores,
};

const NOW: i64 = 1_795_000_000_000;
const HOUR: i64 = 3_600_000;

fn token(chain: Chain, n: u32, net_24h: f64) -> TokenInput {
    TokenInput {
        token: TokenRef {
            chain,
            address: format!("addr-{chain}-{n}"),
            symbol: format!("TK{n}"),
            name: format!("Token {n}"),
        },
        flow: Some(FlowFacts {
            net_1h_usd: net_24h / 24.0,
            net_24h_usd: net_24h,
            net_7d_usd: net_24h * 3.0,
            trader_count: 12,
            exchange_inflow_usd: None,
        }),
        market: Some(MarketFacts { market_cap_usd: 20e6, liquidity_usd: 2e6, holders: 12_000, volume_24h_usd: 3e6 }),
        price: Some(PriceFacts {
            price_usd: 1.5,
            change_24h_pct: 4.0,
            change_7d_pct: 12.0,
            high_7d_usd: None,
            low_7d_usd: None,
        }),
        age_days: Some(60),
        social: Some(SocialFacts {
            mentions_1h: 40,
            mentions_24h: 300,
            engagement: 5_000,
            notable_accounts: vec!["alice".into()],
        }),
        // Scanned clean: an EVM contract scan, or a Solana mint whose authorities are revoked.
        safety: Some(SafetyFacts { top10_holder_pct: Some(25.0), scanned: true, ..SafetyFacts::default() }),
    }
}

fn trade(chain: Chain, token_n: u32, wallet: &str, buy: bool, usd: f64, ago_ms: i64, hash: &str) -> TradeInput {
    TradeInput {
        chain,
        tx_hash: hash.to_owned(),
        wallet: wallet.to_owned(),
        label: Some(format!("Smart Trader {wallet}")),
        smart_money: true,
        token_address: format!("addr-{chain}-{token_n}"),
        token_symbol: format!("TK{token_n}"),
        buy,
        value_usd: usd,
        at_ms: NOW - ago_ms,
    }
}

fn input(tokens: Vec<TokenInput>, trades: Vec<TradeInput>) -> SignalInput {
    SignalInput { now_ms: NOW, tokens, trades, sources: Vec::new(), degraded: Vec::new() }
}

#[test]
fn the_strongest_inflow_ranks_first_and_at_most_three_per_chain() {
    let tokens = (1..=6).map(|n| token(Chain::Solana, n, f64::from(n) * 100_000.0)).collect();
    let snap = compute(&input(tokens, Vec::new()), &SignalConfig::default());
    assert_eq!(snap.picks.solana.len(), 3);
    assert_eq!(snap.picks.solana[0].token, "TK6");
    assert_eq!(snap.picks.solana.iter().map(|p| p.rank).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert!(snap.picks.base.is_empty());
    assert!(snap.picks.solana.windows(2).all(|w| w[0].score >= w[1].score));
    assert_eq!(snap.lite.solana.len(), 3);
}

#[test]
fn a_malicious_token_is_never_a_pick_even_with_the_strongest_flows() {
    let mut bad = token(Chain::Base, 99, 50_000_000.0);
    bad.safety = Some(SafetyFacts { malicious: true, ..SafetyFacts::default() });
    let mut thin = token(Chain::Base, 98, 40_000_000.0);
    thin.market = Some(MarketFacts { liquidity_usd: 1_000.0, ..thin.market.unwrap_or_default() });
    let mut held = token(Chain::Base, 97, 30_000_000.0);
    held.safety = Some(SafetyFacts { top10_holder_pct: Some(90.0), ..SafetyFacts::default() });
    let snap =
        compute(&input(vec![bad, thin, held, token(Chain::Base, 1, 10_000.0)], Vec::new()), &SignalConfig::default());
    let picked: Vec<&str> = snap.picks.base.iter().map(|p| p.token.as_str()).collect();
    assert_eq!(picked, vec!["TK1"]);
    assert!(snap.lite.base.iter().all(|p| p.token == "TK1"));
}

/// A Solana token with strong flows and `safety`.
fn solana_with(n: u32, safety: SafetyFacts) -> TokenInput {
    TokenInput { safety: Some(safety), ..token(Chain::Solana, n, 2_000_000.0) }
}

#[test]
fn an_unread_mint_never_scores_safety_100() {
    // Few holders own much, and nothing else is known: the mint's authorities were not read.
    let unread = SafetyFacts { top10_holder_pct: Some(10.0), ..SafetyFacts::default() };
    let failed = SafetyFacts { scan_missing: true, ..unread };
    for safety in [unread, failed] {
        assert!(sub_scores(&solana_with(1, safety), None, NOW).safety <= 50.0, "{safety:?}");
    }
    let snap = compute(&input(vec![solana_with(1, unread)], Vec::new()), &SignalConfig::default());
    let safety = &snap.picks.solana[0].dimensions.safety;
    assert!(safety.score <= 50 && safety.degraded, "{safety:?}");
    assert_eq!(safety.degraded_reason.as_deref(), Some("mint/freeze authority unknown"));
    assert_eq!(safety.inputs["freeze_authority_live"], None);
    assert!(snap.picks.solana[0].thesis.ends_with("risk: mint/freeze authority unknown."));
}

#[test]
fn revoked_authorities_can_score_safety_100() {
    let clean = SafetyFacts { top10_holder_pct: Some(10.0), scanned: true, ..SafetyFacts::default() };
    assert_eq!(sub_scores(&solana_with(1, clean), None, NOW).safety, 100.0);
    let snap = compute(&input(vec![solana_with(1, clean)], Vec::new()), &SignalConfig::default());
    let safety = &snap.picks.solana[0].dimensions.safety;
    assert_eq!((safety.score, safety.degraded), (100, false));
    assert_eq!((safety.inputs["mint_authority_live"], safety.inputs["freeze_authority_live"]), (Some(0.0), Some(0.0)));
}

#[test]
fn a_live_freeze_authority_is_never_a_pick() {
    let clean = SafetyFacts { top10_holder_pct: Some(10.0), scanned: true, ..SafetyFacts::default() };
    let frozen = SafetyFacts { freeze_authority_live: true, ..clean };
    let mut trap = solana_with(9, frozen);
    trap.flow = Some(FlowFacts { net_24h_usd: 9_000_000.0, ..trap.flow.unwrap_or_default() });
    assert!(sub_scores(&trap, None, NOW).safety <= 50.0);
    let snap = compute(&input(vec![trap, solana_with(1, clean)], Vec::new()), &SignalConfig::default());
    let picked: Vec<&str> = snap.picks.solana.iter().map(|p| p.token.as_str()).collect();
    assert_eq!(picked, vec!["TK1"]);
    assert!(snap.lite.solana.iter().all(|p| p.token == "TK1"));
}

#[test]
fn a_live_mint_authority_is_a_warning() {
    let minted = SafetyFacts {
        top10_holder_pct: Some(10.0),
        scanned: true,
        mint_authority_live: true,
        ..SafetyFacts::default()
    };
    assert_eq!(sub_scores(&solana_with(1, minted), None, NOW).safety, 70.0);
    let snap = compute(&input(vec![solana_with(1, minted)], Vec::new()), &SignalConfig::default());
    let pick = &snap.picks.solana[0];
    assert_eq!(pick.dimensions.safety.inputs["mint_authority_live"], Some(1.0));
    assert!(pick.thesis.ends_with("risk: the issuer can still mint more."), "{}", pick.thesis);
}

#[test]
fn exits_count_distinct_smart_sellers_and_whales_are_the_last_hour_deduplicated() {
    let mut leaving = token(Chain::Ethereum, 5, -2_000_000.0);
    leaving.social = None;
    let trades = vec![
        trade(Chain::Ethereum, 5, "w1", false, 30_000.0, HOUR * 2, "h1"),
        trade(Chain::Ethereum, 5, "w2", false, 80_000.0, HOUR / 2, "h2"),
        trade(Chain::Ethereum, 5, "w2", false, 80_000.0, HOUR / 2, "h2"),
        trade(Chain::Ethereum, 5, "w3", false, 20_000.0, HOUR * 3, "h3"),
        trade(Chain::Ethereum, 5, "w4", true, 10_000.0, HOUR * 3, "h4"),
        trade(Chain::Ethereum, 5, "w5", true, 90_000.0, HOUR * 2, "old-whale"),
        trade(Chain::Ethereum, 5, "w6", true, 70_000.0, HOUR / 4, "new-whale"),
        trade(Chain::Ethereum, 5, "w7", false, 10_000.0, HOUR * 30, "outside-window"),
    ];
    let snap = compute(&input(vec![leaving], trades), &SignalConfig::default());
    assert_eq!(snap.exodus.len(), 1);
    let exit = &snap.exodus[0];
    assert_eq!(exit.wallet_exodus_count, 3);
    assert_eq!(exit.net_outflow_usd, 2_000_000.0);
    assert_eq!(exit.top_sellers[0].address, "w2");
    assert_eq!(exit.top_sellers[0].sold_usd, 80_000.0);
    assert!(exit.thesis.contains("3 smart-money wallets") && exit.thesis.contains("$2.0M"), "{}", exit.thesis);
    let hashes: Vec<&str> = snap.whale_alerts.iter().map(|a| a.tx_hash.as_str()).collect();
    assert_eq!(hashes, vec!["new-whale", "h2"]);
    assert!(snap.picks.ethereum.is_empty(), "an outflow is never a pick");
}

#[test]
fn a_missing_source_leaves_a_neutral_marked_dimension() {
    let mut t = token(Chain::Bnb, 1, 500_000.0);
    t.social = None;
    let mut i = input(vec![t], Vec::new());
    i.degraded = vec!["social"];
    let snap = compute(&i, &SignalConfig::default());
    let pick = &snap.picks.bnb[0];
    assert!(pick.dimensions.social.degraded);
    assert_eq!(pick.dimensions.social.score, 50);
    assert!(!pick.dimensions.onchain_flow.degraded);
}

#[test]
fn the_conservative_strategy_respects_the_ten_percent_rule() {
    let tokens = (1..=3).map(|n| token(Chain::Solana, n, f64::from(n) * 1_000_000.0)).collect();
    let snap = compute(&input(tokens, Vec::new()), &SignalConfig::default());
    let DataProductResponse::AgentStrategies(s) =
        data_product(&snap, DataProductId::AgentStrategies, &DataProductParams::default())
    else {
        panic!("agent strategies");
    };
    let conservative = s.strategies.iter().find(|s| s.style == StrategyStyle::Conservative).expect("conservative");
    assert_eq!(conservative.max_position_pct, 10.0);
    assert!(!conservative.entries.is_empty());
    for e in &conservative.entries {
        assert!(e.position_size_pct <= 10.0 && e.position_size_pct > 0.0);
        assert!(e.invalidation_price_usd < e.entry_price_usd);
    }
    let scanner = s.strategies.iter().find(|s| s.style == StrategyStyle::Scanner).expect("scanner");
    assert!(scanner.entries.iter().all(|e| e.position_size_pct == 0.0));
}

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![-1e12f64..1e12, Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(0.0),]
}

prop_compose! {
    fn any_token(chain: Chain, n: u32)(
        net in any_f64(), n1 in any_f64(), n7 in any_f64(), traders in 0u32..500,
        cap in any_f64(), liq in any_f64(), holders in 0u64..10_000_000,
        price in any_f64(), c24 in any_f64(), c7 in any_f64(),
        age in proptest::option::of(0u32..5000),
        m1 in 0u32..100_000, m24 in 0u32..1_000_000, eng in 0u64..u64::MAX / 2,
        malicious in any::<bool>(), top10 in proptest::option::of(any_f64()), scan_missing in any::<bool>(),
        authorities in 0u8..4,
        symbol in "[A-Za-z0-9{}]{0,40}",
    ) -> TokenInput {
        TokenInput {
            token: TokenRef { chain, address: format!("a{n}"), symbol, name: "n".into() },
            flow: Some(FlowFacts { net_1h_usd: n1, net_24h_usd: net, net_7d_usd: n7, trader_count: traders, exchange_inflow_usd: None }),
            market: Some(MarketFacts { market_cap_usd: cap, liquidity_usd: liq, holders, volume_24h_usd: 0.0 }),
            price: Some(PriceFacts { price_usd: price, change_24h_pct: c24, change_7d_pct: c7, high_7d_usd: None, low_7d_usd: None }),
            age_days: age,
            social: Some(SocialFacts { mentions_1h: m1, mentions_24h: m24, engagement: eng, notable_accounts: vec![] }),
            safety: Some(SafetyFacts { malicious, top10_holder_pct: top10, scanned: !scan_missing, scan_missing, mint_authority_live: authorities & 1 != 0, freeze_authority_live: authorities & 2 != 0, ..SafetyFacts::default() }),
        }
    }
}

fn clean(s: &str) -> bool {
    !s.contains('{') && !s.contains('}') && !s.contains("NaN") && !s.contains("inf") && s.chars().count() < 200
}

proptest! {
    #[test]
    fn scores_stay_in_range_and_theses_are_clean(
        a in any_token(Chain::Solana, 1), b in any_token(Chain::Solana, 2), c in any_token(Chain::Base, 3),
    ) {
        let trades = vec![
            trade(Chain::Solana, 1, "w", false, 10_000.0, HOUR, "x1"),
            trade(Chain::Solana, 1, "v", false, 10_000.0, HOUR, "x2"),
        ];
        let mut i = input(vec![a, b, c], trades);
        i.tokens[0].token.address = "addr-solana-1".into();
        let snap = compute(&i, &SignalConfig::default());
        for (_, list) in chain_lists(&snap.picks) {
            for p in list {
                prop_assert!(p.score <= 100);
                let d = &p.dimensions;
                for s in [&d.onchain_flow, &d.social, &d.price, &d.freshness, &d.market, &d.safety] {
                    prop_assert!(s.score <= 100);
                    prop_assert!(s.inputs.values().flatten().all(|v| v.is_finite()));
                    prop_assert_eq!(s.degraded, s.degraded_reason.is_some());
                }
                prop_assert!(clean(&p.thesis), "{}", p.thesis);
                prop_assert!(p.dimensions.safety.inputs["malicious"] != Some(1.0));
                prop_assert!(p.dimensions.safety.inputs.get("freeze_authority_live") != Some(&Some(1.0)));
                // A pick whose safety data is incomplete says so, scores at most neutral on
                // safety, and cleared the stricter bar.
                if p.dimensions.safety.degraded {
                    prop_assert!(p.dimensions.safety.score <= 50);
                    prop_assert!(p.dimensions.onchain_flow.score >= 75 && p.dimensions.market.score >= 50);
                }
            }
        }
        for (_, list) in chain_lists(&snap.lite) {
            for p in list {
                prop_assert!(clean(&p.thesis), "{}", p.thesis);
            }
        }
        for e in &snap.exodus {
            prop_assert!(e.exit_score <= 100);
            prop_assert!(clean(&e.thesis), "{}", e.thesis);
        }
        prop_assert!(serde_json_ok(&snap));
    }

    #[test]
    fn ranking_is_stable_when_irrelevant_tokens_are_added(
        noise in proptest::collection::vec((0u32..1000, -1e6f64..0.0), 0..30),
    ) {
        let base: Vec<TokenInput> = (1..=5).map(|n| token(Chain::Solana, n, f64::from(n) * 200_000.0)).collect();
        let before = compute(&input(base.clone(), Vec::new()), &SignalConfig::default());
        let mut noisy = base;
        // Noise: tokens smart money is not buying, and tokens on a chain no one asked about.
        for (i, (n, net)) in noise.into_iter().enumerate() {
            noisy.push(token(Chain::Solana, 10_000 + n * 100 + i as u32, net));
            noisy.push(token(Chain::Arbitrum, 20_000 + i as u32, 1e6));
        }
        let after = compute(&input(noisy, Vec::new()), &SignalConfig::default());
        let ids = |s: &svc_signals::Snapshot| s.picks.solana.iter().map(|p| (p.token.clone(), p.score)).collect::<Vec<_>>();
        prop_assert_eq!(ids(&before), ids(&after));
    }
}

fn serde_json_ok(snap: &svc_signals::Snapshot) -> bool {
    serde_json::to_string(snap).is_ok_and(|s| serde_json::from_str::<serde_json::Value>(&s).is_ok())
}

#[test]
fn the_track_record_scores_picks_and_exits_against_later_prices() {
    let config = SignalConfig::default();
    let at = |now_ms: i64, price: f64| {
        let mut up = token(Chain::Solana, 1, 1_000_000.0);
        up.price = Some(PriceFacts { price_usd: price, ..up.price.unwrap_or_default() });
        let mut down = token(Chain::Solana, 2, -1_000_000.0);
        down.price = Some(PriceFacts { price_usd: 10.0 / price, ..down.price.unwrap_or_default() });
        let sellers = ["a", "b", "c"]
            .iter()
            .map(|w| TradeInput {
                at_ms: now_ms - HOUR,
                ..trade(Chain::Solana, 2, w, false, 5_000.0, 0, &format!("{w}{now_ms}"))
            })
            .collect();
        compute(&SignalInput { now_ms, ..input(vec![up, down], sellers) }, &config)
    };
    let history = vec![at(NOW, 1.0), at(NOW + 30 * 60_000, 2.0), at(NOW + 60 * 60_000, 1.5)];
    let record = svc_signals::track_record(&history);
    assert_eq!(record.snapshots, 3);
    let pick = record.signals.iter().find(|s| s.token.symbol == "TK1").expect("pick tracked once");
    assert_eq!(record.signals.iter().filter(|s| s.token.symbol == "TK1").count(), 1, "a run counts once");
    assert_eq!((pick.price_at_signal_usd, pick.price_now_usd), (1.0, Some(1.5)));
    assert_eq!((pick.best_price_since_usd, pick.worst_price_since_usd), (Some(2.0), Some(1.5)));
    assert_eq!(pick.hit, Some(true));
    let exit = record.signals.iter().find(|s| s.token.symbol == "TK2").expect("exit tracked");
    assert_eq!(exit.hit, Some(true), "the exit token fell from 10 to 6.67");
    assert_eq!(record.hit_rates[0].scope, "overall");
    assert_eq!((record.hit_rates[0].decided, record.hit_rates[0].hits), (2, 2));
    assert_eq!(record.hit_rates[0].hit_rate_pct, Some(100.0));
    let empty = svc_signals::track_record(&[]);
    assert!(empty.signals.is_empty() && empty.hit_rates[0].hit_rate_pct.is_none());
}

proptest! {
    /// Unknown is never safe: a token whose holder concentration or contract scan is unknown
    /// scores at most neutral on safety, and never above the same token with the best value
    /// the unknown input could have had.
    #[test]
    fn an_unknown_safety_input_never_raises_the_safety_score(
        t in any_token(Chain::Base, 1), warning in any::<bool>(), top10 in 0.0f64..100.0,
    ) {
        let with = |top10: Option<f64>, scan_missing: bool| {
            let mut t = t.clone();
            let malicious = t.safety.is_some_and(|s| s.malicious);
            t.safety = Some(SafetyFacts { malicious, warning, top10_holder_pct: top10, scanned: !scan_missing, scan_missing, ..SafetyFacts::default() });
            sub_scores(&t, None, NOW).safety
        };
        let best_known = with(Some(0.0), false);
        for unknown in [with(None, false), with(Some(top10), true), with(None, true)] {
            prop_assert!(unknown <= 50.0, "unknown scored {unknown}");
            prop_assert!(unknown <= best_known, "unknown {unknown} above the best known {best_known}");
        }
        let mut none = t.clone();
        none.safety = None;
        prop_assert!(sub_scores(&none, None, NOW).safety <= 50.0);
    }
}
