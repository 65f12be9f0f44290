//! `TestApp`: the real router over a fresh store, driven with `oneshot`: a SQLite file, or a
//! fresh schema of the PostgreSQL database at `TEST_DATABASE_URL` ([`TestApp::on`]).

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::BodyExt as _;
use serde_json::Value;
use svc_accounts::{self as accounts, Scope};
use svc_api::handlers::Handlers;
use svc_api::{ApiConfig, AppState, Services};
use svc_chain_evm::{B256, Payer};
use svc_domain::FixedClock;
use svc_simulator::Simulator;
use svc_store::Store;
use svc_upstream::{Upstreams, UpstreamsConfig};
use svc_x402::{BuiltinFacilitator, Facilitator, Offer, PaymentNetwork};
use tower::ServiceExt as _;

/// 2026-11-22T10:00:00Z.
pub const NOW_MS: i64 = 1_795_341_600_000;

/// The site of the test app's sign-in configuration (the default listen address).
pub const SITE: &str = "127.0.0.1:8402";

/// The test app's public base URL: the site's, the base of every challenge and document.
pub const BASE_URL: &str = "http://127.0.0.1:8402";

/// The paying wallet of [`TestApp::pay`] (a well-known test key; never funded anywhere).
pub const PAYER_KEY: &str = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";

/// Where test payments go (a fixed, public test address).
pub const PAY_TO: &str = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";

/// The paying Solana wallet of [`TestApp::pay_solana`]: the x402 vectors' public test seed
/// (the same 32 bytes as [`PAYER_KEY`]), whose address is `9fijMemJYwXS5QD85Qxsq7iKqvSebgb6LvpGftgkeigk`.
pub const SOLANA_PAYER_KEY: &str = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";

/// The recent blockhash the Solana payer signs with: a fixed test value (svc checks no
/// blockhash before settling; a node would refuse it).
pub const SOLANA_TEST_BLOCKHASH: &str = "AEfG19HkBEptPUkVN3MpETgCTuUxvTM2q75pyHq6YfDF";

pub struct TestApp {
    pub router: Router,
    pub state: AppState,
    pub store: Store,
    pub clock: FixedClock,
    /// The simulated market every vendor adapter is pointed at.
    pub sim: Simulator,
    /// Its address.
    pub sim_base: String,
    _scratch: Scratch,
}

/// The database a test app runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Database {
    /// A SQLite file in a temporary directory.
    Sqlite,
    /// A fresh schema of the PostgreSQL database at `TEST_DATABASE_URL`.
    Postgres,
}

impl Database {
    /// SQLite always, PostgreSQL when `TEST_DATABASE_URL` is set (saying so when it is not).
    pub fn available() -> Vec<Database> {
        if std::env::var_os(TEST_DATABASE_URL).is_some() {
            vec![Database::Sqlite, Database::Postgres]
        } else {
            eprintln!("skipped on PostgreSQL: {TEST_DATABASE_URL} is not set, so only SQLite runs");
            vec![Database::Sqlite]
        }
    }
}

impl Database {
    /// What a test's app runs on unless it names a backend: `SVC_TEST_APP_DATABASE`.
    fn default_for_tests() -> Database {
        match std::env::var("SVC_TEST_APP_DATABASE").as_deref() {
            Ok("postgres") => Database::Postgres,
            _ => Database::Sqlite,
        }
    }
}

/// Where CI names a scratch PostgreSQL database.
const TEST_DATABASE_URL: &str = "TEST_DATABASE_URL";

/// What a test app's store lives in, removed with the app.
enum Scratch {
    Dir { _dir: tempfile::TempDir },
    Schema { url: String, schema: String },
}

impl Drop for Scratch {
    /// Drops a PostgreSQL schema from a thread of its own, since a drop cannot wait on the
    /// test's runtime; a schema left behind (a lock held past the timeout) goes with the
    /// scratch database.
    fn drop(&mut self) {
        let Scratch::Schema { url, schema } = self else { return };
        let (url, schema) = (url.clone(), schema.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            runtime.block_on(async {
                if let Ok(admin) = Store::connect(&url).await {
                    let sql = format!("SET lock_timeout = '5s'; DROP SCHEMA IF EXISTS {schema} CASCADE");
                    let _ = admin.execute_unprepared(&sql).await;
                    admin.close().await;
                }
            });
        });
        let _ = dropped.join();
    }
}

