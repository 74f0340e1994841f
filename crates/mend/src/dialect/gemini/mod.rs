//! Gemini `generateContent` (`systemInstruction` + `contents[]` of parts).
//!
//! Reads both casings the API accepts (`functionCall` and `function_call`,
//! `thoughtSignature` and `thought_signature`, ...). A `model` turn is the assistant; a
//! `user` (or legacy `function`) turn may carry `functionResponse` parts, which are results
//! matched by `id` when present and else by name and order.

use serde_json::Value;

use super::openai_chat::approx_size;
use super::{kind_in as kind_of, malformed, member_id, nonempty_string, not_an_object};
use crate::chain::{CallKind, Chain, NodeKind, Ptr, Role};
use crate::json::{Json, Kind};
use crate::violation::{Defect, Violation};

pub mod canonical;
pub(crate) mod capture;
pub(crate) mod settings;

const ROOT: &str = "contents";

pub(crate) fn map<'a, J: Json<'a>>(body: J, chain: &mut Chain<'a>, out: &mut Vec<Violation>) {
    let (sys_key, sys) = match (
        body.get("systemInstruction"),
        body.get("system_instruction"),
    ) {
        (Some(v), _) => ("systemInstruction", Some(v)),
        (None, Some(v)) => ("system_instruction", Some(v)),
        _ => ("systemInstruction", None),
    };
    if let Some(sys) = sys {
        let root = if sys_key == "systemInstruction" {
            "systemInstruction"
        } else {
            "system_instruction"
        };
        chain.begin_turn(Role::System, "system", Ptr::root(root), approx_size(sys));
        if !sys.is_object() && !sys.is_string() {
            malformed(
                out,
                Ptr::root(root),
                None,
                format!("`{root}` is {} but must be a content object", kind_of(sys)),
            );
        }
    }
    let config = body
        .get("generationConfig")
        .or_else(|| body.get("generation_config"));
    let thinking =
        config.and_then(|c| c.get("thinkingConfig").or_else(|| c.get("thinking_config")));
    chain.facts.thinking_level_set =
        thinking.is_some_and(|t| t.has("thinkingLevel") || t.has("thinking_level"));
    let Some(contents) = super::history_array(body, ROOT, "turns", chain, out) else {
        return;
    };
    for (i, c) in contents.items().enumerate() {
        map_content(i, c, chain, out);
    }
}

fn map_content<'a, J: Json<'a>>(i: usize, c: J, chain: &mut Chain<'a>, out: &mut Vec<Violation>) {
    let ptr = Ptr::item(ROOT, i);
    if !c.is_object() {
        malformed(
            out,
            ptr,
            None,
            format!(
                "contents[{i}] is {} but must be an object with `parts`",
                kind_of(c)
            ),
        );
        chain.begin_turn(Role::Other("?"), "?", ptr, 0);
        return;
    }
    let wire_role = match c.get("role") {
        Some(r) if r.is_string() => r.str().unwrap_or_default(),
        None => "user",
        Some(n) if n.is_null() => "user",
        Some(other) => {
            malformed(
                out,
                ptr,
                Some("role"),
                format!(
                    "contents[{i}].role is {} but must be a string",
                    kind_of(other)
                ),
            );
            "?"
        }
    };
    let role = match wire_role {
        "user" => Role::User,
        // `assistant` is the model's turn under chat's name: read as what it is, so the
        // rules judge its calls as the model's (role-order reports the name).
        "model" | "assistant" => Role::Assistant,
        "function" | "tool" => Role::Tool,
        "system" => Role::System,
        other => Role::Other(other),
    };
    let size = c.get("parts").map(approx_size).unwrap_or(0);
    chain.begin_turn(role, wire_role, ptr, size);
    let parts = match c.get("parts") {
        Some(p) if p.is_array() => p,
        None => {
            chain.mark_empty();
            return;
        }
        Some(n) if n.is_null() => {
            chain.mark_empty();
            return;
        }
        Some(other) => {
            malformed(
                out,
                ptr,
                Some("parts"),
                format!(
                    "contents[{i}].parts is {} but must be an array",
                    kind_of(other)
                ),
            );
            return;
        }
    };
    if parts.len() == 0 {
        chain.mark_empty();
    }
    for (j, p) in parts.items().enumerate() {
        map_part(i, j, p, chain, out);
    }
    if role != Role::Assistant {
        // A content without a role is the user's to Gemini.
        let at = || (ptr.render_with("role"), format!("contents[{i}]"));
        super::calls_outside_the_models_turn(wire_role, "model", at, chain, out);
    }
}

