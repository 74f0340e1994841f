//! Carrying a source history's parts to what the target can hold, and reshaping its turns
//! into the target's structure.

use crate::json::Field;
use crate::rules::IdMap;
use std::collections::{HashMap, HashSet};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use serde_json::Value;

use super::paths::SourcePaths;
use super::{Note, NoteKind};
use crate::canonical::{
    Conversation, Extra, Media, Message, Part, Reasoning, Role, ToolCall, ToolContent, ToolResult,
};
use crate::chain::escape;
use crate::dialect::bedrock_converse::canonical as converse;
use crate::{CheckOptions, Dialect, Profile};

/// The target's messages, each with the index of the source message it came from (a
/// merged message names the first).
pub(crate) struct Shaped {
    pub messages: Vec<Message>,
    pub origins: Vec<usize>,
}

/// Wire tags and bookkeeping that carry no information of their own: not reported when
/// they are left behind.
const TAG_KEYS: &[&str] = &["type", "status", "index", "role"];

/// Where a carried thing sat in the source, rendered as a pointer only for a note.
#[derive(Clone, Copy)]
enum At {
    /// Message `i`.
    Message(usize),
    /// Part `j` of message `i`.
    Part(usize, usize),
    /// Part `k` of the content of the tool result that is part `j` of message `i`.
    Content(usize, usize, usize),
}

struct Carrier<'a> {
    from: Dialect,
    to: Dialect,
    profile: &'static Profile,
    paths: &'a SourcePaths,
    notes: &'a mut Vec<Note>,
    /// Chat: the images and files of tool results, by the message they came from, for a
    /// user message right after the tool messages (chat tool content is text).
    spilled: Vec<(usize, Vec<Part>)>,
    /// The target model, when known.
    model: Option<&'a str>,
    /// Gemini: the target model is Gemini 3 or later, which takes a tool's images and
    /// files beside its JSON response (`functionResponse.parts`).
    media_in_responses: bool,
}

