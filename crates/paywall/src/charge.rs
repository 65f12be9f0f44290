//! The six steps of a charge: match, verify, reserve, run, settle, record.

use std::borrow::Cow;
use std::future::Future;

use bytes::Bytes;
use serde_json::value::RawValue;
use svc_domain::Money;
use svc_store::{NewPayment, PaymentRecord, PaymentStatus, Reservation, StoreError};
use svc_x402::codec::{Choice, DecodedPayment};
use svc_x402::facilitator::PaymentRequest;
use svc_x402::{FacilitatorError, PaymentRequirements, SettleResponse, Settled, Verified};

use crate::{ANSWER_KEPT_MS, Buyer, Outcome, Paywall, PaywallError, Sale, Sold};

/// The verify outcome of an EIP-3009 authorization the token has already consumed.
const NONCE_USED: &str = "invalid_exact_evm_nonce_already_used";

/// What a client is told of its payment while a request of ours holds it undecided: wait and
/// send the same payment again. `None` once the payment is decided.
fn undecided(status: PaymentStatus) -> Option<&'static str> {
    match status {
        PaymentStatus::Reserved => Some(
            "payment_in_progress: this authorization is paying for another request; if that request was cut off \
             by a restart, svc decides it within a minute: send the same payment again then",
        ),
        PaymentStatus::Pending => Some(
            "payment_pending: the transfer of this payment was sent and is not confirmed yet; send the same \
             payment again in a minute to get the answer",
        ),
        _ => None,
    }
}

/// Why a charge stopped before its work ran.
enum Halt {
    /// Refused with a reason: the caller challenges again.
    Refused(Cow<'static, str>),
    /// Answered again from what was kept.
    Kept {
        body: Bytes,
        receipt: String,
    },
    Error(PaywallError),
}

impl From<StoreError> for Halt {
    fn from(err: StoreError) -> Self {
        Halt::Error(PaywallError::Store(err))
    }
}

impl From<PaywallError> for Halt {
    fn from(err: PaywallError) -> Self {
        Halt::Error(err)
    }
}

fn refused(why: impl Into<Cow<'static, str>>) -> Halt {
    Halt::Refused(why.into())
}

/// The payer and nonce that identify one authorization.
struct ReplayKey {
    payer: String,
    nonce: String,
}

/// A payment that matched what is offered: everything verify, reserve, settle and record
/// read of it, read once.
struct Matched<'p> {
    replay: ReplayKey,
    requirement: PaymentRequirements,
    /// The price the requirement asks, in USDC: the list price, or the payer's discounted
    /// price. What is recorded and rebated (the requirement's amount is in the token's own
    /// units, which on a network with more decimals is not the price).
    price: Money,
    /// The v2 message the facilitator verifies and settles: the client's as received, or a v1
    /// payment's built around `requirement`.
    message: Cow<'p, RawValue>,
    /// The client's payment id, when it asked for its answer to be kept.
    payment_id: Option<String>,
    /// [`DecodedPayment::payload_digest`], computed only when there is a payment id.
    digest: String,
}

/// A payment the work may run for.
#[expect(
    clippy::large_enum_variant,
    reason = "the large variant is every paid call's, moved once; boxing it would allocate"
)]
enum Admitted<'p> {
    /// Verified and reserved under `id`: its work runs, then it settles.
    Reserved { matched: Matched<'p>, verified: Verified, id: String },
    /// Already settled, after the answer it paid for was withheld: that answer is owed.
    Withheld(Box<PaymentRecord>),
}

impl Matched<'_> {
    /// What the facilitator is asked to verify or settle: our requirement, never the client's.
    fn request<'a>(&'a self, payment: &'a DecodedPayment) -> PaymentRequest<'a> {
        PaymentRequest { message: &self.message, payload: &payment.payload, requirements: &self.requirement }
    }
}

