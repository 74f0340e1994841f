//! OpenAI Responses responses and streams.
//!
//! A response's `output` items are read with the request item reader, one message each.
//! A stream is keyed by `output_index`, never by item id: some gateways give one item a
//! new id on every event (`vercel-ai--github-copilot-id-rotation`). An item's final form
//! is its `response.output_item.done`; failing that, the item in `response.completed`'s
//! output; failing that (a `response.incomplete` stream), the added item with the deltas
//! applied. `error` and `response.failed` (which arrive inside HTTP 200 streams) are
//! provider errors; a stream without `response.completed` / `response.incomplete` is
//! truncated.

use crate::canonical::capture::{count_at, string_at, Usage};
use serde_json::{Map, Value};

use super::canonical::read_item;
use crate::canonical::capture::{
    event_type, malformed, mark, merge, truncated, without, ByIndex, CaptureError, Event, Reply,
};
use crate::canonical::Message;

pub(crate) fn read_response(o: &Map<String, Value>) -> Result<Reply, String> {
    let Some(Value::Array(output)) = o.get("output") else {
        return Err("no `output` array".into());
    };
    let id = o.get("id").and_then(Value::as_str);
    let messages = output
        .iter()
        .map(|item| {
            let mut m = read_item(item);
            mark(&mut m, id);
            m
        })
        .collect();
    Ok(Reply {
        messages,
        meta: without(o, &["output"]),
        unknown: Vec::new(),
    })
}

#[derive(Debug, Default)]
struct Item {
    /// From `output_item.added`, replaced by `output_item.done`.
    item: Map<String, Value>,
    done: bool,
    /// Content parts by `content_index`: their skeleton and streamed text.
    content: ByIndex<(Option<Value>, String)>,
    /// Summary texts by `summary_index`.
    summary: ByIndex<String>,
    /// Reasoning texts by `content_index`.
    reasoning: ByIndex<String>,
    arguments: String,
}

#[derive(Debug, Default)]
pub(crate) struct Stream {
    items: ByIndex<Item>,
    meta: Map<String, Value>,
    response_id: Option<String>,
    /// `response.completed` / `response.incomplete` seen.
    ended: bool,
    completed_output: Vec<Value>,
    /// Messages of earlier responses in the same stream (recordings that concatenate
    /// the steps of a tool loop).
    earlier: Vec<Message>,
    unknown: Vec<Value>,
}

impl Stream {
    fn item(&mut self, v: &Value, offset: usize) -> Result<&mut Item, CaptureError> {
        let Some(i) = v.get("output_index").and_then(Value::as_u64) else {
            return Err(malformed(
                offset,
                "an item event without a numeric `output_index`",
            ));
        };
        Ok(self.items.get_or_insert_with(i, Item::default))
    }

    fn response(&mut self, v: &Value) {
        if let Some(r) = v.get("response").and_then(Value::as_object) {
            if let Some(id) = r.get("id").and_then(Value::as_str) {
                self.response_id = Some(id.to_string());
            }
            merge(&mut self.meta, &without(r, &["output"]));
        }
    }

