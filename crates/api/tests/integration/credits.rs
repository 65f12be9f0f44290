//! The credit-billed twin of every paid route (`/api/svc-tools/*`): API keys, atomic debits
//! that never overspend, refunds of failed calls, and one error shape for every refusal.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use svc_accounts::{self as accounts, Scope};
use svc_simulator::Fault;

use crate::support::{NOW_MS, Reply, TestApp, assert_error, assert_invalid_at};

/// The launchpad lookup's credit price (the catalogue's), in USDC atomic units.
const PRICE: u64 = 5_000;

fn coin_uri(app: &TestApp, index: usize) -> String {
    format!("/api/svc-tools/launchpad/coin/{}", app.sim.world.coins()[index].mint)
}

async fn with_key(app: &TestApp, uri: &str, key: &str) -> Reply {
    app.call_with(&Method::GET, uri, None, &[("x-api-key", key)]).await
}

#[tokio::test]
async fn a_call_with_a_key_is_served_and_takes_the_credit_price_once() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("1.00", &[Scope::Data]).await;
    let reply = with_key(&app, &coin_uri(&app, 0), &key).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(reply.headers.get("payment-response").is_none(), "credits are not an x402 settlement");
    assert_eq!(app.balance(&account).await, 1_000_000 - PRICE);

    let bearer = format!("Bearer {key}");
    let reply = app.call_with(&Method::GET, &coin_uri(&app, 1), None, &[("authorization", &bearer)]).await;
    assert_eq!(reply.status, StatusCode::OK, "the key is also accepted as a bearer token: {}", reply.text());
    assert_eq!(app.balance(&account).await, 1_000_000 - 2 * PRICE);
    assert_eq!(app.paid_calls().await, 0, "no x402 payment is involved");
}

#[tokio::test]
async fn a_call_without_a_usable_key_is_a_401_that_says_how_to_get_access() {
    let app = TestApp::new().await;
    let uri = coin_uri(&app, 0);
    let missing = app.get(&uri).await;
    assert_error(&missing, StatusCode::UNAUTHORIZED, "unauthorized");
    assert_eq!(missing.headers.get("www-authenticate").and_then(|v| v.to_str().ok()), Some("Bearer"));
    assert!(missing.json()["detail"].as_str().is_some_and(|d| d.contains("/api/x402")), "{}", missing.text());

    let unknown = format!("svck_{}", "0".repeat(64));
    for key in [unknown.as_str(), "svck_short", "not-a-key", ""] {
        assert_error(&with_key(&app, &uri, key).await, StatusCode::UNAUTHORIZED, "unauthorized");
    }
    assert!(app.sim.faults.log().is_empty(), "a refused call never reaches the vendor");
}

#[tokio::test]
async fn revoked_and_expired_keys_get_the_same_401_as_unknown_ones() {
    let app = TestApp::new().await;
    let (account, live) = app.account_with_credits("1.00", &[Scope::Data]).await;
    let uri = coin_uri(&app, 0);
    let unknown = with_key(&app, &uri, &format!("svck_{}", "1".repeat(64))).await;

    let revoked = accounts::issue_key(&app.store, &account, "old", &[Scope::Data], None, NOW_MS).await.expect("store");
    assert!(app.store.revoke_api_key(&account, &revoked.record.id, NOW_MS).await.expect("store"));
    let expired =
        accounts::issue_key(&app.store, &account, "short", &[Scope::Data], Some(NOW_MS), NOW_MS).await.expect("store");
    for key in [&revoked.secret, &expired.secret] {
        let reply = with_key(&app, &uri, key).await;
        assert_error(&reply, StatusCode::UNAUTHORIZED, "unauthorized");
        assert_eq!(reply.body, unknown.body, "no refusal tells which keys exist");
    }
    assert_eq!(with_key(&app, &uri, &live).await.status, StatusCode::OK);
    assert_eq!(app.balance(&account).await, 1_000_000 - PRICE);
}

#[tokio::test]
async fn a_key_without_the_data_scope_is_a_403() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("1.00", &[Scope::GatewayRead]).await;
    let reply = with_key(&app, &coin_uri(&app, 0), &key).await;
    assert_error(&reply, StatusCode::FORBIDDEN, "insufficient_scope");
    assert_eq!(app.balance(&account).await, 1_000_000);

    let (_, sandbox) = app.account_with_credits("1.00", &[Scope::GatewayData]).await;
    assert_eq!(with_key(&app, &coin_uri(&app, 0), &sandbox).await.status, StatusCode::OK, "sandboxes spend too");
}

#[tokio::test]
async fn input_is_validated_before_the_key_is_even_looked_at() {
    let app = TestApp::new().await;
    let reply = app.get("/api/svc-tools/social/search?query=sol&max_results=5000").await;
    assert_invalid_at(&reply, &["query".into(), "max_results".into()]);
}

