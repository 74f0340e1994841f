//! The request's top-level settings across dialects: model, token limit, sampling, stop
//! sequences, stream, function tools and tool choice.
//!
//! | setting | openai_chat | openai_responses | anthropic | gemini |
//! |---|---|---|---|---|
//! | model | `model` | `model` | `model` | in the URL |
//! | token limit | `max_tokens`, `max_completion_tokens` | `max_output_tokens` | `max_tokens` (required) | `generationConfig.maxOutputTokens` |
//! | sampling | `temperature`, `top_p` | `temperature`, `top_p` | `temperature`, `top_p`, `top_k` | `generationConfig.temperature`, `topP`, `topK` |
//! | stop | `stop` | none | `stop_sequences` | `generationConfig.stopSequences` |
//! | stream | `stream` | `stream` | `stream` | the `:streamGenerateContent` URL |
//! | tools | `tools[].function` | `tools[]` of type `function` | `tools[]` with `input_schema` | `tools[].functionDeclarations` |
//! | tool choice | `tool_choice` | `tool_choice` | `tool_choice` | `toolConfig.functionCallingConfig` |
//! | parallel calls | `parallel_tool_calls` | `parallel_tool_calls` | `tool_choice.disable_parallel_tool_use` | none |
//! | end user | `user` | `user` | `metadata.user_id` | none |
//! | reasoning effort | `reasoning_effort` | `reasoning.effort` | none | none |
//! | seed, penalties | `seed`, `presence_penalty`, `frequency_penalty` | none | none | `generationConfig.seed`, `presencePenalty`, `frequencyPenalty` |
//!
//! Every other field, and every tool that is not a function (web search, code
//! execution, computer use...), is reported as lost.

use serde_json::{json, Map, Value};

use super::{ConvertOptions, Note, NoteKind};
use crate::canonical::{Conversation, Extra};
use crate::chain::escape;
use crate::{Dialect, Profile};

/// The token limit written when the target requires one and neither the source nor the
/// options give it.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// A function tool.
#[derive(Debug, Clone, PartialEq)]
struct Function {
    name: String,
    description: Option<Value>,
    parameters: Option<Value>,
    strict: Option<Value>,
}

/// Which tool the model must use.
#[derive(Debug, Clone, PartialEq)]
enum Choice {
    Auto,
    None,
    Required,
    Function(String),
}

/// The settings every dialect can say something about.
#[derive(Debug, Default)]
struct Settings {
    model: Option<Value>,
    max_tokens: Option<Value>,
    temperature: Option<Value>,
    top_p: Option<Value>,
    top_k: Option<Value>,
    stop: Option<Value>,
    stream: Option<Value>,
    tools: Vec<Function>,
    tool_choice: Option<Choice>,
    parallel: Option<bool>,
    user: Option<Value>,
    seed: Option<Value>,
    presence_penalty: Option<Value>,
    frequency_penalty: Option<Value>,
    /// OpenAI's reasoning effort (`low`, `medium`, `high`...).
    effort: Option<Value>,
}

struct Reader<'a> {
    from: Dialect,
    to: Dialect,
    notes: &'a mut Vec<Note>,
}

impl Reader<'_> {
    fn lost(&mut self, what: &'static str, path: String, detail: String) {
        self.notes
            .push(Note::new(NoteKind::Lost, what, path, detail));
    }

    fn unknown(&mut self, path: String, key: &str) {
        let detail = format!(
            "the setting `{key}` of {} has no equivalent in {}",
            self.from, self.to
        );
        self.lost("setting", path, detail);
    }

    fn tool(&mut self, path: String, t: &Value) {
        let kind = t
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| t.as_object().and_then(|o| o.keys().next().cloned()))
            .unwrap_or_else(|| "tool".to_string());
        let detail = format!(
            "the `{kind}` tool of {} is not a function tool, and {} cannot run it",
            self.from, self.to
        );
        self.lost("tool", path, detail);
    }
}

/// The target's top-level fields (everything but the history) for `conv`'s.
pub(crate) fn convert_settings(
    conv: &Conversation,
    from: Dialect,
    to: Dialect,
    opts: &ConvertOptions,
    profile: &Profile,
    notes: &mut Vec<Note>,
) -> Extra {
    let mut r = Reader { from, to, notes };
    let mut s = match from {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => read_openai(&conv.request, &mut r),
        Dialect::Anthropic => read_anthropic(&conv.request, &mut r),
        Dialect::Gemini => read_gemini(&conv.request, &mut r),
    };
    if let Some(m) = &opts.model {
        s.model = Some(Value::String(m.clone()));
    }
    let mut w = Writer {
        out: Map::new(),
        from,
        to,
        notes: r.notes,
    };
    match to {
        Dialect::OpenAiChat => w.openai(s, true, profile),
        Dialect::OpenAiResponses => w.openai(s, false, profile),
        Dialect::Anthropic => w.anthropic(s, opts),
        Dialect::Gemini => w.gemini(s),
    }
    w.out
}