impl Carrier<'_> {
    fn lost(&mut self, what: &'static str, path: String, detail: String) {
        self.notes
            .push(Note::new(NoteKind::Lost, what, path, detail));
    }

    /// The source pointer of `at`.
    fn ptr(&self, at: At) -> String {
        match at {
            At::Message(i) => self.paths.message(i),
            At::Part(i, j) => self.paths.part(i, j),
            At::Content(i, j, k) => format!("{}/content/{k}", self.paths.part(i, j)),
        }
    }

    /// Report the wire fields of `extra` that meant something.
    fn extras(&mut self, at: At, extra: &Extra) {
        for (k, v) in extra {
            if TAG_KEYS.contains(&k.as_str()) || carries_nothing(v) {
                continue;
            }
            let detail = format!(
                "the field `{k}` of {} has no equivalent in {}",
                self.from, self.to
            );
            self.lost("field", format!("{}/{}", self.ptr(at), escape(k)), detail);
        }
    }

    /// Carry message `i`, moving what is kept of it.
    fn message(&mut self, i: usize, m: Message) -> Option<Message> {
        let at = At::Message(i);
        if m.is_verbatim() {
            let what = m
                .verbatim_value()
                .and_then(|v| v.field("type"))
                .and_then(Value::as_str)
                .unwrap_or("item");
            let detail = format!(
                "a `{what}` item of {} that {} cannot hold",
                self.from, self.to
            );
            self.lost("verbatim-item", self.ptr(at), detail);
            return None;
        }
        let role = match m.role {
            Role::Other(r) if r == "function" => Role::Tool,
            Role::Other(r) => {
                let detail = format!("a message of role `{r}`, which {} does not have", self.to);
                self.lost("verbatim-item", self.ptr(at), detail);
                return None;
            }
            r => r,
        };
        if let Some(id) = &m.item_id {
            let detail = format!("the provider item id `{id}` (only OpenAI Responses carries it)");
            self.lost("item-id", self.ptr(at), detail);
        }
        self.extras(at, &m.extra);
        let parts = m
            .parts
            .into_iter()
            .enumerate()
            .filter_map(|(j, p)| self.part(i, j, p))
            .collect();
        Some(Message::new(role, parts))
    }

    fn part(&mut self, i: usize, j: usize, p: Part) -> Option<Part> {
        let at = At::Part(i, j);
        match p {
            Part::Text(t) => {
                if let Some(sig) = &t.signature {
                    self.signature(at, sig, "text part");
                }
                self.extras(at, &t.extra);
                if t.text.is_empty()
                    && matches!(
                        self.to,
                        Dialect::Anthropic | Dialect::Gemini | Dialect::BedrockConverse
                    )
                {
                    // Empty text carries nothing, and these reject it.
                    return None;
                }
                Some(Part::text(t.text))
            }
            Part::Image(m) => self.media(at, m, MediaKind::Image).map(Part::Image),
            Part::File(m) => self.media(at, m, MediaKind::File).map(Part::File),
            Part::Reasoning(r) => self.reasoning(at, &r).map(Part::Reasoning),
            Part::ToolCall(c) => {
                if let Some(id) = &c.item_id {
                    let detail = format!(
                        "the function call item id `{id}` (only OpenAI Responses carries it)"
                    );
                    self.lost("item-id", self.ptr(at), detail);
                }
                if let Some(sig) = &c.signature {
                    self.signature(at, sig, "function call");
                }
                self.extras(at, &c.extra);
                Some(Part::ToolCall(ToolCall {
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                    ..ToolCall::default()
                }))
            }
            Part::ToolResult(r) => self.tool_result((i, j), r).map(Part::ToolResult),
            Part::Opaque(o) => {
                let kind = opaque_kind(&o.value);
                let detail = format!(
                    "a `{kind}` part of {} that {} cannot hold",
                    self.from, self.to
                );
                self.lost("opaque-part", self.ptr(at), detail);
                None
            }
        }
    }

    fn tool_result(&mut self, (i, j): (usize, usize), mut r: ToolResult) -> Option<ToolResult> {
        let at = At::Part(i, j);
        if self.from == Dialect::Gemini {
            (r.content, r.is_error) = unwrap_gemini_response(r.content.take(), r.is_error);
        }
        // Gemini's convention for a failure is a response of `{"error": text}`.
        if r.is_error && self.to == Dialect::Gemini {
            if let Some(ToolContent::Text(t)) = &r.content {
                let content = Some(ToolContent::Json(serde_json::json!({ "error": t })));
                self.extras(at, &r.extra);
                return Some(ToolResult {
                    call_id: r.call_id,
                    name: r.name,
                    content,
                    ..ToolResult::default()
                });
            }
        }
        let has_error_flag = matches!(self.to, Dialect::Anthropic | Dialect::BedrockConverse);
        if r.is_error && !has_error_flag {
            let detail = format!(
                "the result of `{}` is marked as an error; {} has no such flag (the content is kept)",
                r.call_id.as_deref().unwrap_or("?"),
                self.to
            );
            self.lost("is-error", self.ptr(at), detail);
        }
        self.extras(at, &r.extra);
        // Gemini 3's media beside a JSON response: into the content, where the target
        // holds media (or says it lost them).
        let content = match (r.content, r.media.is_empty()) {
            (content, true) => content,
            (content, false) => {
                let mut parts = match content {
                    None => Vec::new(),
                    Some(ToolContent::Text(t)) => vec![Part::text(t)],
                    Some(ToolContent::Json(v)) => vec![Part::text(v.to_string())],
                    Some(ToolContent::Parts(p)) => p,
                };
                parts.extend(r.media);
                Some(ToolContent::Parts(parts))
            }
        };
        let (content, media) = match content.map(|c| self.tool_content((i, j), c)) {
            Some((c, media)) => (Some(c), media),
            None => (None, Vec::new()),
        };
        Some(ToolResult {
            call_id: r.call_id,
            name: r.name,
            content,
            is_error: r.is_error && has_error_flag,
            media,
            ..ToolResult::default()
        })
    }

    /// A tool result's image or file, taken out for the user message that follows the
    /// tool messages.
    fn spill(&mut self, i: usize, at: At, part: Part) {
        let detail = format!(
            "the tool result's {} part: {} tool content is text, so it goes in a user message right after the tool results",
            part.kind(),
            self.to
        );
        self.notes
            .push(Note::new(NoteKind::Moved, "media", self.ptr(at), detail));
        match self.spilled.last_mut() {
            Some((m, parts)) if *m == i => parts.push(part),
            _ => self.spilled.push((i, vec![part])),
        }
    }

    fn signature(&mut self, at: At, sig: &str, on: &str) {
        let detail = format!(
            "the {} thought signature on a {on} ({} characters): {} cannot verify another provider's signature",
            self.from,
            sig.len(),
            self.to
        );
        self.lost("signature", self.ptr(at), detail);
    }

    fn media(&mut self, at: At, m: Media, kind: MediaKind) -> Option<Media> {
        self.extras(at, &m.extra);
        let mut out = Media {
            url: m.url,
            data: m.data,
            media_type: m.media_type,
            filename: m.filename,
            ..Media::default()
        };
        let openai = |d: Dialect| matches!(d, Dialect::OpenAiChat | Dialect::OpenAiResponses);
        if let Some(id) = m.file_id {
            if openai(self.from) && openai(self.to) {
                out.file_id = Some(id);
            } else {
                let detail = format!(
                    "the file id `{id}` belongs to {}'s file store, which {} cannot read",
                    self.from, self.to
                );
                self.lost("media", self.ptr(at), detail);
            }
        }
        if let Some(d) = m.detail {
            if openai(self.to) {
                out.detail = Some(d);
            } else {
                let detail = format!("the image `detail: {d}`, which {} does not have", self.to);
                self.lost("field", format!("{}/detail", self.ptr(at)), detail);
            }
        }
        if self.to == Dialect::Gemini && out.data.is_none() && out.url.is_none() {
            return None;
        }
        if self.to == Dialect::BedrockConverse {
            let image = matches!(kind, MediaKind::Image);
            let inline = out.data.is_some()
                && out
                    .media_type
                    .as_deref()
                    .and_then(|mt| converse::media_format(mt, image))
                    .is_some();
            if !inline {
                if out.data.is_some() || out.url.is_some() {
                    let detail = format!(
                        "{} {} of {}: Converse takes media inline as bytes of a format it knows ({})",
                        if image { "an image" } else { "a document" },
                        match (&out.url, &out.media_type) {
                            (Some(u), _) => format!("at the URL `{}`", short(u)),
                            (None, Some(mt)) => format!("of type `{mt}`"),
                            (None, None) => "without a media type".to_string(),
                        },
                        self.from,
                        if image { "png, jpeg, gif, webp" } else { "pdf, csv, doc, docx, xls, xlsx, html, txt, md" }
                    );
                    self.lost("media", self.ptr(at), detail);
                }
                return None;
            }
            out.url = None;
        }
        if out.data.is_none() && out.url.is_none() && out.file_id.is_none() {
            return None;
        }
        Some(out)
    }

    fn reasoning(&mut self, at: At, r: &Reasoning) -> Option<Reasoning> {
        self.extras(at, &r.extra);
        let keep_text = self.to == Dialect::OpenAiChat && self.profile.requires_reasoning_content;
        let mut lost = Vec::new();
        if let Some(id) = &r.item_id {
            lost.push(format!("item id `{id}`"));
        }
        if r.signature.is_some() {
            lost.push("its signature".to_string());
        }
        if r.encrypted.is_some() {
            lost.push("its encrypted content".to_string());
        }
        if r.summary.as_ref().is_some_and(|s| !s.is_empty()) {
            lost.push("its summary".to_string());
        }
        if let Some(kept) = self.claude_reasoning(at, r) {
            return kept;
        }
        match (&r.text, keep_text) {
            (Some(t), true) => {
                if !lost.is_empty() {
                    let detail = format!(
                        "the reasoning text is kept as `reasoning_content`, without {}",
                        lost.join(", ")
                    );
                    self.lost("signature", self.ptr(at), detail);
                }
                Some(Reasoning {
                    text: Some(t.clone()),
                    ..Reasoning::default()
                })
            }
            _ => {
                let what = if r.signature.is_some() {
                    "signature"
                } else if r.encrypted.is_some() && r.text.is_none() {
                    "encrypted-reasoning"
                } else {
                    "reasoning"
                };
                if let Some(t) = &r.text {
                    lost.insert(0, format!("{} characters of text", t.chars().count()));
                }
                let detail = format!(
                    "{} reasoning ({}): {} accepts only reasoning it produced itself",
                    self.from,
                    if lost.is_empty() {
                        "empty".to_string()
                    } else {
                        lost.join(", ")
                    },
                    self.to
                );
                self.lost(what, self.ptr(at), detail);
                None
            }
        }
    }

    /// Claude's reasoning between Anthropic and Converse, which serve the same models:
    /// signed thinking keeps its text and signature (Anthropic documents signatures as
    /// valid across its API, Bedrock and Vertex), and redacted thinking its data, which
    /// Converse carries base64-encoded once more (a blob on the JSON wire). None when this
    /// is not such a pair or such reasoning (unsigned reasoning, as DeepSeek-R1's on
    /// Converse, is not Claude's); `Some(None)` when it was, and is reported lost.
    fn claude_reasoning(&mut self, at: At, r: &Reasoning) -> Option<Option<Reasoning>> {
        let from_converse = match (self.from, self.to) {
            (Dialect::BedrockConverse, Dialect::Anthropic) => true,
            (Dialect::Anthropic, Dialect::BedrockConverse) => false,
            _ => return None,
        };
        match (&r.text, &r.signature, &r.encrypted) {
            (Some(t), Some(sig), _) => Some(Some(Reasoning {
                text: Some(t.clone()),
                signature: Some(sig.clone()),
                ..Reasoning::default()
            })),
            (None, _, Some(data)) if from_converse => {
                let decoded = BASE64
                    .decode(data)
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok());
                if decoded.is_none() {
                    let detail = format!(
                        "the redacted reasoning of {} is not base64 of Anthropic's redacted data, so {} cannot take it back",
                        self.from, self.to
                    );
                    self.lost("encrypted-reasoning", self.ptr(at), detail);
                }
                Some(decoded.map(|d| Reasoning {
                    encrypted: Some(d),
                    ..Reasoning::default()
                }))
            }
            (None, _, Some(data)) => Some(Some(Reasoning {
                encrypted: Some(BASE64.encode(data)),
                ..Reasoning::default()
            })),
            _ => None,
        }
    }

    /// A tool result's content as the target holds it, and, for Gemini 3, the images
    /// and files that go beside it (`functionResponse.parts`).
    fn tool_content(&mut self, (i, j): (usize, usize), c: ToolContent) -> (ToolContent, Vec<Part>) {
        let parts = match c {
            ToolContent::Parts(parts) => parts,
            other => return (other, Vec::new()),
        };
        let beside = self.media_in_responses;
        let mut media = Vec::new();
        let text_only = matches!(self.to, Dialect::OpenAiChat | Dialect::Gemini);
        // Chat takes a tool's images and files in a user message after the results, but
        // not where Mistral's role order refuses a user message right after a tool's.
        let spill = self.to == Dialect::OpenAiChat && !self.profile.mistral_role_order;
        let mut kept = Vec::new();
        let mut spilled = false;
        for (k, p) in parts.into_iter().enumerate() {
            let sub = At::Content(i, j, k);
            match p {
                Part::Image(m) if spill => {
                    if let Some(m) = self.media(sub, m, MediaKind::Image) {
                        self.spill(i, sub, Part::Image(m));
                        spilled = true;
                    }
                }
                Part::File(m) if spill => {
                    if let Some(m) = self.media(sub, m, MediaKind::File) {
                        self.spill(i, sub, Part::File(m));
                        spilled = true;
                    }
                }
                Part::Text(t) => {
                    self.extras(sub, &t.extra);
                    kept.push(Part::text(t.text));
                }
                Part::Image(m) if beside => {
                    media.extend(self.media(sub, m, MediaKind::Image).map(Part::Image));
                }
                Part::File(m) if beside => {
                    media.extend(self.media(sub, m, MediaKind::File).map(Part::File));
                }
                Part::Image(m) if !text_only => {
                    kept.extend(self.media(sub, m, MediaKind::Image).map(Part::Image));
                }
                Part::File(m) if !text_only => {
                    kept.extend(self.media(sub, m, MediaKind::File).map(Part::File));
                }
                // A Converse `{"json"}` block among others: its JSON as text.
                Part::Opaque(o)
                    if self.from == Dialect::BedrockConverse
                        && converse_json(&o.value).is_some() =>
                {
                    if let Some(v) = converse_json(&o.value) {
                        kept.push(Part::text(v.to_string()));
                    }
                }
                other => {
                    let what = match &other {
                        Part::Image(_) => "an image",
                        Part::File(_) => "a file",
                        p => p.kind(),
                    };
                    let detail = match (self.to, &other) {
                        (Dialect::Gemini, Part::Image(_) | Part::File(_)) => format!(
                            "{what} in a tool result: Gemini takes a tool's images and files (in `functionResponse.parts`) from Gemini 3 on, and {}",
                            match self.model {
                                Some(m) => format!("{m} is an earlier model"),
                                None => "no target model was given".to_string(),
                            }
                        ),
                        _ => format!(
                            "{what} in a tool result: {} tool results hold text only",
                            self.to
                        ),
                    };
                    self.lost("media", self.ptr(sub), detail);
                }
            }
        }
        if self.to == Dialect::Gemini {
            let text = kept
                .iter()
                .map(|p| match p {
                    Part::Text(t) => t.text.as_str(),
                    _ => "",
                })
                .collect::<Vec<_>>()
                .join("\n");
            return (ToolContent::Text(text), media);
        }
        if spilled && kept.is_empty() {
            // All of it went to the user message: the result says no more than that.
            return (ToolContent::Text(String::new()), media);
        }
        (ToolContent::Parts(kept), media)
    }
}

