//! Agent sandbox wiring: the `[agentbox]` table, the local backend, the snapshot command and
//! the in-sandbox shim.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use svc_agentbox::local::{LocalBackend, LocalConfig};
use svc_agentbox::remote::{RemoteBackend, RemoteConfig};
use svc_agentbox::telegram::TelegramConfig;
use svc_sealed::SecretBox;

use crate::upstreams::SimulatedMarket;
use svc_agentbox::{AgentboxConfig, AgentboxSetup, Backend};
use svc_domain::Money;

/// The `[agentbox]` table: agent sandboxes, on this machine (bubblewrap) or on an
/// E2B-compatible service.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentboxFile {
    /// Off turns sandboxes off on this server (their routes answer 503).
    #[schemars(extend("default" = true))]
    pub enabled: Option<bool>,
    /// Where sandboxes and their logs live; `<data dir>/agentbox` by default.
    #[schemars(example = "./data/agentbox")]
    pub root: Option<PathBuf>,
    /// The prepared snapshot (`svc agentbox prepare`); `<root>/snapshot` by default.
    #[schemars(example = "./data/agentbox/snapshot")]
    pub snapshot: Option<PathBuf>,
    /// The bubblewrap program, looked up on `PATH`.
    #[schemars(extend("default" = "bwrap"))]
    pub bwrap: Option<PathBuf>,
    /// Memory each sandbox reserves and is capped at, MiB.
    #[schemars(extend("default" = defaults().memory_mb))]
    pub memory_mb: Option<u64>,
    /// Memory all sandboxes may reserve together, MiB; the machine's memory less 2 GiB by
    /// default. A start past it is refused with `503 no_capacity`.
    #[schemars(example = 6144)]
    pub memory_budget_mb: Option<u64>,
    /// What a running gateway costs per minute, USD in credits.
    #[schemars(extend("default" = defaults().credits_per_minute))]
    pub credits_per_minute: Option<Money>,
    /// Seconds per billing period.
    #[schemars(extend("default" = defaults().billing_interval.as_secs()))]
    pub billing_interval_secs: Option<u64>,
    /// Seconds a gateway has to become healthy.
    #[schemars(extend("default" = defaults().health_timeout.as_secs()))]
    pub health_timeout_secs: Option<u64>,
    /// Seconds between health probes of a running gateway.
    #[schemars(extend("default" = defaults().probe_interval.as_secs()))]
    pub probe_interval_secs: Option<u64>,
    /// Seconds a gateway gets to exit after SIGTERM.
    #[schemars(extend("default" = defaults().stop_grace.as_secs()))]
    pub stop_grace_secs: Option<u64>,
    /// `local` (bubblewrap on this machine) or `remote` (an E2B-compatible service; its key
    /// in `SVC_AGENTBOX_REMOTE_KEY`, svc's address in `SVC_PUBLIC_URL`).
    #[schemars(extend("default" = "local"))]
    pub backend: Option<String>,
    /// The remote service's control plane.
    #[schemars(extend("default" = REMOTE_URL))]
    pub remote_url: Option<String>,
    /// The remote template whose image ran `svc agentbox prepare --dir /opt/agent`.
    #[schemars(extend("default" = REMOTE_TEMPLATE))]
    pub remote_template: Option<String>,
    /// The remote sandbox agent's address, `{id}` and `{domain}` filled in.
    #[schemars(extend("default" = REMOTE_ENVD_URL))]
    pub remote_envd_url: Option<String>,
    /// Seconds a remote sandbox lives unless renewed; renewed each minute while it runs.
    #[schemars(extend("default" = REMOTE_LIFETIME_SECS))]
    pub remote_lifetime_secs: Option<u64>,
}

/// The remote backend's defaults, here once for the settings and their reference.
const REMOTE_URL: &str = "https://api.e2b.app";
/// The remote template's default id.
const REMOTE_TEMPLATE: &str = "svc-agent";
/// The remote sandbox agent's default address.
const REMOTE_ENVD_URL: &str = "https://49983-{id}.{domain}";
/// A remote sandbox's default lifetime, seconds.
const REMOTE_LIFETIME_SECS: u64 = 3600;

/// The sandboxes' defaults, for the configuration reference.
fn defaults() -> AgentboxConfig {
    AgentboxConfig::new(String::new(), 0)
}

/// The sandboxes' root for `data_dir` and the file.
pub fn root(file: &AgentboxFile, data_dir: &Path) -> PathBuf {
    file.root.clone().unwrap_or_else(|| data_dir.join("agentbox"))
}

/// The sandboxes service's settings, backend and chat channel, for svc listening on
/// `listening`. A machine that cannot run sandboxes (no bubblewrap, say) still serves
/// everything else; the sandbox routes then answer 503 with the reason.
pub async fn build(
    file: &AgentboxFile,
    data_dir: &Path,
    listening: SocketAddr,
    public_url: Option<&str>,
    production: bool,
    sealed: Arc<SecretBox>,
    market: &mut SimulatedMarket,
) -> anyhow::Result<AgentboxSetup> {
    let svc_address = crate::address::public_base(public_url, listening);
    let telegram = TelegramConfig {
        api_url: match std::env::var("SVC_TELEGRAM_API_URL") {
            Ok(url) => url,
            Err(_) if production => "https://api.telegram.org".to_owned(),
            Err(_) => {
                let url = format!("{}/telegram", market.base().await?);
                tracing::warn!(
                    bot_api = %url,
                    "SIMULATED CHAT PLATFORM: bots talk to the simulated market's Bot API (play a user with POST \
                     <bot_api>/simulate/<token>/message); set SVC_TELEGRAM_API_URL (or --production) for the real one"
                );
                url
            }
        },
        public_url: svc_address,
        sealed,
    };
    let (config, backend) = backend(file, data_dir, listening, public_url);
    Ok(AgentboxSetup { config, backend, telegram })
}

