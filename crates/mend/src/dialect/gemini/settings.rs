//! Gemini top-level settings (`generationConfig`, `toolConfig`, function declarations)
//! <-> the neutral [`Settings`](crate::convert::settings) convert carries.

use crate::json::Field;
use serde_json::{json, Map, Value};

use crate::chain::escape;
use crate::convert::settings::{
    object, put_opt, Choice, Format, Function, Reader, Schema, Settings, Thinking, Writer,
};
use crate::convert::{Note, NoteKind};

/// Gemini's REST API takes camelCase and snake_case alike.
fn camel(k: &str) -> String {
    let mut out = String::with_capacity(k.len());
    let mut up = false;
    for c in k.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The request's top-level fields as neutral settings; what has no place there is
/// reported lost through `r`.
pub(crate) fn read<'v>(
    req: impl IntoIterator<Item = (&'v String, &'v Value)>,
    r: &mut Reader,
) -> Settings {
    let mut s = Settings::default();
    for (k, v) in req {
        let path = format!("/{}", escape(k));
        match camel(k).as_str() {
            "model" => s.model = Some(v.clone()),
            "generationConfig" => {
                let (mut mime, mut schema) = (None, None);
                for (gk, gv) in v.as_object().into_iter().flatten() {
                    let sub = format!("{path}/{}", escape(gk));
                    let slot = match camel(gk).as_str() {
                        "thinkingConfig" => {
                            read_thinking(gv, &sub, &mut s, r);
                            continue;
                        }
                        "responseMimeType" => {
                            mime = Some((sub, gv));
                            continue;
                        }
                        "responseSchema" => {
                            schema = Some((sub, json_schema_of_gemini(gv)));
                            continue;
                        }
                        "responseJsonSchema" => {
                            schema = Some((sub, gv.clone()));
                            continue;
                        }
                        "maxOutputTokens" => &mut s.max_tokens,
                        "temperature" => &mut s.temperature,
                        "topP" => &mut s.top_p,
                        "topK" => &mut s.top_k,
                        "stopSequences" => &mut s.stop,
                        "seed" => &mut s.seed,
                        "presencePenalty" => &mut s.presence_penalty,
                        "frequencyPenalty" => &mut s.frequency_penalty,
                        _ => {
                            r.unknown(format!("{path}/{}", escape(gk)), gk);
                            continue;
                        }
                    };
                    *slot = Some(gv.clone());
                }
                s.format = read_format(mime, schema, r);
            }
            "tools" => {
                for (i, t) in v.as_array().into_iter().flatten().enumerate() {
                    let Some(o) = t.as_object() else {
                        r.tool(format!("{path}/{i}"), t);
                        continue;
                    };
                    for (tk, tv) in o {
                        if camel(tk) != "functionDeclarations" {
                            r.tool(format!("{path}/{i}"), &json!({ tk.as_str(): tv }));
                            continue;
                        }
                        for (j, d) in tv.as_array().into_iter().flatten().enumerate() {
                            let Some(name) = d.field("name").and_then(Value::as_str) else {
                                r.tool(format!("{path}/{i}/{}/{j}", escape(tk)), d);
                                continue;
                            };
                            let parameters = d
                                .field("parametersJsonSchema")
                                .or_else(|| d.field("parameters_json_schema"))
                                .cloned()
                                .or_else(|| d.field("parameters").map(json_schema_of_gemini));
                            s.tools.push(Function {
                                name: name.to_string(),
                                description: d.field("description").cloned(),
                                parameters,
                                strict: None,
                            });
                        }
                    }
                }
            }
            "toolConfig" => {
                let fcc = v
                    .field("functionCallingConfig")
                    .or_else(|| v.field("function_calling_config"));
                let mode = fcc.and_then(|c| c.field("mode")).and_then(Value::as_str);
                let allowed = fcc
                    .and_then(|c| {
                        c.field("allowedFunctionNames")
                            .or_else(|| c.field("allowed_function_names"))
                    })
                    .and_then(Value::as_array);
                s.tool_choice = match (mode, allowed.map(Vec::as_slice)) {
                    (Some("ANY"), Some([one])) => one.as_str().map(|n| Choice::Function(n.into())),
                    (Some("ANY"), _) => Some(Choice::Required),
                    (Some("NONE"), _) => Some(Choice::None),
                    (Some("AUTO"), _) => Some(Choice::Auto),
                    _ => {
                        r.unknown(path, k);
                        None
                    }
                };
            }
            _ if v.is_null() => {}
            _ => r.unknown(path, k),
        }
    }
    s
}

