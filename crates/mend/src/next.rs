//! The next request: a request body, the response it got, and the tool results, turned
//! into the body a client sends next.
//!
//! Two recorded bugs started this module. A client that kept only the latest reasoning
//! item sent a Responses `function_call` without the `reasoning` item it was produced
//! with; another dropped the `msg_…` id of an assistant message and sent reasoning
//! without its follower. Both came from rebuilding the model's output instead of keeping
//! what the response said. [`next_request`] keeps it: the response is read by
//! [`crate::canonical::capture`] (every item id, call id, signature and
//! encrypted payload), written back with the dialect's own writer, and appended to the
//! request's history as it was; then each tool result goes where the dialect wants it:
//!
//! | dialect | tool results |
//! |---|---|
//! | `openai_chat` | one `tool` message per call, after the assistant message, in call order |
//! | `openai_responses` | one `function_call_output` per call after the output items (`custom_tool_call_output` for a custom call, `<kind>_output` for the other client call kinds) |
//! | `anthropic` | one `user` message whose content starts with the `tool_result` blocks, in call order, `is_error` kept |
//! | `gemini` | one `user` content with a `functionResponse` part per call, in call order, with the call's name (and id when the call had one) |
//! | `bedrock_converse` | one `user` message whose content starts with the `toolResult` blocks, in call order, an error as `"status": "error"` |
//!
//! Anthropic and Converse refuse blank text blocks once the history goes on, and a
//! response can hold one: next leaves them out. Converse also refuses a history with
//! tool blocks but no `toolConfig`; the request's own `toolConfig` is kept, as every
//! top-level field is. DeepSeek-R1 on Converse returns reasoning but refuses any back
//! ("User messages cannot contain reasoning content."): given that model
//! ([`NextOptions::model`], the URL's, since a Converse body names none), next leaves
//! the response's reasoning out.
//!
//! A Responses request that continues stored state (`previous_response_id` or
//! `conversation`) sends only what is new: the provider already holds the earlier input
//! and the response's output, and items sent twice are rejected as duplicates. Its
//! `previous_response_id` becomes the response's own id. A Responses request with
//! `store: false` whose response returned reasoning without `encrypted_content` cannot
//! send that reasoning back (the provider kept nothing to resolve its `rs_…` id
//! against), so the reasoning is left out and its follower loses its item id, as the
//! recorded stateless loops that the provider accepted do; [`Next::notes`] says so.
//!
//! Invariant: the request's own history is never rewritten, only appended to (or, for
//! stored state, replaced by the new items); the response's output is never rebuilt by
//! hand. Whether the result is valid is for [`check_value`](crate::check_value) to say;
//! this module reports what it could not do (calls left without a result) in [`Next`].
//!
//! ```
//! use mend::canonical::capture::read_response;
//! use mend::next::{next_request, NextOptions, ToolOutput};
//! use mend::Dialect;
//! let request = serde_json::json!({"model": "gpt-5", "input": "weather in Paris?"});
//! let response = br#"{"id": "resp_1", "object": "response", "output": [
//!   {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
//!   {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
//!    "arguments": "{\"city\":\"Paris\"}"}]}"#;
//! let reply = read_response(Dialect::OpenAiResponses, response).unwrap();
//! let results = [ToolOutput::answer("call_1", serde_json::json!("18C"))];
//! let next = next_request(&request, Dialect::OpenAiResponses, &reply, &results,
//!                         &NextOptions::default()).unwrap();
//! let input = next.body["input"].as_array().unwrap();
//! assert_eq!(input[1]["id"], "rs_1");
//! assert_eq!(input[2]["id"], "fc_1");
//! assert_eq!(input[3], serde_json::json!(
//!     {"type": "function_call_output", "call_id": "call_1", "output": "18C"}));
//! assert!(mend::check_value(&next.body, &mend::CheckOptions::default()).unwrap().valid());
//! ```

use serde_json::{json, Value};

use crate::canonical::capture::{self, CaptureError, Reply};
use crate::canonical::{Conversation, Form, Message, Part, Role, ToolContent, ToolResult};
use crate::canonical::{Text, WriteError};
use crate::dialect::kind_of;
use crate::Dialect;

