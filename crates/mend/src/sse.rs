//! The server-sent-events splitter: bytes in, events out. The one place this crate
//! splits SSE: [`split_events`] over a whole stream and the incremental `Splitter`
//! that [`capture`](crate::canonical::capture) feeds chunk by chunk are the same code.
//!
//! Handles `\n`, `\r\n` and `\r` line ends (also cut between two chunks, even between
//! the `\r` and `\n` of one line end), multi-line `data:`, comments and a stream cut in
//! the middle of an event (an error with the byte where the event began). Offsets do not
//! depend on where the chunks were cut. It does not interpret the events; each dialect's
//! stream reader does.

use memchr::memchr2;

use crate::canonical::capture::{CaptureError, CaptureErrorKind};

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when present.
    pub event: Option<String>,
    /// The `data:` lines joined by `\n`.
    pub data: String,
    /// Byte offset where the event starts.
    pub offset: usize,
}

/// A stream that ends inside an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the stream ends inside an event that starts at byte {offset}")]
pub struct Truncated {
    /// Where the unfinished event starts.
    pub offset: usize,
    /// The events before it.
    pub complete: Vec<SseEvent>,
}

/// Split a whole stream into events. A final event without its blank line is reported
/// as `Truncated` (with the complete events before it). Bytes that are not UTF-8 are
/// read as U+FFFD, and offsets count the bytes of that reading.
pub fn split_events(bytes: &[u8]) -> Result<Vec<SseEvent>, Truncated> {
    let text = String::from_utf8_lossy(bytes);
    let mut events = Vec::new();
    let mut splitter = Splitter::new(usize::MAX).with_dataless_events();
    // Neither the size limit (there is none) nor UTF-8 (the text is) can fail, and the
    // callback never does.
    let _ = splitter.feed(text.as_bytes(), &mut |e: RawEvent<'_>| {
        events.push(SseEvent {
            event: e.name.map(str::to_string),
            data: e.data.to_string(),
            offset: e.offset,
        });
        Ok(())
    });
    match splitter.pending() {
        None => Ok(events),
        Some(offset) => Err(Truncated {
            offset,
            complete: events,
        }),
    }
}

/// One complete event, borrowed from the splitter until the callback returns.
#[derive(Debug)]
pub(crate) struct RawEvent<'a> {
    /// The `event:` field.
    pub name: Option<&'a str>,
    /// The `data:` lines joined by `\n`.
    pub data: &'a str,
    /// Stream offset of the event's first line.
    pub offset: usize,
}

#[derive(Debug)]
pub(crate) struct Splitter {
    /// An unfinished line carried over to the next chunk.
    carry: Vec<u8>,
    /// Stream offset of the carried line.
    carry_start: usize,
    /// Stream offset of the next byte fed.
    pos: usize,
    /// The last chunk ended with `\r`: a `\n` first in the next one ends the same line.
    skip_lf: bool,
    data: Vec<u8>,
    name: Option<String>,
    has_data: bool,
    /// Stream offset where the current event began.
    event_start: Option<usize>,
    max_event: usize,
    /// Deliver events that have fields but no `data:` line (with empty data).
    dataless: bool,
}

impl Splitter {
    pub(crate) fn new(max_event: usize) -> Splitter {
        Splitter {
            carry: Vec::new(),
            carry_start: 0,
            pos: 0,
            skip_lf: false,
            data: Vec::new(),
            name: None,
            has_data: false,
            event_start: None,
            max_event,
            dataless: false,
        }
    }

    /// Also deliver events without a `data:` line, with empty data (an `event:` or
    /// `id:` line alone).
    pub(crate) fn with_dataless_events(mut self) -> Splitter {
        self.dataless = true;
        self
    }

    /// Where the event that the bytes fed so far leave unfinished begins, if they leave
    /// one: an event with fields but no blank line yet, or a line with no line end (that
    /// is not a comment).
    pub(crate) fn pending(&self) -> Option<usize> {
        self.event_start.or_else(|| {
            (self.carry.first().is_some_and(|&b| b != b':')).then_some(self.carry_start)
        })
    }

    /// Bytes fed so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Feed bytes; `on_event` is called for each event they complete.
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        on_event: &mut dyn FnMut(RawEvent<'_>) -> Result<(), CaptureError>,
    ) -> Result<(), CaptureError> {
        let mut i = 0;
        if self.skip_lf && !bytes.is_empty() {
            self.skip_lf = false;
            if bytes[0] == b'\n' {
                i = 1;
            }
        }
        while i < bytes.len() {
            let Some(k) = memchr2(b'\n', b'\r', &bytes[i..]) else {
                if self.carry.is_empty() {
                    self.carry_start = self.pos + i;
                }
                self.carry.extend_from_slice(&bytes[i..]);
                if self.carry.len() + self.data.len() > self.max_event {
                    return Err(self.too_large());
                }
                break;
            };
            let end = i + k;
            let next = if bytes[end] == b'\r' {
                match bytes.get(end + 1) {
                    Some(b'\n') => end + 2,
                    Some(_) => end + 1,
                    None => {
                        self.skip_lf = true;
                        end + 1
                    }
                }
            } else {
                end + 1
            };
            if self.carry.is_empty() {
                self.line(&bytes[i..end], self.pos + i, on_event)?;
            } else {
                let mut line = std::mem::take(&mut self.carry);
                line.extend_from_slice(&bytes[i..end]);
                let start = self.carry_start;
                let r = self.line(&line, start, on_event);
                line.clear();
                self.carry = line;
                r?;
            }
            i = next;
        }
        self.pos += bytes.len();
        Ok(())
    }

