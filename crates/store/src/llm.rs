//! The LLM proxy's records: each account's token version and automatic top-up, and one row
//! per proxied call.
//!
//! A call holds credits in two ledger entries keyed on its id: `llm:<id>` takes the most the
//! call can cost before the upstream is asked, `llm-release:<id>` gives back what it did not
//! cost once it has ended. Both are idempotent by their reference, so a finish that runs twice
//! (or a sweep racing a late finish) releases once.
//!
//! A call's row is also its share of the account's daily cap: the row is written only if
//! what the day's calls took, with this hold, stays under the cap, in the same statement
//! that reads it (see [`Store::begin_llm_call`]).

use serde::{Deserialize, Serialize};

use crate::batch::Arg;
use crate::{Debit, Store, StoreError, to_i64, to_u64, with_pool};

/// An account's LLM settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LlmAccount {
    /// What the account's tokens are signed over; rotation adds one.
    pub token_version: u64,
    /// Whether a payment sent with a proxied call may buy credits for it.
    pub top_up_enabled: bool,
    /// Credits one automatic top-up buys, atomic units.
    pub top_up_amount: u64,
}

/// A proxied call about to ask its upstream.
#[derive(Debug, Clone)]
pub struct NewLlmCall<'a> {
    /// Call id (the caller makes it).
    pub id: &'a str,
    /// The paying account.
    pub account_id: &'a str,
    /// The model alias asked for.
    pub alias: &'a str,
    /// The provider it maps to.
    pub provider: &'a str,
    /// The provider's model name.
    pub upstream_model: &'a str,
    /// Whether the answer streams.
    pub stream: bool,
    /// Credits held for it: the most it can cost, atomic units.
    pub reserved: u64,
    /// The account's daily cap, when there is one.
    pub cap: Option<LlmCap>,
    /// When, unix ms.
    pub now_ms: i64,
}

/// The most an account's calls may take over a day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LlmCap {
    /// Credits, atomic units: running calls count what they hold, finished ones their cost.
    pub limit: u64,
    /// The start of the day, unix ms.
    pub since_ms: i64,
}

/// What [`Store::begin_llm_call`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlmHold {
    /// The call is recorded and its credits held.
    Taken,
    /// The hold would take the day's calls past the cap: nothing was written.
    OverCap,
    /// The balance does not cover the hold: the call is recorded as `insufficient` and
    /// nothing is held.
    Insufficient {
        /// The balance seen, atomic units.
        balance: u64,
    },
}

/// How a proxied call ended.
#[derive(Debug, Clone)]
pub struct FinishedLlmCall<'a> {
    /// `ok`, `failed` (charged nothing), `estimated` (the client left before the upstream
    /// reported usage) or `abandoned` (released by the sweep).
    pub status: &'a str,
    /// Prompt tokens, cached ones included.
    pub prompt_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cached_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// What it cost, atomic units: at most what was reserved.
    pub cost: u64,
    /// From the call's start to its end.
    pub latency_ms: u64,
    /// Why, when it failed or was estimated.
    pub note: Option<&'a str>,
    /// When, unix ms.
    pub now_ms: i64,
}

/// One proxied call, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmCallRecord {
    /// Call id.
    pub id: String,
    /// The model alias.
    pub alias: String,
    /// The provider's model name.
    pub upstream_model: String,
    /// `reserved`, `ok`, `failed`, `estimated`, `abandoned` or `insufficient`.
    pub status: String,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Cost, atomic units.
    pub cost: u64,
    /// Latency, ms.
    pub latency_ms: u64,
    /// When it began, unix ms.
    pub created_at: i64,
}

/// An account's proxied calls over a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LlmUsage {
    /// Calls that were charged (or are still running).
    pub calls: u64,
    /// Their prompt tokens.
    pub prompt_tokens: u64,
    /// Their completion tokens.
    pub completion_tokens: u64,
    /// Credits they took, atomic units; a running call counts what it holds.
    pub spent: u64,
}

type CallRow = (String, String, String, String, i64, i64, i64, i64, i64);

/// What an account's calls took: a running call what it holds, a finished one its cost. The
/// usage report and the daily cap read this one sum, over the rows `counted!` keeps.
macro_rules! spent {
    () => {
        "CAST(COALESCE(SUM(CASE WHEN status = 'reserved' THEN reserved ELSE cost END), 0) AS BIGINT)"
    };
}

/// The calls that take credits: running or charged.
macro_rules! counted {
    () => {
        "status IN ('reserved', 'ok', 'estimated')"
    };
}

