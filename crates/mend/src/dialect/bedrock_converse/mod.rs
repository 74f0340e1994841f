//! AWS Bedrock Converse (`POST /model/{modelId}/converse` and `converse-stream`):
//! `system` (a list of blocks) + `messages[]` of `{role, content: [block]}`.
//!
//! A content block is a single-key union without a `type` tag: `{"text"}`,
//! `{"toolUse": {toolUseId, name, input}}`, `{"toolResult": {toolUseId, content,
//! status}}`, `{"reasoningContent": {"reasoningText": {text, signature}} |
//! {"redactedContent"}}`, media (`image`, `document`, `video`), and markers
//! (`cachePoint`, `guardContent`, `citationsContent`). Nodes point at the block; the
//! call id lives one level down, under the union key (see [`INNER`]).
//!
//! The body carries no model: it is in the URL, so callers pass it (`--model`, the
//! gateway's route). Server tools (Nova's code interpreter) are `toolUse` blocks with
//! `"type": "server_tool_use"` whose `toolResult` sits in the same assistant message.

pub(crate) mod capture;

use serde_json::Value;

use super::openai_chat::approx_size;
use super::{kind_in as kind_of, malformed, member_id, nonempty_string, not_an_object};
use crate::chain::{CallKind, Chain, NodeKind, Ptr, Role};
use crate::json::Json;
use crate::violation::{Defect, Rule, Violation};

pub mod canonical;
pub(crate) mod settings;

const ROOT: &str = "messages";

/// The union keys under which a call's and a result's `toolUseId` live.
pub(crate) const INNER: (&str, &str) = ("toolUse", "toolResult");

