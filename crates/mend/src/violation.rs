//! What a check finds: a [`Violation`] of a [`Rule`], located by indices into the chain
//! ([`Loc`]) and, for people and tools outside the engine, by a JSON pointer.
//!
//! Invariant: fixes address what they change through [`Loc`] (and the rare [`Defect`]),
//! never by parsing `path` back or by reading `message` / `provider_error`.

use serde::Serialize;

pub use crate::rules::Rule;

/// How sure mend is that the provider rejects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The provider answers 400.
    Error,
    /// Rejected by some deployments or models only, or likely to degrade the answer.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// Which rule.
    pub rule: Rule,
    /// Error or warning.
    pub severity: Severity,
    /// JSON pointer into the body.
    pub path: String,
    /// What, where and why, naming the ids involved.
    pub message: String,
    /// The provider's own error text with the real ids, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_error: Option<String>,
    /// Where it is, as indices into the chain the check built.
    #[serde(skip)]
    pub loc: Loc,
    /// Which malformation, for the `malformed` findings a fix can act on.
    #[serde(skip)]
    pub(crate) defect: Option<Defect>,
}

/// Where a violation is, as indices into the [`Chain`](crate::chain::Chain) of the body
/// it was found in: the turn (wire message or item), the node the rule speaks of, and the
/// peer node where the rule relates two (the call of a misplaced result, the reasoning
/// item whose follower was replaced). The JSON pointer is rendered from these.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Loc {
    /// Index into `chain.turns`.
    pub turn: Option<usize>,
    /// Index into `chain.nodes`.
    pub node: Option<usize>,
    /// The other node the rule relates this one to.
    pub peer: Option<usize>,
}

/// The few `malformed` findings that have a fix: which one it is, as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Defect {
    /// Anthropic: the final assistant text (a prefill) ends with white space.
    TrailingWhitespace,
    /// OpenAI chat: `tool_calls` is an empty array.
    EmptyToolCalls,
    /// OpenAI chat: a tool call's `function.arguments` is JSON but not a string.
    ArgumentsNotString,
    /// A provider that needs content in every message (xAI) got `""` or `[]`: no content
    /// to put there is known, so it is reported only.
    ContentRequired,
    /// Converse: a `toolUse.input` that is not an object (a string of the arguments).
    ToolInputNotObject,
    /// Anthropic: a `tool_use` block without its required `input`. Reported only: what
    /// the call's arguments were is not known (`{}` is the usual loss, not the only one).
    ToolInputMissing,
    /// Responses: a server tool call item without its required `id`. Reported only: the
    /// id is the provider's.
    ItemIdMissing,
    /// Responses: a `function_call_output` (or custom tool output) without its required
    /// `output`, or with a null one.
    OutputMissing,
    /// Converse: a `toolResult` content `json` member that is not an object.
    ResultJsonNotObject,
    /// OpenAI: a tool's output (chat `tool` content, Responses `function_call_output`)
    /// given as a JSON object instead of its text.
    OutputNotText,
    /// Anthropic and Converse: a message of the same role as the one before it.
    SameRoleInARow,
    /// Responses: a reasoning item without its (required) `summary`.
    ReasoningWithoutSummary,
    /// Responses: an output item of the response `previous_response_id` names, sent
    /// again though the provider already holds it.
    HeldUpstream,
    /// Responses: a chat-completions `tool` message (`role: tool`, `tool_call_id`) in
    /// `input`, where a tool's output is a `function_call_output` item.
    ChatToolMessage,
    /// Responses: an `input_text` part in an assistant message, which takes `output_text`.
    AssistantInputText,
    /// Responses: a chat-completions assistant message with `tool_calls` in `input`,
    /// where each call is a `function_call` item of its own.
    ChatToolCalls,
    /// Responses: a chat-completions content part (`text`, `image_url`) in a message,
    /// where the API takes `input_text` / `output_text` / `input_image`.
    ChatContentPart,
    /// Anthropic: a content part of another API (OpenAI's `image_url`, the Responses
    /// API's `input_text`) that is an Anthropic block written another way. OpenAI chat:
    /// another API's `image` block (Anthropic's, LangChain's) that is an `image_url` part
    /// written another way.
    ForeignBlock,
    /// Anthropic: a part of another API inside a `tool_result`'s content (`input_text`,
    /// `image_url`) that is a block a tool result takes written another way. The finding
    /// is at the tool_result's node; the fix writes every such part of the block.
    ForeignResultPart,
    /// Converse: an image or document by S3 location sent to a model that reads none
    /// (Claude). Reported only: the bytes are not in the body.
    S3MediaRefused,
    /// OpenAI chat: an image, audio or file part in a message other than a user message,
    /// under a provider that takes media in user messages only. The fix moves a tool
    /// message's media into a user message right after the tool results; an assistant's
    /// or a system message's is reported only.
    MediaOffUser,
    /// Gemini: a `functionResponse` carries media in `parts` for a model before Gemini 3.
    ResponsePartsUnsupported,
    /// OpenAI chat: a tool call without its required `type` (its `function` says which).
    CallTypeMissing,
    /// OpenAI chat: a tool call's `function` without its required `arguments`. Reported
    /// only: what they were is not known (`{}` is the usual loss, not the only one).
    ArgumentsMissing,
    /// Gemini: a field a FunctionCall or FunctionResponse does not have. Reported only:
    /// what it meant is not known.
    UnknownField,
    /// OpenAI chat: a message's `name` with white space (or `<|\/>`) in it.
    MessageNameForm,
    /// OpenAI chat (Groq): a system or assistant message's content given as a list of
    /// parts where the provider takes a string.
    ContentNotString,
    /// A call's name outside the characters (or the length) the provider takes.
    CallNameForm,
    /// Responses: an item's own `id` longer than the API takes.
    ItemIdTooLong,
    /// Gemini: a content of a role another API names (`assistant`, `tool`, `function`)
    /// that is a Gemini role written another way.
    ForeignRole,
    /// Anthropic: `cache_control` on a thinking or redacted_thinking block.
    CacheOnThinking,
    /// Converse: a `cachePoint` block with nothing before it in its message, or right
    /// after a reasoning block.
    CachePointPlacement,
    /// Converse: a document name the service refuses (characters, length) or that an
    /// earlier document of the request already has.
    DocumentName,
    /// Anthropic and Converse: an image whose declared type is not the one its bytes
    /// prove.
    ImageFormat,
}

impl Violation {
    /// A new error-severity violation.
    pub fn error(rule: Rule, path: String, message: String) -> Self {
        Violation {
            rule,
            severity: Severity::Error,
            path,
            message,
            provider_error: None,
            loc: Loc::default(),
            defect: None,
        }
    }

    /// Set the provider's text.
    pub fn provider(mut self, text: Option<String>) -> Self {
        self.provider_error = text;
        self
    }

    /// Set the severity.
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Tie it to a turn of the chain.
    pub fn at_turn(mut self, turn: usize) -> Self {
        self.loc.turn = Some(turn);
        self
    }

    /// Tie it to a node of the chain, in its turn.
    pub fn at_node(mut self, node: usize, turn: usize) -> Self {
        self.loc.node = Some(node);
        self.loc.turn = Some(turn);
        self
    }

    /// Name the other node the rule relates this one to.
    pub fn with_peer(mut self, node: usize) -> Self {
        self.loc.peer = Some(node);
        self
    }

    pub(crate) fn with_defect(mut self, defect: Defect) -> Self {
        self.defect = Some(defect);
        self
    }
}
