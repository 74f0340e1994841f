//! The request's top-level settings across dialects: model, token limit, sampling, stop
//! sequences, stream, function tools and tool choice.
//!
//! | setting | openai_chat | openai_responses | anthropic | gemini | bedrock_converse |
//! |---|---|---|---|---|---|
//! | model | `model` | `model` | `model` | in the URL | in the URL |
//! | token limit | `max_tokens`, `max_completion_tokens` | `max_output_tokens` | `max_tokens` (required) | `generationConfig.maxOutputTokens` | `inferenceConfig.maxTokens` |
//! | sampling | `temperature`, `top_p` | `temperature`, `top_p` | `temperature`, `top_p`, `top_k` | `generationConfig.temperature`, `topP`, `topK` | `inferenceConfig.temperature`, `topP`; Claude's `additionalModelRequestFields.top_k` |
//! | stop | `stop` | none | `stop_sequences` | `generationConfig.stopSequences` | `inferenceConfig.stopSequences` |
//! | stream | `stream` | `stream` | `stream` | the `:streamGenerateContent` URL | the `converse-stream` URL |
//! | tools | `tools[].function` | `tools[]` of type `function` | `tools[]` with `input_schema` | `tools[].functionDeclarations` | `toolConfig.tools[].toolSpec` |
//! | tool choice | `tool_choice` | `tool_choice` | `tool_choice` | `toolConfig.functionCallingConfig` | `toolConfig.toolChoice` (no `none`) |
//! | parallel calls | `parallel_tool_calls` | `parallel_tool_calls` | `tool_choice.disable_parallel_tool_use` | none | none |
//! | end user | `user` | `user` | `metadata.user_id` | none | none |
//! | reasoning effort | `reasoning_effort` | `reasoning.effort` | none | none | gpt-oss's `additionalModelRequestFields.reasoning_effort` |
//! | thinking | none | none | `thinking` | `generationConfig.thinkingConfig.thinkingBudget` (0 off, -1 dynamic), `includeThoughts` | Claude's `additionalModelRequestFields.thinking` |
//! | thinking level | `reasoning_effort` | `reasoning.effort` | none | Gemini 3's `generationConfig.thinkingConfig.thinkingLevel` | gpt-oss's `reasoning_effort` |
//! | answer format | `response_format` | `text.format` | none | `generationConfig.responseMimeType` with `responseSchema` or `responseJsonSchema` | none |
//! | seed, penalties | `seed`, `presence_penalty`, `frequency_penalty` | none | none | `generationConfig.seed`, `presencePenalty`, `frequencyPenalty` | none |
//!
//! Every other field, and every tool that is not a function (web search, code
//! execution, computer use...), is reported as lost.
//!
//! Thinking crosses between Anthropic (and Converse's Claude) and Gemini as a budget:
//! Anthropic's `enabled` budget is Gemini's `thinkingBudget` (with `includeThoughts`, as
//! Anthropic returns its thinking), `disabled` is 0, `adaptive` is -1. The other way,
//! Claude's constraints are kept and every change said in a `changed` note: a budget
//! under 1024 is raised to 1024, a `max_tokens` not above the budget is raised to the
//! budget plus that limit (both allowances kept), and Gemini's dynamic -1, which Claude
//! has no equivalent of unless adaptive, becomes the minimum budget of 1024. Gemini
//! 2.5's ranges (Pro 128 to 32768 and never off, Flash up to 24576, Flash-Lite 512 to
//! 24576) clamp a budget written for a model known to be one of them. Gemini 3's
//! `thinkingLevel` is the reasoning effort (`minimal`, `low`, `medium`, `high`).
//!
//! This module holds the neutral `Settings` and the driver; each dialect's reader and
//! writer of them is in its folder (`dialect/<d>/settings.rs`; OpenAI chat and Responses
//! share one, in `dialect/openai_chat/settings.rs`).

use crate::json::Field;
use serde_json::{json, Map, Value};

use super::{ConvertOptions, Note, NoteKind};
use crate::canonical::Extra;
use crate::dialect::anthropic::settings as anthropic;
use crate::dialect::bedrock_converse::settings as converse;
use crate::dialect::gemini::settings as gemini;
use crate::dialect::openai_chat::settings as openai;
use crate::{Dialect, Profile};

