//! Dialects: one folder per request body format, holding everything that knows that
//! format's wire JSON: `mod.rs` maps a request onto the [`Chain`](crate::chain::Chain)
//! the rules read, `canonical.rs` reads and writes the canonical
//! [`Conversation`](crate::canonical::Conversation) convert uses, and `capture.rs` reads
//! the dialect's responses and SSE streams for [`capture`](crate::canonical::capture).
//! This module keeps what is common to all of them: the [`Dialect`] enum and detection.
//!
//! Invariant: an adapter never fails and never judges. It records what it sees (turns,
//! nodes, and `malformed` violations for shapes it cannot read) and leaves every rule
//! about pairing, order and reasoning to [`rules`](crate::rules).

use serde_json::Value;
use std::fmt;
use std::str::FromStr;

use crate::chain::{CallKind, Chain, NodeKind, Ptr, Wire};
use crate::json::{Json, Kind};
use crate::violation::{Rule, Violation};

pub mod anthropic;
pub mod bedrock_converse;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;

/// A request body format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dialect {
    /// `POST /v1/chat/completions` and every compatible API.
    OpenAiChat,
    /// `POST /v1/responses`.
    OpenAiResponses,
    /// `POST /v1/messages`.
    Anthropic,
    /// `generateContent` / `streamGenerateContent`.
    Gemini,
    /// AWS Bedrock `POST /model/{modelId}/converse` and `converse-stream`.
    BedrockConverse,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 5] = [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::BedrockConverse,
    ];

    /// The stable name (`openai_chat`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Dialect::OpenAiChat => "openai_chat",
            Dialect::OpenAiResponses => "openai_responses",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::BedrockConverse => "bedrock_converse",
        }
    }

    /// The top-level key that holds the history.
    pub fn history_key(self) -> &'static str {
        match self {
            Dialect::OpenAiChat | Dialect::Anthropic | Dialect::BedrockConverse => "messages",
            Dialect::OpenAiResponses => "input",
            Dialect::Gemini => "contents",
        }
    }

    /// The dialect an endpoint path belongs to, if it names one.
    pub fn from_endpoint(path: &str) -> Option<Dialect> {
        let path = path.split('?').next().unwrap_or(path);
        if bedrock_converse::model_from_path(path).is_some() {
            Some(Dialect::BedrockConverse)
        } else if path.ends_with("/chat/completions") {
            Some(Dialect::OpenAiChat)
        } else if path.ends_with("/responses") {
            Some(Dialect::OpenAiResponses)
        } else if path.ends_with("/messages")
            || path.contains(":rawPredict")
            || path.contains("/invoke")
        {
            Some(Dialect::Anthropic)
        } else if path.contains(":generateContent") || path.contains(":streamGenerateContent") {
            Some(Dialect::Gemini)
        } else {
            None
        }
    }

    /// The model an endpoint path names, URL-decoded: Converse's
    /// `/model/{modelId}/converse[-stream]` (its body names none), Gemini's
    /// `/models/{model}:generateContent`. None for a path that names no model.
    ///
    /// ```
    /// use mend::Dialect;
    /// assert_eq!(
    ///     Dialect::model_from_endpoint("/model/us.amazon.nova-micro-v1%3A0/converse").as_deref(),
    ///     Some("us.amazon.nova-micro-v1:0"));
    /// assert_eq!(
    ///     Dialect::model_from_endpoint("/v1beta/models/gemini-2.5-flash:streamGenerateContent").as_deref(),
    ///     Some("gemini-2.5-flash"));
    /// assert_eq!(Dialect::model_from_endpoint("/v1/chat/completions"), None);
    /// ```
    pub fn model_from_endpoint(path: &str) -> Option<String> {
        if let Some(m) = bedrock_converse::model_from_path(path) {
            return Some(m);
        }
        let path = path.split('?').next().unwrap_or(path);
        let rest = path.split("/models/").nth(1)?;
        let (model, _action) = rest.split_once(':')?;
        (!model.is_empty() && !model.contains('/')).then(|| model.to_string())
    }

    /// Map a body onto the chain. Never fails: unreadable shapes become `malformed`.
    pub fn build_chain<'a>(self, body: &'a Value, out: &mut Vec<Violation>) -> Chain<'a> {
        self.read_chain(body, out)
    }

    /// [`Dialect::build_chain`] over either view of a body (a `Value` or a tape node).
    pub(crate) fn read_chain<'a, J: Json<'a>>(self, obj: J, out: &mut Vec<Violation>) -> Chain<'a> {
        let mut chain = Chain::default();
        if !obj.is_object() {
            out.push(Violation::error(
                Rule::Malformed,
                String::new(),
                format!(
                    "the body is {} but a {} request is a JSON object",
                    obj.kind().describe(),
                    self.name()
                ),
            ));
            return chain;
        };
        // The chain's vectors sized once from the history's length (a turn per item, a
        // few nodes each): grown by doubling, the copies they left behind were resident
        // at the peak of a large check.
        if let Some(history) = obj.get(self.history_key()) {
            let items = history.len();
            chain.turns.reserve(items + 4);
            chain.nodes.reserve(3 * items + 8);
        }
        chain.facts.model = obj.get("model").and_then(J::str);
        match self {
            Dialect::OpenAiChat => openai_chat::map(obj, &mut chain, out),
            Dialect::OpenAiResponses => openai_responses::map(obj, &mut chain, out),
            Dialect::Anthropic => anthropic::map(obj, &mut chain, out),
            Dialect::Gemini => gemini::map(obj, &mut chain, out),
            Dialect::BedrockConverse => bedrock_converse::map(obj, &mut chain, out),
        }
        chain
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dialect {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "openai_chat" | "chat" | "openai" => Ok(Dialect::OpenAiChat),
            "openai_responses" | "responses" => Ok(Dialect::OpenAiResponses),
            "anthropic" | "messages" | "claude" => Ok(Dialect::Anthropic),
            "gemini" | "google" => Ok(Dialect::Gemini),
            "bedrock_converse" | "bedrock" | "converse" => Ok(Dialect::BedrockConverse),
            _ => Err(format!(
                "unknown dialect '{s}' (expected one of openai_chat, openai_responses, anthropic, gemini, bedrock_converse)"
            )),
        }
    }
}

