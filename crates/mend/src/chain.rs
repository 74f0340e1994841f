//! The dialect-neutral chain: a conversation history as a flat sequence of nodes.
//!
//! A dialect adapter walks its wire JSON once and pushes [`Turn`]s (one per wire message
//! or item) and [`Node`]s (one per thing the rules care about: text, a tool call, a tool
//! result, a reasoning item). Rules read only the chain, never the wire JSON.
//!
//! Invariant: the chain borrows from the parsed body and stores locations as compact
//! [`Ptr`]s; a JSON pointer string is only rendered when a violation names a node, so
//! building a chain allocates nothing per node beyond the two vectors.

use std::fmt::Write as _;

/// Who speaks in a turn: the one [`Role`](crate::role::Role), borrowing unknown names
/// from the body. `System` stands for every instruction role here.
pub use crate::role::Role;

/// Where a node or turn lives in the wire body: `/{root}/{item}/{key}/{sub}`, each part
/// optional after the root. Copy and cheap (12 bytes: it is on every node and turn, so
/// its size is a share of a check's peak memory; `tests` holds it there); rendered on
/// demand. The two keys are held as indexes into a table of names ([`Name`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Ptr {
    root: Name,
    key: Name,
    item: u32,
    sub: u32,
}

/// An absent index.
const NO_INDEX: u32 = u32::MAX;

impl Ptr {
    /// The body itself.
    pub const BODY: Ptr = Ptr {
        root: Name::EMPTY,
        key: Name::NONE,
        item: NO_INDEX,
        sub: NO_INDEX,
    };

    #[inline(always)]
    fn of(
        root: &'static str,
        item: Option<usize>,
        key: Option<&'static str>,
        sub: Option<usize>,
    ) -> Ptr {
        let index = |i: Option<usize>| i.map_or(NO_INDEX, |i| i as u32);
        Ptr {
            root: Name::of(root),
            key: key.map_or(Name::NONE, Name::of),
            item: index(item),
            sub: index(sub),
        }
    }

    /// A top-level key of the body.
    pub fn root(root: &'static str) -> Ptr {
        Ptr::of(root, None, None, None)
    }

    /// An element of a top-level array.
    pub fn item(root: &'static str, item: usize) -> Ptr {
        Ptr::of(root, Some(item), None, None)
    }

    /// A key of an element of a top-level array.
    pub fn field(root: &'static str, item: usize, key: &'static str) -> Ptr {
        Ptr::of(root, Some(item), Some(key), None)
    }

    /// An element of an array under an element of a top-level array.
    pub fn sub(root: &'static str, item: usize, key: &'static str, sub: usize) -> Ptr {
        Ptr::of(root, Some(item), Some(key), Some(sub))
    }

    /// Top-level key (`messages`, `input`, `contents`, `system`, ...), or "" for the body.
    pub fn root_key(&self) -> &'static str {
        self.root.text()
    }

    /// Index in the top-level array.
    pub fn item_index(&self) -> Option<u32> {
        (self.item != NO_INDEX).then_some(self.item)
    }

    /// Key inside the item (`content`, `parts`, `tool_calls`).
    pub fn inner_key(&self) -> Option<&'static str> {
        (self.key != Name::NONE).then(|| self.key.text())
    }

    /// Index inside that key's array.
    pub fn sub_index(&self) -> Option<u32> {
        (self.sub != NO_INDEX).then_some(self.sub)
    }

    /// The top-level value or item this points into (its key and index inside dropped).
    pub fn without_key(self) -> Ptr {
        Ptr {
            key: Name::NONE,
            sub: NO_INDEX,
            ..self
        }
    }

    /// The value it points at in `body`, if the body still has it.
    pub fn resolve<'v>(&self, body: &'v serde_json::Value) -> Option<&'v serde_json::Value> {
        let mut v = body.get(self.root_key())?;
        if let Some(i) = self.item_index() {
            v = v.get(i as usize)?;
        }
        if let Some(k) = self.inner_key() {
            v = v.get(k)?;
        }
        if let Some(j) = self.sub_index() {
            v = v.get(j as usize)?;
        }
        Some(v)
    }

    /// The same pointer, one key deeper (for `malformed` reports about a field).
    pub fn render_with(&self, extra: &str) -> String {
        let mut s = self.render();
        s.push('/');
        s.push_str(&escape(extra));
        s
    }

    /// The RFC 6901 JSON pointer.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let root = self.root_key();
        if !root.is_empty() {
            s.push('/');
            s.push_str(&escape(root));
        }
        if let Some(i) = self.item_index() {
            let _ = write!(s, "/{i}");
        }
        if let Some(k) = self.inner_key() {
            s.push('/');
            s.push_str(&escape(k));
        }
        if let Some(j) = self.sub_index() {
            let _ = write!(s, "/{j}");
        }
        s
    }
}

