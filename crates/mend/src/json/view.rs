//! [`Json`]: the one read-only view of a JSON value the dialect readers are written
//! against, implemented for `&serde_json::Value` (the `check_value` path, repair, the
//! bindings) and for a tape [`Node`] (the `check` path), so each reader exists once.

use serde_json::{Map, Value};

use super::{scan, Kind, Node, ENDS_IN_ESCAPE, ENDS_IN_ESCAPED_SPACE};

/// A string's text as the rules judge it, computed without copying it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Text {
    /// Empty or white space only.
    pub blank: bool,
    /// Its length in bytes, escapes undone.
    pub len: usize,
    /// Its last character is white space.
    pub trailing_space: bool,
}

impl Text {
    pub(crate) fn of(s: &str) -> Text {
        Text {
            blank: s.trim().is_empty(),
            len: s.len(),
            trailing_space: s.chars().last().is_some_and(char::is_whitespace),
        }
    }
}

/// Objects up to this many members are searched key by key rather than hashed: a
/// request's objects are small (a message has two to five members), and comparing a few
/// short keys costs a fraction of hashing one with `serde_json`'s SipHash.
const SCAN_MEMBERS: usize = 8;

/// An object's member by key, as `Map::get` finds it (keys are unique, so the first
/// match is the match), without hashing the key when the object is small.
#[inline]
pub(crate) fn member<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    if map.len() <= SCAN_MEMBERS {
        map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

/// [`member`] as a method of a `Value` (`None` for anything but an object) and of a
/// `Map`, where the readers and writers of the canonical model look members up.
pub(crate) trait Field {
    /// The member `key`, as `get(key)` finds it.
    fn field(&self, key: &str) -> Option<&Value>;
}

impl Field for Value {
    #[inline]
    fn field(&self, key: &str) -> Option<&Value> {
        member(self.as_object()?, key)
    }
}

impl Field for Map<String, Value> {
    #[inline]
    fn field(&self, key: &str) -> Option<&Value> {
        member(self, key)
    }
}

/// A JSON value a reader looks at. `'a` is what strings borrow from (the body).
pub(crate) trait Json<'a>: Copy + 'a {
    /// What the value is.
    fn kind(self) -> Kind;
    /// An object's member (`None` for anything else).
    fn get(self, key: &str) -> Option<Self>;
    /// A string's text, lent for `'a` (a tape string with escapes is unescaped into its
    /// `Doc`'s arena: ask for `text` where blankness or a length will do).
    fn str(self) -> Option<&'a str>;
    /// A string's text as the rules judge it (`None` for anything else).
    fn text(self) -> Option<Text>;
    /// `true` or `false`.
    fn as_bool(self) -> Option<bool>;
    /// A non-negative integer.
    fn as_u64(self) -> Option<u64>;
    /// Items of an array, members of an object, 0 otherwise.
    fn len(self) -> usize;
    /// An array's items (none for anything else).
    fn items(self) -> impl Iterator<Item = Self> + 'a;
    /// An object's members in body order (none for anything else).
    fn members(self) -> impl Iterator<Item = (&'a str, Self)> + 'a;
    /// The value as compact JSON, as `Value::to_string` writes it (for messages).
    fn to_json(self) -> String;

    /// An array's item.
    fn at(self, i: usize) -> Option<Self> {
        self.items().nth(i)
    }
    /// Whether an object has the member.
    fn has(self, key: &str) -> bool {
        self.get(key).is_some()
    }
    /// `null`.
    fn is_null(self) -> bool {
        self.kind() == Kind::Null
    }
    /// An object.
    fn is_object(self) -> bool {
        self.kind() == Kind::Object
    }
    /// An array.
    fn is_array(self) -> bool {
        self.kind() == Kind::Array
    }
    /// A string.
    fn is_string(self) -> bool {
        self.kind() == Kind::String
    }
    /// The string `""` (an escape always stands for at least one character).
    fn is_empty_string(self) -> bool;
    /// A string's length in bytes, escapes undone (0 for anything else).
    fn str_len(self) -> usize;
    /// The summed [`Json::str_len`] of the strings in the value, object keys left out.
    fn string_bytes(self) -> usize {
        match self.kind() {
            Kind::String => self.str_len(),
            Kind::Array => self.items().map(Json::string_bytes).sum(),
            Kind::Object => self.members().map(|(_, m)| m.string_bytes()).sum(),
            Kind::Null | Kind::Bool | Kind::Number => 0,
        }
    }
}

impl Kind {
    /// The kind in words, for messages ("a string", "an object").
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }

    /// The kind of a serde_json value.
    pub fn of(v: &Value) -> Kind {
        match v {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        }
    }
}

impl<'a> Json<'a> for &'a Value {
    fn kind(self) -> Kind {
        Kind::of(self)
    }
    fn get(self, key: &str) -> Option<Self> {
        member(self.as_object()?, key)
    }
    fn str(self) -> Option<&'a str> {
        self.as_str()
    }
    fn text(self) -> Option<Text> {
        self.as_str().map(Text::of)
    }
    fn as_bool(self) -> Option<bool> {
        Value::as_bool(self)
    }
    fn as_u64(self) -> Option<u64> {
        Value::as_u64(self)
    }
    fn len(self) -> usize {
        match self {
            Value::Array(a) => a.len(),
            Value::Object(o) => o.len(),
            _ => 0,
        }
    }
    fn items(self) -> impl Iterator<Item = Self> + 'a {
        self.as_array().into_iter().flatten()
    }
    fn members(self) -> impl Iterator<Item = (&'a str, Self)> + 'a {
        self.as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v))
    }
    fn to_json(self) -> String {
        self.to_string()
    }
    fn is_empty_string(self) -> bool {
        self.as_str() == Some("")
    }
    fn str_len(self) -> usize {
        self.as_str().map_or(0, str::len)
    }
    fn at(self, i: usize) -> Option<Self> {
        self.as_array()?.get(i)
    }
}

