//! The public track record: every past pick and exit with the price when it was published,
//! the price now, the best and worst since, and hit rates. Computed from stored snapshots
//! alone, so it needs no upstream call and anyone can recompute it.

use std::collections::{BTreeMap, HashSet};

use svc_catalogue::routes::common::TokenRef;
use svc_catalogue::routes::signals::{HitRate, SignalKind, TrackRecordResponse, TrackedSignal};

use crate::{SIGNAL_CHAINS, Snapshot, chain_lists, timestamp};

/// Most signals listed, newest first.
pub const MAX_TRACKED: usize = 200;

/// The key of a token in [`Snapshot::prices`].
pub fn price_key(token: &TokenRef) -> String {
    format!("{}:{}", token.chain, token.address.to_lowercase())
}

/// The signals of one snapshot: kind, token, score, price at the time.
fn signals_of(s: &Snapshot) -> Vec<(SignalKind, &TokenRef, u8, Option<f64>)> {
    let mut out = Vec::new();
    for (_, picks) in chain_lists(&s.picks) {
        for p in picks {
            let price = s.prices.get(&price_key(&p.token_info)).copied().or(Some(p.price.price_usd));
            out.push((SignalKind::Pick, &p.token_info, p.score, price));
        }
    }
    for e in &s.exodus {
        out.push((SignalKind::Exit, &e.token_info, e.exit_score, s.prices.get(&price_key(&e.token_info)).copied()));
    }
    out
}

/// The track record of `history` (oldest first).
pub fn track_record(history: &[Snapshot]) -> TrackRecordResponse {
    let mut found: Vec<(usize, SignalKind, TokenRef, u8, f64)> = Vec::new();
    let mut previous: HashSet<(SignalKind, String)> = HashSet::new();
    for (i, s) in history.iter().enumerate() {
        let mut current = HashSet::new();
        for (kind, token, score, price) in signals_of(s) {
            let key = (kind, price_key(token));
            if !previous.contains(&key)
                && let Some(price) = price.filter(|p| p.is_finite() && *p > 0.0)
            {
                found.push((i, kind, token.clone(), score, price));
            }
            current.insert(key);
        }
        previous = current;
    }
    found.reverse();
    found.truncate(MAX_TRACKED);
    let last = history.len().saturating_sub(1);
    let signals: Vec<TrackedSignal> = found
        .into_iter()
        .map(|(i, kind, token, score, at)| {
            let key = price_key(&token);
            let later: Vec<f64> = history[i + 1..].iter().filter_map(|s| s.prices.get(&key).copied()).collect();
            let now = if i < last { history[last].prices.get(&key).copied() } else { None };
            let hit = now.map(|n| match kind {
                SignalKind::Pick => n > at,
                SignalKind::Exit => n < at,
            });
            TrackedSignal {
                kind,
                signalled_at: timestamp(history[i].generated_at_ms),
                score,
                price_at_signal_usd: at,
                price_now_usd: now,
                change_pct: now.map(|n| (n - at) / at * 100.0),
                best_price_since_usd: later.iter().copied().reduce(f64::max),
                worst_price_since_usd: later.iter().copied().reduce(f64::min),
                hit,
                token,
            }
        })
        .collect();
    let rate = |scope: String, of: &dyn Fn(&TrackedSignal) -> bool| {
        let decided: Vec<bool> = signals.iter().filter(|s| of(s)).filter_map(|s| s.hit).collect();
        let hits = decided.iter().filter(|h| **h).count() as u32;
        let n = decided.len() as u32;
        HitRate { scope, decided: n, hits, hit_rate_pct: (n > 0).then(|| f64::from(hits) / f64::from(n) * 100.0) }
    };
    let mut hit_rates = vec![rate("overall".to_owned(), &|_| true)];
    for chain in SIGNAL_CHAINS {
        hit_rates.push(rate(chain.to_string(), &|s| s.token.chain == chain));
    }
    TrackRecordResponse {
        as_of: history.last().map(|s| timestamp(s.generated_at_ms)),
        since: history.first().map(|s| timestamp(s.generated_at_ms)),
        snapshots: history.len() as u32,
        hit_rates,
        signals,
    }
}

/// Prices of the tokens of an input, keyed by [`price_key`].
pub(crate) fn prices_of(tokens: &[crate::TokenInput]) -> BTreeMap<String, f64> {
    tokens
        .iter()
        .filter_map(|t| {
            let p = t.price?.price_usd;
            (p.is_finite() && p > 0.0).then(|| (price_key(&t.token), p))
        })
        .collect()
}
