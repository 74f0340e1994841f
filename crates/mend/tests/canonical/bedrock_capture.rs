//! Bedrock Converse capture over the 80 recorded exchanges of
//! `../shared/fixtures-bedrock-converse`: every JSON response is read (the 400s as the
//! provider's error), every one of the 17 binary event streams decodes to the frames
//! its `response.stream.json` lists and gives the message its deltas spell, in any
//! chunking; cut or damaged streams are errors that say where, never panics.

use mend::canonical::capture::{
    encode_frame, read_response, read_stream, split_frames, CaptureErrorKind, Reply, StreamCapture,
};
use mend::canonical::{Part, Role};
use mend::next::read_reply;
use mend::Dialect;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use crate::support::{converse_fixture_dirs, converse_stream_bytes};

const D: Dialect = Dialect::BedrockConverse;

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn name(dir: &Path) -> String {
    dir.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// The recorded streams: folder, exact bytes, decoded frames as recorded.
fn streams() -> Vec<(PathBuf, Vec<u8>, Vec<Value>)> {
    converse_fixture_dirs()
        .into_iter()
        .filter_map(|dir| {
            let bytes = converse_stream_bytes(&dir)?;
            let frames = match read_json(&dir.join("response.stream.json")) {
                Value::Array(a) => a,
                other => panic!("{}: response.stream.json is {other}", dir.display()),
            };
            Some((dir, bytes, frames))
        })
        .collect()
}

/// The strings a client must get back: ids, signatures, redacted reasoning.
fn kept_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                match x {
                    Value::String(s)
                        if ["toolUseId", "signature", "redactedContent"].contains(&k.as_str()) =>
                    {
                        out.push(s.clone())
                    }
                    _ => kept_strings(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| kept_strings(x, out)),
        _ => {}
    }
}

fn captured_json(reply: &Reply) -> String {
    serde_json::to_string(&reply.messages).expect("serializable")
}

#[test]
fn every_recorded_converse_response_is_captured_or_its_error_reported() {
    let dirs = converse_fixture_dirs();
    if dirs.is_empty() {
        return;
    }
    let (mut ok, mut errors) = (0, 0);
    for dir in &dirs {
        let path = dir.join("response.json");
        if !path.is_file() {
            continue;
        }
        let n = name(dir);
        let bytes = std::fs::read(&path).expect("readable");
        let body = read_json(&path);
        let status = read_json(&dir.join("meta.json"))["status"]
            .as_u64()
            .unwrap_or(200);
        if status != 200 {
            let e = read_response(D, &bytes).expect_err(&n);
            assert_eq!(e.kind, CaptureErrorKind::Provider, "{n}: {e}");
            let message = body["message"]
                .as_str()
                .expect("an AWS error has a message");
            assert!(e.reason.contains(message), "{n}: {e}");
            assert_eq!(e.provider_error.as_ref(), Some(&body), "{n}");
            // A stream call refused up front answers JSON: read_reply tells it apart.
            assert_eq!(
                read_reply(D, &bytes).unwrap_err().kind,
                CaptureErrorKind::Provider
            );
            errors += 1;
            continue;
        }
        let reply = read_response(D, &bytes).unwrap_or_else(|e| panic!("{n}: {e}"));
        let content = body["output"]["message"]["content"]
            .as_array()
            .expect("content");
        assert_eq!(reply.messages.len(), 1, "{n}");
        let m = &reply.messages[0];
        assert_eq!(m.role, Role::Assistant, "{n}");
        assert_eq!(m.parts.len(), content.len(), "{n}: one part per block");
        let mut wire = Vec::new();
        kept_strings(&body["output"], &mut wire);
        let got = captured_json(&reply);
        for s in &wire {
            assert!(got.contains(s.as_str()), "{n}: {s} was lost");
        }
        for (block, part) in content.iter().zip(&m.parts) {
            let tool_use = block.get("toolUse");
            let server = tool_use.is_some_and(|u| u["type"] == "server_tool_use");
            match (tool_use, part) {
                (Some(u), Part::ToolCall(c)) if !server => {
                    assert_eq!(Some(u["toolUseId"].as_str().unwrap_or("")), c.id.as_deref());
                    let args: Value = serde_json::from_str(&c.arguments).expect("JSON");
                    assert_eq!(args, u["input"], "{n}");
                    // Clients drop the response's `type` for client tools.
                    assert!(!c.extra.contains_key("type"), "{n}");
                }
                (Some(_), Part::Opaque(o)) if server => assert_eq!(&o.value, block),
                (Some(_), other) => panic!("{n}: toolUse read as {other:?}"),
                (None, _) => {}
            }
            if let (Some(r), Part::Reasoning(p)) = (block.get("reasoningContent"), part) {
                let t = &r["reasoningText"];
                assert_eq!(p.text.as_deref(), t["text"].as_str(), "{n}");
                assert_eq!(p.signature.as_deref(), t["signature"].as_str(), "{n}");
                assert_eq!(p.encrypted.as_deref(), r["redactedContent"].as_str(), "{n}");
            }
        }
        assert_eq!(reply.meta["stopReason"], body["stopReason"], "{n}");
        assert_eq!(reply.meta["usage"], body["usage"], "{n}");
        ok += 1;
    }
    assert_eq!((ok, errors), (57, 6), "JSON responses read and refused");
}

