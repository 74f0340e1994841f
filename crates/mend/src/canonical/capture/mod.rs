//! Capture: a provider's response, non-streaming or streamed, as canonical assistant
//! messages with every provider id, signature and encrypted payload kept.
//!
//! [`read_response`] reads a whole response body; [`StreamCapture`] reads a stream
//! incrementally (bytes in any chunking give the same result) and [`read_stream`] is the
//! same over a whole stream. Streams are SSE, but for Bedrock Converse, whose
//! `converse-stream` answers binary AWS event-stream frames ([`split_frames`]). Both give a [`Reply`]: the messages in output order, the
//! response's own fields (model, usage, stop reason...), and any stream events this
//! crate does not know, kept verbatim. Each message is what a client sends back in its
//! next request: reading it with the dialect's request reader would give the same parts.
//!
//! Invariant: capture never panics and never loses a part it cannot model (it becomes an
//! opaque part). A stream that ends early, is not SSE (or, for Converse, not event-stream
//! frames with valid CRCs), carries malformed JSON, belongs to another dialect, or
//! reports a provider error gives a [`CaptureError`] with the byte offset where it went
//! wrong; an unknown event type is not an error.

pub use crate::eventstream::{encode_frame, split_frames, Frame};
pub use crate::sse::split_events;

use serde_json::{Map, Value};

pub(crate) use super::rest as without;
use super::{Extra, Message};
use crate::dialect::kind_of;
use crate::Dialect;

use crate::dialect::anthropic::capture as anthropic;
use crate::dialect::bedrock_converse::capture as bedrock_converse;
use crate::dialect::gemini::capture as gemini;
use crate::dialect::openai_chat::capture as openai_chat;
use crate::dialect::openai_responses::capture as openai_responses;

use crate::eventstream;
use crate::sse;

/// A captured response.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// The assistant messages (for OpenAI Responses one per output item; for chat and
    /// Gemini one per choice or candidate), in output order.
    pub messages: Vec<Message>,
    /// The response's own fields other than its content (`id`, `model`, `usage`,
    /// `stop_reason` / `status`...), verbatim; for a stream, as the events left them.
    pub meta: Extra,
    /// Stream events of a type this crate does not know, verbatim and in order.
    pub unknown: Vec<Value>,
}

/// What a response says it used, and which model answered: as far as it says (a chat
/// stream carries usage only when asked with `stream_options.include_usage`; a Converse
/// response names no model). Read from a [`Reply`]'s fields with [`Reply::usage`], each
/// dialect's field names in its own capture module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    /// Input tokens, those read from or written to a prompt cache included.
    pub input_tokens: Option<u64>,
    /// Output tokens, reasoning (thinking) tokens included.
    pub output_tokens: Option<u64>,
    /// The model that answered, as the provider names it.
    pub model: Option<String>,
    /// The provider's id for the response.
    pub response_id: Option<String>,
}

impl Reply {
    /// The usage and the model the response reports, read from its fields
    /// ([`Reply::meta`]) by the dialect's rules.
    pub fn usage(&self, dialect: Dialect) -> Usage {
        match dialect {
            Dialect::OpenAiChat => openai_chat::usage(&self.meta),
            Dialect::OpenAiResponses => openai_responses::usage(&self.meta),
            Dialect::Anthropic => anthropic::usage(&self.meta),
            Dialect::Gemini => gemini::usage(&self.meta),
            Dialect::BedrockConverse => bedrock_converse::usage(&self.meta),
        }
    }
}

/// A count at a pointer (`/usage/input_tokens`) into a reply's fields.
pub(crate) fn count_at(meta: &Extra, pointer: &str) -> Option<u64> {
    let mut keys = pointer.split('/').filter(|k| !k.is_empty());
    let mut v = meta.get(keys.next()?)?;
    for k in keys {
        v = v.get(k)?;
    }
    v.as_u64()
}

/// The sum of the counts found at some pointers, `None` when none is there.
pub(crate) fn sum_at(meta: &Extra, pointers: &[&str]) -> Option<u64> {
    pointers
        .iter()
        .filter_map(|p| count_at(meta, p))
        .reduce(u64::saturating_add)
}

