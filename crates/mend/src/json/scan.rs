//! Byte scanning for strings: finding a string's end eight bytes at a time, checking its
//! escapes, and undoing them.

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

/// The index of the first `"`, `\` or control character at or after `from`, or the length:
/// sixteen bytes at a time with SSE2 (part of the x86_64 baseline; `safe_arch` lends its
/// intrinsics as safe functions where the build enables the feature, as it always does
/// on x86_64), the last bytes eight at a time.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn next_special(src: &[u8], from: usize) -> usize {
    let mut i = from;
    let last = src.len().saturating_sub(16);
    while i <= last {
        let Some(chunk) = src
            .get(i..i + 16)
            .and_then(|c| <[u8; 16]>::try_from(c).ok())
        else {
            break;
        };
        let mask = stops_16(chunk);
        if mask != 0 {
            return i + mask.trailing_zeros() as usize;
        }
        i += 16;
    }
    next_special_swar(src, i)
}

/// A bit for each byte of `chunk` that is a `"`, `\` or control character.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn stops_16(chunk: [u8; 16]) -> i32 {
    use safe_arch::{
        cmp_eq_mask_i8_m128i, m128i, min_u8_m128i, move_mask_i8_m128i, set_splat_i8_m128i,
    };
    let v = m128i::from(chunk);
    // A control character is a byte whose unsigned minimum with 0x1f is itself.
    let stops = cmp_eq_mask_i8_m128i(v, set_splat_i8_m128i(b'"' as i8))
        | cmp_eq_mask_i8_m128i(v, set_splat_i8_m128i(b'\\' as i8))
        | cmp_eq_mask_i8_m128i(min_u8_m128i(v, set_splat_i8_m128i(0x1f)), v);
    move_mask_i8_m128i(stops)
}

/// [`next_special`] on other targets: eight bytes at a time in a `u64`.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn next_special(src: &[u8], from: usize) -> usize {
    next_special_swar(src, from)
}

/// The index of the first `"`, `\` or control character at or after `from`, or the
/// length, eight bytes at a time (the portable scan, and the tail of the SSE2 one).
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "sse2"),
    cold,
    inline(never)
)]
fn next_special_swar(src: &[u8], from: usize) -> usize {
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

/// A string found by [`string_end`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Scanned {
    /// The index of the closing quote.
    pub end: usize,
    /// Whether it has escapes.
    pub escaped: bool,
    /// Its length in bytes with the escapes undone.
    pub len: usize,
    /// The character of an escape that ends it (its last character), if one does.
    pub last_escaped: Option<char>,
}

/// The string whose content starts at `start`, found and checked. `None` for an
/// unterminated string, a control character, a bad escape or a lone surrogate:
/// serde_json rejects all of them.
///
/// Most strings of a body (keys, ids, roles) close within their first sixteen bytes
/// without an escape: that case is answered here, inlined into the parser, and the rest
/// by the full scan.
#[inline(always)]
pub(super) fn string_end(src: &[u8], start: usize) -> Option<Scanned> {
    if let Some(at) = first_stop_within_16(src, start) {
        if src.get(at) == Some(&b'"') {
            return Some(Scanned {
                end: at,
                escaped: false,
                len: at - start,
                last_escaped: None,
            });
        }
    }
    string_end_scanned(src, start)
}

/// The first `"`, `\` or control character among the sixteen bytes at `from`, when
/// there are sixteen and one of them is.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn first_stop_within_16(src: &[u8], from: usize) -> Option<usize> {
    let chunk = src.get(from..from.checked_add(16)?)?;
    let mask = stops_16(<[u8; 16]>::try_from(chunk).ok()?);
    (mask != 0).then(|| from + mask.trailing_zeros() as usize)
}

/// [`first_stop_within_16`] where there is no SSE2: the full scan answers every string.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn first_stop_within_16(_src: &[u8], _from: usize) -> Option<usize> {
    None
}

