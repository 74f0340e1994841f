//! Every response and stream fixture is captured (or refused with the provider's error
//! when it carries one), with every id, signature and encrypted payload of the wire in
//! the captured messages; both forms of one exchange give the same message.

use mend::canonical::capture::{
    read_response, read_stream, CaptureError, CaptureErrorKind, Reply, StreamCapture,
};
use mend::canonical::{Conversation, Message, Part, Role};
use mend::Dialect;
use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::requests::dialect_of;
use crate::support::{files_named, shared_dir};

pub struct Fixture {
    pub path: PathBuf,
    pub dialect: Dialect,
    pub bytes: Vec<u8>,
    pub meta: Value,
}

impl Fixture {
    pub fn name(&self) -> String {
        let dir = self.path.parent().unwrap_or(Path::new(""));
        format!(
            "{}/{}",
            self.dialect,
            dir.file_name().and_then(|n| n.to_str()).unwrap_or("?")
        )
    }

    /// HTTP 200 and no `error` feature: the capture must succeed.
    pub fn expect_ok(&self) -> bool {
        let status = self
            .meta
            .get("status")
            .and_then(Value::as_u64)
            .unwrap_or(200);
        let error = self
            .meta
            .get("features")
            .and_then(Value::as_array)
            .is_some_and(|f| f.iter().any(|x| x == "error"));
        status == 200 && !error
    }
}

pub fn fixtures(name: &str) -> Vec<Fixture> {
    let Some(shared) = shared_dir() else {
        return Vec::new();
    };
    let files = files_named(&shared.join("fixtures"), name);
    // An empty list means "skipped": with the fixtures there, it must not be empty.
    assert!(
        !files.is_empty(),
        "no {name} under {}",
        shared.join("fixtures").display()
    );
    files
        .into_iter()
        .map(|path| {
            let dir = path.parent().expect("a fixture has a folder");
            let meta = std::fs::read(dir.join("meta.json")).expect("meta.json");
            Fixture {
                dialect: dialect_of(&path),
                bytes: std::fs::read(&path).expect("readable fixture"),
                meta: serde_json::from_slice(&meta).expect("meta is JSON"),
                path,
            }
        })
        .collect()
}

/// Strings under id, signature and encrypted-content keys in `v`.
fn wire_ids(v: &Value, out: &mut Vec<String>) {
    const KEYS: [&str; 9] = [
        "id",
        "call_id",
        "tool_use_id",
        "signature",
        "encrypted_content",
        "thoughtSignature",
        "thought_signature",
        "data",
        "responseId",
    ];
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                match x {
                    Value::String(s) if KEYS.contains(&k.as_str()) && !s.is_empty() => {
                        out.push(s.clone())
                    }
                    _ => wire_ids(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| wire_ids(x, out)),
        _ => {}
    }
}

