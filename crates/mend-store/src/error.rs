//! Why a store call failed: what, and where (which conversation, which message, which
//! database operation).

use mend::Violation;

/// Why a store call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No conversation with this id.
    #[error("no conversation '{0}'")]
    NotFound(String),
    /// A conversation with this id exists already.
    #[error("conversation '{0}' already exists")]
    AlreadyExists(String),
    /// A conversation id that cannot be used (empty, over 256 bytes, control characters).
    #[error("invalid conversation id '{0}': ids are 1 to 256 bytes without control characters")]
    InvalidId(String),
    /// The conversation belongs to another scope than the caller's: nothing was
    /// written. Names the caller's scope only, never the owner's.
    #[error("conversation '{conversation}' belongs to another scope than '{scope}'; nothing was written")]
    OutOfScope {
        /// The conversation.
        conversation: String,
        /// The caller's scope.
        scope: String,
    },
    /// A scope that cannot be used (empty, over 256 bytes, control characters).
    #[error("invalid scope '{0}': scopes are 1 to 256 bytes without control characters")]
    InvalidScope(String),
    /// A message that cannot be stored.
    #[error("message {index}: {reason}")]
    InvalidMessage {
        /// Its index in the append (0-based).
        index: usize,
        /// Why.
        reason: String,
    },
    /// A fork point past the end of the conversation.
    #[error("conversation '{conversation}' has {last} messages; cannot fork at sequence {at}")]
    OutOfRange {
        /// The conversation.
        conversation: String,
        /// The sequence asked for.
        at: u64,
        /// Its last sequence.
        last: u64,
    },
    /// The idempotency key was used before for different messages.
    #[error("idempotency key '{key}' of conversation '{conversation}' was used for different messages (sequences {first}..={last}); nothing was written")]
    KeyConflict {
        /// The conversation.
        conversation: String,
        /// The key.
        key: String,
        /// First sequence of the earlier append.
        first: u64,
        /// Last sequence of the earlier append (first - 1 when it was empty).
        last: u64,
    },
    /// A compare-and-append found the conversation moved on.
    #[error("conversation '{conversation}' ends at sequence {last}, not {expected} as the append expected; nothing was written")]
    Moved {
        /// The conversation.
        conversation: String,
        /// The last sequence the append expected.
        expected: u64,
        /// The last sequence it has.
        last: u64,
    },
    /// Validation found that the append would make the history invalid.
    #[error("append rejected: {}", describe(violations))]
    Rejected {
        /// The dialect checked against.
        dialect: mend::Dialect,
        /// The violations the append would introduce, each naming its rule.
        violations: Vec<Violation>,
    },
    /// Stored messages could not be made into a request body of a dialect.
    #[error("cannot render {from} messages as {to}: {reason}")]
    Render {
        /// What the messages are written in.
        from: crate::Format,
        /// The dialect asked for.
        to: mend::Dialect,
        /// Why (a stored message that is not canonical, a part the target cannot carry).
        reason: String,
    },
    /// The validation options are unusable (an unknown provider, say).
    #[error("validation: {0}")]
    Check(#[from] mend::Error),
    /// A database address that cannot be used.
    #[error("database address: {0}")]
    BadUrl(String),
    /// The database was written by a newer mend, or its schema is not ours.
    #[error("database schema: {0}")]
    Schema(String),
    /// A stored message that no longer parses (the database was changed outside mend).
    #[error("conversation '{conversation}' sequence {seq}: stored message is not a JSON object: {reason}")]
    Corrupt {
        /// The conversation.
        conversation: String,
        /// The sequence.
        seq: u64,
        /// Why.
        reason: String,
    },
    /// SQLite failed.
    #[error("sqlite {path}: {op}: {source}")]
    Sqlite {
        /// The database file.
        path: String,
        /// What was being done.
        op: &'static str,
        /// The driver's error.
        source: rusqlite::Error,
    },
    /// PostgreSQL failed.
    #[error("postgres: {op}: {source}")]
    Postgres {
        /// What was being done.
        op: &'static str,
        /// The driver's error.
        source: tokio_postgres::Error,
    },
    /// No PostgreSQL connection could be had from the pool.
    #[error("postgres: cannot get a connection: {0}")]
    Pool(String),
    /// A file-system error (creating the database's folder).
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A background task died (a panic in a blocking database call).
    #[error("store task failed: {0}")]
    Task(String),
}

fn describe(violations: &[Violation]) -> String {
    let mut parts: Vec<String> = violations
        .iter()
        .take(3)
        .map(|v| format!("{} at {}: {}", v.rule.id(), v.path, v.message))
        .collect();
    if violations.len() > 3 {
        parts.push(format!("and {} more", violations.len() - 3));
    }
    parts.join("; ")
}

impl Error {
    /// The violations of a rejected append, if this is one.
    pub fn violations(&self) -> &[Violation] {
        match self {
            Error::Rejected { violations, .. } => violations,
            _ => &[],
        }
    }
}
