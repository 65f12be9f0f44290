//! The remote backend: sandboxes on an E2B-compatible service, for operators who outgrow one
//! machine. The control plane (`X-API-Key`) creates a sandbox from a template that holds the
//! agent gateway, re-connects to it after a restart, renews its lifetime while it runs and
//! kills it; the sandbox's own agent (`envd`, `X-Access-Token`) writes files and runs short
//! commands over Connect RPC (`process.Process/Start`, JSON envelopes). The gateway is started
//! detached (`nohup setsid`), so it outlives the command that started it; health checks,
//! liveness and the stop run inside the sandbox with `curl` and `kill`.
//!
//! Sandboxes are tagged with the gateway id and svc's node in their metadata: that is how a
//! restart finds its own. The sandbox reaches svc at its public URL; the provider's network
//! policy, not svc, bounds what else it can reach.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::backend::{Backend, BackendError, Credentials, FileSpec, LogChunk, ProcSpec, SandboxSpec, SandboxStatus};
use crate::layout::HOME;
use crate::local::split_lines_forced;

/// Where the gateway's output goes inside a remote sandbox.
const LOG: &str = "/home/agent/.svc/gateway.log";
/// Where its process id is kept there.
const PID: &str = "/home/agent/.svc/pid";
/// The most of a command's answer svc reads (its output is base64 inside JSON envelopes).
const MAX_COMMAND_OUTPUT: usize = 4 << 20;
/// How often a running sandbox's lifetime is renewed.
const RENEW_EVERY: Duration = Duration::from_secs(60);

/// What the remote backend needs.
#[derive(Clone)]
pub struct RemoteConfig {
    /// The control plane's base URL.
    pub api_url: String,
    /// The control plane's key; a secret, never logged.
    pub api_key: String,
    /// The sandbox template holding Node.js 24 and the agent gateway.
    pub template: String,
    /// The sandbox agent's address, with `{id}` (the sandbox) and `{domain}` to fill in
    /// (`https://49983-{id}.{domain}`).
    pub envd_url: String,
    /// svc's public address, as sandboxes reach it.
    pub svc_url: String,
    /// This machine's name, kept in each sandbox's metadata.
    pub node: String,
    /// A sandbox's lifetime, renewed while its gateway runs.
    pub lifetime: Duration,
}

impl std::fmt::Debug for RemoteConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteConfig")
            .field("api_url", &self.api_url)
            .field("template", &self.template)
            .field("svc_url", &self.svc_url)
            .finish_non_exhaustive()
    }
}

/// One sandbox, as this process knows it.
#[derive(Clone)]
struct Sandbox {
    /// The provider's id.
    remote_id: String,
    /// Its agent's address.
    envd: String,
    /// Its agent's token.
    token: String,
    /// When its lifetime was last renewed.
    renewed: Instant,
}

/// Sandboxes on an E2B-compatible service.
pub struct RemoteBackend {
    config: RemoteConfig,
    http: reqwest::Client,
    sandboxes: Mutex<HashMap<String, Sandbox>>,
}

