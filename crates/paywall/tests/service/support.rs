//! The harness: a store per test, node doubles at the chain edge, a paywall over them, and
//! payments signed the way the official clients sign them.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::Value;
use svc_chain_evm::{Address, B256, EvmError, Payer, U256, VerifiedAuthorization};
use svc_chain_solana::{ExactSvmPayment, Keypair, SendError};
use svc_domain::{FixedClock, Money};
use svc_paywall::{Buyer, Outcome, Paywall, Sale, Sold};
use svc_store::{PaymentRecord, Store};
use svc_x402::builtin::{EvmChain, SolanaChain};
use svc_x402::network::{BASE, SOLANA, SOLANA_USDC};
use svc_x402::{
    BuiltinFacilitator, DecodedPayment, EvmLedger, Offer, PaymentNetwork, PaymentRequired, PaymentRequirements,
    ResourceInfo, SolanaLedger,
};

/// 2026-11-22T10:00:00Z.
pub const NOW_MS: i64 = 1_795_341_600_000;

/// The paying EVM wallet (a well-known test key; never funded anywhere).
pub const PAYER_KEY: &str = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";

/// Where EVM payments go (a fixed, public test address).
pub const PAY_TO: &str = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";

/// Where Solana payments go.
pub const SOLANA_PAY_TO: &str = "649F3Ama5VBkrXtWKxy8KRhXKwF15HiyUDyYosdWiBci";

/// The fee payer's seed: sha256("x402-vector-svm-facilitator-fee-payer"), the x402 vectors'
/// public test key.
const FEE_PAYER_SEED: &str = "0x0ae919bb79373d44e812a220b3844c99480656b1f8d1d84a8b363b609e0a6383";

/// The recent blockhash Solana payments are signed with (svc checks none before settling).
const BLOCKHASH: &str = "AEfG19HkBEptPUkVN3MpETgCTuUxvTM2q75pyHq6YfDF";

/// The product sold in these tests.
pub const PRODUCT: &str = "alpha.top_picks";

/// Its list price, 0.50 USDC.
pub const PRICE: Money = Money::from_atomic(500_000);

/// The answer every successful work gives.
pub const ANSWER: &[u8] = br#"{"picks":{}}"#;

/// The EVM payer.
pub fn payer() -> Payer {
    Payer::from_key(PAYER_KEY).expect("key")
}

/// The EVM payer as payments are keyed: lowercase hex.
pub fn payer_id() -> String {
    payer().address().to_string().to_lowercase()
}

/// The Solana payer (the same 32 bytes as [`PAYER_KEY`], as the x402 vectors use them).
pub fn solana_payer() -> Keypair {
    Keypair::parse(PAYER_KEY).expect("key")
}

fn fee_payer() -> Keypair {
    Keypair::parse(FEE_PAYER_SEED).expect("fee payer")
}

/// USDC on Base and on Solana.
pub fn offer() -> Offer {
    let base = PaymentNetwork::base_usdc(PAY_TO).expect("base");
    let solana = PaymentNetwork::solana(SOLANA, SOLANA_USDC, SOLANA_PAY_TO, &fee_payer().address()).expect("solana");
    Offer::new(vec![base, solana], 300)
}

/// An EVM node double: counts transfers, can refuse them or leave them unconfirmed, and
/// answers what the token knows (a transfer marks its authorization used).
#[derive(Debug, Default)]
pub struct FakeChain {
    /// Transfers sent.
    pub transfers: AtomicUsize,
    /// Transfers fail before anything leaves.
    pub refuse: AtomicBool,
    /// Transfers leave but no receipt comes in time.
    pub unconfirmed: AtomicBool,
    /// The token's record of the authorizations used (by nonce).
    pub used: Mutex<HashSet<B256>>,
    /// What `receipt` answers: `None` not mined, `Some(ok)` mined.
    pub mined: Mutex<Option<bool>>,
    /// The payer's balance, when it does not cover every payment.
    pub balance: Mutex<Option<u64>>,
    /// The latest block's time, unix seconds.
    pub time: AtomicU64,
}

