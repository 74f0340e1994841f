//! Anthropic Messages (`system` + `messages[]` of content blocks).
//!
//! The top-level `system` (a string or text blocks) is one system turn; each message is a
//! turn whose blocks are nodes: `tool_use` / `tool_result` are client calls and results,
//! `server_tool_use` and the `*_tool_result` blocks of server tools are server ones,
//! `thinking` (signed) and `redacted_thinking` are reasoning.

use serde_json::Value;

use super::openai_chat::approx_size;
use super::{kind_in as kind_of, malformed, nonempty_string, string_id, ReadId};
use crate::chain::{CallKind, Chain, NodeKind, Ptr, Role};
use crate::json::{Json, Kind};
use crate::violation::{Rule, Violation};

pub mod canonical;
pub(crate) mod capture;
pub(crate) mod settings;

const ROOT: &str = "messages";

pub(crate) fn map<'a, J: Json<'a>>(body: J, chain: &mut Chain<'a>, out: &mut Vec<Violation>) {
    read_cache_points(body, chain);
    // Every Anthropic deployment (API, Vertex, Bedrock InvokeModel) requires the limit.
    match body.get("max_tokens") {
        Some(n) if n.as_u64().is_some_and(|n| n >= 1) => {}
        None => {
            malformed(
                out,
                Ptr::BODY,
                Some("max_tokens"),
                "the body has no `max_tokens`; the Messages API requires the output limit".into(),
            );
            if let Some(v) = out.last_mut() {
                v.provider_error = Some("max_tokens: Field required".into());
            }
        }
        Some(other) => malformed(
            out,
            Ptr::BODY,
            Some("max_tokens"),
            format!(
                "`max_tokens` is {} but must be a positive integer",
                kind_of(other)
            ),
        ),
    }
    match body
        .get("thinking")
        .and_then(|t| t.get("type"))
        .and_then(J::str)
    {
        Some("enabled" | "adaptive") => chain.facts.thinking_enabled = true,
        Some("disabled") | None => chain.facts.thinking_disabled = true,
        Some(_) => {}
    }
    match body.get("system") {
        None => {}
        Some(n) if n.is_null() => {}
        Some(s) if s.is_string() => {
            let text = s.text().unwrap_or_default();
            chain.begin_turn(Role::System, "system", Ptr::root("system"), text.len);
            chain.push(NodeKind::Text { blank: text.blank }, Ptr::root("system"));
        }
        Some(blocks) if blocks.is_array() => {
            chain.begin_turn(
                Role::System,
                "system",
                Ptr::root("system"),
                approx_size(blocks),
            );
            for (j, b) in blocks.items().enumerate() {
                let p = Ptr::item("system", j);
                match b.get("text").and_then(J::text) {
                    Some(t) => chain.push(NodeKind::Text { blank: t.blank }, p),
                    None => malformed(
                        out,
                        p,
                        None,
                        format!("system[{j}] is not a text block with a string `text`"),
                    ),
                }
            }
        }
        Some(other) => malformed(
            out,
            Ptr::root("system"),
            None,
            format!(
                "`system` is {} but must be a string or an array of text blocks",
                kind_of(other)
            ),
        ),
    }
    let Some(msgs) = super::history_array(body, ROOT, "messages", chain, out) else {
        return;
    };
    let mut last = None;
    for (i, m) in msgs.items().enumerate() {
        map_message(i, m, chain, out);
        last = Some((i, m));
    }
    chain.facts.final_trailing_whitespace = last.and_then(final_trailing_whitespace);
}

/// Every `cache_control` breakpoint, in the cache's order: tools, system, messages.
fn read_cache_points<'a, J: Json<'a>>(body: J, chain: &mut Chain) {
    let marked = |v: J| v.get("cache_control").is_some_and(|c| !c.is_null());
    let mut points = Vec::new();
    let mut on_thinking = Vec::new();
    let mut nested = 0;
    if let Some(tools) = body.get("tools") {
        points.extend(
            tools
                .items()
                .enumerate()
                .filter(|&(_, t)| marked(t))
                .map(|(j, _)| Ptr::item("tools", j)),
        );
    }
    if let Some(blocks) = body.get("system") {
        points.extend(
            blocks
                .items()
                .enumerate()
                .filter(|&(_, b)| marked(b))
                .map(|(j, _)| Ptr::item("system", j)),
        );
    }
    if let Some(msgs) = body.get(ROOT) {
        for (i, m) in msgs.items().enumerate() {
            let Some(blocks) = m.get("content") else {
                continue;
            };
            for (j, b) in blocks.items().enumerate() {
                if marked(b) {
                    let at = Ptr::sub(ROOT, i, "content", j);
                    match b.get("type").and_then(J::str) {
                        Some("thinking" | "redacted_thinking") => on_thinking.push(at),
                        _ => points.push(at),
                    }
                }
                if let Some(inner) = b.get("content") {
                    nested += inner.items().filter(|&x| marked(x)).count();
                }
            }
        }
    }
    chain.facts.cache_points = points;
    chain.facts.cache_on_thinking = on_thinking;
    chain.facts.nested_cache_points = nested;
}

