//! Memory and process caps for local sandboxes, on whichever cgroup version the machine has:
//! v2 (one tree: `memory.max`, `memory.swap.max`, `pids.max`), v1 (a tree per controller:
//! `memory.limit_in_bytes`, `pids.max`, and the freezer), or none, with a warning at start. A sandbox's first
//! process joins its groups before it execs the sandbox, so nothing inside runs uncapped.

use std::path::{Path, PathBuf};

use crate::backend::{BackendError, SandboxSpec};

const ROOT: &str = "/sys/fs/cgroup";
const GROUP: &str = "svc-agentbox";

/// The cgroup hierarchy sandboxes are capped in.
#[derive(Debug, Clone)]
pub enum Cgroups {
    /// cgroup v2, under this group.
    V2(PathBuf),
    /// cgroup v1: the memory controller's group and, where mounted, the pids controller's.
    V1 {
        /// Under the memory controller.
        memory: PathBuf,
        /// Under the pids controller.
        pids: Option<PathBuf>,
        /// Under the freezer controller: what puts an idle sandbox to sleep.
        freezer: Option<PathBuf>,
    },
    /// No caps can be set here; why.
    Unavailable(String),
}

impl Cgroups {
    /// Finds the hierarchy and makes svc's group in it.
    pub fn detect() -> Cgroups {
        Self::detect_at(Path::new(ROOT))
    }

    fn detect_at(root: &Path) -> Cgroups {
        if root.join("cgroup.controllers").exists() {
            let base = root.join(GROUP);
            let made = std::fs::create_dir_all(&base).and_then(|()| enable(root)).and_then(|()| enable(&base));
            return match made {
                Ok(()) => Cgroups::V2(base),
                Err(e) => Cgroups::Unavailable(format!("cgroup v2 without delegated memory and pids controllers: {e}")),
            };
        }
        let memory = root.join("memory");
        if memory.join("memory.limit_in_bytes").exists() {
            let base = memory.join(GROUP);
            if let Err(e) = std::fs::create_dir_all(&base) {
                return Cgroups::Unavailable(format!("cannot make a cgroup v1 memory group: {e}"));
            }
            let optional = |controller: &str| {
                let dir = root.join(controller).join(GROUP);
                std::fs::create_dir_all(&dir).ok().map(|()| dir)
            };
            return Cgroups::V1 { memory: base, pids: optional("pids"), freezer: optional("freezer") };
        }
        Cgroups::Unavailable("no cgroup memory controller is mounted".into())
    }

    /// Why sandboxes run uncapped, when they do.
    pub fn warning(&self) -> Option<&str> {
        match self {
            Cgroups::Unavailable(why) => Some(why),
            _ => None,
        }
    }

    /// The groups of sandbox `id`: what its first process joins.
    pub fn groups(&self, id: &str) -> Vec<PathBuf> {
        match self {
            Cgroups::V2(base) => vec![base.join(id)],
            Cgroups::V1 { memory, pids, freezer } => {
                let mut groups = vec![memory.join(id)];
                groups.extend(pids.as_ref().map(|p| p.join(id)));
                groups.extend(freezer.as_ref().map(|f| f.join(id)));
                groups
            }
            Cgroups::Unavailable(_) => Vec::new(),
        }
    }

    /// Makes sandbox `id`'s groups with its caps.
    pub fn create(&self, id: &str, spec: SandboxSpec) -> Result<(), BackendError> {
        let bytes = spec.memory_mb.saturating_mul(1 << 20).to_string();
        let pids = spec.pids_max.to_string();
        let write = |dir: &Path, file: &str, value: &str| {
            std::fs::write(dir.join(file), value).map_err(|e| BackendError::io(format!("setting {file}"), e))
        };
        match self {
            Cgroups::V2(base) => {
                let dir = base.join(id);
                std::fs::create_dir_all(&dir).map_err(|e| BackendError::io("making the sandbox's cgroup", e))?;
                write(&dir, "memory.max", &bytes)?;
                let _ = write(&dir, "memory.swap.max", "0");
                write(&dir, "pids.max", &pids)?;
            }
            Cgroups::V1 { memory, pids: pid_group, freezer } => {
                let dir = memory.join(id);
                std::fs::create_dir_all(&dir).map_err(|e| BackendError::io("making the sandbox's cgroup", e))?;
                write(&dir, "memory.limit_in_bytes", &bytes)?;
                // Memory plus swap at the same cap: the sandbox cannot swap its way past it.
                let _ = write(&dir, "memory.memsw.limit_in_bytes", &bytes);
                if let Some(pid_group) = pid_group {
                    let dir = pid_group.join(id);
                    std::fs::create_dir_all(&dir).map_err(|e| BackendError::io("making the sandbox's cgroup", e))?;
                    write(&dir, "pids.max", &pids)?;
                }
                if let Some(freezer) = freezer {
                    std::fs::create_dir_all(freezer.join(id))
                        .map_err(|e| BackendError::io("making the sandbox's cgroup", e))?;
                }
            }
            Cgroups::Unavailable(_) => {}
        }
        Ok(())
    }