/// One JSON pointer token, escaped (RFC 6901: `~` as `~0`, `/` as `~1`).
pub(crate) fn escape(seg: &str) -> std::borrow::Cow<'_, str> {
    if seg.contains(['~', '/']) {
        std::borrow::Cow::Owned(seg.replace('~', "~0").replace('/', "~1"))
    } else {
        std::borrow::Cow::Borrowed(seg)
    }
}

impl std::fmt::Display for Ptr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let root = self.root_key();
        if !root.is_empty() {
            write!(f, "/{}", escape(root))?;
        }
        if let Some(i) = self.item_index() {
            write!(f, "/{i}")?;
        }
        if let Some(k) = self.inner_key() {
            write!(f, "/{}", escape(k))?;
        }
        if let Some(j) = self.sub_index() {
            write!(f, "/{j}")?;
        }
        Ok(())
    }
}

/// Written as the struct of its parts, as it was when they were its fields.
impl std::fmt::Debug for Ptr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ptr")
            .field("root", &self.root_key())
            .field("item", &self.item_index())
            .field("key", &self.inner_key())
            .field("sub", &self.sub_index())
            .finish()
    }
}

/// A key a [`Ptr`] names, as an index: the keys the readers point into are in `NAMES`
/// (found by a `match`, so making a pointer stays cheap); any other is added once to a
/// process-wide list, so a pointer can name any `&'static str`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Name(u16);

/// The keys the dialect readers point into, by index; `Name(0)` is "".
const NAMES: [&str; 16] = [
    "",
    "messages",
    "input",
    "contents",
    "system",
    "systemInstruction",
    "system_instruction",
    "instructions",
    "tools",
    "content",
    "tool_calls",
    "parts",
    "function_call",
    "reasoning_content",
    "reasoning_details",
    "reasoning",
];

/// Names outside [`NAMES`] met so far, at `NAMES.len() + i`.
static MORE_NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

impl Name {
    const EMPTY: Name = Name(0);
    const NONE: Name = Name(u16::MAX);

    /// Always inlined: a reader names its keys as constants, and the `match` on a
    /// constant folds to its index (a call per pointer made was 2.6% of a chat check).
    #[inline(always)]
    fn of(name: &'static str) -> Name {
        let known = match name {
            "" => 0,
            "messages" => 1,
            "input" => 2,
            "contents" => 3,
            "system" => 4,
            "systemInstruction" => 5,
            "system_instruction" => 6,
            "instructions" => 7,
            "tools" => 8,
            "content" => 9,
            "tool_calls" => 10,
            "parts" => 11,
            "function_call" => 12,
            "reasoning_content" => 13,
            "reasoning_details" => 14,
            "reasoning" => 15,
            _ => return Name::other(name),
        };
        Name(known)
    }

    #[cold]
    #[inline(never)]
    fn other(name: &'static str) -> Name {
        let mut more = MORE_NAMES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = match more.iter().position(|n| *n == name) {
            Some(at) => at,
            None => {
                more.push(name);
                more.len() - 1
            }
        };
        // u16::MAX is NONE; a program names a few dozen keys, never that many.
        Name(u16::try_from(NAMES.len() + at).unwrap_or(u16::MAX - 1))
    }