/// `thinkingConfig`: the budget (0 off, -1 dynamic), whether thoughts are returned,
/// Gemini 3's level (the reasoning effort, in lower case).
fn read_thinking(v: &Value, path: &str, s: &mut Settings, r: &mut Reader) {
    let Some(o) = v.as_object() else {
        r.unknown(path.to_string(), "thinkingConfig");
        return;
    };
    for (k, v) in o {
        let sub = format!("{path}/{}", escape(k));
        match (camel(k).as_str(), v) {
            ("thinkingBudget", v) => {
                s.thinking = match v.as_i64() {
                    Some(0) => Some(Thinking::Off),
                    Some(-1) => Some(Thinking::Dynamic),
                    Some(n) if n > 0 => u64::try_from(n).ok().map(Thinking::Budget),
                    _ => {
                        r.unknown(sub, &format!("thinkingConfig.{k}"));
                        None
                    }
                }
            }
            ("includeThoughts", Value::Bool(b)) => s.include_thoughts = Some(*b),
            ("thinkingLevel", Value::String(l)) => s.effort = Some(Value::from(l.to_lowercase())),
            (_, Value::Null) => {}
            _ => r.unknown(sub, &format!("thinkingConfig.{k}")),
        }
    }
}

/// `responseMimeType` with its schema as the answer format: JSON with a schema, any
/// JSON, or text. Another type (`text/x.enum`), or a schema without JSON, is lost.
fn read_format(
    mime: Option<(String, &Value)>,
    schema: Option<(String, Value)>,
    r: &mut Reader,
) -> Option<Format> {
    let (mime_path, mime) = match mime {
        Some((p, m)) => (p, m.as_str()),
        None => (String::new(), None),
    };
    match (mime, schema) {
        (Some("application/json"), Some((_, schema))) => {
            Some(Format::JsonSchema(Box::new(Schema {
                name: None,
                description: None,
                schema: Some(schema),
                strict: None,
            })))
        }
        (Some("application/json"), None) => Some(Format::JsonObject),
        (Some("text/plain"), None) => Some(Format::Text),
        (None, None) => None,
        (_, Some((path, _))) if mime != Some("application/json") => {
            r.unknown(path, "responseSchema");
            None
        }
        _ => {
            r.unknown(mime_path, "responseMimeType");
            None
        }
    }
}

/// Gemini 2.5's thinking budget range for a model known to be one (min, max, whether 0
/// turns it off), from Google's thinking guide.
fn budget_range(model: &str) -> Option<(u64, u64, bool)> {
    let m = model.rsplit('/').next().unwrap_or(model);
    if m.starts_with("gemini-2.5-pro") {
        Some((128, 32768, false))
    } else if m.starts_with("gemini-2.5-flash-lite") {
        Some((512, 24576, true))
    } else if m.starts_with("gemini-2.5-flash") {
        Some((1, 24576, true))
    } else {
        None
    }
}

/// Gemini's OpenAPI-style schema as JSON Schema: type names in lower case.
fn json_schema_of_gemini(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("type", Value::String(t)) => Value::String(t.to_lowercase()),
                        (_, other) => json_schema_of_gemini(other),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(json_schema_of_gemini).collect()),
        other => other.clone(),
    }
}

/// The keys of Gemini's `Schema` object; a schema using others goes in
/// `parametersJsonSchema`, which takes any JSON Schema.
const GEMINI_SCHEMA_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

fn fits_gemini_schema(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.iter().all(|(k, v)| {
            GEMINI_SCHEMA_KEYS.contains(&k.as_str())
                && match k.as_str() {
                    // Property names are free; their schemas are not.
                    "properties" => v
                        .as_object()
                        .is_some_and(|p| p.values().all(fits_gemini_schema)),
                    "items" => fits_gemini_schema(v),
                    "anyOf" => v
                        .as_array()
                        .is_some_and(|a| a.iter().all(fits_gemini_schema)),
                    "type" => v.is_string(),
                    _ => true,
                }
        }),
        _ => false,
    }
}

