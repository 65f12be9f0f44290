//! The set-up every vendor test shares: a simulated market on a loopback port at a fixed
//! time, and every adapter pointed at it.

use std::sync::Arc;

use svc_domain::FixedClock;
use svc_simulator::Simulator;
use svc_upstream::{Upstreams, UpstreamsConfig};

/// 2026-11-22T10:00:00Z.
pub const NOW_MS: i64 = 1_795_341_600_000;

/// A simulated market and the adapters pointed at it.
pub struct Fixture {
    /// The simulator's base URL (each vendor is under its own prefix).
    pub base: String,
    pub sim: Simulator,
    pub clock: FixedClock,
    pub upstreams: Upstreams,
}

/// A fresh market at [`NOW_MS`], with the vendor settings adjusted by `tune`.
pub async fn fixture(tune: impl FnOnce(&mut UpstreamsConfig)) -> Fixture {
    let clock = FixedClock::at_ms(NOW_MS);
    let sim = Simulator::new(svc_simulator::DEFAULT_SEED, Arc::new(clock.clone()));
    let (base, _) = sim.spawn().await.expect("simulator");
    let mut config = UpstreamsConfig::all_at(&base);
    tune(&mut config);
    let upstreams = Upstreams::new(&config, Arc::new(clock.clone())).expect("upstreams");
    Fixture { base, sim, clock, upstreams }
}
