//! The `svc` binary: parses configuration, sets up logging and runs a subcommand. Everything
//! else lives in the library crates, so tests build the same app as `svc serve`.

mod address;
mod agentbox;
mod config;
mod eval;
mod llm;
mod logging;
mod mcp;
mod operator;
mod pay;
mod payments;
#[cfg(feature = "settle")]
mod payouts;
mod reference;
mod secrets;
mod sellers;
mod shutdown;
mod store;
mod upstreams;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser as _;
use svc_accounts::auth::Site;
use svc_api::{ApiConfig, AppState, Services};
use svc_domain::SystemClock;
use tokio::net::TcpListener;

use crate::config::{Cli, Command, ServeArgs};
use crate::logging::LogFormat;

/// jemalloc: the request path allocates many small, short-lived objects (JSON values, headers),
/// where it is markedly faster than the system allocator under concurrency; and its background
/// thread gives memory freed after a burst back to the system within seconds, even when no
/// thread of svc allocates again (an idle server's memory falls back after load).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // One TLS crypto provider for every client (the database driver and the HTTP clients
    // already link ring); an error only means one is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    match cli.command {
        Command::Serve(args) => serve(*args).await,
        Command::Migrate(store) => {
            logging::init(LogFormat::Text);
            store::open(&store).await.map(|_| tracing::info!("migrations applied"))
        }
        Command::Openapi => {
            let text = svc_catalogue::openapi::document_text(svc_catalogue::catalogue());
            use std::io::Write as _;
            std::io::stdout().write_all(text.as_bytes()).context("writing the document")
        }
        Command::Pay(args) => pay::run(args).await,
        Command::Mcp(args) => mcp::run(args).await,
        Command::Accounts(command) => operator::accounts(command).await,
        Command::Credits(command) => operator::credits(command).await,
        Command::Keys(command) => operator::keys(command).await,
        Command::Payouts(command) => operator::payouts(command).await,
        Command::Agentbox(command) => prepare_snapshot(command).await,
        Command::AgentboxShim(args) => agentbox::shim(args).await,
        Command::Config(command) => reference::print(command),
        Command::Skills { out, api_url } => write_skills(&out, api_url.as_deref()),
        Command::Signals(config::SignalsCommand::Eval { worlds }) => {
            let report = eval::evaluate(1..worlds.saturating_add(1)).await?;
            use std::io::Write as _;
            std::io::stdout().write_all(report.table().as_bytes()).context("writing the table")
        }
        Command::Simulator(args) => {
            logging::init(args.log_format);
            upstreams::run_simulator(args).await
        }
    }
}

/// `svc agentbox prepare`: installs the snapshot every sandbox starts from, where the flag,
/// else the config file's `[agentbox]` table, else the data directory puts it.
async fn prepare_snapshot(command: config::AgentboxCommand) -> anyhow::Result<()> {
    let config::AgentboxCommand::Prepare { dir, npm, force, config, store } = command;
    logging::init(LogFormat::Text);
    let file = config::FileConfig::read_or_default(config.as_deref())?;
    let dir = dir
        .or(file.agentbox.snapshot.clone())
        .unwrap_or_else(|| agentbox::root(&file.agentbox, &store.data_dir).join("snapshot"));
    let snapshot = svc_agentbox::snapshot::prepare(&dir, &npm, force)
        .await
        .with_context(|| format!("preparing the agent snapshot in {}", dir.display()))?;
    tracing::info!(dir = %dir.display(), packages = ?snapshot.packages, "agent snapshot ready");
    Ok(())
}

/// `svc skills`: one `<out>/<skill>/SKILL.md` per skill, with `api_url` filled in when given.
fn write_skills(out: &std::path::Path, api_url: Option<&str>) -> anyhow::Result<()> {
    for (name, file) in svc_catalogue::skills::skill_files(svc_catalogue::catalogue()) {
        let dir = out.join(name);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let text = api_url.map_or(file.clone(), |url| svc_catalogue::skills::fill(&file, url));
        std::fs::write(dir.join("SKILL.md"), text).with_context(|| format!("writing {name}"))?;
    }
    Ok(())
}

