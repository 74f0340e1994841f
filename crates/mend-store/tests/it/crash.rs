//! A writer process killed with SIGKILL in the middle of a loop of appends leaves every
//! acknowledged append, whole, and no part of any other.

use std::io::{BufRead as _, BufReader, Read as _};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mend_store::{NewConversation, Span, Store};

use crate::support::Backend;

const ROUNDS: usize = 4;

/// `ack i first last` lines of one run of the writer, killed after a random delay.
fn run_and_kill(url: &str, conversation: &str, start: u64) -> Vec<(u64, u64, u64)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mend-store-writer"))
        .args(["--db", url, "--conversation", conversation])
        .args(["--start", &start.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mend-store-writer");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(first) => lines.push(first),
        Err(_) => {
            let _ = child.kill();
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            panic!("the writer acknowledged nothing in 30 s: {err}");
        }
    }
    std::thread::sleep(Duration::from_millis(fastrand::u64(10..250)));
    if let Ok(Some(status)) = child.try_wait() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        panic!("the writer stopped by itself ({status}): {err}");
    }
    child.kill().expect("SIGKILL the writer"); // std sends SIGKILL on Unix
    child.wait().expect("reap the writer");
    reader.join().expect("reader thread");
    lines.extend(rx.try_iter());
    lines
        .iter()
        .map(|l| {
            let f: Vec<u64> = l
                .strip_prefix("ack ")
                .unwrap_or_else(|| panic!("unexpected line {l:?}"))
                .split(' ')
                .map(|n| n.parse().expect("a number"))
                .collect();
            (f[0], f[1], f[2])
        })
        .collect()
}

pub async fn killed_writer_leaves_every_acknowledged_append_and_no_partial_one<B: Backend>(b: &B) {
    let store = b.open().await;
    let conv = store.create(NewConversation::default()).await.unwrap().id;
    let url = b.url();
    let mut acked = Vec::new();
    let mut next = 0;
    for _ in 0..ROUNDS {
        // Each run resumes at the first unacknowledged append, with the same key: if the
        // killed run had committed it without saying so, the retry is a replay.
        let (url, conv2, start) = (url.clone(), conv.clone(), next);
        let run = tokio::task::spawn_blocking(move || run_and_kill(&url, &conv2, start))
            .await
            .unwrap();
        for (k, a) in run.iter().enumerate() {
            assert_eq!(a.0, next + k as u64, "acknowledgements in order");
        }
        next += run.len() as u64;
        acked.extend(run);
    }
    let loaded = store.load(&conv, Span::ALL).await.unwrap();
    for (k, m) in loaded.iter().enumerate() {
        assert_eq!(m.seq, k as u64 + 1, "{}: gap-free sequence", b.name());
    }
    // The stored messages are whole appends 0, 1, 2, ... in order.
    let mut at = 0;
    let mut appends = 0u64;
    while at < loaded.len() {
        let head = loaded[at].value().unwrap();
        let i = head["append"].as_u64().unwrap();
        let of = head["of"].as_u64().unwrap() as usize;
        assert_eq!(i, appends, "append {appends} is the next one stored");
        assert!(at + of <= loaded.len(), "append {i} is cut short");
        for part in 0..of {
            let m = loaded[at + part].value().unwrap();
            assert_eq!(
                (m["append"].as_u64(), m["part"].as_u64()),
                (Some(i), Some(part as u64))
            );
        }
        at += of;
        appends += 1;
    }
    // Every acknowledged append is there, where it was said to be; at most one more
    // (committed by the last run just before the kill) is.
    for &(i, first, last) in &acked {
        for s in first..=last {
            let m = loaded[s as usize - 1].value().unwrap();
            assert_eq!(m["append"].as_u64(), Some(i), "acknowledged append {i}");
        }
    }
    assert!(
        appends == next || appends == next + 1,
        "{} appends stored, {} acknowledged",
        appends,
        next
    );
    assert!(
        next >= ROUNDS as u64,
        "each run acknowledged at least one append"
    );
}