impl EvmLedger for FakeChain {
    fn authorization_used<'a>(&'a self, _: Address, nonce: B256) -> BoxFuture<'a, Result<bool, EvmError>> {
        futures::future::ready(Ok(self.used.lock().expect("used").contains(&nonce))).boxed()
    }

    fn receipt<'a>(&'a self, _: B256) -> BoxFuture<'a, Result<Option<bool>, EvmError>> {
        futures::future::ready(Ok(*self.mined.lock().expect("mined"))).boxed()
    }

    fn block_time(&self) -> BoxFuture<'_, Result<u64, EvmError>> {
        futures::future::ready(Ok(self.time.load(Ordering::SeqCst))).boxed()
    }
}

impl EvmChain for FakeChain {
    fn is_valid_signature<'a>(&'a self, _: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<bool, EvmError>> {
        futures::future::ready(Ok(false)).boxed()
    }

    fn balance<'a>(&'a self, _: Address) -> BoxFuture<'a, Result<U256, EvmError>> {
        let balance = self.balance.lock().expect("balance").map_or(U256::MAX, U256::from);
        futures::future::ready(Ok(balance)).boxed()
    }

    fn transfer<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<String, EvmError>> {
        async move {
            // A node answers later than at once: concurrent charges overlap here.
            tokio::task::yield_now().await;
            let n = self.transfers.fetch_add(1, Ordering::SeqCst);
            if self.refuse.load(Ordering::SeqCst) {
                return Err(EvmError::InsufficientBalance);
            }
            self.used.lock().expect("used").insert(verified.authorization.nonce);
            if self.unconfirmed.load(Ordering::SeqCst) {
                return Err(EvmError::Pending(B256::with_last_byte(0xee)));
            }
            Ok(B256::from(U256::from(n + 1).to_be_bytes::<32>()).to_string())
        }
        .boxed()
    }
}

/// A Solana node double: records what it was asked to send.
#[derive(Debug, Default)]
pub struct FakeSolana {
    /// Each transaction sent (base64) with its signature.
    pub sent: Mutex<Vec<(String, String)>>,
}

impl SolanaChain for FakeSolana {
    fn send<'a>(&'a self, transaction: &'a str, signature: &'a str) -> BoxFuture<'a, Result<(), SendError>> {
        self.sent.lock().expect("sent").push((transaction.to_owned(), signature.to_owned()));
        futures::future::ready(Ok(())).boxed()
    }
}

impl SolanaLedger for FakeSolana {
    fn status<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<bool>, SendError>> {
        let sent = !self.sent.lock().expect("sent").is_empty();
        futures::future::ready(Ok(sent.then_some(true))).boxed()
    }
}

/// A paywall over node doubles, with what the tests look at.
pub struct Harness {
    pub paywall: Paywall,
    pub store: Store,
    pub clock: FixedClock,
    pub chain: Arc<FakeChain>,
    pub solana: Arc<FakeSolana>,
    /// How many times work ran.
    pub runs: Arc<AtomicUsize>,
    /// Who each run of the work was for.
    pub buyers: Arc<Mutex<Vec<Buyer>>>,
}

/// How a test's work ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Boom;

impl Harness {
    /// A paywall settling on both networks through node doubles.
    pub fn new(store: Store) -> Harness {
        Harness::over(store, offer(), true)
    }

    /// A paywall over `offer`; with `settling`, the facilitator settles through node
    /// doubles, else it is verify-only.
    pub fn over(store: Store, offer: Offer, settling: bool) -> Harness {
        let clock = FixedClock::at_ms(NOW_MS);
        let chain = Arc::new(FakeChain { time: AtomicU64::new(secs(NOW_MS)), ..FakeChain::default() });
        let solana = Arc::new(FakeSolana::default());
        let mut facilitator = BuiltinFacilitator::new(offer.networks().to_vec(), Arc::new(clock.clone()));
        if settling {
            for network in offer.networks() {
                if network.network.starts_with("eip155:") {
                    facilitator = facilitator.with_evm_chain(&network.network, chain.clone());
                } else {
                    facilitator = facilitator
                        .with_solana_chain(&network.network, fee_payer(), solana.clone())
                        .expect("fee payer offered");
                }
            }
        }
        let paywall = Paywall::new(store.clone(), Arc::new(facilitator), offer, Arc::new(clock.clone()));
        Harness { paywall, store, clock, chain, solana, runs: Arc::default(), buyers: Arc::default() }
    }

