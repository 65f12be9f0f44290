//! The payment ledger. The unique key on (network, payer, nonce) is what makes a signed
//! authorization spendable once: reserving inserts the row before the handler runs, so a
//! second request with the same authorization, concurrent or later, on any replica, finds it.

use serde::{Deserialize, Serialize};

use crate::batch::Arg;
use crate::{Store, StoreError, to_i64, to_u64, with_pool};

/// Where a payment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PaymentStatus {
    /// Verified and held while the handler runs.
    Reserved,
    /// Settled on chain.
    Settled,
    /// Served in verify-only mode: verified but never settled.
    Unsettled,
    /// Settlement failed; the answer was withheld.
    Failed,
    /// Sent on chain but not confirmed in time; the answer was withheld until the chain says.
    Pending,
}

/// The `error` of a payment that settled after its answer was withheld: the payer may send
/// the same payment again and is served once, without a second charge.
pub const ANSWER_WITHHELD: &str = "answer_withheld";

impl PaymentStatus {
    /// The text stored in the `status` column.
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::Reserved => "reserved",
            PaymentStatus::Settled => "settled",
            PaymentStatus::Unsettled => "unsettled",
            PaymentStatus::Failed => "failed",
            PaymentStatus::Pending => "pending",
        }
    }
}

impl std::fmt::Display for PaymentStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `status` column value this version does not know: a newer schema, or a hand-edited row.
/// Reported rather than guessed, since a payment's status decides whether it may be released.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown payment status {0:?}")]
pub struct UnknownPaymentStatus(pub String);

impl std::str::FromStr for PaymentStatus {
    type Err = UnknownPaymentStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "reserved" => PaymentStatus::Reserved,
            "settled" => PaymentStatus::Settled,
            "unsettled" => PaymentStatus::Unsettled,
            "failed" => PaymentStatus::Failed,
            "pending" => PaymentStatus::Pending,
            other => return Err(UnknownPaymentStatus(other.to_owned())),
        })
    }
}

/// Lets [`PaymentRecord`] decode the `status` column directly (`#[sqlx(try_from = "String")]`).
impl TryFrom<String> for PaymentStatus {
    type Error = UnknownPaymentStatus;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

/// A payment about to be reserved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewPayment {
    /// Payment id (the caller makes it, e.g. a UUIDv7).
    pub id: String,
    /// Catalogue route id paid for.
    pub route_id: String,
    /// CAIP-2 network.
    pub network: String,
    /// Payer address, normalised by the caller.
    pub payer: String,
    /// EIP-3009 nonce, or the Solana transaction signature.
    pub nonce: String,
    /// The price paid, USDC atomic units (whatever the decimals of the token it was paid in).
    pub amount: u64,
    /// Token contract or mint.
    pub asset: String,
    /// Recipient.
    pub pay_to: String,
    /// Unix seconds from which the payment can no longer move funds: an EIP-3009
    /// `validBefore`, or a bound past a Solana transaction's blockhash; `None` if unknown.
    pub valid_before: Option<i64>,
    /// When, unix ms.
    pub now_ms: i64,
    /// The process reserving it ([`Store::beat_instance`]), so a reservation its process left
    /// when it stopped is found at once; `None` for none in particular.
    pub holder: Option<String>,
}

/// A stored payment. Decoded straight from a row; the `BIGINT` amount is converted with a
/// checked `u64::try_from` (a negative amount is a decode error, never a wrapped number).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct PaymentRecord {
    /// Payment id.
    pub id: String,
    /// Route paid for.
    pub route_id: String,
    /// CAIP-2 network.
    pub network: String,
    /// Payer.
    pub payer: String,
    /// Authorization nonce or transaction signature.
    pub nonce: String,
    /// The price paid, USDC atomic units (whatever the decimals of the token it was paid in).
    #[sqlx(try_from = "i64")]
    pub amount: u64,
    /// Token.
    pub asset: String,
    /// Recipient.
    pub pay_to: String,
    /// Status.
    #[sqlx(try_from = "String")]
    pub status: PaymentStatus,
    /// Settlement transaction, once settled.
    pub tx_hash: Option<String>,
    /// Why settlement failed, if it did.
    pub error: Option<String>,
    /// Unix seconds after which the authorization can no longer move funds, when it has
    /// such a bound: until then, a settlement sent for it may still land.
    pub valid_before: Option<i64>,
    /// Created, unix ms.
    pub created_at: i64,
    /// Last change, unix ms.
    pub updated_at: i64,
    /// The process that reserved it (see [`Store::beat_instance`]); `None` for rows older
    /// than holders. Internal: never serialised.
    #[serde(skip)]
    pub holder: Option<String>,
}

