//! The PostgreSQL backend: tokio-postgres with a deadpool connection pool, every table in
//! one schema (`mend` unless told).
//!
//! tokio-postgres rather than sqlx: the store is a handful of hand-written statements, so
//! sqlx's compile-time checking (which wants a database or an offline cache at build
//! time) and its own pool and migrator would add weight without removing any code; and
//! tokio-postgres speaks the binary protocol with arrays, which lets one statement insert
//! a whole append (`UNNEST`).
//!
//! Invariant: an append locks its conversation's row (`SELECT ... FOR NO KEY UPDATE`)
//! before it reads `last_seq` or the idempotency key, so appends to one conversation run
//! one after another and see each other's commits; sequences are `last_seq + 1 ..`
//! inside that transaction. Appends to different conversations do not wait for each
//! other. A fork takes `FOR KEY SHARE` on its source, which does not block appends.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::message::{ids_for, NewMessage, StoredMessage};
use crate::migrate::{pending, Migration, POSTGRES_MIGRATIONS};
use crate::sqlite::{expect, replay, run_of, to_i64, to_u64, RawInfo};
use crate::{
    check_append_scope, check_conversation_id, check_scope, expiry_cutoff, fresh_id, now_ms,
    validate, AppendOptions, Appended, Claim, ConversationInfo, Error, ForkOrigin, Format,
    ListOptions, NewConversation, Result, Span, Store, UNSCOPED,
};

/// How to connect to PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// The schema that holds the store's tables; created if missing.
    pub schema: String,
    /// Connections kept open at most.
    pub pool_size: usize,
    /// How long to wait for the server when connecting.
    pub connect_timeout: Duration,
    /// How long an idempotency key is remembered ([`crate::DEFAULT_KEY_TTL`]).
    pub key_ttl: Duration,
}

impl Default for PgOptions {
    fn default() -> PgOptions {
        PgOptions {
            schema: "mend".into(),
            pool_size: 16,
            connect_timeout: Duration::from_secs(5),
            key_ttl: crate::DEFAULT_KEY_TTL,
        }
    }
}

/// A store in a PostgreSQL schema. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    schema: String,
    key_ttl: Duration,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