/// The token limit written when the target requires one and neither the source nor the
/// options give it.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// A function tool.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Function {
    pub(crate) name: String,
    pub(crate) description: Option<Value>,
    pub(crate) parameters: Option<Value>,
    pub(crate) strict: Option<Value>,
}

/// Which tool the model must use.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Choice {
    Auto,
    None,
    Required,
    Function(String),
}

/// The settings every dialect can say something about.
#[derive(Debug, Default)]
pub(crate) struct Settings {
    pub(crate) model: Option<Value>,
    pub(crate) max_tokens: Option<Value>,
    pub(crate) temperature: Option<Value>,
    pub(crate) top_p: Option<Value>,
    pub(crate) top_k: Option<Value>,
    pub(crate) stop: Option<Value>,
    pub(crate) stream: Option<Value>,
    pub(crate) tools: Vec<Function>,
    pub(crate) tool_choice: Option<Choice>,
    pub(crate) parallel: Option<bool>,
    pub(crate) user: Option<Value>,
    pub(crate) seed: Option<Value>,
    pub(crate) presence_penalty: Option<Value>,
    pub(crate) frequency_penalty: Option<Value>,
    /// OpenAI's reasoning effort (`low`, `medium`, `high`...), Gemini 3's thinking level.
    pub(crate) effort: Option<Value>,
    /// The thinking budget: Claude's extended thinking, Gemini's `thinkingConfig`.
    pub(crate) thinking: Option<Thinking>,
    /// Gemini's `thinkingConfig.includeThoughts`.
    pub(crate) include_thoughts: Option<bool>,
    /// The form of the answer: chat's `response_format`, Responses' `text.format`,
    /// Gemini's `responseMimeType` with its schema.
    pub(crate) format: Option<Format>,
}

/// How much the model may think before it answers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Thinking {
    /// Anthropic's `thinking` object as given (Converse's Claude passes it on as it is):
    /// `{"type": "enabled", "budget_tokens": N}`, `adaptive`, `disabled`.
    Claude(Value),
    /// A budget in tokens (Gemini's `thinkingBudget` above 0).
    Budget(u64),
    /// No thinking (Gemini's `thinkingBudget: 0`).
    Off,
    /// The model decides how much (Gemini's `thinkingBudget: -1`).
    Dynamic,
}

impl Thinking {
    /// The same as Anthropic's `enabled` budget, `disabled`, `adaptive` (Dynamic), or
    /// None for an object of another shape.
    pub(crate) fn neutral(&self) -> Option<Thinking> {
        let Thinking::Claude(v) = self else {
            return Some(self.clone());
        };
        let o = v.as_object()?;
        let known = o.keys().all(|k| k == "type" || k == "budget_tokens");
        match (
            o.field("type").and_then(Value::as_str),
            o.field("budget_tokens"),
        ) {
            (Some("enabled"), Some(b)) if known => b.as_u64().map(Thinking::Budget),
            (Some("disabled"), None) if known => Some(Thinking::Off),
            (Some("adaptive"), None) if known => Some(Thinking::Dynamic),
            _ => None,
        }
    }
}

/// The form the answer must take.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Format {
    /// Free text (the default everywhere).
    Text,
    /// Any JSON object.
    JsonObject,
    /// JSON matching a schema.
    JsonSchema(Box<Schema>),
}

/// A JSON schema the answer must match, with OpenAI's name and strictness.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Schema {
    pub(crate) name: Option<Value>,
    pub(crate) description: Option<Value>,
    pub(crate) schema: Option<Value>,
    pub(crate) strict: Option<Value>,
}

/// Anthropic's smallest thinking budget ("budget_tokens: Input should be greater than or
/// equal to 1024").
pub const CLAUDE_MIN_THINKING_BUDGET: u64 = 1024;

pub(crate) struct Reader<'a> {
    pub(crate) from: Dialect,
    pub(crate) to: Dialect,
    pub(crate) notes: &'a mut Vec<Note>,
}

