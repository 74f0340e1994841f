//! A repaired body written from the input's bytes: the bytes are copied and only what
//! the repair changed (history items, the rare top-level member) is written anew.
//!
//! The spans come from one function, [`spans`] (the tape reader's byte spans of the
//! top-level members and of the history items). A spliced body parses to exactly the repaired
//! `Value`: an item is copied only when the repair kept it unchanged (see
//! [`Kept`](super::Kept)), and the same text parses to the same value.

use std::ops::Range;

use serde_json::Value;

use super::{repair_owned, RepairOptions, Repaired};
use crate::{Error, Report};

/// What repair made of request bytes.
#[derive(Debug, Clone)]
pub enum RepairedBytes {
    /// The body checks with no error: send it as it is. The check's report (its
    /// findings are warnings) is all there is; no tree was built.
    AsIs(Report),
    /// Repair ran: its outcome, and the bytes to send when it changed anything (`None`:
    /// nothing could be changed, the input stands). A changed body is the input's bytes
    /// with only the changed history items and top-level members written anew (see
    /// [`splice`]).
    Ran(Box<Repaired>, Option<Vec<u8>>),
}

impl RepairedBytes {
    /// No error is left.
    pub fn valid(&self) -> bool {
        match self {
            RepairedBytes::AsIs(_) => true,
            RepairedBytes::Ran(r, _) => r.valid(),
        }
    }

    /// The bytes to send: the repaired ones, or the input when nothing changed.
    pub fn bytes<'a>(&'a self, input: &'a [u8]) -> &'a [u8] {
        match self {
            RepairedBytes::Ran(_, Some(out)) => out,
            _ => input,
        }
    }
}

/// Repair request bytes. A valid body costs one check of its bytes (the tape reader, no
/// tree) and comes back as [`RepairedBytes::AsIs`]; any other is parsed and repaired,
/// and written by splicing the changes into the input's bytes.
///
/// ```
/// use mend::repair::{repair_bytes, RepairedBytes};
/// let body = br#"{"model": "gpt-4o", "messages": [
///     {"role": "user",   "content": "weather?"},
///     {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
///         "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
///     {"role": "user",   "content": "and?"}
/// ]}"#;
/// let RepairedBytes::Ran(fixed, Some(bytes)) = repair_bytes(body, &Default::default()).unwrap()
/// else {
///     panic!("the missing result is added")
/// };
/// // The untouched messages are the input's bytes, spaces and all.
/// let text = String::from_utf8(bytes.clone()).unwrap();
/// assert!(text.contains(r#"{"role": "user",   "content": "and?"}"#));
/// let parsed: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
/// assert_eq!(parsed, fixed.body);
/// ```
pub fn repair_bytes(bytes: &[u8], opts: &RepairOptions) -> Result<RepairedBytes, Error> {
    if let Some(doc) = crate::json::parse(bytes) {
        let analysis = crate::analyze_doc(&doc, &opts.check)?;
        if analysis.valid() {
            return Ok(RepairedBytes::AsIs(analysis.into_report()));
        }
        // The tree from the tape the check read (no second parse of the bytes), and the
        // first pass planned from that check (no second check).
        if let Some(body) = doc.root().to_value() {
            let fixed = super::repair_owned_analyzed(body, opts, Some(analysis))?;
            let out = fixed.changed().then(|| splice(bytes, &fixed));
            return Ok(RepairedBytes::Ran(Box::new(fixed), out));
        }
    }
    let body = crate::parse_body(bytes)?;
    let fixed = repair_owned(body, opts)?;
    let out = fixed.changed().then(|| splice(bytes, &fixed));
    Ok(RepairedBytes::Ran(Box::new(fixed), out))
}

/// The bytes of `r.body`, written from `input` (the bytes `r` was repaired from): the
/// members and history items the repair kept are copied from the input, the others
/// written anew. Where the input's layout cannot be followed (duplicate top-level keys,
/// a kept record that does not fit it) the whole body is written anew.
pub fn splice(input: &[u8], r: &Repaired) -> Vec<u8> {
    splice_with(input, r, Layout::Compact)
}

/// How the parts of a spliced body that are written anew are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// As few bytes as possible (what goes on the wire).
    Compact,
    /// Like the input around them (for a file someone reads or diffs): a new history
    /// item takes the white space the input puts between its items, and is indented as
    /// the input's items are when they span lines. Where the input's layout cannot be
    /// followed item by item, the whole body is written anew, indented if the input was.
    FollowInput,
}

