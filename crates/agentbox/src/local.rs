//! The local backend: each sandbox is a bubblewrap container on this machine, with its own
//! user, PID, IPC, UTS and network namespaces (so every sandbox binds 18789 on its own
//! loopback and has no route out), an empty environment but what svc gives it, the snapshot
//! and svc's binary mounted read-only, and one writable directory of its own. Memory and
//! processes are capped with cgroups where the machine has them.
//!
//! Its only way out is the shim's bridge to `egress.sock`, which svc serves as a proxy to its
//! own address: the agent reaches svc's API, LLM proxy and Bot-API shim, and nothing else, and
//! holds only placeholders of its credentials, which the proxy swaps for the real ones
//! (`egress`). Sandboxes are not
//! tied to svc's process: they keep running across a restart and are re-attached to (the
//! sockets are files; the log is a file the sandbox writes itself).
//!
//! Layout under the root: `sandboxes/<id>/{seed,run,etc}` (`seed`: the files svc writes for the
//! agent, copied into its home inside), `logs/<id>.log`. The agent's home and `/tmp` are tmpfs
//! of a bounded size inside the sandbox: whatever the agent writes stays within its memory cap
//! and never reaches the host's disk.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::process::Child;
use tokio::task::JoinHandle;

use crate::backend::{Backend, BackendError, Credentials, FileSpec, LogChunk, ProcSpec, SandboxSpec, SandboxStatus};
use crate::cgroups::Cgroups;
use crate::layout::{GATEWAY_PORT, HOME, SNAPSHOT_MOUNT, SVC_PORT};
use crate::shim::{CONTROL_SOCKET, EGRESS_SOCKET, GATEWAY_SOCKET};

/// Where svc's binary (the shim) is mounted inside.
const SHIM_MOUNT: &str = "/opt/svc/svc";
/// Where the shared socket directory is mounted inside.
const RUN_MOUNT: &str = "/run/agentbox";
/// Where the files svc writes for the agent are mounted inside, read-only: the shim copies
/// them into the agent's home (a size-capped tmpfs) before the gateway starts.
const SEED_MOUNT: &str = "/opt/svc/seed";
/// The longest unix socket path the kernel takes.
const MAX_SOCKET_PATH: usize = 107;
/// The most connections one sandbox may hold open to svc at once.
const MAX_EGRESS_CONNECTIONS: usize = 64;
/// The largest file a sandbox may write (its log included), in 512-byte blocks: 1 GiB.
const MAX_FILE_BLOCKS: u64 = 2 * 1024 * 1024;
/// The file beside a sandbox (outside it) holding the placeholders it was given.
const PLACEHOLDERS: &str = "placeholders.json";
/// A sandbox id as svc makes them, for the longest-path check.
const LONGEST_ID: &str = "gw_0123456789abcdef0123";

/// What the local backend needs.
#[derive(Debug, Clone)]
pub struct LocalConfig {
    /// Where sandboxes and their logs live.
    pub root: PathBuf,
    /// The prepared snapshot, mounted read-only in every sandbox.
    pub snapshot: PathBuf,
    /// svc's own binary: the shim inside the sandbox.
    pub shim: PathBuf,
    /// The bubblewrap program.
    pub bwrap: PathBuf,
    /// Where svc listens: the sandbox's outbound calls go there.
    pub api_addr: SocketAddr,
    /// How long a gateway gets to exit after SIGTERM.
    pub stop_grace: Duration,
}

/// Sandboxes with bubblewrap on this machine.
pub struct LocalBackend {
    config: LocalConfig,
    cgroups: Cgroups,
    slots: Mutex<HashMap<String, Slot>>,
}

/// The placeholders a sandbox holds, as kept on the host. Not secrets: they work only
/// through the sandbox's own way out.
#[derive(serde::Serialize, serde::Deserialize)]
struct KeptPlaceholders {
    api_key: String,
    llm_token: String,
    bot_token: Option<String>,
}

