//! OpenAI Responses `instructions` + `input` <-> canonical.
//!
//! One input item is one [`Message`]. A message item (typed `"type": "message"` or
//! role-only) keeps its `msg_…` id in [`Message::item_id`] and its content as parts
//! (`input_text` / `output_text` / `text` as text, `input_image`, `input_file`; others
//! opaque). A `reasoning` item is an assistant message with one reasoning part (`rs_…`,
//! summary, `reasoning_text`, `encrypted_content`); a `function_call` one with a tool
//! call (`call_id`, `fc_…` item id); a `function_call_output` a tool message with a
//! result. For these three the item's other fields are the part's `extra`. Every other
//! item type (server tool calls, custom and computer calls, `item_reference`...) is kept
//! verbatim.
//!
//! Forms: [`Form::Instructions`] (the top-level `instructions` string, first message),
//! [`Form::InputString`] (`input` was one string), [`Form::String`] (content was a
//! string), [`Form::Verbatim`], [`Form::NoHistory`].
//!
//! Writing splits a message of other dialects into items: each reasoning part, tool
//! call and tool result becomes its own item, runs of content parts a message item.

use crate::json::Field;
use serde_json::{Map, Value};

use crate::canonical::{
    data_url, rest, split_data_url, with_history, Conversation, Form, Media, Message, Opaque, Part,
    Reasoning, RequestCopy, Role, Text, ToolCall, ToolContent, ToolResult, WriteError, Writer,
};

pub(crate) fn read_request(obj: &Map<String, Value>, copy: RequestCopy) -> Conversation {
    let mut conv = Conversation::default();
    let mut has_history = false;
    let mut instructions = None;
    for (k, v) in obj {
        match (k.as_str(), v) {
            ("input", Value::String(s)) => {
                let mut m = Message::new(Role::User, vec![Part::text(s.clone())]);
                m.form = Some(Form::InputString);
                conv.messages.push(m);
                has_history = true;
            }
            ("input", Value::Array(items)) => {
                conv.messages.extend(items.iter().map(read_item));
                has_history = true;
            }
            ("instructions", Value::String(s)) => {
                let mut m = Message::new(Role::System, vec![Part::text(s.clone())]);
                m.form = Some(Form::Instructions);
                instructions = Some(m);
            }
            _ => {
                conv.request.insert(k.clone(), copy.of(v));
            }
        }
    }
    if let Some(m) = instructions {
        conv.messages.insert(0, m);
    }
    if !has_history {
        conv.form = Some(Form::NoHistory);
    }
    conv
}

/// The role a verbatim item of this type stands for.
fn role_of_item(ty: &str) -> Role {
    if ty.ends_with("_output") || ty == "mcp_approval_response" {
        Role::Tool
    } else if ty.ends_with("_call")
        || ty.ends_with("_request")
        || ty == "mcp_list_tools"
        || ty == "compaction"
    {
        Role::Assistant
    } else {
        Role::from_name(ty)
    }
}

/// Read one input (or output) item.
pub(crate) fn read_item(v: &Value) -> Message {
    let Some(o) = v.as_object() else {
        return Message::verbatim(Role::Other("?".into()), v.clone());
    };
    match o.field("type") {
        None => read_message_item(o, v),
        Some(Value::String(t)) => match t.as_str() {
            "message" => read_message_item(o, v),
            "reasoning" => read_reasoning_item(o),
            "function_call" => read_call_item(o, v),
            "function_call_output" => read_output_item(o, v),
            other => Message::verbatim(role_of_item(other), v.clone()),
        },
        Some(_) => Message::verbatim(Role::Other("?".into()), v.clone()),
    }
}

fn read_message_item(o: &Map<String, Value>, v: &Value) -> Message {
    let Some(role) = o.field("role").and_then(Value::as_str) else {
        return Message::verbatim(Role::Other("?".into()), v.clone());
    };
    let mut msg = Message::new(Role::from_name(role), Vec::new());
    for (k, v) in o {
        match (k.as_str(), v) {
            ("role", _) => {}
            ("id", Value::String(s)) => msg.item_id = Some(s.clone()),
            ("content", Value::String(s)) => {
                msg.parts.push(Part::text(s.clone()));
                msg.form = Some(Form::String);
            }
            ("content", Value::Array(parts)) if !parts.is_empty() => {
                msg.parts.extend(parts.iter().map(read_content_part));
            }
            _ => {
                msg.extra.insert(k.clone(), v.clone());
            }
        }
    }
    msg
}

