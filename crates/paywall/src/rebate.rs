//! Rebates: a payer whose volume tier earns a discount, but who paid the list price (its
//! client did not ask for its price), gets the difference back as credits on its wallet's
//! account, opened on first need. Once per payment: the credit is keyed on the payment.

use svc_accounts::credits::{REBATE, rebate_reference};
use svc_domain::Money;
use svc_store::NewCredit;

use crate::{Paywall, PaywallError, Sale};

impl Paywall {
    /// Gives `payer` the credits its tier owes on a payment of `paid` for `sale`, recorded as
    /// payment `payment_id`. A failure is logged: the answer stands, and an operator can grant
    /// the rebate by hand from the log.
    pub(crate) async fn rebate(&self, sale: &Sale<'_>, payer: &str, paid: Money, payment_id: &str) {
        // A discounted price was asked for and paid: nothing is owed.
        if !sale.discountable || paid < sale.price {
            return;
        }
        match self.owe_rebate(sale, payer, payment_id).await {
            Ok(Some(owed)) => tracing::info!(payment = %payment_id, owed = %owed, "rebate credited"),
            Ok(None) => {}
            Err(err) => tracing::error!(payment = %payment_id, error = %err, "could not credit a rebate"),
        }
    }

    async fn owe_rebate(&self, sale: &Sale<'_>, payer: &str, payment_id: &str) -> Result<Option<Money>, PaywallError> {
        // Priced by the calls before this one, as the payer's quote for it was.
        let tier = self.tier_besides(payer, Some(payment_id)).await?;
        let owed = sale.price.checked_sub(tier.apply(sale.price)).unwrap_or(Money::ZERO);
        if owed == Money::ZERO {
            return Ok(None);
        }
        let now_ms = self.clock.now_ms();
        let account_id = match self.rebate_accounts.get(payer) {
            Some(id) => id,
            None => {
                let id = svc_accounts::wallet_account(&self.store, payer, now_ms).await?.id;
                self.rebate_accounts.keep(payer, &id);
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
}