/// The outcome of a reservation. The record is boxed because it is large and `Reserved`, the
/// common case, is empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reservation {
    /// This request holds the authorization now.
    Reserved,
    /// The authorization was already used (or is in use); here is the earlier payment.
    Duplicate(Box<PaymentRecord>),
}

/// `SELECT <every payments column> FROM payments <rest>`, as one `&'static str`, so the
/// column list is written once and queries need no `AssertSqlSafe`.
macro_rules! select_payments {
    ($rest:literal) => {
        concat!(
            "SELECT id, route_id, network, payer, nonce, amount, asset, pay_to, status, tx_hash, error, ",
            "valid_before, created_at, updated_at, holder FROM payments ",
            $rest
        )
    };
}

impl Store {
    /// Reserves an authorization: inserts the payment unless (network, payer, nonce) exists,
    /// in which case the earlier payment is returned. Atomic across connections and replicas:
    /// the unique key decides, not a read-then-write.
    pub async fn reserve_payment(&self, new: &NewPayment) -> Result<Reservation, StoreError> {
        const INSERT: &str = "INSERT INTO payments (id, route_id, network, payer, nonce, amount, asset, pay_to, \
                              status, valid_before, created_at, updated_at, holder) \
                              VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'reserved', $10, $9, $9, $11) \
                              ON CONFLICT (network, payer, nonce) DO NOTHING";
        const FIRST: &str = select_payments!("WHERE network = $1 AND payer = $2 AND nonce = $3");
        let amount = to_i64(new.amount, "payment amount")?;
        // The conflicting row can vanish between the two statements only if its holder released
        // it; then the authorization is free again, so try once more instead of reporting a
        // duplicate that no longer exists.
        for _ in 0..3 {
            let args = vec![
                Arg::Text(new.id.clone()),
                Arg::Text(new.route_id.clone()),
                Arg::Text(new.network.clone()),
                Arg::Text(new.payer.clone()),
                Arg::Text(new.nonce.clone()),
                Arg::Int(amount),
                Arg::Text(new.asset.clone()),
                Arg::Text(new.pay_to.clone()),
                Arg::Int(new.now_ms),
                Arg::OptInt(new.valid_before),
                Arg::OptText(new.holder.clone()),
            ];
            let inserted = self.write(INSERT, args).await?;
            if inserted == 1 {
                return Ok(Reservation::Reserved);
            }
            // Committed before `write` returned, so the read pool sees it.
            let first: Option<PaymentRecord> = with_pool!(&self.db, |p| sqlx::query_as(FIRST)
                .bind(&new.network)
                .bind(&new.payer)
                .bind(&new.nonce)
                .fetch_optional(p)
                .await)?;
            if let Some(first) = first {
                return Ok(Reservation::Duplicate(Box::new(first)));
            }
        }
        Err(StoreError::Contended("payment reservation"))
    }

    /// Frees a reserved authorization after the handler failed, so the client can retry the
    /// same signed payment. Settled or failed payments are never released. Returns whether a
    /// row was released.
    pub async fn release_payment(&self, id: &str) -> Result<bool, StoreError> {
        const SQL: &str = "DELETE FROM payments WHERE id = $1 AND status = 'reserved'";
        let n = self.write(SQL, vec![Arg::Text(id.to_owned())]).await?;
        Ok(n == 1)
    }

