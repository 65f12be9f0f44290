//! The x402 paywall, driven the way a real client drives it: ask, read the challenge, sign an
//! EIP-3009 authorization with a real key, retry. The chain is the only fake (a node double
//! behind the built-in facilitator's `EvmChain` edge).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use base64::Engine as _;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::Value;
use svc_chain_evm::{B256, EvmError, Payer, VerifiedAuthorization};
use svc_domain::FixedClock;
use svc_store::PaymentStatus;
use svc_x402::EvmLedger;
use svc_x402::builtin::EvmChain;
use svc_x402::network::BASE;
use svc_x402::{BuiltinFacilitator, PaymentRequired};

use crate::support::{BASE_URL, NOW_MS, PAYER_KEY, Reply, Setup, TestApp, assert_error, offer};

const TOP_PICKS: &str = "/api/x402/alpha/top-picks";

fn payer() -> Payer {
    Payer::from_key(PAYER_KEY).expect("key")
}

fn b64_json(value: &str) -> Value {
    let bytes = base64::engine::general_purpose::STANDARD.decode(value).expect("standard base64");
    serde_json::from_slice(&bytes).expect("json")
}

/// Top Picks answers a canned body, or fails while `fail` is set.
fn stand_in(fail: Arc<AtomicUsize>) -> svc_api::handlers::Handlers {
    let mut handlers = svc_api::handlers::all();
    let route = svc_catalogue::catalogue().get("alpha.top_picks").expect("route");
    handlers.add_raw(route, move |_, _| {
        let fail = Arc::clone(&fail);
        async move {
            if fail.load(Ordering::SeqCst) > 0 {
                fail.fetch_sub(1, Ordering::SeqCst);
                return Err(svc_api::ApiError::Unavailable("upstream down".into()));
            }
            Ok(bytes::Bytes::from_static(br#"{"picks":{}}"#).into())
        }
    });
    handlers
}

/// A node double: counts transfers, optionally refuses them or leaves them unconfirmed, and
/// answers what the chain knows of nonces and receipts.
#[derive(Debug, Default)]
struct FakeChain {
    transfers: AtomicUsize,
    refuse: bool,
    /// Transfers are sent but no receipt comes in time.
    unconfirmed: bool,
    /// Transfers are mined and revert.
    reverts: bool,
    /// Sending fails in a way that leaves unknown whether the transfer left.
    send_unknown: bool,
    /// The payer's token balance, when it does not cover every payment.
    balance: Option<u64>,
    /// The token's record: the authorization was used.
    used: std::sync::atomic::AtomicBool,
    /// What `receipt` answers: None not mined, Some(ok) mined.
    mined: std::sync::Mutex<Option<bool>>,
    /// The latest block's timestamp, unix seconds.
    time: std::sync::atomic::AtomicU64,
    /// No relayer can pay for gas.
    out_of_gas: std::sync::atomic::AtomicBool,
    /// Every relayer transaction has been mined (none in the node's pool).
    idle: std::sync::atomic::AtomicBool,
}

impl EvmLedger for FakeChain {
    fn authorization_used<'a>(&'a self, _: svc_chain_evm::Address, _: B256) -> BoxFuture<'a, Result<bool, EvmError>> {
        futures::future::ready(Ok(self.used.load(Ordering::SeqCst))).boxed()
    }

    fn receipt<'a>(&'a self, _: B256) -> BoxFuture<'a, Result<Option<bool>, EvmError>> {
        futures::future::ready(Ok(*self.mined.lock().expect("mined"))).boxed()
    }

    fn block_time(&self) -> BoxFuture<'_, Result<u64, EvmError>> {
        futures::future::ready(Ok(self.time.load(Ordering::SeqCst))).boxed()
    }
}

impl EvmChain for FakeChain {
    fn can_settle(&self) -> bool {
        !self.out_of_gas.load(Ordering::SeqCst)
    }

    fn nothing_in_flight(&self) -> BoxFuture<'_, Result<bool, EvmError>> {
        futures::future::ready(Ok(self.idle.load(Ordering::SeqCst))).boxed()
    }

    fn is_valid_signature<'a>(&'a self, _: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<bool, EvmError>> {
        futures::future::ready(Ok(false)).boxed()
    }

    fn balance<'a>(&'a self, _: svc_chain_evm::Address) -> BoxFuture<'a, Result<svc_chain_evm::U256, EvmError>> {
        let balance = self.balance.map_or(svc_chain_evm::U256::MAX, svc_chain_evm::U256::from);
        futures::future::ready(Ok(balance)).boxed()
    }

    fn transfer<'a>(&'a self, _: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<String, EvmError>> {
        let n = self.transfers.fetch_add(1, Ordering::SeqCst);
        let result = if self.refuse {
            Err(EvmError::InsufficientBalance)
        } else if self.unconfirmed {
            Err(EvmError::Pending(B256::with_last_byte(0xee)))
        } else if self.reverts {
            Err(EvmError::TransactionFailed(B256::with_last_byte(0xef)))
        } else if self.send_unknown {
            Err(EvmError::SendUnknown("connection closed before message completed".into()))
        } else {
            Ok(B256::with_last_byte(u8::try_from(n % 250).unwrap_or(0) + 1).to_string())
        };
        futures::future::ready(result).boxed()
    }
}

struct Paywalled {
    app: TestApp,
    chain: Arc<FakeChain>,
    failures: Arc<AtomicUsize>,
}

async fn paywalled(chain: Option<FakeChain>) -> Paywalled {
    let failures = Arc::new(AtomicUsize::new(0));
    let chain = chain.map(Arc::new);
    let attached = chain.clone();
    let app = TestApp::with(Setup {
        handlers: stand_in(Arc::clone(&failures)),
        facilitator: Box::new(move |clock: FixedClock| {
            let mut f = BuiltinFacilitator::new(offer().networks().to_vec(), Arc::new(clock));
            if let Some(chain) = attached {
                f = f.with_evm_chain(BASE, chain);
            }
            Arc::new(f)
        }),
        ..Setup::default()
    })
    .await;
    Paywalled { app, chain: chain.unwrap_or_default(), failures }
}

impl Paywalled {
    async fn challenge(&self, uri: &str) -> PaymentRequired {
        let reply = self.app.get(uri).await;
        assert_eq!(reply.status, StatusCode::PAYMENT_REQUIRED, "{}", reply.text());
        serde_json::from_slice(&reply.body).expect("challenge")
    }

    /// A fresh signed payment for the challenge at `uri`.
    async fn signed(&self, uri: &str, nonce: u8) -> String {
        let challenge = self.challenge(uri).await;
        let requirement = svc_x402::client::choose(&challenge, None).expect("payable");
        let now = u64::try_from(NOW_MS / 1000).expect("now");
        svc_x402::client::pay_header(&challenge, requirement, &payer(), now, B256::with_last_byte(nonce)).expect("sign")
    }

    async fn pay(&self, uri: &str, header_name: &str, header: &str) -> Reply {
        self.app.send(Request::get(uri).header(header_name, header).body(Body::empty()).expect("request")).await
    }
}

fn error_of(reply: &Reply) -> String {
    assert_eq!(reply.status, StatusCode::PAYMENT_REQUIRED, "{}", reply.text());
    reply.json()["error"].as_str().expect("error").to_owned()
}

#[tokio::test]
async fn an_unpaid_call_gets_the_challenge_in_body_and_header() {
    let p = paywalled(None).await;
    let reply = p.app.get(&format!("{TOP_PICKS}?chain=base")).await;
    assert_eq!(reply.status, StatusCode::PAYMENT_REQUIRED);
    assert_eq!(reply.headers["cache-control"], "no-store");
    let body = reply.json();
    assert_eq!(b64_json(reply.headers["payment-required"].to_str().expect("ascii")), body, "header = body");
    assert_eq!(body["x402Version"], 2);
    assert_eq!(body["error"], "Payment required");
    assert_eq!(body["resource"]["url"], format!("{BASE_URL}/api/x402/alpha/top-picks?chain=base"));
    assert_eq!(body["resource"]["mimeType"], "application/json");
    let base = &body["accepts"][0];
    assert_eq!(base["network"], "eip155:8453");
    assert_eq!(base["asset"], "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913");
    assert_eq!(base["amount"], "500000", "top picks list price 0.50 USDC");
    assert_eq!(base["maxTimeoutSeconds"], 300);
    assert_eq!(base["extra"], serde_json::json!({"name": "USD Coin", "version": "2"}));
    let bazaar = &body["extensions"]["bazaar"];
    assert_eq!(bazaar["info"]["input"]["method"], "GET");
    assert_eq!(bazaar["schema"]["properties"]["input"]["properties"]["method"]["enum"][0], "GET");
    // The answer's shape, from the catalogue's output type: its top-level fields and their types.
    let outline = &bazaar["schema"]["properties"]["output"]["properties"]["example"];
    assert_eq!(outline["type"], "object", "{outline}");
    assert_eq!(outline["properties"]["picks"]["type"], "object", "{outline}");
    assert_eq!(outline["properties"]["generated_at"]["type"], "string", "{outline}");
    assert!(outline["required"].as_array().is_some_and(|r| r.iter().any(|f| f == "picks")), "{outline}");
}

#[tokio::test]
async fn every_challenge_fits_the_header_limits_of_common_http_stacks() {
    let p = paywalled(None).await;
    let mut largest = (0, "");
    for route in svc_catalogue::catalogue().routes().iter().filter(|r| r.is_paid() && r.path_params().next().is_none())
    {
        let method: axum::http::Method = route.method.as_str().parse().expect("method");
        let body = (route.method.as_str() == "POST").then_some("{}");
        let reply = p.app.call(&method, route.path, body).await;
        if reply.status != StatusCode::PAYMENT_REQUIRED {
            continue; // routes whose empty input is invalid answer 422 first
        }
        let size = reply.headers["payment-required"].len();
        if size > largest.0 {
            largest = (size, route.id);
        }
    }
    assert!(largest.0 > 0);
    assert!(largest.0 < 8 * 1024, "{} has a {}-byte challenge header", largest.1, largest.0);
}

