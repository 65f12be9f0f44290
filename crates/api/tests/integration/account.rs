//! Accounts through the HTTP app: sign-in with a wallet, the token it gives, API keys made
//! and revoked with it, and the account's credits and usage.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use svc_accounts::Scope;
use svc_chain_evm::Payer;
use svc_domain::rfc3339;

use crate::support::{NOW_MS, PAYER_KEY, Reply, SITE, TestApp, assert_error};

async fn post(app: &TestApp, uri: &str, body: &str, auth: Option<&str>) -> Reply {
    post_as(app, uri, body, auth, SITE).await
}

/// A POST with the `Host` header the sender chose.
async fn post_as(app: &TestApp, uri: &str, body: &str, auth: Option<&str>, host: &str) -> Reply {
    let bearer = auth.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("host", host)];
    if let Some(bearer) = &bearer {
        headers.push(("authorization", bearer));
    }
    app.call_with(&Method::POST, uri, Some(body), &headers).await
}

async fn get(app: &TestApp, uri: &str, auth: &str) -> Reply {
    let bearer = format!("Bearer {auth}");
    app.call_with(&Method::GET, uri, None, &[("authorization", &bearer)]).await
}

/// A fresh nonce's message, signed by `wallet`, issued at `issued_at_ms`.
async fn signed_message(app: &TestApp, wallet: &Payer, issued_at_ms: i64) -> (String, String) {
    app.signed_message(wallet, issued_at_ms).await
}

async fn sign_in(app: &TestApp, wallet: &Payer) -> String {
    app.sign_in(wallet).await
}

fn payer() -> Payer {
    Payer::from_key(PAYER_KEY).expect("key")
}

#[tokio::test]
async fn a_wallet_signs_in_and_its_account_is_opened_once() {
    let app = TestApp::new().await;
    let nonce = post(&app, "/api/auth/nonce", "", None).await.json();
    assert_eq!(nonce["domain"], SITE);
    assert_eq!(nonce["uri"], format!("http://{SITE}"));
    assert!(nonce["message_template"].as_str().is_some_and(|m| m.starts_with("127.0.0.1:8402 wants you to sign in")));

    let token = sign_in(&app, &payer()).await;
    let me = get(&app, "/api/account", &token).await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.text());
    let wallet = payer().address().to_string().to_lowercase();
    assert_eq!(me.json()["wallet"], wallet);
    assert_eq!(me.json()["balance"], "0");

    let again = sign_in(&app, &payer()).await;
    assert_eq!(get(&app, "/api/account", &again).await.json()["id"], me.json()["id"], "same wallet, same account");
}

#[tokio::test]
async fn replayed_forged_foreign_and_expired_sign_ins_are_refused() {
    let app = TestApp::new().await;

    let (message, signature) = signed_message(&app, &payer(), NOW_MS).await;
    assert_eq!(verify(&app, &message, &signature).await.status, StatusCode::OK);
    let replayed = verify(&app, &message, &signature).await;
    assert_error(&replayed, StatusCode::UNAUTHORIZED, "sign_in_refused");
    assert!(replayed.text().contains("nonce"), "{}", replayed.text());

    // Signed by another wallet than the one the message names.
    let (message, _) = signed_message(&app, &payer(), NOW_MS).await;
    let other = Payer::from_key(&format!("0x{}", "11".repeat(32))).expect("key");
    let forged = verify(&app, &message, &other.sign_message(&message).expect("sign")).await;
    assert_error(&forged, StatusCode::UNAUTHORIZED, "sign_in_refused");
    assert!(forged.text().contains("signature"), "{}", forged.text());
    // The refused message did not burn its nonce: the real signature still works.
    assert_eq!(verify(&app, &message, &payer().sign_message(&message).expect("sign")).await.status, StatusCode::OK);

    // Signed for another site.
    let (message, _) = signed_message(&app, &payer(), NOW_MS).await;
    let phished = message.replacen(SITE, "evil.example", 1);
    let foreign = verify(&app, &phished, &payer().sign_message(&phished).expect("sign")).await;
    assert!(foreign.text().contains("domain"), "{}", foreign.text());

    // Past its own expiry.
    let (message, _) = signed_message(&app, &payer(), NOW_MS).await;
    let expired = format!("{message}\nExpiration Time: {}", rfc3339(NOW_MS - 1000));
    let late = verify(&app, &expired, &payer().sign_message(&expired).expect("sign")).await;
    assert!(late.text().contains("expired"), "{}", late.text());

    // A nonce the server never gave.
    let (message, _) = signed_message(&app, &payer(), NOW_MS).await;
    let invented = message.replace(&message[message.find("Nonce: ").expect("nonce") + 7..][..32], &"a".repeat(32));
    let unknown = verify(&app, &invented, &payer().sign_message(&invented).expect("sign")).await;
    assert!(unknown.text().contains("nonce"), "{}", unknown.text());

    for (message, signature) in [("hello", "0x00"), ("", "")] {
        assert_eq!(verify(&app, message, signature).await.status, StatusCode::UNPROCESSABLE_ENTITY);
    }
}