/// What this process holds of a sandbox.
#[derive(Default)]
struct Slot {
    /// The sandbox's process, when this process started it.
    child: Option<Child>,
    /// How it ended, once seen.
    exit: Option<String>,
    /// The bridge from the sandbox to svc.
    egress: Option<JoinHandle<()>>,
    /// Its caps, from its creation.
    spec: Option<SandboxSpec>,
    /// When it last called out.
    activity: Arc<crate::egress::Activity>,
    /// What its way out swaps, once armed.
    swap: Option<crate::egress::SharedSwap>,
}

impl LocalBackend {
    /// Checks the machine can run sandboxes (bubblewrap found, sockets fit the root's path)
    /// and finds the cgroup hierarchy.
    pub fn new(config: LocalConfig) -> Result<Self, BackendError> {
        let bwrap = find_program(&config.bwrap).ok_or_else(|| {
            BackendError(format!(
                "bubblewrap ({}) is not installed; install the Debian package bubblewrap",
                config.bwrap.display()
            ))
        })?;
        for dir in ["sandboxes", "logs"] {
            std::fs::create_dir_all(config.root.join(dir))
                .map_err(|e| BackendError::io(format!("making {}", config.root.join(dir).display()), e))?;
        }
        let root = config.root.canonicalize().map_err(|e| BackendError::io("reading the sandbox root", e))?;
        let longest = root.join("sandboxes").join(LONGEST_ID).join("run").join(CONTROL_SOCKET);
        if longest.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(BackendError(format!(
                "the sandbox root {} is too long a path for the sandboxes' sockets; choose a shorter one",
                root.display()
            )));
        }
        let cgroups = Cgroups::detect();
        if let Some(why) = cgroups.warning() {
            tracing::warn!("agent sandboxes run without a memory cap: {why}");
        }
        // Absolute, so bubblewrap mounts the same directory whatever its working directory.
        let snapshot =
            std::path::absolute(&config.snapshot).map_err(|e| BackendError::io("reading the snapshot path", e))?;
        Ok(LocalBackend { config: LocalConfig { root, bwrap, snapshot, ..config }, cgroups, slots: Mutex::default() })
    }

    fn dir(&self, id: &str) -> PathBuf {
        self.config.root.join("sandboxes").join(id)
    }

    fn log_path(&self, id: &str) -> PathBuf {
        self.config.root.join("logs").join(format!("{id}.log"))
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Serves the sandbox's `egress.sock`: its requests go on to svc with the real
    /// credentials in place of its placeholders.
    fn open_egress(&self, id: &str, swap: crate::egress::Swap) -> Result<(), BackendError> {
        // Armed before by this process: the swap changes in place, for open connections too.
        if let Some(slot) = self.slots().get(id)
            && let (Some(shared), Some(task)) = (&slot.swap, &slot.egress)
            && !task.is_finished()
        {
            *shared.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(swap);
            return Ok(());
        }
        let path = self.dir(id).join("run").join(EGRESS_SOCKET);
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).map_err(|e| BackendError::io("opening the sandbox's way out", e))?;
        let open = Arc::new(tokio::sync::Semaphore::new(MAX_EGRESS_CONNECTIONS));
        let mut slots = self.slots();
        let slot = slots.entry(id.to_owned()).or_default();
        slot.activity.touch();
        let activity = Arc::clone(&slot.activity);
        let shared: crate::egress::SharedSwap = Arc::new(std::sync::RwLock::new(Arc::new(swap)));
        slot.swap = Some(Arc::clone(&shared));
        let task = tokio::spawn(crate::egress::serve(listener, self.config.api_addr, shared, open, activity));
        if let Some(old) = slot.egress.replace(task) {
            old.abort();
        }
        Ok(())
    }

    /// The placeholders the sandbox was given: kept beside it on the host (never inside), so a
    /// re-attach after a restart swaps the same ones.
    fn placeholders(&self, id: &str, real: &Credentials) -> Result<Credentials, BackendError> {
        let path = self.dir(id).join(PLACEHOLDERS);
        if let Ok(text) = std::fs::read_to_string(&path)
            && let Ok(kept) = serde_json::from_str::<KeptPlaceholders>(&text)
        {
            return Ok(Credentials { api_key: kept.api_key, llm_token: kept.llm_token, bot_token: kept.bot_token });
        }
        let made = crate::egress::placeholders_for(real);
        let kept = KeptPlaceholders {
            api_key: made.api_key.clone(),
            llm_token: made.llm_token.clone(),
            bot_token: made.bot_token.clone(),
        };
        let text = serde_json::to_string(&kept).map_err(|e| BackendError::io("keeping the placeholders", e))?;
        std::fs::write(&path, text).map_err(|e| BackendError::io("keeping the placeholders", e))?;
        Ok(made)
    }

    /// Sends a line to the shim's control socket; its one-line answer.
    async fn control(&self, id: &str, command: &str, wait: Duration) -> Option<String> {
        let path = self.dir(id).join("run").join(CONTROL_SOCKET);
        let exchange = async {
            let mut conn = UnixStream::connect(&path).await.ok()?;
            conn.write_all(format!("{command}\n").as_bytes()).await.ok()?;
            let mut line = String::new();
            BufReader::new(conn).read_line(&mut line).await.ok()?;
            Some(line.trim().to_owned())
        };
        tokio::time::timeout(wait, exchange).await.ok().flatten()
    }

    fn bwrap_args(&self, id: &str, process: &ProcSpec, spec: &SandboxSpec) -> Vec<String> {
        let dir = self.dir(id);
        let path = |p: &Path| p.to_string_lossy().into_owned();
        let mut args: Vec<String> = [
            "--unshare-all",
            // Its own user namespace, in which no further one can be made: the agent cannot
            // build namespaces of its own to reach for privileges the sandbox withholds.
            "--unshare-user",
            "--disable-userns",
            "--uid",
            "1000",
            "--gid",
            "1000",
            "--hostname",
            "svc-agent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/usr",
            "/usr",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        for top in ["bin", "lib", "lib64", "sbin"] {
            let host = Path::new("/").join(top);
            match std::fs::read_link(&host) {
                Ok(target) => args.extend(["--symlink".into(), path(&target), format!("/{top}")]),
                Err(_) if host.is_dir() => args.extend(["--ro-bind".into(), path(&host), format!("/{top}")]),
                Err(_) => {}
            }
        }
        for etc in ["/etc/ssl", "/etc/ca-certificates", "/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives"] {
            args.extend(["--ro-bind-try".into(), etc.into(), etc.into()]);
        }
        for etc in ["passwd", "group", "hosts"] {
            args.extend(["--ro-bind".into(), path(&dir.join("etc").join(etc)), format!("/etc/{etc}")]);
        }
        args.extend(["--ro-bind".into(), path(&self.config.snapshot), SNAPSHOT_MOUNT.into()]);
        args.extend(["--ro-bind".into(), path(&self.config.shim), SHIM_MOUNT.into()]);
        args.extend(["--ro-bind".into(), path(&dir.join("seed")), SEED_MOUNT.into()]);
        // The agent writes only to a home and a /tmp of bounded size, in memory (within its
        // cap), never to the host's disk.
        args.extend(["--size".into(), (spec.home_mb << 20).to_string(), "--tmpfs".into(), HOME.into()]);
        args.extend(["--size".into(), (spec.tmp_mb << 20).to_string(), "--tmpfs".into(), "/tmp".into()]);
        args.extend(["--bind".into(), path(&dir.join("run")), RUN_MOUNT.into()]);
        args.extend(["--proc", "/proc", "--dev", "/dev", "--chdir", HOME].map(str::to_owned));
        args.extend([
            "--".into(),
            SHIM_MOUNT.into(),
            "agentbox-shim".into(),
            "--run-dir".into(),
            RUN_MOUNT.into(),
            "--gateway-port".into(),
            GATEWAY_PORT.to_string(),
            "--egress-port".into(),
            SVC_PORT.to_string(),
            "--grace-secs".into(),
            self.config.stop_grace.as_secs().max(1).to_string(),
            "--seed".into(),
            SEED_MOUNT.into(),
            "--home".into(),
            HOME.into(),
            "--log-cap-mb".into(),
            spec.log_cap_mb.to_string(),
            "--".into(),
        ]);
        args.extend(process.argv.iter().cloned());
        args
    }

    fn pid_file(&self, id: &str) -> PathBuf {
        self.dir(id).join("pid")
    }

    /// The sandbox's outer process, if it still runs and is this sandbox's (a reused pid
    /// belongs to something else and is left alone).
    fn recorded_process(&self, id: &str) -> Option<rustix::process::Pid> {
        let pid: i32 = std::fs::read_to_string(self.pid_file(id)).ok()?.trim().parse().ok()?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let marker = self.dir(id).join("run");
        let ours = String::from_utf8_lossy(&cmdline).contains(&*marker.to_string_lossy());
        ours.then(|| rustix::process::Pid::from_raw(pid)).flatten()
    }

    fn describe_exit(&self, id: &str, status: std::process::ExitStatus, memory_mb: Option<u64>) -> String {
        use std::os::unix::process::ExitStatusExt as _;
        let how = match (status.code(), status.signal()) {
            (Some(code), _) => format!("the gateway exited with status {code}"),
            (None, Some(signal)) => format!("the gateway was killed by signal {signal}"),
            _ => "the gateway exited".to_owned(),
        };
        if self.cgroups.oom_killed(id) {
            let cap = memory_mb.map(|mb| format!(" ({mb} MiB)")).unwrap_or_default();
            format!("{how}: it went over the sandbox's memory cap{cap}")
        } else {
            how
        }
    }

    /// Sends `request` to the gateway through its socket and reads the whole answer, within
    /// `wait`; the status.
    async fn to_gateway(
        &self,
        id: &str,
        request: http::Request<Full<bytes::Bytes>>,
        wait: Duration,
    ) -> Result<u16, BackendError> {
        use http_body_util::BodyExt as _;
        let socket = self.dir(id).join("run").join(GATEWAY_SOCKET);
        let exchange = async {
            let stream = connect_socket(&socket).await.map_err(|e| BackendError::io("reaching the gateway", e))?;
            let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .map_err(|e| BackendError::io("reaching the gateway", e))?;
            tokio::spawn(conn);
            let response = sender.send_request(request).await.map_err(|e| BackendError::io("asking the gateway", e))?;
            let status = response.status().as_u16();
            let _ = response.into_body().collect().await;
            Ok(status)
        };
        tokio::time::timeout(wait, exchange)
            .await
            .map_err(|_| BackendError(format!("the gateway did not answer within {} s", wait.as_secs())))?
    }

    fn memory_cap(&self, id: &str) -> Option<u64> {
        std::fs::read_to_string(self.dir(id).join("memory_mb")).ok()?.trim().parse().ok()
    }
}

