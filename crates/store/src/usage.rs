//! Served calls, one row each: the trailing-window counts behind volume discounts and usage
//! reports.

use serde::{Deserialize, Serialize};

use crate::batch::Arg;
use crate::{Store, StoreError, to_i64, to_u64, with_pool};

/// One served call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct Usage {
    /// Row id (the caller makes it).
    pub id: String,
    /// Who: `wallet:0x…`, `account:<id>` or `ip:<addr>`.
    pub caller: String,
    /// Catalogue route id.
    pub route_id: String,
    /// `x402`, `credits`, `preview` or `free`.
    pub channel: String,
    /// Amount charged, atomic units.
    #[sqlx(try_from = "i64")]
    pub amount: u64,
    /// When, unix ms.
    pub at_ms: i64,
}

impl Store {
    /// Records a served call.
    pub async fn record_usage(&self, usage: &Usage) -> Result<(), StoreError> {
        const SQL: &str = "INSERT INTO request_usage (id, caller, route_id, channel, amount, at_ms) \
                           VALUES ($1, $2, $3, $4, $5, $6)";
        let amount = to_i64(usage.amount, "usage amount")?;
        let args = vec![
            Arg::Text(usage.id.clone()),
            Arg::Text(usage.caller.clone()),
            Arg::Text(usage.route_id.clone()),
            Arg::Text(usage.channel.clone()),
            Arg::Int(amount),
            Arg::Int(usage.at_ms),
        ];
        self.write(SQL, args).await?;
        Ok(())
    }

    /// Calls by `caller` since `since_ms` inclusive.
    pub async fn count_usage_since(&self, caller: &str, since_ms: i64) -> Result<u64, StoreError> {
        const SQL: &str = "SELECT COUNT(*) FROM request_usage WHERE caller = $1 AND at_ms >= $2";
        let n: i64 = with_pool!(&self.db, |p| sqlx::query_scalar(SQL).bind(caller).bind(since_ms).fetch_one(p).await)?;
        to_u64(n, "count")
    }

    /// Amount spent by `caller` since `since_ms` inclusive, atomic units. `CAST` because
    /// PostgreSQL's `SUM(bigint)` is `numeric`; `COALESCE` because `SUM` of no rows is `NULL`.
    pub async fn spend_since(&self, caller: &str, since_ms: i64) -> Result<u64, StoreError> {
        const SQL: &str =
            "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM request_usage WHERE caller = $1 AND at_ms >= $2";
        let n: i64 = with_pool!(&self.db, |p| sqlx::query_scalar(SQL).bind(caller).bind(since_ms).fetch_one(p).await)?;
        to_u64(n, "spend")
    }
}
