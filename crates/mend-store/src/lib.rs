//! A conversation store for mend: append messages, load exactly what was appended.
//!
//! The [`Store`] trait keeps conversations as ordered lists of messages. Each message
//! is a JSON object kept as the very text it was appended as; the store adds only
//! columns beside it (a conversation-wide sequence number, a stable message id, the
//! role). Two backends implement the trait: [`SqliteStore`] (one file, the default)
//! and [`PgStore`] (PostgreSQL, for many gateway replicas); [`AnyStore`] picks one from
//! a `--db` address.
//!
//! What the store promises, on both backends (the conformance suite in
//! `tests/it/conformance.rs` holds each backend to it):
//! - `load` returns exactly what was appended: the same bytes, order and ids, including
//!   assistant messages that hold only reasoning or thinking. Nothing is merged, split,
//!   cleaned up or reordered, and nothing depends on how messages were batched.
//! - Sequence numbers are assigned by the store, per conversation, from 1 without gaps.
//! - An append is atomic and durable once acknowledged; an append whose idempotency key
//!   was already used (within the key lifetime, seven days unless told) writes nothing
//!   and returns the first append's sequences. Keys past their lifetime are forgotten,
//!   so the key table stays bounded by the appends of one lifetime.
//! - Concurrent writers to one conversation lose and duplicate nothing.
//! - A conversation belongs to a scope (`ConversationInfo::scope`; [`UNSCOPED`] until
//!   claimed). [`Store::claim`] creates, adopts or refuses atomically, so of callers
//!   racing for one id with different scopes exactly one wins; an append with
//!   [`AppendOptions::scope`] writes nothing in another scope's conversation. What a
//!   scope is (a credential's hash, a tenant) is the gateway's business, not the store's.
//!
//! What it is not: a cache of provider state, a search index, or a converter. It does not
//! parse message content beyond finding `role`/`type` and `id`. Around it: optional
//! [`Validation`] on append asks `mend` whether the resulting history would still be
//! valid for a dialect, and [`render`] makes a request body of any dialect from stored
//! messages (through `mend::canonical` when they are not that dialect's wire messages).
//! A conversation records its [`Format`] (wire messages of one dialect, canonical
//! messages, or undeclared) so that both know what they are reading.
//!
//! Code map: `sqlite` and `postgres` (the backends, each with its concurrency invariant
//! in its header), `migrate` (embedded, versioned schema), `message` (what goes in and
//! comes out), `validate`, `render`, `any` (`--db` addresses). The helper binary
//! `mend-store-writer` drives the crash test and the throughput bench.
//!
//! ```no_run
//! # async fn demo() -> Result<(), mend_store::Error> {
//! use mend_store::{AnyStore, AppendOptions, NewConversation, NewMessage, Span, Store};
//! use serde_json::json;
//!
//! let store = AnyStore::open("sqlite:/tmp/mend.db").await?;
//! let conv = store.create(NewConversation::default()).await?;
//! let batch = [
//!     NewMessage::from_value(&json!({"role": "user", "content": "hi"}))?,
//!     NewMessage::from_value(&json!({"role": "assistant", "content": "hello"}))?,
//! ];
//! let done = store.append(&conv.id, &batch, &AppendOptions::keyed("turn-1")).await?;
//! assert_eq!(done.sequences, vec![1, 2]);
//! let back = store.load(&conv.id, Span::ALL).await?;
//! assert_eq!(back[1].raw, batch[1].json());
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

mod any;
mod error;
mod message;
mod migrate;
mod postgres;
pub mod render;
mod sqlite;
mod validate;

use std::future::Future;

pub use any::{default_db_url, default_sqlite_path, AnyStore, DbUrl};
pub use error::Error;
pub use message::{values, NewMessage, StoredMessage};
pub use postgres::{PgOptions, PgStore};
pub use sqlite::{SqliteOptions, SqliteStore, Synchronous};
pub use validate::{OnViolation, Validation};

/// What a store call returns.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What the messages of a conversation are written in. Recorded at creation so that a
/// reader knows how to render a request body from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Not declared: any JSON objects with a role.
    #[default]
    Any,
    /// mend's canonical messages ([`mend::canonical::Message`] in its JSON form), read
    /// from requests of this dialect (whose extras and forms they carry), if one.
    Canonical(Option<mend::Dialect>),
    /// Wire messages (or Responses items) of one dialect, as they sit in its history array.
    Wire(mend::Dialect),
}