/// Connects to a socket the sandbox made, in a directory it can write: only when the path is
/// a socket itself, never a link the agent planted to reach some other socket of the host.
async fn connect_socket(path: &Path) -> std::io::Result<UnixStream> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = tokio::fs::symlink_metadata(path).await?.file_type();
    if !kind.is_socket() {
        return Err(std::io::Error::other("not a socket"));
    }
    UnixStream::connect(path).await
}

/// `program` as a path: as given when it has a slash, else found on `PATH`.
fn find_program(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return program.is_file().then(|| program.to_owned());
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// `relative` under `base`, refusing absolute paths and `..`.
fn inside(base: &Path, relative: &str) -> Result<PathBuf, BackendError> {
    let rel = Path::new(relative);
    let plain = rel.components().all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain || relative.is_empty() {
        return Err(BackendError(format!("refusing to write outside the sandbox: {relative:?}")));
    }
    Ok(base.join(rel))
}

impl Backend for LocalBackend {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn svc_url(&self) -> String {
        crate::files::local_svc_url()
    }

    fn snapshot(&self) -> Result<crate::snapshot::Snapshot, String> {
        let dir = &self.config.snapshot;
        crate::snapshot::Snapshot::read(dir).ok_or_else(|| dir.display().to_string())
    }

    fn create<'a>(&'a self, id: &'a str, spec: SandboxSpec) -> BoxFuture<'a, Result<(), BackendError>> {
        async move {
            let dir = self.dir(id);
            for sub in ["seed", "run", "etc"] {
                tokio::fs::create_dir_all(dir.join(sub))
                    .await
                    .map_err(|e| BackendError::io("making the sandbox's directories", e))?;
            }
            let etc = [
                ("passwd", "agent:x:1000:1000:agent:/home/agent:/bin/sh\n"),
                ("group", "agent:x:1000:\n"),
                ("hosts", "127.0.0.1 localhost\n::1 localhost\n"),
            ];
            for (name, text) in etc {
                tokio::fs::write(dir.join("etc").join(name), text)
                    .await
                    .map_err(|e| BackendError::io("writing the sandbox's /etc", e))?;
            }
            tokio::fs::write(dir.join("memory_mb"), spec.memory_mb.to_string())
                .await
                .map_err(|e| BackendError::io("recording the sandbox's cap", e))?;
            self.slots().entry(id.to_owned()).or_default().spec = Some(spec);
            self.cgroups.create(id, spec)
        }
        .boxed()
    }

    fn write_files<'a>(&'a self, id: &'a str, files: &'a [FileSpec]) -> BoxFuture<'a, Result<(), BackendError>> {
        async move {
            let home = self.dir(id).join("seed");
            for file in files {
                let path = inside(&home, &file.path)?;
                if let Some(parent) = path.parent() {
                    tokio::fs::create_dir_all(parent).await.map_err(|e| BackendError::io(&file.path, e))?;
                }
                tokio::fs::write(&path, &file.contents).await.map_err(|e| BackendError::io(&file.path, e))?;
            }
            Ok(())
        }
        .boxed()
    }

    fn credentials<'a>(&'a self, id: &'a str, real: Credentials) -> BoxFuture<'a, Result<Credentials, BackendError>> {
        async move {
            let given = self.placeholders(id, &real)?;
            self.open_egress(id, crate::egress::Swap::new(&given, &real))?;
            Ok(given)
        }
        .boxed()
    }

    fn holds_real_credentials(&self) -> bool {
        false
    }

    fn spawn<'a>(&'a self, id: &'a str, process: &'a ProcSpec) -> BoxFuture<'a, Result<Option<i64>, BackendError>> {
        async move {
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.log_path(id))
                .map_err(|e| BackendError::io("opening the sandbox's log", e))?;
            let err_log = log.try_clone().map_err(|e| BackendError::io("opening the sandbox's log", e))?;
            let spec = self.slots().get(id).and_then(|slot| slot.spec).ok_or_else(|| {
                BackendError(format!("sandbox {id} was not made by this process; it cannot be started"))
            })?;
            let bwrap_args = self.bwrap_args(id, process, &spec);
            let groups = self.cgroups.groups(id);
            // The first process caps the size of any file the sandbox writes (its log too),
            // joins the sandbox's cgroups, then becomes bubblewrap: every process of the
            // sandbox starts inside its caps.
            let mut command = tokio::process::Command::new("/bin/sh");
            command
                .arg("-c")
                .arg(
                    "ulimit -f \"$1\" || exit 125; shift; n=$1; shift; while [ \"$n\" -gt 0 ]; do \
                     echo $$ > \"$1/cgroup.procs\" || exit 125; shift; n=$((n-1)); done; exec \"$@\"",
                )
                .arg("sh")
                .arg(MAX_FILE_BLOCKS.to_string())
                .arg(groups.len().to_string())
                .args(&groups)
                .arg(&self.config.bwrap)
                .args(&bwrap_args);
            command
                .env_clear()
                .envs(process.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::from(log))
                .stderr(std::process::Stdio::from(err_log))
                .process_group(0)
                .kill_on_drop(false);
            let child = command.spawn().map_err(|e| BackendError::io("starting bubblewrap", e))?;
            let pid = child.id().map(i64::from);
            if let Some(pid) = pid {
                let _ = tokio::fs::write(self.pid_file(id), pid.to_string()).await;
            }
            let mut slots = self.slots();
            let slot = slots.entry(id.to_owned()).or_default();
            slot.child = Some(child);
            slot.exit = None;
            Ok(pid)
        }
        .boxed()
    }

    fn attach<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<SandboxStatus, BackendError>> {
        async move {
            if !self.dir(id).exists() {
                return Ok(SandboxStatus::Missing);
            }
            // Asleep, it cannot answer; it is there all the same.
            if self.cgroups.frozen(id) && self.recorded_process(id).is_some() {
                return Ok(SandboxStatus::Running { memory_bytes: self.cgroups.memory_bytes(id) });
            }
            if self.control(id, "ping", Duration::from_secs(2)).await.as_deref() != Some("pong") {
                return Ok(SandboxStatus::Exited("the sandbox ended while svc was not running".into()));
            }
            Ok(SandboxStatus::Running { memory_bytes: self.cgroups.memory_bytes(id) })
        }
        .boxed()
    }

    fn get<'a>(&'a self, id: &'a str, port: u16, path: &'a str) -> BoxFuture<'a, Result<u16, BackendError>> {
        async move {
            if port != GATEWAY_PORT {
                return Err(BackendError(format!("only the gateway's port {GATEWAY_PORT} is reachable")));
            }
            let request = http::Request::get(path)
                .header(http::header::HOST, format!("127.0.0.1:{port}"))
                .body(Full::new(bytes::Bytes::new()))
                .map_err(|e| BackendError::io("building the probe", e))?;
            self.to_gateway(id, request, Duration::from_secs(5)).await
        }
        .boxed()
    }

    fn chat<'a>(&'a self, id: &'a str, token: &'a str, body: &'a str) -> BoxFuture<'a, Result<u16, BackendError>> {
        async move {
            let request = http::Request::post("/v1/chat/completions")
                .header(http::header::HOST, format!("127.0.0.1:{GATEWAY_PORT}"))
                .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(Full::new(bytes::Bytes::copy_from_slice(body.as_bytes())))
                .map_err(|e| BackendError::io("building the chat", e))?;
            self.to_gateway(id, request, Duration::from_secs(180)).await
        }
        .boxed()
    }

    fn status<'a>(&'a self, id: &'a str) -> BoxFuture<'a, SandboxStatus> {
        async move {
            let exited = {
                let mut slots = self.slots();
                match slots.get_mut(id) {
                    Some(Slot { exit: Some(exit), .. }) => Some(Some(exit.clone())),
                    Some(Slot { child: Some(child), exit, .. }) => match child.try_wait() {
                        Ok(Some(status)) => {
                            let why = self.describe_exit(id, status, self.memory_cap(id));
                            *exit = Some(why.clone());
                            Some(Some(why))
                        }
                        Ok(None) => Some(None),
                        Err(e) => Some(Some(format!("the gateway's state could not be read: {e}"))),
                    },
                    _ => None,
                }
            };
            match exited {
                Some(Some(why)) => SandboxStatus::Exited(why),
                Some(None) => SandboxStatus::Running { memory_bytes: self.cgroups.memory_bytes(id) },
                // Not started by this process: ask the shim, unless it sleeps.
                None if !self.dir(id).exists() => SandboxStatus::Missing,
                None if self.cgroups.frozen(id) && self.recorded_process(id).is_some() => {
                    SandboxStatus::Running { memory_bytes: self.cgroups.memory_bytes(id) }
                }
                None => match self.control(id, "ping", Duration::from_secs(2)).await.as_deref() {
                    Some("pong") => SandboxStatus::Running { memory_bytes: self.cgroups.memory_bytes(id) },
                    _ => SandboxStatus::Exited("the gateway's sandbox ended".into()),
                },
            }
        }
        .boxed()
    }

    fn terminate<'a>(&'a self, id: &'a str, grace: Duration) -> BoxFuture<'a, Result<(), BackendError>> {
        async move {
            // Asleep, it could neither hear the stop nor die.
            if self.cgroups.frozen(id) {
                self.cgroups.freeze(id, false)?;
            }
            // The shim sends SIGTERM, waits the grace period, then kills; it answers when the
            // gateway is gone.
            let answered = self.control(id, "stop", grace + Duration::from_secs(5)).await;
            let child = self.slots().get_mut(id).and_then(|slot| slot.child.take());
            if let Some(mut child) = child {
                if tokio::time::timeout(Duration::from_secs(3), child.wait()).await.is_err() {
                    let _ = child.kill().await;
                }
            } else if answered.is_none()
                && let Some(pid) = self.recorded_process(id)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            Ok(())
        }
        .boxed()
    }

    fn destroy<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), BackendError>> {
        async move {
            if let Some(pid) = self.recorded_process(id) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            let slot = self.slots().remove(id);
            if let Some(mut slot) = slot {
                if let Some(task) = slot.egress.take() {
                    task.abort();
                }
                if let Some(mut child) = slot.child.take() {
                    let _ = child.kill().await;
                }
            }
            self.cgroups.remove(id).await;
            match tokio::fs::remove_dir_all(self.dir(id)).await {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(BackendError::io("removing the sandbox", e)),
            }
        }
        .boxed()
    }

    fn sandboxes(&self) -> BoxFuture<'_, Result<Vec<String>, BackendError>> {
        async move {
            let mut ids = Vec::new();
            let mut entries = tokio::fs::read_dir(self.config.root.join("sandboxes"))
                .await
                .map_err(|e| BackendError::io("listing sandboxes", e))?;
            while let Some(entry) = entries.next_entry().await.map_err(|e| BackendError::io("listing sandboxes", e))? {
                ids.push(entry.file_name().to_string_lossy().into_owned());
            }
            Ok(ids)
        }
        .boxed()
    }

    fn set_warming(&self, id: &str, on: bool) {
        if let Some(shared) = self.slots().get(id).and_then(|slot| slot.swap.clone()) {
            let mut swap = shared.write().unwrap_or_else(std::sync::PoisonError::into_inner);
            *swap = Arc::new(swap.warming(on));
        }
    }

    fn sleep<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, BackendError>> {
        async move {
            if !self.cgroups.can_freeze() {
                return Ok(false);
            }
            self.cgroups.freeze(id, true)?;
            Ok(true)
        }
        .boxed()
    }

    fn wake<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), BackendError>> {
        async move {
            self.cgroups.freeze(id, false)?;
            if let Some(slot) = self.slots().get(id) {
                slot.activity.touch();
            }
            Ok(())
        }
        .boxed()
    }

    fn asleep(&self, id: &str) -> bool {
        self.cgroups.frozen(id)
    }

    fn idle_for(&self, id: &str) -> Option<Duration> {
        let called = self.slots().get(id).map_or(0, |slot| slot.activity.last_ms());
        let logged = std::fs::metadata(self.log_path(id))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?;
        let now = i64::try_from(now.as_millis()).ok()?;
        let last = called.max(logged);
        (last > 0).then(|| Duration::from_millis(u64::try_from(now - last).unwrap_or(0)))
    }

    fn sweep_logs<'a>(&'a self, keep: &'a std::collections::HashSet<String>, before_ms: i64) -> BoxFuture<'a, usize> {
        async move {
            let before = std::time::UNIX_EPOCH + Duration::from_millis(u64::try_from(before_ms).unwrap_or(0));
            let Ok(mut entries) = tokio::fs::read_dir(self.config.root.join("logs")).await else { return 0 };
            let mut removed = 0;
            while let Ok(Some(entry)) = entries.next_entry().await {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some(id) = name.strip_suffix(".log") else { continue };
                let written = entry.metadata().await.and_then(|m| m.modified());
                if keep.contains(id) || self.dir(id).exists() || !written.is_ok_and(|at| at < before) {
                    continue;
                }
                match tokio::fs::remove_file(entry.path()).await {
                    Ok(()) => removed += 1,
                    Err(e) => tracing::warn!(sandbox = id, error = %e, "could not remove an old sandbox log"),
                }
            }
            removed
        }
        .boxed()
    }

    fn note<'a>(&'a self, id: &'a str, line: &'a str) -> BoxFuture<'a, ()> {
        async move {
            let write = async {
                let mut file = tokio::fs::OpenOptions::new().create(true).append(true).open(self.log_path(id)).await?;
                file.write_all(format!("[svc] {line}\n").as_bytes()).await
            };
            if let Err(e) = write.await {
                tracing::warn!(sandbox = id, error = %e, "could not write the sandbox's log");
            }
        }
        .boxed()
    }

    fn read_log<'a>(
        &'a self,
        id: &'a str,
        from: u64,
        max_bytes: usize,
    ) -> BoxFuture<'a, Result<LogChunk, BackendError>> {
        async move {
            let mut file = match tokio::fs::File::open(self.log_path(id)).await {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Ok(LogChunk { lines: Vec::new(), next: from });
                }
                Err(e) => return Err(BackendError::io("reading the log", e)),
            };
            let len = file.metadata().await.map_err(|e| BackendError::io("reading the log", e))?.len();
            let from = from.min(len);
            file.seek(std::io::SeekFrom::Start(from)).await.map_err(|e| BackendError::io("reading the log", e))?;
            let mut buf = Vec::with_capacity(max_bytes.min(64 * 1024));
            file.take(max_bytes as u64)
                .read_to_end(&mut buf)
                .await
                .map_err(|e| BackendError::io("reading the log", e))?;
            Ok(split_lines_forced(&buf, from, max_bytes))
        }
        .boxed()
    }

    fn log_len<'a>(&'a self, id: &'a str) -> BoxFuture<'a, u64> {
        async move { tokio::fs::metadata(self.log_path(id)).await.map(|m| m.len()).unwrap_or(0) }.boxed()
    }
}

