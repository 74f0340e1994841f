//! OpenAI chat completions `messages[]` <-> canonical.
//!
//! One wire message is one [`Message`]; its parts are, in order: reasoning
//! (`reasoning_content`, `reasoning`, `reasoning_details[]`), content (a bare string or
//! text / `image_url` / `file` parts; others opaque), `tool_calls[]`, the legacy
//! `function_call`, and for a `tool` (or legacy `function`) message one tool result.
//!
//! Forms: [`Form::String`] (content was a string), [`Form::ReasoningContent`],
//! [`Form::ReasoningString`], [`Form::ReasoningDetails`] (which key held the reasoning),
//! [`Form::LegacyFunction`] (`function_call` / `function` role), [`Form::ToolCalls`] (an
//! opaque `tool_calls` entry), [`Form::Verbatim`] (a message that is not an object with a
//! string `role`). Keys that hold nothing (`null`, `[]`) stay in `extra`.

use crate::json::Field;
use serde_json::{Map, Value};

use crate::canonical::{
    data_url, rest, split_data_url, with_history, Conversation, Form, Media, Message, Opaque, Part,
    Reasoning, RequestCopy, Role, Text, ToolCall, ToolContent, ToolResult, WriteError, Writer,
};

pub(crate) fn read_request(obj: &Map<String, Value>, copy: RequestCopy) -> Conversation {
    let mut conv = Conversation::default();
    let mut has_history = false;
    for (k, v) in obj {
        if let ("messages", Value::Array(msgs)) = (k.as_str(), v) {
            conv.messages = msgs.iter().map(read_message).collect();
            has_history = true;
        } else {
            conv.request.insert(k.clone(), copy.of(v));
        }
    }
    if !has_history {
        conv.form = Some(Form::NoHistory);
    }
    conv
}

pub(crate) fn write_request(conv: &Conversation, w: Writer) -> Result<Value, WriteError> {
    let mut msgs = Vec::with_capacity(conv.messages.len());
    for (i, m) in conv.messages.iter().enumerate() {
        msgs.push(write_message(i, m, w)?);
    }
    let history = (conv.form != Some(Form::NoHistory) || !msgs.is_empty())
        .then(|| ("messages", Value::Array(msgs)));
    Ok(Value::Object(with_history(&conv.request, history)))
}

fn unknown_role() -> Role {
    Role::Other("?".into())
}

/// Read one wire message (also used for response and stream messages).
pub(crate) fn read_message(v: &Value) -> Message {
    let Some(m) = v.as_object() else {
        return Message::verbatim(unknown_role(), v.clone());
    };
    let Some(wire_role) = m.field("role").and_then(Value::as_str) else {
        return Message::verbatim(unknown_role(), v.clone());
    };
    let Head {
        mut msg,
        legacy,
        answers,
        details_readable,
    } = Head::of(m, wire_role);
    let (mut reasoning, mut content, mut calls) = (Vec::new(), Vec::new(), Vec::new());
    let mut result: Option<ToolResult> = None;
    for (k, v) in m {
        match (k.as_str(), v) {
            ("role", _) => {}
            ("content", v) if answers => {
                result.get_or_insert_with(ToolResult::default).content = Some(tool_content(v));
            }
            ("content", Value::String(s)) => {
                content.push(Part::text(s.clone()));
                msg.form = Some(Form::String);
            }
            ("content", Value::Array(parts)) if !parts.is_empty() => {
                content.extend(parts.iter().map(read_content_part));
            }
            ("tool_call_id", Value::String(s)) if answers && !legacy => {
                result.get_or_insert_with(ToolResult::default).call_id = Some(s.clone());
            }
            ("name", Value::String(s)) if legacy => {
                result.get_or_insert_with(ToolResult::default).name = Some(s.clone());
            }
            ("tool_calls", Value::Array(list)) if !list.is_empty() => {
                calls.extend(list.iter().map(read_tool_call));
            }
            ("function_call", fc) => match legacy_call(fc) {
                Some(call) => calls.push(Part::ToolCall(call)),
                None => {
                    msg.extra.insert(k.clone(), v.clone());
                }
            },
            ("reasoning_content", Value::String(s)) => reasoning.push(Part::Reasoning(Reasoning {
                text: Some(s.clone()),
                form: Some(Form::ReasoningContent),
                ..Reasoning::default()
            })),
            ("reasoning", Value::String(s)) if !details_readable => {
                reasoning.push(Part::Reasoning(Reasoning {
                    text: Some(s.clone()),
                    form: Some(Form::ReasoningString),
                    ..Reasoning::default()
                }))
            }
            ("reasoning_details", Value::Array(list)) if details_readable => {
                reasoning.extend(list.iter().filter_map(Value::as_object).map(read_detail));
            }
            _ => {
                msg.extra.insert(k.clone(), v.clone());
            }
        }
    }
    assemble(msg, legacy, answers, [reasoning, content, calls], result)
}

