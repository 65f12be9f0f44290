//! The benchmark server and payment pre-signer behind `bench/run.sh`.
//!
//! `serve` runs the real application (router, validation, paywall, SQLite store, built-in
//! verifier in verify-only mode, so settlement is a no-op stub), with a real signal snapshot
//! computed at startup from the simulated market. Beside it, `/bare` answers the exact bytes of
//! the Top Picks challenge from a plain axum route, the ceiling a challenge can approach, and
//! `/signal/top-picks` serves Top Picks from the snapshot through the same middleware and
//! pipeline as the paid route but without a payment: the cost of serving a signal route
//! itself. `presign` writes distinct signed payments, one per line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::response::IntoResponse;
use base64::Engine as _;
use clap::{Parser, Subcommand};
use http_body_util::BodyExt as _;
use svc_api::{ApiConfig, AppState, Services};
use svc_chain_evm::{B256, Payer};
use svc_domain::SystemClock;
use svc_x402::{BuiltinFacilitator, Offer, PaymentNetwork, PaymentRequired};
use tower::ServiceExt as _;

/// Where benchmark payments go.
const PAY_TO: &str = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
/// A throwaway payer key.
const PAYER_KEY: &str = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
/// The paid route under test.
const ROUTE: &str = "/api/x402/alpha/top-picks";

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the app and `/bare`.
    Serve {
        /// Listen address.
        #[arg(long, default_value = "127.0.0.1:18500")]
        listen: SocketAddr,
        /// SQLite file.
        #[arg(long)]
        db: PathBuf,
        /// Also register a seller's agent answered by a fake seller on loopback, and write its
        /// invoke path here.
        #[arg(long)]
        agent_out: Option<PathBuf>,
    },
    /// Time the store's payment writes alone: `count` reserve+finish pairs, sequentially and
    /// from `concurrency` tasks.
    Store {
        /// Pairs per pass.
        #[arg(long, default_value_t = 5000)]
        count: usize,
        /// Concurrent writers in the second pass.
        #[arg(long, default_value_t = 64)]
        concurrency: usize,
        /// SQLite file.
        #[arg(long)]
        db: PathBuf,
    },
    /// Write `count` signed payments for a paid route's challenge to `out`, one header per line.
    Presign {
        /// How many.
        #[arg(long)]
        count: usize,
        /// Output file.
        #[arg(long)]
        out: PathBuf,
        /// The paid path (default: Top Picks).
        #[arg(long, default_value = ROUTE)]
        path: String,
        /// A JSON body: the challenge is then a POST's.
        #[arg(long)]
        body: Option<String>,
        /// The SQLite file of a running `serve` (to price its seller's agent); default: a
        /// throwaway one.
        #[arg(long)]
        db: Option<PathBuf>,
        /// Write whole MCP `tools/call` requests of this tool instead, each paying with its
        /// payment in `_meta["x402/payment"]`, one per line.
        #[arg(long)]
        mcp_tool: Option<String>,
    },
    /// Print what `tools/list` costs a client: bytes and tokens (o200k, as tiktoken counts),
    /// of the full MCP server and of the compact one.
    McpList,
}

fn offer() -> anyhow::Result<Offer> {
    Ok(Offer::new(vec![PaymentNetwork::base_usdc(PAY_TO)?], svc_x402::MAX_TIMEOUT_SECONDS))
}

/// The bench-only route serving Top Picks without a payment.
const SIGNAL_ROUTE: &str = "/signal/top-picks";

async fn app(db: &std::path::Path) -> anyhow::Result<(axum::Router, AppState)> {
    let store = svc_store::Store::open_sqlite_file(db).await?;
    store.migrate().await?;
    let offer = offer()?;
    let clock = Arc::new(SystemClock);
    let facilitator = Arc::new(BuiltinFacilitator::new(offer.networks().to_vec(), clock.clone()));
    let route = svc_catalogue::catalogue().get(svc_catalogue::ids::alpha::TOP_PICKS).context("route")?;
    let sim = svc_simulator::Simulator::new(svc_simulator::DEFAULT_SEED, clock.clone());
    let (vendors, _) = sim.spawn().await?;
    let upstreams =
        Arc::new(svc_upstream::Upstreams::new(&svc_upstream::UpstreamsConfig::all_at(&vendors), clock.clone())?);
    let services = Services {
        store,
        clock,
        config: ApiConfig { rate_limits: false, ..ApiConfig::default() },
        limiter: Default::default(),
        offer,
        facilitator,
        upstreams,
        llm: svc_llm::LlmConfig::simulated(&vendors),
        agentbox: svc_agentbox::AgentboxSetup::unavailable("not benchmarked"),
        sellers: svc_sellers::SellersConfig {
            endpoints: svc_sellers::EndpointPolicy { allow_http_hosts: vec!["127.0.0.1".to_owned()] },
            ..svc_sellers::SellersConfig::default()
        },
        sealed: Arc::new(svc_sealed::SecretBox::ephemeral()),
        payouts: Vec::new(),
    };
    let state = AppState::new(services)?;
    state.signals.refresh().await?;
    let serving = std::sync::Arc::new(svc_api::handlers::all());
    let signal = axum::routing::get(move |State(state): State<AppState>, request: Request<Body>| {
        svc_api::pipeline::serve(state, serving.clone(), route, svc_api::Channel::Free, request)
    });
    let extra = axum::Router::new().route(SIGNAL_ROUTE, signal);
    Ok((svc_api::app_with(state.clone(), svc_api::handlers::all(), extra)?, state))
}