impl Format {
    /// The stable name kept in the database: `any`, `canonical`, `canonical:DIALECT`, or
    /// a dialect name.
    pub fn name(self) -> &'static str {
        use mend::Dialect::*;
        match self {
            Format::Any => "any",
            Format::Canonical(None) => "canonical",
            Format::Canonical(Some(OpenAiChat)) => "canonical:openai_chat",
            Format::Canonical(Some(OpenAiResponses)) => "canonical:openai_responses",
            Format::Canonical(Some(Anthropic)) => "canonical:anthropic",
            Format::Canonical(Some(Gemini)) => "canonical:gemini",
            Format::Canonical(Some(BedrockConverse)) => "canonical:bedrock_converse",
            Format::Wire(d) => d.name(),
        }
    }

    /// Read a stable name back.
    pub fn parse(name: &str) -> Result<Format, String> {
        let dialect = |d: &str| {
            d.parse::<mend::Dialect>().map_err(|_| {
                format!(
                    "unknown message format '{name}' (expected any, canonical, canonical:DIALECT or a dialect: {})",
                    mend::Dialect::ALL.map(mend::Dialect::name).join(", ")
                )
            })
        };
        match name {
            "any" => Ok(Format::Any),
            "canonical" => Ok(Format::Canonical(None)),
            other => match other.strip_prefix("canonical:") {
                Some(d) => dialect(d).map(|d| Format::Canonical(Some(d))),
                None => dialect(other).map(Format::Wire),
            },
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The scope of a conversation that belongs to no caller yet: made before scopes
/// existed (the migration gives it to every older conversation) or made without one
/// (`mend store create` without `--scope`). The first [`Store::claim`] with a scope
/// takes it.
pub const UNSCOPED: &str = "unscoped";

/// A conversation to create.
#[derive(Debug, Clone)]
pub struct NewConversation {
    /// Its id; a fresh time-ordered UUID when `None`.
    pub id: Option<String>,
    /// What its messages are written in.
    pub format: Format,
    /// Who it belongs to ([`UNSCOPED`] unless told).
    pub scope: String,
}

impl Default for NewConversation {
    fn default() -> NewConversation {
        NewConversation {
            id: None,
            format: Format::Any,
            scope: UNSCOPED.to_string(),
        }
    }
}

impl NewConversation {
    /// A conversation with this id.
    pub fn with_id(id: impl Into<String>) -> NewConversation {
        NewConversation {
            id: Some(id.into()),
            ..NewConversation::default()
        }
    }

    /// Declare what its messages are written in.
    pub fn format(mut self, format: Format) -> NewConversation {
        self.format = format;
        self
    }

    /// Give it to a scope.
    pub fn scope(mut self, scope: impl Into<String>) -> NewConversation {
        self.scope = scope.into();
        self
    }
}

/// Where a fork came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkOrigin {
    /// The conversation it was forked from (which may since have been deleted).
    pub conversation: String,
    /// The last sequence copied from it.
    pub at_sequence: u64,
}

/// A conversation's row: identity and counters, no messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationInfo {
    /// Its id.
    pub id: String,
    /// What its messages are written in.
    pub format: Format,
    /// Unix time of creation, in milliseconds.
    pub created_at_ms: i64,
    /// The last sequence assigned; 0 when empty. Sequences run 1..=last_sequence with no
    /// gaps, so this is also the number of messages.
    pub last_sequence: u64,
    /// Set when it was made by [`Store::fork`].
    pub forked_from: Option<ForkOrigin>,
    /// Who it belongs to: the scope it was created or claimed with, [`UNSCOPED`] when
    /// nobody has claimed it. A fork belongs to its source's scope.
    pub scope: String,
}

/// How a [`Store::claim`] got its conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// It did not exist; it was created in the caller's scope.
    Created,
    /// It existed in the caller's scope.
    Owned,
    /// It existed [`UNSCOPED`]; it now belongs to the caller's scope.
    Adopted,
}

impl Claim {
    /// The claim of a conversation that existed, as read back after the claim's update
    /// (`adopted`: the update took it from [`UNSCOPED`]): the caller's, or
    /// [`Error::OutOfScope`]. Both backends end their claim here.
    pub(crate) fn of_existing(
        info: ConversationInfo,
        scope: &str,
        adopted: bool,
    ) -> Result<(ConversationInfo, Claim)> {
        if info.scope != scope {
            return Err(Error::OutOfScope {
                conversation: info.id,
                scope: scope.to_string(),
            });
        }
        let how = if adopted {
            Claim::Adopted
        } else {
            Claim::Owned
        };
        Ok((info, how))
    }
}