/// [`read_request`] of a body the caller gives up (convert's repaired source): the
/// request's members, the messages' strings and the values kept as extras are moved
/// into the conversation instead of copied. The same conversation as `read_request`
/// with [`RequestCopy::Values`] (held by a test on every case body).
pub(crate) fn read_request_owned(obj: Map<String, Value>) -> Conversation {
    let mut conv = Conversation::default();
    let mut has_history = false;
    for (k, v) in obj {
        match (k.as_str(), v) {
            ("messages", Value::Array(msgs)) => {
                conv.messages = msgs.into_iter().map(read_message_owned).collect();
                has_history = true;
            }
            (_, v) => {
                conv.request.insert(k, v);
            }
        }
    }
    if !has_history {
        conv.form = Some(Form::NoHistory);
    }
    conv
}

/// What a chat message's role and shape decide before its members are read, the same
/// for the copying and the moving read.
struct Head {
    /// The message to fill, its role set (and the legacy form marked).
    msg: Message,
    /// The legacy `function` role: a result named by `name`, no call id.
    legacy: bool,
    /// A tool or function result: its `content` is the result's.
    answers: bool,
    /// `reasoning_details` is a non-empty list of objects.
    details_readable: bool,
}

impl Head {
    fn of(m: &Map<String, Value>, wire_role: &str) -> Head {
        let legacy = wire_role == "function";
        let role = if legacy {
            Role::Tool
        } else {
            Role::from_name(wire_role)
        };
        let mut msg = Message::new(role, Vec::new());
        if legacy {
            msg.form = Some(Form::LegacyFunction);
        }
        Head {
            answers: matches!(msg.role, Role::Tool),
            details_readable: match m.field("reasoning_details") {
                Some(Value::Array(a)) => !a.is_empty() && a.iter().all(Value::is_object),
                _ => false,
            },
            msg,
            legacy,
        }
    }
}

/// A message from what its members gave, for the copying and the moving read:
/// reasoning, content and calls in that order, then the result of a tool message (an
/// empty one when it gave none).
fn assemble(
    mut msg: Message,
    legacy: bool,
    answers: bool,
    parts: [Vec<Part>; 3],
    mut result: Option<ToolResult>,
) -> Message {
    if answers && result.is_none() {
        result = Some(ToolResult::default());
    }
    msg.parts = parts.into_iter().flatten().collect();
    if let Some(mut r) = result {
        if legacy {
            r.form = Some(Form::LegacyFunction);
        }
        msg.parts.push(Part::ToolResult(r));
    }
    msg
}

