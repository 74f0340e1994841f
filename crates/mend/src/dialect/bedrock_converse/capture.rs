//! Bedrock Converse responses and event streams.
//!
//! A response is `{output: {message: {role, content}}, stopReason, usage, metrics}`:
//! its message is already in the request's wire form, and each block is read by the
//! request reader (`canonical.rs`), so a captured message has the parts of the request
//! that sends it back.
//! A stream (`converse-stream`) is AWS event-stream frames (see
//! [`crate::eventstream`]) whose `:event-type` header names the event and whose
//! payload is JSON: `messageStart {role}`, per block an optional `contentBlockStart
//! {contentBlockIndex, start}` (only for `toolUse` and a server `toolResult`),
//! `contentBlockDelta {contentBlockIndex, delta}` (`text`, `toolUse.input` as
//! fragments of a JSON string, `reasoningContent` flat `{text}` / `{signature}` /
//! `{redactedContent}`, `citation`, `toolResult`) and `contentBlockStop`, then
//! `messageStop {stopReason}` and `metadata {usage, metrics}`. Blocks are keyed by
//! `contentBlockIndex`; a finished block is assembled into the block the non-streamed
//! response would hold, then read like one, so both give the same message. A frame
//! whose `:message-type` is `exception` (or `error`) is the provider's error. The
//! padding field `p` every payload carries hides token lengths and is dropped.
//!
//! What is kept for the next request: call ids, reasoning text with its signature,
//! `redactedContent` as encrypted reasoning. A client `toolUse` loses the `"type":
//! "tool_use"` newer models add in responses (clients drop it when they send the turn
//! back); a server tool's `toolUse` (`"type": "server_tool_use"`) and its `toolResult`
//! in the same message, citations and any block this crate does not model are kept
//! verbatim as opaque parts.

use crate::canonical::capture::{count_at, sum_at, Usage};
use serde_json::{Map, Value};

use crate::canonical::capture::{
    malformed, merge, truncated, without, ByIndex, CaptureError, CaptureErrorKind, Reply,
};
use crate::canonical::{rest, Message, Part, Role};
use crate::eventstream::Frame;

/// The padding field of stream payloads.
const PADDING: &str = "p";

/// The `type` newer models give a client `toolUse` in responses.
const CLIENT_TOOL_USE: &str = "tool_use";

pub(crate) fn read_response(o: &Map<String, Value>) -> Result<Reply, String> {
    let Some(output) = o.get("output").and_then(Value::as_object) else {
        return Err("no `output` object".into());
    };
    let Some(m) = output.get("message").and_then(Value::as_object) else {
        return Err("no `output.message` object".into());
    };
    let Some(Value::Array(content)) = m.get("content") else {
        return Err("no `output.message.content` array".into());
    };
    let role = match m.get("role").and_then(Value::as_str) {
        Some("assistant") | None => Role::Assistant,
        Some(other) => Role::from_name(other),
    };
    let mut msg = Message::new(role, content.iter().map(read_block).collect());
    msg.extra = rest(m, &["role", "content"]);
    let mut meta = without(o, &["output"]);
    let output_rest = without(output, &["message"]);
    if !output_rest.is_empty() {
        meta.insert("output".into(), Value::Object(output_rest));
    }
    Ok(Reply {
        messages: vec![msg],
        meta,
        unknown: Vec::new(),
    })
}

/// A response content block as a part: the request reader's part (so a captured
/// message reads back as the request that sends it again), less the response-only
/// `"type": "tool_use"` of a client `toolUse`, which clients drop when they send the
/// turn back.
pub(crate) fn read_block(v: &Value) -> Part {
    let mut part = super::canonical::read_block(v);
    if let Part::ToolCall(c) = &mut part {
        if c.extra.get("type").and_then(Value::as_str) == Some(CLIENT_TOOL_USE) {
            c.extra.shift_remove("type");
        }
    }
    part
}

/// What a block's deltas say it is.
#[derive(Debug, Default, PartialEq)]
enum Kind {
    #[default]
    Unknown,
    Text,
    ToolUse,
    Reasoning,
    ToolResult,
}

