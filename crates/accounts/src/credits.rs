//! Calls paid with an account's credits.
//!
//! The price is taken from the balance in one atomic ledger entry before the work runs, and
//! given back if the work fails, so the balance never goes negative, concurrent calls cannot
//! overspend, and failed work costs nothing.

use std::future::Future;

use svc_domain::discount::DISCOUNT_WINDOW_MS;
use svc_domain::{Clock, DiscountTier, Money};
use svc_store::{Debit, NewCredit, Store, StoreError};

/// How a call charged to credits ended.
#[derive(Debug)]
pub enum Charged<T, E> {
    /// The work succeeded; its price stays taken.
    Done(T),
    /// The work failed; its price was given back.
    Failed(E),
    /// The balance did not cover the price; nothing was taken and the work did not run.
    Insufficient {
        /// The balance.
        balance: Money,
    },
}

/// Takes `price` from `account`'s credits for `product` (noting `key_id`, the key the call came
/// with, if any), runs `work`, and gives the price back if it fails.
pub async fn charge<T, E>(
    store: &Store,
    clock: &dyn Clock,
    account: &str,
    key_id: Option<&str>,
    price: Money,
    product: &str,
    work: impl Future<Output = Result<T, E>>,
) -> Result<Charged<T, E>, StoreError> {
    let entry = format!("cl_{}", uuid::Uuid::now_v7().simple());
    if price > Money::ZERO {
        match store.debit_credits(&entry, account, price.atomic(), product, key_id, clock.now_ms()).await? {
            Debit::Taken => {}
            Debit::Insufficient { balance } => {
                return Ok(Charged::Insufficient { balance: Money::from_atomic(balance) });
            }
        }
    }
    match work.await {
        Ok(done) => Ok(Charged::Done(done)),
        Err(err) => {
            if price > Money::ZERO {
                refund(store, account, &entry, price, product, clock.now_ms()).await;
            }
            Ok(Charged::Failed(err))
        }
    }
}

/// Gives a failed call's credits back. Keyed on the call's entry, so it happens once.
async fn refund(store: &Store, account: &str, entry: &str, price: Money, product: &str, now_ms: i64) {
    let reference = format!("refund:{entry}");
    let credit = NewCredit {
        id: &format!("cl_{}", uuid::Uuid::now_v7().simple()),
        account_id: account,
        amount: price.atomic(),
        kind: "refund",
        route_id: Some(product),
        reference: Some(&reference),
        now_ms,
    };
    if let Err(err) = store.add_credits(&credit).await {
        // The debit stands in the ledger with its call; an operator can see and repair it.
        tracing::error!(account, entry, error = %err, "could not refund a failed call");
    }
}

/// Adds the credits a settled payment bought, under its [`purchase_reference`]. Keyed on it, so
/// however often it runs (a withheld answer claimed later, a retried top-up), the credits are
/// added once. Returns whether this call added them.
pub async fn add_purchase(
    store: &Store,
    account_id: &str,
    amount: Money,
    reference: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let credit = NewCredit {
        id: &format!("cl_{}", uuid::Uuid::now_v7().simple()),
        account_id,
        amount: amount.atomic(),
        kind: "purchase",
        route_id: Some(PURCHASE_PRODUCT),
        reference: Some(reference),
        now_ms,
    };
    store.add_credits(&credit).await
}

/// What credit purchases are recorded as, on the ledger and with their payment.
pub const PURCHASE_PRODUCT: &str = "credits.purchase";

/// The ledger reference of the purchase `payment` (`network:payer:nonce`) made.
pub fn purchase_reference(payment: &str) -> String {
    format!("purchase:{payment}")
}

/// The ledger kind of a rebate: credits back to a payer whose tier earned a discount but who
/// paid the list price over x402.
pub const REBATE: &str = "rebate";

/// The ledger reference of the rebate of payment `payment_id`: one per payment.
pub fn rebate_reference(payment_id: &str) -> String {
    format!("rebate:{payment_id}")
}

/// An account's volume-discount tier, by its credit-billed calls in the trailing window.
pub async fn account_tier(store: &Store, account_id: &str, now_ms: i64) -> Result<DiscountTier, StoreError> {
    let calls = store.count_credit_calls_since(account_id, now_ms - DISCOUNT_WINDOW_MS, DiscountTier::TOP_FROM).await?;
    Ok(DiscountTier::for_calls(calls))
}
