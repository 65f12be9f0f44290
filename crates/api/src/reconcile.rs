//! Reconciliation: payments whose fate on chain svc does not know are settled from what the
//! chain says, so no payment is lost and none is taken twice.
//!
//! Two kinds are due: a settlement sent but not confirmed in time (`pending`: the answer was
//! withheld), and a reservation older than any handler runs (its process stopped mid-request).
//! The facilitator asks the chain; a transfer that landed becomes `settled` with its answer
//! owed (the same payment, sent again, is served once); one that failed becomes `failed`, and
//! so does a pending one whose authorization expired unused (before that, a transfer already
//! sent may still be mined); an abandoned reservation whose authorization was never used is
//! released, so the payer can send the same payment again. Every step is conditional on the
//! row's status, so replicas reconciling at once agree.

use std::time::Duration;

use svc_store::{ANSWER_WITHHELD, PaymentStatus};
use svc_x402::{Resolution, Unresolved};

use crate::error::ApiError;
use crate::state::AppState;

/// A reservation older than this was abandoned: handlers and settlement finish long before.
pub const ABANDONED_AFTER_MS: i64 = 10 * 60 * 1000;

/// How long after an authorization's `validBefore` (by our clock) it is taken as expired on
/// chain too: block timestamps may run ahead of our clock.
const EXPIRY_MARGIN_SECS: i64 = 60;

/// Payments looked at per pass.
const BATCH: u32 = 100;

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
pub async fn reconcile_payments(state: &AppState) -> Result<Report, ApiError> {
    let now = state.clock.now_ms();
    let due = state.store.payments_to_reconcile(now - ABANDONED_AFTER_MS, BATCH).await?;
    let mut report = Report::default();
    for payment in due {
        let unresolved = Unresolved {
            network: &payment.network,
            payer: &payment.payer,
            nonce: &payment.nonce,
            transaction: payment.tx_hash.as_deref(),
            abandoned: payment.status == PaymentStatus::Reserved,
            expired: payment.valid_before.is_some_and(|bound| now / 1000 >= bound + EXPIRY_MARGIN_SECS),
        };
        let resolution = match state.payments.facilitator.resolve(unresolved).await {
            Ok(resolution) => resolution,
            Err(err) => {
                tracing::warn!(payment = %payment.id, error = %err, "could not ask the chain about a payment");
                Resolution::Unknown
            }
        };
        let now = state.clock.now_ms();
        match (payment.status, resolution) {
            (_, Resolution::Unknown) => {
                report.undecided += 1;
                if now - payment.updated_at > 60 * 60 * 1000 {
                    tracing::error!(payment = %payment.id, status = %payment.status, "payment undecided for over an hour");
                }
            }
            (from, Resolution::Settled { transaction }) => {
                let moved = state
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
                if state.store.release_payment(&payment.id).await? {
                    tracing::info!(payment = %payment.id, "abandoned reservation released");
                    report.released += 1;
                }
            }
            (from, Resolution::NotSettled) => {
                let error = Some("invalid_transaction_state");
                if state.store.resolve_payment(&payment.id, from, PaymentStatus::Failed, None, error, now).await? {
                    tracing::info!(payment = %payment.id, "pending settlement failed on chain");
                    report.failed += 1;
                }
            }
        }
    }
    Ok(report)
}

/// Reconciles every `every`, for the life of the process.
pub async fn run(state: AppState, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match reconcile_payments(&state).await {
            Ok(report) if report != Report::default() => tracing::info!(?report, "payments reconciled"),
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "reconciliation pass failed"),
        }
    }
}