/// A migrated store on `database`, and what holds it.
async fn scratch_store(database: Database) -> (Store, Scratch) {
    match database {
        Database::Sqlite => {
            let dir = tempfile::tempdir().expect("temp dir");
            let store = Store::open_sqlite_file(&dir.path().join("svc.db")).await.expect("open sqlite");
            store.migrate().await.expect("migrate");
            (store, Scratch::Dir { _dir: dir })
        }
        Database::Postgres => {
            let url = std::env::var(TEST_DATABASE_URL).expect("TEST_DATABASE_URL");
            let schema = format!("app_{}", uuid::Uuid::new_v4().simple());
            let admin = Store::connect(&url).await.expect("connect to TEST_DATABASE_URL");
            admin.execute_unprepared(&format!("CREATE SCHEMA {schema}")).await.expect("create schema");
            admin.close().await;
            let options = <sqlx::postgres::PgConnectOptions as std::str::FromStr>::from_str(&url)
                .expect("TEST_DATABASE_URL")
                .options([("search_path", schema.as_str())]);
            let store = Store::connect_postgres(options).await.expect("connect in schema");
            store.migrate().await.expect("migrate");
            (store, Scratch::Schema { url, schema })
        }
    }
}

/// USDC on Base, paid to [`PAY_TO`].
pub fn offer() -> Offer {
    Offer::new(vec![PaymentNetwork::base_usdc(PAY_TO).expect("base")], 300)
}

/// How a test app is put together.
pub struct Setup {
    pub config: ApiConfig,
    pub handlers: Handlers,
    /// The networks offered; default: USDC on Base.
    pub offer: Offer,
    /// Builds the facilitator from the app's clock; default: built-in, verify-only.
    pub facilitator: Box<dyn FnOnce(FixedClock) -> Arc<dyn Facilitator>>,
    /// Adjusts the vendor settings (all pointed at the simulator).
    pub upstreams: Box<dyn FnOnce(&mut UpstreamsConfig)>,
    /// Shared counters in Redis (URL, key namespace); in memory when absent.
    pub redis: Option<(String, String)>,
    /// Adjusts the LLM proxy's settings (its providers at the simulator).
    pub llm: Box<dyn FnOnce(svc_llm::LlmConfig) -> svc_llm::LlmConfig>,
    /// Adjusts the seller side's settings (endpoints on 127.0.0.1 are always allowed).
    pub sellers: Box<dyn FnOnce(svc_sellers::SellersConfig) -> svc_sellers::SellersConfig>,
    /// The networks svc pays sellers out on (none: payouts wait for an operator).
    pub payouts: Vec<Arc<dyn svc_sellers::payouts::PayoutChain>>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            config: ApiConfig::default(),
            handlers: svc_api::handlers::all(),
            offer: offer(),
            facilitator: Box::new(|clock| {
                Arc::new(BuiltinFacilitator::new(offer().networks().to_vec(), Arc::new(clock)))
            }),
            upstreams: Box::new(|_| {}),
            redis: None,
            llm: Box::new(|config| config),
            sellers: Box::new(|config| config),
            payouts: Vec::new(),
        }
    }
}

/// One valid call of a route, built from identifiers the simulated world holds.
pub struct Sample {
    /// The route's id in the catalogue.
    pub route: &'static str,
    pub method: Method,
    /// The paid (`/api/x402/...`) URI with its path and query filled in.
    pub uri: String,
    /// The JSON body, for routes that take one.
    pub body: Option<String>,
}

