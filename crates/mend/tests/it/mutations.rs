//! Damaged input never panics or hangs the library. Every request body (the shared
//! fixtures' requests, accepted and rejected, and every case under `cases/`) is the parent
//! of deterministic mutants, 10,000 in all: items and keys deleted, duplicated, swapped,
//! moved and truncated at any depth, values changed to other JSON types, ids stripped,
//! deep nesting and huge strings injected, and the JSON text cut at a byte or buried in
//! brackets. Each mutant is held to the fuzz targets' own properties (`fuzz/src/lib.rs`,
//! included below): check gives a verdict or a clean error; repair's output checks valid
//! or every remaining error is listed as unrepairable, and repairing it again edits
//! nothing; trim never makes a valid history invalid; the canonical round trip gives back
//! the same JSON. The recorded responses and streams get mutants of their own (capture
//! gives a reply or a clean error; a stream fed in two chunks reads as it does whole).
//!
//! Mutant `i` depends only on `i` and the inputs: a failure names it, and
//! `MEND_MUTANT=i cargo test -p mend --test it mutations -- --nocapture` runs that one
//! alone and prints it. Every mutant must finish within [`LIMIT`].

use mend::Dialect;
use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::shared_fixtures::shared_dir_or_cases_only;
use crate::support::{files_named, repo_root, shared_dir};

#[path = "../../../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod props;

/// Request mutants in all, over the shards.
const REQUEST_MUTANTS: usize = 10_000;
/// Response and stream mutants, each.
const CAPTURE_MUTANTS: usize = 1_000;
/// The shards the request mutants are split into, so the test threads share them.
const SHARDS: usize = 4;
/// The longest one mutant may take through every property (debug build, shared CPU).
const LIMIT: Duration = Duration::from_secs(20);

const ID_KEYS: [&str; 14] = [
    "id",
    "call_id",
    "tool_call_id",
    "tool_use_id",
    "role",
    "type",
    "signature",
    "thoughtSignature",
    "content",
    "parts",
    "name",
    "functionCall",
    "encrypted_content",
    "tool_calls",
];

/// A small deterministic generator, so a failure names a reproducible mutant.
struct Lcg(u64);
impl Lcg {
    fn seeded(i: usize, salt: u64) -> Lcg {
        let mut r = Lcg((i as u64 ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn byte(&mut self) -> u8 {
        (self.next() & 0xff) as u8
    }
}

struct Source {
    name: String,
    dialect: Dialect,
    body: Value,
}

fn dialect_folder(f: &Path, up: usize) -> Dialect {
    let mut p = f;
    for _ in 0..up {
        p = p
            .parent()
            .expect("a fixture or case sits in a dialect folder");
    }
    p.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}: not under a dialect folder", f.display()))
}

fn read_json(f: &Path) -> Value {
    let bytes = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    mend::parse_body(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display()))
}

/// A fixture file under `fx/<dialect>/<exchange>/`, named by its path under `fx`.
fn fixture(fx: &Path, f: &Path) -> Source {
    Source {
        name: f.strip_prefix(fx).unwrap_or(f).display().to_string(),
        dialect: dialect_folder(f, 2),
        body: read_json(f),
    }
}

/// Every request body: the fixtures' (when `../shared` is there) and the cases'.
fn requests() -> Vec<Source> {
    let mut out = Vec::new();
    if let Some(shared) = shared_dir_or_cases_only() {
        let fx = shared.join("fixtures");
        let mut files = files_named(&fx, "request.json");
        files.extend(files_named(&fx, "rejected-request.json"));
        files.sort();
        out.extend(files.iter().map(|f| fixture(&fx, f)));
        assert!(
            out.len() >= 144,
            "expected 144 fixture requests, found {}",
            out.len()
        );
    }
    let cases = repo_root().join("cases");
    let mut files: Vec<_> = std::fs::read_dir(&cases)
        .expect("cases/ is readable")
        .flatten()
        // Only the check cases, cases/<dialect>/<rule>/<slug>.json; other folders hold
        // cases of other kinds.
        .filter(|d| {
            d.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<Dialect>().is_ok())
        })
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .flat_map(|r| std::fs::read_dir(r.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 200,
        "expected the cases, found {}",
        files.len()
    );
    for f in files {
        let case = read_json(&f);
        out.push(Source {
            name: f.strip_prefix(&cases).unwrap_or(&f).display().to_string(),
            dialect: dialect_folder(&f, 2),
            body: case.get("body").cloned().unwrap_or(Value::Null),
        });
    }
    out
}

fn deep(n: usize) -> Value {
    let mut v = json!("bottom");
    for k in 0..n {
        v = if k % 2 == 0 {
            json!([v])
        } else {
            json!({ "content": v })
        };
    }
    v
}

/// A random container in `v`: walk down from the root (or from the history array, half
/// of the time) into random children, stopping at each step with some chance.
fn pick<'a>(v: &'a mut Value, history: &str, rng: &mut Lcg) -> &'a mut Value {
    let mut cur = v;
    if rng.below(2) == 0 && cur.get(history).is_some_and(Value::is_array) {
        cur = cur.get_mut(history).expect("checked just above");
    }
    loop {
        if rng.below(3) == 0 {
            return cur;
        }
        let n = match &*cur {
            Value::Array(a) => a.len(),
            Value::Object(o) => o.len(),
            _ => 0,
        };
        let k = rng.below(n);
        let child_is_container = match &*cur {
            Value::Array(a) => a.get(k).is_some_and(|c| c.is_array() || c.is_object()),
            Value::Object(o) => o
                .values()
                .nth(k)
                .is_some_and(|c| c.is_array() || c.is_object()),
            _ => false,
        };
        if !child_is_container {
            return cur;
        }
        cur = match cur {
            Value::Array(a) => &mut a[k],
            Value::Object(o) => o.values_mut().nth(k).expect("k < len"),
            _ => unreachable!("only containers have children"),
        };
    }
}