/// A string field of a reply.
pub(crate) fn string_at(meta: &Extra, key: &str) -> Option<String> {
    meta.get(key).and_then(Value::as_str).map(str::to_string)
}

/// What went wrong with a response or stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureErrorKind {
    /// The stream ends before the response is complete.
    Truncated,
    /// Not JSON, not SSE (not event-stream frames with valid CRCs, for Converse), not
    /// UTF-8, or not the dialect's shape.
    Malformed,
    /// A response or stream of another dialect.
    WrongDialect,
    /// The provider reported an error (an error body, or an error event in a stream).
    Provider,
    /// One event is larger than the configured limit.
    TooLarge,
}

/// Why a response or stream could not be captured, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason} (at byte {offset})")]
pub struct CaptureError {
    /// What kind of failure.
    pub kind: CaptureErrorKind,
    /// Byte offset in the response or stream: the start of the offending event, or the
    /// end of a stream that ends early.
    pub offset: usize,
    /// What and why, in a sentence.
    pub reason: String,
    /// The provider's error object, verbatim, for [`CaptureErrorKind::Provider`].
    pub provider_error: Option<Value>,
}

impl CaptureError {
    pub(crate) fn new(kind: CaptureErrorKind, offset: usize, reason: impl Into<String>) -> Self {
        CaptureError {
            kind,
            offset,
            reason: reason.into(),
            provider_error: None,
        }
    }

    pub(crate) fn provider(offset: usize, error: &Value) -> Self {
        let text = describe_error(error);
        CaptureError {
            kind: CaptureErrorKind::Provider,
            offset,
            reason: format!("the provider reported an error: {text}"),
            provider_error: Some(error.clone()),
        }
    }
}

/// `type: message` of a provider error object, as far as it has them.
fn describe_error(e: &Value) -> String {
    let inner = e.get("error").filter(|v| v.is_object()).unwrap_or(e);
    let s = |k: &str| {
        inner.get(k).and_then(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    };
    let kind = s("type").or_else(|| s("code")).or_else(|| s("status"));
    match (kind, s("message")) {
        (Some(k), Some(m)) => format!("{k}: {m}"),
        (None, Some(m)) => m,
        (Some(k), None) => k,
        (None, None) => inner.to_string(),
    }
}

/// The default limit for one stream event (a base64 image in one event can be large).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 32 * 1024 * 1024;

/// Read a whole non-streaming response body of `dialect`.
pub fn read_response(dialect: Dialect, bytes: &[u8]) -> Result<Reply, CaptureError> {
    let trimmed = bytes.trim_ascii_start();
    if trimmed.starts_with(b"data:") || trimmed.starts_with(b"event:") {
        return Err(CaptureError::new(
            CaptureErrorKind::Malformed,
            0,
            "this is an SSE stream, not a JSON response body; read it with read_stream",
        ));
    }
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        let (kind, what) = if e.is_eof() {
            (CaptureErrorKind::Truncated, "the response body ends early")
        } else {
            (CaptureErrorKind::Malformed, "the response body is not JSON")
        };
        let at = if e.is_eof() {
            bytes.len()
        } else {
            byte_offset(bytes, e.line(), e.column())
        };
        CaptureError::new(
            kind,
            at,
            format!(
                "{what}: {} (line {}, column {})",
                e.to_string().split(" at line ").next().unwrap_or_default(),
                e.line(),
                e.column()
            ),
        )
    })?;
    read_response_value(dialect, &v)
}

