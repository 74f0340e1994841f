//! A validating JSON reader that builds a flat tape over the bytes instead of a tree.
//!
//! [`parse`] makes one pass over a body and records every value as a compact [`Doc`]
//! entry (its kind, its byte span, and for an array or object the index past its last
//! descendant), so a reader steps over a whole subtree in O(1) and nothing is allocated
//! per string or per object. Strings stay in the body as spans; one with escapes is
//! unescaped only when asked for its text, into an arena the `Doc` owns, so every string
//! is a `&str` that lives as long as the `Doc`. What the rules ask of a text (blank, its
//! length unescaped, how it ends) is known without unescaping it.
//!
//! Invariant: a body [`parse`] accepts is one `serde_json::from_slice::<Value>` accepts,
//! and reads the same (`tests/it/json_tape.rs` holds it against serde_json on fuzzed
//! bytes). [`parse`] declines (returns `None`) every body serde_json rejects, and also the
//! rare ones this reader does not take on: duplicate or escaped object keys, nesting past
//! [`MAX_DEPTH`], arrays or objects of [`MAX_ELEMENTS`] or more, bodies of 4 GiB or more. A caller then falls back to serde_json, which
//! gives the exact error text, so the verdict is the same either way.
//!
//! ```
//! let doc = mend::json::parse(br#"{"role": "user", "content": ["a\nb", 2]}"#).unwrap();
//! let root = doc.root();
//! assert_eq!(root.get("role").and_then(|r| r.as_str()), Some("user"));
//! let content = root.get("content").unwrap();
//! assert_eq!(content.len(), 2);
//! assert_eq!(content.items().next().unwrap().to_str().as_deref(), Some("a\nb"));
//! assert_eq!(&doc.bytes()[content.span()], br#"["a\nb", 2]"#);
//! ```

use std::borrow::Cow;
use std::ops::Range;

mod parse;
mod scan;
mod value;
mod view;

#[cfg(test)]
mod tests;

pub use parse::parse;
pub(crate) use view::{Field, Json};

/// Nesting this reader takes on; deeper bodies go to serde_json (which allows 127).
pub const MAX_DEPTH: usize = 100;

/// Elements (items, or members) an array or object may have on the tape (2^24 - 1): its
/// count shares a word with its kind. A body with a larger one goes to serde_json.
pub const MAX_ELEMENTS: u32 = (1 << 24) - 1;

/// What a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// `null`
    Null,
    /// `true` or `false`
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

const ESCAPED: u8 = 1;
const TRUE: u8 = 2;
/// An escaped string's last character is an escape's.
const ENDS_IN_ESCAPE: u8 = 8;
/// ... and white space.
const ENDS_IN_ESCAPED_SPACE: u8 = 16;

/// One tape entry, 16 bytes (`tests.rs` holds it there: the tape of a large body is a
/// third of its size, and it is alive with the body and the chain at a check's peak).
/// Strings span their content (between the quotes); other values their whole text. For
/// an array or object, `next` is the index of the entry after its last descendant; for a
/// string with escapes, its length unescaped. `meta` packs the kind (bits 0-2), the flags
/// (bits 3-7) and in bits 8-31 an array's or object's element count (members for an
/// object), or for another value that is an object member its key's length plus one (0:
/// not known). Object keys have no entry: a member's key is read back from the bytes
/// before its value (`Doc::key_before`), which is exact because keys with escapes are
/// declined.
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: u32,
    end: u32,
    next: u32,
    meta: u32,
}

impl Entry {
    fn new(kind: Kind, start: u32, end: u32, flags: u8) -> Entry {
        Entry {
            start,
            end,
            next: 0,
            meta: kind as u32 | u32::from(flags) << 3,
        }
    }

    fn kind(&self) -> Kind {
        match self.meta & 7 {
            0 => Kind::Null,
            1 => Kind::Bool,
            2 => Kind::Number,
            3 => Kind::String,
            4 => Kind::Array,
            _ => Kind::Object,
        }
    }