#[tokio::test]
async fn browsers_may_read_the_payment_headers() {
    let p = paywalled(None).await;
    let request =
        Request::get(TOP_PICKS).header("origin", "https://agent.example").body(Body::empty()).expect("request");
    let reply = p.app.send(request).await;
    let exposed = reply.headers["access-control-expose-headers"].to_str().expect("ascii").to_ascii_lowercase();
    assert!(exposed.contains("payment-required") && exposed.contains("payment-response"), "{exposed}");
}

#[tokio::test]
async fn input_is_validated_before_payment_is_asked() {
    let p = paywalled(None).await;
    let reply = p.app.get("/api/x402/svc-tools/social/search?max_results=20").await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", reply.text());
}

#[tokio::test]
async fn a_garbled_payment_is_no_payment() {
    let p = paywalled(None).await;
    for garbage in ["not base64!", "e30=", "eyJ4NDAyVmVyc2lvbiI6Mn0="] {
        assert_eq!(error_of(&p.pay(TOP_PICKS, "payment-signature", garbage).await), "Payment required", "{garbage}");
    }
}

#[tokio::test]
async fn a_paid_call_is_served_once_and_its_payment_recorded() {
    let p = paywalled(None).await;
    let header = p.signed(TOP_PICKS, 1).await;
    let reply = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.text(), r#"{"picks":{}}"#);
    assert_eq!(reply.headers["cache-control"], "private");
    let settled = b64_json(reply.headers["payment-response"].to_str().expect("ascii"));
    assert_eq!(settled["success"], true);
    assert_eq!(settled["transaction"], "", "verify-only mode sends nothing");
    assert_eq!(settled["network"], "eip155:8453");
    assert_eq!(settled["payer"], payer().address().to_checksum(None));

    let payer_id = payer().address().to_string().to_lowercase();
    let records = p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].status, PaymentStatus::Unsettled);
    assert_eq!(records[0].amount, 500_000);
    assert_eq!(records[0].route_id, "alpha.top_picks");

    let replay = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert!(error_of(&replay).starts_with("payment_already_used"), "{}", replay.text());
    assert_eq!(p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments").len(), 1);
}

#[tokio::test]
async fn the_x_payment_header_is_accepted_too() {
    let p = paywalled(None).await;
    let header = p.signed(TOP_PICKS, 2).await;
    assert_eq!(p.pay(TOP_PICKS, "X-PAYMENT", &header).await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_v1_payment_in_x_payment_is_served_and_answered_in_x_payment_response() {
    let p = paywalled(None).await;
    let v2 = b64_json(&p.signed(TOP_PICKS, 15).await);
    let v1 = serde_json::json!({"x402Version": 1, "scheme": "exact", "network": "base", "payload": v2["payload"]});
    let reply = p.pay(TOP_PICKS, "X-PAYMENT", &svc_x402::encode_header(&v1)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(b64_json(reply.headers["x-payment-response"].to_str().expect("ascii"))["success"], true);
}

#[tokio::test]
async fn a_payment_for_another_price_or_an_expired_one_is_refused() {
    let p = paywalled(None).await;
    let lite = p.signed("/api/x402/alpha/top-picks-lite", 3).await;
    assert_eq!(error_of(&p.pay(TOP_PICKS, "payment-signature", &lite).await), "No matching payment requirements");

    let header = p.signed(TOP_PICKS, 4).await;
    p.app.clock.advance_ms(295_000);
    assert_eq!(
        error_of(&p.pay(TOP_PICKS, "payment-signature", &header).await),
        "invalid_exact_evm_payload_authorization_valid_before"
    );
}

#[tokio::test]
async fn a_failed_handler_charges_nothing_and_the_same_payment_works_again() {
    let p = paywalled(Some(FakeChain::default())).await;
    let header = p.signed(TOP_PICKS, 5).await;
    p.failures.store(1, Ordering::SeqCst);
    let failed = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_error(&failed, StatusCode::SERVICE_UNAVAILABLE, "unavailable");
    assert!(failed.headers.get("payment-response").is_none());
    assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 0, "no settlement for a failed call");
    let payer_id = payer().address().to_string().to_lowercase();
    assert!(p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments").is_empty());

    let retried = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_eq!(retried.status, StatusCode::OK, "{}", retried.text());
    assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 1);
    let records = p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].status, PaymentStatus::Settled);
    let settled = b64_json(retried.headers["payment-response"].to_str().expect("ascii"));
    assert_eq!(settled["transaction"], records[0].tx_hash.clone().expect("tx").as_str());
}

#[tokio::test]
async fn a_failed_settlement_withholds_the_answer() {
    let p = paywalled(Some(FakeChain { refuse: true, ..FakeChain::default() })).await;
    let header = p.signed(TOP_PICKS, 6).await;
    let reply = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_error(&reply, StatusCode::PAYMENT_REQUIRED, "settlement_failed");
    assert!(!reply.text().contains("picks"), "the answer is withheld");
    assert_eq!(reply.headers["cache-control"], "no-store");
    let settled = b64_json(reply.headers["payment-response"].to_str().expect("ascii"));
    assert_eq!(settled["success"], false);
    assert_eq!(settled["errorReason"], "invalid_exact_evm_insufficient_balance");
    assert_eq!(settled["transaction"], "");
    let payer_id = payer().address().to_string().to_lowercase();
    let records = p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments");
    assert_eq!(records[0].status, PaymentStatus::Failed);
}

/// x402's MCP binding: a settlement that fails after the work answers the challenge again,
/// naming why, with the failed settlement in `_meta`, and never the tool's answer.
#[tokio::test]
async fn a_tool_call_whose_settlement_fails_gets_the_challenge_again_and_no_answer() {
    let p = paywalled(Some(FakeChain { refuse: true, ..FakeChain::default() })).await;
    let required =
        p.app.mcp_call("alpha_top_picks", serde_json::json!({}), None, &[]).await["structuredContent"].clone();
    let meta = serde_json::json!({"x402/payment": crate::support::payment_payload(&required, 40)});
    let result = p.app.mcp_call("alpha_top_picks", serde_json::json!({}), Some(meta), &[]).await;
    assert_eq!(result["isError"], true, "{result}");
    let again = &result["structuredContent"];
    assert_eq!(again["x402Version"], 2, "{result}");
    assert_eq!(again["accepts"], required["accepts"]);
    assert!(again["error"].as_str().expect("why").starts_with("Settlement failed"), "{result}");
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "the challenge only: {result}");
    let text: Value = serde_json::from_str(content[0]["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(&text, again, "the answer is withheld");
    assert_eq!(result["_meta"]["x402/payment-response"]["success"], false);
    assert_eq!(&result["_meta"]["x402/error"], again);
}

/// x402 §9.12: a payer whose balance cannot cover the amount is refused before the handler
/// runs, so nobody gets work done (and upstream calls made) on a payment that cannot settle.
#[tokio::test]
async fn a_payer_who_cannot_cover_the_amount_is_refused_before_serving() {
    let p = paywalled(Some(FakeChain { balance: Some(499_999), ..FakeChain::default() })).await;
    let header = p.signed(TOP_PICKS, 26).await;
    let reply = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_eq!(reply.status, StatusCode::PAYMENT_REQUIRED, "{}", reply.text());
    assert_eq!(error_of(&reply), "invalid_exact_evm_insufficient_balance");
    assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 0, "nothing sent");
    assert_eq!(p.failures.load(Ordering::SeqCst), 0);
    let payer_id = payer().address().to_string().to_lowercase();
    assert!(p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments").is_empty(), "nothing reserved");
}

#[tokio::test]
async fn two_hundred_concurrent_uses_of_one_payment_are_served_once() {
    let p = paywalled(Some(FakeChain::default())).await;
    let header = p.signed(TOP_PICKS, 7).await;
    let calls = (0..200).map(|_| p.pay(TOP_PICKS, "payment-signature", &header));
    let replies = futures::future::join_all(calls).await;
    let served = replies.iter().filter(|r| r.status == StatusCode::OK).count();
    assert_eq!(served, 1);
    // The others are refused as replays, or for rate: one wallet, 30 top picks a minute.
    let refused = [StatusCode::OK, StatusCode::PAYMENT_REQUIRED, StatusCode::TOO_MANY_REQUESTS];
    assert!(replies.iter().all(|r| refused.contains(&r.status)));
    assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 1, "exactly one settlement");
}

#[tokio::test]
async fn a_volume_payer_may_pay_its_discounted_price() {
    let p = paywalled(None).await;
    seed_paid_calls(&p, 100).await;
    let mut challenge = p.challenge(TOP_PICKS).await;
    assert_eq!(challenge.accepts[0].amount, "500000", "the challenge quotes the list price");
    challenge.accepts[0].amount = "400000".into();
    let now = u64::try_from(NOW_MS / 1000).expect("now");
    let header =
        svc_x402::client::pay_header(&challenge, &challenge.accepts[0], &payer(), now, B256::with_last_byte(9))
            .expect("sign");
    let reply = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());

    challenge.accepts[0].amount = "300000".into();
    let header =
        svc_x402::client::pay_header(&challenge, &challenge.accepts[0], &payer(), now, B256::with_last_byte(10))
            .expect("sign");
    assert_eq!(error_of(&p.pay(TOP_PICKS, "payment-signature", &header).await), "No matching payment requirements");
}

/// Records `n` earlier paid calls of [`payer`], as if it had made them this month.
async fn seed_paid_calls(p: &Paywalled, n: usize) {
    seed_paid_call_range(p, 0..n).await;
}

/// Records earlier paid calls of [`payer`] numbered `range` (each number once per test).
async fn seed_paid_call_range(p: &Paywalled, range: std::ops::Range<usize>) {
    seed_paid_calls_in(&p.app, range).await;
}