#[test]
fn every_recorded_event_stream_decodes_to_its_recorded_frames() {
    let all = streams();
    if converse_fixture_dirs().is_empty() {
        return;
    }
    assert_eq!(all.len(), 17, "the 17 recorded streams");
    for (dir, bytes, recorded) in &all {
        let n = name(dir);
        let frames = split_frames(bytes).unwrap_or_else(|e| panic!("{n}: {e}"));
        assert_eq!(frames.len(), recorded.len(), "{n}");
        for (f, r) in frames.iter().zip(recorded) {
            let headers: serde_json::Map<String, Value> = f
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            assert_eq!(Value::Object(headers), r["headers"], "{n} at {}", f.offset);
            let payload: Value = serde_json::from_slice(&f.payload).expect("JSON payload");
            assert_eq!(payload, r["payload"], "{n} at {}", f.offset);
        }
        // Writing the frames again gives the recorded bytes.
        let again: Vec<u8> = frames
            .iter()
            .flat_map(|f| {
                let h: Vec<(&str, &str)> = f
                    .headers
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                encode_frame(&h, &f.payload)
            })
            .collect();
        assert!(again == *bytes, "{n}: re-encoded frames differ");
    }
}

/// What the deltas of a recorded stream spell, block by block.
#[derive(Default, Debug)]
struct Spelled {
    text: String,
    reasoning: String,
    signature: String,
    redacted: String,
    input: String,
    id: Option<String>,
    server: bool,
    citations: usize,
}

fn spell(recorded: &[Value]) -> Vec<(u64, Spelled)> {
    let mut blocks: Vec<(u64, Spelled)> = Vec::new();
    for f in recorded {
        let p = &f["payload"];
        let Some(i) = p["contentBlockIndex"].as_u64() else {
            continue;
        };
        if !blocks.iter().any(|(k, _)| *k == i) {
            blocks.push((i, Spelled::default()));
        }
        let Some((_, b)) = blocks.iter_mut().find(|(k, _)| *k == i) else {
            continue;
        };
        if let Some(u) = p["start"].get("toolUse") {
            b.id = u["toolUseId"].as_str().map(str::to_string);
            b.server = u["type"] == "server_tool_use";
        }
        if p["start"].get("toolResult").is_some() {
            b.server = true;
        }
        let d = &p["delta"];
        let s = |v: &Value| v.as_str().unwrap_or("").to_string();
        b.text += &s(&d["text"]);
        b.input += &s(&d["toolUse"]["input"]);
        b.reasoning += &s(&d["reasoningContent"]["text"]);
        b.signature += &s(&d["reasoningContent"]["signature"]);
        b.redacted += &s(&d["reasoningContent"]["redactedContent"]);
        b.citations += usize::from(d.get("citation").is_some());
    }
    blocks.sort_by_key(|(i, _)| *i);
    blocks
}

