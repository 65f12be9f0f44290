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
    /// The gateway's program and arguments.
    pub command: Vec<String>,
}

/// Runs the shim until the gateway exits; returns the exit code to end with.
pub async fn run(args: ShimArgs) -> std::io::Result<i32> {
    let egress = TcpListener::bind(("127.0.0.1", args.egress_port)).await?;
    let gateway_listener = bind_unix(&args.run_dir.join(GATEWAY_SOCKET))?;
    let control = bind_unix(&args.run_dir.join(CONTROL_SOCKET))?;
    let Some((program, rest)) = args.command.split_first() else {
        return Err(std::io::Error::other("no gateway command"));
    };
    let mut child = Command::new(program).args(rest).spawn()?;

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

    let status = tokio::select! {
        status = child.wait() => status?,
        conn = stop_rx.recv() => {
            let status = stop(&mut child, args.grace).await?;
            if let Some(mut conn) = conn {
                let _ = conn.write_all(format!("stopped {}\n", code(status)).as_bytes()).await;
            }
            status
        }
        _ = terminate.recv() => stop(&mut child, args.grace).await?,
    };
    Ok(code(status))
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
