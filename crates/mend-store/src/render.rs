//! Stored messages as a request body of a dialect.
//!
//! Invariant: messages that are already the target dialect's wire messages are placed in
//! the body as stored, message for message, and only the fields around them are filled
//! in. Anything else (canonical messages, another dialect's wire messages) goes through
//! [`mend::convert`] without repair: what the target cannot carry comes back as notes
//! for the caller to show, never a silent drop.

use mend::canonical::{Conversation, Message};
use mend::convert::settings::DEFAULT_MAX_TOKENS;
use mend::convert::{convert_owned, ConvertOptions, Note};
use mend::Dialect;
use serde_json::{json, Map, Value};

use crate::{Error, Format};

/// A request body of `target` from a history written in `format`, with the fields of
/// `request` around it and `model` unless `request` has one (see [`request_body`]).
pub fn render(
    format: Format,
    history: Vec<Value>,
    target: Dialect,
    request: &Map<String, Value>,
    model: Option<&str>,
) -> Result<Value, Error> {
    render_converted(format, history, target, request, model).map(|(body, _)| body)
}

/// As [`render`], with what a conversion from another dialect could not carry (nothing
/// for messages already of `target`). Another dialect's messages go through
/// [`mend::convert`] as they are, without repair: the body says what is stored, and a
/// check of it finds what the stored history breaks.
pub fn render_converted(
    format: Format,
    history: Vec<Value>,
    target: Dialect,
    request: &Map<String, Value>,
    model: Option<&str>,
) -> Result<(Value, Vec<Note>), Error> {
    let fail = |reason: String| Error::Render {
        from: format,
        to: target,
        reason,
    };
    let (from, source) = match format {
        Format::Any => return Ok((request_body(target, history, request, model), Vec::new())),
        Format::Wire(d) if d == target => {
            return Ok((request_body(target, history, request, model), Vec::new()))
        }
        Format::Wire(d) => {
            let mut body = Map::new();
            body.insert(d.history_key().into(), Value::Array(history));
            (d, Value::Object(body))
        }
        Format::Canonical(from) => {
            let mut conv = Conversation {
                dialect: from,
                ..Conversation::default()
            };
            for (i, v) in history.into_iter().enumerate() {
                let m: Message = serde_json::from_value(v).map_err(|e| {
                    fail(format!("message {}: not a canonical message: {e}", i + 1))
                })?;
                conv.messages.push(m);
            }
            // Canonical messages are written in the dialect they came from, then
            // converted; without one, the target's writer takes them as they are.
            let d = from.unwrap_or(target);
            let body = conv.to_request(d).map_err(|e| fail(e.to_string()))?;
            (d, body)
        }
    };
    let (body, notes) = if from == target {
        (source, Vec::new())
    } else {
        let opts = ConvertOptions {
            model: model.map(str::to_string),
            no_repair: true,
            ..ConvertOptions::default()
        };
        let out = convert_owned(source, from, target, &opts).map_err(|e| fail(e.to_string()))?;
        (out.body, out.notes)
    };
    let mut fields = match body {
        Value::Object(fields) => fields,
        other => return Err(fail(format!("the writer made {}", mend::json_kind(&other)))),
    };
    // The request's fields go around the history, never in its place (as in
    // `request_body`).
    let key = target.history_key();
    for (k, v) in request.iter().filter(|(k, _)| k.as_str() != key) {
        fields.insert(k.clone(), v.clone());
    }
    Ok((Value::Object(fill(target, fields, model)), notes))
}

/// A request body of `dialect` with `history` as its history (`messages`, `input` or
/// `contents`), placed as given, and the fields of `request` around it. `model` is set
/// unless `request` has one (never for Gemini, whose model is in the URL). For
/// Anthropic, the required `max_tokens` is filled when absent, and a history that holds
/// thinking blocks, which was made with thinking on, gets `thinking` enabled unless
/// `request` says otherwise.
pub fn request_body(
    dialect: Dialect,
    history: Vec<Value>,
    request: &Map<String, Value>,
    model: Option<&str>,
) -> Value {
    let mut body = Map::with_capacity(request.len() + 1);
    for (k, v) in request {
        body.insert(k.clone(), v.clone());
    }
    body.insert(dialect.history_key().into(), Value::Array(history));
    Value::Object(fill(dialect, body, model))
}

