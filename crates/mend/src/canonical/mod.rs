//! Canonical conversations: one model of a history for all five dialects, and the
//! capture of assistant messages from responses and streams.
//!
//! A [`Conversation`] is a list of [`Message`]s (role, ordered [`Part`]s) plus the request's
//! other top-level fields kept verbatim. A part is text, an image or file reference,
//! reasoning, a tool call, a tool result, or an opaque provider part kept as it was.
//! Each dialect module reads a request body into a conversation and writes one back:
//! [`Conversation::from_request`], [`Conversation::to_request`]. [`capture`] reads
//! non-streaming responses and SSE streams into assistant messages with every provider
//! id, signature and encrypted payload.
//!
//! Invariant: reading then writing the same dialect gives back equal JSON. What the
//! model does not name lives in `extra` maps (per message and per part) and in opaque
//! parts; how the wire wrote a thing when it has several ways (a bare string or a list
//! of parts, snake_case keys) is recorded in a [`Form`]. Extras and forms belong to the
//! conversation's [`dialect`](Conversation::dialect): writing another dialect ignores
//! them, and a converter reports them as losses.
//!
//! The JSON form (version 1, `"mend_canonical": 1`) is the serde form of these types:
//!
//! ```json
//! {"mend_canonical": 1, "dialect": "anthropic",
//!  "request": {"model": "claude-sonnet-4-5", "max_tokens": 1024},
//!  "messages": [
//!    {"role": "system", "parts": [{"type": "text", "text": "Be brief."}], "form": "string"},
//!    {"role": "user", "parts": [{"type": "text", "text": "weather?"}], "form": "string"},
//!    {"role": "assistant", "parts": [
//!      {"type": "reasoning", "text": "...", "signature": "EqQB..."},
//!      {"type": "tool_call", "id": "toolu_01", "name": "weather", "arguments": "{\"city\":\"Paris\"}"}]},
//!    {"role": "user", "parts": [
//!      {"type": "tool_result", "call_id": "toolu_01", "content": "18C"}]}]}
//! ```
//!
//! ```
//! use mend::canonical::Conversation;
//! use mend::Dialect;
//! let body = serde_json::json!({"model": "gpt-4o", "messages": [
//!     {"role": "user", "content": "hi"}]});
//! let conv = Conversation::from_request(Dialect::OpenAiChat, &body).unwrap();
//! assert_eq!(conv.messages[0].text(), "hi");
//! assert_eq!(conv.to_request(Dialect::OpenAiChat).unwrap(), body);
//! ```

use crate::json::Field;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::dialect::kind_of;
use crate::Dialect;

pub mod capture;

// Each dialect's reader and writer lives in that dialect's folder; these names keep the
// paths they had when they lived here.
pub use crate::dialect::anthropic::canonical as anthropic;
pub use crate::dialect::bedrock_converse::canonical as bedrock_converse;
pub use crate::dialect::gemini::canonical as gemini;
pub use crate::dialect::openai_chat::canonical as openai_chat;
pub use crate::dialect::openai_responses::canonical as openai_responses;

/// The version of the JSON form written and read by this crate.
pub const VERSION: u32 = 1;

/// A JSON object, in its original key order.
pub type Extra = Map<String, Value>;

/// A conversation history in the canonical model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conversation {
    /// The dialect it was read from: the one its extras and forms describe.
    pub dialect: Option<Dialect>,
    /// How the body held its history, when not in the usual way ([`Form::NoHistory`]).
    pub form: Option<Form>,
    /// The request's top-level fields other than the history (model, tools, max_tokens...),
    /// verbatim.
    pub request: Extra,
    /// The history, instructions first.
    pub messages: Vec<Message>,
}

/// One message of a history: a wire message, or one item of an OpenAI Responses `input`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// A stable id for the message in its conversation, given by whoever keeps it (the
    /// store). Never read from or written to a request body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Who speaks.
    pub role: Role,
    /// The provider's id for this message when the history carries it back (a Responses
    /// output message item `msg_…`, or an output item's id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// The content, in wire order.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// How the wire wrote this message when it has several ways.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Form>,
    /// Wire fields of the message the model does not name, verbatim.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
    /// Facts about a captured message that are not sent back: `response_id` (the
    /// provider's response or message id: `chatcmpl-…`, `resp_…`, `msg_…`, Gemini
    /// `responseId`) and per-choice fields such as `finish_reason`. Writers ignore it.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub meta: Extra,
}