/// [`split_lines`], except that a read filled by one line with no end yet is sent as it is,
/// so a line longer than a read cannot stall the stream.
pub(crate) fn split_lines_forced(buf: &[u8], from: u64, max_bytes: usize) -> LogChunk {
    let chunk = split_lines(buf, from);
    if chunk.lines.is_empty() && buf.len() >= max_bytes && !buf.is_empty() {
        let end = from + buf.len() as u64;
        return LogChunk { lines: vec![(end, String::from_utf8_lossy(buf).into_owned())], next: end };
    }
    chunk
}

/// The whole lines of `buf` (read from position `from`), each with the position after it; a
/// trailing partial line waits for its newline.
pub(crate) fn split_lines(buf: &[u8], from: u64) -> LogChunk {
    let mut lines = Vec::new();
    let mut start = 0usize;
    for (i, byte) in buf.iter().enumerate() {
        if *byte == b'\n' {
            let line = String::from_utf8_lossy(&buf[start..i]).trim_end_matches('\r').to_owned();
            lines.push((from + i as u64 + 1, line));
            start = i + 1;
        }
    }
    LogChunk { lines, next: from + start as u64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_carry_the_position_after_them_and_a_partial_line_waits() {
        let chunk = split_lines(b"one\ntwo\r\nthr", 10);
        assert_eq!(chunk.lines, vec![(14, "one".to_owned()), (19, "two".to_owned())]);
        assert_eq!(chunk.next, 19);
        assert_eq!(split_lines(b"", 5), LogChunk { lines: vec![], next: 5 });
        let long = split_lines_forced(b"abcdef", 0, 6);
        assert_eq!(long.lines, vec![(6, "abcdef".to_owned())], "a read-filling line is sent in pieces");
        assert_eq!(split_lines_forced(b"abc", 0, 6).lines, vec![], "a short partial line still waits");
    }

    #[test]
    fn files_cannot_be_written_outside_the_sandbox() {
        let base = Path::new("/sbx/home");
        assert_eq!(inside(base, ".openclaw/openclaw.json").expect("ok"), base.join(".openclaw/openclaw.json"));
        for hostile in ["../etc/passwd", "/etc/passwd", "a/../../b", "", "./x"] {
            assert!(inside(base, hostile).is_err(), "{hostile}");
        }
    }
}