/// Carry `conv`'s messages (read from `source`, and taken from it) into `to`'s shape.
pub(crate) fn carry(
    source: &Value,
    conv: &mut Conversation,
    paths: &SourcePaths,
    (to, model): (Dialect, Option<&str>),
    profile: &'static Profile,
    notes: &mut Vec<Note>,
) -> Shaped {
    let from = paths.dialect();
    let messages = match with_ids(source, paths, from, conv) {
        Some(messages) => messages,
        None => std::mem::take(&mut conv.messages),
    };
    let mut carrier = Carrier {
        from,
        to,
        profile,
        paths,
        notes,
        spilled: Vec::new(),
        model,
        media_in_responses: to == Dialect::Gemini
            && model
                .and_then(crate::dialect::gemini::generation)
                .is_some_and(|g| g >= 3),
    };
    let mut carried = Vec::with_capacity(messages.len());
    for (i, m) in messages.into_iter().enumerate() {
        if let Some(out) = carrier.message(i, m) {
            carried.push((out, i));
        }
    }
    let spilled = std::mem::take(&mut carrier.spilled);
    let mut shaped = reshape(carried, spilled, to, profile, paths, notes);
    if to == Dialect::BedrockConverse {
        converse_ids(&mut shaped, paths, notes);
    }
    let (messages, origins) = shaped.into_iter().unzip();
    Shaped { messages, origins }
}

