//! Gemini `generateContent` responses and `streamGenerateContent` streams.
//!
//! A response has one message per candidate, read with the request content reader. A
//! stream (data-only SSE, often with CRLF line ends) is a sequence of whole responses,
//! each with the next parts of each candidate (keyed by `index`): consecutive text parts
//! of one kind (thought or not) join into one part, and the `thoughtSignature` that
//! arrives on a later, often empty, text part joins it too; an empty text part with
//! nothing to join is dropped. A function call streamed with `willContinue` and
//! `partialArgs` is assembled into one call with its `args`. The stream is complete when
//! a candidate has a `finishReason`. A body that is a JSON array (`streamGenerateContent`
//! without `alt=sse`) is read the same way.

use crate::canonical::capture::{count_at, string_at, sum_at, Usage};
use serde_json::{Map, Value};

use super::canonical::read_content;
use crate::canonical::capture::{
    malformed, mark, merge_owned, truncated, without, ByIndex, CaptureError, Event, Reply,
};
use crate::canonical::{Message, Role};

pub(crate) fn read_response(o: &Map<String, Value>) -> Result<Reply, String> {
    if let Some(reason) = blocked(o) {
        return Err(reason);
    }
    let Some(Value::Array(cands)) = o.get("candidates") else {
        return Err("no `candidates` array".into());
    };
    let id = o.get("responseId").and_then(Value::as_str);
    let mut messages = Vec::with_capacity(cands.len());
    for c in cands {
        let Some(c) = c.as_object() else {
            return Err("a candidate is not an object".into());
        };
        let mut msg = match c.get("content") {
            Some(content) => read_content(content),
            None => Message::new(Role::Assistant, Vec::new()),
        };
        mark(&mut msg, id);
        msg.meta.extend(without(c, &["content"]));
        messages.push(msg);
    }
    Ok(Reply {
        messages,
        meta: without(o, &["candidates"]),
        unknown: Vec::new(),
    })
}

/// A prompt the provider refused to answer at all.
fn blocked(o: &Map<String, Value>) -> Option<String> {
    let reason = o.get("promptFeedback")?.get("blockReason")?.as_str()?;
    Some(format!("the prompt was blocked ({reason})"))
}

/// A JSON array of stream chunks.
pub(crate) fn read_chunks(chunks: &[Value]) -> Result<Reply, CaptureError> {
    let mut s = Stream::default();
    for c in chunks {
        s.event(Event {
            name: None,
            data: c.clone(),
            offset: 0,
        })?;
    }
    s.finish(0)
}

/// A function call being streamed with `partialArgs`.
#[derive(Debug)]
struct PartialCall {
    call: Map<String, Value>,
    args: Value,
    signature: Option<(String, Value)>,
}

#[derive(Debug, Default)]
struct Candidate {
    role: Option<Value>,
    parts: Vec<Value>,
    pending: Option<PartialCall>,
    content_extra: Map<String, Value>,
    meta: Map<String, Value>,
    finished: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Stream {
    candidates: ByIndex<Candidate>,
    meta: Map<String, Value>,
    response_id: Option<String>,
    unknown: Vec<Value>,
}

impl Stream {
    pub(crate) fn event(&mut self, ev: Event<'_>) -> Result<(), CaptureError> {
        let offset = ev.offset;
        let Value::Object(o) = ev.data else {
            return Err(malformed(offset, "a chunk that is not a JSON object"));
        };
        if let Some(e) = o.get("error").filter(|e| !e.is_null()) {
            return Err(CaptureError::provider(offset, e));
        }
        if let Some(reason) = blocked(&o) {
            let mut e = CaptureError::provider(offset, &Value::Object(o));
            e.reason = format!("the provider refused: {reason}");
            return Err(e);
        }
        match o.get("candidates") {
            Some(Value::Array(_)) => {}
            Some(_) => return Err(malformed(offset, "`candidates` is not an array")),
            None if o.contains_key("usageMetadata") || o.contains_key("responseId") => {}
            None => {
                self.unknown.push(Value::Object(o));
                return Ok(());
            }
        }
        // The chunk is ours: move its values, clone nothing.
        for (k, v) in o {
            match (k.as_str(), v) {
                ("candidates", Value::Array(cands)) => {
                    for (pos, c) in cands.into_iter().enumerate() {
                        self.candidate(pos, c, offset)?;
                    }
                }
                ("responseId", Value::String(id)) if self.response_id.is_none() => {
                    self.response_id = Some(id.clone());
                    self.meta.insert(k, Value::String(id));
                }
                (_, v) => merge_owned(&mut self.meta, k, v),
            }
        }
        Ok(())
    }