/// Read a parsed non-streaming response of `dialect`. Offsets in errors are 0.
pub fn read_response_value(dialect: Dialect, body: &Value) -> Result<Reply, CaptureError> {
    if let Some(e) = error_in_body(dialect, body) {
        return Err(CaptureError::provider(0, e));
    }
    let wrong = |what: &str| {
        let mut reason = format!("not a {dialect} response: {what}");
        if let Some(d) = sniff_response(body).filter(|d| *d != dialect) {
            reason.push_str(&format!("; it looks like a {d} response"));
            return CaptureError::new(CaptureErrorKind::WrongDialect, 0, reason);
        }
        CaptureError::new(CaptureErrorKind::Malformed, 0, reason)
    };
    if let Value::Array(chunks) = body {
        if dialect == Dialect::Gemini {
            return gemini::read_chunks(chunks);
        }
        return Err(wrong("the body is an array"));
    }
    let Some(o) = body.as_object() else {
        return Err(wrong(&format!("the body is {}", kind_of(body))));
    };
    let r = match dialect {
        Dialect::OpenAiChat => openai_chat::read_response(o),
        Dialect::OpenAiResponses => openai_responses::read_response(o),
        Dialect::Anthropic => anthropic::read_response(o),
        Dialect::Gemini => gemini::read_response(o),
        Dialect::BedrockConverse => bedrock_converse::read_response(o),
    };
    r.map_err(|what| wrong(&what))
}

/// The error object of an error body, if it is one. AWS's is `{"message"}` alone (the
/// type in the `x-amzn-ErrorType` header, sometimes `__type` too).
fn error_in_body(dialect: Dialect, body: &Value) -> Option<&Value> {
    let o = body.as_object()?;
    if dialect == Dialect::BedrockConverse
        && !o.contains_key("output")
        && ["message", "Message"]
            .iter()
            .any(|k| o.get(*k).is_some_and(Value::is_string))
    {
        return Some(body);
    }
    if o.get("type").and_then(Value::as_str) == Some("error") {
        return Some(body);
    }
    match o.get("error") {
        Some(e) if !e.is_null() && !o.contains_key("output") => Some(body),
        _ => None,
    }
}

/// Which dialect a response body looks like.
fn sniff_response(body: &Value) -> Option<Dialect> {
    match body {
        Value::Array(a) => a.first().and_then(sniff_response),
        Value::Object(o) => {
            if o.contains_key("choices") {
                Some(Dialect::OpenAiChat)
            } else if o
                .get("output")
                .is_some_and(|out| out.get("message").is_some())
            {
                Some(Dialect::BedrockConverse)
            } else if o.contains_key("output")
                || o.get("object").and_then(Value::as_str) == Some("response")
            {
                Some(Dialect::OpenAiResponses)
            } else if o.get("type").and_then(Value::as_str) == Some("message") {
                Some(Dialect::Anthropic)
            } else if o.contains_key("candidates") || o.contains_key("usageMetadata") {
                Some(Dialect::Gemini)
            } else {
                sniff_event(body)
            }
        }
        _ => None,
    }
}

/// Which dialect a stream event looks like.
fn sniff_event(v: &Value) -> Option<Dialect> {
    let o = v.as_object()?;
    if let Some(t) = o.get("type").and_then(Value::as_str) {
        if t.starts_with("response.") {
            return Some(Dialect::OpenAiResponses);
        }
        if matches!(
            t,
            "message_start"
                | "message_delta"
                | "message_stop"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "ping"
        ) {
            return Some(Dialect::Anthropic);
        }
    }
    if o.contains_key("choices")
        || o.get("object").and_then(Value::as_str) == Some("chat.completion.chunk")
    {
        return Some(Dialect::OpenAiChat);
    }
    if o.contains_key("candidates") || o.contains_key("usageMetadata") {
        return Some(Dialect::Gemini);
    }
    None
}

fn byte_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    if line == 0 {
        return 0;
    }
    let mut at = 0;
    for _ in 1..line {
        match memchr::memchr(b'\n', &bytes[at..]) {
            Some(i) => at += i + 1,
            None => return bytes.len(),
        }
    }
    (at + column.saturating_sub(1)).min(bytes.len())
}

/// One parsed stream event.
pub(crate) struct Event<'a> {
    /// The `event:` field.
    pub name: Option<&'a str>,
    /// The JSON data.
    pub data: Value,
    /// Stream offset of the event.
    pub offset: usize,
}

/// A dialect's stream reader.
#[derive(Debug)]
enum State {
    Chat(openai_chat::Stream),
    Responses(openai_responses::Stream),
    Anthropic(anthropic::Stream),
    Gemini(gemini::Stream),
    /// Converse reads frames, not SSE events ([`State::frame`]).
    Converse(bedrock_converse::Stream),
}

