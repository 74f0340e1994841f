//! OpenAI Responses (`input`: a string or a list of items).
//!
//! Every item is a turn of its own, so that "the next item" is "the next turn": a
//! `reasoning` item, a `function_call` (and the other client call kinds), the matching
//! `*_output` items, server tool calls (`web_search_call`, ...), and messages, which may
//! be typed (`type: message`, usually with a `msg_…` id) or role-only. Chat-completions
//! shapes carried into `input` (a `tool` message, an assistant message's `tool_calls`)
//! are read as the results and calls they stand for and reported as `malformed`.

use serde_json::Value;

use super::openai_chat::approx_size;
use super::{kind_in as kind_of, malformed, nonempty_string, string_id, ReadId};
use crate::chain::{CallKind, Chain, NodeKind, Ptr, Role};
use crate::json::Json;
use crate::violation::{Defect, Rule, Violation};

pub mod canonical;
pub(crate) mod capture;

const ROOT: &str = "input";

/// Client call item types and the output item type that answers each.
pub(crate) const CLIENT_CALLS: [(&str, &str); 6] = [
    ("function_call", "function_call_output"),
    ("custom_tool_call", "custom_tool_call_output"),
    ("computer_call", "computer_call_output"),
    ("local_shell_call", "local_shell_call_output"),
    ("shell_call", "shell_call_output"),
    ("apply_patch_call", "apply_patch_call_output"),
];

/// The longest item `id` the Responses API takes ("Invalid 'input[2].id': string too
/// long. Expected a string with maximum length 64, …").
pub(crate) const MAX_ITEM_ID: usize = 64;

/// The longest call `arguments` the Responses API takes ("Invalid
/// 'input[15].arguments': string too long. Expected a string with maximum length
/// 1048576, …").
pub(crate) const MAX_ARGUMENTS: usize = 1 << 20;

const SERVER_CALLS: [&str; 7] = [
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "tool_search_call",
];

pub(crate) fn map<'a, J: Json<'a>>(body: J, chain: &mut Chain<'a>, out: &mut Vec<Violation>) {
    chain.facts.continues_stored_state = ["previous_response_id", "conversation"]
        .iter()
        .any(|k| body.get(k).is_some_and(|v| !v.is_null()));
    chain.facts.store_disabled = body.get("store").and_then(J::as_bool) == Some(false);
    chain.facts.previous_response = body.get("previous_response_id").and_then(J::str);
    match body.get(ROOT) {
        Some(s) if s.is_string() => {
            let text = s.text().unwrap_or_default();
            chain.begin_turn(Role::User, "user", Ptr::root(ROOT), text.len);
            chain.push(NodeKind::Text { blank: text.blank }, Ptr::root(ROOT));
        }
        Some(items) if items.is_array() => {
            chain.facts.history_is_array = true;
            super::reserve_for(chain, items.len());
            for (i, it) in items.items().enumerate() {
                map_item(i, it, chain, out);
            }
        }
        None => {}
        Some(n) if n.is_null() => {}
        Some(other) => malformed(
            out,
            Ptr::root(ROOT),
            None,
            format!(
                "`input` is {} but must be a string or an array of items",
                kind_of(other)
            ),
        ),
    }
}

/// The keys of an item the adapter reads, found in one pass over its entries.
#[derive(Clone, Copy)]
struct Fields<'a, J> {
    ty: Option<J>,
    id: Option<J>,
    role: Option<J>,
    content: Option<J>,
    summary: Option<J>,
    encrypted_content: Option<J>,
    arguments: Option<J>,
    input: Option<J>,
    output: Option<J>,
    call_id: Option<J>,
    tool_call_id: Option<J>,
    tool_calls: Option<J>,
    name: Option<&'a str>,
    approval_request_id: Option<J>,
}