    /// The challenge a call at `price` gets.
    pub fn challenge(&self, price: Money) -> PaymentRequired {
        PaymentRequired {
            x402_version: 2,
            error: None,
            resource: ResourceInfo {
                url: "https://svc.example/api/x402/alpha/top-picks".into(),
                description: "Top Picks".into(),
                mime_type: "application/json".into(),
            },
            accepts: self.paywall.requirements(price),
            extensions: None,
        }
    }

    /// The requirement on `network` at `price`.
    pub fn requirement(&self, price: Money, network: &str) -> PaymentRequirements {
        self.paywall.requirements(price).into_iter().find(|r| r.network == network).expect("offered")
    }

    /// An EVM payment of `requirement`, signed `now_ms` with one-time `nonce`.
    pub fn signed_at(&self, requirement: &PaymentRequirements, nonce: u64, now_ms: i64) -> String {
        let challenge = self.challenge(PRICE);
        let nonce = B256::from(U256::from(nonce).to_be_bytes::<32>());
        svc_x402::client::pay_header(&challenge, requirement, &payer(), secs(now_ms), nonce).expect("sign")
    }

    /// An EVM payment of the list price on Base, with one-time `nonce`.
    pub fn pay(&self, nonce: u64) -> DecodedPayment {
        decode(&self.signed_at(&self.requirement(PRICE, BASE), nonce, NOW_MS))
    }

    /// A Solana payment of the list price, with memo nonce `nonce`.
    pub fn pay_solana(&self, nonce: u8) -> DecodedPayment {
        let challenge = self.challenge(PRICE);
        let requirement = self.requirement(PRICE, SOLANA);
        let payment = ExactSvmPayment {
            token_program: svc_chain_solana::programs::TOKEN,
            recent_blockhash: BLOCKHASH,
            nonce: [nonce; 16],
        };
        let header =
            svc_x402::client::pay_header_solana(&challenge, &requirement, &solana_payer(), 6, &payment).expect("sign");
        decode(&header)
    }

    /// Charges `payment` the list price for data (discountable).
    pub async fn charge(&self, payment: &DecodedPayment) -> Outcome<Bytes, Boom> {
        self.charge_for(sale(PRICE, true), payment, Ok(())).await
    }

    /// Charges `payment` for `sale`, with work that ends as `ends`.
    pub async fn charge_for(
        &self,
        sale: Sale<'_>,
        payment: &DecodedPayment,
        ends: Result<(), Boom>,
    ) -> Outcome<Bytes, Boom> {
        let (runs, buyers) = (self.runs.clone(), self.buyers.clone());
        let work = move |buyer: Buyer| async move {
            runs.fetch_add(1, Ordering::SeqCst);
            buyers.lock().expect("buyers").push(buyer);
            tokio::task::yield_now().await;
            ends.map(|()| Sold { answer: Bytes::from_static(ANSWER), json: Bytes::from_static(ANSWER), then: None })
        };
        self.paywall.charge(sale, payment, work).await.expect("charge")
    }

    /// What the store holds of the EVM payer's payments, newest first.
    pub async fn payments(&self) -> Vec<PaymentRecord> {
        self.payments_of(&payer_id()).await
    }

    /// What the store holds of `payer`'s payments, newest first.
    pub async fn payments_of(&self, payer: &str) -> Vec<PaymentRecord> {
        self.store.payments_by_payer(payer, 100).await.expect("payments")
    }

