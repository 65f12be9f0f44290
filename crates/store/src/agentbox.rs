//! Agent sandboxes' records: one row per gateway an account started, moved through its
//! lifecycle, and the credits its running time burnt.
//!
//! Every move is a compare-and-set on the row's state, so a stop request, a crash seen by the
//! monitor and a start still under way cannot overwrite one another: whichever moves first
//! wins, and the other sees it did not. Billing is a ledger debit per period under the
//! reference `agentbox:<gateway>:<period>`, so a period billed twice (a restart, a replica)
//! is taken once.

use serde::{Deserialize, Serialize};

use crate::accounts::NewDebit;
use crate::batch::Arg;
use crate::{Debit, Store, StoreError, to_i64, to_u64, with_pool};

/// The states a gateway ends in; every other state is active.
pub const ENDED_STATES: [&str; 2] = ["stopped", "failed"];

/// What the ledger records gateway time as.
pub const GATEWAY_PRODUCT: &str = "agentbox.gateway";

/// A gateway about to be provisioned.
#[derive(Debug, Clone)]
pub struct NewGateway<'a> {
    /// Gateway id (the caller makes it, unguessable).
    pub id: &'a str,
    /// The owning account.
    pub account_id: &'a str,
    /// The template it runs.
    pub template: &'a str,
    /// The machine whose sandbox it is.
    pub node: &'a str,
    /// The backend that runs it (`local`, `remote`).
    pub backend: &'a str,
    /// The memory it reserves, MiB.
    pub memory_mb: u64,
    /// When, unix ms.
    pub now_ms: i64,
}

/// A gateway as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayRecord {
    /// Gateway id.
    pub id: String,
    /// The owning account.
    pub account_id: String,
    /// The template it runs.
    pub template: String,
    /// Its lifecycle state.
    pub state: String,
    /// Why it stopped or failed, when it did.
    pub reason: Option<String>,
    /// The machine whose sandbox it is.
    pub node: String,
    /// The backend that runs it.
    pub backend: String,
    /// The memory it reserves, MiB.
    pub memory_mb: u64,
    /// The API key minted for it, revoked when it ends.
    pub key_id: Option<String>,
    /// The sandbox's process on its node, while it runs there.
    pub pid: Option<i64>,
    /// When it was asked for, unix ms.
    pub created_at: i64,
    /// When it became healthy, unix ms.
    pub started_at: Option<i64>,
    /// When its state last moved, unix ms.
    pub updated_at: i64,
    /// When it stopped or failed, unix ms.
    pub ended_at: Option<i64>,
}

impl GatewayRecord {
    /// Whether it has not ended.
    pub fn is_active(&self) -> bool {
        !ENDED_STATES.contains(&self.state.as_str())
    }
}

type GatewayRow = (
    String,
    String,
    String,
    String,
    Option<String>,
    String,
    String,
    i64,
    Option<String>,
    Option<i64>,
    i64,
    Option<i64>,
    i64,
    Option<i64>,
);

/// `SELECT` of every gateway column, then `$rest`.
macro_rules! select_gateway {
    ($rest:literal) => {
        concat!(
            "SELECT id, account_id, template, state, reason, node, backend, memory_mb, key_id, pid, created_at, \
             started_at, updated_at, ended_at FROM agentbox_gateways ",
            $rest
        )
    };
}

fn record(row: GatewayRow) -> Result<GatewayRecord, StoreError> {
    let (id, account_id, template, state, reason, node, backend, memory, key_id, pid, created, started, updated, ended) =
        row;
    Ok(GatewayRecord {
        id,
        account_id,
        template,
        state,
        reason,
        node,
        backend,
        memory_mb: to_u64(memory, "gateway memory")?,
        key_id,
        pid,
        created_at: created,
        started_at: started,
        updated_at: updated,
        ended_at: ended,
    })
}

/// How asking for a new gateway ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewayCreated {
    /// Recorded, in `provisioning`.
    Created,
    /// The account already has an active gateway: this one.
    Active(Box<GatewayRecord>),
}

