//! The remote backend against a fake E2B-compatible service (the simulator's): every step of a
//! sandbox's life through the control plane and the sandbox's agent, a restart that finds its
//! sandboxes again, a crash, a refused key.

use std::time::Duration;

use svc_agentbox::backend::{Backend, FileSpec, ProcSpec, SandboxSpec, SandboxStatus};
use svc_agentbox::remote::{RemoteBackend, RemoteConfig};
use svc_simulator::sandboxes::{FakeSandboxes, SANDBOX_API_KEY};

fn config(base: &str, key: &str) -> RemoteConfig {
    RemoteConfig {
        api_url: base.to_owned(),
        api_key: key.to_owned(),
        template: "svc-agent".to_owned(),
        envd_url: format!("{base}/envd/{{id}}"),
        svc_url: "https://svc.example/".to_owned(),
        node: "node-a".to_owned(),
        lifetime: Duration::from_secs(3600),
    }
}

const SPEC: SandboxSpec = SandboxSpec { memory_mb: 2048, pids_max: 512, home_mb: 512, tmp_mb: 256, log_cap_mb: 16 };

#[tokio::test]
async fn a_remote_sandbox_lives_its_whole_life_through_the_service_and_is_found_again_after_a_restart() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let fake = FakeSandboxes::default();
    let base = fake.spawn().await.expect("fake");
    let backend = RemoteBackend::new(config(&base, SANDBOX_API_KEY)).expect("backend");
    assert_eq!(backend.svc_url(), "https://svc.example", "sandboxes reach svc at its public address");

    backend.create("gw_a", SPEC).await.expect("create");
    let (remote_id, sandbox) = fake.sandboxes().into_iter().next().expect("one sandbox");
    assert_eq!(
        (sandbox.metadata["svc_gateway"].as_str(), sandbox.metadata["svc_node"].as_str()),
        (Some("gw_a"), Some("node-a"))
    );

    let files = [FileSpec { path: ".openclaw/openclaw.json".into(), contents: b"{\"gateway\":{}}".to_vec() }];
    backend.write_files("gw_a", &files).await.expect("files");
    let secret = "svck_secret_value";
    let process = ProcSpec {
        argv: vec!["/opt/agent/node".into(), "gateway.mjs".into()],
        env: vec![("SVC_API_TOKEN".into(), secret.into()), ("HOME".into(), "/home/agent".into())],
    };
    backend.spawn("gw_a", &process).await.expect("spawn");
    let sandbox = &fake.sandboxes()[&remote_id];
    assert_eq!(sandbox.files["/home/agent/.openclaw/openclaw.json"], b"{\"gateway\":{}}");
    assert_eq!(sandbox.gateway_env["SVC_API_TOKEN"], secret, "secrets go by environment");
    assert_eq!(sandbox.gateway_argv, ["/opt/agent/node", "gateway.mjs"]);
    assert!(!sandbox.gateway_argv.iter().any(|a| a.contains(secret)), "never on the command line");

    assert_eq!(backend.get("gw_a", 18789, "/health").await.expect("probe"), 200);
    assert_eq!(backend.status("gw_a").await, SandboxStatus::Running { memory_bytes: None });
    backend.note("gw_a", "running").await;
    let log = backend.read_log("gw_a", 0, 1 << 16).await.expect("log");
    let lines: Vec<&str> = log.lines.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(lines, ["fake gateway listening on 127.0.0.1:18789 (2 variables)", "[svc] running"]);
    assert_eq!(backend.log_len("gw_a").await, log.next);
    let resumed = backend.read_log("gw_a", log.lines[0].0, 1 << 16).await.expect("log");
    assert_eq!(resumed.lines.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>(), ["[svc] running"]);

    // svc restarts: a new backend finds the sandbox by its metadata and re-connects to it.
    let restarted = RemoteBackend::new(config(&base, SANDBOX_API_KEY)).expect("backend");
    assert_eq!(restarted.sandboxes().await.expect("list"), ["gw_a"]);
    assert_eq!(restarted.attach("gw_a").await.expect("attach"), SandboxStatus::Running { memory_bytes: None });
    assert_eq!(restarted.attach("gw_missing").await.expect("attach"), SandboxStatus::Missing);

    // A crash shows; a stop ends the gateway; destroy kills the sandbox, twice harmlessly.
    fake.crash("gw_a");
    assert!(matches!(restarted.status("gw_a").await, SandboxStatus::Exited(_)));
    restarted.terminate("gw_a", Duration::from_secs(1)).await.expect("terminate");
    restarted.destroy("gw_a").await.expect("destroy");
    restarted.destroy("gw_a").await.expect("again");
    assert!(fake.sandboxes().is_empty());
    assert!(restarted.sandboxes().await.expect("list").is_empty());
}

#[tokio::test]
async fn a_refused_key_or_an_unknown_sandbox_is_an_error_never_a_silent_success() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let fake = FakeSandboxes::default();
    let base = fake.spawn().await.expect("fake");
    let wrong = RemoteBackend::new(config(&base, "wrong-key")).expect("backend");
    let refused = wrong.create("gw_b", SPEC).await.expect_err("refused");
    assert!(refused.to_string().contains("401"), "{refused}");
    assert!(!refused.to_string().contains("wrong-key"), "the key is never in an error");
    assert!(wrong.sandboxes().await.is_err());
    let backend = RemoteBackend::new(config(&base, SANDBOX_API_KEY)).expect("backend");
    assert!(backend.spawn("gw_unknown", &ProcSpec { argv: vec!["x".into()], env: vec![] }).await.is_err());
    assert_eq!(backend.status("gw_unknown").await, SandboxStatus::Missing);
    assert!(
        format!("{:?}", config(&base, "secret-key")).contains("api_url")
            && !format!("{:?}", config(&base, "secret-key")).contains("secret-key")
    );
}