impl Reader<'_> {
    pub(crate) fn lost(&mut self, what: &'static str, path: String, detail: String) {
        self.notes
            .push(Note::new(NoteKind::Lost, what, path, detail));
    }

    pub(crate) fn unknown(&mut self, path: String, key: &str) {
        let detail = format!(
            "the setting `{key}` of {} has no equivalent in {}",
            self.from, self.to
        );
        self.lost("setting", path, detail);
    }

    pub(crate) fn tool(&mut self, path: String, t: &Value) {
        let kind = t
            .field("type")
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

/// The target's top-level fields (everything but the history) for the source's
/// `request` members (the ones its canonical read leaves out of the history, read from
/// the source body: see [`Conversation::from_request_keys`](crate::canonical::Conversation::from_request_keys)).
pub(crate) fn convert_settings<'v>(
    request: impl IntoIterator<Item = (&'v String, &'v Value)>,
    from: Dialect,
    to: Dialect,
    opts: &ConvertOptions,
    model: Option<&str>,
    profile: &Profile,
    notes: &mut Vec<Note>,
) -> Extra {
    let mut r = Reader { from, to, notes };
    let req = request;
    let mut s = match from {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => openai::read(req, &mut r),
        Dialect::Anthropic => anthropic::read(req, &mut r),
        Dialect::Gemini => gemini::read(req, &mut r),
        Dialect::BedrockConverse => converse::read(req, &mut r),
    };
    // The target's model, resolved by `model.rs` (the source's may not be carried).
    s.model = model.map(|m| Value::String(m.to_string()));
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
        Dialect::BedrockConverse => w.converse(s),
    }
    w.out
}

pub(crate) struct Writer<'a> {
    pub(crate) out: Map<String, Value>,
    pub(crate) from: Dialect,
    pub(crate) to: Dialect,
    pub(crate) notes: &'a mut Vec<Note>,
}

impl Writer<'_> {
    pub(crate) fn put(&mut self, k: &str, v: Option<Value>) {
        if let Some(v) = v {
            self.out.insert(k.to_string(), v);
        }
    }

    /// A setting the target has no place for.
    pub(crate) fn drop(&mut self, source_key: &str, v: Option<Value>) {
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

    /// A value written otherwise than the source said, because the target constrains it.
    pub(crate) fn changed(&mut self, what: &'static str, path: &str, detail: String) {
        self.notes
            .push(Note::new(NoteKind::Changed, what, path.to_string(), detail));
    }

    /// A neutral setting the target has no place for, with the detail said.
    pub(crate) fn lost(&mut self, what: &'static str, source_key: &str, detail: String) {
        let path = format!("/{}", source_key_path(self.from, source_key));
        self.notes
            .push(Note::new(NoteKind::Lost, what, path, detail));
    }

    /// The answer format, for a target with no place for it: the default (text) needs
    /// none.
    pub(crate) fn format_lost(&mut self, f: Option<Format>) {
        if let Some(f @ (Format::JsonObject | Format::JsonSchema(_))) = f {
            let kind = match f {
                Format::JsonObject => "JSON object",
                _ => "JSON schema",
            };
            let detail = format!(
                "the {kind} answer format of {} has no equivalent in {}",
                self.from, self.to
            );
            self.lost("response-format", "response_format", detail);
        }
    }

    /// Claude's thinking for Anthropic or Converse, within Claude's constraints: the
    /// object to write, and the token limit to write with it (raised above the budget
    /// when it is not). Every change is noted; a thinking Claude cannot take is lost.
    pub(crate) fn claude_thinking(
        &mut self,
        t: Thinking,
        max: Option<u64>,
    ) -> (Option<Value>, Option<u64>) {
        let limit_path = format!("/{}", source_key_path(self.from, "max_tokens"));
        let budget = match (&t, t.neutral()) {
            (Thinking::Claude(v), Some(Thinking::Budget(b))) => (b, Some(v.clone())),
            (Thinking::Claude(v), _) => return (Some(v.clone()), max),
            (_, Some(Thinking::Budget(b))) => (b, None),
            (_, Some(Thinking::Off)) => return (Some(json!({"type": "disabled"})), max),
            (_, Some(Thinking::Dynamic)) => {
                self.changed(
                    "thinking",
                    &format!("/{}", source_key_path(self.from, "thinking")),
                    format!(
                        "{}'s dynamic thinking budget (-1) has no equivalent in Claude: thinking enabled with the minimum budget, {CLAUDE_MIN_THINKING_BUDGET} tokens",
                        self.from
                    ),
                );
                (CLAUDE_MIN_THINKING_BUDGET, None)
            }
            (_, None | Some(Thinking::Claude(_))) => return (None, max),
        };
        let (mut b, given) = budget;
        let path = format!("/{}", source_key_path(self.from, "thinking"));
        if b < CLAUDE_MIN_THINKING_BUDGET {
            self.changed(
                "thinking",
                &path,
                format!(
                    "the thinking budget of {b} tokens is under Claude's minimum: {CLAUDE_MIN_THINKING_BUDGET}"
                ),
            );
            b = CLAUDE_MIN_THINKING_BUDGET;
        }
        let max = match max {
            Some(m) if m <= b => {
                let raised = b.saturating_add(m);
                self.changed(
                    "max-tokens",
                    &limit_path,
                    format!(
                        "Claude's token limit must exceed the thinking budget of {b}: {m} raised to {raised} (the budget plus the limit the source gave)"
                    ),
                );
                Some(raised)
            }
            other => other,
        };
        let v = match given {
            Some(v) if v.field("budget_tokens").and_then(Value::as_u64) == Some(b) => v,
            _ => json!({"type": "enabled", "budget_tokens": b}),
        };
        (Some(v), max)
    }

    /// Gemini's `includeThoughts` where thinking is Claude's, which returns the thinking
    /// it does: `false` cannot be honoured.
    pub(crate) fn thoughts_hidden_lost(&mut self, include: Option<bool>) {
        if include == Some(false) {
            let detail = format!(
                "`includeThoughts: false`: {} returns the thinking Claude does",
                self.to
            );
            self.lost("thinking", "include_thoughts", detail);
        }
    }

    /// Strict schema adherence is OpenAI's: elsewhere it is said to be lost.
    pub(crate) fn strict_lost(&mut self, name: &str, strict: Option<&Value>) {
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
}

/// An object of these members, in this order, the values moved in: `json!` would
/// serialize an interpolated `Value` into a copy (a deep one for a tool's schema) and
/// drop the original.
pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    let mut o = Map::with_capacity(N);
    for (k, v) in members {
        o.insert(k.to_string(), v);
    }
    Value::Object(o)
}