/// [`seed_paid_call_range`] on any test app.
async fn seed_paid_calls_in(app: &TestApp, range: std::ops::Range<usize>) {
    let payer_id = payer().address().to_string().to_lowercase();
    for i in range {
        let id = format!("seed-{i}");
        let new = svc_store::NewPayment {
            id: id.clone(),
            route_id: "alpha.top_picks".into(),
            network: BASE.into(),
            payer: payer_id.clone(),
            nonce: format!("seed-nonce-{i}"),
            amount: 500_000,
            asset: "usdc".into(),
            pay_to: "x".into(),
            valid_before: None,
            now_ms: NOW_MS - 1000,
            holder: None,
        };
        app.store.reserve_payment(&new).await.expect("seed");
        app.store.finish_payment(&id, PaymentStatus::Settled, Some("0x1"), None, NOW_MS).await.expect("finish");
    }
}

/// The credits a rebate left on the paying wallet's account, if it has one.
async fn wallet_credits(p: &Paywalled) -> Option<u64> {
    let wallet = payer().address().to_string().to_lowercase();
    p.app.store.account_by_wallet(&wallet).await.expect("store").map(|account| account.balance)
}

#[tokio::test]
async fn a_volume_payer_that_pays_the_list_price_gets_the_discount_back_as_credits_once() {
    let p = paywalled(None).await;
    seed_paid_calls(&p, 100).await;
    // The 101st call, paid at list price by a client that never asked for its price.
    let header = p.signed(TOP_PICKS, 12).await;
    let paid = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    assert_eq!(wallet_credits(&p).await, Some(100_000), "20% of $0.50 back, on the wallet's new account");

    // The same payment again is a replay: no second rebate.
    assert_eq!(p.pay(TOP_PICKS, "payment-signature", &header).await.status, StatusCode::PAYMENT_REQUIRED);
    // A retry that names its payment id gets the kept answer: no second rebate either.
    let kept = with_payment_id(&p.signed(TOP_PICKS, 13).await, "pay_rebate_once_0001");
    for _ in 0..2 {
        assert_eq!(p.pay(TOP_PICKS, "payment-signature", &kept).await.status, StatusCode::OK);
    }
    assert_eq!(wallet_credits(&p).await, Some(200_000), "one rebate per payment: two payments, two rebates");

    // A payment of the discounted price owes nothing back.
    let mut challenge = p.challenge(TOP_PICKS).await;
    challenge.accepts[0].amount = "400000".into();
    let now = u64::try_from(NOW_MS / 1000).expect("now");
    let discounted =
        svc_x402::client::pay_header(&challenge, &challenge.accepts[0], &payer(), now, B256::with_last_byte(14))
            .expect("sign");
    assert_eq!(p.pay(TOP_PICKS, "payment-signature", &discounted).await.status, StatusCode::OK);
    assert_eq!(wallet_credits(&p).await, Some(200_000));

    // The wallet's receipts say which payments were rebated, and by how much.
    let wallet = payer().address().to_string().to_lowercase();
    let account = p.app.store.account_by_wallet(&wallet).await.expect("store").expect("account");
    let (token, _) = svc_accounts::auth::token_for(&p.app.state.config.sign_in, &account.id, NOW_MS);
    let receipts = p
        .app
        .send(
            Request::get("/api/x402/receipts")
                .header("authorization", format!("Bearer {token}"))
                .body(Body::empty())
                .expect("request"),
        )
        .await;
    assert_eq!(receipts.status, StatusCode::OK, "{}", receipts.text());
    let rebates: Vec<Value> = receipts.json()["receipts"]
        .as_array()
        .expect("receipts")
        .iter()
        .filter(|r| !r["id"].as_str().unwrap_or_default().starts_with("seed-"))
        .map(|r| r["rebate"].clone())
        .collect();
    assert_eq!(rebates, [Value::Null, Value::from("0.1"), Value::from("0.1")], "newest first");
}

#[tokio::test]
async fn a_standard_payer_gets_no_rebate_and_no_account() {
    let p = paywalled(None).await;
    seed_paid_calls(&p, 98).await;
    let header = p.signed(TOP_PICKS, 15).await;
    assert_eq!(p.pay(TOP_PICKS, "payment-signature", &header).await.status, StatusCode::OK);
    assert_eq!(wallet_credits(&p).await, None, "the 99th call is at the standard tier");
    // The 100th call is still priced by the 99 before it; the 101st is the first rebated.
    let header = p.signed(TOP_PICKS, 16).await;
    assert_eq!(p.pay(TOP_PICKS, "payment-signature", &header).await.status, StatusCode::OK);
    assert_eq!(wallet_credits(&p).await, None);
    let header = p.signed(TOP_PICKS, 17).await;
    assert_eq!(p.pay(TOP_PICKS, "payment-signature", &header).await.status, StatusCode::OK);
    assert_eq!(wallet_credits(&p).await, Some(100_000));
}

/// The challenge `uri` answers when the request proves its wallet with `proof`.
async fn signed_in_challenge(p: &Paywalled, uri: &str, proof: &str) -> PaymentRequired {
    let request = Request::get(uri).header("sign-in-with-x", proof).body(Body::empty()).expect("request");
    let reply = p.app.send(request).await;
    assert_eq!(reply.status, StatusCode::PAYMENT_REQUIRED, "{}", reply.text());
    serde_json::from_slice(&reply.body).expect("challenge")
}

#[tokio::test]
async fn a_payer_that_signs_in_first_is_quoted_its_own_price_and_pays_it() {
    let p = paywalled(None).await;
    seed_paid_calls(&p, 100).await;
    let challenge = p.challenge(TOP_PICKS).await;
    assert_eq!(challenge.accepts[0].amount, "500000");
    let proof = svc_x402::client::sign_in_header(&challenge, BASE, &payer()).expect("sign-in offered").expect("signed");

    let quoted = signed_in_challenge(&p, TOP_PICKS, &proof).await;
    assert_eq!(quoted.accepts[0].amount, "400000", "20% off, quoted before paying");
    let now = u64::try_from(NOW_MS / 1000).expect("now");
    let header = svc_x402::client::pay_header(&quoted, &quoted.accepts[0], &payer(), now, B256::with_last_byte(21))
        .expect("sign");
    let paid = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    assert_eq!(wallet_credits(&p).await, None, "paid its own price: nothing to give back");
}

#[tokio::test]
async fn a_sign_in_that_does_not_hold_is_quoted_the_list_price_and_told_why() {
    let p = paywalled(None).await;
    seed_paid_calls(&p, 100).await;
    let challenge = p.challenge(TOP_PICKS).await;
    let proof = svc_x402::client::sign_in_header(&challenge, BASE, &payer()).expect("offered").expect("signed");
    let decode = |proof: &str| -> Value {
        serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(proof).expect("base64")).expect("json")
    };
    let encode = |value: &Value| base64::engine::general_purpose::STANDARD.encode(value.to_string());

    let mut other_site = decode(&proof);
    other_site["domain"] = Value::from("evil.example");
    let mut forged_signature = decode(&proof);
    forged_signature["signature"] = Value::from(format!("0x{}", "11".repeat(65)));
    let mut forged_nonce = decode(&proof);
    forged_nonce["nonce"] = Value::from("00".repeat(16));
    let mut other_wallet = decode(&proof);
    other_wallet["address"] = Value::from("0x000000000000000000000000000000000000dEaD");
    for bad in
        [encode(&other_site), encode(&forged_signature), encode(&forged_nonce), encode(&other_wallet), "junk".into()]
    {
        let quoted = signed_in_challenge(&p, TOP_PICKS, &bad).await;
        assert_eq!(quoted.accepts[0].amount, "500000");
        assert!(quoted.error.as_deref().unwrap_or_default().starts_with("sign-in-with-x: "), "{:?}", quoted.error);
    }

    // A proof is good for five minutes; then the newest challenge's offer must be signed.
    p.app.clock.advance_ms(svc_accounts::siwx::MAX_AGE_MS + 1);
    let stale = signed_in_challenge(&p, TOP_PICKS, &proof).await;
    assert_eq!(stale.accepts[0].amount, "500000");
    assert!(stale.error.as_deref().unwrap_or_default().contains("expired"), "{:?}", stale.error);
}

/// Makes [`payer`]'s `n`th paid call of Top Picks, at the list price or at the price it is
/// quoted signed in, and checks that the pricing route, the quote and the rebate all price it
/// by the `n - 1` calls before it.
async fn nth_call_priced_alike(p: &Paywalled, n: u64, signed_in: bool) {
    let percent = svc_domain::DiscountTier::for_calls(n - 1).percent_off();
    let price = svc_domain::Money::from_atomic(500_000).discounted(percent).atomic();
    let address = payer().address().to_checksum(None);
    let pricing = p.app.get(&format!("/api/x402/pricing?payer={address}")).await.json();
    let counted = (pricing["calls_in_window"].as_u64(), pricing["percent_off"].as_u64());
    assert_eq!(counted, (Some(n - 1), Some(u64::from(percent))), "call {n}: the pricing route");
    let challenge = p.challenge(TOP_PICKS).await;
    let proof = svc_x402::client::sign_in_header(&challenge, BASE, &payer()).expect("offered").expect("signed");
    let quoted = signed_in_challenge(p, TOP_PICKS, &proof).await;
    assert_eq!(quoted.accepts[0].amount, price.to_string(), "call {n}: the price quoted signed in");

    let credits = wallet_credits(p).await.unwrap_or(0);
    let nonce = u8::try_from(n % 250).expect("small");
    let header = if signed_in {
        let now = u64::try_from(svc_domain::Clock::now_ms(&p.app.clock) / 1000).expect("now");
        svc_x402::client::pay_header(&quoted, &quoted.accepts[0], &payer(), now, B256::with_last_byte(nonce))
            .expect("sign")
    } else {
        p.signed(TOP_PICKS, nonce).await
    };
    let paid = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_eq!(paid.status, StatusCode::OK, "call {n}: {}", paid.text());
    let rebate = wallet_credits(p).await.unwrap_or(0) - credits;
    let owed = if signed_in { 0 } else { 500_000 - price };
    assert_eq!(rebate, owed, "call {n}: the rebate of a payment at {}", if signed_in { "its quote" } else { "list" });
}

