//! Invalid input is refused with 422 before anything else, in every route family, with a
//! `loc` that names the bad field, on both the x402 route and its credit twin.

use serde_json::{Value, json};

use crate::support::{TestApp, assert_invalid_at};

fn loc(parts: &[&str]) -> Vec<Value> {
    parts.iter().map(|p| p.parse::<u64>().map_or_else(|_| json!(p), |n| json!(n))).collect()
}

/// Runs a case on the x402 path and on the `/api/svc-tools` twin.
async fn refused_on_both(app: &TestApp, method: &str, path: &str, body: Option<&str>, at: &[&str]) {
    let method = method.parse().expect("method");
    let twin = svc_catalogue::credits_twin(path).expect("paid path");
    for uri in [path.to_owned(), twin] {
        let reply = app.call(&method, &uri, body).await;
        assert_invalid_at(&reply, &loc(at));
    }
}

#[tokio::test]
async fn signals_refuse_an_unknown_data_product_naming_the_valid_ones() {
    let app = TestApp::new().await;
    refused_on_both(&app, "POST", "/api/x402/svc-tools/data-products/moonshots", None, &["path", "product_id"]).await;
    let reply = app.post_json("/api/x402/svc-tools/data-products/moonshots", "{}").await;
    let msg = reply.json()["detail"][0]["msg"].as_str().unwrap_or_default().to_owned();
    for valid in ["smart-money-signals", "agent-strategies", "top-alpha-picks"] {
        assert!(msg.contains(valid), "{msg}");
    }
    refused_on_both(
        &app,
        "POST",
        "/api/x402/svc-tools/data-products/top-alpha-picks",
        Some(r#"{"params":{"min_score":101}}"#),
        &["body", "params", "min_score"],
    )
    .await;
}

#[tokio::test]
async fn chain_data_enforces_each_route_kinds_payload_rule() {
    let app = TestApp::new().await;
    let base = "/api/x402/svc-tools/data-provider/chaindata";
    refused_on_both(
        &app,
        "POST",
        &format!("{base}/smart-money/netflow"),
        Some(r#"{"payload":{}}"#),
        &["body", "payload", "chains"],
    )
    .await;
    refused_on_both(&app, "POST", &format!("{base}/smart-money/netflow"), Some("{}"), &["body", "payload"]).await;
    refused_on_both(
        &app,
        "POST",
        &format!("{base}/profiler/address/balances"),
        Some(r#"{"payload":{}}"#),
        &["body", "payload", "walletAddresses"],
    )
    .await;
    refused_on_both(
        &app,
        "POST",
        &format!("{base}/tgm/holders"),
        Some(r#"{"payload":{"chain":"solana","token_address":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"}}"#),
        &["body", "payload", "token_address"],
    )
    .await;
    refused_on_both(
        &app,
        "POST",
        &format!("{base}/tgm/holders"),
        Some(r#"{"payload":{"chain":"solana"}}"#),
        &["body", "payload", "token_address"],
    )
    .await;
}

#[tokio::test]
async fn an_unknown_chain_data_route_lists_the_allowed_ones() {
    let app = TestApp::new().await;
    let reply =
        app.post_json("/api/x402/svc-tools/data-provider/chaindata/smart-money/everything", r#"{"payload":{}}"#).await;
    assert_invalid_at(&reply, &loc(&["path", "path"]));
    let msg = reply.json()["detail"][0]["msg"].as_str().unwrap_or_default().to_owned();
    assert!(msg.contains("smart-money/netflow") && msg.contains("tgm/token-ohlcv"), "{msg}");
}

#[tokio::test]
async fn infrastructure_routes_check_enums_addresses_and_amounts() {
    let app = TestApp::new().await;
    let tools = "/api/x402/svc-tools";
    refused_on_both(
        &app,
        "POST",
        &format!("{tools}/defi/quote"),
        Some(r#"{"protocol":"aave-v3","action":"stake","amount":"1"}"#),
        &["body", "action"],
    )
    .await;
    refused_on_both(
        &app,
        "POST",
        &format!("{tools}/swap-quote"),
        Some(
            r#"{"input_mint":"not-a-mint","output_mint":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","amount":1000}"#,
        ),
        &["body", "input_mint"],
    )
    .await;
    refused_on_both(&app, "POST", &format!("{tools}/evm/token-price"), Some("{}"), &["body", "token_address"]).await;
    refused_on_both(
        &app,
        "POST",
        &format!("{tools}/shield/validate"),
        Some(r#"{"network":"solana","tx_data":{"to":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"}}"#),
        &["body", "network"],
    )
    .await;
    refused_on_both(&app, "GET", &format!("{tools}/launchpad/coin/0xnotamint"), None, &["path", "mint"]).await;
    refused_on_both(
        &app,
        "POST",
        &format!("{tools}/orderbookdex/proxy"),
        Some(r#"{"endpoint":"http://169.254.169.254/latest/meta-data"}"#),
        &["body", "endpoint"],
    )
    .await;
}

#[tokio::test]
async fn prediction_markets_require_their_keys() {
    let app = TestApp::new().await;
    refused_on_both(&app, "POST", "/api/x402/svc-tools/predmkt/search", Some("{}"), &["body", "keyword"]).await;
    refused_on_both(
        &app,
        "POST",
        "/api/x402/svc-tools/predmkt/quote",
        Some(r#"{"condition_id":"0x12"}"#),
        &["body", "condition_id"],
    )
    .await;
}

#[tokio::test]
async fn social_routes_check_ranges_ids_and_lists() {
    let app = TestApp::new().await;
    let social = "/api/x402/svc-tools/social";
    refused_on_both(&app, "GET", &format!("{social}/search?query=sol&max_results=5"), None, &["query", "max_results"])
        .await;
    refused_on_both(&app, "GET", &format!("{social}/search"), None, &["query", "query"]).await;
    refused_on_both(&app, "GET", &format!("{social}/tweet/abc"), None, &["path", "tweet_id"]).await;
    let ids = (1..=51).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    refused_on_both(&app, "GET", &format!("{social}/tweets?ids={ids}"), None, &["query", "ids"]).await;
    refused_on_both(
        &app,
        "GET",
        &format!("{social}/user/12345/timeline?max_results=101"),
        None,
        &["query", "max_results"],
    )
    .await;
}

#[tokio::test]
async fn valid_input_reaches_the_handler_and_a_preview_is_truncated() {
    let app = TestApp::new().await;
    let reply = app.get_from("203.0.113.7:1", "/api/x402/alpha/exodus?preview=true", &[]).await;
    assert_eq!(reply.status, axum::http::StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    let picks = body["picks"].as_array().expect("picks");
    assert_eq!(picks.len(), 1, "a preview shows one item");
    assert!(picks[0].get("thesis").is_none(), "a preview omits the thesis: {body}");
}

/// A body field the route does not name is refused before any challenge, on both channels:
/// ignored, it would be echoed into the challenge and the payment (a 200 KB body of unknown
/// fields made a 273 KB challenge), and a misspelt field would silently change nothing.
#[tokio::test]
async fn a_body_field_the_route_does_not_name_is_a_422_naming_it() {
    let app = TestApp::new().await;
    let body = json!({"tx_data": {"to": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}, "junk": "x".repeat(200_000)});
    let path = "/api/x402/svc-tools/shield/validate";
    refused_on_both(&app, "POST", path, Some(&body.to_string()), &["body", "junk"]).await;
    let misspelt = json!({"tx_data": {"to": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}, "netwrok": "base"});
    let reply = app.call(&axum::http::Method::POST, path, Some(&misspelt.to_string())).await;
    assert_eq!(reply.json()["detail"][0]["type"], "extra_forbidden", "{}", reply.text());
    assert_eq!(app.paid_calls().await, 0);
}