/// [`splice`], with the new parts laid out as `layout` says.
pub fn splice_with(input: &[u8], r: &Repaired, layout: Layout) -> Vec<u8> {
    if let Some(out) = spliced(input, r, layout) {
        return out;
    }
    let indented = layout == Layout::FollowInput && indented(input);
    let text = if indented {
        serde_json::to_vec_pretty(&r.body)
    } else {
        serde_json::to_vec(&r.body)
    };
    text.unwrap_or_default()
}

/// The input is laid out over indented lines.
fn indented(input: &[u8]) -> bool {
    input.windows(2).any(|w| w == b"\n " || w == b"\n\t")
}

/// Where the parts of a body are in its bytes.
pub(crate) struct Spans {
    /// Each top-level member: its key, and the span of its value.
    pub(crate) members: Vec<(String, Range<usize>)>,
    /// The span of each history item, when the history key names an array.
    pub(crate) items: Option<Vec<Range<usize>>>,
}

/// The spans of a body's top-level members and of the items of its history (the member
/// `history_key`), read by the tape reader (`crate::json`); `None` when the bytes are not
/// a JSON object or the reader declines them (duplicate or escaped keys, deep nesting).
pub(crate) fn spans(input: &[u8], history_key: &str) -> Option<Spans> {
    let doc = crate::json::parse(input)?;
    let root = doc.root();
    if root.kind() != crate::json::Kind::Object {
        return None;
    }
    let items = root
        .get(history_key)
        .filter(|h| h.kind() == crate::json::Kind::Array)
        .map(|h| h.items().map(|n| n.span()).collect());
    Some(Spans {
        members: root
            .members()
            .map(|(k, v)| (k.to_string(), v.span()))
            .collect(),
        items,
    })
}

fn spliced(input: &[u8], r: &Repaired, layout: Layout) -> Option<Vec<u8>> {
    let key = r.dialect.history_key();
    let obj = r.body.as_object()?;
    let spans = spans(input, key)?;
    let mut names: Vec<&str> = spans.members.iter().map(|(k, _)| k.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    let span_of = |k: &str| {
        spans
            .members
            .iter()
            .find(|(m, _)| m == k)
            .map(|(_, s)| s.clone())
    };
    let mut out = Vec::with_capacity(input.len() + 256);
    if r.kept.members.is_empty() {
        // The common case: only the history changed; everything around it is copied.
        let Some(origin) = &r.kept.history else {
            // Nothing kept apart from the input: unchanged, or written anew.
            return (!r.changed()).then(|| input.to_vec());
        };
        let at = span_of(key)?;
        out.extend_from_slice(&input[..at.start]);
        let style = match layout {
            Layout::Compact => Style::default(),
            Layout::FollowInput => Style::of(input, at.clone(), spans.items.as_deref()?),
        };
        history(input, &spans, obj.get(key)?, origin, &style, &mut out)?;
        out.extend_from_slice(&input[at.end..]);
        return Some(out);
    }
    if layout == Layout::FollowInput {
        // Member by member loses the input's layout around the members.
        return None;
    }
    // A top-level member changed too: the object is written member by member, each
    // kept member's value copied.
    out.push(b'{');
    for (n, (k, v)) in obj.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, k).ok()?;
        out.push(b':');
        match (&r.kept.history, span_of(k)) {
            (Some(origin), _) if k == key => {
                history(input, &spans, v, origin, &Style::default(), &mut out)?
            }
            (_, Some(at)) if !r.kept.members.contains(&k.as_str()) => {
                out.extend_from_slice(&input[at]);
            }
            _ => serde_json::to_writer(&mut out, v).ok()?,
        }
    }
    out.push(b'}');
    Some(out)
}

/// The white space a history array puts around and between its items, and how its
/// items are indented: what a new item is written with. The default is compact.
#[derive(Debug, Default)]
struct Style<'a> {
    /// Between `[` and the first item.
    open: &'a [u8],
    /// After the comma between two items.
    between: &'a [u8],
    /// Between the last item and `]`.
    close: &'a [u8],
    /// When the items span lines: the indentation of the lines an item's text continues
    /// on (the items' own), and one level of nesting.
    indent: Option<(&'a [u8], &'a [u8])>,
}