#[test]
fn every_recorded_stream_gives_the_message_its_deltas_spell_in_any_chunking() {
    for (dir, bytes, recorded) in streams() {
        let n = name(&dir);
        let reply = read_stream(D, &bytes).unwrap_or_else(|e| panic!("{n}: {e}"));
        assert_eq!(read_reply(D, &bytes).as_ref(), Ok(&reply), "{n}");
        let m = &reply.messages[0];
        assert_eq!(m.role, Role::Assistant);
        let blocks = spell(&recorded);
        assert_eq!(m.parts.len(), blocks.len(), "{n}: {:#?}", m.parts);
        for ((_, b), part) in blocks.iter().zip(&m.parts) {
            match part {
                Part::Text(t) => assert_eq!(t.text, b.text, "{n}"),
                Part::ToolCall(c) => {
                    assert_eq!(c.id, b.id, "{n}");
                    let args: Value = serde_json::from_str(&c.arguments).expect("JSON");
                    let want: Value = serde_json::from_str(&b.input).unwrap_or(json!({}));
                    assert_eq!(args, want, "{n}");
                    assert!(!b.server, "{n}: a server call is not a client call");
                }
                Part::Reasoning(r) if !b.redacted.is_empty() => {
                    assert_eq!(r.encrypted.as_deref(), Some(b.redacted.as_str()), "{n}")
                }
                Part::Reasoning(r) => {
                    assert_eq!(r.text.as_deref(), Some(b.reasoning.as_str()), "{n}");
                    let sig = (!b.signature.is_empty()).then_some(b.signature.as_str());
                    assert_eq!(r.signature.as_deref(), sig, "{n}");
                }
                Part::Opaque(o) if b.citations > 0 => {
                    let c = &o.value["citationsContent"];
                    assert_eq!(c["content"][0]["text"], b.text.as_str(), "{n}");
                    assert_eq!(c["citations"].as_array().map(Vec::len), Some(b.citations));
                }
                Part::Opaque(_) => assert!(b.server, "{n}: {part:?}"),
                other => panic!("{n}: {other:?}"),
            }
        }
        let last = recorded.last().expect("frames");
        assert_eq!(reply.meta["usage"], last["payload"]["usage"], "{n}");
        assert!(reply.meta.contains_key("stopReason"), "{n}");
        assert!(!reply.meta.contains_key("p"), "{n}: padding is not meta");
        // Fed in chunks of every size up to 64 bytes, and byte by byte.
        for size in 1..=64 {
            let mut cap = StreamCapture::new(D);
            for c in bytes.chunks(size) {
                cap.feed(c).unwrap_or_else(|e| panic!("{n}: {e}"));
            }
            assert_eq!(cap.finish().as_ref(), Ok(&reply), "{n} in chunks of {size}");
        }
    }
}

#[test]
fn every_recorded_stream_is_complete_from_its_message_stop_on() {
    for (dir, bytes, _) in streams() {
        if read_stream(D, &bytes).is_ok() {
            crate::capture::assert_complete_at_its_terminal_event(D, &bytes, &name(&dir));
        }
    }
}

#[test]
fn a_cut_or_damaged_stream_is_an_error_that_says_where() {
    for (dir, bytes, _) in streams() {
        let n = name(&dir);
        let frames = split_frames(&bytes).expect("frames");
        let stop = frames
            .iter()
            .position(|f| f.header(":event-type") == Some("messageStop"))
            .expect("a messageStop");
        let complete_at = frames.get(stop + 1).map_or(bytes.len(), |f| f.offset);
        let starts: Vec<usize> = frames.iter().map(|f| f.offset).collect();
        let step = (complete_at / 50).max(1);
        for cut in (0..complete_at).step_by(step).chain([complete_at - 1]) {
            let e =
                read_stream(D, &bytes[..cut]).expect_err(&format!("{n} cut at {cut} was accepted"));
            assert_eq!(e.kind, CaptureErrorKind::Truncated, "{n} cut at {cut}: {e}");
            // Inside a frame: where it starts; between frames: the end.
            let inside = starts.iter().rev().find(|s| **s < cut).copied();
            let want = if starts.contains(&cut) || cut == 0 {
                cut
            } else {
                inside.unwrap_or(0)
            };
            assert_eq!(e.offset, want, "{n} cut at {cut}: {e}");
        }
        // After messageStop the message is whole; metadata may be missing.
        assert!(read_stream(D, &bytes[..complete_at]).is_ok(), "{n}");
        // Any flipped byte breaks a CRC: malformed, at the start of its frame.
        for at in (0..bytes.len()).step_by((bytes.len() / 97).max(1)) {
            let mut bad = bytes.clone();
            bad[at] ^= 0x20;
            let e = read_stream(D, &bad).expect_err(&format!("{n} flipped at {at}"));
            assert!(
                matches!(
                    e.kind,
                    CaptureErrorKind::Malformed | CaptureErrorKind::TooLarge
                ),
                "{n} flipped at {at}: {e}"
            );
            let frame = starts
                .iter()
                .rev()
                .find(|s| **s <= at)
                .copied()
                .unwrap_or(0);
            assert_eq!(e.offset, frame, "{n} flipped at {at}: {e}");
        }
    }
}

