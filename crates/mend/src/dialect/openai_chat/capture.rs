//! OpenAI chat completions responses and streams (and every compatible API).
//!
//! A response has one message per choice, read with the request message reader; fields
//! that are `null` or `[]` in a response message (`refusal`, `annotations`, `audio`) are
//! not kept, since they mean nothing when the message is sent back. A stream's chunks
//! are folded per choice `index`: `content`, `refusal`, `reasoning_content` and
//! `reasoning` concatenate; `reasoning_details[]` merge by their `index`; `tool_calls[]`
//! merge by their `index` (only the first delta carries `id` and `name`). Chunks with
//! empty `choices` (Azure content filter results, the usage chunk) only add to the
//! reply's fields; a chunk with an `error` is a provider error. The stream is complete at
//! `data: [DONE]`, or when every choice has a `finish_reason` (streams recorded without
//! the terminator).

use crate::canonical::capture::{count_at, string_at, Usage};
use serde_json::{Map, Value};

use super::canonical::read_message;
use crate::canonical::capture::{
    malformed, mark, truncated, without, ByIndex, CaptureError, Event, Reply,
};
use crate::canonical::Message;

/// Drop a response message's fields that hold nothing.
fn drop_empty(m: &mut Message) {
    m.extra.retain(|_, v| match v {
        Value::Null => false,
        Value::Array(a) => !a.is_empty(),
        _ => true,
    });
}

pub(crate) fn read_response(o: &Map<String, Value>) -> Result<Reply, String> {
    let Some(Value::Array(choices)) = o.get("choices") else {
        return Err("no `choices` array".into());
    };
    let id = o.get("id").and_then(Value::as_str);
    let mut messages = Vec::with_capacity(choices.len());
    for c in choices {
        let Some(c) = c.as_object() else {
            return Err("a choice is not an object".into());
        };
        let Some(m) = c.get("message") else {
            return Err("a choice has no `message`".into());
        };
        let mut msg = read_message(m);
        drop_empty(&mut msg);
        mark(&mut msg, id);
        for (k, v) in c {
            if k != "message" {
                msg.meta.insert(k.clone(), v.clone());
            }
        }
        messages.push(msg);
    }
    Ok(Reply {
        messages,
        meta: without(o, &["choices"]),
        unknown: Vec::new(),
    })
}

#[derive(Debug, Default)]
struct Call {
    id: Option<String>,
    ty: Option<String>,
    name: String,
    arguments: String,
    extra: Map<String, Value>,
}

#[derive(Debug, Default)]
struct Choice {
    role: Option<String>,
    content: String,
    refusal: String,
    reasoning_content: String,
    reasoning: String,
    details: Vec<Map<String, Value>>,
    calls: ByIndex<Call>,
    /// Other delta fields (`extra_content`...), last value wins.
    extra: Map<String, Value>,
    /// Choice fields (`finish_reason`, `logprobs`...).
    meta: Map<String, Value>,
    finished: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Stream {
    choices: ByIndex<Choice>,
    meta: Map<String, Value>,
    response_id: Option<String>,
    done: bool,
    unknown: Vec<Value>,
}

impl Stream {
    /// `data: [DONE]`.
    pub(crate) fn done(&mut self) {
        self.done = true;
    }

    pub(crate) fn event(&mut self, ev: Event<'_>) -> Result<(), CaptureError> {
        let offset = ev.offset;
        let Value::Object(o) = ev.data else {
            return Err(malformed(offset, "a chunk that is not a JSON object"));
        };
        if let Some(e) = o.get("error").filter(|e| !e.is_null()) {
            return Err(CaptureError::provider(offset, e));
        }
        match o.get("choices") {
            Some(Value::Array(_)) => {}
            None | Some(Value::Null) if o.contains_key("id") || o.contains_key("usage") => {}
            None | Some(Value::Null) => {
                self.unknown.push(Value::Object(o));
                return Ok(());
            }
            Some(_) => return Err(malformed(offset, "`choices` is not an array")),
        }
        // The chunk is ours: move its values, clone nothing.
        for (k, v) in o {
            match (k.as_str(), v) {
                ("choices", Value::Array(choices)) => {
                    for c in choices {
                        self.choice(c, offset)?;
                    }
                }
                ("choices", _) => {}
                ("id", Value::String(id)) if self.response_id.is_none() && !id.is_empty() => {
                    self.response_id = Some(id.clone());
                    self.meta.insert(k, Value::String(id));
                }
                (_, v) => match (self.meta.get(&k), &v) {
                    (Some(_), Value::Null) => {}
                    // Azure's first chunk has empty `id`, `model` and `object`.
                    (Some(_), Value::String(s)) if s.is_empty() => {}
                    _ => {
                        self.meta.insert(k, v);
                    }
                },
            }
        }
        Ok(())
    }

    fn choice(&mut self, c: Value, offset: usize) -> Result<(), CaptureError> {
        let Value::Object(c) = c else {
            return Err(malformed(offset, "a choice that is not an object"));
        };
        let index = c.get("index").and_then(Value::as_u64).unwrap_or(0);
        let choice = self.choices.get_or_insert_with(index, Choice::default);
        for (k, v) in c {
            match (k.as_str(), v) {
                ("index", _) => {}
                ("delta", Value::Object(d)) => apply_delta(choice, d, offset)?,
                ("delta", Value::Null) => {}
                ("delta", _) => return Err(malformed(offset, "`delta` is not an object")),
                ("finish_reason", f) if !f.is_null() => {
                    choice.finished = true;
                    choice.meta.insert(k, f);
                }
                (_, Value::Null) if choice.meta.contains_key(&k) => {}
                (_, v) => {
                    choice.meta.insert(k, v);
                }
            }
        }
        Ok(())
    }

