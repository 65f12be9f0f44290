//! Health, readiness, metrics and the free data route.

use axum::http::StatusCode;

use crate::support::{NOW_MS, TestApp};

#[tokio::test]
async fn health_and_readiness_answer_ok_with_the_store_backend() {
    let app = TestApp::new().await;
    assert_eq!(app.get("/healthz").await.json()["status"], "ok");
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status, StatusCode::OK);
    assert_eq!(ready.json()["store"], "sqlite");
}

#[tokio::test]
async fn metrics_count_requests_by_route_id_and_status() {
    let app = TestApp::new().await;
    app.get("/api/x402/svc-tools/social/tweet/abc").await;
    let text = app.get("/metrics").await.text();
    assert!(
        text.lines().any(|l| l.starts_with("svc_http_requests_total")
            && l.contains("route=\"social.tweet\"")
            && l.contains("status=\"422\"")),
        "{text}"
    );
    assert!(text.contains("svc_http_request_duration_seconds_bucket"), "{text}");
}

#[tokio::test]
async fn token_stats_are_free_and_served_from_the_store() {
    let app = TestApp::new().await;
    let empty = app.get("/api/public/tokens/stats").await;
    assert_eq!(empty.status, StatusCode::OK);
    let body = empty.json();
    assert_eq!(body["tokens"].as_array().map(Vec::len), Some(0));
    assert!(body["as_of"].is_null());

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
    let body = app.get("/api/public/tokens/stats").await.json();
    assert_eq!(body["tokens"][0]["symbol"], "SOL");
    assert_eq!(body["tokens"][0]["price_usd"], 187.25);
    assert_eq!(body["tokens"][0]["change_24h_pct"], -1.5);
    assert_eq!(body["as_of"], "2026-11-22T10:00:00Z");
}