/// Whether some call or result of `conv` has no id (then carrying pairs them by reading
/// the source body again).
pub(crate) fn lacks_ids(conv: &Conversation) -> bool {
    conv.messages
        .iter()
        .flat_map(|m| &m.parts)
        .any(|p| match p {
            Part::ToolCall(c) => c.id.is_none(),
            Part::ToolResult(r) => r.call_id.is_none(),
            _ => false,
        })
}

/// `conv`'s messages with an id on every call and result, when some have none: calls
/// that have none (Gemini, legacy chat `function_call`) get a fresh one, shared with the
/// results the engine pairs them with. None when every call and result has its id.
fn with_ids(
    source: &Value,
    paths: &SourcePaths,
    from: Dialect,
    conv: &Conversation,
) -> Option<Vec<Message>> {
    if !lacks_ids(conv) {
        return None;
    }
    let mut used = HashSet::new();
    let mut missing = HashMap::new();
    for (i, m) in conv.messages.iter().enumerate() {
        for (j, p) in m.parts.iter().enumerate() {
            match p {
                Part::ToolCall(c) => match &c.id {
                    Some(id) => {
                        used.insert(id.clone());
                    }
                    None => {
                        missing.insert(paths.part(i, j), (i, j));
                    }
                },
                Part::ToolResult(r) => match &r.call_id {
                    Some(id) => {
                        used.insert(id.clone());
                    }
                    None => {
                        missing.insert(paths.part(i, j), (i, j));
                    }
                },
                _ => {}
            }
        }
    }
    let mut with_ids = conv.clone();
    let conv = &mut with_ids;
    let mut fresh = Fresh { used, next: 1 };
    let opts = CheckOptions {
        dialect: Some(from),
        ..CheckOptions::default()
    };
    if let Ok(analysis) = crate::analyze(source, &opts) {
        for &(c, r) in &analysis.pairs {
            let (Some(cn), Some(rn)) = (analysis.chain.nodes.get(c), analysis.chain.nodes.get(r))
            else {
                continue;
            };
            let call_at = missing.get(&cn.ptr.render()).copied();
            let result_at = missing.get(&rn.ptr.render()).copied();
            if call_at.is_none() && result_at.is_none() {
                continue;
            }
            let call_at = call_at.or_else(|| locate(conv, paths, &cn.ptr.render()));
            let Some((ci, cj)) = call_at else { continue };
            let id = match call_id_at(conv, ci, cj) {
                Some(id) => id,
                None => {
                    let id = fresh.id();
                    set_id(conv, ci, cj, &id);
                    id
                }
            };
            if let Some((ri, rj)) = result_at {
                set_id(conv, ri, rj, &id);
            }
        }
    }
    // Whatever the engine did not pair gets an id of its own; the target repair handles
    // it as it handles any unanswered call or orphan result.
    // In message order, so the fresh ids are numbered the same way on every run.
    let mut rest: Vec<(usize, usize)> = missing.into_values().collect();
    rest.sort_unstable();
    for (i, j) in rest {
        if call_id_at(conv, i, j).is_none() && result_id_at(conv, i, j).is_none() {
            let id = fresh.id();
            set_id(conv, i, j, &id);
        }
    }
    Some(with_ids.messages)
}

