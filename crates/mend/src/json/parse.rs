//! The one pass that validates a body and writes its tape.

use std::collections::HashSet;

use super::{
    scan, Doc, Entry, Kind, ENDS_IN_ESCAPE, ENDS_IN_ESCAPED_SPACE, ESCAPED, MAX_DEPTH,
    MAX_ELEMENTS, TRUE,
};

/// Read `bytes` as one JSON document onto a tape; `None` when serde_json would reject it,
/// or when it is one of the rare bodies this reader leaves to serde_json (duplicate or
/// escaped keys, nesting past [`MAX_DEPTH`], [`MAX_ELEMENTS`] in one array or object,
/// 4 GiB or more).
pub fn parse(bytes: &[u8]) -> Option<Doc<'_>> {
    if u32::try_from(bytes.len()).is_err() {
        return None;
    }
    // simdutf8: std's validator slows to ~1 GB/s on text with a few percent non-ASCII.
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let mut p = Parser {
        src: bytes,
        pos: 0,
        // A conversation body runs to one value per ~70 bytes. Reserving for one per 16
        // costs address space only (pages never written are never resident) and spares
        // the copy of a grown tape.
        tape: super::spare_tape(bytes.len() / 16 + 4),
        keys: Vec::new(),
    };
    p.skip_ws();
    p.value(0)?;
    p.skip_ws();
    (p.pos == bytes.len()).then_some(Doc {
        text,
        tape: p.tape,
        unescaped: bumpalo::Bump::new(),
    })
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    tape: Vec<Entry>,
    /// The keys of the objects being read, innermost last (for the duplicate check).
    keys: Vec<(u32, u32)>,
}

impl Parser<'_> {
    #[inline(always)]
    fn skip_ws(&mut self) {
        // Compact bodies have none: one compare answers them.
        if self.src.get(self.pos).is_none_or(|&b| b > b' ') {
            return;
        }
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.src.get(self.pos) {
            self.pos += 1;
        }
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize, flags: u8) -> usize {
        self.tape
            .push(Entry::new(kind, start as u32, end as u32, flags));
        self.tape.len() - 1
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        match *self.src.get(self.pos)? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(|_| ()),
            b't' => self.literal(b"true", Kind::Bool, TRUE),
            b'f' => self.literal(b"false", Kind::Bool, 0),
            b'n' => self.literal(b"null", Kind::Null, 0),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8], kind: Kind, flags: u8) -> Option<()> {
        let end = self.pos + word.len();
        if self.src.get(self.pos..end)? != word {
            return None;
        }
        self.push(kind, self.pos, end, flags);
        self.pos = end;
        Some(())
    }

    /// A string at `pos` (its opening quote); returns its entry's index.
    #[inline]
    fn string(&mut self) -> Option<usize> {
        let start = self.pos + 1;
        let s = scan::string_end(self.src, start)?;
        let end = s.end;
        self.pos = end + 1;
        if !s.escaped {
            return Some(self.push(Kind::String, start, end, 0));
        }
        let last = match s.last_escaped {
            Some(c) if c.is_whitespace() => ENDS_IN_ESCAPE | ENDS_IN_ESCAPED_SPACE,
            Some(_) => ENDS_IN_ESCAPE,
            None => 0,
        };
        let at = self.push(Kind::String, start, end, ESCAPED | last);
        self.tape[at].next = u32::try_from(s.len).ok()?;
        Some(at)
    }

    fn number(&mut self) -> Option<()> {
        let start = self.pos;
        let src = self.src;
        let mut i = start + usize::from(src[start] == b'-');
        let digits = |mut i: usize| {
            while src.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let int_start = i;
        match src.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => i = digits(i),
            _ => return None,
        }
        let int_digits = i - int_start;
        let mut float = false;
        if src.get(i) == Some(&b'.') {
            let after = digits(i + 1);
            if after == i + 1 {
                return None;
            }
            (i, float) = (after, true);
        }
        if let Some(b'e' | b'E') = src.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = src.get(i) {
                i += 1;
            }
            let after = digits(i);
            if after == i {
                return None;
            }
            (i, float) = (after, true);
        }
        // serde_json reads what does not fit a u64/i64 as an f64 and refuses infinity.
        if float || int_digits > 18 {
            let text = std::str::from_utf8(&src[start..i]).ok()?;
            if !text.parse::<f64>().ok()?.is_finite() {
                return None;
            }
        }
        self.push(Kind::Number, start, i, 0);
        self.pos = i;
        Some(())
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let at = self.push(Kind::Array, self.pos, 0, 0);
        self.pos += 1;
        self.skip_ws();
        let mut count = 0u32;
        if self.src.get(self.pos) != Some(&b']') {
            loop {
                self.value(depth + 1)?;
                count += 1;
                self.skip_ws();
                match *self.src.get(self.pos)? {
                    b',' => {
                        self.pos += 1;
                        self.skip_ws();
                    }
                    b']' => break,
                    _ => return None,
                }
            }
        }
        self.pos += 1;
        self.close(at, count)
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let at = self.push(Kind::Object, self.pos, 0, 0);
        let keys_from = self.keys.len();
        self.pos += 1;
        self.skip_ws();
        let mut count = 0u32;
        if self.src.get(self.pos) != Some(&b'}') {
            loop {
                if self.src.get(self.pos) != Some(&b'"') {
                    return None;
                }
                // A key has no entry: it is read back from the bytes before its value.
                let start = self.pos + 1;
                let key = scan::string_end(self.src, start)?;
                if key.escaped {
                    return None; // an escaped key may equal another spelled plainly
                }
                self.keys.push((start as u32, key.end as u32));
                self.pos = key.end + 1;
                self.skip_ws();
                if self.src.get(self.pos) != Some(&b':') {
                    return None;
                }
                self.pos += 1;
                self.skip_ws();
                let at = self.tape.len();
                self.value(depth + 1)?;
                self.tape[at].set_key_len(key.end - start);
                count += 1;
                self.skip_ws();
                match *self.src.get(self.pos)? {
                    b',' => {
                        self.pos += 1;
                        self.skip_ws();
                    }
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        self.pos += 1;
        if has_duplicate(self.src, &self.keys[keys_from..]) {
            return None; // serde_json keeps the last value at the first key's place
        }
        self.keys.truncate(keys_from);
        self.close(at, count)
    }

    /// An array's or object's entry, once its last element is read.
    fn close(&mut self, at: usize, count: u32) -> Option<()> {
        if count > MAX_ELEMENTS {
            return None;
        }
        let next = self.tape.len() as u32;
        let e = &mut self.tape[at];
        e.end = self.pos as u32;
        e.next = next;
        e.meta |= count << 8;
        Some(())
    }
}

fn has_duplicate(src: &[u8], keys: &[(u32, u32)]) -> bool {
    let text = |&(s, e): &(u32, u32)| &src[s as usize..e as usize];
    if keys.len() <= 16 {
        return keys
            .iter()
            .enumerate()
            .any(|(i, a)| keys[..i].iter().any(|b| text(a) == text(b)));
    }
    let mut seen = HashSet::with_capacity(keys.len());
    !keys.iter().all(|k| seen.insert(text(k)))
}
