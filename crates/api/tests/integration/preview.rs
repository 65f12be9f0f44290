//! Free previews: real data, cut down and priced, a few per client IP per hour.

use axum::http::StatusCode;
use svc_simulator::Fault;

use crate::support::{TestApp, assert_error, assert_invalid_at, assert_matches_schema};

const COIN: &str = "/api/x402/svc-tools/launchpad/coin/{mint}";
const ALICE: &str = "203.0.113.7:40000";
const BOB: &str = "198.51.100.9:40000";

fn preview_uri(app: &TestApp, index: usize) -> String {
    format!("{}?preview=true", COIN.replace("{mint}", &app.sim.world.coins()[index].mint))
}

#[tokio::test]
async fn a_preview_is_free_real_data_in_the_paid_shape_with_its_price() {
    let app = TestApp::new().await;
    let reply = app.get_from(ALICE, &preview_uri(&app, 0), &[]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(reply.headers.get("payment-response").is_none());
    assert_eq!(reply.headers.get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"));
    let mut body = reply.json();
    let about = body.as_object_mut().expect("object").remove("preview").expect("preview details");
    assert_eq!(body["mint"], app.sim.world.coins()[0].mint, "real data");
    assert_matches_schema("get", COIN, &body);
    assert_eq!(about["price"]["usd"], "0.005");
    assert_eq!(about["price"]["atomic"], "5000");
    assert_eq!(about["remaining"], 4);
    assert!(about["served_at"].is_string() && about["resets_at"].is_string());
    assert_eq!(reply.headers.get("ratelimit-limit").and_then(|v| v.to_str().ok()), Some("5"));
    assert_eq!(reply.headers.get("ratelimit-remaining").and_then(|v| v.to_str().ok()), Some("4"));
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn five_previews_an_hour_per_ip_then_429_until_the_window_slides() {
    let app = TestApp::new().await;
    for i in 0..5 {
        assert_eq!(app.get_from(ALICE, &preview_uri(&app, i), &[]).await.status, StatusCode::OK);
        app.clock.advance_ms(60_000);
    }
    let refused = app.get_from(ALICE, &preview_uri(&app, 5), &[]).await;
    assert_error(&refused, StatusCode::TOO_MANY_REQUESTS, "preview_quota_exceeded");
    // The first preview was 5 minutes ago: its slot frees in 55 minutes.
    assert_eq!(refused.headers.get("retry-after").and_then(|v| v.to_str().ok()), Some("3300"));
    assert_eq!(refused.headers.get("ratelimit-remaining").and_then(|v| v.to_str().ok()), Some("0"));

    assert_eq!(app.get_from(BOB, &preview_uri(&app, 5), &[]).await.status, StatusCode::OK, "per IP");
    // Another client's X-Forwarded-For is not believed from an untrusted peer.
    let spoofed = app.get_from(ALICE, &preview_uri(&app, 5), &[("x-forwarded-for", "192.0.2.1")]).await;
    assert_eq!(spoofed.status, StatusCode::TOO_MANY_REQUESTS);

    app.clock.advance_ms(55 * 60_000);
    assert_eq!(app.get_from(ALICE, &preview_uri(&app, 5), &[]).await.status, StatusCode::OK, "one slot back");
    assert_eq!(app.get_from(ALICE, &preview_uri(&app, 6), &[]).await.status, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_client_is_counted() {
    let config = svc_api::ApiConfig { trusted_proxies: vec!["10.0.0.1".parse().expect("ip")], ..Default::default() };
    let app = TestApp::with_config(config).await;
    let proxy = "10.0.0.1:5000";
    for _ in 0..5 {
        let reply = app.get_from(proxy, &preview_uri(&app, 0), &[("x-forwarded-for", "192.0.2.1, 10.0.0.1")]).await;
        assert_eq!(reply.status, StatusCode::OK);
    }
    let same = app.get_from(proxy, &preview_uri(&app, 0), &[("x-forwarded-for", "192.0.2.1")]).await;
    assert_eq!(same.status, StatusCode::TOO_MANY_REQUESTS);
    let other = app.get_from(proxy, &preview_uri(&app, 0), &[("x-forwarded-for", "192.0.2.2")]).await;
    assert_eq!(other.status, StatusCode::OK, "each forwarded client has its own quota");
}

#[tokio::test]
async fn a_caller_with_an_api_key_sees_its_own_discounted_credit_price() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("10", &[svc_accounts::Scope::Data]).await;
    for i in 0..100 {
        let entry = format!("cl_seed{i}");
        let debit =
            app.store.debit_credits(&entry, &account, 5_000, "infra.launchpad_coin", None, crate::support::NOW_MS);
        assert_eq!(debit.await.expect("store"), svc_store::Debit::Taken);
    }
    let known = app.get_from(ALICE, &preview_uri(&app, 0), &[("x-api-key", &key)]).await.json();
    assert_eq!(known["preview"]["price"]["your_tier"], "volume");
    assert_eq!(known["preview"]["price"]["your_credits"], "0.004", "20 % off 0.005");
    let anonymous = app.get_from(BOB, &preview_uri(&app, 0), &[]).await.json();
    assert!(anonymous["preview"]["price"].get("your_credits").is_none());
    let wrong = app.get_from(BOB, &preview_uri(&app, 0), &[("x-api-key", "svck_wrong")]).await;
    assert_eq!(wrong.status, StatusCode::OK, "a bad key on a preview is just an anonymous preview");
}

#[tokio::test]
async fn invalid_input_is_a_422_and_costs_no_preview() {
    let app = TestApp::new().await;
    for _ in 0..6 {
        let reply =
            app.get_from(ALICE, "/api/x402/svc-tools/social/search?query=sol&max_results=5000&preview=true", &[]).await;
        assert_invalid_at(&reply, &["query".into(), "max_results".into()]);
    }
    assert_eq!(app.get_from(ALICE, &preview_uri(&app, 0), &[]).await.json()["preview"]["remaining"], 4);
}

#[tokio::test]
async fn a_preview_that_fails_upstream_is_given_back() {
    let app = TestApp::new().await;
    for _ in 0..3 {
        app.sim.faults.push("launchpad", Fault::Status { status: 500, retry_after: None });
    }
    let failed = app.get_from(ALICE, &preview_uri(&app, 0), &[]).await;
    assert_error(&failed, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(app.get_from(ALICE, &preview_uri(&app, 0), &[]).await.json()["preview"]["remaining"], 4);
}

#[tokio::test]
async fn previews_that_fail_on_the_clients_own_input_count_and_the_sixth_calls_no_vendor() {
    let app = TestApp::new().await;
    // A well-formed mint the launchpad does not know: the vendor answers 404.
    let unknown = format!("{}?preview=true", COIN.replace("{mint}", "So11111111111111111111111111111111111111112"));
    for _ in 0..5 {
        let reply = app.get_from(ALICE, &unknown, &[]).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text());
    }
    let vendor_calls = app.sim.faults.log().len();
    assert_eq!(vendor_calls, 5, "{:?}", app.sim.faults.log());
    assert_error(&app.get_from(ALICE, &unknown, &[]).await, StatusCode::TOO_MANY_REQUESTS, "preview_quota_exceeded");
    assert_eq!(app.sim.faults.log().len(), vendor_calls, "the refused preview reached the vendor");
}

#[tokio::test]
async fn a_preview_says_how_much_of_each_list_it_shows() {
    let app = TestApp::new().await;
    let uri = "/api/x402/svc-tools/social/search?query=%24SOL&max_results=10&preview=true";
    let reply = app.get_from(ALICE, uri, &[]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    let shown = body["data"].as_array().expect("data").len();
    assert_eq!(body["meta"]["result_count"], 10, "the vendor's count describes the whole answer");
    let lists = body["preview"]["lists"].as_array().expect("lists");
    let data = lists.iter().find(|l| l["path"] == "/data").expect("the cut list is named");
    assert_eq!(data["total"], 10);
    assert_eq!(data["shown"], shown);
    assert!(shown < 10);
}

/// `preview` is a boolean: a value that is neither `true` nor `false` is a 422 naming it, never
/// a challenge to pay for what was meant as a free look (found by schemathesis).
#[tokio::test]
async fn a_preview_flag_that_is_not_a_boolean_is_a_422() {
    let app = TestApp::new().await;
    let coin = COIN.replace("{mint}", &app.sim.world.coins()[0].mint);
    for junk in ["null", "1", "yes", ""] {
        let reply = app.get_from(ALICE, &format!("{coin}?preview={junk}"), &[]).await;
        assert_invalid_at(&reply, &["query".into(), "preview".into()]);
    }
    let paid = app.get_from(ALICE, &format!("{coin}?preview=false"), &[]).await;
    assert_eq!(paid.status, StatusCode::PAYMENT_REQUIRED, "false asks for the paid answer");
    assert_eq!(app.paid_calls().await, 0);
}
