//! Append then load of a 1,000-message conversation, on SQLite and (when reachable)
//! PostgreSQL, beside a baseline from the same run: `serde_json` parsing the same
//! messages as one array.
//!
//! `cargo bench -p mend-store --bench store`. PostgreSQL is `MEND_TEST_POSTGRES`
//! (default `postgres://postgres@127.0.0.1:5432/test`), in a schema of the bench's own
//! that is dropped at the end; it is skipped, saying so, when unreachable.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use mend_store::{
    AppendOptions, NewConversation, NewMessage, PgOptions, PgStore, Span, SqliteStore, Store,
};
use serde_json::{json, Value};

const MESSAGES: usize = 1_000;

/// A tool-using agent's conversation: user turns, assistant calls with their results,
/// reasoning-only assistant messages, answers. About 250 bytes a message.
fn conversation() -> Vec<Value> {
    (0..MESSAGES)
        .map(|i| match i % 5 {
            0 => json!({"role": "user", "content": format!("Step {i}: {}", "please look into the logs and tell me what failed ".repeat(3))}),
            1 => json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "The user wants the failing job. ".repeat(4), "signature": "EqQBCkgIARABGAIiQ".repeat(4)}]}),
            2 => json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": format!("call_{i:08}"), "type": "function",
                 "function": {"name": "read_logs", "arguments": format!("{{\"job\":\"build-{i}\",\"lines\":200}}")}}]}),
            3 => json!({"role": "tool", "tool_call_id": format!("call_{:08}", i - 1),
                        "content": "2026-01-01T00:00:00Z ERROR build failed: missing symbol\n".repeat(8)}),
            _ => json!({"role": "assistant", "content": format!("Job build-{} failed on a missing symbol; the fix is in the linker flags.", i - 2)}),
        })
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn bench_store<S: Store>(
    c: &mut Criterion,
    name: &str,
    rt: &tokio::runtime::Runtime,
    store: &S,
    batch: &[NewMessage],
) {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4));
    group.bench_function("append_1000", |b| {
        b.iter_batched(
            || {
                rt.block_on(store.create(NewConversation::default()))
                    .expect("create")
                    .id
            },
            |id| {
                rt.block_on(store.append(&id, batch, &AppendOptions::keyed("k")))
                    .expect("append")
            },
            BatchSize::PerIteration,
        )
    });
    let id = rt
        .block_on(store.create(NewConversation::default()))
        .expect("create")
        .id;
    rt.block_on(store.append(&id, batch, &AppendOptions::default()))
        .expect("append");
    group.bench_function("load_1000", |b| {
        b.iter(|| {
            let m = rt.block_on(store.load(&id, Span::ALL)).expect("load");
            assert_eq!(m.len(), MESSAGES);
            m
        })
    });
    group.bench_function("load_1000_parsed", |b| {
        b.iter(|| {
            let m = rt.block_on(store.load(&id, Span::ALL)).expect("load");
            mend_store::values(&m).expect("parse")
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let values = conversation();
    let batch = NewMessage::from_values(&values).expect("messages");
    let array = serde_json::to_string(&values).expect("serialize");
    eprintln!("conversation: {MESSAGES} messages, {} bytes", array.len());
    let mut group = c.benchmark_group("baseline");
    group.bench_function("parse_1000", |b| {
        b.iter(|| serde_json::from_str::<Value>(&array).expect("parse"))
    });
    group.finish();

    let rt = runtime();
    let dir = tempfile::tempdir().expect("temporary folder");
    let sqlite = SqliteStore::open(dir.path().join("bench.db")).expect("open sqlite");
    bench_store(c, "sqlite", &rt, &sqlite, &batch);

    let url = std::env::var("MEND_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    let schema = format!("mend_bench_{}", std::process::id());
    let options = PgOptions {
        schema: schema.clone(),
        ..PgOptions::default()
    };
    match rt.block_on(PgStore::connect(&url, options)) {
        Ok(pg) => {
            bench_store(c, "postgres", &rt, &pg, &batch);
            rt.block_on(async {
                if let Ok((client, conn)) =
                    tokio_postgres::connect(&url, tokio_postgres::NoTls).await
                {
                    let task = tokio::spawn(conn);
                    let _ = client
                        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                        .await;
                    drop(client);
                    let _ = task.await;
                }
            });
        }
        Err(e) => eprintln!("skipping postgres: {e}"),
    }
}

criterion_group!(store, benches);
criterion_main!(store);
