//! The payment ledger. The unique key on (network, payer, nonce) is what makes a signed
//! authorization spendable once: reserving inserts the row before the handler runs, so a
//! second request with the same authorization, concurrent or later, on any replica, finds it.

use serde::{Deserialize, Serialize};

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
}

impl PaymentStatus {
    fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::Reserved => "reserved",
            PaymentStatus::Settled => "settled",
            PaymentStatus::Unsettled => "unsettled",
            PaymentStatus::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Result<Self, StoreError> {
        Ok(match s {
            "reserved" => PaymentStatus::Reserved,
            "settled" => PaymentStatus::Settled,
            "unsettled" => PaymentStatus::Unsettled,
            "failed" => PaymentStatus::Failed,
            _ => return Err(StoreError::OutOfRange("payment status")),
        })
    }
}

/// A payment about to be reserved.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Amount in atomic units.
    pub amount: u64,
    /// Token contract or mint.
    pub asset: String,
    /// Recipient.
    pub pay_to: String,
    /// When, unix ms.
    pub now_ms: i64,
}

/// A stored payment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Amount in atomic units.
    pub amount: u64,
    /// Token.
    pub asset: String,
    /// Recipient.
    pub pay_to: String,
    /// Status.
    pub status: PaymentStatus,
    /// Settlement transaction, once settled.
    pub tx_hash: Option<String>,
    /// Why settlement failed, if it did.
    pub error: Option<String>,
    /// Created, unix ms.
    pub created_at: i64,
    /// Last change, unix ms.
    pub updated_at: i64,
}

/// The outcome of a reservation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reservation {
    /// This request holds the authorization now.
    Reserved,
    /// The authorization was already used (or is in use); here is the earlier payment.
    Duplicate(Box<PaymentRecord>),
}

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    route_id: String,
    network: String,
    payer: String,
    nonce: String,
    amount: i64,
    asset: String,
    pay_to: String,
    status: String,
    tx_hash: Option<String>,
    error: Option<String>,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<Row> for PaymentRecord {
    type Error = StoreError;

    fn try_from(r: Row) -> Result<Self, StoreError> {
        Ok(PaymentRecord {
            amount: to_u64(r.amount, "payment amount")?,
            status: PaymentStatus::parse(&r.status)?,
            id: r.id,
            route_id: r.route_id,
            network: r.network,
            payer: r.payer,
            nonce: r.nonce,
            asset: r.asset,
            pay_to: r.pay_to,
            tx_hash: r.tx_hash,
            error: r.error,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

const COLUMNS: &str =
    "id, route_id, network, payer, nonce, amount, asset, pay_to, status, tx_hash, error, created_at, updated_at";

impl Store {
    /// Reserves an authorization: inserts the payment unless (network, payer, nonce) exists.
    pub async fn reserve_payment(&self, new: &NewPayment) -> Result<Reservation, StoreError> {
        const SQL: &str = "INSERT INTO payments (id, route_id, network, payer, nonce, amount, asset, pay_to, status, \
                           created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'reserved', $9, $9) \
                           ON CONFLICT (network, payer, nonce) DO NOTHING";
        let amount = to_i64(new.amount, "payment amount")?;
        let inserted = with_pool!(&self.db, |p| sqlx::query(SQL)
            .bind(&new.id)
            .bind(&new.route_id)
            .bind(&new.network)
            .bind(&new.payer)
            .bind(&new.nonce)
            .bind(amount)
            .bind(&new.asset)
            .bind(&new.pay_to)
            .bind(new.now_ms)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if inserted == 1 {
            return Ok(Reservation::Reserved);
        }
        let sql = format!("SELECT {COLUMNS} FROM payments WHERE network = $1 AND payer = $2 AND nonce = $3");
        let row: Row = with_pool!(&self.db, |p| sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
            .bind(&new.network)
            .bind(&new.payer)
            .bind(&new.nonce)
            .fetch_one(p)
            .await)?;
        Ok(Reservation::Duplicate(Box::new(row.try_into()?)))
    }

    /// Frees a reserved authorization after the handler failed, so the client can retry the
    /// same signed payment. Settled or failed payments are never released. Returns whether a
    /// row was released.
    pub async fn release_payment(&self, id: &str) -> Result<bool, StoreError> {
        const SQL: &str = "DELETE FROM payments WHERE id = $1 AND status = 'reserved'";
        let n = with_pool!(&self.db, |p| sqlx::query(SQL).bind(id).execute(p).await.map(|r| r.rows_affected()))?;
        Ok(n == 1)
    }

    /// Moves a reserved payment to its final status. Returns false if it was not reserved
    /// (already finished, or released), so a payment is finished exactly once.
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
        let n = with_pool!(&self.db, |p| sqlx::query(SQL)
            .bind(id)
            .bind(status.as_str())
            .bind(tx_hash)
            .bind(error)
            .bind(now_ms)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(n == 1)
    }

    /// One payment by id.
    pub async fn payment(&self, id: &str) -> Result<Option<PaymentRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM payments WHERE id = $1");
        let row: Option<Row> = with_pool!(&self.db, |p| sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
            .bind(id)
            .fetch_optional(p)
            .await)?;
        row.map(TryInto::try_into).transpose()
    }

    /// A payer's payments, newest first.
    pub async fn payments_by_payer(&self, payer: &str, limit: u32) -> Result<Vec<PaymentRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM payments WHERE payer = $1 ORDER BY created_at DESC, id DESC LIMIT $2");
        let rows: Vec<Row> = with_pool!(&self.db, |p| sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
            .bind(payer)
            .bind(i64::from(limit))
            .fetch_all(p)
            .await)?;
        rows.into_iter().map(TryInto::try_into).collect()
    }

    /// Successful paid calls of a payer since `since_ms` (settled, or served unsettled in
    /// verify-only mode), for volume discounts.
    pub async fn count_paid_calls_since(&self, payer: &str, since_ms: i64) -> Result<u64, StoreError> {
        const SQL: &str = "SELECT COUNT(*) FROM payments WHERE payer = $1 AND created_at >= $2 \
                           AND status IN ('settled', 'unsettled')";
        let n: i64 = with_pool!(&self.db, |p| sqlx::query_scalar(SQL).bind(payer).bind(since_ms).fetch_one(p).await)?;
        to_u64(n, "count")
    }
}