pub(crate) fn put_opt(o: &mut Map<String, Value>, k: &str, v: Option<Value>) {
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
        (Dialect::Gemini, "max_tokens") => "generationConfig/maxOutputTokens".into(),
        (Dialect::OpenAiResponses, "max_tokens") => "max_output_tokens".into(),
        (Dialect::Gemini, "thinking") => "generationConfig/thinkingConfig/thinkingBudget".into(),
        (Dialect::Gemini, "include_thoughts") => {
            "generationConfig/thinkingConfig/includeThoughts".into()
        }
        (Dialect::Gemini, "reasoning_effort") => {
            "generationConfig/thinkingConfig/thinkingLevel".into()
        }
        (Dialect::Gemini, "response_format") => "generationConfig/responseMimeType".into(),
        (Dialect::OpenAiResponses, "response_format") => "text/format".into(),
        (Dialect::Anthropic, "stop") => "stop_sequences".into(),
        (Dialect::Anthropic, "user") => "metadata/user_id".into(),
        (Dialect::OpenAiResponses, "reasoning_effort") => "reasoning/effort".into(),
        (Dialect::Anthropic, "parallel_tool_calls") => {
            "tool_choice/disable_parallel_tool_use".into()
        }
        (Dialect::BedrockConverse, "max_tokens") => "inferenceConfig/maxTokens".into(),
        (Dialect::BedrockConverse, "temperature") => "inferenceConfig/temperature".into(),
        (Dialect::BedrockConverse, "top_p") => "inferenceConfig/topP".into(),
        (Dialect::BedrockConverse, "stop") => "inferenceConfig/stopSequences".into(),
        (Dialect::BedrockConverse, "tool_choice") => "toolConfig/toolChoice".into(),
        (Dialect::BedrockConverse, k @ ("top_k" | "thinking" | "reasoning_effort")) => {
            format!("additionalModelRequestFields/{k}")
        }
        _ => key.to_string(),
    }
}
