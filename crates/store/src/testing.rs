//! A store for one test, on SQLite or in a fresh PostgreSQL schema, cleaned up after it: the
//! store's conformance suite and the suites of the crates above it run every test on both
//! backends this way (feature `testing`).

use std::str::FromStr as _;

use sqlx::postgres::PgConnectOptions;

use crate::Store;

/// A store for one test, cleaned up after it.
pub struct Fixture {
    store: Store,
    _dir: Option<tempfile::TempDir>,
    /// The database URL and the schema made for this test, dropped after it.
    schema: Option<(String, String)>,
}

impl Fixture {
    /// A SQLite file in a temporary directory.
    pub async fn sqlite() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open_sqlite_file(&dir.path().join("svc.db")).await.expect("open");
        store.migrate().await.expect("migrate");
        Fixture { store, _dir: Some(dir), schema: None }
    }

    /// A fresh schema of the database at `TEST_DATABASE_URL`, so tests run in parallel; none,
    /// saying so, when it is not set.
    pub async fn postgres() -> Option<Fixture> {
        let Ok(url) = std::env::var("TEST_DATABASE_URL") else {
            eprintln!("skipped: TEST_DATABASE_URL is not set, so the PostgreSQL variant does not run");
            return None;
        };
        let schema = format!("s_{}", uuid::Uuid::new_v4().simple());
        let admin = Store::connect(&url).await.expect("connect");
        admin.execute_unprepared(&format!("CREATE SCHEMA {schema}")).await.expect("create schema");
        admin.close().await;
        let options = PgConnectOptions::from_str(&url).expect("url").options([("search_path", schema.as_str())]);
        let store = Store::connect_postgres(options).await.expect("connect in schema");
        store.migrate().await.expect("migrate");
        Some(Fixture { store, _dir: None, schema: Some((url, schema)) })
    }

    /// Runs `test` on a clone of the store, then cleans up even if it panicked (a PostgreSQL
    /// schema would otherwise be left behind), then re-raises the panic.
    pub async fn run<F, Fut>(self, test: F)
    where
        F: FnOnce(Store) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let outcome = tokio::spawn(test(self.store.clone())).await;
        self.store.close().await;
        if let Some((url, schema)) = &self.schema {
            let admin = Store::connect(url).await.expect("connect");
            admin.execute_unprepared(&format!("DROP SCHEMA {schema} CASCADE")).await.expect("drop schema");
            admin.close().await;
        }
        if let Err(err) = outcome {
            std::panic::resume_unwind(err.into_panic());
        }
    }
}
