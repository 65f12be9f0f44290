//! `svc pay` on Solana against the real binary: it pays a route of a default svc (verify-only)
//! and gets the answer, reading the blockhash and the mint from a node when given one; a bad
//! key is named as one and never echoed.

mod support;

use std::process::Output;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use base64::Engine as _;
use serde_json::{Value, json};

/// The x402 vectors' public Solana test payer (seed `4c0883a6...`), as the JSON byte array
/// `solana-keygen` writes (seed, then public key).
const PAYER_JSON: &str = "[76,8,131,166,145,2,147,125,98,49,71,27,93,187,98,4,254,81,41,97,112,130,121,42,228,104,\
    208,26,63,54,35,24,128,200,192,47,216,82,103,9,175,244,182,36,146,217,114,89,64,238,81,44,154,211,109,73,242,223,\
    142,110,5,38,135,93]";
/// The same key as base58 of its 64 bytes, as Phantom and `solana-keygen` export it.
const PAYER_BASE58: &str = "2XAnC1UuoiLJxbjCq2YxSWfyGSLTGtSCqNpGpMgspYeFh35r4CCqCLNGZA7N1LoyxoXnXXyCwcqkQud8pa5QriQC";
/// Its address.
const PAYER: &str = "9fijMemJYwXS5QD85Qxsq7iKqvSebgb6LvpGftgkeigk";
const SOLANA: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const TOKEN_PROGRAM: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";

/// A default `svc serve` (verify-only, Solana offered) over a fresh directory, and a paid
/// route of its simulated market.
struct World {
    dir: tempfile::TempDir,
    svc: support::Serving,
    route: String,
}

impl World {
    async fn new() -> World {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().expect("temp dir");
        let config = dir.path().join("svc.toml");
        std::fs::write(&config, "").expect("config");
        let svc = support::serve(&dir.path().join("data"), &config, &[], &[]).await;
        let simulator = svc.simulator.clone().expect("the simulated market's address");
        let world: Value = reqwest::get(&simulator).await.expect("simulator").json().await.expect("json");
        let mint = world["launchpad"]["coins"][0]["mint"].as_str().expect("a launchpad coin").to_owned();
        World { dir, svc, route: format!("/api/x402/svc-tools/launchpad/coin/{mint}") }
    }

    /// `svc pay GET <route>` with `env` and `args`, nothing else from the environment.
    async fn pay(&self, env: &[(&str, &str)], args: &[&str]) -> Output {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_svc"))
            .args(["pay", "GET", self.route.as_str(), "--url", self.svc.base.as_str()])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .envs(env.iter().copied())
            .output()
            .await
            .expect("svc pay")
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn svc_pay_on_solana_pays_a_verify_only_svc_and_gets_the_answer() {
    let world = World::new().await;
    let out = world.pay(&[("SVC_PAYER_SOLANA_KEY", PAYER_JSON)], &["--network", "solana"]).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let answer: Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    assert_eq!(answer["status"], 200, "{stdout}");
    assert_eq!(answer["payment_response"]["network"], SOLANA);
    assert_eq!(answer["payment_response"]["payer"], PAYER);
    assert!(answer["body"]["mint"].is_string(), "the route's answer: {stdout}");
    assert!(stderr.contains("placeholder blockhash"), "no node given, said so: {stderr}");

    // A CAIP-2 id as the challenge lists it, and the base58 form of the key: paid again (a
    // new nonce makes it a new payment).
    let out = world.pay(&[("SVC_PAYER_SOLANA_KEY", PAYER_BASE58)], &["--network", SOLANA]).await;
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!((answer["status"].as_u64(), answer["payment_response"]["payer"].as_str()), (Some(200), Some(PAYER)));
}

/// A Solana node double: answers `getLatestBlockhash` and `getAccountInfo` (USDC's mint, an
/// SPL Token mint of 6 decimals) and records what it was asked.
async fn fake_node(asked: Arc<Mutex<Vec<Value>>>) -> String {
    async fn rpc(State(asked): State<Arc<Mutex<Vec<Value>>>>, Json(call): Json<Value>) -> Json<Value> {
        asked.lock().expect("asked").push(call.clone());
        let result = match call["method"].as_str() {
            Some("getLatestBlockhash") => json!({
                "context": {"slot": 1},
                "value": {"blockhash": "AEfG19HkBEptPUkVN3MpETgCTuUxvTM2q75pyHq6YfDF", "lastValidBlockHeight": 150},
            }),
            Some("getAccountInfo") if call["params"][0] == USDC => {
                let mut mint = [0u8; 82];
                mint[44] = 6;
                mint[45] = 1;
                let data = base64::engine::general_purpose::STANDARD.encode(mint);
                json!({"context": {"slot": 1}, "value": {"owner": TOKEN_PROGRAM, "data": [data, "base64"], "lamports": 1, "executable": false}})
            }
            _ => return Json(json!({"jsonrpc": "2.0", "id": call["id"], "error": {"code": -32601, "message": "no"}})),
        };
        Json(json!({"jsonrpc": "2.0", "id": call["id"], "result": result}))
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    let app = axum::Router::new().route("/", axum::routing::post(rpc)).with_state(asked);
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn svc_pay_on_solana_reads_the_blockhash_and_the_mint_from_the_node_given() {
    let world = World::new().await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let node = fake_node(Arc::clone(&asked)).await;
    let out = world.pay(&[("SVC_PAYER_SOLANA_KEY", PAYER_BASE58), ("SVC_SOLANA_RPC_URL", &node)], &[]).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let answer: Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    assert_eq!(answer["status"], 200, "only the Solana key set: paid on Solana");
    assert_eq!(answer["payment_response"]["network"], SOLANA);
    assert!(!stderr.contains("placeholder"), "{stderr}");
    let methods: Vec<String> = asked
        .lock()
        .expect("asked")
        .iter()
        .map(|call| format!("{} {}", call["method"].as_str().unwrap_or(""), call["params"][0]))
        .collect();
    assert_eq!(
        methods,
        [format!("getAccountInfo \"{USDC}\""), r#"getLatestBlockhash {"commitment":"confirmed"}"#.to_owned()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_solana_key_is_named_as_one_exits_non_zero_and_is_never_echoed() {
    let world = World::new().await;
    // A base58 string of the right look whose public half is not its seed's, and a byte
    // array one byte short.
    let wrong_half = format!("{}{}", &PAYER_BASE58[..PAYER_BASE58.len() - 1], "D");
    let short = PAYER_JSON.replace("[76,", "[");
    for key in [wrong_half.as_str(), short.as_str(), "hunter2-not-a-key"] {
        let out = world.pay(&[("SVC_PAYER_SOLANA_KEY", key)], &["--network", "solana"]).await;
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(!out.status.success(), "exits non-zero: {stdout}");
        assert!(stderr.contains("SVC_PAYER_SOLANA_KEY is not a Solana key: expected"), "{stderr}");
        let secret_part = &key[1..key.len().min(17)];
        assert!(!stderr.contains(secret_part) && !stdout.contains(secret_part), "the key is not echoed: {stderr}");
    }
    let out = world.pay(&[], &["--network", "solana"]).await;
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("set SVC_PAYER_SOLANA_KEY"), "{}", text(&out.stderr));
}
