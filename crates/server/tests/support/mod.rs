//! Running the real `svc` binary in tests: its operator commands, and `svc serve` on a free
//! port, read back from its start-up log.

#![allow(dead_code)]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

/// Runs an operator command on the data in `data`; its standard output.
pub fn cli(data: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(args)
        .env("SVC_DATA_DIR", data)
        .output()
        .expect("svc");
    assert!(out.status.success(), "svc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A running `svc serve`.
pub struct Serving {
    /// The process; killed when dropped.
    pub child: tokio::process::Child,
    /// Its address, `http://127.0.0.1:<port>`.
    pub base: String,
    /// The simulated market's address, as its start-up warning gives it.
    pub simulator: Option<String>,
}

/// `svc serve` on a free port with `config` over `data`, plus `env` and `args`.
pub async fn serve(data: &Path, config: &Path, env: &[(&str, &str)], args: &[&str]) -> Serving {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(config)
        .args(args)
        .envs(env.iter().copied())
        .env("SVC_DATA_DIR", data)
        .env("RUST_LOG", "info,sqlx=warn")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("svc serve");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let address = |line: &str, after: &str| {
        let rest = line.split(after).nth(1)?;
        let addr: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ':').collect();
        Some(format!("http://{addr}"))
    };
    let (base, simulator) = tokio::time::timeout(Duration::from_secs(60), async {
        let mut simulator = None;
        while let Some(line) = lines.next_line().await.expect("read") {
            simulator = simulator.or_else(|| address(&line, "simulator=http://"));
            if let Some(base) = address(&line, "svc listening on http://") {
                return (base, simulator);
            }
        }
        panic!("svc exited before listening");
    })
    .await
    .expect("svc listens within a minute");
    // Keep draining its output so it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Serving { child, base, simulator }
}
