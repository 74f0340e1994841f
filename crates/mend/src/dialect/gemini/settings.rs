//! Gemini top-level settings (`generationConfig`, `toolConfig`, function declarations)
//! <-> the neutral [`Settings`](crate::convert::settings) convert carries.

use serde_json::{json, Map, Value};

use crate::canonical::Extra;
use crate::chain::escape;
use crate::convert::settings::{put_opt, Choice, Function, Reader, Settings, Writer};
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
pub(crate) fn read(req: &Extra, r: &mut Reader) -> Settings {
    let mut s = Settings::default();
    for (k, v) in req {
        let path = format!("/{}", escape(k));
        match camel(k).as_str() {
            "model" => s.model = Some(v.clone()),
            "generationConfig" => {
                for (gk, gv) in v.as_object().into_iter().flatten() {
                    let slot = match camel(gk).as_str() {
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
                            let Some(name) = d.get("name").and_then(Value::as_str) else {
                                r.tool(format!("{path}/{i}/{}/{j}", escape(tk)), d);
                                continue;
                            };
                            let parameters = d
                                .get("parametersJsonSchema")
                                .or_else(|| d.get("parameters_json_schema"))
                                .cloned()
                                .or_else(|| d.get("parameters").map(json_schema_of_gemini));
                            s.tools.push(Function {
                                name: name.to_string(),
                                description: d.get("description").cloned(),
                                parameters,
                                strict: None,
                            });
                        }
                    }
                }
            }
            "toolConfig" => {
                let fcc = v
                    .get("functionCallingConfig")
                    .or_else(|| v.get("function_calling_config"));
                let mode = fcc.and_then(|c| c.get("mode")).and_then(Value::as_str);
                let allowed = fcc
                    .and_then(|c| {
                        c.get("allowedFunctionNames")
                            .or_else(|| c.get("allowed_function_names"))
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
    pub(crate) fn gemini(&mut self, s: Settings) {
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
            self.out
                .insert("tools".into(), json!([{ "functionDeclarations": decls }]));
        }
        if let Some(c) = s.tool_choice {
            let fcc = match c {
                Choice::Auto => json!({"mode": "AUTO"}),
                Choice::None => json!({"mode": "NONE"}),
                Choice::Required => json!({"mode": "ANY"}),
                Choice::Function(n) => json!({"mode": "ANY", "allowedFunctionNames": [n]}),
            };
            self.out
                .insert("toolConfig".into(), json!({ "functionCallingConfig": fcc }));
        }
        if s.parallel == Some(false) {
            self.drop("parallel_tool_calls", Some(Value::Bool(false)));
        }
        self.drop("user", s.user);
        self.drop("reasoning_effort", s.effort);
        self.drop("thinking", s.thinking);
    }
}
