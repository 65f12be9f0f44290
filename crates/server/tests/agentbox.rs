//! Agent sandboxes for real: the `svc` binary serving, bubblewrap sandboxes, and a stand-in
//! gateway (`fixtures/standin_gateway.py`) that answers health on 18789 inside its sandbox
//! and calls svc with the key it was given. The tests reach inside a sandbox the way svc does,
//! through its gateway socket. Needs bubblewrap (the Debian package `bubblewrap`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

mod support;

const STANDIN: &str = include_str!("fixtures/standin_gateway.py");

/// A data directory, a snapshot holding the stand-in, and a config file.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    /// `agentbox` is the body of the config's `[agentbox]` table, after the snapshot line.
    fn new(agentbox: &str) -> World {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().expect("tempdir");
        let snapshot = dir.path().join("snap");
        std::fs::create_dir_all(&snapshot).expect("snapshot dir");
        std::fs::write(snapshot.join("gateway.py"), STANDIN).expect("stand-in");
        let manifest = serde_json::json!({"command": ["/usr/bin/python3", "/opt/agent/gateway.py"]});
        std::fs::write(snapshot.join("snapshot.json"), manifest.to_string()).expect("manifest");
        let memory = if agentbox.contains("memory_mb =") { "" } else { "memory_mb = 128\n" };
        // No warm gateways unless the test is about them: they would take sandboxes and budget.
        let memory =
            if agentbox.contains("pool_size") { memory.to_owned() } else { format!("{memory}pool_size = 0\n") };
        let config = format!(
            "[agentbox]\nsnapshot = \"{}\"\n{memory}probe_interval_secs = 1\nstop_grace_secs = 2\n{agentbox}\n",
            snapshot.display()
        );
        std::fs::write(dir.path().join("svc.toml"), config).expect("config");
        World { dir }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn sandboxes(&self) -> Vec<String> {
        std::fs::read_dir(self.data().join("agentbox/sandboxes"))
            .map(|entries| {
                entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
            })
            .unwrap_or_default()
    }

    /// Runs an operator command; its standard output.
    fn cli(&self, args: &[&str]) -> String {
        support::cli(&self.data(), args)
    }

    /// An account with `credits` (USD) and an owner's key with `scopes`.
    fn account(&self, name: &str, credits: &str, scopes: &str) -> (String, String) {
        let account = self.cli(&["accounts", "create", "--name", name]);
        if credits != "0" {
            self.cli(&["credits", "grant", &account, credits]);
        }
        let key = self.cli(&["keys", "create", &account, "--name", "owner", "--scopes", scopes]);
        (account, key)
    }

    /// The account's API keys, read from svc's database.
    async fn keys(&self, account: &str) -> Vec<svc_store::ApiKeyRecord> {
        let store = svc_store::Store::open_sqlite_file(&self.data().join("svc.db")).await.expect("svc's database");
        store.api_keys(account).await.expect("keys")
    }

    async fn serve(&self) -> Svc {
        self.serve_with(&[], &[]).await
    }

    async fn serve_with(&self, env: &[(&str, &str)], args: &[&str]) -> Svc {
        let mut env = env.to_vec();
        env.push(("SVC_HOST_ONLY_SECRET", "host-secret-value"));
        let serving = support::serve(&self.data(), &self.dir.path().join("svc.toml"), &env, args).await;
        Svc { child: serving.child, base: serving.base, http: reqwest::Client::new(), simulator: serving.simulator }
    }
}

