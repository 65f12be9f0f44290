//! Sessions of the console: a browser's signed-in state, kept server-side so a sign-out or a
//! revoked key ends it at once, on every replica.

use crate::batch::Arg;
use crate::{Store, StoreError, with_pool};

/// A UTC day, ms.
const DAY_MS: i64 = 86_400_000;

/// A live console session.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ConsoleSession {
    /// The account signed in.
    pub account_id: String,
    /// The API key it signed in with; `None` for a wallet sign-in.
    pub key_id: Option<String>,
    /// The token every form of this session must carry.
    pub csrf: String,
    /// When it ends, unix ms.
    pub expires_at: i64,
}

/// A session about to be stored.
#[derive(Debug, Clone)]
pub struct NewConsoleSession<'a> {
    /// SHA-256 of the browser's secret, hex.
    pub hash: &'a str,
    /// The account signed in.
    pub account_id: &'a str,
    /// The API key it signed in with, if any.
    pub key_id: Option<&'a str>,
    /// Its CSRF token.
    pub csrf: &'a str,
    /// Now, unix ms.
    pub now_ms: i64,
    /// When it ends, unix ms.
    pub expires_at: i64,
}

impl Store {
    /// Stores a new session. Expired sessions are swept in the same call, so the table holds
    /// only live ones (and those of the last moments).
    pub async fn create_console_session(&self, session: &NewConsoleSession<'_>) -> Result<(), StoreError> {
        self.write("DELETE FROM console_sessions WHERE expires_at <= $1", vec![Arg::Int(session.now_ms)]).await?;
        const SQL: &str = "INSERT INTO console_sessions (hash, account_id, key_id, csrf, created_at, expires_at) \
                           VALUES ($1, $2, $3, $4, $5, $6)";
        let args = vec![
            Arg::Text(session.hash.to_owned()),
            Arg::Text(session.account_id.to_owned()),
            Arg::OptText(session.key_id.map(str::to_owned)),
            Arg::Text(session.csrf.to_owned()),
            Arg::Int(session.now_ms),
            Arg::Int(session.expires_at),
        ];
        self.write(SQL, args).await.map(|_| ())
    }

    /// The live session whose secret hashes to `hash`.
    pub async fn console_session(&self, hash: &str, now_ms: i64) -> Result<Option<ConsoleSession>, StoreError> {
        const SQL: &str =
            "SELECT account_id, key_id, csrf, expires_at FROM console_sessions WHERE hash = $1 AND expires_at > $2";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(hash).bind(now_ms).fetch_optional(p).await)?)
    }

    /// Ends the session whose secret hashes to `hash`. Returns whether there was one.
    pub async fn end_console_session(&self, hash: &str) -> Result<bool, StoreError> {
        const SQL: &str = "DELETE FROM console_sessions WHERE hash = $1";
        Ok(self.write(SQL, vec![Arg::Text(hash.to_owned())]).await? == 1)
    }
}

/// What an account spent on one day, one product, one rail.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DailySpend {
    /// UTC days since the window's first (0 is the first).
    pub day: i64,
    /// `credits` or `x402`.
    pub rail: String,
    /// `data`, `llm` or `sandbox`.
    pub product: String,
    /// USDC atomic units: spent less refunded and rebated.
    pub amount: i64,
}

impl Store {
    /// What `account_id` spent each UTC day from the day of `since_ms` on, by product and rail:
    /// its credits (calls, the LLM proxy, its sandbox; less refunds and rebates) and its
    /// wallet's settled x402 payments, except those for `purchase_route` (credit purchases:
    /// they are spent again as credits). Read from the `daily_spend` roll-up, so the cost is
    /// the routes used per day, not the calls made.
    pub async fn daily_spend(
        &self,
        account_id: &str,
        wallet: Option<&str>,
        purchase_route: &str,
        since_ms: i64,
    ) -> Result<Vec<DailySpend>, StoreError> {
        const SQL: &str = "SELECT day - $2 AS day, rail, \
                 CASE WHEN rail = 'x402' THEN 'data' WHEN route_id = $3 THEN 'sandbox' \
                      WHEN kind = 'llm' THEN 'llm' ELSE 'data' END AS product, \
                 CAST(SUM(amount) AS BIGINT) AS amount \
               FROM daily_spend \
               WHERE ((owner = $1 AND rail = 'credits') OR (owner = $4 AND rail = 'x402' AND route_id <> $5)) \
                 AND day >= $2 \
               GROUP BY 1, 2, 3 ORDER BY 1, 2, 3";
        let rows = with_pool!(&self.db, |p| sqlx::query_as(SQL)
            .bind(account_id)
            .bind(since_ms.div_euclid(DAY_MS))
            .bind(crate::agentbox::GATEWAY_PRODUCT)
            .bind(wallet.unwrap_or(""))
            .bind(purchase_route)
            .fetch_all(p)
            .await)?;
        Ok(rows)
    }
}

/// One paid call of an account, on either rail, as the console lists it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CallRow {
    /// The payment's id (x402) or the ledger entry's (credits).
    pub id: String,
    /// The route (or product) paid for.
    pub route_id: Option<String>,
    /// `x402` or `credits`.
    pub rail: String,
    /// x402: the payment's status; credits: `charged` or `refunded`.
    pub status: String,
    /// What it cost, USDC atomic units.
    pub amount: i64,
    /// The network paid on (x402).
    pub network: Option<String>,
    /// The settling transaction (x402).
    pub tx_hash: Option<String>,
    /// Why it failed (x402).
    pub error: Option<String>,
    /// The paying wallet (x402).
    pub payer: Option<String>,
    /// When, unix ms.
    pub created_at: i64,
    /// From the payment's reservation to its end, ms (x402).
    pub latency_ms: Option<i64>,
    /// The API key it came with (credits; none for a sign-in token or the LLM token).
    pub key_id: Option<String>,
    /// Credits given back to the paying wallet's account for it (x402, a volume rebate).
    pub rebate: Option<i64>,
}

