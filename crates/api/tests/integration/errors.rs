//! Protocol-level errors share the one JSON error shape.

use axum::body::Body;
use axum::http::{Request, StatusCode};

use crate::support::{TestApp, assert_error};

#[tokio::test]
async fn an_unknown_path_is_a_json_404() {
    let app = TestApp::new().await;
    assert_error(&app.get("/api/x402/nothing-here").await, StatusCode::NOT_FOUND, "not_found");
    assert_error(&app.get("/").await, StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test]
async fn a_wrong_method_is_a_json_405_naming_the_right_one() {
    let app = TestApp::new().await;
    let reply = app.post_json("/api/x402/alpha/top-picks", "{}").await;
    assert_error(&reply, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    assert_eq!(reply.headers.get("allow").and_then(|v| v.to_str().ok()), Some("GET"));
    let reply = app.get("/api/x402/svc-tools/predmkt/search").await;
    assert_error(&reply, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    assert_eq!(reply.headers.get("allow").and_then(|v| v.to_str().ok()), Some("POST"));
}

#[tokio::test]
async fn an_oversize_body_is_a_json_413() {
    let app = TestApp::with_config(svc_api::ApiConfig { body_limit_bytes: 1024, ..Default::default() }).await;
    let big = format!(r#"{{"keyword":"{}"}}"#, "a".repeat(4096));
    let reply = app.post_json("/api/x402/svc-tools/predmkt/search", &big).await;
    assert_error(&reply, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    // Without a Content-Length (a streamed body) the limit still holds.
    let stream = futures::stream::iter(vec![Ok::<_, std::io::Error>(bytes::Bytes::from(big))]);
    let request = Request::post("/api/x402/svc-tools/predmkt/search")
        .header("content-type", "application/json")
        .body(Body::from_stream(stream))
        .expect("request");
    assert_error(&app.send(request).await, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
}

#[tokio::test]
async fn a_body_that_is_not_json_is_a_json_415() {
    let app = TestApp::new().await;
    let request = Request::post("/api/x402/svc-tools/predmkt/search")
        .header("content-type", "text/plain")
        .body(Body::from("keyword=btc"))
        .expect("request");
    assert_error(&app.send(request).await, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    let request = Request::post("/api/x402/svc-tools/predmkt/search").body(Body::from("{}")).expect("request");
    assert_error(&app.send(request).await, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
}

#[tokio::test]
async fn malformed_json_is_a_422_at_the_body() {
    let app = TestApp::new().await;
    let reply = app.post_json("/api/x402/svc-tools/predmkt/search", "{\"keyword\":").await;
    crate::support::assert_invalid_at(&reply, &[serde_json::json!("body")]);
    assert_eq!(reply.json()["detail"][0]["type"], "json_invalid");
    let reply = app.post_json("/api/x402/svc-tools/predmkt/search", "[1,2]").await;
    crate::support::assert_invalid_at(&reply, &[serde_json::json!("body")]);
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = TestApp::new().await;
    let id_of = |reply: &crate::support::Reply| {
        reply.headers.get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
    };
    let first = id_of(&app.get("/healthz").await);
    let second = id_of(&app.get("/healthz").await);
    assert_eq!(first.len(), 21, "prefix and counter: {first:?}");
    assert_ne!(first, second, "ids are unique");
    assert_eq!(first[..8], second[..8], "one process, one prefix");
    let request = Request::get("/healthz").header("x-request-id", "trace-me-123").body(Body::empty()).expect("request");
    let reply = app.send(request).await;
    assert_eq!(reply.headers.get("x-request-id").and_then(|v| v.to_str().ok()), Some("trace-me-123"));
}
