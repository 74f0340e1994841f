//! A server-sent-events splitter: bytes in, events out.
//!
//! Handles `\n`, `\r\n` and `\r` line ends, multi-line `data:`, comments and a stream cut
//! in the middle of an event (returned as an error with the byte where the event began).
//! It does not interpret the events; each dialect's stream reader does.

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
/// as [`Truncated`] (with the complete events before it).
pub fn split_events(bytes: &[u8]) -> Result<Vec<SseEvent>, Truncated> {
    let text = String::from_utf8_lossy(bytes);
    let mut events = Vec::new();
    let mut cur: Option<SseEvent> = None;
    let mut pos = 0usize;
    let mut rest: &str = &text;
    while !rest.is_empty() {
        let (line, consumed) = match rest.find(['\n', '\r']) {
            Some(i) => {
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                (&rest[..i], i + skip)
            }
            None => (rest, rest.len()),
        };
        let ended = consumed > line.len();
        let start = pos;
        pos += consumed;
        rest = &rest[consumed..];
        if line.is_empty() {
            if ended {
                if let Some(ev) = cur.take() {
                    events.push(ev);
                }
            }
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        let ev = cur.get_or_insert_with(|| SseEvent {
            event: None,
            data: String::new(),
            offset: start,
        });
        match field {
            "event" => ev.event = Some(value.to_string()),
            "data" => {
                if !ev.data.is_empty() {
                    ev.data.push('\n');
                }
                ev.data.push_str(value);
            }
            _ => {}
        }
        if !ended {
            break;
        }
    }
    match cur {
        None => Ok(events),
        Some(ev) => Err(Truncated {
            offset: ev.offset,
            complete: events,
        }),
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
}
