//! One-sentence theses: built from the strongest dimensions with the numbers behind them,
//! deterministic, under 200 characters, and never with a placeholder or a NaN.

use svc_catalogue::routes::common::TokenRef;
use svc_catalogue::routes::signals::{PricePosition, SmartMoneyFlow};
use svc_domain::Chain;

use crate::input::SocialFacts;
use crate::subscores::{SubScores, finite};

/// Longest thesis, characters (exclusive).
const MAX_CHARS: usize = 200;

/// A USD amount as people write it: `$1.2M`, `$350K`, `$900` (sign dropped; the sentence
/// says which way it went).
pub fn format_usd(x: f64) -> String {
    let x = finite(x).abs();
    if x >= 1e9 {
        format!("${:.1}B", x / 1e9)
    } else if x >= 1e6 {
        format!("${:.1}M", x / 1e6)
    } else if x >= 1e3 {
        format!("${:.0}K", x / 1e3)
    } else {
        format!("${x:.0}")
    }
}

/// A percentage with one decimal and no sign (`8.3%`); the sentence says up or down.
pub fn format_pct(x: f64) -> String {
    format!("{:.1}%", finite(x).abs().min(99_999.0))
}

/// The symbol as a thesis may show it: at most 12 characters, no braces.
fn symbol(t: &TokenRef) -> String {
    let clean: String = t.symbol.chars().filter(|c| !matches!(c, '{' | '}')).take(12).collect();
    if clean.is_empty() { "token".to_owned() } else { clean }
}

/// The thesis of a Top Pick: its score and its two strongest dimensions, each with numbers.
pub(crate) fn pick(
    t: &TokenRef,
    score: u8,
    subs: &SubScores,
    flow: &SmartMoneyFlow,
    price: Option<&PricePosition>,
    social: Option<&SocialFacts>,
    risk: Option<&str>,
) -> String {
    let mut reasons: Vec<(f64, String)> = Vec::new();
    let net = flow.net_flow_24h_usd;
    let verb = if net >= 0.0 { "bought" } else { "sold" };
    // The wallets are named only when they were seen: a count of none is no evidence.
    let across = match flow.buyer_wallets {
        0 => String::new(),
        1 => " by 1 wallet".to_owned(),
        n => format!(" across {n} wallets"),
    };
    reasons.push((subs.flow, format!("smart money net {verb} {} in 24h{across}", format_usd(net))));
    // An unknown price is no evidence either way.
    if let Some(price) = price {
        let dir = if price.change_24h_pct >= 0.0 { "up" } else { "down" };
        reasons.push((subs.price, format!("price is {dir} {} in 24h", format_pct(price.change_24h_pct))));
    }
    if let Some(s) = social {
        let baseline = (f64::from(s.mentions_24h) / 24.0).max(0.5);
        let velocity = (f64::from(s.mentions_1h) / baseline).min(999.0);
        reasons.push((subs.social, format!("mentions run at {velocity:.1}x their daily pace")));
    }
    if subs.freshness > 0.0 {
        reasons.push((subs.freshness, format!("freshness scores {:.0}", subs.freshness)));
    }
    if subs.market > 0.0 {
        reasons.push((subs.market, format!("market depth scores {:.0}", subs.market)));
    }
    // Stable order: strongest first, ties by the order pushed.
    let mut ordered: Vec<(usize, &(f64, String))> = reasons.iter().enumerate().collect();
    ordered.sort_by(|(ia, a), (ib, b)| b.0.total_cmp(&a.0).then(ia.cmp(ib)));
    let head = format!("{} on {} scores {score}/100: ", symbol(t), t.chain);
    let tail = risk.map(|r| format!("; risk: {r}")).unwrap_or_default();
    if let Some(second) = ordered.get(1) {
        let two = format!("{head}{} and {}{tail}.", ordered[0].1.1, second.1.1);
        if two.chars().count() < MAX_CHARS {
            return two;
        }
    }
    let one = format!("{head}{}{tail}.", ordered[0].1.1);
    if one.chars().count() < MAX_CHARS { one } else { format!("{head}{}.", ordered[0].1.1) }
}

/// The main risk a pick carries, for its thesis: what is unknown first, then what is known
/// to be bad, worst first.
pub(crate) fn risk(chain: Chain, safety: Option<&crate::input::SafetyFacts>) -> Option<String> {
    let Some(s) = safety else { return Some("safety data unavailable".to_owned()) };
    if s.top10_holder_pct.is_none() {
        return Some("holder data unavailable".to_owned());
    }
    if !s.scanned || s.scan_missing {
        let unknown =
            if chain == Chain::Solana { "mint/freeze authority unknown" } else { "contract scan unavailable" };
        return Some(unknown.to_owned());
    }
    if s.freeze_authority_live {
        return Some("the issuer can freeze holders' tokens".to_owned());
    }
    if s.warning {
        return Some("a scanner warns about the contract".to_owned());
    }
    if s.mint_authority_live {
        return Some("the issuer can still mint more".to_owned());
    }
    s.top10_holder_pct.filter(|p| finite(*p) > 40.0).map(|p| format!("the top 10 holders own {}", format_pct(p)))
}

/// The thesis of an exit signal.
pub(crate) fn exit(
    t: &TokenRef,
    exit_score: u8,
    sellers: u32,
    outflow_usd: f64,
    exchange_inflow_usd: Option<f64>,
    window: &str,
) -> String {
    let deposits = match exchange_inflow_usd {
        Some(x) if x >= 1.0 => format!(" and {} sent to exchanges", format_usd(x)),
        _ => String::new(),
    };
    format!(
        "{} on {}: {sellers} smart-money wallets sold in {window}, a net outflow of {}{deposits}; exit score {exit_score}/100.",
        symbol(t),
        t.chain,
        format_usd(outflow_usd)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_like_a_person_wrote_them() {
        assert_eq!(format_usd(1_234_567.0), "$1.2M");
        assert_eq!(format_usd(-350_400.0), "$350K");
        assert_eq!(format_usd(900.2), "$900");
        assert_eq!(format_usd(f64::NAN), "$0");
        assert_eq!(format_usd(2.5e9), "$2.5B");
        assert_eq!(format_pct(-8.34), "8.3%");
    }

    #[test]
    fn a_thesis_says_only_what_is_known_and_names_the_risk() {
        let token = TokenRef { chain: Chain::Base, address: "0xabc".into(), symbol: "ABC".into(), name: "Abc".into() };
        let subs = SubScores { flow: 90.0, social: 50.0, price: 80.0, freshness: 0.0, market: 0.0, safety: 50.0 };
        let flow = SmartMoneyFlow {
            net_flow_1h_usd: 0.0,
            net_flow_24h_usd: 250_000.0,
            net_flow_7d_usd: 0.0,
            buyer_wallets: 0,
            seller_wallets: 0,
            top_wallets: Vec::new(),
        };
        let thesis = pick(&token, 70, &subs, &flow, None, None, Some("holder data unavailable"));
        assert_eq!(
            thesis,
            "ABC on base scores 70/100: smart money net bought $250K in 24h; risk: holder data unavailable."
        );
        let safe = crate::input::SafetyFacts { top10_holder_pct: Some(25.0), scanned: true, ..Default::default() };
        assert_eq!(risk(Chain::Base, Some(&safe)), None);
        assert_eq!(risk(Chain::Base, None).as_deref(), Some("safety data unavailable"));
        let concentrated = crate::input::SafetyFacts { top10_holder_pct: Some(55.0), ..safe };
        assert_eq!(risk(Chain::Base, Some(&concentrated)).as_deref(), Some("the top 10 holders own 55.0%"));
    }
}