pub(crate) fn map<'a, J: Json<'a>>(body: J, chain: &mut Chain<'a>, out: &mut Vec<Violation>) {
    read_thinking(body, chain);
    chain.facts.tools_declared = body.get("toolConfig").is_some_and(|t| !t.is_null());
    match body.get("system") {
        None => {}
        Some(n) if n.is_null() => {}
        Some(blocks) if blocks.is_array() => {
            chain.begin_turn(
                Role::System,
                "system",
                Ptr::root("system"),
                approx_size(blocks),
            );
            for (j, b) in blocks.items().enumerate() {
                let p = Ptr::item("system", j);
                match single_key(b) {
                    Some(("text", t)) if t.is_string() => chain.push(
                        NodeKind::Text {
                            blank: t.text().is_some_and(|t| t.blank),
                        },
                        p,
                    ),
                    Some(("cachePoint" | "guardContent", _)) => {}
                    _ => malformed(
                        out,
                        p,
                        None,
                        format!(
                            "system[{j}] is not a system block (`{{\"text\": string}}`, `cachePoint` or `guardContent`)"
                        ),
                    ),
                }
            }
        }
        Some(other) => malformed(
            out,
            Ptr::root("system"),
            None,
            format!(
                "`system` is {} but must be an array of system blocks",
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

/// Where the final assistant message's last text block ends with white space, if it
/// does (a `cachePoint` after it does not count: it marks, it says nothing). Claude
/// refuses that prefill through Converse as through its own API.
fn final_trailing_whitespace<'a, J: Json<'a>>((i, last): (usize, J)) -> Option<Ptr> {
    if last.get("role").and_then(J::str) != Some("assistant") {
        return None;
    }
    let blocks = last.get("content")?;
    let (j, block) = blocks
        .items()
        .enumerate()
        .filter(|(_, b)| b.get("cachePoint").is_none())
        .last()?;
    let text = block.get("text").filter(|t| t.is_string())?;
    text.text()
        .is_some_and(|t| t.trailing_space)
        .then(|| Ptr::sub(ROOT, i, "content", j))
}

/// Claude's extended thinking travels in `additionalModelRequestFields.thinking`.
fn read_thinking<'a, J: Json<'a>>(body: J, chain: &mut Chain) {
    let thinking = body
        .get("additionalModelRequestFields")
        .and_then(|f| f.get("thinking"))
        .and_then(|t| t.get("type"))
        .and_then(J::str);
    match thinking {
        Some("enabled" | "adaptive") => chain.facts.thinking_enabled = true,
        Some("disabled") => chain.facts.thinking_disabled = true,
        _ => {}
    }
}

/// The one key of a union block, with its value; None when it has none or several.
fn single_key<'a, J: Json<'a>>(o: J) -> Option<(&'a str, J)> {
    let mut it = o.members();
    let (k, v) = it.next()?;
    it.next().is_none().then_some((k, v))
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
        other => Role::Other(other),
    };
    let size = m.get("content").map(approx_size).unwrap_or(0);
    chain.begin_turn(role, wire_role, ptr, size);
    match m.get("content") {
        None => chain.mark_empty(),
        Some(n) if n.is_null() => chain.mark_empty(),
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
                "messages[{i}].content is {} but must be an array of content blocks",
                kind_of(other)
            ),
        ),
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
    let Some((key, v)) = single_key(b) else {
        let keys: Vec<&str> = b.members().map(|(k, _)| k).collect();
        malformed(
            out,
            p,
            None,
            format!(
                "messages[{i}].content[{j}] has {} but a content block sets exactly one member (`text`, `toolUse`, `toolResult`, `reasoningContent`, `image`, ...)",
                if keys.is_empty() { "no member".to_string() } else { format!("the members {}", keys.join(", ")) }
            ),
        );
        return;
    };
    let s = |k: &str| v.get(k).and_then(J::str);
    if key == "toolUse" {
        check_tool_input(i, j, v, p, chain, out);
    }
    if key == "toolResult" {
        check_result_json(i, j, v, p, chain, out);
    }
    read_documents_and_images(i, j, (key, v), p, chain, out);
    let kind = match key {
        "text" => match v.text() {
            Some(t) => NodeKind::Text { blank: t.blank },
            None => {
                malformed(
                    out,
                    p,
                    Some("text"),
                    format!(
                        "messages[{i}].content[{j}].text is {} but must be a string",
                        kind_of(v)
                    ),
                );
                return;
            }
        },
        "image" | "document" | "video" | "audio" => NodeKind::Media,
        "toolUse" | "toolResult" if !v.is_object() => {
            malformed(
                out,
                p,
                Some(key),
                format!(
                    "messages[{i}].content[{j}].{key} is {} but must be an object",
                    kind_of(v)
                ),
            );
            return;
        }
        "toolUse" => {
            let id = member_id(v, key, "toolUseId", p, out);
            NodeKind::Call {
                call_id: id.text,
                id_mistyped: id.mistyped,
                name: s("name"),
                kind: if s("type") == Some("server_tool_use") {
                    CallKind::Server
                } else {
                    CallKind::Client
                },
                wire: chain.wire("toolUse"),
                signed: false,
            }
        }
        "toolResult" => {
            let id = member_id(v, key, "toolUseId", p, out);
            // Server tool results carry their own `type` (Nova's code interpreter).
            let kind = match s("type") {
                Some(t) if t != "tool_result" => CallKind::Server,
                _ => CallKind::Client,
            };
            let mut node = id.result(None, kind, chain.wire("toolResult"));
            // An error result must say something: "The content field at
            // messages.N.content.M.toolResult cannot be empty when status value is error."
            if let NodeKind::Result { empty_error, .. } = &mut node {
                *empty_error =
                    s("status") == Some("error") && super::says_nothing(v.get("content"));
            }
            node
        }
        "reasoningContent" => match reasoning(v, chain) {
            Some(kind) => kind,
            None => {
                let found = v
                    .members()
                    .map(|(k, _)| k)
                    .find(|k| *k != "reasoningText" && *k != "redactedContent")
                    .unwrap_or("?");
                malformed(
                    out,
                    p,
                    Some("reasoningContent"),
                    format!(
                        "messages[{i}].content[{j}].reasoningContent is neither `reasoningText` ({{text, signature}}) nor `redactedContent`"
                    ),
                );
                if let Some(last) = out.last_mut() {
                    last.provider_error = Some(format!(
                        "Unknown parameter in messages[{i}].content[{j}].reasoningContent: \"{found}\", must be one of: reasoningText, redactedContent"
                    ));
                }
                return;
            }
        },
        other => NodeKind::Other { wire: other },
    };
    chain.push(kind, p);
}

/// The image formats Converse takes, as it spells them (lowercase; `jpg` is refused).
pub(crate) const IMAGE_FORMATS: [&str; 4] = ["png", "jpeg", "gif", "webp"];

/// A Bedrock model id of Claude, or an ARN naming one (`anthropic.claude-…`,
/// `us.anthropic.claude-…`, `global.anthropic.claude-…`): the models whose Converse
/// reasoning comes signed and that refuse S3 media. (The settings writer and the
/// reasoning-first rule also take a Claude model in Anthropic's naming.)
pub(crate) fn is_claude_id(model: &str) -> bool {
    model.contains("anthropic.claude")
}

/// The format Converse names an image label by, when the label names one of its four
/// unambiguously (`jpg`, `JPEG`, `image/png`); None otherwise.
pub(crate) fn image_format_named(label: &str) -> Option<&'static str> {
    let label = label.trim().to_ascii_lowercase();
    let label = label.strip_prefix("image/").unwrap_or(&label);
    let label = if label == "jpg" { "jpeg" } else { label };
    IMAGE_FORMATS.into_iter().find(|f| *f == label)
}

/// A character Converse takes in a document's name: ASCII letters and digits, space,
/// `-`, `_` (accepted, though the service's text does not list it), `()` and `[]`.
fn document_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || " -_()[]".contains(c)
}

