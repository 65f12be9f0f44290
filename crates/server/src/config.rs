//! Configuration: flags, each with an environment variable and a default that works on a
//! fresh machine. `svc serve --help` lists them all.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// svc: crypto market data and on-chain actions for software agents, paid per call over x402.
#[derive(Debug, Parser)]
#[command(name = "svc", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP service.
    Serve(ServeArgs),
    /// Apply database migrations and exit.
    Migrate(StoreArgs),
    /// Print the OpenAPI 3.1 document (the committed `openapi.json` is this output).
    Openapi,
}

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

/// Log output format.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log shippers.
    Json,
}

/// Settings of `svc serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SVC_LISTEN", default_value = "127.0.0.1:8402")]
    pub listen: SocketAddr,

    /// Storage.
    #[command(flatten)]
    pub store: StoreArgs,

    /// Public base URL for absolute links in discovery documents (default: the request's Host).
    #[arg(long, env = "SVC_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Largest request body accepted, in bytes.
    #[arg(long, env = "SVC_BODY_LIMIT_BYTES", default_value_t = 256 * 1024)]
    pub body_limit_bytes: usize,

    /// Log format.
    #[arg(long, env = "SVC_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_the_database_password() {
        let args = StoreArgs { data_dir: "./data".into(), database_url: Some("postgres://u:hunter2@db/x".into()) };
        assert!(!format!("{args:?}").contains("hunter2"));
    }

    #[test]
    fn the_default_store_is_sqlite_in_the_data_dir() {
        let cli = Cli::try_parse_from(["svc", "migrate"]).expect("parses");
        let Command::Migrate(store) = cli.command else { panic!("migrate") };
        assert_eq!(store.url(), "sqlite://./data/svc.db");
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