fn read_openai(req: &Extra, r: &mut Reader) -> Settings {
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
            "presence_penalty" if chat => s.presence_penalty = Some(v.clone()),
            "frequency_penalty" if chat => s.frequency_penalty = Some(v.clone()),
            _ if v.is_null() => {}
            _ => r.unknown(path, k),
        }
    }
    s
}

fn openai_function(t: &Value, chat: bool) -> Option<Function> {
    if t.get("type").and_then(Value::as_str) != Some("function") {
        return None;
    }
    let f = if chat { t.get("function")? } else { t };
    Some(Function {
        name: f.get("name")?.as_str()?.to_string(),
        description: f.get("description").cloned(),
        parameters: f.get("parameters").cloned(),
        strict: f.get("strict").cloned(),
    })
}

fn openai_choice(v: &Value, chat: bool) -> Option<Choice> {
    match v {
        Value::String(s) => match s.as_str() {
            "auto" => Some(Choice::Auto),
            "none" => Some(Choice::None),
            "required" => Some(Choice::Required),
            _ => None,
        },
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("function") => {
            let f = if chat { o.get("function")? } else { v };
            Some(Choice::Function(f.get("name")?.as_str()?.to_string()))
        }
        _ => None,
    }
}

fn read_anthropic(req: &Extra, r: &mut Reader) -> Settings {
    let mut s = Settings::default();
    for (k, v) in req {
        let path = format!("/{}", escape(k));
        match k.as_str() {
            "model" => s.model = Some(v.clone()),
            "max_tokens" => s.max_tokens = Some(v.clone()),
            "temperature" => s.temperature = Some(v.clone()),
            "top_p" => s.top_p = Some(v.clone()),
            "top_k" => s.top_k = Some(v.clone()),
            "stop_sequences" => s.stop = Some(v.clone()),
            "stream" => s.stream = Some(v.clone()),
            "tools" => {
                for (i, t) in v.as_array().into_iter().flatten().enumerate() {
                    let custom =
                        matches!(t.get("type").and_then(Value::as_str), None | Some("custom"));
                    match t.get("name").and_then(Value::as_str) {
                        Some(name) if custom => s.tools.push(Function {
                            name: name.to_string(),
                            description: t.get("description").cloned(),
                            parameters: t.get("input_schema").cloned(),
                            strict: t.get("strict").cloned(),
                        }),
                        _ => r.tool(format!("{path}/{i}"), t),
                    }
                }
            }
            "tool_choice" => {
                let name = v.get("name").and_then(Value::as_str);
                s.tool_choice = match (v.get("type").and_then(Value::as_str), name) {
                    (Some("auto"), _) => Some(Choice::Auto),
                    (Some("any"), _) => Some(Choice::Required),
                    (Some("none"), _) => Some(Choice::None),
                    (Some("tool"), Some(n)) => Some(Choice::Function(n.to_string())),
                    _ => None,
                };
                if let Some(Value::Bool(d)) = v.get("disable_parallel_tool_use") {
                    s.parallel = Some(!d);
                }
            }
            "metadata" => match v.as_object() {
                Some(o) => {
                    for (mk, mv) in o {
                        match mk.as_str() {
                            "user_id" => s.user = Some(mv.clone()),
                            _ => r.unknown(format!("{path}/{}", escape(mk)), mk),
                        }
                    }
                }
                None => r.unknown(path, k),
            },
            _ if v.is_null() => {}
            _ => r.unknown(path, k),
        }
    }
    s
}

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

fn read_gemini(req: &Extra, r: &mut Reader) -> Settings {
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

struct Writer<'a> {
    out: Map<String, Value>,
    from: Dialect,
    to: Dialect,
    notes: &'a mut Vec<Note>,
}

