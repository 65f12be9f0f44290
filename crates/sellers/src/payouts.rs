//! Payouts: queued withdrawals paid on chain, exactly once.
//!
//! A payout is a USDC transfer the treasury authorizes with EIP-3009, under a nonce derived
//! from the withdrawal's id ([`PayoutChain::pay`]). The token itself refuses a second use of
//! that nonce, so sending a payout again (after a crash, a lost answer, a retry) can never pay
//! twice, and whether it was paid is a question the chain answers ([`PayoutChain::paid`]),
//! with or without its transaction hash. Each authorization is valid for a day from the
//! withdrawal's creation; one the chain still says is unpaid ten minutes after that can never
//! be paid, and its amount goes back to the agent's balance.
//!
//! The row moves `queued → sending` (claimed, so one replica sends it) `→ paid` with its
//! transaction, `→ sent` when the send's outcome is unknown, or back to `queued` when nothing
//! left. [`Sellers::pay_out`] does one round: it sends what is queued, and settles what a
//! stopped process or a lost answer left `sending` or `sent` by asking the chain.

use std::sync::Arc;

use svc_domain::Money;
use svc_store::{Withdrawal, WithdrawalMove};

pub use crate::payout_chain::{PayoutChain, PayoutOrder, Sent};
use crate::{SellerError, Sellers};

/// How long a payout's authorization is valid, from the withdrawal's creation, seconds.
pub const AUTHORIZATION_SECS: i64 = 24 * 3600;

/// How long a payout may stay `sending` or `sent` before the chain is asked about it, ms.
const SETTLE_AFTER_MS: i64 = 60_000;

/// How long past its `validBefore` (by svc's clock) an unpaid payout waits before it is given
/// up: a block stamped just before the bound may be mined a little after it, and the chain's
/// clock is not svc's.
const EXPIRY_GRACE_SECS: i64 = 600;

/// What one round of payouts did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    /// Paid.
    pub paid: usize,
    /// Failed for good (their amounts back in the balances).
    pub failed: usize,
    /// Left for a later round.
    pub waiting: usize,
}

impl Sellers {
    /// Adds a network to pay out on.
    pub fn with_payouts(mut self, chain: Arc<dyn PayoutChain>) -> Self {
        self.payouts.insert(chain.network().to_owned(), chain);
        self
    }

    /// Whether svc pays out on `network` itself (else an operator does).
    pub fn pays_out_on(&self, network: &str) -> bool {
        self.payouts.contains_key(network)
    }

    /// One round: sends queued payouts, and settles those left `sending` or `sent` from what
    /// the chain says.
    pub async fn pay_out(&self) -> Result<Round, SellerError> {
        let mut round = Round::default();
        let now = self.clock.now_ms();
        // Per network svc pays on: payouts an operator pays by hand never fill the page.
        for network in self.payouts.keys() {
            for status in ["sending", "sent"] {
                for row in self.store.withdrawals_on(network, status, 100).await? {
                    if row.updated_at <= now - SETTLE_AFTER_MS {
                        self.settle_left(&row, &mut round).await?;
                    }
                }
            }
            for row in self.store.withdrawals_on(network, "queued", 100).await? {
                self.send(&row, &mut round).await?;
            }
        }
        Ok(round)
    }

    /// Sends one queued payout.
    async fn send(&self, row: &Withdrawal, round: &mut Round) -> Result<(), SellerError> {
        let Some(chain) = self.payouts.get(&row.network) else { return Ok(()) };
        let now = self.clock.now_ms();
        if !self.step(row, "queued", "sending", None, None).await? {
            return Ok(());
        }
        if now.div_euclid(1000) >= valid_before(row) {
            // Past its day: never sent again. An earlier send may have landed (it was queued
            // again while its transfer waited), so the chain decides between paid and failed.
            return match chain.paid(&row.id).await {
                Ok(true) => {
                    self.step(row, "sending", "paid", None, None).await?;
                    round.paid += 1;
                    Ok(())
                }
                Ok(false) if now.div_euclid(1000) >= valid_before(row) + EXPIRY_GRACE_SECS => {
                    self.expire(row, "sending", round).await
                }
                _ => {
                    self.step(row, "sending", "sent", None, None).await?;
                    round.waiting += 1;
                    Ok(())
                }
            };
        }
        let order = PayoutOrder {
            id: &row.id,
            to: &row.destination,
            amount: u64::try_from(row.amount).map_err(|_| SellerError::Corrupt("withdrawal amount".into()))?,
            valid_before: u64::try_from(valid_before(row)).unwrap_or(0),
        };
        let amount = Money::from_atomic(order.amount);
        match chain.pay(order).await {
            Sent::Paid(tx) => {
                self.step(row, "sending", "paid", Some(&tx), None).await?;
                tracing::info!(withdrawal = %row.id, %amount, transaction = %tx, "payout paid");
                round.paid += 1;
            }
            Sent::NotSent(why) => {
                tracing::warn!(withdrawal = %row.id, reason = %why, "payout not sent; will retry");
                self.step(row, "sending", "queued", None, Some(&why)).await?;
                round.waiting += 1;
            }
            Sent::Unknown(tx) => {
                tracing::warn!(withdrawal = %row.id, transaction = ?tx, "payout outcome unknown; the chain will tell");
                self.step(row, "sending", "sent", tx.as_deref(), None).await?;
                round.waiting += 1;
            }
            Sent::Reverted(why) => {
                // Refused by the token: perhaps because an earlier send of it already paid.
                if chain.paid(&row.id).await.unwrap_or(false) {
                    self.step(row, "sending", "paid", None, None).await?;
                    round.paid += 1;
                } else {
                    tracing::warn!(withdrawal = %row.id, reason = %why, "payout reverted; will retry");
                    self.step(row, "sending", "queued", None, Some(&why)).await?;
                    round.waiting += 1;
                }
            }
        }
        Ok(())
    }