#[tokio::test]
async fn a_message_signed_for_another_site_is_refused_whatever_host_the_request_names() {
    let app = TestApp::new().await;
    // The nonce is ours, but the victim signed the message on evil.example, which named
    // itself as the domain; the attacker replays it here with `Host: evil.example`.
    let nonce = post_as(&app, "/api/auth/nonce", "", None, "evil.example").await.json();
    assert_eq!(nonce["domain"], SITE, "the site comes from configuration, not from Host");
    let (message, _) = signed_message(&app, &payer(), NOW_MS).await;
    let phished = message.replace(SITE, "evil.example");
    let body = json!({"message": phished, "signature": payer().sign_message(&phished).expect("sign")}).to_string();
    let replayed = post_as(&app, "/api/auth/verify", &body, None, "evil.example").await;
    assert_error(&replayed, StatusCode::UNAUTHORIZED, "sign_in_refused");
    assert!(replayed.text().contains("domain"), "{}", replayed.text());
    assert_eq!(app.store.account_by_wallet(&payer().address().to_string().to_lowercase()).await.expect("store"), None);

    // A deployment with a public URL names it, whatever the Host.
    let site = svc_accounts::auth::Site::from_url("https://svc.example").expect("site");
    let config = svc_api::ApiConfig {
        sign_in: svc_accounts::auth::SignInConfig::ephemeral().for_site(site),
        ..svc_api::ApiConfig::default()
    };
    let app = TestApp::with_config(config).await;
    let nonce = post_as(&app, "/api/auth/nonce", "", None, "evil.example").await.json();
    assert_eq!((nonce["domain"].as_str(), nonce["uri"].as_str()), (Some("svc.example"), Some("https://svc.example")));
}

async fn verify(app: &TestApp, message: &str, signature: &str) -> Reply {
    let body = json!({"message": message, "signature": signature}).to_string();
    post(app, "/api/auth/verify", &body, None).await
}

#[tokio::test]
async fn a_nonce_expires_unused() {
    let app = TestApp::new().await;
    let (message, signature) = signed_message(&app, &payer(), NOW_MS).await;
    app.clock.advance_ms(601_000);
    let body = json!({"message": message, "signature": signature}).to_string();
    let reply = post(&app, "/api/auth/verify", &body, None).await;
    assert_error(&reply, StatusCode::UNAUTHORIZED, "sign_in_refused");
}

#[tokio::test]
async fn tokens_expire_and_forged_tokens_are_refused() {
    let app = TestApp::new().await;
    let token = sign_in(&app, &payer()).await;
    let mut tampered = token.clone();
    tampered.pop();
    for bad in [tampered.as_str(), "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "svck_nope", ""] {
        assert_error(&get(&app, "/api/account", bad).await, StatusCode::UNAUTHORIZED, "unauthorized");
    }
    assert_error(&app.get("/api/account").await, StatusCode::UNAUTHORIZED, "unauthorized");
    app.clock.advance_ms(3_601_000);
    assert_error(&get(&app, "/api/account", &token).await, StatusCode::UNAUTHORIZED, "unauthorized");
}