impl RemoteBackend {
    /// A backend over `config`.
    pub fn new(config: RemoteConfig) -> Result<Self, BackendError> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| BackendError::io("building the HTTP client", e))?;
        Ok(RemoteBackend { config, http, sandboxes: Mutex::default() })
    }

    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<String, Sandbox>> {
        self.sandboxes.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn control(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.config.api_url.trim_end_matches('/')))
            .header("X-API-Key", &self.config.api_key)
    }

    /// The sandbox from a create or connect answer.
    fn sandbox_from(&self, answer: &Value) -> Result<Sandbox, BackendError> {
        let remote_id =
            answer["sandboxID"].as_str().ok_or_else(|| BackendError("no sandboxID in the answer".into()))?;
        let domain = answer["domain"].as_str().unwrap_or("e2b.app");
        Ok(Sandbox {
            remote_id: remote_id.to_owned(),
            envd: self.config.envd_url.replace("{id}", remote_id).replace("{domain}", domain),
            token: answer["envdAccessToken"].as_str().unwrap_or_default().to_owned(),
            renewed: Instant::now(),
        })
    }

    fn sandbox(&self, id: &str) -> Result<Sandbox, BackendError> {
        self.known().get(id).cloned().ok_or_else(|| BackendError(format!("no remote sandbox for {id}")))
    }

    /// Runs a short command in the sandbox; its exit code and standard output.
    async fn run(
        &self,
        sandbox: &Sandbox,
        argv: &[&str],
        env: &[(String, String)],
    ) -> Result<(i64, Vec<u8>), BackendError> {
        let envs: serde_json::Map<String, Value> =
            env.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
        let message = json!({"process": {"cmd": argv[0], "args": &argv[1..], "envs": envs, "cwd": HOME}});
        let response = self
            .http
            .post(format!("{}/process.Process/Start", sandbox.envd))
            .header("Content-Type", "application/connect+json")
            .header("Connect-Protocol-Version", "1")
            .header("X-Access-Token", &sandbox.token)
            .header("Authorization", format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("user:")))
            .body(envelope(0, &message))
            .send()
            .await
            .map_err(|e| BackendError::io("running a command in the sandbox", e))?;
        if !response.status().is_success() {
            return Err(BackendError(format!("the sandbox refused a command: {}", response.status())));
        }
        let mut response = response;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| BackendError::io("reading a command's output", e))? {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_COMMAND_OUTPUT {
                return Err(BackendError("a command in the sandbox said more than svc reads".into()));
            }
        }
        parse_process_stream(&body)
    }

    async fn sh(
        &self,
        sandbox: &Sandbox,
        script: &str,
        env: &[(String, String)],
    ) -> Result<(i64, Vec<u8>), BackendError> {
        self.run(sandbox, &["/bin/sh", "-c", script], env).await
    }

    /// Renews the sandbox's lifetime, at most once a minute.
    async fn renew(&self, id: &str, sandbox: &Sandbox) {
        if sandbox.renewed.elapsed() < RENEW_EVERY {
            return;
        }
        let path = format!("/sandboxes/{}/timeout", sandbox.remote_id);
        let body = json!({"timeout": self.config.lifetime.as_secs()});
        match self.control(reqwest::Method::POST, &path).json(&body).send().await {
            Ok(r) if r.status().is_success() => {
                if let Some(known) = self.known().get_mut(id) {
                    known.renewed = Instant::now();
                }
            }
            Ok(r) => tracing::warn!(sandbox = id, status = %r.status(), "could not renew a remote sandbox"),
            Err(e) => tracing::warn!(sandbox = id, error = %e, "could not renew a remote sandbox"),
        }
    }
}

