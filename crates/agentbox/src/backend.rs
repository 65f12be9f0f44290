//! What runs sandboxes: one trait, so the lifecycle is written once over the local backend
//! (bubblewrap on this machine) and a remote one (an E2B-style REST service).
//!
//! A sandbox is named by its gateway's id. Every method but [`Backend::create`] works on a
//! sandbox made earlier, possibly by a process that has since stopped: after a restart the
//! lifecycle re-attaches to the sandboxes it finds.

use std::time::Duration;

use futures::future::BoxFuture;

/// Resources one sandbox may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxSpec {
    /// The memory cap, MiB.
    pub memory_mb: u64,
    /// The most processes (and threads) inside.
    pub pids_max: u32,
    /// The agent's writable home holds at most this, MiB.
    pub home_mb: u64,
    /// Its `/tmp` holds at most this, MiB.
    pub tmp_mb: u64,
    /// The gateway's log is kept to at most this, MiB: past it, the log starts again.
    pub log_cap_mb: u64,
}

/// A file put into a sandbox, under the agent's home directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSpec {
    /// Relative path under the agent's home (`.openclaw/openclaw.json`).
    pub path: String,
    /// The contents.
    pub contents: Vec<u8>,
}

/// The gateway process to start in a sandbox.
#[derive(Clone, PartialEq, Eq)]
pub struct ProcSpec {
    /// Program and arguments, as paths inside the sandbox.
    pub argv: Vec<String>,
    /// The whole environment it gets; nothing of the host's leaks in. Holds secrets (the API
    /// key, the LLM token), so it is never logged: `Debug` shows the names only.
    pub env: Vec<(String, String)>,
}

impl std::fmt::Debug for ProcSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.env.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("ProcSpec").field("argv", &self.argv).field("env", &names).finish()
    }
}

/// The credentials a gateway uses to reach svc: its own API key, the account's LLM token, the
/// account's chat-bot token. Secrets: `Debug` shows none of them.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The gateway's API key (`svck_…`).
    pub api_key: String,
    /// The account's LLM proxy token.
    pub llm_token: String,
    /// The account's chat-bot token, when it has a bot.
    pub bot_token: Option<String>,
}

impl Credentials {
    /// What a warm sandbox's way out is armed with until a start takes it: nothing svc accepts.
    pub fn nobody() -> Credentials {
        Credentials { api_key: String::new(), llm_token: String::new(), bot_token: None }
    }

    /// Whether these are [`Credentials::nobody`].
    pub fn is_nobody(&self) -> bool {
        self.api_key.is_empty() && self.llm_token.is_empty()
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("bot_token", &self.bot_token.is_some()).finish_non_exhaustive()
    }
}

/// How a sandbox's gateway is doing, as the backend sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    /// The gateway process runs.
    Running {
        /// Memory in use, bytes, where the backend can tell.
        memory_bytes: Option<u64>,
    },
    /// It ended; why, in words for the account.
    Exited(String),
    /// There is no such sandbox.
    Missing,
}

/// Lines of a sandbox's log from a position on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogChunk {
    /// Each whole line, with the position just after it (what resumes after it).
    pub lines: Vec<(u64, String)>,
    /// Where the next read starts.
    pub next: u64,
}

/// A backend failure; the message is for operators' logs and never holds a secret.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BackendError(pub String);

impl BackendError {
    /// A failure of `what`, with its cause.
    pub fn io(what: impl std::fmt::Display, err: impl std::fmt::Display) -> Self {
        BackendError(format!("{what}: {err}"))
    }
}