    fn text(self) -> &'static str {
        match NAMES.get(usize::from(self.0)) {
            Some(name) => name,
            None => {
                let more = MORE_NAMES
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                more.get(usize::from(self.0) - NAMES.len())
                    .copied()
                    .unwrap_or_default()
            }
        }
    }
}

/// What a call is, which decides whether it needs a result from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// A client-side tool call: the client must send its result back.
    Client,
    /// A call the provider runs itself (web search, code execution): no client result.
    Server,
}

/// One thing in the history that a rule can speak of.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind<'a> {
    /// Text content; `blank` when it is empty or only white space.
    Text {
        /// Empty or white space only.
        blank: bool,
    },
    /// Non-text content (image, audio, file, document...).
    Media,
    /// A tool call.
    Call {
        /// The id results answer (`tool_calls[].id`, `call_id`, `tool_use.id`, `functionCall.id`).
        call_id: Option<&'a str>,
        /// Tool name.
        name: Option<&'a str>,
        /// Client or server tool.
        kind: CallKind,
        /// The wire type (`function_call`, `tool_use`, `functionCall`...), in the chain's
        /// table ([`Chain::wire_text`]).
        wire: Wire,
        /// Carries a signature (Gemini `thoughtSignature`).
        signed: bool,
        /// The id is there but not a string (a number, an object): `call_id` is `None`,
        /// the reader reported it as `malformed`, and the call is not id-less.
        id_mistyped: bool,
    },
    /// A tool result.
    Result {
        /// The call id it answers.
        call_id: Option<&'a str>,
        /// The tool name (Gemini pairs by name when there is no id).
        name: Option<&'a str>,
        /// Client or server result.
        kind: CallKind,
        /// The wire type ([`Chain::wire_text`]).
        wire: Wire,
        /// Its content holds a text block that is empty or only white space (Anthropic
        /// refuses one there as anywhere else).
        blank_text: bool,
        /// An error result (Anthropic `is_error: true`, Converse `status: "error"`) whose
        /// content is absent, `""` or `[]`: both refuse it ("content cannot be empty if
        /// `is_error` is true"; "… cannot be empty when status value is error.").
        empty_error: bool,
        /// The call id is there but not a string: `call_id` is `None`, the reader
        /// reported it as `malformed`, and the result is not id-less.
        id_mistyped: bool,
    },
    /// A reasoning item or thinking block.
    Reasoning {
        /// Provider item id (`rs_…`).
        item_id: Option<&'a str>,
        /// Signed (Anthropic `signature`, Gemini `thoughtSignature`).
        signed: bool,
        /// Opaque encrypted content (Responses `encrypted_content`, Anthropic redacted data).
        encrypted: bool,
        /// `redacted_thinking`.
        redacted: bool,
        /// The wire type ([`Chain::wire_text`]).
        wire: Wire,
    },
    /// An assistant output message item in a Responses history (its id matters).
    Message {
        /// Provider item id (`msg_…`).
        item_id: Option<&'a str>,
    },
    /// A part or block that carries no data at all (a Gemini part with no field set).
    Empty,
    /// Anything else the adapter saw, by wire type.
    Other {
        /// The wire type.
        wire: &'a str,
    },
}

/// The wire type of a call, result or reasoning node: an index into its chain's table
/// of the few types met ([`Chain::wire`], [`Chain::wire_text`]). Two bytes on the node
/// instead of a 16-byte `&str` (a node's size is a share of a check's peak memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire(u16);

/// A node: what it is, which turn holds it, and where it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct Node<'a> {
    /// What it is.
    pub kind: NodeKind<'a>,
    /// Index into [`Chain::turns`] ([`Node::turn`]): 4 bytes, as a node's size is a share
    /// of a check's peak memory (with it a `Node` is 56 bytes, not 64).
    turn: u32,
    /// Where it lives.
    pub ptr: Ptr,
}