/// An inclusive range of sequence numbers to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The first sequence (1 is the first message).
    pub from: u64,
    /// The last sequence, or `None` for the end.
    pub to: Option<u64>,
}

impl Span {
    /// The whole conversation.
    pub const ALL: Span = Span { from: 1, to: None };

    /// Sequences `from..=to`.
    pub fn between(from: u64, to: u64) -> Span {
        Span { from, to: Some(to) }
    }

    /// Sequences from `from` to the end.
    pub fn starting_at(from: u64) -> Span {
        Span { from, to: None }
    }

    pub(crate) fn bounds(self) -> (i64, i64) {
        let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        (clamp(self.from), self.to.map_or(i64::MAX, clamp))
    }
}

impl From<std::ops::RangeFull> for Span {
    fn from(_: std::ops::RangeFull) -> Span {
        Span::ALL
    }
}

impl From<std::ops::RangeInclusive<u64>> for Span {
    fn from(r: std::ops::RangeInclusive<u64>) -> Span {
        Span::between(*r.start(), *r.end())
    }
}

impl From<std::ops::RangeFrom<u64>> for Span {
    fn from(r: std::ops::RangeFrom<u64>) -> Span {
        Span::starting_at(r.start)
    }
}

/// How to list conversations.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// At most this many; all when `None`.
    pub limit: Option<u32>,
    /// Only conversations created after this one (a cursor for paging).
    pub after: Option<String>,
    /// Only conversations of this scope.
    pub scope: Option<String>,
}

/// How long an idempotency key is remembered unless the store is told otherwise
/// ([`SqliteOptions::key_ttl`], [`PgOptions::key_ttl`]): seven days.
pub const DEFAULT_KEY_TTL: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// How to append.
#[derive(Debug, Clone, Default)]
pub struct AppendOptions {
    /// The idempotency key: an append whose key this conversation has seen within the
    /// store's key lifetime writes nothing and returns the sequences of the first one
    /// (or [`Error::KeyConflict`] when the messages differ). Keys older than the
    /// lifetime are forgotten (see [`Store::prune_keys`]).
    pub idempotency_key: Option<String>,
    /// Check the resulting history for a dialect before committing.
    pub validation: Option<Validation>,
    /// Append only if the conversation's last sequence is still this one
    /// (compare-and-append): otherwise nothing is written and the answer is
    /// [`Error::Moved`]. A replayed key is answered before this is checked.
    pub expect_last: Option<u64>,
    /// Append only if the conversation belongs to this scope: otherwise nothing is
    /// written and the answer is [`Error::OutOfScope`] (checked first, in the append's
    /// transaction, before a key is replayed).
    pub scope: Option<String>,
}

impl AppendOptions {
    /// An append with an idempotency key.
    pub fn keyed(key: impl Into<String>) -> AppendOptions {
        AppendOptions {
            idempotency_key: Some(key.into()),
            ..AppendOptions::default()
        }
    }

    /// Append only if the conversation still ends at `last` (see
    /// [`AppendOptions::expect_last`]).
    pub fn expecting_last(mut self, last: u64) -> AppendOptions {
        self.expect_last = Some(last);
        self
    }

    /// Also check the resulting history.
    pub fn validate(mut self, validation: Validation) -> AppendOptions {
        self.validation = Some(validation);
        self
    }

    /// Append only if the conversation belongs to `scope` (see [`AppendOptions::scope`]).
    pub fn in_scope(mut self, scope: impl Into<String>) -> AppendOptions {
        self.scope = Some(scope.into());
        self
    }
}

/// What an append did.
#[derive(Debug, Clone, PartialEq)]
pub struct Appended {
    /// The sequence numbers of the appended messages, in the order given (consecutive).
    pub sequences: Vec<u64>,
    /// The idempotency key had been used: nothing was written, and `sequences` are those
    /// of the first append with that key.
    pub replayed: bool,
    /// Findings of the validation that did not stop the append (warnings, and errors
    /// under [`OnViolation::Warn`]). Empty without validation.
    pub findings: Vec<mend::Violation>,
}

/// A conversation store. Both backends hold every promise of the crate header.
///
/// Async because its first long-lived user is the gateway (axum on tokio): PostgreSQL is
/// driven natively, SQLite runs its blocking calls on tokio's blocking pool. Futures are
/// `Send`, so a handler can hold a store in its state and await it.
pub trait Store: Send + Sync {
    /// Create an empty conversation.
    fn create(&self, new: NewConversation)
        -> impl Future<Output = Result<ConversationInfo>> + Send;

