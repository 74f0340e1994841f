//! Anthropic Messages `system` + `messages[]` <-> canonical.
//!
//! The top-level `system` is the first message (role system); each wire message is one
//! [`Message`] and each content block one part: `text`, `image` and `document` (base64,
//! url or file sources), `thinking` (text and signature) and `redacted_thinking`
//! (encrypted data) as reasoning, `tool_use` (its `input` object as compact JSON
//! arguments), `tool_result` (`is_error: true` modeled; a string or blocks as content).
//! Server tool blocks and any other block are opaque.
//!
//! Forms: [`Form::String`] (content or `system` was a string), [`Form::Verbatim`] (a
//! message whose role is not `user` or `assistant`, or that is not an object),
//! [`Form::NoHistory`].

use crate::json::Field;
use serde_json::{Map, Value};

use crate::canonical::{
    arguments_value, compact, rest, with_history, Conversation, Form, Media, Message, Opaque, Part,
    Reasoning, RequestCopy, Role, Text, ToolCall, ToolContent, ToolResult, WriteError, Writer,
};

pub(crate) fn read_request(obj: &Map<String, Value>, copy: RequestCopy) -> Conversation {
    let mut conv = Conversation::default();
    let mut has_history = false;
    let mut system = None;
    for (k, v) in obj {
        match (k.as_str(), v) {
            ("messages", Value::Array(msgs)) => {
                conv.messages.extend(msgs.iter().map(read_message));
                has_history = true;
            }
            ("system", Value::String(s)) => {
                let mut m = Message::new(Role::System, vec![Part::text(s.clone())]);
                m.form = Some(Form::String);
                system = Some(m);
            }
            ("system", Value::Array(blocks)) if !blocks.is_empty() => {
                system = Some(Message::new(
                    Role::System,
                    blocks.iter().map(read_block).collect(),
                ));
            }
            _ => {
                conv.request.insert(k.clone(), copy.of(v));
            }
        }
    }
    if let Some(m) = system {
        conv.messages.insert(0, m);
    }
    if !has_history {
        conv.form = Some(Form::NoHistory);
    }
    conv
}

/// Read one wire message (also a response: `role` + `content`).
pub(crate) fn read_message(v: &Value) -> Message {
    let (o, role) = match crate::canonical::user_or_assistant(v) {
        Ok(x) => x,
        Err(kept) => return *kept,
    };
    let mut msg = Message::new(role, Vec::new());
    for (k, v) in o {
        match (k.as_str(), v) {
            ("role", _) => {}
            ("content", Value::String(s)) => {
                msg.parts.push(Part::text(s.clone()));
                msg.form = Some(Form::String);
            }
            ("content", Value::Array(blocks)) if !blocks.is_empty() => {
                msg.parts.extend(blocks.iter().map(read_block));
            }
            _ => {
                msg.extra.insert(k.clone(), v.clone());
            }
        }
    }
    msg
}