    /// Settles a payout a stopped process or a lost answer left `status`: paid if the chain
    /// says so; failed if its authorization has expired unpaid; else sent again (the token
    /// refuses a second use of its nonce, so this cannot pay twice).
    async fn settle_left(&self, row: &Withdrawal, round: &mut Round) -> Result<(), SellerError> {
        let Some(chain) = self.payouts.get(&row.network) else { return Ok(()) };
        match chain.paid(&row.id).await {
            Ok(true) => {
                if self.step(row, &row.status, "paid", None, None).await? {
                    tracing::info!(withdrawal = %row.id, "payout found paid on chain");
                    round.paid += 1;
                }
            }
            Ok(false) if self.clock.now_ms().div_euclid(1000) >= valid_before(row) + EXPIRY_GRACE_SECS => {
                self.expire(row, &row.status, round).await?;
            }
            // Past its day but within the grace: only the chain can still pay it; not sent again.
            Ok(false) if self.clock.now_ms().div_euclid(1000) >= valid_before(row) => {
                round.waiting += 1;
            }
            Ok(false) => {
                if self.step(row, &row.status, "queued", None, None).await? {
                    round.waiting += 1;
                }
            }
            Err(why) => {
                tracing::warn!(withdrawal = %row.id, reason = %why, "could not ask the chain about a payout");
                round.waiting += 1;
            }
        }
        Ok(())
    }

    /// Fails a payout whose authorization expired unpaid: its amount goes back to the balance.
    async fn expire(&self, row: &Withdrawal, from: &str, round: &mut Round) -> Result<(), SellerError> {
        let why = "not paid within a day of the request; the amount is back in the balance";
        if self.step(row, from, "failed", None, Some(why)).await? {
            tracing::warn!(withdrawal = %row.id, "payout expired unpaid; amount given back");
            round.failed += 1;
        }
        Ok(())
    }

    async fn step(
        &self,
        row: &Withdrawal,
        from: &str,
        to: &str,
        tx_hash: Option<&str>,
        error: Option<&str>,
    ) -> Result<bool, SellerError> {
        let step = WithdrawalMove { from, to, tx_hash, error, now_ms: self.clock.now_ms() };
        Ok(self.store.move_withdrawal(&row.id, step).await?)
    }
}

/// Until when a payout's authorization is valid, unix seconds.
fn valid_before(row: &Withdrawal) -> i64 {
    row.created_at.div_euclid(1000) + AUTHORIZATION_SECS
}

/// Why a payout settled by hand (an operator's `svc payouts` or the console's operator view)
/// is refused.
#[derive(Debug, thiserror::Error)]
pub enum ByHandError {
    /// Not a transaction hash.
    #[error("a transaction hash is 0x and 64 hex digits")]
    Transaction,
    /// A reason the seller could not read as one line, or none.
    #[error("the reason, shown to the seller, {0}")]
    Reason(String),
    /// No queued payout by that id (paid, failed, being sent, or none).
    #[error("no queued payout {0}")]
    NotQueued(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] svc_store::StoreError),
}

/// Records queued payout `id` as paid outside svc by transaction `tx`.
pub async fn mark_paid(store: &svc_store::Store, id: &str, tx: &str, now_ms: i64) -> Result<(), ByHandError> {
    let hash = tx.strip_prefix("0x").is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if !hash {
        return Err(ByHandError::Transaction);
    }
    let step = WithdrawalMove { from: "queued", to: "paid", tx_hash: Some(tx), error: None, now_ms };
    if !store.move_withdrawal(id, step).await? {
        return Err(ByHandError::NotQueued(id.to_owned()));
    }
    Ok(())
}

/// Gives up queued payout `id` for `reason` (shown to the seller); its amount goes back to the
/// agent's balance.
pub async fn mark_failed(store: &svc_store::Store, id: &str, reason: &str, now_ms: i64) -> Result<(), ByHandError> {
    let reason = reason.trim();
    if reason.is_empty() || reason.chars().count() > 200 {
        return Err(ByHandError::Reason("is 1 to 200 characters".into()));
    }
    svc_domain::text::check_line(reason).map_err(|e| ByHandError::Reason(e.to_string()))?;
    let step = WithdrawalMove { from: "queued", to: "failed", tx_hash: None, error: Some(reason), now_ms };
    if !store.move_withdrawal(id, step).await? {
        return Err(ByHandError::NotQueued(id.to_owned()));
    }
    Ok(())
}