/// The full scan of a string (see [`string_end`]), sixteen bytes at a time: the stops of
/// a window (`"`, `\`, control characters) are taken one after another from its mask,
/// a two-byte escape clearing the bits it covers, so text with an escape every few
/// dozen bytes is not loaded and compared again after each.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(never)]
fn string_end_scanned(src: &[u8], start: usize) -> Option<Scanned> {
    let mut s = Escapes::new(start);
    let mut i = start;
    let last_window = src.len().saturating_sub(16);
    'windows: while i <= last_window {
        let Some(chunk) = src
            .get(i..i + 16)
            .and_then(|c| <[u8; 16]>::try_from(c).ok())
        else {
            break;
        };
        let mut mask = stops_16(chunk) as u32;
        while mask != 0 {
            let at = i + mask.trailing_zeros() as usize;
            match src[at] {
                b'"' => return Some(s.closed_at(at)),
                b'\\' => {
                    let after = s.escape(src, at)?;
                    let covered = after - i;
                    if covered >= 16 {
                        i = after;
                        continue 'windows;
                    }
                    mask &= u32::MAX << covered;
                }
                _ => return None,
            }
        }
        i += 16;
    }
    scan_rest(src, i, s)
}

/// [`string_end_scanned`] where there is no SSE2: stop by stop.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn string_end_scanned(src: &[u8], start: usize) -> Option<Scanned> {
    scan_rest(src, start, Escapes::new(start))
}

/// The rest of a string from `i`, one stop at a time (the last bytes of the SSE2 scan,
/// and the whole scan elsewhere).
#[inline(never)]
fn scan_rest(src: &[u8], mut i: usize, mut s: Escapes) -> Option<Scanned> {
    loop {
        i = next_special(src, i);
        match *src.get(i)? {
            b'"' => return Some(s.closed_at(i)),
            b'\\' => i = s.escape(src, i)?,
            _ => return None,
        }
    }
}

/// What a scan has learnt of a string's escapes so far.
struct Escapes {
    start: usize,
    escaped: bool,
    /// What the escapes took beyond the characters they stand for.
    saved: usize,
    /// Where the last escape ended, and the character it stands for.
    last: (usize, char),
}

impl Escapes {
    fn new(start: usize) -> Escapes {
        Escapes {
            start,
            escaped: false,
            saved: 0,
            last: (usize::MAX, '\0'),
        }
    }

    /// The escape at `at` (a backslash), checked and counted; where it ends.
    #[inline(always)]
    fn escape(&mut self, src: &[u8], at: usize) -> Option<usize> {
        self.escaped = true;
        // `\n` and its kin (two bytes for one) by a table; `\u` by escape_end.
        let simple = SIMPLE_ESCAPES[usize::from(*src.get(at + 1)?)];
        if simple != 0 {
            self.saved += 1;
            self.last = (at + 2, char::from(simple));
            return Some(at + 2);
        }
        let (next, c) = escape_end(src, at)?;
        self.saved += next - at - c.len_utf8();
        self.last = (next, c);
        Some(next)
    }

    /// The string, closed by the quote at `end`.
    fn closed_at(&self, end: usize) -> Scanned {
        Scanned {
            end,
            escaped: self.escaped,
            len: end - self.start - self.saved,
            last_escaped: (self.last.0 == end).then_some(self.last.1),
        }
    }
}

/// For the byte after a backslash, the character of a two-byte escape it makes (`\n`
/// and its kin), 0 for anything else (`\u`, or not an escape).
const SIMPLE_ESCAPES: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0c;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// The four hex digits at `at` as a number; `None` unless all four are hex digits.
/// A table lookup per digit: Python's `json.dumps` writes every non-ASCII character as
/// `\uXXXX`, so bodies can hold thousands of them.
#[inline]
fn hex4(src: &[u8], at: usize) -> Option<u32> {
    let digits = src.get(at..at.checked_add(4)?)?;
    let mut code = 0u32;
    for &d in digits {
        let v = HEX[usize::from(d)];
        if v == NOT_HEX {
            return None;
        }
        code = code << 4 | u32::from(v);
    }
    Some(code)
}

const NOT_HEX: u8 = 0xff;

