//! The paywall: charge this payment this price for this work; settle only if the work
//! succeeded; keep the answer.
//!
//! Every surface that sells a call over x402 (the catalogue's routes today, a seller agent's
//! invoke and the LLM proxy's top-up next) calls [`Paywall::charge`] the same way, so the
//! payment logic exists once. A charge runs in six named steps: **match** the payment to what
//! is offered, **verify** it, **reserve** it, **run** the work, **settle**, **record**.
//!
//! A payment is charged at most once and only for a successful answer: the store's unique key
//! on (network, payer, nonce) admits one request per authorization across replicas; failed
//! work releases the reservation (the same signed payment can be retried); settlement runs
//! only after the work succeeded, and a failed settlement withholds the answer.
//!
//! The paywall knows nothing of HTTP: it takes a decoded payment and answers with an
//! [`Outcome`]; challenges, headers and status codes are its caller's.
//!
//! # Layout
//! - this module: [`Paywall`], what a charge takes ([`Sale`], the work) and gives ([`Outcome`]).
//! - `charge`: the six steps.
//! - [`rebate`]: credits back to a payer whose tier earns a discount but who paid list price.
//! - [`reconcile`]: payments whose fate on chain is unknown, settled from what the chain says.
//! - `wallet_accounts`: the account each rebated wallet owns.

mod charge;
pub mod rebate;
pub mod reconcile;
mod wallet_accounts;

use std::borrow::Cow;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use bytes::Bytes;
use serde_json::{Map, Value};
use svc_domain::{Clock, DiscountTier, Money};
use svc_store::{Store, StoreError};
use svc_x402::{DecodedPayment, Facilitator, FacilitatorError, Offer, PaymentRequirements, SettleResponse};

/// How long an answer stays retrievable by its payment id (the `payment-identifier`
/// extension asks for at least ten minutes).
pub const ANSWER_KEPT_MS: i64 = 60 * 60 * 1000;

/// Charges x402 payments: the networks offered, who verifies and settles, where payments are
/// recorded, and the clock they are recorded by.
pub struct Paywall {
    store: Store,
    facilitator: Arc<dyn Facilitator>,
    offer: Offer,
    clock: Arc<dyn Clock>,
    /// Answers kept so far, to prune old ones every so often.
    saves: AtomicU64,
    /// The account each rebated wallet owns, for the rebates owed.
    rebate_accounts: wallet_accounts::WalletAccounts,
    /// This process, as its reservations name it: it beats while it runs, so what it held
    /// when it stopped is decided at once ([`reconcile`]).
    instance: String,
}

impl std::fmt::Debug for Paywall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Paywall").field("offer", &self.offer).field("facilitator", &self.facilitator).finish()
    }
}

/// What is sold to one payment.
#[derive(Debug, Clone, Copy)]
pub struct Sale<'a> {
    /// What the payment buys (a route id, `seller:<agent id>`): recorded with the payment, and
    /// an answer is only ever given again, or given late, for the very product that was paid.
    pub product: &'a str,
    /// The list price.
    pub price: Money,
    /// Whether the payer's volume discount applies (data calls do; credit purchases do not).
    pub discountable: bool,
    /// The extensions the challenge advertised, as the payment should echo them: needed only
    /// when it echoes some ([`echoes_extensions`]), and then a payment that rewrote them is
    /// refused before anything is verified.
    pub advertised: Option<&'a Map<String, Value>>,
}

/// Who paid, as the work sees it.
#[derive(Debug, Clone)]
pub struct Buyer {
    /// The verified paying wallet (EVM lowercase, Solana as is).
    pub payer: String,
    /// The payment's identity, `network:payer:nonce`: what makes a purchase happen once per
    /// payment.
    pub payment: String,
}

/// What successful work made.
pub struct Sold<A> {
    /// The answer, handed back in [`Outcome::Paid`].
    pub answer: A,
    /// The answer's JSON, kept for a retry that names the same payment id.
    pub json: Bytes,
    /// What is delivered once the payment has settled, before the answer says so: for work
    /// that sells something other than data (credits), which must not be handed over before
    /// the money has moved. It must be idempotent: a withheld answer served later runs it again.
    pub then: Option<Delivery>,
}

/// A delivery after settlement; it reports its own failures.
pub type Delivery = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How a charge ended.
#[derive(Debug)]
pub enum Outcome<A, E> {
    /// The work was done and paid for.
    Paid {
        /// The work's answer.
        answer: A,
        /// The settlement, for the payer.
        receipt: SettleResponse,
        /// Whether the payment was an x402 v1 one (its client reads the settlement from the
        /// v1 header).
        v1: bool,
        /// For a payment settled on chain, what to call once the answer has been written to
        /// its client.
        handover: Option<Handover>,
    },
    /// A retry of a call already answered: the same answer, without a second charge.
    Kept {
        /// The answer's JSON.
        body: Bytes,
        /// The settlement header it was first given with.
        receipt: String,
    },
    /// Refused before anything was charged (undecodable, unmatched, badly signed, replayed,
    /// in use): the caller answers with a fresh challenge naming the reason.
    Refused {
        /// The requirements to challenge with.
        accepts: Vec<PaymentRequirements>,
        /// Why, for the challenge's `error`.
        reason: Cow<'static, str>,
    },
    /// The work failed: nothing was charged, and the same payment can be sent again.
    Failed(E),
    /// The work succeeded but settlement did not: the answer is withheld.
    Unsettled {
        /// What went wrong; [`FacilitatorError::may_have_moved`] says whether the transfer may
        /// still land (then the same payment, sent again later, gets the answer).
        error: FacilitatorError,
        /// The failed settlement, for the payer.
        receipt: SettleResponse,
    },
}