#[tokio::test]
async fn keys_are_made_shown_once_used_listed_without_secret_and_revoked() {
    let app = TestApp::new().await;
    let token = sign_in(&app, &payer()).await;
    let made = post(&app, "/api/account/keys", r#"{"name": "my agent", "expires_in_days": 30}"#, Some(&token)).await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.text());
    let made = made.json();
    let secret = made["key"].as_str().expect("secret").to_owned();
    assert!(secret.starts_with("svck_") && secret.len() == 69, "{secret}");
    assert_eq!(made["details"]["scopes"], json!(["data"]));
    let key_id = made["details"]["id"].as_str().expect("id").to_owned();

    // The key works where keys are accepted, and nowhere shows its secret again.
    let me = app.call_with(&Method::GET, "/api/account", None, &[("x-api-key", &secret)]).await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.text());
    let listed = get(&app, "/api/account/keys", &token).await;
    assert_eq!(listed.status, StatusCode::OK);
    for reply in [&me, &listed] {
        assert!(!reply.text().contains(&secret[5..]), "secret leaked: {}", reply.text());
    }
    assert_eq!(listed.json()["keys"][0]["prefix"], secret[..13]);

    // A key cannot manage keys: a leaked key must not mint more.
    let by_key = post(&app, "/api/account/keys", r#"{"name": "x"}"#, Some(&secret)).await;
    assert_error(&by_key, StatusCode::UNAUTHORIZED, "unauthorized");

    let revoked = app
        .call_with(
            &Method::DELETE,
            &format!("/api/account/keys/{key_id}"),
            None,
            &[("authorization", &format!("Bearer {token}"))],
        )
        .await;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.text());
    assert!(revoked.json()["revoked_at"].is_string());
    let after = app.call_with(&Method::GET, "/api/account", None, &[("x-api-key", &secret)]).await;
    assert_error(&after, StatusCode::UNAUTHORIZED, "unauthorized");
}

#[tokio::test]
async fn nobody_revokes_or_sees_another_accounts_keys() {
    let app = TestApp::new().await;
    let (_, other_secret) = app.account_with_credits("1.00", &[Scope::Data]).await;
    let other_id = app.store.api_key_by_hash(&svc_accounts::key_hash(&other_secret)).await.expect("store");
    let other_id = other_id.expect("key").id;
    let token = sign_in(&app, &payer()).await;
    let bearer = format!("Bearer {token}");
    let reply = app
        .call_with(&Method::DELETE, &format!("/api/account/keys/{other_id}"), None, &[("authorization", &bearer)])
        .await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(get(&app, "/api/account/keys", &token).await.json()["keys"], json!([]));
    let still = app.call_with(&Method::GET, "/api/account", None, &[("x-api-key", &other_secret)]).await;
    assert_eq!(still.status, StatusCode::OK);
}

#[tokio::test]
async fn credits_and_usage_show_the_ledger_and_the_discount_tier() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("1.00", &[Scope::Data]).await;
    let mint = app.sim.world.coins()[0].mint.clone();
    let call = app
        .call_with(&Method::GET, &format!("/api/svc-tools/launchpad/coin/{mint}"), None, &[("x-api-key", &key)])
        .await;
    assert_eq!(call.status, StatusCode::OK, "{}", call.text());

    let credits = app.call_with(&Method::GET, "/api/account/credits", None, &[("x-api-key", &key)]).await.json();
    assert_eq!(credits["balance"], "0.995");
    let amounts: Vec<&Value> = credits["entries"].as_array().expect("entries").iter().map(|e| &e["amount"]).collect();
    assert_eq!(amounts, [&json!("-0.005"), &json!("1")]);
    assert_eq!(credits["entries"][0]["route"], "infra.launchpad_coin");

    let usage = app.call_with(&Method::GET, "/api/account/usage", None, &[("x-api-key", &key)]).await.json();
    assert_eq!((usage["calls"].clone(), usage["spent"].clone()), (json!(1), json!("0.005")));
    assert_eq!(usage["tier"], "standard");
    assert_eq!(usage["calls_to_next_tier"], 99);
    assert_eq!(app.balance(&account).await, 995_000);
}