/// The sandboxes' settings and backend.
fn backend(
    file: &AgentboxFile,
    data_dir: &Path,
    listening: SocketAddr,
    public_url: Option<&str>,
) -> (AgentboxConfig, Result<Arc<dyn Backend>, String>) {
    let root = root(file, data_dir);
    let snapshot = file.snapshot.clone().unwrap_or_else(|| root.join("snapshot"));
    let budget = file.memory_budget_mb.unwrap_or_else(|| machine_memory_mb().saturating_sub(2048));
    let mut config = AgentboxConfig::new(node_name(), budget);
    if let Some(mb) = file.memory_mb {
        config.memory_mb = mb.max(16);
    }
    if let Some(price) = file.credits_per_minute {
        config.credits_per_minute = price;
    }
    let secs = |value: Option<u64>, default: Duration| value.map_or(default, |s| Duration::from_secs(s.max(1)));
    config.billing_interval = secs(file.billing_interval_secs, config.billing_interval);
    config.health_timeout = secs(file.health_timeout_secs, config.health_timeout);
    config.probe_interval = secs(file.probe_interval_secs, config.probe_interval);
    config.stop_grace = secs(file.stop_grace_secs, config.stop_grace);
    if file.enabled == Some(false) {
        return (config, Err("they are turned off in the config file ([agentbox] enabled = false)".into()));
    }
    let backend = match file.backend.as_deref().unwrap_or("local") {
        "local" => local(file, root, snapshot, crate::address::reachable(listening), config.stop_grace),
        "remote" => remote(file, public_url, &config.node),
        other => Err(format!("[agentbox] backend = {other:?}: use \"local\" or \"remote\"")),
    };
    if let Err(why) = &backend {
        tracing::warn!("agent sandboxes are off: {why}");
    }
    (config, backend)
}

/// The local backend: bubblewrap on this machine, bridged to svc at `api_addr`.
fn local(
    file: &AgentboxFile,
    root: PathBuf,
    snapshot: PathBuf,
    api_addr: SocketAddr,
    stop_grace: Duration,
) -> Result<Arc<dyn Backend>, String> {
    let shim = std::env::current_exe().map_err(|e| format!("svc cannot find its own binary: {e}"))?;
    let local = LocalConfig {
        root,
        snapshot,
        shim,
        bwrap: file.bwrap.clone().unwrap_or_else(|| PathBuf::from("bwrap")),
        api_addr,
        stop_grace,
    };
    LocalBackend::new(local).map(|b| Arc::new(b) as Arc<dyn Backend>).map_err(|e| e.to_string())
}

/// The remote backend from the file, `SVC_AGENTBOX_REMOTE_KEY` and svc's public address.
fn remote(file: &AgentboxFile, public_url: Option<&str>, node: &str) -> Result<Arc<dyn Backend>, String> {
    let api_key = std::env::var("SVC_AGENTBOX_REMOTE_KEY")
        .map_err(|_| "the remote backend needs its key in SVC_AGENTBOX_REMOTE_KEY".to_owned())?;
    let svc_url = public_url
        .ok_or("the remote backend needs SVC_PUBLIC_URL: remote sandboxes reach svc at its public address")?;
    let config = RemoteConfig {
        api_url: file.remote_url.clone().unwrap_or_else(|| REMOTE_URL.to_owned()),
        api_key,
        template: file.remote_template.clone().unwrap_or_else(|| REMOTE_TEMPLATE.to_owned()),
        envd_url: file.remote_envd_url.clone().unwrap_or_else(|| REMOTE_ENVD_URL.to_owned()),
        svc_url: svc_url.to_owned(),
        node: node.to_owned(),
        lifetime: Duration::from_secs(file.remote_lifetime_secs.unwrap_or(REMOTE_LIFETIME_SECS).max(60)),
    };
    RemoteBackend::new(config).map(|b| Arc::new(b) as Arc<dyn Backend>).map_err(|e| e.to_string())
}

/// `svc agentbox-shim` (inside a sandbox only).
#[derive(Debug, clap::Args)]
pub struct ShimArgs {
    /// The directory shared with svc.
    #[arg(long)]
    pub run_dir: PathBuf,
    /// The gateway's port inside the sandbox.
    #[arg(long)]
    pub gateway_port: u16,
    /// The port inside the sandbox that reaches svc.
    #[arg(long)]
    pub egress_port: u16,
    /// Seconds the gateway gets to exit after SIGTERM.
    #[arg(long, default_value_t = 10)]
    pub grace_secs: u64,
    /// The gateway's command.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// `svc agentbox-shim`: the bridge inside a sandbox.
pub async fn shim(args: ShimArgs) -> anyhow::Result<()> {
    let code = svc_agentbox::shim::run(svc_agentbox::shim::ShimArgs {
        run_dir: args.run_dir,
        gateway_port: args.gateway_port,
        egress_port: args.egress_port,
        grace: Duration::from_secs(args.grace_secs),
        command: args.command,
    })
    .await?;
    std::process::exit(code)
}

/// This machine's name: `SVC_NODE`, else the host name.
fn node_name() -> String {
    std::env::var("SVC_NODE")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "local".to_owned())
}

/// The machine's memory, MiB.
fn machine_memory_mb() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib / 1024)
}
