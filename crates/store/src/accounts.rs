//! Accounts, their API keys and their credit ledger.
//!
//! Keys are stored as a SHA-256 of the whole key and a short visible prefix; the key itself
//! exists only in the answer that created it. Credits are an append-only ledger whose running
//! sum the database keeps in `accounts.balance` (trigger, `CHECK (balance >= 0)`), so a debit
//! is a single statement that lands with its balance change or not at all.

use serde::Serialize;

use crate::batch::Arg;
use crate::{Store, StoreError, to_i64, with_pool};

/// An account: who credits and API keys belong to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct Account {
    /// Account id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The wallet that signs in for it, lowercased, when it has one.
    pub wallet: Option<String>,
    /// Credits left, USDC atomic units.
    #[sqlx(try_from = "i64")]
    pub balance: u64,
    /// Creation time, unix ms.
    pub created_at: i64,
}

/// A new API key, already hashed.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    /// Key id (public).
    pub id: String,
    /// Owner.
    pub account_id: String,
    /// A label its owner chose.
    pub name: String,
    /// The first characters of the key, shown in listings so an owner can tell keys apart.
    pub prefix: String,
    /// SHA-256 of the whole key, lowercase hex.
    pub hash: String,
    /// Space-separated scopes.
    pub scopes: String,
    /// Creation time, unix ms.
    pub created_at: i64,
    /// When it stops working, unix ms.
    pub expires_at: Option<i64>,
}

/// A stored API key (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct ApiKeyRecord {
    /// Key id.
    pub id: String,
    /// Owner.
    pub account_id: String,
    /// Its label.
    pub name: String,
    /// Its visible prefix.
    pub prefix: String,
    /// Space-separated scopes.
    pub scopes: String,
    /// Creation time, unix ms.
    pub created_at: i64,
    /// Expiry, unix ms.
    pub expires_at: Option<i64>,
    /// Revocation time, unix ms.
    pub revoked_at: Option<i64>,
    /// When it last authorized a call, unix ms, to the minute ([`Store::key_used`]).
    pub last_used_at: Option<i64>,
}

/// One ledger entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct LedgerEntry {
    /// Entry id.
    pub id: String,
    /// Whose credits.
    pub account_id: String,
    /// Change in credits, USDC atomic units: negative for a call, positive otherwise.
    pub delta: i64,
    /// `grant`, `purchase`, `call` or `refund`.
    pub kind: String,
    /// The route a call or refund was for.
    pub route_id: Option<String>,
    /// What makes the entry unique beyond its id (the refunded call, the paying payment).
    pub reference: Option<String>,
    /// When, unix ms.
    pub created_at: i64,
}

/// Credits to add.
#[derive(Debug, Clone, Copy)]
pub struct NewCredit<'a> {
    /// Entry id.
    pub id: &'a str,
    /// Whose credits.
    pub account_id: &'a str,
    /// USDC atomic units.
    pub amount: u64,
    /// `grant`, `purchase` or `refund`.
    pub kind: &'a str,
    /// The route a refund is for.
    pub route_id: Option<&'a str>,
    /// What makes it unique: the same reference is added once.
    pub reference: Option<&'a str>,
    /// When, unix ms.
    pub now_ms: i64,
}

/// A debit about to be written.
pub(crate) struct NewDebit<'a> {
    pub(crate) id: &'a str,
    pub(crate) account_id: &'a str,
    pub(crate) amount: u64,
    pub(crate) kind: &'a str,
    pub(crate) route_id: &'a str,
    pub(crate) reference: Option<&'a str>,
    /// The API key the call came with, if it came with one.
    pub(crate) key_id: Option<&'a str>,
    pub(crate) now_ms: i64,
}

/// What a debit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Debit {
    /// The credits are taken.
    Taken,
    /// The balance does not cover the amount; nothing was taken.
    Insufficient {
        /// The balance seen, USDC atomic units.
        balance: u64,
    },
}

/// `SELECT` of every account column, then `$rest`.
macro_rules! select_account {
    ($rest:literal) => {
        concat!("SELECT id, name, wallet, balance, created_at FROM accounts ", $rest)
    };
}

