//! Choosing a backend from a database address (`--db`).
//!
//! `sqlite:PATH` (also `sqlite://PATH`, and `sqlite::memory:`) or `postgres://…` /
//! `postgresql://…`, where a `schema=NAME` query parameter picks the schema (default
//! `mend`). Without `--db`, the store is `sqlite:` + [`default_sqlite_path`].

use std::path::PathBuf;
use std::str::FromStr;

use crate::message::{NewMessage, StoredMessage};
use crate::{
    AppendOptions, Appended, Claim, ConversationInfo, Error, Format, ListOptions, NewConversation,
    PgOptions, PgStore, Result, Span, SqliteStore, Store,
};

/// A parsed database address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbUrl {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL server.
    Postgres {
        /// The address as tokio-postgres reads it (without `schema=`).
        url: String,
        /// The schema, when the address names one.
        schema: Option<String>,
    },
}

impl FromStr for DbUrl {
    type Err = Error;

    fn from_str(s: &str) -> Result<DbUrl> {
        if let Some(rest) = s.strip_prefix("sqlite:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err(Error::BadUrl(format!("'{s}' names no file (sqlite:PATH)")));
            }
            return Ok(DbUrl::Sqlite(PathBuf::from(path)));
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            let (url, schema) = split_schema(s);
            return Ok(DbUrl::Postgres { url, schema });
        }
        Err(Error::BadUrl(format!(
            "'{s}' is neither sqlite:PATH nor postgres://USER@HOST:PORT/DB"
        )))
    }
}

/// Take `schema=NAME` out of an address's query string.
fn split_schema(url: &str) -> (String, Option<String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), None);
    };
    let mut schema = None;
    let rest: Vec<&str> = query
        .split('&')
        .filter(|kv| match kv.strip_prefix("schema=") {
            Some(name) => {
                schema = Some(name.to_string());
                false
            }
            None => !kv.is_empty(),
        })
        .collect();
    let url = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    (url, schema)
}

/// Where the store lives when `--db` is not given: `$XDG_DATA_HOME/mend/mend.db`, or
/// `~/.local/share/mend/mend.db`. `None` when neither variable helps.
pub fn default_sqlite_path() -> Option<PathBuf> {
    let from = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let data = from("XDG_DATA_HOME").or_else(|| from("HOME").map(|h| h.join(".local/share")))?;
    Some(data.join("mend").join("mend.db"))
}

/// `sqlite:` and [`default_sqlite_path`].
pub fn default_db_url() -> Option<String> {
    default_sqlite_path().map(|p| format!("sqlite:{}", p.display()))
}

/// Either backend, chosen at run time. Cheap to clone.
#[derive(Debug, Clone)]
pub enum AnyStore {
    /// SQLite.
    Sqlite(SqliteStore),
    /// PostgreSQL.
    Postgres(PgStore),
}

impl AnyStore {
    /// Open the store at a database address (see the module header), migrating it.
    pub async fn open(db: &str) -> Result<AnyStore> {
        AnyStore::open_url(&db.parse()?).await
    }

    /// Open a parsed address.
    pub async fn open_url(db: &DbUrl) -> Result<AnyStore> {
        match db {
            DbUrl::Sqlite(path) => {
                let path = path.clone();
                let store = tokio::task::spawn_blocking(move || SqliteStore::open(path))
                    .await
                    .map_err(|e| Error::Task(e.to_string()))??;
                Ok(AnyStore::Sqlite(store))
            }
            DbUrl::Postgres { url, schema } => {
                let mut options = PgOptions::default();
                if let Some(s) = schema {
                    options.schema = s.clone();
                }
                Ok(AnyStore::Postgres(PgStore::connect(url, options).await?))
            }
        }
    }
}

impl Store for AnyStore {
    async fn create(&self, new: NewConversation) -> Result<ConversationInfo> {
        match self {
            AnyStore::Sqlite(s) => s.create(new).await,
            AnyStore::Postgres(s) => s.create(new).await,
        }
    }

    async fn claim(
        &self,
        id: &str,
        scope: &str,
        format: Format,
    ) -> Result<(ConversationInfo, Claim)> {
        match self {
            AnyStore::Sqlite(s) => s.claim(id, scope, format).await,
            AnyStore::Postgres(s) => s.claim(id, scope, format).await,
        }
    }

    async fn append(
        &self,
        conversation: &str,
        messages: &[NewMessage],
        options: &AppendOptions,
    ) -> Result<Appended> {
        match self {
            AnyStore::Sqlite(s) => s.append(conversation, messages, options).await,
            AnyStore::Postgres(s) => s.append(conversation, messages, options).await,
        }
    }

    async fn load(&self, conversation: &str, span: Span) -> Result<Vec<StoredMessage>> {
        match self {
            AnyStore::Sqlite(s) => s.load(conversation, span).await,
            AnyStore::Postgres(s) => s.load(conversation, span).await,
        }
    }

    async fn info(&self, conversation: &str) -> Result<ConversationInfo> {
        match self {
            AnyStore::Sqlite(s) => s.info(conversation).await,
            AnyStore::Postgres(s) => s.info(conversation).await,
        }
    }

    async fn list(&self, options: &ListOptions) -> Result<Vec<ConversationInfo>> {
        match self {
            AnyStore::Sqlite(s) => s.list(options).await,
            AnyStore::Postgres(s) => s.list(options).await,
        }
    }

    async fn fork(
        &self,
        conversation: &str,
        at_sequence: u64,
        new_id: Option<&str>,
    ) -> Result<ConversationInfo> {
        match self {
            AnyStore::Sqlite(s) => s.fork(conversation, at_sequence, new_id).await,
            AnyStore::Postgres(s) => s.fork(conversation, at_sequence, new_id).await,
        }
    }

    async fn delete(&self, conversation: &str) -> Result<bool> {
        match self {
            AnyStore::Sqlite(s) => s.delete(conversation).await,
            AnyStore::Postgres(s) => s.delete(conversation).await,
        }
    }

    async fn prune_keys(&self, older_than: std::time::Duration) -> Result<u64> {
        match self {
            AnyStore::Sqlite(s) => s.prune_keys(older_than).await,
            AnyStore::Postgres(s) => s.prune_keys(older_than).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse() {
        assert_eq!(
            "sqlite:/tmp/a.db".parse::<DbUrl>().unwrap(),
            DbUrl::Sqlite("/tmp/a.db".into())
        );
        assert_eq!(
            "sqlite:///tmp/a.db".parse::<DbUrl>().unwrap(),
            DbUrl::Sqlite("/tmp/a.db".into())
        );
        assert_eq!(
            "postgres://postgres@127.0.0.1:5432/test?schema=t1&sslmode=disable"
                .parse::<DbUrl>()
                .unwrap(),
            DbUrl::Postgres {
                url: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable".into(),
                schema: Some("t1".into())
            }
        );
        assert!("mysql://x".parse::<DbUrl>().is_err());
        assert!("sqlite:".parse::<DbUrl>().is_err());
    }
}