/// One tool result to send: the call it answers, and what the tool returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The call id it answers.
    pub call_id: Option<String>,
    /// The tool's name: answers the first call of that name not yet answered, in call
    /// order (for Gemini calls, which often have no id).
    pub name: Option<String>,
    /// What the tool returned: a string, or JSON. An array of typed content parts is
    /// sent as content parts; other JSON as its compact text (Gemini: as the response
    /// object, under `result` when it is not an object; Converse: an array of its result
    /// blocks, `{"text"}`, `{"json"}`, `{"image"}`, `{"document"}` or `{"video"}`, as
    /// those blocks, an object as one `{"json"}` block).
    pub output: Value,
    /// The tool failed. Anthropic carries it as `is_error`, Converse as `"status":
    /// "error"`, Gemini as an `error` key; OpenAI has no field for it (a note says so).
    pub is_error: bool,
}

impl ToolOutput {
    /// A result for a call id.
    pub fn answer(call_id: impl Into<String>, output: Value) -> ToolOutput {
        ToolOutput {
            call_id: Some(call_id.into()),
            name: None,
            output,
            is_error: false,
        }
    }

    /// Read the results file form: a JSON array of `{"call_id": "...", "output": <string
    /// or JSON>, "is_error"?: bool}`, or `{"name": "...", "output": ...}` for calls
    /// without ids.
    pub fn list_from_json(v: &Value) -> Result<Vec<ToolOutput>, ResultsError> {
        let bad = |path: String, reason: String| ResultsError { path, reason };
        let Value::Array(items) = v else {
            return Err(bad(
                String::new(),
                format!(
                    "the results are {} but must be an array of {{\"call_id\", \"output\"}} objects",
                    kind_of(v)
                ),
            ));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let Value::Object(o) = item else {
                return Err(bad(
                    format!("/{i}"),
                    format!(
                        "a result is {} but must be an object with `call_id` (or `name`) and `output`",
                        kind_of(item)
                    ),
                ));
            };
            let text = |k: &str| -> Result<Option<String>, ResultsError> {
                match o.get(k) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(other) => Err(bad(
                        format!("/{i}/{k}"),
                        format!("`{k}` is {} but must be a string", kind_of(other)),
                    )),
                }
            };
            let call_id = text("call_id")?;
            let name = text("name")?;
            if call_id.is_none() && name.is_none() {
                return Err(bad(
                    format!("/{i}"),
                    "a result names no call: give `call_id` (or `name` for a call without an id)"
                        .into(),
                ));
            }
            let Some(output) = o.get("output") else {
                return Err(bad(format!("/{i}"), "a result without `output`".into()));
            };
            let is_error = match o.get("is_error") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(bad(
                        format!("/{i}/is_error"),
                        format!("`is_error` is {} but must be true or false", kind_of(other)),
                    ))
                }
            };
            if let Some(k) = o
                .keys()
                .find(|k| !matches!(k.as_str(), "call_id" | "name" | "output" | "is_error"))
            {
                return Err(bad(
                    format!("/{i}/{k}"),
                    format!("unknown key `{k}` (a result has call_id, name, output, is_error)"),
                ));
            }
            out.push(ToolOutput {
                call_id,
                name,
                output: output.clone(),
                is_error,
            });
        }
        Ok(out)
    }
}

/// A results list that does not have the documented shape: where (a JSON pointer into
/// the list) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{reason}", if path.is_empty() { String::new() } else { format!("{path}: ") })]
pub struct ResultsError {
    /// JSON pointer into the results list; empty for the list itself.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// How to build the next request.
#[derive(Debug, Clone, Default)]
pub struct NextOptions {
    /// The choice (OpenAI chat) or candidate (Gemini) the conversation continues with.
    pub choice: usize,
    /// A next user turn to append after the results.
    pub user: Option<String>,
    /// The model the request goes to, when the body does not say (a Converse body never
    /// does: the model is in the URL); the body's `model` otherwise. What a model takes
    /// back can depend on it: DeepSeek-R1 on Converse takes no reasoning.
    pub model: Option<String>,
}

/// A tool call the response made.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResponseCall {
    /// Its call id (Gemini calls often have none).
    pub call_id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The wire kind: `function_call`, `custom_tool_call`... for Responses; `tool_call`
    /// otherwise.
    pub kind: String,
}

impl std::fmt::Display for ResponseCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.call_id {
            Some(id) => write!(f, "{id} ({})", self.name),
            None => write!(f, "{} (no id)", self.name),
        }
    }
}