    fn candidate(&mut self, pos: usize, c: Value, offset: usize) -> Result<(), CaptureError> {
        let Value::Object(c) = c else {
            return Err(malformed(offset, "a candidate that is not an object"));
        };
        let index = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
        let cand = self
            .candidates
            .get_or_insert_with(index, Candidate::default);
        for (k, v) in c {
            match (k.as_str(), v) {
                ("index", _) => {}
                ("content", Value::Object(content)) => {
                    for (ck, cv) in content {
                        match (ck.as_str(), cv) {
                            ("role", r) => cand.role = Some(r),
                            ("parts", Value::Array(parts)) => {
                                for p in parts {
                                    add_part(cand, p, offset)?;
                                }
                            }
                            (_, cv) => {
                                cand.content_extra.insert(ck, cv);
                            }
                        }
                    }
                }
                ("finishReason", f) if !f.is_null() => {
                    cand.finished = true;
                    cand.meta.insert(k, f);
                }
                (_, v) => {
                    cand.meta.insert(k, v);
                }
            }
        }
        Ok(())
    }

    /// Every candidate seen has its `finishReason`, none inside a `willContinue` call.
    pub(crate) fn is_complete(&self) -> bool {
        !self.candidates.is_empty()
            && self
                .candidates
                .iter()
                .all(|(_, c)| c.finished && c.pending.is_none())
    }