impl Store {
    /// Records a new gateway in `provisioning`, unless the account has an active one.
    pub async fn create_gateway(&self, gateway: &NewGateway<'_>) -> Result<GatewayCreated, StoreError> {
        const SQL: &str = "INSERT INTO agentbox_gateways (id, account_id, template, state, node, backend, memory_mb, \
                           created_at, updated_at) VALUES ($1, $2, $3, 'provisioning', $4, $5, $6, $7, $7)";
        let args = vec![
            Arg::Text(gateway.id.to_owned()),
            Arg::Text(gateway.account_id.to_owned()),
            Arg::Text(gateway.template.to_owned()),
            Arg::Text(gateway.node.to_owned()),
            Arg::Text(gateway.backend.to_owned()),
            Arg::Int(to_i64(gateway.memory_mb, "gateway memory")?),
            Arg::Int(gateway.now_ms),
        ];
        match self.write(SQL, args).await {
            Ok(_) => Ok(GatewayCreated::Created),
            Err(StoreError::Database(sqlx::Error::Database(e)))
                if e.kind() == sqlx::error::ErrorKind::UniqueViolation =>
            {
                match self.active_gateway(gateway.account_id).await? {
                    Some(active) => Ok(GatewayCreated::Active(Box::new(active))),
                    // It ended between the refusal and this read: the caller may try again.
                    None => Err(StoreError::Contended("the account's gateway")),
                }
            }
            Err(err) => Err(err),
        }
    }

