//! The capture contract (with a conversation store): an exchange kept for its
//! conversation is committed before the client sees the end of its answer, so a client
//! that loads the conversation once its request returns finds both sides, every time.
//!
//! - A JSON answer is read whole (up to the copy cap), its exchange committed, and only
//!   then is the answer given to the client, with `x-mend-capture` saying what became of
//!   the exchange (`stored`, `diverged`, `failed`).
//! - A stream (SSE, AWS's event stream) passes through as it arrives while
//!   [`StreamCapture`] reads it; the chunk that completes the response (the terminal
//!   event: `[DONE]` or the finish reasons, `response.completed`, `message_stop`,
//!   Gemini's `finishReason`, Converse's `messageStop`) is held until the exchange is
//!   committed, and so is the stream's close when it closes before such an event. A
//!   JSON array streamed element by element (Gemini's `:streamGenerateContent` without
//!   `alt=sse`) passes through too, a chunk that ends in `]` held until the next chunk
//!   or the close says whether it ended the array, the exchange committed at the close
//!   before that chunk goes out. Its
//!   headers are gone by then: a failure is counted (`mend_capture_failures_total`) and
//!   logged with the request id.
//!
//! A commit waits at most the configured `capture_timeout` (5 s by default,
//! `--capture-timeout-ms`); the answer then goes out whole
//! whatever the store did. An exchange is appended in one store transaction, so it is
//! there whole or not at all: an answer cut by the upstream or left by the client before
//! its end is not written (the gateway learns that a client left when a write to it
//! fails, so a stream that completes within a write or two of it leaving may still be
//! stored, whole); one whose commit began finishes it on its own task even when the
//! client goes away (the client may then not have seen an end that is stored).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_util::{stream, Stream, StreamExt};
use mend::canonical::capture::{CaptureErrorKind, StreamCapture};
use mend::Dialect;

use super::capture::{self, Capture, Captured};
use super::Ctx;
use crate::exchange;
use crate::Inner;

/// The upstream's body as the respond stage streams it.
pub(super) type UpstreamBody = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

/// How the answer's body goes back, given the capture wanted (if any): the body, a
/// [`Watch`] to wrap it in when its end must wait for a commit (a stream), and what
/// became of the capture when it is already done (a JSON answer, read whole).
pub(super) async fn prepare(
    ctx: &Ctx,
    capture: Option<Capture>,
    answer: reqwest::Response,
    cap: usize,
) -> (UpstreamBody, Option<Watch>, Option<Captured>) {
    match capture {
        None => (Box::pin(answer.bytes_stream()), None, None),
        Some(c) if c.is_stream() || ctx.path.ends_with(":streamGenerateContent") => {
            let reader = if c.is_stream() {
                Reader::Events(Box::new(StreamCapture::new(ctx.dialect())))
            } else {
                Reader::Array {
                    copy: BytesMut::new(),
                    cap,
                }
            };
            let watch = Watch {
                inner: ctx.inner.clone(),
                id: ctx.id.clone(),
                dialect: ctx.dialect(),
                reader,
                capture: c,
            };
            (Box::pin(answer.bytes_stream()), Some(watch), None)
        }
        Some(c) => {
            let (body, captured) = json_answer(ctx, c, answer, cap).await;
            (body, None, captured)
        }
    }
}

/// Read a JSON answer whole, then commit its exchange. An answer cut by the upstream
/// goes back as far as it came, then the error, and is not captured; one longer than
/// `cap` goes back unread past it, not captured (`too_large`).
async fn json_answer(
    ctx: &Ctx,
    capture: Capture,
    mut answer: reqwest::Response,
    cap: usize,
) -> (UpstreamBody, Option<Captured>) {
    let mut body = BytesMut::new();
    loop {
        match answer.chunk().await {
            Ok(Some(chunk)) => {
                body.extend_from_slice(&chunk);
                if body.len() > cap {
                    ctx.inner.metrics.store_append("incomplete");
                    let why = format!("the answer is longer than {cap} bytes");
                    let failed = capture::failed(&ctx.inner, &ctx.id, "too_large", &why);
                    let read = stream::once(async move { Ok(body.freeze()) });
                    return (Box::pin(read.chain(answer.bytes_stream())), Some(failed));
                }
            }
            Ok(None) => break,
            Err(e) => {
                ctx.inner.metrics.store_append("incomplete");
                let read = stream::iter([Ok(body.freeze()), Err(e)]);
                return (Box::pin(read), None);
            }
        }
    }
    let body = body.freeze();
    let output = exchange::response_output(ctx.dialect(), &capture.content_type, &body);
    let captured = capture::commit(
        ctx.inner.clone(),
        ctx.id.clone(),
        ctx.dialect(),
        capture,
        output,
    )
    .await;
    (
        Box::pin(stream::once(async move { Ok(body) })),
        Some(captured),
    )
}

/// A stream's capture, read as the stream passes.
pub(super) struct Watch {
    inner: Arc<Inner>,
    id: String,
    dialect: Dialect,
    reader: Reader,
    capture: Capture,
}

/// How a stream is read as it passes.
enum Reader {
    /// SSE events, or AWS event-stream frames (boxed: the reader's state is large).
    Events(Box<StreamCapture>),
    /// A JSON array streamed element by element (Gemini's `:streamGenerateContent`
    /// without `alt=sse`), kept up to the copy cap and read at its close.
    Array { copy: BytesMut, cap: usize },
}