impl Drop for World {
    /// Sandboxes outlive svc by design; a test that fails midway must not leave its own
    /// running once its directory is gone.
    fn drop(&mut self) {
        let sandboxes = self.sandboxes();
        let marker = self.dir.path().to_string_lossy().into_owned();
        for pid in pids_naming(&marker) {
            let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        for id in sandboxes {
            for controller in ["memory", "pids"] {
                let _ =
                    std::fs::remove_dir(Path::new("/sys/fs/cgroup").join(controller).join("svc-agentbox").join(&id));
            }
            let _ = std::fs::remove_dir(Path::new("/sys/fs/cgroup/svc-agentbox").join(&id));
        }
    }
}

/// Whether local sandboxes can run here, and be reached inside (see [`support::has_tool`]).
fn has_bubblewrap() -> bool {
    support::has_tool("bwrap", "apt-get install bubblewrap") && support::has_tool("curl", "apt-get install curl")
}

/// A running `svc serve`.
struct Svc {
    child: tokio::process::Child,
    base: String,
    http: reqwest::Client,
    /// The simulated market, whose chat platform plays users.
    simulator: Option<String>,
}

impl Svc {
    async fn call(&self, method: &str, path: &str, key: &str, body: Option<Value>) -> (u16, Value) {
        let mut request =
            self.http.request(method.parse().expect("method"), format!("{}{path}", self.base)).header("X-API-Key", key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("send");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    async fn start(&self, key: &str, template: &str) -> (u16, Value) {
        self.call("POST", "/api/agentbox/gateway/start", key, Some(serde_json::json!({"template": template}))).await
    }

    async fn gateway(&self, key: &str) -> Value {
        let (status, body) = self.call("GET", "/api/agentbox/gateway", key, None).await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// Waits until the gateway is in `state`; its view.
    async fn wait_for(&self, key: &str, state: &str) -> Value {
        for _ in 0..300 {
            let view = self.gateway(key).await;
            if view["state"] == state {
                return view;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the gateway never reached {state}: {}", self.gateway(key).await);
    }

    /// Reads the log stream until a line holds `needle` (or it ends); every (id, line) read.
    async fn logs_until(&self, key: &str, last_event_id: Option<&str>, needle: &str) -> Vec<(String, String)> {
        let mut request = self.http.get(format!("{}/api/agentbox/gateway/logs", self.base)).header("X-API-Key", key);
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        let mut response = request.send().await.expect("logs");
        assert_eq!(response.status(), 200);
        assert!(response.headers()["content-type"].to_str().expect("type").starts_with("text/event-stream"));
        let mut events = Vec::new();
        let mut buffer = String::new();
        let read = async {
            while let Some(chunk) = response.chunk().await.expect("chunk") {
                buffer.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = buffer.find("\n\n") {
                    let event: String = buffer.drain(..end + 2).collect();
                    let field = |name: &str| {
                        event.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim_start().to_owned())
                    };
                    let data = field("data:").unwrap_or_default();
                    let kind = field("event:").unwrap_or_default();
                    events.push((field("id:").unwrap_or(kind), data.clone()));
                    if data.contains(needle) {
                        return;
                    }
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(30), read).await.expect("the line comes within 30 s");
        events
    }

    async fn kill(mut self) {
        self.child.kill().await.expect("kill");
    }
}

/// `GET path` inside a sandbox, through its gateway socket, as svc's probes go.
async fn inside(world: &World, gateway: &str, path: &str) -> Value {
    let socket = world.data().join("agentbox/sandboxes").join(gateway).join("run/gateway.sock");
    let out = tokio::process::Command::new("curl")
        .args(["-s", "--max-time", "10", "--unix-socket"])
        .arg(&socket)
        .arg(format!("http://sandbox{path}"))
        .output()
        .await
        .expect("curl");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// Everything of sandbox `id` a look from the host finds: its processes' environments
/// (`/proc/<pid>/environ`) and every file under its home.
fn sandbox_contents(world: &World, id: &str) -> String {
    let marker = format!("SVC_GATEWAY_ID={id}");
    let mut seen = String::new();
    for pid in pids_with_environ(&marker) {
        seen.push_str(&String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default()));
    }
    let pid = pids_with_environ(&marker).into_iter().next().expect("a process of the sandbox");
    let mut dirs = vec![
        world.data().join("agentbox/sandboxes").join(id).join("seed"),
        PathBuf::from(format!("/proc/{pid}/root/home/agent")),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().filter_map(|e| e.ok()) {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                seen.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    seen
}

/// The status of a chat completion asked with `token` straight from the host.
async fn llm_chat(svc: &Svc, token: &str) -> u16 {
    let chat = svc
        .http
        .post(format!("{}/api/v1/llm/chat/completions", svc.base))
        .bearer_auth(token)
        .json(&serde_json::json!({"model": "svc-default", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .expect("chat");
    chat.status().as_u16()
}

/// Host processes whose command line names `needle`.
fn pids_naming(needle: &str) -> Vec<u32> {
    pids_whose("cmdline", needle)
}

/// Host processes whose environment holds `needle`.
fn pids_with_environ(needle: &str) -> Vec<u32> {
    pids_whose("environ", needle)
}

/// Host processes whose `/proc/<pid>/<file>` holds `needle`.
fn pids_whose(file: &str, needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_string_lossy().parse().ok()?;
            let text = std::fs::read(e.path().join(file)).ok()?;
            String::from_utf8_lossy(&text).contains(needle).then_some(pid)
        })
        .collect()
}

fn processes_naming(needle: &str) -> usize {
    pids_naming(needle).len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_starts_runs_in_its_sandbox_streams_its_logs_and_stops_leaving_nothing_behind() {
    if !has_bubblewrap() {
        return;
    }
    let world = World::new("billing_interval_secs = 60");
    let (account, key) = world.account("alice", "1", "gateway");
    let svc = world.serve().await;

    let (status, started) = svc.start(&key, "analyst").await;
    assert_eq!(status, 200, "{started}");
    assert_eq!(started["state"], "provisioning");
    let id = started["id"].as_str().expect("id").to_owned();
    let running = svc.wait_for(&key, "running").await;
    assert_eq!(running["template"], "analyst");
    assert!(running["credits_burnt"] != "0", "the first minute is billed in advance: {running}");

    // The log: svc's own steps, then the gateway's, which reached svc with its key.
    let events = svc.logs_until(&key, None, "listening on 127.0.0.1:18789").await;
    let lines: Vec<&str> = events.iter().map(|(_, line)| line.as_str()).collect();
    assert!(lines.iter().any(|l| l.contains("sandbox created for template analyst")), "{lines:?}");
    assert!(lines.contains(&"svc answered 200 to GET /api/agentbox/gateway"), "{lines:?}");
    // Resuming after an event sends what follows it, and only that.
    let (resume_at, resumed_line) =
        events.iter().position(|(_, l)| l.starts_with("SVC_API_URL")).map(|i| events[i].clone()).expect("line");
    let resumed = svc.logs_until(&key, Some(&resume_at), "listening on").await;
    assert_eq!(resumed.first().map(|e| e.1.as_str()), Some("SVC_API_TOKEN is set"), "after {resumed_line}");
    let (bad, body) = {
        let response = svc
            .http
            .get(format!("{}/api/agentbox/gateway/logs", svc.base))
            .header("X-API-Key", &key)
            .header("Last-Event-ID", "not-a-position")
            .send()
            .await
            .expect("send");
        (response.status().as_u16(), response.text().await.expect("body"))
    };
    assert_eq!(bad, 422, "{body}");

    // Inside: its own user, host name and loopback; svc's variables and nothing of the host's.
    let nested = inside(&world, &id, "/call-unshare").await;
    assert_eq!(nested["unshared"], false, "no namespaces of its own inside: {nested}");
    let who = inside(&world, &id, "/whoami").await;
    assert_eq!((who["uid"].as_u64(), who["hostname"].as_str()), (Some(1000), Some("svc-agent")), "{who}");
    let env = inside(&world, &id, "/env").await;
    let sandbox_key = env["SVC_API_TOKEN"].as_str().expect("the key is injected").to_owned();
    assert!(sandbox_key.starts_with("svck_") && sandbox_key != key);
    assert!(env["SVC_LLM_TOKEN"].as_str().is_some_and(|t| t.starts_with("svc_")), "{env}");
    // No real credential inside: what the sandbox holds are placeholders, refused anywhere but
    // on the way out of its own sandbox, where svc puts the real ones.
    let (status, owned) = svc.call("POST", "/api/account/llm-token", &key, None).await;
    assert_eq!(status, 200, "{owned}");
    let llm_token = owned["token"].as_str().expect("the owner's LLM token").to_owned();
    let gateway_key = world.keys(&account).await.into_iter().find(|k| k.name == format!("gateway {id}"));
    let gateway_key = gateway_key.expect("the gateway's own key").prefix;
    let seen = sandbox_contents(&world, &id);
    assert!(seen.contains(&sandbox_key), "the look from the host reaches the sandbox's environment");
    for (what, secret) in [("the LLM token", llm_token.as_str()), ("the gateway's key", gateway_key.as_str())] {
        assert!(!seen.contains(secret), "{what} is nowhere in the sandbox's processes or files");
    }
    assert_eq!(svc.call("GET", "/api/agentbox/gateway", &sandbox_key, None).await.0, 401, "placeholder outside");
    let placeholder_llm = env["SVC_LLM_TOKEN"].as_str().expect("llm token");
    assert_eq!(llm_chat(&svc, placeholder_llm).await, 401, "the LLM placeholder outside");
    let through = inside(&world, &id, "/llm").await;
    assert_eq!(through["status"], 200, "the LLM proxy through the sandbox's way out: {through}");
    assert!(env.get("SVC_HOST_ONLY_SECRET").is_none(), "no host variable leaks in: {env}");
    assert!(env.get("SVC_DATA_DIR").is_none() && env.get("RUST_LOG").is_none(), "{env}");
    // Its only way out is svc: the host's database port and any other address are unreachable.
    for (host, port) in [("127.0.0.1", 5432), ("127.0.0.1", 6379), ("10.0.0.1", 80), ("1.1.1.1", 443)] {
        let tried = inside(&world, &id, &format!("/connect?host={host}&port={port}")).await;
        assert_eq!(tried["connected"], false, "{host}:{port}: {tried}");
    }
    // Through svc, its key reads the gateway and calls data routes billed in credits.
    let call = inside(&world, &id, "/call?path=/api/svc-tools/top-picks-lite").await;
    assert_eq!(call["status"], 200, "{call}");
    // But it cannot start or stop gateways.
    let call = inside(&world, &id, "/call?method=POST&path=/api/agentbox/gateway/stop").await;
    assert_eq!(call["status"], 403, "{call}");

    let (status, stopping) = svc.call("POST", "/api/agentbox/gateway/stop", &key, None).await;
    assert_eq!(status, 200, "{stopping}");
    let stopped = svc.wait_for(&key, "stopped").await;
    assert_eq!(stopped["reason"], "stopped by its owner");
    let events = svc.logs_until(&key, None, "the gateway has ended").await;
    let last = &events[events.len().saturating_sub(4)..];
    assert!(events.iter().any(|(_, l)| l == "stand-in gateway stopping"), "SIGTERM reached it: {last:?}");
    assert!(events.iter().any(|(_, l)| l == "stand-in helper done"), "its last words are logged: {last:?}");
    assert_eq!(events.last().map(|e| e.0.as_str()), Some("end"));

    // The gateway's key is revoked; the owner's LLM token, never inside, keeps working; the
    // sandbox is gone, no process left.
    let revoked = world.keys(&account).await.into_iter().find(|k| k.prefix == gateway_key);
    assert!(revoked.is_some_and(|k| k.revoked_at.is_some()), "the gateway's key is revoked");
    assert_eq!(llm_chat(&svc, &llm_token).await, 200, "no rotation: the sandbox never held it");
    assert!(world.sandboxes().is_empty(), "{:?}", world.sandboxes());
    assert_eq!(processes_naming(&format!("sandboxes/{id}")), 0);
    assert!(!Path::new("/sys/fs/cgroup/memory/svc-agentbox").join(&id).exists());
    svc.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_each_run_their_own_gateway_on_port_18789_and_see_only_their_own() {
    if !has_bubblewrap() {
        return;
    }
    let world = World::new("");
    let (_, alice) = world.account("alice", "1", "gateway");
    let (_, bob) = world.account("bob", "1", "gateway");
    let (_, carol) = world.account("carol", "1", "gateway");
    let (_, reader) = world.account("dave", "1", "gateway:read");
    let svc = world.serve().await;

    // Two accounts at once, and the same account twice at once: one gateway each.
    let (a, b, a_again) =
        tokio::join!(svc.start(&alice, "trader"), svc.start(&bob, "degen"), svc.start(&alice, "analyst"));
    assert_eq!(b.0, 200, "{b:?}");
    let bob_id = b.1["id"].as_str().expect("id").to_owned();
    let (won, lost) = match (a.0, a_again.0) {
        (200, 409) => (a, a_again),
        (409, 200) => (a_again, a),
        other => panic!("one start of alice's wins, the other is refused: {other:?}"),
    };
    let alice_id = won.1["id"].as_str().expect("id").to_owned();
    let alice_template = won.1["template"].as_str().expect("template").to_owned();
    assert!(lost.1["detail"].as_str().is_some_and(|d| d.contains(&alice_id)), "the conflict names it: {lost:?}");
    svc.wait_for(&alice, "running").await;
    svc.wait_for(&bob, "running").await;
    let (status, body) = svc.start(&alice, "degen").await;
    assert_eq!((status, body["code"].as_str()), (409, Some("conflict")));

    // Both bound 18789 in their own sandboxes.
    for id in [&alice_id, &bob_id] {
        assert_eq!(inside(&world, id, "/health").await["status"], "live");
    }
    // A sandbox's placeholder is swapped on its own way out only: bob's, sent through alice's
    // sandbox, is refused; his own through his is not.
    let bobs = inside(&world, &bob_id, "/env").await["SVC_API_TOKEN"].as_str().expect("key").to_owned();
    let through_alice = inside(&world, &alice_id, &format!("/call?path=/api/agentbox/gateway&key={bobs}")).await;
    assert_eq!(through_alice["status"], 401, "{through_alice}");
    let through_bob = inside(&world, &bob_id, "/call?path=/api/agentbox/gateway").await;
    assert_eq!(through_bob["status"], 200, "{through_bob}");
    assert!(world.data().join("agentbox/sandboxes").join(&bob_id).join("placeholders.json").is_file());
    let found = inside(&world, &bob_id, "/find?name=placeholders.json").await;
    assert_eq!(found["found"], serde_json::json!([]), "the mapping is kept outside the sandbox");
    // Each sees its own; an account without one gets the same 404 on every route.
    assert_eq!(svc.gateway(&bob).await["id"], bob_id.as_str());
    assert_eq!(svc.gateway(&alice).await["template"], alice_template.as_str());
    for (method, path) in [
        ("GET", "/api/agentbox/gateway"),
        ("POST", "/api/agentbox/gateway/stop"),
        ("GET", "/api/agentbox/gateway/logs"),
    ] {
        let (status, body) = svc.call(method, path, &carol, None).await;
        assert_eq!((status, body["code"].as_str()), (404, Some("not_found")), "{method} {path}: {body}");
    }
    // A trader's key may move funds; a degen's may not.
    let templates = svc.call("GET", "/api/agentbox/templates", &alice, None).await.1;
    let trades: Vec<(&str, bool)> = templates["templates"]
        .as_array()
        .expect("list")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or(""),
                t["scopes"].as_array().is_some_and(|s| s.iter().any(|s| s == "gateway:wallet_write")),
            )
        })
        .collect();
    assert_eq!(trades, [("trader", true), ("shitcoin-trader", true), ("degen", false), ("analyst", false)]);

    // Scopes and credentials: a read-only key reads but cannot start; forged keys are 401.
    assert_eq!(svc.call("GET", "/api/agentbox/templates", &reader, None).await.0, 200);
    let (status, body) = svc.start(&reader, "analyst").await;
    assert_eq!((status, body["code"].as_str()), (403, Some("insufficient_scope")), "{body}");
    let forged = format!("svck_{}", "0".repeat(64));
    for bad in [forged.as_str(), "", "garbage"] {
        assert_eq!(svc.start(bad, "analyst").await.0, 401, "{bad:?}");
    }
    // Malformed input: 422, never a 5xx.
    for body in [
        serde_json::json!({"template": "nope"}),
        serde_json::json!({}),
        serde_json::json!({"template": "analyst", "x": 1}),
    ] {
        let (status, answer) = svc.call("POST", "/api/agentbox/gateway/start", &carol, Some(body.clone())).await;
        assert_eq!(status, 422, "{body}: {answer}");
    }

    // An account holds at most four log streams at once; one more is refused, and a closed
    // one frees its place.
    let mut open = Vec::new();
    for _ in 0..4 {
        let response =
            svc.http.get(format!("{}/api/agentbox/gateway/logs", svc.base)).header("X-API-Key", &bob).send().await;
        let response = response.expect("logs");
        assert_eq!(response.status(), 200);
        open.push(response);
    }
    let (status, body) = svc.call("GET", "/api/agentbox/gateway/logs", &bob, None).await;
    assert_eq!((status, body["code"].as_str()), (503, Some("no_capacity")), "{body}");
    let alices =
        svc.http.get(format!("{}/api/agentbox/gateway/logs", svc.base)).header("X-API-Key", &alice).send().await;
    assert_eq!(alices.expect("logs").status(), 200, "counted per account");
    drop(open);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again = svc.http.get(format!("{}/api/agentbox/gateway/logs", svc.base)).header("X-API-Key", &bob).send().await;
    assert_eq!(again.expect("logs").status(), 200, "freed when a client goes");

    // Stopping one leaves the other running.
    assert_eq!(svc.call("POST", "/api/agentbox/gateway/stop", &bob, None).await.0, 200);
    svc.wait_for(&bob, "stopped").await;
    assert_eq!(svc.gateway(&alice).await["state"], "running");
    assert_eq!(world.sandboxes(), vec![alice_id.clone()]);
    assert_eq!(svc.call("POST", "/api/agentbox/gateway/stop", &alice, None).await.0, 200);
    svc.wait_for(&alice, "stopped").await;
    assert!(world.sandboxes().is_empty());
    svc.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashes_missed_health_checks_and_the_memory_cap_end_a_gateway_as_failed_and_clean_it_up() {
    if !has_bubblewrap() {
        return;
    }
    let world = World::new("health_timeout_secs = 3\nmemory_mb = 64");
    let (_, alice) = world.account("alice", "1", "gateway");
    let svc = world.serve().await;

    // A crash is seen within moments and recorded with its exit status.
    let id = svc.start(&alice, "analyst").await.1["id"].as_str().expect("id").to_owned();
    svc.wait_for(&alice, "running").await;
    let env = inside(&world, &id, "/env").await;
    let key = env["SVC_API_TOKEN"].as_str().expect("key").to_owned();
    inside(&world, &id, "/exit?code=3").await;
    let failed = svc.wait_for(&alice, "failed").await;
    assert_eq!(failed["reason"], "the gateway exited with status 3", "{failed}");
    assert_eq!(svc.call("GET", "/api/agentbox/gateway", &key, None).await.0, 401, "its key is revoked");
    assert!(world.sandboxes().is_empty());

    // Going over the memory cap kills it, and the reason says so.
    let id = svc.start(&alice, "analyst").await.1["id"].as_str().expect("id").to_owned();
    svc.wait_for(&alice, "running").await;
    inside(&world, &id, "/allocate?mb=200").await;
    let failed = svc.wait_for(&alice, "failed").await;
    assert!(failed["reason"].as_str().is_some_and(|r| r.contains("memory cap (64 MiB)")), "{failed}");
    assert!(world.sandboxes().is_empty());
    svc.kill().await;

    // A gateway that never answers its health check fails within the budget and is removed.
    let world = World::new("health_timeout_secs = 2");
    std::fs::write(
        world.dir.path().join("snap/snapshot.json"),
        serde_json::json!({"command": ["/usr/bin/python3", "/opt/agent/gateway.py", "--health-delay", "600"]})
            .to_string(),
    )
    .expect("manifest");
    let (_, bob) = world.account("bob", "1", "gateway");
    let svc = world.serve().await;
    let started = svc.start(&bob, "degen").await.1;
    let failed = svc.wait_for(&bob, "failed").await;
    assert!(failed["reason"].as_str().is_some_and(|r| r.contains("health check on port 18789 within 2 s")), "{failed}");
    assert_eq!(failed["credits_burnt"], "0", "nothing billed for a gateway that never ran");
    assert!(world.sandboxes().is_empty());
    assert_eq!(processes_naming(started["id"].as_str().expect("id")), 0);
    svc.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_credits_stops_the_gateway_and_starts_need_credits_room_and_a_snapshot() {
    if !has_bubblewrap() {
        return;
    }
    // 0.06 a minute billed each second: 0.001 a period; 0.0025 pays for two periods.
    let world = World::new("billing_interval_secs = 1\ncredits_per_minute = \"0.06\"\nmemory_budget_mb = 200");
    let (_, alice) = world.account("alice", "0.0025", "gateway");
    let (_, bob) = world.account("bob", "1", "gateway");
    let (_, broke) = world.account("carol", "0", "gateway");
    let svc = world.serve().await;

    let (status, body) = svc.start(&broke, "analyst").await;
    assert_eq!((status, body["code"].as_str()), (402, Some("insufficient_credits")), "{body}");

    assert_eq!(svc.start(&alice, "analyst").await.0, 200);
    // The budget holds one 128 MiB sandbox: a second is refused while it runs.
    let (status, body) = svc.start(&bob, "analyst").await;
    assert_eq!((status, body["code"].as_str()), (503, Some("no_capacity")), "{body}");
    let stopped = svc.wait_for(&alice, "stopped").await;
    assert_eq!(stopped["reason"], "the account's credits ran out", "{stopped}");
    assert_eq!(stopped["credits_burnt"], "0.002", "two whole periods, never past the balance");
    assert!(world.sandboxes().is_empty());
    // Room again.
    assert_eq!(svc.start(&bob, "analyst").await.0, 200);
    svc.wait_for(&bob, "running").await;
    svc.kill().await;

    let world = World::new("");
    std::fs::remove_file(world.dir.path().join("snap/snapshot.json")).expect("unprepare");
    let (_, alice) = world.account("alice", "1", "gateway");
    let svc = world.serve().await;
    let (status, body) = svc.start(&alice, "analyst").await;
    assert_eq!(status, 503, "{body}");
    assert!(body["detail"].as_str().is_some_and(|d| d.contains("svc agentbox prepare")), "{body}");
    let checked = world.dir.path().join("snap").display().to_string();
    assert!(body["detail"].as_str().is_some_and(|d| d.contains(&checked)), "names the directory checked: {body}");
    svc.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_re_attaches_running_gateways_and_ends_those_it_caught_starting() {
    if !has_bubblewrap() {
        return;
    }
    let world = World::new("health_timeout_secs = 120");
    std::fs::write(
        world.dir.path().join("snap/snapshot.json"),
        serde_json::json!({"command": ["/usr/bin/python3", "/opt/agent/gateway.py", "--never-healthy", "degen"]})
            .to_string(),
    )
    .expect("manifest");
    let (alice_account, alice) = world.account("alice", "1", "gateway");
    let (_, bob) = world.account("bob", "1", "gateway");
    let svc = world.serve().await;
    let alice_id = svc.start(&alice, "analyst").await.1["id"].as_str().expect("id").to_owned();
    svc.wait_for(&alice, "running").await;
    // Bob's gateway is kept in its health check by a sandbox that never answers.
    let bob_id = svc.start(&bob, "degen").await.1["id"].as_str().expect("id").to_owned();
    svc.wait_for(&bob, "health_check").await;

    // svc dies without a chance to clean up.
    svc.kill().await;
    let svc = world.serve().await;

    let view = svc.gateway(&alice).await;
    assert_eq!(view["state"], "running", "re-attached: {view}");
    let events = svc.logs_until(&alice, None, "svc restarted; watching again").await;
    assert!(!events.is_empty());
    let env = inside(&world, &alice_id, "/env").await;
    let call = inside(&world, &alice_id, "/call?path=/api/agentbox/gateway").await;
    assert_eq!(call["status"], 200, "its way to svc works again: {call}");
    // The key's secret died with the old process: a new key under the same placeholder, the
    // old one revoked.
    let keys = world.keys(&alice_account).await;
    let gateway_keys: Vec<_> = keys.iter().filter(|k| k.name == format!("gateway {alice_id}")).collect();
    assert_eq!(gateway_keys.len(), 2, "{keys:?}");
    assert_eq!(gateway_keys.iter().filter(|k| k.revoked_at.is_none()).count(), 1, "{keys:?}");
    let failed = svc.gateway(&bob).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    assert!(
        failed["reason"].as_str().is_some_and(|r| r.contains("restarted while the gateway was starting")),
        "{failed}"
    );
    assert_eq!(world.sandboxes(), vec![alice_id.clone()], "bob's sandbox is removed");
    assert_eq!(processes_naming(&bob_id), 0);

    // A re-attached gateway still stops cleanly.
    assert_eq!(svc.call("POST", "/api/agentbox/gateway/stop", &alice, None).await.0, 200);
    svc.wait_for(&alice, "stopped").await;
    let key = env["SVC_API_TOKEN"].as_str().expect("key");
    assert_eq!(svc.call("GET", "/api/agentbox/gateway", key, None).await.0, 401);
    assert!(world.sandboxes().is_empty());
    assert_eq!(processes_naming(&alice_id), 0);
    svc.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_takes_a_warm_gateway_armed_with_its_credentials_and_warm_ones_give_way_to_cold_starts() {
    if !has_bubblewrap() {
        return;
    }
    // Room for two warm 128 MiB gateways and no more: trader's and shitcoin-trader's.
    let world = World::new("pool_size = 1\nmemory_budget_mb = 300\nbilling_interval_secs = 60");
    let (_, alice) = world.account("alice", "1", "gateway");
    let (_, bob) = world.account("bob", "1", "gateway");
    let (_, carol) = world.account("carol", "1", "gateway");
    let svc = world.serve().await;
    let warm = |view: &Value, name: &str| {
        view["templates"].as_array().into_iter().flatten().find(|t| t["name"] == name).map(|t| t["warm"].clone())
    };
    for _ in 0..300 {
        let view = svc.call("GET", "/api/agentbox/templates", &alice, None).await.1;
        if warm(&view, "shitcoin-trader") == Some(serde_json::json!(1)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let view = svc.call("GET", "/api/agentbox/templates", &alice, None).await.1;
    let warmth: Vec<Value> =
        ["trader", "shitcoin-trader", "degen", "analyst"].iter().filter_map(|t| warm(&view, t)).collect();
    assert_eq!(warmth, [1, 1, 0, 0].map(|n| serde_json::json!(n)), "the budget holds two: {view}");
    let warm_ids = world.sandboxes();
    assert_eq!(warm_ids.len(), 2);
    // A warm gateway's way out works for nobody until a start takes it.
    for id in &warm_ids {
        let before = inside(&world, id, "/call-kept?path=/api/agentbox/gateway").await;
        assert_eq!(before["status"], 401, "{before}");
    }
    assert_eq!(svc.call("GET", "/api/account/credits", &alice, None).await.1["balance"], "1", "nothing billed");

    // Alice's trader is a warm one: running at once, with her credentials on its way out.
    let started = svc.start(&alice, "trader").await.1;
    let id = started["id"].as_str().expect("id").to_owned();
    assert!(warm_ids.contains(&id), "{id} was warm: {warm_ids:?}");
    let running = svc.wait_for(&alice, "running").await;
    assert!(running["credits_burnt"] != "0", "billed from its start: {running}");
    svc.logs_until(&alice, None, "taken from the warm pool").await;
    let call = inside(&world, &id, "/call?path=/api/agentbox/gateway").await;
    assert_eq!(call["status"], 200, "{call}");
    assert!(call["body"].as_str().is_some_and(|b| b.contains(&id)), "it reads its own gateway: {call}");
    let kept = inside(&world, &id, "/call-kept?path=/api/agentbox/gateway").await;
    assert_eq!(kept["status"], 200, "a connection kept from before it was taken carries the credentials: {kept}");

    // Bob's analyst has no warm one and no room: the warm shitcoin-trader gives way.
    let bob_id = svc.start(&bob, "analyst").await.1["id"].as_str().expect("id").to_owned();
    assert!(!warm_ids.contains(&bob_id));
    svc.wait_for(&bob, "running").await;
    let mut left = world.sandboxes();
    left.sort();
    let mut expected = vec![id.clone(), bob_id.clone()];
    expected.sort();
    assert_eq!(left, expected, "the warm one was removed for the room");

    // An account with a chat bot boots its own: the bot's groups are in the gateway's config.
    assert_eq!(svc.call("POST", "/api/agentbox/gateway/stop", &bob, None).await.0, 200);
    svc.wait_for(&bob, "stopped").await;
    let saved = svc
        .call(
            "PUT",
            "/api/agentbox/telegram/config",
            &carol,
            Some(
                serde_json::json!({"bot_token": "7001234567:AAHsimulatedTokenOfThePoolTest_xyz", "dm_policy": "open", "group_policy": "allowlist"}),
            ),
        )
        .await;
    assert_eq!(saved.0, 200, "{saved:?}");
    let carol_id = svc.start(&carol, "trader").await.1["id"].as_str().expect("id").to_owned();
    svc.wait_for(&carol, "running").await;
    assert!(!warm_ids.contains(&carol_id));
    let events = svc.logs_until(&carol, None, "running").await;
    assert!(!events.iter().any(|(_, l)| l.contains("warm pool")), "{events:?}");
    svc.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_gateway_sleeps_unbilled_and_a_chat_message_wakes_it() {
    if !has_bubblewrap() || !std::path::Path::new("/sys/fs/cgroup/freezer").exists() && !cgroup_v2() {
        return;
    }
    let world = World::new("idle_sleep_secs = 2\nbilling_interval_secs = 1\ncredits_per_minute = \"0.06\"");
    let (_, alice) = world.account("alice", "1", "gateway");
    let svc = world.serve().await;
    let bot = "7001234567:AAHsimulatedTokenOfTheSleepTest_xyz";
    let body = serde_json::json!({"bot_token": bot, "dm_policy": "open", "group_policy": "allowlist"});
    let saved = svc.call("PUT", "/api/agentbox/telegram/config", &alice, Some(body)).await;
    assert_eq!(saved.0, 200, "{saved:?}");
    let id = svc.start(&alice, "analyst").await.1["id"].as_str().expect("id").to_owned();
    svc.wait_for(&alice, "running").await;

    // Nothing to do but wait for chat messages: asleep, frozen, and not billed.
    let asleep = wait_until(&svc, &alice, |view| view["asleep"] == true).await;
    assert_eq!(asleep["state"], "running", "{asleep}");
    svc.logs_until(&alice, None, "asleep after").await;
    let burnt = svc.gateway(&alice).await["credits_burnt"].clone();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let still = svc.gateway(&alice).await;
    assert_eq!(still["credits_burnt"], burnt, "three periods asleep, none billed: {still}");
    assert_eq!(still["asleep"], true);

    // A user's message wakes it, and it gets the message.
    let simulator = svc.simulator.clone().expect("the simulated market");
    support::play_user_message(&svc.http, &simulator, bot, "wake up").await;
    svc.logs_until(&alice, None, "stand-in got a chat message: wake up").await;
    let events = svc.logs_until(&alice, None, "woke up for a chat message").await;
    assert!(!events.is_empty());
    assert_eq!(inside(&world, &id, "/health").await["status"], "live");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let awake = svc.gateway(&alice).await;
    assert!(awake["credits_burnt"] != burnt, "billed again once awake: {awake}");

    // Asleep again, it still stops cleanly.
    wait_until(&svc, &alice, |view| view["asleep"] == true).await;
    assert_eq!(svc.call("POST", "/api/agentbox/gateway/stop", &alice, None).await.0, 200);
    svc.wait_for(&alice, "stopped").await;
    assert!(world.sandboxes().is_empty());
    assert_eq!(processes_naming(&id), 0);
    svc.kill().await;
}

/// Whether the machine has the unified cgroup hierarchy (whose groups all freeze).
fn cgroup_v2() -> bool {
    std::path::Path::new("/sys/fs/cgroup/cgroup.controllers").exists()
}

/// Polls the account's gateway until `done` holds; its view.
async fn wait_until(svc: &Svc, key: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..300 {
        let view = svc.gateway(key).await;
        if done(&view) {
            return view;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the gateway never got there: {}", svc.gateway(key).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarting_one_of_two_replicas_on_one_machine_leaves_the_others_gateway_running() {
    if !has_bubblewrap() {
        return;
    }
    let world = World::new("");
    let (_, alice) = world.account("alice", "1", "gateway");
    // A second replica on this machine: the same database, its own data directory (so its own
    // node id and sandbox root).
    let database = format!("sqlite://{}", world.data().join("svc.db").display());
    let other_data = world.dir.path().join("data-b");
    let config = world.dir.path().join("svc.toml");
    let env = [("SVC_DATABASE_URL", database.as_str())];
    let a = world.serve().await;
    let b = support::serve(&other_data, &config, &env, &[]).await;

    let id = a.start(&alice, "analyst").await.1["id"].as_str().expect("id").to_owned();
    a.wait_for(&alice, "running").await;
    let node_a = std::fs::read_to_string(world.data().join("node-id")).expect("a's node");
    let node_b = std::fs::read_to_string(other_data.join("node-id")).expect("b's node");
    assert_ne!(node_a, node_b, "each replica has its own node");

    // B restarts, twice over (once killed, once as a new process reconciling its node).
    drop(b);
    let b = support::serve(&other_data, &config, &env, &[]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(a.gateway(&alice).await["state"], "running", "B's restart did not end A's gateway");
    assert_eq!(inside(&world, &id, "/health").await["status"], "live");
    assert_eq!(world.sandboxes(), vec![id.clone()]);
    drop(b);
    a.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_writes_within_its_quotas_its_log_keeps_under_its_cap_and_old_logs_go() {
    if !has_bubblewrap() {
        return;
    }
    let world = World::new("home_mb = 8\ntmp_mb = 4\nlog_cap_mb = 1");
    let (_, alice) = world.account("alice", "1", "gateway");
    let (_, bob) = world.account("bob", "1", "gateway");
    let svc = world.serve().await;
    let id = svc.start(&alice, "analyst").await.1["id"].as_str().expect("id").to_owned();
    svc.wait_for(&alice, "running").await;

    // The home and /tmp hold what their quotas allow; the write past it fails, and says why.
    let home = inside(&world, &id, "/fill?path=/home/agent/big&mb=50").await;
    assert!(home["written_mb"].as_u64().is_some_and(|mb| mb <= 8), "{home}");
    assert!(home["error"].as_str().is_some_and(|e| e.contains("No space left on device")), "{home}");
    let tmp = inside(&world, &id, "/fill?path=/tmp/big&mb=50").await;
    assert!(tmp["written_mb"].as_u64().is_some_and(|mb| mb <= 4), "{tmp}");
    svc.logs_until(&alice, None, "/home/agent is full (its quota is 8 MiB)").await;
    // None of it reached the host's disk.
    let on_host: u64 = walk_sizes(&world.data().join("agentbox/sandboxes").join(&id));
    assert!(on_host < 1 << 20, "{on_host} bytes of the sandbox on the host");

    // The log keeps under its cap, says it started again, and the gateway lives on.
    let spewed = inside(&world, &id, "/spew?mb=3").await;
    assert_eq!(spewed["spewed_mb"], 3, "{spewed}");
    let log = world.data().join("agentbox/logs").join(format!("{id}.log"));
    let size = std::fs::metadata(&log).expect("log").len();
    assert!(size <= (1 << 20) + 4096, "the log holds {size} bytes");
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(text.contains("the log reached its cap of 1 MiB"), "{}", &text[..200.min(text.len())]);
    assert_eq!(svc.gateway(&alice).await["state"], "running");

    // A log is kept after its gateway ends, and removed once older than the retention; a
    // running gateway's stays whatever its age.
    assert_eq!(svc.call("POST", "/api/agentbox/gateway/stop", &alice, None).await.0, 200);
    svc.wait_for(&alice, "stopped").await;
    let bob_id = svc.start(&bob, "analyst").await.1["id"].as_str().expect("id").to_owned();
    svc.wait_for(&bob, "running").await;
    let bob_log = world.data().join("agentbox/logs").join(format!("{bob_id}.log"));
    assert!(log.is_file(), "kept after the stop");
    for path in [&log, &bob_log] {
        let aged = std::process::Command::new("touch").args(["-d", "4 days ago"]).arg(path).status();
        assert!(aged.expect("touch").success());
    }
    svc.kill().await;
    let svc = world.serve().await;
    for _ in 0..50 {
        if !log.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!log.exists(), "a log three days past its gateway's end is removed");
    assert!(bob_log.is_file(), "a running gateway's log stays");
    assert_eq!(svc.gateway(&bob).await["state"], "running");
    svc.kill().await;
}

/// The bytes of every file under `dir`.
fn walk_sizes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut dirs = vec![dir.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().filter_map(|e| e.ok()) {
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => dirs.push(entry.path()),
                Ok(kind) if kind.is_file() => total += entry.metadata().map(|m| m.len()).unwrap_or(0),
                _ => {}
            }
        }
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_remote_backend_runs_the_same_lifecycle_on_an_e2b_compatible_service_and_across_a_restart() {
    let fake = svc_simulator::sandboxes::FakeSandboxes::default();
    let base = fake.spawn().await.expect("fake sandbox service");
    let world =
        World::new(&format!("backend = \"remote\"\nremote_url = \"{base}\"\nremote_envd_url = \"{base}/envd/{{id}}\""));
    let (_, alice) = world.account("alice", "1", "gateway");
    let env = [("SVC_AGENTBOX_REMOTE_KEY", svc_simulator::sandboxes::SANDBOX_API_KEY)];
    let args = ["--public-url", "https://svc.example"];
    let svc = world.serve_with(&env, &args).await;

    let id = svc.start(&alice, "analyst").await.1["id"].as_str().expect("id").to_owned();
    svc.wait_for(&alice, "running").await;
    let (_, sandbox) = fake.sandboxes().into_iter().next().expect("a remote sandbox");
    assert_eq!(sandbox.metadata["svc_gateway"], id.as_str());
    assert_eq!(sandbox.gateway_env["SVC_API_URL"], "https://svc.example", "it reaches svc at its public address");
    let key = sandbox.gateway_env["SVC_API_TOKEN"].clone();
    assert!(key.starts_with("svck_"));
    assert!(sandbox.files.contains_key("/home/agent/.openclaw/openclaw.json"));
    let events = svc.logs_until(&alice, None, "fake gateway listening").await;
    assert!(events.iter().any(|(_, l)| l.contains("sandbox created for template analyst")), "{events:?}");

    // svc dies; the new process finds the sandbox by its metadata and watches it again.
    svc.kill().await;
    let svc = world.serve_with(&env, &args).await;
    assert_eq!(svc.gateway(&alice).await["state"], "running");
    svc.logs_until(&alice, None, "svc restarted; watching again").await;

    // A crash there is seen here.
    fake.crash(&id);
    let failed = svc.wait_for(&alice, "failed").await;
    assert_eq!(failed["reason"], "the gateway exited", "{failed}");
    assert!(fake.sandboxes().is_empty(), "the remote sandbox is killed");
    assert_eq!(svc.call("GET", "/api/agentbox/gateway", &key, None).await.0, 401, "its key is revoked");

    // And an ordinary start and stop.
    svc.start(&alice, "degen").await;
    svc.wait_for(&alice, "running").await;
    assert_eq!(svc.call("POST", "/api/agentbox/gateway/stop", &alice, None).await.0, 200);
    let stopped = svc.wait_for(&alice, "stopped").await;
    assert_eq!(stopped["reason"], "stopped by its owner");
    assert!(fake.sandboxes().is_empty());
    svc.kill().await;

    // Without its key the remote backend is off, and says why.
    let svc = world.serve_with(&[], &args).await;
    let (status, body) = svc.start(&alice, "analyst").await;
    assert_eq!(status, 503);
    assert!(body["detail"].as_str().is_some_and(|d| d.contains("SVC_AGENTBOX_REMOTE_KEY")), "{body}");
    svc.kill().await;
}