/// Every string value in the captured messages.
fn captured_strings(reply: &Reply) -> std::collections::HashSet<String> {
    fn walk(v: &Value, out: &mut std::collections::HashSet<String>) {
        match v {
            Value::String(s) => {
                out.insert(s.clone());
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = std::collections::HashSet::new();
    for m in &reply.messages {
        walk(&serde_json::to_value(m).expect("serializable"), &mut out);
    }
    out
}

/// The parts of a stream (or body) that carry what the client sends back, for the id
/// check: content of each event, not per-event envelopes that may rotate ids.
fn content_of_event(dialect: Dialect, v: &Value) -> Vec<Value> {
    let get = |k: &str| v.get(k).cloned();
    match dialect {
        Dialect::BedrockConverse => unreachable!("no Converse fixtures under ../shared/fixtures"),
        Dialect::OpenAiResponses => match v.get("type").and_then(Value::as_str) {
            Some("response.output_item.done") => get("item").into_iter().collect(),
            Some("response.completed") => v
                .get("response")
                .and_then(|r| r.get("id"))
                .map(|id| serde_json::json!({"id": id}))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        },
        Dialect::Anthropic => match v.get("type").and_then(Value::as_str) {
            Some("message_start") => v
                .get("message")
                .and_then(|m| m.get("id"))
                .map(|id| serde_json::json!({"id": id}))
                .into_iter()
                .collect(),
            Some("content_block_start") => get("content_block").into_iter().collect(),
            Some("content_block_delta") => get("delta").into_iter().collect(),
            _ => Vec::new(),
        },
        Dialect::OpenAiChat => {
            vec![serde_json::json!({"id": get("id"), "choices": get("choices")})]
        }
        Dialect::Gemini => vec![v.clone()],
    }
}

fn stream_events(bytes: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(bytes).replace("\r\n", "\n");
    text.split("\n\n")
        .filter_map(|block| {
            let data: Vec<&str> = block
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .collect();
            serde_json::from_str(&data.join("\n")).ok()
        })
        .collect()
}

fn check_ids(name: &str, wire: &[Value], reply: &Reply, missing: &mut Vec<String>) {
    let have = captured_strings(reply);
    let mut ids = Vec::new();
    for v in wire {
        wire_ids(v, &mut ids);
    }
    for id in ids {
        if !have.contains(&id) {
            missing.push(format!("{name}: {id:.60}"));
        }
    }
}

#[test]
fn every_response_fixture_is_captured_with_its_ids() {
    let all = fixtures("response.json");
    if all.is_empty() {
        return;
    }
    assert!(
        all.len() >= 112,
        "expected 112 responses, found {}",
        all.len()
    );
    let (mut ok, mut refused, mut messages, mut parts) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    let mut missing = Vec::new();
    for f in &all {
        match (read_response(f.dialect, &f.bytes), f.expect_ok()) {
            (Ok(reply), true) => {
                ok += 1;
                messages += reply.messages.len();
                parts += reply.messages.iter().map(|m| m.parts.len()).sum::<usize>();
                let body: Value = serde_json::from_slice(&f.bytes).expect("JSON");
                let content = [
                    "choices",
                    "output",
                    "content",
                    "candidates",
                    "id",
                    "responseId",
                ]
                .iter()
                .filter_map(|k| body.get(*k).cloned())
                .collect::<Vec<_>>();
                check_ids(&f.name(), &content, &reply, &mut missing);
                for m in &reply.messages {
                    assert!(
                        m.meta.contains_key("response_id") || f.dialect == Dialect::Gemini,
                        "{}: no response id",
                        f.name()
                    );
                }
            }
            (Err(e), false) if e.kind == CaptureErrorKind::Provider => refused += 1,
            (r, expect) => failures.push(format!(
                "{}: expected {}, got {:?}",
                f.name(),
                if expect {
                    "a reply"
                } else {
                    "a provider error"
                },
                r.map(|r| r.messages.len())
            )),
        }
    }
    eprintln!(
        "responses: {ok} captured ({messages} messages, {parts} parts), {refused} provider errors"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        missing.is_empty(),
        "ids not captured:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_stream_fixture_is_captured_with_its_ids() {
    let all = fixtures("response.sse");
    if all.is_empty() {
        return;
    }
    assert!(all.len() >= 59, "expected 59 streams, found {}", all.len());
    let (mut ok, mut refused, mut messages) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut missing = Vec::new();
    for f in &all {
        match (read_stream(f.dialect, &f.bytes), f.expect_ok()) {
            (Ok(reply), true) => {
                ok += 1;
                messages += reply.messages.len();
                assert!(!reply.messages.is_empty(), "{}: no message", f.name());
                let wire: Vec<Value> = stream_events(&f.bytes)
                    .iter()
                    .flat_map(|v| content_of_event(f.dialect, v))
                    .collect();
                check_ids(&f.name(), &wire, &reply, &mut missing);
                assert!(
                    reply.unknown.is_empty(),
                    "{}: unknown events {:?}",
                    f.name(),
                    reply.unknown
                );
            }
            (Err(e), false) if e.kind == CaptureErrorKind::Provider => {
                assert!(e.provider_error.is_some());
                refused += 1
            }
            (r, expect) => failures.push(format!(
                "{}: expected {}, got {:?}",
                f.name(),
                if expect {
                    "a reply"
                } else {
                    "a provider error"
                },
                r.map(|r| r.messages.len())
            )),
        }
    }
    eprintln!("streams: {ok} captured ({messages} messages), {refused} provider errors");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        missing.is_empty(),
        "ids not captured:\n{}",
        missing.join("\n")
    );
}

/// The same message with provider item ids removed (for streams that rotate them).
fn without_item_ids(m: &Message) -> Message {
    let mut m = m.clone();
    m.meta.clear();
    m.item_id = None;
    for p in &mut m.parts {
        match p {
            Part::Reasoning(r) => r.item_id = None,
            Part::ToolCall(c) => c.item_id = None,
            _ => {}
        }
    }
    m
}

#[test]
fn a_responses_stream_and_its_completed_response_give_the_same_messages() {
    let mut compared = 0;
    for f in fixtures("response.sse") {
        if f.dialect != Dialect::OpenAiResponses || !f.expect_ok() {
            continue;
        }
        let streamed = read_stream(f.dialect, &f.bytes).expect("the stream is captured");
        let completed = stream_events(&f.bytes)
            .into_iter()
            .rfind(|e| e.get("type").and_then(Value::as_str) == Some("response.completed"))
            .and_then(|e| e.get("response").cloned())
            .expect("a response.completed event");
        let whole = read_response(f.dialect, completed.to_string().as_bytes())
            .expect("the completed response is captured");
        let rotates = f.name().contains("id-rotation");
        // Only the last response of a stream that concatenates several is in its
        // response.completed.
        let last = whole.messages.len();
        let norm = |r: &Reply| -> Vec<Message> {
            r.messages[r.messages.len() - last..]
                .iter()
                .map(|m| {
                    let mut m = if rotates {
                        without_item_ids(m)
                    } else {
                        m.clone()
                    };
                    m.meta.clear();
                    // OpenAI encrypts the reasoning afresh for response.completed: the
                    // two blobs differ, and either is accepted back.
                    for p in &mut m.parts {
                        if let Part::Reasoning(r) = p {
                            r.encrypted = r.encrypted.as_ref().map(|_| "(encrypted)".into());
                        }
                    }
                    m
                })
                .collect()
        };
        assert_eq!(norm(&streamed), norm(&whole), "{}", f.name());
        compared += 1;
    }
    if compared > 0 {
        eprintln!("{compared} Responses streams agree with their response.completed");
    }
}

/// A signature with the google-genai SDK's URL-safe base64 undone (it sends Gemini's
/// standard base64 back URL-safe).
fn b64(s: &Option<String>) -> Option<String> {
    s.as_ref().map(|s| s.replace('-', "+").replace('_', "/"))
}

/// What a client sends back of a captured message: the parts with their ids, names,
/// arguments (as JSON), texts and signatures.
fn sent_back(m: &Message) -> Vec<Value> {
    m.parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) if t.text.is_empty() && t.signature.is_none() => None,
            Part::Text(t) => Some(serde_json::json!({"text": t.text.trim(), "signature": b64(&t.signature)})),
            Part::ToolCall(c) => Some(serde_json::json!({
                "call": c.id, "item": c.item_id, "name": c.name,
                "arguments": serde_json::from_str::<Value>(&c.arguments).unwrap_or(Value::String(c.arguments.clone())),
                "signature": b64(&c.signature)})),
            Part::Reasoning(r) => Some(serde_json::json!({
                "reasoning": r.text, "summary": r.summary, "signature": b64(&r.signature),
                "encrypted": r.encrypted, "item": r.item_id})),
            _ => None,
        })
        .collect()
}

