//! The chat-bot channel against the simulated Bot API: a bot's config (checked, sealed, never
//! shown), the relay (its secret, dedupe, durability across a restart), the Bot-API shim the
//! agent polls (long polls, confirmations, forwarding), and who may see what.

use std::time::{Duration, Instant};

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use svc_accounts::Scope;

use crate::support::{PUBLIC_URL, Reply, TestApp, assert_error};

const TOKEN: &str = "7001234567:AAHsimulatedTokenForTheRelayTests_abc";

async fn put_config(app: &TestApp, key: &str, body: &Value) -> Reply {
    app.call_with(&Method::PUT, "/api/agentbox/telegram/config", Some(&body.to_string()), &[("x-api-key", key)]).await
}

fn config(token: &str) -> Value {
    json!({"bot_token": token, "dm_policy": "open", "group_policy": "allowlist", "allowed_groups": [-1001234]})
}

fn hash(token: &str) -> String {
    svc_agentbox::telegram::token_hash(token)
}

/// Posts an update to the relay as the platform would.
async fn deliver(app: &TestApp, token: &str, secret: Option<&str>, update: &Value) -> Reply {
    let uri = format!("/api/agentbox/telegram/webhook/{}", hash(token));
    let mut headers = vec![];
    if let Some(secret) = secret {
        headers.push(("x-telegram-bot-api-secret-token", secret));
    }
    app.call_with(&Method::POST, &uri, Some(&update.to_string()), &headers).await
}

fn update(id: i64, text: &str) -> Value {
    json!({"update_id": id, "message": {"message_id": id, "chat": {"id": 555, "type": "private"}, "from": {"id": 555, "is_bot": false, "first_name": "A"}, "date": 1, "text": text}})
}

/// The agent's call of the shim: `method` with a JSON body.
async fn shim(app: &TestApp, token: &str, method: &str, body: &Value) -> Reply {
    let uri = format!("/api/agentbox/telegram/bot{token}/{method}");
    app.call(&Method::POST, &uri, Some(&body.to_string())).await
}

