//! OpenAI Responses (`input`: a string or a list of items).
//!
//! Every item is a turn of its own, so that "the next item" is "the next turn": a
//! `reasoning` item, a `function_call` (and the other client call kinds), the matching
//! `*_output` items, server tool calls (`web_search_call`, ...), and messages, which may
//! be typed (`type: message`, usually with a `msg_…` id) or role-only.

use serde_json::{Map, Value};

use super::openai_chat::approx_size;
use super::{blank, kind_of, malformed};
use crate::chain::{CallKind, Chain, NodeKind, Ptr, Role};
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

const SERVER_CALLS: [&str; 7] = [
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "tool_search_call",
];

pub(crate) fn map<'a>(
    body: &'a Map<String, Value>,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    chain.facts.continues_stored_state = ["previous_response_id", "conversation"]
        .iter()
        .any(|k| body.get(*k).is_some_and(|v| !v.is_null()));
    chain.facts.store_disabled = body.get("store") == Some(&Value::Bool(false));
    chain.facts.previous_response = body.get("previous_response_id").and_then(Value::as_str);
    match body.get(ROOT) {
        Some(Value::String(s)) => {
            chain.begin_turn(Role::User, "user", Ptr::root(ROOT), s.len());
            chain.push(NodeKind::Text { blank: blank(s) }, Ptr::root(ROOT));
        }
        Some(Value::Array(items)) => {
            chain.facts.history_is_array = true;
            for (i, it) in items.iter().enumerate() {
                map_item(i, it, chain, out);
            }
        }
        Some(Value::Null) | None => {}
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
#[derive(Default, Clone, Copy)]
struct Fields<'a> {
    ty: Option<&'a Value>,
    id: Option<&'a str>,
    role: Option<&'a Value>,
    content: Option<&'a Value>,
    summary: Option<&'a Value>,
    encrypted_content: Option<&'a Value>,
    arguments: Option<&'a Value>,
    input: Option<&'a Value>,
    output: Option<&'a Value>,
    call_id: Option<&'a Value>,
    name: Option<&'a str>,
    approval_request_id: Option<&'a str>,
}

impl<'a> Fields<'a> {
    fn of(obj: &'a Map<String, Value>) -> Fields<'a> {
        let mut f = Fields::default();
        for (k, v) in obj {
            match k.as_str() {
                "type" => f.ty = Some(v),
                "id" => f.id = v.as_str(),
                "role" => f.role = Some(v),
                "content" => f.content = Some(v),
                "summary" => f.summary = Some(v),
                "encrypted_content" => f.encrypted_content = Some(v),
                "arguments" => f.arguments = Some(v),
                "input" => f.input = Some(v),
                "output" => f.output = Some(v),
                "call_id" => f.call_id = Some(v),
                "name" => f.name = v.as_str(),
                "approval_request_id" => f.approval_request_id = v.as_str(),
                _ => {}
            }
        }
        f
    }
}

fn map_item<'a>(i: usize, it: &'a Value, chain: &mut Chain<'a>, out: &mut Vec<Violation>) {
    let ptr = Ptr::item(ROOT, i);
    let Some(obj) = it.as_object() else {
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
    };
    let f = Fields::of(obj);
    let ty = match f.ty {
        Some(Value::String(t)) => Some(t.as_str()),
        None | Some(Value::Null) => None,
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
    let id = f.id;
    match ty {
        None | Some("message") => map_message(i, &f, ty.is_some(), chain, out),
        Some("reasoning") => map_reasoning(i, &f, id, ptr, chain, out),
        Some(t) => {
            if let Some((wire, _)) = CLIENT_CALLS.iter().find(|(c, _)| *c == t) {
                chain.begin_turn(
                    Role::Assistant,
                    wire,
                    ptr,
                    f.arguments.or(f.input).map(approx_size).unwrap_or(0),
                );
                let call_id = call_id_of(i, f.call_id, ptr, out);
                chain.push(
                    NodeKind::Call {
                        call_id,
                        name: f.name,
                        item_id: id,
                        kind: CallKind::Client,
                        wire,
                        signed: false,
                    },
                    ptr,
                );
            } else if let Some((_, wire)) = CLIENT_CALLS.iter().find(|(_, o)| *o == t) {
                chain.begin_turn(
                    Role::Tool,
                    wire,
                    ptr,
                    f.output.map(approx_size).unwrap_or(0),
                );
                let call_id = call_id_of(i, f.call_id, ptr, out);
                let text_output = matches!(t, "function_call_output" | "custom_tool_call_output");
                if let Some(o @ Value::Object(_)) = f.output.filter(|_| text_output) {
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
                chain.push(
                    NodeKind::Result {
                        call_id,
                        name: None,
                        kind: CallKind::Client,
                        wire,
                    },
                    ptr,
                );
            } else if t == "mcp_approval_request" {
                chain.begin_turn(Role::Assistant, "mcp_approval_request", ptr, 0);
                chain.push(
                    NodeKind::Call {
                        call_id: id,
                        name: f.name,
                        item_id: id,
                        kind: CallKind::Client,
                        wire: "mcp_approval_request",
                        signed: false,
                    },
                    ptr,
                );
            } else if t == "mcp_approval_response" {
                chain.begin_turn(Role::Tool, "mcp_approval_response", ptr, 0);
                chain.push(
                    NodeKind::Result {
                        call_id: f.approval_request_id,
                        name: None,
                        kind: CallKind::Client,
                        wire: "mcp_approval_response",
                    },
                    ptr,
                );
            } else if let Some(wire) = SERVER_CALLS.iter().find(|c| **c == t) {
                chain.begin_turn(Role::Assistant, wire, ptr, 0);
                chain.push(
                    NodeKind::Call {
                        call_id: id,
                        name: None,
                        item_id: id,
                        kind: CallKind::Server,
                        wire,
                        signed: false,
                    },
                    ptr,
                );
            } else {
                // item_reference, compaction and types mend does not know: kept, not judged.
                if t == "item_reference" {
                    chain.facts.continues_stored_state = true;
                    chain.facts.item_references.push((ptr, id));
                }
                chain.begin_turn(Role::Other(t), t, ptr, 0);
                chain.push(NodeKind::Other { wire: t }, ptr);
            }
        }
    }
}

/// A reasoning item: its node, and a `malformed` finding when it lacks `summary`.
fn map_reasoning<'a>(
    i: usize,
    f: &Fields<'a>,
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
    let encrypted = f
        .encrypted_content
        .is_some_and(|v| v.as_str().is_some_and(|s| !s.is_empty()));
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
    chain.push(
        NodeKind::Reasoning {
            item_id: id,
            signed: false,
            encrypted,
            redacted: false,
            wire: "reasoning",
        },
        ptr,
    );
}

fn call_id_of<'a>(
    i: usize,
    call_id: Option<&'a Value>,
    ptr: Ptr,
    out: &mut Vec<Violation>,
) -> Option<&'a str> {
    match call_id {
        Some(Value::String(s)) => Some(s.as_str()),
        None | Some(Value::Null) => None,
        Some(other) => {
            malformed(
                out,
                ptr,
                Some("call_id"),
                format!(
                    "input[{i}].call_id is {} but must be a string",
                    kind_of(other)
                ),
            );
            None
        }
    }
}

