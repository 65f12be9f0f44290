//! WAL checkpoints off the commit path. SQLite's automatic checkpoint runs inside the commit
//! that crosses 1,000 WAL pages, and a checkpoint syncs the database file: that commit, and
//! every payment waiting in its batch, paid for an fsync. The writer therefore never
//! checkpoints; this task does, from a connection of its own, after writes:
//!
//! - a `PASSIVE` pass copies the WAL into the database file without waiting for the writer or
//!   for readers, so commits and the copy (and its sync) overlap instead of queueing;
//! - under a steady stream of writes the WAL can never be found fully copied between two
//!   commits, so it would only grow; once it holds more than [`RESTART_AT`] pages a `RESTART`
//!   pass holds the next commit back while it copies what the passive passes left (little)
//!   and starts the WAL over, so it stays bounded.

use std::sync::Arc;
use std::time::Duration;

use sqlx::SqlitePool;
use tokio::sync::Notify;

/// The least time between two passes: writes arriving meanwhile wait for the next one.
const PAUSE: Duration = Duration::from_millis(200);

/// WAL pages (4 KiB) above which a pass also restarts the WAL: SQLite's own checkpoint
/// threshold is 1,000.
const RESTART_AT: i64 = 4_000;

/// Starts the checkpointer over `pool` (one read-write connection). It runs a pass after
/// writes (`wrote` is notified by the writer after each commit) and ends, closing its
/// connection, once `open` says the store is gone. A failed pass is logged and tried again
/// after the next write.
pub(crate) fn spawn(pool: SqlitePool, wrote: Arc<Notify>, open: impl Fn() -> bool + Send + 'static) {
    tokio::spawn(async move {
        loop {
            wrote.notified().await;
            if !open() {
                pool.close().await;
                return;
            }
            if let Err(e) = pass(&pool).await {
                tracing::warn!(error = %e, "WAL checkpoint failed; trying again after the next write");
            }
            tokio::time::sleep(PAUSE).await;
        }
    });
}

/// One passive pass, and a restart when the WAL has grown past [`RESTART_AT`] pages.
async fn pass(pool: &SqlitePool) -> Result<(), sqlx::Error> {
    // Columns: busy (0 or 1), pages in the WAL, pages copied into the database file.
    let (_, wal_pages, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(pool).await?;
    if wal_pages > RESTART_AT {
        sqlx::query("PRAGMA wal_checkpoint(RESTART)").execute(pool).await?;
    }
    Ok(())
}