    pub(crate) fn finish(self, end: usize) -> Result<Reply, CaptureError> {
        if !self.candidates.iter().any(|(_, c)| c.finished) {
            return Err(truncated(
                end,
                "the stream ends before a candidate's `finishReason`",
            ));
        }
        if let Some((i, _)) = self.candidates.iter().find(|(_, c)| c.pending.is_some()) {
            return Err(truncated(
                end,
                format!("candidate {i} ends inside a function call streamed with `willContinue`"),
            ));
        }
        let id = self.response_id;
        let messages = self
            .candidates
            .into_sorted()
            .into_iter()
            .map(|(_, c)| {
                let mut content = Map::new();
                content.insert(
                    "role".into(),
                    c.role.unwrap_or_else(|| Value::String("model".into())),
                );
                content.insert("parts".into(), Value::Array(c.parts));
                content.extend(c.content_extra);
                let mut msg = read_content(&Value::Object(content));
                mark(&mut msg, id.as_deref());
                msg.meta.extend(c.meta);
                msg
            })
            .collect();
        Ok(Reply {
            messages,
            meta: self.meta,
            unknown: self.unknown,
        })
    }
}

const SIGNATURE_KEYS: [&str; 2] = ["thoughtSignature", "thought_signature"];

fn signature_of(p: &Map<String, Value>) -> Option<(&String, &Value)> {
    p.iter().find(|(k, _)| SIGNATURE_KEYS.contains(&k.as_str()))
}

/// A plain text part (`text`, maybe `thought`, maybe a signature, nothing else).
fn is_text_part(p: &Map<String, Value>) -> bool {
    p.get("text").is_some_and(Value::is_string)
        && p.keys()
            .all(|k| k == "text" || k == "thought" || SIGNATURE_KEYS.contains(&k.as_str()))
}

fn is_thought(p: &Map<String, Value>) -> bool {
    p.get("thought") == Some(&Value::Bool(true))
}

fn add_part(cand: &mut Candidate, p: Value, offset: usize) -> Result<(), CaptureError> {
    let Value::Object(mut po) = p else {
        cand.parts.push(p);
        return Ok(());
    };
    if po.contains_key("functionCall") || po.contains_key("function_call") {
        return add_call(cand, po, offset);
    }
    if is_text_part(&po) {
        let text = match po.get_mut("text") {
            Some(Value::String(t)) => std::mem::take(t),
            _ => String::new(),
        };
        let sig = signature_of(&po).map(|(k, v)| (k.clone(), v.clone()));
        if let Some(Value::Object(last)) = cand.parts.last_mut() {
            let joins = is_text_part(last)
                && is_thought(last) == is_thought(&po)
                && (sig.is_none() || signature_of(last).is_none());
            if joins {
                if let Some(Value::String(t)) = last.get_mut("text") {
                    t.push_str(&text);
                }
                if let Some((k, v)) = sig {
                    last.insert(k, v);
                }
                return Ok(());
            }
        }
        if text.is_empty() && sig.is_none() {
            return Ok(());
        }
        po.insert("text".into(), Value::String(text));
    }
    cand.parts.push(Value::Object(po));
    Ok(())
}

fn add_call(
    cand: &mut Candidate,
    part: Map<String, Value>,
    offset: usize,
) -> Result<(), CaptureError> {
    let empty = Map::new();
    let fc = part
        .get("functionCall")
        .or_else(|| part.get("function_call"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let continues = fc.get("willContinue") == Some(&Value::Bool(true));
    let partial = fc.get("partialArgs").and_then(Value::as_array);
    match cand.pending.as_mut() {
        None if continues && partial.is_none() => {
            // The start of a streamed call: its name (and id), args to follow.
            let call = without(fc, &["willContinue", "args"]);
            cand.pending = Some(PartialCall {
                call,
                args: fc
                    .get("args")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
                signature: signature_of(&part).map(|(k, v)| (k.clone(), v.clone())),
            });
        }
        None if fc.is_empty() || partial.is_some() => {
            return Err(malformed(
                offset,
                "a streamed function call piece without its start (`name` with `willContinue`)",
            ))
        }
        // A whole call: kept as it came.
        None => cand.parts.push(Value::Object(part)),
        Some(pc) => {
            let starts_another = fc.contains_key("name") && partial.is_none();
            if !starts_another {
                for a in partial.into_iter().flatten() {
                    apply_partial(&mut pc.args, a, offset)?;
                }
                if let Some((k, v)) = signature_of(&part) {
                    pc.signature.get_or_insert_with(|| (k.clone(), v.clone()));
                }
            }
            if fc.is_empty() || (!continues && partial.is_none()) || starts_another {
                // The end marker (`functionCall: {}`), or the next call already.
                if let Some(pc) = cand.pending.take() {
                    let mut call = pc.call;
                    call.insert("args".into(), pc.args);
                    let mut out = Map::new();
                    out.insert("functionCall".into(), Value::Object(call));
                    if let Some((k, v)) = pc.signature {
                        out.insert(k, v);
                    }
                    cand.parts.push(Value::Object(out));
                }
                if starts_another {
                    return add_call(cand, part, offset);
                }
            }
        }
    }
    Ok(())
}

/// Apply one `partialArgs` entry (`jsonPath` and a typed value) to the args object.
fn apply_partial(args: &mut Value, a: &Value, offset: usize) -> Result<(), CaptureError> {
    let Some(path) = a.get("jsonPath").and_then(Value::as_str) else {
        return Err(malformed(
            offset,
            "a `partialArgs` entry without a `jsonPath`",
        ));
    };
    let Some(segments) = parse_path(path) else {
        return Err(malformed(
            offset,
            format!("an unreadable `jsonPath` {path:?}"),
        ));
    };
    let mut at = args;
    for seg in &segments {
        at = match seg {
            Seg::Key(k) => {
                if !at.is_object() {
                    *at = Value::Object(Map::new());
                }
                let Value::Object(o) = at else {
                    return Err(malformed(
                        offset,
                        format!("`jsonPath` {path:?} does not fit the arguments"),
                    ));
                };
                o.entry(k.clone()).or_insert(Value::Null)
            }
            Seg::Index(i) => {
                if !at.is_array() {
                    *at = Value::Array(Vec::new());
                }
                let Value::Array(list) = at else {
                    return Err(malformed(
                        offset,
                        format!("`jsonPath` {path:?} does not fit the arguments"),
                    ));
                };
                if *i > list.len() + 1024 {
                    return Err(malformed(
                        offset,
                        format!("`jsonPath` index {i} is far past the end"),
                    ));
                }
                if list.len() <= *i {
                    list.resize(*i + 1, Value::Null);
                }
                &mut list[*i]
            }
        };
    }
    if let Some(s) = a.get("stringValue").and_then(Value::as_str) {
        match at {
            Value::String(t) => t.push_str(s),
            _ => *at = Value::String(s.to_string()),
        }
    } else if let Some(v) = a.get("numberValue").or_else(|| a.get("boolValue")) {
        *at = v.clone();
    } else if a.get("nullValue").is_some() {
        *at = Value::Null;
    } else if let Some(v) = a.get("structValue").or_else(|| a.get("listValue")) {
        *at = v.clone();
    }
    Ok(())
}

enum Seg {
    Key(String),
    Index(usize),
}

/// `$.a.b[0]['c d']` into segments.
fn parse_path(path: &str) -> Option<Vec<Seg>> {
    let mut rest = path.strip_prefix('$')?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            out.push(Seg::Key(r[..end].to_string()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            out.push(Seg::Key(r[..end].to_string()));
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            out.push(Seg::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(out)
}

/// Usage of a Gemini response or stream: `promptTokenCount` counts cached content
/// already; thoughts are counted apart from the candidates and added to the output.
pub(crate) fn usage(meta: &Map<String, Value>) -> Usage {
    Usage {
        input_tokens: count_at(meta, "/usageMetadata/promptTokenCount"),
        output_tokens: sum_at(
            meta,
            &[
                "/usageMetadata/candidatesTokenCount",
                "/usageMetadata/thoughtsTokenCount",
            ],
        ),
        model: string_at(meta, "modelVersion"),
        response_id: string_at(meta, "responseId"),
    }
}
