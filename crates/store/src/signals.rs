//! Snapshots of the signal engine: written once per refresh by the replica that runs the
//! engine, read by every replica that serves the signal routes, and kept for the track record.

use crate::batch::Arg;
use crate::{Store, StoreError, with_pool};

/// One stored snapshot.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredSnapshot {
    /// When it was computed, unix ms.
    pub generated_at: i64,
    /// The snapshot, JSON text.
    pub body: String,
}

impl Store {
    /// Stores a snapshot; a second one at the same instant (a replica racing a takeover) is
    /// ignored, so the first one stands.
    pub async fn put_signal_snapshot(&self, generated_at: i64, body: &str) -> Result<(), StoreError> {
        const SQL: &str =
            "INSERT INTO signal_snapshots (generated_at, body) VALUES ($1, $2) ON CONFLICT (generated_at) DO NOTHING";
        self.write(SQL, vec![Arg::Int(generated_at), Arg::Text(body.to_owned())]).await?;
        Ok(())
    }

    /// The newest snapshot, if any.
    pub async fn latest_signal_snapshot(&self) -> Result<Option<StoredSnapshot>, StoreError> {
        const SQL: &str = "SELECT generated_at, body FROM signal_snapshots ORDER BY generated_at DESC LIMIT 1";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).fetch_optional(p).await)?)
    }

    /// When the newest snapshot was computed, if any: what a replica checks before reading a
    /// snapshot body it may already hold.
    pub async fn latest_signal_snapshot_at(&self) -> Result<Option<i64>, StoreError> {
        const SQL: &str = "SELECT MAX(generated_at) FROM signal_snapshots";
        Ok(with_pool!(&self.db, |p| sqlx::query_scalar(SQL).fetch_one(p).await)?)
    }

    /// The newest `limit` snapshots at or after `since` (unix ms), oldest first: the history
    /// the track record is computed from.
    pub async fn signal_snapshots_since(&self, since: i64, limit: u32) -> Result<Vec<StoredSnapshot>, StoreError> {
        const SQL: &str = "SELECT generated_at, body FROM (SELECT generated_at, body FROM signal_snapshots \
             WHERE generated_at >= $1 ORDER BY generated_at DESC LIMIT $2) recent ORDER BY generated_at";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(since).bind(i64::from(limit)).fetch_all(p).await)?)
    }
}

/// The right to run the signal engine, held while this value lives. On PostgreSQL it is a
/// session advisory lock on a connection kept out of the pool: if the process dies, the
/// connection closes, the lock is released and another replica takes over at its next try.
/// On SQLite there is one process, which always leads.
pub struct EngineLease {
    _conn: Option<sqlx::PgConnection>,
}

impl std::fmt::Debug for EngineLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineLease").field("postgres", &self._conn.is_some()).finish()
    }
}

/// The advisory-lock key of the signal engine (`svc_sig` in ASCII).
const ENGINE_LOCK_KEY: i64 = 0x0073_7663_5f73_6967;

impl Store {
    /// Tries to become the replica that runs the signal engine: a lease when no other
    /// replica holds it, `None` when one does.
    pub async fn try_lead_signal_engine(&self) -> Result<Option<EngineLease>, StoreError> {
        match &self.db {
            crate::Db::Sqlite { .. } => Ok(Some(EngineLease { _conn: None })),
            crate::Db::Postgres(pool) => {
                let mut conn = pool.acquire().await?;
                let won: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
                    .bind(ENGINE_LOCK_KEY)
                    .fetch_one(&mut *conn)
                    .await?;
                // Detached, so dropping the lease closes the session (and its lock) instead of handing
                // a locked connection back to the pool.
                Ok(won.then(|| EngineLease { _conn: Some(conn.detach()) }))
            }
        }
    }
}