#[tokio::test]
async fn too_few_credits_is_a_402_with_balance_price_and_how_to_top_up() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("0.004", &[Scope::Data]).await;
    let reply = with_key(&app, &coin_uri(&app, 0), &key).await;
    assert_error(&reply, StatusCode::PAYMENT_REQUIRED, "insufficient_credits");
    let body = reply.json();
    assert_eq!(body["balance"], "0.004");
    assert_eq!(body["price"], "0.005");
    assert!(body["top_up"].as_str().is_some_and(|t| t.contains("/api/x402/credits/purchase")), "{body}");
    let pay_per_call = coin_uri(&app, 0).replace("/api/svc-tools/", "over x402 at /api/x402/svc-tools/");
    assert!(body["top_up"].as_str().is_some_and(|t| t.contains(&pay_per_call)), "the twin that exists: {body}");
    assert!(reply.headers.get("payment-required").is_none(), "this 402 is not an x402 challenge");
    assert_eq!(app.balance(&account).await, 4_000, "nothing was taken");
    assert!(app.sim.faults.log().is_empty());
}

#[tokio::test]
async fn a_hundred_concurrent_calls_on_credits_for_ten_serve_exactly_ten() {
    let app = Arc::new(TestApp::new().await);
    let (account, key) = app.account_with_credits("0.05", &[Scope::Data]).await;
    let calls = (0..100).map(|i| {
        let (app, key) = (Arc::clone(&app), key.clone());
        tokio::spawn(async move {
            let uri = coin_uri(&app, i % 20);
            with_key(&app, &uri, &key).await.status
        })
    });
    let statuses = futures::future::join_all(calls).await;
    let served = statuses.iter().filter(|s| *s.as_ref().expect("task") == StatusCode::OK).count();
    let refused = statuses.iter().filter(|s| *s.as_ref().expect("task") == StatusCode::PAYMENT_REQUIRED).count();
    assert_eq!((served, refused), (10, 90));
    assert_eq!(app.balance(&account).await, 0);
}

#[tokio::test]
async fn a_call_that_fails_upstream_gives_its_credits_back() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("1.00", &[Scope::Data]).await;
    for _ in 0..3 {
        app.sim.faults.push("launchpad", Fault::Status { status: 500, retry_after: None });
    }
    let reply = with_key(&app, &coin_uri(&app, 0), &key).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(app.balance(&account).await, 1_000_000);
    let ledger = app.store.ledger(&account, 10).await.expect("store");
    let kinds: Vec<&str> = ledger.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["refund", "call", "grant"], "the failed call and its refund both stay on record");

    assert_eq!(with_key(&app, &coin_uri(&app, 0), &key).await.status, StatusCode::OK);
    assert_eq!(app.balance(&account).await, 1_000_000 - PRICE);
}

#[tokio::test]
async fn the_volume_discount_applies_to_credits_by_the_accounts_trailing_calls() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("10.00", &[Scope::Data]).await;
    for i in 0..100 {
        let entry = format!("cl_seed{i}");
        let debit = app.store.debit_credits(&entry, &account, PRICE, "infra.launchpad_coin", None, NOW_MS - 1000).await;
        assert_eq!(debit.expect("store"), svc_store::Debit::Taken);
    }
    let before = app.balance(&account).await;
    assert_eq!(with_key(&app, &coin_uri(&app, 0), &key).await.status, StatusCode::OK);
    assert_eq!(before - app.balance(&account).await, PRICE * 80 / 100, "100 calls in 30 days: 20 % off");
}

/// The owner signed in with a wallet pays a data twin from credits with the sign-in token; a
/// twin that moves funds still takes a key made for trading only.
#[tokio::test]
async fn a_sign_in_token_pays_data_twins_from_credits_but_never_trades() {
    let app = TestApp::new().await;
    let wallet = svc_chain_evm::Payer::from_key(crate::support::PAYER_KEY).expect("key");
    let token = app.sign_in(&wallet).await;
    let address = wallet.address().to_string().to_lowercase();
    let account = app.store.account_by_wallet(&address).await.expect("store").expect("account");
    accounts::grant_credits(&app.store, &account.id, "1".parse().expect("usd"), "grant:owner", NOW_MS)
        .await
        .expect("grant");
    let bearer = format!("Bearer {token}");
    let reply = app.call_with(&Method::GET, "/api/svc-tools/top-picks-lite", None, &[("authorization", &bearer)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let price = svc_catalogue::catalogue().get("alpha.top_picks_lite").expect("route").credit_price;
    assert_eq!(app.balance(&account.id).await, 1_000_000 - price.atomic());

    let order = crate::walk::samples(&app).into_iter().find(|s| s.route == "infra.perpdex_exchange").expect("sample");
    let twin = svc_catalogue::route::credits_twin(&order.uri).expect("twin");
    let trade = app.call_with(&Method::POST, &twin, order.body.as_deref(), &[("authorization", &bearer)]).await;
    assert!(trade.status == StatusCode::UNAUTHORIZED || trade.status == StatusCode::FORBIDDEN, "{}", trade.text());
    assert_eq!(app.balance(&account.id).await, 1_000_000 - price.atomic(), "nothing taken for the refused trade");
    let forged =
        app.call_with(&Method::GET, "/api/svc-tools/top-picks-lite", None, &[("authorization", "Bearer forged")]).await;
    assert_eq!(forged.status, StatusCode::UNAUTHORIZED, "{}", forged.text());
}
