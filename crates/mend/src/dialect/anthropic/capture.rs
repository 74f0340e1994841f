//! Anthropic Messages responses and streams.
//!
//! A stream is `message_start`, then per content block `content_block_start` (the block,
//! whole for `redacted_thinking` and server tool results), deltas (`text_delta`,
//! `input_json_delta`, `thinking_delta`, `signature_delta`, `citations_delta`) and
//! `content_block_stop`, then `message_delta` (stop reason, usage) and `message_stop`;
//! `ping` may come anywhere and `error` ends it. Blocks are keyed by their `index`. A
//! finished block is read with the request reader, so a streamed message equals the
//! non-streamed one; a tool call keeps the raw `partial_json` as its arguments.

use crate::canonical::capture::{count_at, string_at, sum_at, Usage};
use serde_json::{Map, Value};

use super::canonical::{read_block, read_message};
use crate::canonical::capture::{
    event_type, malformed, mark, merge, truncated, without, ByIndex, CaptureError, Event, Reply,
};
use crate::canonical::{Message, Part, Role};

pub(crate) fn read_response(o: &Map<String, Value>) -> Result<Reply, String> {
    if o.get("type").and_then(Value::as_str) != Some("message") {
        return Err("no `\"type\": \"message\"`".into());
    }
    let Some(Value::Array(content)) = o.get("content") else {
        return Err("no `content` array".into());
    };
    let mut msg = match o.get("role").and_then(Value::as_str) {
        Some("assistant") | None => Message::new(Role::Assistant, Vec::new()),
        Some(_) => read_message(&Value::Object(without(o, &["id", "type", "model"]))),
    };
    if msg.parts.is_empty() {
        msg.parts = content.iter().map(read_block).collect();
    }
    mark(&mut msg, o.get("id").and_then(Value::as_str));
    Ok(Reply {
        messages: vec![msg],
        meta: without(o, &["content"]),
        unknown: Vec::new(),
    })
}

#[derive(Debug)]
struct Block {
    start: Map<String, Value>,
    /// `text_delta` / `thinking_delta` text.
    text: String,
    signature: String,
    json: String,
    citations: Vec<Value>,
    stopped: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Stream {
    started: bool,
    stopped: bool,
    meta: Map<String, Value>,
    response_id: Option<String>,
    blocks: ByIndex<Block>,
    /// Messages of earlier responses in the same stream (recordings that concatenate
    /// the steps of a tool loop).
    earlier: Vec<Message>,
    unknown: Vec<Value>,
}

fn index_of(v: &Value, offset: usize) -> Result<u64, CaptureError> {
    v.get("index")
        .and_then(Value::as_u64)
        .ok_or_else(|| malformed(offset, "a content block event without a numeric `index`"))
}

impl Stream {
    pub(crate) fn event(&mut self, ev: Event<'_>) -> Result<(), CaptureError> {
        let v = &ev.data;
        let Some(ty) = event_type(v).or(ev.name) else {
            self.unknown.push(ev.data);
            return Ok(());
        };
        match ty {
            "message_start" => {
                let Some(m) = v.get("message").and_then(Value::as_object) else {
                    return Err(malformed(ev.offset, "`message_start` without a `message`"));
                };
                if self.stopped {
                    let done = self.take_message();
                    self.earlier.push(done);
                }
                self.started = true;
                self.response_id = m.get("id").and_then(Value::as_str).map(str::to_string);
                if let Some(Value::Array(content)) = m.get("content") {
                    for (i, b) in content.iter().enumerate() {
                        if let Some(b) = b.as_object() {
                            self.blocks.insert(i as u64, block(b.clone(), true));
                        }
                    }
                }
                merge(&mut self.meta, &without(m, &["content"]));
            }
            "content_block_start" => {
                let index = index_of(v, ev.offset)?;
                let Some(b) = v.get("content_block").and_then(Value::as_object) else {
                    return Err(malformed(
                        ev.offset,
                        "`content_block_start` without a `content_block` object",
                    ));
                };
                self.blocks.insert(index, block(b.clone(), false));
            }
            "content_block_delta" => {
                let index = index_of(v, ev.offset)?;
                let Some(b) = self.blocks.get_mut(index) else {
                    return Err(malformed(
                        ev.offset,
                        format!("a delta for content block {index}, which never started"),
                    ));
                };
                let Some(delta) = v.get("delta") else {
                    return Err(malformed(
                        ev.offset,
                        "`content_block_delta` without a `delta`",
                    ));
                };
                let s = |k: &str| delta.get(k).and_then(Value::as_str);
                match (event_type(delta), delta) {
                    (Some("text_delta"), _) if s("text").is_some() => {
                        b.text.push_str(s("text").unwrap_or_default())
                    }
                    (Some("thinking_delta"), _) if s("thinking").is_some() => {
                        b.text.push_str(s("thinking").unwrap_or_default())
                    }
                    (Some("signature_delta"), _) if s("signature").is_some() => {
                        b.signature.push_str(s("signature").unwrap_or_default())
                    }
                    (Some("input_json_delta"), _) if s("partial_json").is_some() => {
                        b.json.push_str(s("partial_json").unwrap_or_default())
                    }
                    (Some("citations_delta"), _) if delta.get("citation").is_some() => b
                        .citations
                        .push(delta.get("citation").cloned().unwrap_or_default()),
                    _ => self.unknown.push(ev.data),
                }
            }
            "content_block_stop" => {
                let index = index_of(v, ev.offset)?;
                match self.blocks.get_mut(index) {
                    Some(b) => b.stopped = true,
                    None => {
                        return Err(malformed(
                            ev.offset,
                            format!("`content_block_stop` for block {index}, which never started"),
                        ))
                    }
                }
            }
            "message_delta" => {
                if let Some(Value::Object(d)) = v.get("delta") {
                    merge(&mut self.meta, d);
                }
                if let Some(o) = v.as_object() {
                    merge(&mut self.meta, &without(o, &["type", "delta"]));
                }
            }
            "message_stop" => self.stopped = true,
            "ping" => {}
            "error" => {
                return Err(CaptureError::provider(
                    ev.offset,
                    v.get("error").unwrap_or(v),
                ))
            }
            _ => self.unknown.push(ev.data),
        }
        Ok(())
    }

