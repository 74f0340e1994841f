//! Bedrock Converse `system` + `messages[]` <-> canonical.
//!
//! The top-level `system` list is the first message (role system); each wire message is
//! one [`Message`] and each content block (a single-member union) one part: `{"text"}`,
//! `image` and `document` with inline `bytes` (the `format` as a media type, a
//! document's `name` as its file name), `reasoningContent` (`reasoningText` with its
//! signature as reasoning text and signature, as Anthropic's `thinking`;
//! `redactedContent` as encrypted reasoning, kept as the wire's base64), `toolUse` (its
//! `input` object as compact JSON arguments), `toolResult` (`status: "error"` as
//! `is_error`; a content list of exactly one `{"json"}` block as JSON content, any other
//! list as parts). Server tool blocks (`toolUse` with `type: "server_tool_use"`, a
//! `toolResult` with a `type` of its own), `cachePoint`, `guardContent`,
//! `citationsContent`, `video`, media from S3 and any block that is not a one-member
//! object are opaque.
//!
//! Forms: [`Form::Verbatim`] (a message whose role is not `user` or `assistant`, or that
//! is not an object), [`Form::NoHistory`]. The body has no model: it is in the URL.

use crate::json::Field;
use serde_json::{json, Map, Value};

use crate::canonical::{
    arguments_value, compact, rest, with_history, Conversation, Form, Media, Message, Opaque, Part,
    Reasoning, RequestCopy, Role, ToolCall, ToolContent, ToolResult, WriteError, Writer,
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
            ("system", Value::Array(blocks)) if !blocks.is_empty() => {
                system = Some(Message::new(
                    Role::System,
                    blocks.iter().map(read_system_block).collect(),
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

/// Read one wire message (also a response's `output.message`).
pub(crate) fn read_message(v: &Value) -> Message {
    let (o, role) = match crate::canonical::user_or_assistant(v) {
        Ok(x) => x,
        Err(kept) => return *kept,
    };
    let mut msg = Message::new(role, Vec::new());
    for (k, v) in o {
        match (k.as_str(), v) {
            ("role", _) => {}
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

/// A system block: text, or kept as it is (`cachePoint`, `guardContent`, and whatever
/// else: a system list holds no other content).
fn read_system_block(v: &Value) -> Part {
    match v.as_object().and_then(member) {
        Some(("text", Value::String(t))) => Part::text(t.clone()),
        _ => Part::Opaque(Opaque {
            value: v.clone(),
            form: None,
        }),
    }
}

/// The one member of a union block; None when it has none or several.
fn member(o: &Map<String, Value>) -> Option<(&str, &Value)> {
    let mut it = o.iter();
    let (k, v) = it.next()?;
    it.next().is_none().then_some((k.as_str(), v))
}

/// Read one content block (also a tool result's content block).
pub(crate) fn read_block(v: &Value) -> Part {
    let opaque = || {
        Part::Opaque(Opaque {
            value: v.clone(),
            form: None,
        })
    };
    let Some((key, inner)) = v.as_object().and_then(member) else {
        return opaque();
    };
    let part = match (key, inner) {
        ("text", Value::String(t)) => Some(Part::text(t.clone())),
        ("toolUse", Value::Object(o)) => read_tool_use(o),
        ("toolResult", Value::Object(o)) => read_tool_result(o),
        ("reasoningContent", Value::Object(o)) => read_reasoning(o),
        ("image", Value::Object(o)) => read_media(o, true).map(Part::Image),
        ("document", Value::Object(o)) => read_media(o, false).map(Part::File),
        _ => None,
    };
    part.unwrap_or_else(opaque)
}

fn read_tool_use(o: &Map<String, Value>) -> Option<Part> {
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    // A server tool's call (Nova's code interpreter) runs at the provider: opaque.
    if s("type").as_deref() == Some("server_tool_use") {
        return None;
    }
    let input = o.field("input")?;
    Some(Part::ToolCall(ToolCall {
        id: Some(s("toolUseId")?),
        name: s("name")?,
        arguments: compact(input),
        extra: rest(o, &["toolUseId", "name", "input"]),
        ..ToolCall::default()
    }))
}

fn read_tool_result(o: &Map<String, Value>) -> Option<Part> {
    let call_id = o.field("toolUseId").and_then(Value::as_str)?.to_string();
    // A server tool's result carries its own `type` (`nova_code_interpreter_result`).
    if o.field("type")
        .is_some_and(|t| t.as_str() != Some("tool_result"))
    {
        return None;
    }
    let content = match o.field("content") {
        None => None,
        Some(Value::Array(blocks)) => Some(match blocks.as_slice() {
            [one] => match one.as_object().and_then(member) {
                Some(("json", v)) => ToolContent::Json(v.clone()),
                _ => ToolContent::Parts(vec![read_block(one)]),
            },
            _ => ToolContent::Parts(blocks.iter().map(read_block).collect()),
        }),
        Some(_) => return None,
    };
    let is_error = o.field("status").and_then(Value::as_str) == Some("error");
    let skip: &[&str] = if is_error {
        &["toolUseId", "content", "status"]
    } else {
        &["toolUseId", "content"]
    };
    Some(Part::ToolResult(ToolResult {
        call_id: Some(call_id),
        content,
        is_error,
        extra: rest(o, skip),
        ..ToolResult::default()
    }))
}

fn read_reasoning(o: &Map<String, Value>) -> Option<Part> {
    match member(o)? {
        ("reasoningText", Value::Object(r)) => {
            let text = r.field("text").and_then(Value::as_str)?.to_string();
            let signature = match r.field("signature") {
                None => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => return None,
            };
            Some(Part::Reasoning(Reasoning {
                text: Some(text),
                signature,
                extra: rest(r, &["text", "signature"]),
                ..Reasoning::default()
            }))
        }
        ("redactedContent", Value::String(data)) => Some(Part::Reasoning(Reasoning {
            encrypted: Some(data.clone()),
            ..Reasoning::default()
        })),
        _ => None,
    }
}

/// Image formats Converse takes, as media types.
const IMAGE_FORMATS: &[(&str, &str)] = &[
    ("png", "image/png"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
];

/// Document formats Converse takes, as media types.
const DOCUMENT_FORMATS: &[(&str, &str)] = &[
    ("pdf", "application/pdf"),
    ("csv", "text/csv"),
    ("doc", "application/msword"),
    (
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    ("xls", "application/vnd.ms-excel"),
    (
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    ("html", "text/html"),
    ("txt", "text/plain"),
    ("md", "text/markdown"),
];

fn formats(image: bool) -> &'static [(&'static str, &'static str)] {
    if image {
        IMAGE_FORMATS
    } else {
        DOCUMENT_FORMATS
    }
}

/// The Converse `format` of a media type, when Converse takes it inline.
pub(crate) fn media_format(media_type: &str, image: bool) -> Option<&'static str> {
    formats(image)
        .iter()
        .find(|(_, mt)| mt.eq_ignore_ascii_case(media_type))
        .map(|(f, _)| *f)
}

/// An image or document with inline bytes; an S3 source or another source is opaque.
fn read_media(o: &Map<String, Value>, image: bool) -> Option<Media> {
    let format = o.field("format").and_then(Value::as_str)?;
    let (_, media_type) = formats(image).iter().find(|(f, _)| *f == format)?;
    let source = o.field("source").and_then(Value::as_object)?;
    let Some(("bytes", Value::String(data))) = member(source) else {
        return None;
    };
    let (filename, skip): (_, &[&str]) = match o.field("name") {
        Some(Value::String(n)) if !image => (Some(n.clone()), &["format", "source", "name"]),
        _ => (None, &["format", "source"]),
    };
    Some(Media {
        data: Some(data.clone()),
        media_type: Some(media_type.to_string()),
        filename,
        extra: rest(o, skip),
        ..Media::default()
    })
}

pub(crate) fn write_request(conv: &Conversation, w: Writer) -> Result<Value, WriteError> {
    let mut msgs = Vec::with_capacity(conv.messages.len());
    let mut system: Option<Vec<Value>> = None;
    for (i, m) in conv.messages.iter().enumerate() {
        if matches!(m.role, Role::System | Role::Developer) && !m.is_verbatim() {
            let blocks = system.get_or_insert_with(Vec::new);
            for (j, p) in m.parts.iter().enumerate() {
                blocks.push(write_system_block(i, j, p, w)?);
            }
            continue;
        }
        msgs.push(write_message(i, m, w)?);
    }
    if !w.same {
        super::unique_document_names(&mut msgs);
    }
    let history = (conv.form != Some(Form::NoHistory) || !msgs.is_empty())
        .then(|| ("messages", Value::Array(msgs)));
    let mut out = with_history(&conv.request, history);
    if let Some(s) = system {
        out.insert("system".into(), Value::Array(s));
    }
    Ok(Value::Object(out))
}

fn write_system_block(i: usize, j: usize, p: &Part, w: Writer) -> Result<Value, WriteError> {
    match p {
        Part::Text(_) | Part::Opaque(_) => write_block(i, j, p, w),
        other => Err(WriteError::new(
            i,
            Some(j),
            format!(
                "a {} part in the instructions (Converse's `system` holds text)",
                other.kind()
            ),
        )),
    }
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
                format!("Converse messages are `user` or `assistant`, not `{other}`"),
            ))
        }
    };
    let mut o = Map::new();
    o.insert("role".into(), Value::String(role.into()));
    if !m.parts.is_empty() || !w.same {
        let blocks = m
            .parts
            .iter()
            .enumerate()
            .map(|(j, p)| write_block(i, j, p, w))
            .collect::<Result<Vec<_>, _>>()?;
        o.insert("content".into(), Value::Array(blocks));
    }
    w.extend(&mut o, &m.extra);
    Ok(Value::Object(o))
}

/// One content block: a union of one member.
pub(crate) fn write_block(i: usize, j: usize, p: &Part, w: Writer) -> Result<Value, WriteError> {
    let (key, inner) = match p {
        Part::Text(t) => return Ok(json!({ "text": t.text })),
        Part::Image(m) | Part::File(m) => {
            let image = matches!(p, Part::Image(_));
            let (Some(data), Some(mt)) = (&m.data, &m.media_type) else {
                return Err(WriteError::new(
                    i,
                    Some(j),
                    "media without inline data and a media type (Converse takes bytes, or S3 locations kept as they were)",
                ));
            };
            let Some(format) = media_format(mt, image) else {
                return Err(WriteError::new(
                    i,
                    Some(j),
                    format!("the media type `{mt}`, which Converse does not take"),
                ));
            };
            let mut o = Map::new();
            o.insert("format".into(), format.into());
            // Converse requires a document's name; one the source did not model (not a
            // string) comes back from `extra`.
            let name = match (&m.filename, w.same) {
                (Some(n), true) => Some(n.clone()),
                (Some(n), false) => Some(super::document_name(n, None)),
                (None, true) => None,
                (None, false) => Some("document".to_string()),
            };
            if let (false, Some(name)) = (image, name) {
                o.insert("name".into(), Value::String(name));
            }
            o.insert("source".into(), json!({ "bytes": data }));
            w.extend(&mut o, &m.extra);
            (if image { "image" } else { "document" }, o)
        }
        Part::Reasoning(r) => {
            let mut o = Map::new();
            match (&r.text, &r.encrypted) {
                (Some(t), _) => {
                    let mut rt = Map::new();
                    rt.insert("text".into(), Value::String(t.clone()));
                    if let Some(s) = &r.signature {
                        rt.insert("signature".into(), Value::String(s.clone()));
                    }
                    w.extend(&mut rt, &r.extra);
                    o.insert("reasoningText".into(), Value::Object(rt));
                }
                (None, Some(e)) => {
                    o.insert("redactedContent".into(), Value::String(e.clone()));
                }
                (None, None) => {
                    return Err(WriteError::new(
                        i,
                        Some(j),
                        "reasoning with neither text nor encrypted data",
                    ))
                }
            }
            ("reasoningContent", o)
        }
        Part::ToolCall(c) => {
            let Some(id) = &c.id else {
                return Err(WriteError::new(
                    i,
                    Some(j),
                    "a tool call without an id (Converse needs `toolUse.toolUseId`)",
                ));
            };
            let mut o = Map::new();
            o.insert("toolUseId".into(), Value::String(id.clone()));
            o.insert("name".into(), Value::String(c.name.clone()));
            o.insert("input".into(), arguments_value(&c.arguments, i, j)?);
            w.extend(&mut o, &c.extra);
            ("toolUse", o)
        }
        Part::ToolResult(r) => {
            r.no_media(i, j, "Converse")?;
            let Some(id) = &r.call_id else {
                return Err(WriteError::new(
                    i,
                    Some(j),
                    "a tool result without a call id (Converse needs `toolResult.toolUseId`)",
                ));
            };
            let mut o = Map::new();
            o.insert("toolUseId".into(), Value::String(id.clone()));
            let content = match &r.content {
                Some(ToolContent::Json(v)) => Some(json!([{ "json": v }])),
                Some(ToolContent::Text(t)) => Some(json!([{ "text": t }])),
                Some(ToolContent::Parts(ps)) => Some(Value::Array(
                    ps.iter()
                        .enumerate()
                        .map(|(k, p)| write_block(i, k, p, w))
                        .collect::<Result<_, _>>()?,
                )),
                // Converse requires the list; an empty one is the tool's (empty) output.
                None if !w.same => Some(Value::Array(Vec::new())),
                None => None,
            };
            if let Some(c) = content {
                o.insert("content".into(), c);
            }
            if r.is_error {
                o.insert("status".into(), "error".into());
            }
            w.extend(&mut o, &r.extra);
            ("toolResult", o)
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
    let mut block = Map::new();
    block.insert(key.into(), Value::Object(inner));
    Ok(Value::Object(block))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dialect;

    fn round_trip(body: Value) -> Conversation {
        let conv = Conversation::from_request(Dialect::BedrockConverse, &body).unwrap();
        assert_eq!(conv.to_request(Dialect::BedrockConverse).unwrap(), body);
        conv
    }

    #[test]
    fn blocks_are_modeled_and_written_back_exactly() {
        let conv = round_trip(json!({
            "messages": [
                {"role": "user", "content": [
                    {"text": "look"},
                    {"image": {"format": "png", "source": {"bytes": "iVBO"}}},
                    {"document": {"format": "pdf", "name": "report", "source": {"bytes": "JVBE"}}},
                    {"cachePoint": {"type": "default"}}]},
                {"role": "assistant", "content": [
                    {"reasoningContent": {"reasoningText": {"text": "hm", "signature": "EqQB"}}},
                    {"reasoningContent": {"redactedContent": "RXU4"}},
                    {"toolUse": {"toolUseId": "tooluse_1", "name": "f", "input": {"x": 1.0}, "type": "tool_use"}}]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "tooluse_1", "content": [{"json": {"r": 2}}], "status": "error"}},
                    {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "a"}, {"json": 1}], "status": "success"}}]}],
            "system": [{"text": "be brief"}, {"cachePoint": {"type": "default"}}],
            "inferenceConfig": {"maxTokens": 10}
        }));
        let kinds: Vec<Vec<&str>> = conv
            .messages
            .iter()
            .map(|m| m.parts.iter().map(Part::kind).collect())
            .collect();
        assert_eq!(
            kinds,
            [
                vec!["text", "opaque"],
                vec!["text", "image", "file", "opaque"],
                vec!["reasoning", "reasoning", "tool_call"],
                vec!["tool_result", "tool_result"],
            ]
        );
        let Part::ToolResult(r) = &conv.messages[3].parts[0] else {
            panic!("a result")
        };
        assert!(r.is_error);
        assert_eq!(r.content, Some(ToolContent::Json(json!({"r": 2}))));
        let Part::Reasoning(sig) = &conv.messages[2].parts[0] else {
            panic!("reasoning")
        };
        assert_eq!(sig.signature.as_deref(), Some("EqQB"));
        let Part::ToolCall(c) = &conv.messages[2].parts[2] else {
            panic!("a call")
        };
        assert_eq!(c.arguments, r#"{"x":1.0}"#);
    }

    #[test]
    fn shapes_it_cannot_model_stay_as_they_were() {
        round_trip(json!({
            "messages": [
                "not a message",
                {"role": "system", "content": [{"text": "x"}]},
                {"role": "user", "content": []},
                {"role": "user", "content": "a string", "extra": 1},
                {"role": "user"},
                {"role": "assistant", "content": [
                    {"text": "a", "toolUse": {}},
                    {},
                    {"text": 5},
                    {"toolUse": {"toolUseId": "x", "name": "n", "input": {}, "type": "server_tool_use"}},
                    {"toolResult": {"toolUseId": "x", "content": [], "type": "nova_code_interpreter_result"}},
                    {"toolResult": {"toolUseId": "x", "content": "text"}},
                    {"toolResult": {"toolUseId": "x"}},
                    {"reasoningContent": {"reasoningText": {"text": "t", "signature": 1}}},
                    {"reasoningContent": {"other": {}}},
                    {"image": {"format": "png", "source": {"s3Location": {"uri": "s3://b/k"}}}},
                    {"image": {"format": "tiff", "source": {"bytes": "x"}}},
                    {"document": {"format": "txt", "name": 7, "source": {"bytes": "x"}}},
                    {"video": {"format": "mp4", "source": {"bytes": "x"}}}]}],
            "system": []
        }));
        round_trip(json!({"inferenceConfig": {}}));
    }

    #[test]
    fn another_dialect_gets_unions_and_lists() {
        let chat = json!({"messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}]}]});
        let conv = Conversation::from_request(Dialect::OpenAiChat, &chat).unwrap();
        assert_eq!(
            conv.to_request(Dialect::BedrockConverse).unwrap(),
            json!({"messages": [
                {"role": "user", "content": [{"text": "q"}]},
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "c1", "name": "f", "input": {}}}]}],
                "system": [{"text": "s"}]})
        );
        let mut conv = Conversation::default();
        conv.messages.push(Message::new(
            Role::User,
            vec![
                Part::ToolResult(ToolResult {
                    call_id: Some("c1".into()),
                    content: Some(ToolContent::Text("ok".into())),
                    ..ToolResult::default()
                }),
                Part::File(Media {
                    data: Some("JVBE".into()),
                    media_type: Some("application/pdf".into()),
                    filename: Some("my report (v2).final.pdf".into()),
                    ..Media::default()
                }),
            ],
        ));
        assert_eq!(
            conv.to_request(Dialect::BedrockConverse).unwrap()["messages"][0]["content"],
            json!([
                {"toolResult": {"toolUseId": "c1", "content": [{"text": "ok"}]}},
                {"document": {"format": "pdf", "name": "my report (v2) final", "source": {"bytes": "JVBE"}}}])
        );
        conv.messages[0].parts[1] = Part::Image(Media {
            url: Some("https://x/y.png".into()),
            ..Media::default()
        });
        let e = conv.to_request(Dialect::BedrockConverse).unwrap_err();
        assert_eq!((e.message, e.part), (0, Some(1)));
    }

    #[test]
    fn documents_get_names_converse_takes_and_no_two_the_same() {
        let file = |name: Option<&str>| {
            Part::File(Media {
                data: Some("JVBE".into()),
                media_type: Some("application/pdf".into()),
                filename: name.map(str::to_string),
                ..Media::default()
            })
        };
        let mut conv = Conversation::default();
        let parts = vec![
            file(None),
            file(None),
            file(Some("분기.pdf")),
            file(Some("a.pdf")),
        ];
        conv.messages.push(Message::new(Role::User, parts));
        conv.messages
            .push(Message::new(Role::Assistant, vec![file(Some("b.pdf"))]));
        conv.messages
            .push(Message::new(Role::User, vec![file(Some("a.pdf"))]));
        let out = conv.to_request(Dialect::BedrockConverse).unwrap();
        let names: Vec<&str> = ["/messages/0/content", "/messages/2/content"]
            .iter()
            .flat_map(|p| out.pointer(p).and_then(Value::as_array).unwrap())
            .filter_map(|b| b.pointer("/document/name").and_then(Value::as_str))
            .collect();
        assert_eq!(
            names,
            ["document", "document (2)", "document (3)", "a", "a (2)"]
        );
        assert!(names
            .iter()
            .all(|n| super::super::document_name_is_valid(n)));
    }
}