/// A seller's agent answered by a fake seller on loopback, selling without limits that a
/// benchmark would reach; its invoke path.
async fn seller_agent(state: &AppState) -> anyhow::Result<String> {
    let seller = axum::Router::new()
        .route("/", axum::routing::post(|| async { axum::Json(serde_json::json!({"answer": "ok"})) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let endpoint = format!("http://{}/", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, seller).await });
    let account = svc_store::Store::clone(&state.store);
    let account = svc_accounts::open_account(&account, "bench seller", None, 0).await?;
    let request: svc_catalogue::routes::sellers::AgentRequest =
        serde_json::from_value(serde_json::json!({"name": "bench", "endpoint": endpoint}))?;
    let agent = state.sellers.create(&account.id, request).await.map_err(|e| anyhow::anyhow!("agent: {e}"))?;
    let config: svc_catalogue::routes::sellers::X402ConfigRequest = serde_json::from_value(serde_json::json!({
        "agent_id": agent.agent.id,
        "enabled": true,
        "pricing": {"model": "per_request", "amount": "0.05", "currency": "USDC"},
        "wallet_address": PAY_TO,
        "limits": {"max_requests_per_day": 100_000_000, "rate_limit_per_minute": 1_000_000},
    }))?;
    state.sellers.set_x402_config(&account.id, config).await.map_err(|e| anyhow::anyhow!("config: {e}"))?;
    Ok(svc_catalogue::routes::sellers::INVOKE_PATH.replace("{agent_id}", &agent.agent.id))
}

/// The challenge of `path` (a POST with `body` when given) exactly as the app sends it.
async fn challenge(app: &axum::Router, path: &str, body: Option<&str>) -> anyhow::Result<(HeaderMap, bytes::Bytes)> {
    let request = match body {
        Some(body) => Request::post(path)
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .body(Body::from(body.to_owned()))?,
        None => Request::get(path).header("host", "127.0.0.1").body(Body::empty())?,
    };
    let response = app.clone().oneshot(request).await?;
    anyhow::ensure!(response.status() == StatusCode::PAYMENT_REQUIRED, "expected a challenge");
    let headers = response.headers().clone();
    Ok((headers, response.into_body().collect().await?.to_bytes()))
}

/// jemalloc: the request path allocates many small, short-lived objects (JSON values, headers),
/// where it is markedly faster than the system allocator under concurrency; and its background
/// thread gives memory freed after a burst back to the system within seconds, even when no
/// thread of svc allocates again (an idle server's memory falls back after load).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Serve { listen, db, agent_out } => {
            let (app, state) = app(&db).await?;
            if let Some(out) = agent_out {
                std::fs::write(out, seller_agent(&state).await?)?;
            }
            let (headers, body) = challenge(&app, ROUTE, None).await?;
            let bare = axum::routing::get(move || {
                let (headers, body) = (headers.clone(), body.clone());
                async move { (StatusCode::PAYMENT_REQUIRED, headers, body).into_response() }
            });
            let router = axum::Router::new().route("/bare", bare).merge(app);
            let listener = tokio::net::TcpListener::bind(listen).await?;
            // The server svc runs, with its connection limits.
            let limits = svc_api::serve::ConnectionLimits::default();
            svc_api::serve::serve(listener, router, limits, std::future::pending()).await?;
        }
        Command::Store { count, concurrency, db } => {
            let store = svc_store::Store::open_sqlite_file(&db).await?;
            store.migrate().await?;
            let pair = |store: svc_store::Store, i: usize, pass: &'static str| async move {
                let new = svc_store::NewPayment {
                    id: format!("{pass}-{i}"),
                    route_id: svc_catalogue::ids::alpha::TOP_PICKS.into(),
                    network: "eip155:8453".into(),
                    payer: "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23".into(),
                    nonce: format!("{pass}-{i}"),
                    amount: 500_000,
                    asset: "usdc".into(),
                    pay_to: PAY_TO.into(),
                    valid_before: Some(300),
                    now_ms: 0,
                    holder: None,
                };
                store.reserve_payment(&new).await?;
                store.finish_payment(&new.id, svc_store::PaymentStatus::Unsettled, None, None, 1).await?;
                anyhow::Ok(())
            };
            let started = std::time::Instant::now();
            for i in 0..count {
                pair(store.clone(), i, "seq").await?;
            }
            let sequential = started.elapsed();
            let started = std::time::Instant::now();
            let mut tasks = tokio::task::JoinSet::new();
            let per_task = count / concurrency.max(1);
            for t in 0..concurrency {
                let store = store.clone();
                tasks.spawn(async move {
                    let mut waits = Vec::with_capacity(per_task);
                    for i in 0..per_task {
                        let began = std::time::Instant::now();
                        pair(store.clone(), t * per_task + i, "par").await?;
                        waits.push(began.elapsed());
                    }
                    anyhow::Ok(waits)
                });
            }
            let mut waits = Vec::with_capacity(count);
            while let Some(done) = tasks.join_next().await {
                waits.extend(done??);
            }
            let concurrent = started.elapsed();
            waits.sort_unstable();
            let at = |q: f64| waits.get(((waits.len() as f64 * q) as usize).min(waits.len().saturating_sub(1)));
            let ms = |d: Option<&std::time::Duration>| d.map_or(0.0, |d| d.as_secs_f64() * 1000.0);
            let us = |d: std::time::Duration, n: usize| d.as_micros() as f64 / n.max(1) as f64;
            use std::io::Write as _;
            writeln!(
                std::io::stdout(),
                "store: sequential {:.0} µs/pair ({:.0} pairs/s); {concurrency} writers {:.0} µs/pair ({:.0} pairs/s), \
                 each pair p50 {:.2} ms p99 {:.2} ms max {:.2} ms",
                us(sequential, count),
                count as f64 / sequential.as_secs_f64(),
                us(concurrent, per_task * concurrency),
                (per_task * concurrency) as f64 / concurrent.as_secs_f64(),
                ms(at(0.5)),
                ms(at(0.99)),
                ms(waits.last()),
            )?;
        }
        Command::McpList => {
            let dir = std::env::temp_dir().join(format!("svc-bench-mcp-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            let (app, _) = app(&dir.join("list.db")).await?;
            let tokens = tiktoken_rs::o200k_base()?;
            use std::io::Write as _;
            for path in [svc_catalogue::operational::MCP_PATH, svc_catalogue::operational::MCP_COMPACT_PATH] {
                let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
                let request = Request::post(path)
                    .header("host", "127.0.0.1")
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2025-11-25")
                    .body(Body::from(body))?;
                let response = app.clone().oneshot(request).await?;
                let listed: serde_json::Value =
                    serde_json::from_slice(&response.into_body().collect().await?.to_bytes())?;
                let tools = listed["result"]["tools"].as_array().context("tools")?;
                // The whole listing as it crosses the wire, and what a host hands its model of
                // each tool: its name, description and input schema (output schemas and hints
                // stay with the host).
                let wire = serde_json::to_string(tools)?;
                let shown: Vec<serde_json::Value> = tools
                    .iter()
                    .map(|t| serde_json::json!({"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}))
                    .collect();
                let shown = serde_json::to_string(&shown)?;
                let count = |text: &str| tokens.encode_with_special_tokens(text).len();
                writeln!(
                    std::io::stdout(),
                    "mcp_list {path} tools {} wire_bytes {} wire_tokens {} model_tokens {}",
                    tools.len(),
                    wire.len(),
                    count(&wire),
                    count(&shown)
                )?;
            }
            std::fs::remove_dir_all(&dir)?;
        }
        Command::Presign { count, out, path, body, db, mcp_tool } => {
            let dir = std::env::temp_dir().join(format!("svc-bench-presign-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            let (app, _) = app(&db.unwrap_or_else(|| dir.join("presign.db"))).await?;
            let (headers, _) = challenge(&app, &path, body.as_deref()).await?;
            let encoded = headers.get(svc_x402::PAYMENT_REQUIRED).context("PAYMENT-REQUIRED")?;
            let challenge: PaymentRequired =
                serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(encoded.as_bytes())?)?;
            let requirement = svc_x402::client::choose(&challenge, None).context("payable")?;
            let payer = Payer::from_key(PAYER_KEY)?;
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
            let mut lines = String::with_capacity(count * 1600);
            for _ in 0..count {
                let header = svc_x402::client::pay_header(&challenge, requirement, &payer, now, B256::random())?;
                match &mcp_tool {
                    Some(tool) => {
                        let payment: serde_json::Value =
                            serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(&header)?)?;
                        let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params":
                            {"name": tool, "arguments": {}, "_meta": {"x402/payment": payment}}});
                        lines.push_str(&call.to_string());
                    }
                    None => lines.push_str(&header),
                }
                lines.push('\n');
            }
            std::fs::write(&out, lines)?;
            std::fs::remove_dir_all(&dir)?;
        }
    }
    Ok(())
}