/// Why a dialect could not be told from a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undetected {
    /// The body is not a JSON object.
    NotAnObject(&'static str),
    /// No key of any dialect's history.
    NoHistory,
    /// Several dialects fit.
    Ambiguous(Vec<Dialect>),
}

impl fmt::Display for Undetected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undetected::NotAnObject(kind) => {
                write!(f, "the body is {kind}, not a JSON object, so it is no request body of any dialect")
            }
            Undetected::NoHistory => f.write_str(
                "the body has none of the keys that hold a history (`messages`, `input`, `contents`); pass --dialect to say which it is",
            ),
            Undetected::Ambiguous(ds) => {
                let names: Vec<&str> = ds.iter().map(|d| d.name()).collect();
                write!(
                    f,
                    "the body could be any of {}; pass --dialect to say which",
                    names.join(", ")
                )
            }
        }
    }
}

/// Tell the dialect from the body's shape.
pub fn detect(body: &Value) -> Result<Dialect, Undetected> {
    detect_in(body)
}

/// [`detect`] over either view of a body.
pub(crate) fn detect_in<'a, J: Json<'a>>(obj: J) -> Result<Dialect, Undetected> {
    if !obj.is_object() {
        return Err(Undetected::NotAnObject(obj.kind().describe()));
    }
    let has = |k: &str| obj.has(k);
    if has("contents") || has("systemInstruction") || has("system_instruction") {
        return Ok(Dialect::Gemini);
    }
    if has("input") && !has("messages") {
        return Ok(Dialect::OpenAiResponses);
    }
    if !has("messages") {
        if has("instructions") || has("previous_response_id") {
            return Ok(Dialect::OpenAiResponses);
        }
        return Err(Undetected::NoHistory);
    }
    let (a, c) = messages_leaning(obj);
    let b = bedrock_leaning(obj);
    match (a, c, b) {
        (true, false, false) => Ok(Dialect::Anthropic),
        (false, true, false) => Ok(Dialect::OpenAiChat),
        (false, false, true) => Ok(Dialect::BedrockConverse),
        // With no sign at all, an Anthropic body is ruled out when it has no
        // `max_tokens` (the Messages API requires it on every request, "max_tokens:
        // Field required"; chat does not), and a Converse body when a message has
        // content (it would be untyped blocks, a sign).
        (false, false, false) if !obj.has("max_tokens") && some_content(obj) => {
            Ok(Dialect::OpenAiChat)
        }
        _ => {
            // With no sign at all, a Converse body is ruled out: any content of its
            // would be an untyped block, which is a sign.
            let none = !(a || b || c);
            let fits = [
                (c || none, Dialect::OpenAiChat),
                (a || none, Dialect::Anthropic),
                (b, Dialect::BedrockConverse),
            ];
            Err(Undetected::Ambiguous(
                fits.iter().filter(|f| f.0).map(|f| f.1).collect(),
            ))
        }
    }
}

