//! The SQLite backend: one file, WAL, rusqlite with SQLite bundled.
//!
//! Invariant: every write runs in a `BEGIN IMMEDIATE` transaction, so it holds the
//! database's write lock from its first read (the conversation's `last_seq`, the
//! idempotency key) to its commit; sequences are `last_seq + 1 ..` inside it and nothing
//! else assigns them. Inside one process, writes queue on one writer connection (no busy
//! polling); between processes, the busy handler waits up to 30 s for the lock. Reads use
//! a small pool of reader connections, which WAL lets run beside the writer, and read
//! with one statement each, so each read sees one committed state.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};

use crate::message::{ids_for, NewMessage, StoredMessage};
use crate::migrate::{pending, Migration, SQLITE_MIGRATIONS};
use crate::{
    check_append_scope, check_conversation_id, check_scope, expiry_cutoff, fresh_id, now_ms,
    validate, AppendOptions, Appended, Claim, ConversationInfo, Error, ForkOrigin, Format,
    ListOptions, NewConversation, Result, Span, Store, UNSCOPED,
};

/// How hard a commit waits for the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Synchronous {
    /// fsync the WAL on every commit: an acknowledged append survives power loss.
    #[default]
    Full,
    /// fsync at checkpoints only: an acknowledged append survives a crash of the
    /// process, but the last ones may be lost if the machine loses power.
    Normal,
}

/// How to open a SQLite store.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// Durability of commits.
    pub synchronous: Synchronous,
    /// Reader connections kept open beside the writer.
    pub readers: usize,
    /// How long an idempotency key is remembered ([`crate::DEFAULT_KEY_TTL`]).
    pub key_ttl: Duration,
}

impl Default for SqliteOptions {
    fn default() -> SqliteOptions {
        SqliteOptions {
            synchronous: Synchronous::Full,
            readers: 4,
            key_ttl: crate::DEFAULT_KEY_TTL,
        }
    }
}

/// A store in one SQLite file. Cheap to clone; clones share connections. Its calls need
/// a tokio runtime (they run on its blocking pool).
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.label)
            .finish_non_exhaustive()
    }
}

struct Inner {
    path: PathBuf,
    label: String,
    options: SqliteOptions,
    writer: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
    /// `:memory:`: one connection only, which the writer holds.
    in_memory: bool,
}

/// Attach the database path and the operation to a driver error.
trait Op<T> {
    fn op(self, path: &str, op: &'static str) -> Result<T>;
}

impl<T> Op<T> for rusqlite::Result<T> {
    fn op(self, path: &str, op: &'static str) -> Result<T> {
        self.map_err(|source| Error::Sqlite {
            path: path.to_string(),
            op,
            source,
        })
    }
}

/// The busy handler: short sleeps (SQLite's default climbs to 100 ms), for about 30 s.
fn wait_for_lock(attempt: i32) -> bool {
    let ms = match attempt {
        0..=9 => 1,
        10..=29 => 2,
        _ => 5,
    };
    std::thread::sleep(Duration::from_millis(ms));
    attempt < 6_000
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a connection was held rolled its transaction back on unwind; the
    // connection itself is still good.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn open_connection(path: &Path, label: &str, options: &SqliteOptions) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags).op(label, "open")?;
    conn.busy_handler(Some(wait_for_lock))
        .op(label, "set busy handler")?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .op(label, "switch to WAL")?;
    if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
        return Err(Error::Schema(format!(
            "{label}: the database stays in journal mode {mode}, not WAL"
        )));
    }
    let sync = match options.synchronous {
        Synchronous::Full => "FULL",
        Synchronous::Normal => "NORMAL",
    };
    conn.pragma_update(None, "synchronous", sync)
        .op(label, "set synchronous")?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .op(label, "enable foreign keys")?;
    Ok(conn)
}

/// Apply `migrations` to the database at `path` (creating it), as `open` does with the
/// shipped list. For tests that build a database as an older version left it.
pub fn migrate_with(path: &Path, migrations: &[Migration]) -> Result<()> {
    let label = path.display().to_string();
    let mut conn = open_connection(path, &label, &SqliteOptions::default())?;
    migrate(&mut conn, &label, migrations)
}

fn migrate(conn: &mut Connection, label: &str, migrations: &[Migration]) -> Result<()> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .op(label, "begin migration")?;
    let current: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .op(label, "read schema version")?;
    for m in pending(current, migrations)? {
        tx.execute_batch(m.sql).map_err(|source| Error::Sqlite {
            path: label.to_string(),
            op: "apply migration",
            source,
        })?;
        tx.pragma_update(None, "user_version", m.version)
            .op(label, "record schema version")?;
    }
    tx.commit().op(label, "commit migration")
}