#[tokio::test]
async fn the_tier_boundaries_price_the_quote_the_pricing_route_and_the_rebate_alike() {
    let p = paywalled(None).await;
    seed_paid_calls(&p, 98).await;
    for (n, signed_in) in [(99, false), (100, true), (101, false), (102, true)] {
        nth_call_priced_alike(&p, n, signed_in).await;
    }
    seed_paid_call_range(&p, 102..997).await;
    // The calls just recorded are a minute old when the next are made.
    p.app.clock.advance_ms(61_000);
    for (n, signed_in) in [(998, false), (999, true), (1000, false), (1001, false), (1002, true), (1003, false)] {
        nth_call_priced_alike(&p, n, signed_in).await;
    }
}

#[tokio::test]
async fn pricing_tells_a_payer_its_tier_and_prices() {
    let p = paywalled(None).await;
    let anonymous = p.app.get("/api/x402/pricing").await;
    assert_eq!(anonymous.status, StatusCode::OK, "{}", anonymous.text());
    let body = anonymous.json();
    assert_eq!(body["tier"], "standard");
    assert_eq!(body["calls_to_next_tier"], 100);
    let top = body["routes"].as_array().expect("routes").iter().find(|r| r["id"] == "alpha.top_picks").cloned();
    let top = top.expect("top picks listed");
    assert_eq!((top["list"].as_str(), top["price"].as_str()), (Some("0.5"), Some("0.5")));

    let header = p.signed(TOP_PICKS, 11).await;
    assert_eq!(p.pay(TOP_PICKS, "payment-signature", &header).await.status, StatusCode::OK);
    let address = payer().address().to_checksum(None);
    let mine = p.app.get(&format!("/api/x402/pricing?payer={address}")).await.json();
    assert_eq!(mine["payer"], address.to_lowercase());
    assert_eq!(mine["calls_in_window"], 1);
    assert_eq!(mine["calls_to_next_tier"], 99);
    let refused = p.app.get("/api/x402/pricing?payer=nope").await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
}

fn with_payment_id(header: &str, id: &str) -> String {
    let mut message = b64_json(header);
    message["extensions"]["payment-identifier"]["info"]["id"] = Value::from(id);
    svc_x402::encode_header(&message)
}

#[tokio::test]
async fn a_retry_with_the_same_payment_id_gets_the_answer_again_without_a_second_charge() {
    let p = paywalled(Some(FakeChain::default())).await;
    let challenge = p.challenge(TOP_PICKS).await;
    let declared = challenge.extensions.as_ref().and_then(|e| e.get("payment-identifier")).cloned();
    assert_eq!(declared.expect("declared")["info"]["required"], false);

    let header = with_payment_id(&p.signed(TOP_PICKS, 12).await, "pay_0123456789abcdef");
    let first = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text());
    p.app.clock.advance_ms(10 * 60 * 1000);
    let again = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.text());
    assert_eq!(again.body, first.body);
    assert_eq!(again.headers["payment-response"], first.headers["payment-response"]);
    assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 1, "charged once");
    // The answer belongs to the call it paid for, not to another route at the same price.
    let elsewhere = p.pay("/api/x402/alpha/exodus", "payment-signature", &header).await;
    assert_error(&elsewhere, StatusCode::CONFLICT, "payment_id_conflict");

    let other = with_payment_id(&p.signed(TOP_PICKS, 13).await, "pay_0123456789abcdef");
    assert_error(&p.pay(TOP_PICKS, "payment-signature", &other).await, StatusCode::CONFLICT, "payment_id_conflict");
    let bad = with_payment_id(&p.signed(TOP_PICKS, 14).await, "short");
    assert!(error_of(&p.pay(TOP_PICKS, "payment-signature", &bad).await).starts_with("invalid_payment_identifier"));
}

#[tokio::test]
async fn a_kept_answer_is_never_given_to_a_forged_payment_naming_the_same_payer_nonce_and_id() {
    let p = paywalled(Some(FakeChain::default())).await;
    let header = with_payment_id(&p.signed(TOP_PICKS, 15).await, "pay_0123456789abcdef");
    let first = p.pay(TOP_PICKS, "payment-signature", &header).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text());

    // The payer, nonce and id are public once the payment settles; the signature is forged.
    let mut forged = b64_json(&header);
    forged["payload"]["signature"] = Value::from(format!("0x{}", "11".repeat(65)));
    let forged = p.pay(TOP_PICKS, "payment-signature", &svc_x402::encode_header(&forged)).await;
    assert_error(&forged, StatusCode::CONFLICT, "payment_id_conflict");
    assert!(!forged.text().contains("picks"), "{}", forged.text());

    // The very payment, re-encoded with its payload's keys in another order, still gets its answer.
    let mut original = b64_json(&header);
    let reversed = |value: &Value| -> Value {
        Value::Object(value.as_object().expect("object").iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect())
    };
    let mut payload = reversed(&original["payload"]);
    payload["authorization"] = reversed(&payload["authorization"]);
    original["payload"] = payload;
    let again = p.pay(TOP_PICKS, "payment-signature", &svc_x402::encode_header(&original)).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.text());
    assert_eq!(again.body, first.body);
    assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 1, "charged once");
}

#[tokio::test]
async fn repeated_challenges_are_identical_and_each_names_its_own_url() {
    let p = paywalled(None).await;
    let first = p.app.get("/api/x402/svc-tools/social/search?query=sol").await;
    let again = p.app.get("/api/x402/svc-tools/social/search?query=sol").await;
    assert_eq!(first.body, again.body);
    assert_eq!(first.headers["payment-required"], again.headers["payment-required"]);
    let other = p.app.get("/api/x402/svc-tools/social/search?query=eth").await;
    assert_eq!(other.json()["resource"]["url"], format!("{BASE_URL}/api/x402/svc-tools/social/search?query=eth"));
    assert_eq!(other.json()["extensions"]["bazaar"]["info"]["input"]["queryParams"]["query"], "eth");
}

#[tokio::test]
async fn a_routes_challenge_names_the_configured_base_url_whatever_the_host() {
    let p = paywalled(None).await;
    let uri = "/api/x402/svc-tools/social/search?query=sol";
    let on = |host: &'static str| Request::get(uri).header("host", host).body(Body::empty()).expect("request");
    let plain = p.app.send(on("a.example")).await;
    let hostile = p.app.send(on("evil.example:666")).await;
    assert_eq!(plain.status, StatusCode::PAYMENT_REQUIRED, "{}", plain.text());
    assert_eq!(plain.json()["resource"]["url"], format!("{BASE_URL}{uri}"));
    assert_eq!(hostile.body, plain.body, "the Host is no part of a challenge");
    assert!(!hostile.text().contains("evil.example"), "{}", hostile.text());
}