fn map_message<'a>(
    i: usize,
    f: &Fields<'a>,
    typed: bool,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let ptr = Ptr::item(ROOT, i);
    let wire_role = match f.role {
        Some(Value::String(r)) => r.as_str(),
        _ => {
            malformed(
                out,
                ptr,
                Some("role"),
                format!("input[{i}] has neither a known `type` nor a string `role`"),
            );
            "?"
        }
    };
    let role = match wire_role {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        other => Role::Other(other),
    };
    let size = f.content.map(approx_size).unwrap_or(0);
    chain.begin_turn(role, if typed { "message" } else { wire_role }, ptr, size);
    if role == Role::Assistant {
        chain.push(NodeKind::Message { item_id: f.id }, ptr);
    }
    match f.content {
        None | Some(Value::Null) => chain.mark_empty(),
        Some(Value::String(s)) => chain.push(
            NodeKind::Text { blank: blank(s) },
            Ptr::field(ROOT, i, "content"),
        ),
        Some(Value::Array(parts)) => {
            if parts.is_empty() {
                chain.mark_empty();
            }
            for (j, p) in parts.iter().enumerate() {
                let pptr = Ptr::sub(ROOT, i, "content", j);
                let kind = match p.get("type").and_then(Value::as_str) {
                    Some(
                        "input_text" | "output_text" | "text" | "summary_text" | "reasoning_text",
                    ) => NodeKind::Text {
                        blank: p.get("text").and_then(Value::as_str).is_none_or(blank),
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
}

/// An output item answering a call of item type `call_wire` (for repair).
pub(crate) fn synthesized_result(call_wire: &str, call_id: &str, text: &str) -> Option<Value> {
    let (_, output) = CLIENT_CALLS.iter().find(|(c, _)| *c == call_wire)?;
    Some(serde_json::json!({"type": output, "call_id": call_id, "output": text}))
}

/// An output item that answers no call, kept as a user message.
pub(crate) fn result_as_text(item: &Value) -> Value {
    let id = item.get("call_id").and_then(Value::as_str).unwrap_or("?");
    let output = match item.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    serde_json::json!({"role": "user", "content": format!("[output of tool call {id}]\n{output}")})
}