/// Where the final assistant message's text ends with white space, if it does.
fn final_trailing_whitespace<'a, J: Json<'a>>((i, last): (usize, J)) -> Option<Ptr> {
    if last.get("role").and_then(J::str) != Some("assistant") {
        return None;
    }
    let ends_in_space = |s: J| s.text().is_some_and(|t| t.trailing_space);
    let content = last.get("content")?;
    match content.kind() {
        Kind::String if ends_in_space(content) => Some(Ptr::field(ROOT, i, "content")),
        Kind::Array => {
            let j = content.len().checked_sub(1)?;
            let b = content.at(j)?;
            let text = b.get("text").filter(|t| t.is_string())?;
            (b.get("type").and_then(J::str) == Some("text") && ends_in_space(text))
                .then(|| Ptr::sub(ROOT, i, "content", j))
        }
        _ => None,
    }
}

fn map_message<'a, J: Json<'a>>(i: usize, m: J, chain: &mut Chain<'a>, out: &mut Vec<Violation>) {
    let ptr = Ptr::item(ROOT, i);
    if !m.is_object() {
        malformed(
            out,
            ptr,
            None,
            format!("messages[{i}] is {} but must be an object", kind_of(m)),
        );
        chain.begin_turn(Role::Other("?"), "?", ptr, 0);
        return;
    }
    let wire_role = match m.get("role").and_then(J::str) {
        Some(r) => r,
        None => {
            malformed(
                out,
                ptr,
                Some("role"),
                format!("messages[{i}] has no string `role`"),
            );
            "?"
        }
    };
    let role = match wire_role {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        other => Role::Other(other),
    };
    let size = m.get("content").map(approx_size).unwrap_or(0);
    chain.begin_turn(role, wire_role, ptr, size);
    match m.get("content") {
        None => chain.mark_empty(),
        Some(n) if n.is_null() => chain.mark_empty(),
        Some(s) if s.is_string() => {
            let text = s.text().unwrap_or_default();
            if text.len == 0 {
                chain.mark_empty();
            }
            chain.push(
                NodeKind::Text { blank: text.blank },
                Ptr::field(ROOT, i, "content"),
            );
        }
        Some(blocks) if blocks.is_array() => {
            if blocks.len() == 0 {
                chain.mark_empty();
            }
            for (j, b) in blocks.items().enumerate() {
                map_block(i, j, b, chain, out);
            }
            if role != Role::Assistant {
                let at = || (ptr.render_with("role"), format!("messages[{i}]"));
                super::calls_outside_the_models_turn(wire_role, "assistant", at, chain, out);
            }
        }
        Some(other) => malformed(
            out,
            ptr,
            Some("content"),
            format!(
                "messages[{i}].content is {} but must be a string or an array of blocks",
                kind_of(other)
            ),
        ),
    }
}

/// Each base64 image of a block (the block itself, or the images in a tool_result's
/// content) whose `media_type` is not the format its bytes prove.
fn check_image_types<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    b: J,
    chain: &Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let p = Ptr::sub(ROOT, i, "content", j);
    let at = (chain.nodes.len(), chain.turns.len().saturating_sub(1));
    let mut one = |img: J, rel: String, wire: String| {
        let Some(src) = img.get("source") else { return };
        if src.get("type").and_then(J::str) != Some("base64") {
            return;
        }
        let declared = src.get("media_type").and_then(J::str).unwrap_or_default();
        let proven = src
            .get("data")
            .and_then(J::str)
            .and_then(super::image_format_of_base64);
        if let Some(proven) = proven.filter(|f| declared.strip_prefix("image/") != Some(f)) {
            let path = format!("{}{rel}/source/media_type", p.render());
            super::image_format_differs(out, (path, wire), (declared, proven), at);
        }
    };
    match b.get("type").and_then(J::str) {
        Some("image") => one(
            b,
            String::new(),
            format!("messages.{i}.content.{j}.image.source.base64"),
        ),
        Some("tool_result") => {
            let inner = b
                .get("content")
                .into_iter()
                .flat_map(|c| c.items().enumerate());
            for (k, c) in inner {
                if c.get("type").and_then(J::str) == Some("image") {
                    let wire = format!(
                        "messages.{i}.content.{j}.tool_result.content.{k}.image.source.base64"
                    );
                    one(c, format!("/content/{k}"), wire);
                }
            }
        }
        _ => {}
    }
}