fn other_type(v: &Value, rng: &mut Lcg) -> Value {
    let pool = [
        json!(null),
        json!(-7),
        json!(1.5e300),
        json!(""),
        json!("x"),
        json!([]),
        json!({}),
        json!(true),
        json!([null, 0]),
        json!({"type": "text"}),
    ];
    loop {
        let c = pool[rng.below(pool.len())].clone();
        if std::mem::discriminant(&c) != std::mem::discriminant(v) || rng.below(4) == 0 {
            return c;
        }
    }
}

/// Remove the first of `key` found walking `v` depth first from a random start.
fn strip_key(v: &mut Value, key: &str) -> bool {
    match v {
        Value::Object(o) => {
            if o.shift_remove(key).is_some() {
                return true;
            }
            o.values_mut().any(|c| strip_key(c, key))
        }
        Value::Array(a) => a.iter_mut().any(|c| strip_key(c, key)),
        _ => false,
    }
}

/// One structural mutant of `body`; `op` names the kind.
fn mutate_value(body: &Value, history: &str, rng: &mut Lcg) -> (Value, &'static str) {
    let mut b = body.clone();
    let op = rng.below(10);
    let at = pick(&mut b, history, rng);
    let name = match (op, at) {
        (0, Value::Array(a)) if !a.is_empty() => {
            a.remove(rng.below(a.len()));
            "delete item"
        }
        (0, Value::Object(o)) if !o.is_empty() => {
            let k = rng.below(o.len());
            if let Some(key) = o.keys().nth(k).cloned() {
                o.shift_remove(&key);
            }
            "delete key"
        }
        (1, Value::Array(a)) if !a.is_empty() => {
            let i = rng.below(a.len());
            let dup = a[i].clone();
            a.insert(rng.below(a.len() + 1), dup);
            "duplicate item"
        }
        (2, Value::Array(a)) if a.len() > 1 => {
            let i = rng.below(a.len() - 1);
            a.swap(i, i + 1);
            "swap neighbours"
        }
        (3, Value::Array(a)) if a.len() > 1 => {
            let it = a.remove(rng.below(a.len()));
            let to = rng.below(a.len() + 1);
            a.insert(to, it);
            "move item"
        }
        (4, Value::Array(a)) => {
            let cut = rng.below(a.len() + 1);
            a.truncate(cut);
            "truncate array"
        }
        (5, Value::Array(a)) if !a.is_empty() => {
            let i = rng.below(a.len());
            a[i] = other_type(&a[i], rng);
            "change type"
        }
        (5, Value::Object(o)) if !o.is_empty() => {
            let k = rng.below(o.len());
            let v = o.values_mut().nth(k).expect("k < len");
            *v = other_type(v, rng);
            "change type"
        }
        (6, at) => {
            let key = ID_KEYS[rng.below(ID_KEYS.len())];
            if !strip_key(at, key) {
                strip_key(&mut b, key);
            }
            "strip id"
        }
        (7, Value::Array(a)) => {
            a.insert(rng.below(a.len() + 1), deep(60 + rng.below(40)));
            "deep nesting"
        }
        (7, Value::Object(o)) => {
            o.insert("content".into(), deep(60 + rng.below(40)));
            "deep nesting"
        }
        (8, at) => {
            let huge = format!(
                "{}\u{e9}\u{1F600}\"\\",
                "x".repeat(1 << (12 + rng.below(7)))
            );
            match at {
                Value::Array(a) => a.insert(rng.below(a.len() + 1), Value::String(huge)),
                Value::Object(o) if !o.is_empty() => {
                    let k = rng.below(o.len());
                    *o.values_mut().nth(k).expect("k < len") = Value::String(huge);
                }
                other => *other = Value::String(huge),
            }
            "huge string"
        }
        (_, Value::Object(o)) if !o.is_empty() => {
            // Swap two values of one object: ids land in role fields and so on.
            let (i, j) = (rng.below(o.len()), rng.below(o.len()));
            let vi = o.values().nth(i).cloned().unwrap_or_default();
            let vj = o.values().nth(j).cloned().unwrap_or_default();
            *o.values_mut().nth(i).expect("i < len") = vj;
            *o.values_mut().nth(j).expect("j < len") = vi;
            "swap values"
        }
        (_, other) => {
            *other = other_type(other, rng);
            "replace"
        }
    };
    (b, name)
}

