//! The AWS event-stream framing (`application/vnd.amazon.eventstream`), which Bedrock's
//! `converse-stream` answers with: bytes in, frames out, incrementally. The one place
//! this crate splits or writes such frames; [`split_frames`] runs the splitter over a
//! whole stream and [`encode_frame`] writes one frame (for tests, benches and mocks).
//!
//! A frame is `[total length u32 BE][headers length u32 BE][CRC-32 of those 8 bytes]
//! [headers][payload][CRC-32 of everything before it]`. A header is `name length u8,
//! name, type u8, value`; the value of a string (type 7) or byte array (6) is `length
//! u16 BE` then bytes; the other types have a fixed width (bools none, byte 1, short 2,
//! int 4, long 8, timestamp 8, UUID 16). Only string headers are kept; the others are
//! skipped by their width.
//!
//! Invariant: bad input never panics and never makes it allocate what the input claims:
//! the prelude's CRC is checked as soon as its 12 bytes are in, before its length is
//! believed, and a frame longer than the limit is refused before it is read. Offsets
//! count bytes from the start of the stream, whatever the chunking.

use crate::canonical::capture::{CaptureError, CaptureErrorKind};

/// The prelude: total length, headers length, their CRC.
const PRELUDE: usize = 12;
/// Prelude plus the message CRC: the smallest frame.
const MIN_FRAME: usize = PRELUDE + 4;

/// One frame: its string headers in order, its payload, where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The string headers (`:event-type`, `:message-type`, `:content-type`...), in order.
    pub headers: Vec<(String, String)>,
    /// The payload bytes (JSON for Converse).
    pub payload: Vec<u8>,
    /// Byte offset of the frame in the stream.
    pub offset: usize,
}

impl Frame {
    /// The value of a string header.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One frame of string headers and a payload, with both CRCs.
///
/// ```
/// use mend::canonical::capture::{encode_frame, split_frames};
/// let bytes = encode_frame(&[(":event-type", "messageStart")], br#"{"role":"assistant"}"#);
/// let frames = split_frames(&bytes).unwrap();
/// assert_eq!(frames[0].header(":event-type"), Some("messageStart"));
/// ```
pub fn encode_frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (name, value) in headers {
        // Names are at most 255 bytes and string values 65,535 (the format's widths).
        let name = &name.as_bytes()[..name.len().min(255)];
        let value = &value.as_bytes()[..value.len().min(u16::MAX as usize)];
        h.push(name.len() as u8);
        h.extend_from_slice(name);
        h.push(7);
        h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        h.extend_from_slice(value);
    }
    let total = MIN_FRAME + h.len() + payload.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(h.len() as u32).to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Split a whole event stream into frames; the first bad or unfinished frame is an
/// error that says where it starts.
pub fn split_frames(bytes: &[u8]) -> Result<Vec<Frame>, CaptureError> {
    let mut frames = Vec::new();
    let mut s = Splitter::new(usize::MAX);
    s.feed(bytes, &mut |f| {
        frames.push(f);
        Ok(())
    })?;
    match s.pending() {
        None => Ok(frames),
        Some(at) => Err(s.cut(at)),
    }
}

/// The incremental splitter [`StreamCapture`](crate::StreamCapture) feeds.
#[derive(Debug)]
pub(crate) struct Splitter {
    /// Bytes of the unfinished frame (the stream from `start` on).
    buf: Vec<u8>,
    /// Stream offset of `buf[0]`.
    start: usize,
    max_frame: usize,
}

fn be32(b: &[u8], at: usize) -> usize {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
}

fn malformed(offset: usize, reason: impl Into<String>) -> CaptureError {
    CaptureError::new(CaptureErrorKind::Malformed, offset, reason)
}

impl Splitter {
    pub(crate) fn new(max_frame: usize) -> Splitter {
        Splitter {
            buf: Vec::new(),
            start: 0,
            max_frame,
        }
    }

    /// Stream offset of the next byte fed.
    pub(crate) fn position(&self) -> usize {
        self.start + self.buf.len()
    }

    /// Where the unfinished frame starts, when bytes of one are waiting.
    pub(crate) fn pending(&self) -> Option<usize> {
        (!self.buf.is_empty()).then_some(self.start)
    }

    /// The error for a stream that ends inside the frame at `at`.
    pub(crate) fn cut(&self, at: usize) -> CaptureError {
        let have = self.buf.len();
        let want = if have >= PRELUDE {
            format!("{} bytes", be32(&self.buf, 0))
        } else {
            "a 12-byte prelude".to_string()
        };
        CaptureError::new(
            CaptureErrorKind::Truncated,
            at,
            format!(
                "the stream ends inside an event-stream frame that starts at byte {at} ({have} bytes of {want})"
            ),
        )
    }

