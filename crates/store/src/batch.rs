//! Group commit for SQLite. SQLite admits one writer, and each commit costs a WAL append and
//! lock traffic (tens of microseconds here) on top of the driver's per-statement hop; under
//! concurrent paid calls the single writer became the ceiling. Writes are therefore queued to
//! one task that runs whatever is waiting in one `BEGIN IMMEDIATE … COMMIT`, and answers each
//! caller only after the commit, so a caller never sees a write that could still be lost.

use std::sync::Arc;

use sqlx::SqlitePool;
use tokio::sync::{Notify, mpsc, oneshot};

use crate::StoreError;

/// A bound argument of a queued statement.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    Text(String),
    OptText(Option<String>),
    Int(i64),
    OptInt(Option<i64>),
    Blob(Vec<u8>),
}

/// Binds `args` to a query of either backend, in order.
macro_rules! bind_all {
    ($query:expr, $args:expr) => {{
        let mut query = $query;
        for arg in $args {
            query = match arg {
                $crate::batch::Arg::Text(v) => query.bind(v),
                $crate::batch::Arg::OptText(v) => query.bind(v),
                $crate::batch::Arg::Int(v) => query.bind(v),
                $crate::batch::Arg::OptInt(v) => query.bind(v),
                $crate::batch::Arg::Blob(v) => query.bind(v),
            };
        }
        query
    }};
}
pub(crate) use bind_all;

/// One statement waiting for the writer.
struct Queued {
    sql: &'static str,
    args: Vec<Arg>,
    reply: oneshot::Sender<Result<u64, StoreError>>,
}

/// Statements committed together at most; bounds the time one caller waits for others.
const MAX_BATCH: usize = 256;

/// The handle writers send statements through. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Batcher {
    queue: mpsc::Sender<Queued>,
}

impl Batcher {
    /// Starts the writer task over `pool` (its single connection); it ends when every handle
    /// is dropped. `wrote` is notified after every batch, and once more when the task ends.
    pub(crate) fn spawn(pool: SqlitePool, wrote: Arc<Notify>) -> Self {
        let (queue, rx) = mpsc::channel(4 * MAX_BATCH);
        tokio::spawn(run(pool, rx, wrote));
        Batcher { queue }
    }

    /// Whether any handle to this writer is left: tasks that serve the store (the WAL
    /// checkpointer) ask it to know when to end.
    pub(crate) fn liveness(&self) -> impl Fn() -> bool + Send + 'static {
        let weak = self.queue.downgrade();
        move || weak.strong_count() > 0
    }

    /// Runs `sql` with `args` in the next batch; returns the rows it affected, once committed.
    pub(crate) async fn write(&self, sql: &'static str, args: Vec<Arg>) -> Result<u64, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.queue.send(Queued { sql, args, reply }).await.map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

async fn run(pool: SqlitePool, mut rx: mpsc::Receiver<Queued>, wrote: Arc<Notify>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let results = execute(&pool, &mut batch).await;
        for (queued, result) in batch.drain(..).zip(results) {
            // A caller that gave up (its request was cancelled) no longer listens.
            let _ = queued.reply.send(result);
        }
        wrote.notify_one();
    }
    wrote.notify_one();
}

/// Runs a batch in one transaction. A statement that fails is reported to its caller alone
/// (SQLite undoes just that statement); a failed commit fails them all.
async fn execute(pool: &SqlitePool, batch: &mut [Queued]) -> Vec<Result<u64, StoreError>> {
    let n = batch.len();
    let fail_all = |why: &str| (0..n).map(|_| Err(StoreError::Batch(why.to_owned()))).collect::<Vec<_>>();
    let mut conn = match pool.acquire().await {
        Ok(conn) => conn,
        Err(e) => return fail_all(&e.to_string()),
    };
    let single = n == 1;
    if !single && let Err(e) = sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await {
        return fail_all(&e.to_string());
    }
    let mut results = Vec::with_capacity(batch.len());
    for queued in batch.iter_mut() {
        let query = bind_all!(sqlx::query(queued.sql), std::mem::take(&mut queued.args));
        results.push(query.execute(&mut *conn).await.map(|r| r.rows_affected()).map_err(StoreError::from));
    }
    if !single && let Err(e) = sqlx::query("COMMIT").execute(&mut *conn).await {
        let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
        return fail_all(&e.to_string());
    }
    results
}