/// For each byte, the value of the hex digit it is, or [`NOT_HEX`].
const HEX: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// The end of the escape at `at` (a backslash) and the character it stands for; a
/// surrogate must be a whole pair.
fn escape_end(src: &[u8], at: usize) -> Option<(usize, char)> {
    let c = match *src.get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            return match hex4(src, at + 2)? {
                hi @ 0xD800..=0xDBFF => {
                    if src.get(at + 6..at + 8)? != b"\\u" {
                        return None;
                    }
                    let lo = hex4(src, at + 8)?;
                    if !(0xDC00..=0xDFFF).contains(&lo) {
                        return None;
                    }
                    let code = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    Some((at + 12, char::from_u32(code)?))
                }
                0xDC00..=0xDFFF => None,
                code => Some((at + 6, char::from_u32(code)?)),
            };
        }
        _ => return None,
    };
    Some((at + 2, c))
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
    while let Some(off) = memchr::memchr(b'\\', &bytes[i..]) {
        out.push_str(&raw[i..i + off]);
        i += off;
        let (c, len) = escape_char(bytes, i);
        out.push(c);
        i += len;
    }
    out.push_str(raw.get(i..).unwrap_or_default());
}

/// Whether a string's raw content with escapes is blank once unescaped: white space up
/// to its first other character (found without unescaping the rest).
pub(super) fn escaped_blank(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    // Most texts start with a character that is neither white space nor an escape.
    if bytes
        .first()
        .is_some_and(|&b| b.is_ascii_graphic() && b != b'\\')
    {
        return false;
    }
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'\\', &bytes[i..]) {
        if !raw[i..i + off].trim().is_empty() {
            return false;
        }
        let (c, n) = escape_char(bytes, i + off);
        if !c.is_whitespace() {
            return false;
        }
        i += off + n;
    }
    raw[i..].trim().is_empty()
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
    use crate::json::view::Text;

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

    /// The first stop found one byte at a time: what both scans must find.
    fn naive_next_special(src: &[u8], from: usize) -> usize {
        (from..src.len())
            .find(|&i| matches!(src[i], b'"' | b'\\' | 0..=0x1f))
            .unwrap_or(src.len())
    }

    #[test]
    fn both_scans_find_a_stop_at_every_offset_around_the_word_and_vector_edges() {
        let stops = [b'"', b'\\', b'\n', b'\t', b'\r', 0u8, 0x1f];
        // Bytes next to a stop in value but never one: space, DEL, the UTF-8 bytes
        // (unsigned above 0x7f, signed below zero), the quote and backslash's neighbours.
        let fillers = [
            b' ', 0x7f, 0x80, 0xC3, 0xE2, 0xF0, 0xFF, b'!', b'#', b'[', b']',
        ];
        for len in 0..48 {
            for filler in fillers {
                let mut s = vec![filler; len];
                for from in 0..=len.min(20) {
                    assert_eq!(next_special(&s, from), len, "none in {len} from {from}");
                    assert_eq!(next_special_swar(&s, from), len);
                }
                for at in 0..len {
                    for stop in stops {
                        s[at] = stop;
                        for from in 0..=len.min(20) {
                            let want = naive_next_special(&s, from);
                            assert_eq!(next_special(&s, from), want, "{stop} at {at} from {from}");
                            assert_eq!(next_special_swar(&s, from), want);
                        }
                        s[at] = filler;
                    }
                }
            }
        }
    }

    #[test]
    fn the_short_string_answer_is_the_full_scans() {
        let pieces: [&[u8]; 8] = [
            b"\"",
            b"\\n\"",
            b"\\u00e9\"",
            b"\n\"",
            b"\x01",
            b"\xc3\xa9\"",
            b"\\x",
            b"",
        ];
        for before in 0..40 {
            for piece in pieces {
                for after in [0, 1, 15, 16, 17] {
                    let mut src = vec![b'a'; before];
                    src.extend_from_slice(piece);
                    src.extend(std::iter::repeat_n(b'b', after));
                    src.push(b'"');
                    for from in 0..=before.min(3) {
                        assert_eq!(string_end(&src, from), string_end_scanned(&src, from));
                    }
                }
            }
        }
    }

    #[test]
    fn the_window_scan_agrees_with_the_stop_by_stop_scan() {
        // Escapes of every kind, quotes and control characters at every offset around
        // the sixteen-byte windows, alone and in runs that straddle a window's end.
        let pieces: [&[u8]; 12] = [
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\\\\\\"",
            b"\\u00e9",
            b"\\ud83d\\ude00",
            b"\\ud83d",
            b"\\x",
            b"\"",
            b"\n",
            b"\xc3\xa9",
            b"\\",
        ];
        for before in 0..34 {
            for (a, first) in pieces.iter().enumerate() {
                for second in pieces.iter().skip(a % 3) {
                    for gap in [0, 1, 7, 13, 14, 15, 16, 17] {
                        let mut src = vec![b'a'; before];
                        src.extend_from_slice(first);
                        src.extend(std::iter::repeat_n(b'b', gap));
                        src.extend_from_slice(second);
                        src.extend(std::iter::repeat_n(b'c', 20));
                        src.push(b'"');
                        for from in [0, before.min(1), before.min(5)] {
                            let want = scan_rest(&src, from, Escapes::new(from));
                            assert_eq!(string_end_scanned(&src, from), want, "{src:?} from {from}");
                        }
                        src.truncate(src.len() - 21); // unterminated, ending in the pieces
                        let want = scan_rest(&src, 0, Escapes::new(0));
                        assert_eq!(string_end_scanned(&src, 0), want, "{src:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn blankness_is_the_unescaped_texts_whatever_the_first_character() {
        let firsts = (0x20u8..0x7f)
            .filter(|&b| b != b'"' && b != b'\\')
            .map(|b| char::from(b).to_string())
            .chain(
                [
                    "\u{a0}", "\u{2028}", "\u{3000}", "é", r"\n", r"\u0020", r"\u00a0", r"\\",
                    r"\t",
                ]
                .map(String::from),
            );
        for first in firsts {
            for rest in ["", " ", r"\n", r"\t ", r" \u2028", r"\nx", "x", r"\\"] {
                let raw = format!("{first}{rest}");
                let text = Text::of(&unescape(&raw));
                assert_eq!(escaped_blank(&raw), text.blank, "{raw}");
            }
        }
    }

    #[test]
    fn hex4_reads_exactly_four_hex_digits() {
        for code in [0u32, 0x9, 0xa, 0xf, 0x00e9, 0xd83d, 0xffff, 0xABCD] {
            for text in [format!("{code:04x}"), format!("{code:04X}")] {
                assert_eq!(hex4(text.as_bytes(), 0), Some(code), "{text}");
            }
        }
        for bad in [
            "", "12", "123", "12g4", "+123", "-123", " 123", "12 3", "0x12", "\u{e9}00",
        ] {
            assert_eq!(hex4(bad.as_bytes(), 0), None, "{bad:?}");
        }
        assert_eq!(hex4(b"xx00e9", 2), Some(0xe9));
        assert_eq!(hex4(b"00e9", usize::MAX - 1), None);
    }

    #[test]
    fn escapes_are_checked_and_undone() {
        let ok = [r#"a\"b"#, r"\\\/\b\f\n\r\t", r"\u00e9\ud83d\ude00x"];
        for raw in ok {
            let src = format!("{raw}\"");
            let s = string_end(src.as_bytes(), 0).expect("a string");
            assert_eq!((s.end, s.escaped), (raw.len(), true));
            assert_eq!(s.len, unescape(raw).len(), "{raw}");
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
    fn what_a_scan_tells_of_an_escaped_string_is_true_of_its_text() {
        let raws = [
            r"a\nb",
            r"\n\t ",
            r" \u00a0",
            r"x\u00e9",
            r"\ud83d\ude00",
            r"\\",
            r"a \n",
            r"\n",
            r"\\n",
            r"\n\\",
            r"\u2028",
        ];
        for raw in raws {
            let text = Text::of(&unescape(raw));
            let src = format!("{raw}\"");
            let s = string_end(src.as_bytes(), 0).expect("a string");
            assert_eq!(s.len, text.len, "{raw}");
            let last = s.last_escaped.map(char::is_whitespace);
            let raw_last = raw.chars().last().is_some_and(char::is_whitespace);
            assert_eq!(last.unwrap_or(raw_last), text.trailing_space, "{raw}");
            assert_eq!(escaped_blank(raw), text.blank, "{raw}");
        }
    }
}