fn map_part<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    p: J,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let pptr = Ptr::sub(ROOT, i, "parts", j);
    if !p.is_object() {
        malformed(
            out,
            pptr,
            None,
            format!(
                "contents[{i}].parts[{j}] is {} but a part is an object",
                kind_of(p)
            ),
        );
        return;
    }
    // One pass over the part's few entries, both casings at once.
    let (mut signature, mut thought, mut fcall, mut fresp, mut text) =
        (None, false, None, None, None);
    let (mut media, mut server) = (false, false);
    for (k, v) in p.members() {
        match k {
            "thoughtSignature" | "thought_signature" => signature = Some(v),
            "thought" => thought = v.as_bool().unwrap_or(false),
            "functionCall" | "function_call" => fcall = Some((k, v)),
            "functionResponse" | "function_response" => fresp = Some((k, v)),
            "text" => text = Some(v),
            "inlineData" | "inline_data" | "fileData" | "file_data" => media = true,
            "executableCode"
            | "executable_code"
            | "codeExecutionResult"
            | "code_execution_result"
            | "videoMetadata"
            | "video_metadata"
            | "toolCall"
            | "toolResponse"
            | "tool_call"
            | "tool_response" => server = true,
            _ => {}
        }
    }
    let signed = nonempty_string(signature);
    if signed {
        chain.facts.signatures_seen = true;
    }
    let kind = if let Some((key, fc)) = fcall {
        if !fc.is_object() {
            malformed(
                out,
                pptr,
                Some("functionCall"),
                format!(
                    "contents[{i}].parts[{j}].functionCall is {} but must be an object",
                    kind_of(fc)
                ),
            );
            return;
        }
        let m = members(i, j, key, fc, CALL_FIELDS, chain, out);
        struct_args(i, j, key, m.args, pptr, chain, out);
        let id = member_id(fc, key, "id", pptr, out);
        NodeKind::Call {
            call_id: id.text,
            name: m.name.and_then(J::str),
            kind: CallKind::Client,
            wire: chain.wire("functionCall"),
            signed,
            id_mistyped: id.mistyped,
        }
    } else if let Some((key, fr)) = fresp {
        if !fr.is_object() {
            malformed(
                out,
                pptr,
                Some("functionResponse"),
                format!(
                    "contents[{i}].parts[{j}].functionResponse is {} but must be an object",
                    kind_of(fr)
                ),
            );
            return;
        }
        let m = members(i, j, key, fr, RESPONSE_FIELDS, chain, out);
        struct_response(i, j, key, m.response, pptr, chain, out);
        if m.parts.is_some_and(|ps| ps.is_array() && ps.len() > 0) {
            response_parts(chain, key);
        }
        let id = member_id(fr, key, "id", pptr, out);
        let name = m.name.and_then(J::str);
        id.result(name, CallKind::Client, chain.wire("functionResponse"))
    } else if let Some(t) = text {
        match t.kind() {
            Kind::String if thought => NodeKind::Reasoning {
                item_id: None,
                signed,
                encrypted: false,
                redacted: false,
                wire: chain.wire("thought"),
            },
            Kind::String => NodeKind::Text {
                blank: t.is_empty_string() && !signed,
            },
            Kind::Null => NodeKind::Empty,
            _ => {
                malformed(
                    out,
                    pptr,
                    Some("text"),
                    format!(
                        "contents[{i}].parts[{j}].text is {} but must be a string",
                        kind_of(t)
                    ),
                );
                return;
            }
        }
    } else if media {
        NodeKind::Media
    } else if server {
        NodeKind::Other { wire: "server" }
    } else if thought {
        NodeKind::Reasoning {
            item_id: None,
            signed,
            encrypted: false,
            redacted: false,
            wire: chain.wire("thought"),
        }
    } else {
        NodeKind::Empty
    };
    chain.push(kind, pptr);
}

