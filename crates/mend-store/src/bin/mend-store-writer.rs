//! `mend-store-writer`: a load generator for the store's own tests and benchmarks.
//!
//! Not a user tool. Two modes:
//!
//! - `--db URL --conversation ID --start N [--count M]`: append batches in a loop, one
//!   per index i = N, N+1, ... with idempotency key `append-i` and 1 + i % 4 messages,
//!   and print `ack i FIRST LAST` on stdout (flushed) after each acknowledged append.
//!   The crash test kills it with SIGKILL at a random moment and checks that every
//!   acknowledged append is stored whole and no other append is stored in part.
//! - `--db URL --throughput --writers W --seconds S [--shared-conversation]`: W tasks
//!   append one message per call for S seconds, to one conversation each (or all to one
//!   conversation), and print one JSON line with the appends per second.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mend_store::{AnyStore, AppendOptions, NewConversation, NewMessage, Store};
use serde_json::json;

const ROLES: [&str; 2] = ["user", "assistant"];

struct Args {
    db: String,
    conversation: Option<String>,
    start: u64,
    count: Option<u64>,
    throughput: bool,
    writers: usize,
    seconds: f64,
    shared: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        db: String::new(),
        conversation: None,
        start: 0,
        count: None,
        throughput: false,
        writers: 1,
        seconds: 3.0,
        shared: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let bad = |e: &dyn std::fmt::Display| format!("{flag}: {e}");
        match flag.as_str() {
            "--db" => args.db = value()?,
            "--conversation" => args.conversation = Some(value()?),
            "--start" => args.start = value()?.parse().map_err(|e| bad(&e))?,
            "--count" => args.count = Some(value()?.parse().map_err(|e| bad(&e))?),
            "--throughput" => args.throughput = true,
            "--writers" => args.writers = value()?.parse().map_err(|e| bad(&e))?,
            "--seconds" => args.seconds = value()?.parse().map_err(|e| bad(&e))?,
            "--shared-conversation" => args.shared = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.db.is_empty() {
        return Err("--db is required".into());
    }
    Ok(args)
}

/// The messages of append `i`: 1 + i % 4 of them, each saying which append and part it
/// is, padded so that a batch spans several database pages.
fn batch(i: u64) -> Vec<NewMessage> {
    let n = 1 + i % 4;
    (0..n)
        .filter_map(|j| {
            let role = ROLES[(j % 2) as usize];
            let m = json!({"role": role, "append": i, "part": j, "of": n,
                           "content": "x".repeat(700 + (i as usize * 37) % 900)});
            NewMessage::from_value(&m).ok()
        })
        .collect()
}

async fn crash_loop(store: AnyStore, args: &Args) -> Result<(), String> {
    let conversation = args
        .conversation
        .clone()
        .ok_or("--conversation is required")?;
    let end = args.count.map_or(u64::MAX, |c| args.start + c);
    let mut out = std::io::stdout().lock();
    for i in args.start..end {
        let done = store
            .append(
                &conversation,
                &batch(i),
                &AppendOptions::keyed(format!("append-{i}")),
            )
            .await
            .map_err(|e| e.to_string())?;
        let (first, last) = (done.sequences.first(), done.sequences.last());
        if let (Some(first), Some(last)) = (first, last) {
            writeln!(out, "ack {i} {first} {last}").map_err(|e| e.to_string())?;
            out.flush().map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

async fn throughput(store: AnyStore, args: &Args) -> Result<(), String> {
    let shared = if args.shared {
        Some(
            store
                .create(NewConversation::default())
                .await
                .map_err(|e| e.to_string())?
                .id,
        )
    } else {
        None
    };
    let appends = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(args.seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..args.writers {
        let store = store.clone();
        let appends = Arc::clone(&appends);
        let shared = shared.clone();
        tasks.push(tokio::spawn(async move {
            let conversation = match shared {
                Some(c) => c,
                None => store
                    .create(NewConversation::default())
                    .await
                    .map_err(|e| e.to_string())?
                    .id,
            };
            let mut i = 0u64;
            while Instant::now() < deadline {
                let m = json!({"role": ROLES[(i % 2) as usize],
                               "content": format!("writer {w} message {i}: {}", "lorem ipsum ".repeat(25))});
                let m = NewMessage::from_value(&m).map_err(|e| e.to_string())?;
                store
                    .append(
                        &conversation,
                        &[m],
                        &AppendOptions::keyed(format!("w{w}-{i}")),
                    )
                    .await
                    .map_err(|e| e.to_string())?;
                appends.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
            Ok::<(), String>(())
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    let secs = started.elapsed().as_secs_f64();
    let n = appends.load(Ordering::Relaxed);
    let backend = match store {
        AnyStore::Sqlite(_) => "sqlite",
        AnyStore::Postgres(_) => "postgres",
    };
    println!(
        "{}",
        json!({"backend": backend, "writers": args.writers, "shared_conversation": args.shared,
               "appends": n, "seconds": secs, "appends_per_s": n as f64 / secs})
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mend-store-writer: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mend-store-writer: {e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        let store = AnyStore::open(&args.db).await.map_err(|e| e.to_string())?;
        if args.throughput {
            throughput(store, &args).await
        } else {
            crash_loop(store, &args).await
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mend-store-writer: {e}");
            ExitCode::from(1)
        }
    }
}
