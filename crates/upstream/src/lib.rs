//! Vendor adapters: every upstream API the data routes stand on, spoken in its real wire
//! format and decoded into the catalogue's output types.
//!
//! Each vendor has one [`VendorConfig`] (base URL, key, timeout, retries, concurrency cap).
//! A fresh install points every vendor at the simulator, which speaks the same formats, so
//! the default run goes through exactly the code that production does. Failures come back
//! as [`UpstreamError`], which names the vendor family and never carries a key or a raw
//! upstream body.

mod cache;
pub mod chaindata;
mod client;
mod config;
pub mod defi;
pub mod enso;
mod error;
pub mod health;
pub mod launchpad;
pub mod orderbookdex;
pub mod perpdex;
pub mod predmkt;
pub mod shield;
pub mod social;
pub mod solana_rpc;
pub mod swap;
pub mod units;
pub mod yields;

use std::sync::Arc;

use svc_domain::Clock;

pub use cache::TtlCache;
pub use chaindata::Chaindata;
pub use config::{SIMULATED_KEY, SIMULATED_OKX_CREDENTIAL, Vendor, VendorConfig};
pub use enso::Enso;
pub use error::UpstreamError;
pub use launchpad::Launchpad;
pub use orderbookdex::Orderbookdex;
pub use perpdex::{PerpLimits, Perpdex};
pub use predmkt::Predmkt;
pub use shield::Shield;
pub use social::Social;
pub use solana_rpc::SolanaRpc;
pub use swap::SolanaSwap;
pub use yields::Yields;

/// Settings of every vendor, by vendor.
#[derive(Debug, Clone)]
pub struct UpstreamsConfig {
    vendors: Vec<(Vendor, VendorConfig)>,
    /// What svc's perp-exchange agent may trade per call.
    pub perp_limits: PerpLimits,
}

impl UpstreamsConfig {
    /// Every vendor at its real address, without keys; the server fills in keys from the
    /// environment and replaces the addresses with the simulator's when none is configured.
    pub fn real() -> Self {
        Self::each(|vendor| VendorConfig::new(vendor.real_base_url()))
    }

    /// Every vendor at one base URL, each under its own path prefix, with the simulator's
    /// keys; how the simulator serves all vendors from one listener. The perp exchange's
    /// "key" is the agent's signing key, which the caller chooses.
    pub fn all_at(base: &str) -> Self {
        Self::each(|vendor| {
            let mut config = VendorConfig::new(format!("{}/{}", base.trim_end_matches('/'), vendor.slug()));
            config.key = match vendor {
                // The perp agent's key is the caller's; a Solana node takes no key header.
                Vendor::Perpdex | Vendor::SolanaRpc => None,
                Vendor::Okx => Some(config::SIMULATED_OKX_CREDENTIAL.to_owned()),
                _ => Some(config::SIMULATED_KEY.to_owned()),
            };
            config
        })
    }

    fn each(config: impl Fn(Vendor) -> VendorConfig) -> Self {
        UpstreamsConfig {
            vendors: Vendor::ALL.iter().map(|v| (*v, config(*v))).collect(),
            perp_limits: PerpLimits::default(),
        }
    }

    /// The settings of `vendor`.
    pub fn vendor(&self, vendor: Vendor) -> &VendorConfig {
        let found = self.vendors.iter().find(|(v, _)| *v == vendor).map(|(_, c)| c);
        found.unwrap_or_else(|| unreachable!("every vendor has settings"))
    }

    /// The settings of `vendor`, to change.
    pub fn vendor_mut(&mut self, vendor: Vendor) -> &mut VendorConfig {
        let found = self.vendors.iter_mut().find(|(v, _)| *v == vendor).map(|(_, c)| c);
        found.unwrap_or_else(|| unreachable!("every vendor has settings"))
    }
}

/// Every vendor adapter, built once at start and shared by the handlers.
#[derive(Debug)]
pub struct Upstreams {
    /// Token launchpad coin state.
    pub launchpad: Launchpad,
    /// The perp exchange: info reads and signed actions.
    pub perpdex: Perpdex,
    /// The order-book exchange's indexer: markets and public reads.
    pub orderbookdex: Orderbookdex,
    /// On-chain analytics: smart money, wallet profiles, token flows and holders.
    pub chaindata: Chaindata,
    /// Solana swap quotes from both aggregators.
    pub solana_swap: SolanaSwap,
    /// EVM swap routes, DeFi positions and bundles, token prices.
    pub enso: Enso,
    /// Yield pools of non-EVM chains.
    pub yields: Yields,
    /// Transaction simulation and validation.
    pub shield: Shield,
    /// Prediction markets: the catalogue of events and the order books.
    pub predmkt: Predmkt,
    /// The social network's posts, users, graph, counts and trends.
    pub social: Social,
    /// A Solana node: token mints' mint and freeze authorities.
    pub solana_rpc: SolanaRpc,
}

impl Upstreams {
    /// Builds every adapter. Fails only on a configuration that cannot work (a malformed
    /// key or base URL), so a bad setting stops the start instead of failing every call.
    pub fn new(config: &UpstreamsConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        Ok(Upstreams {
            launchpad: Launchpad::new(config.vendor(Vendor::Launchpad), clock.clone())?,
            perpdex: Perpdex::new(config.vendor(Vendor::Perpdex), config.perp_limits, clock.clone())?,
            orderbookdex: Orderbookdex::new(config.vendor(Vendor::Orderbookdex), clock.clone())?,
            chaindata: Chaindata::new(config.vendor(Vendor::Chaindata), clock.clone())?,
            solana_swap: SolanaSwap::new(config.vendor(Vendor::Jupiter), config.vendor(Vendor::Okx), clock.clone())?,
            enso: Enso::new(config.vendor(Vendor::Enso), clock.clone())?,
            yields: Yields::new(config.vendor(Vendor::Defillama), clock.clone())?,
            shield: Shield::new(config.vendor(Vendor::Blockaid), clock.clone())?,
            social: Social::new(config.vendor(Vendor::Social), clock.clone())?,
            solana_rpc: SolanaRpc::new(config.vendor(Vendor::SolanaRpc), clock.clone())?,
            predmkt: Predmkt::new(config.vendor(Vendor::PredmktGamma), config.vendor(Vendor::PredmktClob), clock)?,
        })
    }
}
