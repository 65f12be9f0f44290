//! Sellers' records: their agents, each paid call an agent answered, payouts, and the daily
//! call counts of agents' limits.
//!
//! Money moves only through entries the database checks in the same statement: a call earns
//! once (a compare-and-set from `served` to `earned`, whose trigger adds its net to the agent),
//! and a withdrawal row takes its amount from a balance that may never go negative, so no
//! interleaving of requests or replicas withdraws more than was earned.

use crate::batch::Arg;
use crate::{Store, StoreError, to_i64, to_u64, with_pool};

/// A seller's agent as recorded.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SellerAgent {
    /// Opaque id.
    pub id: String,
    /// The seller's account.
    pub account_id: String,
    /// What its seller wrote: listing, schema, endpoint.
    #[sqlx(flatten)]
    pub listing: AgentListing,
    /// The signing secret, sealed.
    pub secret_sealed: Vec<u8>,
    /// The x402 config, JSON; `None` until set.
    pub config: Option<String>,
    /// Whether invokes are sold.
    pub x402_enabled: bool,
    /// The price of an invoke, atomic USDC.
    #[sqlx(try_from = "i64")]
    pub price: u64,
    /// Settled revenue not yet withdrawn, atomic USDC.
    #[sqlx(try_from = "i64")]
    pub balance: u64,
    /// Revenue from payments only verified, never settled, atomic USDC.
    #[sqlx(try_from = "i64")]
    pub unsettled: u64,
    /// Everything earned, net of the platform fee, atomic USDC.
    #[sqlx(try_from = "i64")]
    pub total_earned: u64,
    /// Paid invokes that earned.
    #[sqlx(try_from = "i64")]
    pub paid_calls: u64,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
}

/// `SELECT` of every agent column, then `$rest`.
macro_rules! select_agent {
    ($rest:literal) => {
        concat!(
            "SELECT id, account_id, name, category, tags, description, examples, capabilities, input_schema, \
             backend, endpoint, timeout_ms, secret_sealed, config, (x402_enabled = 1) AS x402_enabled, price, balance, unsettled, \
             total_earned, paid_calls, created_at, updated_at FROM seller_agents ",
            $rest
        )
    };
}

/// What a seller writes about an agent: everything but its secret, config and counters.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct AgentListing {
    /// Display name.
    pub name: String,
    /// Listing category.
    pub category: String,
    /// Tags, JSON array.
    pub tags: String,
    /// Description.
    pub description: String,
    /// Examples, JSON array.
    pub examples: String,
    /// Capabilities, JSON array.
    pub capabilities: String,
    /// Input JSON Schema.
    pub input_schema: String,
    /// The kind of backend that answers invokes (`https`).
    pub backend: String,
    /// Where that backend reaches the agent.
    pub endpoint: String,
    /// Endpoint timeout, ms.
    #[sqlx(try_from = "i64")]
    pub timeout_ms: u64,
}

/// A paid call an agent's seller answered, written before its payment settles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSellerCall<'a> {
    /// Row id.
    pub id: &'a str,
    /// The agent.
    pub agent_id: &'a str,
    /// The payment's network, payer and nonce: the payment it belongs to.
    pub network: &'a str,
    /// The payer.
    pub payer: &'a str,
    /// The authorization's nonce.
    pub nonce: &'a str,
    /// What the payer paid, atomic USDC.
    pub price: u64,
    /// The platform's fee out of it.
    pub fee: u64,
    /// Unix ms.
    pub now_ms: i64,
}

/// A call left `served`, with what its payment's record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedCall {
    /// The payment's network.
    pub network: String,
    /// The payer.
    pub payer: String,
    /// The nonce.
    pub nonce: String,
    /// The payment's status (`settled`, `unsettled`, `failed`, `pending`, `reserved`), or
    /// `None` when the payment's reservation was released.
    pub payment_status: Option<String>,
    /// When the seller answered, unix ms.
    pub created_at: i64,
}

/// A payout.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Withdrawal {
    /// Id.
    pub id: String,
    /// The agent whose balance paid it.
    pub agent_id: String,
    /// Atomic USDC.
    pub amount: i64,
    /// Where it goes.
    pub destination: String,
    /// The network it is paid on (CAIP-2).
    pub network: String,
    /// `queued`, `sending`, `sent` (transaction known), `paid` (confirmed or marked paid by an
    /// operator), `failed` (given back to the balance).
    pub status: String,
    /// Whether auto-withdraw made it.
    pub automatic: i64,
    /// The transaction, once known.
    pub tx_hash: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
}