impl<'a, J: Json<'a>> Fields<'a, J> {
    fn of(obj: J) -> Fields<'a, J> {
        let mut f = Fields {
            ty: None,
            id: None,
            role: None,
            content: None,
            summary: None,
            encrypted_content: None,
            arguments: None,
            input: None,
            output: None,
            call_id: None,
            tool_call_id: None,
            tool_calls: None,
            name: None,
            approval_request_id: None,
        };
        for (k, v) in obj.members() {
            match k {
                "type" => f.ty = Some(v),
                "id" => f.id = Some(v),
                "role" => f.role = Some(v),
                "content" => f.content = Some(v),
                "summary" => f.summary = Some(v),
                "encrypted_content" => f.encrypted_content = Some(v),
                "arguments" => f.arguments = Some(v),
                "input" => f.input = Some(v),
                "output" => f.output = Some(v),
                "call_id" => f.call_id = Some(v),
                "tool_call_id" => f.tool_call_id = Some(v),
                "tool_calls" => f.tool_calls = Some(v),
                "name" => f.name = v.str(),
                "approval_request_id" => f.approval_request_id = Some(v),
                _ => {}
            }
        }
        f
    }
}

fn map_item<'a, J: Json<'a>>(i: usize, it: J, chain: &mut Chain<'a>, out: &mut Vec<Violation>) {
    let ptr = Ptr::item(ROOT, i);
    if !it.is_object() {
        malformed(
            out,
            ptr,
            None,
            format!(
                "input[{i}] is {} but an input item is an object",
                kind_of(it)
            ),
        );
        chain.begin_turn(Role::Other("?"), "?", ptr, 0);
        return;
    }
    let f = Fields::of(it);
    let ty = match f.ty {
        Some(t) if t.is_string() => t.str(),
        None => None,
        Some(n) if n.is_null() => None,
        Some(other) => {
            malformed(
                out,
                ptr,
                Some("type"),
                format!("input[{i}].type is {} but must be a string", kind_of(other)),
            );
            None
        }
    };
    // The item's own id (`msg_…`, `fc_…`, `rs_…`; a server call's and an approval
    // request's call id): a string, read as every call id is read.
    let id = string_id(f.id, out, || {
        (ptr.render_with("id"), format!("input[{i}].id"))
    });
    // An id longer than the API takes (`invalid-call-id` judges it): its item's turn. A
    // server call's or an approval request's id is its call id, judged as one.
    let id_is_call_id =
        ty.is_some_and(|t| t == "mcp_approval_request" || SERVER_CALLS.contains(&t));
    if let Some(long) = id
        .text
        .filter(|s| !id_is_call_id && s.len() > MAX_ITEM_ID && s.chars().count() > MAX_ITEM_ID)
    {
        chain.facts.long_item_ids.push((chain.turns.len(), i, long));
    }
    match ty {
        None | Some("message") => map_message(i, &f, id.text, ty.is_some(), chain, out),
        Some("reasoning") => map_reasoning(i, &f, id.text, ptr, chain, out),
        Some(t) => {
            if let Some((wire, _)) = CLIENT_CALLS.iter().find(|(c, _)| *c == t) {
                // Arguments longer than the API takes (`malformed` judges them): counted in
                // characters only past the bound in bytes.
                if let Some(len) = f
                    .arguments
                    .filter(|a| a.is_string() && a.str_len() > MAX_ARGUMENTS)
                    .and_then(J::str)
                    .map(|a| a.chars().count())
                    .filter(|&len| len > MAX_ARGUMENTS)
                {
                    chain.facts.long_arguments.push((chain.turns.len(), i, len));
                }
                chain.begin_turn(
                    Role::Assistant,
                    wire,
                    ptr,
                    f.arguments.or(f.input).map(approx_size).unwrap_or(0),
                );
                let call_id = call_id_of(i, f.call_id, ptr, out);
                push_call(
                    chain,
                    (call_id, f.name, id.text),
                    CallKind::Client,
                    wire,
                    ptr,
                );
            } else if let Some((_, wire)) = CLIENT_CALLS.iter().find(|(_, o)| *o == t) {
                map_output(i, (t, wire), &f, id, ptr, chain, out);
            } else if t == "mcp_approval_request" {
                chain.begin_turn(Role::Assistant, "mcp_approval_request", ptr, 0);
                let wire = "mcp_approval_request";
                push_call(chain, (id, f.name, id.text), CallKind::Client, wire, ptr);
            } else if t == "mcp_approval_response" {
                chain.begin_turn(Role::Tool, "mcp_approval_response", ptr, 0);
                let approved = string_id(f.approval_request_id, out, || {
                    (
                        ptr.render_with("approval_request_id"),
                        format!("input[{i}].approval_request_id"),
                    )
                });
                push_result(chain, approved, "mcp_approval_response", ptr);
            } else if let Some(wire) = SERVER_CALLS.iter().find(|c| **c == t) {
                chain.begin_turn(Role::Assistant, wire, ptr, 0);
                if t != "tool_search_call" {
                    require_item_id(i, t, &id, ptr, chain, out);
                } else if let Some(args) = f.arguments.filter(|a| a.is_string()) {
                    // A tool search's arguments are an object, unlike a function call's
                    // JSON text: a converter that wrote them as text is refused
                    // (Wei-Shaw/sub2api#3818, Codex's tool_search_call replayed).
                    super::not_an_object(
                        out,
                        chain,
                        ptr.render_with("arguments"),
                        format!("input[{i}].arguments (tool_search_call)"),
                        args.kind(),
                        format!("Invalid type for 'input[{i}].arguments': expected an object, but got a string instead."),
                        Defect::ToolInputNotObject,
                    );
                }
                push_call(chain, (id, None, id.text), CallKind::Server, wire, ptr);
            } else {
                // item_reference, compaction and types mend does not know: kept, not judged.
                if t == "item_reference" {
                    chain.facts.continues_stored_state = true;
                    chain.facts.item_references.push((ptr, id.text));
                }
                chain.begin_turn(Role::Other(t), t, ptr, 0);
                chain.push(NodeKind::Other { wire: t }, ptr);
            }
        }
    }
}

