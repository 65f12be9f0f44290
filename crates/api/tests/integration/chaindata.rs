//! The chain-data proxy end to end: paid calls of every route answered from the simulated
//! vendor, hostile `{path}` values refused before anything leaves, and the vendor's failures
//! (rate limit, server error, bad key, refused query) answered without charging.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use svc_domain::Chain;
use svc_simulator::Fault;
use svc_simulator::world::{Scenario, WalletKind};
use svc_upstream::Vendor;

use crate::support::{Reply, Sample, Setup, TestApp, assert_error, assert_matches_schema};

const PREFIX: &str = "/api/x402/svc-tools/data-provider/chaindata/";

fn uri(path: &str) -> String {
    format!("{PREFIX}{path}")
}

/// A day range ending on the test clock's day (2026-11-22).
fn days() -> Value {
    json!({"from": "2026-11-21", "to": "2026-11-22"})
}

/// Valid calls of all 33 chain-data routes, for the catalogue walk.
pub(crate) fn samples(app: &TestApp) -> Vec<Sample> {
    let world = &app.sim.world;
    let sol_token = world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted").address.clone();
    let base_token = world.planted_token(Chain::Base, Scenario::Accumulated).expect("planted").address.clone();
    let trader = world
        .wallets()
        .iter()
        .find(|w| w.chain == Chain::Ethereum && w.kind == WalletKind::SmartTrader)
        .expect("trader")
        .address
        .clone();
    let fund = world
        .wallets()
        .iter()
        .find(|w| w.chain == Chain::Ethereum && w.kind == WalletKind::Fund)
        .and_then(|w| w.entity.clone())
        .expect("fund");
    let wallet = json!({"walletAddresses": [trader], "chain": "ethereum", "date": days()});
    let token = json!({"token_address": base_token, "chain": "base", "date": days()});
    let sol = json!({"token_address": sol_token, "chain": "solana"});
    let perp = json!({"token_symbol": "BTC", "date": days()});
    let routes: Vec<(&'static str, &'static str, Value)> = vec![
        ("chaindata.smart_money.netflow", "smart-money/netflow", json!({"chains": ["solana", "base"]})),
        ("chaindata.smart_money.holdings", "smart-money/holdings", json!({"chains": ["ethereum"]})),
        ("chaindata.smart_money.dex_trades", "smart-money/dex-trades", json!({"chains": ["solana"]})),
        ("chaindata.smart_money.agg_dca", "smart-money/agg-dca", json!({})),
        (
            "chaindata.smart_money.historical_holdings",
            "smart-money/historical-holdings",
            json!({"chains": ["base"], "date_range": days()}),
        ),
        ("chaindata.smart_money.perp_trades", "smart-money/perp-trades", json!({"only_new_positions": false})),
        ("chaindata.profiler.address_balances", "profiler/address/balances", json!({"entityId": fund})),
        ("chaindata.profiler.address_historical_balances", "profiler/address/historical-balances", wallet.clone()),
        ("chaindata.profiler.address_transactions", "profiler/address/transactions", wallet.clone()),
        ("chaindata.profiler.address_counterparties", "profiler/address/counterparties", wallet.clone()),
        ("chaindata.profiler.address_related_wallets", "profiler/address/related-wallets", wallet.clone()),
        ("chaindata.profiler.address_pnl_summary", "profiler/address/pnl-summary", wallet.clone()),
        ("chaindata.profiler.address_pnl", "profiler/address/pnl", wallet.clone()),
        ("chaindata.profiler.address_nft_holdings", "profiler/address/nft-holdings", wallet.clone()),
        ("chaindata.profiler.address_token_transfers", "profiler/address/token-transfers", wallet.clone()),
        ("chaindata.profiler.address_labels", "profiler/address/labels", wallet),
        ("chaindata.perp_leaderboard", "perp-leaderboard", json!({"date": days()})),
        (
            "chaindata.tgm.flow_intelligence",
            "tgm/flow-intelligence",
            json!({"token_address": base_token, "chain": "base", "timeframe": "1d"}),
        ),
        ("chaindata.tgm.who_bought_sold", "tgm/who-bought-sold", token.clone()),
        ("chaindata.tgm.dex_trades", "tgm/dex-trades", token.clone()),
        ("chaindata.tgm.transfers", "tgm/transfers", token.clone()),
        ("chaindata.tgm.holders", "tgm/holders", json!({"token_address": base_token, "chain": "base"})),
        ("chaindata.tgm.flows", "tgm/flows", token.clone()),
        ("chaindata.tgm.pnl_leaderboard", "tgm/pnl-leaderboard", token.clone()),
        ("chaindata.tgm.agg_dca", "tgm/agg-dca", sol.clone()),
        ("chaindata.tgm.token_screener", "tgm/token-screener", json!({"chains": ["solana"], "timeframe": "24h"})),
        ("chaindata.tgm.perp_screener", "tgm/perp-screener", json!({"date": days()})),
        ("chaindata.tgm.perp_trades", "tgm/perp-trades", perp.clone()),
        ("chaindata.tgm.perp_pnl_leaderboard", "tgm/perp-pnl-leaderboard", perp),
        (
            "chaindata.tgm.perp_positions",
            "tgm/perp-positions",
            json!({"token_symbol": "ETH", "label_type": "smart_money"}),
        ),
        (
            "chaindata.tgm.token_information",
            "tgm/token-information",
            json!({"token_address": sol_token, "chain": "solana", "timeframe": "1d"}),
        ),
        ("chaindata.tgm.indicators", "tgm/indicators", sol.clone()),
        (
            "chaindata.tgm.token_ohlcv",
            "tgm/token-ohlcv",
            json!({"token_address": base_token, "chain": "base", "timeframe": "1h"}),
        ),
    ];
    routes
        .into_iter()
        .map(|(route, path, payload)| Sample {
            route,
            method: Method::POST,
            uri: uri(path),
            body: Some(json!({ "payload": payload }).to_string()),
        })
        .collect()
}