/// `SELECT` of every stored key column but the hash, then `$rest`.
macro_rules! select_key {
    ($rest:literal) => {
        concat!(
            "SELECT id, account_id, name, prefix, scopes, created_at, expires_at, revoked_at, last_used_at FROM api_keys ",
            $rest
        )
    };
}

/// How often a key's use is written, ms.
const KEY_USE_EVERY_MS: i64 = 60_000;
/// Keys whose last write is remembered before the stale ones are forgotten.
const KEY_USES_KEPT: usize = 10_000;

impl Store {
    /// Creates an account with no credits. `wallet` must not belong to another account.
    pub async fn create_account(
        &self,
        id: &str,
        name: &str,
        wallet: Option<&str>,
        now_ms: i64,
    ) -> Result<Account, StoreError> {
        const SQL: &str = "INSERT INTO accounts (id, name, wallet, balance, created_at) VALUES ($1, $2, $3, 0, $4)";
        let args = vec![
            Arg::Text(id.to_owned()),
            Arg::Text(name.to_owned()),
            Arg::OptText(wallet.map(str::to_owned)),
            Arg::Int(now_ms),
        ];
        self.write(SQL, args).await?;
        Ok(Account {
            id: id.to_owned(),
            name: name.to_owned(),
            wallet: wallet.map(str::to_owned),
            balance: 0,
            created_at: now_ms,
        })
    }