/// One mutant of the JSON text: cut at a byte, or buried under brackets past the parser's
/// depth limit, or one byte changed.
fn mutate_text(body: &Value, rng: &mut Lcg) -> (Vec<u8>, &'static str) {
    let text = if rng.below(2) == 0 {
        serde_json::to_vec(body)
    } else {
        serde_json::to_vec_pretty(body)
    }
    .expect("a Value serializes");
    match rng.below(3) {
        0 => {
            let cut = rng.below(text.len() + 1);
            (text[..cut].to_vec(), "cut text")
        }
        1 => {
            let n = 100 + rng.below(100);
            let mut t = vec![b'['; n];
            t.extend_from_slice(&text);
            t.extend(std::iter::repeat_n(b']', n));
            (t, "buried text")
        }
        _ => {
            let mut t = text;
            let i = rng.below(t.len());
            t[i] = [b'"', b'{', b']', b',', 0xff, b'\\', b'0', rng.byte()][rng.below(8)];
            (t, "changed byte")
        }
    }
}

/// Every property of the fuzz targets, on one request mutant.
fn hold_request(dialect: Dialect, opts: u8, body: &Value) {
    let _ = props::check_value(dialect, opts, body);
    props::repair_value(dialect, opts, body);
    props::trim_value(dialect, opts, body);
    props::roundtrip_value(dialect, opts, body);
    props::convert_value(dialect, opts, body);
}

fn hold_text(dialect: Dialect, opts: u8, text: &[u8]) {
    let mut data = vec![props::selector(dialect, opts)];
    data.extend_from_slice(text);
    props::check(&data);
    props::repair(&data);
    props::trim(&data);
    props::roundtrip(&data);
    props::convert(&data);
}

fn request_mutant(sources: &[Source], i: usize) -> (String, Box<dyn Fn() + Send>) {
    let src = &sources[i % sources.len()];
    let mut rng = Lcg::seeded(i, 0x5eed);
    let dialect = src.dialect;
    let opts = rng.byte() % (255 / props::DIALECTS);
    if rng.below(8) == 0 {
        let (text, op) = mutate_text(&src.body, &mut rng);
        let what = format!("{} ({op}): {}", src.name, String::from_utf8_lossy(&text));
        (what, Box::new(move || hold_text(dialect, opts, &text)))
    } else {
        let (body, op) = mutate_value(&src.body, dialect.history_key(), &mut rng);
        let what = format!("{} ({op}): {body}", src.name);
        (what, Box::new(move || hold_request(dialect, opts, &body)))
    }
}