fn is_reply_part(p: &Part) -> bool {
    !matches!(p, Part::ToolResult(_))
}

/// The assistant messages of request `n + 1` that answer request `n`: those after `n`'s
/// history, up to the first message that is not the model's.
fn replayed(prev: &Conversation, next: &Conversation) -> Vec<Message> {
    next.messages
        .iter()
        .skip(prev.messages.len())
        .take_while(|m| m.role == Role::Assistant && m.parts.iter().all(is_reply_part))
        .cloned()
        .collect()
}

#[test]
fn a_captured_reply_is_what_the_next_request_sends_back() {
    // Tool loops recorded as -01, -02...: request -02 carries the reply to -01.
    let mut by_dir: std::collections::BTreeMap<String, PathBuf> = Default::default();
    for f in fixtures("meta.json") {
        by_dir.insert(f.name(), f.path.parent().expect("dir").to_path_buf());
    }
    let (mut agree, mut partial) = (0, Vec::new());
    let (mut compared, mut exact) = (0, 0);
    for (name, dir) in &by_dir {
        let Some(stem) = name
            .strip_suffix("-01")
            .or_else(|| name.strip_suffix("-02"))
        else {
            continue;
        };
        let n: u32 = name[name.len() - 2..].parse().expect("a number");
        let next_name = format!("{stem}-{:02}", n + 1);
        let Some(next_dir) = by_dir.get(&next_name) else {
            continue;
        };
        let dialect = dialect_of(&dir.join("request.json"));
        let (Ok(prev), Ok(next)) = (
            std::fs::read(dir.join("request.json")),
            std::fs::read(next_dir.join("request.json")),
        ) else {
            continue;
        };
        let reply = if dir.join("response.sse").exists() {
            read_stream(
                dialect,
                &std::fs::read(dir.join("response.sse")).expect("read"),
            )
        } else {
            read_response(
                dialect,
                &std::fs::read(dir.join("response.json")).expect("read"),
            )
        };
        let Ok(reply) = reply else { continue };
        let prev =
            Conversation::from_request(dialect, &serde_json::from_slice(&prev).expect("json"))
                .expect("read");
        let next =
            Conversation::from_request(dialect, &serde_json::from_slice(&next).expect("json"))
                .expect("read");
        let replay = replayed(&prev, &next);
        let bare: Vec<Message> = reply
            .messages
            .iter()
            .map(|m| {
                let mut m = m.clone();
                m.meta.clear();
                m
            })
            .collect();
        if replay == bare {
            exact += 1;
        }
        let sent: Vec<Value> = replay.iter().flat_map(sent_back).collect();
        let captured: Vec<Value> = reply.messages.iter().flat_map(sent_back).collect();
        compared += 1;
        if sent == captured {
            agree += 1;
        } else {
            // Clients may drop reasoning they do not replay, but every call they send
            // back must be the captured call, with its ids and signature.
            let calls = |v: &[Value]| -> Vec<Value> {
                v.iter()
                    .filter(|p| p.get("call").is_some())
                    .cloned()
                    .collect()
            };
            // Every call sent back is a captured call: same name, arguments and
            // signature, and ids the capture holds. Clients put their own ids on calls
            // that came without one (Gemini) or with an empty one, may leave out item
            // ids (fantasy with `store: false`), and an old pydantic-ai sent the `fc_`
            // item id as the call id.
            let (sent_calls, captured_calls) = (calls(&sent), calls(&captured));
            assert_eq!(
                sent_calls.len(),
                captured_calls.len(),
                "{name}: tool calls differ"
            );
            for (s, c) in sent_calls.iter().zip(&captured_calls) {
                for key in ["name", "arguments", "signature"] {
                    assert_eq!(s[key], c[key], "{name}: tool call {key} differs");
                }
                let own_id = c["call"].is_null() || c["call"] == "";
                assert!(
                    own_id || s["call"] == c["call"] || s["call"] == c["item"],
                    "{name}: call id {} was not captured ({})",
                    s["call"],
                    c["call"]
                );
                assert!(
                    s["item"].is_null() || s["item"] == c["item"],
                    "{name}: item id {} was not captured",
                    s["item"]
                );
            }
            for s in &sent {
                for key in ["signature", "encrypted"] {
                    if let Some(sig) = s.get(key).filter(|x| !x.is_null()) {
                        assert!(
                            captured.iter().any(|c| c.get(key) == Some(sig)),
                            "{name}: the {key} sent back was not captured"
                        );
                    }
                }
            }
            if std::env::var_os("MEND_DEBUG").is_some() {
                eprintln!(
                    "{name}\n  sent: {}\n  capt: {}",
                    Value::Array(sent.clone()),
                    Value::Array(captured.clone())
                );
            }
            partial.push(name.clone());
        }
    }
    eprintln!(
        "{compared} replies compared with the next request: {agree} sent back with the same parts and ids \
         ({exact} equal as canonical messages, extras included), {} where the client dropped or changed parts ({})",
        partial.len(),
        partial.join(", ")
    );
}