/// One Connect streaming envelope: flags, big-endian length, the JSON message.
fn envelope(flags: u8, message: &Value) -> Vec<u8> {
    let json = serde_json::to_vec(message).unwrap_or_default();
    let mut out = Vec::with_capacity(json.len() + 5);
    out.push(flags);
    out.extend_from_slice(&u32::try_from(json.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(&json);
    out
}

/// The exit code and standard output of a `process.Process/Start` answer stream.
pub(crate) fn parse_process_stream(mut body: &[u8]) -> Result<(i64, Vec<u8>), BackendError> {
    let mut stdout = Vec::new();
    let mut exit = None;
    while body.len() >= 5 {
        let flags = body[0];
        let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let Some(message) = body.get(5..5 + len) else { return Err(BackendError("a cut process stream".into())) };
        body = &body[5 + len..];
        let message: Value = serde_json::from_slice(message).map_err(|e| BackendError::io("a process event", e))?;
        if flags & 0x02 != 0 {
            if let Some(error) = message.get("error") {
                return Err(BackendError(format!("the command failed in the sandbox: {}", error["message"])));
            }
            continue;
        }
        let event = &message["event"];
        if let Some(data) = event["data"]["stdout"].as_str() {
            stdout.extend(base64::engine::general_purpose::STANDARD.decode(data).unwrap_or_default());
        }
        if let Some(end) = event.get("end") {
            exit = Some(end["exitCode"].as_i64().or_else(|| end["exit_code"].as_i64()).unwrap_or(0));
        }
    }
    exit.map(|code| (code, stdout)).ok_or_else(|| BackendError("the command never ended".into()))
}

impl Backend for RemoteBackend {
    fn kind(&self) -> &'static str {
        "remote"
    }

    fn svc_url(&self) -> String {
        self.config.svc_url.trim_end_matches('/').to_owned()
    }

    /// The template holds the snapshot at the same place `svc agentbox prepare --dir
    /// /opt/agent` puts it.
    fn snapshot(&self) -> Result<crate::snapshot::Snapshot, String> {
        Ok(crate::snapshot::Snapshot::agent_gateway())
    }

    fn create<'a>(&'a self, id: &'a str, _spec: SandboxSpec) -> BoxFuture<'a, Result<(), BackendError>> {
        async move {
            // Memory and CPU come with the template on this backend.
            let body = json!({
                "templateID": self.config.template,
                "timeout": self.config.lifetime.as_secs(),
                "secure": true,
                "metadata": {"svc_gateway": id, "svc_node": self.config.node},
            });
            let response = self
                .control(reqwest::Method::POST, "/sandboxes")
                .json(&body)
                .send()
                .await
                .map_err(|e| BackendError::io("creating a remote sandbox", e))?;
            if !response.status().is_success() {
                return Err(BackendError(format!("the sandbox service refused to create one: {}", response.status())));
            }
            let answer: Value = response.json().await.map_err(|e| BackendError::io("reading the new sandbox", e))?;
            let sandbox = self.sandbox_from(&answer)?;
            self.known().insert(id.to_owned(), sandbox);
            Ok(())
        }
        .boxed()
    }

    fn write_files<'a>(&'a self, id: &'a str, files: &'a [FileSpec]) -> BoxFuture<'a, Result<(), BackendError>> {
        async move {
            let sandbox = self.sandbox(id)?;
            for file in files {
                let path = format!("{HOME}/{}", file.path);
                let part = reqwest::multipart::Part::bytes(file.contents.clone()).file_name("file");
                let response = self
                    .http
                    .post(format!("{}/files", sandbox.envd))
                    .query(&[("path", path.as_str()), ("username", "user")])
                    .header("X-Access-Token", &sandbox.token)
                    .multipart(reqwest::multipart::Form::new().part("file", part))
                    .send()
                    .await
                    .map_err(|e| BackendError::io(&file.path, e))?;
                if !response.status().is_success() {
                    return Err(BackendError(format!("the sandbox refused {}: {}", file.path, response.status())));
                }
            }
            Ok(())
        }
        .boxed()
    }

    /// The sandbox reaches svc at its public address, not through svc: it holds the real
    /// credentials.
    fn credentials<'a>(&'a self, _id: &'a str, real: Credentials) -> BoxFuture<'a, Result<Credentials, BackendError>> {
        async move { Ok(real) }.boxed()
    }

    fn holds_real_credentials(&self) -> bool {
        true
    }

    fn spawn<'a>(&'a self, id: &'a str, process: &'a ProcSpec) -> BoxFuture<'a, Result<Option<i64>, BackendError>> {
        async move {
            let sandbox = self.sandbox(id)?;
            let script = format!(
                "mkdir -p {HOME}/.svc && nohup setsid \"$@\" >> {LOG} 2>&1 < /dev/null & echo $! > {PID}; cat {PID}"
            );
            let mut argv = vec!["/bin/sh", "-c", script.as_str(), "sh"];
            argv.extend(process.argv.iter().map(String::as_str));
            let (code, out) = self.run(&sandbox, &argv, &process.env).await?;
            if code != 0 {
                return Err(BackendError(format!("starting the gateway exited with {code}")));
            }
            let pid = String::from_utf8_lossy(&out)
                .trim()
                .parse::<i64>()
                .map_err(|_| BackendError("the sandbox did not report the gateway's process".into()))?;
            tracing::debug!(sandbox = id, pid, "remote gateway started");
            // A process on another machine: nothing for this node to record.
            Ok(None)
        }
        .boxed()
    }

    fn attach<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<SandboxStatus, BackendError>> {
        async move {
            let listed = self.list().await?;
            let Some(remote_id) = listed.get(id) else { return Ok(SandboxStatus::Missing) };
            let path = format!("/sandboxes/{remote_id}/connect");
            let body = json!({"timeout": self.config.lifetime.as_secs()});
            let response = self
                .control(reqwest::Method::POST, &path)
                .json(&body)
                .send()
                .await
                .map_err(|e| BackendError::io("re-connecting to a remote sandbox", e))?;
            if response.status().as_u16() == 404 {
                return Ok(SandboxStatus::Missing);
            }
            if !response.status().is_success() {
                return Err(BackendError(format!("the sandbox service refused to re-connect: {}", response.status())));
            }
            let answer: Value = response.json().await.map_err(|e| BackendError::io("reading the sandbox", e))?;
            let sandbox = self.sandbox_from(&answer)?;
            self.known().insert(id.to_owned(), sandbox);
            Ok(self.status(id).await)
        }
        .boxed()
    }

    fn get<'a>(&'a self, id: &'a str, port: u16, path: &'a str) -> BoxFuture<'a, Result<u16, BackendError>> {
        async move {
            let sandbox = self.sandbox(id)?;
            let env = [("SVC_PROBE_URL".to_owned(), format!("http://127.0.0.1:{port}{path}"))];
            let script = "curl -s -o /dev/null -w '%{http_code}' --max-time 5 \"$SVC_PROBE_URL\"";
            let (_, out) = self.sh(&sandbox, script, &env).await?;
            String::from_utf8_lossy(&out)
                .trim()
                .parse::<u16>()
                .ok()
                .filter(|code| *code != 0)
                .ok_or_else(|| BackendError("the gateway did not answer".into()))
        }
        .boxed()
    }

    fn status<'a>(&'a self, id: &'a str) -> BoxFuture<'a, SandboxStatus> {
        async move {
            let Ok(sandbox) = self.sandbox(id) else { return SandboxStatus::Missing };
            self.renew(id, &sandbox).await;
            match self.sh(&sandbox, &format!("kill -0 \"$(cat {PID})\""), &[]).await {
                Ok((0, _)) => SandboxStatus::Running { memory_bytes: None },
                Ok(_) => SandboxStatus::Exited("the gateway exited".into()),
                Err(e) => SandboxStatus::Exited(format!("the remote sandbox stopped answering: {e}")),
            }
        }
        .boxed()
    }

    fn terminate<'a>(&'a self, id: &'a str, grace: Duration) -> BoxFuture<'a, Result<(), BackendError>> {
        async move {
            let sandbox = self.sandbox(id)?;
            let env = [("SVC_GRACE".to_owned(), grace.as_secs().to_string())];
            let script = format!(
                "pid=$(cat {PID}) || exit 0; kill -TERM -- -$pid 2>/dev/null || kill -TERM $pid; i=0; \
                 while kill -0 $pid 2>/dev/null && [ $i -lt \"$SVC_GRACE\" ]; do sleep 1; i=$((i+1)); done; \
                 kill -KILL -- -$pid 2>/dev/null; kill -KILL $pid 2>/dev/null; true"
            );
            self.sh(&sandbox, &script, &env).await.map(|_| ())
        }
        .boxed()
    }

    fn destroy<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), BackendError>> {
        async move {
            let known = self.known().remove(id);
            let remote_id = match known {
                Some(sandbox) => Some(sandbox.remote_id),
                None => self.list().await?.remove(id),
            };
            let Some(remote_id) = remote_id else { return Ok(()) };
            let response = self
                .control(reqwest::Method::DELETE, &format!("/sandboxes/{remote_id}"))
                .send()
                .await
                .map_err(|e| BackendError::io("killing a remote sandbox", e))?;
            match response.status().as_u16() {
                200..=299 | 404 => Ok(()),
                status => Err(BackendError(format!("the sandbox service refused to kill one: {status}"))),
            }
        }
        .boxed()
    }

    fn sandboxes(&self) -> BoxFuture<'_, Result<Vec<String>, BackendError>> {
        async move { Ok(self.list().await?.into_keys().collect()) }.boxed()
    }

    /// Remote gateways are not warmed (they are not pooled).
    fn chat<'a>(&'a self, _id: &'a str, _token: &'a str, _body: &'a str) -> BoxFuture<'a, Result<u16, BackendError>> {
        async move { Err(BackendError("remote gateways are not spoken to through svc".into())) }.boxed()
    }

    fn set_warming(&self, _id: &str, _on: bool) {}

    /// Remote sandboxes do not sleep: the service bills and pauses them on its own terms.
    fn sleep<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<bool, BackendError>> {
        async move { Ok(false) }.boxed()
    }

    fn wake<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<(), BackendError>> {
        async move { Ok(()) }.boxed()
    }

    fn asleep(&self, _id: &str) -> bool {
        false
    }

    fn idle_for(&self, _id: &str) -> Option<Duration> {
        None
    }

    /// A remote sandbox's log lives in it and goes with it.
    fn sweep_logs<'a>(&'a self, _keep: &'a std::collections::HashSet<String>, _before_ms: i64) -> BoxFuture<'a, usize> {
        async move { 0 }.boxed()
    }

    fn note<'a>(&'a self, id: &'a str, line: &'a str) -> BoxFuture<'a, ()> {
        async move {
            let Ok(sandbox) = self.sandbox(id) else { return };
            let env = [("SVC_NOTE".to_owned(), format!("[svc] {line}"))];
            let script = format!("mkdir -p {HOME}/.svc && printf '%s\\n' \"$SVC_NOTE\" >> {LOG}");
            if let Err(e) = self.sh(&sandbox, &script, &env).await {
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
            let Ok(sandbox) = self.sandbox(id) else { return Ok(LogChunk { lines: Vec::new(), next: from }) };
            // Only the part asked for crosses: the log is the agent's to grow.
            let env = [
                ("SVC_LOG_FROM".to_owned(), (from + 1).to_string()),
                ("SVC_LOG_MAX".to_owned(), max_bytes.to_string()),
            ];
            let script = format!("tail -c +\"$SVC_LOG_FROM\" {LOG} 2>/dev/null | head -c \"$SVC_LOG_MAX\"");
            let (_, out) = self.sh(&sandbox, &script, &env).await?;
            let out = &out[..out.len().min(max_bytes)];
            Ok(split_lines_forced(out, from, max_bytes))
        }
        .boxed()
    }

    fn log_len<'a>(&'a self, id: &'a str) -> BoxFuture<'a, u64> {
        async move {
            let Ok(sandbox) = self.sandbox(id) else { return 0 };
            match self.sh(&sandbox, &format!("wc -c < {LOG} 2>/dev/null || echo 0"), &[]).await {
                Ok((_, out)) => String::from_utf8_lossy(&out).trim().parse().unwrap_or(0),
                Err(_) => 0,
            }
        }
        .boxed()
    }
}

