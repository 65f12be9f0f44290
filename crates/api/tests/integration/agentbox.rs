//! The sandbox routes on a server that cannot run sandboxes (these tests set none up): what
//! is readable still answers, every start says why it cannot, and scopes hold. The sandboxes
//! themselves are tested for real in `crates/server/tests/agentbox.rs`.

use axum::http::{Method, StatusCode};
use svc_accounts::Scope;

use crate::support::TestApp;

#[tokio::test]
async fn without_sandboxes_templates_still_list_and_a_start_is_a_503_that_says_why() {
    let app = TestApp::new().await;
    let (_, key) = app.account_with_credits("5", &[Scope::Gateway]).await;
    let auth = [("x-api-key", key.as_str())];
    let templates = app.call_with(&Method::GET, "/api/agentbox/templates", None, &auth).await;
    assert_eq!(templates.status, StatusCode::OK);
    let names: Vec<String> = templates.json()["templates"]
        .as_array()
        .expect("list")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(names, ["trader", "shitcoin-trader", "degen", "analyst"]);
    let start =
        app.call_with(&Method::POST, "/api/agentbox/gateway/start", Some(r#"{"template":"trader"}"#), &auth).await;
    assert_eq!(start.status, StatusCode::SERVICE_UNAVAILABLE, "{}", start.text());
    assert_eq!(start.json()["code"], "not_enabled");
    assert!(start.json()["detail"].as_str().is_some_and(|d| d.contains("not available on this server")));
    let logs = app.call_with(&Method::GET, "/api/agentbox/gateway/logs", None, &auth).await;
    assert_eq!(logs.status, StatusCode::SERVICE_UNAVAILABLE, "{}", logs.text());
    let none = app.call_with(&Method::GET, "/api/agentbox/gateway", None, &auth).await;
    assert_eq!((none.status, none.json()["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")));
}

#[tokio::test]
async fn only_gateway_scopes_reach_the_sandbox_routes_and_only_the_owners_scope_starts_one() {
    let app = TestApp::new().await;
    let (_, data) = app.account_with_credits("5", &[Scope::Data]).await;
    let (_, reader) = app.account_with_credits("5", &[Scope::GatewayRead, Scope::GatewayData]).await;
    for (method, path) in [
        (Method::GET, "/api/agentbox/templates"),
        (Method::GET, "/api/agentbox/gateway"),
        (Method::GET, "/api/agentbox/gateway/logs"),
        (Method::POST, "/api/agentbox/gateway/stop"),
    ] {
        let reply = app.call_with(&method, path, None, &[("x-api-key", data.as_str())]).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{method} {path} with a data key: {}", reply.text());
        let reply = app.call_with(&method, path, None, &[("x-api-key", "svck_forged")]).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{method} {path} with a forged key");
        let reply = app.call_with(&method, path, None, &[]).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{method} {path} with no credential");
    }
    let auth = [("x-api-key", reader.as_str())];
    assert_eq!(app.call_with(&Method::GET, "/api/agentbox/templates", None, &auth).await.status, StatusCode::OK);
    let start =
        app.call_with(&Method::POST, "/api/agentbox/gateway/start", Some(r#"{"template":"degen"}"#), &auth).await;
    assert_eq!(start.status, StatusCode::FORBIDDEN, "a sandbox's own key cannot start gateways");
    let stop = app.call_with(&Method::POST, "/api/agentbox/gateway/stop", None, &auth).await;
    assert_eq!(stop.status, StatusCode::FORBIDDEN);
}
