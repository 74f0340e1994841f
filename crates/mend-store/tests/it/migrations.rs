//! Opening a database made by an older schema migrates it; one made by a newer schema is
//! refused; a migration that fails leaves the version it started from.

use mend_store::testing::Migration;
use mend_store::{AppendOptions, NewMessage, Span, Store};
use serde_json::json;

use crate::support::Backend;

/// The shipped schema plus one later migration, as a newer build would ship it.
fn shipped_and(sqlite: bool, extra: &'static str) -> &'static [Migration] {
    let shipped = if sqlite {
        mend_store::testing::SQLITE_MIGRATIONS
    } else {
        mend_store::testing::POSTGRES_MIGRATIONS
    };
    let mut all = shipped.to_vec();
    all.push(Migration {
        version: shipped.len() as u32 + 1,
        name: "test",
        sql: extra,
    });
    Vec::leak(all)
}

pub async fn an_old_database_is_migrated_and_a_newer_one_refused<B: Backend>(b: &B) {
    let sqlite = b.name() == "sqlite";
    let shipped = if sqlite {
        mend_store::testing::SQLITE_MIGRATIONS
    } else {
        mend_store::testing::POSTGRES_MIGRATIONS
    };
    // A database as the first schema left it, with a conversation and a key in it ...
    b.migrate_with(&shipped[..1]).await.unwrap();
    b.seed_v1().await;
    // ... is brought to the shipped schema by opening it, its data and key intact.
    let store = b.open().await;
    let conv = store.info("kept").await.unwrap();
    assert_eq!(conv.last_sequence, 1);
    // A conversation made before scopes belongs to nobody until a scope claims it.
    assert_eq!(conv.scope, mend_store::UNSCOPED);
    let m = NewMessage::from_value(&json!({"role": "user", "content": "before"})).unwrap();
    let replayed = store
        .append(
            &conv.id,
            std::slice::from_ref(&m),
            &AppendOptions::keyed("k"),
        )
        .await
        .unwrap();
    assert!(replayed.replayed, "{}: the v1 key replays", b.name());
    let before = store.load(&conv.id, Span::ALL).await.unwrap();
    assert_eq!(before[0].raw, m.json());
    let (_, how) = store
        .claim(&conv.id, "cred:0123", mend_store::Format::Any)
        .await
        .unwrap();
    assert_eq!(how, mend_store::Claim::Adopted);
    drop(store);
    // A later migration that fails rolls back whole: the version stays, the data too.
    let failing = shipped_and(
        sqlite,
        "CREATE TABLE mend_test_extra (x integer); SELECT no_such_function();",
    );
    assert!(b.migrate_with(failing).await.is_err());
    let store = b.open().await;
    assert_eq!(store.load(&conv.id, Span::ALL).await.unwrap(), before);
    drop(store);
    // A later migration that works is applied once, on top, keeping the data.
    let newer = shipped_and(sqlite, "CREATE TABLE mend_test_extra (x integer);");
    b.migrate_with(newer).await.unwrap();
    b.migrate_with(newer).await.unwrap();
    // That database is now newer than this build: refused, and said why.
    let err = b.try_open().await.unwrap_err().to_string();
    assert!(err.contains("newer than this build"), "{err}");
}