/// Why Converse refuses `name` as a document's name, or `None` when it takes it (the
/// characters of [`document_name_char`], no two spaces in a row, 1 to 200 characters).
pub(crate) fn document_name_fault(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".into());
    }
    if let Some(c) = name.chars().find(|&c| !document_name_char(c)) {
        return Some(format!("holds `{c}`, which Converse refuses there (it takes ASCII letters and digits, single spaces, `-`, `_`, `()` and `[]`)"));
    }
    if name.contains("  ") {
        return Some("holds two spaces in a row".into());
    }
    (name.chars().count() > 200).then(|| "is longer than 200 characters".into())
}

/// Whether Converse takes `name` as a document's name ([`document_name_fault`]).
pub(crate) fn document_name_is_valid(name: &str) -> bool {
    document_name_fault(name).is_none()
}

/// A document name as Converse takes it, from a file name: an extension that repeats the
/// format (any extension when the format is not known) dropped, each run of characters
/// it refuses (white space included) as one space, at most 200 characters, `document`
/// when nothing is left. Used by the writer and by `malformed`'s repair.
pub(crate) fn document_name(name: &str, format: Option<&str>) -> String {
    let stem = match (name.rsplit_once('.'), format) {
        (Some((stem, ext)), Some(f)) if ext.eq_ignore_ascii_case(f) && !stem.is_empty() => stem,
        (Some((stem, _)), None) if !stem.is_empty() => stem,
        _ => name,
    };
    let mut out = String::new();
    for c in stem.chars() {
        let c = if document_name_char(c) { c } else { ' ' };
        if !(c == ' ' && (out.is_empty() || out.ends_with(' '))) {
            out.push(c);
        }
    }
    let out: String = out.chars().take(200).collect();
    match out.trim_end() {
        "" => "document".to_string(),
        t => t.to_string(),
    }
}

/// The document names of a request so far, in body order: Converse refuses a request
/// where two documents share one ("Messages can't contain duplicate document names.",
/// maximhq/bifrost#7003, where every unnamed document became `document`).
#[derive(Default)]
pub(crate) struct DocumentNames {
    taken: std::collections::HashSet<String>,
    /// For each name, the number its next copy tries (so many copies cost a step each).
    next: std::collections::HashMap<String, usize>,
}

