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
mod error;
pub mod launchpad;
pub mod orderbookdex;
pub mod perpdex;

use std::sync::Arc;

use svc_domain::Clock;

pub use cache::TtlCache;
pub use chaindata::Chaindata;
pub use config::{Vendor, VendorConfig};
pub use error::UpstreamError;
pub use launchpad::Launchpad;
pub use orderbookdex::Orderbookdex;
pub use perpdex::{PerpLimits, Perpdex};

/// The key given to keyed vendors when they point at the simulator: the fakes check that a
/// key is sent, as the vendors do, and accept any but a revoked one.
pub const SIMULATOR_KEY: &str = "simulated-key";

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

    /// Every vendor at one base URL, each under its own path prefix; how the simulator
    /// serves all vendors from one listener. Vendors that want a key get
    /// [`SIMULATOR_KEY`], which the simulator's fakes accept.
    pub fn all_at(base: &str) -> Self {
        Self::each(|vendor| {
            let mut config = VendorConfig::new(format!("{}/{}", base.trim_end_matches('/'), vendor.slug()));
            if vendor == Vendor::Chaindata {
                config.key = Some(SIMULATOR_KEY.to_owned());
            }
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
}

impl Upstreams {
    /// Builds every adapter. Fails only on a configuration that cannot work (a malformed
    /// key or base URL), so a bad setting stops the start instead of failing every call.
    pub fn new(config: &UpstreamsConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        Ok(Upstreams {
            launchpad: Launchpad::new(config.vendor(Vendor::Launchpad), clock.clone())?,
            perpdex: Perpdex::new(config.vendor(Vendor::Perpdex), config.perp_limits, clock.clone())?,
            orderbookdex: Orderbookdex::new(config.vendor(Vendor::Orderbookdex), clock.clone())?,
            chaindata: Chaindata::new(config.vendor(Vendor::Chaindata), clock)?,
        })
    }
}