#[tokio::test]
async fn a_cached_challenge_is_never_served_for_another_body() {
    let p = paywalled(None).await;
    let post = |body: &'static str| {
        Request::post("/api/x402/svc-tools/data-products/top-alpha-picks")
            .header("content-type", "application/json")
            .body(Body::from(body))
            .expect("request")
    };
    let five = p.app.send(post(r#"{"params":{"limit":5}}"#)).await;
    let six = p.app.send(post(r#"{"params":{"limit":6}}"#)).await;
    assert_eq!(five.status, StatusCode::PAYMENT_REQUIRED, "{}", five.text());
    assert_eq!(five.json()["extensions"]["bazaar"]["info"]["input"]["body"]["params"]["limit"], 5);
    assert_eq!(six.json()["extensions"]["bazaar"]["info"]["input"]["body"]["params"]["limit"], 6);
}

/// The official TypeScript client's Solana payment (0.50 USDC to the vector's recipient,
/// fee payer the vector facilitator's key), from the fixture.
mod solana {
    use super::*;
    use svc_chain_solana::{Keypair, SendError};
    use svc_x402::SolanaLedger;
    use svc_x402::builtin::SolanaChain;
    use svc_x402::network::{SOLANA, SOLANA_USDC};
    use svc_x402::{Offer, PaymentNetwork};

    const VECTOR: &str = include_str!("../../../../fixtures/x402/svm-solana-mainnet-exact.json");
    const FEE_PAYER: &str = "HreMf6X5nAv9evt728Gf3TSuUNEnEXDPhdpCC1GJ5sv9";
    const PAY_TO: &str = "649F3Ama5VBkrXtWKxy8KRhXKwF15HiyUDyYosdWiBci";
    const PAYER: &str = "9fijMemJYwXS5QD85Qxsq7iKqvSebgb6LvpGftgkeigk";

    fn solana_offer() -> Offer {
        let mut networks = offer().networks().to_vec();
        networks.push(PaymentNetwork::solana(SOLANA, SOLANA_USDC, PAY_TO, FEE_PAYER).expect("solana"));
        Offer::new(networks, 300)
    }

    /// A node double: records what it was asked to send, and can stop the first send for
    /// good, before or after the transaction leaves, as a process that dies there would.
    #[derive(Debug, Default)]
    struct FakeSolana {
        sent: std::sync::Mutex<Vec<String>>,
        cut: std::sync::Mutex<Option<Cut>>,
        /// The fee payer cannot pay for a transaction.
        broke: std::sync::atomic::AtomicBool,
    }

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Cut {
        BeforeSending,
        AfterSending,
    }

    impl FakeSolana {
        fn cut(cut: Cut) -> Self {
            FakeSolana { cut: std::sync::Mutex::new(Some(cut)), ..FakeSolana::default() }
        }
    }

    impl SolanaChain for FakeSolana {
        fn send<'a>(&'a self, transaction: &'a str, _: &'a str) -> BoxFuture<'a, Result<(), SendError>> {
            let cut = self.cut.lock().expect("cut").take();
            if cut != Some(Cut::BeforeSending) {
                self.sent.lock().expect("sent").push(transaction.to_owned());
            }
            match cut {
                Some(_) => futures::future::pending().boxed(),
                None => futures::future::ready(Ok(())).boxed(),
            }
        }

        fn can_settle(&self) -> bool {
            !self.broke.load(Ordering::SeqCst)
        }
    }

    impl SolanaLedger for FakeSolana {
        /// Landed if it was sent; never seen otherwise.
        fn status<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<bool>, SendError>> {
            let sent = !self.sent.lock().expect("sent").is_empty();
            futures::future::ready(Ok(sent.then_some(true))).boxed()
        }
    }

    /// Pays Top Picks with `header`.
    async fn pay_with(app: &TestApp, header: &str) -> crate::support::Reply {
        app.send(Request::get(TOP_PICKS).header("payment-signature", header).body(Body::empty()).expect("request"))
            .await
    }

    /// A paid call cut short where `cut` says, as a process that stopped there would leave
    /// it, then one reconciliation pass past the abandonment window. Returns the node, the
    /// app, the payment and what the pass did.
    async fn reconciled_after(cut: Cut) -> (Arc<FakeSolana>, TestApp, String, svc_paywall::reconcile::Report) {
        let node = Arc::new(FakeSolana::cut(cut));
        let app = app(Some(Arc::clone(&node))).await;
        let header = payment(&app).await;
        let stopped = tokio::time::timeout(std::time::Duration::from_millis(500), pay_with(&app, &header)).await;
        assert!(stopped.is_err(), "the request stops while the transfer is in flight");
        let records = app.store.payments_by_payer(PAYER, 10).await.expect("payments");
        assert_eq!(records[0].status, PaymentStatus::Reserved);
        assert!(records[0].tx_hash.is_some(), "the transaction is recorded before it is sent");
        app.clock.advance_ms(svc_paywall::reconcile::ABANDONED_AFTER_MS + 1);
        let report = svc_paywall::reconcile::reconcile_payments(&app.state.paywall).await.expect("reconcile");
        (node, app, header, report)
    }

    #[tokio::test]
    async fn a_solana_settlement_cut_off_after_sending_is_found_and_its_answer_served_once() {
        let (node, app, header, report) = reconciled_after(Cut::AfterSending).await;
        assert_eq!(report.settled, 1, "{report:?}");
        let served = pay_with(&app, &header).await;
        assert_eq!(served.status, StatusCode::OK, "the payment that moved gets its answer: {}", served.text());
        let again = pay_with(&app, &header).await;
        assert!(error_of(&again).starts_with("payment_already_used"), "{}", again.text());
        assert_eq!(node.sent.lock().expect("sent").len(), 1, "the transfer was sent once");
    }

    #[tokio::test]
    async fn a_solana_settlement_cut_off_before_sending_is_released_and_the_payment_works_again() {
        let (node, app, header, report) = reconciled_after(Cut::BeforeSending).await;
        assert_eq!(report.released, 1, "{report:?}");
        let paid = pay_with(&app, &header).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
        assert_eq!(node.sent.lock().expect("sent").len(), 1, "sent once, on the second try");
        let records = app.store.payments_by_payer(PAYER, 10).await.expect("payments");
        assert_eq!(records[0].status, PaymentStatus::Settled);
    }

    async fn app(node: Option<Arc<FakeSolana>>) -> TestApp {
        TestApp::with(Setup {
            handlers: stand_in(Arc::new(AtomicUsize::new(0))),
            offer: solana_offer(),
            facilitator: Box::new(move |clock: FixedClock| {
                let mut f = BuiltinFacilitator::new(solana_offer().networks().to_vec(), Arc::new(clock));
                if let Some(node) = node {
                    // sha256("x402-vector-svm-facilitator-fee-payer"): the vector's public test key.
                    let seed = "0x0ae919bb79373d44e812a220b3844c99480656b1f8d1d84a8b363b609e0a6383";
                    let key = Keypair::parse(seed).expect("key");
                    f = f.with_solana_chain(SOLANA, key, node).expect("fee payer offered");
                }
                Arc::new(f)
            }),
            ..Setup::default()
        })
        .await
    }

    /// The vector's payment, its `accepted` set to our Solana requirement (the signed
    /// transaction is what is checked; `accepted` only selects the requirement).
    async fn payment(app: &TestApp) -> String {
        let challenge: Value = app.get(TOP_PICKS).await.json();
        let ours = challenge["accepts"]
            .as_array()
            .expect("accepts")
            .iter()
            .find(|r| r["network"] == SOLANA)
            .expect("Solana offered")
            .clone();
        assert_eq!(ours["extra"]["feePayer"], FEE_PAYER);
        assert_eq!(ours["amount"], "500000");
        let vector: Value = serde_json::from_str(VECTOR).expect("vector");
        let mut payload = vector["paymentPayload"].clone();
        payload["accepted"] = ours;
        base64::engine::general_purpose::STANDARD.encode(payload.to_string())
    }

    /// The payload's keys are the client's to choose: an EIP-3009 `authorization` slipped in
    /// beside the transaction must not become the payment's replay key, or one transfer
    /// would pay again under each new stray nonce.
    #[tokio::test]
    async fn a_solana_payment_with_a_stray_authorization_is_still_served_once() {
        let app = app(None).await;
        let header = payment(&app).await;
        let with_stray = |nonce: u8| {
            let mut message = b64_json(&header);
            message["payload"]["authorization"] = serde_json::json!({
                "from": "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23",
                "nonce": format!("0x{nonce:064x}"),
                "validBefore": "0",
            });
            base64::engine::general_purpose::STANDARD.encode(message.to_string())
        };
        let paid = pay_with(&app, &with_stray(1)).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
        let again = pay_with(&app, &with_stray(2)).await;
        assert!(error_of(&again).starts_with("payment_already_used"), "{}", again.text());
        let records = app.store.payments_by_payer(PAYER, 10).await.expect("payments");
        assert_eq!(records.len(), 1, "recorded once, under the transaction's payer");
        let arrived = svc_domain::Clock::now_ms(&app.clock) / 1000;
        assert_eq!(records[0].valid_before, Some(arrived + 600), "bounded by the blockhash, not the stray field");
    }

    #[tokio::test]
    async fn the_official_clients_solana_payment_is_served_once() {
        let app = app(None).await;
        let header = payment(&app).await;
        let send = || {
            app.send(Request::get(TOP_PICKS).header("payment-signature", &header).body(Body::empty()).expect("request"))
        };
        let paid = send().await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
        let settled = b64_json(paid.headers["payment-response"].to_str().expect("ascii"));
        assert_eq!(settled["payer"], PAYER);
        assert_eq!(settled["network"], SOLANA);
        let records = app.store.payments_by_payer(PAYER, 10).await.expect("payments");
        assert_eq!(records.len(), 1, "recorded under the base58 payer, case kept");

        let again = send().await;
        assert!(error_of(&again).starts_with("payment_already_used"), "{}", again.text());
    }

    #[tokio::test]
    async fn a_solana_payment_is_cosigned_and_sent_and_its_signature_returned() {
        let node = Arc::new(FakeSolana::default());
        let app = app(Some(Arc::clone(&node))).await;
        let header = payment(&app).await;
        let paid = app
            .send(Request::get(TOP_PICKS).header("payment-signature", &header).body(Body::empty()).expect("request"))
            .await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
        let vector: Value = serde_json::from_str(VECTOR).expect("vector");
        let settled = b64_json(paid.headers["payment-response"].to_str().expect("ascii"));
        assert_eq!(settled["transaction"], vector["facilitatorSettleResponse"]["transaction"]);
        assert_eq!(
            node.sent.lock().expect("sent").as_slice(),
            [vector["fullySignedTransactionBase64"].as_str().expect("tx")]
        );
        // The base58 payer's paid call counts towards its volume tier (case is significant).
        let pricing = app.get(&format!("/api/x402/pricing?payer={PAYER}")).await.json();
        assert_eq!((pricing["payer"].as_str(), pricing["calls_in_window"].as_u64()), (Some(PAYER), Some(1)));
        let records = app.store.payments_by_payer(PAYER, 10).await.expect("payments");
        assert_eq!(records[0].status, PaymentStatus::Settled);
    }

    /// The Solana payer role (the transaction the official client builds, from svc's own
    /// client): each payment is served once, under the payer's base58 address; the same
    /// payment again is a replay, a new one (another memo nonce) pays again.
    #[tokio::test]
    async fn the_solana_payers_payments_are_each_served_once() {
        let app = app(None).await;
        let get = axum::http::Method::GET;
        let paid = app.pay_solana(&get, TOP_PICKS, None, 1).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
        let settled = b64_json(paid.headers["payment-response"].to_str().expect("ascii"));
        assert_eq!((settled["payer"].as_str(), settled["network"].as_str()), (Some(PAYER), Some(SOLANA)));
        let again = app.pay_solana(&get, TOP_PICKS, None, 1).await;
        assert!(error_of(&again).starts_with("payment_already_used"), "{}", again.text());
        let another = app.pay_solana(&get, TOP_PICKS, None, 2).await;
        assert_eq!(another.status, StatusCode::OK, "{}", another.text());
        let records = app.store.payments_by_payer(PAYER, 10).await.expect("payments");
        assert_eq!(records.len(), 2);
    }

    /// Where svc settles Solana, the payer's transaction is co-signed and sent once, and the
    /// answer names the sent transaction.
    #[tokio::test]
    async fn the_solana_payers_payment_is_cosigned_and_sent() {
        let node = Arc::new(FakeSolana::default());
        let app = app(Some(Arc::clone(&node))).await;
        let paid = app.pay_solana(&axum::http::Method::GET, TOP_PICKS, None, 7).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
        let settled = b64_json(paid.headers["payment-response"].to_str().expect("ascii"));
        assert!(settled["transaction"].as_str().is_some_and(|t| !t.is_empty()), "{settled}");
        assert_eq!(node.sent.lock().expect("sent").len(), 1);
        let records = app.store.payments_by_payer(PAYER, 10).await.expect("payments");
        assert_eq!(records[0].status, PaymentStatus::Settled);
    }

    #[tokio::test]
    async fn readiness_fails_while_the_solana_fee_payer_cannot_pay_and_recovers_when_it_can() {
        let node = Arc::new(FakeSolana::default());
        let app = app(Some(Arc::clone(&node))).await;
        assert_eq!(app.get("/readyz").await.status, StatusCode::OK);
        node.broke.store(true, Ordering::SeqCst);
        let unready = app.get("/readyz").await;
        assert_error(&unready, StatusCode::SERVICE_UNAVAILABLE, "unavailable");
        node.broke.store(false, Ordering::SeqCst);
        assert_eq!(app.get("/readyz").await.status, StatusCode::OK);
    }

    #[tokio::test]
    async fn a_solana_payment_to_another_recipient_is_refused_before_serving() {
        let app = TestApp::with(Setup {
            handlers: stand_in(Arc::new(AtomicUsize::new(0))),
            offer: {
                let mut networks = offer().networks().to_vec();
                networks.push(PaymentNetwork::solana(SOLANA, SOLANA_USDC, FEE_PAYER, FEE_PAYER).expect("solana"));
                Offer::new(networks, 300)
            },
            facilitator: Box::new(|clock: FixedClock| {
                let mut networks = offer().networks().to_vec();
                networks.push(PaymentNetwork::solana(SOLANA, SOLANA_USDC, FEE_PAYER, FEE_PAYER).expect("solana"));
                Arc::new(BuiltinFacilitator::new(networks, Arc::new(clock)))
            }),
            ..Setup::default()
        })
        .await;
        let header = payment(&app).await;
        let reply = app
            .send(Request::get(TOP_PICKS).header("payment-signature", &header).body(Body::empty()).expect("request"))
            .await;
        assert_eq!(error_of(&reply), "invalid_exact_svm_payload_recipient_mismatch");
    }
}

#[tokio::test]
async fn a_payment_that_rewrites_the_advertised_extensions_is_refused() {
    let p = paywalled(None).await;
    let header = p.signed(TOP_PICKS, 9).await;
    let mut payment = b64_json(&header);
    assert_eq!(payment["extensions"]["bazaar"]["info"]["input"]["method"], "GET", "the client echoes the challenge");
    payment["extensions"]["bazaar"]["info"]["input"]["method"] = Value::from("POST");
    let rewritten = base64::engine::general_purpose::STANDARD.encode(payment.to_string());
    let reply = p.pay(TOP_PICKS, "payment-signature", &rewritten).await;
    assert_eq!(error_of(&reply), "extension_echo_mismatch");

    // Adding a payment id to the echo is what the extension is for, and passes.
    payment["extensions"]["bazaar"]["info"]["input"]["method"] = Value::from("GET");
    payment["extensions"]["payment-identifier"]["info"]["id"] = Value::from("pay_0123456789abcdef");
    let with_id = base64::engine::general_purpose::STANDARD.encode(payment.to_string());
    assert_eq!(p.pay(TOP_PICKS, "payment-signature", &with_id).await.status, StatusCode::OK);
}

/// Settlements left unconfirmed, and reservations left by a stopped process, are settled from
/// what the chain says; a payment that landed gets its answer exactly once.
mod reconciliation {
    use super::*;
    use svc_paywall::reconcile::{Report, reconcile_payments};

    async fn reconcile(p: &Paywalled) -> Report {
        reconcile_payments(&p.app.state.paywall).await.expect("reconcile")
    }

    fn record_status(records: &[svc_store::PaymentRecord]) -> (PaymentStatus, Option<&str>) {
        (records[0].status, records[0].error.as_deref())
    }

    /// Pays with `header`: the answer is withheld and the payment left pending. Returns the
    /// refusal and the payer's records.
    async fn withheld(p: &Paywalled, header: &str) -> (Reply, Vec<svc_store::PaymentRecord>) {
        let first = p.pay(TOP_PICKS, "payment-signature", header).await;
        assert_error(&first, StatusCode::PAYMENT_REQUIRED, "settlement_pending");
        let payer_id = payer().address().to_string().to_lowercase();
        let records = p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments");
        assert_eq!(record_status(&records), (PaymentStatus::Pending, Some("settlement_pending")));
        (first, records)
    }

    /// The chain shows the authorization used: a pass settles the payment, and the same
    /// payment, sent again, gets its answer without a second transfer.
    async fn found_used_and_served(p: &Paywalled, header: &str) -> Reply {
        p.chain.used.store(true, Ordering::SeqCst);
        assert_eq!(reconcile(p).await, Report { settled: 1, ..Report::default() });
        let served = p.pay(TOP_PICKS, "payment-signature", header).await;
        assert_eq!(served.status, StatusCode::OK, "{}", served.text());
        assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 1, "one transfer, never a second");
        served
    }

    #[tokio::test]
    async fn an_unconfirmed_settlement_that_lands_later_gets_its_answer_once() {
        let p = paywalled(Some(FakeChain { unconfirmed: true, ..FakeChain::default() })).await;
        let header = p.signed(TOP_PICKS, 20).await;
        let (first, _) = withheld(&p, &header).await;
        assert!(first.text().contains("Do not sign a new payment"), "{}", first.text());
        let settled = b64_json(first.headers["payment-response"].to_str().expect("ascii"));
        assert_eq!(settled["errorReason"], "settlement_pending");
        assert!(settled["transaction"].as_str().is_some_and(|t| !t.is_empty()), "the client learns the transaction");

        // Still unknown: the same payment is told to wait, and nothing is decided.
        let waiting = p.pay(TOP_PICKS, "payment-signature", &header).await;
        assert!(error_of(&waiting).starts_with("payment_pending"), "{}", waiting.text());
        assert_eq!(reconcile(&p).await, Report { undecided: 1, ..Report::default() });

        // It lands: the chain has consumed the nonce.
        *p.chain.mined.lock().expect("mined") = Some(true);
        let served = found_used_and_served(&p, &header).await;
        let settled = b64_json(served.headers["payment-response"].to_str().expect("ascii"));
        assert_eq!(settled["success"], true);
        let again = p.pay(TOP_PICKS, "payment-signature", &header).await;
        assert_eq!(error_of(&again), "invalid_exact_evm_nonce_already_used");
        assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 1, "one transfer, never a second");
        let payer_id = payer().address().to_string().to_lowercase();
        let records = p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments");
        assert_eq!(record_status(&records), (PaymentStatus::Settled, None));
        assert_eq!(reconcile(&p).await, Report::default());
    }

    /// A send that may have left without a hash (the connection dropped mid-request) is not a
    /// failure: telling the payer to sign again could take it twice. The token's record of the
    /// authorization decides.
    #[tokio::test]
    async fn a_send_of_unknown_outcome_is_pending_and_settled_from_the_tokens_record() {
        let p = paywalled(Some(FakeChain { send_unknown: true, ..FakeChain::default() })).await;
        let header = p.signed(TOP_PICKS, 24).await;
        let (first, records) = withheld(&p, &header).await;
        assert!(first.text().contains("Do not sign a new payment"), "{}", first.text());
        assert_eq!(records[0].tx_hash, None);
        assert_eq!(records[0].valid_before, Some(NOW_MS / 1000 + 300), "the authorization's validBefore");

        // The transfer had left: the token consumed the nonce.
        found_used_and_served(&p, &header).await;
    }

    /// Unused so far is not final: a transfer that left may still be mined. Only once the
    /// authorization has expired can it never move the funds.
    #[tokio::test]
    async fn a_send_of_unknown_outcome_that_never_left_is_failed_once_its_authorization_expired() {
        let p = paywalled(Some(FakeChain { send_unknown: true, ..FakeChain::default() })).await;
        let header = p.signed(TOP_PICKS, 25).await;
        p.pay(TOP_PICKS, "payment-signature", &header).await;
        assert_eq!(reconcile(&p).await, Report { undecided: 1, ..Report::default() });
        // validBefore is the challenge's 300 s away, and the chain's clock is the one that
        // counts: ours passing it decides nothing.
        let valid_before = u64::try_from(NOW_MS / 1000 + 300).expect("seconds");
        p.app.clock.advance_ms(400_000);
        p.chain.time.store(valid_before - 1, Ordering::SeqCst);
        assert_eq!(reconcile(&p).await, Report { undecided: 1, ..Report::default() });
        p.chain.time.store(valid_before, Ordering::SeqCst);
        assert_eq!(reconcile(&p).await, Report { failed: 1, ..Report::default() });
        let payer_id = payer().address().to_string().to_lowercase();
        let records = p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments");
        assert_eq!(records[0].status, PaymentStatus::Failed);
        let again = p.pay(TOP_PICKS, "payment-signature", &header).await;
        assert_eq!(error_of(&again), "invalid_exact_evm_payload_authorization_valid_before");
        assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 1, "nothing was sent again");
    }

    #[tokio::test]
    async fn an_unconfirmed_settlement_that_reverts_is_failed_once_its_authorization_expired() {
        let p = paywalled(Some(FakeChain { unconfirmed: true, ..FakeChain::default() })).await;
        let header = p.signed(TOP_PICKS, 21).await;
        p.pay(TOP_PICKS, "payment-signature", &header).await;
        *p.chain.mined.lock().expect("mined") = Some(false);
        // The revert made the signed authorization public: anyone may send it again until
        // it expires.
        assert_eq!(reconcile(&p).await, Report { undecided: 1, ..Report::default() });
        p.chain.time.store(u64::try_from(NOW_MS / 1000 + 300).expect("seconds"), Ordering::SeqCst);
        assert_eq!(reconcile(&p).await, Report { failed: 1, ..Report::default() });
        let payer_id = payer().address().to_string().to_lowercase();
        let records = p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments");
        assert_eq!(records[0].status, PaymentStatus::Failed);
    }

    /// A reservation of a Top Picks payment signed with `nonce`, as a process left it when it
    /// stopped between reserving and recording: made at `at_ms`, held by `holder`. Returns the
    /// payment's header.
    async fn left_reserved(p: &Paywalled, nonce: u8, id: String, at_ms: i64, holder: Option<String>) -> String {
        let header = p.signed(TOP_PICKS, nonce).await;
        let payment = b64_json(&header);
        let authorization = &payment["payload"]["authorization"];
        let new = svc_store::NewPayment {
            id,
            route_id: "alpha.top_picks".into(),
            network: svc_x402::network::BASE.into(),
            payer: authorization["from"].as_str().expect("from").to_lowercase(),
            nonce: authorization["nonce"].as_str().expect("nonce").to_lowercase(),
            amount: 500_000,
            asset: svc_x402::network::BASE_USDC.into(),
            pay_to: crate::support::PAY_TO.into(),
            valid_before: authorization["validBefore"].as_str().and_then(|v| v.parse().ok()),
            now_ms: at_ms,
            holder,
        };
        p.app.store.reserve_payment(&new).await.expect("reserve");
        header
    }

    /// A reservation left longer ago than any request runs.
    async fn abandoned(p: &Paywalled, nonce: u8) -> String {
        let long_ago = svc_domain::Clock::now_ms(&p.app.clock) - svc_paywall::reconcile::ABANDONED_AFTER_MS - 1_000;
        left_reserved(p, nonce, format!("abandoned-{nonce}"), long_ago, None).await
    }

    /// A transfer that reverted is no proof that nothing moved: most often the authorization
    /// was used first, by another sender. The answer is withheld, not refused.
    #[tokio::test]
    async fn a_reverted_transfer_whose_authorization_was_used_first_gets_its_answer() {
        let p = paywalled(Some(FakeChain { reverts: true, ..FakeChain::default() })).await;
        let header = p.signed(TOP_PICKS, 27).await;
        withheld(&p, &header).await;
        found_used_and_served(&p, &header).await;
    }

    /// Payments the chain cannot decide stay due, oldest first; a pass pages past them to the
    /// ones it can.
    #[tokio::test]
    async fn undecided_payments_do_not_hide_the_ones_behind_them() {
        let p = paywalled(Some(FakeChain::default())).await;
        let long_ago = svc_domain::Clock::now_ms(&p.app.clock) - svc_paywall::reconcile::ABANDONED_AFTER_MS - 60_000;
        for i in 0..150 {
            let stuck = svc_store::NewPayment {
                id: format!("stuck-{i:03}"),
                route_id: "alpha.top_picks".into(),
                network: BASE.into(),
                payer: format!("0x{i:040x}"),
                // Not an EIP-3009 nonce: the node cannot be asked, so it stays undecided.
                nonce: format!("unreadable-{i}"),
                amount: 500_000,
                asset: svc_x402::network::BASE_USDC.into(),
                pay_to: crate::support::PAY_TO.into(),
                valid_before: Some(0),
                now_ms: long_ago,
                holder: None,
            };
            p.app.store.reserve_payment(&stuck).await.expect("reserve");
        }
        let header = abandoned(&p, 26).await;
        p.chain.used.store(true, Ordering::SeqCst);
        assert_eq!(reconcile(&p).await, Report { settled: 1, undecided: 150, ..Report::default() });
        let served = p.pay(TOP_PICKS, "payment-signature", &header).await;
        assert_eq!(served.status, StatusCode::OK, "{}", served.text());
    }

    /// The stopped process may have sent the transfer (or, behind an external facilitator,
    /// the facilitator may still send it): an unused authorization is only given up once the
    /// chain can no longer take it.
    #[tokio::test]
    async fn an_abandoned_reservation_is_released_once_its_unused_authorization_expired() {
        let p = paywalled(Some(FakeChain::default())).await;
        let header = abandoned(&p, 22).await;
        let blocked = p.pay(TOP_PICKS, "payment-signature", &header).await;
        assert!(error_of(&blocked).starts_with("payment_in_progress"));
        assert_eq!(reconcile(&p).await, Report { undecided: 1, ..Report::default() });
        p.chain.time.store(u64::try_from(NOW_MS / 1000 + 300).expect("seconds"), Ordering::SeqCst);
        assert_eq!(reconcile(&p).await, Report { released: 1, ..Report::default() });
        let payer_id = payer().address().to_string().to_lowercase();
        assert!(p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments").is_empty(), "nothing charged");
        assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 0);
    }

    /// A reservation as a process left it when it was killed a moment ago: recent, held by a
    /// process that beat last `silent_ms` ago.
    async fn cut_off(p: &Paywalled, nonce: u8, silent_ms: i64) -> String {
        let now = svc_domain::Clock::now_ms(&p.app.clock);
        let holder = format!("pw_killed_{nonce}");
        p.app.store.beat_instance(&holder, now - silent_ms).await.expect("beat");
        left_reserved(p, nonce, format!("cut-off-{nonce}"), now - 2_000, Some(holder)).await
    }

    /// Killed mid-request: the process stops beating, and within seconds (not the ten-minute
    /// abandonment window) what it held is decided from the chain. A transfer that landed is
    /// owed its answer; a live process's reservation is left alone.
    #[tokio::test]
    async fn a_reservation_cut_off_by_a_killed_process_is_decided_within_seconds() {
        let p = paywalled(Some(FakeChain::default())).await;
        cut_off(&p, 28, 1_000).await;
        let killed = cut_off(&p, 29, svc_paywall::reconcile::STOPPED_AFTER_MS + 1_000).await;
        let blocked = p.pay(TOP_PICKS, "payment-signature", &killed).await;
        assert!(error_of(&blocked).contains("restart"), "the refusal says what to do: {}", error_of(&blocked));
        p.chain.used.store(true, Ordering::SeqCst);
        assert_eq!(reconcile(&p).await, Report { settled: 1, ..Report::default() }, "only the killed process's");
        let served = p.pay(TOP_PICKS, "payment-signature", &killed).await;
        assert_eq!(served.status, StatusCode::OK, "{}", served.text());
        assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 0, "the earlier transfer was the payment");
        let payer_id = payer().address().to_string().to_lowercase();
        let records = p.app.store.payments_by_payer(&payer_id, 10).await.expect("payments");
        let live = records.iter().find(|r| r.id == "cut-off-28").expect("the live process's reservation");
        assert_eq!(live.status, PaymentStatus::Reserved, "a live process's request is its own");
    }

    /// Killed after its transfer landed, before recording it: a client retrying before the
    /// reconciler decides finds the authorization spent on chain. It is told to wait (the
    /// payment is ours and undecided), not that it replayed, and once decided it is answered
    /// (found by the interop's kill -9 under load).
    #[tokio::test]
    async fn a_retry_that_finds_its_transfer_landed_before_the_reconciler_decided_is_told_to_wait() {
        let p = paywalled(Some(FakeChain::default())).await;
        let killed = cut_off(&p, 31, svc_paywall::reconcile::STOPPED_AFTER_MS + 1_000).await;
        p.chain.used.store(true, Ordering::SeqCst);
        let early = p.pay(TOP_PICKS, "payment-signature", &killed).await;
        assert_eq!(early.status, StatusCode::PAYMENT_REQUIRED);
        assert!(error_of(&early).starts_with("payment_in_progress"), "told to wait: {}", error_of(&early));
        assert_eq!(reconcile(&p).await, Report { settled: 1, ..Report::default() });
        let served = p.pay(TOP_PICKS, "payment-signature", &killed).await;
        assert_eq!(served.status, StatusCode::OK, "{}", served.text());
        let again = p.pay(TOP_PICKS, "payment-signature", &killed).await;
        assert_eq!(again.status, StatusCode::PAYMENT_REQUIRED, "answered once");
        assert_eq!(error_of(&again), "invalid_exact_evm_nonce_already_used", "a replay now");
        assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 0, "the earlier transfer was the payment");
    }

    /// Killed before it sent the transfer: with none of svc's relayer transactions left
    /// unmined, an unused authorization was never sent and will not be, so it is released
    /// within a pass of its process going quiet, not at its `validBefore`; the client's retry
    /// is then served and charged once (the interop's kill -9 under load left such payments
    /// "in progress" for minutes).
    #[tokio::test]
    async fn a_killed_processs_unsent_payment_is_released_at_once_when_nothing_is_in_flight() {
        let p = paywalled(Some(FakeChain::default())).await;
        let killed = cut_off(&p, 35, svc_paywall::reconcile::STOPPED_AFTER_MS + 1_000).await;
        assert_eq!(reconcile(&p).await, Report { undecided: 1, ..Report::default() }, "a relayer has one in flight");
        p.chain.idle.store(true, Ordering::SeqCst);
        assert_eq!(reconcile(&p).await, Report { released: 1, ..Report::default() });
        let served = p.pay(TOP_PICKS, "payment-signature", &killed).await;
        assert_eq!(served.status, StatusCode::OK, "{}", served.text());
        assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 1, "charged once, by the retry");
    }

    /// The key and digest the paywall keeps an on-chain answer under until it is written.
    fn kept_key(header: &str) -> (String, String) {
        let payment = b64_json(header);
        let authorization = &payment["payload"]["authorization"];
        let payer = authorization["from"].as_str().expect("from").to_lowercase();
        let nonce = authorization["nonce"].as_str().expect("nonce").to_lowercase();
        let decoded = svc_x402::codec::decode_payment(header.as_bytes()).expect("decodes");
        (format!("paid:{}:{payer}:{nonce}", svc_x402::network::BASE), decoded.payload_digest())
    }

    /// An answer paid on chain is kept only until it has been written to its client: once
    /// written, the same payment sent again is a replay like any other.
    #[tokio::test]
    async fn an_answer_written_to_its_client_is_not_kept_and_its_payment_sent_again_is_a_replay() {
        let p = paywalled(Some(FakeChain::default())).await;
        let header = p.signed(TOP_PICKS, 32).await;
        assert_eq!(p.pay(TOP_PICKS, "payment-signature", &header).await.status, StatusCode::OK);
        let (kept, _) = kept_key(&header);
        let mut forgotten = false;
        for _ in 0..200 {
            if p.app.store.paid_response(&kept, 0).await.expect("read").is_none() {
                forgotten = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert!(forgotten, "the written answer is no longer kept");
        p.chain.used.store(true, Ordering::SeqCst);
        let replay = p.pay(TOP_PICKS, "payment-signature", &header).await;
        assert_eq!(error_of(&replay), "invalid_exact_evm_nonce_already_used");
        assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 1);
    }

    /// Killed after its payment settled and was recorded, before its answer was written (the
    /// interop's kill -9 under load found such payments charged and never answered): the kept
    /// answer goes to the very payment that bought it, once, after its process has stopped;
    /// while that process may still be writing it, the client is told to wait.
    #[tokio::test]
    async fn an_answer_cut_off_after_settlement_goes_to_its_payments_retry_once() {
        let p = paywalled(Some(FakeChain::default())).await;
        let now = svc_domain::Clock::now_ms(&p.app.clock);
        let mut headers = Vec::new();
        for (nonce, silent_ms) in [(33u8, 1_000), (34, svc_paywall::reconcile::STOPPED_AFTER_MS + 1_000)] {
            let holder = format!("pw_cut_{nonce}");
            p.app.store.beat_instance(&holder, now - silent_ms).await.expect("beat");
            let id = format!("cut-{nonce}");
            let header = left_reserved(&p, nonce, id.clone(), now - 2_000, Some(holder)).await;
            assert!(
                p.app
                    .store
                    .finish_payment(&id, PaymentStatus::Settled, Some("0xt"), None, now - 1_000)
                    .await
                    .expect("record")
            );
            let (kept, digest) = kept_key(&header);
            let answer = svc_store::PaidResponse {
                payment_id: kept,
                network: svc_x402::network::BASE.into(),
                payer: String::new(),
                nonce: String::new(),
                payload_digest: digest,
                body: br#"{"cut":"off"}"#.to_vec(),
                payment_response: "eyJzdWNjZXNzIjp0cnVlfQ==".into(),
                created_at: now - 1_000,
            };
            assert!(p.app.store.save_paid_response(&answer).await.expect("keep"));
            headers.push(header);
        }
        p.chain.used.store(true, Ordering::SeqCst);
        let (live, stopped) = (&headers[0], &headers[1]);
        let wait = p.pay(TOP_PICKS, "payment-signature", live).await;
        assert!(
            error_of(&wait).starts_with("payment_in_progress"),
            "its process may still write it: {}",
            error_of(&wait)
        );
        let served = p.pay(TOP_PICKS, "payment-signature", stopped).await;
        assert_eq!(served.status, StatusCode::OK, "{}", served.text());
        assert_eq!(served.json(), serde_json::json!({"cut": "off"}), "the answer it paid for");
        let again = p.pay(TOP_PICKS, "payment-signature", stopped).await;
        assert_eq!(error_of(&again), "invalid_exact_evm_nonce_already_used", "given once");
        assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 0, "nothing moved again");
    }

    #[tokio::test]
    async fn an_abandoned_reservation_whose_transfer_landed_is_settled_and_owed_its_answer() {
        let p = paywalled(Some(FakeChain::default())).await;
        let header = abandoned(&p, 23).await;
        p.chain.used.store(true, Ordering::SeqCst);
        assert_eq!(reconcile(&p).await, Report { settled: 1, ..Report::default() });
        let served = p.pay(TOP_PICKS, "payment-signature", &header).await;
        assert_eq!(served.status, StatusCode::OK, "{}", served.text());
        assert_eq!(p.chain.transfers.load(Ordering::SeqCst), 0, "the earlier transfer was the payment");
    }
}

