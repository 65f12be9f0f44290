//! Reconciliation: payments whose fate on chain svc does not know are settled from what the
//! chain says, so no payment is lost and none is taken twice.
//!
//! Two kinds are due: a settlement sent but not confirmed in time (`pending`: the answer was
//! withheld), and a reservation its process left when it stopped mid-request: one whose
//! process stopped beating (decided within seconds of a crash), or one older than any handler
//! runs.
//! The facilitator asks the chain; a transfer that landed becomes `settled` with its answer
//! owed (the same payment, sent again, is served once). One that cannot land any more (an
//! EIP-3009 authorization unused when the chain's clock passed its `validBefore`, a Solana
//! transaction never seen after its blockhash expired) becomes `failed` if a settlement was
//! sent, and is released if the process stopped before recording one. Until then the payment
//! is undecided and looked at again: a transfer already sent may still be mined. Every step is
//! conditional on the row's status, so replicas reconciling at once agree.

use std::time::Duration;

use svc_store::{ANSWER_WITHHELD, PaymentRecord, PaymentStatus};
use svc_x402::{Resolution, Unresolved};

use crate::{Paywall, PaywallError};

/// A reservation older than this was abandoned: handlers and settlement finish long before.
pub const ABANDONED_AFTER_MS: i64 = 10 * 60 * 1000;

/// How often a process says it is alive.
pub const BEAT_EVERY: Duration = Duration::from_secs(4);

/// A process not seen for this long has stopped: its reservations are decided at once. Five
/// beats, so a slow store or replicas' clocks apart by seconds do not make a live one look
/// stopped.
pub const STOPPED_AFTER_MS: i64 = 20_000;

/// Payments read per page, and pages per pass: payments the chain cannot decide yet stay due,
/// so a pass pages past them, up to a bound that keeps one pass short.
const BATCH: u32 = 100;
const PAGES: usize = 10;

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// Found settled on chain (their answers are now owed).
    pub settled: usize,
    /// Found failed on chain.
    pub failed: usize,
    /// Abandoned reservations whose authorization was never used, released.
    pub released: usize,
    /// Not decided yet; looked at again next pass.
    pub undecided: usize,
}

/// One reconciliation pass over the payments due now.
pub async fn reconcile_payments(paywall: &Paywall) -> Result<Report, PaywallError> {
    let now = paywall.clock.now_ms();
    let mut report = Report::default();
    let mut after: Option<(i64, String)> = None;
    for _ in 0..PAGES {
        let cursor = after.as_ref().map(|(at, id)| (*at, id.as_str()));
        let store = &paywall.store;
        let due = store.payments_to_reconcile(now - ABANDONED_AFTER_MS, now - STOPPED_AFTER_MS, cursor, BATCH).await?;
        let full = due.len() == BATCH as usize;
        after = due.last().map(|p| (p.updated_at, p.id.clone()));
        for payment in due {
            reconcile_one(paywall, payment, &mut report).await?;
        }
        if !full {
            break;
        }
    }
    Ok(report)
}

/// Asks the chain about one payment and records what it says.
async fn reconcile_one(paywall: &Paywall, payment: PaymentRecord, report: &mut Report) -> Result<(), PaywallError> {
    let now = paywall.clock.now_ms();
    let unresolved = Unresolved {
        network: &payment.network,
        payer: &payment.payer,
        nonce: &payment.nonce,
        transaction: payment.tx_hash.as_deref(),
        abandoned: payment.status == PaymentStatus::Reserved,
        valid_before: payment.valid_before.and_then(|bound| u64::try_from(bound).ok()),
        now_secs: u64::try_from(now / 1000).unwrap_or(0),
    };
    let resolution = match paywall.facilitator.resolve(unresolved).await {
        Ok(resolution) => resolution,
        Err(err) => {
            tracing::warn!(payment = %payment.id, error = %err, "could not ask the chain about a payment");
            Resolution::Unknown
        }
    };
    let now = paywall.clock.now_ms();
    match (payment.status, resolution) {
        (_, Resolution::Unknown) => {
            report.undecided += 1;
            if now - payment.updated_at > 60 * 60 * 1000 {
                tracing::error!(payment = %payment.id, status = %payment.status, "payment undecided for over an hour");
            }
        }
        (from, Resolution::Settled { transaction }) => {
            let moved = paywall
                .store
                .resolve_payment(
                    &payment.id,
                    from,
                    PaymentStatus::Settled,
                    transaction.as_deref(),
                    Some(ANSWER_WITHHELD),
                    now,
                )
                .await?;
            if moved {
                tracing::info!(payment = %payment.id, "payment found settled on chain; its answer is owed");
                report.settled += 1;
            }
        }
        (PaymentStatus::Reserved, Resolution::NotSettled) => {
            if paywall.store.release_payment(&payment.id).await? {
                tracing::info!(payment = %payment.id, "abandoned reservation released");
                report.released += 1;
            }
        }
        (from, Resolution::NotSettled) => {
            let error = Some("invalid_transaction_state");
            if paywall.store.resolve_payment(&payment.id, from, PaymentStatus::Failed, None, error, now).await? {
                tracing::info!(payment = %payment.id, "pending settlement failed on chain");
                report.failed += 1;
            }
        }
    }
    Ok(())
}

/// Beats every [`BEAT_EVERY`] and reconciles every `every`, for the life of the process.
pub async fn run(paywall: std::sync::Arc<Paywall>, every: Duration) {
    let beating = paywall.clone();
    tokio::spawn(async move {
        let mut beats = tokio::time::interval(BEAT_EVERY);
        loop {
            beats.tick().await;
            if let Err(err) = beating.beat().await {
                tracing::warn!(error = %err, "could not record that this process is alive");
            }
        }
    });
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match reconcile_payments(&paywall).await {
            Ok(report) if report != Report::default() => tracing::info!(?report, "payments reconciled"),
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "reconciliation pass failed"),
        }
    }
}