/// One answer.
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!("body is not JSON ({e}): {}", String::from_utf8_lossy(&self.body));
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// The app over `store`, its vendors at the simulator at `base`.
async fn build(store: Store, clock: FixedClock, base: &str, setup: Setup) -> (axum::Router, AppState) {
    let facilitator = (setup.facilitator)(clock.clone());
    let mut upstreams = UpstreamsConfig::all_at(base);
    // The simulated perp exchange trades only for its approved test agent.
    upstreams.vendor_mut(svc_upstream::Vendor::Perpdex).key = Some(svc_simulator::PERPDEX_AGENT_KEY.into());
    (setup.upstreams)(&mut upstreams);
    let upstreams = Arc::new(Upstreams::new(&upstreams, Arc::new(clock.clone())).expect("upstreams"));
    let mut agentbox = svc_agentbox::AgentboxSetup::unavailable("sandboxes are not set up in these tests");
    agentbox.telegram = svc_agentbox::telegram::TelegramConfig {
        api_url: format!("{base}/telegram"),
        public_url: PUBLIC_URL.to_owned(),
        sealed: sealed_box(),
    };
    let services = Services {
        store,
        clock: Arc::new(clock),
        config: setup.config,
        offer: setup.offer,
        facilitator,
        upstreams,
        limiter: match &setup.redis {
            Some((url, namespace)) => svc_limits::Limiter::redis(url, namespace).await.expect("redis"),
            None => svc_limits::Limiter::default(),
        },
        llm: (setup.llm)(svc_llm::LlmConfig::simulated(base)),
        agentbox,
        sellers: svc_sellers::SellersConfig {
            base_url: PUBLIC_URL.to_owned(),
            endpoints: svc_sellers::EndpointPolicy { allow_http_hosts: vec!["127.0.0.1".to_owned()] },
            ..(setup.sellers)(svc_sellers::SellersConfig::default())
        },
        sealed: sealed_box(),
        payouts: setup.payouts,
    };
    let state = AppState::new(services).expect("LLM configuration");
    let router = svc_api::app(state.clone(), setup.handlers).expect("handlers match the catalogue");
    (router, state)
}

/// The sealing key of these tests.
fn sealed_box() -> Arc<svc_sealed::SecretBox> {
    Arc::new(svc_sealed::SecretBox::from_hex(&"42".repeat(32)).expect("key"))
}

/// The address svc tells the chat platform to deliver to, in these tests.
pub const PUBLIC_URL: &str = "http://svc.test";

impl TestApp {
    pub async fn new() -> Self {
        Self::with_config(ApiConfig::default()).await
    }

    pub async fn with_config(config: ApiConfig) -> Self {
        Self::with(Setup { config, ..Setup::default() }).await
    }

    /// The app on SQLite, or on PostgreSQL when `SVC_TEST_APP_DATABASE=postgres` (CI runs the
    /// whole suite once that way, so every test holds on both backends).
    pub async fn with(setup: Setup) -> Self {
        Self::on(Database::default_for_tests(), setup).await
    }

    /// The app on `database`.
    pub async fn on(database: Database, setup: Setup) -> Self {
        let (store, scratch) = scratch_store(database).await;
        let clock = FixedClock::at_ms(NOW_MS);
        let sim = Simulator::new(svc_simulator::DEFAULT_SEED, Arc::new(clock.clone()));
        let (base, _) = sim.spawn().await.expect("simulator");
        let (router, state) = build(store.clone(), clock.clone(), &base, setup).await;
        TestApp { router, state, store, clock, sim, sim_base: base, _scratch: scratch }
    }

    /// svc restarted over the same store, clock and simulated market: nothing in memory kept.
    pub async fn restart(&mut self) {
        self.restart_with(Setup::default()).await;
    }

    /// [`TestApp::restart`], put together as `setup` says (a configuration naming an account
    /// the test opened, say).
    pub async fn restart_with(&mut self, setup: Setup) {
        let (router, state) = build(self.store.clone(), self.clock.clone(), &self.sim_base, setup).await;
        self.router = router;
        self.state = state;
    }

    pub async fn send(&self, request: Request<Body>) -> Reply {
        let response = self.router.clone().oneshot(request).await.expect("infallible");
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.expect("body").to_bytes().to_vec();
        Reply { status, headers, body }
    }

    pub async fn get(&self, uri: &str) -> Reply {
        self.send(Request::get(uri).body(Body::empty()).expect("request")).await
    }

    pub async fn post_json(&self, uri: &str, body: &str) -> Reply {
        self.send(
            Request::post(uri)
                .header("content-type", "application/json")
                .body(Body::from(body.to_owned()))
                .expect("request"),
        )
        .await
    }

    /// Pays for `method uri` (with a JSON `body`, if any) as an agent would: gets the 402
    /// challenge, signs an EIP-3009 authorization with [`PAYER_KEY`] and nonce `nonce`, and
    /// sends the call again with it.
    pub async fn pay(&self, method: &Method, uri: &str, body: Option<&str>, nonce: u8) -> Reply {
        let header = self.payment_for(method, uri, body, nonce).await;
        self.call_with(method, uri, body, &[("payment-signature", &header)]).await
    }

