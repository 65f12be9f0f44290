//! Protocol-level errors share the one JSON error shape.

use axum::body::Body;
use axum::http::{Request, StatusCode};

use crate::support::{TestApp, assert_error};

#[tokio::test]
async fn an_unknown_path_is_a_json_404() {
    let app = TestApp::new().await;
    assert_error(&app.get("/api/x402/nothing-here").await, StatusCode::NOT_FOUND, "not_found");
    assert_error(&app.get("/nothing/here").await, StatusCode::NOT_FOUND, "not_found");
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

/// Routes outside the catalogue name their own methods, not the GET of the operational routes
/// (found by schemathesis: the chat-bot relay's 405 said it accepted GET).
#[tokio::test]
async fn a_wrong_method_off_the_catalogue_names_the_right_one_too() {
    let app = TestApp::new().await;
    let allow =
        |reply: &crate::support::Reply| reply.headers.get("allow").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let relay = app.get("/api/agentbox/telegram/webhook/abc").await;
    assert_error(&relay, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    assert_eq!(allow(&relay).as_deref(), Some("POST"));
    let invoke = app.get("/x402/agents/agt_0/invoke").await;
    assert_eq!((invoke.status, allow(&invoke).as_deref()), (StatusCode::METHOD_NOT_ALLOWED, Some("POST")));
    // The LLM proxy answers in its own (OpenAI) shape.
    let chat = app.get("/api/v1/llm/chat/completions").await;
    assert_eq!((chat.status, allow(&chat).as_deref()), (StatusCode::METHOD_NOT_ALLOWED, Some("POST")));
    assert_eq!(chat.json()["error"]["code"], "method_not_allowed", "{}", chat.text());
    let models = app.post_json("/api/v1/llm/models", "{}").await;
    assert_eq!((models.status, allow(&models).as_deref()), (StatusCode::METHOD_NOT_ALLOWED, Some("GET")));
    let health = app.post_json("/healthz", "{}").await;
    assert_eq!((health.status, allow(&health).as_deref()), (StatusCode::METHOD_NOT_ALLOWED, Some("GET")));
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

#[tokio::test]
async fn a_handler_panic_is_a_json_500_and_the_app_keeps_serving() {
    let mut handlers = svc_api::handlers::all();
    let route = svc_catalogue::catalogue().get("public.tokens_stats").expect("route");
    handlers.add_raw(route, |_, _| async { panic!("a bug in a handler") });
    let app = TestApp::with(crate::support::Setup { handlers, ..Default::default() }).await;
    let reply = app.get("/api/public/tokens/stats").await;
    assert_error(&reply, StatusCode::INTERNAL_SERVER_ERROR, "internal_error");
    assert!(!reply.text().contains("a bug in a handler"), "the panic's message stays in the logs");
    assert_eq!(reply.headers["access-control-allow-origin"], "*");
    assert!(reply.headers.contains_key("x-request-id"));
    assert_eq!(app.get("/healthz").await.status, StatusCode::OK);
}

#[tokio::test]
async fn every_answer_allows_any_origin_and_exposes_the_payment_headers() {
    let app = TestApp::new().await;
    for (uri, status) in [
        ("/healthz", StatusCode::OK),
        ("/api/x402/alpha/top-picks", StatusCode::PAYMENT_REQUIRED),
        ("/api/x402/svc-tools/social/search?max_results=20", StatusCode::UNPROCESSABLE_ENTITY),
        ("/nowhere", StatusCode::NOT_FOUND),
    ] {
        let request = Request::get(uri).header("origin", "https://agent.example").body(Body::empty()).expect("request");
        let reply = app.send(request).await;
        assert_eq!(reply.status, status, "{uri}");
        assert_eq!(reply.headers["access-control-allow-origin"], "*", "{uri}");
        let exposed = reply.headers["access-control-expose-headers"].to_str().expect("ascii");
        for name in ["payment-required", "payment-response", "x-request-id"] {
            assert!(exposed.split(',').any(|n| n.trim() == name), "{uri}: {exposed}");
        }
    }
}

#[tokio::test]
async fn a_cors_preflight_allows_any_method_and_header() {
    let app = TestApp::new().await;
    let request = Request::options("/api/x402/alpha/top-picks")
        .header("origin", "https://agent.example")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "payment-signature, content-type")
        .body(Body::empty())
        .expect("request");
    let reply = app.send(request).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.body.is_empty());
    for name in ["access-control-allow-origin", "access-control-allow-methods", "access-control-allow-headers"] {
        assert_eq!(reply.headers[name], "*", "{name}");
    }
    // An OPTIONS that is not a preflight is an ordinary request, refused by method.
    let plain = app.send(Request::options("/api/x402/alpha/top-picks").body(Body::empty()).expect("request")).await;
    assert_error(&plain, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
}

/// Headers carrying keys and payments are marked sensitive before any handler or log sees
/// them, so no debug output can print them.
#[tokio::test]
async fn secret_headers_are_marked_sensitive_before_handlers_see_them() {
    use tower::ServiceExt as _;
    let app = TestApp::new().await;
    const NAMES: [&str; 5] = ["authorization", "x-api-key", "payment-signature", "x-payment", "user-agent"];
    let probe = axum::routing::get(|request: Request<Body>| async move {
        let headers = request.headers();
        axum::Json(NAMES.map(|name| headers.get(name).is_some_and(|value| value.is_sensitive())))
    });
    let router =
        svc_api::app_with(app.state.clone(), svc_api::handlers::all(), axum::Router::new().route("/probe", probe))
            .expect("handlers match the catalogue");
    let mut request = Request::get("/probe");
    for name in NAMES {
        request = request.header(name, "secret");
    }
    let response = router.oneshot(request.body(Body::empty()).expect("request")).await.expect("infallible");
    let body = http_body_util::BodyExt::collect(response.into_body()).await.expect("body").to_bytes();
    let marked: Vec<bool> = serde_json::from_slice(&body).expect("json");
    assert_eq!(marked, [true, true, true, true, false]);
}
