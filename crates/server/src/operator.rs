//! Operator commands: accounts, credits and keys made from the command line, against the
//! same store the service uses. They print what was made, and a key's secret only once.

use std::io::Write as _;

use anyhow::Context as _;
use svc_accounts::{self as accounts, Scope};
use svc_domain::{Clock as _, Money, SystemClock};

use crate::config::{AccountsCommand, CreditsCommand, KeysCommand, PayoutsCommand};
use crate::store::open as open_store;

/// `svc accounts create`.
pub(crate) async fn accounts(command: AccountsCommand) -> anyhow::Result<()> {
    let AccountsCommand::Create { name, wallet, store } = command;
    let wallet = wallet
        .map(|w| {
            w.parse::<svc_domain::EvmAddress>()
                .map(|a| a.as_str().to_owned())
                .map_err(|e| anyhow::anyhow!("--wallet: {e}"))
        })
        .transpose()?;
    let store = open_store(&store).await?;
    let account = accounts::open_account(&store, &name, wallet.as_deref(), SystemClock.now_ms())
        .await
        .context("opening the account (is the wallet already another account's?)")?;
    writeln!(std::io::stdout(), "{}", account.id)?;
    Ok(())
}

/// `svc credits grant`.
pub(crate) async fn credits(command: CreditsCommand) -> anyhow::Result<()> {
    let CreditsCommand::Grant { account, amount, reference, store } = command;
    let amount: Money = amount.parse().map_err(|e| anyhow::anyhow!("amount: {e}"))?;
    anyhow::ensure!(amount > Money::ZERO, "amount must be more than zero");
    let store = open_store(&store).await?;
    anyhow::ensure!(store.account(&account).await?.is_some(), "no account {account}");
    let reference = reference.unwrap_or_else(|| format!("grant:{}", uuid::Uuid::now_v7().simple()));
    let added = accounts::grant_credits(&store, &account, amount, &reference, SystemClock.now_ms()).await?;
    let balance = store.account(&account).await?.map_or(0, |a| a.balance);
    if added {
        writeln!(std::io::stdout(), "granted {amount}; balance {}", Money::from_atomic(balance))?;
    } else {
        writeln!(std::io::stdout(), "already granted under {reference}; balance {}", Money::from_atomic(balance))?;
    }
    Ok(())
}

/// `svc keys create`.
pub(crate) async fn keys(command: KeysCommand) -> anyhow::Result<()> {
    let KeysCommand::Create { account, name, scopes, expires_in_days, store } = command;
    let scopes = scopes
        .iter()
        .map(|s| Scope::parse(s.trim()).ok_or_else(|| anyhow::anyhow!("unknown scope {s:?}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let store = open_store(&store).await?;
    anyhow::ensure!(store.account(&account).await?.is_some(), "no account {account}");
    let now = SystemClock.now_ms();
    let expires_at = expires_in_days.map(|days| now + i64::from(days) * 86_400_000);
    let key = accounts::issue_key(&store, &account, &name, &scopes, expires_at, now).await?;
    eprintln!("key {} ({}); this is the only time the secret is shown:", key.record.id, key.record.prefix);
    writeln!(std::io::stdout(), "{}", key.secret)?;
    Ok(())
}

/// `svc payouts ...`.
pub(crate) async fn payouts(command: PayoutsCommand) -> anyhow::Result<()> {
    let mut out = std::io::stdout();
    match command {
        PayoutsCommand::List { status, store } => {
            let store = open_store(&store).await?;
            let payouts = store.withdrawals_in(&status, 1000).await?;
            if payouts.is_empty() {
                eprintln!("no {status} payouts");
            }
            for w in payouts {
                let amount = u64::try_from(w.amount)
                    .map(Money::from_atomic)
                    .map_err(|_| anyhow::anyhow!("payout {} records a negative amount", w.id))?;
                let tx = w.tx_hash.as_deref().unwrap_or("-");
                writeln!(
                    out,
                    "{}\t{}\t{amount} USDC\t{}\t{}\t{}\t{tx}",
                    w.id, w.agent_id, w.network, w.destination, w.status
                )?;
            }
        }
        PayoutsCommand::MarkPaid { id, tx, store } => {
            let store = open_store(&store).await?;
            svc_sellers::payouts::mark_paid(&store, &id, &tx, SystemClock.now_ms()).await?;
            writeln!(out, "{id} paid by {tx}")?;
        }
        PayoutsCommand::Fail { id, reason, store } => {
            let store = open_store(&store).await?;
            svc_sellers::payouts::mark_failed(&store, &id, &reason, SystemClock.now_ms()).await?;
            writeln!(out, "{id} failed; its amount is back in the agent's balance")?;
        }
    }
    Ok(())
}
