//! Swap, DeFi, price and shield routes end to end against the simulated market: paid calls
//! answer schema-valid data computed from the world; vendor failures charge nothing.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use svc_simulator::Fault;
use svc_upstream::Vendor;

use crate::support::{Reply, Sample, Setup, TestApp, assert_error, assert_matches_schema};

const TOOLS: &str = "/api/x402/svc-tools";
const SWAP: &str = "/api/x402/svc-tools/swap-quote";
const SOL: &str = "So11111111111111111111111111111111111111112";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const JUP: &str = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";

fn sample(route: &'static str, path: &str, body: Value) -> Sample {
    Sample { route, method: Method::POST, uri: format!("{TOOLS}{path}"), body: Some(body.to_string()) }
}

/// Valid calls of every route of this family, for the catalogue walk.
pub(crate) fn samples(_app: &TestApp) -> Vec<Sample> {
    vec![sample(
        "infra.swap_quote",
        "/swap-quote",
        json!({"input_mint": SOL, "output_mint": USDC, "amount": 1_000_000_000u64}),
    )]
}

async fn post(app: &TestApp, uri: &str, body: &Value, nonce: u8) -> Reply {
    app.pay(&Method::POST, uri, Some(&body.to_string()), nonce).await
}

fn quote_of<'a>(body: &'a Value, aggregator: &str) -> &'a Value {
    body["quotes"].as_array().and_then(|q| q.iter().find(|q| q["aggregator"] == aggregator)).expect("quote listed")
}

#[tokio::test]
async fn a_swap_quote_asks_both_aggregators_and_returns_the_preferred_one() {
    let app = TestApp::new().await;
    let body = json!({"input_mint": SOL, "output_mint": JUP, "amount": 2_000_000_000u64, "slippage_bps": 100});
    let reply = post(&app, SWAP, &body, 1).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_matches_schema("post", SWAP, &answer);
    assert_eq!(answer["aggregator"], "jupiter");
    assert_eq!(answer["in_amount"], "2000000000");
    assert_eq!(answer["slippage_bps"], 100);
    for aggregator in ["jupiter", "okx"] {
        assert_eq!(quote_of(&answer, aggregator)["status"], "ok", "{answer}");
    }
    assert_eq!(quote_of(&answer, "jupiter")["out_amount"], answer["out_amount"]);
    let out: u128 = answer["out_amount"].as_str().and_then(|a| a.parse().ok()).expect("amount");
    let floor: u128 = answer["other_amount_threshold"].as_str().and_then(|a| a.parse().ok()).expect("threshold");
    assert_eq!(floor, out * 9_900 / 10_000);
    // 2 SOL at the world's prices, less fees and impact, in JUP's 6 decimals.
    let world = &app.sim.world;
    let (sol, jup) = (world.sol_token(SOL).expect("sol"), world.sol_token(JUP).expect("jup"));
    let fair = 2.0 * world.sol_token_usd(sol) / world.sol_token_usd(jup) * 1e6;
    assert!((out as f64) < fair && (out as f64) > fair * 0.99, "{out} vs {fair}");
    let log = app.sim.faults.log();
    assert!(log.iter().any(|l| l.starts_with("GET /jupiter/swap/v1/quote?")), "{log:?}");
    assert!(log.iter().any(|l| l.starts_with("GET /okx/api/v6/dex/aggregator/quote?")), "{log:?}");

    let okx = json!({"input_mint": SOL, "output_mint": JUP, "amount": 2_000_000_000u64, "preferred_aggregator": "okx"});
    let reply = post(&app, SWAP, &okx, 2).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["aggregator"], "okx");
    assert_eq!(reply.json()["route"].as_array().map(Vec::len), Some(1));
    assert_eq!(app.paid_calls().await, 2);
}

#[tokio::test]
async fn a_failing_preferred_aggregator_falls_back_to_the_other() {
    let app = TestApp::new().await;
    for _ in 0..3 {
        app.sim.faults.push("jupiter", Fault::Status { status: 503, retry_after: None });
    }
    let body = json!({"input_mint": USDC, "output_mint": SOL, "amount": 250_000_000u64});
    let reply = post(&app, SWAP, &body, 3).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["aggregator"], "okx");
    assert_eq!(quote_of(&answer, "jupiter")["status"], "error");
    assert_eq!(quote_of(&answer, "jupiter")["out_amount"], Value::Null);
}

#[tokio::test]
async fn a_slow_aggregator_is_reported_as_timed_out() {
    let app = TestApp::new().await;
    app.sim.faults.push("okx", Fault::Delay(std::time::Duration::from_millis(2_500)));
    let body = json!({"input_mint": SOL, "output_mint": USDC, "amount": 5_000_000u64, "preferred_aggregator": "okx"});
    let reply = post(&app, SWAP, &body, 4).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["aggregator"], "jupiter");
    assert_eq!(quote_of(&answer, "okx")["status"], "timeout");
}

#[tokio::test]
async fn a_bad_signing_key_is_refused_by_the_vendor_and_never_shown() {
    let app = TestApp::with(Setup {
        upstreams: Box::new(|c| {
            c.vendor_mut(Vendor::Okx).key = Some("simulated-key:wrong-secret:simulated-passphrase".into())
        }),
        ..Default::default()
    })
    .await;
    let body = json!({"input_mint": SOL, "output_mint": USDC, "amount": 7_000_000u64, "preferred_aggregator": "okx"});
    let reply = post(&app, SWAP, &body, 5).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["aggregator"], "jupiter");
    assert_eq!(quote_of(&reply.json(), "okx")["status"], "error");
    assert!(!reply.text().contains("wrong-secret"));

    // With the other aggregator down too, the call fails, names the family, charges nothing.
    for _ in 0..3 {
        app.sim.faults.push("jupiter", Fault::Status { status: 500, retry_after: None });
    }
    let again = json!({"input_mint": SOL, "output_mint": USDC, "amount": 7_000_001u64, "preferred_aggregator": "okx"});
    let failed = post(&app, SWAP, &again, 6).await;
    assert_error(&failed, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(failed.json()["vendor"], "okx");
    assert!(!failed.text().contains("wrong-secret"));
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn a_rate_limited_aggregator_is_retried_and_an_unknown_mint_is_a_free_404() {
    let app = TestApp::new().await;
    app.sim.faults.push("jupiter", Fault::Status { status: 429, retry_after: Some(0) });
    let body = json!({"input_mint": SOL, "output_mint": USDC, "amount": 9_000_000u64});
    let reply = post(&app, SWAP, &body, 7).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["aggregator"], "jupiter");
    let jupiter_calls = app.sim.faults.log().iter().filter(|l| l.contains("/jupiter/")).count();
    assert_eq!(jupiter_calls, 2);

    let unknown = bs58::encode([9u8; 32]).into_string();
    let body = json!({"input_mint": unknown, "output_mint": USDC, "amount": 1_000u64});
    let reply = post(&app, SWAP, &body, 8).await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.paid_calls().await, 1);
}