impl Writer<'_> {
    fn put(&mut self, k: &str, v: Option<Value>) {
        if let Some(v) = v {
            self.out.insert(k.to_string(), v);
        }
    }

    /// A setting the target has no place for.
    fn drop(&mut self, source_key: &str, v: Option<Value>) {
        if v.is_some_and(|v| !v.is_null()) {
            let detail = format!(
                "the setting `{source_key}` of {} has no equivalent in {}",
                self.from, self.to
            );
            let path = format!("/{}", source_key_path(self.from, source_key));
            self.notes
                .push(Note::new(NoteKind::Lost, "setting", path, detail));
        }
    }

    /// Strict schema adherence is OpenAI's: elsewhere it is said to be lost.
    fn strict_lost(&mut self, name: &str, strict: Option<&Value>) {
        if strict == Some(&Value::Bool(true)) {
            self.notes.push(Note::new(
                NoteKind::Lost,
                "setting",
                "/tools".into(),
                format!(
                    "`strict: true` on the tool `{name}`: {} does not enforce the schema strictly",
                    self.to
                ),
            ));
        }
    }

    /// OpenAI chat (`chat`) or Responses: the same settings under slightly different names.
    fn openai(&mut self, s: Settings, chat: bool, profile: &Profile) {
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
                    put_opt(&mut o, "strict", f.strict);
                    if chat {
                        json!({"type": "function", "function": o})
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
            self.put("reasoning", s.effort.map(|e| json!({ "effort": e })));
        }
    }

    fn anthropic(&mut self, s: Settings, opts: &ConvertOptions) {
        self.put("model", s.model);
        let max = match (opts.max_tokens, s.max_tokens) {
            (Some(n), _) => Value::from(n),
            (None, Some(v)) => v,
            (None, None) => {
                self.notes.push(Note::new(
                    NoteKind::Added,
                    "max-tokens",
                    "/max_tokens".into(),
                    format!(
                        "Anthropic requires `max_tokens` and {} did not give one: {DEFAULT_MAX_TOKENS} (set it with --max-tokens)",
                        self.from
                    ),
                ));
                Value::from(DEFAULT_MAX_TOKENS)
            }
        };
        self.out.insert("max_tokens".into(), max);
        self.put("temperature", s.temperature);
        self.put("top_p", s.top_p);
        self.put("top_k", s.top_k);
        self.put("stop_sequences", s.stop);
        self.put("stream", s.stream);
        if !s.tools.is_empty() {
            let tools = s
                .tools
                .into_iter()
                .map(|f| {
                    self.strict_lost(&f.name, f.strict.as_ref());
                    let mut o = Map::new();
                    o.insert("name".into(), Value::String(f.name));
                    put_opt(&mut o, "description", f.description);
                    let schema = f
                        .parameters
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
                    o.insert("input_schema".into(), schema);
                    Value::Object(o)
                })
                .collect();
            self.out.insert("tools".into(), Value::Array(tools));
        }
        let mut choice = s.tool_choice.map(|c| match c {
            Choice::Auto => json!({"type": "auto"}),
            Choice::None => json!({"type": "none"}),
            Choice::Required => json!({"type": "any"}),
            Choice::Function(n) => json!({"type": "tool", "name": n}),
        });
        if s.parallel == Some(false) {
            let c = choice.get_or_insert_with(|| json!({"type": "auto"}));
            if let Some(o) = c.as_object_mut() {
                o.insert("disable_parallel_tool_use".into(), Value::Bool(true));
            }
        }
        self.put("tool_choice", choice);
        self.put("metadata", s.user.map(|u| json!({ "user_id": u })));
        self.drop("seed", s.seed);
        self.drop("presence_penalty", s.presence_penalty);
        self.drop("frequency_penalty", s.frequency_penalty);
        self.drop("reasoning_effort", s.effort);
    }

    fn gemini(&mut self, s: Settings) {
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

fn put_opt(o: &mut Map<String, Value>, k: &str, v: Option<Value>) {
    if let Some(v) = v {
        o.insert(k.to_string(), v);
    }
}

/// Where a neutral setting sat in the source, for a note.
fn source_key_path(from: Dialect, key: &str) -> String {
    match (from, key) {
        (Dialect::Gemini, "top_k") => "generationConfig/topK".into(),
        (Dialect::Gemini, "stop") => "generationConfig/stopSequences".into(),
        (Dialect::Gemini, "seed") => "generationConfig/seed".into(),
        (Dialect::Gemini, "presence_penalty") => "generationConfig/presencePenalty".into(),
        (Dialect::Gemini, "frequency_penalty") => "generationConfig/frequencyPenalty".into(),
        (Dialect::Anthropic, "stop") => "stop_sequences".into(),
        (Dialect::Anthropic, "user") => "metadata/user_id".into(),
        (Dialect::OpenAiResponses, "reasoning_effort") => "reasoning/effort".into(),
        (Dialect::Anthropic, "parallel_tool_calls") => {
            "tool_choice/disable_parallel_tool_use".into()
        }
        _ => key.to_string(),
    }
}