impl Watch {
    /// The commit of the exchange read so far (at its terminal event, or at the close),
    /// or, when the stream is cut or carries the provider's error (a failed answer, not
    /// a failed capture), nothing, counted. A stream that is not the dialect's is
    /// tried, and reported unreadable.
    fn commit(self) -> Option<Commit> {
        let Watch {
            inner,
            id,
            dialect,
            reader,
            capture,
        } = self;
        let output = match reader {
            Reader::Events(events) => match events.finish() {
                Ok(reply) => exchange::reply_output(dialect, &reply),
                Err(e)
                    if matches!(
                        e.kind,
                        CaptureErrorKind::Provider | CaptureErrorKind::Truncated
                    ) =>
                {
                    inner.metrics.store_append("incomplete");
                    return None;
                }
                Err(e) => Err(format!("the response could not be captured: {e}")),
            },
            Reader::Array { copy, cap } if copy.len() >= cap => {
                inner.metrics.store_append("incomplete");
                let why = format!("the answer is longer than {cap} bytes");
                capture::failed(&inner, &id, "too_large", &why);
                return None;
            }
            Reader::Array { copy, .. } => {
                exchange::response_output(dialect, "application/json", &copy)
            }
        };
        Some(Box::pin(capture::commit(
            inner, id, dialect, capture, output,
        )))
    }
}

type Commit = Pin<Box<dyn Future<Output = Captured> + Send>>;

/// What a chunk that passed a [`Watch`] asks for.
enum Next {
    /// Pass it on.
    Pass(Bytes),
    /// Commit, then pass it on.
    Commit(Commit, Bytes),
    /// Hold it: it may end the answer (a JSON array's `]`); the next chunk or the close
    /// says.
    Hold(Bytes),
}

/// The answer's body, its completing chunk (or its close) held until the exchange is
/// committed.
pub(super) struct Held<S> {
    body: S,
    /// Until the commit starts.
    watch: Option<Watch>,
    /// The commit under way, and the chunk it holds (`None`: the close).
    committing: Option<(Commit, Option<Bytes>)>,
    /// A chunk that may end a JSON array, held until the next chunk or the close.
    tail: Option<Bytes>,
    /// An upstream error to pass on after the held tail.
    error: Option<std::io::Error>,
    closed: bool,
}

impl<S> Held<S> {
    pub(super) fn new(body: S, watch: Watch) -> Held<S> {
        Held {
            body,
            watch: Some(watch),
            committing: None,
            tail: None,
            error: None,
            closed: false,
        }
    }

    /// Read a chunk on its way: whether it completes the response, or may.
    fn watch_chunk(&mut self, chunk: Bytes) -> Next {
        let Some(w) = self.watch.as_mut() else {
            return Next::Pass(chunk);
        };
        match &mut w.reader {
            Reader::Events(events) => {
                // An unreadable stream is reported when it closes.
                let _ = events.feed(&chunk);
                if !events.is_complete() {
                    return Next::Pass(chunk);
                }
                match self.watch.take().and_then(Watch::commit) {
                    Some(commit) => Next::Commit(commit, chunk),
                    None => Next::Pass(chunk),
                }
            }
            Reader::Array { copy, cap } => {
                let room = cap.saturating_sub(copy.len());
                copy.extend_from_slice(&chunk[..chunk.len().min(room)]);
                let chunk = match self.tail.take() {
                    Some(tail) => Bytes::from([tail, chunk].concat()),
                    None => chunk,
                };
                if chunk.trim_ascii_end().ends_with(b"]") {
                    Next::Hold(chunk)
                } else {
                    Next::Pass(chunk)
                }
            }
        }
    }
}

impl<S> Stream for Held<S>
where
    S: Stream<Item = Result<Bytes, std::io::Error>> + Unpin,
{
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some((commit, _)) = &mut this.committing {
                ready!(commit.as_mut().poll(cx));
                match this.committing.take().and_then(|(_, held)| held) {
                    Some(held) => return Poll::Ready(Some(Ok(held))),
                    None => continue,
                }
            }
            if let Some(e) = this.error.take() {
                return Poll::Ready(Some(Err(e)));
            }
            if this.closed {
                return Poll::Ready(this.tail.take().map(Ok));
            }
            match ready!(Pin::new(&mut this.body).poll_next(cx)) {
                Some(Ok(chunk)) => match this.watch_chunk(chunk) {
                    Next::Pass(chunk) => return Poll::Ready(Some(Ok(chunk))),
                    Next::Commit(commit, chunk) => this.committing = Some((commit, Some(chunk))),
                    Next::Hold(chunk) => this.tail = Some(chunk),
                },
                Some(Err(e)) => {
                    if let Some(w) = this.watch.take() {
                        w.inner.metrics.store_append("incomplete");
                    }
                    match this.tail.take() {
                        Some(tail) => {
                            this.error = Some(e);
                            return Poll::Ready(Some(Ok(tail)));
                        }
                        None => return Poll::Ready(Some(Err(e))),
                    }
                }
                None => {
                    this.closed = true;
                    if let Some(commit) = this.watch.take().and_then(Watch::commit) {
                        this.committing = Some((commit, None));
                    }
                }
            }
        }
    }
}

impl<S> Drop for Held<S> {
    fn drop(&mut self) {
        // The client went away before the response was complete: nothing is written.
        if let Some(w) = self.watch.take() {
            w.inner.metrics.store_append("incomplete");
        }
    }
}
