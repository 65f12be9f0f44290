//! Charges at once: one payment presented many times is settled once; many payments are each
//! settled.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use svc_paywall::Outcome;
use svc_store::{PaymentStatus, Store};

use crate::on_both;
use crate::support::{Harness, refused, with_payment_id};

/// Charges presented at once in each test.
const AT_ONCE: usize = 16;

on_both!(one_payment_presented_many_times_at_once_is_settled_once_and_served_once);
async fn one_payment_presented_many_times_at_once_is_settled_once_and_served_once(store: Store) {
    let h = Arc::new(Harness::new(store));
    // Alive: an answer it settled is its own to hand over, not a retry's.
    h.paywall.beat().await.expect("beat");
    let payment = Arc::new(h.pay(1));
    let charges = (0..AT_ONCE).map(|_| {
        let (h, payment) = (h.clone(), payment.clone());
        tokio::spawn(async move { h.charge(&payment).await })
    });
    let outcomes: Vec<_> = futures::future::join_all(charges).await.into_iter().map(|o| o.expect("joined")).collect();
    let paid = outcomes.iter().filter(|o| matches!(o, Outcome::Paid { .. })).count();
    assert_eq!(paid, 1, "{outcomes:?}");
    for outcome in outcomes.iter().filter(|o| !matches!(o, Outcome::Paid { .. })) {
        let reason = refused(outcome);
        assert!(
            ["payment_in_progress", "payment_already_used", "invalid_exact_evm_nonce_already_used"]
                .iter()
                .any(|r| reason.starts_with(r)),
            "{reason}"
        );
    }
    assert_eq!((h.runs.load(Ordering::SeqCst), h.chain.transfers.load(Ordering::SeqCst)), (1, 1));
    let records = h.payments().await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].status, PaymentStatus::Settled);
}

on_both!(one_payment_id_retried_many_times_at_once_is_settled_once);
async fn one_payment_id_retried_many_times_at_once_is_settled_once(store: Store) {
    let h = Arc::new(Harness::new(store));
    h.paywall.beat().await.expect("beat");
    let payment = Arc::new(with_payment_id(&h.pay(1), "pay_at_once_000001"));
    let charges = (0..AT_ONCE).map(|_| {
        let (h, payment) = (h.clone(), payment.clone());
        tokio::spawn(async move { h.charge(&payment).await })
    });
    let outcomes: Vec<_> = futures::future::join_all(charges).await.into_iter().map(|o| o.expect("joined")).collect();
    assert_eq!(outcomes.iter().filter(|o| matches!(o, Outcome::Paid { .. })).count(), 1, "{outcomes:?}");
    assert!(
        outcomes.iter().all(|o| matches!(o, Outcome::Paid { .. } | Outcome::Kept { .. } | Outcome::Refused { .. }))
    );
    assert_eq!((h.runs.load(Ordering::SeqCst), h.chain.transfers.load(Ordering::SeqCst)), (1, 1));
    // Once the first has answered, every retry gets the kept answer.
    assert!(matches!(h.charge(&payment).await, Outcome::Kept { .. }));
}

on_both!(distinct_payments_at_once_are_all_settled_and_recorded);
async fn distinct_payments_at_once_are_all_settled_and_recorded(store: Store) {
    let h = Arc::new(Harness::new(store));
    let charges = (0..AT_ONCE).map(|n| {
        let h = h.clone();
        let payment = h.pay(n as u64 + 1);
        tokio::spawn(async move { h.charge(&payment).await })
    });
    let outcomes: Vec<_> = futures::future::join_all(charges).await.into_iter().map(|o| o.expect("joined")).collect();
    assert!(outcomes.iter().all(|o| matches!(o, Outcome::Paid { .. })), "{outcomes:?}");
    assert_eq!((h.runs.load(Ordering::SeqCst), h.chain.transfers.load(Ordering::SeqCst)), (AT_ONCE, AT_ONCE));
    let records = h.payments().await;
    assert_eq!(records.len(), AT_ONCE);
    assert!(records.iter().all(|r| r.status == PaymentStatus::Settled));
    let paid_calls = h.paywall.paid_calls(&crate::support::payer_id()).await.expect("count");
    assert_eq!(paid_calls, AT_ONCE as u64);
}