/// Read one content block.
pub(crate) fn read_block(v: &Value) -> Part {
    let opaque = || {
        Part::Opaque(Opaque {
            value: v.clone(),
            form: None,
        })
    };
    let Some(o) = v.as_object() else {
        return opaque();
    };
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    match o.field("type").and_then(Value::as_str) {
        Some("text") => match s("text") {
            Some(text) => Part::Text(Text {
                text,
                extra: rest(o, &["type", "text"]),
                ..Text::default()
            }),
            None => opaque(),
        },
        Some(ty @ ("image" | "document")) => {
            let Some(mut media) = o.field("source").and_then(read_source) else {
                return opaque();
            };
            media.extra = rest(o, &["type", "source"]);
            if ty == "image" {
                Part::Image(media)
            } else {
                Part::File(media)
            }
        }
        Some("thinking") => match s("thinking") {
            Some(text) => {
                let signature = s("signature");
                let skip: &[&str] = if signature.is_some() {
                    &["type", "thinking", "signature"]
                } else {
                    &["type", "thinking"]
                };
                Part::Reasoning(Reasoning {
                    text: Some(text),
                    signature,
                    extra: rest(o, skip),
                    ..Reasoning::default()
                })
            }
            None => opaque(),
        },
        Some("redacted_thinking") => match s("data") {
            Some(data) => Part::Reasoning(Reasoning {
                encrypted: Some(data),
                extra: rest(o, &["type", "data"]),
                ..Reasoning::default()
            }),
            None => opaque(),
        },
        Some("tool_use") => match (s("id"), s("name"), o.field("input")) {
            (Some(id), Some(name), Some(input)) => Part::ToolCall(ToolCall {
                id: Some(id),
                name,
                arguments: compact(input),
                extra: rest(o, &["type", "id", "name", "input"]),
                ..ToolCall::default()
            }),
            _ => opaque(),
        },
        Some("tool_result") => {
            let Some(call_id) = s("tool_use_id") else {
                return opaque();
            };
            let is_error = o.field("is_error") == Some(&Value::Bool(true));
            let content = o.field("content").map(|c| match c {
                Value::String(s) => ToolContent::Text(s.clone()),
                Value::Array(blocks) => ToolContent::Parts(blocks.iter().map(read_block).collect()),
                other => ToolContent::Json(other.clone()),
            });
            let skip: &[&str] = if is_error {
                &["type", "tool_use_id", "content", "is_error"]
            } else {
                &["type", "tool_use_id", "content"]
            };
            Part::ToolResult(ToolResult {
                call_id: Some(call_id),
                content,
                is_error,
                extra: rest(o, skip),
                ..ToolResult::default()
            })
        }
        _ => opaque(),
    }
}

fn read_source(v: &Value) -> Option<Media> {
    let o = v.as_object()?;
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let m = match (o.field("type")?.as_str()?, o.len()) {
        ("base64", 3) => Media {
            data: Some(s("data")?),
            media_type: Some(s("media_type")?),
            ..Media::default()
        },
        ("url", 2) => Media {
            url: Some(s("url")?),
            ..Media::default()
        },
        ("file", 2) => Media {
            file_id: Some(s("file_id")?),
            ..Media::default()
        },
        _ => return None,
    };
    Some(m)
}

pub(crate) fn write_request(conv: &Conversation, w: Writer) -> Result<Value, WriteError> {
    let mut msgs = Vec::with_capacity(conv.messages.len());
    let mut system: Option<Value> = None;
    for (i, m) in conv.messages.iter().enumerate() {
        if matches!(m.role, Role::System | Role::Developer) && !m.is_verbatim() {
            let string_form = w.form(m.form) == Some(Form::String);
            let value = match m.parts.as_slice() {
                [Part::Text(t)] if string_form && system.is_none() => Value::String(t.text.clone()),
                parts => {
                    let mut blocks = match system.take() {
                        Some(Value::Array(b)) => b,
                        Some(Value::String(s)) => {
                            vec![serde_json::json!({"type": "text", "text": s})]
                        }
                        _ => Vec::new(),
                    };
                    for (j, p) in parts.iter().enumerate() {
                        blocks.push(write_block(i, j, p, w)?);
                    }
                    Value::Array(blocks)
                }
            };
            system = Some(value);
            continue;
        }
        msgs.push(write_message(i, m, w)?);
    }
    let history = (conv.form != Some(Form::NoHistory) || !msgs.is_empty())
        .then(|| ("messages", Value::Array(msgs)));
    let mut out = with_history(&conv.request, history);
    if let Some(s) = system {
        out.insert("system".into(), s);
    }
    Ok(Value::Object(out))
}

fn write_message(i: usize, m: &Message, w: Writer) -> Result<Value, WriteError> {
    if let Some(v) = m.verbatim_value() {
        return if w.same {
            Ok(v.clone())
        } else {
            Err(WriteError::new(
                i,
                None,
                "the message is kept verbatim from another dialect",
            ))
        };
    }
    let role = match &m.role {
        Role::User | Role::Assistant => m.role.as_str(),
        other => {
            return Err(WriteError::new(
                i,
                None,
                format!("Anthropic messages are `user` or `assistant`, not `{other}`"),
            ))
        }
    };
    let mut o = Map::with_capacity(2);
    o.insert("role".into(), Value::String(role.into()));
    match (w.form(m.form), m.parts.as_slice()) {
        (Some(Form::String), [Part::Text(t)]) => {
            o.insert("content".into(), Value::String(t.text.clone()));
        }
        (_, []) => {}
        (_, parts) => {
            let blocks = parts
                .iter()
                .enumerate()
                .map(|(j, p)| write_block(i, j, p, w))
                .collect::<Result<Vec<_>, _>>()?;
            o.insert("content".into(), Value::Array(blocks));
        }
    }
    w.extend(&mut o, &m.extra);
    Ok(Value::Object(o))
}