struct Fresh {
    used: HashSet<String>,
    next: usize,
}

impl Fresh {
    fn id(&mut self) -> String {
        loop {
            let id = format!("call_{}", self.next);
            self.next += 1;
            if self.used.insert(id.clone()) {
                return id;
            }
        }
    }
}

fn locate(conv: &Conversation, paths: &SourcePaths, ptr: &str) -> Option<(usize, usize)> {
    conv.messages.iter().enumerate().find_map(|(i, m)| {
        (0..m.parts.len()).find_map(|j| {
            (matches!(m.parts[j], Part::ToolCall(_)) && paths.part(i, j) == ptr).then_some((i, j))
        })
    })
}

fn call_id_at(conv: &Conversation, i: usize, j: usize) -> Option<String> {
    match conv.messages.get(i)?.parts.get(j)? {
        Part::ToolCall(c) => c.id.clone(),
        _ => None,
    }
}

fn result_id_at(conv: &Conversation, i: usize, j: usize) -> Option<String> {
    match conv.messages.get(i)?.parts.get(j)? {
        Part::ToolResult(r) => r.call_id.clone(),
        _ => None,
    }
}

fn set_id(conv: &mut Conversation, i: usize, j: usize, id: &str) {
    let Some(p) = conv.messages.get_mut(i).and_then(|m| m.parts.get_mut(j)) else {
        return;
    };
    match p {
        Part::ToolCall(c) if c.id.is_none() => c.id = Some(id.to_string()),
        Part::ToolResult(r) if r.call_id.is_none() => r.call_id = Some(id.to_string()),
        _ => {}
    }
}