    /// Pays for `GET uri`, as [`TestApp::pay`] does.
    pub async fn pay_get(&self, uri: &str, nonce: u8) -> Reply {
        self.pay(&Method::GET, uri, None, nonce).await
    }

    /// Pays for `POST uri` with the JSON `body`, as [`TestApp::pay`] does.
    pub async fn pay_post(&self, uri: &str, body: &Value, nonce: u8) -> Reply {
        self.pay(&Method::POST, uri, Some(&body.to_string()), nonce).await
    }

    /// The `PAYMENT-SIGNATURE` header paying the challenge that `method uri` answers.
    pub async fn payment_for(&self, method: &Method, uri: &str, body: Option<&str>, nonce: u8) -> String {
        let challenge = self.call(method, uri, body).await;
        sign_challenge(&challenge, nonce)
    }

    /// Pays for `method uri` from the Solana payer: gets the 402 challenge and answers its
    /// Solana requirement with the transaction the official client builds, signed by
    /// [`SOLANA_PAYER_KEY`] with memo nonce `nonce`. The app must offer Solana.
    pub async fn pay_solana(&self, method: &Method, uri: &str, body: Option<&str>, nonce: u8) -> Reply {
        let challenge = self.call(method, uri, body).await;
        let header = sign_challenge_solana(&challenge, nonce);
        self.call_with(method, uri, body, &[("payment-signature", &header)]).await
    }

    /// How many calls [`PAYER_KEY`] has paid for.
    pub async fn paid_calls(&self) -> usize {
        let payer = Payer::from_key(PAYER_KEY).expect("key").address().to_string().to_lowercase();
        self.store.payments_by_payer(&payer, 1000).await.expect("payments").len()
    }

    /// An account holding `usd` in credits and a live key with `scopes`; returns the
    /// account id and the key's secret.
    pub async fn account_with_credits(&self, usd: &str, scopes: &[Scope]) -> (String, String) {
        let account = accounts::open_account(&self.store, "test", None, NOW_MS).await.expect("account");
        let amount: svc_domain::Money = usd.parse().expect("amount");
        if amount > svc_domain::Money::ZERO {
            accounts::grant_credits(&self.store, &account.id, amount, &format!("grant:{}", account.id), NOW_MS)
                .await
                .expect("grant");
        }
        let key = accounts::issue_key(&self.store, &account.id, "test", scopes, None, NOW_MS).await.expect("key");
        (account.id, key.secret)
    }

    /// A fresh sign-in nonce's message, signed by `wallet`, issued at `issued_at_ms`.
    pub async fn signed_message(&self, wallet: &Payer, issued_at_ms: i64) -> (String, String) {
        let reply = self.call_with(&Method::POST, "/api/auth/nonce", Some(""), &[("host", SITE)]).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        let template = reply.json()["message_template"].as_str().expect("template").to_owned();
        let message = template
            .replace("{address}", &wallet.address().to_checksum(None))
            .replace("{issued_at}", &svc_domain::rfc3339(issued_at_ms));
        let signature = wallet.sign_message(&message).expect("sign");
        (message, signature)
    }

    /// A sign-in token for `wallet`, as a wallet signs in.
    pub async fn sign_in(&self, wallet: &Payer) -> String {
        let (message, signature) = self.signed_message(wallet, NOW_MS).await;
        let body = serde_json::json!({"message": message, "signature": signature}).to_string();
        let reply = self.call_with(&Method::POST, "/api/auth/verify", Some(&body), &[("host", SITE)]).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        reply.json()["token"].as_str().expect("token").to_owned()
    }

    /// The account's credit balance, in USDC atomic units.
    pub async fn balance(&self, account_id: &str) -> u64 {
        self.store.account(account_id).await.expect("store").expect("account").balance
    }

    /// `GET uri` from a client at `peer` (the socket address the server sees).
    pub async fn get_from(&self, peer: &str, uri: &str, headers: &[(&str, &str)]) -> Reply {
        let mut builder = Request::get(uri);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let mut request = builder.body(Body::empty()).expect("request");
        let addr: std::net::SocketAddr = peer.parse().expect("socket address");
        request.extensions_mut().insert(axum::extract::ConnectInfo(addr));
        self.send(request).await
    }

