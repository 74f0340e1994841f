//! The two top-level request fields the gateway's log line and spans name, `model` and
//! `stream`, skimmed off the body's bytes without building it: strings are skipped with
//! `memchr` (most of a history's bytes are text), nested values by their brackets, and
//! only the two values wanted are decoded. A body that is not a JSON object yields
//! neither; a key seen twice keeps its last value, as a parse would.
//!
//! A body the judge already read onto a tape (`mend::json`) gives both from the tape
//! instead ([`from_doc`]), for nothing: the skim is a second pass over every byte (about
//! a fifth of `mend serve`'s CPU on a 200 KB history), so it is left to what the tape
//! declines and to `off` mode.

use memchr::memchr2;

/// `model` and `stream`, when the body has them at its top level with those types.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RequestHead {
    pub model: Option<String>,
    pub stream: Option<bool>,
}

/// Skim a request body for its top-level `model` and `stream`.
pub(crate) fn request_head(body: &[u8]) -> RequestHead {
    skim(body).unwrap_or_default()
}

/// `model` and `stream` read off a body's tape: what [`request_head`] skims from its
/// bytes (the tape holds no duplicate or escaped keys, so the one `model` member is the
/// last one).
pub(crate) fn from_doc(doc: &mend::json::Doc<'_>) -> RequestHead {
    let root = doc.root();
    if root.kind() != mend::json::Kind::Object {
        return RequestHead::default();
    }
    RequestHead {
        model: root
            .get("model")
            .and_then(|m| m.to_str())
            .map(|m| m.into_owned()),
        stream: root.get("stream").and_then(|s| s.as_bool()),
    }
}

fn skim(b: &[u8]) -> Option<RequestHead> {
    let mut head = RequestHead::default();
    let mut i = ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(head);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, i)?;
        let key = &b[i..=key_end];
        i = ws(b, key_end + 1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let start = ws(b, i + 1);
        let end = value_end(b, start)?;
        let value = &b[start..end];
        match unescaped(key).as_deref() {
            Some("model") => head.model = unescaped(value),
            Some("stream") => {
                head.stream = match value {
                    b"true" => Some(true),
                    b"false" => Some(false),
                    _ => None,
                }
            }
            _ => {}
        }
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => return Some(head),
            _ => return None,
        }
    }
}

/// A JSON string's text (`quoted` includes its quotes); `None` when it is not a string.
fn unescaped(quoted: &[u8]) -> Option<String> {
    if quoted.first() != Some(&b'"') {
        return None;
    }
    let inner = &quoted[1..quoted.len() - 1];
    if !inner.contains(&b'\\') {
        return std::str::from_utf8(inner).ok().map(str::to_string);
    }
    serde_json::from_slice(quoted).ok()
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The index of the quote closing the string that opens at `open`.
fn string_end(b: &[u8], open: usize) -> Option<usize> {
    let mut j = open + 1;
    loop {
        let k = j + memchr2(b'"', b'\\', b.get(j..)?)?;
        if b[k] == b'"' {
            return Some(k);
        }
        j = k + 2;
    }
}

/// One past the end of the value that starts at `start`.
fn value_end(b: &[u8], start: usize) -> Option<usize> {
    match b.get(start)? {
        b'"' => string_end(b, start).map(|e| e + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            loop {
                match b.get(i)? {
                    b'"' => i = string_end(b, i)?,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let n = b[start..]
                .iter()
                .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(b.len() - start);
            (n > 0).then_some(start + n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(s: &str) -> RequestHead {
        request_head(s.as_bytes())
    }

    #[test]
    fn reads_model_and_stream_at_the_top_level_only() {
        let h = head(
            r#"{"messages":[{"role":"user","content":"say \"model\": {\"x\"} ]"},
                {"model":"inner","stream":false}],
               "meta":{"model":"nested"}, "stream" : true , "model":"gpt-4o"}"#,
        );
        assert_eq!(h.model.as_deref(), Some("gpt-4o"));
        assert_eq!(h.stream, Some(true));
        assert_eq!(head(r#"{"stream":false}"#).stream, Some(false));
        assert_eq!(head("{}"), RequestHead::default());
    }

    #[test]
    fn escapes_are_decoded_and_the_last_key_wins() {
        let h = head(r#"{"mod\u0065l":"a\"b\\","model":"c\u00e9"}"#);
        assert_eq!(h.model.as_deref(), Some("cé"));
        let h = head(r#"{"model":"a\"b\\"}"#);
        assert_eq!(h.model.as_deref(), Some("a\"b\\"));
    }

    #[test]
    fn wrong_types_and_bad_bodies_give_nothing() {
        assert_eq!(
            head(r#"{"model":7,"stream":"yes"}"#),
            RequestHead::default()
        );
        for bad in [
            "",
            "[]",
            "not json",
            r#"{"model":"x""#,
            r#"{"model""x"}"#,
            r#"{"a":[1,2}"#,
            r#"{"a":"unterminated}"#,
            "{\"a\":\"x\\",
            r#"{"a":}"#,
        ] {
            assert_eq!(head(bad).model, None, "{bad}");
        }
    }

    /// Agrees with a parse on every body a parse accepts (and on what it finds).
    #[test]
    fn agrees_with_serde_on_real_shapes() {
        for body in [
            r#"{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"text","text":"hi ]}"}]}],"stream":true}"#,
            r#"{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"temperature":0.5e-1}}"#,
            r#"{"max_tokens":-1,"model":null,"stream":null,"tools":[]}"#,
        ] {
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            let h = head(body);
            assert_eq!(h.model.as_deref(), v["model"].as_str(), "{body}");
            assert_eq!(h.stream, v["stream"].as_bool(), "{body}");
        }
    }

    /// The tape gives what the skim gives, on every body the tape reads: strings with
    /// and without escapes, wrong types, nested look-alikes, non-objects.
    #[test]
    fn the_tape_agrees_with_the_skim() {
        let bodies = [
            r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true}"#,
            r#"{"messages":[{"model":"inner","stream":false}],"meta":{"model":"n"},"stream":false,"model":"c\u00e9\"q\\"}"#,
            r#"{"model":7,"stream":"yes"}"#,
            r#"{"model":null,"stream":null}"#,
            r#"{"contents":[{"role":"user","parts":[{"text":"x"}]}]}"#,
            r#"{}"#,
            r#"[{"model":"x"}]"#,
            r#""model""#,
            r#"  {"stream" : true , "model" : "m" }  "#,
        ];
        for body in bodies {
            let doc = mend::json::parse(body.as_bytes()).expect(body);
            assert_eq!(from_doc(&doc), head(body), "{body}");
        }
    }
}
