//! OpenAI chat and Responses top-level settings <-> the neutral
//! [`Settings`](crate::convert::settings) convert carries: the same settings under
//! slightly different names (`chat` says which).

use crate::json::Field;
use serde_json::{json, Map, Value};

use crate::chain::escape;
use crate::convert::settings::{
    object, put_opt, Choice, Format, Function, Reader, Schema, Settings, Writer,
};
use crate::convert::{Note, NoteKind};
use crate::{Dialect, Profile};

/// The request's top-level fields as neutral settings; what has no place there is
/// reported lost through `r`.
pub(crate) fn read<'v>(
    req: impl IntoIterator<Item = (&'v String, &'v Value)>,
    r: &mut Reader,
) -> Settings {
    let chat = r.from == Dialect::OpenAiChat;
    let mut s = Settings::default();
    for (k, v) in req {
        let path = format!("/{}", escape(k));
        match k.as_str() {
            "model" => s.model = Some(v.clone()),
            "max_tokens" | "max_completion_tokens" if chat => s.max_tokens = Some(v.clone()),
            "max_output_tokens" if !chat => s.max_tokens = Some(v.clone()),
            "temperature" => s.temperature = Some(v.clone()),
            "top_p" => s.top_p = Some(v.clone()),
            "stop" if chat => {
                s.stop = match v {
                    Value::String(one) => Some(json!([one])),
                    Value::Null => None,
                    other => Some(other.clone()),
                }
            }
            "stream" => s.stream = Some(v.clone()),
            "tools" => {
                for (i, t) in v.as_array().into_iter().flatten().enumerate() {
                    match openai_function(t, chat) {
                        Some(f) => s.tools.push(f),
                        None => r.tool(format!("{path}/{i}"), t),
                    }
                }
            }
            "tool_choice" => s.tool_choice = openai_choice(v, chat),
            "parallel_tool_calls" => s.parallel = v.as_bool(),
            "user" => s.user = Some(v.clone()),
            "seed" if chat => s.seed = Some(v.clone()),
            "reasoning_effort" if chat => s.effort = Some(v.clone()),
            "reasoning" if !chat && v.is_object() => {
                for (rk, rv) in v.as_object().into_iter().flatten() {
                    match rk.as_str() {
                        "effort" => s.effort = Some(rv.clone()),
                        _ if rv.is_null() => {}
                        _ => {
                            r.unknown(format!("{path}/{}", escape(rk)), &format!("reasoning.{rk}"))
                        }
                    }
                }
            }
            "response_format" if chat => match read_format(v) {
                Some(f) => s.format = Some(f),
                None => r.unknown(path, k),
            },
            "text" if !chat && v.is_object() => {
                for (tk, tv) in v.as_object().into_iter().flatten() {
                    let sub = format!("{path}/{}", escape(tk));
                    match (tk.as_str(), read_format(tv)) {
                        ("format", Some(f)) => s.format = Some(f),
                        _ if tv.is_null() => {}
                        _ => r.unknown(sub, &format!("text.{tk}")),
                    }
                }
            }
            "presence_penalty" if chat => s.presence_penalty = Some(v.clone()),
            "frequency_penalty" if chat => s.frequency_penalty = Some(v.clone()),
            _ if v.is_null() => {}
            _ => r.unknown(path, k),
        }
    }
    s
}

fn openai_function(t: &Value, chat: bool) -> Option<Function> {
    if t.field("type").and_then(Value::as_str) != Some("function") {
        return None;
    }
    let f = if chat { t.field("function")? } else { t };
    Some(Function {
        name: f.field("name")?.as_str()?.to_string(),
        description: f.field("description").cloned(),
        parameters: f.field("parameters").cloned(),
        // A Responses function tool is strict unless it says otherwise; a chat one is not.
        strict: match f.field("strict") {
            None | Some(Value::Null) if !chat => Some(Value::Bool(true)),
            other => other.cloned(),
        },
    })
}

/// Chat's `response_format` (the schema under `json_schema`) or Responses'
/// `text.format` (the schema's fields beside `type`).
fn read_format(v: &Value) -> Option<Format> {
    let o = v.as_object()?;
    let inner = o
        .field("json_schema")
        .and_then(Value::as_object)
        .unwrap_or(o);
    let known =
        |o: &Map<String, Value>, keys: &[&str]| o.keys().all(|k| keys.contains(&k.as_str()));
    match o.field("type").and_then(Value::as_str)? {
        "text" if o.len() == 1 => Some(Format::Text),
        "json_object" if o.len() == 1 => Some(Format::JsonObject),
        "json_schema"
            if known(
                o,
                &[
                    "type",
                    "json_schema",
                    "name",
                    "description",
                    "schema",
                    "strict",
                ],
            ) && known(inner, &["type", "name", "description", "schema", "strict"]) =>
        {
            Some(Format::JsonSchema(Box::new(Schema {
                name: inner.field("name").cloned(),
                description: inner.field("description").cloned(),
                schema: inner.field("schema").cloned(),
                strict: inner.field("strict").cloned(),
            })))
        }
        _ => None,
    }
}