/// Whether some message of `messages` has content: a non-empty string or list.
fn some_content<'a, J: Json<'a>>(obj: J) -> bool {
    let Some(msgs) = obj.get("messages").filter(|m| m.is_array()) else {
        return false;
    };
    msgs.items().any(|m| match m.get("content") {
        Some(c) if c.is_string() => !c.is_empty_string(),
        Some(c) => c.is_array() && c.len() > 0,
        None => false,
    })
}

/// Signs of Bedrock Converse in a body with `messages`: its top-level fields, a `system`
/// list of untyped blocks, or content blocks that are untyped single-member unions.
fn bedrock_leaning<'a, J: Json<'a>>(obj: J) -> bool {
    const FIELDS: &[&str] = &[
        "inferenceConfig",
        "toolConfig",
        "additionalModelRequestFields",
        "additionalModelResponseFieldPaths",
        "guardrailConfig",
        "promptVariables",
        "performanceConfig",
        "requestMetadata",
    ];
    const UNIONS: &[&str] = &[
        "text",
        "toolUse",
        "toolResult",
        "reasoningContent",
        "image",
        "document",
        "video",
        "cachePoint",
        "guardContent",
        "citationsContent",
    ];
    let untyped_union =
        |b: J| b.is_object() && b.len() == 1 && b.members().all(|(k, _)| UNIONS.contains(&k));
    if FIELDS.iter().any(|k| obj.has(k)) {
        return true;
    }
    if let Some(blocks) = obj.get("system").filter(|b| b.is_array()) {
        if blocks.len() > 0 && blocks.items().all(untyped_union) {
            return true;
        }
    }
    let Some(msgs) = obj.get("messages") else {
        return false;
    };
    msgs.items().any(|m| {
        m.get("content")
            .is_some_and(|blocks| blocks.items().any(untyped_union))
    })
}

/// Signs of Anthropic and of OpenAI chat in a body with `messages`.
fn messages_leaning<'a, J: Json<'a>>(obj: J) -> (bool, bool) {
    let typed_system = match obj.get("system") {
        Some(blocks) if blocks.is_array() => blocks.items().any(|b| b.has("type")),
        Some(_) => true,
        None => false,
    };
    // Chat APIs take a `thinking` object too (Z.ai's GLM, `{"type": "enabled"}`);
    // Anthropic's alone has a budget or is adaptive.
    let claude_thinking = obj.get("thinking").is_some_and(|t| {
        t.has("budget_tokens") || t.get("type").and_then(J::str) == Some("adaptive")
    });
    let mut anthropic = typed_system
        || obj.has("anthropic_version")
        || claude_thinking
        || obj.has("stop_sequences")
        || obj.has("anthropic_beta");
    let mut chat = obj.has("n")
        || obj.has("max_completion_tokens")
        || obj.has("response_format")
        || obj.has("frequency_penalty")
        || obj.has("presence_penalty")
        || obj.has("logprobs")
        || obj.has("reasoning_effort")
        || obj.has("stream_options")
        || obj.has("parallel_tool_calls");
    if let Some(m) = obj.get("model").and_then(J::str) {
        if m.starts_with("claude") {
            anthropic = true;
        }
        if m.starts_with("gpt-")
            || m.starts_with("o1")
            || m.starts_with("o3")
            || m.starts_with("o4")
        {
            chat = true;
        }
    }
    if let Some(tools) = obj.get("tools") {
        for t in tools.items() {
            if t.has("input_schema") {
                anthropic = true;
            }
            if t.has("function") {
                chat = true;
            }
        }
    }
    if let Some(msgs) = obj.get("messages") {
        for m in msgs.items() {
            if !m.is_object() {
                continue;
            }
            if let Some("system" | "developer" | "tool" | "function") =
                m.get("role").and_then(J::str)
            {
                chat = true;
            }
            if m.has("tool_calls") || m.has("tool_call_id") || m.has("reasoning_content") {
                chat = true;
            }
            if let Some(blocks) = m.get("content") {
                for b in blocks.items() {
                    match b.get("type").and_then(J::str) {
                        Some(
                            "tool_use"
                            | "tool_result"
                            | "thinking"
                            | "redacted_thinking"
                            | "server_tool_use"
                            | "document"
                            | "web_search_tool_result",
                        ) => anthropic = true,
                        Some("image_url" | "input_audio" | "file" | "refusal") => chat = true,
                        Some("image") if b.has("source") => anthropic = true,
                        _ => {}
                    }
                }
            }
        }
    }
    (anthropic, chat)
}