/// Put the carried messages into the target's structure.
fn reshape(
    carried: Vec<(Message, usize)>,
    spilled: Vec<(usize, Vec<Part>)>,
    to: Dialect,
    profile: &'static Profile,
    paths: &SourcePaths,
    notes: &mut Vec<Note>,
) -> Vec<(Message, usize)> {
    // Roles, and tool results where the target keeps them.
    let mut out: Vec<(Message, usize)> = Vec::with_capacity(carried.len());
    let mut seen_history = false;
    // Chat: the tool results' images and files not yet written, for the user message
    // that ends their run of tool messages.
    let mut spilled = spilled.into_iter().peekable();
    let mut pending: Option<(Vec<Part>, usize)> = None;
    for (m, origin) in carried {
        if m.parts.is_empty() {
            // Everything in it was lost (and said so), or it never held anything.
            continue;
        }
        let instructions = matches!(m.role, Role::System | Role::Developer);
        if instructions && seen_history && matches!(to, Dialect::Anthropic | Dialect::Gemini) {
            notes.push(Note::new(
                NoteKind::Moved,
                "system",
                paths.message(origin),
                format!(
                    "{} keeps instructions only before the history: this {} message joins them there",
                    to, m.role
                ),
            ));
        }
        seen_history |= !instructions;
        match to {
            Dialect::OpenAiChat => {
                let role = match m.role {
                    Role::Developer if profile.rejects_developer_role => Role::System,
                    r => r,
                };
                let (results, mut rest): (Vec<Part>, Vec<Part>) = m
                    .parts
                    .into_iter()
                    .partition(|p| matches!(p, Part::ToolResult(_)));
                for r in results {
                    out.push((Message::new(Role::Tool, vec![r]), origin));
                }
                // Only a message with tool results spilled media.
                if spilled.peek().is_some_and(|(i, _)| *i == origin) {
                    if let Some((_, media)) = spilled.next() {
                        let (parts, _) = pending.get_or_insert_with(|| (Vec::new(), origin));
                        parts.extend(media);
                    }
                }
                if !rest.is_empty() {
                    // The run of tool messages ends here: its media go first, at the head
                    // of this user message or in a user message of their own.
                    let role = if role == Role::Tool { Role::User } else { role };
                    if let Some((media, from)) = pending.take() {
                        if role == Role::User {
                            rest.splice(0..0, media);
                        } else {
                            out.push((Message::new(Role::User, media), from));
                        }
                    }
                    out.push((Message::new(role, rest), origin));
                }
            }
            Dialect::OpenAiResponses => out.push((m, origin)),
            Dialect::Anthropic | Dialect::Gemini | Dialect::BedrockConverse => {
                let role = match m.role {
                    Role::Developer => Role::System,
                    Role::Tool => Role::User,
                    r => r,
                };
                out.push((Message::new(role, m.parts), origin));
            }
        }
    }
    if let Some((media, from)) = pending {
        out.push((Message::new(Role::User, media), from));
    }
    match to {
        Dialect::OpenAiChat => merge_assistant_items(&mut out),
        Dialect::OpenAiResponses => {}
        Dialect::Anthropic | Dialect::BedrockConverse => {
            merge_runs(&mut out, false);
            results_first(&mut out);
        }
        Dialect::Gemini => {
            merge_runs(&mut out, true);
            results_first(&mut out);
            name_results(&mut out, notes, paths);
        }
    }
    out
}

