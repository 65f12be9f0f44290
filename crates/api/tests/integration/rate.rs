//! Rate limits per client, with the slot a 402 challenge holds for its paid retry.

use axum::http::{Method, StatusCode};
use svc_accounts::Scope;

use crate::support::{Reply, TestApp, assert_error, sign_challenge};

const ALICE: &str = "203.0.113.7:40000";
const BOB: &str = "198.51.100.9:40000";

fn coin_uri(app: &TestApp) -> String {
    format!("/api/x402/svc-tools/launchpad/coin/{}", app.sim.world.coins()[0].mint)
}

async fn two_a_minute() -> TestApp {
    TestApp::with_config(svc_api::ApiConfig { rate_per_minute: 2, ..Default::default() }).await
}

fn header<'a>(reply: &'a Reply, name: &str) -> Option<&'a str> {
    reply.headers.get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn unpaid_calls_past_the_limit_get_429_and_every_answer_carries_the_window() {
    let app = two_a_minute().await;
    let uri = coin_uri(&app);
    let first = app.get_from(ALICE, &uri, &[]).await;
    assert_eq!(first.status, StatusCode::PAYMENT_REQUIRED);
    assert_eq!((header(&first, "ratelimit-limit"), header(&first, "ratelimit-remaining")), (Some("2"), Some("1")));
    assert_eq!(header(&first, "ratelimit-reset"), Some("60"));
    app.clock.advance_ms(10_000);
    assert_eq!(app.get_from(ALICE, &uri, &[]).await.status, StatusCode::PAYMENT_REQUIRED);
    let refused = app.get_from(ALICE, &uri, &[]).await;
    assert_error(&refused, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert_eq!(header(&refused, "retry-after"), Some("50"), "the first call leaves the window in 50 s");
    assert_eq!(header(&refused, "ratelimit-remaining"), Some("0"));
    assert_eq!(app.get_from(BOB, &uri, &[]).await.status, StatusCode::PAYMENT_REQUIRED, "per client");
    app.clock.advance_ms(50_000);
    assert_eq!(app.get_from(ALICE, &uri, &[]).await.status, StatusCode::PAYMENT_REQUIRED, "the window slid");
}

#[tokio::test]
async fn the_paid_retry_of_a_challenge_is_served_even_when_the_client_is_out_of_rate() {
    let app = two_a_minute().await;
    let uri = coin_uri(&app);
    let challenge = app.get_from(ALICE, &uri, &[]).await;
    // The client then exhausts its window: unpaid, and paid by the same wallet from elsewhere.
    assert_eq!(app.get_from(ALICE, &uri, &[]).await.status, StatusCode::PAYMENT_REQUIRED);
    assert_eq!(app.get_from(ALICE, &uri, &[]).await.status, StatusCode::TOO_MANY_REQUESTS);
    for nonce in [11, 12] {
        let paid = app.get_from(BOB, &uri, &[("payment-signature", &sign_challenge(&challenge, nonce))]).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    }
    let over = app.get_from(BOB, &uri, &[("payment-signature", &sign_challenge(&challenge, 13))]).await;
    assert_error(&over, StatusCode::TOO_MANY_REQUESTS, "rate_limited");

    // Both of Alice's challenges hold a slot for their paid retries.
    for nonce in [1, 2] {
        let retry = app.get_from(ALICE, &uri, &[("payment-signature", &sign_challenge(&challenge, nonce))]).await;
        assert_eq!(retry.status, StatusCode::OK, "{}", retry.text());
        assert!(retry.headers.contains_key("payment-response"));
    }
    let third = app.get_from(ALICE, &uri, &[("payment-signature", &sign_challenge(&challenge, 3))]).await;
    assert_eq!(third.status, StatusCode::TOO_MANY_REQUESTS, "no slot left: held slots are used once");
    assert_eq!(app.paid_calls().await, 4);
}

#[tokio::test]
async fn a_held_slot_lasts_as_long_as_its_challenge() {
    let app = two_a_minute().await;
    let uri = coin_uri(&app);
    let challenge = app.get_from(ALICE, &uri, &[]).await;
    for nonce in [21, 22] {
        let paid = app.get_from(BOB, &uri, &[("payment-signature", &sign_challenge(&challenge, nonce))]).await;
        assert_eq!(paid.status, StatusCode::OK);
    }
    app.clock.advance_ms(301_000);
    // The wallet's minute has passed too, so the retry is counted normally and passes; what
    // matters is that the hold is gone: a second late retry is counted as well.
    let late = app.get_from(ALICE, &uri, &[("payment-signature", &sign_challenge(&challenge, 23))]).await;
    assert_ne!(late.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(header(&late, "ratelimit-remaining"), Some("1"), "counted against the wallet, no hold used");
}

#[tokio::test]
async fn top_picks_allow_thirty_calls_a_minute_per_client() {
    let app = TestApp::new().await;
    for _ in 0..30 {
        assert_eq!(app.get_from(ALICE, "/api/x402/alpha/top-picks", &[]).await.status, StatusCode::PAYMENT_REQUIRED);
    }
    let refused = app.get_from(ALICE, "/api/x402/alpha/top-picks", &[]).await;
    assert_error(&refused, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert_eq!(header(&refused, "ratelimit-limit"), Some("30"));
    assert_eq!(app.get_from(ALICE, &coin_uri(&app), &[]).await.status, StatusCode::PAYMENT_REQUIRED, "own bucket");
}

#[tokio::test]
async fn credit_calls_are_limited_per_account_and_a_refused_call_takes_nothing() {
    let app = two_a_minute().await;
    let (account, key) = app.account_with_credits("1.00", &[Scope::Data]).await;
    let uri = coin_uri(&app).replace("/api/x402/svc-tools", "/api/svc-tools");
    for remaining in ["1", "0"] {
        let reply = app.call_with(&Method::GET, &uri, None, &[("x-api-key", &key)]).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(header(&reply, "ratelimit-remaining"), Some(remaining));
    }
    let refused = app.call_with(&Method::GET, &uri, None, &[("x-api-key", &key)]).await;
    assert_error(&refused, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert_eq!(app.balance(&account).await, 1_000_000 - 2 * 5_000);
}

/// Two instances on one Redis (`TEST_REDIS_URL`, set by CI) see one limit, one preview quota
/// and one set of held slots, as replicas behind a load balancer must.
#[tokio::test]
async fn the_redis_backed_limit_is_shared_by_two_app_instances() {
    let Ok(url) = std::env::var("TEST_REDIS_URL") else {
        eprintln!("skipped: TEST_REDIS_URL is not set");
        return;
    };
    let namespace = format!("svc-test:{}:", uuid::Uuid::new_v4().simple());
    let replica = || {
        TestApp::with(crate::support::Setup {
            config: svc_api::ApiConfig { rate_per_minute: 2, ..Default::default() },
            redis: Some((url.clone(), namespace.clone())),
            ..Default::default()
        })
    };
    let (one, two) = (replica().await, replica().await);
    let uri = coin_uri(&one);
    let challenge = one.get_from(ALICE, &uri, &[]).await;
    assert_eq!(challenge.status, StatusCode::PAYMENT_REQUIRED);
    assert_eq!(two.get_from(ALICE, &uri, &[]).await.status, StatusCode::PAYMENT_REQUIRED);
    assert_error(&one.get_from(ALICE, &uri, &[]).await, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert_error(&two.get_from(ALICE, &uri, &[]).await, StatusCode::TOO_MANY_REQUESTS, "rate_limited");

    // The wallet runs out of its window on one replica...
    for nonce in [32, 33] {
        let paid = one.get_from(BOB, &uri, &[("payment-signature", &sign_challenge(&challenge, nonce))]).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    }
    let over = two.get_from(BOB, &uri, &[("payment-signature", &sign_challenge(&challenge, 34))]).await;
    assert_error(&over, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    // ...yet the slot Alice's challenge holds on one replica serves her paid retry on the other.
    let retry = two.get_from(ALICE, &uri, &[("payment-signature", &sign_challenge(&challenge, 31))]).await;
    assert_eq!(retry.status, StatusCode::OK, "{}", retry.text());

    let preview = format!("{uri}?preview=true");
    for _ in 0..3 {
        assert_eq!(one.get_from(BOB, &preview, &[]).await.status, StatusCode::OK);
    }
    for _ in 0..2 {
        assert_eq!(two.get_from(BOB, &preview, &[]).await.status, StatusCode::OK);
    }
    let sixth = one.get_from(BOB, &preview, &[]).await;
    assert_error(&sixth, StatusCode::TOO_MANY_REQUESTS, "preview_quota_exceeded");
}

const TOP_PICKS: &str = "/api/x402/alpha/top-picks";

/// `header` (a signed payment) naming another payer: decodable, but its signature is not
/// that payer's.
fn forged_for(header: &str, index: u8) -> String {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(header).expect("base64");
    let mut message: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
    message["payload"]["authorization"]["from"] = format!("0x{}", format!("{index:02x}").repeat(20)).into();
    svc_x402::encode_header(&message)
}

#[tokio::test]
async fn junk_payments_earn_no_held_slot_so_a_wallet_gets_429_after_thirty_top_picks() {
    let app = TestApp::new().await;
    let challenge = app.get_from(ALICE, TOP_PICKS, &[]).await;
    assert_eq!(challenge.status, StatusCode::PAYMENT_REQUIRED);
    let (mut served, mut limited) = (0, 0);
    for nonce in 0..45u8 {
        // A junk payment, then a real one: the junk must not buy the real one a slot.
        let junk = app.get_from(ALICE, TOP_PICKS, &[("payment-signature", "junk")]).await;
        assert!(matches!(junk.status, StatusCode::PAYMENT_REQUIRED | StatusCode::TOO_MANY_REQUESTS));
        let paid = app.get_from(ALICE, TOP_PICKS, &[("payment-signature", &sign_challenge(&challenge, nonce))]).await;
        match paid.status {
            StatusCode::OK => served += 1,
            StatusCode::TOO_MANY_REQUESTS => limited += 1,
            other => panic!("{other}: {}", paid.text()),
        }
    }
    assert!(served <= 30, "{served} answers in a minute against 30");
    assert_eq!(served + limited, 45);
    assert_eq!(app.paid_calls().await, served);
}

#[tokio::test]
async fn forged_payments_naming_fresh_wallets_count_against_the_ip_and_hold_nothing() {
    let app = two_a_minute().await;
    let uri = coin_uri(&app);
    let challenge = app.get_from(ALICE, &uri, &[]).await;
    let real = sign_challenge(&challenge, 31);
    // Each names another wallet, so a per-wallet count alone would never fill.
    let first = app.get_from(ALICE, &uri, &[("payment-signature", &forged_for(&real, 1))]).await;
    assert_eq!(first.status, StatusCode::PAYMENT_REQUIRED, "{}", first.text());
    // The IP is at its limit now; the slot Alice's challenge holds admits one more attempt,
    // which, refused, puts the slot back but counts as a refused payment.
    let second = app.get_from(ALICE, &uri, &[("payment-signature", &forged_for(&real, 2))]).await;
    assert_eq!(second.status, StatusCode::PAYMENT_REQUIRED, "{}", second.text());
    for index in 3..6 {
        let more = app.get_from(ALICE, &uri, &[("payment-signature", &forged_for(&real, index))]).await;
        assert_error(&more, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    }
    // The IP spent its minute on junk, its own real payment included.
    assert_error(
        &app.get_from(ALICE, &uri, &[("payment-signature", &real)]).await,
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
    );
    assert_eq!(app.paid_calls().await, 0);
    // The forged claims cost the wallets they named nothing.
    let bob = app.get_from(BOB, &uri, &[("payment-signature", &forged_for(&sign_challenge(&challenge, 33), 1))]).await;
    assert_eq!(bob.status, StatusCode::PAYMENT_REQUIRED);
}

/// The limits an operator set: Top Picks off, the launchpad coin route at 2 a minute, the
/// preview quota off.
async fn operator_limits() -> TestApp {
    let route_rates = [("alpha.top_picks", 0), ("infra.launchpad_coin", 2)].into_iter().collect();
    TestApp::with_config(svc_api::ApiConfig { route_rates, previews_per_hour: 0, ..Default::default() }).await
}

#[tokio::test]
async fn an_operator_sets_a_routes_limit_and_zero_turns_a_limit_off() {
    let app = operator_limits().await;
    let coin = coin_uri(&app);
    for _ in 0..2 {
        assert_eq!(app.get_from(ALICE, &coin, &[]).await.status, StatusCode::PAYMENT_REQUIRED);
    }
    let refused = app.get_from(ALICE, &coin, &[]).await;
    assert_error(&refused, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert_eq!(header(&refused, "ratelimit-limit"), Some("2"), "the operator's limit, not the default");

    // Top Picks allow 30 a minute by contract; this deployment turned that off.
    for _ in 0..40 {
        let reply = app.get_from(ALICE, "/api/x402/alpha/top-picks", &[]).await;
        assert_eq!(reply.status, StatusCode::PAYMENT_REQUIRED);
        assert_eq!(header(&reply, "ratelimit-limit"), None, "no window to report");
    }
    // So did the preview quota (5 an hour by contract).
    for _ in 0..8 {
        let preview = app.get_from(ALICE, "/api/x402/alpha/top-picks?preview=true", &[]).await;
        assert_eq!(preview.status, StatusCode::OK, "{}", preview.text());
        assert_eq!(preview.json()["preview"]["remaining"], serde_json::Value::Null);
    }
}

#[tokio::test]
async fn the_catalogue_shows_each_routes_limit_on_this_deployment() {
    let app = operator_limits().await;
    let catalogue = app.get("/api/x402/catalogue").await.json();
    let limit_of = |id: &str| {
        catalogue["resources"].as_array().expect("resources").iter().find(|r| r["id"] == id).expect("listed")
            ["rate_limit_per_minute"]
            .clone()
    };
    assert_eq!(limit_of("alpha.top_picks"), serde_json::Value::Null, "turned off");
    assert_eq!(limit_of("infra.launchpad_coin"), 2);
    assert_eq!(limit_of("alpha.exodus"), 120, "the default");
}
