//! The data products of `POST {tools}/data-products/{product_id}`, cut from a snapshot.

use svc_catalogue::routes::signals::{
    AgentStrategies, DataProductId, DataProductParams, DataProductResponse, SignalChain, SmartMoneySignals, Strategy,
    StrategyEntry, StrategyStyle, TopAlphaPicks, TopPick,
};
use svc_domain::Chain;

use crate::Snapshot;
use crate::thesis::format_pct;

/// Items a product lists when `limit` is absent.
const DEFAULT_LIMIT: u32 = 10;
/// The conservative style's position-size rule: no position above 10 % of the portfolio.
pub const CONSERVATIVE_MAX_POSITION_PCT: f64 = 10.0;

/// The product ids, as a client writes them: what an error names when an id is unknown.
pub fn valid_product_ids() -> [&'static str; 3] {
    ["smart-money-signals", "top-alpha-picks", "agent-strategies"]
}

fn chain_of(c: SignalChain) -> Chain {
    match c {
        SignalChain::Solana => Chain::Solana,
        SignalChain::Base => Chain::Base,
        SignalChain::Ethereum => Chain::Ethereum,
        SignalChain::Bnb => Chain::Bnb,
        SignalChain::Arbitrum => Chain::Arbitrum,
    }
}

/// Product `id` of `snapshot`, filtered by `params` (chains, min_score, limit).
pub fn data_product(snapshot: &Snapshot, id: DataProductId, params: &DataProductParams) -> DataProductResponse {
    let chains: Vec<Chain> = params
        .chains
        .as_ref()
        .filter(|c| !c.is_empty())
        .map_or_else(|| crate::SIGNAL_CHAINS.to_vec(), |c| c.iter().copied().map(chain_of).collect());
    let min_score = params.min_score.unwrap_or(0);
    let limit = params.limit.unwrap_or(DEFAULT_LIMIT) as usize;
    let picks: Vec<TopPick> = snapshot
        .all_picks()
        .into_iter()
        .filter(|p| chains.contains(&p.token_info.chain) && p.score >= min_score)
        .take(limit)
        .collect();
    let meta = snapshot.meta();
    match id {
        DataProductId::SmartMoneySignals => DataProductResponse::SmartMoneySignals(SmartMoneySignals {
            meta,
            netflow_leaders: snapshot
                .netflow_leaders
                .iter()
                .filter(|l| chains.contains(&l.token.chain))
                .take(limit)
                .cloned()
                .collect(),
            whale_alerts: snapshot
                .whale_alerts
                .iter()
                .filter(|a| chains.contains(&a.chain))
                .take(limit)
                .cloned()
                .collect(),
            exodus: snapshot
                .exodus
                .iter()
                .filter(|e| chains.contains(&e.token_info.chain) && e.exit_score >= min_score)
                .take(limit)
                .cloned()
                .collect(),
        }),
        DataProductId::TopAlphaPicks => DataProductResponse::TopAlphaPicks(TopAlphaPicks { meta, picks }),
        DataProductId::AgentStrategies => {
            DataProductResponse::AgentStrategies(AgentStrategies { meta, strategies: strategies(&picks) })
        }
    }
}

/// One plan per agent style from `picks` (best first).
fn strategies(picks: &[TopPick]) -> Vec<Strategy> {
    let plan = |style: StrategyStyle,
                summary: &str,
                max_position_pct: f64,
                keep: &dyn Fn(&TopPick) -> bool,
                stop_pct: f64,
                size: &dyn Fn(&TopPick) -> f64| {
        let entries = picks
            .iter()
            .filter(|p| keep(p))
            .map(|p| {
                let entry = p.price.price_usd;
                let position = size(p).min(max_position_pct);
                StrategyEntry {
                    token: p.token_info.clone(),
                    score: p.score,
                    entry_price_usd: entry,
                    invalidation_price_usd: entry * (1.0 - stop_pct / 100.0),
                    position_size_pct: (position * 10.0).round() / 10.0,
                    rationale: format!(
                        "Score {}/100; the idea is wrong below a {} drop from the entry.",
                        p.score,
                        format_pct(stop_pct)
                    ),
                }
            })
            .collect();
        Strategy { style, summary: summary.to_owned(), max_position_pct, entries }
    };
    vec![
        plan(
            StrategyStyle::Conservative,
            "Only well-scored picks with clean safety, a tight 8% stop and at most 10% of the portfolio per position.",
            CONSERVATIVE_MAX_POSITION_PCT,
            &|p| p.score >= 60 && p.dimensions.safety.score >= 70,
            8.0,
            &|p| f64::from(p.score) / 10.0,
        ),
        plan(
            StrategyStyle::Aggressive,
            "Every pick, a wide 20% stop and sizes up to 25% of the portfolio for the strongest scores.",
            25.0,
            &|_| true,
            20.0,
            &|p| f64::from(p.score) / 4.0,
        ),
        plan(
            StrategyStyle::Scanner,
            "Watches every pick with its invalidation level and suggests no trades.",
            0.0,
            &|_| true,
            15.0,
            &|_| 0.0,
        ),
        plan(
            StrategyStyle::Research,
            "The strongest picks to study in depth before any position; no sizing.",
            0.0,
            &|p| p.score >= 50,
            15.0,
            &|_| 0.0,
        ),
    ]
}
