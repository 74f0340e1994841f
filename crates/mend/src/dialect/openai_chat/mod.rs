//! OpenAI chat completions (`messages[]`) and every compatible API.
//!
//! Maps each message to a turn: `tool_calls[]` entries become calls, a `tool` message
//! becomes a result, `reasoning_content` / `reasoning` / `reasoning_details` become a
//! reasoning node (DeepSeek, xAI, Z.ai, OpenRouter). A message's content is "empty" when
//! it is absent or null; an empty string is content.

use serde_json::Value;

use super::{kind_in as kind_of, malformed, string_id};
use crate::chain::{CallKind, Chain, NodeKind, Ptr, Role};
use crate::json::Json;
use crate::violation::{Defect, Rule, Violation};

pub mod canonical;
pub(crate) mod capture;
pub(crate) mod settings;

const ROOT: &str = "messages";

/// The wire name of the legacy `function_call` (no id; answered by a `function` message by name).
pub(crate) const LEGACY_FUNCTION_CALL: &str = "function_call (legacy)";

pub(crate) fn map<'a, J: Json<'a>>(body: J, chain: &mut Chain<'a>, out: &mut Vec<Violation>) {
    let Some(msgs) = super::history_array(body, ROOT, "messages", chain, out) else {
        return;
    };
    let mut last = None;
    for (i, m) in msgs.items().enumerate() {
        map_message(i, m, chain, out);
        last = Some(m);
    }
    chain.facts.assistant_prefix = last
        .and_then(|m| m.get("prefix"))
        .and_then(J::as_bool)
        .unwrap_or(false);
    // DeepSeek's and Z.ai's switch for thinking mode (`missing-reasoning-content` reads it).
    chain.facts.thinking_disabled = body
        .get("thinking")
        .and_then(|t| t.get("type"))
        .and_then(J::str)
        == Some("disabled");
}

/// The keys of a message the adapter reads, found in one pass over its entries (a hashed
/// lookup per key costs more than walking the few entries a message has).
struct Fields<J> {
    role: Option<J>,
    content: Option<J>,
    reasoning: Option<(&'static str, J)>,
    tool_calls: Option<J>,
    function_call: Option<J>,
    tool_call_id: Option<J>,
    name: Option<J>,
}

impl<'a, J: Json<'a>> Fields<J> {
    fn of(m: J) -> Fields<J> {
        let mut f = Fields {
            role: None,
            content: None,
            reasoning: None,
            tool_calls: None,
            function_call: None,
            tool_call_id: None,
            name: None,
        };
        for (k, v) in m.members() {
            match k {
                "role" => f.role = Some(v),
                "content" => f.content = Some(v),
                "tool_calls" => f.tool_calls = Some(v),
                "function_call" => f.function_call = Some(v),
                "tool_call_id" => f.tool_call_id = Some(v),
                "name" => f.name = Some(v),
                // reasoning_content wins over reasoning, which wins over reasoning_details.
                "reasoning_content" if !v.is_null() => f.reasoning = Some(("reasoning_content", v)),
                "reasoning"
                    if !v.is_null()
                        && f.reasoning.is_none_or(|(k, _)| k == "reasoning_details") =>
                {
                    f.reasoning = Some(("reasoning", v))
                }
                "reasoning_details" if !v.is_null() && f.reasoning.is_none() => {
                    f.reasoning = Some(("reasoning_details", v))
                }
                _ => {}
            }
        }
        f
    }
}

/// One message: its turn, then its reasoning, content, calls and result nodes in wire order.
#[inline(always)]
fn map_message<'a, J: Json<'a>>(i: usize, m: J, chain: &mut Chain<'a>, out: &mut Vec<Violation>) {
    let ptr = Ptr::item(ROOT, i);
    if !m.is_object() {
        malformed(
            out,
            ptr,
            None,
            format!(
                "messages[{i}] is {} but must be an object with a `role`",
                kind_of(m)
            ),
        );
        chain.begin_turn(Role::Other("?"), "?", ptr, 0);
        return;
    }
    let f = Fields::of(m);
    let wire_role = read_role(i, f.role, ptr, out);
    let role = role_of(wire_role);
    let size = f.content.map(approx_size).unwrap_or(0);
    chain.begin_turn(role, wire_role, ptr, size);

    if let Some((key, _)) = f.reasoning {
        let wire = chain.wire(key);
        chain.push(
            NodeKind::Reasoning {
                item_id: None,
                signed: key == "reasoning_details",
                encrypted: false,
                redacted: false,
                wire,
            },
            Ptr::field(ROOT, i, key),
        );
    }
    map_content(i, f.content, ptr, chain, out);
    if role == Role::Assistant {
        map_calls(i, &f, ptr, chain, out);
    }
    if role == Role::Tool {
        map_result(i, wire_role, &f, ptr, chain, out);
    }
}

/// The wire role as written, or `?` (with a `malformed` finding) when it is not a string.
fn read_role<'a, J: Json<'a>>(
    i: usize,
    role: Option<J>,
    ptr: Ptr,
    out: &mut Vec<Violation>,
) -> &'a str {
    match role {
        Some(r) if r.is_string() => r.str().unwrap_or_default(),
        Some(other) => {
            malformed(
                out,
                ptr,
                Some("role"),
                format!(
                    "messages[{i}].role is {} but must be a string",
                    kind_of(other)
                ),
            );
            "?"
        }
        None => {
            malformed(
                out,
                ptr,
                Some("role"),
                format!("messages[{i}] has no `role`"),
            );
            "?"
        }
    }
}

