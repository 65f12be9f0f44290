//! A synthetic crypto market that moves with the clock, and fake vendor servers that serve
//! it in each vendor's exact wire format.
//!
//! It is the default upstream of a fresh install (so every route answers with coherent data
//! offline, through the real adapters) and the network-edge fake of every test. The world is
//! a pure function of a seed and the time: two simulators with the same seed agree, and a
//! test that moves its clock sees the market move.

mod faults;
mod vendors;
pub mod world;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use svc_domain::Clock;

pub use faults::{Fault, Faults};
pub use vendors::social::ACCEPTED_BEARER as SOCIAL_BEARER;
pub use world::World;

/// The seed of the default world.
pub const DEFAULT_SEED: u64 = 402;

/// A world and the fault switches of its fake vendors.
#[derive(Debug, Clone)]
pub struct Simulator {
    /// The market.
    pub world: Arc<World>,
    /// Injected failures and the log of requests received.
    pub faults: Faults,
}

impl Simulator {
    /// A world grown from `seed`, moving with `clock`.
    pub fn new(seed: u64, clock: Arc<dyn Clock>) -> Self {
        Simulator { world: Arc::new(World::new(seed, clock)), faults: Faults::default() }
    }

    /// Every fake vendor, each under its own path prefix (`/launchpad/...`).
    pub fn router(&self) -> Router {
        vendors::router(self.clone())
    }

    /// Serves every vendor on `127.0.0.1` at a free port, in the background; returns the
    /// base URL to point the adapters at.
    pub async fn spawn(&self) -> std::io::Result<(String, SocketAddr)> {
        self.spawn_on(SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Serves every vendor on `addr`, in the background.
    pub async fn spawn_on(&self, addr: SocketAddr) -> std::io::Result<(String, SocketAddr)> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let router = self.router();
        tokio::spawn(async move {
            if let Err(err) = axum::serve(listener, router).await {
                tracing::error!(error = %err, "simulator stopped");
            }
        });
        Ok((format!("http://{local}"), local))
    }
}
