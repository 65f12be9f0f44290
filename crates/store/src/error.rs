//! The store's one error type, below every module that can fail (the group-commit queue
//! included), so none of them reaches up to the crate root for it.

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A batch of writes could not be committed; none of it was applied.
    #[error("write batch failed: {0}")]
    Batch(String),
    /// The store was closed while a write waited.
    #[error("the store is closed")]
    Closed,
    /// The database refused or failed a query.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration could not be applied.
    #[error("migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The URL names no backend svc speaks. The URL itself is not repeated: it may hold a password.
    #[error("unsupported database URL scheme {scheme:?}: use sqlite://<path> or postgres://…")]
    UnsupportedUrl {
        /// The scheme found.
        scheme: String,
    },
    /// A value does not fit the column (an amount above `i64::MAX`, a negative count read back)
    /// or is not allowed there (`Reserved` as a final payment status).
    #[error("value out of range for {0}")]
    OutOfRange(&'static str),
    /// The same key kept changing under a short retry loop (reserved and released over and
    /// over by others). Rare; the caller may retry.
    #[error("too much contention on {0}, try again")]
    Contended(&'static str),
}