/// A `malformed` finding for an item the provider made that comes back without its
/// own `id`: a server tool call (`ws_…`, `fs_…`, `ig_…`, `ci_…`, `mcp_…`), whose id
/// OpenAI's reference marks required ("Missing required
/// parameter: 'input[42].id'.", openai/codex#6725, #6926, #6934, #6937: web search
/// items a client sent back without their ids). Reported only: the id is the
/// provider's, and no other is right (`Defect::ItemIdMissing`); the other rules still
/// run. A mistyped id has its own finding; an MCP approval request without its id is
/// `invalid-call-id`'s (the id is what its response names).
fn require_item_id<'a>(
    i: usize,
    t: &str,
    id: &ReadId<'a>,
    ptr: Ptr,
    chain: &Chain<'a>,
    out: &mut Vec<Violation>,
) {
    if id.text.is_some() || id.mistyped {
        return;
    }
    let why = format!("input[{i}] is a {t} item without `id`; an item the provider made is sent back with the id it was given");
    out.push(missing_parameter(i, ptr, "id", why, chain).with_defect(Defect::ItemIdMissing));
}

/// The `malformed` finding for item `i`'s required `field`, absent, in OpenAI's words
/// for a missing parameter.
fn missing_parameter(i: usize, ptr: Ptr, field: &str, why: String, chain: &Chain<'_>) -> Violation {
    Violation::error(Rule::Malformed, ptr.render_with(field), why)
        .provider(Some(format!(
            "Missing required parameter: 'input[{i}].{field}'."
        )))
        .at_turn(chain.turns.len().saturating_sub(1))
}