/// The sign-in token key: `SVC_JWT_SECRET` (read from the environment only, so it never
/// shows in a process list), at least 32 bytes. Without it, a random key for this process:
/// tokens then end with the process and do not cross replicas, which `--production` refuses.
fn sign_in_config(production: bool) -> anyhow::Result<svc_accounts::auth::SignInConfig> {
    match std::env::var("SVC_JWT_SECRET") {
        Ok(secret) if secret.len() >= 32 => Ok(svc_accounts::auth::SignInConfig::new(secret)),
        Ok(_) => anyhow::bail!("SVC_JWT_SECRET must be at least 32 bytes"),
        Err(_) if production => {
            anyhow::bail!("--production needs SVC_JWT_SECRET (at least 32 bytes) for sign-in tokens")
        }
        Err(_) => {
            tracing::warn!(
                "SVC_JWT_SECRET is not set: sign-in tokens are signed with a random key and end with this process"
            );
            Ok(svc_accounts::auth::SignInConfig::ephemeral())
        }
    }
}

/// The signal settings with the configured refresh interval.
fn svc_signals_config(refresh_minutes: u32) -> svc_signals::SignalConfig {
    svc_signals::SignalConfig {
        refresh_interval_ms: i64::from(refresh_minutes.max(1)) * 60_000,
        ..svc_signals::SignalConfig::default()
    }
}

/// svc's public base URL, and the site sign-in messages must name: the public URL, or on a
/// development run the address svc listens on. Never a request's `Host`, which the sender
/// chooses: every challenge, discovery document and link is built on this one value.
fn sign_in_site(public_url: Option<&str>, listening: SocketAddr, production: bool) -> anyhow::Result<Site> {
    match public_url {
        Some(url) => Site::from_url(url).context("SVC_PUBLIC_URL"),
        None if production => {
            anyhow::bail!("--production needs SVC_PUBLIC_URL: sign-in messages must name the site users reach")
        }
        None => Ok(Site::from_url(&address::public_base(None, listening))?),
    }
}

/// `svc serve`: binds first (a taken port stops the start before anything else is touched),
/// builds the application from the flags and the config file, starts its background work,
/// then serves until SIGINT or SIGTERM.
async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    logging::init(args.log_format);
    let listener = TcpListener::bind(args.listen).await.with_context(|| format!("binding {}", args.listen))?;
    let local = listener.local_addr()?;
    let site = sign_in_site(args.public_url.as_deref(), local, args.payments.production)?;
    let store = store::open(&args.store).await?;
    let file = config::FileConfig::read_or_default(args.payments.config.as_deref())?;
    let config = api_config(&args, &file, site.clone())?;
    let services = build_services(&args, file, store.clone(), config, &site, local).await?;
    let state = AppState::new(services).context("configuring the LLM proxy and sellers")?;
    start_background_work(&state).await;
    let agentbox = state.agentbox.clone();
    let app = svc_api::app(state, svc_api::handlers::all())?;
    tracing::info!(listen = %local, store = %store.backend(), "svc listening on http://{local}");
    serve_until_signal(listener, app, connection_limits(&args)).await?;
    // Warm gateways are this process's alone (a restart would remove them): not left running.
    agentbox.drain_pool().await;
    tracing::info!("stopped");
    Ok(())
}

/// The API's settings: the flags where given, else the config file's `[limits]` (and
/// `[console]`), else the contract's defaults.
fn api_config(args: &ServeArgs, file: &config::FileConfig, site: Site) -> anyhow::Result<ApiConfig> {
    let defaults = ApiConfig::default();
    let limits = &file.limits;
    Ok(ApiConfig {
        body_limit_bytes: args.body_limit_bytes,
        sign_in: sign_in_config(args.payments.production)?.for_site(site),
        previews_per_hour: args.previews_per_hour.or(limits.previews_per_hour).unwrap_or(defaults.previews_per_hour),
        rate_per_minute: args.rate_per_minute.or(limits.rate_per_minute).unwrap_or(defaults.rate_per_minute),
        route_rates: limits.route_rates(svc_catalogue::catalogue())?,
        rate_limits: true,
        trusted_proxies: args.trusted_proxies.clone(),
        signals: svc_signals_config(args.signal_refresh_minutes),
        mcp: svc_api::McpAccess { hosts: args.mcp_allowed_hosts.clone(), origins: args.mcp_allowed_origins.clone() },
        operators: file.console.operators.clone(),
    })
}