impl SqliteStore {
    /// Open (creating it and its folder if need be) the store in `path`, migrating an
    /// older schema. `:memory:` opens a private in-memory database.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore> {
        SqliteStore::open_with(path, SqliteOptions::default())
    }

    /// [`open`](Self::open) with options.
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<SqliteStore> {
        let path = path.as_ref().to_path_buf();
        let label = path.display().to_string();
        let in_memory = label == ":memory:";
        if !in_memory {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                    path: dir.display().to_string(),
                    source,
                })?;
            }
        }
        let mut writer = open_connection(&path, &label, &options)?;
        migrate(&mut writer, &label, SQLITE_MIGRATIONS)?;
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                path,
                label,
                options,
                writer: Mutex::new(writer),
                readers: Mutex::new(Vec::new()),
                in_memory,
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    async fn blocking<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> Result<T> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || work(&inner))
            .await
            .map_err(|e| Error::Task(e.to_string()))?
    }
}

impl Inner {
    fn write<T>(&self, work: impl FnOnce(&mut Connection, &str) -> Result<T>) -> Result<T> {
        let mut conn = lock(&self.writer);
        work(&mut conn, &self.label)
    }

    fn read<T>(&self, work: impl FnOnce(&Connection, &str) -> Result<T>) -> Result<T> {
        if self.in_memory {
            return work(&lock(&self.writer), &self.label);
        }
        let pooled = lock(&self.readers).pop();
        let conn = match pooled {
            Some(c) => c,
            None => open_connection(&self.path, &self.label, &self.options)?,
        };
        let out = work(&conn, &self.label);
        let mut pool = lock(&self.readers);
        if pool.len() < self.options.readers {
            pool.push(conn);
        }
        out
    }
}

const INFO_COLUMNS: &str = "id, format, created_at, last_seq, parent_id, forked_at, scope";

fn info_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawInfo> {
    Ok(RawInfo {
        id: row.get(0)?,
        format: row.get(1)?,
        created_at: row.get(2)?,
        last_seq: row.get(3)?,
        parent_id: row.get(4)?,
        forked_at: row.get(5)?,
        scope: row.get(6)?,
    })
}

/// A conversation row as the database has it.
pub(crate) struct RawInfo {
    pub id: String,
    pub format: String,
    pub created_at: i64,
    pub last_seq: i64,
    pub parent_id: Option<String>,
    pub forked_at: Option<i64>,
    pub scope: String,
}

impl RawInfo {
    pub(crate) fn into_info(self) -> Result<ConversationInfo> {
        let format = Format::parse(&self.format)
            .map_err(|e| Error::Schema(format!("conversation '{}': {e}", self.id)))?;
        Ok(ConversationInfo {
            format,
            created_at_ms: self.created_at,
            last_sequence: to_u64(self.last_seq),
            forked_from: self.parent_id.map(|conversation| ForkOrigin {
                conversation,
                at_sequence: to_u64(self.forked_at.unwrap_or(0)),
            }),
            id: self.id,
            scope: self.scope,
        })
    }
}

pub(crate) fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

pub(crate) fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The sequences `first..first+count`.
pub(crate) fn run_of(first: i64, count: i64) -> Vec<u64> {
    (0..count.max(0)).map(|i| to_u64(first + i)).collect()
}