/// The next request body, and what went into it.
#[derive(Debug, Clone, PartialEq)]
pub struct Next {
    /// The body to send.
    pub body: Value,
    /// The calls the response made, in order.
    pub calls: Vec<ResponseCall>,
    /// The calls no result answers: the body is not ready to send until they are.
    pub unanswered: Vec<ResponseCall>,
    /// What was done that a reader would not guess, and why (stored state, reasoning
    /// that cannot come back, an error flag the dialect cannot carry).
    pub notes: Vec<String>,
}

/// Why no next request could be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NextError {
    /// The request body does not have the dialect's history.
    #[error("the request is not a {dialect} request: {reason}")]
    Request {
        /// The dialect.
        dialect: Dialect,
        /// Why.
        reason: String,
    },
    /// The response has no assistant output to continue with.
    #[error("the {dialect} response has no assistant output")]
    NoOutput {
        /// The dialect.
        dialect: Dialect,
    },
    /// `choice` is past the response's choices or candidates.
    #[error("choice {choice} asked for, but the response has {count} {}", if *count == 1 { "choice (0)".to_string() } else { format!("choices (0 to {})", count.saturating_sub(1)) })]
    NoSuchChoice {
        /// Asked for.
        choice: usize,
        /// How many there are.
        count: usize,
    },
    /// `choice` given for a dialect whose response has one output.
    #[error("a {dialect} response has one output; choice {choice} applies to openai_chat choices and gemini candidates")]
    ChoiceNotApplicable {
        /// The dialect.
        dialect: Dialect,
        /// Asked for.
        choice: usize,
    },
    /// A result answers no call of the response.
    #[error(
        "result {index} answers {what}, which no call of the response has (its calls: {calls})"
    )]
    UnknownCall {
        /// Index of the result in the list.
        index: usize,
        /// `call id "x"` or `a call named "x"`.
        what: String,
        /// The response's calls, listed.
        calls: String,
    },
    /// Two results answer the same call.
    #[error("result {index} answers {call}, which result {first} already answers")]
    DuplicateResult {
        /// Index of the second result.
        index: usize,
        /// The earlier one.
        first: usize,
        /// The call.
        call: String,
    },
    /// The request continues stored state, but the response has no id to continue from.
    #[error("the request continues stored state with `previous_response_id`, but the response has no `id` to continue from")]
    NoResponseId,
    /// An Anthropic stream that held several messages, one after another: several
    /// responses, where the next request continues one.
    #[error("the anthropic response holds {count} messages, one after another; a response is one message (give the one to continue from)")]
    SeveralMessages {
        /// How many.
        count: usize,
    },
    /// The output or the results could not be written in the dialect.
    #[error("cannot write the next request as {dialect}: {error}")]
    Write {
        /// The dialect.
        dialect: Dialect,
        /// Where and why.
        error: WriteError,
    },
}

/// Read a response of `dialect`: a JSON body, an SSE stream or (Converse) a binary
/// event stream, told from the bytes (a body starts with `{` or `[`; an event stream
/// starts with its first frame's big-endian length, whose first byte is 0 for any frame
/// under 16 MB).
pub fn read_reply(dialect: Dialect, bytes: &[u8]) -> Result<Reply, CaptureError> {
    match bytes.trim_ascii_start().first() {
        Some(b'{' | b'[') => capture::read_response(dialect, bytes),
        _ => capture::read_stream(dialect, bytes),
    }
}

/// The assistant messages a conversation continues with: for OpenAI chat and Gemini
/// the `choice`-th choice or candidate, for Responses and Anthropic the whole output.
pub fn continued_output(
    dialect: Dialect,
    reply: &Reply,
    choice: usize,
) -> Result<Vec<Message>, NextError> {
    let messages = match dialect {
        Dialect::OpenAiChat | Dialect::Gemini => {
            if reply.messages.is_empty() {
                return Err(NextError::NoOutput { dialect });
            }
            match reply.messages.get(choice) {
                Some(m) => vec![m.clone()],
                None => {
                    return Err(NextError::NoSuchChoice {
                        choice,
                        count: reply.messages.len(),
                    })
                }
            }
        }
        Dialect::OpenAiResponses | Dialect::Anthropic | Dialect::BedrockConverse => {
            if choice != 0 {
                return Err(NextError::ChoiceNotApplicable { dialect, choice });
            }
            if matches!(dialect, Dialect::Anthropic | Dialect::BedrockConverse)
                && reply.messages.len() > 1
            {
                return Err(NextError::SeveralMessages {
                    count: reply.messages.len(),
                });
            }
            reply.messages.clone()
        }
    };
    if messages.is_empty() {
        return Err(NextError::NoOutput { dialect });
    }
    Ok(messages)
}

