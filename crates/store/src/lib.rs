//! Persistence for svc: SQLite by default (one file, zero setup), PostgreSQL for replicas,
//! behind one [`Store`].
//!
//! # Portable SQL
//! Every query is written once and runs on both backends: `$1` placeholders (SQLite accepts
//! them), `INSERT … ON CONFLICT … DO NOTHING` with `rows_affected()` for idempotency,
//! `RETURNING`, `CAST(SUM(x) AS BIGINT)` (PostgreSQL's `SUM(bigint)` is `numeric`), no `ILIKE`.
//! Money is `BIGINT` USDC atomic units, never a float. Time is `BIGINT` unix milliseconds
//! passed in by the caller: the store never reads the clock, so tests control time. Ids are
//! `TEXT`. Only DDL differs, in `migrations/sqlite` and `migrations/postgres`, reviewed side
//! by side.
//!
//! # Layout
//! - [`Store`]: connection, migration, readiness.
//! - [`payments`]: the payment ledger and its double-spend guard.
//! - [`usage`]: served calls, for volume discounts.
//! - [`tokens`]: token market data behind the free stats route.
//! - [`accounts`]: accounts, API keys and the credit ledger.
//! - [`signals`]: snapshots of the signal engine.
//! - [`llm`]: the LLM proxy's token versions, top-up settings and calls.
//! - [`sellers`]: sellers' agents, their paid calls, payouts and daily counts.
//! - [`console`]: the console's signed-in sessions.
//! - `testing` (feature `testing`): a store per test on either backend, for test suites.

pub mod accounts;
pub mod agentbox;
mod batch;
mod checkpoint;
pub mod console;
mod error;
pub mod llm;
pub mod payments;
pub mod responses;
pub mod sellers;
pub mod signals;
pub mod telegram;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tokens;
pub mod usage;

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};

pub use accounts::{Account, ApiKeyRecord, Debit, LedgerEntry, NewApiKey, NewCredit};
pub use agentbox::{ENDED_STATES, GatewayCreated, GatewayRecord, NewGateway};
pub use console::{CallFilter, CallRow, ConsoleSession, DailySpend, NewConsoleSession};
pub use error::StoreError;
pub use llm::{FinishedLlmCall, LlmAccount, LlmCallRecord, LlmCap, LlmHold, LlmUsage, NewLlmCall};
pub use payments::{ANSWER_WITHHELD, NewPayment, PaymentRecord, PaymentStatus, Reservation};
pub use responses::PaidResponse;
pub use sellers::{
    AgentListing, NewSellerCall, NewWithdrawal, SellerAgent, ServedCall, Withdrawal, WithdrawalMove, WithdrawalTaken,
};
pub use telegram::{BotSaved, TelegramBot};
pub use tokens::TokenStat;
pub use usage::Usage;

/// Runs the same expression against whichever pool is active, so a query is written once.
macro_rules! with_pool {
    ($db:expr, |$pool:ident| $body:expr) => {
        match $db {
            $crate::Db::Sqlite { read: $pool, .. } => $body,
            $crate::Db::Postgres($pool) => $body,
        }
    };
}
pub(crate) use with_pool;

/// [`with_pool!`] on the writer connection, for the few statements that bypass the group-commit
/// queue (DDL, closing). SQLite admits one writer; a second connection that finds the lock taken
/// sleeps in its busy handler for milliseconds, so every write goes through this one connection.
macro_rules! with_writer {
    ($db:expr, |$pool:ident| $body:expr) => {
        match $db {
            $crate::Db::Sqlite { write: $pool, .. } => $body,
            $crate::Db::Postgres($pool) => $body,
        }
    };
}

/// The active connection pool.
#[derive(Clone)]
pub(crate) enum Db {
    Sqlite { read: SqlitePool, write: SqlitePool, batcher: batch::Batcher },
    Postgres(PgPool),
}

/// Which database a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded default.
    Sqlite,
    /// For replicas.
    Postgres,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        })
    }
}

/// The persistence handle. Cheap to clone (pools are shared).
#[derive(Clone)]
pub struct Store {
    pub(crate) db: Db,
    /// When this process last wrote each key's use (see [`Store::key_used`]).
    key_uses: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, i64>>>,
}

impl std::fmt::Debug for Store {
    /// Names the backend only: a connection URL may carry a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("backend", &self.backend()).finish()
    }
}

impl Store {
    fn of(db: Db) -> Store {
        Store { db, key_uses: Default::default() }
    }