/// [`read_message`], the message given up: its strings and extras moved.
fn read_message_owned(v: Value) -> Message {
    let m = match v {
        Value::Object(m) if m.field("role").is_some_and(Value::is_string) => m,
        other => return read_message(&other),
    };
    let wire_role = m.field("role").and_then(Value::as_str).unwrap_or_default();
    let Head {
        mut msg,
        legacy,
        answers,
        details_readable,
    } = Head::of(&m, wire_role);
    let (mut reasoning, mut content, mut calls) = (Vec::new(), Vec::new(), Vec::new());
    let mut result: Option<ToolResult> = None;
    for (k, v) in m {
        match (k.as_str(), v) {
            ("role", _) => {}
            ("content", v) if answers => {
                result.get_or_insert_with(ToolResult::default).content =
                    Some(tool_content_owned(v));
            }
            ("content", Value::String(s)) => {
                content.push(Part::text(s));
                msg.form = Some(Form::String);
            }
            ("content", Value::Array(parts)) if !parts.is_empty() => {
                content.extend(parts.into_iter().map(read_content_part_owned));
            }
            ("tool_call_id", Value::String(s)) if answers && !legacy => {
                result.get_or_insert_with(ToolResult::default).call_id = Some(s);
            }
            ("name", Value::String(s)) if legacy => {
                result.get_or_insert_with(ToolResult::default).name = Some(s);
            }
            ("tool_calls", Value::Array(list)) if !list.is_empty() => {
                calls.extend(list.into_iter().map(read_tool_call_owned));
            }
            ("function_call", fc) => match legacy_call(&fc) {
                Some(call) => calls.push(Part::ToolCall(call)),
                None => {
                    msg.extra.insert(k, fc);
                }
            },
            ("reasoning_content", Value::String(s)) => reasoning.push(Part::Reasoning(Reasoning {
                text: Some(s),
                form: Some(Form::ReasoningContent),
                ..Reasoning::default()
            })),
            ("reasoning", Value::String(s)) if !details_readable => {
                reasoning.push(Part::Reasoning(Reasoning {
                    text: Some(s),
                    form: Some(Form::ReasoningString),
                    ..Reasoning::default()
                }))
            }
            ("reasoning_details", Value::Array(list)) if details_readable => {
                reasoning.extend(list.iter().filter_map(Value::as_object).map(read_detail));
            }
            (_, v) => {
                msg.extra.insert(k, v);
            }
        }
    }
    assemble(msg, legacy, answers, [reasoning, content, calls], result)
}

/// [`tool_content`], the value given up.
fn tool_content_owned(v: Value) -> ToolContent {
    match v {
        Value::String(s) => ToolContent::Text(s),
        Value::Array(parts) => {
            ToolContent::Parts(parts.into_iter().map(read_content_part_owned).collect())
        }
        other => ToolContent::Json(other),
    }
}

/// [`read_content_part`], the part given up: a text part's text and extras moved (the
/// other kinds are read as `read_content_part` reads them).
fn read_content_part_owned(v: Value) -> Part {
    match v {
        Value::Object(o)
            if o.field("type").and_then(Value::as_str) == Some("text")
                && o.field("text").is_some_and(Value::is_string) =>
        {
            let mut text = Text::default();
            for (k, v) in o {
                match (k.as_str(), v) {
                    ("type", _) => {}
                    ("text", Value::String(s)) => text.text = s,
                    (_, v) => {
                        text.extra.insert(k, v);
                    }
                }
            }
            Part::Text(text)
        }
        other => read_content_part(&other),
    }
}

/// [`read_tool_call`], the call given up: its name, arguments, id and extras moved.
fn read_tool_call_owned(v: Value) -> Part {
    let readable = v.as_object().is_some_and(|o| {
        o.field("function")
            .and_then(Value::as_object)
            .is_some_and(|f| {
                f.len() == 2
                    && f.field("name").is_some_and(Value::is_string)
                    && f.field("arguments").is_some_and(Value::is_string)
            })
    });
    let o = match v {
        Value::Object(o) if readable => o,
        other => return read_tool_call(&other),
    };
    let mut call = ToolCall::default();
    for (k, v) in o {
        match (k.as_str(), v) {
            ("function", Value::Object(f)) => {
                for (fk, fv) in f {
                    match (fk.as_str(), fv) {
                        ("name", Value::String(s)) => call.name = s,
                        ("arguments", Value::String(s)) => call.arguments = s,
                        _ => {}
                    }
                }
            }
            ("id", Value::String(s)) => call.id = Some(s),
            (_, v) => {
                call.extra.insert(k, v);
            }
        }
    }
    Part::ToolCall(call)
}