/// The part being read (the next node) nests media in its function response: a fact for
/// `malformed`, which knows the model. Rare, so kept out of the reader's way.
#[cold]
fn response_parts<'a>(chain: &mut Chain<'a>, key: &'a str) {
    chain.facts.response_parts.push((chain.nodes.len(), key));
}

/// `functionCall.args` is a protobuf Struct: a client that kept the arguments as text
/// sends a string.
fn struct_args<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    key: &str,
    args: Option<J>,
    pptr: Ptr,
    chain: &Chain,
    out: &mut Vec<Violation>,
) {
    if let Some(args) = args.filter(|a| !a.is_object() && !a.is_null()) {
        // A protobuf Struct: a client that kept the arguments as text sends a string.
        not_an_object(
            out,
            chain,
            format!("{}/{key}/args", pptr.render()),
            format!("contents[{i}].parts[{j}].{key}.args"),
            args.kind(),
            format!("Invalid value at 'contents[{i}].parts[{j}].function_call.args' (type.googleapis.com/google.protobuf.Struct)"),
            Defect::ToolInputNotObject,
        );
    }
}

/// The fields of a `FunctionCall` and a `FunctionResponse` (both casings).
const CALL_FIELDS: &[&str] = &[
    "id",
    "name",
    "args",
    "partialArgs",
    "partial_args",
    "willContinue",
    "will_continue",
];
const RESPONSE_FIELDS: &[&str] = &[
    "id",
    "name",
    "response",
    "parts",
    "willContinue",
    "will_continue",
    "scheduling",
];

/// Gemini reads its request as a protobuf message and refuses a field it does not know
/// ("Invalid JSON payload received. Unknown name \"content\" at
/// 'contents[1].parts[0].function_response': Cannot find field.", hexstrike-ai#70: a tool
/// result written as chat's `content`). Reported only (what the field meant is not
/// known); the part is read, so the other rules still run. The walk also hands back the
/// members the reader reads, so that no other walk looks for them.
fn members<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    key: &str,
    v: J,
    known: &[&str],
    chain: &Chain<'a>,
    out: &mut Vec<Violation>,
) -> Members<J> {
    // The error names the field as the proto does, in snake case.
    let proto = match key {
        "functionCall" | "function_call" => "function_call",
        _ => "function_response",
    };
    let mut found = Members {
        name: None,
        args: None,
        response: None,
        parts: None,
    };
    for (k, m) in v.members() {
        let slot = match k {
            "name" => &mut found.name,
            "args" => &mut found.args,
            "response" => &mut found.response,
            "parts" => &mut found.parts,
            _ => &mut None,
        };
        *slot = Some(m);
        if known.contains(&k) {
            continue;
        }
        out.push(
            Violation::error(
                crate::violation::Rule::Malformed,
                format!("{}/{key}/{k}", Ptr::sub(ROOT, i, "parts", j).render()),
                format!("contents[{i}].parts[{j}].{key} carries `{k}`, a field Gemini does not know there"),
            )
            .provider(Some(format!(
                "Invalid JSON payload received. Unknown name \"{k}\" at 'contents[{i}].parts[{j}].{proto}': Cannot find field."
            )))
            .at_node(chain.nodes.len(), chain.turns.len().saturating_sub(1))
            .with_defect(Defect::UnknownField),
        );
    }
    found
}

