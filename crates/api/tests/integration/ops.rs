//! Health, readiness, metrics and the free data route.

use axum::http::StatusCode;

use crate::support::{NOW_MS, TestApp};

#[tokio::test]
async fn health_and_readiness_answer_ok_with_the_store_backend() {
    let app = TestApp::new().await;
    assert_eq!(app.get("/healthz").await.json()["status"], "ok");
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status, StatusCode::OK);
    assert_eq!(ready.json()["store"], app.store.backend().to_string());
    assert!(["sqlite", "postgres"].contains(&app.store.backend().to_string().as_str()));
}

#[tokio::test]
async fn metrics_count_requests_by_route_id_and_status() {
    let app = TestApp::new().await;
    app.get("/api/x402/svc-tools/social/tweet/abc").await;
    app.get("/api/svc-tools/social/tweet/abc").await;
    app.get("/no/such/route").await;
    app.get("/healthz").await;
    let text = app.get("/metrics").await.text();
    let count = |route: &str, status: &str| {
        text.lines()
            .find(|l| {
                l.starts_with("svc_http_requests_total")
                    && l.contains(&format!("route=\"{route}\""))
                    && l.contains(&format!("status=\"{status}\""))
                    && l.contains("method=\"GET\"")
            })
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|n| n.parse::<u64>().ok())
    };
    // Both billing channels of a route count under its catalogue id (metrics are
    // process-wide, so other tests may add to the counts).
    assert!(count("social.tweet", "422").is_some_and(|n| n >= 2), "{text}");
    assert!(!text.contains("route=\"/api/svc-tools/social"), "the credit twin is labelled by id: {text}");
    assert!(count("unmatched", "404").is_some_and(|n| n >= 1), "{text}");
    assert!(count("/healthz", "200").is_some_and(|n| n >= 1), "{text}");
    assert!(text.contains("svc_http_request_duration_seconds_bucket"), "{text}");
}

#[tokio::test]
async fn token_stats_are_free_and_come_from_the_chaindata_screener() {
    let app = TestApp::new().await;
    let reply = app.get("/api/public/tokens/stats").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    crate::support::assert_matches_schema("get", "/api/public/tokens/stats", &body);
    assert_eq!(body["source"], "chaindata");
    assert_eq!(body["as_of"], "2026-11-22T10:00:00Z");
    let tokens = body["tokens"].as_array().cloned().expect("tokens");
    assert!(tokens.len() >= 20, "{}", tokens.len());
    let caps: Vec<f64> = tokens.iter().map(|t| t["market_cap_usd"].as_f64().expect("cap")).collect();
    assert!(caps.windows(2).all(|w| w[0] >= w[1]), "largest first");
    for chain in ["solana", "ethereum", "base", "bnb", "arbitrum"] {
        assert!(tokens.iter().any(|t| t["chain"] == chain), "{chain} covered");
    }
    let sol = tokens.iter().find(|t| t["symbol"] == "SOL").expect("SOL listed");
    assert!(sol["price_usd"].as_f64().is_some_and(|p| p > 100.0));
    assert!(sol["change_24h_pct"].is_number() && sol["volume_24h_usd"].is_number() && sol["liquidity_usd"].is_number());

    app.get("/api/public/tokens/stats").await;
    let calls = app.sim.faults.log().iter().filter(|l| l.contains("/chaindata/")).count();
    assert_eq!(calls, 1, "polling agents share one vendor call a minute");
}

#[tokio::test]
async fn token_stats_fall_back_to_the_store_when_the_source_fails() {
    let app = TestApp::new().await;
    for _ in 0..3 {
        app.sim.faults.push("chaindata", svc_simulator::Fault::Status { status: 503, retry_after: None });
    }
    app.store
        .upsert_token_stat(&svc_store::TokenStat {
            chain: "solana".into(),
            address: "So11111111111111111111111111111111111111112".into(),
            symbol: "SOL".into(),
            name: "Solana".into(),
            price_usd: "187.25".into(),
            change_24h_pct: Some("-1.5".into()),
            volume_24h_usd: Some("1500000000".into()),
            market_cap_usd: Some("90000000000".into()),
            liquidity_usd: None,
            rank: 1,
            updated_at: NOW_MS,
        })
        .await
        .expect("upsert");
    let reply = app.get("/api/public/tokens/stats").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_eq!(body["source"], "store");
    assert_eq!(body["tokens"][0]["symbol"], "SOL");
    assert_eq!(body["tokens"][0]["price_usd"], 187.25);
    assert_eq!(body["tokens"][0]["change_24h_pct"], -1.5);
    assert_eq!(body["as_of"], "2026-11-22T10:00:00Z");
}
