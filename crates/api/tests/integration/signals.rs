//! The signal routes end to end on the simulated market: paid calls answered from the
//! engine's snapshot, and the planted scenarios found (the accumulated token picked, the
//! exit token in Exodus with its seller count, every whale trade of the last hour alerted).

use std::collections::BTreeSet;

use axum::http::{Method, StatusCode};
use serde_json::Value;
use svc_domain::Chain;
use svc_simulator::world::{Scenario, WalletKind};

use crate::support::{NOW_MS, Sample, TestApp, assert_matches_schema};

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

/// Valid calls of every signal route, for the catalogue walk.
pub(crate) fn samples(_: &TestApp) -> Vec<Sample> {
    let get =
        |route, path: &str| Sample { route, method: Method::GET, uri: format!("/api/x402/alpha{path}"), body: None };
    let product = |id: &str, body: &str| Sample {
        route: "tools.data_products",
        method: Method::POST,
        uri: format!("/api/x402/svc-tools/data-products/{id}"),
        body: Some(body.to_owned()),
    };
    vec![
        get("alpha.top_picks", "/top-picks"),
        get("alpha.top_picks_lite", "/top-picks-lite"),
        get("alpha.exodus", "/exodus"),
        get("alpha.whale_alerts", "/whale-alerts"),
        product("smart-money-signals", "{}"),
        product("top-alpha-picks", r#"{"params": {"chains": ["solana", "base"], "limit": 5}}"#),
        product("agent-strategies", r#"{"params": {"min_score": 10}}"#),
    ]
}

async fn paid_json(app: &TestApp, path: &str, nonce: u8) -> Value {
    let reply = app.pay(&Method::GET, &format!("/api/x402/alpha{path}"), None, nonce).await;
    assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.text());
    let body = reply.json();
    assert_matches_schema("get", &format!("/api/x402/alpha{path}"), &body);
    body
}

fn addresses(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("list")
        .iter()
        .map(|p| p["token_info"]["address"].as_str().expect("address").to_owned())
        .collect()
}

#[tokio::test]
async fn the_planted_accumulation_tokens_are_top_picks_on_their_chains() {
    let app = TestApp::new().await;
    let body = paid_json(&app, "/top-picks", 1).await;
    for chain in [Chain::Solana, Chain::Base] {
        let planted = app.sim.world.planted_token(chain, Scenario::Accumulated).expect("planted");
        let picks = addresses(&body["picks"][chain.as_str()]);
        assert!(picks.contains(&planted.address), "{chain}: {} not in {picks:?}", planted.symbol);
        assert!(picks.len() <= 3);
    }
    assert!(body["generated_at"].is_string() && body["next_refresh_at"].is_string());
    assert!(!body["sources"].as_array().expect("sources").is_empty());
    for chain in ["solana", "base", "ethereum", "bnb", "arbitrum"] {
        for pick in body["picks"][chain].as_array().expect("chain") {
            let thesis = pick["thesis"].as_str().expect("thesis");
            assert!(thesis.len() < 200 && !thesis.contains('{') && !thesis.contains("NaN"), "{thesis}");
            assert!(pick["score"].as_u64().expect("score") <= 100);
        }
    }
    let lite = paid_json(&app, "/top-picks-lite", 2).await;
    let planted = app.sim.world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted");
    assert!(addresses(&lite["picks"]["solana"]).contains(&planted.address));
}

#[tokio::test]
async fn the_planted_honeypot_is_never_a_pick_though_its_flows_rival_the_best() {
    let app = TestApp::new().await;
    let world = &app.sim.world;
    let honeypot = world.honeypot_token().expect("planted honeypot");
    let accumulated = world.planted_token(Chain::Base, Scenario::Accumulated).expect("planted");
    assert_ne!(honeypot.address, accumulated.address);
    let index = world.token_index(Chain::Base, &honeypot.address).expect("listed");
    let inflow = world.netflow_usd(index, DAY_MS, |wallet| wallet.kind.is_smart_money());
    assert!(inflow > 0.0, "smart money appears to be buying the honeypot: {inflow}");

    let body = paid_json(&app, "/top-picks", 40).await;
    let picks = addresses(&body["picks"]["base"]);
    assert!(picks.contains(&accumulated.address), "the real accumulation is still picked: {picks:?}");
    assert!(!picks.contains(&honeypot.address), "the honeypot is never a pick: {picks:?}");
    let lite = paid_json(&app, "/top-picks-lite", 41).await;
    assert!(!addresses(&lite["picks"]["base"]).contains(&honeypot.address), "nor a lite pick");
}

#[tokio::test]
async fn the_freeze_trap_is_never_a_pick() {
    let app = TestApp::new().await;
    let world = &app.sim.world;
    let trap = world.freeze_trap_token().expect("planted freeze trap");
    let accumulated = world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted");
    assert_ne!(trap.address, accumulated.address);
    let index = world.token_index(Chain::Solana, &trap.address).expect("listed");
    let inflow = world.netflow_usd(index, DAY_MS, |wallet| wallet.kind.is_smart_money());
    assert!(inflow > 0.0, "smart money appears to be buying the trap: {inflow}");

    let body = paid_json(&app, "/top-picks", 42).await;
    let picks = addresses(&body["picks"]["solana"]);
    assert!(picks.contains(&accumulated.address), "the clean accumulation is still picked: {picks:?}");
    assert!(!picks.contains(&trap.address), "a live freeze authority is never a pick: {picks:?}");
    let lite = paid_json(&app, "/top-picks-lite", 43).await;
    assert!(!addresses(&lite["picks"]["solana"]).contains(&trap.address), "nor a lite pick");
}

#[tokio::test]
async fn solana_safety_is_read_from_the_mint() {
    let app = TestApp::new().await;
    let body = paid_json(&app, "/top-picks", 44).await;
    let picks = body["picks"]["solana"].as_array().expect("picks");
    assert!(!picks.is_empty());
    for pick in picks {
        let address = pick["token_info"]["address"].as_str().expect("address");
        let mint = app.sim.world.mint(address).expect("every Solana pick is a mint");
        let safety = &pick["dimensions"]["safety"];
        let live = |on: bool| Value::from(if on { 1.0 } else { 0.0 });
        assert_eq!(safety["inputs"]["mint_authority_live"], live(mint.mint_authority.is_some()), "{pick}");
        assert_eq!(safety["inputs"]["freeze_authority_live"], live(mint.freeze_authority.is_some()), "{pick}");
        // The world leaves some tokens' holders unknown; the authorities are known for every one.
        assert!(!safety["degraded_reason"].as_str().is_some_and(|r| r.contains("authority")), "{pick}");
    }
    let source =
        body["sources"].as_array().expect("sources").iter().find(|s| s["source"] == "solana-rpc.mint-authorities");
    assert_eq!(source.expect("the mints' source is reported")["status"], "ok");
    let reads = app.sim.faults.log().iter().filter(|line| line.starts_with("POST /solana-rpc")).count();
    assert_eq!(reads, 1, "every candidate's mint in one call");
}

#[tokio::test]
async fn a_failed_mint_read_leaves_safety_unknown() {
    let app = TestApp::new().await;
    for _ in 0..3 {
        app.sim.faults.push("solana-rpc", svc_simulator::Fault::Status { status: 503, retry_after: None });
    }
    let body = paid_json(&app, "/top-picks", 45).await;
    let source =
        body["sources"].as_array().expect("sources").iter().find(|s| s["source"] == "solana-rpc.mint-authorities");
    assert_eq!(source.expect("the mints' source is reported")["status"], "failed");
    let picks = body["picks"]["solana"].as_array().expect("picks");
    assert!(!picks.is_empty(), "strong flows still pick, past the stricter bar");
    for pick in picks {
        let safety = &pick["dimensions"]["safety"];
        assert!(safety["score"].as_u64().expect("score") <= 50, "{pick}");
        assert_eq!(safety["degraded"], true, "{pick}");
        assert!(
            safety["degraded_reason"].as_str().is_some_and(|r| r.contains("mint/freeze authority unknown")),
            "{pick}"
        );
        assert!(
            safety["inputs"]["freeze_authority_live"].is_null() && safety["inputs"]["mint_authority_live"].is_null()
        );
        assert!(pick["thesis"].as_str().expect("thesis").contains("risk:"), "{pick}");
    }
    let base = &body["picks"]["base"][0]["dimensions"]["safety"];
    assert!(!base["degraded_reason"].as_str().is_some_and(|r| r.contains("failed")), "no other chain's safety: {base}");
}

#[tokio::test]
async fn the_planted_exit_tokens_are_in_exodus_with_their_seller_counts() {
    let app = TestApp::new().await;
    let body = paid_json(&app, "/exodus", 1).await;
    let world = &app.sim.world;
    let day = world.trades_between(NOW_MS - DAY_MS, NOW_MS);
    for chain in [Chain::Solana, Chain::Ethereum] {
        let planted = world.planted_token(chain, Scenario::Exodus).expect("planted");
        let t = world.token_index(chain, &planted.address).expect("index");
        let sellers: BTreeSet<usize> = day
            .iter()
            .filter(|x| x.token == t && !x.buy && world.wallets()[x.wallet].kind.is_smart_money())
            .filter(|x| x.at_ms > NOW_MS - DAY_MS)
            .map(|x| x.wallet)
            .collect();
        let pick = body["picks"]
            .as_array()
            .expect("picks")
            .iter()
            .find(|p| p["token_info"]["address"] == planted.address.as_str())
            .unwrap_or_else(|| panic!("{chain}: {} not in exodus: {body}", planted.symbol));
        assert_eq!(pick["wallet_exodus_count"], sellers.len() as u64, "{chain}");
        assert!(pick["net_outflow_usd"].as_f64().expect("outflow") > 0.0);
        assert_eq!(pick["window"], "24h");
        assert!(pick["exchange_inflow_usd"].is_number(), "exchange deposits are known for an exit: {pick}");
    }
    let accumulated = world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted");
    assert!(!addresses(&body["picks"]).contains(&accumulated.address), "a token bought is not an exit");
}

#[tokio::test]
async fn every_whale_trade_of_the_last_hour_is_an_alert_and_none_older() {
    let app = TestApp::new().await;
    let body = paid_json(&app, "/whale-alerts", 1).await;
    let world = &app.sim.world;
    let threshold = body["threshold_usd"].as_f64().expect("threshold");
    let tracked = |k: WalletKind| k.is_smart_money() || k == WalletKind::Whale;
    let expected: BTreeSet<String> = world
        .trades_between(NOW_MS - HOUR_MS, NOW_MS)
        .into_iter()
        .filter(|t| t.at_ms > NOW_MS - HOUR_MS && t.value_usd >= threshold && tracked(world.wallets()[t.wallet].kind))
        .map(|t| t.tx_hash)
        .collect();
    assert!(expected.len() >= 5, "the world plants a whale trade every seven minutes");
    let alerts = body["alerts"].as_array().expect("alerts");
    let got: BTreeSet<String> = alerts.iter().map(|a| a["tx_hash"].as_str().expect("hash").to_owned()).collect();
    assert_eq!(got, expected);
    assert_eq!(got.len(), alerts.len(), "one alert per transaction");
    let times: Vec<&str> = alerts.iter().map(|a| a["at"].as_str().expect("at")).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first");
}

#[tokio::test]
async fn signal_routes_answer_from_the_snapshot_without_calling_upstreams_again() {
    let app = TestApp::new().await;
    paid_json(&app, "/top-picks", 1).await;
    let before = app.sim.faults.log().len();
    paid_json(&app, "/exodus", 2).await;
    paid_json(&app, "/whale-alerts", 3).await;
    paid_json(&app, "/top-picks", 4).await;
    assert_eq!(app.sim.faults.log().len(), before, "no vendor call after the first snapshot");
    let stored = app.store.latest_signal_snapshot().await.expect("store").expect("a snapshot is stored");
    assert_eq!(stored.generated_at, NOW_MS);
}

#[tokio::test]
async fn data_products_filter_and_the_conservative_strategy_keeps_the_ten_percent_rule() {
    let app = TestApp::new().await;
    let post = |id: &str, body: &str, nonce: u8| {
        let uri = format!("/api/x402/svc-tools/data-products/{id}");
        let body = body.to_owned();
        let app = &app;
        async move { app.pay(&Method::POST, &uri, Some(&body), nonce).await }
    };
    let reply = post("top-alpha-picks", r#"{"params": {"chains": ["base"], "limit": 2}}"#, 1).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_eq!(body["product_id"], "top-alpha-picks");
    let picks = body["picks"].as_array().expect("picks");
    assert!(!picks.is_empty() && picks.len() <= 2);
    assert!(picks.iter().all(|p| p["token_info"]["chain"] == "base"));

    let reply = post("agent-strategies", "{}", 2).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    let conservative = body["strategies"]
        .as_array()
        .expect("strategies")
        .iter()
        .find(|s| s["style"] == "conservative")
        .expect("conservative");
    assert_eq!(conservative["max_position_pct"], 10.0);
    for entry in conservative["entries"].as_array().expect("entries") {
        assert!(entry["position_size_pct"].as_f64().expect("size") <= 10.0);
    }

    let reply = post("smart-money-signals", "{}", 3).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(!reply.json()["whale_alerts"].as_array().expect("alerts").is_empty());

    let reply = app.call(&Method::POST, "/api/x402/svc-tools/data-products/moon-picks", Some("{}")).await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    let text = reply.text();
    for id in ["smart-money-signals", "top-alpha-picks", "agent-strategies"] {
        assert!(text.contains(id), "the error lists the valid ids: {text}");
    }
    assert_eq!(app.paid_calls().await, 3, "the refused call was not charged");
}

#[tokio::test]
async fn a_failed_source_degrades_its_dimension_instead_of_failing_the_snapshot() {
    let app = TestApp::new().await;
    for _ in 0..400 {
        app.sim.faults.push("social", svc_simulator::Fault::Status { status: 500, retry_after: None });
    }
    let body = paid_json(&app, "/top-picks", 1).await;
    let social = body["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .find(|s| s["source"] == "social.counts+search")
        .expect("the social source is reported");
    assert_eq!(social["status"], "failed", "{social}");
    assert!(social["detail"].as_str().is_some_and(|d| !d.contains("http")), "no vendor internals: {social}");
    let planted = app.sim.world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted");
    let pick = body["picks"]["solana"]
        .as_array()
        .expect("picks")
        .iter()
        .find(|p| p["token_info"]["address"] == planted.address.as_str())
        .expect("still picked on flows");
    assert_eq!(pick["dimensions"]["social"]["degraded"], true);
    assert_eq!(pick["dimensions"]["onchain_flow"]["degraded"], false);
}

#[tokio::test]
async fn the_free_track_record_compares_past_signals_with_later_prices() {
    let app = TestApp::new().await;
    let empty = app.get("/api/public/alpha/track-record").await;
    assert_eq!(empty.status, StatusCode::OK, "{}", empty.text());
    assert_eq!(empty.json()["snapshots"], 0);
    app.state.signals.refresh().await.expect("first snapshot");
    app.clock.advance_ms(30 * 60_000);
    app.state.signals.refresh().await.expect("second snapshot");
    let reply = app.get("/api/public/alpha/track-record").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_matches_schema("get", "/api/public/alpha/track-record", &body);
    assert_eq!(body["snapshots"], 2);
    let planted = app.sim.world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted");
    let pick = body["signals"]
        .as_array()
        .expect("signals")
        .iter()
        .find(|s| s["kind"] == "pick" && s["token"]["address"] == planted.address.as_str())
        .expect("the planted pick is tracked");
    assert!(pick["price_at_signal_usd"].as_f64().expect("then") > 0.0);
    assert!(pick["price_now_usd"].as_f64().expect("now") > 0.0);
    assert!(pick["hit"].is_boolean());
    let overall = &body["hit_rates"][0];
    assert_eq!(overall["scope"], "overall");
    assert!(overall["decided"].as_u64().expect("decided") > 0);
    assert_eq!(app.paid_calls().await, 0, "the track record is free");
}

/// Signal answers are gzipped once per snapshot: a client that accepts gzip gets the same
/// answer compressed, one that does not gets plain JSON, and both learn that it varies.
#[tokio::test]
async fn signal_answers_come_gzipped_to_clients_that_accept_gzip() {
    let app = TestApp::new().await;
    let uri = "/api/x402/alpha/top-picks";
    let plain = app.pay(&Method::GET, uri, None, 60).await;
    assert_eq!(plain.status, StatusCode::OK, "{}", plain.text());
    assert!(plain.headers.get("content-encoding").is_none());
    assert_eq!(plain.headers["vary"], "accept-encoding");

    let payment = app.payment_for(&Method::GET, uri, None, 61).await;
    let headers = [("payment-signature", payment.as_str()), ("accept-encoding", "gzip, deflate, br")];
    let zipped = app.call_with(&Method::GET, uri, None, &headers).await;
    assert_eq!(zipped.status, StatusCode::OK);
    assert_eq!(zipped.headers["content-encoding"], "gzip");
    assert!(zipped.headers.contains_key("payment-response"), "the settlement still comes with it");
    assert!(zipped.body.len() * 4 < plain.body.len(), "{} vs {} bytes", zipped.body.len(), plain.body.len());
    let mut json = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&zipped.body[..]), &mut json).expect("gunzip");
    assert_eq!(json, plain.body, "the same answer");

    let payment = app.payment_for(&Method::GET, uri, None, 62).await;
    let refused = [("payment-signature", payment.as_str()), ("accept-encoding", "gzip;q=0, identity")];
    let reply = app.call_with(&Method::GET, uri, None, &refused).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.headers.get("content-encoding").is_none());
    assert_eq!(reply.body, plain.body);
}