    /// Memory the sandbox uses now, bytes.
    pub fn memory_bytes(&self, id: &str) -> Option<u64> {
        let file = match self {
            Cgroups::V2(base) => base.join(id).join("memory.current"),
            Cgroups::V1 { memory, .. } => memory.join(id).join("memory.usage_in_bytes"),
            Cgroups::Unavailable(_) => return None,
        };
        std::fs::read_to_string(file).ok()?.trim().parse().ok()
    }

    /// Whether the kernel killed something in the sandbox for going over its memory cap.
    pub fn oom_killed(&self, id: &str) -> bool {
        let (file, key) = match self {
            Cgroups::V2(base) => (base.join(id).join("memory.events"), "oom_kill"),
            Cgroups::V1 { memory, .. } => (memory.join(id).join("memory.oom_control"), "oom_kill"),
            Cgroups::Unavailable(_) => return false,
        };
        std::fs::read_to_string(file).ok().is_some_and(|text| {
            text.lines().any(|line| {
                let mut parts = line.split_whitespace();
                parts.next() == Some(key) && parts.next().and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n > 0)
            })
        })
    }

    /// Whether sandboxes can be frozen here.
    pub fn can_freeze(&self) -> bool {
        matches!(self, Cgroups::V2(_) | Cgroups::V1 { freezer: Some(_), .. })
    }

    /// Freezes (or thaws) every process of the sandbox at once: a frozen one uses no CPU and
    /// keeps its memory, sockets and state, and carries on where it was when thawed.
    pub fn freeze(&self, id: &str, frozen: bool) -> Result<(), BackendError> {
        let (file, value) = match self {
            Cgroups::V2(base) => (base.join(id).join("cgroup.freeze"), if frozen { "1" } else { "0" }),
            Cgroups::V1 { freezer: Some(freezer), .. } => {
                (freezer.join(id).join("freezer.state"), if frozen { "FROZEN" } else { "THAWED" })
            }
            _ => return Err(BackendError("this machine has no cgroup freezer".into())),
        };
        std::fs::write(&file, value).map_err(|e| BackendError::io("freezing the sandbox", e))
    }

    /// Whether the sandbox is frozen (or freezing).
    pub fn frozen(&self, id: &str) -> bool {
        match self {
            Cgroups::V2(base) => std::fs::read_to_string(base.join(id).join("cgroup.events"))
                .is_ok_and(|events| events.lines().any(|l| l.trim() == "frozen 1")),
            Cgroups::V1 { freezer: Some(freezer), .. } => {
                std::fs::read_to_string(freezer.join(id).join("freezer.state"))
                    .is_ok_and(|state| state.trim() != "THAWED")
            }
            _ => false,
        }
    }

    /// The processes in the sandbox's groups.
    pub fn processes(&self, id: &str) -> Vec<i32> {
        let mut pids: Vec<i32> = self
            .groups(id)
            .iter()
            .filter_map(|dir| std::fs::read_to_string(dir.join("cgroup.procs")).ok())
            .flat_map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect::<Vec<i32>>())
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Kills every process in the sandbox's groups and removes the groups.
    pub async fn remove(&self, id: &str) {
        // A frozen process dies only once thawed.
        if self.frozen(id) {
            let _ = self.freeze(id, false);
        }
        for _ in 0..50 {
            let pids = self.processes(id);
            if pids.is_empty() {
                break;
            }
            for pid in pids {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        for dir in self.groups(id) {
            if let Err(e) = std::fs::remove_dir(&dir)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(sandbox = id, error = %e, "could not remove the sandbox's cgroup");
            }
        }
    }
}

fn enable(group: &Path) -> std::io::Result<()> {
    std::fs::write(group.join("cgroup.subtree_control"), "+memory +pids")
}