/// Feed a stream in the given chunks.
pub fn capture_in_chunks(
    dialect: Dialect,
    bytes: &[u8],
    cuts: &[usize],
) -> Result<Reply, CaptureError> {
    let mut cap = StreamCapture::new(dialect);
    let mut last = 0;
    for &c in cuts {
        let c = c.min(bytes.len()).max(last);
        cap.feed(&bytes[last..c])?;
        last = c;
    }
    cap.feed(&bytes[last..])?;
    cap.finish()
}

#[test]
fn every_stream_gives_the_same_reply_fed_byte_by_byte() {
    for f in fixtures("response.sse") {
        let whole = read_stream(f.dialect, &f.bytes);
        let cuts: Vec<usize> = (1..f.bytes.len()).collect();
        assert_eq!(
            capture_in_chunks(f.dialect, &f.bytes, &cuts),
            whole,
            "{}",
            f.name()
        );
    }
}

/// Feed `bytes` one at a time; where the stream says it is complete (the byte after
/// which it does), held to: it is complete at the end, and the reply read up to where
/// it became so is the whole stream's (the messages a gateway commits when it holds
/// that chunk back are the ones the client is about to get). A recording that chains
/// several responses (a tool loop's steps) is complete after each; only a new
/// response's first event makes it incomplete again.
pub fn assert_complete_at_its_terminal_event(dialect: Dialect, bytes: &[u8], name: &str) {
    let whole = read_stream(dialect, bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut cap = StreamCapture::new(dialect);
    let mut complete_at = None;
    for (i, b) in bytes.iter().enumerate() {
        if let Err(e) = cap.feed(std::slice::from_ref(b)) {
            panic!("{name}: {e}");
        }
        match (complete_at, cap.is_complete()) {
            (None, true) => complete_at = Some(i + 1),
            (Some(at), false) => {
                let next = String::from_utf8_lossy(&bytes[at..=i]);
                assert!(
                    ["response.created", "message_start"]
                        .iter()
                        .any(|m| next.contains(m)),
                    "{name}: complete at {at}, then not at {} without a new response: {next}",
                    i + 1
                );
                complete_at = None;
            }
            _ => {}
        }
    }
    let at = complete_at.unwrap_or_else(|| panic!("{name}: not complete at its end"));
    let early = read_stream(dialect, &bytes[..at]).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(early.messages, whole.messages, "{name}: completed at {at}");
}

#[test]
fn every_stream_is_complete_from_its_terminal_event_on() {
    let mut n = 0;
    for f in fixtures("response.sse") {
        if read_stream(f.dialect, &f.bytes).is_err() {
            // A refused or cut recording is never complete.
            let mut cap = StreamCapture::new(f.dialect);
            let _ = cap.feed(&f.bytes);
            assert!(!cap.is_complete() || cap.finish().is_ok(), "{}", f.name());
            continue;
        }
        assert_complete_at_its_terminal_event(f.dialect, &f.bytes, &f.name());
        n += 1;
    }
    if n > 0 {
        eprintln!("{n} streams complete at their terminal event");
    }
}

#[test]
fn a_cut_stream_is_an_error_that_says_where() {
    let mut cut_points = 0;
    for f in fixtures("response.sse") {
        if !f.expect_ok() {
            continue;
        }
        // Where the stream becomes complete: the last event that can end it.
        let text = String::from_utf8_lossy(&f.bytes);
        let marker = match f.dialect {
            Dialect::BedrockConverse => {
                unreachable!("no Converse fixtures under ../shared/fixtures")
            }
            Dialect::Anthropic => "message_stop",
            Dialect::OpenAiResponses => "response.completed",
            Dialect::OpenAiChat => "finish_reason\":\"",
            Dialect::Gemini => "finishReason",
        };
        let complete_from = text.find(marker).expect("the end marker");
        let step = (complete_from / 40).max(1);
        for cut in (0..complete_from).step_by(step) {
            let e = read_stream(f.dialect, &f.bytes[..cut])
                .expect_err(&format!("{} cut at {cut} was accepted", f.name()));
            assert!(
                matches!(
                    e.kind,
                    CaptureErrorKind::Truncated | CaptureErrorKind::Malformed
                ),
                "{} cut at {cut}: {e}",
                f.name()
            );
            assert!(
                e.offset <= cut,
                "{} cut at {cut}: error at {}",
                f.name(),
                e.offset
            );
            cut_points += 1;
        }
    }
    if cut_points > 0 {
        eprintln!("{cut_points} cut streams refused");
    }
}

fn fixture(dialect: &str, name: &str) -> Option<Vec<u8>> {
    let shared = shared_dir()?;
    let dir = shared.join("fixtures").join(dialect).join(name);
    // `None` means "skipped": with the fixtures there, a missing one fails.
    let bytes = std::fs::read(dir.join("response.sse"))
        .or_else(|_| std::fs::read(dir.join("response.json")))
        .unwrap_or_else(|e| panic!("{}: no response.sse or response.json: {e}", dir.display()));
    Some(bytes)
}

fn calls(m: &Message) -> Vec<(String, String, bool)> {
    m.parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some((c.name.clone(), c.arguments.clone(), c.signature.is_some())),
            _ => None,
        })
        .collect()
}