/// A client call's output item (`function_call_output` and its kin): its result node,
/// and a `malformed` finding for a text output that is missing or an object.
fn map_output<'a, J: Json<'a>>(
    i: usize,
    (t, wire): (&str, &'a str),
    f: &Fields<'a, J>,
    id: ReadId<'a>,
    ptr: Ptr,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    chain.begin_turn(
        Role::Tool,
        wire,
        ptr,
        f.output.map(approx_size).unwrap_or(0),
    );
    // OpenAI's reference names a local shell output's call by `id` (the call's
    // call_id; the Agents SDK sends that), other clients by `call_id`: either.
    let call_id = match f.call_id {
        None if t == "local_shell_call_output" => id,
        given => call_id_of(i, given, ptr, out),
    };
    let text_output = matches!(t, "function_call_output" | "custom_tool_call_output");
    if text_output && f.output.is_none_or(|o| o.is_null()) {
        let why = format!("input[{i}] is a {t} without `output`; the field is required (an empty string when the tool printed nothing)");
        out.push(
            missing_parameter(i, ptr, "output", why, chain).with_defect(Defect::OutputMissing),
        );
    }
    if let Some(o) = f.output.filter(|o| text_output && o.is_object()) {
        out.push(
            Violation::error(
                Rule::Malformed,
                ptr.render_with("output"),
                format!("input[{i}].output is {} but a {t}'s output is its text (or a list of content parts)", kind_of(o)),
            )
            .provider(Some(format!(
                "Invalid type for 'input[{i}].output': expected one of a string or array of objects, but got an object instead."
            )))
            .at_turn(chain.turns.len().saturating_sub(1))
            .with_defect(Defect::OutputNotText),
        );
    }
    push_result(chain, call_id, wire, ptr);
}

/// A client result's node (an output item, an approval response, a chat tool message).
fn push_result<'a>(chain: &mut Chain<'a>, call_id: ReadId<'a>, wire: &'a str, ptr: Ptr) {
    let node = call_id.result(None, CallKind::Client, chain.wire(wire));
    chain.push(node, ptr);
}

/// A call item's node: (call id, name, item id), its kind and wire type.
fn push_call<'a>(
    chain: &mut Chain<'a>,
    (call_id, name, item_id): (ReadId<'a>, Option<&'a str>, Option<&'a str>),
    kind: CallKind,
    wire: &'a str,
    ptr: Ptr,
) {
    let wire = chain.wire(wire);
    let kind = NodeKind::Call {
        call_id: call_id.text,
        name,
        kind,
        wire,
        signed: false,
        id_mistyped: call_id.mistyped,
    };
    chain.push_call(kind, item_id, ptr);
}

/// A reasoning item: its node, and a `malformed` finding when it lacks `summary`.
fn map_reasoning<'a, J: Json<'a>>(
    i: usize,
    f: &Fields<'a, J>,
    id: Option<&'a str>,
    ptr: Ptr,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    chain.begin_turn(
        Role::Assistant,
        "reasoning",
        ptr,
        f.summary.map(approx_size).unwrap_or(0),
    );
    let encrypted = nonempty_string(f.encrypted_content);
    if f.summary.is_none() {
        out.push(
            Violation::error(
                Rule::Malformed,
                ptr.render_with("summary"),
                format!("input[{i}] is a reasoning item without `summary`; the field is required (an empty list when the response gave none)"),
            )
            .provider(Some(format!("Missing required parameter: input[{i}].summary")))
            .at_turn(chain.turns.len().saturating_sub(1))
            .with_defect(Defect::ReasoningWithoutSummary),
        );
    }
    let wire = chain.wire("reasoning");
    chain.push(
        NodeKind::Reasoning {
            item_id: id,
            signed: false,
            encrypted,
            redacted: false,
            wire,
        },
        ptr,
    );
}

fn call_id_of<'a, J: Json<'a>>(
    i: usize,
    call_id: Option<J>,
    ptr: Ptr,
    out: &mut Vec<Violation>,
) -> ReadId<'a> {
    string_id(call_id, out, || {
        (ptr.render_with("call_id"), format!("input[{i}].call_id"))
    })
}