/// Canonical messages of `dialect` as that dialect's history items, written by the
/// dialect's own writer (so a captured message comes back as the provider sent it).
pub fn history_items(dialect: Dialect, messages: Vec<Message>) -> Result<Vec<Value>, WriteError> {
    let conv = Conversation {
        dialect: Some(dialect),
        messages,
        ..Conversation::default()
    };
    let body = conv.to_request(dialect)?;
    match body.get(dialect.history_key()) {
        Some(Value::Array(items)) => Ok(items.clone()),
        _ => Ok(Vec::new()),
    }
}

/// Anthropic refuses a text block that is empty or only white space anywhere but in a
/// final assistant message ("messages: text content blocks must be non-empty", "text
/// content blocks must contain non-whitespace text"), and so does Converse ("The text
/// field in the ContentBlock object ... is blank"); a response can hold one: an empty
/// block opened before a `tool_use`, or the "\n\n" a model writes before its
/// thinking. It carries nothing, so it is left out once the history goes on; a message
/// that holds nothing else keeps it (there is nothing to send instead).
fn drop_blank_text(dialect: Dialect, output: &mut [Message], notes: &mut Vec<String>) {
    let refusal = match dialect {
        Dialect::BedrockConverse => "Converse refuses them (\"The text field in the ContentBlock object is blank\")",
        _ => "Anthropic refuses them once the history goes on (\"text content blocks must be non-empty\")",
    };
    let blank = |p: &Part| matches!(p, Part::Text(t) if t.text.trim().is_empty() && t.extra.values().all(Value::is_null));
    for m in output.iter_mut() {
        if m.parts.iter().all(blank) {
            continue;
        }
        let before = m.parts.len();
        m.parts.retain(|p| !blank(p));
        let n = before - m.parts.len();
        if n > 0 {
            notes.push(format!(
                "left out {n} blank text block(s) of the response: {refusal}"
            ));
        }
    }
}