fn append_in(
    conn: &mut Connection,
    label: &str,
    key_ttl: Duration,
    conversation: &str,
    messages: &[NewMessage],
    options: &AppendOptions,
) -> Result<Appended> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .op(label, "begin append")?;
    let (pk, last, format, owner): (i64, i64, String, String) = tx
        .prepare_cached("SELECT pk, last_seq, format, scope FROM conversations WHERE id = ?1")
        .and_then(|mut s| {
            s.query_row([conversation], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .optional()
        })
        .op(label, "find conversation")?
        .ok_or_else(|| Error::NotFound(conversation.to_string()))?;
    check_append_scope(conversation, options, &owner)?;
    let bodies_between = |first: i64, last: i64| -> Result<Vec<String>> {
        let mut stmt = tx
            .prepare_cached(
                "SELECT body FROM messages WHERE conversation = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq",
            )
            .op(label, "read messages")?;
        let rows = stmt
            .query_map(params![pk, first, last], |r| r.get::<_, String>(0))
            .op(label, "read messages")?;
        rows.collect::<rusqlite::Result<Vec<String>>>()
            .op(label, "read messages")
    };
    // Keys past their lifetime go first, so an expired key is never honoured.
    tx.prepare_cached("DELETE FROM append_keys WHERE conversation = ?1 AND created_at < ?2")
        .and_then(|mut s| s.execute(params![pk, expiry_cutoff(key_ttl)]))
        .op(label, "forget expired idempotency keys")?;
    if let Some(key) = &options.idempotency_key {
        let earlier: Option<(i64, i64)> = tx
            .prepare_cached(
                "SELECT first_seq, count FROM append_keys WHERE conversation = ?1 AND key = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![pk, key], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .op(label, "look up idempotency key")?;
        if let Some((first, count)) = earlier {
            let stored = bodies_between(first, first + count - 1)?;
            return replay(conversation, key, first, count, &stored, messages);
        }
    }
    expect(conversation, options, last)?;
    let findings = match &options.validation {
        Some(v) => {
            let format = Format::parse(&format).map_err(Error::Schema)?;
            validate::judge(v, format, &bodies_between(1, last)?, messages)?
        }
        None => Vec::new(),
    };
    let now = now_ms();
    let ids = ids_for(messages);
    {
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO messages (conversation, seq, message_id, role, body, appended_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .op(label, "insert message")?;
        for (i, (m, id)) in messages.iter().zip(&ids).enumerate() {
            let seq = last + 1 + i as i64;
            insert
                .execute(params![pk, seq, id, m.role(), m.json(), now])
                .op(label, "insert message")?;
        }
    }
    let count = messages.len() as i64;
    tx.prepare_cached("UPDATE conversations SET last_seq = ?1 WHERE pk = ?2")
        .and_then(|mut s| s.execute(params![last + count, pk]))
        .op(label, "advance sequence")?;
    if let Some(key) = &options.idempotency_key {
        tx.prepare_cached(
            "INSERT INTO append_keys (conversation, key, first_seq, count, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .and_then(|mut s| s.execute(params![pk, key, last + 1, count, now]))
        .op(label, "record idempotency key")?;
    }
    tx.commit().op(label, "commit append")?;
    Ok(Appended {
        sequences: run_of(last + 1, count),
        replayed: false,
        findings,
    })
}

/// Insert a conversation row; `None` when the id is taken.
fn insert_conversation(
    conn: &Connection,
    label: &str,
    id: &str,
    format: Format,
    scope: &str,
) -> Result<Option<ConversationInfo>> {
    let now = now_ms();
    let made = conn
        .prepare_cached(
            "INSERT INTO conversations (id, format, created_at, scope) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (id) DO NOTHING",
        )
        .and_then(|mut s| s.execute(params![id, format.name(), now, scope]))
        .op(label, "create conversation")?;
    Ok((made > 0).then(|| ConversationInfo {
        id: id.to_string(),
        format,
        created_at_ms: now,
        last_sequence: 0,
        forked_from: None,
        scope: scope.to_string(),
    }))
}

/// [`Store::claim`] in one `BEGIN IMMEDIATE` transaction: create, adopt or find, and
/// refuse another scope's.
fn claim_in(
    conn: &mut Connection,
    label: &str,
    id: &str,
    scope: &str,
    format: Format,
) -> Result<(ConversationInfo, Claim)> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .op(label, "begin claim")?;
    if let Some(info) = insert_conversation(&tx, label, id, format, scope)? {
        tx.commit().op(label, "commit claim")?;
        return Ok((info, Claim::Created));
    }
    let adopted = tx
        .prepare_cached("UPDATE conversations SET scope = ?1 WHERE id = ?2 AND scope = ?3")
        .and_then(|mut s| s.execute(params![scope, id, UNSCOPED]))
        .op(label, "claim conversation")?;
    let sql = format!("SELECT {INFO_COLUMNS} FROM conversations WHERE id = ?1");
    let info = tx
        .prepare_cached(&sql)
        .and_then(|mut s| s.query_row([id], info_from_row).optional())
        .op(label, "read conversation")?
        .ok_or_else(|| Error::NotFound(id.to_string()))?
        .into_info()?;
    tx.commit().op(label, "commit claim")?;
    Claim::of_existing(info, scope, adopted > 0)
}

/// Refuse a compare-and-append whose conversation moved on.
pub(crate) fn expect(conversation: &str, options: &AppendOptions, last: i64) -> Result<()> {
    match options.expect_last {
        Some(expected) if to_i64(expected) != last => Err(Error::Moved {
            conversation: conversation.to_string(),
            expected,
            last: to_u64(last),
        }),
        _ => Ok(()),
    }
}

/// The answer to an append whose key was used: the first result when the messages are
/// the same, a conflict when they are not. Writes nothing either way.
pub(crate) fn replay(
    conversation: &str,
    key: &str,
    first: i64,
    count: i64,
    stored: &[String],
    messages: &[NewMessage],
) -> Result<Appended> {
    let same =
        stored.len() == messages.len() && stored.iter().zip(messages).all(|(s, m)| s == m.json());
    if !same {
        return Err(Error::KeyConflict {
            conversation: conversation.to_string(),
            key: key.to_string(),
            first: to_u64(first),
            last: to_u64(first + count - 1),
        });
    }
    Ok(Appended {
        sequences: run_of(first, count),
        replayed: true,
        findings: Vec::new(),
    })
}

impl Store for SqliteStore {
    async fn create(&self, new: NewConversation) -> Result<ConversationInfo> {
        let id = match new.id {
            Some(id) => {
                check_conversation_id(&id)?;
                id
            }
            None => fresh_id(),
        };
        check_scope(&new.scope)?;
        let (format, scope) = (new.format, new.scope);
        self.blocking(move |inner| {
            inner.write(|conn, label| {
                match insert_conversation(conn, label, &id, format, &scope)? {
                    Some(info) => Ok(info),
                    None => Err(Error::AlreadyExists(id)),
                }
            })
        })
        .await
    }

    async fn claim(
        &self,
        id: &str,
        scope: &str,
        format: Format,
    ) -> Result<(ConversationInfo, Claim)> {
        check_conversation_id(id)?;
        check_scope(scope)?;
        let (id, scope) = (id.to_string(), scope.to_string());
        self.blocking(move |inner| {
            inner.write(|conn, label| claim_in(conn, label, &id, &scope, format))
        })
        .await
    }

    async fn append(
        &self,
        conversation: &str,
        messages: &[NewMessage],
        options: &AppendOptions,
    ) -> Result<Appended> {
        let conversation = conversation.to_string();
        let messages = messages.to_vec();
        let options = options.clone();
        self.blocking(move |inner| {
            let ttl = inner.options.key_ttl;
            inner.write(|conn, label| {
                append_in(conn, label, ttl, &conversation, &messages, &options)
            })
        })
        .await
    }

    async fn load(&self, conversation: &str, span: Span) -> Result<Vec<StoredMessage>> {
        let conversation = conversation.to_string();
        self.blocking(move |inner| {
            inner.read(|conn, label| {
                let (from, to) = span.bounds();
                // One statement: the conversation's row and its messages from one snapshot.
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT m.seq, m.message_id, m.role, m.body, m.appended_at \
                         FROM conversations c LEFT JOIN messages m \
                           ON m.conversation = c.pk AND m.seq BETWEEN ?2 AND ?3 \
                         WHERE c.id = ?1 ORDER BY m.seq",
                    )
                    .op(label, "load")?;
                let mut rows = stmt
                    .query(params![conversation, from, to])
                    .op(label, "load")?;
                let mut found = false;
                let mut out = Vec::new();
                while let Some(row) = rows.next().op(label, "load")? {
                    found = true;
                    let seq: Option<i64> = row.get(0).op(label, "load")?;
                    let Some(seq) = seq else { continue };
                    out.push(StoredMessage {
                        seq: to_u64(seq),
                        id: row.get(1).op(label, "load")?,
                        role: row.get(2).op(label, "load")?,
                        raw: row.get(3).op(label, "load")?,
                        appended_at_ms: row.get(4).op(label, "load")?,
                    });
                }
                if !found {
                    return Err(Error::NotFound(conversation));
                }
                Ok(out)
            })
        })
        .await
    }

    async fn info(&self, conversation: &str) -> Result<ConversationInfo> {
        let conversation = conversation.to_string();
        self.blocking(move |inner| {
            inner.read(|conn, label| {
                let sql = format!("SELECT {INFO_COLUMNS} FROM conversations WHERE id = ?1");
                conn.prepare_cached(&sql)
                    .and_then(|mut s| s.query_row([&conversation], info_from_row).optional())
                    .op(label, "read conversation")?
                    .ok_or(Error::NotFound(conversation))?
                    .into_info()
            })
        })
        .await
    }

    async fn list(&self, options: &ListOptions) -> Result<Vec<ConversationInfo>> {
        let options = options.clone();
        self.blocking(move |inner| {
            inner.read(|conn, label| {
                let after = match &options.after {
                    None => 0,
                    Some(id) => conn
                        .prepare_cached("SELECT pk FROM conversations WHERE id = ?1")
                        .and_then(|mut s| s.query_row([id], |r| r.get::<_, i64>(0)).optional())
                        .op(label, "list")?
                        .ok_or_else(|| Error::NotFound(id.clone()))?,
                };
                let limit = options.limit.map_or(-1, i64::from);
                let sql = format!(
                    "SELECT {INFO_COLUMNS} FROM conversations \
                     WHERE pk > ?1 AND (?3 IS NULL OR scope = ?3) ORDER BY pk LIMIT ?2"
                );
                let mut stmt = conn.prepare_cached(&sql).op(label, "list")?;
                let rows = stmt
                    .query_map(params![after, limit, options.scope], info_from_row)
                    .op(label, "list")?;
                rows.map(|r| r.op(label, "list").and_then(RawInfo::into_info))
                    .collect()
            })
        })
        .await
    }

    async fn fork(
        &self,
        conversation: &str,
        at_sequence: u64,
        new_id: Option<&str>,
    ) -> Result<ConversationInfo> {
        let conversation = conversation.to_string();
        let new_id = match new_id {
            Some(id) => {
                check_conversation_id(id)?;
                id.to_string()
            }
            None => fresh_id(),
        };
        self.blocking(move |inner| {
            inner.write(|conn, label| {
                let tx = conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .op(label, "begin fork")?;
                let (pk, last, format, scope): (i64, i64, String, String) = tx
                    .prepare_cached(
                        "SELECT pk, last_seq, format, scope FROM conversations WHERE id = ?1",
                    )
                    .and_then(|mut s| {
                        s.query_row([&conversation], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                        })
                        .optional()
                    })
                    .op(label, "find conversation")?
                    .ok_or_else(|| Error::NotFound(conversation.clone()))?;
                let at = to_i64(at_sequence);
                if at > last {
                    return Err(Error::OutOfRange {
                        conversation,
                        at: at_sequence,
                        last: to_u64(last),
                    });
                }
                let now = now_ms();
                let made = tx
                    .prepare_cached(
                        "INSERT INTO conversations (id, format, created_at, parent_id, forked_at, last_seq, scope) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6) ON CONFLICT (id) DO NOTHING",
                    )
                    .and_then(|mut s| {
                        s.execute(params![new_id, format, now, conversation, at, scope])
                    })
                    .op(label, "create fork")?;
                if made == 0 {
                    return Err(Error::AlreadyExists(new_id));
                }
                let new_pk = tx.last_insert_rowid();
                tx.prepare_cached(
                    "INSERT INTO messages (conversation, seq, message_id, role, body, appended_at) \
                     SELECT ?1, seq, message_id, role, body, appended_at FROM messages \
                     WHERE conversation = ?2 AND seq <= ?3 ORDER BY seq",
                )
                .and_then(|mut s| s.execute(params![new_pk, pk, at]))
                .op(label, "copy messages")?;
                tx.commit().op(label, "commit fork")?;
                Ok(ConversationInfo {
                    id: new_id,
                    format: Format::parse(&format).map_err(Error::Schema)?,
                    created_at_ms: now,
                    last_sequence: at_sequence,
                    forked_from: Some(ForkOrigin {
                        conversation,
                        at_sequence,
                    }),
                    scope,
                })
            })
        })
        .await
    }

    async fn delete(&self, conversation: &str) -> Result<bool> {
        let conversation = conversation.to_string();
        self.blocking(move |inner| {
            inner.write(|conn, label| {
                let gone = conn
                    .prepare_cached("DELETE FROM conversations WHERE id = ?1")
                    .and_then(|mut s| s.execute([&conversation]))
                    .op(label, "delete conversation")?;
                Ok(gone > 0)
            })
        })
        .await
    }

    async fn prune_keys(&self, older_than: Duration) -> Result<u64> {
        self.blocking(move |inner| {
            inner.write(|conn, label| {
                let gone = conn
                    .prepare_cached("DELETE FROM append_keys WHERE created_at < ?1")
                    .and_then(|mut s| s.execute([expiry_cutoff(older_than)]))
                    .op(label, "forget old idempotency keys")?;
                Ok(gone as u64)
            })
        })
        .await
    }
}