#[test]
fn the_tricky_streams_are_read_as_the_wire_means() {
    let Some(gemini_args) = fixture(
        "gemini",
        "vercel-ai--google-stream-tool-call-arguments-stream",
    ) else {
        return;
    };
    // Gemini function calls streamed as `partialArgs` pieces.
    let r = read_stream(Dialect::Gemini, &gemini_args).unwrap();
    assert_eq!(
        calls(&r.messages[0]),
        vec![
            ("getWeather".into(), r#"{"location":"Boston"}"#.into(), true),
            (
                "getWeather".into(),
                r#"{"location":"San Francisco"}"#.into(),
                false
            ),
        ]
    );
    let r = read_stream(
        Dialect::Gemini,
        &fixture(
            "gemini",
            "vercel-ai--google-stream-no-args-tool-call-stream",
        )
        .unwrap(),
    )
    .unwrap();
    let got = calls(&r.messages[0]);
    assert_eq!(got[0], ("read_theme".into(), String::new(), true));
    assert_eq!(
        got[3],
        ("read_screen".into(), r#"{"id":"C"}"#.into(), false)
    );
    assert!(matches!(&r.messages[0].parts[0], Part::Reasoning(t) if t.text.is_some()));

    // Gemini text in pieces, its signature on a last empty piece: one signed text part.
    let r = read_stream(
        Dialect::Gemini,
        &fixture(
            "gemini",
            "fantasy--testgooglecommon-gemini-3-pro-preview-multi-tool-streaming-02",
        )
        .unwrap(),
    )
    .unwrap();
    match r.messages[0].parts.as_slice() {
        [Part::Text(t)] => {
            assert_eq!(t.text, "The sum of 2 and 3 is 5, and their product is 6.");
            assert!(t
                .signature
                .as_deref()
                .is_some_and(|s| s.starts_with("EpEBCo4B")));
        }
        other => panic!("{other:?}"),
    }

    // Anthropic thinking: text from thinking_delta, signature from signature_delta.
    let r = read_stream(
        Dialect::Anthropic,
        &fixture(
            "anthropic",
            "pydantic-ai--anthropic-model-thinking-part-stream",
        )
        .unwrap(),
    )
    .unwrap();
    match &r.messages[0].parts[0] {
        Part::Reasoning(t) => {
            assert!(t.text.as_deref().is_some_and(|s| !s.is_empty()));
            assert!(t.signature.as_deref().is_some_and(|s| s.len() > 100));
        }
        other => panic!("{other:?}"),
    }
    // ... and redacted thinking, whole in content_block_start.
    let r = read_stream(
        Dialect::Anthropic,
        &fixture(
            "anthropic",
            "pydantic-ai--anthropic-model-thinking-part-redacted-stream",
        )
        .unwrap(),
    )
    .unwrap();
    assert!(matches!(&r.messages[0].parts[0],
        Part::Reasoning(t) if t.text.is_none() && t.encrypted.is_some()));

    // Responses ids that rotate on every event: keyed by output_index, the done item's id.
    let r = read_stream(
        Dialect::OpenAiResponses,
        &fixture(
            "openai_responses",
            "vercel-ai--github-copilot-id-rotation.1-stream",
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(r.messages.len(), 2);
    assert!(matches!(&r.messages[0].parts[0],
        Part::Reasoning(t) if t.item_id.as_deref() == Some("capture-id-8")));
    assert_eq!(r.messages[1].item_id.as_deref(), Some("capture-id-68"));

    // OpenRouter: reasoning_details with a signature, a Bedrock tool call id.
    let r = read_stream(
        Dialect::OpenAiChat,
        &fixture(
            "openai_chat",
            "fantasy--testopenrouterthinking-anthropic-thinking-streaming-01",
        )
        .unwrap(),
    )
    .unwrap();
    let m = &r.messages[0];
    assert!(matches!(&m.parts[0], Part::Reasoning(t) if t.signature.is_some() && t.text.is_some()));
    assert!(matches!(m.parts.last(),
        Some(Part::ToolCall(c)) if c.id.as_deref().is_some_and(|i| i.starts_with("toolu_bdrk_"))));

    // Azure: a first chunk with empty choices and `"object": ""`.
    let r = read_stream(
        Dialect::OpenAiChat,
        &fixture("openai_chat", "vercel-ai--azure-model-router.1-stream").unwrap(),
    )
    .unwrap();
    assert_eq!(r.messages[0].text(), "Capital of Denmark.");
    assert_eq!(r.meta["object"], "chat.completion.chunk");

    // Errors inside HTTP 200 streams.
    let bytes = fixture("openai_responses", "vercel-ai--openai-error.1-stream").unwrap();
    let e = read_stream(Dialect::OpenAiResponses, &bytes).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::Provider);
    assert!(e.reason.contains("insufficient_quota"), "{e}");
    let at = String::from_utf8_lossy(&bytes)
        .find("data: {\"type\":\"error\"")
        .unwrap();
    assert_eq!(e.offset, at);
    let e = read_stream(
        Dialect::OpenAiChat,
        &fixture("openai_chat", "pydantic-ai--openrouter-stream-error").unwrap(),
    )
    .unwrap_err();
    assert!(e.reason.contains("Token limit reached"), "{e}");
}

#[test]
fn a_captured_reply_writes_back_as_the_next_request_expects() {
    // The reply to -01, appended to -01's history, is the history of -02 for a client
    // that sends everything back (pydantic-ai replays Anthropic thinking verbatim).
    let Some(shared) = shared_dir() else { return };
    let dir = shared.join("fixtures/anthropic");
    let read = |name: &str, file: &str| -> Value {
        serde_json::from_slice(&std::fs::read(dir.join(name).join(file)).expect("fixture"))
            .expect("JSON")
    };
    let first = read(
        "pydantic-ai--anthropic-tool-with-thinking-01",
        "request.json",
    );
    let second = read(
        "pydantic-ai--anthropic-tool-with-thinking-02",
        "request.json",
    );
    let reply = read_response(
        Dialect::Anthropic,
        &std::fs::read(dir.join("pydantic-ai--anthropic-tool-with-thinking-01/response.json"))
            .expect("fixture"),
    )
    .expect("captured");
    let mut conv = Conversation::from_request(Dialect::Anthropic, &first).expect("read");
    conv.messages.extend(reply.messages);
    let body = conv.to_request(Dialect::Anthropic).expect("written");
    let next = Conversation::from_request(Dialect::Anthropic, &second).expect("read");
    let n = body["messages"].as_array().expect("messages").len();
    assert_eq!(
        body["messages"][n - 1],
        next.to_request(Dialect::Anthropic).expect("written")["messages"][n - 1]
    );
}