fn map_message<'a, J: Json<'a>>(
    i: usize,
    f: &Fields<'a, J>,
    item_id: Option<&'a str>,
    typed: bool,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let ptr = Ptr::item(ROOT, i);
    let wire_role = match f.role.and_then(J::str) {
        Some(r) => r,
        None => {
            malformed(
                out,
                ptr,
                Some("role"),
                format!("input[{i}] has neither a known `type` nor a string `role`"),
            );
            "?"
        }
    };
    if wire_role == "tool" && !typed {
        return map_chat_tool_message(i, f, chain, out);
    }
    let role = match wire_role {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        other => Role::Other(other),
    };
    let size = f.content.map(approx_size).unwrap_or(0);
    chain.begin_turn(role, if typed { "message" } else { wire_role }, ptr, size);
    if role == Role::Assistant {
        chain.push(NodeKind::Message { item_id }, ptr);
    }
    match f.content {
        None => chain.mark_empty(),
        Some(n) if n.is_null() => chain.mark_empty(),
        Some(s) if s.is_string() => chain.push(
            NodeKind::Text {
                blank: s.text().is_some_and(|t| t.blank),
            },
            Ptr::field(ROOT, i, "content"),
        ),
        Some(parts) if parts.is_array() => {
            if parts.len() == 0 {
                chain.mark_empty();
            }
            for (j, p) in parts.items().enumerate() {
                let pptr = Ptr::sub(ROOT, i, "content", j);
                let kind = match p.get("type").and_then(J::str) {
                    Some(
                        "input_text" | "output_text" | "text" | "summary_text" | "reasoning_text",
                    ) => NodeKind::Text {
                        blank: p.get("text").and_then(J::text).is_none_or(|t| t.blank),
                    },
                    Some("refusal") => NodeKind::Text { blank: false },
                    Some("input_image" | "input_file" | "input_audio") => NodeKind::Media,
                    Some(t) => NodeKind::Other { wire: t },
                    None => {
                        malformed(
                            out,
                            pptr,
                            Some("type"),
                            format!("input[{i}].content[{j}] has no string `type`"),
                        );
                        continue;
                    }
                };
                chain.push(kind, pptr);
                if let Some(t @ ("text" | "image_url")) = p.get("type").and_then(J::str) {
                    chat_content_part(i, j, p, t, role == Role::Assistant, chain, out);
                }
                if role == Role::Assistant && p.get("type").and_then(J::str) == Some("input_text") {
                    // A tool's output or a user's text folded into an assistant message
                    // (openhuman#3624): the API takes only what the model writes there.
                    out.push(
                        Violation::error(
                            Rule::Malformed,
                            pptr.render_with("type"),
                            format!("input[{i}].content[{j}] is an `input_text` part in an assistant message, which takes `output_text` (or `refusal`) parts"),
                        )
                        .provider(Some("Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.".into()))
                        .at_node(chain.nodes.len() - 1, chain.turns.len() - 1)
                        .with_defect(Defect::AssistantInputText),
                    );
                }
            }
        }
        Some(other) => malformed(
            out,
            ptr,
            Some("content"),
            format!(
                "input[{i}].content is {} but must be a string or an array of parts",
                kind_of(other)
            ),
        ),
    }
    if let Some(calls) = f.tool_calls.filter(|c| !c.is_null()) {
        map_chat_tool_calls(i, calls, chain, out);
    }
}

/// The Responses API's own wording for a content part type it does not take
/// (MervinPraison/PraisonAI#3934, a chat `text` part in `input`).
fn unsupported_part_type(t: &str) -> String {
    format!("Invalid value: '{t}'. Supported values are: 'input_text', 'input_image', 'input_audio', 'output_text', 'refusal', 'input_file', 'computer_screenshot', 'summary_text', and 'encrypted_content'.")
}

/// A chat-completions content part (`text`, `image_url`) in a message of `input`
/// (PraisonAI#3934: chat messages appended to `input` unchanged). It is reported with its
/// reshape when the part says what it is in Responses terms ([`part_of_chat_part`]): a
/// `text` part with its string, an image with its URL outside an assistant's message
/// (an assistant message takes no image, and where it should go is not known).
fn chat_content_part<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    p: J,
    t: &str,
    assistant: bool,
    chain: &Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let pptr = Ptr::sub(ROOT, i, "content", j);
    let reshapes = match t {
        "text" => p.get("text").is_some_and(|x| x.is_string()),
        _ => {
            !assistant
                && p.get("image_url")
                    .is_some_and(|u| u.is_string() || u.get("url").is_some_and(|x| x.is_string()))
        }
    };
    let takes = match (t, assistant) {
        ("text", true) => "`output_text`",
        ("text", false) => "`input_text`",
        (_, true) => "no image part (only `output_text` and `refusal`)",
        (_, false) => "`input_image` (with the URL as `image_url`)",
    };
    let v = Violation::error(
        Rule::Malformed,
        pptr.render_with("type"),
        format!("input[{i}].content[{j}] is a chat-completions `{t}` part; a Responses message takes {takes} there"),
    )
    .provider(Some(unsupported_part_type(t)))
    .at_node(chain.nodes.len() - 1, chain.turns.len() - 1);
    out.push(if reshapes {
        v.with_defect(Defect::ChatContentPart)
    } else {
        v
    });
}