fn frame(event: &str, payload: Value) -> Vec<u8> {
    encode_frame(
        &[
            (":event-type", event),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.to_string().as_bytes(),
    )
}

#[test]
fn exceptions_and_bad_frames_are_named() {
    let start = frame("messageStart", json!({"role": "assistant"}));
    let delta = frame(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "Hi"}}),
    );
    let exception = encode_frame(
        &[
            (":exception-type", "throttlingException"),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        br#"{"message":"Too many requests, please wait before trying again."}"#,
    );
    let mut s = [start.clone(), delta.clone()].concat();
    let at = s.len();
    s.extend(&exception);
    let e = read_stream(D, &s).unwrap_err();
    assert_eq!((e.kind, e.offset), (CaptureErrorKind::Provider, at));
    assert_eq!(
        e.reason,
        "the provider reported an error: throttlingException: Too many requests, please wait before trying again."
    );
    assert_eq!(
        e.provider_error,
        Some(json!({"message": "Too many requests, please wait before trying again."}))
    );

    // An SSE stream, a JSON body, nothing: each said plainly.
    let sse = read_stream(D, b"data: {\"type\":\"message_start\"}\n\n").unwrap_err();
    assert_eq!(sse.kind, CaptureErrorKind::WrongDialect, "{sse}");
    assert!(sse.reason.contains("anthropic"), "{sse}");
    let unknown_sse = read_stream(D, b"data: {\"x\":1}\n\n").unwrap_err();
    assert_eq!(
        unknown_sse.kind,
        CaptureErrorKind::Malformed,
        "{unknown_sse}"
    );
    let body = read_stream(D, br#"{"output": {}}"#).unwrap_err();
    assert!(body.reason.contains("read_response"), "{body}");
    assert_eq!(
        read_stream(D, b"").unwrap_err().kind,
        CaptureErrorKind::Truncated
    );

    // A payload that is not JSON, a delta of a block kind it cannot be.
    let junk = encode_frame(&[(":event-type", "messageStart")], b"{not json");
    let e = read_stream(D, &junk).unwrap_err();
    assert_eq!((e.kind, e.offset), (CaptureErrorKind::Malformed, 0), "{e}");
    let clash = frame(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}),
    );
    let e = read_stream(D, &[start.clone(), delta.clone(), clash].concat()).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::Malformed, "{e}");
    // No messageStop: truncated at the end, naming the open block.
    let e = read_stream(D, &[start.clone(), delta.clone()].concat()).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::Truncated);
    assert!(e.reason.contains("block 0 still open"), "{e}");

    // A frame over the limit is refused before it is read.
    let mut cap = StreamCapture::new(D).max_event_bytes(64);
    let big = frame(
        "messageStart",
        json!({"role": "assistant", "p": "x".repeat(100)}),
    );
    let e = cap.feed(&big[..12]).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::TooLarge, "{e}");
}

#[test]
fn a_stream_assembles_what_the_json_response_holds() {
    let stream = [
        frame("messageStart", json!({"p": "abc", "role": "assistant"})),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Let me "}}}),
        ),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "check."}}}),
        ),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "EqQB"}}}),
        ),
        frame("contentBlockStop", json!({"contentBlockIndex": 0})),
        frame(
            "contentBlockStart",
            json!({"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "weather", "type": "tool_use"}}}),
        ),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": ""}}}),
        ),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"city\":"}}}),
        ),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": "\"Paris\"}"}}}),
        ),
        frame("contentBlockStop", json!({"contentBlockIndex": 1})),
        frame("messageStop", json!({"stopReason": "tool_use", "p": "ab"})),
        frame(
            "metadata",
            json!({"usage": {"inputTokens": 3, "outputTokens": 4}, "metrics": {"latencyMs": 9}}),
        ),
    ]
    .concat();
    let body = json!({
        "output": {"message": {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "Let me check.", "signature": "EqQB"}}},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "weather", "input": {"city": "Paris"}, "type": "tool_use"}}]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 3, "outputTokens": 4},
        "metrics": {"latencyMs": 9}});
    let streamed = read_stream(D, &stream).unwrap();
    let whole = read_response(D, body.to_string().as_bytes()).unwrap();
    assert_eq!(streamed.messages, whole.messages);
    assert_eq!(streamed.meta, whole.meta);
    let Part::ToolCall(c) = &streamed.messages[0].parts[1] else {
        panic!("{:?}", streamed.messages[0].parts)
    };
    assert_eq!(c.arguments, r#"{"city":"Paris"}"#);
}