/// A short description of a JSON value's type, for messages.
pub fn kind_of(v: &Value) -> &'static str {
    Kind::of(v).describe()
}

/// [`kind_of`] over either view of a value.
pub(crate) fn kind_in<'a, J: Json<'a>>(v: J) -> &'static str {
    v.kind().describe()
}

/// A `malformed` violation about the value at `ptr` (plus an optional field).
pub(crate) fn malformed(out: &mut Vec<Violation>, ptr: Ptr, field: Option<&str>, message: String) {
    let path = match field {
        Some(f) => ptr.render_with(f),
        None => ptr.render(),
    };
    out.push(Violation::error(Rule::Malformed, path, message));
}

/// An id as a reader found it ([`string_id`]): its text, or that it is there but not a
/// string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReadId<'a> {
    /// The string; `None` when the id is absent, null or of another type.
    pub(crate) text: Option<&'a str>,
    /// The id is there but not a string (a number, an object): reported as `malformed`,
    /// and carried on the chain's node (`id_mistyped`) so no rule reads it as no id.
    pub(crate) mistyped: bool,
}

impl<'a> ReadId<'a> {
    /// The node of a result answering this id, with none of the marks a result's content
    /// sets (`blank_text`, Anthropic's; `empty_error`, Anthropic's and Converse's).
    pub(crate) fn result(self, name: Option<&'a str>, kind: CallKind, wire: Wire) -> NodeKind<'a> {
        NodeKind::Result {
            call_id: self.text,
            name,
            kind,
            wire,
            blank_text: false,
            empty_error: false,
            id_mistyped: self.mistyped,
        }
    }
}

/// A call's or result's id (or a Responses item's `id`) as the chain reads it: the
/// string, or no text when it is absent or null. An id of another type (a number, an
/// object) has no text either, but it is there: a `malformed` finding says what it is at
/// its pointer (`at` gives the pointer and the id's name for the message, and is called
/// only then), and the answer is marked `mistyped`, which the reader puts on the node. The
/// finding has no reshape, so repair leaves the item alone rather than act on an id it
/// misread. Every reader's ids go through here, so each dialect says it one way.
pub(crate) fn string_id<'a, J: Json<'a>>(
    id: Option<J>,
    out: &mut Vec<Violation>,
    at: impl FnOnce() -> (String, String),
) -> ReadId<'a> {
    match id {
        Some(s) if s.is_string() => ReadId {
            text: s.str(),
            mistyped: false,
        },
        Some(n) if n.is_null() => ReadId::default(),
        None => ReadId::default(),
        Some(other) => {
            let (path, name) = at();
            out.push(Violation::error(
                Rule::Malformed,
                path,
                format!("{name} is {} but must be a string", kind_in(other)),
            ));
            ReadId {
                text: None,
                mistyped: true,
            }
        }
    }
}

