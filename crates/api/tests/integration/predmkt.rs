//! Prediction-market routes, paid, against the simulated catalogue and order books.

use axum::http::{Method, StatusCode};
use serde_json::json;
use svc_simulator::Fault;
use svc_simulator::world::Planted;

use crate::support::{Reply, Sample, TestApp, assert_error, assert_invalid_at, assert_matches_schema};

const ROOT: &str = "/api/x402/svc-tools/predmkt";

fn uri(route: &str) -> String {
    format!("{ROOT}/{route}")
}

/// Valid calls of every prediction-market route, for the catalogue walk.
pub(crate) fn samples(app: &TestApp) -> Vec<Sample> {
    let market = &app.sim.world.pred_markets()[0].condition_id;
    let post = |route: &'static str, path: &str, body: serde_json::Value| Sample {
        route,
        method: Method::POST,
        uri: uri(path),
        body: Some(body.to_string()),
    };
    vec![
        post("predmkt.search", "search", json!({"keyword": "bitcoin", "limit": 5})),
        post("predmkt.quote", "quote", json!({"condition_id": market, "outcome": "No"})),
        post("predmkt.orderbook", "orderbook", json!({"condition_id": market})),
        post("predmkt.compare", "compare", json!({"condition_id": market})),
        post("predmkt.arbitrage", "arbitrage", json!({"min_spread": 0.5, "limit": 5})),
    ]
}

async fn pay(app: &TestApp, route: &str, body: Option<serde_json::Value>, nonce: u8) -> Reply {
    let body = body.map(|b| b.to_string());
    app.pay(&Method::POST, &uri(route), body.as_deref(), nonce).await
}

#[tokio::test]
async fn a_paid_search_answers_markets_with_decoded_outcomes() {
    let app = TestApp::new().await;
    let reply = pay(&app, "search", Some(json!({"keyword": "Fed"})), 1).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_matches_schema("post", "/api/x402/svc-tools/predmkt/search", &body);
    let markets = body["markets"].as_array().expect("markets");
    assert!(markets.len() >= 4, "{body}");
    assert!(markets.iter().all(|m| m["outcomes"][0]["name"] == "Yes" && m["outcomes"][1]["token_id"].is_string()));
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn the_arbitrage_route_without_a_body_finds_the_planted_binary_market() {
    let app = TestApp::new().await;
    let reply = app.pay(&Method::POST, &uri("arbitrage"), None, 2).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_matches_schema("post", "/api/x402/svc-tools/predmkt/arbitrage", &body);
    let planted =
        app.sim.world.pred_markets().iter().find(|m| m.planted == Some(Planted::BinaryArbitrage)).expect("planted");
    let binary = body["opportunities"]
        .as_array()
        .expect("list")
        .iter()
        .find(|o| o["kind"] == "binary")
        .cloned()
        .expect("the planted binary market is found");
    assert_eq!(binary["id"], planted.condition_id.as_str());
    assert_eq!(binary["total_cost"], 0.97);
    assert_eq!(binary["spread_pct"], 3.0);
    assert_eq!(binary["legs"][0]["token_id"], planted.token_ids[0].as_str());
    assert_eq!(body["min_spread"], 1.0);
}

#[tokio::test]
async fn a_quote_of_an_outcome_the_market_lacks_is_a_404_and_charges_nothing() {
    let app = TestApp::new().await;
    let market = app.sim.world.pred_markets()[1].condition_id.clone();
    let reply = pay(&app, "quote", Some(json!({"condition_id": market, "outcome": "Maybe"})), 3).await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    assert!(reply.text().contains("Yes, No"), "{}", reply.text());
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_malformed_condition_id_is_refused_before_any_vendor_call() {
    let app = TestApp::new().await;
    let reply = app.post_json(&uri("compare"), r#"{"condition_id": "0x1234"}"#).await;
    assert_invalid_at(&reply, &[json!("body"), json!("condition_id")]);
    assert!(app.sim.faults.log().is_empty());
}

#[tokio::test]
async fn a_failing_order_book_api_is_a_502_that_charges_nothing() {
    let app = TestApp::new().await;
    let market = app.sim.world.pred_markets()[0].condition_id.clone();
    for _ in 0..3 {
        app.sim.faults.push("predmkt-clob", Fault::Status { status: 500, retry_after: None });
    }
    let reply = pay(&app, "orderbook", Some(json!({"condition_id": market})), 4).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(reply.json()["vendor"], "predmkt");
    assert!(reply.headers.get("payment-response").is_none());
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_rate_limited_catalogue_is_retried_within_the_call() {
    let app = TestApp::new().await;
    let market = app.sim.world.pred_markets()[2].condition_id.clone();
    app.sim.faults.push("predmkt-gamma", Fault::Status { status: 429, retry_after: Some(0) });
    let reply = pay(&app, "compare", Some(json!({"condition_id": market})), 5).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let log = app.sim.faults.log();
    assert_eq!(log.iter().filter(|l| l.starts_with("GET /predmkt-gamma/markets")).count(), 2, "{log:?}");
    assert_eq!(app.paid_calls().await, 1);
}
