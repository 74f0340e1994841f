//! Bedrock Converse top-level settings (`inferenceConfig`, `toolConfig`, the
//! model-specific `additionalModelRequestFields`) <-> the neutral
//! [`Settings`](crate::convert::settings) convert carries.
//!
//! The model is in the URL (`POST /model/{modelId}/converse`): a target model is said in
//! a note, never written. `additionalModelRequestFields` is passed to the model as it
//! is: Claude's `thinking` and `top_k`, gpt-oss's `reasoning_effort`; top_k and the
//! effort are written there only for the models that take them.

use crate::convert::settings::object;
use crate::json::Field;
use serde_json::{json, Map, Value};

use crate::chain::escape;
use crate::convert::settings::{put_opt, Choice, Function, Reader, Settings, Thinking, Writer};
use crate::convert::{Note, NoteKind};

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
            "inferenceConfig" => {
                for (ik, iv) in v.as_object().into_iter().flatten() {
                    let slot = match ik.as_str() {
                        "maxTokens" => &mut s.max_tokens,
                        "temperature" => &mut s.temperature,
                        "topP" => &mut s.top_p,
                        "stopSequences" => &mut s.stop,
                        _ if iv.is_null() => continue,
                        _ => {
                            r.unknown(format!("{path}/{}", escape(ik)), ik);
                            continue;
                        }
                    };
                    *slot = Some(iv.clone());
                }
            }
            "toolConfig" => {
                for (tk, tv) in v.as_object().into_iter().flatten() {
                    let sub = format!("{path}/{}", escape(tk));
                    match tk.as_str() {
                        "tools" => read_tools(tv, &sub, &mut s, r),
                        "toolChoice" => {
                            s.tool_choice = match tv.as_object().and_then(one_member) {
                                Some(("auto", _)) => Some(Choice::Auto),
                                Some(("any", _)) => Some(Choice::Required),
                                Some(("tool", t)) => t
                                    .field("name")
                                    .and_then(Value::as_str)
                                    .map(|n| Choice::Function(n.to_string())),
                                _ => None,
                            };
                            if s.tool_choice.is_none() {
                                r.unknown(sub, "toolConfig.toolChoice");
                            }
                        }
                        _ if tv.is_null() => {}
                        _ => r.unknown(sub, &format!("toolConfig.{tk}")),
                    }
                }
            }
            "additionalModelRequestFields" => {
                for (ak, av) in v.as_object().into_iter().flatten() {
                    match ak.as_str() {
                        "thinking" => s.thinking = Some(Thinking::Claude(av.clone())),
                        "top_k" => s.top_k = Some(av.clone()),
                        "reasoning_effort" => s.effort = Some(av.clone()),
                        _ if av.is_null() => {}
                        _ => r.unknown(
                            format!("{path}/{}", escape(ak)),
                            &format!("additionalModelRequestFields.{ak}"),
                        ),
                    }
                }
            }
            // An empty `system` list is no instructions (the canonical reader keeps it
            // here only to write it back).
            "system" if v.as_array().is_some_and(Vec::is_empty) => {}
            _ if v.is_null() => {}
            _ => r.unknown(path, k),
        }
    }
    s
}

fn one_member(o: &Map<String, Value>) -> Option<(&str, &Value)> {
    let mut it = o.iter();
    let (k, v) = it.next()?;
    it.next().is_none().then_some((k.as_str(), v))
}

fn read_tools(v: &Value, path: &str, s: &mut Settings, r: &mut Reader) {
    for (i, t) in v.as_array().into_iter().flatten().enumerate() {
        let spec = t
            .as_object()
            .and_then(one_member)
            .and_then(|(k, spec)| (k == "toolSpec").then_some(spec));
        match spec.and_then(|sp| Some((sp, sp.field("name")?.as_str()?))) {
            Some((sp, name)) => s.tools.push(Function {
                name: name.to_string(),
                description: sp.field("description").cloned(),
                parameters: sp
                    .field("inputSchema")
                    .and_then(|i| i.field("json"))
                    .cloned(),
                strict: sp.field("strict").cloned(),
            }),
            None => r.tool(format!("{path}/{i}"), t),
        }
    }
}

/// Claude on Bedrock (`anthropic.claude-…`, `us.anthropic.claude-…`, and the
/// inference-profile ARNs that name it).
fn is_claude(model: &str) -> bool {
    model.contains("anthropic.") || model.contains("claude")
}