/// A `malformed` finding for calls in the turn just read when it is not the model's
/// (Gemini's `user` or role-less content, a Converse or Anthropic `user` message): only the model
/// calls a tool, so the turn is misread (a role lost in a store, a converter that wrote
/// another), and the pairing rules would answer and drop around the misreading,
/// inventing results and losing the real ones. Reported only: which role was meant is
/// not known for certain, and no other rule's fix runs on the item. `at` gives the
/// role's pointer and the turn's name for the message.
pub(crate) fn calls_outside_the_models_turn(
    wire_role: &str,
    models: &str,
    at: impl FnOnce() -> (String, String),
    chain: &Chain<'_>,
    out: &mut Vec<Violation>,
) {
    let Some(turn) = chain.turns.last() else {
        return;
    };
    let calls = chain.nodes[turn.first()..turn.end()]
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Call { .. }))
        .count();
    if calls == 0 {
        return;
    }
    let (path, name) = at();
    out.push(Violation::error(
        Rule::Malformed,
        path,
        format!("{name} holds {calls} tool call(s) but its role is `{wire_role}`: a tool call is the model's, in a turn of role `{models}`"),
    ));
}

/// [`string_id`] of the `field` of union member `key` (its value `union`) in the block at
/// `ptr`: where Converse's `toolUseId` and Gemini's optional `functionCall.id` /
/// `functionResponse.id` live (a protobuf string: Gemini refuses a number there,
/// "Invalid value at '…' (TYPE_STRING), 4"). The message names the block as the body
/// does (`messages[1].content[0].toolUse.toolUseId`).
pub(crate) fn member_id<'a, J: Json<'a>>(
    union: J,
    key: &str,
    field: &str,
    ptr: Ptr,
    out: &mut Vec<Violation>,
) -> ReadId<'a> {
    string_id(union.get(field), out, || {
        let block = match (ptr.item_index(), ptr.inner_key(), ptr.sub_index()) {
            (Some(i), Some(k), Some(j)) => format!("{}[{i}].{k}[{j}]", ptr.root_key()),
            _ => ptr.render(),
        };
        (
            format!("{}/{key}/{field}", ptr.render()),
            format!("{block}.{key}.{field}"),
        )
    })
}

/// The body's history array under `root`, marked as present on the chain; `None`, with
/// a `malformed` finding that says what was found instead, when it is missing or of
/// another type (`items` names what the array holds, for the message).
pub(crate) fn history_array<'a, J: Json<'a>>(
    body: J,
    root: &'static str,
    items: &str,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) -> Option<J> {
    match body.get(root) {
        Some(a) if a.is_array() => {
            chain.facts.history_is_array = true;
            reserve_for(chain, a.len());
            Some(a)
        }
        Some(other) => {
            malformed(
                out,
                Ptr::root(root),
                None,
                format!(
                    "`{root}` is {} but must be an array of {items}",
                    kind_in(other)
                ),
            );
            None
        }
        None => {
            malformed(
                out,
                Ptr::BODY,
                None,
                format!("the body has no `{root}` array"),
            );
            None
        }
    }
}

/// Room on the chain for a history of `items` (a turn each, two or three nodes a turn),
/// so a long history is not copied as the chain grows (a copy of a 60 MB body's nodes
/// held 33 MB twice at once). Room never written is never resident.
pub(crate) fn reserve_for(chain: &mut Chain, items: usize) {
    chain.turns.reserve(items + 1);
    chain.nodes.reserve(3 * items + 1);
}

/// A `malformed` finding about a value that must be a JSON object (a call's input or a
/// result's structured output given as text, a number or a list), located at the node
/// about to be pushed, with the `defect` its fix acts on and the provider's own text.
pub(crate) fn not_an_object(
    out: &mut Vec<Violation>,
    chain: &Chain,
    path: String,
    what: String,
    got: Kind,
    provider: String,
    defect: crate::violation::Defect,
) {
    out.push(
        Violation::error(
            Rule::Malformed,
            path,
            format!("{what} is {} but must be a JSON object", got.describe()),
        )
        .provider(Some(provider))
        .at_node(chain.nodes.len(), chain.turns.len().saturating_sub(1))
        .with_defect(defect),
    );
}