fn map_block<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    b: J,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let p = Ptr::sub(ROOT, i, "content", j);
    if !b.is_object() {
        malformed(
            out,
            p,
            None,
            format!(
                "messages[{i}].content[{j}] is {} but a content block is an object",
                kind_of(b)
            ),
        );
        return;
    }
    check_image_types(i, j, b, chain, out);
    let s = |k: &str| b.get(k).and_then(J::str);
    let Some(ty) = s("type") else {
        malformed(
            out,
            p,
            Some("type"),
            format!("messages[{i}].content[{j}] has no string `type`"),
        );
        return;
    };
    let kind = match ty {
        "text" => match b.get("text").and_then(J::text) {
            Some(t) => NodeKind::Text { blank: t.blank },
            None => {
                malformed(
                    out,
                    p,
                    Some("text"),
                    format!("messages[{i}].content[{j}] is a text block without a string `text`"),
                );
                return;
            }
        },
        "image" | "document" | "search_result" | "container_upload" => NodeKind::Media,
        "tool_use" | "server_tool_use" | "mcp_tool_use"
            if b.get("input").is_some_and(|v| !v.is_object()) =>
        {
            // Claude's calls carry their input as an object; a client that kept the
            // model's arguments as text sends a string (claude-code#6696).
            super::not_an_object(
                out,
                chain,
                p.render_with("input"),
                format!("messages[{i}].content[{j}].input ({ty})"),
                b.get("input").map_or(Kind::Null, J::kind),
                format!("messages.{i}.content.{j}.{ty}.input: Input should be a valid dictionary"),
                crate::violation::Defect::ToolInputNotObject,
            );
            let id = block_id(i, j, b, ty, "id", p, out);
            return map_call_block(ty, id, s("name"), p, chain);
        }
        "tool_use" | "server_tool_use" | "mcp_tool_use" => {
            if ty == "tool_use" && b.get("input").is_none() {
                // A serializer that leaves out an empty value (Go's `omitempty`) drops the
                // `{}` of a tool without parameters (go-anthropic#67, mastra#11376).
                out.push(
                    Violation::error(
                        Rule::Malformed,
                        p.render_with("input"),
                        format!("messages[{i}].content[{j}] is a tool_use block without `input`; the field is required (`{{}}` for a call without arguments)"),
                    )
                    .provider(Some(format!("messages.{i}.content.{j}.tool_use.input: Field required")))
                    .at_node(chain.nodes.len(), chain.turns.len().saturating_sub(1))
                    .with_defect(crate::violation::Defect::ToolInputMissing),
                );
            }
            let id = block_id(i, j, b, ty, "id", p, out);
            return map_call_block(ty, id, s("name"), p, chain);
        }
        "tool_result" => {
            check_tool_result_parts(i, j, b, chain, out);
            let id = block_id(i, j, b, ty, "tool_use_id", p, out);
            NodeKind::Result {
                call_id: id.text,
                id_mistyped: id.mistyped,
                name: None,
                kind: CallKind::Client,
                wire: chain.wire("tool_result"),
                blank_text: b.get("content").is_some_and(|c| {
                    c.items().any(|part| {
                        part.get("type").and_then(J::str) == Some("text")
                            && part.get("text").and_then(J::text).is_some_and(|t| t.blank)
                    })
                }),
                // Absent and null are empty too: the API reads either as no content.
                empty_error: b.get("is_error").and_then(J::as_bool) == Some(true)
                    && super::says_nothing(b.get("content")),
            }
        }
        t if t.ends_with("_tool_result") => {
            let id = block_id(i, j, b, ty, "tool_use_id", p, out);
            id.result(None, CallKind::Server, chain.wire(t))
        }
        "thinking" => {
            if !b.get("thinking").is_some_and(J::is_string) {
                malformed(out, p, Some("thinking"), format!("messages[{i}].content[{j}] is a thinking block without a string `thinking`"));
            }
            NodeKind::Reasoning {
                item_id: None,
                signed: nonempty_string(b.get("signature")),
                encrypted: false,
                redacted: false,
                wire: chain.wire("thinking"),
            }
        }
        "redacted_thinking" => NodeKind::Reasoning {
            item_id: None,
            signed: nonempty_string(b.get("data")),
            encrypted: true,
            redacted: true,
            wire: chain.wire("redacted_thinking"),
        },
        t => {
            if let Some(origin) = foreign_block(t) {
                foreign_block_finding(i, j, b, t, origin, chain, out);
            }
            NodeKind::Other { wire: t }
        }
    };
    chain.push(kind, p);
}