trait Op<T> {
    fn op(self, op: &'static str) -> Result<T>;
}

impl<T> Op<T> for std::result::Result<T, tokio_postgres::Error> {
    fn op(self, op: &'static str) -> Result<T> {
        self.map_err(|source| Error::Postgres { op, source })
    }
}

/// A schema name we are willing to splice into SQL: lowercase letters, digits and `_`.
fn check_schema(schema: &str) -> Result<()> {
    let ok = !schema.is_empty()
        && schema.len() <= 63
        && schema
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !schema.as_bytes()[0].is_ascii_digit();
    if ok {
        Ok(())
    } else {
        Err(Error::BadUrl(format!(
            "schema '{schema}': use 1 to 63 lowercase letters, digits and _, not starting with a digit"
        )))
    }
}

/// The advisory lock that serializes migrations of one schema (FNV-1a of its name).
fn migration_lock(schema: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in "mend-store:".bytes().chain(schema.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

fn pool_for(url: &str, options: &PgOptions) -> Result<Pool> {
    check_schema(&options.schema)?;
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| Error::BadUrl(format!("{e} in a postgres:// address")))?;
    let search_path = format!("-c search_path={}", options.schema);
    let startup = match config.get_options() {
        Some(given) if !given.is_empty() => format!("{given} {search_path}"),
        _ => search_path,
    };
    config.options(startup);
    config.connect_timeout(options.connect_timeout);
    if config.get_application_name().is_none() {
        config.application_name("mend-store");
    }
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(options.pool_size.max(1))
        .build()
        .map_err(|e| Error::Pool(e.to_string()))
}

/// Apply `migrations` to the schema at `url`, as `connect` does with the shipped list.
/// For tests that build a database as an older version left it.
pub async fn migrate_with(url: &str, schema: &str, migrations: &[Migration]) -> Result<()> {
    let options = PgOptions {
        schema: schema.to_string(),
        pool_size: 1,
        ..PgOptions::default()
    };
    let pool = pool_for(url, &options)?;
    migrate(&pool, schema, migrations).await
}

/// Drop a schema with everything in it. For tests that made one of their own.
pub async fn drop_schema(url: &str, schema: &str) -> Result<()> {
    check_schema(schema)?;
    let options = PgOptions {
        schema: schema.to_string(),
        pool_size: 1,
        ..PgOptions::default()
    };
    let pool = pool_for(url, &options)?;
    let client = pool.get().await.map_err(|e| Error::Pool(e.to_string()))?;
    client
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .await
        .op("drop schema")
}

async fn migrate(pool: &Pool, schema: &str, migrations: &[Migration]) -> Result<()> {
    let mut client = pool.get().await.map_err(|e| Error::Pool(e.to_string()))?;
    let tx = client.transaction().await.op("begin migration")?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&migration_lock(schema)],
    )
    .await
    .op("lock the schema for migration")?;
    // The schema name was checked to be a plain identifier.
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {schema}; SET LOCAL search_path TO {schema};\n\
         CREATE TABLE IF NOT EXISTS mend_schema (\n\
             version    integer PRIMARY KEY,\n\
             name       text    NOT NULL,\n\
             applied_at bigint  NOT NULL\n\
         );"
    ))
    .await
    .op("create the schema")?;
    let current: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::bigint FROM mend_schema",
            &[],
        )
        .await
        .op("read schema version")?
        .get(0);
    for m in pending(current, migrations)? {
        tx.batch_execute(m.sql).await.op("apply migration")?;
        tx.execute(
            "INSERT INTO mend_schema (version, name, applied_at) VALUES ($1, $2, $3)",
            &[&(m.version as i32), &m.name, &now_ms()],
        )
        .await
        .op("record schema version")?;
    }
    tx.commit().await.op("commit migration")
}

const INFO_COLUMNS: &str = "id, format, created_at, last_seq, parent_id, forked_at, scope";

fn info_from_row(row: &tokio_postgres::Row) -> Result<RawInfo> {
    Ok(RawInfo {
        id: row.try_get(0).op("read conversation")?,
        format: row.try_get(1).op("read conversation")?,
        created_at: row.try_get(2).op("read conversation")?,
        last_seq: row.try_get(3).op("read conversation")?,
        parent_id: row.try_get(4).op("read conversation")?,
        forked_at: row.try_get(5).op("read conversation")?,
        scope: row.try_get(6).op("read conversation")?,
    })
}

impl PgStore {
    /// Connect to `url` (`postgres://user@host:port/db`), create the schema if it is
    /// missing, and migrate it.
    pub async fn connect(url: &str, options: PgOptions) -> Result<PgStore> {
        let pool = pool_for(url, &options)?;
        migrate(&pool, &options.schema, POSTGRES_MIGRATIONS).await?;
        Ok(PgStore {
            pool,
            schema: options.schema,
            key_ttl: options.key_ttl,
        })
    }

    /// The schema that holds the tables.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    async fn client(&self) -> Result<deadpool_postgres::Object> {
        self.pool
            .get()
            .await
            .map_err(|e| Error::Pool(e.to_string()))
    }
}

/// Insert a conversation row; `None` when the id is taken.
async fn insert_conversation(
    client: &impl deadpool_postgres::GenericClient,
    id: &str,
    format: Format,
    scope: &str,
) -> Result<Option<ConversationInfo>> {
    let now = now_ms();
    let stmt = client
        .prepare_cached(
            "INSERT INTO conversations (id, format, created_at, scope) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (id) DO NOTHING",
        )
        .await
        .op("create conversation")?;
    let made = client
        .execute(&stmt, &[&id, &format.name(), &now, &scope])
        .await
        .op("create conversation")?;
    Ok((made > 0).then(|| ConversationInfo {
        id: id.to_string(),
        format,
        created_at_ms: now,
        last_sequence: 0,
        forked_from: None,
        scope: scope.to_string(),
    }))
}