/// A chat-completions content part as the Responses part it is: `text` as `input_text`
/// (`output_text` in an assistant's message), `image_url` as `input_image` with its URL
/// (and `detail`). `None` for a part of another shape.
pub(crate) fn part_of_chat_part(part: &Value, assistant: bool) -> Option<Value> {
    let mut out = part.as_object()?.clone();
    match part.get("type")?.as_str()? {
        "text" => {
            part.get("text")?.as_str()?;
            let t = if assistant {
                "output_text"
            } else {
                "input_text"
            };
            out.insert("type".into(), Value::String(t.into()));
        }
        "image_url" if !assistant => {
            let (url, detail) = match part.get("image_url")? {
                Value::String(u) => (u.clone(), None),
                Value::Object(o) => (o.get("url")?.as_str()?.to_string(), o.get("detail")),
                _ => return None,
            };
            out.clear();
            out.insert("type".into(), Value::String("input_image".into()));
            out.insert("image_url".into(), Value::String(url));
            if let Some(d) = detail {
                out.insert("detail".into(), d.clone());
            }
        }
        _ => return None,
    }
    Some(Value::Object(out))
}

/// A chat-completions assistant message's `tool_calls` in `input` (openai-python#2677:
/// "Unknown parameter: 'input[3].tool_calls'."): its calls are read as the calls they
/// are, so the outputs that answer them are not taken for orphans, and the message is
/// reported with its reshape into `function_call` items when every call is readable (a
/// string id and name, its arguments a string or an object).
fn map_chat_tool_calls<'a, J: Json<'a>>(
    i: usize,
    calls: J,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let mut readable = calls.is_array();
    for (j, c) in calls.items().enumerate() {
        let cptr = Ptr::sub(ROOT, i, "tool_calls", j);
        let call_id = string_id(c.get("id"), out, || {
            (
                cptr.render_with("id"),
                format!("input[{i}].tool_calls[{j}].id"),
            )
        });
        let function = c.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(J::str);
        let args = function.and_then(|f| f.get("arguments"));
        readable &= call_id.text.is_some_and(|id| !id.is_empty())
            && name.is_some_and(|n| !n.is_empty())
            && args.is_some_and(|a| a.is_string() || a.is_object());
        push_call(
            chain,
            (call_id, name, None),
            CallKind::Client,
            "function_call",
            cptr,
        );
    }
    let finding = Violation::error(
        Rule::Malformed,
        Ptr::item(ROOT, i).render_with("tool_calls"),
        format!("input[{i}] is a chat message with `tool_calls`; Responses takes each call as a `function_call` item of its own"),
    )
    .provider(Some(format!("Unknown parameter: 'input[{i}].tool_calls'.")))
    .at_turn(chain.turns.len() - 1);
    out.push(if readable && calls.len() > 0 {
        finding.with_defect(Defect::ChatToolCalls)
    } else {
        finding
    });
}

/// The items a chat assistant message with `tool_calls` stands for (for repair): the
/// message without them when it has content, then one `function_call` item per call.
pub(crate) fn items_of_chat_tool_calls(item: &Value) -> Option<Vec<Value>> {
    let calls = item.get("tool_calls")?.as_array()?;
    let mut items = Vec::with_capacity(calls.len() + 1);
    let has_content = match item.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(parts)) => !parts.is_empty(),
        _ => false,
    };
    if has_content {
        let mut message = item.clone();
        if let Some(o) = message.as_object_mut() {
            o.shift_remove("tool_calls");
        }
        items.push(message);
    }
    for c in calls {
        let function = c.get("function")?;
        let arguments = match function.get("arguments")? {
            Value::String(s) => s.clone(),
            o @ Value::Object(_) => o.to_string(),
            _ => return None,
        };
        items.push(serde_json::json!({
            "type": "function_call",
            "call_id": c.get("id")?.as_str()?,
            "name": function.get("name")?.as_str()?,
            "arguments": arguments,
        }));
    }
    Some(items)
}