impl DocumentNames {
    /// `base`, or `base (2)`, `base (3)`, ... when an earlier document has it; taken.
    pub(crate) fn unique(&mut self, base: &str) -> String {
        let next = self.next.entry(base.to_string()).or_insert(2);
        let mut name = base.to_string();
        while self.taken.contains(&name) {
            name = format!("{base} ({next})");
            *next += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// Gives the documents of written messages names no earlier document has.
pub(crate) fn unique_document_names(msgs: &mut [Value]) {
    let mut names = DocumentNames::default();
    let mut rename = |doc: &mut Value| {
        if let Some(Value::String(name)) = doc.get_mut("name") {
            *name = names.unique(name);
        }
    };
    for m in msgs {
        let Some(Value::Array(blocks)) = m.get_mut("content") else {
            continue;
        };
        for b in blocks {
            if let Some(doc) = b.get_mut("document") {
                rename(doc);
            }
            let inner = b
                .pointer_mut("/toolResult/content")
                .and_then(Value::as_array_mut);
            for c in inner.into_iter().flatten() {
                if let Some(doc) = c.get_mut("document") {
                    rename(doc);
                }
            }
        }
    }
}

/// The block's documents, by name, into the chain's facts (`document_names`), its images
/// and documents given by an S3 location too (`s3_media`), and each image of it (or of
/// its toolResult's content) whose `format` is not the one its bytes prove, as a finding.
fn read_documents_and_images<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    (key, v): (&str, J),
    p: Ptr,
    chain: &mut Chain<'a>,
    out: &mut Vec<Violation>,
) {
    let at = (chain.nodes.len(), chain.turns.len().saturating_sub(1));
    let mut image = |img: J, rel: String, (wire, member): (String, String)| {
        let declared = img.get("format").and_then(J::str);
        let path = format!("{}{rel}/image/format", p.render());
        // Converse takes four lowercase names only: `jpg` and `JPEG` are refused
        // (NousResearch/hermes-agent#55429, measured live).
        if let Some(declared) = declared.filter(|d| !IMAGE_FORMATS.contains(d)) {
            out.push(
                Violation::error(
                    Rule::Malformed,
                    path,
                    format!("the image format `{declared}` is not one Converse takes (png, jpeg, gif, webp)"),
                )
                .provider(Some(format!(
                    "1 validation error detected: Value at '{member}' failed to satisfy constraint: Member must satisfy enum value set: [png, jpeg, gif, webp]"
                )))
                .at_node(at.0, at.1)
                .with_defect(Defect::ImageFormat),
            );
            return;
        }
        let bytes = img
            .get("source")
            .and_then(|s| s.get("bytes"))
            .and_then(J::str);
        if let Some(proven) = bytes.and_then(super::image_format_of_base64) {
            let declared = declared.unwrap_or_default();
            if declared != proven {
                let declared = format!("image/{declared}");
                super::image_format_differs(out, (path, wire), (&declared, proven), at);
            }
        }
    };
    let name = |d: J| d.get("name").and_then(J::str);
    // Media by S3 location: whether the model reads them is the rules' call (the model
    // is in the URL, known once the body is read).
    // (Found in the walk that reads the names and formats: a walk of their own over
    // every tool result's content made a Converse check 1.7% longer.)
    let in_s3 = |m: J| {
        m.get("source")
            .is_some_and(|s| s.get("s3Location").is_some())
    };
    let s3_media = &mut chain.facts.s3_media;
    let mut s3 = |member: &'static str, m: J, k: Option<u32>| {
        if in_s3(m) {
            s3_media.push((p, at.0, member, k));
        }
    };
    match key {
        "document" => {
            s3("document", v, None);
            chain.facts.document_names.push((p, at.0, None, name(v)));
        }
        "image" => {
            s3("image", v, None);
            image(
                v,
                String::new(),
                (
                    format!("messages.{i}.content.{j}.image.source.bytes"),
                    format!("messages.{i}.member.content.{j}.member.image.format"),
                ),
            );
        }
        "toolResult" => {
            let inner = v
                .get("content")
                .into_iter()
                .flat_map(|c| c.items().enumerate());
            for (k, c) in inner {
                if let Some(d) = c.get("document") {
                    s3("document", d, Some(k as u32));
                    chain
                        .facts
                        .document_names
                        .push((p, at.0, Some(k as u32), name(d)));
                }
                if let Some(img) = c.get("image") {
                    s3("image", img, Some(k as u32));
                    let wire = format!(
                        "messages.{i}.content.{j}.toolResult.content.{k}.image.source.bytes"
                    );
                    let member = format!("messages.{i}.member.content.{j}.member.toolResult.content.{k}.member.image.format");
                    image(img, format!("/toolResult/content/{k}"), (wire, member));
                }
            }
        }
        _ => {}
    }
}

/// `toolUse.input` must be a JSON object: a client that kept a model's malformed
/// arguments as a string replays a string, which Converse refuses.
fn check_tool_input<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    v: J,
    p: Ptr,
    chain: &Chain,
    out: &mut Vec<Violation>,
) {
    if let Some(other) = v.get("input").filter(|x| !x.is_object()) {
        not_an_object(
            out,
            chain,
            format!("{}/toolUse/input", p.render()),
            format!("messages[{i}].content[{j}].toolUse.input"),
            other.kind(),
            format!("The format of the value at messages.{i}.content.{j}.toolUse.input is invalid. Provide a json object for the field and try again."),
            Defect::ToolInputNotObject,
        );
    }
}