impl Store for PgStore {
    async fn create(&self, new: NewConversation) -> Result<ConversationInfo> {
        let id = match new.id {
            Some(id) => {
                check_conversation_id(&id)?;
                id
            }
            None => fresh_id(),
        };
        check_scope(&new.scope)?;
        let client = self.client().await?;
        match insert_conversation(&client, &id, new.format, &new.scope).await? {
            Some(info) => Ok(info),
            None => Err(Error::AlreadyExists(id)),
        }
    }

    async fn claim(
        &self,
        id: &str,
        scope: &str,
        format: Format,
    ) -> Result<(ConversationInfo, Claim)> {
        check_conversation_id(id)?;
        check_scope(scope)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.op("begin claim")?;
        if let Some(info) = insert_conversation(&tx, id, format, scope).await? {
            tx.commit().await.op("commit claim")?;
            return Ok((info, Claim::Created));
        }
        // The row exists (a concurrent insert has committed: ON CONFLICT waited for it).
        // Take it if nobody owns it; the row lock makes one of two adopters win.
        let adopted = tx
            .execute(
                "UPDATE conversations SET scope = $1 WHERE id = $2 AND scope = $3",
                &[&scope, &id, &UNSCOPED],
            )
            .await
            .op("claim conversation")?;
        let sql = format!("SELECT {INFO_COLUMNS} FROM conversations WHERE id = $1");
        let row = tx
            .query_opt(&sql, &[&id])
            .await
            .op("read conversation")?
            .ok_or_else(|| Error::NotFound(id.to_string()))?;
        let info = info_from_row(&row)?.into_info()?;
        tx.commit().await.op("commit claim")?;
        Claim::of_existing(info, scope, adopted > 0)
    }