    /// Feed bytes; `on_frame` gets each frame they complete.
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        on_frame: &mut dyn FnMut(Frame) -> Result<(), CaptureError>,
    ) -> Result<(), CaptureError> {
        let mut rest = bytes;
        loop {
            // Take only what the frame at hand needs: its prelude, then its length.
            let need = if self.buf.len() < PRELUDE {
                PRELUDE
            } else {
                self.check_prelude()?
            };
            let take = (need - self.buf.len()).min(rest.len());
            self.buf.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.buf.len() < need {
                return Ok(());
            }
            if need == PRELUDE {
                continue;
            }
            let frame = self.frame()?;
            self.start += self.buf.len();
            self.buf.clear();
            on_frame(frame)?;
        }
    }

    /// The prelude's CRC and lengths, once its 12 bytes are in: the frame's length.
    fn check_prelude(&self) -> Result<usize, CaptureError> {
        let b = &self.buf;
        let at = self.start;
        let crc = be32(b, 8) as u32;
        if crc32fast::hash(&b[..8]) != crc {
            return Err(malformed(
                at,
                format!("the event-stream frame at byte {at} has a bad prelude CRC (not an AWS event stream, or damaged)"),
            ));
        }
        let (total, headers) = (be32(b, 0), be32(b, 4));
        if total < MIN_FRAME || headers > total - MIN_FRAME {
            return Err(malformed(
                at,
                format!("the event-stream frame at byte {at} claims {total} bytes with {headers} bytes of headers"),
            ));
        }
        if total > self.max_frame {
            return Err(CaptureError::new(
                CaptureErrorKind::TooLarge,
                at,
                format!(
                    "the event-stream frame at byte {at} is {total} bytes, over the limit of {}",
                    self.max_frame
                ),
            ));
        }
        Ok(total)
    }

    /// The whole frame in `buf`: its CRC checked, its headers read.
    fn frame(&self) -> Result<Frame, CaptureError> {
        let b = &self.buf;
        let at = self.start;
        let n = b.len();
        if crc32fast::hash(&b[..n - 4]) != be32(b, n - 4) as u32 {
            return Err(malformed(
                at,
                format!("the event-stream frame at byte {at} has a bad message CRC"),
            ));
        }
        let headers_end = PRELUDE + be32(b, 4);
        let headers = read_headers(&b[PRELUDE..headers_end]).map_err(|why| {
            malformed(
                at,
                format!("the event-stream frame at byte {at} has bad headers: {why}"),
            )
        })?;
        Ok(Frame {
            headers,
            payload: b[headers_end..n - 4].to_vec(),
            offset: at,
        })
    }
}