/// Run the jobs `make` gives for `indexes` on a worker thread, each within [`LIMIT`]; panics naming the first
/// that panics or overruns.
fn run_all<F>(label: &str, indexes: Vec<usize>, make: F)
where
    F: Fn(usize) -> (String, Box<dyn Fn() + Send>) + Send + 'static,
{
    let only: Option<usize> = std::env::var("MEND_MUTANT")
        .ok()
        .and_then(|s| s.parse().ok());
    let indexes: Vec<usize> = match only {
        Some(k) => indexes.into_iter().filter(|&i| i == k).collect(),
        None => indexes,
    };
    let total = indexes.len();
    let order = indexes.clone();
    let (tx, rx) = mpsc::channel::<(usize, Result<(), String>)>();
    let worker = std::thread::spawn(move || {
        for i in indexes {
            let (what, job) = make(i);
            if only.is_some() {
                eprintln!("mutant {i}: {what}");
            }
            let r = catch_unwind(AssertUnwindSafe(job)).map_err(|e| {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                let mut what = what;
                what.truncate(4000);
                format!("{msg}\n  mutant: {what}")
            });
            if tx.send((i, r)).is_err() {
                return;
            }
        }
    });
    let started = Instant::now();
    for next in order {
        match rx.recv_timeout(LIMIT) {
            Ok((_, Ok(()))) => {}
            Ok((i, Err(msg))) => {
                panic!("{label} mutant {i} failed (rerun alone with MEND_MUTANT={i}): {msg}")
            }
            Err(_) => panic!(
                "{label} mutant {next} ran over {LIMIT:?} (rerun alone with MEND_MUTANT={next})"
            ),
        }
    }
    let _ = worker.join();
    eprintln!("{label}: {total} mutants in {:.1?}", started.elapsed());
}

fn request_shard(shard: usize) {
    let sources = std::sync::Arc::new(requests());
    let indexes = (0..REQUEST_MUTANTS)
        .filter(|i| i % SHARDS == shard)
        .collect();
    run_all(&format!("requests shard {shard}"), indexes, move |i| {
        request_mutant(&sources, i)
    });
}

#[test]
fn request_mutants_0() {
    request_shard(0);
}

#[test]
fn request_mutants_1() {
    request_shard(1);
}

#[test]
fn request_mutants_2() {
    request_shard(2);
}

#[test]
fn request_mutants_3() {
    request_shard(3);
}

/// The parents themselves, unmutated: the same properties hold for every fixture and case.
#[test]
fn every_request_holds_the_properties() {
    let sources = std::sync::Arc::new(requests());
    let n = sources.len();
    run_all("unmutated requests", (0..n).collect(), move |i| {
        let src = &sources[i];
        let (d, body) = (src.dialect, src.body.clone());
        (
            src.name.clone(),
            Box::new(move || hold_request(d, 0, &body)),
        )
    });
}

#[test]
fn response_mutants() {
    let Some(shared) = shared_dir() else { return };
    let fx = shared.join("fixtures");
    let sources: Vec<Source> = files_named(&fx, "response.json")
        .iter()
        .map(|f| fixture(&fx, f))
        .collect();
    assert!(
        !sources.is_empty(),
        "no response.json under {}",
        fx.display()
    );
    run_all("responses", (0..CAPTURE_MUTANTS).collect(), move |i| {
        let src = &sources[i % sources.len()];
        let mut rng = Lcg::seeded(i, 0xbeef);
        let d = src.dialect;
        if rng.below(4) == 0 {
            let (text, op) = mutate_text(&src.body, &mut rng);
            let mut data = vec![props::selector(d, 0)];
            data.extend_from_slice(&text);
            let what = format!("{} ({op})", src.name);
            (what, Box::new(move || props::response(&data)))
        } else {
            let (body, op) = mutate_value(&src.body, "output", &mut rng);
            let what = format!("{} ({op}): {body}", src.name);
            (what, Box::new(move || props::response_value(d, &body)))
        }
    });
}

