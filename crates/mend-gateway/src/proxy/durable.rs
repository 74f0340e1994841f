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
//!   committed, and so is the stream's close when it closes before such an event. Its
//!   headers are gone by then: a failure is counted (`mend_capture_failures_total`) and
//!   logged with the request id.
//!
//! A commit waits at most the configured `capture_timeout` (5 s by default,
//! `--capture-timeout-ms`); the answer then goes out whole
//! whatever the store did. An exchange is appended in one store transaction, so it is
//! there whole or not at all: an answer cut by the upstream or left by the client before
//! its end is not written; one whose commit began finishes it on its own task even when
//! the client goes away (the client may then not have seen an end that is stored).

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
        Some(c) if c.is_stream() => {
            let watch = Watch {
                inner: ctx.inner.clone(),
                id: ctx.id.clone(),
                dialect: ctx.dialect(),
                reader: StreamCapture::new(ctx.dialect()),
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
    reader: StreamCapture,
    capture: Capture,
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
        let output = match reader.finish() {
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
        };
        Some(Box::pin(capture::commit(
            inner, id, dialect, capture, output,
        )))
    }
}

type Commit = Pin<Box<dyn Future<Output = Captured> + Send>>;

/// The answer's body, its completing chunk (or its close) held until the exchange is
/// committed.
pub(super) struct Held<S> {
    body: S,
    /// Until the commit starts.
    watch: Option<Watch>,
    /// The commit under way, and the chunk it holds (`None`: the close).
    committing: Option<(Commit, Option<Bytes>)>,
}

impl<S> Held<S> {
    pub(super) fn new(body: S, watch: Watch) -> Held<S> {
        Held {
            body,
            watch: Some(watch),
            committing: None,
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
                let held = this.committing.take().and_then(|(_, held)| held);
                return Poll::Ready(held.map(Ok));
            }
            match ready!(Pin::new(&mut this.body).poll_next(cx)) {
                Some(Ok(chunk)) => {
                    let complete = this.watch.as_mut().is_some_and(|w| {
                        // An unreadable stream is reported when it closes.
                        let _ = w.reader.feed(&chunk);
                        w.reader.is_complete()
                    });
                    if complete {
                        if let Some(commit) = this.watch.take().and_then(Watch::commit) {
                            this.committing = Some((commit, Some(chunk)));
                            continue;
                        }
                    }
                    return Poll::Ready(Some(Ok(chunk)));
                }
                Some(Err(e)) => {
                    if let Some(w) = this.watch.take() {
                        w.inner.metrics.store_append("incomplete");
                    }
                    return Poll::Ready(Some(Err(e)));
                }
                None => match this.watch.take().and_then(Watch::commit) {
                    Some(commit) => this.committing = Some((commit, None)),
                    None => return Poll::Ready(None),
                },
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