/// Whether Converse takes `id` as a `toolUseId`: `[a-zA-Z0-9_-]`, 1 to 64 characters.
fn converse_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && crate::rules::ids::is_word(id)
}

/// Call ids of another dialect that Converse would refuse are rewritten, the same way in
/// the call and its results, to the id with every other character as `_`, cut to 64
/// characters (and numbered when that is taken). Converse's own ids never come here:
/// a conversion from Converse to itself is the body as it was.
fn converse_ids(out: &mut [(Message, usize)], paths: &SourcePaths, notes: &mut Vec<Note>) {
    let mut used: HashSet<String> = out
        .iter()
        .flat_map(|(m, _)| &m.parts)
        .filter_map(|p| match p {
            Part::ToolCall(c) => c.id.clone(),
            Part::ToolResult(r) => r.call_id.clone(),
            _ => None,
        })
        .filter(|id| converse_id(id))
        .collect();
    let mut renamed: HashMap<String, String> = HashMap::new();
    for (m, origin) in out.iter_mut() {
        for p in m.parts.iter_mut() {
            let id = match p {
                Part::ToolCall(c) => c.id.as_mut(),
                Part::ToolResult(r) => r.call_id.as_mut(),
                _ => None,
            };
            let Some(id) = id.filter(|id| !converse_id(id)) else {
                continue;
            };
            if let Some(new) = renamed.get(id.as_str()) {
                *id = new.clone();
                continue;
            }
            let cleaned: String = id
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(64)
                .collect();
            let mut new = if cleaned.is_empty() {
                "call".to_string()
            } else {
                cleaned.clone()
            };
            let mut n = 1;
            while used.contains(&new) {
                n += 1;
                let suffix = format!("_{n}");
                let keep: String = cleaned.chars().take(64 - suffix.len()).collect();
                new = format!("{keep}{suffix}");
            }
            used.insert(new.clone());
            notes.push(Note::new(
                NoteKind::Moved,
                "call-id",
                paths.message(*origin),
                format!(
                    "the call id `{id}` is not of the form Converse takes (`[a-zA-Z0-9_-]`, 1 to 64 characters): `{new}` in its call and its results"
                ),
            ));
            renamed.insert(id.clone(), new.clone());
            *id = new;
        }
    }
}

/// Consecutive assistant messages become one (Responses keeps each output item apart; a
/// chat assistant message holds text and calls together).
fn merge_assistant_items(out: &mut Vec<(Message, usize)>) {
    let mut merged: Vec<(Message, usize)> = Vec::with_capacity(out.len());
    for (m, origin) in out.drain(..) {
        match merged.last_mut() {
            Some((prev, _)) if prev.role == Role::Assistant && m.role == Role::Assistant => {
                // Text after calls would reorder on the wire; keep them apart then.
                let prev_has_calls = prev.parts.iter().any(|p| matches!(p, Part::ToolCall(_)));
                let m_has_content = m.parts.iter().any(|p| !matches!(p, Part::ToolCall(_)));
                if prev_has_calls && m_has_content {
                    merged.push((m, origin));
                } else {
                    prev.parts.extend(m.parts);
                }
            }
            _ => merged.push((m, origin)),
        }
    }
    *out = merged;
}