    async fn append(
        &self,
        conversation: &str,
        messages: &[NewMessage],
        options: &AppendOptions,
    ) -> Result<Appended> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.op("begin append")?;
        let find = tx
            .prepare_cached(
                "SELECT pk, last_seq, format, scope FROM conversations WHERE id = $1 \
                 FOR NO KEY UPDATE",
            )
            .await
            .op("find conversation")?;
        let row = tx
            .query_opt(&find, &[&conversation])
            .await
            .op("find conversation")?
            .ok_or_else(|| Error::NotFound(conversation.to_string()))?;
        let (pk, last, format): (i64, i64, String) = (row.get(0), row.get(1), row.get(2));
        check_append_scope(conversation, options, row.get(3))?;
        let read = tx
            .prepare_cached(
                "SELECT body FROM messages WHERE conversation = $1 AND seq BETWEEN $2 AND $3 \
                 ORDER BY seq",
            )
            .await
            .op("read messages")?;
        // Keys past their lifetime go first, so an expired key is never honoured. The
        // lookup is pipelined behind the delete (sent together, run in order).
        let prune = tx
            .prepare_cached("DELETE FROM append_keys WHERE conversation = $1 AND created_at < $2")
            .await
            .op("forget expired idempotency keys")?;
        let cutoff = expiry_cutoff(self.key_ttl);
        let pruned = async {
            tx.execute(&prune, &[&pk, &cutoff])
                .await
                .op("forget expired idempotency keys")
        };
        if let Some(key) = &options.idempotency_key {
            let lookup = tx
                .prepare_cached(
                    "SELECT first_seq, count FROM append_keys WHERE conversation = $1 AND key = $2",
                )
                .await
                .op("look up idempotency key")?;
            let looked_up = async {
                tx.query_opt(&lookup, &[&pk, key])
                    .await
                    .op("look up idempotency key")
            };
            let (_, earlier) = tokio::try_join!(pruned, looked_up)?;
            if let Some(row) = earlier {
                let (first, count): (i64, i64) = (row.get(0), row.get(1));
                let stored: Vec<String> = tx
                    .query(&read, &[&pk, &first, &(first + count - 1)])
                    .await
                    .op("read messages")?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                tx.rollback().await.op("end replay")?;
                return replay(conversation, key, first, count, &stored, messages);
            }
        } else {
            pruned.await?;
        }
        expect(conversation, options, last)?;
        let findings = match &options.validation {
            Some(v) => {
                let stored: Vec<String> = tx
                    .query(&read, &[&pk, &1i64, &last])
                    .await
                    .op("read messages")?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                let format = Format::parse(&format).map_err(Error::Schema)?;
                validate::judge(v, format, &stored, messages)?
            }
            None => Vec::new(),
        };
        // One statement writes the messages, the new last_seq and the key, so the row
        // lock is held for two round trips (this one and the commit) after the key lookup.
        let now = now_ms();
        let count = messages.len() as i64;
        let ids = ids_for(messages);
        let seqs: Vec<i64> = (last + 1..=last + count).collect();
        let roles: Vec<&str> = messages.iter().map(NewMessage::role).collect();
        let bodies: Vec<&str> = messages.iter().map(NewMessage::json).collect();
        let write = tx
            .prepare_cached(
                "WITH m AS (\
                   INSERT INTO messages (conversation, seq, message_id, role, body, appended_at) \
                   SELECT $1, s, i, r, b, $6 \
                   FROM UNNEST($2::bigint[], $3::text[], $4::text[], $5::text[]) AS t(s, i, r, b)), \
                 c AS (UPDATE conversations SET last_seq = $7 WHERE pk = $1 AND $7 > last_seq) \
                 INSERT INTO append_keys (conversation, key, first_seq, count, created_at) \
                 SELECT $1, $8, $9, $10, $6 WHERE $8::text IS NOT NULL",
            )
            .await
            .op("write append")?;
        tx.execute(
            &write,
            &[
                &pk,
                &seqs,
                &ids,
                &roles,
                &bodies,
                &now,
                &(last + count),
                &options.idempotency_key,
                &(last + 1),
                &count,
            ],
        )
        .await
        .op("write append")?;
        tx.commit().await.op("commit append")?;
        Ok(Appended {
            sequences: run_of(last + 1, count),
            replayed: false,
            findings,
        })
    }

    async fn load(&self, conversation: &str, span: Span) -> Result<Vec<StoredMessage>> {
        let client = self.client().await?;
        let (from, to) = span.bounds();
        // One statement: the conversation's row and its messages from one snapshot.
        let stmt = client
            .prepare_cached(
                "SELECT m.seq, m.message_id, m.role, m.body, m.appended_at \
                 FROM conversations c LEFT JOIN messages m \
                   ON m.conversation = c.pk AND m.seq BETWEEN $2 AND $3 \
                 WHERE c.id = $1 ORDER BY m.seq",
            )
            .await
            .op("load")?;
        let rows = client
            .query(&stmt, &[&conversation, &from, &to])
            .await
            .op("load")?;
        if rows.is_empty() {
            return Err(Error::NotFound(conversation.to_string()));
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let seq: Option<i64> = row.try_get(0).op("load")?;
            let Some(seq) = seq else { continue };
            out.push(StoredMessage {
                seq: to_u64(seq),
                id: row.try_get(1).op("load")?,
                role: row.try_get(2).op("load")?,
                raw: row.try_get(3).op("load")?,
                appended_at_ms: row.try_get(4).op("load")?,
            });
        }
        Ok(out)
    }

    async fn info(&self, conversation: &str) -> Result<ConversationInfo> {
        let client = self.client().await?;
        let sql = format!("SELECT {INFO_COLUMNS} FROM conversations WHERE id = $1");
        let stmt = client.prepare_cached(&sql).await.op("read conversation")?;
        let row = client
            .query_opt(&stmt, &[&conversation])
            .await
            .op("read conversation")?
            .ok_or_else(|| Error::NotFound(conversation.to_string()))?;
        info_from_row(&row)?.into_info()
    }

    async fn list(&self, options: &ListOptions) -> Result<Vec<ConversationInfo>> {
        let client = self.client().await?;
        let after: i64 = match &options.after {
            None => 0,
            Some(id) => client
                .query_opt("SELECT pk FROM conversations WHERE id = $1", &[id])
                .await
                .op("list")?
                .ok_or_else(|| Error::NotFound(id.clone()))?
                .get(0),
        };
        let limit: Option<i64> = options.limit.map(i64::from);
        let sql = format!(
            "SELECT {INFO_COLUMNS} FROM conversations \
             WHERE pk > $1 AND ($3::text IS NULL OR scope = $3) ORDER BY pk LIMIT $2"
        );
        let stmt = client.prepare_cached(&sql).await.op("list")?;
        let rows = client
            .query(&stmt, &[&after, &limit, &options.scope])
            .await
            .op("list")?;
        rows.iter()
            .map(|r| info_from_row(r).and_then(RawInfo::into_info))
            .collect()
    }

    async fn fork(
        &self,
        conversation: &str,
        at_sequence: u64,
        new_id: Option<&str>,
    ) -> Result<ConversationInfo> {
        let new_id = match new_id {
            Some(id) => {
                check_conversation_id(id)?;
                id.to_string()
            }
            None => fresh_id(),
        };
        let mut client = self.client().await?;
        let tx = client.transaction().await.op("begin fork")?;
        let row = tx
            .query_opt(
                "SELECT pk, last_seq, format, scope FROM conversations WHERE id = $1 FOR KEY SHARE",
                &[&conversation],
            )
            .await
            .op("find conversation")?
            .ok_or_else(|| Error::NotFound(conversation.to_string()))?;
        let (pk, last, format): (i64, i64, String) = (row.get(0), row.get(1), row.get(2));
        let scope: String = row.get(3);
        let at = to_i64(at_sequence);
        if at > last {
            return Err(Error::OutOfRange {
                conversation: conversation.to_string(),
                at: at_sequence,
                last: to_u64(last),
            });
        }
        let now = now_ms();
        let made = tx
            .query_opt(
                "INSERT INTO conversations (id, format, created_at, parent_id, forked_at, last_seq, scope) \
                 VALUES ($1, $2, $3, $4, $5, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING pk",
                &[&new_id, &format, &now, &conversation, &at, &scope],
            )
            .await
            .op("create fork")?;
        let Some(made) = made else {
            return Err(Error::AlreadyExists(new_id));
        };
        let new_pk: i64 = made.get(0);
        tx.execute(
            "INSERT INTO messages (conversation, seq, message_id, role, body, appended_at) \
             SELECT $1, seq, message_id, role, body, appended_at FROM messages \
             WHERE conversation = $2 AND seq <= $3",
            &[&new_pk, &pk, &at],
        )
        .await
        .op("copy messages")?;
        tx.commit().await.op("commit fork")?;
        Ok(ConversationInfo {
            id: new_id,
            format: Format::parse(&format).map_err(Error::Schema)?,
            created_at_ms: now,
            last_sequence: at_sequence,
            forked_from: Some(ForkOrigin {
                conversation: conversation.to_string(),
                at_sequence,
            }),
            scope,
        })
    }

    async fn delete(&self, conversation: &str) -> Result<bool> {
        let client = self.client().await?;
        let gone = client
            .execute("DELETE FROM conversations WHERE id = $1", &[&conversation])
            .await
            .op("delete conversation")?;
        Ok(gone > 0)
    }

    async fn prune_keys(&self, older_than: Duration) -> Result<u64> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM append_keys WHERE created_at < $1",
                &[&expiry_cutoff(older_than)],
            )
            .await
            .op("forget old idempotency keys")
    }
}