/// The neutral role of a wire role.
fn role_of(wire_role: &str) -> Role<&str> {
    match wire_role {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" | "function" => Role::Tool,
        other => Role::Other(other),
    }
}

/// `content`: a string, an array of parts, or nothing (which marks the turn empty).
fn map_content<'a, J: Json<'a>>(
    i: usize,
    content: Option<J>,
    ptr: Ptr,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    match content {
        None => chain.mark_empty(),
        Some(c) if c.is_null() => chain.mark_empty(),
        Some(c) if c.is_string() => {
            let text = c.text().unwrap_or_default();
            if text.len == 0 {
                chain
                    .facts
                    .empty_contents
                    .push(chain.turns.len().saturating_sub(1));
            }
            chain.push(
                NodeKind::Text { blank: text.blank },
                Ptr::field(ROOT, i, "content"),
            )
        }
        Some(parts) if parts.is_array() => {
            if parts.len() == 0 {
                chain.mark_empty();
                chain
                    .facts
                    .empty_contents
                    .push(chain.turns.len().saturating_sub(1));
            }
            for (j, p) in parts.items().enumerate() {
                map_part(i, j, p, chain, out);
            }
        }
        Some(other) => {
            let tool = chain.turns.last().is_some_and(|t| t.role == Role::Tool);
            let mut v = Violation::error(
                Rule::Malformed,
                ptr.render_with("content"),
                format!(
                    "messages[{i}].content is {} but must be a string, an array of parts, or null",
                    kind_of(other)
                ),
            )
            // OpenAI's wording, recorded for an object (paperless-ai#748).
            .provider(other.is_object().then(|| format!(
                "Invalid type for 'messages[{i}].content': expected one of a string or array of objects, but got an object instead."
            )));
            if tool && other.is_object() {
                // A tool's structured output: its JSON text is what the API takes.
                v = v
                    .at_turn(chain.turns.len().saturating_sub(1))
                    .with_defect(Defect::OutputNotText);
            }
            out.push(v);
        }
    }
}

/// Whose block a content part of another dialect is, by its type: the types Anthropic
/// and the Responses API use that no chat-compatible API takes in `content`.
fn foreign_part(t: &str) -> Option<&'static str> {
    match t {
        "tool_use" | "tool_result" | "thinking" | "redacted_thinking" | "server_tool_use"
        | "mcp_tool_use" | "mcp_tool_result" | "container_upload" | "search_result" => {
            Some("an Anthropic")
        }
        t if t.ends_with("_tool_result") => Some("an Anthropic"),
        "input_text"
        | "output_text"
        | "input_image"
        | "input_file"
        | "summary_text"
        | "reasoning_text"
        | "function_call"
        | "function_call_output" => Some("a Responses API"),
        _ => None,
    }
}

