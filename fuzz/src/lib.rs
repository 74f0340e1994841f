//! The properties the fuzz targets check, one function per target.
//!
//! Every input is one selector byte followed by the bytes under test. The selector modulo
//! the number of dialects picks the dialect (`Dialect::ALL` order: openai_chat,
//! openai_responses, anthropic, gemini, bedrock_converse); the quotient (`opts`, 0 to 50)
//! picks options where a target has any. The seed corpora
//! (`fuzz/seed.py`) prefix each body with the byte of its own dialect, and libFuzzer is
//! free to change it, so every parser also sees the other dialects' bodies.
//!
//! A property that does not hold panics with what was expected and what came out, so
//! libFuzzer records the input as a crash.
//!
//! This file is also compiled into mend's own test suite (`crates/mend/tests/it/
//! mutations.rs` includes it by path): the mutation test holds every mutant to these same
//! properties, and replays the crashes kept under `fuzz/regressions/<target>/`. So it
//! uses nothing but `mend` and `serde_json`.

use mend::canonical::capture::{self, StreamCapture};
use mend::canonical::Conversation;
use mend::repair::{MissingResult, OrphanResult, RepairOptions};
use mend::trim::TrimOptions;
use mend::{CheckOptions, Dialect, Severity};
use serde_json::Value;

/// How many dialects a selector byte chooses among.
pub const DIALECTS: u8 = Dialect::ALL.len() as u8;

/// The selector byte of a dialect and its options (`opts` at most 50).
pub fn selector(dialect: Dialect, opts: u8) -> u8 {
    let d = Dialect::ALL.iter().position(|x| *x == dialect).unwrap_or(0) as u8;
    d + DIALECTS * opts.min(255 / DIALECTS - 1)
}

/// The dialect, the options and the remaining bytes of an input, or `None` for an empty
/// input.
pub fn split(data: &[u8]) -> Option<(Dialect, u8, &[u8])> {
    let (&sel, rest) = data.split_first()?;
    Some((
        Dialect::ALL[usize::from(sel % DIALECTS)],
        sel / DIALECTS,
        rest,
    ))
}

fn forced(dialect: Dialect) -> CheckOptions {
    CheckOptions {
        dialect: Some(dialect),
        ..Default::default()
    }
}

/// Rule and path of each error-severity finding, sorted.
fn errors(vs: &[mend::Violation]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vs
        .iter()
        .filter(|v| v.severity == Severity::Error)
        .map(|v| (v.rule.id().to_string(), v.path.clone()))
        .collect();
    out.sort();
    out
}