    pub(crate) fn event(&mut self, ev: Event<'_>) -> Result<(), CaptureError> {
        let v = &ev.data;
        let Some(ty) = event_type(v).or(ev.name) else {
            self.unknown.push(ev.data);
            return Ok(());
        };
        let s = |k: &str| v.get(k).and_then(Value::as_str);
        let index = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        match ty {
            "response.created" if self.ended => {
                let done = self.take_messages();
                self.earlier.extend(done);
                self.response(v);
            }
            "response.created" | "response.in_progress" | "response.queued" => self.response(v),
            "response.completed" | "response.incomplete" => {
                self.response(v);
                if let Some(Value::Array(out)) = v.get("response").and_then(|r| r.get("output")) {
                    self.completed_output = out.clone();
                }
                if let Some(o) = v.as_object() {
                    // Fields beside `response` (a gateway's usage report).
                    merge(
                        &mut self.meta,
                        &without(o, &["type", "sequence_number", "response"]),
                    );
                }
                self.ended = true;
            }
            "response.failed" => {
                let error = v
                    .get("response")
                    .and_then(|r| r.get("error"))
                    .filter(|e| !e.is_null())
                    .unwrap_or(v);
                return Err(CaptureError::provider(ev.offset, error));
            }
            "error" => return Err(CaptureError::provider(ev.offset, v)),
            "response.output_item.added" | "response.output_item.done" => {
                let Some(item) = v.get("item").and_then(Value::as_object) else {
                    return Err(malformed(
                        ev.offset,
                        format!("`{ty}` without an `item` object"),
                    ));
                };
                let done = ty.ends_with("done");
                let it = self.item(v, ev.offset)?;
                it.item = item.clone();
                it.done |= done;
            }
            "response.content_part.added" | "response.content_part.done" => {
                let ci = index("content_index");
                let part = v.get("part").cloned();
                let it = self.item(v, ev.offset)?;
                let slot = it.content.get_or_insert_with(ci, Default::default);
                if let (Some(p), "response.content_part.done") = (&part, ty) {
                    if let Some(t) = p.get("text").and_then(Value::as_str) {
                        slot.1 = t.to_string();
                    }
                }
                if slot.0.is_none() || ty.ends_with("done") {
                    slot.0 = part;
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let (ci, d) = (index("content_index"), s("delta").unwrap_or_default());
                let it = self.item(v, ev.offset)?;
                it.content
                    .get_or_insert_with(ci, Default::default)
                    .1
                    .push_str(d);
            }
            "response.output_text.done" | "response.refusal.done" => {
                let key = if ty.starts_with("response.refusal") {
                    "refusal"
                } else {
                    "text"
                };
                let (ci, t) = (index("content_index"), s(key).map(str::to_string));
                let it = self.item(v, ev.offset)?;
                if let Some(t) = t {
                    it.content.get_or_insert_with(ci, Default::default).1 = t;
                }
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                let d = s("delta").unwrap_or_default();
                self.item(v, ev.offset)?.arguments.push_str(d);
            }
            "response.function_call_arguments.done" => {
                let a = s("arguments").map(str::to_string);
                let it = self.item(v, ev.offset)?;
                if let Some(a) = a {
                    it.arguments = a;
                }
            }
            "response.reasoning_summary_text.delta" => {
                let (si, d) = (index("summary_index"), s("delta").unwrap_or_default());
                let it = self.item(v, ev.offset)?;
                it.summary.get_or_insert_with(si, String::new).push_str(d);
            }
            "response.reasoning_summary_text.done" => {
                let (si, t) = (index("summary_index"), s("text").map(str::to_string));
                let it = self.item(v, ev.offset)?;
                if let Some(t) = t {
                    *it.summary.get_or_insert_with(si, String::new) = t;
                }
            }
            "response.reasoning_text.delta" => {
                let (ci, d) = (index("content_index"), s("delta").unwrap_or_default());
                let it = self.item(v, ev.offset)?;
                it.reasoning.get_or_insert_with(ci, String::new).push_str(d);
            }
            "response.reasoning_text.done" => {
                let (ci, t) = (index("content_index"), s("text").map(str::to_string));
                let it = self.item(v, ev.offset)?;
                if let Some(t) = t {
                    *it.reasoning.get_or_insert_with(ci, String::new) = t;
                }
            }
            // Progress notices whose content arrives whole in `output_item.done`.
            "response.reasoning_summary_part.added"
            | "response.reasoning_summary_part.done"
            | "response.output_text.annotation.added"
            | "response.custom_tool_call_input.done" => {}
            t if is_progress(t) => {}
            _ => self.unknown.push(ev.data),
        }
        Ok(())
    }

    /// `response.completed` or `response.incomplete` seen.
    pub(crate) fn is_complete(&self) -> bool {
        self.ended
    }

    pub(crate) fn finish(mut self, end: usize) -> Result<Reply, CaptureError> {
        if !self.ended {
            let open = self.items.iter().filter(|(_, it)| !it.done).count();
            let mut reason = "the stream ends before `response.completed`".to_string();
            if open > 0 {
                reason.push_str(&format!("; {open} output item(s) unfinished"));
            }
            return Err(truncated(end, reason));
        }
        let mut messages = std::mem::take(&mut self.earlier);
        messages.extend(self.take_messages());
        Ok(Reply {
            messages,
            meta: self.meta,
            unknown: self.unknown,
        })
    }

    /// The messages of the current (ended) response; the stream is ready for another.
    fn take_messages(&mut self) -> Vec<Message> {
        let mut finals: ByIndex<Value> = ByIndex::default();
        for (i, item) in std::mem::take(&mut self.completed_output)
            .into_iter()
            .enumerate()
        {
            finals.insert(i as u64, item);
        }
        for (i, it) in std::mem::take(&mut self.items).into_sorted() {
            if it.done || finals.get_mut(i).is_none() {
                finals.insert(i, rebuild(it));
            }
        }
        self.ended = false;
        finals
            .into_sorted()
            .into_iter()
            .map(|(_, item)| {
                let mut m = read_item(&item);
                mark(&mut m, self.response_id.as_deref());
                m
            })
            .collect()
    }
}

/// Server tool progress events (`response.web_search_call.searching`...).
fn is_progress(t: &str) -> bool {
    const PREFIXES: [&str; 6] = [
        "response.web_search_call.",
        "response.file_search_call.",
        "response.code_interpreter_call",
        "response.image_generation_call.",
        "response.mcp_",
        "response.computer_call",
    ];
    PREFIXES.iter().any(|p| t.starts_with(p))
}

/// The item as it stands: the done item, or the added one with the deltas applied.
fn rebuild(it: Item) -> Value {
    let mut item = it.item;
    if it.done {
        return Value::Object(item);
    }
    match item.get("type").and_then(Value::as_str) {
        Some("message") if !it.content.is_empty() => {
            let parts = it
                .content
                .into_sorted()
                .into_iter()
                .map(|(_, (skeleton, text))| {
                    let mut p = match skeleton {
                        Some(Value::Object(p)) => p,
                        _ => {
                            let mut p = Map::new();
                            p.insert("type".into(), "output_text".into());
                            p
                        }
                    };
                    let key = if p.get("type").and_then(Value::as_str) == Some("refusal") {
                        "refusal"
                    } else {
                        "text"
                    };
                    p.insert(key.into(), Value::String(text));
                    Value::Object(p)
                })
                .collect();
            item.insert("content".into(), Value::Array(parts));
        }
        Some("function_call") => {
            item.insert("arguments".into(), Value::String(it.arguments));
        }
        Some("custom_tool_call") => {
            item.insert("input".into(), Value::String(it.arguments));
        }
        Some("reasoning") => {
            if !it.summary.is_empty() {
                let list = it
                    .summary
                    .into_sorted()
                    .into_iter()
                    .map(|(_, t)| serde_json::json!({"type": "summary_text", "text": t}))
                    .collect();
                item.insert("summary".into(), Value::Array(list));
            }
            if !it.reasoning.is_empty() {
                let list = it
                    .reasoning
                    .into_sorted()
                    .into_iter()
                    .map(|(_, t)| serde_json::json!({"type": "reasoning_text", "text": t}))
                    .collect();
                item.insert("content".into(), Value::Array(list));
            }
        }
        _ => {}
    }
    Value::Object(item)
}

/// Usage of a Responses response or stream (`input_tokens` counts cached ones already,
/// `output_tokens` reasoning ones).
pub(crate) fn usage(meta: &Map<String, Value>) -> Usage {
    Usage {
        input_tokens: count_at(meta, "/usage/input_tokens"),
        output_tokens: count_at(meta, "/usage/output_tokens"),
        model: string_at(meta, "model"),
        response_id: string_at(meta, "id"),
    }
}