fn read_reasoning_item(o: &Map<String, Value>) -> Message {
    let mut r = Reasoning::default();
    for (k, v) in o {
        match (k.as_str(), v) {
            ("type", _) => {}
            ("id", Value::String(s)) => r.item_id = Some(s.clone()),
            ("encrypted_content", Value::String(s)) => r.encrypted = Some(s.clone()),
            ("summary", Value::Array(list)) if texts_of(list, "summary_text").is_some() => {
                r.summary = texts_of(list, "summary_text");
            }
            ("content", Value::Array(list)) if list.len() == 1 => {
                match texts_of(list, "reasoning_text") {
                    Some(mut t) => r.text = t.pop(),
                    None => {
                        r.extra.insert(k.clone(), v.clone());
                    }
                }
            }
            _ => {
                r.extra.insert(k.clone(), v.clone());
            }
        }
    }
    Message::new(Role::Assistant, vec![Part::Reasoning(r)])
}

/// The texts of a list of `{"type": ty, "text": "..."}` objects, when it is exactly that.
fn texts_of(list: &[Value], ty: &str) -> Option<Vec<String>> {
    list.iter()
        .map(|p| {
            let o = p.as_object()?;
            (o.len() == 2 && o.field("type")?.as_str()? == ty)
                .then(|| o.field("text")?.as_str().map(str::to_string))?
        })
        .collect()
}

fn read_call_item(o: &Map<String, Value>, v: &Value) -> Message {
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let (Some(call_id), Some(name), Some(arguments)) = (s("call_id"), s("name"), s("arguments"))
    else {
        return Message::verbatim(Role::Assistant, v.clone());
    };
    let item_id = s("id");
    let skip: &[&str] = if item_id.is_some() {
        &["type", "id", "call_id", "name", "arguments"]
    } else {
        &["type", "call_id", "name", "arguments"]
    };
    let call = ToolCall {
        id: Some(call_id),
        item_id,
        name,
        arguments,
        extra: rest(o, skip),
        ..ToolCall::default()
    };
    Message::new(Role::Assistant, vec![Part::ToolCall(call)])
}

fn read_output_item(o: &Map<String, Value>, v: &Value) -> Message {
    let Some(call_id) = o.field("call_id").and_then(Value::as_str) else {
        return Message::verbatim(Role::Tool, v.clone());
    };
    let content = o.field("output").map(|out| match out {
        Value::String(s) => ToolContent::Text(s.clone()),
        Value::Array(parts) => ToolContent::Parts(parts.iter().map(read_content_part).collect()),
        other => ToolContent::Json(other.clone()),
    });
    let r = ToolResult {
        call_id: Some(call_id.to_string()),
        content,
        extra: rest(o, &["type", "call_id", "output"]),
        ..ToolResult::default()
    };
    Message::new(Role::Tool, vec![Part::ToolResult(r)])
}

/// Read one content part of a message item or a function call output.
pub(crate) fn read_content_part(v: &Value) -> Part {
    let opaque = || {
        Part::Opaque(Opaque {
            value: v.clone(),
            form: None,
        })
    };
    let Some(o) = v.as_object() else {
        return opaque();
    };
    match o.field("type").and_then(Value::as_str) {
        Some("input_text" | "output_text" | "text") => {
            let Some(text) = o.field("text").and_then(Value::as_str) else {
                return opaque();
            };
            Part::Text(Text {
                text: text.to_string(),
                // The type stays in extra: three names for one thing.
                extra: rest(o, &["text"]),
                ..Text::default()
            })
        }
        Some(ty @ ("input_image" | "input_file")) => {
            let mut m = Media::default();
            for (k, v) in o {
                match (k.as_str(), v) {
                    ("type", _) => {}
                    ("image_url" | "file_url", Value::String(s)) => match split_data_url(s) {
                        Some((mt, d)) if k == "image_url" => {
                            m.media_type = Some(mt);
                            m.data = Some(d);
                        }
                        _ => m.url = Some(s.clone()),
                    },
                    ("file_data", Value::String(s)) => match split_data_url(s) {
                        Some((mt, d)) => {
                            m.media_type = Some(mt);
                            m.data = Some(d);
                        }
                        None => return opaque(),
                    },
                    ("file_id", Value::String(s)) => m.file_id = Some(s.clone()),
                    ("filename", Value::String(s)) if ty == "input_file" => {
                        m.filename = Some(s.clone())
                    }
                    ("detail", Value::String(s)) if ty == "input_image" => {
                        m.detail = Some(s.clone())
                    }
                    _ => {
                        m.extra.insert(k.clone(), v.clone());
                    }
                }
            }
            if ty == "input_image" {
                Part::Image(m)
            } else {
                Part::File(m)
            }
        }
        _ => opaque(),
    }
}

