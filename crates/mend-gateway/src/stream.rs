//! The response body on its way back: upstream bytes go to the client as each chunk
//! arrives, while a copy is kept for the tap and the conversation capture.
//!
//! Invariant: nothing here waits for more than the chunk at hand. The copy is taken
//! only when someone asked for it, and is capped; its end (complete, upstream error,
//! or the client hanging up) is reported exactly once.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_util::Stream;

/// How a body ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum End {
    /// The upstream finished it.
    Complete,
    /// The upstream failed mid-body (a read timeout, a reset).
    UpstreamError(String),
    /// The client went away first.
    ClientGone,
}

impl End {
    pub(crate) fn describe(&self) -> String {
        match self {
            End::Complete => "complete".into(),
            End::UpstreamError(e) => format!("upstream error: {e}"),
            End::ClientGone => "client gone".into(),
        }
    }
}

/// What was seen once the body ended.
#[derive(Debug)]
pub(crate) struct Seen {
    /// Bytes passed to the client.
    pub bytes: u64,
    /// The copy (empty when none was asked for).
    pub copy: Bytes,
    /// The copy stopped at its cap.
    pub truncated: bool,
    pub end: End,
}

type Inner = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;
type OnEnd = Box<dyn FnOnce(Seen) + Send>;

/// A pass-through body that keeps a copy.
pub(crate) struct Tee {
    inner: Inner,
    bytes: u64,
    copy: Option<BytesMut>,
    cap: usize,
    truncated: bool,
    /// The upstream's Content-Length: the body is complete once this many bytes went
    /// out (hyper stops polling a body at its declared length, so the end may never be
    /// seen as a `None`).
    expected: Option<u64>,
    on_end: Option<OnEnd>,
}

impl Tee {
    /// Pass `inner` through; keep up to `cap` bytes when `keep`; call `on_end` once.
    pub(crate) fn new(
        inner: Inner,
        expected: Option<u64>,
        keep: bool,
        cap: usize,
        on_end: OnEnd,
    ) -> Tee {
        Tee {
            inner,
            bytes: 0,
            copy: keep.then(BytesMut::new),
            cap,
            truncated: false,
            expected,
            on_end: Some(on_end),
        }
    }

    fn finish(&mut self, end: End) {
        if let Some(f) = self.on_end.take() {
            let copy = self.copy.take().map(BytesMut::freeze).unwrap_or_default();
            f(Seen {
                bytes: self.bytes,
                copy,
                truncated: self.truncated,
                end,
            });
        }
    }
}

impl Stream for Tee {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match this.inner.as_mut().poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(chunk))) => {
                this.bytes += chunk.len() as u64;
                if let Some(copy) = &mut this.copy {
                    let room = this.cap.saturating_sub(copy.len());
                    if chunk.len() > room {
                        this.truncated = true;
                    }
                    copy.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(e))) => {
                let e = e.without_url();
                let why = if e.is_timeout() {
                    "read timed out".to_string()
                } else {
                    e.to_string()
                };
                this.finish(End::UpstreamError(why.clone()));
                Poll::Ready(Some(Err(std::io::Error::other(why))))
            }
            Poll::Ready(None) => {
                this.finish(End::Complete);
                Poll::Ready(None)
            }
        }
    }
}

impl Drop for Tee {
    fn drop(&mut self) {
        let end = if self.expected == Some(self.bytes) {
            End::Complete
        } else {
            End::ClientGone
        };
        self.finish(end);
    }
}