/// The string headers of a frame; the others skipped by their width.
fn read_headers(mut h: &[u8]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let take = |h: &mut &[u8], n: usize, what: &str| -> Result<Vec<u8>, String> {
        if h.len() < n {
            return Err(format!("{what} runs past the headers"));
        }
        let (a, b) = h.split_at(n);
        *h = b;
        Ok(a.to_vec())
    };
    while !h.is_empty() {
        let len = take(&mut h, 1, "a name length")?[0] as usize;
        let name = take(&mut h, len, "a name")?;
        let name = String::from_utf8(name).map_err(|_| "a name is not UTF-8".to_string())?;
        let ty = take(&mut h, 1, "a value type")?[0];
        let width = match ty {
            0 | 1 => 0,
            2 => 1,
            3 => 2,
            4 => 4,
            5 | 8 => 8,
            9 => 16,
            6 | 7 => {
                let l = take(&mut h, 2, "a value length")?;
                u16::from_be_bytes([l[0], l[1]]) as usize
            }
            other => return Err(format!("header {name} has the unknown value type {other}")),
        };
        let value = take(&mut h, width, "a value")?;
        if ty == 7 {
            let v = String::from_utf8(value)
                .map_err(|_| format!("header {name}'s string value is not UTF-8"))?;
            out.push((name, v));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames_in_chunks(bytes: &[u8], size: usize) -> Result<Vec<Frame>, CaptureError> {
        let mut out = Vec::new();
        let mut s = Splitter::new(1 << 20);
        for c in bytes.chunks(size) {
            s.feed(c, &mut |f| {
                out.push(f);
                Ok(())
            })?;
        }
        match s.pending() {
            None => Ok(out),
            Some(at) => Err(s.cut(at)),
        }
    }

    #[test]
    fn frames_split_anywhere_read_the_same() {
        let mut bytes = encode_frame(&[(":event-type", "a"), ("x", "y")], b"{\"n\":1}");
        let second = bytes.len();
        bytes.extend(encode_frame(&[(":event-type", "b")], b""));
        let whole = split_frames(&bytes).unwrap();
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[0].header("x"), Some("y"));
        assert_eq!(whole[0].payload, b"{\"n\":1}");
        assert_eq!(whole[1].offset, second);
        for size in 1..bytes.len() {
            assert_eq!(
                frames_in_chunks(&bytes, size).unwrap(),
                whole,
                "chunks of {size}"
            );
        }
    }

    #[test]
    fn other_header_types_are_skipped_by_their_width() {
        // A frame built by hand: a bool, an int, a byte array, a UUID, then a string.
        let mut h = Vec::new();
        for (name, ty, value) in [
            ("t", 0u8, vec![]),
            ("i", 4, vec![0, 0, 0, 7]),
            ("b", 6, vec![0, 2, 9, 9]),
            ("u", 9, vec![1; 16]),
            ("s", 7, vec![0, 2, b'o', b'k']),
        ] {
            h.push(name.len() as u8);
            h.extend_from_slice(name.as_bytes());
            h.push(ty);
            h.extend(value);
        }
        let total = MIN_FRAME + h.len();
        let mut f = (total as u32).to_be_bytes().to_vec();
        f.extend((h.len() as u32).to_be_bytes());
        f.extend(crc32fast::hash(&f).to_be_bytes());
        f.extend(&h);
        f.extend(crc32fast::hash(&f).to_be_bytes());
        let frames = split_frames(&f).unwrap();
        assert_eq!(frames[0].headers, [("s".to_string(), "ok".to_string())]);
        // A value type past 9 is refused, not guessed.
        let mut bad = f.clone();
        bad[PRELUDE + 2] = 42;
        let n = bad.len();
        let crc = crc32fast::hash(&bad[..n - 4]).to_be_bytes();
        bad[n - 4..].copy_from_slice(&crc);
        let e = split_frames(&bad).unwrap_err();
        assert_eq!(e.kind, CaptureErrorKind::Malformed, "{e}");
        assert!(e.reason.contains("unknown value type 42"), "{e}");
    }

    #[test]
    fn bad_crcs_lengths_and_cuts_say_where() {
        let one = encode_frame(&[(":event-type", "a")], b"{}");
        let mut two = one.clone();
        two.extend(&one);
        // A flipped payload byte: the message CRC, at the second frame.
        let mut bad = two.clone();
        let last = bad.len() - 5;
        bad[last] ^= 1;
        let e = split_frames(&bad).unwrap_err();
        assert_eq!((e.kind, e.offset), (CaptureErrorKind::Malformed, one.len()));
        assert!(e.reason.contains("message CRC"), "{e}");
        // A length of 4 GB with a valid prelude CRC is refused by the limit before
        // anything is read for it.
        let mut huge = Vec::from(u32::MAX.to_be_bytes());
        huge.extend(0u32.to_be_bytes());
        huge.extend(crc32fast::hash(&huge).to_be_bytes());
        let e = Splitter::new(1 << 20)
            .feed(&huge, &mut |_| Ok(()))
            .unwrap_err();
        assert_eq!(e.kind, CaptureErrorKind::TooLarge, "{e}");
        // The same length with a bad prelude CRC is not an event stream.
        huge[11] ^= 1;
        let e = split_frames(&huge).unwrap_err();
        assert!(e.reason.contains("prelude CRC"), "{e}");
        // Headers longer than the frame.
        let mut lie = Vec::from(16u32.to_be_bytes());
        lie.extend(1u32.to_be_bytes());
        lie.extend(crc32fast::hash(&lie).to_be_bytes());
        let e = split_frames(&lie).unwrap_err();
        assert!(e.reason.contains("claims 16 bytes"), "{e}");
        // A cut: truncated, at the start of the unfinished frame, at every cut point.
        for cut in 1..two.len() {
            if cut == one.len() {
                continue;
            }
            let e = split_frames(&two[..cut]).unwrap_err();
            let frame_start = if cut < one.len() { 0 } else { one.len() };
            assert_eq!(
                (e.kind, e.offset),
                (CaptureErrorKind::Truncated, frame_start),
                "cut at {cut}: {e}"
            );
        }
    }
}