    /// Records the transaction a reserved payment is about to be settled by, before it is
    /// sent: a process that stops in between leaves it for reconciliation to look up.
    /// Returns false if the payment is no longer reserved.
    pub async fn note_transaction(&self, id: &str, tx_hash: &str) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE payments SET tx_hash = $2 WHERE id = $1 AND status = 'reserved'";
        let n = self.write(SQL, vec![Arg::Text(id.to_owned()), Arg::Text(tx_hash.to_owned())]).await?;
        Ok(n == 1)
    }

    /// Moves a reserved payment to its final status. Returns false if it was not reserved
    /// (already finished, or released), so a payment is finished exactly once. `Reserved` is not
    /// a final status and is refused with [`StoreError::OutOfRange`].
    pub async fn finish_payment(
        &self,
        id: &str,
        status: PaymentStatus,
        tx_hash: Option<&str>,
        error: Option<&str>,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE payments SET status = $2, tx_hash = $3, error = $4, updated_at = $5 \
                           WHERE id = $1 AND status = 'reserved'";
        if status == PaymentStatus::Reserved {
            return Err(StoreError::OutOfRange("final payment status"));
        }
        let args = vec![
            Arg::Text(id.to_owned()),
            Arg::Text(status.as_str().to_owned()),
            Arg::OptText(tx_hash.map(str::to_owned)),
            Arg::OptText(error.map(str::to_owned)),
            Arg::Int(now_ms),
        ];
        let n = self.write(SQL, args).await?;
        Ok(n == 1)
    }

    /// Payments whose outcome the chain must tell: pending settlements, and reservations the
    /// process that held them left when it stopped: reserved before `reserved_before_ms` (a
    /// handler never runs that long), or held by a process last seen before
    /// `holder_gone_before_ms`. Oldest first.
    ///
    /// Paged by `after`, the last (`updated_at`, `id`) of the previous page: payments the chain
    /// cannot decide yet keep their place at the front, and must not hide the ones behind them.
    pub async fn payments_to_reconcile(
        &self,
        reserved_before_ms: i64,
        holder_gone_before_ms: i64,
        after: Option<(i64, &str)>,
        limit: u32,
    ) -> Result<Vec<PaymentRecord>, StoreError> {
        const SQL: &str = select_payments!(
            "WHERE (status = 'pending' OR (status = 'reserved' AND (updated_at < $1 OR EXISTS \
             (SELECT 1 FROM paywall_instances i WHERE i.id = payments.holder AND i.seen_at < $5)))) \
             AND (updated_at > $2 OR (updated_at = $2 AND id > $3)) ORDER BY updated_at, id LIMIT $4"
        );
        let (after_at, after_id) = after.unwrap_or((i64::MIN, ""));
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL)
            .bind(reserved_before_ms)
            .bind(after_at)
            .bind(after_id)
            .bind(i64::from(limit))
            .bind(holder_gone_before_ms)
            .fetch_all(p)
            .await)?)
    }

    /// Records that process `id` is alive at `now_ms`; processes not seen for a day are
    /// forgotten.
    pub async fn beat_instance(&self, id: &str, now_ms: i64) -> Result<(), StoreError> {
        const BEAT: &str = "INSERT INTO paywall_instances (id, seen_at) VALUES ($1, $2) \
                            ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at";
        const FORGET: &str = "DELETE FROM paywall_instances WHERE seen_at < $1";
        self.write(BEAT, vec![Arg::Text(id.to_owned()), Arg::Int(now_ms)]).await?;
        self.write(FORGET, vec![Arg::Int(now_ms - 86_400_000)]).await?;
        Ok(())
    }

    /// Whether process `id` has not been seen since `since_ms` (stopped, or never seen).
    pub async fn instance_stopped(&self, id: &str, since_ms: i64) -> Result<bool, StoreError> {
        const SQL: &str = "SELECT COUNT(*) FROM paywall_instances WHERE id = $1 AND seen_at >= $2";
        let seen: i64 = with_pool!(&self.db, |p| sqlx::query_scalar(SQL).bind(id).bind(since_ms).fetch_one(p).await)?;
        Ok(seen == 0)
    }

    /// Records what the chain says of a pending or abandoned payment: `settled` (with
    /// [`ANSWER_WITHHELD`], since its answer was not delivered) or `failed`. Only a payment
    /// still in `from` moves, so two reconcilers cannot both decide. Returns whether it moved.
    pub async fn resolve_payment(
        &self,
        id: &str,
        from: PaymentStatus,
        to: PaymentStatus,
        tx_hash: Option<&str>,
        error: Option<&str>,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE payments SET status = $3, tx_hash = COALESCE($4, tx_hash), error = $5, \
                           updated_at = $6 WHERE id = $1 AND status = $2";
        if !matches!(from, PaymentStatus::Pending | PaymentStatus::Reserved)
            || !matches!(to, PaymentStatus::Settled | PaymentStatus::Failed)
        {
            return Err(StoreError::OutOfRange("payment resolution"));
        }
        let args = vec![
            Arg::Text(id.to_owned()),
            Arg::Text(from.as_str().to_owned()),
            Arg::Text(to.as_str().to_owned()),
            Arg::OptText(tx_hash.map(str::to_owned)),
            Arg::OptText(error.map(str::to_owned)),
            Arg::Int(now_ms),
        ];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Takes the one late answer a payment settled after withholding is owed. Returns true
    /// exactly once per such payment, however many retries race for it.
    pub async fn claim_withheld_answer(&self, id: &str, now_ms: i64) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE payments SET error = NULL, updated_at = $2 \
                           WHERE id = $1 AND status = 'settled' AND error = 'answer_withheld'";
        Ok(self.write(SQL, vec![Arg::Text(id.to_owned()), Arg::Int(now_ms)]).await? == 1)
    }

    /// Gives back a claimed late answer whose handler failed, so it stays owed.
    pub async fn restore_withheld_answer(&self, id: &str, now_ms: i64) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE payments SET error = 'answer_withheld', updated_at = $2 \
                           WHERE id = $1 AND status = 'settled' AND error IS NULL";
        Ok(self.write(SQL, vec![Arg::Text(id.to_owned()), Arg::Int(now_ms)]).await? == 1)
    }

    /// The payment of one authorization, if it was ever reserved.
    pub async fn payment_by_key(
        &self,
        network: &str,
        payer: &str,
        nonce: &str,
    ) -> Result<Option<PaymentRecord>, StoreError> {
        const SQL: &str = select_payments!("WHERE network = $1 AND payer = $2 AND nonce = $3");
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(network).bind(payer).bind(nonce).fetch_optional(p).await)?)
    }

    /// One payment by id.
    pub async fn payment(&self, id: &str) -> Result<Option<PaymentRecord>, StoreError> {
        const SQL: &str = select_payments!("WHERE id = $1");
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(id).fetch_optional(p).await)?)
    }

    /// A payer's payments, newest first.
    pub async fn payments_by_payer(&self, payer: &str, limit: u32) -> Result<Vec<PaymentRecord>, StoreError> {
        const SQL: &str = select_payments!("WHERE payer = $1 ORDER BY created_at DESC, id DESC LIMIT $2");
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(payer).bind(i64::from(limit)).fetch_all(p).await)?)
    }

    /// Successful paid calls of a payer since `since_ms` inclusive, for volume discounts,
    /// leaving out the payment `except` when one is named (the call being priced), counted up
    /// to `at_most`: a tier is decided by the first thousand, and a charge must not count a
    /// heavy payer's every call. Counts `settled` and also `unsettled` (served in verify-only
    /// mode): both are calls the payer paid for and got an answer to.
    pub async fn count_settled_payments_since(
        &self,
        payer: &str,
        since_ms: i64,
        except: Option<&str>,
        at_most: u64,
    ) -> Result<u64, StoreError> {
        const SQL: &str = "SELECT COUNT(*) FROM (SELECT 1 FROM payments WHERE payer = $1 AND created_at >= $2 \
                           AND status IN ('settled', 'unsettled') AND ($3 IS NULL OR id <> $3) LIMIT $4) AS counted";
        let n: i64 = with_pool!(&self.db, |p| sqlx::query_scalar(SQL)
            .bind(payer)
            .bind(since_ms)
            .bind(except)
            .bind(i64::try_from(at_most).unwrap_or(i64::MAX))
            .fetch_one(p)
            .await)?;
        to_u64(n, "count")
    }
}