/// The next request after `request` got `reply`: the reply's output appended to the
/// history exactly as the provider needs it back, then `results` where the dialect
/// wants them, then `opts.user` as a user turn. See the module docs for each dialect.
///
/// ```
/// use mend::{Dialect, ToolOutput};
/// let request = serde_json::json!({"model": "gpt-4o",
///     "messages": [{"role": "user", "content": "weather?"}]});
/// let response = br#"{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{
///     "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
///     "content": null, "tool_calls": [{"id": "call_1", "type": "function",
///     "function": {"name": "weather", "arguments": "{}"}}]}}]}"#;
/// let reply = mend::next::read_reply(Dialect::OpenAiChat, response).unwrap();
/// let results = [ToolOutput::answer("call_1", serde_json::json!("sunny"))];
/// let next = mend::next_request(&request, Dialect::OpenAiChat, &reply, &results,
///     &mend::NextOptions::default()).unwrap();
/// assert!(next.unanswered.is_empty());
/// assert_eq!(next.body["messages"][2]["role"], "tool");
/// assert!(mend::check_value(&next.body, &Default::default()).unwrap().valid());
/// ```
pub fn next_request(
    request: &Value,
    dialect: Dialect,
    reply: &Reply,
    results: &[ToolOutput],
    opts: &NextOptions,
) -> Result<Next, NextError> {
    let bad = |reason: String| NextError::Request { dialect, reason };
    let Some(obj) = request.as_object() else {
        return Err(bad(format!("the body is {}", kind_of(request))));
    };
    let key = dialect.history_key();
    let history: Vec<Value> = match obj.get(key) {
        Some(Value::Array(items)) => items.clone(),
        // A Responses `input` string is one user message; it becomes a list.
        Some(Value::String(s)) if dialect == Dialect::OpenAiResponses => {
            vec![json!({"role": "user", "content": s})]
        }
        None | Some(Value::Null) if dialect == Dialect::OpenAiResponses => Vec::new(),
        None => return Err(bad(format!("it has no `{key}`"))),
        Some(other) => {
            return Err(bad(format!(
                "`{key}` is {} but must be an array",
                kind_of(other)
            )))
        }
    };
    let mut notes = Vec::new();
    let mut output = continued_output(dialect, reply, opts.choice)?;
    let stored_state = dialect == Dialect::OpenAiResponses
        && ["previous_response_id", "conversation"]
            .iter()
            .any(|k| obj.get(*k).is_some_and(|v| !v.is_null()));
    if dialect == Dialect::OpenAiResponses
        && !stored_state
        && obj.get("store") == Some(&Value::Bool(false))
    {
        drop_unresolvable_reasoning(&mut output, &mut notes);
    }
    let model = opts
        .model
        .as_deref()
        .or_else(|| obj.get("model").and_then(Value::as_str));
    if crate::rules::thinking::takes_no_reasoning_back(dialect, model) {
        drop_reasoning(&mut output, model.unwrap_or_default(), &mut notes);
    }
    if matches!(dialect, Dialect::Anthropic | Dialect::BedrockConverse) {
        drop_blank_text(dialect, &mut output, &mut notes);
    }
    let calls = calls_of(dialect, &output);
    let answers = match_results(&calls, results)?;
    let new = result_messages(dialect, &calls, &answers, results, opts, &mut notes);
    let write = |m: Vec<Message>| {
        history_items(dialect, m).map_err(|error| NextError::Write { dialect, error })
    };
    let mut body = obj.clone();
    let items = if stored_state {
        // The provider holds the earlier input and this output: send only what is new.
        if obj.contains_key("previous_response_id") {
            let Some(id) = reply.meta.get("id").and_then(Value::as_str) else {
                return Err(NextError::NoResponseId);
            };
            body.insert("previous_response_id".into(), Value::String(id.into()));
            notes.push(format!(
                "the request continues stored state: `previous_response_id` is now {id}, and `input` holds only the new items (the provider keeps the earlier input and this response's output; sending them again duplicates them)"
            ));
        } else {
            notes.push(
                "the request continues a stored `conversation`: `input` holds only the new items (the provider appended this response's output to the conversation; sending it again duplicates it)"
                    .into(),
            );
        }
        write(new)?
    } else {
        let mut items = history;
        items.extend(write(output)?);
        items.extend(write(new)?);
        items
    };
    body.insert(key.into(), Value::Array(items));
    let unanswered = calls
        .iter()
        .zip(&answers)
        .filter(|(_, a)| a.is_none())
        .map(|(c, _)| c.clone())
        .collect();
    Ok(Next {
        body: Value::Object(body),
        calls,
        unanswered,
        notes,
    })
}

/// `store: false` and reasoning without `encrypted_content`: the provider kept nothing
/// that its `rs_…` id could name, so the item cannot come back ("Item with id 'rs_…'
/// not found. Items are not persisted when `store` is set to false."). Leave it out, and
/// take the item id off its follower, which would otherwise be sent without its
/// reasoning.
fn drop_unresolvable_reasoning(output: &mut Vec<Message>, notes: &mut Vec<String>) {
    let mut kept = Vec::with_capacity(output.len());
    let mut dropped = Vec::new();
    let mut orphaned_follower = false;
    for mut m in output.drain(..) {
        if let [Part::Reasoning(r)] = m.parts.as_slice() {
            if r.encrypted.is_none() {
                dropped.push(r.item_id.clone().unwrap_or_else(|| "(no id)".into()));
                orphaned_follower = true;
                continue;
            }
        }
        if std::mem::take(&mut orphaned_follower) {
            m.item_id = None;
            for p in &mut m.parts {
                if let Part::ToolCall(c) = p {
                    c.item_id = None;
                }
            }
        }
        kept.push(m);
    }
    *output = kept;
    if !dropped.is_empty() {
        notes.push(format!(
            "`store` is false and reasoning {} came without `encrypted_content`: the provider kept nothing to resolve it against, so it is left out and the item after it loses its item id (ask for `include: [\"reasoning.encrypted_content\"]` to keep reasoning across turns)",
            dropped.join(", ")
        ));
    }
}