impl RemoteBackend {
    /// This node's sandboxes on the service, by gateway id.
    async fn list(&self) -> Result<HashMap<String, String>, BackendError> {
        let filter = format!("svc_node={}", self.config.node);
        let response = self
            .control(reqwest::Method::GET, "/sandboxes")
            .query(&[("metadata", filter.as_str())])
            .send()
            .await
            .map_err(|e| BackendError::io("listing remote sandboxes", e))?;
        if !response.status().is_success() {
            return Err(BackendError(format!("the sandbox service refused the list: {}", response.status())));
        }
        let listed: Vec<Value> = response.json().await.map_err(|e| BackendError::io("reading the list", e))?;
        Ok(listed
            .iter()
            .filter(|s| s["metadata"]["svc_node"] == self.config.node.as_str())
            .filter_map(|s| {
                Some((s["metadata"]["svc_gateway"].as_str()?.to_owned(), s["sandboxID"].as_str()?.to_owned()))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_stream_gives_the_exit_code_and_the_output_and_refuses_a_cut_one() {
        let data = base64::engine::general_purpose::STANDARD.encode("42\n");
        let mut body = envelope(0, &json!({"event": {"start": {"pid": 7}}}));
        body.extend(envelope(0, &json!({"event": {"data": {"stdout": data}}})));
        body.extend(envelope(0, &json!({"event": {"end": {"exitCode": 3, "exited": true}}})));
        body.extend(envelope(2, &json!({})));
        assert_eq!(parse_process_stream(&body).expect("parsed"), (3, b"42\n".to_vec()));
        assert!(parse_process_stream(&body[..body.len() - 20]).is_err(), "cut");
        let failed = envelope(2, &json!({"error": {"code": "internal", "message": "boom"}}));
        assert!(parse_process_stream(&failed).is_err());
        assert!(parse_process_stream(&envelope(0, &json!({"event": {"start": {"pid": 1}}}))).is_err(), "never ended");
    }
}
