//! End to end with the real agent gateway: `svc agentbox prepare`'s snapshot (OpenClaw on
//! Node.js 24) in a real sandbox. A question sent through the gateway's own chat endpoint makes
//! the agent call svc's LLM proxy, whose simulated model picks the skill by the question's
//! words; the agent reads its SKILL.md, runs the route's `curl` line with its key, and the
//! model quotes svc's answer. A user's direct message, played on the simulated chat platform, goes through
//! svc's relay and Bot-API shim to the agent, and its answer comes back out to the chat. Then
//! the gateway is stopped and nothing is left. Through all of it the sandbox holds placeholders
//! of its credentials, never the real ones.
//!
//! The snapshot is 800 MB from the npm registry, so this test runs where one is prepared:
//! `SVC_TEST_AGENT_SNAPSHOT=<dir> cargo test -p svc-server --test agent_gateway -- --ignored`
//! (`.ci/run` prepares one, cached between runs, and runs it).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a prepared agent gateway snapshot in SVC_TEST_AGENT_SNAPSHOT"]
async fn the_real_agent_gateway_starts_answers_through_the_llm_proxy_calls_svc_and_stops_clean() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let snapshot = PathBuf::from(std::env::var("SVC_TEST_AGENT_SNAPSHOT").expect("SVC_TEST_AGENT_SNAPSHOT"));
    assert!(snapshot.join("snapshot.json").is_file(), "run `svc agentbox prepare --dir {}` first", snapshot.display());
    let dir = tempfile::tempdir().expect("tempdir");
    let _leftovers = Leftovers(dir.path().to_string_lossy().into_owned());
    let data = dir.path().join("data");
    let config = dir.path().join("svc.toml");
    // Room for the first gateway and one warm one.
    let settings = "health_timeout_secs = 240\npool_size = 1\nmemory_budget_mb = 4096\nidle_sleep_secs = 6";
    std::fs::write(&config, format!("[agentbox]\nsnapshot = \"{}\"\n{settings}\n", snapshot.display()))
        .expect("config");
    let cli = |args: &[&str]| support::cli(&data, args);
    let account = cli(&["accounts", "create", "--name", "e2e"]);
    cli(&["credits", "grant", &account, "5"]);
    let key = cli(&["keys", "create", &account, "--scopes", "gateway"]);

    let support::Serving { child: mut svc, base, simulator } = support::serve(&data, &config, &[], &[]).await;
    let http = reqwest::Client::new();
    let get = |path: &str| {
        let request = http.get(format!("{base}{path}")).header("X-API-Key", &key);
        async move { request.send().await.expect("send").json::<Value>().await.expect("json") }
    };

    // The account's chat bot, on the simulated Bot API: wired into the gateway at its start.
    let simulator = simulator.expect("the simulated market's address in svc's log");
    let bot_token = "7001234567:AAHsimulatedTokenOfTheEndToEndTest_x";
    let saved = http
        .put(format!("{base}/api/agentbox/telegram/config"))
        .header("X-API-Key", &key)
        .json(&json!({"bot_token": bot_token, "dm_policy": "open", "group_policy": "allowlist"}))
        .send()
        .await
        .expect("config");
    assert_eq!(saved.status(), 200, "{}", saved.text().await.unwrap_or_default());

    let (id, view, start_secs) = start_running(&http, &base, &key, "trader").await;
    let memory_mib = view["memory_bytes"].as_u64().unwrap_or(0) >> 20;
    eprintln!("agent gateway: running {start_secs:.1} s after the start request, {memory_mib} MiB");

    // No real credential inside: the gateway's processes hold placeholders of the key, the LLM
    // token and the bot token (the test runs as root, so it reads their environments).
    let llm_token = http
        .post(format!("{base}/api/account/llm-token"))
        .header("X-API-Key", &key)
        .send()
        .await
        .expect("llm token")
        .json::<Value>()
        .await
        .expect("json")["token"]
        .as_str()
        .expect("the account's LLM token")
        .to_owned();
    let environ = sandbox_environ(&id);
    assert!(environ.contains("SVC_API_TOKEN=svck_") && environ.contains("TELEGRAM_BOT_TOKEN=7001234567:"));
    assert!(!environ.contains(bot_token), "the bot token is not inside");
    assert!(!environ.contains(&llm_token), "the LLM token is not inside");

    // The simulated model acts as a model would: picks the skill by the words, reads its
    // SKILL.md, runs the route's curl line with the sandbox's key and quotes svc's answer.
    let said = ask(&data, &id, "What are the top picks right now?").await;
    assert!(said.contains("The tool answered:"), "the agent ran the tool and the model quoted it: {said}");
    assert!(
        said.contains("picks: {") && said.contains(r#""rank":1"#),
        "the tool was svc's Top Picks, called with the sandbox's key: {said}"
    );

    // svc saw both: proxied model calls and a credit-billed data call, on the account.
    let usage = get("/api/account/usage").await;
    assert!(usage["llm"]["calls"].as_u64().unwrap_or(0) >= 2, "the model was asked twice: {usage}");
    let credits = get("/api/account/credits?limit=50").await;
    let routes: Vec<&str> =
        credits["entries"].as_array().into_iter().flatten().filter_map(|e| e["route"].as_str()).collect();
    assert!(routes.contains(&"alpha.top_picks"), "{credits}");

    // A user's direct message through the chat platform reaches the agent through svc's relay
    // and shim; the agent answers through the LLM proxy, and the answer comes back out.
    let (answer, secs) = chat(&http, &simulator, bot_token, "hello, agent").await;
    eprintln!("agent gateway: answered in the chat {secs:.1} s after the message");
    assert!(!answer.contains("not running"), "the agent answered, not svc's automatic reply: {answer}");
    assert!(answer.contains("svc-alpha"), "a greeting gets what the agent can do, no failed tool call: {answer}");

    // The same question awake, then once idle sent it to sleep: the message wakes it, and the
    // answer comes about as fast.
    let (awake, awake_secs) = chat(&http, &simulator, bot_token, "Any whale alerts?").await;
    assert!(awake.contains("alerts"), "{awake}");
    let slept = Instant::now();
    while get("/api/agentbox/gateway").await["asleep"] != true {
        assert!(slept.elapsed() < Duration::from_secs(120), "never asleep: {}", get("/api/agentbox/gateway").await);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (woken, woken_secs) = chat(&http, &simulator, bot_token, "Any whale alerts?").await;
    assert!(woken.contains("alerts"), "{woken}");
    eprintln!("agent gateway: answered {awake_secs:.1} s awake, {woken_secs:.1} s when the message woke it");

    let stopped_at = Instant::now();
    http.post(format!("{base}/api/agentbox/gateway/stop")).header("X-API-Key", &key).send().await.expect("stop");
    loop {
        let view = get("/api/agentbox/gateway").await;
        if view["state"] == "stopped" {
            break;
        }
        assert!(stopped_at.elapsed() < Duration::from_secs(60), "not stopped: {view}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    eprintln!("agent gateway: stopped {:.1} s after the stop request", stopped_at.elapsed().as_secs_f64());
    assert!(!data.join("agentbox/sandboxes").join(&id).exists(), "its sandbox is removed");
    assert!(gateway_token(&id).is_none(), "no gateway process left");

    // An account without a chat bot gets a warm trader, booted while the first one ran: it
    // runs at once and answers with its owner's credentials.
    let owner = cli(&["accounts", "create", "--name", "warm"]);
    cli(&["credits", "grant", &owner, "5"]);
    let warm_key = cli(&["keys", "create", &owner, "--scopes", "gateway"]);
    let waited = Instant::now();
    loop {
        let templates = get("/api/agentbox/templates").await;
        let trader = templates["templates"].as_array().into_iter().flatten().find(|t| t["name"] == "trader");
        if trader.is_some_and(|t| t["warm"] == 1) {
            break;
        }
        assert!(waited.elapsed() < Duration::from_secs(300), "no warm trader after 300 s: {templates}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let (warm_id, _, warm_secs) = start_running(&http, &base, &warm_key, "trader").await;
    eprintln!("agent gateway: a warm one running {warm_secs:.2} s after the start request");
    let said = ask(&data, &warm_id, "Any whale alerts?").await;
    assert!(said.contains("The tool answered:") && said.contains("alerts"), "svc's whale alerts: {said}");
    svc.kill().await.expect("kill");
}

/// Plays a user's direct message to the bot on the simulated chat platform; the agent's answer
/// (the next message it sends to that chat) and the seconds it took.
async fn chat(http: &reqwest::Client, simulator: &str, bot: &str, text: &str) -> (String, f64) {
    let sent = || async {
        let sent: Value = http
            .get(format!("{simulator}/telegram/simulate/{bot}/sent"))
            .send()
            .await
            .expect("sent")
            .json()
            .await
            .expect("json");
        let to_user: Vec<String> = sent
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["chat"]["id"] == 555 || m["chat"]["id"] == "555")
            .map(|m| m["text"].as_str().unwrap_or_default().to_owned())
            .collect();
        to_user
    };
    let before = sent().await.len();
    support::play_user_message(http, simulator, bot, text).await;
    let asked = Instant::now();
    loop {
        if let Some(answer) = sent().await.get(before) {
            return (answer.clone(), asked.elapsed().as_secs_f64());
        }
        assert!(asked.elapsed() < Duration::from_secs(120), "no answer to {text:?} in the chat after 120 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Starts a gateway of `template` with `key` and waits until it runs: its id, its view and the
/// seconds from the request to running.
async fn start_running(http: &reqwest::Client, base: &str, key: &str, template: &str) -> (String, Value, f64) {
    let asked = Instant::now();
    let call = |request: reqwest::RequestBuilder| async move {
        request.header("X-API-Key", key).send().await.expect("send").json::<Value>().await.expect("json")
    };
    let started =
        call(http.post(format!("{base}/api/agentbox/gateway/start")).json(&json!({"template": template}))).await;
    let id = started["id"].as_str().unwrap_or_else(|| panic!("a gateway: {started}")).to_owned();
    loop {
        let view = call(http.get(format!("{base}/api/agentbox/gateway"))).await;
        if view["state"] == "running" {
            return (id, view, asked.elapsed().as_secs_f64());
        }
        assert!(view["state"] != "failed" && asked.elapsed() < Duration::from_secs(300), "not running: {view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Asks gateway `id` through its own chat endpoint (with its operator token, from its process
/// environment: the test runs as root); the agent's answer.
async fn ask(data: &std::path::Path, id: &str, question: &str) -> String {
    let token = gateway_token(id).expect("the gateway process and its token");
    let socket = data.join("agentbox/sandboxes").join(id).join("run/gateway.sock");
    let body = json!({"model": "openclaw", "messages": [{"role": "user", "content": question}]});
    let out = tokio::process::Command::new("curl")
        .args(["-s", "--max-time", "180", "--unix-socket"])
        .arg(&socket)
        .args(["-H", &format!("Authorization: Bearer {token}"), "-H", "Content-Type: application/json"])
        .args(["-d", &body.to_string(), "http://sandbox/v1/chat/completions"])
        .output()
        .await
        .expect("curl");
    let answer: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("the gateway's answer: {}", String::from_utf8_lossy(&out.stdout)));
    answer["choices"][0]["message"]["content"].as_str().unwrap_or_default().to_owned()
}

/// Ends the processes of sandboxes left under a test's directory when the test ends (svc is
/// killed, not stopped, and sandboxes outlive it by design): the warm pool's, or any a failed
/// test left.
struct Leftovers(String);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for group in std::fs::read_dir("/sys/fs/cgroup/freezer/svc-agentbox").into_iter().flatten().flatten() {
            let _ = std::fs::write(group.path().join("freezer.state"), "THAWED");
        }
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains(&self.0) {
                let _ = std::process::Command::new("kill").args(["-9", &entry.file_name().to_string_lossy()]).status();
            }
        }
    }
}

/// The environments of every process of gateway `id`'s sandbox, joined.
fn sandbox_environ(id: &str) -> String {
    let marker = format!("SVC_GATEWAY_ID={id}");
    let Ok(entries) = std::fs::read_dir("/proc") else { return String::new() };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|entry| {
            let environ = String::from_utf8_lossy(&std::fs::read(entry.path().join("environ")).ok()?).into_owned();
            environ.contains(&marker).then_some(environ)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The operator token in the environment of gateway `id`'s processes.
fn gateway_token(id: &str) -> Option<String> {
    let marker = format!("SVC_GATEWAY_ID={id}");
    std::fs::read_dir("/proc").ok()?.filter_map(|e| e.ok()).find_map(|entry| {
        let environ = std::fs::read(entry.path().join("environ")).ok()?;
        let vars: Vec<String> = environ.split(|b| *b == 0).map(|v| String::from_utf8_lossy(v).into_owned()).collect();
        vars.iter()
            .any(|v| v == &marker)
            .then(|| vars.iter().find_map(|v| v.strip_prefix("SVC_GATEWAY_TOKEN=").map(str::to_owned)))?
    })
}