/// One mutant of an SSE stream: events dropped, repeated or swapped, the stream cut at a
/// byte, a byte changed, a line of garbage or a huge event put in.
fn mutate_stream(bytes: &[u8], rng: &mut Lcg) -> (Vec<u8>, &'static str) {
    let text = String::from_utf8_lossy(bytes);
    let sep = if text.contains("\r\n\r\n") {
        "\r\n\r\n"
    } else {
        "\n\n"
    };
    let mut events: Vec<String> = text.split(sep).map(str::to_string).collect();
    let n = events.len();
    let op = match rng.below(8) {
        0 if n > 1 => {
            events.remove(rng.below(n));
            "drop event"
        }
        1 if n > 0 => {
            let i = rng.below(n);
            let e = events[i].clone();
            events.insert(rng.below(n + 1), e);
            "repeat event"
        }
        2 if n > 1 => {
            let i = rng.below(n - 1);
            events.swap(i, i + 1);
            "swap events"
        }
        3 if n > 0 => {
            let i = rng.below(n);
            events.insert(
                i,
                [
                    "data: {",
                    "data: [1,2",
                    "event: x",
                    ": ping",
                    "data: null",
                    "data: \"\u{0}\"",
                    "id: 7\nretry: x",
                ][rng.below(7)]
                .to_string(),
            );
            "garbage event"
        }
        4 if n > 0 => {
            let i = rng.below(n);
            let pad = "y".repeat(1 << (10 + rng.below(9)));
            events[i] = events[i].replacen("\"", &format!("\"{pad}"), 1);
            "huge event"
        }
        5 => {
            let cut = rng.below(bytes.len() + 1);
            return (bytes[..cut].to_vec(), "cut stream");
        }
        6 if !bytes.is_empty() => {
            let mut t = bytes.to_vec();
            let i = rng.below(t.len());
            t[i] = [b'\n', b'\r', b':', b'{', 0xc3, rng.byte()][rng.below(6)];
            return (t, "changed byte");
        }
        _ => {
            let mut t = bytes.to_vec();
            t.extend_from_slice(b"data: {\"type\":\"error\",\"error\":{\"message\":\"late\"}}\n\n");
            return (t, "error event");
        }
    };
    (events.join(sep).into_bytes(), op)
}

#[test]
fn stream_mutants() {
    let Some(shared) = shared_dir() else { return };
    let fx = shared.join("fixtures");
    let sources: Vec<(String, Dialect, Vec<u8>)> = files_named(&fx, "response.sse")
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            (
                f.strip_prefix(&fx).unwrap_or(&f).display().to_string(),
                dialect_folder(&f, 2),
                bytes,
            )
        })
        .collect();
    assert!(
        !sources.is_empty(),
        "no response.sse under {}",
        fx.display()
    );
    run_all("streams", (0..CAPTURE_MUTANTS).collect(), move |i| {
        let (name, d, bytes) = &sources[i % sources.len()];
        let mut rng = Lcg::seeded(i, 0xfeed);
        let (text, op) = mutate_stream(bytes, &mut rng);
        // The selector's high bits pick where the stream is cut in two.
        let mut data = vec![props::selector(*d, rng.byte() % (255 / props::DIALECTS))];
        data.extend_from_slice(&text);
        let what = format!("{name} ({op})");
        (what, Box::new(move || props::stream(&data)))
    });
}

/// Every crash the fuzzer found, kept under `fuzz/regressions/<target>/`, holds now.
#[test]
fn fuzz_regressions_hold() {
    let dir = repo_root().join("fuzz/regressions");
    let mut n = 0;
    for t in std::fs::read_dir(&dir)
        .expect("fuzz/regressions is readable")
        .flatten()
    {
        let target = t.file_name().to_string_lossy().into_owned();
        let run: fn(&[u8]) = match target.as_str() {
            "check" => props::check,
            "repair" => props::repair,
            "trim" => props::trim,
            "roundtrip" => props::roundtrip,
            "response" => props::response,
            "stream" => props::stream,
            "convert" => props::convert,
            "next" => props::next,
            other => panic!("fuzz/regressions/{other}: no such fuzz target"),
        };
        let mut files: Vec<_> = std::fs::read_dir(t.path())
            .expect("readable")
            .flatten()
            .collect();
        files.sort_by_key(|e| e.path());
        for f in files {
            let data = std::fs::read(f.path()).expect("readable regression input");
            let r = catch_unwind(|| run(&data));
            assert!(
                r.is_ok(),
                "fuzz/regressions/{target}/{} fails again",
                f.file_name().to_string_lossy()
            );
            n += 1;
        }
    }
    assert!(n >= 2, "expected the kept fuzz crashes, found {n}");
}