/// The format as chat (`response_format`) or Responses (`text.format`) writes it. A
/// schema without a name (Gemini's) is named `response`, which chat and Responses
/// require.
fn format_value(f: Format, chat: bool, named: &mut bool) -> Value {
    match f {
        Format::Text => json!({"type": "text"}),
        Format::JsonObject => json!({"type": "json_object"}),
        Format::JsonSchema(s) => {
            let Schema {
                name,
                description,
                schema,
                strict,
            } = *s;
            let mut o = Map::new();
            *named = name.is_none();
            o.insert(
                "name".into(),
                name.unwrap_or_else(|| Value::from("response")),
            );
            put_opt(&mut o, "description", description);
            put_opt(&mut o, "schema", schema);
            put_opt(&mut o, "strict", strict);
            if chat {
                object([
                    ("type", "json_schema".into()),
                    ("json_schema", Value::Object(o)),
                ])
            } else {
                o.insert("type".into(), "json_schema".into());
                Value::Object(o)
            }
        }
    }
}

fn openai_choice(v: &Value, chat: bool) -> Option<Choice> {
    match v {
        Value::String(s) => match s.as_str() {
            "auto" => Some(Choice::Auto),
            "none" => Some(Choice::None),
            "required" => Some(Choice::Required),
            _ => None,
        },
        Value::Object(o) if o.field("type").and_then(Value::as_str) == Some("function") => {
            let f = if chat { o.field("function")? } else { v };
            Some(Choice::Function(f.field("name")?.as_str()?.to_string()))
        }
        _ => None,
    }
}

/// The settings as this dialect writes them.
impl Writer<'_> {
    /// OpenAI chat (`chat`) or Responses: the same settings under slightly different names.
    pub(crate) fn openai(&mut self, s: Settings, chat: bool, profile: &Profile) {
        self.put("model", s.model);
        // OpenAI's reasoning models refuse `max_tokens` in chat ("Unsupported parameter:
        // 'max_tokens' is not supported with this model. Use 'max_completion_tokens'
        // instead."); every OpenAI model takes the newer name, most compatible APIs only
        // the older one.
        let limit = match (chat, profile.name) {
            (false, _) => "max_output_tokens",
            (true, "openai" | "azure") => "max_completion_tokens",
            (true, _) => "max_tokens",
        };
        self.put(limit, s.max_tokens);
        self.put("temperature", s.temperature);
        self.put("top_p", s.top_p);
        self.drop("top_k", s.top_k);
        if chat {
            self.put("stop", s.stop);
        } else {
            self.drop("stop", s.stop);
        }
        self.put("stream", s.stream);
        if !s.tools.is_empty() {
            let tools = s
                .tools
                .into_iter()
                .map(|f| {
                    let mut o = Map::new();
                    if !chat {
                        o.insert("type".into(), "function".into());
                    }
                    o.insert("name".into(), Value::String(f.name));
                    put_opt(&mut o, "description", f.description);
                    put_opt(&mut o, "parameters", f.parameters);
                    // Responses reads a tool without `strict` as strict: say false where
                    // the source did not ask for it.
                    let strict = match f.strict {
                        None if !chat => Some(Value::Bool(false)),
                        s => s,
                    };
                    put_opt(&mut o, "strict", strict);
                    if chat {
                        object([("type", "function".into()), ("function", Value::Object(o))])
                    } else {
                        Value::Object(o)
                    }
                })
                .collect();
            self.out.insert("tools".into(), Value::Array(tools));
        }
        let choice = s.tool_choice.map(|c| openai_choice_value(c, chat));
        self.put("tool_choice", choice);
        self.put("parallel_tool_calls", s.parallel.map(Value::Bool));
        self.put("user", s.user);
        if chat {
            self.put("seed", s.seed);
            self.put("presence_penalty", s.presence_penalty);
            self.put("frequency_penalty", s.frequency_penalty);
            self.put("reasoning_effort", s.effort);
        } else {
            self.drop("seed", s.seed);
            self.drop("presence_penalty", s.presence_penalty);
            self.drop("frequency_penalty", s.frequency_penalty);
            self.put("reasoning", s.effort.map(|e| object([("effort", e)])));
        }
        self.drop("thinking", s.thinking.map(|_| Value::Bool(true)));
        if s.include_thoughts.is_some() {
            self.drop("include_thoughts", s.include_thoughts.map(Value::Bool));
        }
        if let Some(f) = s.format {
            let mut named = false;
            let v = format_value(f, chat, &mut named);
            if named {
                let (key, path) = if chat {
                    ("response_format", "/response_format/json_schema/name")
                } else {
                    ("text.format", "/text/format/name")
                };
                self.notes.push(Note::new(
                    NoteKind::Added,
                    "response-format",
                    path.into(),
                    format!(
                        "{} requires a name for the schema of `{key}` and {} gave none: `response`",
                        self.to, self.from
                    ),
                ));
            }
            if chat {
                self.put("response_format", Some(v));
            } else {
                self.put("text", Some(object([("format", v)])));
            }
        }
    }
}

fn openai_choice_value(c: Choice, chat: bool) -> Value {
    match c {
        Choice::Auto => json!("auto"),
        Choice::None => json!("none"),
        Choice::Required => json!("required"),
        Choice::Function(n) if chat => json!({"type": "function", "function": {"name": n}}),
        Choice::Function(n) => json!({"type": "function", "name": n}),
    }
}
