//! Vendor wiring: the real vendors where configured, the simulated market elsewhere.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use svc_domain::Clock;
use svc_simulator::Simulator;
use svc_upstream::{Upstreams, UpstreamsConfig, Vendor};

use crate::logging::LogFormat;

/// Where the data routes get their data. Each vendor is set by `SVC_<VENDOR>_URL` and, where
/// it wants one, `SVC_<VENDOR>_KEY` (`docs/configuration.md` lists them). A vendor with no URL set uses the
/// simulated market (in-process, or the shared one at `--simulator-url`); `--production`
/// points it at the real vendor instead.
#[derive(Debug, Clone, Args)]
pub struct UpstreamArgs {
    /// Base URL of a shared simulator (`svc simulator`); default: one in this process. Real
    /// vendors are set by `SVC_<VENDOR>_URL` and `SVC_<VENDOR>_KEY` (see `docs/configuration.md`).
    #[arg(long, env = "SVC_SIMULATOR_URL")]
    pub simulator_url: Option<String>,

    /// Seed of the in-process simulated market.
    #[arg(long, env = "SVC_SIMULATOR_SEED", default_value_t = svc_simulator::DEFAULT_SEED)]
    pub simulator_seed: u64,
}

/// Settings of `svc simulator`.
#[derive(Debug, Args)]
pub struct SimulatorArgs {
    /// Address to listen on.
    #[arg(long, env = "SVC_SIMULATOR_LISTEN", default_value = "127.0.0.1:8500")]
    pub listen: SocketAddr,

    /// Seed of the simulated market; replicas sharing data must share the seed.
    #[arg(long, env = "SVC_SIMULATOR_SEED", default_value_t = svc_simulator::DEFAULT_SEED)]
    pub seed: u64,

    /// Log format.
    #[arg(long, env = "SVC_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// The simulated market, started in this process on first need unless a shared one is given.
pub struct SimulatedMarket {
    shared: Option<String>,
    seed: u64,
    clock: Arc<dyn Clock>,
    started: Option<String>,
}

impl SimulatedMarket {
    /// The market `args` name, not started yet.
    pub fn new(args: &UpstreamArgs, clock: Arc<dyn Clock>) -> Self {
        SimulatedMarket { shared: args.simulator_url.clone(), seed: args.simulator_seed, clock, started: None }
    }

    /// Its base URL, starting it if need be.
    pub async fn base(&mut self) -> anyhow::Result<String> {
        if let Some(base) = self.shared.as_ref().or(self.started.as_ref()) {
            return Ok(base.clone());
        }
        let sim = Simulator::new(self.seed, self.clock.clone());
        let (base, _) = sim.spawn().await.context("starting the simulated market")?;
        self.started = Some(base.clone());
        Ok(base)
    }
}

/// Builds the adapters. A vendor whose `SVC_<VENDOR>_URL` is unset points at the simulator;
/// in production it points at the vendor's public address. Keys come from `SVC_<VENDOR>_KEY`.
pub async fn build(production: bool, market: &mut SimulatedMarket, clock: Arc<dyn Clock>) -> anyhow::Result<Upstreams> {
    let env = |vendor: Vendor, what: &str| {
        std::env::var(format!("{}_{what}", vendor.env_prefix())).ok().filter(|v| !v.trim().is_empty())
    };
    let simulated: Vec<Vendor> = Vendor::ALL.iter().copied().filter(|v| env(*v, "URL").is_none()).collect();
    let mut config = if production || simulated.is_empty() {
        UpstreamsConfig::real()
    } else {
        let base = market.base().await?;
        let names: Vec<&str> = simulated.iter().map(|v| v.family()).collect();
        tracing::warn!(
            simulator = %base,
            vendors = ?names,
            "SIMULATED DATA: these vendors answer from the simulated market; set their URLs (or --production) for real data"
        );
        UpstreamsConfig::all_at(&base)
    };
    for &vendor in Vendor::ALL {
        let settings = config.vendor_mut(vendor);
        // A vendor given its own address gets only its own key, never the simulator's.
        if let Some(url) = env(vendor, "URL") {
            settings.base_url = url.trim_end_matches('/').to_owned();
            settings.key = None;
        }
        // A vendor on the simulator keeps the simulator's key unless one is configured.
        if let Some(key) = env(vendor, "KEY") {
            settings.key = Some(key);
        }
    }
    // The simulated perp exchange approves a public test agent, so trading works offline; a
    // real exchange gets only the key the operator gives.
    let perpdex_simulated = !production && env(Vendor::Perpdex, "URL").is_none();
    let perpdex = config.vendor_mut(Vendor::Perpdex);
    if perpdex_simulated && perpdex.key.is_none() {
        perpdex.key = Some(svc_simulator::PERPDEX_AGENT_KEY.to_owned());
    }
    let limit = |name: &str| -> anyhow::Result<Option<u64>> {
        match std::env::var(name).ok().filter(|v| !v.trim().is_empty()) {
            None => Ok(None),
            Some(v) => v.trim().parse().map(Some).with_context(|| format!("{name} must be a whole number of USD")),
        }
    };
    if let Some(usd) = limit("SVC_PERPDEX_MAX_ORDER_USD")? {
        config.perp_limits.max_order_notional_usd = usd;
    }
    if let Some(usd) = limit("SVC_PERPDEX_MAX_CALL_USD")? {
        config.perp_limits.max_action_notional_usd = usd;
    }
    Upstreams::new(&config, clock).context("configuring the data vendors")
}

/// `svc simulator`: serves the simulated market until stopped.
pub async fn run_simulator(args: SimulatorArgs) -> anyhow::Result<()> {
    let sim = Simulator::new(args.seed, Arc::new(svc_domain::SystemClock));
    let listener =
        tokio::net::TcpListener::bind(args.listen).await.with_context(|| format!("binding {}", args.listen))?;
    let local = listener.local_addr()?;
    tracing::info!(listen = %local, seed = args.seed, "simulated market listening on http://{local}");
    axum::serve(svc_simulator::no_delay(listener), sim.router())
        .with_graceful_shutdown(crate::shutdown::signal())
        .await?;
    Ok(())
}