/// A model that returns reasoning but takes none back (`thinking-modified`): the output's
/// reasoning is left out of the turn sent back, and a message that held nothing else
/// with it.
fn drop_reasoning(output: &mut Vec<Message>, model: &str, notes: &mut Vec<String>) {
    let mut n = 0;
    output.retain_mut(|m| {
        let before = m.parts.len();
        m.parts.retain(|p| !matches!(p, Part::Reasoning(_)));
        n += before - m.parts.len();
        !(m.parts.is_empty() && before > 0)
    });
    if n > 0 {
        notes.push(format!(
            "left out {n} reasoning block(s) of the response: {model} takes no reasoning back (\"User messages cannot contain reasoning content.\")"
        ));
    }
}

/// The client tool calls in the output, in order.
fn calls_of(dialect: Dialect, output: &[Message]) -> Vec<ResponseCall> {
    let mut calls = Vec::new();
    for m in output {
        if let (Dialect::OpenAiResponses, Some(v)) = (dialect, m.verbatim_value()) {
            let ty = v.get("type").and_then(Value::as_str).unwrap_or_default();
            if crate::dialect::openai_responses::CLIENT_CALLS
                .iter()
                .any(|(c, _)| *c == ty)
            {
                let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
                calls.push(ResponseCall {
                    call_id: s("call_id"),
                    name: s("name").unwrap_or_else(|| ty.to_string()),
                    kind: ty.to_string(),
                });
            }
            continue;
        }
        for p in &m.parts {
            if let Part::ToolCall(c) = p {
                let kind = if dialect == Dialect::OpenAiResponses {
                    "function_call"
                } else {
                    "tool_call"
                };
                calls.push(ResponseCall {
                    call_id: c.id.clone(),
                    name: c.name.clone(),
                    kind: kind.into(),
                });
            }
        }
    }
    calls
}