impl Paywall {
    /// Charges `payment` for `sale`, running `work` if and only if the payment is good, and
    /// settling only if the work succeeded.
    pub async fn charge<A, E, W, Fut>(
        &self,
        sale: Sale<'_>,
        payment: &DecodedPayment,
        work: W,
    ) -> Result<Outcome<A, E>, PaywallError>
    where
        W: FnOnce(Buyer) -> Fut,
        Fut: Future<Output = Result<Sold<A>, E>>,
    {
        let offered = self.offer.requirements(sale.price);
        let admitted = async {
            let matched = self.match_payment(&sale, payment, &offered).await?;
            let verified = match self.verify(&sale, payment, &matched).await? {
                Verdict::Verified(verified) => verified,
                Verdict::Withheld(earlier) => return Ok(Admitted::Withheld(earlier)),
            };
            self.reserve(&sale, payment, matched, verified).await
        };
        let (matched, verified, id) = match admitted.await {
            Ok(Admitted::Reserved { matched, verified, id }) => (matched, verified, id),
            Ok(Admitted::Withheld(earlier)) => return Ok(self.serve_withheld(&sale, &earlier, payment, work).await),
            Err(Halt::Refused(reason)) => return Ok(Outcome::Refused { accepts: offered, reason }),
            Err(Halt::Kept { body, receipt }) => return Ok(Outcome::Kept { body, receipt }),
            Err(Halt::Error(err)) => return Err(err),
        };
        let buyer = Buyer {
            payer: svc_x402::codec::payer_key(&verified.payer),
            payment: format!("{}:{}:{}", matched.requirement.network, matched.replay.payer, matched.replay.nonce),
        };
        let sold = match self.run(&id, buyer, work).await {
            Ok(sold) => sold,
            Err(err) => return Ok(Outcome::Failed(err)),
        };
        let settlement = self.settle(&sale, payment, &matched, &verified, &id, sold).await?;
        self.record(&id, &settlement.record).await;
        if matches!(settlement.outcome, Outcome::Paid { .. }) {
            self.rebate(&sale, &matched.replay.payer, matched.price, &id).await;
        }
        Ok(settlement.outcome)
    }
}

/// What verification said of a payment.
enum Verdict {
    Verified(Verified),
    Withheld(Box<PaymentRecord>),
}

/// How a settled or failed payment is recorded.
struct Record {
    status: PaymentStatus,
    transaction: Option<String>,
    error: Option<String>,
    at_ms: i64,
}

struct Settlement<A, E> {
    record: Record,
    outcome: Outcome<A, E>,
}

