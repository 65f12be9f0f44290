//! Running the real `svc` binary in tests: its operator commands, and `svc serve` on a free
//! port, read back from its start-up log.

#![allow(dead_code)]

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

/// Whether the system tool `program` is installed. Where it is not, the calling test says in
/// one line what to install and returns early, so the README's test command passes on a fresh
/// machine; with `SVC_TEST_REQUIRE_TOOLS` set (CI sets it) a missing tool fails the test
/// instead, so nothing is skipped silently there.
pub fn has_tool(program: &str, install: &str) -> bool {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()));
    if on_path || Path::new("/usr/bin").join(program).is_file() {
        return true;
    }
    assert!(std::env::var_os("SVC_TEST_REQUIRE_TOOLS").is_none(), "{program} is missing: {install}");
    // Straight to the process's stderr: the test harness captures `eprintln!` of a test that
    // passes, and a skip must be seen.
    let _ = writeln!(std::io::stderr(), "skipped: this test needs {program}; {install} to run it");
    false
}

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

/// Plays a user's direct message (chat 555) to `bot` on the simulated chat platform, which
/// delivers it to svc's relay; asserts svc took it.
pub async fn play_user_message(http: &reqwest::Client, simulator: &str, bot: &str, text: &str) {
    let said = http
        .post(format!("{simulator}/telegram/simulate/{bot}/message"))
        .json(&serde_json::json!({"chat_id": 555, "text": text}))
        .send()
        .await
        .expect("simulated user")
        .json::<serde_json::Value>()
        .await
        .expect("json");
    assert_eq!(said["delivered"], 200, "the relay took it: {said}");
}