async fn configured(app: &TestApp) -> (String, String) {
    let (account, key) = app.account_with_credits("1", &[Scope::Gateway]).await;
    let reply = put_config(app, &key, &config(TOKEN)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let (_, secret) = app.sim.bot_api.webhook(TOKEN).expect("the webhook is set");
    (account, secret)
}

#[tokio::test]
async fn a_bot_is_checked_sealed_shown_masked_and_its_webhook_pointed_at_the_relay() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("1", &[Scope::Gateway]).await;
    let reply = put_config(&app, &key, &config(TOKEN)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let view = reply.json();
    assert_eq!(view["username"], "sim_7001234567_bot");
    assert_eq!(view["token"], "7001234567:…_abc");
    assert_eq!((view["dm_policy"].as_str(), view["group_policy"].as_str()), (Some("open"), Some("allowlist")));
    assert_eq!(view["allowed_groups"], json!([-1001234]));
    let relay_url = format!("{PUBLIC_URL}/api/agentbox/telegram/webhook/{}", hash(TOKEN));
    assert_eq!(
        (view["relay"]["status"].as_str(), view["relay"]["webhook_url"].as_str()),
        (Some("set"), Some(relay_url.as_str()))
    );
    let (url, secret) = app.sim.bot_api.webhook(TOKEN).expect("webhook");
    assert_eq!(url, relay_url);
    assert!(secret.len() >= 32 && secret.chars().all(|c| c.is_ascii_alphanumeric()), "{secret}");
    let secret_part = TOKEN.split_once(':').expect("token").1;
    for shown in [
        reply.text(),
        app.call_with(&Method::GET, "/api/agentbox/telegram/config", None, &[("x-api-key", &key)]).await.text(),
    ] {
        assert!(!shown.contains(secret_part) && !shown.contains(&secret), "never shown: {shown}");
    }
    let stored = app.store.telegram_bot(&account).await.expect("read").expect("bot");
    assert!(!stored.token_sealed.windows(secret_part.len()).any(|w| w == secret_part.as_bytes()), "sealed at rest");
    assert_ne!(stored.secret_hash, secret, "the webhook secret is kept as a hash");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saves_at_once_leave_the_relay_taking_what_the_platform_sends() {
    let app = TestApp::new().await;
    let (_, key) = app.account_with_credits("1", &[Scope::Gateway]).await;
    let body = config(TOKEN);
    let saves = (0..8).map(|_| put_config(&app, &key, &body));
    for reply in futures::future::join_all(saves).await {
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    }
    let (_, secret) = app.sim.bot_api.webhook(TOKEN).expect("webhook");
    assert_eq!(deliver(&app, TOKEN, Some(&secret), &update(1, "hi")).await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_bad_token_the_wrong_policies_or_a_webhook_url_are_422s_that_say_why() {
    let app = TestApp::new().await;
    let (_, key) = app.account_with_credits("1", &[Scope::Gateway]).await;
    let revoked = "7001234567:AAHrevokedTokenOfTheTestsXXXXXXXXXXXX";
    let cases = [
        (config(revoked), "refused this bot token"),
        (config("not-a-token"), "<bot id>:<secret>"),
        (json!({"bot_token": TOKEN, "dm_policy": "pairing", "group_policy": "allowlist"}), "open"),
        (json!({"bot_token": TOKEN, "dm_policy": "open", "group_policy": "open"}), "allowlist"),
        (
            json!({"bot_token": TOKEN, "dm_policy": "open", "group_policy": "allowlist", "webhookUrl": "https://x.example/hook"}),
            "405",
        ),
        (
            json!({"bot_token": TOKEN, "dm_policy": "open", "group_policy": "allowlist", "webhook_url": "https://x.example/hook"}),
            "405",
        ),
        (json!({"bot_token": TOKEN, "dm_policy": "open", "group_policy": "allowlist", "extra": 1}), "extra"),
    ];
    for (body, says) in cases {
        let reply = put_config(&app, &key, &body).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {}", reply.text());
        assert!(reply.text().contains(says), "{body} should say {says:?}: {}", reply.text());
        assert!(!reply.text().contains("AAHrevoked"), "the token is never echoed: {}", reply.text());
        let loc = &reply.json()["detail"][0]["loc"];
        assert_eq!(loc[0], "body", "{loc}");
        assert_ne!(loc[1], "body", "`body` is said once: {loc}");
    }
    assert!(app.sim.bot_api.webhook(TOKEN).is_none(), "nothing was set");
}

#[tokio::test]
async fn a_bot_belongs_to_one_account_and_others_see_nothing_of_it() {
    let app = TestApp::new().await;
    let (_, owner) = app.account_with_credits("1", &[Scope::Gateway]).await;
    let (_, other) = app.account_with_credits("1", &[Scope::Gateway]).await;
    let (_, reader) = app.account_with_credits("1", &[Scope::GatewayRead]).await;
    assert_eq!(put_config(&app, &owner, &config(TOKEN)).await.status, StatusCode::OK);
    assert_error(&put_config(&app, &other, &config(TOKEN)).await, StatusCode::CONFLICT, "conflict");
    let theirs = app.call_with(&Method::GET, "/api/agentbox/telegram/config", None, &[("x-api-key", &other)]).await;
    assert_error(&theirs, StatusCode::NOT_FOUND, "not_found");
    let read = app.call_with(&Method::GET, "/api/agentbox/telegram/config", None, &[("x-api-key", &reader)]).await;
    assert_error(&read, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(
        put_config(&app, &reader, &config(TOKEN)).await.status,
        StatusCode::FORBIDDEN,
        "a sandbox's key cannot rewire the bot"
    );
}

#[tokio::test]
async fn the_relay_takes_only_its_bots_secret_keeps_each_update_once_and_replies_once_while_the_agent_is_off() {
    let app = TestApp::new().await;
    let (_, secret) = configured(&app).await;
    let unknown = app
        .call_with(
            &Method::POST,
            "/api/agentbox/telegram/webhook/0000",
            Some(&update(1, "x").to_string()),
            &[("x-telegram-bot-api-secret-token", &secret)],
        )
        .await;
    assert_error(&unknown, StatusCode::NOT_FOUND, "not_found");
    assert_error(&deliver(&app, TOKEN, Some("wrong"), &update(1, "x")).await, StatusCode::UNAUTHORIZED, "unauthorized");
    assert_error(&deliver(&app, TOKEN, None, &update(1, "x")).await, StatusCode::UNAUTHORIZED, "unauthorized");
    assert_eq!(
        deliver(&app, TOKEN, Some(&secret), &json!({"message": {}})).await.status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
    for _ in 0..3 {
        assert_eq!(deliver(&app, TOKEN, Some(&secret), &update(41, "hello")).await.status, StatusCode::OK);
    }
    assert_eq!(deliver(&app, TOKEN, Some(&secret), &update(42, "again")).await.status, StatusCode::OK);
    let got = shim(&app, TOKEN, "getUpdates", &json!({"offset": 0, "timeout": 0})).await.json();
    let ids: Vec<i64> =
        got["result"].as_array().expect("list").iter().filter_map(|u| u["update_id"].as_i64()).collect();
    assert_eq!(ids, [41, 42], "a delivery seen before is kept once");
    // The agent is not running: the chat heard so once, not once per message.
    let sent = app.sim.bot_api.sent(TOKEN);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0]["text"].as_str().is_some_and(|t| t.contains("not running")));
    let oversized = deliver(&app, TOKEN, Some(&secret), &update(43, &"x".repeat(2 << 20))).await;
    assert_error(&oversized, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
}

#[tokio::test]
async fn the_shim_long_polls_confirms_by_offset_forwards_the_rest_and_owns_the_webhook() {
    let app = TestApp::new().await;
    let (_, secret) = configured(&app).await;
    // Nothing waiting: the poll holds for its timeout.
    let started = Instant::now();
    let empty = shim(&app, TOKEN, "getUpdates", &json!({"timeout": 1})).await.json();
    assert_eq!(empty, json!({"ok": true, "result": []}));
    assert!(started.elapsed() >= Duration::from_millis(900), "{:?}", started.elapsed());
    // An arrival wakes a waiting poll at once.
    let started = Instant::now();
    let long_poll = json!({"timeout": 20});
    let (got, delivered) = tokio::join!(shim(&app, TOKEN, "getUpdates", &long_poll), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        deliver(&app, TOKEN, Some(&secret), &update(7, "ping")).await
    });
    assert_eq!(delivered.status, StatusCode::OK);
    assert_eq!(got.json()["result"][0]["update_id"], 7);
    assert!(started.elapsed() < Duration::from_secs(5), "woken, not timed out: {:?}", started.elapsed());
    // Two polls of one bot may wait at once (a gateway restarting its poll); a third is the
    // platform's 409, as a second poller is there.
    let waiting = json!({"offset": 100, "timeout": 2});
    let (first, second, third) =
        tokio::join!(shim(&app, TOKEN, "getUpdates", &waiting), shim(&app, TOKEN, "getUpdates", &waiting), async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            shim(&app, TOKEN, "getUpdates", &waiting).await
        });
    assert_eq!((first.status, second.status), (StatusCode::OK, StatusCode::OK));
    assert_eq!(third.status, StatusCode::CONFLICT, "{}", third.text());
    assert_eq!(shim(&app, TOKEN, "getUpdates", &json!({"offset": 100})).await.status, StatusCode::OK, "freed after");
    // The offset confirms: what is below it is gone, what is not stays.
    deliver(&app, TOKEN, Some(&secret), &update(8, "pong")).await;
    let after = shim(&app, TOKEN, "getUpdates", &json!({"offset": 8})).await.json();
    assert_eq!(after["result"].as_array().map(Vec::len), Some(1));
    let form = app
        .send(
            axum::http::Request::post(format!("/api/agentbox/telegram/bot{TOKEN}/getUpdates"))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(axum::body::Body::from("offset=9&timeout=0"))
                .expect("request"),
        )
        .await;
    assert_eq!(form.json()["result"], json!([]), "form parameters too: {}", form.text());

    // Every other method goes to the platform as it came.
    let sent = shim(&app, TOKEN, "sendMessage", &json!({"chat_id": 555, "text": "hi from the agent"})).await;
    assert_eq!(sent.json()["ok"], true, "{}", sent.text());
    assert!(app.sim.bot_api.sent(TOKEN).iter().any(|m| m["text"] == "hi from the agent"));
    assert_eq!(shim(&app, TOKEN, "getMe", &json!({})).await.json()["result"]["username"], "sim_7001234567_bot");
    // svc keeps the webhook: the agent's deleteWebhook changes nothing, its setWebhook is refused.
    assert_eq!(shim(&app, TOKEN, "deleteWebhook", &json!({})).await.json()["ok"], true);
    assert!(app.sim.bot_api.webhook(TOKEN).is_some());
    assert_eq!(
        shim(&app, TOKEN, "setWebhook", &json!({"url": "https://x.example"})).await.status,
        StatusCode::CONFLICT
    );
    // The files users send come through too, and only for a known bot.
    let file = app.get(&format!("/api/agentbox/telegram/file/bot{TOKEN}/photos/file_1.jpg")).await;
    assert_eq!((file.status, file.text()), (StatusCode::OK, "simulated file photos/file_1.jpg".to_owned()));
    let stranger_file = app.get("/api/agentbox/telegram/file/bot7009:AAHunknownXXXXXXXXXXXXXXXXXXXXXXXXXX/x.jpg").await;
    assert_eq!(stranger_file.status, StatusCode::UNAUTHORIZED);
    // Method names match in any case, as the platform's do: no way around the refusal.
    for method in ["setwebhook", "SETWEBHOOK", "logOut", "close"] {
        assert_eq!(
            shim(&app, TOKEN, method, &json!({"url": "https://x.example"})).await.status,
            StatusCode::CONFLICT,
            "{method}"
        );
    }
    assert!(
        app.sim.bot_api.webhook(TOKEN).is_some_and(|(url, _)| url.starts_with(PUBLIC_URL)),
        "the webhook is still svc's"
    );
    assert!(!app.sim.bot_api.calls(TOKEN).iter().any(|c| c.eq_ignore_ascii_case("setwebhook") && c != "setWebhook"));
    let odd = app.call(&Method::POST, &format!("/api/agentbox/telegram/bot{TOKEN}/..%2FgetMe"), Some("{}")).await;
    assert_eq!(odd.status, StatusCode::NOT_FOUND, "only plain method names: {}", odd.text());
    // A token svc does not relay is the platform's 401, before any body is read.
    let big = "x".repeat(8 << 20);
    let unknown = app
        .call(
            &Method::POST,
            "/api/agentbox/telegram/bot7009:AAHunknownXXXXXXXXXXXXXXXXXXXXXXXXXX/sendMessage",
            Some(&big),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    let stranger = shim(&app, "7009999999:AAHanotherTokenNobodyConfiguredXXXXX", "getUpdates", &json!({})).await;
    assert_eq!((stranger.status, stranger.json()["ok"].clone()), (StatusCode::UNAUTHORIZED, json!(false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_updates_delivered_concurrently_survive_a_restart_none_lost_none_twice() {
    let mut app = TestApp::new().await;
    let (_, secret) = configured(&app).await;
    for batch in 0..10 {
        let deliveries = (0..100).map(|i| {
            let id = 1_000 + batch * 100 + i;
            let (app, secret) = (&app, secret.clone());
            async move { deliver(app, TOKEN, Some(&secret), &update(id, "m")).await.status }
        });
        for status in futures::future::join_all(deliveries).await {
            assert_eq!(status, StatusCode::OK);
        }
    }
    app.restart().await;
    let mut seen = Vec::new();
    let mut offset = 0;
    loop {
        let got = shim(&app, TOKEN, "getUpdates", &json!({"offset": offset, "limit": 100})).await.json();
        let ids: Vec<i64> =
            got["result"].as_array().expect("list").iter().filter_map(|u| u["update_id"].as_i64()).collect();
        let Some(last) = ids.last() else { break };
        offset = last + 1;
        seen.extend(ids);
    }
    assert_eq!(seen, (1_000..2_000).collect::<Vec<i64>>(), "every update once, in order");
}
