//! Answers of paid calls, kept so a client that lost one can fetch it again with the same
//! payment id instead of paying twice.

use crate::batch::Arg;
use crate::{Store, StoreError, with_pool};

/// A stored answer and the authorization that paid for it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PaidResponse {
    /// The client's payment id.
    pub payment_id: String,
    /// Network of the payment.
    pub network: String,
    /// Payer.
    pub payer: String,
    /// Authorization nonce: the same id with another payment is a conflict.
    pub nonce: String,
    /// SHA-256 (hex) of the payment's scheme payload, signature included: only that very
    /// payment gets the answer again.
    pub payload_digest: String,
    /// The JSON body served.
    pub body: Vec<u8>,
    /// The `PAYMENT-RESPONSE` header served.
    pub payment_response: String,
    /// When it was served, unix ms.
    pub created_at: i64,
}

impl Store {
    /// Keeps an answer under its payment id. The first answer for an id wins; returns whether
    /// this one was stored.
    pub async fn save_paid_response(&self, r: &PaidResponse) -> Result<bool, StoreError> {
        const SQL: &str = "INSERT INTO paid_responses (payment_id, network, payer, nonce, payload_digest, body, \
                           payment_response, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                           ON CONFLICT (payment_id) DO NOTHING";
        let args = vec![
            Arg::Text(r.payment_id.clone()),
            Arg::Text(r.network.clone()),
            Arg::Text(r.payer.clone()),
            Arg::Text(r.nonce.clone()),
            Arg::Text(r.payload_digest.clone()),
            Arg::Blob(r.body.clone()),
            Arg::Text(r.payment_response.clone()),
            Arg::Int(r.created_at),
        ];
        let n = self.write(SQL, args).await?;
        Ok(n == 1)
    }

    /// The answer kept under `payment_id`, if it was stored at or after `since_ms`.
    pub async fn paid_response(&self, payment_id: &str, since_ms: i64) -> Result<Option<PaidResponse>, StoreError> {
        const SQL: &str = "SELECT payment_id, network, payer, nonce, payload_digest, body, payment_response, created_at \
                           FROM paid_responses WHERE payment_id = $1 AND created_at >= $2";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(payment_id).bind(since_ms).fetch_optional(p).await)?)
    }

    /// Forgets the answer kept under `payment_id` (it reached its client); returns whether
    /// there was one.
    pub async fn forget_paid_response(&self, payment_id: &str) -> Result<bool, StoreError> {
        const SQL: &str = "DELETE FROM paid_responses WHERE payment_id = $1";
        Ok(self.write(SQL, vec![Arg::Text(payment_id.to_owned())]).await? == 1)
    }

    /// Forgets answers stored before `before_ms`; returns how many.
    pub async fn prune_paid_responses(&self, before_ms: i64) -> Result<u64, StoreError> {
        const SQL: &str = "DELETE FROM paid_responses WHERE created_at < $1";
        self.write(SQL, vec![Arg::Int(before_ms)]).await
    }
}