pub(crate) fn write_request(conv: &Conversation, w: Writer) -> Result<Value, WriteError> {
    let mut items = Vec::with_capacity(conv.messages.len());
    let mut instructions = None;
    let mut input_string = None;
    for (i, m) in conv.messages.iter().enumerate() {
        match (w.form(m.form), m.parts.as_slice()) {
            (Some(Form::Instructions), [Part::Text(t)]) if instructions.is_none() => {
                instructions = Some(Value::String(t.text.clone()));
            }
            (Some(Form::InputString), [Part::Text(t)]) if conv.messages.len() - i == 1 => {
                input_string = Some(Value::String(t.text.clone()));
            }
            _ => write_message(i, m, w, &mut items)?,
        }
    }
    let history = match input_string {
        Some(s) if items.is_empty() => Some(s),
        _ if conv.form == Some(Form::NoHistory) && items.is_empty() => None,
        _ => Some(Value::Array(items)),
    };
    let mut out = with_history(&conv.request, history.map(|h| ("input", h)));
    if let Some(ins) = instructions {
        out.insert("instructions".into(), ins);
    }
    Ok(Value::Object(out))
}

fn write_message(
    i: usize,
    m: &Message,
    w: Writer,
    items: &mut Vec<Value>,
) -> Result<(), WriteError> {
    if let Some(v) = m.verbatim_value() {
        if !w.same {
            return Err(WriteError::new(
                i,
                None,
                "the message is kept verbatim from another dialect",
            ));
        }
        items.push(v.clone());
        return Ok(());
    }
    if let (Some(Form::String), [Part::Text(t)]) = (w.form(m.form), m.parts.as_slice()) {
        items.push(message_item(
            m,
            Some(Value::String(t.text.clone())),
            true,
            w,
        ));
        return Ok(());
    }
    // Runs of content parts become message items; every other part is an item of its own.
    let mut pending: Vec<Value> = Vec::new();
    let mut started = false;
    let mut has_items = false;
    for (j, p) in m.parts.iter().enumerate() {
        match p {
            Part::Text(_) | Part::Image(_) | Part::File(_) | Part::Opaque(_) => {
                if let (Part::Opaque(_), false) = (p, w.same) {
                    return Err(WriteError::new(
                        i,
                        Some(j),
                        "an opaque part of another dialect",
                    ));
                }
                pending.extend(write_content_part(p, &m.role, w));
            }
            _ => {
                if !pending.is_empty() {
                    let content = Value::Array(std::mem::take(&mut pending));
                    items.push(message_item(m, Some(content), !started, w));
                    started = true;
                }
                items.push(write_item_part(i, j, p, w)?);
                has_items = true;
            }
        }
    }
    if !pending.is_empty() || (!started && !has_items) {
        let content = (!pending.is_empty()).then(|| Value::Array(pending));
        items.push(message_item(m, content, !started, w));
    }
    Ok(())
}

/// A message item; the first of a message carries its id and extra fields.
fn message_item(m: &Message, content: Option<Value>, first: bool, w: Writer) -> Value {
    let mut o = Map::with_capacity(3);
    if first {
        if let Some(id) = &m.item_id {
            o.insert("id".into(), Value::String(id.clone()));
        }
    }
    o.insert("role".into(), Value::String(m.role.as_str().to_string()));
    if let Some(c) = content {
        o.insert("content".into(), c);
    }
    if first {
        w.extend(&mut o, &m.extra);
    }
    Value::Object(o)
}

