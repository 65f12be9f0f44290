//! A synthetic crypto market that moves with the clock, and fake vendor servers that serve
//! it in each vendor's exact wire format.
//!
//! It is the default upstream of a fresh install (so every route answers with coherent data
//! offline, through the real adapters) and the network-edge fake of every test. The world is
//! a pure function of a seed and the time: two simulators with the same seed agree, and a
//! test that moves its clock sees the market move.

mod faults;
pub mod sandboxes;
pub mod vendors;
pub mod world;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use svc_domain::Clock;

pub use faults::{Fault, Faults};
pub use vendors::chaindata::REVOKED_KEY as CHAINDATA_REVOKED_KEY;
pub use vendors::llm::LlmGate;
pub use vendors::social::ACCEPTED_BEARER as SOCIAL_BEARER;
pub use world::World;

/// The API key every keyed fake vendor accepts, and the key the adapters send when pointed
/// at the simulator without one configured; any other key is refused as the vendor would.
pub const SIMULATED_KEY: &str = "simulated-key";

/// The secret the fake signed-request aggregator checks signatures with.
pub const SIMULATED_SECRET: &str = "simulated-secret";

/// The passphrase the fake signed-request aggregator expects.
pub const SIMULATED_PASSPHRASE: &str = "simulated-passphrase";

/// The seed of the default world.
pub const DEFAULT_SEED: u64 = 402;

/// The agent key the simulated perp exchange has approved, so the default run and the tests
/// can trade offline. A well-known test key: it holds nothing anywhere and must never be
/// used against a real exchange.
pub const PERPDEX_AGENT_KEY: &str = "0x7e57ab1e5eed0fa9e0000000000000000000000000000000000000000000402a";

/// The address of [`PERPDEX_AGENT_KEY`]: the only signer the simulated exchange accepts.
pub fn perpdex_agent_address() -> alloy_primitives::Address {
    PERPDEX_AGENT_KEY
        .parse::<alloy_signer_local::PrivateKeySigner>()
        .map(|signer| signer.address())
        .unwrap_or_else(|_| unreachable!("the simulator's agent key is a valid private key"))
}

/// `listener` with Nagle's algorithm off on every connection, as real vendors serve: a stream's
/// small chunks then leave at once instead of waiting for the client's delayed ACK (about 40 ms
/// on a kept-alive connection).
pub fn no_delay(listener: tokio::net::TcpListener) -> impl axum::serve::Listener<Addr = SocketAddr> {
    use axum::serve::ListenerExt as _;
    listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    })
}

/// A world and the fault switches of its fake vendors.
#[derive(Debug, Clone)]
pub struct Simulator {
    /// The market.
    pub world: Arc<World>,
    /// Injected failures and the log of requests received.
    pub faults: Faults,
    /// Nonces the simulated perp exchange has seen: each may be used once.
    perpdex_nonces: Arc<Mutex<HashSet<u64>>>,
    /// Holds the fake LLM's streams after their first chunk while engaged.
    pub llm_gate: LlmGate,
    /// What the fake LLM received.
    llm_received: vendors::llm::Received,
    /// The fake chat platform (Bot API): its webhooks and what bots sent.
    pub bot_api: vendors::telegram::FakeBotApi,
}

impl Simulator {
    /// A world grown from `seed`, moving with `clock`.
    pub fn new(seed: u64, clock: Arc<dyn Clock>) -> Self {
        Simulator {
            world: Arc::new(World::new(seed, clock)),
            faults: Faults::default(),
            perpdex_nonces: Arc::default(),
            llm_gate: LlmGate::default(),
            llm_received: Arc::default(),
            bot_api: vendors::telegram::FakeBotApi::default(),
        }
    }

    /// The request bodies the fake LLM provider received, oldest first.
    pub fn llm_requests(&self) -> Vec<serde_json::Value> {
        self.llm_received.lock().map(|r| r.clone()).unwrap_or_default()
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
        let listener = no_delay(listener);
        let router = self.router();
        tokio::spawn(async move {
            if let Err(err) = axum::serve(listener, router).await {
                tracing::error!(error = %err, "simulator stopped");
            }
        });
        Ok((format!("http://{local}"), local))
    }
}