/// Consecutive messages of one role become one; with `one_system`, every instruction
/// message joins the first.
fn merge_runs(out: &mut Vec<(Message, usize)>, one_system: bool) {
    let mut merged: Vec<(Message, usize)> = Vec::with_capacity(out.len());
    let mut system_at: Option<usize> = None;
    for (m, origin) in out.drain(..) {
        if m.role == Role::System {
            match system_at {
                Some(k) if one_system => {
                    merged[k].0.parts.extend(m.parts);
                }
                _ => {
                    // Instructions sit before the history.
                    let at = system_at.map_or(0, |k| k + 1);
                    merged.insert(at, (m, origin));
                    system_at = Some(at);
                }
            }
            continue;
        }
        match merged.last_mut() {
            Some((prev, _)) if prev.role == m.role => prev.parts.extend(m.parts),
            _ => merged.push((m, origin)),
        }
    }
    *out = merged;
}

/// In a user message, tool results come before anything else.
fn results_first(out: &mut [(Message, usize)]) {
    for (m, _) in out.iter_mut().filter(|(m, _)| m.role == Role::User) {
        if m.parts.iter().any(|p| matches!(p, Part::ToolResult(_))) {
            let (mut results, rest): (Vec<Part>, Vec<Part>) = std::mem::take(&mut m.parts)
                .into_iter()
                .partition(|p| matches!(p, Part::ToolResult(_)));
            results.extend(rest);
            m.parts = results;
        }
    }
}

/// Gemini answers a call by its name: give each result the name of the call it answers
/// (the last call before it with its id).
fn name_results(out: &mut [(Message, usize)], notes: &mut Vec<Note>, paths: &SourcePaths) {
    // The names, found first over the messages as they are (ids and names borrowed),
    // one for each result that has none, in order; then given.
    let mut found: Vec<Option<String>> = Vec::new();
    {
        let mut names: IdMap<&str> = IdMap::default();
        for p in out.iter().flat_map(|(m, _)| &m.parts) {
            match p {
                Part::ToolCall(c) => {
                    if let Some(id) = &c.id {
                        names.insert(id, &c.name);
                    }
                }
                Part::ToolResult(r) if r.name.is_none() => {
                    let known = r.call_id.as_deref().and_then(|id| names.get(id));
                    found.push(known.map(|n| n.to_string()));
                }
                _ => {}
            }
        }
    }
    let mut found = found.into_iter();
    for (m, origin) in out.iter_mut() {
        for p in m.parts.iter_mut() {
            let Part::ToolResult(r) = p else { continue };
            if r.name.is_none() {
                let known = found.next().flatten();
                if known.is_none() {
                    notes.push(Note::new(
                        NoteKind::Added,
                        "tool-name",
                        paths.message(*origin),
                        format!(
                            "the result of `{}` answers no call with a name; Gemini answers by name, so it is named `unknown`",
                            r.call_id.as_deref().unwrap_or("?")
                        ),
                    ));
                }
                r.name = Some(known.unwrap_or_else(|| "unknown".to_string()));
            }
            if r.content.is_none() {
                r.content = Some(ToolContent::Json(Value::Object(Extra::new())));
            }
        }
    }
}

/// Gemini wraps a plain result as `{"result": text}` (and a failure as `{"error": text}`):
/// other dialects get the text itself, and the failure flag where they have one.
fn unwrap_gemini_response(
    content: Option<ToolContent>,
    is_error: bool,
) -> (Option<ToolContent>, bool) {
    if let Some(ToolContent::Json(Value::Object(o))) = &content {
        if let (1, Some((k, Value::String(t)))) = (o.len(), o.iter().next()) {
            match k.as_str() {
                "result" | "output" => return (Some(ToolContent::Text(t.clone())), is_error),
                "error" => return (Some(ToolContent::Text(t.clone())), true),
                _ => {}
            }
        }
    }
    (content, is_error)
}

/// A value that says nothing: left behind without a note.
fn carries_nothing(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// What an opaque part is, for a note.
fn opaque_kind(v: &Value) -> String {
    if let Some(t) = v.field("type").and_then(Value::as_str) {
        return t.to_string();
    }
    match v.as_object().and_then(|o| o.keys().next()) {
        Some(k) => k.clone(),
        None => crate::dialect::kind_of(v).to_string(),
    }
}

/// Whether a media part is an image or another file.
#[derive(Clone, Copy)]
enum MediaKind {
    Image,
    File,
}

/// A URL for a note: its first 60 characters (`data:` URLs run to megabytes).
fn short(url: &str) -> String {
    match url.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &url[..at]),
        None => url.to_string(),
    }
}

/// The value of a Converse `{"json": value}` tool result block.
fn converse_json(v: &Value) -> Option<&Value> {
    let o = v.as_object()?;
    (o.len() == 1).then(|| o.field("json")).flatten()
}