/// Parse and check, as the selected dialect and with the dialect detected: a verdict or
/// a clean error, and the same verdict from bytes as from the parsed value.
pub fn check(data: &[u8]) {
    let Some((dialect, opts, bytes)) = split(data) else {
        return;
    };
    let from_bytes = mend::check(bytes, &forced(dialect));
    let Ok(body) = mend::parse_body(bytes) else {
        assert!(
            from_bytes.is_err(),
            "check accepted bytes parse_body refused"
        );
        return;
    };
    let from_value = check_value(dialect, opts, &body);
    match (&from_bytes, &from_value) {
        (Ok(a), Ok(b)) => assert_eq!(a.violations, b.violations, "check vs check_value"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("check gave {a:?} but check_value gave {b:?}"),
    }
}

/// The tape reader (`mend::json`) accepts only what serde_json accepts, and reads it as
/// the same value.
pub fn json_tape(data: &[u8]) {
    let Some(doc) = mend::json::parse(data) else {
        return;
    };
    let value =
        serde_json::from_slice::<Value>(data).expect("the tape accepted what serde_json refuses");
    assert_eq!(tape_value(doc.root()), value, "the tape read another value");
}

fn tape_value(n: mend::json::Node) -> Value {
    use mend::json::Kind;
    match n.kind() {
        Kind::Null => Value::Null,
        Kind::Bool => Value::Bool(n.as_bool().unwrap_or_default()),
        Kind::Number => {
            serde_json::from_str(n.number_text().unwrap_or_default()).unwrap_or(Value::Null)
        }
        Kind::String => Value::String(n.to_str().unwrap_or_default().into_owned()),
        Kind::Array => Value::Array(n.items().map(tape_value).collect()),
        Kind::Object => Value::Object(
            n.members()
                .map(|(k, v)| (k.to_string(), tape_value(v)))
                .collect(),
        ),
    }
}

/// [`check`] of a parsed body: as `dialect`, with its atomic groups (`opts` turns
/// protected), and with the dialect detected. Returns the verdict as `dialect`.
pub fn check_value(dialect: Dialect, opts: u8, body: &Value) -> Result<mend::Report, mend::Error> {
    if let Ok(analysis) = mend::analyze(body, &forced(dialect)) {
        let _ = analysis.groups(usize::from(opts >> 2));
    }
    let _ = mend::check_value(body, &CheckOptions::default());
    mend::check_value(body, &forced(dialect))
}

/// Repair: the output re-checks valid, or every error that remains is listed as
/// unrepairable; repairing the output again changes nothing.
pub fn repair(data: &[u8]) {
    let Some((dialect, opts, bytes)) = split(data) else {
        return;
    };
    if let Ok(body) = mend::parse_body(bytes) {
        repair_value(dialect, opts, &body);
    }
}

/// [`repair`] of a parsed body, with the options of the selector's high bits `opts`.
pub fn repair_value(dialect: Dialect, opts: u8, body: &Value) {
    let ropts = RepairOptions {
        check: forced(dialect),
        missing_result: if opts & 1 == 0 {
            MissingResult::Synthesize
        } else {
            MissingResult::DropCall
        },
        orphan_result: if opts & 2 == 0 {
            OrphanResult::Drop
        } else {
            OrphanResult::ToText
        },
        synthesized_text: (opts & 4 != 0).then(|| "[mend: no output recorded]".to_string()),
    };
    let Ok(fixed) = mend::repair::repair(body, &ropts) else {
        return;
    };
    let again = match mend::check_value(&fixed.body, &ropts.check) {
        Ok(r) => r,
        Err(e) => panic!("the repaired body cannot be checked: {e}"),
    };
    let remaining = errors(&again.violations);
    let listed = errors(&fixed.unrepairable);
    for e in &remaining {
        assert!(
            listed.contains(e),
            "repair left {e:?} but listed as unrepairable only {listed:?}\nrepaired: {}",
            fixed.body
        );
    }
    if fixed.valid() {
        assert!(
            remaining.is_empty(),
            "repair said valid, check found {remaining:?}"
        );
    }
    if let Ok(twice) = mend::repair::repair(&fixed.body, &ropts) {
        assert!(
            twice.edits.is_empty(),
            "repair of repair's own output edited again: {:?}\nfirst output: {}",
            twice.edits,
            fixed.body
        );
    }
    results_keep_their_calls(body, &fixed.body, &ropts.check);
}

/// No repair changes which call a result answers: every result of the input that was
/// paired with a call, and whose content is found once in the input and once in the
/// output, is paired in the output with a call of the same content (ids aside: repair
/// may rename them).
fn results_keep_their_calls(before: &Value, after: &Value, opts: &CheckOptions) {
    let (Some(b), Some(a)) = (content_pairs(before, opts), content_pairs(after, opts)) else {
        return;
    };
    let once = |pairs: &[(Value, Option<Value>)], r: &Value| {
        pairs.iter().filter(|(x, _)| x == r).count() == 1
    };
    for (result, call) in &b {
        let Some(call) = call else { continue };
        if !once(&b, result) || !once(&a, result) {
            continue;
        }
        let Some((_, now)) = a.iter().find(|(x, _)| x == result) else {
            continue;
        };
        if let Some(now) = now {
            assert_eq!(
                now, call,
                "repair moved the result {result} from the call {call} to the call {now}\nbefore: {before}\nafter: {after}"
            );
        }
    }
}

/// Every client result of a body, without its ids, with the call it answers (without
/// its ids), or `None` when it answers none.
fn content_pairs(body: &Value, opts: &CheckOptions) -> Option<Vec<(Value, Option<Value>)>> {
    let analysis = mend::analyze(body, opts).ok()?;
    let chain = &analysis.chain;
    let at = |ptr: mend::chain::Ptr| ptr.resolve(body).map(without_ids);
    let mut out = Vec::new();
    for (n, node) in chain.nodes.iter().enumerate() {
        if !matches!(
            node.kind,
            mend::chain::NodeKind::Result {
                kind: mend::chain::CallKind::Client,
                ..
            }
        ) {
            continue;
        }
        let call = analysis
            .pairs
            .iter()
            .find(|&&(_, r)| r == n)
            .map(|&(c, _)| c);
        out.push((at(node.ptr)?, call.and_then(|c| at(chain.nodes[c].ptr))));
    }
    Some(out)
}

/// A call or result with its id fields removed, two levels deep (Gemini nests them).
fn without_ids(v: &Value) -> Value {
    strip_ids(&as_function_call(v), 2)
}

/// A chat tool call (`{"type": "function", "function": {name, arguments}}`) in the form
/// of the Responses `function_call` item repair writes it as in Responses `input`: the
/// same call either way (also without its `type`, which repair sets from the `function`).
fn as_function_call(v: &Value) -> Value {
    match (v.get("type").and_then(Value::as_str), v.get("function")) {
        (Some("function") | None, Some(f)) if f.is_object() => serde_json::json!({
            "type": "function_call",
            "name": f.get("name").cloned().unwrap_or(Value::Null),
            "arguments": f.get("arguments").cloned().unwrap_or(Value::Null),
        }),
        _ => v.clone(),
    }
}

fn strip_ids(v: &Value, depth: u8) -> Value {
    const IDS: [&str; 7] = [
        "id",
        "call_id",
        "tool_call_id",
        "tool_use_id",
        "toolUseId",
        "thoughtSignature",
        "thought_signature",
    ];
    match v {
        Value::Object(o) if depth > 0 => Value::Object(
            o.iter()
                .filter(|(k, _)| !IDS.contains(&k.as_str()))
                .map(|(k, v)| {
                    // Repair may write arguments stored as an object as their JSON text,
                    // and a Converse input given as JSON text as its object: the same
                    // call either way.
                    let v = match (k.as_str(), v) {
                        ("arguments" | "input" | "args", Value::String(text)) => {
                            serde_json::from_str(text).unwrap_or_else(|_| v.clone())
                        }
                        // Repair may write a call's name in the characters the provider
                        // takes (`browser.tabs.open` as `browser_tabs_open`): the same
                        // call either way.
                        ("name", Value::String(name)) => Value::String(
                            name.chars()
                                .map(|c| {
                                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                                        c
                                    } else {
                                        '_'
                                    }
                                })
                                .take(64)
                                .collect(),
                        ),
                        _ => strip_ids(v, depth - 1),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Trim never makes a valid history invalid, and stays within budget unless it says so.
pub fn trim(data: &[u8]) {
    let Some((dialect, opts, bytes)) = split(data) else {
        return;
    };
    if let Ok(body) = mend::parse_body(bytes) {
        trim_value(dialect, opts, &body);
    }
}

/// [`trim`] of a parsed body, with the options of the selector's high bits `opts`.
pub fn trim_value(dialect: Dialect, opts: u8, body: &Value) {
    let Ok(before) = mend::check_value(body, &forced(dialect)) else {
        return;
    };
    let topts = TrimOptions {
        check: forced(dialect),
        budget: 1usize << (opts & 15),
        keep_last: usize::from(opts >> 4 & 1),
        protect: usize::from(opts >> 5),
    };
    let Ok(t) = mend::trim::trim(body, &topts) else {
        return;
    };
    // Taking the body (its kept items moved, not copied) comes to the same outcome.
    match mend::trim::trim_owned(body.clone(), &topts) {
        Ok(o) => assert!(
            o.body == t.body
                && o.dropped == t.dropped
                && (o.tokens_before, o.tokens_after, o.over_budget)
                    == (t.tokens_before, t.tokens_after, t.over_budget)
                && o.violations == t.violations
                && o.repairs == t.repairs,
            "trim_owned differs from trim: dropped {:?} / {:?}, body\n{}\n{}",
            o.dropped,
            t.dropped,
            o.body,
            t.body
        ),
        Err(e) => panic!("trim_owned failed where trim did not: {e}"),
    }
    if !t.over_budget {
        assert!(
            t.tokens_after <= topts.budget,
            "{} tokens after trim, budget {}, not over_budget",
            t.tokens_after,
            topts.budget
        );
    }
    if before.valid() {
        let after = match mend::check_value(&t.body, &topts.check) {
            Ok(r) => r,
            Err(e) => panic!("the trimmed body cannot be checked: {e}"),
        };
        assert!(
            after.valid(),
            "trim made a valid history invalid: {:?}\ntrimmed: {}",
            errors(&after.violations),
            t.body
        );
    }
}

/// Canonical round trip in one dialect: body -> conversation -> body is the same JSON, and
/// the conversation's JSON form reads back as the same conversation.
pub fn roundtrip(data: &[u8]) {
    let Some((dialect, opts, bytes)) = split(data) else {
        return;
    };
    if let Ok(body) = mend::parse_body(bytes) {
        roundtrip_value(dialect, opts, &body);
    }
}

/// [`roundtrip`] of a parsed body, with the options of the selector's high bits `opts`.
pub fn roundtrip_value(dialect: Dialect, _opts: u8, body: &Value) {
    let conv = match Conversation::from_request(dialect, body) {
        Ok(conv) => conv,
        Err(e) => {
            assert!(!body.is_object(), "from_request refused an object: {e}");
            return;
        }
    };
    match conv.to_request(dialect) {
        Ok(back) => assert!(
            &back == body,
            "{dialect} round trip changed the body\n in: {body}\nout: {back}"
        ),
        Err(e) => panic!("{dialect} could not write back what it read: {e}"),
    }
    let form = serde_json::to_vec(&conv.to_json()).unwrap_or_default();
    match Conversation::from_json(&form) {
        Ok(c) => assert!(c == conv, "the JSON form did not read back equal"),
        Err(e) => panic!("the JSON form did not read back: {e}"),
    }
}

/// A non-streaming response: captured or a clean error; captured messages can be written
/// back as a request of the dialect.
pub fn response(data: &[u8]) {
    let Some((dialect, _, bytes)) = split(data) else {
        return;
    };
    let by_bytes = capture::read_response(dialect, bytes);
    if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
        let by_value = capture::read_response_value(dialect, &v);
        if let (Ok(a), Ok(b)) = (&by_bytes, &by_value) {
            assert!(a == b, "read_response and read_response_value differ");
        }
    }
    if let Ok(reply) = by_bytes {
        write_back(dialect, reply);
    }
}

/// [`response`] of a parsed response body.
pub fn response_value(dialect: Dialect, body: &Value) {
    if let Ok(reply) = capture::read_response_value(dialect, body) {
        write_back(dialect, reply);
    }
}

/// A stream: the whole stream and the same bytes fed in two chunks give the same result;
/// the plain SSE splitter gives events or a clean error.
pub fn stream(data: &[u8]) {
    let Some((dialect, cut, bytes)) = split(data) else {
        return;
    };
    let _ = mend::canonical::capture::split_events(bytes);
    let whole = capture::read_stream(dialect, bytes);
    // The cut point: a byte position taken from the selector's high bits and the length.
    let at = if bytes.is_empty() {
        0
    } else {
        (usize::from(cut) * 4099) % (bytes.len() + 1)
    };
    let mut cap = StreamCapture::new(dialect);
    let fed = cap.feed(&bytes[..at]).and_then(|_| cap.feed(&bytes[at..]));
    let chunked = fed.and_then(|_| cap.finish());
    assert!(
        whole == chunked,
        "{dialect} stream fed whole and cut at byte {at} differ:\nwhole:   {whole:?}\nchunked: {chunked:?}"
    );
    if let Ok(reply) = whole {
        write_back(dialect, reply);
    }
}

fn write_back(dialect: Dialect, reply: capture::Reply) {
    let conv = Conversation {
        dialect: Some(dialect),
        messages: reply.messages,
        ..Default::default()
    };
    let _ = conv.to_request(dialect);
}

/// Convert: the selector picks the source dialect; its options modulo the number of
/// dialects the target, their quotient's bits the repair policy. A converted body or a clean error; the violations reported are what
/// a check of the output as the target (under the same provider) finds.
pub fn convert(data: &[u8]) {
    let Some((from, opts, bytes)) = split(data) else {
        return;
    };
    if let Ok(body) = mend::parse_body(bytes) {
        convert_value(from, opts, &body);
    }
}

/// [`convert`] of a parsed body from `from`, `opts` being the selector's high bits.
pub fn convert_value(from: Dialect, opts: u8, body: &Value) {
    let to = Dialect::ALL[usize::from(opts % DIALECTS)];
    let policy = opts / DIALECTS;
    let copts = mend::convert::ConvertOptions {
        missing_result: if policy & 1 == 0 {
            MissingResult::Synthesize
        } else {
            MissingResult::DropCall
        },
        orphan_result: if policy & 2 == 0 {
            OrphanResult::Drop
        } else {
            OrphanResult::ToText
        },
        no_repair: policy & 4 != 0,
        ..Default::default()
    };
    let Ok(out) = mend::convert::convert(body, from, to, &copts) else {
        return;
    };
    // Gemini and Converse bodies carry no model (it is in the URL): the check is under
    // the model convert checked the target with.
    let again = mend::check_value(
        &out.body,
        &CheckOptions {
            dialect: Some(to),
            provider: Some(out.provider.to_string()),
            model: out.model.clone(),
            ..Default::default()
        },
    );
    match again {
        Ok(r) => assert_eq!(
            errors(&r.violations),
            errors(&out.violations),
            "{from} -> {to}: the output's check and the reported violations differ\nout: {}",
            out.body
        ),
        Err(e) => panic!("{from} -> {to}: the converted body cannot be checked: {e}"),
    }
}

/// Next: the selector picks the dialect; its options, whether every call of the response
/// is answered (bit 0 clear) and whether a user turn follows (bit 1). The rest is a
/// request body, a NUL byte and a response: JSON, SSE, or (Converse, index 4) the binary
/// event stream, whose bytes go to the reader as they are, never read as text (the
/// request, JSON, holds no NUL, so the first one ends it). A next request or a clean
/// error; when the request checks valid, the response made calls and every one is
/// answered, the next request checks valid too.
pub fn next(data: &[u8]) {
    let Some((dialect, opts, bytes)) = split(data) else {
        return;
    };
    let Some(nul) = bytes.iter().position(|&b| b == 0) else {
        return;
    };
    let (req, resp) = (&bytes[..nul], &bytes[nul + 1..]);
    let Ok(request) = mend::parse_body(req) else {
        return;
    };
    let Ok(reply) = mend::next::read_reply(dialect, resp) else {
        return;
    };
    next_value(dialect, opts, &request, &reply);
}

/// [`next`] of a parsed request and a captured reply.
pub fn next_value(dialect: Dialect, opts: u8, request: &Value, reply: &capture::Reply) {
    use mend::next::{continued_output, next_request, NextOptions, ToolOutput};
    let answer_all = opts & 1 == 0;
    let output = continued_output(dialect, reply, 0).ok();
    let calls: Vec<(Option<String>, Option<String>)> = output
        .iter()
        .flatten()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            mend::canonical::Part::ToolCall(c) => Some((c.id.clone(), Some(c.name.clone()))),
            _ => None,
        })
        .collect();
    let results: Vec<ToolOutput> = calls
        .into_iter()
        .skip(usize::from(!answer_all))
        .map(|(id, name)| ToolOutput {
            name: if id.is_none() { name } else { None },
            call_id: id,
            output: Value::String("ok".into()),
            is_error: false,
        })
        .collect();
    let nopts = NextOptions {
        choice: 0,
        user: (opts & 2 != 0).then(|| "go on".to_string()),
        model: None,
    };
    let Ok(next) = next_request(request, dialect, reply, &results, &nopts) else {
        return;
    };
    // Held to it only inside a tool loop: without calls the body ends with the output
    // (a prefill), and after a plain answer the checker flags some real provider output
    // sent back as it came (an Anthropic "\n\n" text block before the thinking).
    // A call without an id (some compatible APIs send `"id": ""`) cannot be answered in a dialect
    // that pairs by id, whatever next does.
    let sendable = !next.calls.is_empty()
        && (dialect == Dialect::Gemini
            || next
                .calls
                .iter()
                .all(|c| c.call_id.as_deref().is_some_and(|id| !id.is_empty())));
    let valid_before = mend::check_value(request, &forced(dialect)).is_ok_and(|r| r.valid());
    // Only what next appended is held to it: a rule may read the old history differently
    // once reasoning follows it, and that is the checker's business.
    let key = dialect.history_key();
    let old = request
        .get(key)
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let appended = |path: &str| {
        path.strip_prefix(&format!("/{key}/"))
            .and_then(|rest| rest.split('/').next())
            .and_then(|i| i.parse::<usize>().ok())
            .is_some_and(|i| i >= old)
    };
    // The response itself well formed: its output, appended with no results, breaks
    // nothing but the missing results, and every call the checker sees there is one next
    // can answer. A mutated response (a tool_use that lost its id, its name, a thinking
    // block that lost its text) is reported by next's check, as it should be.
    let bare = NextOptions {
        choice: 0,
        user: None,
        model: None,
    };
    let well_formed = next_request(request, dialect, reply, &[], &bare)
        .ok()
        .and_then(|n| {
            let r = mend::check_value(&n.body, &forced(dialect)).ok()?;
            let new: Vec<(String, String)> = errors(&r.violations)
                .into_iter()
                .filter(|(_, p)| appended(p))
                .collect();
            Some(
                new.iter()
                    .all(|(rule, _)| rule == "tool-call-without-result")
                    && new.len() == n.calls.len(),
            )
        })
        .unwrap_or(false);
    // And every part of the output modeled: next vouches for what it understands. A part
    // kept opaque (a block of a type no provider sends, a tool_use without its name) is
    // sent back as it came, and the check says what it breaks.
    let modeled = output.as_ref().is_some_and(|ms| {
        ms.iter()
            .flat_map(|m| &m.parts)
            .all(|p| !matches!(p, mend::canonical::Part::Opaque(_)))
    });
    // With thinking on, an Anthropic message that calls tools opens with its (signed)
    // thinking; a response without it cannot open the next loop, and next cannot make one.
    let thinking_on = request
        .pointer("/thinking/type")
        .and_then(Value::as_str)
        .is_some_and(|t| t != "disabled");
    let opens_with_thinking = output.as_ref().is_some_and(|ms| {
        ms.iter()
            .all(|m| matches!(m.parts.first(), Some(mend::canonical::Part::Reasoning(_))))
    });
    let as_provider_sends = dialect != Dialect::Anthropic || !thinking_on || opens_with_thinking;
    if sendable
        && valid_before
        && well_formed
        && modeled
        && as_provider_sends
        && next.unanswered.is_empty()
    {
        match mend::check_value(&next.body, &forced(dialect)) {
            Ok(r) => {
                let new: Vec<_> = errors(&r.violations)
                    .into_iter()
                    .filter(|(_, p)| appended(p))
                    .collect();
                assert!(
                    new.is_empty(),
                    "{dialect}: a valid request, its response and every result gave invalid new items: {new:?}\nnext: {}",
                    next.body
                );
            }
            Err(e) => panic!("{dialect}: the next request cannot be checked: {e}"),
        }
    }
}