impl Message {
    /// A message with these parts and nothing else.
    pub fn new(role: Role, parts: Vec<Part>) -> Message {
        Message {
            id: None,
            role,
            item_id: None,
            parts,
            form: None,
            extra: Extra::new(),
            meta: Extra::new(),
        }
    }

    /// The text of its text parts, joined.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Kept whole as one opaque part (the wire element could not be modeled exactly).
    pub fn is_verbatim(&self) -> bool {
        self.form == Some(Form::Verbatim)
    }

    pub(crate) fn verbatim(role: Role, value: Value) -> Message {
        let mut m = Message::new(role, vec![Part::Opaque(Opaque { value, form: None })]);
        m.form = Some(Form::Verbatim);
        m
    }

    /// The wire value of a verbatim message.
    pub(crate) fn verbatim_value(&self) -> Option<&Value> {
        match (self.form, self.parts.as_slice()) {
            (Some(Form::Verbatim), [Part::Opaque(o)]) => Some(&o.value),
            _ => None,
        }
    }
}

pub use crate::role::Role;

/// How the source dialect wrote something it can write in several ways. Only that
/// dialect's writer reads it; see each dialect module for the forms it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// The message's content was a bare string rather than a list of parts.
    String,
    /// OpenAI Responses: the whole `input` was this one string.
    InputString,
    /// OpenAI Responses: the top-level `instructions`.
    Instructions,
    /// The wire element is kept whole as the message's one opaque part.
    Verbatim,
    /// The body has no history key, or one that is kept verbatim in
    /// [`Conversation::request`] because it has no readable shape.
    NoHistory,
    /// Gemini: a content without a `role`.
    NoRole,
    /// Gemini: the part (or `system_instruction`) uses snake_case keys.
    SnakeCase,
    /// OpenAI chat: reasoning in `reasoning_content`.
    ReasoningContent,
    /// OpenAI chat: reasoning in a `reasoning` string.
    ReasoningString,
    /// OpenAI chat: one entry of `reasoning_details`.
    ReasoningDetails,
    /// OpenAI chat: the legacy `function_call` / `function` role.
    LegacyFunction,
    /// OpenAI chat: an opaque entry of `tool_calls` (not of `content`).
    ToolCalls,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Text.
    Text(Text),
    /// An image, by reference or inline data.
    Image(Media),
    /// A file or document, by reference or inline data.
    File(Media),
    /// Reasoning (thinking) the model produced.
    Reasoning(Reasoning),
    /// A call the model made to a client tool.
    ToolCall(ToolCall),
    /// The result of a tool call.
    ToolResult(ToolResult),
    /// A provider part the model does not name, verbatim.
    Opaque(Opaque),
}

impl Part {
    /// The part's kind as written in the JSON form.
    pub fn kind(&self) -> &'static str {
        match self {
            Part::Text(_) => "text",
            Part::Image(_) => "image",
            Part::File(_) => "file",
            Part::Reasoning(_) => "reasoning",
            Part::ToolCall(_) => "tool_call",
            Part::ToolResult(_) => "tool_result",
            Part::Opaque(_) => "opaque",
        }
    }

    /// The form recorded on the part.
    pub fn form(&self) -> Option<Form> {
        match self {
            Part::Text(p) => p.form,
            Part::Image(p) | Part::File(p) => p.form,
            Part::Reasoning(p) => p.form,
            Part::ToolCall(p) => p.form,
            Part::ToolResult(p) => p.form,
            Part::Opaque(p) => p.form,
        }
    }

    /// A text part.
    pub fn text(text: impl Into<String>) -> Part {
        Part::Text(Text {
            text: text.into(),
            signature: None,
            form: None,
            extra: Extra::new(),
        })
    }
}

/// Text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Text {
    /// The text.
    pub text: String,
    /// A signature attached to it (Gemini `thoughtSignature` on a text part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Wire form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Form>,
    /// Wire fields not modeled (`cache_control`, `citations`, `annotations`...).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
}

/// An image or file: a URL (including `data:` URLs the wire could not split), inline
/// base64 data with its media type, or a provider file id.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Media {
    /// A URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Inline data, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// The media type (`image/png`, `application/pdf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// A provider file id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    /// A file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// OpenAI's `detail` for images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Wire form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Form>,
    /// Wire fields not modeled.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
}

