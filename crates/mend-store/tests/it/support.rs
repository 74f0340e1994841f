//! Backends for the suite: a SQLite file in a temporary folder, or a PostgreSQL schema of
//! the test's own (dropped at the end, also when the test fails).

use std::future::Future;
use std::io::Write as _;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use futures_util::FutureExt as _;
use mend_store::testing::Migration;
use mend_store::{PgOptions, PgStore, SqliteOptions, SqliteStore, Store};

/// A database the suite can open as many handles to as it likes.
pub trait Backend: Sync {
    type S: Store + Clone + Send + Sync + std::fmt::Debug + 'static;
    /// For messages.
    fn name(&self) -> &'static str;
    /// A new handle with connections of its own.
    fn try_open(&self) -> impl Future<Output = mend_store::Result<Self::S>> + Send {
        self.try_open_with_key_ttl(mend_store::DEFAULT_KEY_TTL)
    }
    /// A new handle that remembers idempotency keys for `ttl`.
    fn try_open_with_key_ttl(
        &self,
        ttl: Duration,
    ) -> impl Future<Output = mend_store::Result<Self::S>> + Send;
    /// The `--db` address of the same database, for child processes.
    fn url(&self) -> String;
    /// Apply exactly these migrations.
    fn migrate_with(
        &self,
        migrations: &'static [Migration],
    ) -> impl Future<Output = mend_store::Result<()>> + Send;

    /// Write, with plain SQL of the first schema, conversation `kept` holding one user
    /// message "before" appended with key `k`, as a build of that schema would have.
    fn seed_v1(&self) -> impl Future<Output = ()> + Send;

    fn open(&self) -> impl Future<Output = Self::S> + Send {
        async move {
            match self.try_open().await {
                Ok(s) => s,
                Err(e) => panic!("{}: cannot open: {e}", self.name()),
            }
        }
    }
}

/// The first schema's rows for [`Backend::seed_v1`], `$NOW` replaced by the time.
const SEED_V1: &str = "INSERT INTO conversations (id, format, created_at, last_seq) VALUES ('kept', 'any', $NOW, 1);
INSERT INTO messages (conversation, seq, message_id, role, body, appended_at)
  SELECT pk, 1, 'm-1', 'user', '{\"role\":\"user\",\"content\":\"before\"}', $NOW FROM conversations WHERE id = 'kept';
INSERT INTO append_keys (conversation, key, first_seq, count, created_at)
  SELECT pk, 'k', 1, 1, $NOW FROM conversations WHERE id = 'kept';";

fn seed_sql() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    SEED_V1.replace("$NOW", &now.to_string())
}

pub struct SqliteBackend {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Backend for SqliteBackend {
    type S = SqliteStore;
    fn seed_v1(&self) -> impl Future<Output = ()> + Send {
        let path = self.path.clone();
        async move {
            let conn = rusqlite::Connection::open(path).expect("open the v1 database");
            conn.execute_batch(&seed_sql())
                .expect("seed the v1 database");
        }
    }
    fn name(&self) -> &'static str {
        "sqlite"
    }
    fn try_open_with_key_ttl(
        &self,
        key_ttl: Duration,
    ) -> impl Future<Output = mend_store::Result<SqliteStore>> + Send {
        let path = self.path.clone();
        let options = SqliteOptions {
            key_ttl,
            ..SqliteOptions::default()
        };
        async move {
            tokio::task::spawn_blocking(move || SqliteStore::open_with(path, options))
                .await
                .expect("open task")
        }
    }
    fn url(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }
    fn migrate_with(
        &self,
        migrations: &'static [Migration],
    ) -> impl Future<Output = mend_store::Result<()>> + Send {
        let path = self.path.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).expect("the database's folder");
                }
                mend_store::testing::migrate_sqlite_with(&path, migrations)
            })
            .await
            .expect("migrate task")
        }
    }
}

pub struct PgBackend {
    base: String,
    schema: String,
}

impl Backend for PgBackend {
    type S = PgStore;
    async fn seed_v1(&self) {
        let (client, conn) = tokio_postgres::connect(&self.base, tokio_postgres::NoTls)
            .await
            .expect("connect to seed the v1 schema");
        let task = tokio::spawn(conn);
        client
            .batch_execute(&format!(
                "SET search_path TO {};\n{}",
                self.schema,
                seed_sql()
            ))
            .await
            .expect("seed the v1 schema");
        drop(client);
        let _ = task.await;
    }
    fn name(&self) -> &'static str {
        "postgres"
    }
    async fn try_open_with_key_ttl(&self, key_ttl: Duration) -> mend_store::Result<PgStore> {
        let options = PgOptions {
            schema: self.schema.clone(),
            key_ttl,
            ..PgOptions::default()
        };
        PgStore::connect(&self.base, options).await
    }
    fn url(&self) -> String {
        let sep = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{sep}schema={}", self.base, self.schema)
    }
    async fn migrate_with(&self, migrations: &'static [Migration]) -> mend_store::Result<()> {
        mend_store::testing::migrate_postgres_with(&self.base, &self.schema, migrations).await
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

pub fn run_sqlite<F, Fut>(test: F)
where
    F: FnOnce(SqliteBackend) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("store").join("mend.db");
    runtime().block_on(test(SqliteBackend { _dir: dir, path }));
}

/// The server's address, or `None` (after saying so) when it cannot be reached outside CI.
fn postgres_base() -> Option<String> {
    static BASE: OnceLock<Option<String>> = OnceLock::new();
    BASE.get_or_init(|| {
        let url = std::env::var("MEND_TEST_POSTGRES")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
        let reached = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime")
            .block_on(async {
                let connect = tokio_postgres::connect(&url, tokio_postgres::NoTls);
                match tokio::time::timeout(Duration::from_secs(3), connect).await {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(_) => Err("no answer in 3 s".to_string()),
                }
            });
        match reached {
            Ok(()) => Some(url),
            Err(why) if std::env::var("CI").as_deref() == Ok("true") => {
                panic!("PostgreSQL at {url} is unreachable ({why}), and CI=true requires it")
            }
            Err(why) => {
                // Straight to the process's stderr, past the test harness's capture, so
                // that a plain `cargo test` shows it once.
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIP: PostgreSQL at {url} is unreachable ({why}); its store tests pass without running (under CI=true they fail)"
                );
                None
            }
        }
    })
    .clone()
}

fn unique_schema() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "mend_test_{}_{}_{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

async fn drop_schema(base: &str, schema: &str) {
    let (client, conn) = tokio_postgres::connect(base, tokio_postgres::NoTls)
        .await
        .expect("connect to drop the test schema");
    let task = tokio::spawn(conn);
    client
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .await
        .expect("drop the test schema");
    drop(client);
    let _ = task.await;
}

pub fn run_postgres<F, Fut>(test: F)
where
    F: FnOnce(PgBackend) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(base) = postgres_base() else { return };
    let schema = unique_schema();
    let rt = runtime();
    let backend = PgBackend {
        base: base.clone(),
        schema: schema.clone(),
    };
    let outcome = rt.block_on(AssertUnwindSafe(test(backend)).catch_unwind());
    rt.block_on(drop_schema(&base, &schema));
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