/// One entry of a `content` array.
fn map_part<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    p: J,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let pptr = Ptr::sub(ROOT, i, "content", j);
    if !p.is_object() {
        malformed(
            out,
            pptr,
            None,
            format!(
                "messages[{i}].content[{j}] is {} but a content part is an object",
                kind_of(p)
            ),
        );
        return;
    }
    let kind = match p.get("type").and_then(J::str) {
        Some("text") => NodeKind::Text {
            blank: p.get("text").and_then(J::text).is_none_or(|t| t.blank),
        },
        Some("refusal") => NodeKind::Text { blank: false },
        Some(t @ ("image_url" | "input_audio" | "file" | "audio")) => {
            if chain.turns.last().is_some_and(|t| t.role != Role::User) {
                media_off_user(chain, t);
            }
            NodeKind::Media
        }
        Some(t @ ("image" | "document")) => {
            foreign_media_block(i, j, t, p, pptr, chain, out);
            NodeKind::Media
        }
        Some(t) => {
            if let Some(origin) = foreign_part(t) {
                out.push(
                    Violation::error(
                        Rule::Malformed,
                        pptr.render_with("type"),
                        format!("messages[{i}].content[{j}] is {origin} `{t}` block, which chat messages do not take (calls go in `tool_calls`, results in `tool` messages, text as `text` parts)"),
                    )
                    .provider(Some(part_type_refused(t))),
                );
            }
            NodeKind::Other { wire: t }
        }
        None => {
            malformed(
                out,
                pptr,
                Some("type"),
                format!("messages[{i}].content[{j}] has no string `type`"),
            );
            return;
        }
    };
    chain.push(kind, pptr);
}

/// A media part outside a user message, recorded for the rule that judges it (kept out
/// of line: it is rare, and `map_part` runs for every part).
#[cold]
#[inline(never)]
fn media_off_user<'a>(chain: &mut Chain<'a>, t: &'a str) {
    chain.facts.media_off_user.push((chain.nodes.len(), t));
}

/// OpenAI's refusal of a content part type chat messages do not take, in its enum
/// wording with today's list of part types.
fn part_type_refused(t: &str) -> String {
    format!(
        "Invalid value: '{t}'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'."
    )
}

/// Another API's `image` or `document` block in a chat message, reported (kept out of
/// line: a chat history rarely has one, and `map_part` runs for every part).
#[cold]
#[inline(never)]
fn foreign_media_block<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    t: &str,
    p: J,
    pptr: Ptr,
    chain: &Chain<'a>,
    out: &mut Vec<Violation>,
) {
    // Anthropic's media blocks, and LangChain's standard image block, kept in a
    // chat history: OpenAI answers "Invalid value: 'image'" (openai-kotlin#320,
    // langchainjs#11684). An image whose bytes or URL it names is an `image_url`
    // part written another way; a document (a chat `file` needs a file name) is
    // reported only.
    let v = Violation::error(
        Rule::Malformed,
        pptr.render_with("type"),
        format!(
            "messages[{i}].content[{j}] is another API's `{t}` block ({}), which chat messages do not take: an image is an `image_url` part, a document a `file` part",
            if t == "image" { "Anthropic's or LangChain's" } else { "Anthropic's" }
        ),
    )
    .provider(Some(part_type_refused(t)))
    .at_node(chain.nodes.len(), chain.turns.len().saturating_sub(1));
    out.push(if t == "image" && image_url_of_foreign_block(p).is_some() {
        v.with_defect(Defect::ForeignBlock)
    } else {
        v
    });
}

/// The `image_url` URL of another API's image block: Anthropic's (`source` of type
/// `base64`, with its `media_type`, or `url`) or LangChain's standard block
/// (`source_type` `base64` with `data` and `mime_type`, or `url`; or `base64` with
/// `mime_type` (LangChain.js: `data` with `mimeType`), or `url`): a data URL of its
/// bytes of an image type, or its http(s) URL.
/// `None` for a block that says more than its image (a field of another name, which
/// the part would lose) or names it another way (a file id, bytes of no stated type).
pub(crate) fn image_url_of_foreign_block<'a, J: Json<'a>>(b: J) -> Option<String> {
    const BLOCK: &[&str] = &[
        "type",
        "source",
        "source_type",
        "data",
        "mime_type",
        "mimeType",
        "url",
        "base64",
    ];
    const SOURCE: &[&str] = &["type", "media_type", "data", "url"];
    let only = |v: J, keys: &[&str]| v.is_object() && v.members().all(|(k, _)| keys.contains(&k));
    if !only(b, BLOCK) {
        return None;
    }
    let text = |v: Option<J>| v.and_then(J::str);
    let data_url = |media: Option<&str>, data: Option<&str>| match (media, data) {
        (Some(m), Some(d)) if m.starts_with("image/") && !d.is_empty() => {
            Some(crate::canonical::data_url(m, d))
        }
        _ => None,
    };
    let http = |url: Option<&str>| url.filter(|u| super::is_http_url(u)).map(str::to_owned);
    if let Some(src) = b.get("source") {
        if !only(src, SOURCE) {
            return None;
        }
        return match text(src.get("type"))? {
            "base64" => data_url(text(src.get("media_type")), text(src.get("data"))),
            "url" => http(text(src.get("url"))),
            _ => None,
        };
    }
    let mime = text(b.get("mime_type").or_else(|| b.get("mimeType")));
    match text(b.get("source_type")) {
        Some("base64") => data_url(mime, text(b.get("data"))),
        Some("url") => http(text(b.get("url"))),
        Some(_) => None,
        None if b.has("base64") => data_url(mime, text(b.get("base64"))),
        None if b.has("data") => data_url(mime, text(b.get("data"))),
        None => http(text(b.get("url"))),
    }
}