    /// A JSON POST from the client at `peer` (`ip:port`).
    pub async fn post_from(&self, peer: &str, uri: &str, body: &str) -> Reply {
        let mut request = Request::post(uri)
            .header("content-type", "application/json")
            .body(Body::from(body.to_owned()))
            .expect("request");
        let addr: std::net::SocketAddr = peer.parse().expect("socket address");
        request.extensions_mut().insert(axum::extract::ConnectInfo(addr));
        self.send(request).await
    }

    pub async fn call(&self, method: &Method, uri: &str, body: Option<&str>) -> Reply {
        self.call_with(method, uri, body, &[]).await
    }

    pub async fn call_with(&self, method: &Method, uri: &str, body: Option<&str>, headers: &[(&str, &str)]) -> Reply {
        let mut builder = Request::builder().method(method.clone()).uri(uri);
        if body.is_some() {
            builder = builder.header("content-type", "application/json");
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        self.send(builder.body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned()))).expect("request")).await
    }
}

impl TestApp {
    /// A JSON-RPC request to the MCP server at `path` (`/mcp` or `/mcp/compact`), as a
    /// stateless Streamable HTTP client sends it, with `headers` besides.
    pub async fn mcp_with(&self, path: &str, method: &str, params: Value, headers: &[(&str, &str)]) -> Reply {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        let mut all = vec![("accept", "application/json, text/event-stream"), ("mcp-protocol-version", "2025-11-25")];
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
            all.push(("host", SITE));
        }
        all.extend_from_slice(headers);
        self.call_with(&Method::POST, path, Some(&body), &all).await
    }

    /// The `result` of an MCP request to `/mcp`, which must have one.
    pub async fn mcp(&self, method: &str, params: Value) -> Value {
        mcp_result(&self.mcp_with("/mcp", method, params, &[]).await)
    }

    /// The result of calling the tool `name` with `arguments` on `/mcp`, with `meta` as the
    /// request's `_meta` and `headers` besides.
    pub async fn mcp_call(&self, name: &str, arguments: Value, meta: Option<Value>, headers: &[(&str, &str)]) -> Value {
        let mut params = serde_json::json!({"name": name, "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        mcp_result(&self.mcp_with("/mcp", "tools/call", params, headers).await)
    }
}

/// The `result` of an MCP answer, which must be a JSON-RPC success.
pub fn mcp_result(reply: &Reply) -> Value {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert!(answer.get("error").is_none(), "a JSON-RPC error: {answer}");
    answer["result"].clone()
}

/// A `PaymentPayload` (as a JSON object) paying the x402 `PaymentRequired` `required` with
/// [`PAYER_KEY`] and `nonce`: what an MCP client puts in `_meta["x402/payment"]`.
pub fn payment_payload(required: &Value, nonce: u8) -> Value {
    let challenge: svc_x402::PaymentRequired = serde_json::from_value(required.clone()).expect("a PaymentRequired");
    let requirement = svc_x402::client::choose(&challenge, None).expect("payable");
    let payer = Payer::from_key(PAYER_KEY).expect("key");
    let now = u64::try_from(NOW_MS / 1000).expect("now");
    let header =
        svc_x402::client::pay_header(&challenge, requirement, &payer, now, B256::with_last_byte(nonce)).expect("sign");
    use base64::Engine as _;
    let json = base64::engine::general_purpose::STANDARD.decode(header).expect("base64");
    serde_json::from_slice(&json).expect("JSON")
}

/// The `PAYMENT-SIGNATURE` header paying `challenge` (a 402) with [`PAYER_KEY`] and `nonce`.
pub fn sign_challenge(challenge: &Reply, nonce: u8) -> String {
    assert_eq!(challenge.status, StatusCode::PAYMENT_REQUIRED, "{}", challenge.text());
    let challenge: svc_x402::PaymentRequired = serde_json::from_slice(&challenge.body).expect("challenge");
    let requirement = svc_x402::client::choose(&challenge, None).expect("payable");
    let payer = Payer::from_key(PAYER_KEY).expect("key");
    let now = u64::try_from(NOW_MS / 1000).expect("now");
    svc_x402::client::pay_header(&challenge, requirement, &payer, now, B256::with_last_byte(nonce)).expect("sign")
}

/// The `PAYMENT-SIGNATURE` header paying `challenge` (a 402) on Solana from
/// [`SOLANA_PAYER_KEY`], with memo nonce `nonce`: an SPL Token transfer of USDC (6 decimals).
pub fn sign_challenge_solana(challenge: &Reply, nonce: u8) -> String {
    assert_eq!(challenge.status, StatusCode::PAYMENT_REQUIRED, "{}", challenge.text());
    let challenge: svc_x402::PaymentRequired = serde_json::from_slice(&challenge.body).expect("challenge");
    let requirement = svc_x402::client::choose_solana(&challenge, None).expect("Solana offered");
    let payer = svc_chain_solana::Keypair::parse(SOLANA_PAYER_KEY).expect("key");
    let payment = svc_chain_solana::ExactSvmPayment {
        token_program: svc_chain_solana::programs::TOKEN,
        recent_blockhash: SOLANA_TEST_BLOCKHASH,
        nonce: [nonce; 16],
    };
    svc_x402::client::pay_header_solana(&challenge, requirement, &payer, 6, &payment).expect("sign")
}

/// Amounts beyond the largest svc holds, as JSON values: 2^63 and 2^64 atomic units (past
/// where an `i64` and a `u64` end), the same counts as whole dollars and as JSON numbers,
/// exponents and very long decimal strings. Each is a 422 at its field, never a 5xx.
pub fn huge_amounts() -> Vec<Value> {
    vec![
        Value::from("9223372036854.775808"),
        Value::from("18446744073709.551615"),
        Value::from("18446744073709.551616"),
        Value::from("9223372036854775808"),
        Value::from("18446744073709551616"),
        Value::from("1e30"),
        Value::from("1000000000000000000000000000000"),
        Value::from(format!("{}.5", "9".repeat(5_000))),
        Value::from(format!("0.{}1", "0".repeat(5_000))),
        serde_json::json!(9_223_372_036_854_775_808_u64),
        serde_json::json!(u64::MAX),
        serde_json::json!(1e30),
    ]
}

/// Asserts a 422 whose errors include one at `loc`.
pub fn assert_invalid_at(reply: &Reply, loc: &[Value]) {
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "body: {}", reply.text());
    let body = reply.json();
    let errors = body["detail"].as_array().expect("detail is a list");
    assert!(
        errors.iter().any(|e| e["loc"].as_array().map(Vec::as_slice) == Some(loc)),
        "no error at {loc:?} in {body}"
    );
    for e in errors {
        assert!(e["msg"].as_str().is_some_and(|m| !m.is_empty()), "every error has a message: {e}");
        assert!(e["type"].as_str().is_some_and(|t| !t.is_empty()), "every error has a type: {e}");
    }
}

