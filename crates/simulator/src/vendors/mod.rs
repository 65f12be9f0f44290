//! The fake vendor servers: one router per vendor, nested under its prefix, sharing one
//! fault layer, and the [`Simulator`] whose state they all serve from (it lives here, below
//! the crate root, because every vendor's handlers take it as their state).

mod blockaid;
pub(crate) mod chaindata;
mod defillama;
mod enso;
mod jupiter;
mod launchpad;
pub(crate) mod llm;
mod llm_agent;
mod okx;
mod orderbookdex;
mod perpdex;
mod predmkt;
pub(crate) mod social;
mod solana_rpc;
pub mod telegram;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use svc_domain::Clock;

use crate::world::World;
use crate::{Fault, Faults};
use llm::LlmGate;

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
    llm_received: llm::Received,
    /// The fake chat platform (Bot API): its webhooks and what bots sent.
    pub bot_api: telegram::FakeBotApi,
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
            bot_api: telegram::FakeBotApi::default(),
        }
    }

    /// The request bodies the fake LLM provider received, oldest first.
    pub fn llm_requests(&self) -> Vec<serde_json::Value> {
        self.llm_received.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Every fake vendor, each under its own path prefix (`/launchpad/...`).
    pub fn router(&self) -> Router {
        router(self.clone())
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

pub(crate) fn router(sim: Simulator) -> Router {
    Router::new()
        .route("/", axum::routing::get(index).with_state(sim.clone()))
        .nest("/chaindata", chaindata::router(sim.clone()))
        .nest("/launchpad", launchpad::router(sim.clone()))
        .nest("/perpdex", perpdex::router(sim.clone()))
        .nest("/orderbookdex", orderbookdex::router(sim.clone()))
        .nest("/jupiter", jupiter::router(sim.clone()))
        .nest("/okx", okx::router(sim.clone()))
        .nest("/evm-router", enso::router(sim.clone()))
        .nest("/yields", defillama::router(sim.clone()))
        .nest("/shield", blockaid::router(sim.clone()))
        .nest("/solana-rpc", solana_rpc::router(sim.clone()))
        .nest("/predmkt-gamma", predmkt::gamma(sim.clone()))
        .nest("/predmkt-clob", predmkt::clob(sim.clone()))
        .nest("/social", social::router(sim.clone()))
        .nest("/llm", llm::router(sim.clone()))
        .nest("/anthropic", llm::anthropic(sim.clone()))
        .nest("/telegram", sim.bot_api.router())
        .layer(axum::middleware::from_fn_with_state(sim, faults))
}

/// Logs every request and applies the vendor's next queued fault.
async fn faults(State(sim): State<Simulator>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let vendor = path.trim_start_matches('/').split('/').next().unwrap_or_default().to_owned();
    let line = format!("{} {}", request.method(), request.uri());
    match sim.faults.on_request(&vendor, line) {
        Some(Fault::Status { status, retry_after }) => {
            let status =
                axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
            let body =
                axum::Json(serde_json::json!({"statusCode": status.as_u16(), "message": status.canonical_reason()}));
            match retry_after {
                Some(secs) => (status, [("retry-after", secs.to_string())], body).into_response(),
                None => (status, body).into_response(),
            }
        }
        Some(Fault::Delay(wait)) => {
            tokio::time::sleep(wait).await;
            next.run(request).await
        }
        None => next.run(request).await,
    }
}

/// What the world holds, so a person trying the default run has identifiers to ask for.
async fn index(State(sim): State<Simulator>) -> axum::Json<serde_json::Value> {
    let world = &sim.world;
    let coins: Vec<_> =
        world.coins().iter().take(10).map(|c| serde_json::json!({"mint": c.mint, "symbol": c.symbol})).collect();
    let coins_of_perps: Vec<_> = world.perp_markets().iter().map(|m| m.coin.clone()).collect();
    let tickers: Vec<_> = world.perp_markets().iter().map(|m| m.ticker()).collect();
    let accounts: Vec<_> = world.perp_accounts().iter().map(|a| a.address.clone()).collect();
    let tokens: Vec<_> = world
        .tokens()
        .iter()
        .map(|t| serde_json::json!({"chain": t.chain, "address": t.address, "symbol": t.symbol}))
        .collect();
    let sol_tokens: Vec<_> =
        world.sol_tokens().iter().map(|t| serde_json::json!({"mint": t.mint, "symbol": t.symbol})).collect();
    let evm_tokens: Vec<_> = world
        .evm_tokens()
        .iter()
        .map(|t| serde_json::json!({"chain_id": t.chain_id, "address": t.address, "symbol": t.symbol}))
        .collect();
    let protocols: std::collections::BTreeSet<_> = world.defi_positions().iter().map(|p| p.protocol.as_str()).collect();
    let markets: Vec<_> = world
        .pred_markets()
        .iter()
        .map(|m| serde_json::json!({"condition_id": m.condition_id, "question": m.question}))
        .collect();
    let usernames: Vec<_> = world.social_accounts().iter().take(10).map(|a| a.username.clone()).collect();
    axum::Json(serde_json::json!({
        "simulated": true,
        "launchpad": {"coins": coins},
        "perpdex": {"coins": coins_of_perps, "accounts": accounts, "agent": format!("{:#x}", crate::perpdex_agent_address())},
        "orderbookdex": {"tickers": tickers},
        "chaindata": {"tokens": tokens},
        "swap": {"tokens": sol_tokens},
        "evm": {"tokens": evm_tokens, "defi_protocols": protocols},
        "shield": {"known_malicious_address": world.drainer_address()},
        "solana_rpc": {"freeze_trap_mint": world.freeze_trap_token().map(|t| t.address.clone())},
        "predmkt": {"markets": markets},
        "social": {"usernames": usernames},
    }))
}