/// Reasoning the model produced: readable text or a summary of it, and whatever the
/// provider needs to get it back intact (a signature, encrypted content, an item id).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Reasoning {
    /// The reasoning text (Anthropic `thinking`, Gemini thought text, chat
    /// `reasoning_content`, Responses `reasoning_text`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Summary texts (Responses `summary[].text`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Vec<String>>,
    /// A signature over the reasoning (Anthropic `signature`, Gemini `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Opaque encrypted reasoning (Responses `encrypted_content`, Anthropic
    /// `redacted_thinking.data`, OpenRouter `reasoning.encrypted` data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<String>,
    /// The provider's item id (`rs_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// Wire form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Form>,
    /// Wire fields not modeled.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
}

/// A call the model made to a client tool.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id results answer (`call_…`, `toolu_…`, Gemini `functionCall.id`). Gemini calls
    /// often have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The provider's item id, when distinct from the call id (Responses `fc_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// Tool name.
    pub name: String,
    /// The arguments as a raw JSON string, as the provider produced it (dialects that
    /// carry an object hold its compact serialization; empty when Gemini sent no `args`).
    pub arguments: String,
    /// A signature attached to the call (Gemini `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Wire form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Form>,
    /// Wire fields not modeled.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
}

/// The result of a tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call id it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool name (Gemini answers by name; legacy chat `function` messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the tool returned; absent when the wire has no content.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub content: Option<ToolContent>,
    /// The tool failed (Anthropic `is_error: true`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    /// Images and files that come with a JSON `content` (Gemini 3's multimodal function
    /// responses: `functionResponse.parts`). Only Gemini's writer has a place for them
    /// beside the JSON; the others refuse a result that has any, and a conversion moves
    /// them into the content where the target holds media there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<Part>,
    /// Wire form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Form>,
    /// Wire fields not modeled.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
}

impl ToolResult {
    /// A writer with no place for [`ToolResult::media`] refuses a result that has any
    /// (message `i`, part `j`), rather than leave it out.
    pub(crate) fn no_media(&self, i: usize, j: usize, to: &str) -> Result<(), WriteError> {
        if self.media.is_empty() {
            return Ok(());
        }
        Err(WriteError::new(
            i,
            Some(j),
            format!("a tool result with media beside its JSON (Gemini's `functionResponse.parts`), which {to} has no place for"),
        ))
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ToolContent>, D::Error> {
    ToolContent::deserialize(d).map(Some)
}

/// What a tool returned.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolContent {
    /// A string. JSON form: a string.
    Text(String),
    /// Content parts (text, images...). JSON form: an array of parts.
    Parts(Vec<Part>),
    /// Any other JSON (Gemini's `response` object). JSON form: `{"json": value}`.
    Json(Value),
}

impl Serialize for ToolContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolContent::Text(t) => s.serialize_str(t),
            ToolContent::Parts(p) => p.serialize(s),
            ToolContent::Json(v) => {
                #[derive(Serialize)]
                struct J<'a> {
                    json: &'a Value,
                }
                J { json: v }.serialize(s)
            }
        }
    }
}

impl<'de> Deserialize<'de> for ToolContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => Ok(ToolContent::Text(s)),
            Value::Array(a) => a
                .into_iter()
                .map(serde_json::from_value)
                .collect::<Result<Vec<Part>, _>>()
                .map(ToolContent::Parts)
                .map_err(D::Error::custom),
            Value::Object(mut o) if o.len() == 1 && o.contains_key("json") => Ok(
                ToolContent::Json(o.remove("json").unwrap_or(Value::Null)),
            ),
            other => Err(D::Error::custom(format!(
                "tool result content is {} but must be a string, an array of parts or {{\"json\": ...}}",
                kind_of(&other)
            ))),
        }
    }
}

/// A provider part kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opaque {
    /// The wire value.
    pub value: Value,
    /// Where it sat, when the dialect has several places ([`Form::ToolCalls`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Form>,
}

/// Why a request body could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The body is not a JSON object.
    #[error("the body is {kind} but a {dialect} request is a JSON object")]
    NotAnObject {
        /// The dialect asked for.
        dialect: Dialect,
        /// What the body is.
        kind: &'static str,
    },
}