fn tool_content(v: &Value) -> ToolContent {
    match v {
        Value::String(s) => ToolContent::Text(s.clone()),
        Value::Array(parts) => ToolContent::Parts(parts.iter().map(read_content_part).collect()),
        other => ToolContent::Json(other.clone()),
    }
}

fn legacy_call(v: &Value) -> Option<ToolCall> {
    let o = v.as_object()?;
    let name = o.field("name")?.as_str()?;
    let arguments = o.field("arguments")?.as_str()?;
    if o.len() != 2 {
        return None;
    }
    Some(ToolCall {
        name: name.to_string(),
        arguments: arguments.to_string(),
        form: Some(Form::LegacyFunction),
        ..ToolCall::default()
    })
}

fn read_detail(o: &Map<String, Value>) -> Part {
    let mut r = Reasoning {
        form: Some(Form::ReasoningDetails),
        ..Reasoning::default()
    };
    for (k, v) in o {
        match (k.as_str(), v) {
            ("text", Value::String(s)) => r.text = Some(s.clone()),
            ("summary", Value::String(s)) => r.summary = Some(vec![s.clone()]),
            ("data", Value::String(s)) => r.encrypted = Some(s.clone()),
            ("signature", Value::String(s)) => r.signature = Some(s.clone()),
            ("id", Value::String(s)) => r.item_id = Some(s.clone()),
            _ => {
                r.extra.insert(k.clone(), v.clone());
            }
        }
    }
    Part::Reasoning(r)
}

fn read_tool_call(v: &Value) -> Part {
    let opaque = || {
        Part::Opaque(Opaque {
            value: v.clone(),
            form: Some(Form::ToolCalls),
        })
    };
    let Some(o) = v.as_object() else {
        return opaque();
    };
    let Some(f) = o.field("function").and_then(Value::as_object) else {
        return opaque();
    };
    let (Some(name), Some(arguments)) = (
        f.field("name").and_then(Value::as_str),
        f.field("arguments").and_then(Value::as_str),
    ) else {
        return opaque();
    };
    if f.len() != 2 {
        return opaque();
    }
    let mut call = ToolCall {
        name: name.to_string(),
        arguments: arguments.to_string(),
        ..ToolCall::default()
    };
    for (k, v) in o {
        match (k.as_str(), v) {
            ("function", _) => {}
            ("id", Value::String(s)) => call.id = Some(s.clone()),
            _ => {
                call.extra.insert(k.clone(), v.clone());
            }
        }
    }
    Part::ToolCall(call)
}

/// Read one content part of a message (or of a tool message's content array).
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
        Some("text") => {
            let Some(text) = o.field("text").and_then(Value::as_str) else {
                return opaque();
            };
            Part::Text(Text {
                text: text.to_string(),
                extra: rest(o, &["type", "text"]),
                ..Text::default()
            })
        }
        Some("image_url") => {
            let Some(img) = o.field("image_url").and_then(Value::as_object) else {
                return opaque();
            };
            let Some(url) = img.field("url").and_then(Value::as_str) else {
                return opaque();
            };
            let detail = match img.field("detail") {
                None => None,
                Some(Value::String(d)) => Some(d.clone()),
                Some(_) => return opaque(),
            };
            if img.len() != 1 + usize::from(detail.is_some()) {
                return opaque();
            }
            let mut media = Media {
                detail,
                extra: rest(o, &["type", "image_url"]),
                ..Media::default()
            };
            match split_data_url(url) {
                Some((mt, data)) => {
                    media.media_type = Some(mt);
                    media.data = Some(data);
                }
                None => media.url = Some(url.to_string()),
            }
            Part::Image(media)
        }
        Some("file") => {
            let Some(file) = o.field("file").and_then(Value::as_object) else {
                return opaque();
            };
            let mut media = Media {
                extra: rest(o, &["type", "file"]),
                ..Media::default()
            };
            for (k, v) in file {
                let Some(s) = v.as_str() else {
                    return opaque();
                };
                match k.as_str() {
                    "file_id" => media.file_id = Some(s.to_string()),
                    "filename" => media.filename = Some(s.to_string()),
                    "file_data" => match split_data_url(s) {
                        Some((mt, data)) => {
                            media.media_type = Some(mt);
                            media.data = Some(data);
                        }
                        None => media.url = Some(s.to_string()),
                    },
                    _ => return opaque(),
                }
            }
            Part::File(media)
        }
        _ => opaque(),
    }
}