#[derive(Debug, Default)]
struct Block {
    /// `contentBlockStart.start`, when there was one.
    start: Option<Map<String, Value>>,
    kind: Kind,
    text: String,
    input: String,
    signature: String,
    redacted: String,
    citations: Vec<Value>,
    tool_result: Vec<Value>,
    /// Deltas of a shape this reader does not know, kept in the block verbatim.
    other: Vec<Value>,
    stopped: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Stream {
    role: Option<String>,
    stopped: bool,
    meta: Map<String, Value>,
    blocks: ByIndex<Block>,
    unknown: Vec<Value>,
}

fn index_of(p: &Value, offset: usize, event: &str) -> Result<u64, CaptureError> {
    p.get("contentBlockIndex")
        .and_then(Value::as_u64)
        .ok_or_else(|| {
            malformed(
                offset,
                format!("`{event}` without a numeric `contentBlockIndex`"),
            )
        })
}

impl Stream {
    pub(crate) fn frame(&mut self, f: Frame) -> Result<(), CaptureError> {
        let at = f.offset;
        let payload: Value = if f.payload.is_empty() {
            Value::Object(Map::new())
        } else {
            serde_json::from_slice(&f.payload).map_err(|e| {
                malformed(
                    at,
                    format!(
                        "the payload of the frame is not JSON: {}",
                        e.to_string().split(" at line ").next().unwrap_or_default()
                    ),
                )
            })?
        };
        match f.header(":message-type") {
            Some("event") | None => {}
            Some(kind @ ("exception" | "error")) => {
                let ty = f
                    .header(":exception-type")
                    .or(f.header(":error-code"))
                    .unwrap_or(kind);
                let message = payload
                    .get("message")
                    .or(payload.get("Message"))
                    .and_then(Value::as_str)
                    .or(f.header(":error-message"))
                    .unwrap_or("(no message)");
                return Err(CaptureError {
                    kind: CaptureErrorKind::Provider,
                    offset: at,
                    reason: format!("the provider reported an error: {ty}: {message}"),
                    provider_error: Some(payload),
                });
            }
            Some(other) => {
                return Err(malformed(
                    at,
                    format!(
                        "a frame whose `:message-type` is `{other}` (expected event or exception)"
                    ),
                ))
            }
        }
        let Some(event) = f.header(":event-type") else {
            return Err(malformed(
                at,
                "an event frame without an `:event-type` header",
            ));
        };
        let Value::Object(mut p) = payload else {
            return Err(malformed(
                at,
                format!("the `{event}` payload is not a JSON object"),
            ));
        };
        p.remove(PADDING);
        let pv = Value::Object(p);
        let p = pv.as_object().map(|o| o as &Map<String, Value>);
        let Some(p) = p else {
            return Ok(());
        };
        match event {
            "messageStart" => {
                if self.role.is_some() {
                    return Err(malformed(at, "a second `messageStart` in one stream"));
                }
                let role = p.get("role").and_then(Value::as_str).unwrap_or("assistant");
                self.role = Some(role.to_string());
                merge(&mut self.meta, &without(p, &["role"]));
            }
            "contentBlockStart" => {
                let index = index_of(&pv, at, event)?;
                let Some(start) = p.get("start").and_then(Value::as_object) else {
                    return Err(malformed(
                        at,
                        "`contentBlockStart` without a `start` object",
                    ));
                };
                let kind = if start.contains_key("toolUse") {
                    Kind::ToolUse
                } else if start.contains_key("toolResult") {
                    Kind::ToolResult
                } else {
                    Kind::Unknown
                };
                self.blocks.insert(
                    index,
                    Block {
                        start: Some(start.clone()),
                        kind,
                        ..Block::default()
                    },
                );
            }
            "contentBlockDelta" => {
                let index = index_of(&pv, at, event)?;
                let Some(delta) = p.get("delta").and_then(Value::as_object) else {
                    return Err(malformed(
                        at,
                        "`contentBlockDelta` without a `delta` object",
                    ));
                };
                let b = self.blocks.get_or_insert_with(index, Block::default);
                if b.stopped {
                    return Err(malformed(
                        at,
                        format!("a delta for content block {index}, which already stopped"),
                    ));
                }
                delta_into(b, delta, at)?;
            }
            "contentBlockStop" => {
                let index = index_of(&pv, at, event)?;
                // A block with no start and no delta (an empty text) still stops.
                self.blocks
                    .get_or_insert_with(index, Block::default)
                    .stopped = true;
            }
            "messageStop" => {
                self.stopped = true;
                merge(&mut self.meta, p);
            }
            "metadata" => merge(&mut self.meta, p),
            _ => self.unknown.push(pv.clone()),
        }
        Ok(())
    }

