//! Rebates: a payer whose volume tier earns a discount, but who paid the list price (its
//! client did not ask for its price), gets the difference back as credits on its wallet's
//! account, opened on first need. Once per payment: the credit is keyed on the payment.

use std::collections::HashMap;
use std::sync::Mutex;

use svc_accounts::credits::{REBATE, rebate_reference};
use svc_domain::{DiscountTier, Money};
use svc_store::NewCredit;

use crate::{Paywall, PaywallError, Sale};

/// How long a payer's counted calls are trusted before they are counted again: tiers change
/// at 100 and 1,000 calls a month, so a minute-old count errs by a few calls at most.
const COUNT_FRESH_MS: i64 = 60_000;
/// Payers whose counts are kept before the table starts over.
const MAX_PAYERS: usize = 100_000;

/// Paid calls per payer as last counted, and when; and the account each rebated wallet owns
/// (accounts are never deleted or moved to another wallet, so it never goes stale).
#[derive(Debug, Default)]
pub(crate) struct Memo {
    counts: Mutex<HashMap<String, (u64, i64)>>,
    accounts: Mutex<HashMap<String, String>>,
}

impl Paywall {
    /// Gives `payer` the credits its tier owes on a payment of `paid` for `sale`, recorded as
    /// payment `payment_id`. A failure is logged: the answer stands, and an operator can grant
    /// the rebate by hand from the log.
    pub(crate) async fn rebate(&self, sale: &Sale<'_>, payer: &str, paid: u64, payment_id: &str) {
        // A discounted price was asked for and paid: nothing is owed.
        if !sale.discountable || paid < sale.price.atomic() {
            return;
        }
        match self.owe_rebate(sale, payer, payment_id).await {
            Ok(Some(owed)) => tracing::info!(payment = %payment_id, owed = %owed, "rebate credited"),
            Ok(None) => {}
            Err(err) => tracing::error!(payment = %payment_id, error = %err, "could not credit a rebate"),
        }
    }

    async fn owe_rebate(&self, sale: &Sale<'_>, payer: &str, payment_id: &str) -> Result<Option<Money>, PaywallError> {
        let tier = DiscountTier::for_calls(self.calls_before(payer).await?);
        let owed = Money::from_atomic(sale.price.atomic() - tier.apply(sale.price).atomic());
        if owed == Money::ZERO {
            return Ok(None);
        }
        let now_ms = self.clock.now_ms();
        let known = self.rebate_memo.accounts.lock().ok().and_then(|accounts| accounts.get(payer).cloned());
        let account_id = match known {
            Some(id) => id,
            None => {
                let id = svc_accounts::wallet_account(&self.store, payer, now_ms).await?.id;
                if let Ok(mut accounts) = self.rebate_memo.accounts.lock() {
                    if accounts.len() >= MAX_PAYERS {
                        accounts.clear();
                    }
                    accounts.insert(payer.to_owned(), id.clone());
                }
                id
            }
        };
        let credit = NewCredit {
            id: &format!("cl_{}", uuid::Uuid::now_v7().simple()),
            account_id: &account_id,
            amount: owed.atomic(),
            kind: REBATE,
            route_id: Some(sale.product),
            reference: Some(&rebate_reference(payment_id)),
            now_ms,
        };
        Ok(self.store.add_credits(&credit).await?.then_some(owed))
    }

    /// The payer's paid calls before the one just recorded: counted in the store at most once
    /// a minute, and counted on here between.
    async fn calls_before(&self, payer: &str) -> Result<u64, PaywallError> {
        let now = self.clock.now_ms();
        if let Ok(mut counts) = self.rebate_memo.counts.lock()
            && let Some((calls, at)) = counts.get_mut(payer)
            && now - *at < COUNT_FRESH_MS
        {
            let before = *calls;
            *calls += 1;
            return Ok(before);
        }
        // Counts the call just recorded too.
        let calls = self.paid_calls(payer).await?;
        if let Ok(mut counts) = self.rebate_memo.counts.lock() {
            if counts.len() >= MAX_PAYERS {
                counts.clear();
            }
            counts.insert(payer.to_owned(), (calls, now));
        }
        Ok(calls.saturating_sub(1))
    }
}