fn role_name(m: &Message, w: Writer) -> &str {
    if m.role == Role::Tool && w.form(m.form) == Some(Form::LegacyFunction) {
        return "function";
    }
    m.role.as_str()
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
    let mut out = Map::with_capacity(4);
    out.insert("role".into(), Value::String(role_name(m, w).to_string()));
    let mut content = Vec::new();
    let mut calls = Vec::new();
    let mut details = Vec::new();
    let mut result = None;
    for (j, p) in m.parts.iter().enumerate() {
        match p {
            Part::Text(_) | Part::Image(_) | Part::File(_) => content.push(j),
            Part::Opaque(o) if w.form(o.form) == Some(Form::ToolCalls) => {
                calls.push(o.value.clone())
            }
            Part::Opaque(_) if !w.same => {
                return Err(WriteError::new(
                    i,
                    Some(j),
                    "an opaque part of another dialect",
                ))
            }
            Part::Opaque(_) => content.push(j),
            Part::ToolCall(c) if w.form(c.form) == Some(Form::LegacyFunction) => {
                out.insert(
                    "function_call".into(),
                    serde_json::json!({"name": c.name, "arguments": c.arguments}),
                );
            }
            Part::ToolCall(c) => calls.push(write_tool_call(c, w)),
            Part::Reasoning(r) => match w.form(r.form) {
                Some(Form::ReasoningContent) => put_text(&mut out, "reasoning_content", r, i, j)?,
                Some(Form::ReasoningString) => put_text(&mut out, "reasoning", r, i, j)?,
                Some(_) => details.push(write_detail(r, w)),
                None if r.signature.is_none() && r.encrypted.is_none() && r.text.is_some() => {
                    put_text(&mut out, "reasoning_content", r, i, j)?
                }
                None => details.push(write_detail(r, w)),
            },
            Part::ToolResult(r) => {
                r.no_media(i, j, "OpenAI chat")?;
                if result.replace(r).is_some() {
                    return Err(WriteError::new(
                        i,
                        Some(j),
                        "a chat message carries at most one tool result",
                    ));
                }
            }
        }
    }
    if !content.is_empty() {
        let string_form = w.form(m.form) == Some(Form::String);
        let value = match content.as_slice() {
            [j] if string_form && matches!(&m.parts[*j], Part::Text(_)) => match &m.parts[*j] {
                Part::Text(t) => Value::String(t.text.clone()),
                _ => Value::Null,
            },
            js => Value::Array(
                js.iter()
                    .filter_map(|j| write_content_part(&m.parts[*j], w))
                    .collect(),
            ),
        };
        out.insert("content".into(), value);
    }
    if !details.is_empty() {
        out.insert("reasoning_details".into(), Value::Array(details));
    }
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(r) = result {
        let legacy = w.form(r.form) == Some(Form::LegacyFunction);
        if legacy {
            if let Some(n) = &r.name {
                out.insert("name".into(), Value::String(n.clone()));
            }
        } else if let Some(id) = &r.call_id {
            out.insert("tool_call_id".into(), Value::String(id.clone()));
        }
        if let Some(c) = &r.content {
            let v = write_tool_content(c, w).map_err(|reason| WriteError::new(i, None, reason))?;
            out.insert("content".into(), v);
        }
        w.extend(&mut out, &r.extra);
    }
    w.extend(&mut out, &m.extra);
    Ok(Value::Object(out))
}

