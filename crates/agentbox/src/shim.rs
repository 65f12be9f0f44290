//! The bridge inside a local sandbox. A sandbox has its own network namespace with nothing
//! but loopback, so svc can neither reach its gateway nor be reached by it over TCP; unix
//! sockets in a directory both sides mount can. `svc agentbox-shim` runs as the sandbox's
//! first process, starts the gateway as its child and bridges:
//!
//! - `127.0.0.1:18800` inside → `egress.sock` → svc: the agent's only way out;
//! - `gateway.sock` → `127.0.0.1:18789` inside: svc's health checks;
//! - `control.sock`: `ping` answers `pong`; `stop` sends the gateway SIGTERM, then SIGKILL
//!   after the grace period, and the shim exits with it (so the sandbox ends).
//!
//! Secrets never pass through here as arguments: the gateway inherits the environment.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// The socket svc listens on for the sandbox's outbound calls.
pub const EGRESS_SOCKET: &str = "egress.sock";
/// The socket the shim bridges to the gateway's port.
pub const GATEWAY_SOCKET: &str = "gateway.sock";
/// The shim's control socket.
pub const CONTROL_SOCKET: &str = "control.sock";

/// What the shim is told.
#[derive(Debug, Clone)]
pub struct ShimArgs {
    /// The directory shared with svc, where the sockets live.
    pub run_dir: PathBuf,
    /// The gateway's port inside.
    pub gateway_port: u16,
    /// The port inside that reaches svc.
    pub egress_port: u16,
    /// How long the gateway gets to exit after SIGTERM.
    pub grace: Duration,
    /// The files svc wrote for the agent, copied into `home` before the gateway starts.
    pub seed: Option<PathBuf>,
    /// The agent's home (a size-capped tmpfs): watched for filling up.
    pub home: Option<PathBuf>,
    /// The most the gateway's log (the shim's standard output) keeps, bytes.
    pub log_cap_bytes: u64,
    /// The gateway's program and arguments.
    pub command: Vec<String>,
}

/// How often the home and `/tmp` are looked at for filling up.
const QUOTA_WATCH: Duration = Duration::from_secs(2);
/// How long the shim waits, once the gateway has exited, for its last output to reach the log.
const LAST_WORDS: Duration = Duration::from_secs(2);

/// Runs the shim until the gateway exits; returns the exit code to end with.
pub async fn run(args: ShimArgs) -> std::io::Result<i32> {
    let egress = TcpListener::bind(("127.0.0.1", args.egress_port)).await?;
    let gateway_listener = bind_unix(&args.run_dir.join(GATEWAY_SOCKET))?;
    let control = bind_unix(&args.run_dir.join(CONTROL_SOCKET))?;
    let Some((program, rest)) = args.command.split_first() else {
        return Err(std::io::Error::other("no gateway command"));
    };
    if let (Some(seed), Some(home)) = (&args.seed, &args.home) {
        copy_tree(seed, home)?;
    }
    let mut child = Command::new(program)
        .args(rest)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let log = Arc::new(CappedLog::new(args.log_cap_bytes));
    let forwarding: Vec<_> = [child.stdout.take().map(Output::Out), child.stderr.take().map(Output::Err)]
        .into_iter()
        .flatten()
        .map(|output| tokio::spawn(Arc::clone(&log).forward(output)))
        .collect();
    let watched: Vec<PathBuf> = args.home.iter().cloned().chain([PathBuf::from("/tmp")]).collect();
    tokio::spawn(watch_quotas(watched, Arc::clone(&log)));

    let egress_socket = args.run_dir.join(EGRESS_SOCKET);
    tokio::spawn(async move {
        while let Ok((inside, _)) = egress.accept().await {
            let target = egress_socket.clone();
            tokio::spawn(async move {
                if let Ok(outside) = UnixStream::connect(&target).await {
                    bridge(inside, outside).await;
                }
            });
        }
    });
    let gateway_port = args.gateway_port;
    tokio::spawn(async move {
        while let Ok((outside, _)) = gateway_listener.accept().await {
            tokio::spawn(async move {
                if let Ok(inside) = TcpStream::connect(("127.0.0.1", gateway_port)).await {
                    bridge(outside, inside).await;
                }
            });
        }
    });
    let (stop_tx, mut stop_rx) = mpsc::channel::<UnixStream>(1);
    tokio::spawn(async move {
        while let Ok((conn, _)) = control.accept().await {
            let stop_tx = stop_tx.clone();
            tokio::spawn(control_conn(conn, stop_tx));
        }
    });
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;

    let (status, asked) = tokio::select! {
        status = child.wait() => (status?, None),
        conn = stop_rx.recv() => (stop(&mut child, args.grace).await?, conn),
        _ = terminate.recv() => (stop(&mut child, args.grace).await?, None),
    };
    // What the gateway wrote last (its goodbye, a panic) may still be in the pipes: it goes
    // into the log before the shim says it stopped. A process the gateway left behind may
    // hold the pipes open, hence the bound.
    let _ = tokio::time::timeout(LAST_WORDS, futures::future::join_all(forwarding)).await;
    if let Some(mut conn) = asked {
        let _ = conn.write_all(format!("stopped {}\n", code(status)).as_bytes()).await;
    }
    Ok(code(status))
}