/// Every service the routes use: payments, data vendors, the LLM proxy, rate limits, sealed
/// secrets, sandboxes and sellers. Whatever is not configured for real shares one simulated
/// market, started on first need.
async fn build_services(
    args: &ServeArgs,
    file: config::FileConfig,
    store: svc_store::Store,
    config: ApiConfig,
    site: &Site,
    local: SocketAddr,
) -> anyhow::Result<Services> {
    let production = args.payments.production;
    let clock = Arc::new(SystemClock);
    let payments::Payments { offer, facilitator, payouts } = payments::build(&args.payments, clock.clone()).await?;
    let mut market = upstreams::SimulatedMarket::new(&args.upstreams, clock.clone());
    let upstreams = Arc::new(upstreams::build(production, &mut market, clock.clone()).await?);
    let llm = llm::build(file.llm, production, &mut market).await?;
    let limiter = rate_limiter(args.redis_url.as_deref()).await?;
    let sealed = secrets::load(&args.store.data_dir, production)?;
    let agentbox = agentbox::build(
        &file.agentbox,
        &args.store.data_dir,
        local,
        args.public_url.as_deref(),
        production,
        sealed.clone(),
        &mut market,
    )
    .await?;
    let sellers = sellers::build(&file.sellers, site.uri().to_owned(), &offer, production)?;
    Ok(Services {
        store,
        clock,
        config,
        offer,
        facilitator,
        upstreams,
        limiter,
        llm,
        agentbox,
        sellers,
        sealed,
        payouts,
    })
}

/// Rate-limit and preview counters: in Redis when `redis_url` is given, so replicas share
/// them; else in this process's memory.
async fn rate_limiter(redis_url: Option<&str>) -> anyhow::Result<svc_limits::Limiter> {
    match redis_url {
        Some(url) => svc_limits::Limiter::redis(url, "svc:limits:")
            .await
            .context("connecting to Redis for shared rate limits (SVC_REDIS_URL)"),
        None => Ok(svc_limits::Limiter::default()),
    }
}

/// Starts what runs beside the requests for as long as the process does: settling what a
/// stopped process left, the signal engine, payouts and key revocations. Sandboxes a stopped
/// process left are dealt with before it returns.
async fn start_background_work(state: &AppState) {
    // Settlements left pending and reservations left by a stopped process are settled from
    // what the chain says. A pass is one indexed query when nothing is due; every 5 s, so a
    // killed process's payments are decided within seconds of its last beat going stale.
    tokio::spawn(svc_paywall::reconcile::run(state.paywall.clone(), std::time::Duration::from_secs(5)));
    // The signal engine: one snapshot now, then one per refresh interval, on the replica that
    // holds the engine lease; the others serve the leader's snapshots.
    tokio::spawn(state.signals.clone().run());
    // Credits held by LLM calls of a process that stopped mid-call are given back.
    tokio::spawn(state.llm.clone().run_sweeper(std::time::Duration::from_secs(300)));
    // Sandboxes left by a stopped process: re-attached to, or ended and removed.
    if let Err(e) = state.agentbox.reconcile().await {
        tracing::error!(error = %e, "could not reconcile agent sandboxes");
    }
    // Warm gateways, booted after the reconcile removed the last process's.
    tokio::spawn(state.agentbox.clone().keep_pool_warm());
    // Logs of gateways that ended over the retention ago are removed, now and hourly.
    tokio::spawn(state.agentbox.clone().keep_logs_swept(std::time::Duration::from_secs(3600)));
    // Seller calls a stopped process left between the seller's answer and the earning are
    // settled from their payments' records, every minute.
    let sellers = state.sellers.clone();
    every(60, move || {
        let sellers = sellers.clone();
        async move {
            if let Err(e) = sellers.sweep().await {
                tracing::warn!(error = %e, "could not sweep seller calls");
            }
        }
    });
    // Sellers' payouts on the networks svc settles on: sent, and settled from the chain when a
    // send's outcome was lost, every 10 seconds.
    let sellers = state.sellers.clone();
    every(10, move || {
        let sellers = sellers.clone();
        async move {
            if let Err(e) = sellers.pay_out().await {
                tracing::warn!(error = %e, "could not run a round of payouts");
            }
        }
    });
    // Keys of ended gateways whose revocation failed are revoked again, every 10 minutes.
    let agentbox = state.agentbox.clone();
    every(600, move || {
        let agentbox = agentbox.clone();
        async move { agentbox.revoke_leftover_keys().await }
    });
}

/// The connection limits from the flags: how long a request head may take, how many
/// connections at once, how many per client.
fn connection_limits(args: &ServeArgs) -> svc_api::serve::ConnectionLimits {
    svc_api::serve::ConnectionLimits {
        header_read: std::time::Duration::from_secs(args.header_timeout_secs.max(1)),
        max_connections: args.max_connections,
        max_per_client: args.max_connections_per_client,
        trusted_proxies: args.trusted_proxies.clone(),
    }
}