    /// Make sure the conversation `id` belongs to `scope`, atomically: create it (with
    /// `format`) when it does not exist, take it when it is [`UNSCOPED`], and refuse
    /// ([`Error::OutOfScope`], nothing written) when another scope has it. Of callers
    /// racing to claim one id with different scopes, exactly one wins.
    fn claim(
        &self,
        id: &str,
        scope: &str,
        format: Format,
    ) -> impl Future<Output = Result<(ConversationInfo, Claim)>> + Send;

    /// Append messages at the end of a conversation, in the order given, as one atomic
    /// write. Returns the sequence numbers assigned.
    fn append(
        &self,
        conversation: &str,
        messages: &[NewMessage],
        options: &AppendOptions,
    ) -> impl Future<Output = Result<Appended>> + Send;

    /// The messages of a span of a conversation, in sequence order, exactly as appended.
    fn load(
        &self,
        conversation: &str,
        span: Span,
    ) -> impl Future<Output = Result<Vec<StoredMessage>>> + Send;

    /// One conversation's row.
    fn info(&self, conversation: &str) -> impl Future<Output = Result<ConversationInfo>> + Send;

    /// Conversations in creation order.
    fn list(
        &self,
        options: &ListOptions,
    ) -> impl Future<Output = Result<Vec<ConversationInfo>>> + Send;

    /// A new conversation holding copies of messages `1..=at_sequence` (same bytes, ids
    /// and sequences) and nothing else: no later message, no idempotency key. `at_sequence`
    /// 0 makes an empty fork. The new id is `new_id`, or a fresh UUID.
    fn fork(
        &self,
        conversation: &str,
        at_sequence: u64,
        new_id: Option<&str>,
    ) -> impl Future<Output = Result<ConversationInfo>> + Send;

    /// Delete a conversation with its messages and keys. Its forks stay. Returns whether
    /// it existed.
    fn delete(&self, conversation: &str) -> impl Future<Output = Result<bool>> + Send;

    /// Forget the idempotency keys of every conversation that are older than
    /// `older_than`; returns how many were forgotten. Messages are never touched.
    ///
    /// Each append already forgets its own conversation's keys older than the store's
    /// key lifetime, in its transaction, before it looks its key up: within the
    /// lifetime a used key always replays, past it a key is never honoured. This call
    /// is for the conversations nobody appends to any more (`mend store prune`).
    fn prune_keys(
        &self,
        older_than: std::time::Duration,
    ) -> impl Future<Output = Result<u64>> + Send;
}

/// `now - ttl` in unix milliseconds: keys created before it are expired.
pub(crate) fn expiry_cutoff(ttl: std::time::Duration) -> i64 {
    now_ms().saturating_sub(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
}

/// Unix time in milliseconds.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A fresh id: a UUIDv7, so ids sort by creation time.
pub(crate) fn fresh_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Check a scope given by a caller.
pub(crate) fn check_scope(scope: &str) -> Result<()> {
    if scope.is_empty() || scope.len() > 256 || scope.chars().any(char::is_control) {
        return Err(Error::InvalidScope(scope.chars().take(80).collect()));
    }
    Ok(())
}

/// Refuse an append whose caller is not of the conversation's scope.
pub(crate) fn check_append_scope(
    conversation: &str,
    options: &AppendOptions,
    owner: &str,
) -> Result<()> {
    match &options.scope {
        Some(scope) if scope != owner => Err(Error::OutOfScope {
            conversation: conversation.to_string(),
            scope: scope.clone(),
        }),
        _ => Ok(()),
    }
}

/// Check a caller-chosen conversation id.
pub(crate) fn check_conversation_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > 256 || id.chars().any(char::is_control) {
        return Err(Error::InvalidId(id.chars().take(80).collect()));
    }
    Ok(())
}

#[doc(hidden)]
pub mod testing {
    //! Hooks for tests (this crate's, the CLI's): apply a chosen list of migrations, to
    //! build a database as an older version left it; drop a test's PostgreSQL schema.
    //! Not part of the API.
    pub use crate::migrate::{Migration, POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS};
    pub use crate::postgres::drop_schema as drop_postgres_schema;
    pub use crate::postgres::migrate_with as migrate_postgres_with;
    pub use crate::sqlite::migrate_with as migrate_sqlite_with;
}