/// Whose part a content block of another API is, by its type: the part types of OpenAI's
/// chat and Responses APIs and the AI SDK that the Messages API does not take (it answers
/// "Input tag '…' found using 'type' does not match any of the expected tags").
fn foreign_block(t: &str) -> Option<&'static str> {
    match t {
        "image_url" | "input_audio" | "refusal" => Some("an OpenAI chat"),
        "input_text"
        | "output_text"
        | "input_image"
        | "input_file"
        | "summary_text"
        | "function_call"
        | "function_call_output" => Some("a Responses API"),
        "reasoning" | "tool-call" | "tool-result" | "file" => Some("an AI SDK"),
        _ => None,
    }
}

/// A part of another API in a message (AstrBot#4444: history kept in OpenAI's shapes),
/// reported with its reshape when it is an Anthropic block written another way
/// ([`block_of_foreign_part`]): a text part with its string, an image given by a data
/// URL of an image type or an http(s) URL.
fn foreign_block_finding<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    b: J,
    t: &str,
    origin: &str,
    chain: &Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let p = Ptr::sub(ROOT, i, "content", j);
    let reshapes = as_block(b).is_some();
    let v = Violation::error(
        Rule::Malformed,
        p.render_with("type"),
        format!("messages[{i}].content[{j}] is {origin} `{t}` part, which the Messages API does not take"),
    )
    .provider(Some(format!(
        "messages.{i}.content.{j}: Input tag '{t}' found using 'type' does not match any of the expected tags: 'document', 'image', 'redacted_thinking', 'search_result', 'server_tool_use', 'text', 'thinking', 'tool_result', 'tool_use', 'web_search_tool_result'"
    )))
    .at_node(chain.nodes.len(), chain.turns.len().saturating_sub(1));
    out.push(if reshapes {
        v.with_defect(crate::violation::Defect::ForeignBlock)
    } else {
        v
    });
}

/// The Anthropic block a part of another API is written another way as, read once for
/// the check (whether it reshapes) and for the fix (the block it becomes): a text part
/// with its string, or an image given by a data URL of an image type or an http(s) URL
/// (its `source`). `None` for a part of another shape.
enum AsBlock<'a> {
    Text(&'a str),
    Image(Value),
}

fn as_block<'a, J: Json<'a>>(part: J) -> Option<AsBlock<'a>> {
    match part.get("type")?.str()? {
        "input_text" | "output_text" => Some(AsBlock::Text(part.get("text")?.str()?)),
        "image_url" | "input_image" => {
            let u = part.get("image_url")?;
            let url = if u.is_string() {
                u.str()?
            } else {
                u.get("url")?.str()?
            };
            image_source(url).map(AsBlock::Image)
        }
        _ => None,
    }
}