const PURCHASE: &str = "/api/x402/credits/purchase";

#[tokio::test]
async fn credits_bought_over_x402_land_on_the_paying_wallets_account_once() {
    let app = TestApp::new().await;
    let challenge = app.call(&Method::POST, PURCHASE, Some(r#"{"amount": "5"}"#)).await;
    assert_eq!(challenge.status, StatusCode::PAYMENT_REQUIRED);
    assert_eq!(challenge.json()["accepts"][0]["amount"], "5000000", "the price is the amount");
    let header = app.payment_for(&Method::POST, PURCHASE, Some(r#"{"amount": "5"}"#), 41).await;
    let bought =
        app.call_with(&Method::POST, PURCHASE, Some(r#"{"amount": "5"}"#), &[("payment-signature", &header)]).await;
    assert_eq!(bought.status, StatusCode::OK, "{}", bought.text());
    assert!(bought.headers.contains_key("payment-response"));
    let account_id = bought.json()["account_id"].as_str().expect("account").to_owned();
    let wallet = payer().address().to_string().to_lowercase();
    let account = app.store.account_by_wallet(&wallet).await.expect("store").expect("opened for the payer");
    assert_eq!((account.id.as_str(), account.balance), (account_id.as_str(), 5_000_000));

    let again =
        app.call_with(&Method::POST, PURCHASE, Some(r#"{"amount": "5"}"#), &[("payment-signature", &header)]).await;
    assert_eq!(again.status, StatusCode::PAYMENT_REQUIRED, "one payment buys once: {}", again.text());
    assert_eq!(app.balance(&account_id).await, 5_000_000);

    // Signing in with the same wallet reaches the same account and its credits.
    let token = sign_in(&app, &payer()).await;
    assert_eq!(get(&app, "/api/account/credits", &token).await.json()["entries"][0]["kind"], "purchase");
}

#[tokio::test]
async fn credits_can_be_bought_for_another_account_but_not_for_an_unknown_one() {
    let app = TestApp::new().await;
    let (account, _) = app.account_with_credits("0", &[Scope::Data]).await;
    let body = json!({"amount": "2.5", "account_id": account}).to_string();
    let bought = app.pay(&Method::POST, PURCHASE, Some(&body), 42).await;
    assert_eq!(bought.status, StatusCode::OK, "{}", bought.text());
    assert_eq!(app.balance(&account).await, 2_500_000);

    let unknown = json!({"amount": "2.5", "account_id": "acct_0123abcd"}).to_string();
    let refused = app.pay(&Method::POST, PURCHASE, Some(&unknown), 43).await;
    assert_error(&refused, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.paid_calls().await, 1, "the refused purchase took nothing");
}

#[tokio::test]
async fn purchases_outside_the_bounds_are_422_and_have_no_credit_twin() {
    let app = TestApp::new().await;
    for amount in [r#""0.5""#, r#""1000.01""#, r#""1.0000001""#, r#""-3""#, "5"] {
        let reply = app.call(&Method::POST, PURCHASE, Some(&format!(r#"{{"amount": {amount}}}"#))).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{amount}: {}", reply.text());
    }
    for amount in crate::support::huge_amounts() {
        let reply = app.call(&Method::POST, PURCHASE, Some(&json!({"amount": amount}).to_string())).await;
        crate::support::assert_invalid_at(&reply, &[json!("body"), json!("amount")]);
    }
    let twin = app.call(&Method::POST, "/api/svc-tools/credits/purchase", Some(r#"{"amount": "5"}"#)).await;
    assert_eq!(twin.status, StatusCode::NOT_FOUND, "credits are not bought with credits");
}

#[tokio::test]
async fn a_signed_in_wallet_reads_its_own_receipts_and_nobody_elses() {
    let app = TestApp::new().await;
    let mint = app.sim.world.coins()[0].mint.clone();
    let paid = app.pay(&Method::GET, &format!("/api/x402/svc-tools/launchpad/coin/{mint}"), None, 51).await;
    assert_eq!(paid.status, StatusCode::OK);

    let token = sign_in(&app, &payer()).await;
    let mine = get(&app, "/api/x402/receipts", &token).await;
    assert_eq!(mine.status, StatusCode::OK, "{}", mine.text());
    let mine = mine.json();
    assert_eq!(mine["wallet"], payer().address().to_string().to_lowercase());
    let receipt = &mine["receipts"][0];
    assert_eq!(receipt["route"], "infra.launchpad_coin");
    assert_eq!((receipt["paid"].clone(), receipt["list_price"].clone()), (json!("0.005"), json!("0.005")));
    assert_eq!(receipt["discount"], "0");
    assert_eq!(receipt["status"], "unsettled", "verify-only mode settles nothing");

    let other = Payer::from_key(&format!("0x{}", "22".repeat(32))).expect("key");
    let theirs = get(&app, "/api/x402/receipts", &sign_in(&app, &other).await).await.json();
    assert_eq!(theirs["receipts"], json!([]), "another wallet sees only its own");
    assert_error(&app.get("/api/x402/receipts").await, StatusCode::UNAUTHORIZED, "unauthorized");
    assert_error(&app.get("/api/x402/receipts?payer=0xabc").await, StatusCode::UNAUTHORIZED, "unauthorized");
}

#[tokio::test]
async fn bad_key_requests_are_422_and_store_nothing() {
    let app = TestApp::new().await;
    let token = sign_in(&app, &payer()).await;
    for body in [
        r#"{"name": ""}"#,
        r#"{"name": "x", "scopes": ["admin"]}"#,
        r#"{"name": "x", "scopes": []}"#,
        r#"{"name": "x", "expires_in_days": 0}"#,
        r#"{"name": "x", "expires_in_days": 366}"#,
        r#"{"name": "x", "secret": "mine"}"#,
    ] {
        let reply = post(&app, "/api/account/keys", body, Some(&token)).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {}", reply.text());
    }
    assert_eq!(get(&app, "/api/account/keys", &token).await.json()["keys"], json!([]), "no key was made");
    let bearer = format!("Bearer {token}");
    for id in ["not-a-key", "key_XYZ"] {
        let path = format!("/api/account/keys/{id}");
        let reply = app.call_with(&Method::DELETE, &path, None, &[("authorization", &bearer)]).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{id}: {}", reply.text());
    }
    let limit = get(&app, "/api/account/credits?limit=0", &token).await;
    assert_eq!(limit.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", limit.text());
}

/// What a sandbox's key may do on the account routes: read the account and its gateway, and
/// nothing that changes its owner's billing, keys, LLM token, sellers or gateway. Every account
/// route is in the table, so a route added without deciding is caught here. Authentication
/// comes before validation, so a refusal is a refusal whatever the body.
#[tokio::test]
async fn an_agents_key_reads_its_account_but_never_changes_its_owners_billing() {
    use svc_catalogue::ids;
    let app = TestApp::new().await;
    let (_, agent) =
        app.account_with_credits("1", &[Scope::GatewayRead, Scope::GatewayData, Scope::GatewayWalletWrite]).await;
    let readable = [
        ids::x402::RECEIPTS,
        ids::account::SHOW,
        "account.credits",
        ids::account::USAGE,
        ids::account::LLM_TOP_UP,
        ids::agentbox::TEMPLATES,
        ids::agentbox::GATEWAY,
        ids::agentbox::TELEGRAM_CONFIG,
    ];
    let catalogue = svc_catalogue::catalogue();
    let account_routes: Vec<_> = catalogue.routes().iter().filter(|r| r.access.needs_account()).collect();
    assert!(account_routes.len() >= 25, "the table covers every account route: {}", account_routes.len());
    for route in account_routes {
        let path = route.path.split('/').map(|s| if s.starts_with('{') { "x" } else { s }).collect::<Vec<_>>();
        let method = Method::from_bytes(route.method.as_str().as_bytes()).expect("method");
        let body = (method != Method::GET).then_some(r#"{"enabled":true,"amount":"1000"}"#);
        let reply = app.call_with(&method, &path.join("/"), body, &[("x-api-key", &agent)]).await;
        let refused = matches!(reply.status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        assert_eq!(refused, !readable.contains(&route.id), "{} {}: {}", route.id, reply.status, reply.text());
    }
}

/// The owner's data key sets the LLM top-up; the refusal of an agent's key names the scopes
/// that would do.
#[tokio::test]
async fn the_owners_key_sets_the_top_up_and_an_agents_refusal_names_the_scopes() {
    let app = TestApp::new().await;
    let (_, owner) = app.account_with_credits("1", &[Scope::Data]).await;
    let (_, agent) = app.account_with_credits("1", &[Scope::GatewayRead, Scope::GatewayData]).await;
    let body = r#"{"enabled":true,"amount":"1"}"#;
    let reply = app.call_with(&Method::PUT, "/api/account/llm-top-up", Some(body), &[("x-api-key", &owner)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let reply = app.call_with(&Method::PUT, "/api/account/llm-top-up", Some(body), &[("x-api-key", &agent)]).await;
    assert_error(&reply, StatusCode::FORBIDDEN, "insufficient_scope");
    assert!(reply.text().contains("data, gateway or agents"), "{}", reply.text());
}

/// An account route refuses a stranger before it reads the body: a partial body without
/// credentials is a 401, not a 422 listing the missing fields.
#[tokio::test]
async fn an_account_route_authenticates_before_it_validates() {
    let app = TestApp::new().await;
    for (method, uri) in [
        (Method::PUT, "/agents/agent_x/x402-config"),
        (Method::PUT, "/api/account/llm-top-up"),
        (Method::POST, "/api/account/keys"),
        (Method::PUT, "/api/agentbox/telegram/config"),
    ] {
        let reply = app.call(&method, uri, Some(r#"{"enabled":"#)).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{method} {uri}: {}", reply.text());
    }
}

/// Turning the top-up on needs no amount: the default is one an x402 client pays without
/// being told to (the official clients refuse more than 1 USD a payment by default), and an
/// amount once chosen stays when the top-up is turned off and on again.
#[tokio::test]
async fn the_top_up_turns_on_without_an_amount_at_one_an_official_client_pays() {
    let app = TestApp::new().await;
    let (_, key) = app.account_with_credits("0", &[Scope::Data]).await;
    let put = |body: &'static str| {
        let key = key.clone();
        let app = &app;
        async move { app.call_with(&Method::PUT, "/api/account/llm-top-up", Some(body), &[("x-api-key", &key)]).await }
    };
    let on = put(r#"{"enabled":true}"#).await;
    assert_eq!(on.status, StatusCode::OK, "{}", on.text());
    assert_eq!(on.json(), json!({"enabled": true, "amount": "1"}));
    assert_eq!(put(r#"{"enabled":true,"amount":"2"}"#).await.json(), json!({"enabled": true, "amount": "2"}));
    assert_eq!(put(r#"{"enabled":false}"#).await.json(), json!({"enabled": false, "amount": "2"}));
    assert_eq!(put(r#"{"enabled":true}"#).await.json(), json!({"enabled": true, "amount": "2"}));
    let refused = put(r#"{"enabled":true,"amount":"5000"}"#).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.text());
}

/// A route that costs more than the 1 USD an official x402 client pays by default says so in
/// its description, so an agent knows why its client refuses the challenge.
#[test]
fn every_route_priced_above_what_clients_pay_by_default_says_so() {
    let cap: svc_domain::Money = "1".parse().expect("money");
    for route in svc_catalogue::catalogue().routes().iter().filter(|r| r.is_paid()) {
        let most = match route.price {
            svc_catalogue::PriceRule::Fixed(price) => price,
            svc_catalogue::PriceRule::PerUnit { max, .. } => max,
        };
        if most > cap {
            assert!(route.description.contains("x402 clients pay by default"), "{}: {}", route.id, route.description);
        }
    }
}

#[tokio::test]
async fn the_gateway_log_asks_who_calls_before_it_reads_where_to_resume() {
    let app = TestApp::new().await;
    let reply = app.call_with(&Method::GET, "/api/agentbox/gateway/logs?x=1", None, &[("last-event-id", "junk")]).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.text());
}