    fn flags(&self) -> u8 {
        (self.meta >> 3 & 0x1f) as u8
    }

    /// Items of an array, members of an object.
    fn count(&self) -> u32 {
        self.meta >> 8
    }

    /// A member's key length, kept for a value that is not an array or object (whose
    /// bits hold its count) and a key under 16 MB.
    fn set_key_len(&mut self, len: usize) {
        if !matches!(self.kind(), Kind::Array | Kind::Object) && len < (1 << 24) - 1 {
            self.meta |= (len as u32 + 1) << 8;
        }
    }

    /// The member's key length when [`Entry::set_key_len`] kept it.
    fn key_len(&self) -> Option<usize> {
        match self.kind() {
            Kind::Array | Kind::Object => None,
            _ => (self.meta >> 8).checked_sub(1).map(|n| n as usize),
        }
    }
}

/// A parsed body: the bytes and their tape. An object's entry is followed by each
/// member's value (its key is in the bytes just before it); an array's by its items.
#[derive(Debug)]
pub struct Doc<'a> {
    /// The body, checked as UTF-8 once (every span starts and ends at an ASCII byte).
    text: &'a str,
    tape: Vec<Entry>,
    /// The unescaped text of the strings with escapes asked for.
    unescaped: bumpalo::Bump,
}

impl<'a> Doc<'a> {
    /// The top-level value.
    pub fn root(&self) -> Node<'_> {
        Node { doc: self, at: 0 }
    }

    /// The bytes the document was parsed from.
    pub fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// The text of a span (empty for one that is not on character boundaries, which no
    /// span of the tape is).
    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text.get(start..end).unwrap_or_default()
    }

    /// How many values the tape holds (object keys are not values).
    pub fn tape_len(&self) -> usize {
        self.tape.len()
    }

    /// The closing quote of the key of the object member whose value starts at byte
    /// `value` (a string's opening quote): the quote before the `:` before it.
    fn key_close(&self, value: usize) -> usize {
        let b = self.text.as_bytes();
        // Compact JSON, as SDKs send it: `"key":value`.
        if value >= 2 && b[value - 1] == b':' && b[value - 2] == b'"' {
            return value - 2;
        }
        let mut i = value;
        while i > 0 && matches!(b[i - 1], b' ' | b'\n' | b'\t' | b'\r' | b':') {
            i -= 1;
        }
        i.saturating_sub(1)
    }

    /// The key of the member `value` (an entry in an object): the text between the quotes
    /// before the `:` before it. A key has no escapes (parse declines those), so no quote
    /// inside it; its length is on the entry of most values.
    fn key_before(&self, value: &Node<'_>) -> &'a str {
        let close = self.key_close(value.first_byte());
        let open = match value.entry().key_len() {
            Some(len) => close - len,
            None => self.text.as_bytes()[..close]
                .iter()
                .rposition(|&c| c == b'"')
                .map_or(close, |o| o + 1),
        };
        self.slice(open, close)
    }

    /// Whether the member `value` has the key `key`: its bytes end the text before the
    /// `:` and a quote opens them.
    fn key_is(&self, value: &Node<'_>, key: &str) -> bool {
        if value.entry().key_len().is_some_and(|len| len != key.len()) {
            return false;
        }
        let b = self.text.as_bytes();
        let close = self.key_close(value.first_byte());
        close > key.len()
            && b[close - key.len() - 1] == b'"'
            && &b[close - key.len()..close] == key.as_bytes()
    }
}

/// The tapes of this thread's documents once dropped are kept for its next one (up to
/// [`KEEP_TAPE`] entries): a service checking body after body then writes its tapes into
/// memory it already has, instead of faulting fresh pages in for each (a fifth of the
/// time of a large check, measured with `perf`).
const KEEP_TAPE: usize = 1 << 20;