fn put_text(
    out: &mut Map<String, Value>,
    key: &str,
    r: &Reasoning,
    i: usize,
    j: usize,
) -> Result<(), WriteError> {
    let Some(t) = &r.text else {
        return Err(WriteError::new(i, Some(j), "reasoning without text"));
    };
    if out.contains_key(key) {
        return Err(WriteError::new(
            i,
            Some(j),
            format!("a second reasoning part for `{key}`"),
        ));
    }
    out.insert(key.into(), Value::String(t.clone()));
    Ok(())
}

fn write_detail(r: &Reasoning, w: Writer) -> Value {
    let mut o = Map::with_capacity(4);
    if !w.same {
        let ty = if r.encrypted.is_some() {
            "reasoning.encrypted"
        } else if r.summary.is_some() && r.text.is_none() {
            "reasoning.summary"
        } else {
            "reasoning.text"
        };
        o.insert("type".into(), Value::String(ty.into()));
    }
    let mut put = |k: &str, v: &Option<String>| {
        if let Some(s) = v {
            o.insert(k.into(), Value::String(s.clone()));
        }
    };
    put("text", &r.text);
    put("summary", &r.summary.as_ref().map(|s| s.concat()));
    put("data", &r.encrypted);
    put("signature", &r.signature);
    put("id", &r.item_id);
    w.extend(&mut o, &r.extra);
    Value::Object(o)
}

fn write_tool_call(c: &ToolCall, w: Writer) -> Value {
    let mut o = Map::with_capacity(3);
    if let Some(id) = &c.id {
        o.insert("id".into(), Value::String(id.clone()));
    }
    if !w.same {
        o.insert("type".into(), Value::String("function".into()));
    }
    o.insert(
        "function".into(),
        serde_json::json!({"name": c.name, "arguments": c.arguments}),
    );
    w.extend(&mut o, &c.extra);
    Value::Object(o)
}

pub(crate) fn write_tool_content(c: &ToolContent, w: Writer) -> Result<Value, String> {
    Ok(match c {
        ToolContent::Text(s) => Value::String(s.clone()),
        ToolContent::Parts(ps) => Value::Array(
            ps.iter()
                .map(|p| {
                    write_content_part(p, w)
                        .ok_or_else(|| format!("a {} part in tool result content", p.kind()))
                })
                .collect::<Result<_, _>>()?,
        ),
        ToolContent::Json(v) if w.same => v.clone(),
        ToolContent::Json(v) => Value::String(v.to_string()),
    })
}

/// A content part, or `None` for a part that is not content.
fn write_content_part(p: &Part, w: Writer) -> Option<Value> {
    let mut o = Map::with_capacity(3);
    let extra = match p {
        Part::Text(t) => {
            o.insert("type".into(), "text".into());
            o.insert("text".into(), Value::String(t.text.clone()));
            &t.extra
        }
        Part::Image(m) => {
            o.insert("type".into(), "image_url".into());
            let url = match (&m.url, &m.data, &m.media_type) {
                (_, Some(d), Some(mt)) => data_url(mt, d),
                (Some(u), _, _) => u.clone(),
                _ => String::new(),
            };
            let mut img = Map::new();
            img.insert("url".into(), Value::String(url));
            if let Some(d) = &m.detail {
                img.insert("detail".into(), Value::String(d.clone()));
            }
            o.insert("image_url".into(), Value::Object(img));
            &m.extra
        }
        Part::File(m) => {
            o.insert("type".into(), "file".into());
            let mut f = Map::new();
            if let Some(id) = &m.file_id {
                f.insert("file_id".into(), Value::String(id.clone()));
            }
            match (&m.url, &m.data, &m.media_type) {
                (_, Some(d), Some(mt)) => {
                    f.insert("file_data".into(), Value::String(data_url(mt, d)));
                }
                (Some(u), _, _) => {
                    f.insert("file_data".into(), Value::String(u.clone()));
                }
                _ => {}
            }
            if let Some(n) = &m.filename {
                f.insert("filename".into(), Value::String(n.clone()));
            }
            o.insert("file".into(), Value::Object(f));
            &m.extra
        }
        Part::Opaque(op) => return Some(op.value.clone()),
        _ => return None,
    };
    w.extend(&mut o, extra);
    Some(Value::Object(o))
}