/// Parts of another API inside the content of `b`, a `tool_result`, which takes only `text`,
/// `image`, `document` and `search_result` blocks (and beta types): "messages.N.content.M
/// .tool_result.content.K: Input tag '…' found using 'type' does not match any of the
/// expected tags: 'document', 'image', 'search_result', 'text'". A tool's output kept in
/// OpenAI's shapes (`input_text`, `image_url`) by a gateway or converter that carries a
/// history across APIs. One finding per part, all at the tool_result's node: the fix
/// writes every part of the block that reshapes at once. Only the types of
/// [`foreign_block`] are judged, so a type the API adds is never flagged.
fn check_tool_result_parts<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    b: J,
    chain: &Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let Some(content) = b.get("content") else {
        return;
    };
    let p = Ptr::sub(ROOT, i, "content", j);
    if !(content.is_string() || content.is_array() || content.is_null()) {
        // The Messages API takes a tool's result as a string or a list of blocks (the
        // tool-use docs: "as a string … or list of nested content blocks"); a client
        // that kept a tool's returned object as it was sends that object.
        let v = Violation::error(
            Rule::Malformed,
            p.render_with("content"),
            format!(
                "messages[{i}].content[{j}].content (tool_result) is {} but must be a string or a list of blocks",
                kind_of(content)
            ),
        )
        .at_node(chain.nodes.len(), chain.turns.len().saturating_sub(1));
        out.push(if content.is_object() {
            v.with_defect(crate::violation::Defect::OutputNotText)
        } else {
            v
        });
        return;
    }
    for (k, part) in content.items().enumerate() {
        let Some(t) = part.get("type").and_then(J::str) else {
            continue;
        };
        let Some(origin) = foreign_block(t) else {
            continue;
        };
        let v = Violation::error(
            Rule::Malformed,
            format!("{}/content/{k}/type", p.render()),
            format!("messages[{i}].content[{j}].content[{k}] (in a tool_result) is {origin} `{t}` part, which a tool result does not take"),
        )
        .provider(Some(format!(
            "messages.{i}.content.{j}.tool_result.content.{k}: Input tag '{t}' found using 'type' does not match any of the expected tags: 'document', 'image', 'search_result', 'text'"
        )))
        .at_node(chain.nodes.len(), chain.turns.len().saturating_sub(1));
        out.push(if as_block(part).is_some() {
            v.with_defect(crate::violation::Defect::ForeignResultPart)
        } else {
            v
        });
    }
}

/// An image's Anthropic `source` from a URL: a base64 source for a data URL of an image
/// type the API reads, a `url` source for an http(s) URL.
fn image_source(url: &str) -> Option<Value> {
    if let Some(rest) = url.strip_prefix("data:") {
        let (media, data) = rest.split_once(";base64,")?;
        let known = ["image/jpeg", "image/png", "image/gif", "image/webp"];
        return known
            .contains(&media)
            .then(|| serde_json::json!({"type": "base64", "media_type": media, "data": data}));
    }
    super::is_http_url(url).then(|| serde_json::json!({"type": "url", "url": url}))
}

/// A part of another API as the Anthropic block it is: `input_text` / `output_text` as
/// `text`, an `image_url` / `input_image` as an `image` block (see [`image_source`]),
/// its `cache_control` kept. `None` for a part of another shape.
pub(crate) fn block_of_foreign_part(part: &Value) -> Option<Value> {
    let mut block = serde_json::Map::new();
    match as_block(part)? {
        AsBlock::Text(text) => {
            block.insert("type".into(), Value::String("text".into()));
            block.insert("text".into(), text.into());
        }
        AsBlock::Image(source) => {
            block.insert("type".into(), Value::String("image".into()));
            block.insert("source".into(), source);
        }
    }
    if let Some(c) = part.get("cache_control") {
        block.insert("cache_control".into(), c.clone());
    }
    Some(Value::Object(block))
}

/// A call's `id` or a result's `tool_use_id` (`key`) of block `messages[i].content[j]`
/// (of type `ty`): Anthropic types both as strings.
fn block_id<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    b: J,
    ty: &str,
    key: &str,
    p: Ptr,
    out: &mut Vec<Violation>,
) -> ReadId<'a> {
    string_id(b.get(key), out, || {
        (
            p.render_with(key),
            format!("messages[{i}].content[{j}].{key} ({ty})"),
        )
    })
}

/// A call block's node (its input judged apart).
fn map_call_block<'a>(
    ty: &'a str,
    id: ReadId<'a>,
    name: Option<&'a str>,
    p: Ptr,
    chain: &mut Chain<'a>,
) {
    let (kind, wire) = match ty {
        "tool_use" => (CallKind::Client, "tool_use"),
        "mcp_tool_use" => (CallKind::Server, "mcp_tool_use"),
        _ => (CallKind::Server, "server_tool_use"),
    };
    let wire = chain.wire(wire);
    chain.push(
        NodeKind::Call {
            call_id: id.text,
            name,
            kind,
            wire,
            signed: false,
            id_mistyped: id.mistyped,
        },
        p,
    );
}

/// A `tool_result` block answering `tool_use_id`, marked as an error (for repair).
pub(crate) fn synthesized_result(tool_use_id: &str, text: &str) -> Value {
    serde_json::json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": true})
}

/// A `tool_result` block that answers no call, kept as a text block.
pub(crate) fn result_as_text(block: &Value) -> Value {
    let id = block
        .get("tool_use_id")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let content = match block.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    serde_json::json!({"type": "text", "text": format!("[result of tool call {id}]\n{content}")})
}