impl State {
    fn event(&mut self, ev: Event<'_>) -> Result<(), CaptureError> {
        match self {
            State::Chat(s) => s.event(ev),
            State::Responses(s) => s.event(ev),
            State::Anthropic(s) => s.event(ev),
            State::Gemini(s) => s.event(ev),
            State::Converse(_) => Err(malformed(
                ev.offset,
                "a bedrock_converse stream is event-stream frames, not SSE",
            )),
        }
    }

    fn frame(&mut self, f: eventstream::Frame) -> Result<(), CaptureError> {
        match self {
            State::Converse(s) => s.frame(f),
            _ => Err(malformed(
                f.offset,
                "an event-stream frame in a stream of an SSE dialect",
            )),
        }
    }

    fn is_complete(&self) -> bool {
        match self {
            State::Chat(s) => s.is_complete(),
            State::Responses(s) => s.is_complete(),
            State::Anthropic(s) => s.is_complete(),
            State::Gemini(s) => s.is_complete(),
            State::Converse(s) => s.is_complete(),
        }
    }

    fn finish(self, end: usize) -> Result<Reply, CaptureError> {
        match self {
            State::Chat(s) => s.finish(end),
            State::Responses(s) => s.finish(end),
            State::Anthropic(s) => s.finish(end),
            State::Gemini(s) => s.finish(end),
            State::Converse(s) => s.finish(end),
        }
    }
}

/// How a stream is cut into events.
#[derive(Debug)]
enum Framing {
    Sse(sse::Splitter),
    Frames(eventstream::Splitter),
}

impl Framing {
    fn new(dialect: Dialect, max: usize) -> Framing {
        match dialect {
            Dialect::BedrockConverse => Framing::Frames(eventstream::Splitter::new(max)),
            _ => Framing::Sse(sse::Splitter::new(max)),
        }
    }

    fn position(&self) -> usize {
        match self {
            Framing::Sse(s) => s.position(),
            Framing::Frames(s) => s.position(),
        }
    }
}

/// An incremental reader of one stream of a dialect: SSE, or for Bedrock Converse AWS
/// event-stream frames.
///
/// ```
/// use mend::canonical::capture::StreamCapture;
/// let mut cap = StreamCapture::new(mend::Dialect::Anthropic);
/// let stream = concat!(
///     "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",",
///     "\"role\":\"assistant\",\"content\":[]}}\n\n",
///     "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
///     "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
///     "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
///     "data: {\"type\":\"message_stop\"}\n\n");
/// for chunk in stream.as_bytes().chunks(7) {
///     cap.feed(chunk).unwrap();
/// }
/// let reply = cap.finish().unwrap();
/// assert_eq!(reply.messages[0].text(), "Hi");
/// assert_eq!(reply.messages[0].meta["response_id"], "msg_1");
/// ```
#[derive(Debug)]
pub struct StreamCapture {
    dialect: Dialect,
    framing: Framing,
    state: State,
    events: usize,
    /// The first byte fed that is not white space (`{` or `[` means a JSON body).
    first: Option<u8>,
    error: Option<CaptureError>,
}

impl StreamCapture {
    /// A reader for a stream of `dialect`.
    pub fn new(dialect: Dialect) -> StreamCapture {
        let state = match dialect {
            Dialect::OpenAiChat => State::Chat(openai_chat::Stream::default()),
            Dialect::OpenAiResponses => State::Responses(openai_responses::Stream::default()),
            Dialect::Anthropic => State::Anthropic(anthropic::Stream::default()),
            Dialect::Gemini => State::Gemini(gemini::Stream::default()),
            Dialect::BedrockConverse => State::Converse(bedrock_converse::Stream::default()),
        };
        StreamCapture {
            dialect,
            framing: Framing::new(dialect, DEFAULT_MAX_EVENT_BYTES),
            state,
            events: 0,
            first: None,
            error: None,
        }
    }