impl Node<'_> {
    /// Index into [`Chain::turns`] of the turn that holds it.
    pub fn turn(&self) -> usize {
        self.turn as usize
    }

    /// A call (client or server) whose call id is `id`.
    pub fn is_call_with_id(&self, id: &str) -> bool {
        matches!(self.kind, NodeKind::Call { call_id: Some(c), .. } if c == id)
    }
}

/// A wire message or item.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn<'a> {
    /// Neutral role.
    pub role: Role<&'a str>,
    /// The role or item type as written on the wire.
    pub wire: &'a str,
    /// Where it lives.
    pub ptr: Ptr,
    /// First node of this turn in [`Chain::nodes`] ([`Turn::first`]). The three
    /// indexes are u32 (a body has far fewer nodes, a content far fewer bytes): a turn's
    /// size is a share of a check's peak memory (72 bytes, not 80).
    first: u32,
    /// One past its last node ([`Turn::end`]).
    end: u32,
    /// The turn's content is missing, null, an empty string or an empty array.
    pub empty: bool,
    /// Approximate size in bytes of the wire content ([`Turn::size`]).
    size: u32,
}

impl Turn<'_> {
    /// First node of this turn in [`Chain::nodes`].
    pub fn first(&self) -> usize {
        self.first as usize
    }

    /// One past its last node.
    pub fn end(&self) -> usize {
        self.end as usize
    }

    /// Approximate size in bytes of the wire content (for tables).
    pub fn size(&self) -> usize {
        self.size as usize
    }
}