    /// `messageStop` seen (the `metadata` event that may follow adds only usage).
    pub(crate) fn is_complete(&self) -> bool {
        self.role.is_some() && self.stopped
    }

    pub(crate) fn finish(self, end: usize) -> Result<Reply, CaptureError> {
        let Some(role) = self.role else {
            return Err(malformed(0, "the stream has no `messageStart` event"));
        };
        if !self.stopped {
            let open: Vec<String> = self
                .blocks
                .iter()
                .filter(|(_, b)| !b.stopped)
                .map(|(i, _)| i.to_string())
                .collect();
            let mut reason = "the stream ends before `messageStop`".to_string();
            if !open.is_empty() {
                reason.push_str(&format!("; content block {} still open", open.join(", ")));
            }
            return Err(truncated(end, reason));
        }
        let mut msg = Message::new(Role::from_name(&role), Vec::new());
        for (_, b) in self.blocks.into_sorted() {
            msg.parts.push(read_block(&finish_block(b)));
        }
        Ok(Reply {
            messages: vec![msg],
            meta: self.meta,
            unknown: self.unknown,
        })
    }
}

/// Add one delta to its block.
fn delta_into(b: &mut Block, delta: &Map<String, Value>, at: usize) -> Result<(), CaptureError> {
    let clash = |b: &Block, k: Kind| -> Result<(), CaptureError> {
        if b.kind != Kind::Unknown && b.kind != k {
            return Err(malformed(
                at,
                format!("a {k:?} delta in a {:?} content block", b.kind),
            ));
        }
        Ok(())
    };
    for (k, v) in delta {
        match (k.as_str(), v) {
            ("text", Value::String(t)) => {
                clash(b, Kind::Text)?;
                b.kind = Kind::Text;
                b.text.push_str(t);
            }
            ("toolUse", Value::Object(u)) => {
                clash(b, Kind::ToolUse)?;
                b.kind = Kind::ToolUse;
                if let Some(Value::String(s)) = u.get("input") {
                    b.input.push_str(s);
                }
            }
            ("reasoningContent", Value::Object(r)) => {
                clash(b, Kind::Reasoning)?;
                b.kind = Kind::Reasoning;
                for (rk, rv) in r {
                    match (rk.as_str(), rv.as_str()) {
                        ("text", Some(s)) => b.text.push_str(s),
                        ("signature", Some(s)) => b.signature.push_str(s),
                        ("redactedContent", Some(s)) => b.redacted.push_str(s),
                        _ => b.other.push(Value::Object(delta.clone())),
                    }
                }
            }
            ("citation", c) => b.citations.push(c.clone()),
            ("toolResult", Value::Array(items)) => {
                clash(b, Kind::ToolResult)?;
                b.kind = Kind::ToolResult;
                b.tool_result.extend(items.iter().cloned());
            }
            _ => b.other.push(Value::Object(delta.clone())),
        }
    }
    Ok(())
}

/// The block a finished stream block stands for, as a non-streamed response holds it.
fn finish_block(b: Block) -> Value {
    let obj = |k: &str, v: Value| {
        let mut m = Map::new();
        m.insert(k.to_string(), v);
        Value::Object(m)
    };
    if !b.other.is_empty() {
        // Deltas this reader does not know: keep what came, as it came.
        let mut m = Map::new();
        if let Some(s) = b.start {
            m.insert("start".into(), Value::Object(s));
        }
        m.insert("deltas".into(), Value::Array(b.other));
        return obj("contentBlockStream", Value::Object(m));
    }
    match b.kind {
        Kind::Text | Kind::Unknown if !b.citations.is_empty() => obj(
            "citationsContent",
            serde_json::json!({"content": [{"text": b.text}], "citations": b.citations}),
        ),
        Kind::Text => obj("text", Value::String(b.text)),
        Kind::Unknown => match b.start {
            Some(s) => Value::Object(s),
            // A block that stopped without a delta: an empty text.
            None => obj("text", Value::String(String::new())),
        },
        Kind::ToolUse => {
            let mut u = b
                .start
                .and_then(|mut s| s.remove("toolUse"))
                .and_then(|u| match u {
                    Value::Object(o) => Some(o),
                    _ => None,
                })
                .unwrap_or_default();
            // An empty input (`""` deltas, or none) is `{}`; fragments that do not make
            // JSON are kept as the string they are.
            let input = if b.input.trim().is_empty() {
                Value::Object(Map::new())
            } else {
                serde_json::from_str(&b.input).unwrap_or(Value::String(b.input))
            };
            u.insert("input".into(), input);
            obj("toolUse", Value::Object(u))
        }
        Kind::Reasoning if !b.redacted.is_empty() => obj(
            "reasoningContent",
            obj("redactedContent", Value::String(b.redacted)),
        ),
        Kind::Reasoning => {
            let mut r = Map::new();
            r.insert("text".into(), Value::String(b.text));
            if !b.signature.is_empty() {
                r.insert("signature".into(), Value::String(b.signature));
            }
            obj("reasoningContent", obj("reasoningText", Value::Object(r)))
        }
        Kind::ToolResult => {
            let mut r = b
                .start
                .and_then(|mut s| s.remove("toolResult"))
                .and_then(|u| match u {
                    Value::Object(o) => Some(o),
                    _ => None,
                })
                .unwrap_or_default();
            r.insert("content".into(), Value::Array(b.tool_result));
            obj("toolResult", Value::Object(r))
        }
    }
}

/// Usage of a Converse response or stream (its `metadata` event): `inputTokens` leaves
/// out the cache's reads and writes, which are added. A Converse answer names no model
/// (it is in the request's path) and has no id.
pub(crate) fn usage(meta: &Map<String, Value>) -> Usage {
    Usage {
        input_tokens: sum_at(
            meta,
            &[
                "/usage/inputTokens",
                "/usage/cacheReadInputTokens",
                "/usage/cacheWriteInputTokens",
            ],
        ),
        output_tokens: count_at(meta, "/usage/outputTokens"),
        model: None,
        response_id: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::Conversation;
    use crate::Dialect;
    use serde_json::json;

    /// A response's blocks read as the request that sends the message back reads them:
    /// the one difference is the response-only `type` of a client `toolUse`.
    #[test]
    fn a_captured_message_has_the_parts_of_the_request_that_sends_it_back() {
        let content = json!([
            {"reasoningContent": {"reasoningText": {"text": "hm", "signature": "EqQB"}}},
            {"reasoningContent": {"reasoningText": {"text": "t", "signature": 1}}},
            {"reasoningContent": {"redactedContent": "RXU4"}},
            {"text": "look"},
            {"image": {"format": "png", "source": {"bytes": "iVBO"}}},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "f", "input": {"x": 1}, "type": "tool_use"}},
            {"toolUse": {"toolUseId": "tooluse_2", "name": "g", "input": {}}},
            {"toolUse": {"toolUseId": "x", "name": "n", "input": {}, "type": "server_tool_use"}},
            {"toolResult": {"toolUseId": "x", "content": [], "type": "nova_code_interpreter_result"}},
            {"citationsContent": {"content": [{"text": "a"}], "citations": []}}]);
        let response = json!({"output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use"});
        let Value::Object(o) = response else {
            unreachable!("an object literal")
        };
        let captured = read_response(&o).unwrap().messages.remove(0);
        let mut sent = content.clone();
        sent[5]["toolUse"]
            .as_object_mut()
            .map(|u| u.shift_remove("type"));
        let read = Conversation::from_request(
            Dialect::BedrockConverse,
            &json!({"messages": [{"role": "assistant", "content": sent}]}),
        )
        .unwrap()
        .messages
        .remove(0);
        assert_eq!(captured.parts, read.parts);
        let kinds: Vec<&str> = captured.parts.iter().map(Part::kind).collect();
        assert_eq!(
            kinds,
            [
                "reasoning",
                "opaque",
                "reasoning",
                "text",
                "image",
                "tool_call",
                "tool_call",
                "opaque",
                "opaque",
                "opaque"
            ]
        );
        // And the message goes back as the request form: the `type` is gone.
        let back = Conversation {
            dialect: Some(Dialect::BedrockConverse),
            messages: vec![captured],
            ..Conversation::default()
        }
        .to_request(Dialect::BedrockConverse)
        .unwrap();
        assert_eq!(back["messages"][0]["content"], sent);
    }
}