/// Why a conversation could not be written as a request body of a dialect.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("messages[{message}]{}: {reason}", part.map(|p| format!(".parts[{p}]")).unwrap_or_default())]
pub struct WriteError {
    /// Index of the message in [`Conversation::messages`].
    pub message: usize,
    /// Index of the part in the message, when one part is the cause.
    pub part: Option<usize>,
    /// Why.
    pub reason: String,
}

impl WriteError {
    pub(crate) fn new(message: usize, part: Option<usize>, reason: impl Into<String>) -> Self {
        WriteError {
            message,
            part,
            reason: reason.into(),
        }
    }
}

/// Why a JSON form could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Not JSON, or not the shape of the canonical form.
    #[error("not a canonical conversation: {0}")]
    Json(#[from] serde_json::Error),
}

impl Conversation {
    /// Read a request body of `dialect`. Only a body that is not a JSON object fails:
    /// anything else is kept, modeled or verbatim.
    pub fn from_request(dialect: Dialect, body: &Value) -> Result<Conversation, ReadError> {
        Conversation::read(dialect, body, RequestCopy::Values)
    }

    /// [`from_request`](Self::from_request), the request's members held by key alone
    /// (`Null`): for a reader of the request's settings that reads them from `body`
    /// itself (convert), which then need not be copied (tool declarations, schemas).
    pub(crate) fn from_request_keys(
        dialect: Dialect,
        body: &Value,
    ) -> Result<Conversation, ReadError> {
        Conversation::read(dialect, body, RequestCopy::Keys)
    }

    /// [`from_request`](Self::from_request) of an OpenAI chat body the caller gives up:
    /// the same conversation, its strings, request members and extras moved rather than
    /// copied (convert's repaired source).
    pub(crate) fn from_chat_owned(obj: Map<String, Value>) -> Conversation {
        let mut conv = openai_chat::read_request_owned(obj);
        conv.dialect = Some(Dialect::OpenAiChat);
        conv
    }

    /// The request's members of a conversation read by
    /// [`from_request_keys`](Self::from_request_keys) from `body`: their keys, in order,
    /// with their values in `body`.
    pub(crate) fn request_in<'v>(
        &'v self,
        body: &'v Value,
    ) -> impl Iterator<Item = (&'v String, &'v Value)> + 'v {
        let obj = body.as_object();
        self.request
            .keys()
            .filter_map(move |k| Some((k, obj?.field(k)?)))
    }

    fn read(dialect: Dialect, body: &Value, copy: RequestCopy) -> Result<Conversation, ReadError> {
        let Some(obj) = body.as_object() else {
            return Err(ReadError::NotAnObject {
                dialect,
                kind: kind_of(body),
            });
        };
        let mut conv = match dialect {
            Dialect::OpenAiChat => openai_chat::read_request(obj, copy),
            Dialect::OpenAiResponses => openai_responses::read_request(obj, copy),
            Dialect::Anthropic => anthropic::read_request(obj, copy),
            Dialect::Gemini => gemini::read_request(obj, copy),
            Dialect::BedrockConverse => bedrock_converse::read_request(obj, copy),
        };
        conv.dialect = Some(dialect);
        Ok(conv)
    }

    /// Write the conversation as a request body of `dialect`. For the dialect it was read
    /// from, the result equals the body read. For another dialect, extras, forms and
    /// verbatim messages of the source are left out; a part the target has no place for
    /// is an error.
    pub fn to_request(&self, dialect: Dialect) -> Result<Value, WriteError> {
        let same = self.dialect == Some(dialect);
        let w = Writer { same };
        match dialect {
            Dialect::OpenAiChat => openai_chat::write_request(self, w),
            Dialect::OpenAiResponses => openai_responses::write_request(self, w),
            Dialect::Anthropic => anthropic::write_request(self, w),
            Dialect::Gemini => gemini::write_request(self, w),
            Dialect::BedrockConverse => bedrock_converse::write_request(self, w),
        }
    }

    /// [`to_request`](Self::to_request) of a conversation that is not needed after:
    /// the request's fields (tool declarations, schemas) are moved into the body rather
    /// than copied. The same body.
    pub(crate) fn into_request(mut self, dialect: Dialect) -> Result<Value, WriteError> {
        let request = std::mem::take(&mut self.request);
        if request.is_empty() {
            return self.to_request(dialect);
        }
        // Written without its request, the body is the history (first, as with no
        // `model`) and the fields the writer adds after the request's.
        let written = match self.to_request(dialect)? {
            Value::Object(o) => o,
            other => return Ok(other),
        };
        let key = dialect.history_key();
        let mut history = None;
        let mut added = Vec::with_capacity(written.len());
        for (k, v) in written {
            if history.is_none() && k == key {
                history = Some((k, v));
            } else {
                added.push((k, v));
            }
        }
        let mut out = history_after_model(
            request.contains_key("model"),
            request.len(),
            request.into_iter(),
            history,
        );
        for (k, v) in added {
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }

    /// The JSON form.
    pub fn to_json(&self) -> Value {
        // Serializing plain data into a `Value` cannot fail (string keys, no custom errors).
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Read the JSON form.
    pub fn from_json(bytes: &[u8]) -> Result<Conversation, FormatError> {
        Ok(serde_json::from_slice(bytes)?)
    }
}

/// What a writer may use of the conversation's wire knowledge.
/// How a reader keeps the request's top-level members (everything but the history).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RequestCopy {
    /// Copied, as the body has them.
    Values,
    /// By key alone, each value `Null`: the caller reads the values from the body.
    Keys,
}