/// Which calls to list; an empty field matches every value.
#[derive(Debug, Clone, Default)]
pub struct CallFilter<'a> {
    /// `x402` or `credits`.
    pub rail: &'a str,
    /// A route id.
    pub route: &'a str,
    /// A status.
    pub status: &'a str,
    /// Only calls before this one (its time and id): the next page's start.
    pub before: Option<(i64, &'a str)>,
}

/// The columns of a call, from the payments (x402) and from the ledger (credits).
macro_rules! paid_calls {
    () => {
        "SELECT id, route_id, 'x402' AS rail, status, amount, network, tx_hash, error, payer, created_at, \
         updated_at - created_at AS latency_ms, CAST(NULL AS TEXT) AS key_id, \
         (SELECT CAST(r.delta AS BIGINT) FROM credit_ledger r WHERE r.reference = 'rebate:' || payments.id) AS rebate \
         FROM payments"
    };
}
macro_rules! billed_calls {
    () => {
        "SELECT id, route_id, 'credits' AS rail, \
         CASE WHEN EXISTS (SELECT 1 FROM credit_ledger r WHERE r.reference = 'refund:' || c.id) \
              THEN 'refunded' ELSE 'charged' END AS status, \
         -delta AS amount, CAST(NULL AS TEXT) AS network, CAST(NULL AS TEXT) AS tx_hash, \
         CAST(NULL AS TEXT) AS error, CAST(NULL AS TEXT) AS payer, created_at, \
         CAST(NULL AS BIGINT) AS latency_ms, key_id, CAST(NULL AS BIGINT) AS rebate FROM credit_ledger c"
    };
}

impl Store {
    /// `account_id`'s paid calls, newest first, at most `limit`: those billed to its credits and
    /// those its `wallet` paid over x402 (payments for `purchase_route`, credit purchases, aside),
    /// as `filter` asks.
    pub async fn account_calls(
        &self,
        account_id: &str,
        wallet: Option<&str>,
        purchase_route: &str,
        filter: &CallFilter<'_>,
        limit: u32,
    ) -> Result<Vec<CallRow>, StoreError> {
        const SQL: &str = concat!(
            "SELECT * FROM (SELECT * FROM (",
            paid_calls!(),
            " WHERE payer = $2 AND route_id <> $3 AND $4 IN ('', 'x402') AND ($5 = '' OR route_id = $5) \
               AND ($6 = '' OR status = $6) AND (created_at < $7 OR (created_at = $7 AND id < $8)) \
             ORDER BY created_at DESC, id DESC LIMIT $9) paid \
             UNION ALL SELECT * FROM (SELECT * FROM (",
            billed_calls!(),
            " WHERE account_id = $1 AND kind IN ('call', 'llm') AND $4 IN ('', 'credits') \
               AND ($5 = '' OR route_id = $5) AND (created_at < $7 OR (created_at = $7 AND id < $8))) billed \
             WHERE ($6 = '' OR status = $6) ORDER BY created_at DESC, id DESC LIMIT $9) charged) calls \
             ORDER BY created_at DESC, id DESC LIMIT $9"
        );
        // Without a cursor every call is before the end of time.
        let (before_at, before_id) = filter.before.unwrap_or((i64::MAX, ""));
        let rows = with_pool!(&self.db, |p| sqlx::query_as(SQL)
            .bind(account_id)
            .bind(wallet.unwrap_or(""))
            .bind(purchase_route)
            .bind(filter.rail)
            .bind(filter.route)
            .bind(filter.status)
            .bind(before_at)
            .bind(before_id)
            .bind(i64::from(limit))
            .fetch_all(p)
            .await)?;
        Ok(rows)
    }

    /// One paid call of `account_id` or of its `wallet`, by id: `None` for a call of anyone
    /// else, as for one that does not exist.
    pub async fn account_call(
        &self,
        account_id: &str,
        wallet: Option<&str>,
        purchase_route: &str,
        id: &str,
    ) -> Result<Option<CallRow>, StoreError> {
        const SQL: &str = concat!(
            paid_calls!(),
            " WHERE id = $4 AND payer = $2 AND route_id <> $3 UNION ALL ",
            billed_calls!(),
            " WHERE id = $4 AND account_id = $1 AND kind IN ('call', 'llm')"
        );
        let found = with_pool!(&self.db, |p| sqlx::query_as(SQL)
            .bind(account_id)
            .bind(wallet.unwrap_or(""))
            .bind(purchase_route)
            .bind(id)
            .fetch_optional(p)
            .await)?;
        Ok(found)
    }
}

impl Store {
    /// What seller agent `agent_id` earned each day from `since_ms` on (net of the fee): the
    /// days since then, and the amount, USDC atomic units.
    pub async fn agent_daily_revenue(&self, agent_id: &str, since_ms: i64) -> Result<Vec<(i64, i64)>, StoreError> {
        const SQL: &str = "SELECT (created_at - $2) / 86400000 AS day, CAST(SUM(net) AS BIGINT) AS amount \
                           FROM seller_calls WHERE agent_id = $1 AND state = 'earned' AND created_at >= $2 \
                           GROUP BY (created_at - $2) / 86400000 ORDER BY day";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(agent_id).bind(since_ms).fetch_all(p).await)?)
    }
}