/// Serves `app` until SIGINT or SIGTERM, then lets in-flight requests finish for at most
/// [`svc_api::SHUTDOWN_GRACE`] before returning.
async fn serve_until_signal(
    listener: TcpListener,
    app: axum::Router,
    limits: svc_api::serve::ConnectionLimits,
) -> anyhow::Result<()> {
    let (signal_tx, signal_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        svc_api::serve::serve(listener, app, limits, async {
            let _ = signal_rx.await;
        })
        .await
    });
    shutdown::signal().await;
    tracing::info!("shutting down: finishing in-flight requests");
    let _ = signal_tx.send(());
    match tokio::time::timeout(svc_api::SHUTDOWN_GRACE, server).await {
        Ok(joined) => joined.context("server task")?.context("serving")?,
        Err(_) => tracing::warn!("in-flight requests still running after the grace period; exiting"),
    }
    Ok(())
}

/// Runs `task` now and every `secs` seconds after, for as long as the process runs.
fn every<F, Fut>(secs: u64, task: F)
where
    F: Fn() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(std::time::Duration::from_secs(secs));
        loop {
            ticks.tick().await;
            task().await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_in_names_the_public_url_else_the_listen_address_and_production_needs_the_url() {
        let listening: SocketAddr = "0.0.0.0:9000".parse().expect("addr");
        let public = sign_in_site(Some("https://api.example.com"), listening, true).expect("site");
        assert_eq!(public.domain(), "api.example.com");
        let local = sign_in_site(None, listening, false).expect("site");
        assert_eq!((local.domain(), local.uri()), ("127.0.0.1:9000", "http://127.0.0.1:9000"));
        assert!(sign_in_site(None, listening, true).is_err(), "production without a public URL");
        assert!(sign_in_site(Some("api.example.com/x"), listening, false).is_err(), "not a base URL");
    }

    /// `svc serve` with `flags`, as the command line gives it.
    fn serve_args(flags: &[&str]) -> ServeArgs {
        let cli = Cli::try_parse_from(["svc", "serve"].iter().chain(flags)).expect("parses");
        let Command::Serve(args) = cli.command else { panic!("not serve: {:?}", cli.command) };
        *args
    }

    #[test]
    fn a_limit_comes_from_its_flag_else_the_config_file_else_the_contract_default() {
        let site = Site::from_url("https://api.example.com").expect("site");
        let file: config::FileConfig =
            toml::from_str("[limits]\nrate_per_minute = 7\npreviews_per_hour = 3").expect("parses");
        let from_file = api_config(&serve_args(&[]), &file, site.clone()).expect("config");
        assert_eq!((from_file.rate_per_minute, from_file.previews_per_hour), (7, 3));
        let from_flag = api_config(&serve_args(&["--rate-per-minute", "9"]), &file, site.clone()).expect("config");
        assert_eq!((from_flag.rate_per_minute, from_flag.previews_per_hour), (9, 3));
        let contract = ApiConfig::default();
        let neither = api_config(&serve_args(&[]), &config::FileConfig::default(), site).expect("config");
        assert_eq!(
            (neither.rate_per_minute, neither.previews_per_hour),
            (contract.rate_per_minute, contract.previews_per_hour)
        );
    }

    #[test]
    fn svc_skills_writes_one_skill_file_per_skill_with_the_address_filled_in_when_given() {
        let out = tempfile::tempdir().expect("tempdir");
        write_skills(out.path(), Some("https://api.example.com/")).expect("written");
        let skills = svc_catalogue::skills::skill_files(svc_catalogue::catalogue());
        assert!(!skills.is_empty());
        for (name, file) in &skills {
            let written = std::fs::read_to_string(out.path().join(name).join("SKILL.md")).expect("a file per skill");
            assert_eq!(written, svc_catalogue::skills::fill(file, "https://api.example.com"));
        }
        let placeholder = tempfile::tempdir().expect("tempdir");
        write_skills(placeholder.path(), None).expect("written");
        let (name, file) = &skills[0];
        let written = std::fs::read_to_string(placeholder.path().join(name).join("SKILL.md")).expect("written");
        assert_eq!(&written, file, "without an address the placeholder stays");
    }

    #[test]
    fn a_route_limit_naming_no_paid_route_stops_the_start() {
        let site = Site::from_url("https://api.example.com").expect("site");
        let typo: config::FileConfig = toml::from_str("[limits]\nroutes = { \"alpha.top_pick\" = 5 }").expect("parses");
        let err = api_config(&serve_args(&[]), &typo, site).expect_err("a typo must not leave a route unlimited");
        assert!(err.to_string().contains("alpha.top_pick"), "{err}");
    }
}