async fn pay(app: &TestApp, path: &str, payload: Value, nonce: u8) -> Reply {
    app.pay(&Method::POST, &uri(path), Some(&json!({ "payload": payload }).to_string()), nonce).await
}

fn vendor_calls(app: &TestApp) -> usize {
    app.sim.faults.log().iter().filter(|l| l.starts_with("POST /chaindata/")).count()
}

#[tokio::test]
async fn every_route_has_a_sample_and_the_samples_cover_the_allowed_paths() {
    let app = TestApp::new().await;
    let sampled: std::collections::BTreeSet<String> =
        samples(&app).iter().map(|s| s.uri.trim_start_matches(PREFIX).to_owned()).collect();
    let allowed: std::collections::BTreeSet<String> =
        svc_catalogue::routes::chaindata::allowed_paths().into_iter().map(str::to_owned).collect();
    assert_eq!(sampled, allowed);
}

#[tokio::test]
async fn a_paid_netflow_call_shows_smart_money_accumulating_and_leaving() {
    let app = TestApp::new().await;
    let body = json!({"chains": ["solana"], "order_by": [{"field": "net_flow_24h_usd", "direction": "DESC"}]});
    let reply = pay(&app, "smart-money/netflow", body, 1).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(reply.headers.contains_key("payment-response"));
    let answer = reply.json();
    assert_matches_schema("post", &uri("smart-money/netflow"), &answer);
    let world = &app.sim.world;
    let row = |scenario| {
        let address = &world.planted_token(Chain::Solana, scenario).expect("planted").address;
        answer["data"].as_array().expect("rows").iter().find(|r| r["token_address"] == *address).cloned().expect("row")
    };
    assert!(row(Scenario::Accumulated)["net_flow_24h_usd"].as_f64().expect("flow") > 0.0);
    assert!(row(Scenario::Exodus)["net_flow_7d_usd"].as_f64().expect("flow") < 0.0);
    assert_eq!(answer["data"][0]["token_address"], row(Scenario::Accumulated)["token_address"], "sorted by 24 h flow");
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn whale_trades_of_the_last_hour_are_in_the_smart_money_dex_feed() {
    let app = TestApp::new().await;
    let body = json!({"chains": ["solana", "base", "ethereum", "bnb", "arbitrum"],
        "filters": {"trade_value_usd": {"min": 50000}},
        "order_by": [{"field": "block_timestamp", "direction": "DESC"}]});
    let reply = pay(&app, "smart-money/dex-trades", body, 2).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let rows = reply.json()["data"].as_array().cloned().expect("rows");
    let hour_ago = svc_domain::rfc3339(crate::support::NOW_MS - 3_600_000);
    let recent = rows.iter().filter(|r| r["block_timestamp"].as_str().is_some_and(|t| t >= hour_ago.as_str())).count();
    assert!(recent >= 3, "whale trades within the hour: {recent}");
    assert!(rows.iter().all(|r| r["trade_value_usd"].as_f64().is_some_and(|v| v >= 50_000.0)));
}

#[tokio::test]
async fn hostile_paths_are_refused_and_never_reach_the_vendor() {
    let app = TestApp::new().await;
    let hostile = [
        "..",
        "../../admin",
        "smart-money/../../../etc/passwd",
        "%2e%2e",
        "%2e%2e%2f%2e%2e%2fadmin",
        "smart-money%2fnetflow",
        "smart-money%2Fnetflow%2F..%2F..",
        "/evil.example/api/v1/smart-money/netflow",
        "//evil.example",
        "@evil.example/api",
        "user@evil.example",
        "http://evil.example/api/v1/smart-money/netflow",
        "https:%2f%2fevil.example",
        "file:///etc/passwd",
        "smart-money/netflow%0d%0aHost:%20evil.example",
        "smart-money/netflow%0aX-Injected:1",
        "http://127.0.0.1:8080/admin",
        "169.254.169.254/latest/meta-data",
        "http://[::1]/",
        "10.0.0.1",
        "smart-money/netflow/",
        "SMART-MONEY/NETFLOW",
    ];
    let body = json!({"payload": {"chains": ["solana"]}}).to_string();
    for path in hostile {
        let reply = app.post_json(&uri(path), &body).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {}", reply.text());
        assert!(reply.text().contains("smart-money/netflow"), "{path}: the answer lists the allowed paths");
    }
    assert_eq!(vendor_calls(&app), 0, "{:?}", app.sim.faults.log());
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_rate_limited_vendor_is_retried_within_the_paid_call() {
    let app = TestApp::new().await;
    app.sim.faults.push("chaindata", Fault::Status { status: 429, retry_after: Some(0) });
    let reply = pay(&app, "smart-money/holdings", json!({"chains": ["base"]}), 3).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(vendor_calls(&app), 2);
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn a_failing_vendor_is_a_502_that_charges_nothing() {
    let app = TestApp::new().await;
    for _ in 0..3 {
        app.sim.faults.push("chaindata", Fault::Status { status: 500, retry_after: None });
    }
    let reply = pay(&app, "tgm/token-screener", json!({"chains": ["solana"]}), 4).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(reply.json()["vendor"], "chaindata");
    assert!(reply.headers.get("payment-response").is_none());
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_bad_vendor_key_is_a_502_naming_the_vendor_and_never_the_key() {
    let app = TestApp::with(Setup {
        upstreams: Box::new(|c| {
            c.vendor_mut(Vendor::Chaindata).key = Some(svc_simulator::CHAINDATA_REVOKED_KEY.into())
        }),
        ..Default::default()
    })
    .await;
    let reply = pay(&app, "smart-money/netflow", json!({"chains": ["base"]}), 5).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(reply.json()["vendor"], "chaindata");
    assert!(!reply.text().contains(svc_simulator::CHAINDATA_REVOKED_KEY));
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_query_the_vendor_refuses_is_a_422_that_charges_nothing() {
    let app = TestApp::new().await;
    let body = json!({"chains": ["base"], "filters": {"no_such_field": {"min": 1}}});
    let reply = pay(&app, "smart-money/holdings", body, 6).await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", reply.text());
    assert_eq!(reply.json()["detail"][0]["loc"], json!(["body", "payload"]));
    assert!(reply.headers.get("payment-response").is_none());
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn the_spec_minimal_token_payload_is_answered_once_paid_with_the_last_day_by_default() {
    let app = TestApp::new().await;
    let token = app.sim.world.planted_token(Chain::Base, Scenario::Accumulated).expect("planted").address.clone();
    let minimal = json!({"token_address": token, "chain": "base"});
    for (nonce, path) in [(8, "tgm/who-bought-sold"), (9, "tgm/flows")] {
        let reply = pay(&app, path, minimal.clone(), nonce).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.text());
        assert!(reply.headers.get("payment-response").is_some(), "{path}");
        // The same as asking for yesterday and today.
        let explicit = json!({"token_address": token, "chain": "base", "date": days()});
        let dated = pay(&app, path, explicit, nonce + 10).await;
        assert_eq!(reply.json()["data"], dated.json()["data"], "{path}");
    }
    assert_eq!(app.paid_calls().await, 4);
}

#[tokio::test]
async fn an_unknown_token_has_no_information_and_is_not_charged() {
    let app = TestApp::new().await;
    let body = json!({"token_address": format!("0x{}", "cd".repeat(20)), "chain": "base"});
    let reply = pay(&app, "tgm/token-information", body, 7).await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_profile_of_several_wallets_joins_one_vendor_answer_per_wallet() {
    let app = TestApp::new().await;
    let wallets: Vec<String> = app
        .sim
        .world
        .wallets()
        .iter()
        .filter(|w| w.chain == Chain::Solana && w.kind.is_smart_money())
        .take(3)
        .map(|w| w.address.clone())
        .collect();
    let reply = pay(&app, "profiler/address/balances", json!({"walletAddresses": wallets, "chain": "solana"}), 8).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_matches_schema("post", &uri("profiler/address/balances"), &answer);
    for wallet in &wallets {
        assert!(answer["data"].as_array().expect("rows").iter().any(|r| r["address"] == *wallet), "{wallet}");
    }
    assert_eq!(vendor_calls(&app), 3);
    assert_eq!(app.paid_calls().await, 1, "one paid call, however many wallets");
}