/// A payout to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWithdrawal<'a> {
    /// Id.
    pub id: &'a str,
    /// The agent.
    pub agent_id: &'a str,
    /// Atomic USDC.
    pub amount: u64,
    /// Where it goes.
    pub destination: &'a str,
    /// CAIP-2 network.
    pub network: &'a str,
    /// Initial status.
    pub status: &'a str,
    /// Made by auto-withdraw.
    pub automatic: bool,
    /// Unix ms.
    pub now_ms: i64,
}

/// How a withdrawal request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WithdrawalTaken {
    /// Written, its amount taken from the balance.
    Taken,
    /// The balance does not cover it; nothing was written.
    Insufficient {
        /// The balance now.
        balance: u64,
    },
}

/// What a withdrawal row's status becomes, with the transaction or reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WithdrawalMove<'a> {
    /// The status it must have now.
    pub from: &'a str,
    /// The status it gets.
    pub to: &'a str,
    /// Its transaction, if known (kept when `None`).
    pub tx_hash: Option<&'a str>,
    /// Why it failed.
    pub error: Option<&'a str>,
    /// Unix ms.
    pub now_ms: i64,
}

impl Store {
    /// Records a new agent.
    pub async fn create_seller_agent(
        &self,
        id: &str,
        account_id: &str,
        listing: &AgentListing,
        secret_sealed: &[u8],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        const SQL: &str = "INSERT INTO seller_agents (id, account_id, name, category, tags, description, examples, \
                           capabilities, input_schema, backend, endpoint, timeout_ms, secret_sealed, created_at, \
                           updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)";
        let mut args = vec![Arg::Text(id.to_owned()), Arg::Text(account_id.to_owned())];
        args.extend(listing_args(listing)?);
        args.extend([Arg::Blob(secret_sealed.to_vec()), Arg::Int(now_ms)]);
        self.write(SQL, args).await?;
        Ok(())
    }

