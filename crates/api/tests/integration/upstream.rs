//! Data routes answered through the real vendor adapters, against the simulated market: a
//! paid call gets schema-valid data; a vendor failure is a clear 502/504 and charges nothing.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use svc_simulator::Fault;
use svc_upstream::Vendor;

use crate::support::{Sample, TestApp, assert_error, assert_matches_schema};

const COIN: &str = "/api/x402/svc-tools/launchpad/coin/{mint}";

fn coin_uri(mint: &str) -> String {
    COIN.replace("{mint}", mint)
}

/// Valid calls of the launchpad route, for the catalogue walk.
pub(crate) fn samples(app: &TestApp) -> Vec<Sample> {
    let mint = &app.sim.world.coins()[0].mint;
    vec![Sample { route: "infra.launchpad_coin", method: Method::GET, uri: coin_uri(mint), body: None }]
}

#[tokio::test]
async fn a_paid_launchpad_lookup_answers_the_coins_live_state() {
    let app = TestApp::new().await;
    let coin = app.sim.world.coins()[3].clone();
    let reply = app.pay_get(&coin_uri(&coin.mint), 1).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(reply.headers.contains_key("payment-response"));
    let body = reply.json();
    assert_matches_schema("get", COIN, &body);
    let state = app.sim.world.coin_state(&coin);
    assert_eq!(body["mint"], coin.mint);
    assert_eq!(body["symbol"], coin.symbol);
    assert_eq!(body["virtual_sol_reserves"], state.virtual_sol_reserves);
    assert_eq!(body["complete"], state.complete);
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn an_unknown_mint_is_a_404_and_charges_nothing() {
    let app = TestApp::new().await;
    let unknown = bs58::encode([7u8; 32]).into_string();
    let reply = app.pay_get(&coin_uri(&unknown), 2).await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    assert!(reply.text().contains(&unknown));
    assert!(reply.headers.get("payment-response").is_none());
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_failing_vendor_is_a_502_that_charges_nothing_and_the_payment_works_again() {
    let app = TestApp::new().await;
    let uri = coin_uri(&app.sim.world.coins()[0].mint);
    let header = app.payment_for(&Method::GET, &uri, None, 3).await;
    for _ in 0..3 {
        app.sim.faults.push("launchpad", Fault::Status { status: 500, retry_after: None });
    }
    let send =
        || app.send(Request::get(&uri).header("payment-signature", &header).body(Body::empty()).expect("request"));
    let failed = send().await;
    assert_error(&failed, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(failed.json()["vendor"], "launchpad");
    assert!(failed.headers.get("payment-response").is_none());
    assert_eq!(app.paid_calls().await, 0);

    let retried = send().await;
    assert_eq!(retried.status, StatusCode::OK, "{}", retried.text());
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn a_rate_limited_vendor_is_retried_within_the_call() {
    let app = TestApp::new().await;
    app.sim.faults.push("launchpad", Fault::Status { status: 429, retry_after: Some(0) });
    let reply = app.pay_get(&coin_uri(&app.sim.world.coins()[1].mint), 4).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(app.sim.faults.log().len(), 2);
}

#[tokio::test]
async fn a_slow_vendor_is_a_504() {
    let app = TestApp::with(crate::support::Setup {
        upstreams: Box::new(|c| c.vendor_mut(Vendor::Launchpad).timeout = std::time::Duration::from_millis(100)),
        ..Default::default()
    })
    .await;
    app.sim.faults.push("launchpad", Fault::Delay(std::time::Duration::from_millis(500)));
    let reply = app.pay_get(&coin_uri(&app.sim.world.coins()[2].mint), 5).await;
    assert_error(&reply, StatusCode::GATEWAY_TIMEOUT, "upstream_timeout");
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn an_invalid_mint_never_reaches_the_vendor() {
    let app = TestApp::new().await;
    for bad in ["not-base58!", "..%2f..%2fadmin", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"] {
        let reply = app.get(&coin_uri(bad)).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {}", reply.text());
    }
    assert!(app.sim.faults.log().is_empty());
}

#[test]
#[should_panic(expected = "off-schema")]
fn the_schema_check_refuses_an_answer_missing_a_field() {
    assert_matches_schema("get", COIN, &serde_json::json!({"mint": "x"}));
}