impl Paywall {
    /// Step 1, match: the payment names an authorization, its answer is not already kept, and
    /// what it chose is what is offered (at the list price, or at the payer's discount).
    async fn match_payment<'p>(
        &self,
        sale: &Sale<'_>,
        payment: &'p DecodedPayment,
        offered: &[PaymentRequirements],
    ) -> Result<Matched<'p>, Halt> {
        let (payer, nonce) = payment.replay_key().ok_or_else(|| refused("invalid_payload"))?;
        let replay = ReplayKey { payer, nonce };
        let payment_id = payment_id(payment).map_err(refused)?;
        let digest = payment_id.as_ref().map(|_| payment.payload_digest()).unwrap_or_default();
        if let Some(id) = &payment_id {
            self.answer_again(sale, id, &replay, payment.network(), &digest).await?;
        }
        let (requirement, price) = match svc_x402::find_match(offered, &payment.choice) {
            Some(i) => (offered[i].clone(), sale.price),
            None if !sale.discountable => return Err(refused("No matching payment requirements")),
            None => match self.discounted_match(sale, &replay.payer, payment, offered).await? {
                Some(matched) => matched,
                None => return Err(refused("No matching payment requirements")),
            },
        };
        if payment.outlives_challenge(&requirement, self.clock.now_ms().div_euclid(1000).unsigned_abs()) {
            return Err(refused(svc_x402::codec::VALID_BEFORE_REFUSED));
        }
        // A v2 client echoes the challenge's extensions; one that rewrote them is refused
        // before anything is verified (§9.6).
        if let Some(advertised) = sale.advertised
            && let Some(echoed) = payment.extensions.as_ref().filter(|_| crate::echoes_extensions(payment))
            && let Some(key) = svc_x402::extensions::echo_mismatch(advertised, echoed)
        {
            tracing::debug!(extension = key, "payment echoes an extension that contradicts the challenge");
            return Err(refused(svc_x402::extensions::ECHO_MISMATCH));
        }
        let message = payment.as_v2(&requirement);
        Ok(Matched { replay, requirement, price, message, payment_id, digest })
    }

    /// A retry of a call already answered: the same answer again, without a second charge.
    /// The same id with another payment, or the same payment sent for another product, is a
    /// client bug: an answer is only ever given again for the call it paid for, and only to
    /// the very payment that bought it, signature included (its payer and nonce are public
    /// once it settles, and are not enough).
    async fn answer_again(
        &self,
        sale: &Sale<'_>,
        id: &str,
        replay: &ReplayKey,
        network: &str,
        digest: &str,
    ) -> Result<(), Halt> {
        let since = self.clock.now_ms() - ANSWER_KEPT_MS;
        let Some(kept) = self.store.paid_response(id, since).await? else { return Ok(()) };
        let same_payment = kept.network == network
            && kept.payer == replay.payer
            && kept.nonce == replay.nonce
            && !kept.payload_digest.is_empty()
            && kept.payload_digest == digest;
        let same_product = same_payment
            && self
                .store
                .payment_by_key(network, &replay.payer, &replay.nonce)
                .await?
                .is_some_and(|paid| paid.route_id == sale.product);
        if !same_product {
            return Err(Halt::Error(PaywallError::PaymentIdConflict));
        }
        Err(Halt::Kept { body: Bytes::from(kept.body), receipt: kept.payment_response })
    }

    /// The requirement the payer's volume discount prices, with that price, if its choice
    /// matches it.
    async fn discounted_match(
        &self,
        sale: &Sale<'_>,
        payer: &str,
        payment: &DecodedPayment,
        offered: &[PaymentRequirements],
    ) -> Result<Option<(PaymentRequirements, Money)>, PaywallError> {
        // Only a v2 client states the amount it chose; an amount below the list price on its
        // network, in that token's own units, is worth one lookup.
        let Choice::Accepted(accepted) = &payment.choice else { return Ok(None) };
        let offered_there = offered.iter().any(|r| r.network == accepted.network && r.scheme == accepted.scheme);
        // The list price in that token's units, from the price itself: never read back from
        // the string it was written to.
        let list = self.offer.network(&accepted.network).filter(|_| offered_there).and_then(|n| n.atomic(sale.price));
        let below_list = match (svc_x402::network::token_amount(&accepted.amount), list) {
            (Some(chosen), Some(list)) => chosen < list,
            _ => false,
        };
        if !below_list {
            return Ok(None);
        }
        let tier = self.payer_tier(payer).await?;
        if tier == svc_domain::DiscountTier::Standard {
            return Ok(None);
        }
        let price = tier.apply(sale.price);
        let offered = self.offer.requirements(price);
        Ok(svc_x402::find_match(&offered, &payment.choice).map(|i| (offered[i].clone(), price)))
    }

    /// Step 2, verify: the facilitator checks the signature, the amount and the funds. An
    /// authorization already spent on chain may be ours, for an answer withheld while its
    /// transfer was unconfirmed: that payment is owed its answer; any other is a replay.
    async fn verify(&self, sale: &Sale<'_>, payment: &DecodedPayment, matched: &Matched<'_>) -> Result<Verdict, Halt> {
        let requirement = &matched.requirement;
        match self.facilitator.verify(matched.request(payment)).await {
            Ok(verified) => Ok(Verdict::Verified(verified)),
            Err(FacilitatorError::Unavailable(cause)) => Err(PaywallError::FacilitatorUnavailable(cause).into()),
            Err(err) if err.reason() == NONCE_USED => {
                let replay = &matched.replay;
                match self.store.payment_by_key(&requirement.network, &replay.payer, &replay.nonce).await? {
                    Some(earlier) if is_withheld(&earlier) => {
                        self.claim_withheld(sale, &earlier).await?;
                        Ok(Verdict::Withheld(Box::new(earlier)))
                    }
                    // Spent by a request of ours not decided yet (its process was killed after
                    // sending, say): the reconciler will find it settled and owe this payment
                    // its answer, so the client is told to wait, not that it replayed.
                    Some(earlier) if undecided(earlier.status).is_some() => {
                        Err(refused(undecided(earlier.status).unwrap_or_default()))
                    }
                    // Settled and answered, but the answer may not have reached the client.
                    Some(earlier) if earlier.status == PaymentStatus::Settled && earlier.route_id == sale.product => {
                        Err(self.undelivered(&earlier, payment, err.reason()).await?)
                    }
                    _ => Err(refused(err.reason().to_owned())),
                }
            }
            Err(err) => Err(refused(err.reason().to_owned())),
        }
    }

    /// A settled payment sent again. Its answer is kept until it has been written to its
    /// client; one still kept was cut off, by a process killed between settling and writing:
    /// the very payment that bought it, signature included, gets it once that process has
    /// stopped (until then the request may still be writing it). Any other is a replay.
    async fn undelivered(&self, earlier: &PaymentRecord, payment: &DecodedPayment, replay: &str) -> Result<Halt, Halt> {
        let now = self.clock.now_ms();
        let id = kept_id(&earlier.network, &earlier.payer, &earlier.nonce);
        let Some(kept) = self.store.paid_response(&id, now - ANSWER_KEPT_MS).await? else {
            return Ok(refused(replay.to_owned()));
        };
        if kept.payload_digest != payment.payload_digest() {
            return Ok(refused(replay.to_owned()));
        }
        let holder = earlier.holder.as_deref().unwrap_or_default();
        if !self.store.instance_stopped(holder, now - crate::reconcile::STOPPED_AFTER_MS).await? {
            return Ok(refused(undecided(PaymentStatus::Reserved).unwrap_or_default()));
        }
        if !self.store.forget_paid_response(&id).await? {
            // Another retry took it first.
            return Ok(refused(replay.to_owned()));
        }
        Ok(Halt::Kept { body: Bytes::from(kept.body), receipt: kept.payment_response })
    }

    /// Step 3, reserve: one request per authorization, across replicas.
    async fn reserve<'p>(
        &self,
        sale: &Sale<'_>,
        payment: &DecodedPayment,
        matched: Matched<'p>,
        verified: Verified,
    ) -> Result<Admitted<'p>, Halt> {
        let requirement = &matched.requirement;
        let now_ms = self.clock.now_ms();
        let id = uuid::Uuid::now_v7().to_string();
        let reservation = NewPayment {
            id: id.clone(),
            route_id: sale.product.to_owned(),
            network: requirement.network.clone(),
            payer: matched.replay.payer.clone(),
            nonce: matched.replay.nonce.clone(),
            amount: matched.price.atomic(),
            asset: requirement.asset.clone(),
            pay_to: requirement.pay_to.clone(),
            valid_before: payment
                .valid_before(u64::try_from(now_ms / 1000).unwrap_or(0))
                .and_then(|v| i64::try_from(v).ok()),
            now_ms,
            holder: Some(self.instance.clone()),
        };
        match self.store.reserve_payment(&reservation).await? {
            Reservation::Reserved => Ok(Admitted::Reserved { matched, verified, id }),
            Reservation::Duplicate(earlier) if is_withheld(&earlier) => {
                self.claim_withheld(sale, &earlier).await?;
                Ok(Admitted::Withheld(earlier))
            }
            Reservation::Duplicate(earlier) => Err(refused(
                undecided(earlier.status)
                    .unwrap_or("payment_already_used: this authorization was already spent; sign a new one"),
            )),
        }
    }

    /// Takes the one answer a payment settled after withholding is owed, for the product it
    /// paid.
    async fn claim_withheld(&self, sale: &Sale<'_>, earlier: &PaymentRecord) -> Result<(), Halt> {
        if earlier.route_id != sale.product {
            return Err(refused("payment_already_used: this authorization paid for another route"));
        }
        if self.store.claim_withheld_answer(&earlier.id, self.clock.now_ms()).await? {
            Ok(())
        } else {
            Err(refused("payment_already_used: this authorization was already spent"))
        }
    }

    /// Step 4, run: the work, for the verified buyer. Failed work charges nothing: the
    /// reservation is freed so the same payment can be retried.
    async fn run<A, E, W, Fut>(&self, id: &str, buyer: Buyer, work: W) -> Result<Sold<A>, E>
    where
        W: FnOnce(Buyer) -> Fut,
        Fut: Future<Output = Result<Sold<A>, E>>,
    {
        let sold = work(buyer).await;
        if sold.is_err()
            && let Err(store_err) = self.store.release_payment(id).await
        {
            tracing::error!(payment = %id, error = %store_err, "could not release a reservation");
        }
        sold
    }

    /// Step 5, settle: the transfer is noted before it is sent (a crash after sending must not
    /// lose track of it), then sent; what was sold is delivered and the answer kept.
    async fn settle<A, E>(
        &self,
        sale: &Sale<'_>,
        payment: &DecodedPayment,
        matched: &Matched<'_>,
        verified: &Verified,
        id: &str,
        sold: Sold<A>,
    ) -> Result<Settlement<A, E>, PaywallError> {
        let network = &matched.requirement.network;
        let request = matched.request(payment);
        if let Some(transaction) = self.facilitator.transaction_id(request) {
            match self.store.note_transaction(id, &transaction).await {
                Ok(true) => {}
                // No longer reserved: another replica decided it (taking this process for
                // stopped). Whatever it decided stands; this process sends nothing.
                Ok(false) => return Err(PaywallError::Store(svc_store::StoreError::Contended("payment reservation"))),
                Err(err) => {
                    // Unrecorded, a crash after sending would lose track of the transfer: send nothing.
                    if let Err(store_err) = self.store.release_payment(id).await {
                        tracing::error!(payment = %id, error = %store_err, "could not release a reservation");
                    }
                    return Err(err.into());
                }
            }
        }
        let outcome = self.facilitator.settle(request).await;
        let at_ms = self.clock.now_ms();
        Ok(match outcome {
            Ok(settled) => {
                let (status, payer, transaction) = match settled {
                    Settled::OnChain { payer, transaction } => (PaymentStatus::Settled, payer, transaction),
                    Settled::VerifyOnly { payer } => (PaymentStatus::Unsettled, payer, String::new()),
                };
                let Sold { answer, json, then } = sold;
                // What the payment bought is delivered before the answer that says so.
                if let Some(delivery) = then {
                    delivery.await;
                }
                let receipt = receipt(true, None, Some(payer), transaction.clone(), network);
                let mut handover = None;
                if let Some(payment_id) = &matched.payment_id {
                    self.keep_answer(payment_id, &matched.digest, matched, &json, &receipt, at_ms).await;
                } else if status == PaymentStatus::Settled {
                    // Funds moved on chain: the answer is kept until it is written, so a
                    // process killed in between still owes it to the payment's retry.
                    let id = kept_id(network, &matched.replay.payer, &matched.replay.nonce);
                    self.keep_answer(&id, &payment.payload_digest(), matched, &json, &receipt, at_ms).await;
                    handover = Some(crate::Handover { store: self.store.clone(), kept: id });
                }
                let transaction = Some(transaction).filter(|t| !t.is_empty());
                Settlement {
                    record: Record { status, transaction, error: None, at_ms },
                    outcome: Outcome::Paid { answer, receipt, v1: payment.version == 1, handover },
                }
            }
            Err(error) => {
                let transaction = match &error {
                    FacilitatorError::SettleFailed { transaction, .. } => transaction.clone(),
                    _ => None,
                };
                tracing::warn!(payment = %id, route = sale.product, reason = error.reason(), "settlement failed: {error}");
                let reason = error.reason().to_owned();
                let receipt = receipt(
                    false,
                    Some(reason.clone()),
                    Some(verified.payer.clone()),
                    transaction.clone().unwrap_or_default(),
                    network,
                );
                // Maybe sent: it may still land, so it is pending (the reconciler asks the
                // chain), never failed; if it lands, the same payment gets the answer.
                let status = if error.may_have_moved() { PaymentStatus::Pending } else { PaymentStatus::Failed };
                Settlement {
                    record: Record { status, transaction, error: Some(reason), at_ms },
                    outcome: Outcome::Unsettled { error, receipt },
                }
            }
        })
    }

    /// Keeps a paid answer for a retry: one that names its payment id, or the very payment
    /// that bought it after a settlement on chain.
    async fn keep_answer(
        &self,
        id: &str,
        digest: &str,
        matched: &Matched<'_>,
        body: &Bytes,
        receipt: &SettleResponse,
        now_ms: i64,
    ) {
        let kept = svc_store::PaidResponse {
            payment_id: id.to_owned(),
            network: matched.requirement.network.clone(),
            payer: matched.replay.payer.clone(),
            nonce: matched.replay.nonce.clone(),
            payload_digest: digest.to_owned(),
            body: body.to_vec(),
            payment_response: svc_x402::encode_header(receipt),
            created_at: now_ms,
        };
        if let Err(err) = self.store.save_paid_response(&kept).await {
            tracing::warn!(payment_id = id, error = %err, "could not keep a paid answer for retries");
        }
        if self.saves.fetch_add(1, std::sync::atomic::Ordering::Relaxed).is_multiple_of(64)
            && let Err(err) = self.store.prune_paid_responses(now_ms - ANSWER_KEPT_MS).await
        {
            tracing::warn!(error = %err, "could not prune kept answers");
        }
    }

    /// Step 6, record: the payment's fate. The funds moved (or not) regardless; if the record
    /// fails the answer stands, and the record is repaired by hand.
    async fn record(&self, id: &str, record: &Record) {
        let Record { status, transaction, error, at_ms } = record;
        match self.store.finish_payment(id, *status, transaction.as_deref(), error.as_deref(), *at_ms).await {
            Ok(true) => {}
            Ok(false) => tracing::error!(payment = %id, "payment was not reserved when it finished"),
            Err(err) => tracing::error!(payment = %id, status = %status, error = %err, "could not record a payment"),
        }
    }

    /// Runs the work a withheld answer is owed for, under the payment that bought it. Failed
    /// work gives the claim back, so the answer stays owed and the same payment can be sent
    /// again.
    async fn serve_withheld<A, E, W, Fut>(
        &self,
        sale: &Sale<'_>,
        earlier: &PaymentRecord,
        payment: &DecodedPayment,
        work: W,
    ) -> Outcome<A, E>
    where
        W: FnOnce(Buyer) -> Fut,
        Fut: Future<Output = Result<Sold<A>, E>>,
    {
        let buyer = Buyer {
            payer: svc_x402::codec::payer_key(&earlier.payer),
            payment: format!("{}:{}:{}", earlier.network, earlier.payer, earlier.nonce),
        };
        let Sold { answer, then, .. } = match work(buyer).await {
            Ok(sold) => sold,
            Err(err) => {
                if let Err(store_err) = self.store.restore_withheld_answer(&earlier.id, self.clock.now_ms()).await {
                    tracing::error!(payment = %earlier.id, error = %store_err, "could not give back a withheld answer");
                }
                return Outcome::Failed(err);
            }
        };
        if let Some(delivery) = then {
            delivery.await;
        }
        tracing::info!(payment = %earlier.id, route = sale.product, "served an answer withheld while its transfer was pending");
        self.rebate(sale, &earlier.payer, Money::from_atomic(earlier.amount), &earlier.id).await;
        let transaction = earlier.tx_hash.clone().unwrap_or_default();
        let receipt = receipt(true, None, Some(earlier.payer.clone()), transaction, &earlier.network);
        Outcome::Paid { answer, receipt, v1: payment.version == 1, handover: None }
    }
}