/// A `toolResult` content block's `json` member must be a JSON object (a number, a list
/// or a string parsed from a tool's text output is refused).
fn check_result_json<'a, J: Json<'a>>(
    i: usize,
    j: usize,
    v: J,
    p: Ptr,
    chain: &Chain,
    out: &mut Vec<Violation>,
) {
    let Some(content) = v.get("content") else {
        return;
    };
    for (k, c) in content.items().enumerate() {
        if let Some(other) = c.get("json").filter(|x| !x.is_object()) {
            not_an_object(
                out,
                chain,
                format!("{}/toolResult/content/{k}/json", p.render()),
                format!("messages[{i}].content[{j}].toolResult.content[{k}].json"),
                other.kind(),
                format!("The format of the value at messages.{i}.content.{j}.toolResult.content.{k}.json is invalid. Provide a json object for the field and try again."),
                Defect::ResultJsonNotObject,
            );
        }
    }
}

/// A `reasoningContent` union as a reasoning node; None when it is neither form.
fn reasoning<'a, J: Json<'a>>(v: J, chain: &mut Chain<'a>) -> Option<NodeKind<'a>> {
    if let Some(r) = v.get("reasoningText") {
        r.get("text").filter(|t| t.is_string())?;
        return Some(NodeKind::Reasoning {
            item_id: None,
            signed: nonempty_string(r.get("signature")),
            encrypted: false,
            redacted: false,
            wire: chain.wire("reasoningContent"),
        });
    }
    let data = v.get("redactedContent")?;
    Some(NodeKind::Reasoning {
        item_id: None,
        signed: nonempty_string(Some(data)),
        encrypted: true,
        redacted: true,
        wire: chain.wire("reasoningContent"),
    })
}

/// A `toolResult` block answering `tool_use_id`, marked as an error (for repair).
pub(crate) fn synthesized_result(tool_use_id: &str, text: &str) -> Value {
    serde_json::json!({"toolResult": {"toolUseId": tool_use_id, "content": [{"text": text}], "status": "error"}})
}

/// A `toolResult` block that answers no call, kept as a text block.
pub(crate) fn result_as_text(block: &Value) -> Value {
    let r = block.get("toolResult");
    let id = r
        .and_then(|r| r.get("toolUseId"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let content = match r.and_then(|r| r.get("content")) {
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| match (p.get("text"), p.get("json")) {
                (Some(Value::String(t)), _) => t.clone(),
                (_, Some(j)) => j.to_string(),
                _ => p.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    serde_json::json!({"text": format!("[result of tool call {id}]\n{content}")})
}

/// The model named in a Converse URL path (`/model/{modelId}/converse[-stream]`),
/// URL-decoded; None when the path is not a Converse route.
pub fn model_from_path(path: &str) -> Option<String> {
    let path = path.split('?').next().unwrap_or(path);
    let rest = path.split("/model/").nth(1)?;
    let (id, op) = rest.rsplit_once('/')?;
    if !matches!(op, "converse" | "converse-stream") || id.is_empty() {
        return None;
    }
    Some(percent_decode(id))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut k = 0;
    while k < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[k],
            b.get(k + 1).copied().and_then(hex),
            b.get(k + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                k += 3;
            }
            (c, _, _) => {
                out.push(c);
                k += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_comes_from_the_path() {
        assert_eq!(
            model_from_path("/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"),
            Some("us.anthropic.claude-sonnet-4-5-20250929-v1:0".into())
        );
        assert_eq!(
            model_from_path("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Aapplication-inference-profile%2Fx/converse-stream"),
            Some("arn:aws:bedrock:us-east-1:1:application-inference-profile/x".into())
        );
        assert_eq!(model_from_path("/model/x/invoke"), None);
        assert_eq!(model_from_path("/model//converse"), None);
        assert_eq!(model_from_path("/model/%zz/converse"), Some("%zz".into()));
    }
}