/// The settings as this dialect writes them.
impl Writer<'_> {
    pub(crate) fn gemini(&mut self, mut s: Settings) {
        if let Some(m) = s.model.as_ref().and_then(Value::as_str) {
            self.notes.push(Note::new(
                NoteKind::Moved,
                "model",
                "/model".into(),
                format!(
                    "Gemini takes the model in the URL: POST /v1beta/models/{m}:generateContent"
                ),
            ));
        }
        if s.stream == Some(Value::Bool(true)) {
            self.notes.push(Note::new(
                NoteKind::Moved,
                "setting",
                "/stream".into(),
                "Gemini streams from another URL: :streamGenerateContent?alt=sse".into(),
            ));
        }
        let mut gc = Map::new();
        put_opt(&mut gc, "maxOutputTokens", s.max_tokens);
        put_opt(&mut gc, "temperature", s.temperature);
        put_opt(&mut gc, "topP", s.top_p);
        put_opt(&mut gc, "topK", s.top_k);
        put_opt(&mut gc, "stopSequences", s.stop);
        put_opt(&mut gc, "seed", s.seed);
        put_opt(&mut gc, "presencePenalty", s.presence_penalty);
        put_opt(&mut gc, "frequencyPenalty", s.frequency_penalty);
        let model = s.model.as_ref().and_then(Value::as_str).map(str::to_string);
        let tc = self.gemini_thinking(
            (
                s.thinking.take(),
                s.effort.take(),
                s.include_thoughts.take(),
            ),
            model.as_deref(),
        );
        if !tc.is_empty() {
            gc.insert("thinkingConfig".into(), Value::Object(tc));
        }
        match s.format.take() {
            Some(Format::JsonObject) => {
                gc.insert("responseMimeType".into(), "application/json".into());
            }
            Some(Format::JsonSchema(f)) => {
                let Schema {
                    name,
                    description,
                    schema,
                    strict: _,
                } = *f;
                // Gemini holds the answer to the schema (controlled generation): strict
                // is what it does.
                gc.insert("responseMimeType".into(), "application/json".into());
                if let Some(p) = schema {
                    let key = if fits_gemini_schema(&p) {
                        "responseSchema"
                    } else {
                        "responseJsonSchema"
                    };
                    gc.insert(key.into(), p);
                }
                if name.is_some() || description.is_some() {
                    let detail = "the schema's name and description have no place in Gemini's responseSchema".to_string();
                    self.lost("response-format", "response_format", detail);
                }
            }
            Some(Format::Text) | None => {}
        }
        if !gc.is_empty() {
            self.out
                .insert("generationConfig".into(), Value::Object(gc));
        }
        if !s.tools.is_empty() {
            let decls: Vec<Value> = s
                .tools
                .into_iter()
                .map(|f| {
                    self.strict_lost(&f.name, f.strict.as_ref());
                    let mut o = Map::new();
                    o.insert("name".into(), Value::String(f.name));
                    put_opt(&mut o, "description", f.description);
                    if let Some(p) = f.parameters {
                        let key = if fits_gemini_schema(&p) {
                            "parameters"
                        } else {
                            "parametersJsonSchema"
                        };
                        o.insert(key.into(), p);
                    }
                    Value::Object(o)
                })
                .collect();
            self.out.insert(
                "tools".into(),
                Value::Array(vec![object([(
                    "functionDeclarations",
                    Value::Array(decls),
                )])]),
            );
        }
        if let Some(c) = s.tool_choice {
            let fcc = match c {
                Choice::Auto => json!({"mode": "AUTO"}),
                Choice::None => json!({"mode": "NONE"}),
                Choice::Required => json!({"mode": "ANY"}),
                Choice::Function(n) => json!({"mode": "ANY", "allowedFunctionNames": [n]}),
            };
            self.out.insert(
                "toolConfig".into(),
                object([("functionCallingConfig", fcc)]),
            );
        }
        if s.parallel == Some(false) {
            self.drop("parallel_tool_calls", Some(Value::Bool(false)));
        }
        self.drop("user", s.user);
    }

    /// A thinking budget as Gemini's `thinkingBudget`, within the range of a Gemini 2.5
    /// model when the model is known to be one (a change is noted).
    /// `generationConfig.thinkingConfig`: the thinking budget (or Gemini 3's level from a
    /// reasoning effort) and whether thoughts are returned.
    fn gemini_thinking(
        &mut self,
        (budget, effort, include_thoughts): (Option<Thinking>, Option<Value>, Option<bool>),
        model: Option<&str>,
    ) -> Map<String, Value> {
        let mut tc = Map::new();
        if let Some(t) = budget {
            match t.neutral() {
                Some(n) => {
                    // Claude returns the thinking it does; thinking Claude does not do
                    // (off, raised to a model's minimum) asks for none.
                    let claude = matches!(t, Thinking::Claude(_)) && n != Thinking::Off;
                    if let Some(b) = self.gemini_budget(n, model) {
                        tc.insert("thinkingBudget".into(), Value::from(b));
                        let include = include_thoughts.or((claude && b != 0).then_some(true));
                        put_opt(&mut tc, "includeThoughts", include.map(Value::Bool));
                    }
                }
                None => {
                    let detail = format!(
                        "this `thinking` of {} has no equivalent in Gemini's thinking budget",
                        self.from
                    );
                    self.lost("thinking", "thinking", detail);
                }
            }
        }
        if let Some(e) = effort {
            let gemini2 = model
                .and_then(crate::dialect::gemini::generation)
                .is_some_and(|g| g < 3);
            let level = e.as_str().map(str::to_ascii_lowercase);
            match level.as_deref() {
                _ if tc.contains_key("thinkingBudget") => self.lost(
                    "setting",
                    "reasoning_effort",
                    "a reasoning effort beside a thinking budget: Gemini takes one of thinkingBudget and thinkingLevel, and the budget is kept".into(),
                ),
                _ if gemini2 => self.lost(
                    "setting",
                    "reasoning_effort",
                    "the reasoning effort is Gemini 3's `thinkingLevel`, which Gemini 2 models do not take".into(),
                ),
                Some(l @ ("minimal" | "low" | "medium" | "high")) => {
                    tc.insert("thinkingLevel".into(), Value::from(l));
                }
                Some("xhigh") => {
                    let path = match self.from {
                        crate::Dialect::OpenAiResponses => "/reasoning/effort",
                        _ => "/reasoning_effort",
                    };
                    self.changed(
                        "setting",
                        path,
                        "the reasoning effort `xhigh` is above Gemini's highest thinking level: `high`".into(),
                    );
                    tc.insert("thinkingLevel".into(), Value::from("high"));
                }
                _ => self.drop("reasoning_effort", Some(e)),
            }
        }
        if !tc.contains_key("thinkingBudget") {
            if let Some(i) = include_thoughts {
                tc.insert("includeThoughts".into(), Value::Bool(i));
            }
        }
        tc
    }

    fn gemini_budget(&mut self, t: Thinking, model: Option<&str>) -> Option<i64> {
        let b = match t {
            Thinking::Budget(b) => b,
            Thinking::Off => 0,
            Thinking::Dynamic => return Some(-1),
            Thinking::Claude(_) => return None,
        };
        let Some((min, max, can_off)) = model.and_then(budget_range) else {
            return i64::try_from(b).ok();
        };
        let path = format!("/{}", source_thinking_path(self.from));
        let m = model.unwrap_or_default();
        let fitted = match b {
            0 if can_off => 0,
            0 => {
                self.changed(
                    "thinking",
                    &path,
                    format!("{m} cannot turn thinking off: its smallest budget, {min}"),
                );
                min
            }
            b if b < min => {
                self.changed(
                    "thinking",
                    &path,
                    format!("the thinking budget of {b} is under {m}'s minimum: {min}"),
                );
                min
            }
            b if b > max => {
                self.changed(
                    "thinking",
                    &path,
                    format!("the thinking budget of {b} is over {m}'s maximum: {max}"),
                );
                max
            }
            b => b,
        };
        i64::try_from(fitted).ok()
    }
}

/// Where the thinking was in the source, for a note.
fn source_thinking_path(from: crate::Dialect) -> &'static str {
    match from {
        crate::Dialect::BedrockConverse => "additionalModelRequestFields/thinking",
        _ => "thinking",
    }
}