/// An assistant message's `tool_calls[]` and legacy `function_call`.
fn map_calls<'a, J: Json<'a>>(
    i: usize,
    f: &Fields<J>,
    ptr: Ptr,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    match f.tool_calls {
        None => {}
        Some(c) if c.is_null() => {}
        Some(calls) if calls.is_array() => {
            if calls.len() == 0 {
                out.push(
                    Violation::error(
                        Rule::Malformed,
                        ptr.render_with("tool_calls"),
                        format!(
                            "messages[{i}].tool_calls is an empty array; omit the key or send null"
                        ),
                    )
                    .at_turn(chain.turns.len().saturating_sub(1))
                    .with_defect(Defect::EmptyToolCalls),
                );
            }
            for (j, c) in calls.items().enumerate() {
                map_call(i, j, c, chain, out);
            }
        }
        Some(other) => malformed(
            out,
            ptr,
            Some("tool_calls"),
            format!(
                "messages[{i}].tool_calls is {} but must be an array",
                kind_of(other)
            ),
        ),
    }
    if let Some(fc) = f.function_call.filter(|fc| fc.is_object()) {
        let wire = chain.wire(LEGACY_FUNCTION_CALL);
        chain.push(
            NodeKind::Call {
                call_id: None,
                name: fc.get("name").and_then(J::str),
                kind: CallKind::Client,
                wire,
                signed: false,
                id_mistyped: false,
            },
            Ptr::field(ROOT, i, "function_call"),
        );
    }
}

/// A `tool` (or legacy `function`) message's result node.
fn map_result<'a, J: Json<'a>>(
    i: usize,
    wire_role: &'a str,
    f: &Fields<J>,
    ptr: Ptr,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let call_id = string_id(f.tool_call_id, out, || {
        (
            ptr.render_with("tool_call_id"),
            format!("messages[{i}].tool_call_id"),
        )
    });
    let name = f.name.and_then(J::str);
    let name = if wire_role == "function" { name } else { None };
    let node = call_id.result(name, CallKind::Client, chain.wire(wire_role));
    chain.push(node, ptr);
}