impl Store {
    /// An account's LLM settings; the defaults when it never had any.
    pub async fn llm_account(&self, account_id: &str) -> Result<LlmAccount, StoreError> {
        const SQL: &str = "SELECT token_version, top_up_enabled, top_up_amount FROM llm_accounts WHERE account_id = $1";
        let row: Option<(i64, i64, i64)> =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(account_id).fetch_optional(p).await)?;
        let Some((version, enabled, amount)) = row else { return Ok(LlmAccount::default()) };
        Ok(LlmAccount {
            token_version: to_u64(version, "token version")?,
            top_up_enabled: enabled != 0,
            top_up_amount: to_u64(amount, "top-up amount")?,
        })
    }

    /// Moves an account to its next token version, so every token signed over an earlier one
    /// stops verifying; returns the new version.
    pub async fn rotate_llm_token(&self, account_id: &str, now_ms: i64) -> Result<u64, StoreError> {
        const SQL: &str = "INSERT INTO llm_accounts (account_id, token_version, updated_at) VALUES ($1, 1, $2) \
                           ON CONFLICT (account_id) DO UPDATE SET token_version = llm_accounts.token_version + 1, \
                           updated_at = $2";
        self.write(SQL, vec![Arg::Text(account_id.to_owned()), Arg::Int(now_ms)]).await?;
        Ok(self.llm_account(account_id).await?.token_version)
    }

    /// Sets an account's automatic top-up.
    pub async fn set_llm_top_up(
        &self,
        account_id: &str,
        enabled: bool,
        amount: u64,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        const SQL: &str = "INSERT INTO llm_accounts (account_id, top_up_enabled, top_up_amount, updated_at) \
                           VALUES ($1, $2, $3, $4) ON CONFLICT (account_id) DO UPDATE SET \
                           top_up_enabled = $2, top_up_amount = $3, updated_at = $4";
        let args = vec![
            Arg::Text(account_id.to_owned()),
            Arg::Int(i64::from(enabled)),
            Arg::Int(to_i64(amount, "top-up amount")?),
            Arg::Int(now_ms),
        ];
        self.write(SQL, args).await?;
        Ok(())
    }

    /// Records a call and holds its credits, unless the day's cap or the balance does not
    /// allow it. The cap is checked by the statement that writes the row, as the account's only
    /// such writer at that moment, so concurrent calls cannot all see room for one more hold.
    pub async fn begin_llm_call(&self, call: &NewLlmCall<'_>) -> Result<LlmHold, StoreError> {
        const UNCAPPED: &str = "INSERT INTO llm_calls (id, account_id, alias, provider, upstream_model, stream, \
                                reserved, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 'reserved', $8)";
        const CAPPED: &str = concat!(
            "INSERT INTO llm_calls (id, account_id, alias, provider, upstream_model, stream, reserved, status, \
             created_at) SELECT $1, $2, $3, $4, $5, $6, $7, 'reserved', $8 WHERE (SELECT ",
            spent!(),
            " FROM llm_calls WHERE account_id = $2 AND created_at >= $9 AND ",
            counted!(),
            ") <= $10 - $7"
        );
        let mut args = vec![
            Arg::Text(call.id.to_owned()),
            Arg::Text(call.account_id.to_owned()),
            Arg::Text(call.alias.to_owned()),
            Arg::Text(call.provider.to_owned()),
            Arg::Text(call.upstream_model.to_owned()),
            Arg::Int(i64::from(call.stream)),
            Arg::Int(to_i64(call.reserved, "reservation")?),
            Arg::Int(call.now_ms),
        ];
        // The row first: a process that stops between the two writes leaves a reservation
        // the sweep finds, and the sweep gives back only what a ledger entry shows was taken.
        let written = match call.cap {
            None => self.write(UNCAPPED, args).await?,
            Some(cap) => {
                args.extend([Arg::Int(cap.since_ms), Arg::Int(to_i64(cap.limit, "daily cap")?)]);
                self.write_alone_for(call.account_id, CAPPED, args).await?
            }
        };
        if written == 0 {
            return Ok(LlmHold::OverCap);
        }
        let entry = crate::accounts::NewDebit {
            id: &format!("cl_{}", call.id),
            account_id: call.account_id,
            amount: call.reserved,
            kind: "llm",
            route_id: call.alias,
            reference: Some(&format!("llm:{}", call.id)),
            key_id: None,
            now_ms: call.now_ms,
        };
        match self.debit(&entry).await? {
            Debit::Taken => Ok(LlmHold::Taken),
            Debit::Insufficient { balance } => {
                const REFUSED: &str = "UPDATE llm_calls SET status = 'insufficient', reserved = 0, finished_at = $2 \
                                       WHERE id = $1";
                self.write(REFUSED, vec![Arg::Text(call.id.to_owned()), Arg::Int(call.now_ms)]).await?;
                Ok(LlmHold::Insufficient { balance })
            }
        }
    }

    /// Ends a call: gives back what it held beyond its cost and records what it did. Only a
    /// call still `reserved` is finished, and its hold is given back once, by whichever finish
    /// comes first (a late finish racing the sweep): the record's cost is then read back from
    /// the ledger, so the two always agree, and a process that stops between the two writes
    /// leaves a `reserved` row whose release the sweep finds already done.
    pub async fn finish_llm_call(&self, id: &str, done: &FinishedLlmCall<'_>) -> Result<bool, StoreError> {
        const RELEASE: &str = "INSERT INTO credit_ledger (id, account_id, delta, kind, route_id, reference, created_at) \
                               SELECT $1, c.account_id, c.reserved - $3, 'llm_release', c.alias, $5, $4 \
                               FROM llm_calls c WHERE c.id = $2 AND c.status = 'reserved' AND c.reserved > $3 \
                               AND EXISTS (SELECT 1 FROM credit_ledger d WHERE d.reference = 'llm:' || c.id) \
                               ON CONFLICT DO NOTHING";
        const FINISH: &str = "UPDATE llm_calls SET status = $2, prompt_tokens = $3, cached_tokens = $4, \
                              completion_tokens = $5, latency_ms = $6, note = $7, finished_at = $8, \
                              cost = reserved - COALESCE((SELECT r.delta FROM credit_ledger r WHERE r.reference = $9), \
                              CASE WHEN EXISTS (SELECT 1 FROM credit_ledger d WHERE d.reference = 'llm:' || llm_calls.id) \
                              THEN 0 ELSE reserved END) \
                              WHERE id = $1 AND status = 'reserved'";
        let reference = format!("llm-release:{id}");
        let cost = to_i64(done.cost, "cost")?;
        let release = vec![
            Arg::Text(format!("cl_{id}_release")),
            Arg::Text(id.to_owned()),
            Arg::Int(cost),
            Arg::Int(done.now_ms),
            Arg::Text(reference.clone()),
        ];
        self.write(RELEASE, release).await?;
        let finish = vec![
            Arg::Text(id.to_owned()),
            Arg::Text(done.status.to_owned()),
            Arg::Int(to_i64(done.prompt_tokens, "tokens")?),
            Arg::Int(to_i64(done.cached_tokens, "tokens")?),
            Arg::Int(to_i64(done.completion_tokens, "tokens")?),
            Arg::Int(to_i64(done.latency_ms, "latency")?),
            Arg::OptText(done.note.map(str::to_owned)),
            Arg::Int(done.now_ms),
            Arg::Text(reference),
        ];
        Ok(self.write(FINISH, finish).await? == 1)
    }

    /// Calls still `reserved` that began before `before_ms`: left by a process that stopped.
    pub async fn stale_llm_calls(&self, before_ms: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        const SQL: &str =
            "SELECT id FROM llm_calls WHERE status = 'reserved' AND created_at < $1 ORDER BY created_at LIMIT $2";
        Ok(with_pool!(&self.db, |p| sqlx::query_scalar(SQL).bind(before_ms).bind(i64::from(limit)).fetch_all(p).await)?)
    }

    /// An account's charged calls since `since_ms`.
    pub async fn llm_usage_since(&self, account_id: &str, since_ms: i64) -> Result<LlmUsage, StoreError> {
        const SQL: &str = concat!(
            "SELECT CAST(COUNT(*) AS BIGINT), CAST(COALESCE(SUM(prompt_tokens), 0) AS BIGINT), \
             CAST(COALESCE(SUM(completion_tokens), 0) AS BIGINT), ",
            spent!(),
            " FROM llm_calls WHERE account_id = $1 AND created_at >= $2 AND ",
            counted!()
        );
        let (calls, prompt, completion, spent): (i64, i64, i64, i64) =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(account_id).bind(since_ms).fetch_one(p).await)?;
        Ok(LlmUsage {
            calls: to_u64(calls, "calls")?,
            prompt_tokens: to_u64(prompt, "tokens")?,
            completion_tokens: to_u64(completion, "tokens")?,
            spent: to_u64(spent, "spend")?,
        })
    }

    /// An account's latest proxied calls, newest first.
    pub async fn llm_calls(&self, account_id: &str, limit: u32) -> Result<Vec<LlmCallRecord>, StoreError> {
        const SQL: &str = "SELECT id, alias, upstream_model, status, prompt_tokens, completion_tokens, cost, \
                           latency_ms, created_at FROM llm_calls WHERE account_id = $1 \
                           ORDER BY created_at DESC, id DESC LIMIT $2";
        let rows: Vec<CallRow> =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(account_id).bind(i64::from(limit)).fetch_all(p).await)?;
        rows.into_iter()
            .map(|(id, alias, upstream_model, status, prompt, completion, cost, latency, created_at)| {
                Ok(LlmCallRecord {
                    id,
                    alias,
                    upstream_model,
                    status,
                    prompt_tokens: to_u64(prompt, "tokens")?,
                    completion_tokens: to_u64(completion, "tokens")?,
                    cost: to_u64(cost, "cost")?,
                    latency_ms: to_u64(latency, "latency")?,
                    created_at,
                })
            })
            .collect()
    }
}