/// One content block.
pub(crate) fn write_block(i: usize, j: usize, p: &Part, w: Writer) -> Result<Value, WriteError> {
    let mut o = Map::with_capacity(4);
    let extra = match p {
        Part::Text(t) => {
            o.insert("type".into(), "text".into());
            o.insert("text".into(), Value::String(t.text.clone()));
            &t.extra
        }
        Part::Image(m) | Part::File(m) => {
            let ty = if matches!(p, Part::Image(_)) {
                "image"
            } else {
                "document"
            };
            o.insert("type".into(), ty.into());
            let source = match (&m.data, &m.media_type, &m.url, &m.file_id) {
                (Some(d), Some(mt), _, _) => {
                    serde_json::json!({"type": "base64", "media_type": mt, "data": d})
                }
                (_, _, Some(u), _) => serde_json::json!({"type": "url", "url": u}),
                (_, _, _, Some(f)) => serde_json::json!({"type": "file", "file_id": f}),
                _ => {
                    return Err(WriteError::new(
                        i,
                        Some(j),
                        "media without data, URL or file id",
                    ))
                }
            };
            o.insert("source".into(), source);
            &m.extra
        }
        Part::Reasoning(r) => {
            match (&r.text, &r.encrypted) {
                (Some(t), _) => {
                    o.insert("type".into(), "thinking".into());
                    o.insert("thinking".into(), Value::String(t.clone()));
                    if let Some(s) = &r.signature {
                        o.insert("signature".into(), Value::String(s.clone()));
                    }
                }
                (None, Some(e)) => {
                    o.insert("type".into(), "redacted_thinking".into());
                    o.insert("data".into(), Value::String(e.clone()));
                }
                (None, None) => {
                    return Err(WriteError::new(
                        i,
                        Some(j),
                        "reasoning with neither text nor encrypted data",
                    ))
                }
            }
            &r.extra
        }
        Part::ToolCall(c) => {
            let Some(id) = &c.id else {
                return Err(WriteError::new(
                    i,
                    Some(j),
                    "a tool call without an id (Anthropic needs `tool_use.id`)",
                ));
            };
            o.insert("type".into(), "tool_use".into());
            o.insert("id".into(), Value::String(id.clone()));
            o.insert("name".into(), Value::String(c.name.clone()));
            o.insert("input".into(), arguments_value(&c.arguments, i, j)?);
            &c.extra
        }
        Part::ToolResult(r) => {
            r.no_media(i, j, "Anthropic")?;
            let Some(id) = &r.call_id else {
                return Err(WriteError::new(
                    i,
                    Some(j),
                    "a tool result without a call id (Anthropic needs `tool_use_id`)",
                ));
            };
            o.insert("type".into(), "tool_result".into());
            o.insert("tool_use_id".into(), Value::String(id.clone()));
            if let Some(c) = &r.content {
                let v = match c {
                    ToolContent::Text(s) => Value::String(s.clone()),
                    ToolContent::Parts(ps) => Value::Array(
                        ps.iter()
                            .enumerate()
                            .map(|(k, p)| write_block(i, k, p, w))
                            .collect::<Result<_, _>>()?,
                    ),
                    ToolContent::Json(v) if w.same => v.clone(),
                    ToolContent::Json(v) => Value::String(v.to_string()),
                };
                o.insert("content".into(), v);
            }
            if r.is_error {
                o.insert("is_error".into(), Value::Bool(true));
            }
            &r.extra
        }
        Part::Opaque(op) => {
            return if w.same {
                Ok(op.value.clone())
            } else {
                Err(WriteError::new(
                    i,
                    Some(j),
                    "an opaque part of another dialect",
                ))
            }
        }
    };
    w.extend(&mut o, extra);
    Ok(Value::Object(o))
}