    /// `[DONE]` seen, or every choice finished.
    pub(crate) fn is_complete(&self) -> bool {
        self.done || (!self.choices.is_empty() && self.choices.iter().all(|(_, c)| c.finished))
    }

    pub(crate) fn finish(self, end: usize) -> Result<Reply, CaptureError> {
        let all_finished = !self.choices.is_empty() && self.choices.iter().all(|(_, c)| c.finished);
        if !self.done && !all_finished {
            return Err(truncated(
                end,
                "the stream ends before `data: [DONE]` and before a `finish_reason`",
            ));
        }
        let id = self.response_id;
        let messages = self
            .choices
            .into_sorted()
            .into_iter()
            .map(|(_, mut c)| {
                let meta = std::mem::take(&mut c.meta);
                let mut msg = read_message(&Value::Object(wire_message(c)));
                mark(&mut msg, id.as_deref());
                msg.meta.extend(meta);
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

fn apply_delta(c: &mut Choice, d: Map<String, Value>, offset: usize) -> Result<(), CaptureError> {
    for (k, v) in d {
        match (k.as_str(), v) {
            (_, Value::Null) => {}
            ("role", Value::String(r)) => c.role = Some(r),
            ("content", Value::String(s)) => push(&mut c.content, s),
            ("refusal", Value::String(s)) => push(&mut c.refusal, s),
            ("reasoning_content", Value::String(s)) => push(&mut c.reasoning_content, s),
            ("reasoning", Value::String(s)) => push(&mut c.reasoning, s),
            ("reasoning_details", Value::Array(list)) => {
                for d in list.iter().filter_map(Value::as_object) {
                    merge_detail(&mut c.details, d);
                }
            }
            ("tool_calls", Value::Array(list)) => {
                for (pos, t) in list.into_iter().enumerate() {
                    let Value::Object(t) = t else {
                        return Err(malformed(offset, "a `tool_calls` entry is not an object"));
                    };
                    let index = t.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
                    let call = c.calls.get_or_insert_with(index, Call::default);
                    for (k, v) in t {
                        match (k.as_str(), v) {
                            ("index", _) | (_, Value::Null) => {}
                            ("id", Value::String(s)) if !s.is_empty() || call.id.is_none() => {
                                call.id = Some(s)
                            }
                            ("id", _) => {}
                            ("type", Value::String(s)) => call.ty = Some(s),
                            ("function", Value::Object(f)) => {
                                if let Some(n) = f.get("name").and_then(Value::as_str) {
                                    if call.name != n {
                                        call.name.push_str(n);
                                    }
                                }
                                if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                                    call.arguments.push_str(a);
                                }
                            }
                            (_, v) => {
                                call.extra.insert(k, v);
                            }
                        }
                    }
                }
            }
            (_, v) => {
                c.extra.insert(k, v);
            }
        }
    }
    Ok(())
}

/// Append a delta, taking the first one as it is.
fn push(acc: &mut String, s: String) {
    if acc.is_empty() {
        *acc = s;
    } else {
        acc.push_str(&s);
    }
}

/// Fold one `reasoning_details` delta into the list: same `index`, same entry.
fn merge_detail(details: &mut Vec<Map<String, Value>>, d: &Map<String, Value>) {
    let index = d.get("index").and_then(Value::as_u64);
    let found = index.and_then(|i| {
        details
            .iter()
            .rposition(|x| x.get("index").and_then(Value::as_u64) == Some(i))
    });
    let Some(p) = found else {
        details.push(d.clone());
        return;
    };
    let entry = &mut details[p];
    for (k, v) in d {
        match (k.as_str(), entry.get_mut(k), v) {
            (_, _, Value::Null) => {}
            ("text" | "summary" | "data", Some(Value::String(a)), Value::String(b)) => {
                a.push_str(b)
            }
            _ => {
                entry.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The message a choice's deltas add up to, as the wire would write it whole.
fn wire_message(c: Choice) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(
        "role".into(),
        Value::String(c.role.unwrap_or_else(|| "assistant".into())),
    );
    let mut put = |k: &str, s: &str| {
        if !s.is_empty() {
            m.insert(k.into(), Value::String(s.to_string()));
        }
    };
    put("content", &c.content);
    put("refusal", &c.refusal);
    put("reasoning_content", &c.reasoning_content);
    put("reasoning", &c.reasoning);
    if !c.details.is_empty() {
        let list = c.details.into_iter().map(Value::Object).collect();
        m.insert("reasoning_details".into(), Value::Array(list));
    }
    if !c.calls.is_empty() {
        let list = c
            .calls
            .into_sorted()
            .into_iter()
            .map(|(_, call)| {
                let mut o = Map::new();
                if let Some(id) = call.id {
                    o.insert("id".into(), Value::String(id));
                }
                o.insert(
                    "type".into(),
                    Value::String(call.ty.unwrap_or_else(|| "function".into())),
                );
                o.insert(
                    "function".into(),
                    serde_json::json!({"name": call.name, "arguments": call.arguments}),
                );
                o.extend(call.extra);
                Value::Object(o)
            })
            .collect();
        m.insert("tool_calls".into(), Value::Array(list));
    }
    m.extend(c.extra);
    m
}

/// Usage of a chat response or stream (`prompt_tokens` counts cached ones already).
pub(crate) fn usage(meta: &Map<String, Value>) -> Usage {
    Usage {
        input_tokens: count_at(meta, "/usage/prompt_tokens"),
        output_tokens: count_at(meta, "/usage/completion_tokens"),
        model: string_at(meta, "model"),
        response_id: string_at(meta, "id"),
    }
}