    /// A gateway by id.
    pub async fn gateway(&self, id: &str) -> Result<Option<GatewayRecord>, StoreError> {
        const SQL: &str = select_gateway!("WHERE id = $1");
        let row: Option<GatewayRow> = with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(id).fetch_optional(p).await)?;
        row.map(record).transpose()
    }

    /// The account's active gateway, if any.
    pub async fn active_gateway(&self, account_id: &str) -> Result<Option<GatewayRecord>, StoreError> {
        const SQL: &str = select_gateway!("WHERE account_id = $1 AND state NOT IN ('stopped', 'failed')");
        let row: Option<GatewayRow> =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(account_id).fetch_optional(p).await)?;
        row.map(record).transpose()
    }

    /// The account's newest gateway, active or ended.
    pub async fn latest_gateway(&self, account_id: &str) -> Result<Option<GatewayRecord>, StoreError> {
        const SQL: &str = select_gateway!("WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1");
        let row: Option<GatewayRow> =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(account_id).fetch_optional(p).await)?;
        row.map(record).transpose()
    }

    /// The active gateways whose sandboxes run on `node`.
    pub async fn active_gateways_on(&self, node: &str) -> Result<Vec<GatewayRecord>, StoreError> {
        const SQL: &str = select_gateway!("WHERE node = $1 AND state NOT IN ('stopped', 'failed') ORDER BY created_at");
        let rows: Vec<GatewayRow> = with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(node).fetch_all(p).await)?;
        rows.into_iter().map(record).collect()
    }

    /// The active gateways on every node, oldest first, at most `limit`: what an operator sees.
    pub async fn active_gateways(&self, limit: u32) -> Result<Vec<GatewayRecord>, StoreError> {
        const SQL: &str = select_gateway!("WHERE state NOT IN ('stopped', 'failed') ORDER BY created_at LIMIT $1");
        let rows: Vec<GatewayRow> =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(i64::from(limit)).fetch_all(p).await)?;
        rows.into_iter().map(record).collect()
    }

    /// The memory the active gateways on `node` reserve, MiB.
    pub async fn reserved_gateway_memory(&self, node: &str) -> Result<u64, StoreError> {
        const SQL: &str = "SELECT CAST(COALESCE(SUM(memory_mb), 0) AS BIGINT) FROM agentbox_gateways \
                           WHERE node = $1 AND state NOT IN ('stopped', 'failed')";
        let sum: i64 = with_pool!(&self.db, |p| sqlx::query_scalar(SQL).bind(node).fetch_one(p).await)?;
        to_u64(sum, "reserved memory")
    }

    /// Moves a gateway from `from` to the active state `to`; false when it was not in `from`
    /// (a stop or a failure came first).
    pub async fn advance_gateway(&self, id: &str, from: &str, to: &str, now_ms: i64) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE agentbox_gateways SET state = $3, updated_at = $4, \
                           started_at = CASE WHEN $3 = 'running' THEN $4 ELSE started_at END \
                           WHERE id = $1 AND state = $2";
        let args =
            vec![Arg::Text(id.to_owned()), Arg::Text(from.to_owned()), Arg::Text(to.to_owned()), Arg::Int(now_ms)];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Asks an active gateway to stop, recording why; false when it had ended or was already
    /// stopping (the first reason stands).
    pub async fn request_gateway_stop(&self, id: &str, reason: &str, now_ms: i64) -> Result<bool, StoreError> {
        const SQL: &str = "UPDATE agentbox_gateways SET state = 'stopping', reason = $2, updated_at = $3 \
                           WHERE id = $1 AND state NOT IN ('stopping', 'stopped', 'failed')";
        let args = vec![Arg::Text(id.to_owned()), Arg::Text(reason.to_owned()), Arg::Int(now_ms)];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Ends an active gateway as `stopped` or `failed`. A reason given replaces the recorded
    /// one; without one, the stop's reason stands. False when it had ended already.
    pub async fn end_gateway(
        &self,
        id: &str,
        state: &str,
        reason: Option<&str>,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        if !ENDED_STATES.contains(&state) {
            return Err(StoreError::OutOfRange("the state a gateway ends in"));
        }
        const SQL: &str = "UPDATE agentbox_gateways SET state = $2, reason = COALESCE($3, reason), updated_at = $4, \
                           ended_at = $4, pid = NULL WHERE id = $1 AND state NOT IN ('stopped', 'failed')";
        let args = vec![
            Arg::Text(id.to_owned()),
            Arg::Text(state.to_owned()),
            Arg::OptText(reason.map(str::to_owned)),
            Arg::Int(now_ms),
        ];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Records the API key minted for a gateway.
    pub async fn set_gateway_key(&self, id: &str, key_id: &str) -> Result<(), StoreError> {
        const SQL: &str = "UPDATE agentbox_gateways SET key_id = $2 WHERE id = $1";
        self.write(SQL, vec![Arg::Text(id.to_owned()), Arg::Text(key_id.to_owned())]).await?;
        Ok(())
    }

    /// Records the process a gateway's sandbox runs as on its node.
    pub async fn set_gateway_pid(&self, id: &str, pid: Option<i64>) -> Result<(), StoreError> {
        const SQL: &str = "UPDATE agentbox_gateways SET pid = $2 WHERE id = $1";
        self.write(SQL, vec![Arg::Text(id.to_owned()), Arg::OptInt(pid)]).await?;
        Ok(())
    }

    /// Bills period `period` of a gateway's running time: takes `amount` credits from its
    /// account unless the balance does not cover them. A period already billed is not taken
    /// again.
    pub async fn bill_gateway(
        &self,
        gateway_id: &str,
        account_id: &str,
        period: u64,
        amount: u64,
        now_ms: i64,
    ) -> Result<Debit, StoreError> {
        let reference = format!("agentbox:{gateway_id}:{period}");
        let entry = NewDebit {
            id: &format!("cl_{gateway_id}_{period}"),
            account_id,
            amount,
            kind: "call",
            route_id: GATEWAY_PRODUCT,
            reference: Some(&reference),
            key_id: None,
            now_ms,
        };
        match self.debit(&entry).await {
            Err(StoreError::Database(sqlx::Error::Database(e)))
                if e.kind() == sqlx::error::ErrorKind::UniqueViolation =>
            {
                Ok(Debit::Taken)
            }
            other => other,
        }
    }

    /// The credits a gateway's running time has taken, atomic units.
    pub async fn gateway_credits_burnt(&self, gateway_id: &str) -> Result<u64, StoreError> {
        const SQL: &str = "SELECT CAST(COALESCE(SUM(-delta), 0) AS BIGINT) FROM credit_ledger \
                           WHERE route_id = $1 AND reference LIKE $2";
        let pattern = format!("agentbox:{gateway_id}:%");
        let sum: i64 =
            with_pool!(&self.db, |p| sqlx::query_scalar(SQL).bind(GATEWAY_PRODUCT).bind(&pattern).fetch_one(p).await)?;
        to_u64(sum, "credits burnt")
    }

    /// Keys minted for gateways that have ended but are still live (a revocation that failed):
    /// `(account_id, key_id)`.
    pub async fn unrevoked_gateway_keys(&self, limit: u32) -> Result<Vec<(String, String)>, StoreError> {
        const SQL: &str = "SELECT g.account_id, g.key_id FROM agentbox_gateways g JOIN api_keys k ON k.id = g.key_id \
                           WHERE g.state IN ('stopped', 'failed') AND k.revoked_at IS NULL LIMIT $1";
        let rows: Vec<(String, String)> =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(i64::from(limit)).fetch_all(p).await)?;
        Ok(rows)
    }
}