/// OpenAI's open-weight models on Bedrock (`openai.gpt-oss-…`).
fn is_gpt_oss(model: &str) -> bool {
    model.contains("openai.") || model.contains("gpt-oss")
}

/// The settings as this dialect writes them.
impl Writer<'_> {
    pub(crate) fn converse(&mut self, mut s: Settings) {
        let model = s.model.as_ref().and_then(Value::as_str).map(str::to_string);
        if let Some(m) = &model {
            self.notes.push(Note::new(
                NoteKind::Moved,
                "model",
                "/model".into(),
                format!("Converse takes the model in the URL: POST /model/{m}/converse"),
            ));
        }
        if s.stream == Some(Value::Bool(true)) {
            self.notes.push(Note::new(
                NoteKind::Moved,
                "setting",
                "/stream".into(),
                "Converse streams from another URL: POST /model/{modelId}/converse-stream".into(),
            ));
        }
        // Claude's thinking, for a Claude model (or one not named); its budget and the
        // token limit within Claude's constraints.
        let claude = model.as_deref().is_none_or(is_claude);
        let mut thinking = None;
        match s.thinking.take() {
            Some(t) if claude => {
                let limit = s.max_tokens.as_ref().and_then(Value::as_u64);
                let (t, raised) = self.claude_thinking(t, limit);
                thinking = t;
                if raised != limit {
                    s.max_tokens = raised.map(Value::from);
                }
                self.thoughts_hidden_lost(s.include_thoughts);
            }
            Some(_) => {
                let detail = format!(
                    "thinking settings of {} are Claude's in Converse, and the model is not Claude",
                    self.from
                );
                self.lost("thinking", "thinking", detail);
            }
            None => {}
        }
        self.format_lost(s.format.take());
        let mut ic = Map::new();
        put_opt(&mut ic, "maxTokens", s.max_tokens);
        put_opt(&mut ic, "temperature", s.temperature);
        put_opt(&mut ic, "topP", s.top_p);
        put_opt(&mut ic, "stopSequences", s.stop);
        if !ic.is_empty() {
            self.out.insert("inferenceConfig".into(), Value::Object(ic));
        }
        let had_tools = !s.tools.is_empty();
        if had_tools {
            let tools: Vec<Value> = s
                .tools
                .into_iter()
                .map(|f| {
                    let mut o = Map::new();
                    o.insert("name".into(), Value::String(f.name));
                    put_opt(&mut o, "description", f.description);
                    let schema = f
                        .parameters
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
                    o.insert("inputSchema".into(), object([("json", schema)]));
                    put_opt(&mut o, "strict", f.strict);
                    object([("toolSpec", Value::Object(o))])
                })
                .collect();
            let mut tc = Map::new();
            tc.insert("tools".into(), Value::Array(tools));
            let choice = match s.tool_choice {
                Some(Choice::Auto) => Some(json!({"auto": {}})),
                Some(Choice::Required) => Some(json!({"any": {}})),
                Some(Choice::Function(n)) => Some(json!({"tool": {"name": n}})),
                Some(Choice::None) => {
                    self.drop("tool_choice", Some(json!("none")));
                    None
                }
                None => None,
            };
            put_opt(&mut tc, "toolChoice", choice);
            self.out.insert("toolConfig".into(), Value::Object(tc));
        } else if let Some(c) = s.tool_choice {
            // Converse refuses a `toolConfig` without tools.
            if c != Choice::None {
                self.drop("tool_choice", Some(json!("a tool choice without tools")));
            }
        }
        let mut extra = Map::new();
        put_opt(&mut extra, "thinking", thinking);
        let claude = model.as_deref().is_some_and(is_claude);
        match s.top_k {
            Some(k) if claude => {
                extra.insert("top_k".into(), k);
            }
            other => self.drop("top_k", other),
        }
        match s.effort {
            Some(e) if model.as_deref().is_some_and(is_gpt_oss) => {
                extra.insert("reasoning_effort".into(), e);
            }
            other => self.drop("reasoning_effort", other),
        }
        if !extra.is_empty() {
            self.out
                .insert("additionalModelRequestFields".into(), Value::Object(extra));
        }
        if s.parallel == Some(false) {
            self.drop("parallel_tool_calls", Some(Value::Bool(false)));
        }
        self.drop("user", s.user);
        self.drop("seed", s.seed);
        self.drop("presence_penalty", s.presence_penalty);
        self.drop("frequency_penalty", s.frequency_penalty);
    }
}