/// A request and the response it got, from the fixtures (the recorded Converse traffic
/// among them) and `cases/next/`; a Converse event stream (`response.stream.txt`) as its
/// binary bytes.
fn exchanges() -> Vec<(String, Dialect, Value, Vec<u8>)> {
    let mut dirs: Vec<(std::path::PathBuf, Dialect)> = Vec::new();
    if let Some(shared) = shared_dir_or_cases_only() {
        for f in files_named(&shared.join("fixtures"), "request.json") {
            let dir = f
                .parent()
                .expect("a fixture file has a folder")
                .to_path_buf();
            dirs.push((dir, dialect_folder(&f, 2)));
        }
    }
    for dir in crate::support::converse_fixture_dirs() {
        dirs.push((dir, Dialect::BedrockConverse));
    }
    for f in files_named(&repo_root().join("cases/next"), "case.json") {
        let case = read_json(&f);
        let d = case
            .get("dialect")
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok());
        if let Some(d) = d {
            dirs.push((f.parent().expect("in a folder").to_path_buf(), d));
        }
    }
    let mut out = Vec::new();
    for (dir, d) in dirs {
        let req = dir.join("request.json");
        if !req.is_file() {
            continue;
        }
        for resp in ["response.json", "response.sse"] {
            let resp = dir.join(resp);
            if resp.is_file() {
                let bytes = std::fs::read(&resp).expect("readable response");
                out.push((dir.display().to_string(), d, read_json(&req), bytes));
            }
        }
        if let Some(bytes) = crate::support::converse_stream_bytes(&dir) {
            out.push((dir.display().to_string(), d, read_json(&req), bytes));
        }
    }
    out
}

/// The next target's input for Converse: the selector picks the dialect, the request
/// ends at the first NUL, and the rest is the response as bytes, a binary event stream
/// as well as JSON. Each Converse exchange goes through as the fuzzer would give it.
#[test]
fn next_takes_converse_json_and_event_streams_through_the_selector() {
    let converse: Vec<_> = exchanges()
        .into_iter()
        .filter(|(_, d, _, _)| *d == Dialect::BedrockConverse)
        .collect();
    let streams = converse
        .iter()
        .filter(|(_, _, _, b)| std::str::from_utf8(b).is_err())
        .count();
    assert!(streams >= 1, "a Converse event stream among the exchanges");
    assert!(converse.len() > streams, "a Converse JSON response too");
    for (name, _, request, resp) in &converse {
        for opts in 0..4 {
            let mut data = vec![props::selector(Dialect::BedrockConverse, opts)];
            data.extend(serde_json::to_vec(request).expect("JSON"));
            data.push(0);
            data.extend_from_slice(resp);
            let (d, o, rest) = props::split(&data).expect("an input");
            assert_eq!((d, o), (Dialect::BedrockConverse, opts), "{name}");
            let nul = rest.iter().position(|&b| b == 0).expect("the NUL");
            assert_eq!(&rest[nul + 1..], &resp[..], "{name}: the response as given");
            let r = catch_unwind(|| props::next(&data));
            assert!(r.is_ok(), "{name} (opts {opts}): the next property fails");
        }
    }
}

/// `next` over every recorded exchange, then over mutants of its request: a next request
/// or a clean error, and a valid one from a valid request with every call answered.
#[test]
fn next_mutants() {
    let sources = std::sync::Arc::new(exchanges());
    assert!(
        sources.len() >= 10,
        "expected recorded exchanges, found {}",
        sources.len()
    );
    let n = sources.len();
    run_all("next", (0..n + CAPTURE_MUTANTS).collect(), move |i| {
        let (name, d, request, resp) = &sources[i % n];
        let d = *d;
        let mut rng = Lcg::seeded(i, 0x7e47);
        let opts = rng.byte() % (255 / props::DIALECTS);
        let (body, op) = if i < n {
            (request.clone(), "as recorded")
        } else {
            mutate_value(request, d.history_key(), &mut rng)
        };
        let resp = resp.clone();
        let what = format!("{name} ({op}): {body}");
        (
            what,
            Box::new(move || {
                if let Ok(reply) = mend::next::read_reply(d, &resp) {
                    props::next_value(d, opts, &body, &reply);
                }
            }),
        )
    });
}