thread_local! {
    static SPARE_TAPE: std::cell::Cell<Vec<Entry>> = const { std::cell::Cell::new(Vec::new()) };
}

fn spare_tape(capacity: usize) -> Vec<Entry> {
    let mut tape = SPARE_TAPE.with(std::cell::Cell::take);
    tape.clear();
    tape.reserve(capacity);
    tape
}

impl Drop for Doc<'_> {
    fn drop(&mut self) {
        let tape = std::mem::take(&mut self.tape);
        if tape.capacity() <= KEEP_TAPE {
            SPARE_TAPE.with(|spare| spare.set(tape));
        }
    }
}

/// A value in a [`Doc`]: a cheap copyable handle.
#[derive(Clone, Copy)]
pub struct Node<'d> {
    doc: &'d Doc<'d>,
    at: u32,
}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let span = self.span();
        write!(
            f,
            "{:?}@{}",
            self.kind(),
            self.doc.slice(span.start, span.end)
        )
    }
}

impl<'d> Node<'d> {
    fn entry(&self) -> &'d Entry {
        &self.doc.tape[self.at as usize]
    }

    fn node_at(&self, at: u32) -> Node<'d> {
        Node { doc: self.doc, at }
    }

    /// What the value is.
    pub fn kind(&self) -> Kind {
        self.entry().kind()
    }

    /// The byte the value starts at (a string's opening quote).
    fn first_byte(&self) -> usize {
        let e = self.entry();
        match e.kind() {
            Kind::String => e.start as usize - 1,
            _ => e.start as usize,
        }
    }

    /// The value's bytes in the body, a string's quotes included.
    pub fn span(&self) -> Range<usize> {
        let e = self.entry();
        match e.kind() {
            Kind::String => e.start as usize - 1..e.end as usize + 1,
            _ => e.start as usize..e.end as usize,
        }
    }

    /// A string's content as it is written in the body (escapes not undone).
    pub fn raw_str(&self) -> Option<&'d str> {
        let e = self.entry();
        (e.kind() == Kind::String).then(|| self.doc.slice(e.start as usize, e.end as usize))
    }

    /// Whether a string has escapes (its raw and its decoded text differ).
    pub fn has_escapes(&self) -> bool {
        self.entry().kind() == Kind::String && self.entry().flags() & ESCAPED != 0
    }

    /// A string's text, lent for the `Doc`'s life: the body's own bytes, or, for a
    /// string with escapes, its text unescaped (once per call) into the `Doc`'s arena.
    pub fn as_str(&self) -> Option<&'d str> {
        let raw = self.raw_str()?;
        if !self.has_escapes() {
            return Some(raw);
        }
        let text: &'d str = self.doc.unescaped.alloc_str(&scan::unescape(raw));
        Some(text)
    }

    /// The index of the entry after this value and its descendants.
    fn skip(&self) -> u32 {
        let e = self.entry();
        match e.kind() {
            Kind::Array | Kind::Object => e.next,
            _ => self.at + 1,
        }
    }

    /// A string's text, unescaped when it has to be, without growing the `Doc`.
    pub fn to_str(&self) -> Option<Cow<'d, str>> {
        let raw = self.raw_str()?;
        Some(match self.has_escapes() {
            false => Cow::Borrowed(raw),
            true => Cow::Owned(scan::unescape(raw)),
        })
    }

    /// `true` or `false`.
    pub fn as_bool(&self) -> Option<bool> {
        let e = self.entry();
        (e.kind() == Kind::Bool).then_some(e.flags() & TRUE != 0)
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        self.kind() == Kind::Null
    }

    /// A number's text.
    pub fn number_text(&self) -> Option<&'d str> {
        let e = self.entry();
        (e.kind() == Kind::Number).then(|| self.doc.slice(e.start as usize, e.end as usize))
    }

    /// A number as a `u64`, as `serde_json::Value::as_u64` reads it (integers only).
    pub fn as_u64(&self) -> Option<u64> {
        self.number_text().and_then(|t| t.parse().ok())
    }

    /// A number as an `i64`, as `serde_json::Value::as_i64` reads it (integers only).
    pub fn as_i64(&self) -> Option<i64> {
        // serde_json reads `-0` as the float -0.0.
        self.number_text()
            .filter(|t| *t != "-0")
            .and_then(|t| t.parse().ok())
    }

    /// A number as an `f64`, as `serde_json::Value::as_f64` reads it.
    pub fn as_f64(&self) -> Option<f64> {
        self.number_text().and_then(|t| t.parse().ok())
    }

    /// Items of an array, members of an object, 0 otherwise.
    pub fn len(&self) -> usize {
        match self.kind() {
            Kind::Array | Kind::Object => self.entry().count() as usize,
            _ => 0,
        }
    }

    /// An array or object without elements, or a scalar.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// An object's member. Walks the tape comparing each key's length, then its bytes
    /// (keys are never escaped), without making a `&str` of the keys it passes.
    #[inline]
    pub fn get(&self, key: &str) -> Option<Node<'d>> {
        let mut values = self.members().node_values();
        values.find(|v| self.doc.key_is(v, key))
    }

    /// The bytes of the strings in this value, escapes undone, keys left out (what
    /// `dialect::openai_chat::approx_size` sums over any `Json`): one pass over the
    /// value's stretch of the tape (keys have no entry on it).
    pub(crate) fn string_bytes(&self) -> usize {
        let tape = &self.doc.tape;
        let from = self.at as usize;
        tape.get(from..self.skip() as usize)
            .unwrap_or_default()
            .iter()
            .filter(|e| e.kind() == Kind::String)
            .map(|e| match e.flags() & ESCAPED {
                0 => (e.end - e.start) as usize,
                _ => e.next as usize,
            })
            .sum()
    }

    /// An array's item.
    pub fn index(&self, i: usize) -> Option<Node<'d>> {
        if self.kind() != Kind::Array {
            return None;
        }
        self.items().nth(i)
    }

    /// An array's items (nothing for anything else).
    pub fn items(&self) -> Items<'d> {
        let e = self.entry();
        let (at, end) = match e.kind() {
            Kind::Array => (self.at + 1, e.next),
            _ => (0, 0),
        };
        Items {
            node: self.node_at(at),
            end,
        }
    }

    /// An object's members in body order, keys unescaped (nothing for anything else).
    pub fn members(&self) -> Members<'d> {
        let e = self.entry();
        let (at, end) = match e.kind() {
            Kind::Object => (self.at + 1, e.next),
            _ => (0, 0),
        };
        Members {
            node: self.node_at(at),
            end,
        }
    }
}

/// The items of an array.
#[derive(Clone)]
pub struct Items<'d> {
    node: Node<'d>,
    end: u32,
}

impl<'d> Iterator for Items<'d> {
    type Item = Node<'d>;

    fn next(&mut self) -> Option<Node<'d>> {
        if self.node.at >= self.end {
            return None;
        }
        let item = self.node;
        self.node.at = item.skip();
        Some(item)
    }
}

/// The members of an object.
#[derive(Clone)]
pub struct Members<'d> {
    node: Node<'d>,
    end: u32,
}

impl<'d> Iterator for Members<'d> {
    type Item = (&'d str, Node<'d>);

    #[inline]
    fn next(&mut self) -> Option<(&'d str, Node<'d>)> {
        if self.node.at >= self.end {
            return None;
        }
        let value = self.node;
        self.node.at = value.skip();
        // Keys are never escaped (parse declines escaped keys), so they always borrow.
        Some((self.node.doc.key_before(&value), value))
    }
}

impl<'d> Members<'d> {
    /// The members' values only, their keys not read.
    fn node_values(self) -> Items<'d> {
        Items {
            node: self.node,
            end: self.end,
        }
    }
}
