//! Anthropic top-level settings <-> the neutral [`Settings`](crate::convert::settings)
//! convert carries.

use crate::json::Field;
use serde_json::{json, Map, Value};

use crate::chain::escape;
use crate::convert::settings::{
    object, put_opt, Choice, Function, Reader, Settings, Thinking, Writer, DEFAULT_MAX_TOKENS,
};
use crate::convert::{ConvertOptions, Note, NoteKind};

/// The request's top-level fields as neutral settings; what has no place there is
/// reported lost through `r`.
pub(crate) fn read<'v>(
    req: impl IntoIterator<Item = (&'v String, &'v Value)>,
    r: &mut Reader,
) -> Settings {
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
            "thinking" => s.thinking = Some(Thinking::Claude(v.clone())),
            "tools" => {
                for (i, t) in v.as_array().into_iter().flatten().enumerate() {
                    let custom = matches!(
                        t.field("type").and_then(Value::as_str),
                        None | Some("custom")
                    );
                    match t.field("name").and_then(Value::as_str) {
                        Some(name) if custom => s.tools.push(Function {
                            name: name.to_string(),
                            description: t.field("description").cloned(),
                            parameters: t.field("input_schema").cloned(),
                            strict: t.field("strict").cloned(),
                        }),
                        _ => r.tool(format!("{path}/{i}"), t),
                    }
                }
            }
            "tool_choice" => {
                let name = v.field("name").and_then(Value::as_str);
                s.tool_choice = match (v.field("type").and_then(Value::as_str), name) {
                    (Some("auto"), _) => Some(Choice::Auto),
                    (Some("any"), _) => Some(Choice::Required),
                    (Some("none"), _) => Some(Choice::None),
                    (Some("tool"), Some(n)) => Some(Choice::Function(n.to_string())),
                    _ => None,
                };
                if let Some(Value::Bool(d)) = v.field("disable_parallel_tool_use") {
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

/// The settings as this dialect writes them.
impl Writer<'_> {
    pub(crate) fn anthropic(&mut self, mut s: Settings, opts: &ConvertOptions) {
        self.put("model", s.model);
        let limit = opts
            .max_tokens
            .or_else(|| s.max_tokens.as_ref().and_then(Value::as_u64));
        let (thinking, limit) = match s.thinking.take() {
            Some(t) => self.claude_thinking(t, limit),
            None => (None, limit),
        };
        let max = match (limit, s.max_tokens) {
            (Some(n), _) => Value::from(n),
            // A limit that is not a count is carried for the target check to judge.
            (None, Some(v)) => v,
            (None, None) => {
                // With a thinking budget, the limit must exceed it.
                let budget = thinking
                    .as_ref()
                    .and_then(|t| t.field("budget_tokens"))
                    .and_then(Value::as_u64);
                let (max, why) = match budget {
                    Some(b) if b >= DEFAULT_MAX_TOKENS => (
                        b.saturating_add(DEFAULT_MAX_TOKENS),
                        format!(" above the thinking budget of {b}"),
                    ),
                    _ => (DEFAULT_MAX_TOKENS, String::new()),
                };
                self.notes.push(Note::new(
                    NoteKind::Added,
                    "max-tokens",
                    "/max_tokens".into(),
                    format!(
                        "Anthropic requires `max_tokens` and {} did not give one: {max}{why} (set it with --max-tokens)",
                        self.from
                    ),
                ));
                Value::from(max)
            }
        };
        self.out.insert("max_tokens".into(), max);
        self.put("temperature", s.temperature);
        self.put("top_p", s.top_p);
        self.put("top_k", s.top_k);
        self.put("stop_sequences", s.stop);
        self.put("stream", s.stream);
        self.put("thinking", thinking);
        self.thoughts_hidden_lost(s.include_thoughts);
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
        self.put("metadata", s.user.map(|u| object([("user_id", u)])));
        self.drop("seed", s.seed);
        self.drop("presence_penalty", s.presence_penalty);
        self.drop("frequency_penalty", s.frequency_penalty);
        self.drop("reasoning_effort", s.effort);
        self.format_lost(s.format);
    }
}