/// A chat-completions `tool` message in `input` (a history carried over from chat, or a
/// converter that kept chat's roles): the API knows no role `tool` (opencode#10803). It
/// is read as the result it is, so its call reads as answered and its output is not
/// taken for an orphan, and reported with its reshape into the `function_call_output`
/// item the API takes, when that is sound: a string `tool_call_id` and an output that
/// reads as text.
fn map_chat_tool_message<'a, J: Json<'a>>(
    i: usize,
    f: &Fields<'a, J>,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let ptr = Ptr::item(ROOT, i);
    chain.begin_turn(
        Role::Tool,
        "tool",
        ptr,
        f.content.map(approx_size).unwrap_or(0),
    );
    let call_id = string_id(f.tool_call_id, out, || {
        (
            ptr.render_with("tool_call_id"),
            format!("input[{i}].tool_call_id"),
        )
    });
    push_result(chain, call_id, "function_call_output", ptr);
    let finding = Violation::error(
        Rule::Malformed,
        ptr.render_with("role"),
        format!("input[{i}] is a chat `tool` message; Responses takes a tool's output as a `function_call_output` item with the call's `call_id`"),
    )
    .provider(Some(
        "Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.".into(),
    ))
    .at_turn(chain.turns.len() - 1);
    let reshapes =
        call_id.text.is_some_and(|id| !id.is_empty()) && f.content.is_some_and(is_tool_output);
    out.push(if reshapes {
        finding.with_defect(Defect::ChatToolMessage)
    } else {
        finding
    });
}

/// Whether a chat `tool` message's content can be a `function_call_output`'s `output`:
/// a string, a list of text parts, or an object (written as its JSON text, as repair
/// does for an output object).
fn is_tool_output<'a, J: Json<'a>>(content: J) -> bool {
    content.is_string()
        || content.is_object()
        || content.is_array()
            && content.items().all(|p| {
                matches!(
                    p.get("type").and_then(J::str),
                    Some("text" | "input_text" | "output_text")
                ) && p.get("text").is_some_and(|t| t.is_string())
            })
}

/// A chat `tool` message's content as a `function_call_output`'s `output`.
fn tool_output_of(content: &Value) -> Option<Value> {
    Some(match content {
        Value::String(s) => Value::String(s.clone()),
        Value::Object(_) => Value::String(content.to_string()),
        Value::Array(parts) => Value::Array(
            parts
                .iter()
                .map(|p| {
                    Some(
                        serde_json::json!({"type": "input_text", "text": p.get("text")?.as_str()?}),
                    )
                })
                .collect::<Option<Vec<Value>>>()?,
        ),
        _ => return None,
    })
}

/// The `function_call_output` item a chat `tool` message stands for (for repair).
pub(crate) fn output_of_chat_tool_message(item: &Value) -> Option<Value> {
    let call_id = item
        .get("tool_call_id")?
        .as_str()
        .filter(|s| !s.is_empty())?;
    let output = tool_output_of(item.get("content")?)?;
    Some(serde_json::json!({"type": "function_call_output", "call_id": call_id, "output": output}))
}

/// An output item answering a call of item type `call_wire` (for repair).
pub(crate) fn synthesized_result(call_wire: &str, call_id: &str, text: &str) -> Option<Value> {
    let (_, output) = CLIENT_CALLS.iter().find(|(c, _)| *c == call_wire)?;
    Some(serde_json::json!({"type": output, "call_id": call_id, "output": text}))
}

/// An output item that answers no call, kept as a user message.
pub(crate) fn result_as_text(item: &Value) -> Value {
    let id = item
        .get("call_id")
        .or_else(|| item.get("tool_call_id"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let output = match item.get("output").or_else(|| item.get("content")) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    serde_json::json!({"role": "user", "content": format!("[output of tool call {id}]\n{output}")})
}