fn map_call<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    c: J,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let cptr = Ptr::sub(ROOT, i, "tool_calls", j);
    if !c.is_object() {
        malformed(
            out,
            cptr,
            None,
            format!(
                "messages[{i}].tool_calls[{j}] is {} but a tool call is an object",
                kind_of(c)
            ),
        );
        return;
    }
    // One walk over the call's members, and one over its function's.
    let (mut id, mut function, mut custom, mut ty, mut extra) = (None, None, None, None, None);
    for (k, v) in c.members() {
        match k {
            "id" => id = Some(v),
            "function" => function = Some(v),
            "custom" => custom = Some(v),
            "type" => ty = Some(v),
            "extra_content" => extra = Some(v),
            _ => {}
        }
    }
    let (mut fname, mut args) = (None, None);
    for (k, v) in function
        .filter(|f| f.is_object())
        .into_iter()
        .flat_map(J::members)
    {
        match k {
            "name" => fname = Some(v),
            "arguments" => args = Some(v),
            _ => {}
        }
    }
    let call_id = string_id(id, out, || {
        (
            cptr.render_with("id"),
            format!("messages[{i}].tool_calls[{j}].id"),
        )
    });
    let func = function.or(custom);
    let name = match function {
        Some(_) => fname,
        None => custom.and_then(|f| f.get("name")),
    }
    .and_then(J::str);
    match name {
        Some("") => out.push(crate::violation::Violation::error(
            crate::violation::Rule::Malformed,
            format!("{}/function/name", cptr.render()),
            format!("messages[{i}].tool_calls[{j}].function.name is an empty string"),
        )
        .provider(Some(format!(
            "Invalid 'messages[{i}].tool_calls[{j}].function.name': empty string. Expected a string with minimum length 1, but got an empty string instead."
        )))),
        None => malformed(
            out,
            cptr,
            Some("function"),
            format!("messages[{i}].tool_calls[{j}] has no `function.name`"),
        ),
        _ => {}
    }
    // `type` is required beside the `function` (or `custom`) object, which says what it
    // is (langchain-azure#35: tool calls generated without it).
    if ty.is_none() && func.is_some_and(|f| f.is_object()) {
        out.push(
            Violation::error(
                Rule::Malformed,
                cptr.render_with("type"),
                format!("messages[{i}].tool_calls[{j}] has no `type`; a tool call says it is a \"function\" call"),
            )
            .provider(Some(format!(
                "Missing required parameter: 'messages[{i}].tool_calls[{j}].type'."
            )))
            .at_node(chain.nodes.len(), chain.turns.len().saturating_sub(1))
            .with_defect(Defect::CallTypeMissing),
        );
    }
    // A call without its `arguments` (a serializer that leaves out an empty string, as
    // Go's `omitempty` does: mcphost#117). Reported only: what they were is not known.
    if function.is_some_and(|f| f.is_object()) && args.is_none() {
        out.push(
            Violation::error(
                Rule::Malformed,
                format!("{}/function/arguments", cptr.render()),
                format!("messages[{i}].tool_calls[{j}].function has no `arguments`; the field is required (the JSON text of the arguments, `{{}}` for none)"),
            )
            .provider(Some(format!(
                "Missing required parameter: 'messages[{i}].tool_calls[{j}].function.arguments'."
            )))
            .at_node(chain.nodes.len(), chain.turns.len().saturating_sub(1))
            .with_defect(Defect::ArgumentsMissing),
        );
    }
    // `arguments` is the JSON text of the arguments; a client that stored the parsed
    // object sends an object, which OpenAI refuses by type.
    if let Some(args) = args {
        if !args.is_string() && !args.is_null() {
            let kind = kind_of(args);
            out.push(
                Violation::error(
                    Rule::Malformed,
                    format!("{}/function/arguments", cptr.render()),
                    format!("messages[{i}].tool_calls[{j}].function.arguments is {kind}; it must be the arguments' JSON text, a string"),
                )
                .provider(Some(format!(
                    "Invalid type for 'messages[{i}].tool_calls[{j}].function.arguments': expected a string, but got {kind} instead."
                )))
                .at_node(chain.nodes.len(), chain.turns.len().saturating_sub(1))
                .with_defect(Defect::ArgumentsNotString),
            );
        }
    }
    let signed = extra.is_some_and(thought_signed);
    if signed {
        chain.facts.signatures_seen = true;
    }
    let wire = chain.wire("tool_calls");
    chain.push(
        NodeKind::Call {
            call_id: call_id.text,
            name,
            kind: CallKind::Client,
            wire,
            signed,
            id_mistyped: call_id.mistyped,
        },
        cptr,
    );
}

/// Gemini's OpenAI-compatible endpoints return a Gemini 3 call's thought signature on the
/// tool call, and want it back there: `extra_content.google.thought_signature` (Vertex's
/// endpoint: `extra_content.vertex`). Whether a call's `extra_content` carries one.
fn thought_signed<'a, J: Json<'a>>(extra: J) -> bool {
    ["google", "vertex"].iter().any(|k| {
        extra
            .get(k)
            .and_then(|g| g.get("thought_signature"))
            .and_then(J::str)
            .is_some_and(|s| !s.is_empty())
    })
}

/// A cheap size estimate of a content value (string bytes; parts counted by their text).
pub(crate) fn approx_size<'a, J: Json<'a>>(v: J) -> usize {
    v.string_bytes()
}

/// A `tool` message answering `call_id` with `text` (for repair).
pub(crate) fn synthesized_result(call_id: &str, text: &str) -> Value {
    serde_json::json!({"role": "tool", "tool_call_id": call_id, "content": text})
}

/// A `tool` message that answers no call, kept as a user message.
pub(crate) fn result_as_text(msg: &Value) -> Value {
    let id = msg
        .get("tool_call_id")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let content = match msg.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    serde_json::json!({"role": "user", "content": format!("[result of tool call {id}]\n{content}")})
}