/// Copies `from` into `to`, directories and files (links are not followed: the seed is svc's).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// One of the gateway's outputs.
enum Output {
    Out(tokio::process::ChildStdout),
    Err(tokio::process::ChildStderr),
}

/// The gateway's log: the shim's standard output (a file on the host, appended to), kept
/// under a cap. Past the cap it is emptied and starts again with a line saying so, so a
/// chatty agent can neither fill the host's disk nor be killed for writing.
struct CappedLog {
    cap: u64,
    out: tokio::sync::Mutex<Option<std::fs::File>>,
}

impl CappedLog {
    fn new(cap: u64) -> CappedLog {
        use std::os::fd::AsFd as _;
        let out = std::io::stdout().as_fd().try_clone_to_owned().map(std::fs::File::from).ok();
        CappedLog { cap, out: tokio::sync::Mutex::new(out) }
    }

    /// Writes `bytes`, first emptying the log when they would take it past its cap.
    async fn write(&self, bytes: &[u8]) {
        use std::io::Write as _;
        let mut out = self.out.lock().await;
        let Some(out) = out.as_mut() else { return };
        let len = out.metadata().map(|m| m.len()).unwrap_or(0);
        if len + bytes.len() as u64 > self.cap && out.set_len(0).is_ok() {
            let line =
                format!("[svc] the log reached its cap of {} MiB; what came before is dropped\n", self.cap >> 20);
            let _ = out.write_all(line.as_bytes());
        }
        let _ = out.write_all(bytes);
    }

    /// Copies one of the gateway's outputs into the log until it closes.
    async fn forward(self: Arc<Self>, output: Output) {
        use tokio::io::AsyncReadExt as _;
        let mut reader: Box<dyn tokio::io::AsyncRead + Unpin + Send> = match output {
            Output::Out(out) => Box::new(out),
            Output::Err(err) => Box::new(err),
        };
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = reader.read(&mut buf).await {
            if n == 0 {
                break;
            }
            self.write(&buf[..n]).await;
        }
    }
}

/// Says in the log when the home or `/tmp` fills up (writes there then fail with "No space
/// left on device"), once each time.
async fn watch_quotas(dirs: Vec<PathBuf>, log: Arc<CappedLog>) {
    let mut full = vec![false; dirs.len()];
    loop {
        for (dir, was_full) in dirs.iter().zip(full.iter_mut()) {
            let Ok(stats) = rustix::fs::statvfs(dir) else { continue };
            let is_full = stats.f_bavail == 0;
            if is_full && !*was_full {
                let size = (stats.f_blocks * stats.f_frsize) >> 20;
                let line = format!(
                    "[svc] {} is full (its quota is {size} MiB): writes there fail with \"No space left on device\"\n",
                    dir.display()
                );
                log.write(line.as_bytes()).await;
            }
            *was_full = is_full;
        }
        tokio::time::sleep(QUOTA_WATCH).await;
    }
}

/// Binds a unix socket, replacing a stale one left by an earlier run.
fn bind_unix(path: &Path) -> std::io::Result<UnixListener> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    UnixListener::bind(path)
}

async fn bridge<A, B>(mut a: A, mut b: B)
where
    A: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    B: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let _ = tokio::io::copy_bidirectional(&mut a, &mut b).await;
}

async fn control_conn(conn: UnixStream, stop: mpsc::Sender<UnixStream>) {
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    if reader.read_line(&mut line).await.is_err() {
        return;
    }
    let mut conn = reader.into_inner();
    match line.trim() {
        "ping" => {
            let _ = conn.write_all(b"pong\n").await;
        }
        "stop" => {
            let _ = stop.send(conn).await;
        }
        _ => {
            let _ = conn.write_all(b"unknown command\n").await;
        }
    }
}

/// SIGTERM, then SIGKILL once `grace` has passed.
async fn stop(child: &mut Child, grace: Duration) -> std::io::Result<ExitStatus> {
    if let Some(pid) = child.id().and_then(|pid| rustix::process::Pid::from_raw(pid as i32)) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            child.kill().await?;
            child.wait().await
        }
    }
}

fn code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}
