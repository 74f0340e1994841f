//! Gemini `systemInstruction` + `contents[]` <-> canonical.
//!
//! `systemInstruction` (or `system_instruction`) is the first message (role system);
//! each content is one [`Message`] (`user`, `model` as assistant, `tool`, or the legacy
//! `function` role kept by name) and each part one part: `text` (with its
//! `thoughtSignature`), `thought: true` text as reasoning, `functionCall` (the `args`
//! object as compact JSON arguments; none when absent), `functionResponse` (its
//! `response` as JSON content, and the images and files of Gemini 3's `parts` beside it
//! as the result's media, when every entry is one), `inlineData` / `fileData` as an
//! image or a file by media type. Other parts are opaque. For calls and results, `extra` holds the unmodeled
//! fields of the `functionCall` / `functionResponse` object; a part with other fields
//! beside them is opaque.
//!
//! Forms: [`Form::SnakeCase`] (the part, or `system_instruction`, uses snake_case keys:
//! `function_call`, `thought_signature`, `inline_data`...), [`Form::NoRole`] (a content
//! without `role`), [`Form::Verbatim`], [`Form::NoHistory`].

use crate::json::Field;
use serde_json::{Map, Value};

use crate::canonical::{
    arguments_value, compact, with_history, Conversation, Extra, Form, Media, Message, Opaque,
    Part, Reasoning, RequestCopy, Role, Text, ToolCall, ToolContent, ToolResult, WriteError,
    Writer,
};