/// An answer paid on chain and kept until it reaches its client: if the process is killed
/// before, the payment's retry gets it (see `Paywall::charge`). Dropping it unconfirmed keeps
/// the answer for that retry (a client that went away may come back).
#[derive(Debug)]
pub struct Handover {
    pub(crate) store: svc_store::Store,
    pub(crate) kept: String,
}

impl Handover {
    /// The answer was written to its client: it is no longer kept, so the same payment sent
    /// again is a replay.
    pub fn delivered(self) {
        tokio::spawn(async move {
            if let Err(err) = self.store.forget_paid_response(&self.kept).await {
                tracing::warn!(error = %err, "could not forget a delivered answer");
            }
        });
    }
}

/// What stops a charge without an answer for the payer to act on.
#[derive(Debug, thiserror::Error)]
pub enum PaywallError {
    /// The store failed; nothing was charged, or the record is repaired by reconciliation.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// The facilitator could not be asked; nothing was charged.
    #[error("facilitator unavailable: {0}")]
    FacilitatorUnavailable(String),
    /// The payment id names an answer bought by another payment, or for another product.
    #[error("this payment id was used with a different payment")]
    PaymentIdConflict,
}

/// Whether `payment` echoes extensions that must match the challenge's: only an x402 v2
/// payment does.
pub fn echoes_extensions(payment: &DecodedPayment) -> bool {
    payment.version == 2 && payment.extensions.as_ref().is_some_and(|e| !e.is_empty())
}

impl Paywall {
    /// A paywall over `offer`, checked by `facilitator`, recorded in `store` at `clock`'s time.
    pub fn new(store: Store, facilitator: Arc<dyn Facilitator>, offer: Offer, clock: Arc<dyn Clock>) -> Self {
        Paywall {
            store,
            facilitator,
            offer,
            clock,
            saves: AtomicU64::new(0),
            rebate_accounts: wallet_accounts::WalletAccounts::default(),
            instance: format!("pw_{}", uuid::Uuid::new_v4().simple()),
        }
    }

    /// Records that this process is alive: what it reserves is its own while it beats.
    pub async fn beat(&self) -> Result<(), PaywallError> {
        Ok(self.store.beat_instance(&self.instance, self.clock.now_ms()).await?)
    }

    /// The networks and recipients offered.
    pub fn offer(&self) -> &Offer {
        &self.offer
    }

    /// The facilitator that verifies and settles.
    pub fn facilitator(&self) -> &dyn Facilitator {
        self.facilitator.as_ref()
    }

    /// The requirements a challenge at `price` lists.
    pub fn requirements(&self, price: Money) -> Vec<PaymentRequirements> {
        self.offer.requirements(price)
    }

    /// A payer's successful paid calls in the trailing discount window: the one count its
    /// volume tier is read from, by the pricing route, the price a signed-in payer is quoted,
    /// the discounted price a payment may choose and the rebate of a list-price payment.
    pub async fn paid_calls(&self, payer: &str) -> Result<u64, PaywallError> {
        self.count_paid_calls(payer, None, u64::MAX).await
    }

    /// A payer's paid calls in the window, leaving out one recorded payment when named,
    /// counted up to `at_most`.
    async fn count_paid_calls(&self, payer: &str, payment: Option<&str>, at_most: u64) -> Result<u64, PaywallError> {
        let since = self.clock.now_ms() - svc_domain::discount::DISCOUNT_WINDOW_MS;
        let payer = svc_x402::codec::payer_key(payer);
        Ok(self.store.count_settled_payments_since(&payer, since, payment, at_most).await?)
    }

    /// A payer's volume-discount tier, leaving out one recorded payment when named (the
    /// call being priced): its calls are counted only as far as a tier can tell them apart,
    /// so a payer's thousandth call and its millionth cost the store the same.
    pub(crate) async fn tier_besides(&self, payer: &str, payment: Option<&str>) -> Result<DiscountTier, PaywallError> {
        Ok(DiscountTier::for_calls(self.count_paid_calls(payer, payment, DiscountTier::TOP_FROM).await?))
    }

    /// A payer's volume-discount tier.
    pub async fn payer_tier(&self, payer: &str) -> Result<DiscountTier, PaywallError> {
        self.tier_besides(payer, None).await
    }
}