impl<'a> Style<'a> {
    /// The style of the array at `at` in `input`, whose items are at `items`.
    fn of(input: &'a [u8], at: Range<usize>, items: &[Range<usize>]) -> Style<'a> {
        let (Some(first), Some(last)) = (items.first(), items.last()) else {
            return Style::default();
        };
        let open = input.get(at.start + 1..first.start).unwrap_or_default();
        let close = input
            .get(last.end..at.end.saturating_sub(1))
            .unwrap_or_default();
        let between = match items.get(1) {
            Some(second) => {
                let gap = input.get(first.end..second.start).unwrap_or_default();
                gap.iter()
                    .position(|&b| b == b',')
                    .map_or(gap, |comma| &gap[comma + 1..])
            }
            None => open,
        };
        // An item's own indentation: what follows the last line break before it.
        let base = between
            .iter()
            .rposition(|&b| b == b'\n')
            .map(|nl| &between[nl + 1..]);
        // One level deeper: how the first item that spans lines indents its second line.
        let indent = base.and_then(|base| {
            items.iter().find_map(|item| {
                let text = input.get(item.clone())?;
                let nl = text.iter().position(|&b| b == b'\n')?;
                let line = &text[nl + 1..];
                let lead = line
                    .iter()
                    .position(|&b| b != b' ' && b != b'\t')
                    .unwrap_or(line.len());
                let lead = &line[..lead];
                let unit = lead.strip_prefix(base)?;
                (!unit.is_empty()).then_some((base, unit))
            })
        });
        Style {
            open,
            between,
            close,
            indent,
        }
    }

    /// Write `item` as a new item in this style.
    fn item(&self, item: &Value, out: &mut Vec<u8>) -> Option<()> {
        let Some((base, unit)) = self.indent else {
            return serde_json::to_writer(&mut *out, item).ok();
        };
        let mut text = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(unit);
        let mut ser = serde_json::Serializer::with_formatter(&mut text, formatter);
        serde::Serialize::serialize(item, &mut ser).ok()?;
        // The pretty text starts at column 0; its later lines move to the item's own.
        for &b in &text {
            out.push(b);
            if b == b'\n' {
                out.extend_from_slice(base);
            }
        }
        Some(())
    }
}

/// Write the repaired history `items`: each kept item copied from the input (a run of
/// items kept in order with what lies between them), each other one written anew in
/// `style`.
fn history(
    input: &[u8],
    spans: &Spans,
    items: &Value,
    origin: &[Option<usize>],
    style: &Style<'_>,
    out: &mut Vec<u8>,
) -> Option<()> {
    let items = items.as_array()?;
    let was = spans.items.as_ref()?;
    if items.len() != origin.len() {
        return None;
    }
    out.push(b'[');
    if !items.is_empty() {
        out.extend_from_slice(style.open);
    }
    let mut prev: Option<usize> = None;
    for (k, (item, &o)) in items.iter().zip(origin).enumerate() {
        match o {
            Some(i) if i > 0 && prev == Some(i - 1) => {
                out.extend_from_slice(input.get(was[i - 1].end..was.get(i)?.end)?);
            }
            Some(i) => {
                if k > 0 {
                    out.push(b',');
                    out.extend_from_slice(style.between);
                }
                out.extend_from_slice(input.get(was.get(i)?.clone())?);
            }
            None => {
                if k > 0 {
                    out.push(b',');
                    out.extend_from_slice(style.between);
                }
                style.item(item, out)?;
            }
        }
        prev = o;
    }
    if !items.is_empty() {
        out.extend_from_slice(style.close);
    }
    out.push(b']');
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_the_values_text() {
        let input = br#" { "a" : [ 1 , {"b": 2} ] , "c": "x" } "#;
        let s = spans(input, "a").unwrap();
        let text = |r: &Range<usize>| std::str::from_utf8(&input[r.clone()]).unwrap();
        assert_eq!(text(&s.members[0].1), r#"[ 1 , {"b": 2} ]"#);
        assert_eq!(text(&s.members[1].1), r#""x""#);
        let items: Vec<_> = s.items.unwrap().iter().map(text).collect();
        assert_eq!(items, ["1", r#"{"b": 2}"#]);
        assert!(spans(b"[1]", "a").is_none());
    }
}