#[tokio::test]
async fn readiness_fails_while_no_relayer_can_pay_for_gas_and_recovers_when_one_can() {
    let p = paywalled(Some(FakeChain::default())).await;
    assert_eq!(p.app.get("/readyz").await.status, StatusCode::OK);
    p.chain.out_of_gas.store(true, Ordering::SeqCst);
    let unready = p.app.get("/readyz").await;
    assert_error(&unready, StatusCode::SERVICE_UNAVAILABLE, "unavailable");
    p.chain.out_of_gas.store(false, Ordering::SeqCst);
    assert_eq!(p.app.get("/readyz").await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_payment_header_too_large_to_be_ours_is_a_431_that_says_so_not_a_new_challenge() {
    let p = paywalled(None).await;
    let huge = "A".repeat(svc_x402::codec::MAX_HEADER_BYTES + 1);
    for name in ["payment-signature", "x-payment"] {
        let reply = p.pay(TOP_PICKS, name, &huge).await;
        assert_error(&reply, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "payment_header_too_large");
        assert_eq!(reply.json()["limit_bytes"], svc_x402::codec::MAX_HEADER_BYTES);
        assert!(reply.headers.get("payment-required").is_none(), "not a challenge to loop on");
    }
    assert_eq!(p.app.paid_calls().await, 0);
}

/// A challenge expires after its 300 s: an authorization signed to stay usable longer (up to a
/// minute of clock skew) was not signed for this challenge, and is refused before it is
/// verified; the window the official clients sign, now plus `maxTimeoutSeconds`, passes.
#[tokio::test]
async fn an_authorization_valid_for_longer_than_its_challenge_is_refused() {
    let app = TestApp::new().await;
    let uri = "/api/x402/alpha/top-picks";
    let challenge = app.get(uri).await;
    let offered: PaymentRequired = serde_json::from_slice(&challenge.body).expect("challenge");
    let requirement = svc_x402::client::choose(&offered, None).expect("payable");
    assert_eq!(requirement.max_timeout_seconds, 300);
    let now = u64::try_from(NOW_MS / 1000).expect("now");
    // `pay_header` signs validBefore = its now + 300: a client clock `ahead` seconds fast.
    let pay = |ahead: u64, nonce: u8| {
        svc_x402::client::pay_header(&offered, requirement, &payer(), now + ahead, B256::with_last_byte(nonce))
            .expect("sign")
    };
    for (ahead, nonce) in [(61, 1), (3300, 2)] {
        let refused =
            app.call_with(&axum::http::Method::GET, uri, None, &[("payment-signature", &pay(ahead, nonce))]).await;
        assert_eq!(refused.status, StatusCode::PAYMENT_REQUIRED, "{}", refused.text());
        assert_eq!(refused.json()["error"], svc_x402::codec::VALID_BEFORE_REFUSED, "{}", refused.text());
    }
    assert_eq!(app.paid_calls().await, 0);
    for (ahead, nonce) in [(0, 3), (60, 4)] {
        let paid =
            app.call_with(&axum::http::Method::GET, uri, None, &[("payment-signature", &pay(ahead, nonce))]).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    }
}

/// An app offering one EVM network whose token has 18 decimals.
async fn on_an_18_decimal_token() -> TestApp {
    use svc_x402::network::{Offer, PaymentNetwork};
    let token = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    let network =
        PaymentNetwork::evm(LOCAL_18, token, "Test Dollar", "1", 18, crate::support::PAY_TO).expect("network");
    let offer = Offer::new(vec![network], 300);
    let networks = offer.networks().to_vec();
    TestApp::with(Setup {
        offer,
        facilitator: Box::new(move |clock| Arc::new(BuiltinFacilitator::new(networks, Arc::new(clock)))),
        ..Setup::default()
    })
    .await
}

/// The network of [`on_an_18_decimal_token`].
const LOCAL_18: &str = "eip155:31337";

/// A network whose token has more decimals than USDC's six is paid in its own units, and the
/// payment is recorded, and shown on receipts, in USDC: the price, not the token amount.
#[tokio::test]
async fn a_payment_in_a_token_of_18_decimals_is_recorded_in_usdc() {
    let app = on_an_18_decimal_token().await;
    let uri = "/api/x402/alpha/top-picks";
    let challenge = app.get(uri).await;
    assert_eq!(challenge.json()["accepts"][0]["amount"], "500000000000000000", "0.50 in 18 decimals");
    let paid = app.pay_get(uri, 1).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    let payer = payer().address().to_string().to_lowercase();
    let payments = app.store.payments_by_payer(&payer, 10).await.expect("payments");
    assert_eq!(payments.len(), 1);
    assert_eq!(payments[0].amount, 500_000, "0.50 USDC in atomic units");
}

/// A payer whose tier earns 20 % off signs in, is quoted its price in the token's 18 decimals,
/// and pays it: the discounted amount is matched in the token's units, not against USDC's.
#[tokio::test]
async fn a_discounted_payment_in_a_token_of_18_decimals_is_matched() {
    let app = on_an_18_decimal_token().await;
    seed_paid_calls_in(&app, 0..100).await;
    let uri = "/api/x402/alpha/top-picks";
    let challenge: PaymentRequired = serde_json::from_slice(&app.get(uri).await.body).expect("challenge");
    let proof = svc_x402::client::sign_in_header(&challenge, LOCAL_18, &payer()).expect("offered").expect("signed");
    let request = Request::get(uri).header("sign-in-with-x", proof).body(Body::empty()).expect("request");
    let quoted: PaymentRequired = serde_json::from_slice(&app.send(request).await.body).expect("quote");
    assert_eq!(quoted.accepts[0].amount, "400000000000000000", "0.40 in 18 decimals");
    let now = u64::try_from(NOW_MS / 1000).expect("now");
    let header = svc_x402::client::pay_header(&quoted, &quoted.accepts[0], &payer(), now, B256::with_last_byte(7))
        .expect("sign");
    let paid = app.call_with(&axum::http::Method::GET, uri, None, &[("payment-signature", &header)]).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    let payer_id = payer().address().to_string().to_lowercase();
    let recorded = app.store.payments_by_payer(&payer_id, 200).await.expect("payments");
    assert_eq!(recorded.iter().filter(|p| !p.id.starts_with("seed-")).map(|p| p.amount).collect::<Vec<_>>(), [400_000]);
}
