//! Stage 5, capture: whether the exchange is kept for its conversation (the request
//! names one and a conversation sink is configured) and, once the answer is complete,
//! committing it to the conversation before the client is given the answer's end (the
//! holding is `durable.rs`'s).

use std::sync::Arc;

use bytes::Bytes;
use mend::Dialect;
use serde_json::Value;

use super::Ctx;
use crate::exchange::{self, Exchange, Kept};
use crate::Inner;

/// The body size from which a parsed body is freed off the request's path.
const FREE_ELSEWHERE: usize = 32 * 1024;

/// The conversation to capture the exchange into, if any. The parsed body is kept only
/// for a capture; otherwise it goes now, and a large one is freed on another thread,
/// off this request's path.
pub(super) fn wanted(
    ctx: &Ctx,
    conversation: Option<String>,
    parsed: &mut Option<Value>,
    body_len: usize,
) -> Option<String> {
    if conversation.is_some() && ctx.inner.conversations.is_some() {
        return conversation;
    }
    if let Some(v) = parsed.take() {
        free_later(v, body_len);
    }
    None
}

/// Free a parsed body. Freeing a 200 KB tree takes tens of microseconds of allocator
/// work; above [`FREE_ELSEWHERE`] bytes it is done on the blocking pool instead.
fn free_later(v: serde_json::Value, body_len: usize) {
    if body_len >= FREE_ELSEWHERE {
        drop(tokio::task::spawn_blocking(move || drop(v)));
    }
}

/// What a capture needs once the answer is complete.
pub(super) struct Capture {
    pub conversation: String,
    /// The caller's scope, which the conversation was claimed for.
    pub scope: String,
    /// The body as forwarded, parsed, when the judge parsed it.
    pub parsed: Option<serde_json::Value>,
    /// The body as received, parsed here when the judge did not.
    pub received: Bytes,
    /// The answer's content type (JSON or an event stream).
    pub content_type: String,
}

impl Capture {
    /// Whether the answer is an event stream (SSE, or AWS's binary event stream), read
    /// as it passes, rather than one JSON body.
    pub(super) fn is_stream(&self) -> bool {
        ["text/event-stream", "application/vnd.amazon.eventstream"]
            .iter()
            .any(|t| self.content_type.starts_with(t))
    }
}

/// What became of a capture, as the client is told (`x-mend-capture`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Captured {
    /// The exchange is in its conversation (appended now, or there already).
    Stored,
    /// The exchange does not continue its conversation: not appended ([`Kept::Diverged`]).
    Diverged,
    /// Not committed before the answer's end went out; why, as the `reason` label of
    /// `mend_capture_failures_total`: `store` (the store refused or failed), `timeout`
    /// (no commit within the configured `capture_timeout`), `unreadable` (the request's history or
    /// the response's output could not be read), `too_large` (a JSON answer above the
    /// copy cap).
    Failed(&'static str),
}

impl Captured {
    /// The value of `x-mend-capture`.
    pub(super) fn header_value(self) -> &'static str {
        match self {
            Captured::Stored => "stored",
            Captured::Diverged => "diverged",
            Captured::Failed(_) => "failed",
        }
    }
}

/// A capture failure the client sees: counted, and logged with why.
pub(super) fn failed(inner: &Inner, id: &str, reason: &'static str, why: &str) -> Captured {
    inner.metrics.capture_failed(reason);
    tracing::warn!(
        request_id = %id, reason, error = %why,
        "exchange not captured before the answer's end"
    );
    Captured::Failed(reason)
}

/// Commit the exchange (the request's history and `output`, the response's) to its
/// conversation, and wait for it, at most the configured `capture_timeout` (5 s by
/// default): past it the client gets the answer's end anyway, told the capture failed
/// (`timeout`). The append runs on its own task, in turn with the conversation's other
/// appends, so it finishes (or rolls back whole) even when the client goes away or the
/// wait times out, and may then still land.
pub(super) async fn commit(
    inner: Arc<Inner>,
    id: String,
    dialect: Dialect,
    capture: Capture,
    output: Result<Vec<Value>, String>,
) -> Captured {
    let Some(sink) = inner.conversations.clone() else {
        return Captured::Stored;
    };
    let output = match output {
        Ok(o) => o,
        Err(why) => {
            inner.metrics.store_append("not_captured");
            return failed(&inner, &id, "unreadable", &why);
        }
    };
    let body = match capture
        .parsed
        .or_else(|| serde_json::from_slice(&capture.received).ok())
    {
        Some(b) => b,
        None => {
            inner.metrics.store_append("unreadable");
            return failed(&inner, &id, "unreadable", "the request body is not JSON");
        }
    };
    let ex = Exchange {
        conversation: capture.conversation,
        scope: capture.scope,
        dialect,
        request_id: id.clone(),
        history: exchange::request_history(dialect, &body),
        output,
    };
    let metrics = inner.metrics.clone();
    // Appends to one conversation run one at a time, in the order their answers
    // completed: what is new in an exchange depends on what is stored.
    let turn = inner.conversation_turns.turn(&ex.conversation);
    let task_id = id.clone();
    let append = tokio::spawn(async move {
        let _turn = turn.await;
        let kept = sink.append(ex).await;
        record(&metrics, &task_id, &kept);
        kept
    });
    let limit = inner.config.capture_timeout;
    match tokio::time::timeout(limit, append).await {
        Ok(Ok(Ok(Kept::Diverged))) => Captured::Diverged,
        Ok(Ok(Ok(_))) => Captured::Stored,
        Ok(Ok(Err(e))) => failed(&inner, &id, "store", &e),
        Ok(Err(panicked)) => failed(&inner, &id, "store", &panicked.to_string()),
        Err(_) => failed(
            &inner,
            &id,
            "timeout",
            &format!(
                "the store did not commit within {} ms; the append goes on",
                limit.as_millis()
            ),
        ),
    }
}

/// Count and log how an append ended.
fn record(metrics: &crate::Metrics, id: &str, kept: &Result<Kept, String>) {
    match kept {
        Ok(kept) => {
            metrics.store_append(kept.outcome());
            match kept {
                Kept::Appended(n) => {
                    tracing::debug!(request_id = %id, appended = n, "exchange appended")
                }
                Kept::AlreadyStored => tracing::debug!(
                    request_id = %id, "exchange already in the conversation"
                ),
                Kept::Diverged => tracing::warn!(
                    request_id = %id,
                    "exchange not appended: its history does not continue the conversation"
                ),
            }
        }
        Err(e) => {
            metrics.store_append("error");
            tracing::warn!(request_id = %id, error = %e, "exchange not appended");
        }
    }
}