impl RequestCopy {
    pub(crate) fn of(self, v: &Value) -> Value {
        match self {
            RequestCopy::Values => v.clone(),
            RequestCopy::Keys => Value::Null,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Writer {
    /// The conversation was read from the dialect being written: extras and forms apply.
    pub same: bool,
}

impl Writer {
    pub(crate) fn form(self, f: Option<Form>) -> Option<Form> {
        if self.same {
            f
        } else {
            None
        }
    }

    /// Copy `extra` into `out` (keys already written win).
    pub(crate) fn extend(self, out: &mut Extra, extra: &Extra) {
        if !self.same {
            return;
        }
        for (k, v) in extra {
            if !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
}

mod dialect_name {
    use super::*;

    pub fn serialize<S: Serializer>(d: &Option<Dialect>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(d.name()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Dialect>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(s) => s.parse().map(Some).map_err(D::Error::custom),
        }
    }
}

#[derive(Serialize)]
struct ConversationOut<'a> {
    mend_canonical: u32,
    #[serde(with = "dialect_name", skip_serializing_if = "Option::is_none")]
    dialect: &'a Option<Dialect>,
    #[serde(skip_serializing_if = "Option::is_none")]
    form: &'a Option<Form>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    request: &'a Extra,
    messages: &'a [Message],
}

#[derive(Deserialize)]
struct ConversationIn {
    mend_canonical: Value,
    #[serde(default, with = "dialect_name")]
    dialect: Option<Dialect>,
    #[serde(default)]
    form: Option<Form>,
    #[serde(default)]
    request: Extra,
    messages: Vec<Message>,
}

impl Serialize for Conversation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ConversationOut {
            mend_canonical: VERSION,
            dialect: &self.dialect,
            form: &self.form,
            request: &self.request,
            messages: &self.messages,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Conversation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let c = ConversationIn::deserialize(d)?;
        if c.mend_canonical.as_u64() != Some(u64::from(VERSION)) {
            return Err(D::Error::custom(format!(
                "`mend_canonical` is {} but this mend reads version {VERSION}",
                c.mend_canonical
            )));
        }
        Ok(Conversation {
            dialect: c.dialect,
            form: c.form,
            request: c.request,
            messages: c.messages,
        })
    }
}

// Small helpers the dialect modules share.

/// A `user` / `assistant` wire message (Anthropic, Converse): the object and its role, or
/// the message kept verbatim when it is not an object or has another role.
pub(crate) fn user_or_assistant(v: &Value) -> Result<(&Map<String, Value>, Role), Box<Message>> {
    let Some(o) = v.as_object() else {
        return Err(Box::new(Message::verbatim(
            Role::Other("?".into()),
            v.clone(),
        )));
    };
    match o.field("role").and_then(Value::as_str) {
        Some("user") => Ok((o, Role::User)),
        Some("assistant") => Ok((o, Role::Assistant)),
        Some(other) => Err(Box::new(Message::verbatim(
            Role::from_name(other),
            v.clone(),
        ))),
        None => Err(Box::new(Message::verbatim(
            Role::Other("?".into()),
            v.clone(),
        ))),
    }
}

/// Split a `data:<media type>;base64,<data>` URL, when writing it back gives the same URL.
pub(crate) fn split_data_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("data:")?;
    let (mt, data) = rest.split_once(";base64,")?;
    if mt.contains([';', ',']) || data.contains(',') {
        return None;
    }
    Some((mt.to_string(), data.to_string()))
}

/// A `data:` URL of inline data.
pub(crate) fn data_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

/// The arguments of a call as the object a dialect that carries objects needs.
pub(crate) fn arguments_value(
    arguments: &str,
    message: usize,
    part: usize,
) -> Result<Value, WriteError> {
    if arguments.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(arguments).map_err(|e| {
        WriteError::new(
            message,
            Some(part),
            format!("the tool call arguments are not JSON ({e}), and this dialect sends an object"),
        )
    })
}

/// The request's fields with the history after `model` (or first).
pub(crate) fn with_history(request: &Extra, history: Option<(&str, Value)>) -> Map<String, Value> {
    history_after_model(
        request.contains_key("model"),
        request.len(),
        request.iter().map(|(k, v)| (k.clone(), v.clone())),
        history.map(|(k, v)| (k.to_string(), v)),
    )
}

fn history_after_model(
    has_model: bool,
    len: usize,
    fields: impl Iterator<Item = (String, Value)>,
    history: Option<(String, Value)>,
) -> Map<String, Value> {
    let mut out = Map::with_capacity(len + 2);
    let mut history = history;
    if !has_model {
        if let Some((k, v)) = history.take() {
            out.insert(k, v);
        }
    }
    for (k, v) in fields {
        let model = k == "model";
        out.insert(k, v);
        if model {
            if let Some((k, v)) = history.take() {
                out.insert(k, v);
            }
        }
    }
    out
}

/// The entries of `o` other than `skip`.
pub(crate) fn rest(o: &Map<String, Value>, skip: &[&str]) -> Extra {
    o.iter()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Compact JSON of a value (for arguments carried as objects).
pub(crate) fn compact(v: &Value) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The body of every check case under `cases/<dialect>/`.
    fn case_bodies() -> Vec<Value> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
        let mut bodies = Vec::new();
        for d in Dialect::ALL {
            for rule in std::fs::read_dir(root.join(d.name())).expect("cases/<dialect>") {
                let rule = rule.expect("an entry").path();
                for f in std::fs::read_dir(&rule).into_iter().flatten() {
                    let f = f.expect("an entry").path();
                    let case: Value = serde_json::from_slice(&std::fs::read(&f).expect("readable"))
                        .expect("JSON");
                    if let Some(b) = case.get("body") {
                        bodies.push(b.clone());
                    }
                }
            }
        }
        bodies
    }

    /// Every body of `cases/` (and each of its messages alone, as a chat body), read as
    /// OpenAI chat from a body given up, is the conversation read with copies.
    #[test]
    fn a_chat_body_given_up_reads_as_the_copying_read() {
        let mut bodies = case_bodies();
        // Shapes the cases may not hold: every kind of member a reader branches on,
        // with the types it accepts and others.
        let odd = json!({"model": "m", "tools": [{"type": "function"}], "messages": [
            {"role": "function", "name": "f", "content": "r"},
            {"role": "function", "name": 3, "content": [{"type": "text", "text": "x"}]},
            {"role": "tool", "tool_call_id": 7, "content": {"a": 1}, "x": null},
            {"role": "assistant", "content": [], "tool_calls": [],
             "function_call": {"name": "f", "arguments": "{}"}},
            {"role": "assistant", "function_call": {"name": "f"}},
            {"role": "assistant", "reasoning": "r", "reasoning_content": "c",
             "reasoning_details": [{"text": "t", "x": 1}]},
            {"role": "assistant", "reasoning": 1, "reasoning_details": [1]},
            {"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "n", "arguments": "{}"}},
                {"id": 1, "function": {"name": "n", "arguments": "{}"}, "z": [1]},
                {"id": "b", "function": {"name": "n", "arguments": "{}", "extra": 1}},
                {"id": "c", "function": {"name": 1, "arguments": "{}"}},
                {"id": "d", "function": "f"}, 5]},
            {"role": "user", "content": [
                {"type": "text", "text": "t", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": 1}, {"text": "no type"}, "bare",
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
                {"type": "file", "file": {"file_id": "f"}}]},
            {"role": 5}, "text", {"content": "no role"}]});
        bodies.push(odd.clone());
        for m in odd["messages"].as_array().into_iter().flatten() {
            bodies.push(json!({"messages": [m]}));
        }
        bodies.push(json!({"model": "m"}));
        bodies.push(json!({"messages": "not a list"}));
        for body in &bodies {
            let Some(obj) = body.as_object() else {
                continue;
            };
            let copied = Conversation::from_request(Dialect::OpenAiChat, body).expect("an object");
            let owned = Conversation::from_chat_owned(obj.clone());
            assert_eq!(owned, copied, "{body}");
        }
    }

    /// Every body of `cases/`, read in its dialect and in every other (so that the
    /// readers' other branches run too): read by key, the conversation is the one read
    /// with copies, but for the request's values, which `request_in` finds in the body
    /// as the copying read has them, in the same order.
    #[test]
    fn a_read_by_key_finds_the_request_the_copying_read_holds() {
        let bodies = case_bodies();
        assert!(bodies.len() > 100, "{} case bodies", bodies.len());
        for body in &bodies {
            for d in Dialect::ALL {
                let (Ok(copied), Ok(keyed)) = (
                    Conversation::from_request(d, body),
                    Conversation::from_request_keys(d, body),
                ) else {
                    continue;
                };
                let found: Vec<(&String, &Value)> = keyed.request_in(body).collect();
                let held: Vec<(&String, &Value)> = copied.request.iter().collect();
                assert_eq!(found, held, "{d}: {body}");
                assert!(keyed.request.values().all(Value::is_null));
                let mut keyed = keyed.clone();
                keyed.request = copied.request.clone();
                assert_eq!(keyed, copied, "{d}: {body}");
            }
        }
    }

    #[test]
    fn the_json_form_is_versioned() {
        let conv = Conversation {
            dialect: Some(Dialect::Anthropic),
            messages: vec![Message::new(Role::User, vec![Part::text("hi")])],
            ..Conversation::default()
        };
        let v = conv.to_json();
        assert_eq!(
            v,
            json!({"mend_canonical": 1, "dialect": "anthropic", "messages": [
                {"role": "user", "parts": [{"type": "text", "text": "hi"}]}]})
        );
        let back = Conversation::from_json(v.to_string().as_bytes()).unwrap();
        assert_eq!(back, conv);
        let err = Conversation::from_json(br#"{"mend_canonical": 2, "messages": []}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("version 1"), "{err}");
    }

    #[test]
    fn tool_content_forms_are_unambiguous() {
        for c in [
            ToolContent::Text("x".into()),
            ToolContent::Parts(vec![Part::text("x")]),
            ToolContent::Json(json!({"a": 1})),
            ToolContent::Json(json!("a string as json")),
            ToolContent::Json(Value::Null),
        ] {
            let r = ToolResult {
                content: Some(c),
                ..ToolResult::default()
            };
            let v = serde_json::to_value(&r).unwrap();
            let back: ToolResult = serde_json::from_value(v).unwrap();
            assert_eq!(back, r);
        }
        let none: ToolResult = serde_json::from_value(json!({})).unwrap();
        assert_eq!(none.content, None);
    }

    #[test]
    fn another_dialect_gets_the_modeled_parts_without_the_source_extras() {
        let chat = json!({"model": "gpt-4o", "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi", "name": "ann"},
            {"role": "assistant", "content": "hello", "refusal": null}]});
        let conv = Conversation::from_request(Dialect::OpenAiChat, &chat).unwrap();
        assert_eq!(
            conv.to_request(Dialect::Anthropic).unwrap(),
            json!({"model": "gpt-4o", "system": [{"type": "text", "text": "Be brief."}],
                   "messages": [
                       {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                       {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}]})
        );
        // A chat `tool` message has no Anthropic equivalent message: that is the
        // converter's work (results go into the next user message).
        let tool = json!({"messages": [{"role": "tool", "tool_call_id": "c", "content": "x"}]});
        let conv = Conversation::from_request(Dialect::OpenAiChat, &tool).unwrap();
        let e = conv.to_request(Dialect::Anthropic).unwrap_err();
        assert_eq!((e.message, e.part), (0, None));
    }

    #[test]
    fn roles_other_than_the_known_ones_keep_their_name() {
        assert_eq!(Role::from_name("model"), Role::Other("model".into()));
        assert_eq!(Role::from_name("developer"), Role::Developer);
    }
}
