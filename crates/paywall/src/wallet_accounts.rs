//! The account each rebated wallet owns, kept in memory: a leaf the paywall holds and its
//! rebates read.

use std::collections::HashMap;
use std::sync::Mutex;

/// Wallets whose accounts are kept before the table starts over.
const MAX_PAYERS: usize = 100_000;

/// The account each rebated wallet owns: accounts are never deleted or moved to another
/// wallet, so an entry never goes stale. Paid calls are not kept here: a kept count misses the
/// calls paid since it was taken (at a discounted price, or on another replica), and a rebate
/// priced by it disagrees with the price the payer was quoted.
#[derive(Debug, Default)]
pub(crate) struct WalletAccounts(Mutex<HashMap<String, String>>);

impl WalletAccounts {
    /// The account `wallet` owns, if it is known here.
    pub(crate) fn get(&self, wallet: &str) -> Option<String> {
        self.0.lock().ok().and_then(|accounts| accounts.get(wallet).cloned())
    }

    /// Remembers that `wallet` owns `account_id`.
    pub(crate) fn keep(&self, wallet: &str, account_id: &str) {
        if let Ok(mut accounts) = self.0.lock() {
            if accounts.len() >= MAX_PAYERS {
                accounts.clear();
            }
            accounts.insert(wallet.to_owned(), account_id.to_owned());
        }
    }
}
