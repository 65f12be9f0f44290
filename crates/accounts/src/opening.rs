//! Opening accounts: by name, or for a wallet on its first need. Below sign-in, which opens
//! a wallet's account, and the crate root, which answers who is calling with sign-in's help.

use svc_store::{Account, Store, StoreError};

/// Opens an account, optionally owned by a wallet (lowercase `0x…` address).
pub async fn open_account(store: &Store, name: &str, wallet: Option<&str>, now_ms: i64) -> Result<Account, StoreError> {
    let id = format!("acct_{}", uuid::Uuid::now_v7().simple());
    store.create_account(&id, name, wallet, now_ms).await
}

/// The account a wallet owns, opened on first need (its first sign-in, credit purchase or
/// rebate). Two first needs of one wallet may race; the loser finds the winner's account.
pub async fn wallet_account(store: &Store, wallet: &str, now_ms: i64) -> Result<Account, StoreError> {
    if let Some(account) = store.account_by_wallet(wallet).await? {
        return Ok(account);
    }
    match open_account(store, &short_name(wallet), Some(wallet), now_ms).await {
        Ok(account) => Ok(account),
        Err(err) => store.account_by_wallet(wallet).await?.ok_or(err),
    }
}

/// A wallet-owned account's name: the address shortened, as wallets show it.
fn short_name(wallet: &str) -> String {
    match (wallet.get(..6), wallet.len().checked_sub(4).and_then(|at| wallet.get(at..))) {
        (Some(head), Some(tail)) if wallet.len() > 12 => format!("{head}…{tail}"),
        _ => wallet.to_owned(),
    }
}