fn write_item_part(i: usize, j: usize, p: &Part, w: Writer) -> Result<Value, WriteError> {
    let mut o = Map::with_capacity(5);
    match p {
        Part::Reasoning(r) => {
            o.insert("type".into(), "reasoning".into());
            if let Some(id) = &r.item_id {
                o.insert("id".into(), Value::String(id.clone()));
            }
            if let Some(s) = &r.summary {
                let list = s
                    .iter()
                    .map(|t| serde_json::json!({"type": "summary_text", "text": t}))
                    .collect();
                o.insert("summary".into(), Value::Array(list));
            } else if !w.same {
                o.insert("summary".into(), Value::Array(Vec::new()));
            }
            if let Some(t) = &r.text {
                o.insert(
                    "content".into(),
                    serde_json::json!([{"type": "reasoning_text", "text": t}]),
                );
            }
            if let Some(e) = &r.encrypted {
                o.insert("encrypted_content".into(), Value::String(e.clone()));
            }
            w.extend(&mut o, &r.extra);
        }
        Part::ToolCall(c) => {
            o.insert("type".into(), "function_call".into());
            if let Some(id) = &c.item_id {
                o.insert("id".into(), Value::String(id.clone()));
            }
            let Some(call_id) = &c.id else {
                return Err(WriteError::new(
                    i,
                    Some(j),
                    "a tool call without a call id (Responses needs `call_id`)",
                ));
            };
            o.insert("call_id".into(), Value::String(call_id.clone()));
            o.insert("name".into(), Value::String(c.name.clone()));
            o.insert("arguments".into(), Value::String(c.arguments.clone()));
            w.extend(&mut o, &c.extra);
        }
        Part::ToolResult(r) => {
            r.no_media(i, j, "the Responses API")?;
            o.insert("type".into(), "function_call_output".into());
            let Some(call_id) = &r.call_id else {
                return Err(WriteError::new(
                    i,
                    Some(j),
                    "a tool result without a call id (Responses needs `call_id`)",
                ));
            };
            o.insert("call_id".into(), Value::String(call_id.clone()));
            if let Some(c) = &r.content {
                let v = match c {
                    ToolContent::Text(s) => Value::String(s.clone()),
                    ToolContent::Parts(ps) => Value::Array(
                        ps.iter()
                            .map(|p| {
                                write_content_part(p, &Role::User, w).ok_or_else(|| {
                                    WriteError::new(
                                        i,
                                        Some(j),
                                        format!("a {} part in tool result content", p.kind()),
                                    )
                                })
                            })
                            .collect::<Result<_, _>>()?,
                    ),
                    ToolContent::Json(v) if w.same => v.clone(),
                    ToolContent::Json(v) => Value::String(v.to_string()),
                };
                o.insert("output".into(), v);
            } else if !w.same {
                // A result with no content (an Anthropic tool_result without one): the
                // item requires its output, and an empty one says what the source did.
                o.insert("output".into(), Value::String(String::new()));
            }
            w.extend(&mut o, &r.extra);
        }
        _ => {}
    }
    Ok(Value::Object(o))
}

/// A content part, or `None` for a part that is not content.
fn write_content_part(p: &Part, role: &Role, w: Writer) -> Option<Value> {
    let mut o = Map::with_capacity(3);
    let extra = match p {
        Part::Text(t) => {
            if !(w.same && t.extra.contains_key("type")) {
                let ty = if *role == Role::Assistant {
                    "output_text"
                } else {
                    "input_text"
                };
                o.insert("type".into(), ty.into());
            }
            o.insert("text".into(), Value::String(t.text.clone()));
            &t.extra
        }
        Part::Image(m) | Part::File(m) => {
            let image = matches!(p, Part::Image(_));
            o.insert(
                "type".into(),
                if image { "input_image" } else { "input_file" }.into(),
            );
            if let Some(id) = &m.file_id {
                o.insert("file_id".into(), Value::String(id.clone()));
            }
            let url_key = if image { "image_url" } else { "file_url" };
            if let Some(u) = &m.url {
                o.insert(url_key.into(), Value::String(u.clone()));
            }
            if let (Some(d), Some(mt)) = (&m.data, &m.media_type) {
                let key = if image { "image_url" } else { "file_data" };
                o.insert(key.into(), Value::String(data_url(mt, d)));
            }
            if let Some(n) = &m.filename {
                o.insert("filename".into(), Value::String(n.clone()));
            }
            if let Some(d) = &m.detail {
                o.insert("detail".into(), Value::String(d.clone()));
            }
            &m.extra
        }
        Part::Opaque(op) => return Some(op.value.clone()),
        _ => return None,
    };
    w.extend(&mut o, extra);
    Some(Value::Object(o))
}
