//! The signal products. The scoring is computed from plain inputs with no I/O: the
//! [`engine`] gathers the inputs from its [`Market`] (the upstreams), calls [`compute`] once
//! per refresh and stores the resulting [`Snapshot`]; every signal route then reads that
//! snapshot. Keeping the scoring pure makes it testable and benchmarkable without a network,
//! and makes a snapshot a deterministic function of its inputs.
//!
//! # Layout
//! - [`engine`]: the snapshot in memory, its refresh, storage and lease.
//! - `gather`: the inputs, read from the upstreams ([`UpstreamMarket`]).
//! - `input`: what the scoring takes; `score`, `thesis`: the scoring and its sentences;
//!   `subscores`: the sub-scores both read.
//! - `products`: the data products; `track`: the track record; `config`: the settings.

mod config;
pub mod engine;
mod gather;
mod input;
mod products;
mod score;
mod subscores;
mod thesis;
mod track;

pub use config::{SafetyGate, SignalConfig, Weights};
pub use engine::{Current, EngineError, EngineParts, SignalEngine};
pub use gather::{Market, UpstreamMarket, parse_time};
pub use input::{FlowFacts, MarketFacts, PriceFacts, SafetyFacts, SignalInput, SocialFacts, TokenInput, TradeInput};
pub use products::{data_product, valid_product_ids};
pub use score::{compute, sub_scores};
pub use subscores::SubScores;
pub use thesis::{format_pct, format_usd};
pub use track::{MAX_TRACKED, price_key, track_record};

use serde::{Deserialize, Serialize};
use svc_catalogue::routes::common::SourceStatus;
use svc_catalogue::routes::signals::{
    ExodusPick, LitePick, NetflowLeader, PicksByChain, SnapshotMeta, TopPick, WhaleAlert,
};

/// Everything the signal routes serve, computed at one instant. Stored as JSON, so a replica
/// that did not compute it can serve it, and kept for the track record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// When it was computed, unix ms.
    pub generated_at_ms: i64,
    /// When the next one is due, unix ms.
    pub next_refresh_at_ms: i64,
    /// Health of each source at computation time.
    pub sources: Vec<SourceStatus>,
    /// Top Picks per chain, best first.
    pub picks: PicksByChain<TopPick>,
    /// Top Picks lite per chain, best first.
    pub lite: PicksByChain<LitePick>,
    /// Exit signals, strongest first.
    pub exodus: Vec<ExodusPick>,
    /// Whale trades of the last hour, newest first.
    pub whale_alerts: Vec<WhaleAlert>,
    /// The whale threshold the alerts were selected with, USD.
    pub whale_threshold_usd: f64,
    /// Tokens with the largest 24-hour smart-money inflow, largest first.
    pub netflow_leaders: Vec<NetflowLeader>,
    /// Price of every candidate with a known price, USD, keyed by [`price_key`]: what the
    /// track record compares later snapshots against.
    #[serde(default)]
    pub prices: std::collections::BTreeMap<String, f64>,
}

impl Snapshot {
    /// The freshness fields every signal answer carries.
    pub fn meta(&self) -> SnapshotMeta {
        SnapshotMeta {
            generated_at: timestamp(self.generated_at_ms),
            next_refresh_at: timestamp(self.next_refresh_at_ms),
            sources: self.sources.clone(),
        }
    }

    /// Every Top Pick across chains, best score first (ties by chain order, then rank).
    pub fn all_picks(&self) -> Vec<TopPick> {
        let mut all: Vec<TopPick> = chain_lists(&self.picks).into_iter().flat_map(|(_, l)| l.iter().cloned()).collect();
        all.sort_by_key(|p| std::cmp::Reverse(p.score));
        all
    }
}

/// The lists of a [`PicksByChain`] with their chain, in the catalogue's order.
pub fn chain_lists<T>(p: &PicksByChain<T>) -> [(svc_domain::Chain, &Vec<T>); 5] {
    use svc_domain::Chain;
    [
        (Chain::Solana, &p.solana),
        (Chain::Base, &p.base),
        (Chain::Ethereum, &p.ethereum),
        (Chain::Bnb, &p.bnb),
        (Chain::Arbitrum, &p.arbitrum),
    ]
}

/// The chains signal products rank, in their published order.
pub const SIGNAL_CHAINS: [svc_domain::Chain; 5] = [
    svc_domain::Chain::Solana,
    svc_domain::Chain::Base,
    svc_domain::Chain::Ethereum,
    svc_domain::Chain::Bnb,
    svc_domain::Chain::Arbitrum,
];

/// Unix ms as the catalogue's timestamp.
pub fn timestamp(ms: i64) -> svc_catalogue::routes::common::Timestamp {
    svc_catalogue::routes::common::Timestamp(svc_domain::rfc3339(ms))
}
