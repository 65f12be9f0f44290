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
    /// What a sandbox's home holds at most, MiB: a tmpfs inside the memory cap, so what the
    /// agent writes never reaches the host's disk. Past it, writes fail with "No space left on
    /// device" and the log says so.
    #[schemars(extend("default" = defaults().home_mb))]
    pub home_mb: Option<u64>,
    /// What a sandbox's `/tmp` holds at most, MiB, the same way.
    #[schemars(extend("default" = defaults().tmp_mb))]
    pub tmp_mb: Option<u64>,
    /// The most a gateway's log keeps, MiB; past it the log starts again, saying so.
    #[schemars(extend("default" = defaults().log_cap_mb))]
    pub log_cap_mb: Option<u64>,
    /// Hours a gateway's log is kept after the gateway ends; then it is removed.
    #[schemars(extend("default" = defaults().log_retention.as_secs() / 3600))]
    pub log_retention_hours: Option<u64>,
    /// Warm gateways kept booted per template (when the snapshot is prepared), so a start
    /// runs in about a second; each reserves `memory_mb` from the budget and gives way to a
    /// start that needs the room. 0 turns the pool off.
    #[schemars(extend("default" = defaults().pool_size))]
    pub pool_size: Option<usize>,
    /// Seconds a running gateway may have nothing to do (no call out but waiting for chat
    /// messages, no log line) before it is frozen: asleep, not billed, woken by its next chat
    /// message. 0 keeps gateways awake. Where the machine has no cgroup freezer they never sleep.
    #[schemars(extend("default" = defaults().idle_sleep.as_secs()))]
    pub idle_sleep_secs: Option<u64>,
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
    let mut config = AgentboxConfig::new(node_name(std::env::var("SVC_NODE").ok(), data_dir), budget);
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
    config.home_mb = file.home_mb.map_or(config.home_mb, |mb| mb.max(1));
    config.tmp_mb = file.tmp_mb.map_or(config.tmp_mb, |mb| mb.max(1));
    config.log_cap_mb = file.log_cap_mb.map_or(config.log_cap_mb, |mb| mb.max(1));
    config.pool_size = file.pool_size.unwrap_or(config.pool_size);
    config.idle_sleep = file.idle_sleep_secs.map_or(config.idle_sleep, Duration::from_secs);
    config.log_retention = file.log_retention_hours.map_or(config.log_retention, |h| Duration::from_secs(h * 3600));
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
    /// The files svc wrote for the agent, copied into its home before the gateway starts.
    #[arg(long)]
    pub seed: Option<PathBuf>,
    /// The agent's home.
    #[arg(long)]
    pub home: Option<PathBuf>,
    /// The most the gateway's log keeps, MiB.
    #[arg(long, default_value_t = 16)]
    pub log_cap_mb: u64,
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
        seed: args.seed,
        home: args.home,
        log_cap_bytes: args.log_cap_mb.max(1) << 20,
        command: args.command,
    })
    .await?;
    std::process::exit(code)
}

/// This process's node name: `configured` (`SVC_NODE`), else an id made on first start and
/// kept in `data_dir`. Sandboxes are tagged with it, and reconciliation touches only its own
/// node's: two replicas on one machine (one host name) no longer end each other's gateways
/// when one restarts. The host name stays the answer only where the id cannot be kept.
fn node_name(configured: Option<String>, data_dir: &Path) -> String {
    if let Some(name) = configured.map(|name| name.trim().to_owned()).filter(|name| !name.is_empty()) {
        return name;
    }
    match kept_node_id(data_dir) {
        Ok(id) => id,
        Err(err) => {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|h| h.trim().to_owned());
            let host = host.filter(|h| !h.is_empty()).unwrap_or_else(|| "local".to_owned());
            tracing::warn!(error = %err, node = %host, "could not keep a node id in the data directory; using the host name");
            host
        }
    }
}

/// The node id kept in `data_dir/node-id`, made (atomically, once) when there is none.
fn kept_node_id(data_dir: &Path) -> std::io::Result<String> {
    let path = data_dir.join("node-id");
    let valid =
        |id: &str| !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if let Ok(id) = std::fs::read_to_string(&path) {
        let id = id.trim();
        if valid(id) {
            return Ok(id.to_owned());
        }
    }
    std::fs::create_dir_all(data_dir)?;
    let id = format!("node-{}", uuid::Uuid::new_v4().simple());
    // Written beside and renamed into place, so a crash never leaves half an id; a process
    // that lost a race to make it reads the winner's.
    let partial = data_dir.join(format!("node-id.{}", uuid::Uuid::new_v4().simple()));
    std::fs::write(&partial, &id)?;
    match std::fs::hard_link(&partial, &path) {
        Ok(()) => {
            std::fs::remove_file(&partial)?;
            Ok(id)
        }
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(&partial)?;
            let id = std::fs::read_to_string(&path)?.trim().to_owned();
            if valid(&id) { Ok(id) } else { Err(std::io::Error::other("the kept node id is not one")) }
        }
        Err(err) => {
            let _ = std::fs::remove_file(&partial);
            Err(err)
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_id_is_made_once_and_kept_in_the_data_directory() {
        let dir = tempfile::tempdir().expect("dir");
        let first = node_name(None, dir.path());
        assert!(first.starts_with("node-"), "{first}");
        assert_eq!(node_name(None, dir.path()), first, "the same id after a restart");
        let other = tempfile::tempdir().expect("dir");
        assert_ne!(node_name(None, other.path()), first, "another data directory, another node");
        assert_eq!(node_name(Some(" edge-1 ".into()), dir.path()), "edge-1", "SVC_NODE wins");
    }

    #[test]
    fn processes_starting_at_once_on_one_data_directory_agree_on_its_node_id() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().to_owned();
        let names: Vec<String> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || node_name(None, &path))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().expect("thread"))
            .collect();
        assert!(names.iter().all(|n| *n == names[0]), "{names:?}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").filter_map(Result::ok).collect();
        assert_eq!(left.len(), 1, "no partial files left");
    }
}
