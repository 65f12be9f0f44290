//! The console through the HTTP app, as a browser uses it: cookies kept, forms posted with
//! their tokens. Every page and form is also tried as an attacker would.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use svc_accounts::Scope;
use svc_chain_evm::Payer;

use crate::support::{BASE_URL, PAYER_KEY, Reply, TestApp};

/// A browser: its cookies, kept as the server sets them.
struct Browser<'a> {
    app: &'a TestApp,
    cookies: Vec<(String, String)>,
    origin: Option<&'static str>,
}

impl<'a> Browser<'a> {
    fn new(app: &'a TestApp) -> Self {
        Browser { app, cookies: Vec::new(), origin: Some(BASE_URL) }
    }

    fn cookie_header(&self) -> String {
        self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    fn keep(&mut self, reply: &Reply) {
        for set in reply.headers.get_all("set-cookie") {
            let set = set.to_str().expect("ascii");
            let (pair, _) = set.split_once(';').unwrap_or((set, ""));
            let (name, value) = pair.split_once('=').expect("name=value");
            self.cookies.retain(|(k, _)| k != name);
            if !value.is_empty() {
                self.cookies.push((name.to_owned(), value.to_owned()));
            }
        }
    }

    async fn get(&mut self, uri: &str) -> Reply {
        let request = Request::get(uri).header("cookie", self.cookie_header()).body(Body::empty()).expect("request");
        let reply = self.app.send(request).await;
        self.keep(&reply);
        reply
    }

    async fn post(&mut self, uri: &str, fields: &[(&str, &str)]) -> Reply {
        let body: String = form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
        self.post_raw(uri, body, "application/x-www-form-urlencoded").await
    }

    async fn post_raw(&mut self, uri: &str, body: String, kind: &str) -> Reply {
        let mut builder = Request::post(uri).header("cookie", self.cookie_header()).header("content-type", kind);
        if let Some(origin) = self.origin {
            builder = builder.header("origin", origin);
        }
        let reply = self.app.send(builder.body(Body::from(body)).expect("request")).await;
        self.keep(&reply);
        reply
    }

    /// The sign-in form's token, from a fresh sign-in page.
    async fn sign_in_token(&mut self) -> String {
        let page = self.get("/console/sign-in").await;
        assert_eq!(page.status, StatusCode::OK);
        hidden(&page.text(), "token")
    }

    async fn sign_in_with_key(&mut self, key: &str) -> Reply {
        let token = self.sign_in_token().await;
        self.post("/console/sign-in", &[("token", &token), ("key", key)]).await
    }

    async fn sign_in_with_wallet(&mut self, wallet: &Payer) -> Reply {
        let token = self.sign_in_token().await;
        let address = wallet.address().to_string();
        let message = self.post("/console/sign-in/message", &[("token", &token), ("address", &address)]).await;
        assert_eq!(message.status, StatusCode::OK, "{}", message.text());
        let message = message.text();
        let signature = wallet.sign_message(&message).expect("sign");
        // As a browser's form sends it: line breaks as CRLF.
        let sent = message.replace('\n', "\r\n");
        self.post("/console/sign-in/wallet", &[("token", &token), ("message", &sent), ("signature", &signature)]).await
    }

    /// The CSRF token of a signed-in page.
    async fn csrf(&mut self) -> String {
        let page = self.get("/console").await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text());
        hidden(&page.text(), "csrf")
    }
}

/// The value of the hidden field `name` in a page.
fn hidden(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker).unwrap_or_else(|| panic!("no {name} field in {html}")) + marker.len();
    html[start..].split('"').next().expect("value").to_owned()
}

fn location(reply: &Reply) -> &str {
    reply.headers.get("location").and_then(|v| v.to_str().ok()).unwrap_or_default()
}

fn other_wallet() -> Payer {
    Payer::from_key(&format!("0x{}", "11".repeat(32))).expect("key")
}

