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
//! [`MAX_DEPTH`], bodies of 4 GiB or more. A caller then falls back to serde_json, which
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
mod view;

#[cfg(test)]
mod tests;

pub use parse::parse;
pub(crate) use view::Json;

/// Nesting this reader takes on; deeper bodies go to serde_json (which allows 127).
pub const MAX_DEPTH: usize = 100;

/// What a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
/// A string that is an object's key.
const KEY: u8 = 4;
/// An escaped string's last character is an escape's.
const ENDS_IN_ESCAPE: u8 = 8;
/// ... and white space.
const ENDS_IN_ESCAPED_SPACE: u8 = 16;

/// One tape entry. Strings span their content (between the quotes); other values their
/// whole text. For an array or object, `next` is the index of the entry after its last
/// descendant and `aux` its element count (members for an object); for a string with
/// escapes, `next` is its length unescaped.
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: u32,
    end: u32,
    next: u32,
    aux: u32,
    kind: Kind,
    flags: u8,
}

/// A parsed body: the bytes and their tape. An object's entry is followed by each
/// member's key (a string entry) and value; an array's by its items.
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

    /// How many values the tape holds (object keys count as values).
    pub fn tape_len(&self) -> usize {
        self.tape.len()
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
        self.entry().kind
    }

    /// The value's bytes in the body, a string's quotes included.
    pub fn span(&self) -> Range<usize> {
        let e = self.entry();
        match e.kind {
            Kind::String => e.start as usize - 1..e.end as usize + 1,
            _ => e.start as usize..e.end as usize,
        }
    }

    /// A string's content as it is written in the body (escapes not undone).
    pub fn raw_str(&self) -> Option<&'d str> {
        let e = self.entry();
        (e.kind == Kind::String).then(|| self.doc.slice(e.start as usize, e.end as usize))
    }

    /// Whether a string has escapes (its raw and its decoded text differ).
    pub fn has_escapes(&self) -> bool {
        self.entry().kind == Kind::String && self.entry().flags & ESCAPED != 0
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
        match e.kind {
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
        (e.kind == Kind::Bool).then_some(e.flags & TRUE != 0)
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        self.kind() == Kind::Null
    }

    /// A number's text.
    pub fn number_text(&self) -> Option<&'d str> {
        let e = self.entry();
        (e.kind == Kind::Number).then(|| self.doc.slice(e.start as usize, e.end as usize))
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
            Kind::Array | Kind::Object => self.entry().aux as usize,
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
        let tape = &self.doc.tape;
        let e = self.entry();
        if e.kind != Kind::Object {
            return None;
        }
        let bytes = self.doc.bytes();
        let mut at = self.at as usize + 1;
        while at < e.next as usize {
            let k = tape.get(at)?;
            let (start, end) = (k.start as usize, k.end as usize);
            if end - start == key.len() && bytes.get(start..end) == Some(key.as_bytes()) {
                return Some(self.node_at(at as u32 + 1));
            }
            let v = tape.get(at + 1)?;
            at = match v.kind {
                Kind::Array | Kind::Object => v.next as usize,
                _ => at + 2,
            };
        }
        None
    }

    /// The bytes of the strings in this value, escapes undone, keys left out (what
    /// `dialect::openai_chat::approx_size` sums over any `Json`): one pass over the
    /// value's stretch of the tape.
    pub(crate) fn string_bytes(&self) -> usize {
        let tape = &self.doc.tape;
        let from = self.at as usize;
        tape.get(from..self.skip() as usize)
            .unwrap_or_default()
            .iter()
            .filter(|e| e.kind == Kind::String && e.flags & KEY == 0)
            .map(|e| match e.flags & ESCAPED {
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
        let (at, end) = match e.kind {
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
        let (at, end) = match e.kind {
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
        let doc = self.node.doc;
        let at = self.node.at;
        let key = doc.tape.get(at as usize)?;
        let value = doc.tape.get(at as usize + 1)?;
        self.node.at = match value.kind {
            Kind::Array | Kind::Object => value.next,
            _ => at + 2,
        };
        // Keys are never escaped (parse declines escaped keys), so they always borrow.
        let key = doc.slice(key.start as usize, key.end as usize);
        Some((key, Node { doc, at: at + 1 }))
    }
}