/// Asserts the `{"detail": "...", "code": "..."}` shape with `code`.
pub fn assert_error(reply: &Reply, status: StatusCode, code: &str) {
    assert_eq!(reply.status, status, "body: {}", reply.text());
    assert_eq!(reply.headers.get("content-type").and_then(|v| v.to_str().ok()), Some("application/json"));
    let body = reply.json();
    assert_eq!(body["code"], code, "{body}");
    assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()), "{body}");
}

/// Asserts that `body` is valid against the 200 schema the OpenAPI document gives for
/// `method path` (the catalogue's output type), so an answer can never drift from what
/// agents were told to expect.
pub fn assert_matches_schema(method: &str, path: &str, body: &Value) {
    let document = svc_catalogue::openapi::document(svc_catalogue::catalogue());
    let schema = document["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"].clone();
    assert!(schema.is_object(), "no 200 schema for {method} {path}");
    assert_valid(document, schema, &format!("{method} {path}"), body);
}

/// Asserts that `body` is valid against the preview schema OpenAPI documents for route `id`
/// (its `<id>.preview` component), and not merely against the whole answer's.
pub fn assert_matches_preview_schema(id: &str, body: &Value) {
    let document = svc_catalogue::openapi::document(svc_catalogue::catalogue());
    let name = format!("{id}.preview");
    assert!(document["components"]["schemas"][&name].is_object(), "no preview schema for {id}");
    assert_valid(document, serde_json::json!({ "$ref": format!("#/components/schemas/{name}") }), id, body);
}

fn assert_valid(mut document: Value, schema: Value, what: &str, body: &Value) {
    // Validate against the whole document so `#/components/schemas/...` references resolve.
    document["x-answer"] = schema;
    document["$ref"] = Value::from("#/x-answer");
    let validator = jsonschema::draft202012::new(&document).expect("schema compiles");
    let errors: Vec<String> = validator.iter_errors(body).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} answered off-schema: {errors:#?}\n{body}");
}