    /// Connects to `sqlite://<path>` (the file is created if missing), `sqlite::memory:`
    /// (tests only: one private in-memory database) or `postgres://…` / `postgresql://…`.
    ///
    /// Errors never repeat the URL, since it may carry a password.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        match url.split_once(':').map_or("", |(scheme, _)| scheme) {
            "sqlite" if url == "sqlite::memory:" => Self::open_sqlite_memory().await,
            "sqlite" => {
                let path = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url);
                Self::open_sqlite_file(Path::new(path)).await
            }
            "postgres" | "postgresql" => {
                let options = PgConnectOptions::from_str(url)?;
                Self::connect_postgres(options).await
            }
            other => Err(StoreError::UnsupportedUrl { scheme: printable_scheme(other) }),
        }
    }

    /// One in-memory SQLite database for tests. A single connection that never expires, since
    /// each SQLite connection to `:memory:` is a separate database and closing it loses the data.
    async fn open_sqlite_memory() -> Result<Store, StoreError> {
        let options = SqliteConnectOptions::from_str("sqlite::memory:")?.foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options)
            .await?;
        let batcher = batch::Batcher::spawn(pool.clone(), Arc::default());
        Ok(Store::of(Db::Sqlite { read: pool.clone(), write: pool, batcher }))
    }

    /// Opens (creating if needed) a SQLite database file in WAL mode: readers never wait for
    /// the writer, and `synchronous = NORMAL` is durable across process crashes in WAL. The
    /// WAL is checkpointed by a task of its own, never by a commit.
    pub async fn open_sqlite_file(path: &Path) -> Result<Store, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        // A local file cannot drop a connection the way a network peer can, so the pools skip
        // the liveness ping sqlx otherwise sends before lending each connection. The writer
        // never checkpoints: a task with a connection of its own does (see `checkpoint`).
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .connect_with(options.clone().pragma("wal_autocheckpoint", "0"))
            .await?;
        let checkpointer = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .connect_with(options.clone())
            .await?;
        let read = SqlitePoolOptions::new()
            .max_connections(8)
            .test_before_acquire(false)
            .connect_with(options.read_only(true))
            .await?;
        let wrote = Arc::new(tokio::sync::Notify::new());
        let batcher = batch::Batcher::spawn(write.clone(), wrote.clone());
        checkpoint::spawn(checkpointer, wrote, batcher.liveness());
        Ok(Store::of(Db::Sqlite { read, write, batcher }))
    }

    /// Connects to PostgreSQL with explicit options (tests use them to pin a schema).
    pub async fn connect_postgres(options: PgConnectOptions) -> Result<Store, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await?;
        Ok(Store::of(Db::Postgres(pool)))
    }

    /// Applies the embedded migrations of the active backend. Idempotent.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        match &self.db {
            Db::Sqlite { write, .. } => sqlx::migrate!("migrations/sqlite").run(write).await?,
            Db::Postgres(pool) => sqlx::migrate!("migrations/postgres").run(pool).await?,
        }
        Ok(())
    }

    /// Runs one writing statement: through the group-commit writer on SQLite, directly on
    /// PostgreSQL. Returns the rows affected, once durable.
    pub(crate) async fn write(&self, sql: &'static str, args: Vec<batch::Arg>) -> Result<u64, StoreError> {
        match &self.db {
            Db::Sqlite { batcher, .. } => batcher.write(sql, args).await,
            Db::Postgres(pool) => Ok(batch::bind_all!(sqlx::query(sql), args).execute(pool).await?.rows_affected()),
        }
    }

    /// Runs one writing statement that decides on a sum over `account_id`'s rows (a cap it
    /// must stay under) as the only such writer of that account while it runs. SQLite has one
    /// writer, and the statement reads and writes in one step. PostgreSQL runs statements side
    /// by side, each reading the rows committed when it started, so there the statement runs
    /// after taking the account's row lock: the next one waits, then starts, and so sees this
    /// one's row. (The lock is the one a balance change takes; rows that only reference the
    /// account do not wait for it.)
    pub(crate) async fn write_alone_for(
        &self,
        account_id: &str,
        sql: &'static str,
        args: Vec<batch::Arg>,
    ) -> Result<u64, StoreError> {
        match &self.db {
            Db::Sqlite { batcher, .. } => batcher.write(sql, args).await,
            Db::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                sqlx::query("SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE")
                    .bind(account_id)
                    .execute(&mut *tx)
                    .await?;
                let written = batch::bind_all!(sqlx::query(sql), args).execute(&mut *tx).await?.rows_affected();
                tx.commit().await?;
                Ok(written)
            }
        }
    }

    /// A round trip to the database, for readiness checks.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let one: i32 = with_pool!(&self.db, |p| sqlx::query_scalar("SELECT 1").fetch_one(p).await)?;
        debug_assert_eq!(one, 1);
        Ok(())
    }

    /// Which backend this store runs on.
    pub fn backend(&self) -> Backend {
        match self.db {
            Db::Sqlite { .. } => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// Runs SQL text as is (DDL in tests and administration); never with user input.
    #[doc(hidden)]
    pub async fn execute_unprepared(&self, sql: &str) -> Result<(), StoreError> {
        with_writer!(&self.db, |p| sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned())).execute(p).await.map(|_| ()))?;
        Ok(())
    }

    /// Closes the pool, waiting for connections to be returned.
    pub async fn close(&self) {
        with_pool!(&self.db, |p| p.close().await);
        with_writer!(&self.db, |p| p.close().await);
    }
}

/// The scheme of a refused URL, safe to show. When the input is malformed, the text before the
/// first colon could be anything, so only a short, well-formed scheme (RFC 3986: a letter, then
/// letters, digits, `+`, `-`, `.`) is echoed; never anything after the colon.
fn printable_scheme(candidate: &str) -> String {
    let well_formed = candidate.len() <= 20
        && candidate.starts_with(|c: char| c.is_ascii_alphabetic())
        && candidate.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if well_formed { candidate.to_owned() } else { "<not a URL scheme>".to_owned() }
}

/// Converts an amount or count for a `BIGINT` column.
pub(crate) fn to_i64(value: u64, what: &'static str) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::OutOfRange(what))
}

/// Converts a `BIGINT` read back into an amount or count.
pub(crate) fn to_u64(value: i64, what: &'static str) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| StoreError::OutOfRange(what))
}