/// Fill the fields a body of `dialect` needs around its history.
fn fill(dialect: Dialect, body: Map<String, Value>, model: Option<&str>) -> Map<String, Value> {
    let mut out = Map::with_capacity(body.len() + 3);
    if let Some(m) = model {
        if dialect != Dialect::Gemini && !body.contains_key("model") {
            out.insert("model".into(), Value::String(m.to_string()));
        }
    }
    let thinking = dialect == Dialect::Anthropic
        && body
            .get("messages")
            .and_then(Value::as_array)
            .is_some_and(|h| h.iter().any(holds_thinking));
    let needs_max = dialect == Dialect::Anthropic && !body.contains_key("max_tokens");
    let needs_thinking = thinking && !body.contains_key("thinking");
    let key = dialect.history_key();
    for (k, v) in body {
        // The filled fields go just before the history, so it stays last.
        if k == key {
            if needs_max {
                out.insert("max_tokens".into(), json!(DEFAULT_MAX_TOKENS));
            }
            if needs_thinking {
                out.insert(
                    "thinking".into(),
                    json!({"type": "enabled", "budget_tokens": 1024}),
                );
            }
        }
        out.insert(k, v);
    }
    out
}

fn holds_thinking(message: &Value) -> bool {
    message
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            blocks.iter().any(|b| {
                matches!(
                    b.get("type").and_then(Value::as_str),
                    Some("thinking" | "redacted_thinking")
                )
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_goes_under_the_dialects_key_with_the_fields_around_it() {
        let h = vec![json!({"role": "user", "content": "hi"})];
        let body = request_body(Dialect::OpenAiResponses, h.clone(), &Map::new(), Some("o3"));
        assert_eq!(body, json!({"model": "o3", "input": h}));
        let body = request_body(Dialect::Gemini, h.clone(), &Map::new(), Some("gemini-3"));
        assert_eq!(body, json!({"contents": h}));
        let t = vec![
            json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": "s"}]}),
        ];
        let body = request_body(Dialect::Anthropic, t, &Map::new(), Some("claude"));
        assert_eq!(body["thinking"]["type"], "enabled");
        assert_eq!(body["max_tokens"], 4096);
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "max_tokens", "thinking", "messages"]);
    }

    #[test]
    fn another_dialects_messages_are_converted_through_the_canonical_model() {
        let chat = vec![
            json!({"role": "system", "content": "Be brief."}),
            json!({"role": "user", "content": "hi"}),
        ];
        let body = render(
            Format::Wire(Dialect::OpenAiChat),
            chat,
            Dialect::Anthropic,
            &Map::new(),
            Some("claude-sonnet-4-5"),
        )
        .unwrap();
        assert!(body["system"].to_string().contains("Be brief."), "{body}");
        assert_eq!(body["messages"][0]["role"], "user");
        assert_eq!(body["model"], "claude-sonnet-4-5");
        // A request's fields go around the converted history, never in its place.
        let request = json!({"messages": [], "temperature": 0})
            .as_object()
            .unwrap()
            .clone();
        let body = render(
            Format::Wire(Dialect::OpenAiChat),
            vec![json!({"role": "user", "content": "hi"})],
            Dialect::Anthropic,
            &request,
            None,
        )
        .unwrap();
        assert_eq!(body["messages"][0]["role"], "user", "{body}");
        assert_eq!(body["temperature"], 0);
        assert!(render(
            Format::Canonical(None),
            vec![json!({"role": "user", "parts": "not parts"})],
            Dialect::Gemini,
            &Map::new(),
            None
        )
        .is_err());
    }
}