/// A count or index as a chain keeps it (u32; a body that would need more is far over
/// any size a check reads, and saturates).
fn narrow(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Request-wide facts the rules need (thinking switched on, the model).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts<'a> {
    /// The `model` field, when the body has one.
    pub model: Option<&'a str>,
    /// Extended thinking is on (Anthropic `thinking.type` enabled or adaptive).
    pub thinking_enabled: bool,
    /// Thinking is explicitly off (Anthropic `thinking.type` disabled or no `thinking`).
    pub thinking_disabled: bool,
    /// Some part carries a Gemini `thoughtSignature`, so the model is one that signs.
    pub signatures_seen: bool,
    /// Gemini: the generation config sets `thinkingLevel`, which only Gemini 3 takes.
    pub thinking_level_set: bool,
    /// The request continues state kept by the provider (Responses `previous_response_id`,
    /// `conversation`, or `item_reference` items), so results may answer calls not in the body.
    pub continues_stored_state: bool,
    /// The last chat message is an assistant prefix (`prefix: true`, Mistral).
    pub assistant_prefix: bool,
    /// Anthropic: the final assistant message ends with white space here (rejected).
    pub final_trailing_whitespace: Option<Ptr>,
    /// The history key is present as an array (so an empty one is a finding).
    pub history_is_array: bool,
    /// Tools are declared for the request (Bedrock Converse `toolConfig`).
    pub tools_declared: bool,
    /// Anthropic: the blocks that carry `cache_control`, in the order the cache reads the
    /// request (tools, system, messages). Breakpoints nested deeper (inside a
    /// `tool_result`'s content) are only counted, in `nested_cache_points`.
    pub cache_points: Vec<Ptr>,
    /// Anthropic: `cache_control` breakpoints nested inside other blocks.
    pub nested_cache_points: usize,
    /// Anthropic: thinking and redacted_thinking blocks that carry `cache_control`, which
    /// the API refuses there (not among `cache_points`).
    pub cache_on_thinking: Vec<Ptr>,
    /// Converse: every `document` block's name (`None` when it has no string name), in
    /// body order, with the content block it is in, that block's node, and, for a
    /// document inside a `toolResult`, its index in that result's content.
    pub document_names: Vec<(Ptr, usize, Option<u32>, Option<&'a str>)>,
    /// Converse: every image or document given by an S3 location (`source.s3Location`),
    /// in body order: the content block it is in, that block's node, its member
    /// (`image` or `document`) and, inside a `toolResult`, its index in that result's
    /// content.
    pub s3_media: Vec<(Ptr, usize, &'static str, Option<u32>)>,
    /// Responses: `store: false`, so the provider keeps no item of this exchange.
    pub store_disabled: bool,
    /// Responses: the `previous_response_id` the request continues, if any.
    pub previous_response: Option<&'a str>,
    /// OpenAI chat: the turns whose `content` is an empty string or an empty list (not
    /// null or absent), which some providers refuse.
    pub empty_contents: Vec<usize>,
    /// OpenAI chat: the media parts (`image_url`, `input_audio`, `file`, `audio`) in
    /// messages other than user messages, which OpenAI refuses there: each part's node
    /// and type.
    pub media_off_user: Vec<(usize, &'a str)>,
    /// Gemini: the `functionResponse` parts whose own `parts` (media nested in the
    /// response, Gemini 3's multimodal function responses) is a non-empty list: each
    /// part's node and its key (`functionResponse` or `function_response`).
    pub response_parts: Vec<(usize, &'a str)>,
    /// Responses: the `item_reference` items (where, and the id they name).
    pub item_references: Vec<(Ptr, Option<&'a str>)>,
    /// Responses: the items whose own `id` is over 64 characters (the turn their item
    /// began, the item's index, the id).
    pub long_item_ids: Vec<(usize, usize, &'a str)>,
    /// Responses: the calls whose `arguments` are over 1 MiB of characters (the turn
    /// their item began, the item's index, the length in characters).
    pub long_arguments: Vec<(usize, usize, usize)>,
}

/// The calls' provider item ids, read by a walk over nodes in increasing order
/// ([`Chain::call_item_cursor`]).
pub struct CallItemIds<'c, 'a> {
    rest: &'c [(usize, &'a str)],
}

impl<'a> CallItemIds<'_, 'a> {
    /// The item id of the call at node `n`, when it has one; `n` is never below the
    /// node asked of before.
    pub fn at(&mut self, n: usize) -> Option<&'a str> {
        while let [(m, _), rest @ ..] = self.rest {
            if *m >= n {
                break;
            }
            self.rest = rest;
        }
        match self.rest.first() {
            Some(&(m, id)) if m == n => Some(id),
            _ => None,
        }
    }
}

/// The history as the rules see it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chain<'a> {
    /// Turns in wire order.
    pub turns: Vec<Turn<'a>>,
    /// Nodes in wire order; each turn's nodes are contiguous.
    pub nodes: Vec<Node<'a>>,
    /// Request-wide facts.
    pub facts: Facts<'a>,
    /// The wire types the nodes name ([`Wire`]), each once.
    wires: Vec<&'a str>,
    /// The provider item ids of the calls that have one (Responses `fc_…`), by node, in
    /// node order: off the node, which a call would make 8 bytes larger.
    call_item_ids: Vec<(usize, &'a str)>,
}

impl<'a> Chain<'a> {
    /// The [`Wire`] of a wire type name (kept once however many nodes name it: a chain
    /// meets a handful).
    pub fn wire(&mut self, name: &'a str) -> Wire {
        // The same text first (a reader's constants), then the same bytes.
        let same = |w: &&str| {
            w.len() == name.len()
                && (w.as_ptr() == name.as_ptr() || w.as_bytes() == name.as_bytes())
        };
        let at = match self.wires.iter().position(same) {
            Some(at) => at,
            None => {
                self.wires.push(name);
                self.wires.len() - 1
            }
        };
        // A wire type is a key a reader recognises or an item's `type`, one per node at
        // most; a chain has more nodes than u16 only in a body of millions of parts, and
        // even then never that many distinct types but from a forged body.
        Wire(u16::try_from(at).unwrap_or(u16::MAX))
    }

    /// The name of a [`Wire`] of this chain.
    pub fn wire_text(&self, wire: Wire) -> &'a str {
        self.wires.get(usize::from(wire.0)).copied().unwrap_or("?")
    }

    /// Push a call node with its provider item id, when it has one.
    pub fn push_call(&mut self, kind: NodeKind<'a>, item_id: Option<&'a str>, ptr: Ptr) {
        if let Some(id) = item_id {
            self.call_item_ids.push((self.nodes.len(), id));
        }
        self.push(kind, ptr);
    }

    /// The provider item id (`fc_…`) of the call at node `n`, when it has one.
    pub fn call_item_id(&self, n: usize) -> Option<&'a str> {
        let at = self
            .call_item_ids
            .binary_search_by_key(&n, |&(m, _)| m)
            .ok()?;
        Some(self.call_item_ids[at].1)
    }

    /// A cursor over the calls' item ids, for a walk that asks of nodes in increasing
    /// order ([`CallItemIds::at`]): no search per call.
    pub fn call_item_cursor(&self) -> CallItemIds<'_, 'a> {
        CallItemIds {
            rest: &self.call_item_ids,
        }
    }

    /// The provider item ids the nodes carry, as (node, id), in node order (one walk of
    /// the nodes and of the calls' ids side by side).
    pub fn item_ids(&self) -> impl Iterator<Item = (usize, &'a str)> + '_ {
        let mut calls = self.call_item_ids.iter().peekable();
        self.nodes
            .iter()
            .enumerate()
            .filter_map(move |(n, node)| match node.kind {
                NodeKind::Message { item_id } | NodeKind::Reasoning { item_id, .. } => {
                    item_id.map(|id| (n, id))
                }
                NodeKind::Call { .. } => calls.next_if(|&&(m, _)| m == n).map(|&(_, id)| (n, id)),
                _ => None,
            })
    }

    /// The provider item id the message, reasoning or call at node `n` carries.
    pub fn item_id_of(&self, n: usize) -> Option<&'a str> {
        match self.nodes.get(n)?.kind {
            NodeKind::Message { item_id } | NodeKind::Reasoning { item_id, .. } => item_id,
            NodeKind::Call { .. } => self.call_item_id(n),
            _ => None,
        }
    }

    /// Start a turn; nodes pushed until the next `begin_turn` belong to it.
    pub fn begin_turn(
        &mut self,
        role: Role<&'a str>,
        wire: &'a str,
        ptr: Ptr,
        size: usize,
    ) -> usize {
        self.close_turn();
        let first = self.nodes.len();
        self.turns.push(Turn {
            role,
            wire,
            ptr,
            first: narrow(first),
            end: narrow(first),
            empty: false,
            size: narrow(size),
        });
        self.turns.len() - 1
    }

    /// Push a node into the current turn.
    pub fn push(&mut self, kind: NodeKind<'a>, ptr: Ptr) {
        let turn = narrow(self.turns.len().saturating_sub(1));
        self.nodes.push(Node { kind, turn, ptr });
        if let Some(t) = self.turns.last_mut() {
            t.end = narrow(self.nodes.len());
        }
    }

    /// Mark the current turn as having no content.
    pub fn mark_empty(&mut self) {
        if let Some(t) = self.turns.last_mut() {
            t.empty = true;
        }
    }

    fn close_turn(&mut self) {
        if let Some(t) = self.turns.last_mut() {
            t.end = narrow(self.nodes.len());
        }
    }

    /// The indices of the turns under the top-level key `root` (the history array, not
    /// a top-level system or instructions turn), in order.
    pub fn turns_under(&self, root: &str) -> Vec<usize> {
        (0..self.turns.len())
            .filter(|&t| self.turns[t].ptr.root_key() == root)
            .collect()
    }

    /// The nodes of turn `t`.
    pub fn turn_nodes(&self, t: usize) -> &[Node<'a>] {
        let turn = &self.turns[t];
        &self.nodes[turn.first()..turn.end()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_render_as_rfc6901() {
        assert_eq!(
            Ptr::sub("messages", 3, "tool_calls", 1).render(),
            "/messages/3/tool_calls/1"
        );
        assert_eq!(Ptr::item("input", 0).render(), "/input/0");
        assert_eq!(Ptr::root("contents").render(), "/contents");
        assert_eq!(Ptr::BODY.render(), "");
        assert_eq!(Ptr::item("a/b", 0).render_with("x~y"), "/a~1b/0/x~0y");
    }

    #[test]
    fn pointers_name_any_key_and_read_back_their_parts() {
        // Keys in the table and keys outside it, each part present or absent.
        let names = [
            "messages",
            "contents",
            "tool_calls",
            "",
            "toolUse",
            "a/b",
            "x~y",
        ];
        for root in names {
            for key in names {
                let p = Ptr::sub(root, 7, key, 2);
                assert_eq!(
                    (p.root_key(), p.item_index(), p.inner_key(), p.sub_index()),
                    (root, Some(7), Some(key), Some(2))
                );
                assert_eq!(p, Ptr::sub(root, 7, key, 2));
                assert_ne!(p, Ptr::sub(root, 7, key, 3));
                let f = Ptr::field(root, 0, key);
                assert_eq!((f.inner_key(), f.sub_index()), (Some(key), None));
                assert_eq!(p.without_key(), Ptr::item(root, 7));
            }
            let r = Ptr::root(root);
            assert_eq!(
                (r.root_key(), r.item_index(), r.inner_key()),
                (root, None, None)
            );
        }
        assert_eq!(Ptr::root(""), Ptr::BODY);
        assert_eq!(
            format!("{:?}", Ptr::field("messages", 1, "content")),
            r#"Ptr { root: "messages", item: Some(1), key: Some("content"), sub: None }"#
        );
    }

    #[test]
    fn wires_and_call_item_ids_read_back() {
        let mut chain = Chain::default();
        let owned = String::from("tool_use");
        let a = chain.wire("tool_use");
        let b = chain.wire("tool_result");
        // The same name from another place (the body) is the same wire.
        assert_eq!(chain.wire(&owned), a);
        assert_ne!(a, b);
        assert_eq!(
            (chain.wire_text(a), chain.wire_text(b)),
            ("tool_use", "tool_result")
        );
        let call = |wire| NodeKind::Call {
            call_id: Some("c"),
            name: None,
            kind: CallKind::Client,
            wire,
            signed: false,
            id_mistyped: false,
        };
        chain.begin_turn(Role::Assistant, "assistant", Ptr::item("input", 0), 0);
        chain.push_call(call(a), Some("fc_1"), Ptr::item("input", 0));
        chain.push_call(call(a), None, Ptr::item("input", 1));
        chain.push(
            NodeKind::Message {
                item_id: Some("msg_1"),
            },
            Ptr::item("input", 2),
        );
        chain.push_call(call(a), Some("fc_2"), Ptr::item("input", 3));
        chain.push(NodeKind::Message { item_id: None }, Ptr::item("input", 4));
        let ids: Vec<_> = (0..6).map(|n| chain.item_id_of(n)).collect();
        assert_eq!(
            ids,
            [Some("fc_1"), None, Some("msg_1"), Some("fc_2"), None, None]
        );
        assert_eq!(
            chain.item_ids().collect::<Vec<_>>(),
            [(0, "fc_1"), (2, "msg_1"), (3, "fc_2")]
        );
        assert_eq!(chain.call_item_id(2), None);
        let mut cursor = chain.call_item_cursor();
        let walked: Vec<_> = (0..5).map(|n| cursor.at(n)).collect();
        assert_eq!(walked, [Some("fc_1"), None, None, Some("fc_2"), None]);
    }

    #[test]
    fn chain_items_stay_small() {
        // Every turn and node holds one; at a check's peak the chain is alive with the
        // body and its tape (a 60 MB chat body: 130K turns, 280K nodes).
        assert_eq!(std::mem::size_of::<Ptr>(), 12);
        assert_eq!(std::mem::size_of::<NodeKind>(), 40);
        assert!(
            std::mem::size_of::<Node>() <= 56,
            "{}",
            std::mem::size_of::<Node>()
        );
        assert!(
            std::mem::size_of::<Turn>() <= 72,
            "{}",
            std::mem::size_of::<Turn>()
        );
    }
}