/// Runs sandboxes.
pub trait Backend: Send + Sync + 'static {
    /// The backend's name, as recorded with each gateway (`local`, `remote`).
    fn kind(&self) -> &'static str;

    /// svc's address as its sandboxes reach it.
    fn svc_url(&self) -> String;

    /// The agent gateway install sandboxes start from (how to run it), or, when it is not
    /// prepared, where it was looked for.
    fn snapshot(&self) -> Result<crate::snapshot::Snapshot, String>;

    /// Makes an empty sandbox with its resource caps.
    fn create<'a>(&'a self, id: &'a str, spec: SandboxSpec) -> BoxFuture<'a, Result<(), BackendError>>;

    /// Writes files under the agent's home.
    fn write_files<'a>(&'a self, id: &'a str, files: &'a [FileSpec]) -> BoxFuture<'a, Result<(), BackendError>>;

    /// Arms the sandbox's way out with the real credentials and answers what the sandbox itself
    /// is given: placeholders, where the backend owns the way out and puts the real ones on
    /// each request there (the same placeholders again after a re-attach), else the real ones.
    /// Called before [`Backend::spawn`] and again after [`Backend::attach`]; until then the
    /// sandbox has no way out.
    fn credentials<'a>(&'a self, id: &'a str, real: Credentials) -> BoxFuture<'a, Result<Credentials, BackendError>>;

    /// Whether the sandbox holds the real credentials ([`Backend::credentials`] gave them in),
    /// so they are replaced when it ends.
    fn holds_real_credentials(&self) -> bool;

    /// Starts the gateway, detached; returns its process id on the machine, where there is one.
    fn spawn<'a>(&'a self, id: &'a str, process: &'a ProcSpec) -> BoxFuture<'a, Result<Option<i64>, BackendError>>;

    /// Re-attaches to a sandbox made by an earlier process (its plumbing to svc), if it runs.
    fn attach<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<SandboxStatus, BackendError>>;

    /// `GET path` on `port` inside the sandbox; the status code.
    fn get<'a>(&'a self, id: &'a str, port: u16, path: &'a str) -> BoxFuture<'a, Result<u16, BackendError>>;

    /// Sends one turn to the gateway's own chat endpoint (`POST /v1/chat/completions` with its
    /// operator token) and waits for the answer; its status. What warms a gateway's agent
    /// runtime, which it loads on its first turn.
    fn chat<'a>(&'a self, id: &'a str, token: &'a str, body: &'a str) -> BoxFuture<'a, Result<u16, BackendError>>;

    /// While `on`, the gateway's model calls are answered by its way out (one word, no model
    /// reached, nothing billed): what its warm-up turn goes through.
    fn set_warming(&self, id: &str, on: bool);

    /// Whether the gateway still runs, and what it uses.
    fn status<'a>(&'a self, id: &'a str) -> BoxFuture<'a, SandboxStatus>;

    /// Stops the gateway: SIGTERM, up to `grace` to exit, then killed.
    fn terminate<'a>(&'a self, id: &'a str, grace: Duration) -> BoxFuture<'a, Result<(), BackendError>>;

    /// Removes the sandbox and everything in it but its log. Idempotent.
    fn destroy<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), BackendError>>;

    /// The sandboxes that exist, by id: what a restart reconciles.
    fn sandboxes(&self) -> BoxFuture<'_, Result<Vec<String>, BackendError>>;

    /// Freezes the sandbox's processes while its gateway sleeps; false where this backend
    /// cannot (then gateways never sleep).
    fn sleep<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, BackendError>>;

    /// Thaws a sleeping sandbox.
    fn wake<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), BackendError>>;

    /// Whether the sandbox is asleep (frozen).
    fn asleep(&self, id: &str) -> bool;

    /// How long the sandbox has done nothing svc sees (a call out other than waiting for chat
    /// messages, a log line); `None` where the backend cannot tell.
    fn idle_for(&self, id: &str) -> Option<Duration>;

    /// Removes the logs of sandboxes not in `keep` that were last written before `before` (unix
    /// ms); how many it removed.
    fn sweep_logs<'a>(&'a self, keep: &'a std::collections::HashSet<String>, before_ms: i64) -> BoxFuture<'a, usize>;

    /// Appends a line of svc's own to the sandbox's log (lifecycle steps).
    fn note<'a>(&'a self, id: &'a str, line: &'a str) -> BoxFuture<'a, ()>;

    /// The log's lines from position `from` on, at most `max_bytes` of them.
    fn read_log<'a>(
        &'a self,
        id: &'a str,
        from: u64,
        max_bytes: usize,
    ) -> BoxFuture<'a, Result<LogChunk, BackendError>>;

    /// The log's size: where reading the newest lines starts from.
    fn log_len<'a>(&'a self, id: &'a str) -> BoxFuture<'a, u64>;
}