/// A payment that settled after its answer was withheld.
/// The key an on-chain payment's answer is kept under when the client named no payment id.
/// A client's ids have no `:`, so the two never meet.
fn kept_id(network: &str, payer: &str, nonce: &str) -> String {
    format!("paid:{network}:{payer}:{nonce}")
}

fn is_withheld(record: &PaymentRecord) -> bool {
    record.status == PaymentStatus::Settled && record.error.as_deref() == Some(svc_store::ANSWER_WITHHELD)
}

fn receipt(
    success: bool,
    error_reason: Option<String>,
    payer: Option<String>,
    transaction: String,
    network: &str,
) -> SettleResponse {
    SettleResponse { success, error_reason, error_message: None, payer, transaction, network: network.to_owned() }
}

/// The client's payment id, when it sent one (the `payment-identifier` extension).
fn payment_id(payment: &DecodedPayment) -> Result<Option<String>, &'static str> {
    let Some(id) = payment
        .extensions
        .as_ref()
        .and_then(|e| e.get("payment-identifier"))
        .and_then(|ext| ext.get("info"))
        .and_then(|info| info.get("id"))
    else {
        return Ok(None);
    };
    let valid = id.as_str().filter(|id| {
        (16..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    });
    match valid {
        Some(id) => Ok(Some(id.to_owned())),
        None => Err("invalid_payment_identifier: the id must be 16-128 characters of A-Z a-z 0-9 _ -"),
    }
}
