//! Schema migrations, embedded in the binary and numbered from 1.
//!
//! Invariant: a database's schema version is the number of the last migration applied,
//! kept in the same transaction as the migration itself (SQLite `PRAGMA user_version`,
//! PostgreSQL table `mend_schema`), so a crash mid-migration leaves the previous
//! version. Opening a database applies whatever migrations it lacks, in order; a
//! database newer than this build is refused rather than guessed at. A shipped
//! migration is never edited: a change to the schema is a new file.

use crate::Error;

/// One schema change.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Its number: 1, 2, ... with no gaps.
    pub version: u32,
    /// A name for messages.
    pub name: &'static str,
    /// The SQL, run as one batch inside the migration's transaction.
    pub sql: &'static str,
}

/// The SQLite schema, oldest first.
pub const SQLITE_MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "conversations",
        sql: include_str!("../migrations/sqlite/0001_conversations.sql"),
    },
    Migration {
        version: 2,
        name: "append keys by age",
        sql: include_str!("../migrations/sqlite/0002_append_keys_by_age.sql"),
    },
    Migration {
        version: 3,
        name: "conversation scopes",
        sql: include_str!("../migrations/sqlite/0003_conversation_scopes.sql"),
    },
];

/// The PostgreSQL schema, oldest first.
pub const POSTGRES_MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "conversations",
        sql: include_str!("../migrations/postgres/0001_conversations.sql"),
    },
    Migration {
        version: 2,
        name: "append keys by age",
        sql: include_str!("../migrations/postgres/0002_append_keys_by_age.sql"),
    },
    Migration {
        version: 3,
        name: "conversation scopes",
        sql: include_str!("../migrations/postgres/0003_conversation_scopes.sql"),
    },
];

/// The migrations a database at `current` still needs, or why it cannot be opened.
pub(crate) fn pending(current: i64, migrations: &[Migration]) -> Result<&[Migration], Error> {
    for (i, m) in migrations.iter().enumerate() {
        if m.version as usize != i + 1 {
            return Err(Error::Schema(format!(
                "migration list out of order: #{} is version {}",
                i + 1,
                m.version
            )));
        }
    }
    let known = migrations.len() as i64;
    if current > known {
        return Err(Error::Schema(format!(
            "the database is at schema version {current}, newer than this build of mend knows ({known}); use a newer mend"
        )));
    }
    if current < 0 {
        return Err(Error::Schema(format!(
            "the database has schema version {current}; it was not made by mend"
        )));
    }
    // current is within 0..=known here.
    Ok(&migrations[usize::try_from(current).unwrap_or(0)..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_is_what_the_database_lacks() {
        assert_eq!(
            pending(0, SQLITE_MIGRATIONS).unwrap().len(),
            SQLITE_MIGRATIONS.len()
        );
        assert!(pending(SQLITE_MIGRATIONS.len() as i64, SQLITE_MIGRATIONS)
            .unwrap()
            .is_empty());
        let newer = pending(99, SQLITE_MIGRATIONS).unwrap_err().to_string();
        assert!(newer.contains("newer than this build"), "{newer}");
        let gap = [Migration {
            version: 2,
            name: "x",
            sql: "",
        }];
        assert!(pending(0, &gap).is_err());
    }
}
