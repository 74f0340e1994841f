//! `mend serve --db` killed with SIGKILL in the middle of a stream: every exchange whose
//! answer the client saw end is in the store, and the one the kill cut is absent or
//! whole, never partial. Each round runs the real binary against a slow streaming mock
//! upstream, sends exchanges of one conversation one after another, and kills the
//! gateway at a different moment (during a stream, near its end, between two).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use axum::body::Bytes;
use mend_store::{AnyStore, Span, Store};
use serde_json::{json, Value};

#[path = "../../../mend-gateway/tests/it/support/mock.rs"]
mod mock;

/// Rounds, each killed at another moment.
const ROUNDS: u64 = 10;
/// Exchanges a round sends at most (the kill ends it first).
const EXCHANGES: usize = 12;
/// Words per answer, one chunk each, `CHUNK_DELAY` apart.
const WORDS: usize = 10;
const CHUNK_DELAY: Duration = Duration::from_millis(15);

const KEY: &str = "sk-kill-test-0001";

/// `mend serve` on a free port with a SQLite store; its URL once it listens.
fn start(upstream: &str, db: &str) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mend"))
        .args(["serve", "--listen", "127.0.0.1:0", "--mode", "observe"])
        .args(["--db", db])
        .env("MEND_OPENAI_BASE_URL", upstream)
        .env_remove("MEND_CONFIG")
        .env_remove("MEND_DB")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mend serve starts");
    let lines = BufReader::new(child.stderr.take().expect("piped stderr"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("mend serve: listening on ") {
                let _ = tx.send(url.to_string());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("mend serve listens");
    (child, url)
}

/// The text of answer `i`, and its stream: a chat SSE stream, one word a chunk.
fn answer(i: usize) -> (String, mock::Scripted) {
    let chunk = |delta: Value, finish: Value| {
        let c = json!({"id": format!("chatcmpl-kill{i}"), "object": "chat.completion.chunk",
            "model": "gpt-4o", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        Bytes::from(format!("data: {c}\n\n"))
    };
    let words: Vec<String> = (0..WORDS).map(|w| format!("a{i}w{w} ")).collect();
    let mut chunks = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    chunks.extend(
        words
            .iter()
            .map(|w| chunk(json!({"content": w}), Value::Null)),
    );
    chunks.push(chunk(json!({}), json!("stop")));
    chunks.push(Bytes::from_static(b"data: [DONE]\n\n"));
    let mut s = mock::Scripted::sse(chunks);
    s.chunk_delay = CHUNK_DELAY;
    (words.concat(), s)
}

/// Send exchanges one after another until the gateway dies; for each exchange sent,
/// whether its answer was seen to its end (`[DONE]` and the close).
async fn converse(url: String, texts: Vec<String>) -> Vec<bool> {
    let client = reqwest::Client::new();
    let mut messages: Vec<Value> = Vec::new();
    let mut seen = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        messages.push(json!({"role": "user", "content": format!("question {i}")}));
        let body = json!({"model": "gpt-4o", "stream": true, "messages": messages});
        let sent = client
            .post(format!("{url}/v1/chat/completions"))
            .header("authorization", format!("Bearer {KEY}"))
            .header("x-mend-conversation", "killed")
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await;
        // No answer head: the gateway was gone before it began this exchange's answer,
        // which is committed only once its stream is complete.
        let Ok(mut resp) = sent else {
            break;
        };
        let mut got = Vec::new();
        let end = loop {
            match resp.chunk().await {
                Ok(Some(c)) => got.extend_from_slice(&c),
                Ok(None) => break true,
                Err(_) => break false,
            }
        };
        let whole = end && String::from_utf8_lossy(&got).contains("data: [DONE]");
        seen.push(whole);
        if !whole {
            break;
        }
        messages.push(json!({"role": "assistant", "content": text}));
    }
    seen
}

/// What one round found.
#[derive(Debug, Default)]
struct Tally {
    seen: usize,
    stored: usize,
    cut_absent: usize,
    cut_whole: usize,
    between: usize,
}

async fn round(n: u64, dir: &std::path::Path, tally: &mut Tally) {
    let upstream = mock::Mock::start().await;
    let texts: Vec<String> = (0..EXCHANGES)
        .map(|i| {
            let (text, scripted) = answer(i);
            upstream.push(scripted);
            text
        })
        .collect();
    let db = format!("sqlite:{}", dir.join(format!("round{n}.db")).display());
    let (mut child, url) = start(&upstream.base_url(), &db);
    let client = tokio::spawn(converse(url, texts.clone()));
    // An exchange takes about 200 ms: the kills land at spread-out points of them.
    tokio::time::sleep(Duration::from_millis(300 + n * 97)).await;
    child.kill().expect("SIGKILL");
    child.wait().expect("the gateway is reaped");
    let seen = client.await.expect("the client task");
    let done = seen.iter().take_while(|s| **s).count();
    let store = AnyStore::open(&db).await.expect("the store reopens");
    let kept = store.load("killed", Span::ALL).await.unwrap_or_default();
    let values = mend_store::values(&kept).expect("stored messages are JSON");
    for (i, m) in kept.iter().enumerate() {
        assert_eq!(m.seq, i as u64 + 1, "round {n}: a gap in {kept:?}");
    }
    assert!(
        values.len() == 2 * done || values.len() == 2 * (done + 1),
        "round {n}: {done} answers seen whole, {} messages stored: {values:?}",
        values.len()
    );
    for (i, pair) in values.chunks(2).enumerate() {
        assert_eq!(pair[0]["content"], format!("question {i}"), "round {n}");
        assert_eq!(pair.len(), 2, "round {n}: half an exchange: {values:?}");
        assert_eq!(pair[1]["content"], texts[i].as_str(), "round {n}");
    }
    tally.seen += done;
    tally.stored += values.len() / 2;
    match (seen.len() > done, values.len() / 2 > done) {
        (true, true) => tally.cut_whole += 1,
        (true, false) => tally.cut_absent += 1,
        (false, _) => tally.between += 1,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_killed_mid_stream_leaves_whole_exchanges_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut tally = Tally::default();
    for n in 0..ROUNDS {
        round(n, dir.path(), &mut tally).await;
    }
    eprintln!(
        "{ROUNDS} gateways killed: {} answers seen whole, {} exchanges stored; \
         cut exchanges absent {}, whole {}; killed between exchanges {}",
        tally.seen, tally.stored, tally.cut_absent, tally.cut_whole, tally.between
    );
    assert!(tally.seen > 0, "{tally:?}");
    assert!(
        tally.cut_absent + tally.cut_whole > 0,
        "no kill cut a stream: {tally:?}"
    );
}