    /// Refuse any single event (or event-stream frame) larger than `bytes` (default
    /// [`DEFAULT_MAX_EVENT_BYTES`]). Set it before feeding.
    pub fn max_event_bytes(mut self, bytes: usize) -> StreamCapture {
        self.framing = Framing::new(self.dialect, bytes);
        self
    }

    /// The dialect read.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Events read so far.
    pub fn events(&self) -> usize {
        self.events
    }

    /// Feed the next bytes of the stream; returns how many events they completed. After an
    /// error every call returns the same error.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<usize, CaptureError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.first.is_none() {
            self.first = bytes.iter().copied().find(|b| !b.is_ascii_whitespace());
        }
        let before = self.events;
        let json_body = before == 0 && self.first == Some(b'{');
        // SSE where frames were expected (no frame starts with a letter or `:`): split it
        // as SSE, so its first event says which dialect it is.
        if matches!(self.framing, Framing::Frames(ref f) if f.position() == 0)
            && self
                .first
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b':')
        {
            self.framing = Framing::Sse(sse::Splitter::new(DEFAULT_MAX_EVENT_BYTES));
        }
        let (dialect, state, events) = (self.dialect, &mut self.state, &mut self.events);
        let r = match &mut self.framing {
            Framing::Sse(sse) => {
                sse.feed(bytes, &mut |raw| on_raw_event(dialect, state, events, raw))
            }
            // A JSON body where frames were expected: no frame is 2 GB long, so a first
            // byte `{` is never a frame's.
            Framing::Frames(_) if json_body => Err(CaptureError::new(
                CaptureErrorKind::Malformed,
                0,
                "this is a JSON body, not an event stream; read it with read_response",
            )),
            Framing::Frames(fr) => fr.feed(bytes, &mut |f| {
                *events += 1;
                state.frame(f)
            }),
        };
        if let Err(e) = &r {
            self.error = Some(e.clone());
        }
        r.map(|()| self.events - before)
    }

    /// Whether the events fed so far end the response: its terminal event came (chat's
    /// `[DONE]` or every choice's `finish_reason`, Responses' `response.completed` or
    /// `response.incomplete`, Anthropic's `message_stop`, every Gemini candidate's
    /// `finishReason`, Converse's `messageStop`) and nothing was wrong, so [`finish`]
    /// now gives the reply whole; what may still follow (a usage chunk, `[DONE]`,
    /// Converse's `metadata`) does not change its messages. A gateway uses it to know
    /// which chunk ends a stream before the stream closes.
    ///
    /// [`finish`]: StreamCapture::finish
    pub fn is_complete(&self) -> bool {
        self.error.is_none() && self.state.is_complete()
    }

    /// The stream ended: the captured reply, or why it is incomplete or wrong.
    pub fn finish(mut self) -> Result<Reply, CaptureError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let end = self.framing.position();
        if self.events == 0 && matches!(self.first, Some(b'{' | b'[')) {
            return Err(CaptureError::new(
                CaptureErrorKind::Malformed,
                0,
                "this is a JSON body, not an SSE stream; read it with read_response",
            ));
        }
        let (dialect, state, events) = (self.dialect, &mut self.state, &mut self.events);
        match &mut self.framing {
            Framing::Sse(sse) => {
                sse.finish(&mut |raw| on_raw_event(dialect, state, events, raw))?
            }
            Framing::Frames(fr) => {
                if let Some(at) = fr.pending() {
                    return Err(fr.cut(at));
                }
            }
        }
        if self.events == 0 {
            let reason = if end == 0 {
                "the stream is empty".to_string()
            } else {
                match self.framing {
                    Framing::Sse(_) => format!(
                        "no SSE `data:` event in {end} bytes (a JSON response body? read it with read_response)"
                    ),
                    Framing::Frames(_) => format!("no event-stream frame in {end} bytes"),
                }
            };
            let kind = if end == 0 {
                CaptureErrorKind::Truncated
            } else {
                CaptureErrorKind::Malformed
            };
            return Err(CaptureError::new(kind, end, reason));
        }
        self.state.finish(end)
    }
}

