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
        let report = crate::check_doc(&doc, &opts.check)?;
        if report.valid() {
            return Ok(RepairedBytes::AsIs(report));
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
    spliced(input, r).unwrap_or_else(|| serde_json::to_vec(&r.body).unwrap_or_default())
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

fn spliced(input: &[u8], r: &Repaired) -> Option<Vec<u8>> {
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
        history(input, &spans, obj.get(key)?, origin, &mut out)?;
        out.extend_from_slice(&input[at.end..]);
        return Some(out);
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
            (Some(origin), _) if k == key => history(input, &spans, v, origin, &mut out)?,
            (_, Some(at)) if !r.kept.members.contains(&k.as_str()) => {
                out.extend_from_slice(&input[at]);
            }
            _ => serde_json::to_writer(&mut out, v).ok()?,
        }
    }
    out.push(b'}');
    Some(out)
}

/// Write the repaired history `items`: each kept item copied from the input (a run of
/// items kept in order with what lies between them), each other one written anew.
fn history(
    input: &[u8],
    spans: &Spans,
    items: &Value,
    origin: &[Option<usize>],
    out: &mut Vec<u8>,
) -> Option<()> {
    let items = items.as_array()?;
    let was = spans.items.as_ref()?;
    if items.len() != origin.len() {
        return None;
    }
    out.push(b'[');
    let mut prev: Option<usize> = None;
    for (k, (item, &o)) in items.iter().zip(origin).enumerate() {
        match o {
            Some(i) if i > 0 && prev == Some(i - 1) => {
                out.extend_from_slice(input.get(was[i - 1].end..was.get(i)?.end)?);
            }
            Some(i) => {
                if k > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(input.get(was.get(i)?.clone())?);
            }
            None => {
                if k > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, item).ok()?;
            }
        }
        prev = o;
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