    /// A live (not deleted) agent.
    pub async fn seller_agent(&self, id: &str) -> Result<Option<SellerAgent>, StoreError> {
        const SQL: &str = select_agent!("WHERE id = $1 AND deleted_at IS NULL");
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(id).fetch_optional(p).await)?)
    }

    /// An account's live agents, oldest first.
    pub async fn seller_agents(&self, account_id: &str) -> Result<Vec<SellerAgent>, StoreError> {
        const SQL: &str = select_agent!("WHERE account_id = $1 AND deleted_at IS NULL ORDER BY created_at, id");
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(account_id).fetch_all(p).await)?)
    }

    /// Live agents the marketplace may list (x402 on, at least one paid call, a description of
    /// `description_chars` characters), in `category` when given, most called first.
    pub async fn listable_seller_agents(
        &self,
        category: Option<&str>,
        description_chars: (u32, u32),
    ) -> Result<Vec<SellerAgent>, StoreError> {
        const SQL: &str = select_agent!(
            "WHERE deleted_at IS NULL AND x402_enabled = 1 AND paid_calls > 0 \
             AND LENGTH(description) BETWEEN $1 AND $2 AND ($3 = '' OR category = $3) \
             ORDER BY paid_calls DESC, created_at, id"
        );
        let (min, max) = description_chars;
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL)
            .bind(i64::from(min))
            .bind(i64::from(max))
            .bind(category.unwrap_or(""))
            .fetch_all(p)
            .await)?)
    }

    /// Rewrites an agent's listing; false when the account has no such live agent.
    pub async fn update_seller_agent(
        &self,
        id: &str,
        account_id: &str,
        listing: &AgentListing,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE seller_agents SET name = $3, category = $4, tags = $5, description = $6, \
                           examples = $7, capabilities = $8, input_schema = $9, backend = $10, endpoint = $11, \
                           timeout_ms = $12, updated_at = $13 WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL";
        let mut args = vec![Arg::Text(id.to_owned()), Arg::Text(account_id.to_owned())];
        args.extend(listing_args(listing)?);
        args.push(Arg::Int(now_ms));
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Replaces an agent's signing secret; false when the account has no such live agent.
    pub async fn set_seller_secret(
        &self,
        id: &str,
        account_id: &str,
        secret_sealed: &[u8],
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE seller_agents SET secret_sealed = $3, updated_at = $4 \
                           WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL";
        let args = vec![
            Arg::Text(id.to_owned()),
            Arg::Text(account_id.to_owned()),
            Arg::Blob(secret_sealed.to_vec()),
            Arg::Int(now_ms),
        ];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Saves an agent's x402 config; false when the account has no such live agent.
    pub async fn set_seller_config(
        &self,
        id: &str,
        account_id: &str,
        config: &str,
        enabled: bool,
        price: u64,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE seller_agents SET config = $3, x402_enabled = $4, price = $5, updated_at = $6 \
                           WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL";
        let args = vec![
            Arg::Text(id.to_owned()),
            Arg::Text(account_id.to_owned()),
            Arg::Text(config.to_owned()),
            Arg::Int(i64::from(enabled)),
            Arg::Int(to_i64(price, "agent price")?),
            Arg::Int(now_ms),
        ];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Deletes an agent with no money on it or on its way to it: a zero balance, no call whose
    /// payment may still settle, no payout that may still be given back (its records stay, for
    /// the money already moved). False when there is no such live agent or money is in flight.
    pub async fn delete_seller_agent(&self, id: &str, account_id: &str, now_ms: i64) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE seller_agents SET deleted_at = $3, x402_enabled = 0, updated_at = $3 \
                           WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL AND balance = 0 \
                           AND NOT EXISTS (SELECT 1 FROM seller_calls c WHERE c.agent_id = $1 AND c.state = 'served') \
                           AND NOT EXISTS (SELECT 1 FROM seller_withdrawals w WHERE w.agent_id = $1 \
                           AND w.status IN ('queued', 'sending', 'sent'))";
        let args = vec![Arg::Text(id.to_owned()), Arg::Text(account_id.to_owned()), Arg::Int(now_ms)];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Records a call the seller answered, before its payment settles. A second record of the
    /// same payment (a withheld answer served again) is a no-op.
    pub async fn record_seller_call(&self, call: &NewSellerCall<'_>) -> Result<(), StoreError> {
        const SQL: &str = "INSERT INTO seller_calls (id, agent_id, network, payer, nonce, price, fee, net, state, \
                           created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'served', $9, $9) \
                           ON CONFLICT (network, payer, nonce) DO NOTHING";
        let net = call.price.checked_sub(call.fee).ok_or(StoreError::OutOfRange("seller fee"))?;
        let args = vec![
            Arg::Text(call.id.to_owned()),
            Arg::Text(call.agent_id.to_owned()),
            Arg::Text(call.network.to_owned()),
            Arg::Text(call.payer.to_owned()),
            Arg::Text(call.nonce.to_owned()),
            Arg::Int(to_i64(call.price, "call price")?),
            Arg::Int(to_i64(call.fee, "call fee")?),
            Arg::Int(to_i64(net, "call net")?),
            Arg::Int(call.now_ms),
        ];
        self.write(SQL, args).await?;
        Ok(())
    }

    /// The call of a payment earns: its net is added to its agent, settled or not. Once per
    /// payment (a call dropped while its payment was released earns when the payment comes
    /// back); true when this call made it earn.
    pub async fn earn_seller_call(
        &self,
        (network, payer, nonce): (&str, &str, &str),
        settled: bool,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE seller_calls SET state = 'earned', settled = $4, updated_at = $5 \
                           WHERE network = $1 AND payer = $2 AND nonce = $3 AND state IN ('served', 'dropped')";
        let args = vec![
            Arg::Text(network.to_owned()),
            Arg::Text(payer.to_owned()),
            Arg::Text(nonce.to_owned()),
            Arg::Int(i64::from(settled)),
            Arg::Int(now_ms),
        ];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// The call of a payment that never went through earns nothing.
    pub async fn drop_seller_call(
        &self,
        (network, payer, nonce): (&str, &str, &str),
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE seller_calls SET state = 'dropped', updated_at = $4 \
                           WHERE network = $1 AND payer = $2 AND nonce = $3 AND state = 'served'";
        let args = vec![
            Arg::Text(network.to_owned()),
            Arg::Text(payer.to_owned()),
            Arg::Text(nonce.to_owned()),
            Arg::Int(now_ms),
        ];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Calls still `served` since before `before_ms` (their process stopped between the
    /// seller's answer and the earning), with their payments' fate.
    pub async fn served_seller_calls(&self, before_ms: i64, limit: u32) -> Result<Vec<ServedCall>, StoreError> {
        const SQL: &str = "SELECT c.network, c.payer, c.nonce, p.status, c.created_at FROM seller_calls c \
                           LEFT JOIN payments p ON p.network = c.network AND p.payer = c.payer AND p.nonce = c.nonce \
                           WHERE c.state = 'served' AND c.created_at < $1 ORDER BY c.created_at LIMIT $2";
        let rows: Vec<(String, String, String, Option<String>, i64)> =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(before_ms).bind(i64::from(limit)).fetch_all(p).await)?;
        Ok(rows
            .into_iter()
            .map(|(network, payer, nonce, payment_status, created_at)| ServedCall {
                network,
                payer,
                nonce,
                payment_status,
                created_at,
            })
            .collect())
    }

    /// An agent's earned net revenue and calls since `since_ms`.
    pub async fn seller_earned_since(&self, agent_id: &str, since_ms: i64) -> Result<(u64, u64), StoreError> {
        const SQL: &str = "SELECT CAST(COALESCE(SUM(net), 0) AS BIGINT), COUNT(*) FROM seller_calls \
                           WHERE agent_id = $1 AND state = 'earned' AND created_at >= $2";
        let (sum, count): (i64, i64) =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(agent_id).bind(since_ms).fetch_one(p).await)?;
        Ok((to_u64(sum, "revenue")?, to_u64(count, "calls")?))
    }

    /// Writes a payout, taking its amount from the agent's balance, unless the balance does not
    /// cover it.
    pub async fn create_withdrawal(&self, withdrawal: &NewWithdrawal<'_>) -> Result<WithdrawalTaken, StoreError> {
        const SQL: &str = "INSERT INTO seller_withdrawals (id, agent_id, amount, destination, network, status, \
                           automatic, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)";
        let args = vec![
            Arg::Text(withdrawal.id.to_owned()),
            Arg::Text(withdrawal.agent_id.to_owned()),
            Arg::Int(to_i64(withdrawal.amount, "withdrawal")?),
            Arg::Text(withdrawal.destination.to_owned()),
            Arg::Text(withdrawal.network.to_owned()),
            Arg::Text(withdrawal.status.to_owned()),
            Arg::Int(i64::from(withdrawal.automatic)),
            Arg::Int(withdrawal.now_ms),
        ];
        match self.write(SQL, args).await {
            Ok(_) => Ok(WithdrawalTaken::Taken),
            Err(StoreError::Database(sqlx::Error::Database(e)))
                if e.kind() == sqlx::error::ErrorKind::CheckViolation =>
            {
                let balance = self.seller_agent(withdrawal.agent_id).await?.map_or(0, |a| a.balance);
                Ok(WithdrawalTaken::Insufficient { balance })
            }
            Err(err) => Err(err),
        }
    }

    /// An agent's payouts, newest first.
    pub async fn withdrawals(&self, agent_id: &str, limit: u32) -> Result<Vec<Withdrawal>, StoreError> {
        const SQL: &str = "SELECT id, agent_id, amount, destination, network, status, automatic, tx_hash, error, \
                           created_at, updated_at FROM seller_withdrawals WHERE agent_id = $1 \
                           ORDER BY created_at DESC, id DESC LIMIT $2";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(agent_id).bind(i64::from(limit)).fetch_all(p).await)?)
    }

    /// One payout.
    pub async fn withdrawal(&self, id: &str) -> Result<Option<Withdrawal>, StoreError> {
        const SQL: &str = "SELECT id, agent_id, amount, destination, network, status, automatic, tx_hash, error, \
                           created_at, updated_at FROM seller_withdrawals WHERE id = $1";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(id).fetch_optional(p).await)?)
    }

    /// Payouts in `status`, oldest first: an operator's queue, or what a sender must finish.
    pub async fn withdrawals_in(&self, status: &str, limit: u32) -> Result<Vec<Withdrawal>, StoreError> {
        const SQL: &str = "SELECT id, agent_id, amount, destination, network, status, automatic, tx_hash, error, \
                           created_at, updated_at FROM seller_withdrawals WHERE status = $1 \
                           ORDER BY created_at, id LIMIT $2";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(status).bind(i64::from(limit)).fetch_all(p).await)?)
    }

    /// Payouts on `network` in `status`, oldest first: what svc's sender must send or finish.
    pub async fn withdrawals_on(&self, network: &str, status: &str, limit: u32) -> Result<Vec<Withdrawal>, StoreError> {
        const SQL: &str = "SELECT id, agent_id, amount, destination, network, status, automatic, tx_hash, error, \
                           created_at, updated_at FROM seller_withdrawals WHERE network = $1 AND status = $2 \
                           ORDER BY created_at, id LIMIT $3";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL)
            .bind(network)
            .bind(status)
            .bind(i64::from(limit))
            .fetch_all(p)
            .await)?)
    }

    /// An agent's payouts not yet paid or failed, atomic USDC.
    pub async fn pending_withdrawals(&self, agent_id: &str) -> Result<u64, StoreError> {
        const SQL: &str = "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM seller_withdrawals \
                           WHERE agent_id = $1 AND status IN ('queued', 'sending', 'sent')";
        let sum: i64 = with_pool!(&self.db, |p| sqlx::query_scalar(SQL).bind(agent_id).fetch_one(p).await)?;
        to_u64(sum, "pending withdrawals")
    }

    /// Moves a payout from one status to another (compare-and-set); a move to `failed` gives
    /// its amount back to the balance. True when this call moved it.
    pub async fn move_withdrawal(&self, id: &str, step: WithdrawalMove<'_>) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE seller_withdrawals SET status = $3, tx_hash = COALESCE($4, tx_hash), error = $5, \
                           updated_at = $6 WHERE id = $1 AND status = $2";
        let args = vec![
            Arg::Text(id.to_owned()),
            Arg::Text(step.from.to_owned()),
            Arg::Text(step.to.to_owned()),
            Arg::OptText(step.tx_hash.map(str::to_owned)),
            Arg::OptText(step.error.map(str::to_owned)),
            Arg::Int(step.now_ms),
        ];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Counts one invoke of an agent on UTC day `day`, unless `max` are counted already; true
    /// when counted. One statement, so the limit holds across replicas.
    pub async fn take_daily_call(&self, agent_id: &str, day: i64, max: u64) -> Result<bool, StoreError> {
        const SQL: &str = "INSERT INTO seller_daily_calls (agent_id, day, calls) VALUES ($1, $2, 1) \
                           ON CONFLICT (agent_id, day) DO UPDATE SET calls = seller_daily_calls.calls + 1 \
                           WHERE seller_daily_calls.calls < $3";
        let args = vec![Arg::Text(agent_id.to_owned()), Arg::Int(day), Arg::Int(to_i64(max, "daily limit")?)];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Gives back a counted invoke that was not served.
    pub async fn give_back_daily_call(&self, agent_id: &str, day: i64) -> Result<(), StoreError> {
        const SQL: &str =
            "UPDATE seller_daily_calls SET calls = calls - 1 WHERE agent_id = $1 AND day = $2 AND calls > 0";
        self.write(SQL, vec![Arg::Text(agent_id.to_owned()), Arg::Int(day)]).await?;
        Ok(())
    }

    /// Invokes of an agent counted on UTC day `day`.
    pub async fn daily_calls(&self, agent_id: &str, day: i64) -> Result<u64, StoreError> {
        const SQL: &str = "SELECT calls FROM seller_daily_calls WHERE agent_id = $1 AND day = $2";
        let calls: Option<i64> =
            with_pool!(&self.db, |p| sqlx::query_scalar(SQL).bind(agent_id).bind(day).fetch_optional(p).await)?;
        to_u64(calls.unwrap_or(0), "daily calls")
    }
}

fn listing_args(listing: &AgentListing) -> Result<Vec<Arg>, StoreError> {
    Ok(vec![
        Arg::Text(listing.name.clone()),
        Arg::Text(listing.category.clone()),
        Arg::Text(listing.tags.clone()),
        Arg::Text(listing.description.clone()),
        Arg::Text(listing.examples.clone()),
        Arg::Text(listing.capabilities.clone()),
        Arg::Text(listing.input_schema.clone()),
        Arg::Text(listing.backend.clone()),
        Arg::Text(listing.endpoint.clone()),
        Arg::Int(to_i64(listing.timeout_ms, "agent timeout")?),
    ])
}