    /// The account with this id.
    pub async fn account(&self, id: &str) -> Result<Option<Account>, StoreError> {
        const SQL: &str = select_account!("WHERE id = $1");
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(id).fetch_optional(p).await)?)
    }

    /// The account a wallet signs in for.
    pub async fn account_by_wallet(&self, wallet: &str) -> Result<Option<Account>, StoreError> {
        const SQL: &str = select_account!("WHERE wallet = $1");
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(wallet).fetch_optional(p).await)?)
    }

    /// Stores a new key.
    pub async fn create_api_key(&self, key: &NewApiKey) -> Result<(), StoreError> {
        const SQL: &str = "INSERT INTO api_keys (id, account_id, name, prefix, hash, scopes, created_at, expires_at) \
                           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
        let args = vec![
            Arg::Text(key.id.clone()),
            Arg::Text(key.account_id.clone()),
            Arg::Text(key.name.clone()),
            Arg::Text(key.prefix.clone()),
            Arg::Text(key.hash.clone()),
            Arg::Text(key.scopes.clone()),
            Arg::Int(key.created_at),
            Arg::OptInt(key.expires_at),
        ];
        self.write(SQL, args).await.map(|_| ())
    }

    /// The key whose whole-key hash is `hash`, revoked or not (the caller decides).
    pub async fn api_key_by_hash(&self, hash: &str) -> Result<Option<ApiKeyRecord>, StoreError> {
        const SQL: &str = select_key!("WHERE hash = $1");
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(hash).fetch_optional(p).await)?)
    }

    /// The key `id`, live or not.
    pub async fn api_key(&self, id: &str) -> Result<Option<ApiKeyRecord>, StoreError> {
        const SQL: &str = select_key!("WHERE id = $1");
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(id).fetch_optional(p).await)?)
    }

    /// An account's keys, newest first.
    pub async fn api_keys(&self, account_id: &str) -> Result<Vec<ApiKeyRecord>, StoreError> {
        const SQL: &str = select_key!("WHERE account_id = $1 ORDER BY created_at DESC, id");
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(account_id).fetch_all(p).await)?)
    }

    /// Notes that key `id` authorized a call at `now_ms`. Written at most once a minute per key
    /// and process, so a key in a hot loop costs no write per call; "last used" is good to the
    /// minute.
    pub async fn key_used(&self, id: &str, now_ms: i64) -> Result<(), StoreError> {
        const SQL: &str = "UPDATE api_keys SET last_used_at = $2 WHERE id = $1 \
                           AND (last_used_at IS NULL OR last_used_at < $2)";
        {
            let mut written = self.key_uses.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if written.get(id).is_some_and(|&at| now_ms - at < KEY_USE_EVERY_MS) {
                return Ok(());
            }
            if written.len() >= KEY_USES_KEPT {
                written.retain(|_, at| now_ms - *at < KEY_USE_EVERY_MS);
            }
            written.insert(id.to_owned(), now_ms);
        }
        self.write(SQL, vec![Arg::Text(id.to_owned()), Arg::Int(now_ms)]).await.map(|_| ())
    }

    /// Revokes one of `account_id`'s keys. Returns whether a live key was revoked.
    pub async fn revoke_api_key(&self, account_id: &str, key_id: &str, now_ms: i64) -> Result<bool, StoreError> {
        const SQL: &str =
            "UPDATE api_keys SET revoked_at = $3 WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL";
        let args = vec![Arg::Text(key_id.to_owned()), Arg::Text(account_id.to_owned()), Arg::Int(now_ms)];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Takes `amount` credits for a call, unless the balance does not cover it. One statement:
    /// concurrent debits of one account are serialised by the database and none overspends.
    pub async fn debit_credits(
        &self,
        entry_id: &str,
        account_id: &str,
        amount: u64,
        route_id: &str,
        key_id: Option<&str>,
        now_ms: i64,
    ) -> Result<Debit, StoreError> {
        let entry =
            NewDebit { id: entry_id, account_id, amount, kind: "call", route_id, reference: None, key_id, now_ms };
        self.debit(&entry).await
    }

    /// Writes a debit entry unless the balance does not cover it.
    pub(crate) async fn debit(&self, entry: &NewDebit<'_>) -> Result<Debit, StoreError> {
        const SQL: &str = "INSERT INTO credit_ledger (id, account_id, delta, kind, route_id, reference, created_at, \
                           key_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
        let delta = -to_i64(entry.amount, "debit amount")?;
        let args = vec![
            Arg::Text(entry.id.to_owned()),
            Arg::Text(entry.account_id.to_owned()),
            Arg::Int(delta),
            Arg::Text(entry.kind.to_owned()),
            Arg::Text(entry.route_id.to_owned()),
            Arg::OptText(entry.reference.map(str::to_owned)),
            Arg::Int(entry.now_ms),
            Arg::OptText(entry.key_id.map(str::to_owned)),
        ];
        match self.write(SQL, args).await {
            Ok(_) => Ok(Debit::Taken),
            Err(StoreError::Database(sqlx::Error::Database(e)))
                if e.kind() == sqlx::error::ErrorKind::CheckViolation =>
            {
                let balance = self.account(entry.account_id).await?.map_or(0, |a| a.balance);
                Ok(Debit::Insufficient { balance })
            }
            Err(err) => Err(err),
        }
    }

    /// Adds credits: a grant, a purchase or a refund. Its `reference` makes it idempotent
    /// (the refunded call, the paying payment): the same reference twice adds once. Returns
    /// whether this call added them.
    pub async fn add_credits(&self, credit: &NewCredit<'_>) -> Result<bool, StoreError> {
        const SQL: &str = "INSERT INTO credit_ledger (id, account_id, delta, kind, route_id, reference, created_at) \
                           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (reference) DO NOTHING";
        let args = vec![
            Arg::Text(credit.id.to_owned()),
            Arg::Text(credit.account_id.to_owned()),
            Arg::Int(to_i64(credit.amount, "credit amount")?),
            Arg::Text(credit.kind.to_owned()),
            Arg::OptText(credit.route_id.map(str::to_owned)),
            Arg::OptText(credit.reference.map(str::to_owned)),
            Arg::Int(credit.now_ms),
        ];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// An account's latest ledger entries, newest first.
    pub async fn ledger(&self, account_id: &str, limit: u32) -> Result<Vec<LedgerEntry>, StoreError> {
        const SQL: &str = "SELECT id, account_id, delta, kind, route_id, reference, created_at FROM credit_ledger \
                           WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(account_id).bind(i64::from(limit)).fetch_all(p).await)?)
    }

    /// Credits of one `kind` added to an account since `since_ms`, as (reference, amount):
    /// the rebates a wallet's receipts show beside their payments.
    pub async fn credits_of_kind_since(
        &self,
        account_id: &str,
        kind: &str,
        since_ms: i64,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        const SQL: &str = "SELECT reference, delta FROM credit_ledger \
                           WHERE account_id = $1 AND kind = $2 AND created_at >= $3 AND reference IS NOT NULL";
        let rows: Vec<(String, i64)> = with_pool!(&self.db, |p| sqlx::query_as(SQL)
            .bind(account_id)
            .bind(kind)
            .bind(since_ms)
            .fetch_all(p)
            .await)?;
        rows.into_iter().map(|(reference, delta)| Ok((reference, crate::to_u64(delta, "credit")?))).collect()
    }

    /// An account's credit-billed calls since `since_ms` inclusive (refunded ones aside), for
    /// its volume discount, counted up to `at_most`: a tier is decided by the first thousand,
    /// and a charge must not count a heavy account's every call.
    pub async fn count_credit_calls_since(
        &self,
        account_id: &str,
        since_ms: i64,
        at_most: u64,
    ) -> Result<u64, StoreError> {
        const SQL: &str = "SELECT COUNT(*) FROM (SELECT 1 FROM credit_ledger c WHERE c.account_id = $1 \
                           AND c.kind = 'call' AND c.created_at >= $2 \
                           AND NOT EXISTS (SELECT 1 FROM credit_ledger r WHERE r.reference = 'refund:' || c.id) \
                           LIMIT $3) AS counted";
        let n: i64 = with_pool!(&self.db, |p| sqlx::query_scalar(SQL)
            .bind(account_id)
            .bind(since_ms)
            .bind(i64::try_from(at_most).unwrap_or(i64::MAX))
            .fetch_one(p)
            .await)?;
        crate::to_u64(n, "count")
    }

    /// An account's billed calls since `since_ms` that were not refunded, and the credits they
    /// took: the volume-discount window and the usage report.
    pub async fn credit_calls_since(&self, account_id: &str, since_ms: i64) -> Result<(u64, u64), StoreError> {
        const SQL: &str = "SELECT CAST(COUNT(*) AS BIGINT), CAST(COALESCE(SUM(-c.delta), 0) AS BIGINT) \
                           FROM credit_ledger c WHERE c.account_id = $1 AND c.kind = 'call' AND c.created_at >= $2 \
                           AND NOT EXISTS (SELECT 1 FROM credit_ledger r WHERE r.reference = 'refund:' || c.id)";
        let (calls, spent): (i64, i64) =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(account_id).bind(since_ms).fetch_one(p).await)?;
        Ok((crate::to_u64(calls, "call count")?, crate::to_u64(spent, "credits spent")?))
    }

    /// Records a sign-in nonce handed out, usable until `expires_at`. Expired nonces are
    /// swept in the same call, so the table holds only live ones.
    pub async fn create_sign_in_nonce(&self, nonce: &str, expires_at: i64, now_ms: i64) -> Result<(), StoreError> {
        self.write("DELETE FROM sign_in_nonces WHERE expires_at <= $1", vec![Arg::Int(now_ms)]).await?;
        const SQL: &str = "INSERT INTO sign_in_nonces (nonce, expires_at) VALUES ($1, $2)";
        self.write(SQL, vec![Arg::Text(nonce.to_owned()), Arg::Int(expires_at)]).await?;
        Ok(())
    }

    /// Uses a sign-in nonce: true once for a nonce handed out and not expired, false for an
    /// unknown, used or expired one.
    pub async fn use_sign_in_nonce(&self, nonce: &str, now_ms: i64) -> Result<bool, StoreError> {
        const SQL: &str =
            "UPDATE sign_in_nonces SET used_at = $2 WHERE nonce = $1 AND used_at IS NULL AND expires_at > $2";
        Ok(self.write(SQL, vec![Arg::Text(nonce.to_owned()), Arg::Int(now_ms)]).await? == 1)
    }
}