impl<'a> Json<'a> for Node<'a> {
    fn kind(self) -> Kind {
        Node::kind(&self)
    }
    // Inlined where it is called, so the key's length is known there and its bytes
    // are compared without a call to memcmp.
    #[inline(always)]
    fn get(self, key: &str) -> Option<Self> {
        Node::get(&self, key)
    }
    fn str(self) -> Option<&'a str> {
        self.as_str()
    }
    fn text(self) -> Option<Text> {
        let raw = self.raw_str()?;
        if !self.has_escapes() {
            return Some(Text::of(raw));
        }
        // What the parse learnt of the string: its length and how it ends.
        let e = self.entry();
        let trailing_space = if e.flags() & ENDS_IN_ESCAPE != 0 {
            e.flags() & ENDS_IN_ESCAPED_SPACE != 0
        } else {
            raw.chars().last().is_some_and(char::is_whitespace)
        };
        Some(Text {
            blank: scan::escaped_blank(raw),
            len: e.next as usize,
            trailing_space,
        })
    }
    fn as_bool(self) -> Option<bool> {
        Node::as_bool(&self)
    }
    fn as_u64(self) -> Option<u64> {
        Node::as_u64(&self)
    }
    fn len(self) -> usize {
        Node::len(&self)
    }
    fn items(self) -> impl Iterator<Item = Self> + 'a {
        Node::items(&self)
    }
    fn members(self) -> impl Iterator<Item = (&'a str, Self)> + 'a {
        Node::members(&self)
    }
    fn is_empty_string(self) -> bool {
        self.raw_str() == Some("")
    }
    fn str_len(self) -> usize {
        match self.raw_str() {
            Some(_) if self.has_escapes() => self.entry().next as usize,
            Some(raw) => raw.len(),
            None => 0,
        }
    }
    fn string_bytes(self) -> usize {
        Node::string_bytes(&self)
    }
    fn to_json(self) -> String {
        let span = self.span();
        serde_json::from_slice::<Value>(&self.doc.bytes()[span])
            .map(|v| v.to_string())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod member_tests {
    use serde_json::{Map, Value};

    use super::{member, Field};

    /// Below, at and above the scanning threshold, for present and absent keys
    /// (prefixes and extensions of present ones included), `member` finds what
    /// `Map::get` finds.
    #[test]
    fn member_finds_what_the_map_finds_at_every_size() {
        for n in 0..=20usize {
            let mut map = Map::new();
            for i in 0..n {
                map.insert(format!("key{i}"), Value::from(i));
            }
            let mut probes: Vec<String> = (0..=n + 1).map(|i| format!("key{i}")).collect();
            probes.extend(["", "key", "key10x", "KEY0", "k"].map(String::from));
            let value = Value::Object(map.clone());
            for p in &probes {
                assert_eq!(member(&map, p), map.get(p), "{n} members, key {p:?}");
                assert_eq!(value.field(p), map.get(p), "{n} members, key {p:?}");
                assert_eq!(map.field(p), map.get(p), "{n} members, key {p:?}");
            }
        }
        assert_eq!(Value::from("key0").field("key0"), None);
    }
}