/// Whether a URL is one a provider fetches itself (http or https), as opposed to a
/// `data:` URL, a file id or a path.
pub(crate) fn is_http_url(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// The image format its first bytes prove, of the four the providers take (`jpeg`, `png`,
/// `gif`, `webp`), from the start of its base64 text; `None` when they prove none.
pub(crate) fn image_format_of_base64(data: &str) -> Option<&'static str> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let text = data.as_bytes().get(..16)?;
    let mut head = [0u8; 12];
    for (k, quad) in text.chunks_exact(4).enumerate() {
        let mut n = 0u32;
        for &c in quad {
            n = n << 6 | value(c)?;
        }
        head[k * 3..k * 3 + 3].copy_from_slice(&n.to_be_bytes()[1..]);
    }
    match head {
        [0xff, 0xd8, 0xff, ..] => Some("jpeg"),
        [0x89, b'P', b'N', b'G', ..] => Some("png"),
        [b'G', b'I', b'F', b'8', ..] => Some("gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P'] => Some("webp"),
        _ => None,
    }
}

/// A `malformed` finding for an image whose declared format is not the one its bytes
/// prove: Anthropic and Bedrock refuse it ("The image was specified using the image/png
/// media type, but the image appears to be a image/jpeg image"), in every request that
/// carries it. `path` is the declared type's pointer, `wire` the API's name for the field
/// (`messages.34.content.0.image.source.base64`), `node` the block the image is in.
pub(crate) fn image_format_differs(
    out: &mut Vec<Violation>,
    (path, wire): (String, String),
    (declared, proven): (&str, &str),
    (node, turn): (usize, usize),
) {
    out.push(
        Violation::error(
            Rule::Malformed,
            path,
            format!("the image is declared `{declared}`, but its bytes are a {proven} image"),
        )
        .provider(Some(format!(
            "{wire}: The image was specified using the {declared} media type, but the image appears to be a image/{proven} image"
        )))
        .at_node(node, turn)
        .with_defect(crate::violation::Defect::ImageFormat),
    );
}

/// Whether a result's `content` says nothing: absent, null, `""` or `[]` (what an error
/// result may not be, in Anthropic and Converse alike).
pub(crate) fn says_nothing<'a, J: Json<'a>>(content: Option<J>) -> bool {
    content.is_none_or(|c| c.is_null() || c.is_empty_string() || (c.is_array() && c.len() == 0))
}

/// A string other than `""` (without reading a long one: signatures, encrypted reasoning).
pub(crate) fn nonempty_string<'a, J: Json<'a>>(v: Option<J>) -> bool {
    v.is_some_and(|v| v.is_string() && !v.is_empty_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn detects_each_dialect_from_its_shape() {
        assert_eq!(detect(&json!({"contents": []})), Ok(Dialect::Gemini));
        assert_eq!(
            detect(&json!({"input": "hi"})),
            Ok(Dialect::OpenAiResponses)
        );
        assert_eq!(
            detect(&json!({"messages": [{"role": "system", "content": "x"}]})),
            Ok(Dialect::OpenAiChat)
        );
        assert_eq!(
            detect(&json!({"system": "x", "messages": [{"role": "user", "content": "x"}]})),
            Ok(Dialect::Anthropic)
        );
        // No sign of either, and no `max_tokens`, which every Anthropic request has.
        assert_eq!(
            detect(&json!({"messages": [{"role": "user", "content": "x"}]})),
            Ok(Dialect::OpenAiChat)
        );
        assert_eq!(
            detect(&json!({"messages": [{"role": "user", "content": "x"}], "max_tokens": 9})),
            Err(Undetected::Ambiguous(vec![
                Dialect::OpenAiChat,
                Dialect::Anthropic
            ]))
        );
        // Nothing to judge by: no content (a Converse message always has some).
        assert!(matches!(
            detect(&json!({"messages": [{"role": "user", "content": []}]})),
            Err(Undetected::Ambiguous(_))
        ));
        assert!(matches!(
            detect(&json!({"messages": {"role": "user"}})),
            Err(Undetected::Ambiguous(_))
        ));
        // A sign wins over a missing `max_tokens` (a broken Anthropic body is still one).
        assert_eq!(
            detect(&json!({"system": "x", "messages": [{"role": "user", "content": "x"}]})),
            Ok(Dialect::Anthropic)
        );
        assert_eq!(
            detect(&json!([1])),
            Err(Undetected::NotAnObject("an array"))
        );
        assert_eq!(detect(&json!({"foo": 1})), Err(Undetected::NoHistory));
    }

    #[test]
    fn a_thinking_object_is_anthropic_only_with_a_budget_or_adaptive() {
        let user = json!([{"role": "user", "content": "x"}]);
        let glm = json!({"model": "glm-4.7", "messages": user, "thinking": {"type": "enabled"}});
        assert_eq!(detect(&glm), Ok(Dialect::OpenAiChat));
        let claude = json!({"messages": user, "max_tokens": 2048,
            "thinking": {"type": "enabled", "budget_tokens": 1024}});
        assert_eq!(detect(&claude), Ok(Dialect::Anthropic));
        let adaptive = json!({"messages": user, "max_tokens": 9, "thinking": {"type": "adaptive"}});
        assert_eq!(detect(&adaptive), Ok(Dialect::Anthropic));
    }

    /// Every reader says a call or result id of another type than a string in one way:
    /// `malformed` at the id's pointer, naming the field and what it is; null is no id.
    #[test]
    fn an_id_of_another_type_is_malformed_at_its_pointer_in_every_dialect() {
        let malformed_ids = |d: Dialect, body: Value| -> Vec<(String, String)> {
            let mut out = Vec::new();
            d.build_chain(&body, &mut out);
            out.into_iter()
                .filter(|v| v.rule == Rule::Malformed)
                .map(|v| (v.path, v.message))
                .collect()
        };
        let user = json!({"role": "user", "content": "x"});
        let chat = json!({"messages": [user,
            {"role": "assistant", "tool_calls": [{"id": 7, "type": "function",
                "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": null, "content": "ok"}]});
        let responses = json!({"input": [
            {"type": "function_call", "call_id": [1], "name": "f", "arguments": "{}"}]});
        let anthropic = json!({"max_tokens": 9, "messages": [user,
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": 7, "name": "f", "input": {}},
                {"type": "mcp_tool_use", "id": true, "name": "g", "server_name": "s", "input": {}},
                {"type": "mcp_tool_result", "tool_use_id": null, "content": []}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": {"id": "x"}}]}]});
        let converse = json!({"messages": [
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": 7, "name": "f", "input": {}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": {"S": "x"}, "content": []}}]}]});
        let gemini = json!({"contents": [
            {"role": "model", "parts": [{"function_call": {"id": 7, "name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": null, "name": "f", "response": {}}}]}]});
        let pair = |p: &str, m: &str| (p.to_string(), m.to_string());
        assert_eq!(
            malformed_ids(Dialect::OpenAiChat, chat),
            [pair(
                "/messages/1/tool_calls/0/id",
                "messages[1].tool_calls[0].id is a number but must be a string"
            )]
        );
        assert_eq!(
            malformed_ids(Dialect::OpenAiResponses, responses),
            [pair(
                "/input/0/call_id",
                "input[0].call_id is an array but must be a string"
            )]
        );
        assert_eq!(
            malformed_ids(Dialect::Anthropic, anthropic),
            [
                pair("/messages/1/content/0/id", "messages[1].content[0].id (tool_use) is a number but must be a string"),
                pair("/messages/1/content/1/id", "messages[1].content[1].id (mcp_tool_use) is a boolean but must be a string"),
                pair("/messages/2/content/0/tool_use_id", "messages[2].content[0].tool_use_id (tool_result) is an object but must be a string"),
            ]
        );
        assert_eq!(
            malformed_ids(Dialect::BedrockConverse, converse),
            [
                pair(
                    "/messages/0/content/0/toolUse/toolUseId",
                    "messages[0].content[0].toolUse.toolUseId is a number but must be a string"
                ),
                pair(
                    "/messages/1/content/0/toolResult/toolUseId",
                    "messages[1].content[0].toolResult.toolUseId is an object but must be a string"
                ),
            ]
        );
        assert_eq!(
            malformed_ids(Dialect::Gemini, gemini),
            [pair(
                "/contents/0/parts/0/function_call/id",
                "contents[0].parts[0].function_call.id is a number but must be a string"
            )]
        );
    }

    #[test]
    fn endpoints_name_their_dialect() {
        assert_eq!(
            Dialect::from_endpoint("/v1/chat/completions"),
            Some(Dialect::OpenAiChat)
        );
        assert_eq!(
            Dialect::from_endpoint("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"),
            Some(Dialect::Gemini)
        );
        assert_eq!(
            Dialect::from_endpoint("/v1/messages"),
            Some(Dialect::Anthropic)
        );
        assert_eq!(
            Dialect::from_endpoint("/v1/responses"),
            Some(Dialect::OpenAiResponses)
        );
        assert_eq!(Dialect::from_endpoint("/healthz"), None);
    }
}