    /// The stream ended. A final event whose lines are complete but which lacks its blank
    /// line is still delivered; a line cut short is an error.
    pub(crate) fn finish(
        &mut self,
        on_event: &mut dyn FnMut(RawEvent<'_>) -> Result<(), CaptureError>,
    ) -> Result<(), CaptureError> {
        if !self.carry.is_empty() {
            let at = self.event_start.unwrap_or(self.carry_start);
            return Err(CaptureError::new(
                CaptureErrorKind::Truncated,
                at,
                format!(
                    "the stream ends inside a line (byte {} of {}) of the event that starts here",
                    self.carry_start, self.pos
                ),
            ));
        }
        self.dispatch(on_event)
    }

    fn too_large(&self) -> CaptureError {
        CaptureError::new(
            CaptureErrorKind::TooLarge,
            self.event_start.unwrap_or(self.carry_start),
            format!(
                "an event larger than {} bytes (the limit for one event)",
                self.max_event
            ),
        )
    }

    fn line(
        &mut self,
        line: &[u8],
        start: usize,
        on_event: &mut dyn FnMut(RawEvent<'_>) -> Result<(), CaptureError>,
    ) -> Result<(), CaptureError> {
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                self.event_start.get_or_insert(start);
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
                if self.data.len() > self.max_event {
                    return Err(self.too_large());
                }
            }
            b"event" => {
                self.event_start.get_or_insert(start);
                self.name = Some(String::from_utf8_lossy(value).into_owned());
            }
            _ => {
                self.event_start.get_or_insert(start);
            }
        }
        Ok(())
    }

    fn dispatch(
        &mut self,
        on_event: &mut dyn FnMut(RawEvent<'_>) -> Result<(), CaptureError>,
    ) -> Result<(), CaptureError> {
        let offset = self.event_start.take();
        let name = self.name.take();
        let deliver = self.has_data || (self.dataless && offset.is_some());
        if !deliver {
            return Ok(());
        }
        self.has_data = false;
        let offset = offset.unwrap_or(self.pos);
        let r = match std::str::from_utf8(&self.data) {
            Ok(data) => on_event(RawEvent {
                name: name.as_deref(),
                data,
                offset,
            }),
            Err(e) => Err(CaptureError::new(
                CaptureErrorKind::Malformed,
                offset,
                format!(
                    "the event's data is not UTF-8 (byte {} of its data)",
                    e.valid_up_to()
                ),
            )),
        };
        self.data.clear();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lf_and_crlf_streams() {
        let evs = split_events(b"event: a\ndata: {\"x\":1}\n\n: ping\n\ndata: 2\r\n\r\n").unwrap();
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[0].event.as_deref(), Some("a"));
        assert_eq!(evs[0].data, "{\"x\":1}");
        assert_eq!(evs[1].data, "2");
    }

    #[test]
    fn a_cut_stream_says_where() {
        let e = split_events(b"data: 1\n\ndata: {\"x\"").unwrap_err();
        assert_eq!(e.offset, 9);
        assert_eq!(e.complete.len(), 1);
    }

    fn split(chunks: &[&[u8]]) -> Result<Vec<(Option<String>, String, usize)>, CaptureError> {
        let mut s = Splitter::new(1 << 20);
        let mut out = Vec::new();
        let mut f = |e: RawEvent<'_>| {
            out.push((e.name.map(str::to_string), e.data.to_string(), e.offset));
            Ok(())
        };
        for c in chunks {
            s.feed(c, &mut f)?;
        }
        s.finish(&mut f)?;
        Ok(out)
    }

    #[test]
    fn line_ends_cut_between_chunks_are_one_line_end() {
        let whole = split(&[b"event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n"]).unwrap();
        let cut = split(&[b"event: a\r", b"\ndata: 1\r", b"\n\r", b"\ndata: 2\r\n\r\n"]).unwrap();
        assert_eq!(whole, cut);
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[1], (None, "2".into(), 21));
    }

    #[test]
    fn comments_and_multi_line_data() {
        let evs = split(&[b": ping\n\ndata: a\ndata: b\n\n"]).unwrap();
        assert_eq!(evs, vec![(None, "a\nb".into(), 8)]);
    }

    #[test]
    fn a_line_cut_short_is_an_error_with_the_event_start() {
        let e = split(&[b"data: 1\n\ndata: {\"x\""]).unwrap_err();
        assert_eq!(e.kind, CaptureErrorKind::Truncated);
        assert_eq!(e.offset, 9);
    }

    #[test]
    fn a_final_event_without_its_blank_line_is_delivered() {
        assert_eq!(split(&[b"data: 1\n"]).unwrap().len(), 1);
    }

    #[test]
    fn an_oversized_event_is_refused_early() {
        let mut s = Splitter::new(16);
        let e = s
            .feed(&[b'x'; 64], &mut |_e: RawEvent<'_>| Ok(()))
            .unwrap_err();
        assert_eq!(e.kind, CaptureErrorKind::TooLarge);
    }
}