    /// Records `n` earlier settled calls of the EVM payer in the discount window.
    pub async fn seed_paid_calls(&self, n: usize) {
        for i in 0..n {
            let id = format!("seed-{i}");
            let new = svc_store::NewPayment {
                id: id.clone(),
                route_id: PRODUCT.into(),
                network: BASE.into(),
                payer: payer_id(),
                nonce: format!("seed-nonce-{i}"),
                amount: PRICE.atomic(),
                asset: "usdc".into(),
                pay_to: "x".into(),
                valid_before: None,
                now_ms: NOW_MS - 1000,
                holder: None,
            };
            self.store.reserve_payment(&new).await.expect("seed");
            let settled = svc_store::PaymentStatus::Settled;
            self.store.finish_payment(&id, settled, Some("0x1"), None, NOW_MS - 1000).await.expect("finish");
        }
    }

    /// The credits on the EVM payer's wallet account, if it has one.
    pub async fn wallet_credits(&self) -> Option<u64> {
        self.store.account_by_wallet(&payer_id()).await.expect("store").map(|account| account.balance)
    }
}

/// A sale of [`PRODUCT`] at `price`.
pub fn sale(price: Money, discountable: bool) -> Sale<'static> {
    Sale { product: PRODUCT, price, discountable, advertised: None }
}

/// Unix seconds of `ms`.
pub fn secs(ms: i64) -> u64 {
    u64::try_from(ms / 1000).expect("after 1970")
}

/// A header decoded as the HTTP layer decodes it.
pub fn decode(header: &str) -> DecodedPayment {
    svc_x402::decode_payment(header.as_bytes()).expect("decodes")
}

/// The JSON message inside a header.
pub fn message(header: &str) -> Value {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(header).expect("base64");
    serde_json::from_slice(&bytes).expect("json")
}

/// `message` as a header again.
pub fn header(message: &Value) -> String {
    svc_x402::encode_header(message)
}

/// `payment` naming payment id `id` (the `payment-identifier` extension).
pub fn with_payment_id(payment: &DecodedPayment, id: &str) -> DecodedPayment {
    let mut message: Value = serde_json::from_str(payment.raw.get()).expect("json");
    message["extensions"] = serde_json::json!({"payment-identifier": {"info": {"id": id}}});
    decode(&header(&message))
}

/// What a paid outcome carries, or a panic naming what came instead.
pub fn paid<A: std::fmt::Debug, E: std::fmt::Debug>(
    outcome: Outcome<A, E>,
) -> (A, svc_x402::SettleResponse, bool, Option<svc_paywall::Handover>) {
    match outcome {
        Outcome::Paid { answer, receipt, v1, handover } => (answer, receipt, v1, handover),
        other => panic!("expected a paid outcome, got {other:?}"),
    }
}

/// What a withheld outcome carries, or a panic naming what came instead.
pub fn unsettled<A: std::fmt::Debug, E: std::fmt::Debug>(
    outcome: Outcome<A, E>,
) -> (svc_x402::FacilitatorError, svc_x402::SettleResponse) {
    match outcome {
        Outcome::Unsettled { error, receipt } => (error, receipt),
        other => panic!("expected an unsettled outcome, got {other:?}"),
    }
}

/// The refusal's reason, or a panic naming what came instead.
pub fn refused<A: std::fmt::Debug, E: std::fmt::Debug>(outcome: &Outcome<A, E>) -> String {
    match outcome {
        Outcome::Refused { reason, .. } => reason.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Declares `name` (an `async fn(Store)`) as `name::on_sqlite`, always, and
/// `name::on_postgres`, which runs when `TEST_DATABASE_URL` is set.
#[macro_export]
macro_rules! on_both {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn on_sqlite() {
                svc_store::testing::Fixture::sqlite().await.run(super::$name).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn on_postgres() {
                if let Some(fixture) = svc_store::testing::Fixture::postgres().await {
                    fixture.run(super::$name).await;
                }
            }
        }
    };
}