    /// `message_stop` seen.
    pub(crate) fn is_complete(&self) -> bool {
        self.started && self.stopped
    }

    pub(crate) fn finish(mut self, end: usize) -> Result<Reply, CaptureError> {
        if !self.started {
            return Err(malformed(0, "the stream has no `message_start` event"));
        }
        if !self.stopped {
            let open: Vec<String> = self
                .blocks
                .iter()
                .filter(|(_, b)| !b.stopped)
                .map(|(i, b)| {
                    format!(
                        "{i} ({})",
                        b.start.get("type").and_then(Value::as_str).unwrap_or("?")
                    )
                })
                .collect();
            let mut reason = "the stream ends before `message_stop`".to_string();
            if !open.is_empty() {
                reason.push_str(&format!("; content block {} still open", open.join(", ")));
            }
            return Err(truncated(end, reason));
        }
        let mut messages = std::mem::take(&mut self.earlier);
        messages.push(self.take_message());
        Ok(Reply {
            messages,
            meta: self.meta,
            unknown: self.unknown,
        })
    }

    /// The message of the current (stopped) response; the stream is ready for another.
    fn take_message(&mut self) -> Message {
        let mut msg = Message::new(Role::Assistant, Vec::new());
        for (_, b) in std::mem::take(&mut self.blocks).into_sorted() {
            msg.parts.push(finish_block(b));
        }
        mark(&mut msg, self.response_id.as_deref());
        self.stopped = false;
        msg
    }
}

fn block(start: Map<String, Value>, stopped: bool) -> Block {
    Block {
        start,
        text: String::new(),
        signature: String::new(),
        json: String::new(),
        citations: Vec::new(),
        stopped,
    }
}

/// Append streamed text to the block's field of that name.
fn append(b: &mut Map<String, Value>, key: &str, more: &str) {
    match b.get_mut(key) {
        Some(Value::String(s)) => s.push_str(more),
        _ => {
            b.insert(key.into(), Value::String(more.to_string()));
        }
    }
}

fn finish_block(b: Block) -> Part {
    let mut wire = b.start;
    let ty = wire
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match ty.as_str() {
        "text" if !b.text.is_empty() || !wire.contains_key("text") => {
            append(&mut wire, "text", &b.text)
        }
        "thinking" if !b.text.is_empty() || !wire.contains_key("thinking") => {
            append(&mut wire, "thinking", &b.text)
        }
        _ => {}
    }
    if !b.signature.is_empty() {
        append(&mut wire, "signature", &b.signature);
    }
    if !b.citations.is_empty() {
        match wire.get_mut("citations") {
            Some(Value::Array(c)) => c.extend(b.citations),
            _ => {
                wire.insert("citations".into(), Value::Array(b.citations));
            }
        }
    }
    let raw = !b.json.trim().is_empty();
    if raw {
        if let Ok(input) = serde_json::from_str::<Value>(&b.json) {
            wire.insert("input".into(), input);
        }
    }
    let mut part = read_block(&Value::Object(wire));
    if let (Part::ToolCall(c), true) = (&mut part, raw) {
        c.arguments = b.json;
    }
    part
}

/// Usage of a Messages response or stream: `input_tokens` leaves out the tokens read
/// from and written to the cache, which are added.
pub(crate) fn usage(meta: &Map<String, Value>) -> Usage {
    Usage {
        input_tokens: sum_at(
            meta,
            &[
                "/usage/input_tokens",
                "/usage/cache_creation_input_tokens",
                "/usage/cache_read_input_tokens",
            ],
        ),
        output_tokens: count_at(meta, "/usage/output_tokens"),
        model: string_at(meta, "model"),
        response_id: string_at(meta, "id"),
    }
}
