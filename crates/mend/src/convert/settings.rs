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
//! | thinking | none | none | `thinking` | none | Claude's `additionalModelRequestFields.thinking` |
//! | seed, penalties | `seed`, `presence_penalty`, `frequency_penalty` | none | none | `generationConfig.seed`, `presencePenalty`, `frequencyPenalty` | none |
//!
//! Every other field, and every tool that is not a function (web search, code
//! execution, computer use...), is reported as lost.
//!
//! This module holds the neutral `Settings` and the driver; each dialect's reader and
//! writer of them is in its folder (`dialect/<d>/settings.rs`; OpenAI chat and Responses
//! share one, in `dialect/openai_chat/settings.rs`).

use serde_json::{Map, Value};

use super::{ConvertOptions, Note, NoteKind};
use crate::canonical::{Conversation, Extra};
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
    /// OpenAI's reasoning effort (`low`, `medium`, `high`...).
    pub(crate) effort: Option<Value>,
    /// Claude's extended thinking, as Anthropic's `thinking` object (`{"type": "enabled",
    /// "budget_tokens": N}`, `adaptive`, `disabled`), which Converse passes on as it is.
    pub(crate) thinking: Option<Value>,
}

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
        Dialect::OpenAiChat | Dialect::OpenAiResponses => openai::read(&conv.request, &mut r),
        Dialect::Anthropic => anthropic::read(&conv.request, &mut r),
        Dialect::Gemini => gemini::read(&conv.request, &mut r),
        Dialect::BedrockConverse => converse::read(&conv.request, &mut r),
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