/// For each call, the index of the result that answers it.
fn match_results(
    calls: &[ResponseCall],
    results: &[ToolOutput],
) -> Result<Vec<Option<usize>>, NextError> {
    let mut answers: Vec<Option<usize>> = vec![None; calls.len()];
    let listed = || {
        if calls.is_empty() {
            "none".to_string()
        } else {
            calls
                .iter()
                .map(ResponseCall::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    for (index, r) in results.iter().enumerate() {
        let (found, what) = match (&r.call_id, &r.name) {
            (Some(id), _) => (
                calls
                    .iter()
                    .position(|c| c.call_id.as_deref() == Some(id.as_str())),
                format!("call id \"{id}\""),
            ),
            (None, Some(name)) => (
                // The first call of that name not answered yet: order decides.
                calls
                    .iter()
                    .zip(&answers)
                    .position(|(c, a)| c.name == *name && a.is_none())
                    .or_else(|| calls.iter().position(|c| c.name == *name)),
                format!("a call named \"{name}\""),
            ),
            (None, None) => (None, "no call".to_string()),
        };
        let Some(k) = found else {
            return Err(NextError::UnknownCall {
                index,
                what,
                calls: listed(),
            });
        };
        if let Some(first) = answers[k] {
            return Err(NextError::DuplicateResult {
                index,
                first,
                call: calls[k].to_string(),
            });
        }
        answers[k] = Some(index);
    }
    Ok(answers)
}

/// Whether a value is a list of typed content parts (sent as parts, not as text).
fn is_content_parts(v: &Value) -> bool {
    matches!(v, Value::Array(a) if !a.is_empty()
        && a.iter().all(|p| p.get("type").is_some_and(Value::is_string)))
}

/// Whether a list is Converse `toolResult` content: one-member blocks of the kinds a
/// result holds.
fn is_converse_result_blocks(blocks: &[Value]) -> bool {
    !blocks.is_empty()
        && blocks.iter().all(|b| {
            b.as_object().is_some_and(|o| {
                o.len() == 1
                    && o.keys().all(|k| {
                        matches!(k.as_str(), "text" | "json" | "image" | "document" | "video")
                    })
            })
        })
}

/// What a result carries in the dialect.
fn result_content(dialect: Dialect, r: &ToolOutput) -> ToolContent {
    match (dialect, &r.output) {
        // Gemini's response is an object; `error` is its documented key for a failure.
        (Dialect::Gemini, Value::Object(o)) if !r.is_error => {
            ToolContent::Json(Value::Object(o.clone()))
        }
        (Dialect::Gemini, v) => {
            let key = if r.is_error { "error" } else { "result" };
            ToolContent::Json(json!({ key: v }))
        }
        (_, Value::String(s)) => ToolContent::Text(s.clone()),
        (Dialect::BedrockConverse, Value::Array(blocks)) if is_converse_result_blocks(blocks) => {
            ToolContent::Parts(
                blocks
                    .iter()
                    .map(crate::dialect::bedrock_converse::canonical::read_block)
                    .collect(),
            )
        }
        (Dialect::BedrockConverse, v @ Value::Object(_)) => ToolContent::Json(v.clone()),
        (Dialect::BedrockConverse, v) => ToolContent::Text(v.to_string()),
        (_, v) if is_content_parts(v) => ToolContent::Json(v.clone()),
        (_, v) => ToolContent::Text(v.to_string()),
    }
}

/// The messages that carry the results (in call order) and the next user turn.
fn result_messages(
    dialect: Dialect,
    calls: &[ResponseCall],
    answers: &[Option<usize>],
    results: &[ToolOutput],
    opts: &NextOptions,
    notes: &mut Vec<String>,
) -> Vec<Message> {
    let answered = || {
        calls
            .iter()
            .zip(answers)
            .filter_map(|(c, a)| a.map(|i| (c, &results[i])))
    };
    let part = |c: &ResponseCall, r: &ToolOutput| {
        Part::ToolResult(ToolResult {
            call_id: c.call_id.clone(),
            name: (dialect == Dialect::Gemini).then(|| c.name.clone()),
            content: Some(result_content(dialect, r)),
            is_error: r.is_error
                && matches!(dialect, Dialect::Anthropic | Dialect::BedrockConverse),
            ..ToolResult::default()
        })
    };
    if matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses) {
        let flagged: Vec<String> = answered()
            .filter(|(_, r)| r.is_error)
            .map(|(c, _)| c.to_string())
            .collect();
        if !flagged.is_empty() {
            notes.push(format!(
                "{dialect} has no error flag for a tool result: the output of {} is sent as given (say in it that the tool failed)",
                flagged.join(", ")
            ));
        }
    }
    let mut out = Vec::new();
    match dialect {
        Dialect::OpenAiChat => {
            for (c, r) in answered() {
                out.push(Message::new(Role::Tool, vec![part(c, r)]));
            }
        }
        Dialect::OpenAiResponses => {
            for (c, r) in answered() {
                if c.kind == "function_call" {
                    out.push(Message::new(Role::Tool, vec![part(c, r)]));
                    continue;
                }
                let kind = crate::dialect::openai_responses::CLIENT_CALLS
                    .iter()
                    .find(|(k, _)| *k == c.kind)
                    .map_or("function_call_output", |(_, o)| o);
                let output = match (&r.output, c.kind.as_str()) {
                    (Value::String(_), _) => r.output.clone(),
                    (v, "custom_tool_call") if !is_content_parts(v) => Value::String(v.to_string()),
                    (v, _) => v.clone(),
                };
                let item = json!({"type": kind, "call_id": c.call_id, "output": output});
                out.push(Message::verbatim(Role::Tool, item));
            }
        }
        Dialect::Anthropic | Dialect::Gemini | Dialect::BedrockConverse => {
            let parts: Vec<Part> = answered().map(|(c, r)| part(c, r)).collect();
            if !parts.is_empty() {
                out.push(Message::new(Role::User, parts));
            }
        }
    }
    if let Some(text) = &opts.user {
        match (dialect, out.last_mut()) {
            // The results' user message carries the text too, after the results.
            (Dialect::Anthropic | Dialect::Gemini | Dialect::BedrockConverse, Some(m)) => {
                m.parts.push(Part::Text(Text {
                    text: text.clone(),
                    ..Text::default()
                }))
            }
            _ => {
                let mut m = Message::new(Role::User, vec![Part::text(text.clone())]);
                // Gemini and Converse have no string form: their text is a part.
                if !matches!(dialect, Dialect::Gemini | Dialect::BedrockConverse) {
                    m.form = Some(Form::String);
                }
                out.push(m);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::capture::read_response;
    use serde_json::Map;

    fn keys(o: &Map<String, Value>) -> Vec<&str> {
        o.keys().map(String::as_str).collect()
    }

    fn reply(dialect: Dialect, v: Value) -> Reply {
        read_response(dialect, v.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn an_input_string_becomes_a_list_in_place() {
        let req = json!({"model": "gpt-5", "input": "hi", "store": true});
        let r = reply(
            Dialect::OpenAiResponses,
            json!({"id": "resp_1", "output": [
                {"type": "message", "id": "msg_1", "role": "assistant",
                 "content": [{"type": "output_text", "text": "hello"}]}]}),
        );
        let n = next_request(
            &req,
            Dialect::OpenAiResponses,
            &r,
            &[],
            &NextOptions::default(),
        )
        .unwrap();
        let o = n.body.as_object().unwrap();
        assert_eq!(keys(o), ["model", "input", "store"]);
        assert_eq!(n.body["input"][0], json!({"role": "user", "content": "hi"}));
        assert_eq!(n.body["input"][1]["id"], "msg_1");
    }

    #[test]
    fn results_follow_call_order_not_file_order() {
        let req = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]});
        let r = reply(
            Dialect::OpenAiChat,
            json!({"id": "c", "choices": [{"index": 0, "message": {"role": "assistant",
                "content": null, "tool_calls": [
                  {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                  {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}}]}),
        );
        let results = [
            ToolOutput::answer("b", json!("B")),
            ToolOutput::answer("a", json!({"n": 1})),
        ];
        let n = next_request(
            &req,
            Dialect::OpenAiChat,
            &r,
            &results,
            &NextOptions::default(),
        )
        .unwrap();
        let m = n.body["messages"].as_array().unwrap();
        assert_eq!(
            m[2],
            json!({"role": "tool", "tool_call_id": "a", "content": "{\"n\":1}"})
        );
        assert_eq!(
            m[3],
            json!({"role": "tool", "tool_call_id": "b", "content": "B"})
        );
        assert!(n.unanswered.is_empty());
    }

    #[test]
    fn an_unknown_call_id_names_the_calls_there_are() {
        let req = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]});
        let r = reply(
            Dialect::OpenAiChat,
            json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
                  {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]}),
        );
        let e = next_request(
            &req,
            Dialect::OpenAiChat,
            &r,
            &[ToolOutput::answer("zz", json!("x"))],
            &NextOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "result 0 answers call id \"zz\", which no call of the response has (its calls: a (f))"
        );
        let twice = [
            ToolOutput::answer("a", json!(1)),
            ToolOutput::answer("a", json!(2)),
        ];
        let e = next_request(
            &req,
            Dialect::OpenAiChat,
            &r,
            &twice,
            &NextOptions::default(),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                NextError::DuplicateResult {
                    index: 1,
                    first: 0,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn gemini_results_by_name_take_calls_in_order() {
        let req = json!({"contents": [{"role": "user", "parts": [{"text": "x"}]}]});
        let r = reply(
            Dialect::Gemini,
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "f", "args": {"i": 1}}},
                {"functionCall": {"name": "f", "args": {"i": 2}}}]}}]}),
        );
        let named = |o: Value, err: bool| ToolOutput {
            call_id: None,
            name: Some("f".into()),
            output: o,
            is_error: err,
        };
        let results = [named(json!("one"), false), named(json!("two"), true)];
        let n = next_request(&req, Dialect::Gemini, &r, &results, &NextOptions::default()).unwrap();
        assert_eq!(
            n.body["contents"][2],
            json!({"role": "user", "parts": [
                {"functionResponse": {"name": "f", "response": {"result": "one"}}},
                {"functionResponse": {"name": "f", "response": {"error": "two"}}}]})
        );
    }

    #[test]
    fn results_files_are_read_strictly() {
        let ok = ToolOutput::list_from_json(
            &json!([{"call_id": "a", "output": {"x": 1}, "is_error": true}]),
        )
        .unwrap();
        assert!(ok[0].is_error);
        for (v, want) in [
            (json!({}), "the results are an object"),
            (json!([{"output": 1}]), "/0: a result names no call"),
            (json!([{"call_id": "a"}]), "/0: a result without `output`"),
            (
                json!([{"call_id": 7, "output": 1}]),
                "/0/call_id: `call_id` is a number",
            ),
            (
                json!([{"call_id": "a", "output": 1, "error": true}]),
                "/0/error: unknown key",
            ),
        ] {
            let e = ToolOutput::list_from_json(&v).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e} (wanted {want})");
        }
    }
}