pub(crate) fn read_request(obj: &Map<String, Value>, copy: RequestCopy) -> Conversation {
    let mut conv = Conversation::default();
    let mut has_history = false;
    let mut system = None;
    for (k, v) in obj {
        match (k.as_str(), v) {
            ("contents", Value::Array(list)) => {
                conv.messages.extend(list.iter().map(read_content));
                has_history = true;
            }
            ("systemInstruction" | "system_instruction", Value::Object(o))
                if system.is_none() && matches!(o.field("parts"), Some(Value::Array(_))) =>
            {
                let mut m = Message::new(Role::System, Vec::new());
                m.form = (k == "system_instruction").then_some(Form::SnakeCase);
                for (key, v) in o {
                    match (key.as_str(), v) {
                        ("parts", Value::Array(parts)) => {
                            m.parts = parts.iter().map(read_part).collect()
                        }
                        // Its `role`, if any, is a wire field like the others.
                        _ => {
                            m.extra.insert(key.clone(), v.clone());
                        }
                    }
                }
                system = Some(m);
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

/// Read one content (`{role, parts}`), also a response candidate's content.
pub(crate) fn read_content(v: &Value) -> Message {
    let Some(o) = v.as_object() else {
        return Message::verbatim(Role::Other("?".into()), v.clone());
    };
    let (role, form) = match o.field("role") {
        None => (Role::User, Some(Form::NoRole)),
        Some(Value::String(r)) => match r.as_str() {
            "user" => (Role::User, None),
            "model" => (Role::Assistant, None),
            "tool" => (Role::Tool, None),
            "function" => (Role::Other("function".into()), None),
            other => return Message::verbatim(Role::from_name(other), v.clone()),
        },
        Some(_) => return Message::verbatim(Role::Other("?".into()), v.clone()),
    };
    let Some(Value::Array(parts)) = o.field("parts") else {
        return Message::verbatim(role, v.clone());
    };
    let mut msg = Message::new(role, parts.iter().map(read_part).collect());
    msg.form = form;
    for (k, v) in o {
        if k != "role" && k != "parts" {
            msg.extra.insert(k.clone(), v.clone());
        }
    }
    msg
}

/// The keys of a part, both casings.
#[derive(Default)]
struct Keys<'a> {
    text: Option<&'a Value>,
    thought: Option<&'a Value>,
    signature: Option<&'a Value>,
    call: Option<&'a Value>,
    response: Option<&'a Value>,
    inline: Option<&'a Value>,
    file: Option<&'a Value>,
    snake: bool,
    camel: bool,
    other: Extra,
}

impl<'a> Keys<'a> {
    fn of(o: &'a Map<String, Value>) -> Keys<'a> {
        let mut k = Keys::default();
        for (key, v) in o {
            let (slot, snake) = match key.as_str() {
                "text" => (&mut k.text, None),
                "thought" => (&mut k.thought, None),
                "thoughtSignature" => (&mut k.signature, Some(false)),
                "thought_signature" => (&mut k.signature, Some(true)),
                "functionCall" => (&mut k.call, Some(false)),
                "function_call" => (&mut k.call, Some(true)),
                "functionResponse" => (&mut k.response, Some(false)),
                "function_response" => (&mut k.response, Some(true)),
                "inlineData" => (&mut k.inline, Some(false)),
                "inline_data" => (&mut k.inline, Some(true)),
                "fileData" => (&mut k.file, Some(false)),
                "file_data" => (&mut k.file, Some(true)),
                _ => {
                    k.other.insert(key.clone(), v.clone());
                    continue;
                }
            };
            if slot.replace(v).is_some() {
                // Both casings of one key: not a shape to model.
                k.snake = true;
                k.camel = true;
            }
            match snake {
                Some(true) => k.snake = true,
                Some(false) => k.camel = true,
                None => {}
            }
        }
        k
    }
}

/// Read one part.
pub(crate) fn read_part(v: &Value) -> Part {
    let opaque = || {
        Part::Opaque(Opaque {
            value: v.clone(),
            form: None,
        })
    };
    let Some(o) = v.as_object() else {
        return opaque();
    };
    let k = Keys::of(o);
    if k.snake && k.camel {
        return opaque();
    }
    let form = k.snake.then_some(Form::SnakeCase);
    let signature = match k.signature {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return opaque(),
    };
    let thought = match k.thought {
        None => false,
        Some(Value::Bool(true)) => true,
        // `thought: false` (or junk) is kept as a wire field.
        Some(_) => false,
    };
    let mut extra = k.other;
    if let (Some(t), false) = (k.thought, thought) {
        extra.insert("thought".into(), t.clone());
    }
    let kinds = [k.text, k.call, k.response, k.inline, k.file]
        .iter()
        .filter(|x| x.is_some())
        .count();
    if kinds > 1 {
        return opaque();
    }
    if let Some(call) = k.call {
        let Some(c) = call.as_object() else {
            return opaque();
        };
        let Some(name) = c.field("name").and_then(Value::as_str) else {
            return opaque();
        };
        // A call marked as a thought has no place in the model: kept as it is.
        if !extra.is_empty() || thought {
            return opaque();
        }
        let mut tc = ToolCall {
            name: name.to_string(),
            signature,
            form,
            ..ToolCall::default()
        };
        for (key, v) in c {
            match (key.as_str(), v) {
                ("name", _) => {}
                ("id", Value::String(s)) => tc.id = Some(s.clone()),
                ("args", v) => tc.arguments = compact(v),
                _ => {
                    tc.extra.insert(key.clone(), v.clone());
                }
            }
        }
        return Part::ToolCall(tc);
    }
    if let Some(resp) = k.response {
        let Some(r) = resp.as_object() else {
            return opaque();
        };
        if !extra.is_empty() || signature.is_some() || thought {
            return opaque();
        }
        let mut tr = ToolResult {
            form,
            ..ToolResult::default()
        };
        for (key, v) in r {
            match (key.as_str(), v) {
                ("id", Value::String(s)) => tr.call_id = Some(s.clone()),
                ("name", Value::String(s)) => tr.name = Some(s.clone()),
                ("response", v) => tr.content = Some(ToolContent::Json(v.clone())),
                // Gemini 3's multimodal function response: modeled when every entry
                // reads as an image or a file, else kept as it is.
                ("parts", Value::Array(ps)) if !ps.is_empty() => {
                    let media: Vec<Part> = ps.iter().map(read_part).collect();
                    if media
                        .iter()
                        .all(|p| matches!(p, Part::Image(_) | Part::File(_)))
                    {
                        tr.media = media;
                    } else {
                        tr.extra.insert(key.clone(), v.clone());
                    }
                }
                _ => {
                    tr.extra.insert(key.clone(), v.clone());
                }
            }
        }
        return Part::ToolResult(tr);
    }
    if let Some(data) = k.inline.or(k.file) {
        let inline = k.inline.is_some();
        let Some(mut media) = read_media(data, inline, k.snake) else {
            return opaque();
        };
        if signature.is_some() || thought {
            return opaque();
        }
        media.form = form;
        media.extra = extra;
        let image = media
            .media_type
            .as_deref()
            .is_some_and(|m| m.starts_with("image/"));
        return if image {
            Part::Image(media)
        } else {
            Part::File(media)
        };
    }
    let text = match k.text {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return opaque(),
    };
    if thought {
        return Part::Reasoning(Reasoning {
            text,
            signature,
            form,
            extra,
            ..Reasoning::default()
        });
    }
    match text {
        Some(text) => Part::Text(Text {
            text,
            signature,
            form,
            extra,
        }),
        None => opaque(),
    }
}

fn read_media(v: &Value, inline: bool, snake: bool) -> Option<Media> {
    let o = v.as_object()?;
    let mime_key = if snake { "mime_type" } else { "mimeType" };
    let uri_key = if snake { "file_uri" } else { "fileUri" };
    let mut m = Media::default();
    for (k, v) in o {
        let s = v.as_str()?.to_string();
        match k.as_str() {
            k if k == mime_key => m.media_type = Some(s),
            "data" if inline => m.data = Some(s),
            k if k == uri_key && !inline => m.url = Some(s),
            _ => return None,
        }
    }
    if inline && (m.data.is_none() || m.media_type.is_none()) || !inline && m.url.is_none() {
        return None;
    }
    Some(m)
}

pub(crate) fn write_request(conv: &Conversation, w: Writer) -> Result<Value, WriteError> {
    let mut contents = Vec::with_capacity(conv.messages.len());
    let mut system: Option<(&str, Value)> = None;
    for (i, m) in conv.messages.iter().enumerate() {
        if matches!(m.role, Role::System | Role::Developer) && !m.is_verbatim() {
            if system.is_some() {
                return Err(WriteError::new(
                    i,
                    None,
                    "a second system message (Gemini has one `systemInstruction`)",
                ));
            }
            let key = if w.form(m.form) == Some(Form::SnakeCase) {
                "system_instruction"
            } else {
                "systemInstruction"
            };
            let mut o = Map::new();
            o.insert("parts".into(), write_parts(i, m, w)?);
            w.extend(&mut o, &m.extra);
            system = Some((key, Value::Object(o)));
            continue;
        }
        contents.push(write_content(i, m, w)?);
    }
    let history = (conv.form != Some(Form::NoHistory) || !contents.is_empty())
        .then(|| ("contents", Value::Array(contents)));
    let mut out = with_history(&conv.request, history);
    if let Some((k, v)) = system {
        out.insert(k.into(), v);
    }
    Ok(Value::Object(out))
}

fn write_content(i: usize, m: &Message, w: Writer) -> Result<Value, WriteError> {
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
        Role::User => "user",
        Role::Assistant => "model",
        Role::Tool => "tool",
        Role::Other(r) if r == "function" => "function",
        other => {
            return Err(WriteError::new(
                i,
                None,
                format!("Gemini contents are `user` or `model`, not `{other}`"),
            ))
        }
    };
    let mut o = Map::with_capacity(3);
    if w.form(m.form) != Some(Form::NoRole) {
        o.insert("role".into(), Value::String(role.into()));
    }
    o.insert("parts".into(), write_parts(i, m, w)?);
    w.extend(&mut o, &m.extra);
    Ok(Value::Object(o))
}

fn write_parts(i: usize, m: &Message, w: Writer) -> Result<Value, WriteError> {
    m.parts
        .iter()
        .enumerate()
        .map(|(j, p)| write_part(i, j, p, w))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn write_part(i: usize, j: usize, p: &Part, w: Writer) -> Result<Value, WriteError> {
    let snake = w.form(p.form()) == Some(Form::SnakeCase);
    let key = |camel: &'static str, snake_key: &'static str| if snake { snake_key } else { camel };
    let mut o = Map::with_capacity(3);
    let sig_key = key("thoughtSignature", "thought_signature");
    match p {
        Part::Text(t) => {
            o.insert("text".into(), Value::String(t.text.clone()));
            if let Some(s) = &t.signature {
                o.insert(sig_key.into(), Value::String(s.clone()));
            }
            w.extend(&mut o, &t.extra);
        }
        Part::Reasoning(r) => {
            if let Some(t) = &r.text {
                o.insert("text".into(), Value::String(t.clone()));
            }
            o.insert("thought".into(), Value::Bool(true));
            if let Some(s) = &r.signature {
                o.insert(sig_key.into(), Value::String(s.clone()));
            }
            w.extend(&mut o, &r.extra);
        }
        Part::ToolCall(c) => {
            let mut fc = Map::with_capacity(3);
            if let Some(id) = &c.id {
                fc.insert("id".into(), Value::String(id.clone()));
            }
            fc.insert("name".into(), Value::String(c.name.clone()));
            if !c.arguments.is_empty() {
                fc.insert("args".into(), arguments_value(&c.arguments, i, j)?);
            }
            w.extend(&mut fc, &c.extra);
            o.insert(
                key("functionCall", "function_call").into(),
                Value::Object(fc),
            );
            if let Some(s) = &c.signature {
                o.insert(sig_key.into(), Value::String(s.clone()));
            }
        }
        Part::ToolResult(r) => {
            let mut fr = Map::with_capacity(3);
            if let Some(id) = &r.call_id {
                fr.insert("id".into(), Value::String(id.clone()));
            }
            match &r.name {
                Some(n) => {
                    fr.insert("name".into(), Value::String(n.clone()));
                }
                None if !w.same => {
                    return Err(WriteError::new(
                        i,
                        Some(j),
                        "a tool result without the tool's name (Gemini answers by name)",
                    ))
                }
                None => {}
            }
            match &r.content {
                Some(ToolContent::Json(v)) => {
                    fr.insert("response".into(), v.clone());
                }
                Some(ToolContent::Text(s)) => {
                    fr.insert("response".into(), serde_json::json!({"result": s}));
                }
                Some(ToolContent::Parts(_)) => {
                    return Err(WriteError::new(
                        i,
                        Some(j),
                        "a tool result of content parts (Gemini's response is a JSON object)",
                    ))
                }
                None => {}
            }
            if !r.media.is_empty() {
                let parts = r
                    .media
                    .iter()
                    .map(|p| match p {
                        Part::Image(_) | Part::File(_) => write_part(i, j, p, w),
                        _ => Err(WriteError::new(
                            i,
                            Some(j),
                            "a part other than an image or a file in a function response's `parts`",
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                fr.insert("parts".into(), Value::Array(parts));
            }
            w.extend(&mut fr, &r.extra);
            o.insert(
                key("functionResponse", "function_response").into(),
                Value::Object(fr),
            );
        }
        Part::Image(m) | Part::File(m) => {
            let mime = key("mimeType", "mime_type");
            let mut d = Map::new();
            let outer = match (&m.data, &m.url) {
                (Some(data), _) => {
                    if let Some(mt) = &m.media_type {
                        d.insert(mime.into(), Value::String(mt.clone()));
                    }
                    d.insert("data".into(), Value::String(data.clone()));
                    key("inlineData", "inline_data")
                }
                (None, Some(url)) => {
                    if let Some(mt) = &m.media_type {
                        d.insert(mime.into(), Value::String(mt.clone()));
                    }
                    d.insert(
                        key("fileUri", "file_uri").into(),
                        Value::String(url.clone()),
                    );
                    key("fileData", "file_data")
                }
                (None, None) => {
                    return Err(WriteError::new(
                        i,
                        Some(j),
                        "media without data or URL (Gemini has no file ids)",
                    ))
                }
            };
            o.insert(outer.into(), Value::Object(d));
            w.extend(&mut o, &m.extra);
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
    }
    Ok(Value::Object(o))
}