/// The members of a `FunctionCall` or a `FunctionResponse` the reader reads (the ones
/// of the other kind are unknown fields there, reported as such).
struct Members<J> {
    name: Option<J>,
    args: Option<J>,
    response: Option<J>,
    parts: Option<J>,
}

/// `functionResponse.response` is a protobuf Struct too: a tool's text or list handed
/// over as it came is refused.
fn struct_response<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    key: &str,
    resp: Option<J>,
    pptr: Ptr,
    chain: &Chain,
    out: &mut Vec<Violation>,
) {
    if let Some(resp) = resp.filter(|r| !r.is_object()) {
        // A protobuf Struct too: a tool's text or list handed over as it came.
        let text = if resp.is_array() {
            format!("Invalid JSON payload received. Unknown name \"response\" at 'contents[{i}].parts[{j}].function_response': Proto field is not repeating, cannot start list.")
        } else {
            format!("Invalid value at 'contents[{i}].parts[{j}].function_response.response' (type.googleapis.com/google.protobuf.Struct)")
        };
        not_an_object(
            out,
            chain,
            format!("{}/{key}/response", pptr.render()),
            format!("contents[{i}].parts[{j}].{key}.response"),
            resp.kind(),
            text,
            Defect::ResultJsonNotObject,
        );
    }
}

/// The generation of a Gemini model id (`gemini-2.5-flash` is 2, `gemini-3-pro-preview`
/// 3, `gemini-pro` 1), with or without a path (`models/`, `publishers/google/models/`)
/// or a router's prefix; none for an id that does not say (`gemini-flash-latest`).
pub(crate) fn generation(model: &str) -> Option<u32> {
    let id = model.rsplit('/').next().unwrap_or(model);
    let v = id.strip_prefix("gemini-")?;
    if v.starts_with("pro") {
        return Some(1);
    }
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    v[..digits].parse().ok()
}

/// A `functionResponse` part answering a call (by id when it has one), as an error.
pub(crate) fn synthesized_result(id: Option<&str>, name: &str, text: &str, snake: bool) -> Value {
    let mut fr = serde_json::Map::new();
    if let Some(id) = id {
        fr.insert("id".into(), Value::String(id.into()));
    }
    fr.insert("name".into(), Value::String(name.into()));
    fr.insert("response".into(), serde_json::json!({"error": text}));
    let key = if snake {
        "function_response"
    } else {
        "functionResponse"
    };
    serde_json::json!({ key: Value::Object(fr) })
}

/// A `functionResponse` part that answers no call, kept as a text part.
pub(crate) fn result_as_text(part: &Value) -> Value {
    let fr = get_any(part, "functionResponse", "function_response");
    let name = fr
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let response = fr
        .and_then(|f| f.get("response"))
        .map(Value::to_string)
        .unwrap_or_default();
    serde_json::json!({"text": format!("[response of function {name}]\n{response}")})
}

fn get_any<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    v.get(camel).or_else(|| v.get(snake))
}

#[cfg(test)]
mod tests {
    use super::generation;

    #[test]
    fn a_model_id_tells_its_generation_or_nothing() {
        for (id, g) in [
            ("gemini-2.5-flash", Some(2)),
            ("gemini-2.0-flash-001", Some(2)),
            ("publishers/google/models/gemini-1.5-pro-002", Some(1)),
            ("models/gemini-3-pro-preview", Some(3)),
            ("gemini-3.1-flash-lite", Some(3)),
            ("openrouter/google/gemini-10-ultra", Some(10)),
            ("gemini-pro", Some(1)),
            ("gemini-pro-vision", Some(1)),
            ("gemini-flash-latest", None),
            ("gemini-exp-1206", None),
            ("gemma-3-27b-it", None),
            ("claude-sonnet-4-5", None),
        ] {
            assert_eq!(generation(id), g, "{id}");
        }
    }
}
