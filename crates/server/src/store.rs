//! The store's flags and its opening, shared by `svc serve`, `svc migrate` and the operator
//! commands.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use svc_store::Store;

/// Where data lives.
#[derive(Clone, Args)]
pub struct StoreArgs {
    /// Directory for the embedded SQLite database (`<dir>/svc.db`).
    #[arg(long, env = "SVC_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// Database URL; `postgres://…` for PostgreSQL (replicas), default SQLite in the data dir.
    #[arg(long, env = "SVC_DATABASE_URL")]
    pub database_url: Option<String>,
}

impl std::fmt::Debug for StoreArgs {
    /// Never prints the database URL: it may carry a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreArgs")
            .field("data_dir", &self.data_dir)
            .field("database_url", &self.database_url.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl StoreArgs {
    /// The URL the store connects to.
    pub fn url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => format!("sqlite://{}", self.data_dir.join("svc.db").display()),
        }
    }
}

/// Opens the store (creating the SQLite data directory if needed) and migrates it.
pub async fn open(args: &StoreArgs) -> anyhow::Result<Store> {
    if args.database_url.is_none() {
        std::fs::create_dir_all(&args.data_dir)
            .with_context(|| format!("creating data directory {}", args.data_dir.display()))?;
    }
    let store = Store::connect(&args.url()).await.context("opening the store")?;
    store.migrate().await.context("migrating the store")?;
    Ok(store)
}