fn on_raw_event(
    dialect: Dialect,
    state: &mut State,
    events: &mut usize,
    raw: sse::RawEvent<'_>,
) -> Result<(), CaptureError> {
    *events += 1;
    let data = raw.data.trim_ascii();
    if data == "[DONE]" {
        if let State::Chat(s) = state {
            s.done();
            return Ok(());
        }
    }
    let v: Value = serde_json::from_str(data).map_err(|e| {
        CaptureError::new(
            CaptureErrorKind::Malformed,
            raw.offset,
            format!(
                "the event's data is not JSON: {}",
                e.to_string().split(" at line ").next().unwrap_or_default()
            ),
        )
    })?;
    if *events == 1 {
        if let Some(d) = sniff_event(&v).filter(|d| *d != dialect) {
            return Err(CaptureError::new(
                CaptureErrorKind::WrongDialect,
                raw.offset,
                format!("this is not a {dialect} stream: its first event looks like {d}"),
            ));
        }
    }
    state.event(Event {
        name: raw.name,
        data: v,
        offset: raw.offset,
    })
}

/// Read a whole stream of `dialect` (SSE; event-stream frames for Converse).
pub fn read_stream(dialect: Dialect, bytes: &[u8]) -> Result<Reply, CaptureError> {
    let mut cap = StreamCapture::new(dialect);
    cap.feed(bytes)?;
    cap.finish()
}

// Helpers the dialect readers share.

/// The `type` of an event.
pub(crate) fn event_type(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

/// Set `response_id` on a captured message.
pub(crate) fn mark(m: &mut Message, response_id: Option<&str>) {
    if let Some(id) = response_id {
        m.meta
            .insert("response_id".into(), Value::String(id.to_string()));
    }
}

/// Merge `from` into `into`: nulls never replace a value, objects merge key by key.
pub(crate) fn merge(into: &mut Extra, from: &Map<String, Value>) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(_), Value::Null) => {}
            (Some(Value::Object(a)), Value::Object(b)) => merge(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Merge one owned entry into `into`, as [`merge`] does.
pub(crate) fn merge_owned(into: &mut Extra, k: String, v: Value) {
    match (into.get_mut(&k), v) {
        (Some(_), Value::Null) => {}
        (Some(Value::Object(a)), Value::Object(b)) => {
            for (k, v) in b {
                merge_owned(a, k, v);
            }
        }
        (_, v) => {
            into.insert(k, v);
        }
    }
}

/// A stream that ended before its end event.
pub(crate) fn truncated(end: usize, reason: impl Into<String>) -> CaptureError {
    CaptureError::new(CaptureErrorKind::Truncated, end, reason)
}

/// An event that does not have the shape its type promises.
pub(crate) fn malformed(offset: usize, reason: impl Into<String>) -> CaptureError {
    CaptureError::new(CaptureErrorKind::Malformed, offset, reason)
}

/// A small map from a wire index to a slot, in first-seen order (a stream has few).
#[derive(Debug)]
pub(crate) struct ByIndex<T> {
    slots: Vec<(u64, T)>,
}

impl<T> Default for ByIndex<T> {
    fn default() -> Self {
        ByIndex { slots: Vec::new() }
    }
}

impl<T> ByIndex<T> {
    pub(crate) fn get_mut(&mut self, index: u64) -> Option<&mut T> {
        self.slots
            .iter_mut()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, t)| t)
    }

    pub(crate) fn get_or_insert_with(&mut self, index: u64, f: impl FnOnce() -> T) -> &mut T {
        match self.slots.iter().rposition(|(i, _)| *i == index) {
            Some(p) => &mut self.slots[p].1,
            None => {
                self.slots.push((index, f()));
                let last = self.slots.len() - 1;
                &mut self.slots[last].1
            }
        }
    }

    pub(crate) fn insert(&mut self, index: u64, t: T) {
        match self.slots.iter().rposition(|(i, _)| *i == index) {
            Some(p) => self.slots[p].1 = t,
            None => self.slots.push((index, t)),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &(u64, T)> {
        self.slots.iter()
    }

    /// The slots in index order.
    pub(crate) fn into_sorted(mut self) -> Vec<(u64, T)> {
        self.slots.sort_by_key(|(i, _)| *i);
        self.slots
    }
}
