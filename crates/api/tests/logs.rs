//! What reaches the logs. A binary of its own: the capture is this thread's subscriber, and
//! tests running beside it in one binary would race it for tracing's global callsite state.

#[path = "integration/support.rs"]
#[allow(dead_code)]
mod support;

use axum::http::{Method, StatusCode};
use svc_accounts::{self as accounts, Scope};

use support::{NOW_MS, TestApp};

/// Captures every log line the app writes while the test runs.
#[derive(Clone, Default)]
struct LogBuffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for LogBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log buffer").extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_keys_secret_and_a_sign_in_token_are_never_logged_however_presented() {
    let logs = LogBuffer::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let app = TestApp::new().await;
    let account = accounts::open_account(&app.store, "logged?", None, NOW_MS).await.expect("account");
    let key = accounts::issue_key(&app.store, &account.id, "k", &[Scope::Data], None, NOW_MS).await.expect("key");
    let secret = key.secret;
    let (token, _) = svc_accounts::auth::token_for(&app.state.config.sign_in, &account.id, NOW_MS);

    let mint = app.sim.world.coins()[0].mint.clone();
    let uri = format!("/api/svc-tools/launchpad/coin/{mint}");
    let bearer = format!("Bearer {secret}");
    for headers in [[("x-api-key", secret.as_str())], [("authorization", bearer.as_str())]] {
        let reply = app.call_with(&Method::GET, &uri, None, &headers).await;
        assert_eq!(reply.status, StatusCode::PAYMENT_REQUIRED, "no credits yet: {}", reply.text());
        assert!(!reply.text().contains(&secret[5..]));
    }
    let wrong = format!("{}{}", &secret[..secret.len() - 1], if secret.ends_with('0') { '1' } else { '0' });
    app.call_with(&Method::GET, &uri, None, &[("x-api-key", &wrong)]).await;
    let signed_in = format!("Bearer {token}");
    let me = app.call_with(&Method::GET, "/api/account/keys", None, &[("authorization", &signed_in)]).await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.text());
    // The LLM proxy's token, as an OpenAI SDK presents it; its last character changed too.
    let llm = app.state.llm.token(&account.id).await.expect("llm token");
    let last = if llm.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &llm[..llm.len() - 1]);
    let chat = r#"{"model":"svc-default","messages":[{"role":"user","content":"hi"}]}"#;
    for presented in [&llm, &forged] {
        let bearer = format!("Bearer {presented}");
        let reply = app
            .call_with(&Method::POST, "/api/v1/llm/chat/completions", Some(chat), &[("authorization", &bearer)])
            .await;
        assert!(!reply.text().contains(&llm[llm.len() - 64..]), "the token's signature came back");
    }

    // A chat bot's token (saved, then presented by an agent in the Bot-API shim's path) and
    // the webhook secret the platform sends back.
    let bot_token = "7001234567:AAHsecretBotTokenThatMustNotBeLogged";
    let gateway_key =
        accounts::issue_key(&app.store, &account.id, "g", &[Scope::Gateway], None, NOW_MS).await.expect("key");
    let body = format!(r#"{{"bot_token":"{bot_token}","dm_policy":"open","group_policy":"allowlist"}}"#);
    let saved = app
        .call_with(&Method::PUT, "/api/agentbox/telegram/config", Some(&body), &[("x-api-key", &gateway_key.secret)])
        .await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.text());
    let (relay, webhook_secret) = app.sim.bot_api.webhook(bot_token).expect("webhook");
    let relay_path = relay.trim_start_matches(support::PUBLIC_URL).to_owned();
    let update = r#"{"update_id":1,"message":{"message_id":1,"chat":{"id":5,"type":"private"},"date":1,"text":"hi"}}"#;
    app.call_with(&Method::POST, &relay_path, Some(update), &[("x-telegram-bot-api-secret-token", &webhook_secret)])
        .await;
    app.call(&Method::POST, &format!("/api/agentbox/telegram/bot{bot_token}/getUpdates"), Some("{}")).await;
    app.call(
        &Method::POST,
        &format!("/api/agentbox/telegram/bot{bot_token}/sendMessage"),
        Some(r#"{"chat_id":5,"text":"x"}"#),
    )
    .await;

    let text = String::from_utf8(logs.0.lock().expect("logs").clone()).expect("utf-8 logs");
    assert!(!text.contains("AAHsecretBotToken"), "a chat bot's token reached the logs");
    assert!(!text.contains(&webhook_secret), "the webhook secret reached the logs");
    assert!(text.contains("bot<redacted>/getUpdates"), "the shim's calls are logged, redacted");
    assert!(text.contains("request finished"), "the requests were logged: {text}");
    assert!(text.contains("request_id="), "their lines carry the request's span: {text}");
    assert!(!text.contains(&secret[5..]), "a key secret reached the logs");
    assert!(!text.contains(&wrong[5..]), "a presented wrong key reached the logs");
    assert!(!text.contains(&token), "a sign-in token reached the logs");
    assert!(!text.contains(&llm[llm.len() - 64..]), "an LLM token reached the logs");
    assert!(!text.contains(&forged[forged.len() - 64..]), "a presented forged LLM token reached the logs");
}