#[tokio::test]
async fn a_key_signs_in_sees_its_balance_and_signs_out_for_good() {
    let app = TestApp::new().await;
    let (_, key) = app.account_with_credits("5", &[Scope::Data]).await;
    let mut browser = Browser::new(&app);
    let first = browser.get("/console").await;
    assert_eq!((first.status, location(&first)), (StatusCode::SEE_OTHER, "/console/sign-in"));

    let signed = browser.sign_in_with_key(&key).await;
    assert_eq!((signed.status, location(&signed)), (StatusCode::SEE_OTHER, "/console"), "{}", signed.text());
    let cookie = signed.headers.get("set-cookie").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    for attribute in ["svc_console=", "HttpOnly", "SameSite=Strict", "Path=/console"] {
        assert!(cookie.contains(attribute), "{attribute} in {cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain http on a development run: {cookie}");
    let overview = browser.get("/console").await;
    assert_eq!(overview.status, StatusCode::OK);
    assert!(overview.text().contains("5 USD"), "{}", overview.text());
    let csp = overview.headers.get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(overview.headers["x-frame-options"], "DENY");
    assert_eq!(overview.headers["cache-control"], "no-store");
    assert!(!overview.text().contains("<script>"), "no inline script");

    let stolen = browser.cookies.clone();
    let csrf = browser.csrf().await;
    let out = browser.post("/console/sign-out", &[("csrf", &csrf)]).await;
    assert_eq!((out.status, location(&out)), (StatusCode::SEE_OTHER, "/console/sign-in"));
    browser.cookies = stolen;
    let after = browser.get("/console").await;
    assert_eq!(after.status, StatusCode::SEE_OTHER, "the old cookie no longer opens the session");
}

#[tokio::test]
async fn forms_without_their_token_or_from_another_site_are_refused() {
    let app = TestApp::new().await;
    let (_, key) = app.account_with_credits("1", &[Scope::Data]).await;
    let mut browser = Browser::new(&app);
    // Sign-in forms: the token must match the cookie set with the form.
    let token = browser.sign_in_token().await;
    let forged = browser.post("/console/sign-in", &[("token", "0000"), ("key", &key)]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let mut stranger = Browser::new(&app);
    let no_cookie = stranger.post("/console/sign-in", &[("token", &token), ("key", &key)]).await;
    assert_eq!(no_cookie.status, StatusCode::FORBIDDEN, "a cross-site form has the token but not the cookie");

    assert_eq!(browser.sign_in_with_key(&key).await.status, StatusCode::SEE_OTHER);
    let csrf = browser.csrf().await;
    assert_eq!(browser.post("/console/sign-out", &[]).await.status, StatusCode::FORBIDDEN, "no token");
    assert_eq!(browser.post("/console/sign-out", &[("csrf", "x")]).await.status, StatusCode::FORBIDDEN);
    browser.origin = Some("https://evil.example");
    assert_eq!(browser.post("/console/sign-out", &[("csrf", &csrf)]).await.status, StatusCode::FORBIDDEN);
    browser.origin = None;
    assert_eq!(browser.get("/console").await.status, StatusCode::OK, "still signed in after the refusals");
    let json = browser.post_raw("/console/sign-out", format!("{{\"csrf\":\"{csrf}\"}}"), "application/json").await;
    assert_eq!(json.status, StatusCode::UNPROCESSABLE_ENTITY, "forms are form-encoded");
    let huge = browser
        .post_raw("/console/sign-out", "a=".to_owned() + &"b".repeat(64 * 1024), "application/x-www-form-urlencoded")
        .await;
    assert_eq!(huge.status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn wrong_keys_are_refused_alike_and_sign_in_attempts_are_limited() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("1", &[Scope::Data]).await;
    svc_accounts::views::revoke_key(
        &app.store,
        &account,
        &app.store.api_keys(&account).await.expect("keys")[0].id,
        crate::support::NOW_MS,
    )
    .await
    .expect("revoke");
    let mut browser = Browser::new(&app);
    for wrong in [key.as_str(), "svck_nope", "", "\0", &"x".repeat(5000)] {
        let reply = browser.sign_in_with_key(wrong).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{wrong:.20}");
        assert!(reply.text().contains("not valid (unknown, revoked or expired)"));
    }
    let mut refused = None;
    for _ in 0..20 {
        let reply = browser.sign_in_with_key("svck_guess").await;
        if reply.status == StatusCode::TOO_MANY_REQUESTS {
            refused = Some(reply);
            break;
        }
    }
    let refused = refused.expect("attempts are limited");
    assert!(refused.text().contains("Too many sign-in attempts"), "{}", refused.text());
}

#[tokio::test]
async fn a_wallet_signs_in_makes_a_key_it_sees_once_and_revokes_it() {
    let app = TestApp::new().await;
    let wallet = Payer::from_key(PAYER_KEY).expect("key");
    let mut browser = Browser::new(&app);
    let signed = browser.sign_in_with_wallet(&wallet).await;
    assert_eq!((signed.status, location(&signed)), (StatusCode::SEE_OTHER, "/console"), "{}", signed.text());
    let page = browser.get("/console/keys").await;
    assert_eq!(page.status, StatusCode::OK);
    let html = page.text();
    assert!(
        html.contains("Starting, stopping and watching the account&#39;s agent gateway"),
        "scopes in words: {html}"
    );
    let csrf = hidden(&html, "csrf");

    let made = browser
        .post("/console/keys", &[("csrf", &csrf), ("name", "<b>bot</b>"), ("scopes", "data"), ("expires_in_days", "")])
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    let html = made.text();
    let start = html.find("svck_").expect("the new key is shown");
    let secret = format!("svck_{}", &html[start + 5..].chars().take_while(char::is_ascii_hexdigit).collect::<String>());
    assert_eq!(secret.len(), 69, "{secret}");
    assert!(html.contains("&#60;b&#62;bot&#60;/b&#62;") && !html.contains("<b>bot</b>"), "names render as text");
    assert_eq!(browser.get("/console/keys").await.text().matches(&secret).count(), 0, "shown once");
    let uri = "/api/account";
    let works = app.call_with(&Method::GET, uri, None, &[("x-api-key", &secret)]).await;
    assert_eq!(works.status, StatusCode::OK, "{}", works.text());

    let bad = browser.post("/console/keys", &[("csrf", &csrf), ("name", ""), ("expires_in_days", "999")]).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "the route's own validation");
    assert!(bad.text().contains("expires in days"), "{}", bad.text());
    let nul = browser.post("/console/keys", &[("csrf", &csrf), ("name", "a\0b")]).await;
    assert_eq!(nul.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", nul.text());

    let key_id = app.store.api_keys(&wallet_account(&app, &wallet).await).await.expect("keys")[0].id.clone();
    let revoked = browser.post(&format!("/console/keys/{key_id}/revoke"), &[("csrf", &csrf)]).await;
    assert_eq!(revoked.status, StatusCode::SEE_OTHER, "{}", revoked.text());
    let refused = app.call_with(&Method::GET, uri, None, &[("x-api-key", &secret)]).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
}

async fn wallet_account(app: &TestApp, wallet: &Payer) -> String {
    let address = format!("{:#x}", wallet.address());
    app.store.account_by_wallet(&address).await.expect("store").expect("account").id
}

#[tokio::test]
async fn a_keys_session_does_what_its_key_may_and_ends_with_the_key() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("1", &[Scope::Data, Scope::Gateway, Scope::Agents]).await;
    let mut browser = Browser::new(&app);
    assert_eq!(browser.sign_in_with_key(&key).await.status, StatusCode::SEE_OTHER);
    let page = browser.get("/console/keys").await;
    assert!(page.text().contains("a key cannot do it"), "{}", page.text());
    let csrf = browser.csrf().await;
    let made = browser.post("/console/keys", &[("csrf", &csrf), ("name", "escalate"), ("scopes", "data")]).await;
    assert_eq!(made.status, StatusCode::UNAUTHORIZED, "{}", made.text());
    assert_eq!(app.store.api_keys(&account).await.expect("keys").len(), 1, "no key was made");

    // A key that may not read the account opens a session that shows nothing of it.
    let (_, agents_key) = app.account_with_credits("1", &[Scope::GatewayData]).await;
    let mut agent = Browser::new(&app);
    assert_eq!(agent.sign_in_with_key(&agents_key).await.status, StatusCode::SEE_OTHER);
    assert_eq!(agent.get("/console").await.status, StatusCode::FORBIDDEN);

    let key_id = app.store.api_keys(&account).await.expect("keys")[0].id.clone();
    svc_accounts::views::revoke_key(&app.store, &account, &key_id, crate::support::NOW_MS).await.expect("revoke");
    assert_eq!(browser.get("/console").await.status, StatusCode::SEE_OTHER, "the key's revocation ends its session");
}

#[tokio::test]
async fn another_accounts_key_is_the_same_404_as_a_missing_one() {
    let app = TestApp::new().await;
    let (victim, victims_key) = app.account_with_credits("1", &[Scope::Data]).await;
    let victims_key_id = app.store.api_keys(&victim).await.expect("keys")[0].id.clone();
    let mut browser = Browser::new(&app);
    assert_eq!(browser.sign_in_with_wallet(&other_wallet()).await.status, StatusCode::SEE_OTHER);
    let csrf = browser.csrf().await;
    let theirs = browser.post(&format!("/console/keys/{victims_key_id}/revoke"), &[("csrf", &csrf)]).await;
    let missing = browser.post("/console/keys/key_0123456789abcdef/revoke", &[("csrf", &csrf)]).await;
    assert_eq!((theirs.status, missing.status), (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND));
    let strip = |r: &Reply| r.text().replace(&victims_key_id, "ID").replace("key_0123456789abcdef", "ID");
    assert_eq!(strip(&theirs), strip(&missing), "the same page");
    let still = app.call_with(&Method::GET, "/api/account", None, &[("x-api-key", &victims_key)]).await;
    assert_eq!(still.status, StatusCode::OK, "the victim's key lives");
    assert_eq!(browser.get("/console/nowhere").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_session_expires_and_a_cookie_cannot_be_fixed_before_sign_in() {
    let app = TestApp::new().await;
    let (_, key) = app.account_with_credits("1", &[Scope::Data]).await;
    let mut browser = Browser::new(&app);
    browser.cookies.push(("svc_console".into(), "a".repeat(64)));
    assert_eq!(browser.get("/console").await.status, StatusCode::SEE_OTHER, "a made-up session opens nothing");
    assert_eq!(browser.sign_in_with_key(&key).await.status, StatusCode::SEE_OTHER);
    let session = browser.cookies.iter().find(|(k, _)| k == "svc_console").expect("session").1.clone();
    assert_ne!(session, "a".repeat(64), "sign-in makes a new secret");
    app.clock.advance_ms(12 * 3600 * 1000 + 1);
    assert_eq!(browser.get("/console").await.status, StatusCode::SEE_OTHER, "expired");
}

#[tokio::test]
async fn the_overview_shows_what_the_account_spent_today() {
    let app = TestApp::new().await;
    let (_, key) = app.account_with_credits("1", &[Scope::Data]).await;
    let uri = format!("/api/svc-tools/launchpad/coin/{}", app.sim.world.coins()[0].mint);
    let paid = app.call_with(&Method::GET, &uri, None, &[("x-api-key", &key)]).await;
    assert_eq!(paid.status, StatusCode::OK);
    let mut browser = Browser::new(&app);
    assert_eq!(browser.sign_in_with_key(&key).await.status, StatusCode::SEE_OTHER);
    let html = browser.get("/console").await.text();
    assert!(html.contains("<rect class=\"data\""), "a bar for today's data spend: {html}");
    assert!(html.contains("launchpad"), "the call among recent movements: {html}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_browsers_at_once_each_get_their_own_session_and_keys() {
    let app = TestApp::new().await;
    let mut keys = Vec::new();
    for n in 0..12 {
        let (account, key) = app.account_with_credits(&format!("{}", n + 1), &[Scope::Data]).await;
        keys.push((account, key, format!("{} USD", n + 1)));
    }
    let signed_in = futures::future::join_all(keys.iter().map(|(_, key, balance)| {
        let app = &app;
        async move {
            let mut browser = Browser::new(app);
            assert_eq!(browser.sign_in_with_key(key).await.status, StatusCode::SEE_OTHER);
            let page = browser.get("/console").await.text();
            assert!(page.contains(&format!("<strong>{balance}</strong>")), "its own balance: {balance}");
            browser.cookies.iter().find(|(k, _)| k == "svc_console").expect("session").1.clone()
        }
    }))
    .await;
    let distinct: std::collections::HashSet<_> = signed_in.iter().collect();
    assert_eq!(distinct.len(), keys.len(), "a session each");

    let wallet = Payer::from_key(PAYER_KEY).expect("key");
    let mut owner = Browser::new(&app);
    assert_eq!(owner.sign_in_with_wallet(&wallet).await.status, StatusCode::SEE_OTHER);
    let csrf = owner.csrf().await;
    let cookies = owner.cookies.clone();
    let made = futures::future::join_all((0..10).map(|n| {
        let (app, csrf, cookies) = (&app, csrf.clone(), cookies.clone());
        async move {
            let mut browser = Browser { app, cookies, origin: Some(BASE_URL) };
            browser.post("/console/keys", &[("csrf", &csrf), ("name", &format!("bot {n}"))]).await.status
        }
    }))
    .await;
    assert!(made.iter().all(|s| *s == StatusCode::CREATED), "{made:?}");
    let account = wallet_account(&app, &wallet).await;
    assert_eq!(app.store.api_keys(&account).await.expect("keys").len(), 10);
}

#[tokio::test]
async fn calls_of_both_rails_are_listed_filtered_paged_and_shown_to_their_account_only() {
    let app = TestApp::new().await;
    let wallet = Payer::from_key(PAYER_KEY).expect("key");
    let mint = app.sim.world.coins()[0].mint.clone();
    let paid = app.pay_get(&format!("/api/x402/svc-tools/launchpad/coin/{mint}"), 1).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    let mut browser = Browser::new(&app);
    assert_eq!(browser.sign_in_with_wallet(&wallet).await.status, StatusCode::SEE_OTHER);
    let account = wallet_account(&app, &wallet).await;
    svc_accounts::grant_credits(&app.store, &account, "1".parse().expect("usd"), "grant", crate::support::NOW_MS)
        .await
        .expect("grant");
    for n in 0..55 {
        let entry = format!("cl_{n:04}");
        let debit = app.store.debit_credits(&entry, &account, 1_000, "alpha.exodus", None, crate::support::NOW_MS + n);
        debit.await.expect("debit");
    }

    let first = browser.get("/console/calls").await;
    assert_eq!(first.status, StatusCode::OK);
    let html = first.text();
    assert_eq!(html.matches("<tr>").count() - 1, 50, "a page of 50 (and the header)");
    let next = html.split("href=\"").find(|s| s.starts_with("/console/calls?before=")).expect("older calls");
    let next = next.split('"').next().expect("link").replace("&amp;", "&").replace("&#38;", "&");
    let rest = browser.get(&next).await.text();
    assert_eq!(rest.matches("<tr>").count() - 1, 6, "the 5 left and the x402 call, the oldest");
    assert!(rest.contains("launchpad.coin") || rest.contains("x402"), "{rest}");

    let x402 = browser.get("/console/calls?rail=x402").await.text();
    assert_eq!(x402.matches("<tr>").count() - 1, 1, "{x402}");
    let payment = app.store.payments_by_payer(&format!("{:#x}", wallet.address()), 10).await.expect("payments");
    let reference = svc_accounts::credits::rebate_reference(&payment[0].id);
    let rebate = svc_store::NewCredit {
        id: "cl_rebate",
        account_id: &account,
        amount: 10_000,
        kind: "rebate",
        route_id: Some("infra.launchpad_coin"),
        reference: Some(&reference),
        now_ms: crate::support::NOW_MS,
    };
    app.store.add_credits(&rebate).await.expect("rebate");
    assert!(browser.get("/console/calls?rail=x402").await.text().contains("(rebate 0.01)"), "its rebate in the list");
    let detail = browser.get(&format!("/console/calls/{}", payment[0].id)).await;
    assert_eq!(detail.status, StatusCode::OK);
    assert!(detail.text().contains(&format!("{:#x}", wallet.address())), "the payer: {}", detail.text());
    assert!(detail.text().contains("<dt>Rebate</dt><dd>0.01 USD"), "{}", detail.text());

    for bad in ["status=bogus", "rail=cash", "before=yesterday", "route=%3Cscript%3E", "route=a%00b"] {
        let reply = browser.get(&format!("/console/calls?{bad}")).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        assert!(!reply.text().contains("<script>"), "{bad}");
    }

    // Another account: the same 404 for this account's call as for none.
    let (_, key) = app.account_with_credits("1", &[Scope::Data]).await;
    let mut stranger = Browser::new(&app);
    assert_eq!(stranger.sign_in_with_key(&key).await.status, StatusCode::SEE_OTHER);
    let theirs = stranger.get(&format!("/console/calls/{}", payment[0].id)).await;
    let none = stranger.get("/console/calls/cl_nothing").await;
    assert_eq!((theirs.status, none.status), (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND));
    assert_eq!(theirs.text().replace(&payment[0].id, "ID"), none.text().replace("cl_nothing", "ID"));
    assert_eq!(stranger.get("/console/calls").await.text().matches("<tr>").count(), 0, "none of the other's calls");
}

#[tokio::test]
async fn the_sandbox_page_lists_templates_says_why_a_start_fails_and_keeps_to_scopes() {
    let app = TestApp::new().await;
    let (_, owner) = app.account_with_credits("5", &[Scope::Gateway]).await;
    let mut browser = Browser::new(&app);
    assert_eq!(browser.sign_in_with_key(&owner).await.status, StatusCode::SEE_OTHER);
    let page = browser.get("/console/sandbox").await;
    assert_eq!(page.status, StatusCode::OK);
    let html = page.text();
    for template in ["trader", "shitcoin-trader", "degen", "analyst"] {
        assert!(html.contains(&format!("<option value=\"{template}\">")), "{template} in the start form");
    }
    assert!(html.contains("No agent has run for this account yet"), "{html}");
    let csrf = hidden(&html, "csrf");
    let start = browser.post("/console/sandbox/start", &[("csrf", &csrf), ("template", "trader")]).await;
    assert_eq!(start.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(start.text().contains("not available on this server"), "{}", start.text());
    let bogus = browser.post("/console/sandbox/start", &[("csrf", &csrf), ("template", "root")]).await;
    assert_eq!(bogus.status, StatusCode::UNPROCESSABLE_ENTITY, "the route's own validation");
    let logs = browser.get("/console/sandbox/logs").await;
    assert_eq!(logs.status, StatusCode::SERVICE_UNAVAILABLE, "{}", logs.text());
    let mut stranger = Browser::new(&app);
    assert_eq!(stranger.get("/console/sandbox/logs").await.status, StatusCode::UNAUTHORIZED);

    // A data key may not watch or start the gateway, from the console as over the API.
    let (_, data) = app.account_with_credits("5", &[Scope::Data]).await;
    let mut reader = Browser::new(&app);
    assert_eq!(reader.sign_in_with_key(&data).await.status, StatusCode::SEE_OTHER);
    assert!(!reader.get("/console/sandbox").await.text().contains("Start the agent"));
    let csrf = reader.csrf().await;
    let refused = reader.post("/console/sandbox/start", &[("csrf", &csrf), ("template", "trader")]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text());
    assert_eq!(reader.get("/console/sandbox/logs").await.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_credits_page_shows_what_added_credits_and_pays_the_purchase_route_for_its_own_account() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("3", &[Scope::Data]).await;
    let mut browser = Browser::new(&app);
    assert_eq!(browser.sign_in_with_key(&key).await.status, StatusCode::SEE_OTHER);
    let html = browser.get("/console/credits").await.text();
    assert!(html.contains("<strong data-balance>3 USD</strong>"), "{html}");
    assert!(html.contains("data-purchase-path=\"/api/x402/credits/purchase\""), "the route the API sells credits on");
    assert!(html.contains(&format!("data-account=\"{account}\"")), "credits go to the session's account");
    assert!(html.contains(">grant<"), "the grant is listed: {html}");
    let (_, sandbox) = app.account_with_credits("3", &[Scope::GatewayData]).await;
    let mut agent = Browser::new(&app);
    assert_eq!(agent.sign_in_with_key(&sandbox).await.status, StatusCode::SEE_OTHER);
    let barred = agent.get("/console/credits").await.text();
    assert!(
        !barred.contains(">grant<") && !barred.contains("buy-credits") && !barred.contains("data-balance"),
        "{barred}"
    );
}

#[tokio::test]
async fn a_seller_registers_prices_and_watches_an_agent_and_nobody_else_sees_it() {
    let app = TestApp::new().await;
    let (_, key) = app.account_with_credits("0", &[Scope::Agents]).await;
    let mut seller = Browser::new(&app);
    assert_eq!(seller.sign_in_with_key(&key).await.status, StatusCode::SEE_OTHER);
    let page = seller.get("/console/agents").await;
    assert_eq!(page.status, StatusCode::OK);
    let csrf = hidden(&page.text(), "csrf");
    let created = seller
        .post(
            "/console/agents",
            &[
                ("csrf", &csrf),
                ("name", "<img src=x onerror=alert(1)>"),
                ("endpoint", "http://127.0.0.1:9/agent"),
                ("description", "Answers questions about on-chain flows in plain words."),
                ("tags", "flows\r\nonchain"),
            ],
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let html = created.text();
    assert!(html.contains("whsec_"), "the signing secret, shown once");
    assert!(!html.contains("<img src=x") && html.contains("&#60;img src=x"), "names render as text");
    let id = html.split("<code>agt_").nth(1).and_then(|s| s.split('<').next()).map(|s| format!("agt_{s}"));
    let id = id.unwrap_or_else(|| panic!("the agent's id on its page: {html}"));
    assert!(!seller.get(&format!("/console/agents/{id}")).await.text().contains("whsec_"), "shown once");

    let sold = seller
        .post(
            &format!("/console/agents/{id}/x402"),
            &[
                ("csrf", &csrf),
                ("enabled", "on"),
                ("pricing", r#"{"model": "per_request", "amount": "0.05", "currency": "USDC"}"#),
                ("wallet_address", "0x209693bc6afc0c5328ba36faf03c514ef312287c"),
            ],
        )
        .await;
    assert_eq!(sold.status, StatusCode::SEE_OTHER, "{}", sold.text());
    let detail = seller.get(&format!("/console/agents/{id}")).await.text();
    assert!(detail.contains("0.05 USDC a call"), "{detail}");
    assert!(detail.contains("Nothing earned from"), "the revenue chart, empty: {detail}");
    let bad = seller.post(&format!("/console/agents/{id}/x402"), &[("csrf", &csrf), ("pricing", "{oops")]).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text());
    let too_much = seller.post(&format!("/console/agents/{id}/withdraw"), &[("csrf", &csrf), ("amount", "5")]).await;
    assert!(too_much.status.is_client_error(), "{}", too_much.text());
    let rotated = seller.post(&format!("/console/agents/{id}/secret"), &[("csrf", &csrf)]).await;
    assert!(rotated.text().contains("whsec_"), "a new secret, shown once");

    // Another account: the same 404 for this agent as for none, on every form.
    let (_, other) = app.account_with_credits("0", &[Scope::Agents]).await;
    let mut stranger = Browser::new(&app);
    assert_eq!(stranger.sign_in_with_key(&other).await.status, StatusCode::SEE_OTHER);
    let theirs = stranger.get(&format!("/console/agents/{id}")).await;
    let none = stranger.get("/console/agents/agt_0000").await;
    assert_eq!((theirs.status, none.status), (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND));
    let csrf = stranger.csrf().await;
    let stolen = stranger.post(&format!("/console/agents/{id}/secret"), &[("csrf", &csrf)]).await;
    assert_eq!(stolen.status, StatusCode::NOT_FOUND, "{}", stolen.text());
    assert!(!stolen.text().contains("whsec_"));
    // A key without the agents scope does not reach them.
    let (_, data) = app.account_with_credits("0", &[Scope::Data]).await;
    let mut reader = Browser::new(&app);
    assert_eq!(reader.sign_in_with_key(&data).await.status, StatusCode::SEE_OTHER);
    assert!(!reader.get("/console/agents").await.text().contains("Register the agent"));
}

#[tokio::test]
async fn only_an_operators_wallet_sign_in_sees_the_operator_view() {
    let mut app = TestApp::new().await;
    let wallet = Payer::from_key(PAYER_KEY).expect("key");
    let address = format!("{:#x}", wallet.address());
    let operator = svc_accounts::wallet_account(&app.store, &address, crate::support::NOW_MS).await.expect("account");
    let key = svc_accounts::issue_key(&app.store, &operator.id, "ops", &[Scope::Data], None, crate::support::NOW_MS);
    let key = key.await.expect("key").secret;
    let config = svc_api::ApiConfig { operators: vec![operator.id.clone()], ..svc_api::ApiConfig::default() };
    app.restart_with(crate::support::Setup { config, ..crate::support::Setup::default() }).await;
    // A payment a stopped process left reserved: the chain must decide it.
    let left = svc_store::NewPayment {
        id: "pay_left".into(),
        route_id: "alpha.top_picks".into(),
        network: "eip155:8453".into(),
        payer: "0x2c75aa27a0e1f0b3e0e1f0b3e0e1f0b3e0e15c23".into(),
        nonce: "0x01".into(),
        amount: 500_000,
        asset: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913".into(),
        pay_to: "0x209693bc6afc0c5328ba36faf03c514ef312287c".into(),
        valid_before: None,
        now_ms: crate::support::NOW_MS - 3_600_000,
        holder: None,
    };
    app.store.reserve_payment(&left).await.expect("reserve");

    let mut ops = Browser::new(&app);
    assert_eq!(ops.sign_in_with_wallet(&wallet).await.status, StatusCode::SEE_OTHER);
    let overview = ops.get("/console").await.text();
    assert!(overview.contains("href=\"/console/operator\""), "operators see it in the navigation");
    let page = ops.get("/console/operator").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text().contains("pay_left"), "{}", page.text());
    let csrf = hidden(&page.text(), "csrf");
    let tx = format!("0x{}", "ab".repeat(32));
    let unknown = ops.post("/console/operator/payouts/wd_none/paid", &[("csrf", &csrf), ("tx", &tx)]).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert!(unknown.text().contains("no queued payout wd_none"), "{}", unknown.text());
    let bad = ops.post("/console/operator/payouts/wd_none/paid", &[("csrf", &csrf), ("tx", "0x12")]).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    let hidden_text =
        ops.post("/console/operator/payouts/wd_none/failed", &[("csrf", &csrf), ("reason", "ok\u{200b}")]).await;
    assert_eq!(hidden_text.status, StatusCode::UNPROCESSABLE_ENTITY, "invisible characters in a reason");

    // The same account through a key, and anyone else: the console's 404, on the page and forms.
    let not_found = ops.get("/console/nowhere").await.text();
    for mut stranger in [Browser::new(&app), Browser::new(&app)] {
        let (_, other) = app.account_with_credits("1", &[Scope::Data]).await;
        let signed = stranger.sign_in_with_key(if stranger.cookies.is_empty() { &key } else { &other }).await;
        assert_eq!(signed.status, StatusCode::SEE_OTHER);
        let page = stranger.get("/console/operator").await;
        assert_eq!((page.status, page.text()), (StatusCode::NOT_FOUND, not_found.clone()));
        assert!(!stranger.get("/console").await.text().contains("/console/operator"));
        let csrf = stranger.csrf().await;
        let tx = format!("0x{}", "ab".repeat(32));
        let step = stranger.post("/console/operator/payouts/wd_none/paid", &[("csrf", &csrf), ("tx", &tx)]).await;
        assert_eq!(step.status, StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn pages_go_gzipped_to_browsers_that_take_it_and_plain_to_others() {
    let app = TestApp::new().await;
    let request = |gzip: bool| {
        let mut builder = Request::get("/console/sign-in");
        if gzip {
            builder = builder.header("accept-encoding", "gzip, deflate, br");
        }
        builder.body(Body::empty()).expect("request")
    };
    let zipped = app.send(request(true)).await;
    assert_eq!(zipped.headers["content-encoding"], "gzip");
    let mut page = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(zipped.body.as_slice()), &mut page).expect("gzip");
    let plain = app.send(request(false)).await;
    assert!(plain.headers.get("content-encoding").is_none());
    assert!(page.contains("Sign in with the key") && page.len() == plain.body.len(), "the same page");
    assert!(zipped.body.len() < plain.body.len() / 2, "{} of {}", zipped.body.len(), plain.body.len());
}

#[tokio::test]
async fn the_keys_page_says_when_each_key_was_last_used_to_the_minute() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("1", &[Scope::Data]).await;
    let last_used = || async { app.store.api_keys(&account).await.expect("keys")[0].last_used_at };
    assert_eq!(last_used().await, None, "a new key was never used");
    let uri = format!("/api/svc-tools/launchpad/coin/{}", app.sim.world.coins()[0].mint);
    assert_eq!(app.call_with(&Method::GET, &uri, None, &[("x-api-key", &key)]).await.status, StatusCode::OK);
    assert_eq!(last_used().await, Some(crate::support::NOW_MS));
    app.clock.advance_ms(30_000);
    assert_eq!(app.call_with(&Method::GET, &uri, None, &[("x-api-key", &key)]).await.status, StatusCode::OK);
    assert_eq!(last_used().await, Some(crate::support::NOW_MS), "written at most once a minute");
    app.clock.advance_ms(31_000);
    assert_eq!(app.call_with(&Method::GET, "/api/account", None, &[("x-api-key", &key)]).await.status, StatusCode::OK);
    assert_eq!(last_used().await, Some(crate::support::NOW_MS + 61_000), "any call the key authorizes counts");

    let listed = svc_accounts::views::keys(&app.store, &account).await.expect("keys");
    let when = svc_domain::rfc3339(crate::support::NOW_MS + 61_000);
    let listed = serde_json::to_value(listed).expect("json");
    assert_eq!(listed["keys"][0]["last_used_at"], when.as_str(), "the API's key list says it too");
    let mut browser = Browser::new(&app);
    assert_eq!(browser.sign_in_with_wallet(&other_wallet()).await.status, StatusCode::SEE_OTHER);
    assert!(!browser.get("/console/keys").await.text().contains(&when), "another account's keys are not listed");
}

#[tokio::test]
async fn the_llm_token_is_shown_when_asked_rotated_by_the_wallet_only_and_top_up_set_by_its_route() {
    let app = TestApp::new().await;
    let wallet = Payer::from_key(PAYER_KEY).expect("key");
    let mut browser = Browser::new(&app);
    assert_eq!(browser.sign_in_with_wallet(&wallet).await.status, StatusCode::SEE_OTHER);
    let page = browser.get("/console/keys").await.text();
    assert!(page.contains("Off: a proxied call"), "{page}");
    assert!(page.contains("Rotate it"), "a wallet sign-in may rotate");
    let csrf = hidden(&page, "csrf");
    let token_in = |html: &str| {
        let start = html.find("class=\"secret\" data-copy>").expect("a token shown") + 25;
        html[start..].split('<').next().expect("token").to_owned()
    };
    let shown = browser.post("/console/keys/llm-token", &[("csrf", &csrf)]).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.text());
    let token = token_in(&shown.text());
    assert!(!browser.get("/console/keys").await.text().contains(&token), "shown only when asked");
    let again = browser.post("/console/keys/llm-token", &[("csrf", &csrf)]).await;
    assert_eq!(token_in(&again.text()), token, "the same token until rotated");
    let rotated = browser.post("/console/keys/llm-token/rotate", &[("csrf", &csrf)]).await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.text());
    let new_token = token_in(&rotated.text());
    assert_ne!(new_token, token);
    let app = &app;
    let chat = |t: String| async move {
        let body = r#"{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}"#;
        let bearer = format!("Bearer {t}");
        app.call_with(&Method::POST, "/api/v1/llm/chat/completions", Some(body), &[("authorization", &bearer)]).await
    };
    assert_eq!(chat(token).await.status, StatusCode::UNAUTHORIZED, "the old token stopped working");
    let new_works = chat(new_token).await;
    assert_ne!(new_works.status, StatusCode::UNAUTHORIZED, "{}", new_works.text());
    let forged = browser.post("/console/keys/llm-token/rotate", &[("csrf", "forged")]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);

    let set = browser.post("/console/keys/llm-top-up", &[("csrf", &csrf), ("enabled", "on"), ("amount", "5")]).await;
    assert_eq!((set.status, location(&set)), (StatusCode::SEE_OTHER, "/console/keys"), "{}", set.text());
    let page = browser.get("/console/keys").await.text();
    assert!(page.contains("On: a proxied call that finds the credits exhausted may buy 5 USD"), "{page}");
    assert!(page.contains("name=\"enabled\" aria-describedby=\"t-d-enabled\" checked"), "the form shows it: {page}");
    let bad = browser.post("/console/keys/llm-top-up", &[("csrf", &csrf), ("enabled", "on"), ("amount", "0.5")]).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "the route's own validation: {}", bad.text());
    assert!(bad.text().contains("amount"), "{}", bad.text());

    // A key's session sees the proxy's part as far as its key may, and never rotates.
    let (_, key) = app.account_with_credits("1", &[Scope::Data]).await;
    let mut agent = Browser::new(app);
    assert_eq!(agent.sign_in_with_key(&key).await.status, StatusCode::SEE_OTHER);
    let page = agent.get("/console/keys").await.text();
    assert!(page.contains("Rotating the token needs the account's wallet sign-in"), "{page}");
    let csrf = hidden(&page, "csrf");
    let refused = agent.post("/console/keys/llm-token/rotate", &[("csrf", &csrf)]).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{}", refused.text());
}

#[tokio::test]
async fn the_chat_bot_is_set_from_the_sandbox_page_and_its_token_never_written_back() {
    const TOKEN: &str = "7001234567:AAHsimulatedTokenForTheConsoleTest_abc";
    let app = TestApp::new().await;
    let (_, key) = app.account_with_credits("1", &[Scope::Gateway]).await;
    let mut browser = Browser::new(&app);
    assert_eq!(browser.sign_in_with_key(&key).await.status, StatusCode::SEE_OTHER);
    let page = browser.get("/console/sandbox").await.text();
    assert!(page.contains("No chat bot yet"), "{page}");
    assert!(page.contains("type=\"password\" autocomplete=\"off\""), "the token is typed unseen: {page}");
    assert!(!page.contains("name=\"webhook_url\""), "a field the route refuses is no control");
    let csrf = hidden(&page, "csrf");
    let form = |token: &'static str, groups: &'static str| {
        [("dm_policy", "open"), ("group_policy", "allowlist"), ("allowed_groups", groups), ("bot_token", token)]
    };
    let uri = "/console/sandbox/chat-bot";
    let with_csrf = |fields: [(&'static str, &'static str); 4]| {
        let mut all: Vec<(&str, &str)> = vec![("csrf", csrf.as_str())];
        all.extend(fields);
        all
    };
    let junk = browser.post(uri, &with_csrf(form("not-a-token", "-1001"))).await;
    assert_eq!(junk.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", junk.text());
    assert!(junk.text().contains("bot_token"), "{}", junk.text());
    let groups = browser.post(uri, &with_csrf(form(TOKEN, "-1001\nsoon"))).await;
    assert_eq!(groups.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", groups.text());
    let saved = browser.post(uri, &with_csrf(form(TOKEN, "-1001\r\n-1002"))).await;
    assert_eq!((saved.status, location(&saved)), (StatusCode::SEE_OTHER, "/console/sandbox"), "{}", saved.text());
    let page = browser.get("/console/sandbox").await.text();
    assert!(page.contains("<code>-1001</code> <code>-1002</code>"), "{page}");
    assert!(!page.contains(TOKEN) && !page.contains("AAHsimulated"), "the token is never written back");
    assert!(app.sim.bot_api.webhook(TOKEN).is_some(), "set through the route: the webhook points at the relay");
    let stored = app.call_with(&Method::GET, "/api/agentbox/telegram/config", None, &[("x-api-key", &key)]).await;
    assert_eq!(stored.json()["allowed_groups"], serde_json::json!([-1001, -1002]), "{}", stored.text());
}

#[tokio::test]
async fn the_operator_sees_how_each_vendor_answered_lately() {
    let mut app = TestApp::new().await;
    let wallet = Payer::from_key(PAYER_KEY).expect("key");
    let address = format!("{:#x}", wallet.address());
    let operator = svc_accounts::wallet_account(&app.store, &address, crate::support::NOW_MS).await.expect("account");
    let config = svc_api::ApiConfig { operators: vec![operator.id.clone()], ..svc_api::ApiConfig::default() };
    app.restart_with(crate::support::Setup { config, ..crate::support::Setup::default() }).await;
    let uri = format!("/api/svc-tools/launchpad/coin/{}", app.sim.world.coins()[0].mint);
    let (_, key) = app.account_with_credits("1", &[Scope::Data]).await;
    assert_eq!(app.call_with(&Method::GET, &uri, None, &[("x-api-key", &key)]).await.status, StatusCode::OK);
    let mut ops = Browser::new(&app);
    assert_eq!(ops.sign_in_with_wallet(&wallet).await.status, StatusCode::SEE_OTHER);
    let html = ops.get("/console/operator").await.text();
    let row = html.split("<tr><td>launchpad</td>").nth(1).expect("a launchpad row").split("</tr>").next().unwrap_or("");
    assert!(row.contains("<span class=\"state ok\">ok</span>"), "{row}");
    assert!(row.contains(" s ago"), "when it last answered: {row}");
    for vendor in svc_upstream::Vendor::ALL {
        assert!(html.contains(&format!("<tr><td>{}</td>", vendor.slug())), "{} listed", vendor.slug());
    }
}

#[tokio::test]
async fn a_credit_call_says_which_key_paid_it_and_a_sign_in_says_no_key() {
    let app = TestApp::new().await;
    let wallet = Payer::from_key(PAYER_KEY).expect("key");
    let token = app.sign_in(&wallet).await;
    let account = wallet_account(&app, &wallet).await;
    svc_accounts::grant_credits(&app.store, &account, "1".parse().expect("usd"), "grant", crate::support::NOW_MS)
        .await
        .expect("grant");
    let key = svc_accounts::issue_key(&app.store, &account, "<i>trader</i>", &[Scope::Data], None, 1);
    let key = key.await.expect("key").secret;
    let uri = format!("/api/svc-tools/launchpad/coin/{}", app.sim.world.coins()[0].mint);
    assert_eq!(app.call_with(&Method::GET, &uri, None, &[("x-api-key", &key)]).await.status, StatusCode::OK);
    app.clock.advance_ms(10);
    let bearer = format!("Bearer {token}");
    assert_eq!(app.call_with(&Method::GET, &uri, None, &[("authorization", &bearer)]).await.status, StatusCode::OK);

    let mut browser = Browser::new(&app);
    assert_eq!(browser.sign_in_with_wallet(&wallet).await.status, StatusCode::SEE_OTHER);
    let html = browser.get("/console/calls").await.text();
    let rows: Vec<&str> = html.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 2, "{html}");
    assert!(rows[0].contains("no key (a sign-in"), "the newest, by sign-in token: {}", rows[0]);
    assert!(rows[1].contains("&#60;i&#62;trader&#60;/i&#62; (svck_"), "by the key, its name as text: {}", rows[1]);
    let id = rows[1].split("/console/calls/").nth(1).and_then(|s| s.split('"').next()).expect("link");
    let detail = browser.get(&format!("/console/calls/{id}")).await.text();
    assert!(detail.contains("<dt>Paid by</dt><dd>&#60;i&#62;trader"), "{detail}");
}
