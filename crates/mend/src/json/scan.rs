//! Byte scanning for strings: finding a string's end eight bytes at a time, checking its
//! escapes, and undoing them.

use super::view::Text;

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `v` that is zero (exact for the lowest such byte, which is
/// all that is read).
fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(LO) & !v & HI
}

/// The bytes a string scan must stop at: `"`, `\` and the control characters.
fn special_bytes(w: u64) -> u64 {
    let quote = zero_bytes(w ^ (LO * u64::from(b'"')));
    let backslash = zero_bytes(w ^ (LO * u64::from(b'\\')));
    let control = w.wrapping_sub(LO * 0x20) & !w & HI;
    quote | backslash | control
}

/// The index of the first `"`, `\` or control character at or after `from`, or the length.
fn next_special(src: &[u8], from: usize) -> usize {
    let mut i = from;
    let rest = src.get(from..).unwrap_or_default();
    for chunk in rest.chunks_exact(8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let hits = special_bytes(w);
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < src.len() && !matches!(src[i], b'"' | b'\\' | 0..=0x1f) {
        i += 1;
    }
    i
}

/// Where the string whose content starts at `start` ends (the index of its closing
/// quote), and whether it has escapes. `None` for an unterminated string, a control
/// character, a bad escape or a lone surrogate: serde_json rejects all of them.
pub(super) fn string_end(src: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut i = start;
    let mut escaped = false;
    loop {
        i = next_special(src, i);
        match *src.get(i)? {
            b'"' => return Some((i, escaped)),
            b'\\' => {
                escaped = true;
                i = escape_end(src, i)?;
            }
            _ => return None,
        }
    }
}

fn hex4(src: &[u8], at: usize) -> Option<u32> {
    let digits = src.get(at..at + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None; // from_str_radix would take a sign
    }
    u32::from_str_radix(text, 16).ok()
}

/// The end of the escape at `at` (a backslash); a surrogate must be a whole pair.
fn escape_end(src: &[u8], at: usize) -> Option<usize> {
    match *src.get(at + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at + 2),
        b'u' => match hex4(src, at + 2)? {
            0xD800..=0xDBFF => {
                if src.get(at + 6..at + 8)? != b"\\u" {
                    return None;
                }
                matches!(hex4(src, at + 8)?, 0xDC00..=0xDFFF).then_some(at + 12)
            }
            0xDC00..=0xDFFF => None,
            _ => Some(at + 6),
        },
        _ => None,
    }
}

/// A string's content with its escapes undone; `raw` is content `string_end` accepted.
pub(super) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    unescape_into(raw, &mut out);
    out
}

/// Append `raw` unescaped to `out`.
pub(super) fn unescape_into(raw: &str, out: &mut String) {
    let bytes = raw.as_bytes();
    let mut i = 0;
    while let Some(off) = raw.get(i..).and_then(|r| r.find('\\')) {
        out.push_str(&raw[i..i + off]);
        i += off;
        let (c, len) = escape_char(bytes, i);
        out.push(c);
        i += len;
    }
    out.push_str(raw.get(i..).unwrap_or_default());
}

/// The [`Text`] of a string's raw content with escapes, found without unescaping it:
/// the length is counted escape by escape, blankness stops at the first character that is
/// not white space, the last character is the raw one unless an escape ends the string.
pub(super) fn text_of_escaped(raw: &str) -> Text {
    let bytes = raw.as_bytes();
    let (mut len, mut i) = (0, 0);
    let mut blank = true;
    let mut last_escaped = None;
    while let Some(off) = memchr::memchr(b'\\', &bytes[i..]) {
        let plain = &raw[i..i + off];
        blank = blank && plain.trim().is_empty();
        len += off;
        let (c, n) = escape_char(bytes, i + off);
        blank = blank && c.is_whitespace();
        len += c.len_utf8();
        i += off + n;
        last_escaped = (i == raw.len()).then_some(c);
    }
    let tail = &raw[i..];
    Text {
        blank: blank && tail.trim().is_empty(),
        len: len + tail.len(),
        trailing_space: match last_escaped {
            Some(c) => c.is_whitespace(),
            None => tail.chars().last().is_some_and(char::is_whitespace),
        },
    }
}

/// The character of the escape at `at` and the escape's length.
fn escape_char(bytes: &[u8], at: usize) -> (char, usize) {
    match bytes.get(at + 1) {
        Some(b'"') => ('"', 2),
        Some(b'\\') => ('\\', 2),
        Some(b'/') => ('/', 2),
        Some(b'b') => ('\u{8}', 2),
        Some(b'f') => ('\u{c}', 2),
        Some(b'n') => ('\n', 2),
        Some(b'r') => ('\r', 2),
        Some(b't') => ('\t', 2),
        Some(b'u') => unicode_escape(bytes, at),
        _ => ('\u{fffd}', 1),
    }
}

fn unicode_escape(bytes: &[u8], at: usize) -> (char, usize) {
    let Some(hi) = hex4(bytes, at + 2) else {
        return ('\u{fffd}', 2);
    };
    if (0xD800..0xDC00).contains(&hi) {
        if let Some(lo) = hex4(bytes, at + 8) {
            let code = 0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3ff);
            return (char::from_u32(code).unwrap_or('\u{fffd}'), 12);
        }
    }
    (char::from_u32(hi).unwrap_or('\u{fffd}'), 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_special_finds_the_first_stop_in_and_after_a_word() {
        for at in 0..20 {
            for stop in [b'"', b'\\', b'\n', 0u8, 0x1f] {
                let mut s = vec![b'a'; 20];
                s[at] = stop;
                assert_eq!(next_special(&s, 0), at, "{stop} at {at}");
                s[at] = 0xC3; // a UTF-8 lead byte stops nothing
                assert_eq!(next_special(&s, 0), 20);
            }
        }
    }

    #[test]
    fn escapes_are_checked_and_undone() {
        let ok = [r#"a\"b"#, r"\\\/\b\f\n\r\t", r"\u00e9\ud83d\ude00x"];
        for raw in ok {
            let src = format!("{raw}\"");
            assert_eq!(string_end(src.as_bytes(), 0), Some((raw.len(), true)));
        }
        let decoded = unescape(r"\u00e9\ud83d\ude00\n\/");
        assert_eq!(decoded, "é😀\n/");
        for bad in [
            r"\x",
            r"\u12",
            r"\ud83d",
            r"\ude00",
            r"\ud83dx\ude00",
            "a\u{1}b",
        ] {
            let src = format!("{bad}\"");
            assert_eq!(string_end(src.as_bytes(), 0), None, "{bad}");
        }
        assert_eq!(string_end(b"abc", 0), None, "unterminated");
    }

    #[test]
    fn text_of_an_escaped_string_is_that_of_its_unescaped_text() {
        for raw in [
            r"a\nb",
            r"\n\t ",
            r" \u00a0",
            r"x\u00e9",
            r"\ud83d\ude00",
            r"\\",
            r"a \n",
            r"\n",
        ] {
            assert_eq!(text_of_escaped(raw), Text::of(&unescape(raw)), "{raw}");
        }
    }
}
