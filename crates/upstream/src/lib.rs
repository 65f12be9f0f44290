//! Vendor adapters: every upstream API the data routes stand on, spoken in its real wire
//! format and decoded into the catalogue's output types.
//!
//! Each vendor has one [`VendorConfig`] (base URL, key, timeout, retries, concurrency cap).
//! A fresh install points every vendor at the simulator, which speaks the same formats, so
//! the default run goes through exactly the code that production does. Failures come back
//! as [`UpstreamError`], which names the vendor family and never carries a key or a raw
//! upstream body.

mod cache;
mod client;
mod config;
mod error;
pub mod launchpad;
pub mod predmkt;
pub mod social;

use std::sync::Arc;

use svc_domain::Clock;

pub use cache::TtlCache;
pub use config::{Vendor, VendorConfig};
pub use error::UpstreamError;
pub use launchpad::Launchpad;
pub use predmkt::Predmkt;
pub use social::Social;

/// The key every keyed fake vendor of the simulator accepts, so the default run exercises
/// the same authentication code as production. Not a secret.
pub const SIMULATOR_KEY: &str = "svc-simulated-market";

/// Settings of every vendor, by vendor.
#[derive(Debug, Clone)]
pub struct UpstreamsConfig {
    vendors: Vec<(Vendor, VendorConfig)>,
}

impl UpstreamsConfig {
    /// Every vendor at its real address, without keys; the server fills in keys from the
    /// environment and replaces the addresses with the simulator's when none is configured.
    pub fn real() -> Self {
        Self::each(|vendor| VendorConfig::new(vendor.real_base_url()))
    }

    /// Every vendor at one base URL, each under its own path prefix, with the key the
    /// simulator's fakes accept; how the simulator serves all vendors from one listener.
    pub fn all_at(base: &str) -> Self {
        Self::each(|vendor| {
            let mut config = VendorConfig::new(format!("{}/{}", base.trim_end_matches('/'), vendor.slug()));
            config.key = Some(SIMULATOR_KEY.to_owned());
            config
        })
    }

    fn each(config: impl Fn(Vendor) -> VendorConfig) -> Self {
        UpstreamsConfig { vendors: Vendor::ALL.iter().map(|v| (*v, config(*v))).collect() }
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
    /// Prediction markets: catalogue and order books.
    pub predmkt: Predmkt,
    /// The social network's posts, users, graph, counts and trends.
    pub social: Social,
}

impl Upstreams {
    /// Builds every adapter. Fails only on a configuration that cannot work (a malformed
    /// key or base URL), so a bad setting stops the start instead of failing every call.
    pub fn new(config: &UpstreamsConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        Ok(Upstreams {
            launchpad: Launchpad::new(config.vendor(Vendor::Launchpad), clock.clone())?,
            social: Social::new(config.vendor(Vendor::Social), clock.clone())?,
            predmkt: Predmkt::new(config.vendor(Vendor::PredmktGamma), config.vendor(Vendor::PredmktClob), clock)?,
        })
    }
}
