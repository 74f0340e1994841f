//! Stage 5, capture: whether the exchange is kept for its conversation (the request
//! names one and a conversation sink is configured) and, once the answer has streamed
//! back complete, appending it to the conversation.

use std::sync::Arc;

use bytes::Bytes;
use mend::Dialect;

use super::Ctx;
use crate::exchange::{self, Exchange, Kept};
use crate::judge::Verdict;
use crate::stream::{End, Seen};
use crate::Inner;

/// The body size from which a parsed body is freed off the request's path.
const FREE_ELSEWHERE: usize = 32 * 1024;

/// The conversation to capture the exchange into, if any. The parsed body is kept only
/// for a capture; otherwise it goes now, and a large one is freed on another thread,
/// off this request's path.
pub(super) fn wanted(
    ctx: &Ctx,
    conversation: Option<String>,
    verdict: &mut Verdict,
    body_len: usize,
) -> Option<String> {
    if conversation.is_some() && ctx.inner.conversations.is_some() {
        return conversation;
    }
    if let Some(v) = verdict.parsed.take() {
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

/// What a capture needs once the answer has ended.
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

/// Append the exchange to its conversation, when the answer came back complete and
/// both sides can be read; the append runs on its own task, in turn with the
/// conversation's other appends.
pub(super) fn append_exchange(
    inner: &Arc<Inner>,
    id: String,
    dialect: Dialect,
    capture: Capture,
    seen: Seen,
) {
    let Some(sink) = inner.conversations.clone() else {
        return;
    };
    if seen.end != End::Complete || seen.truncated {
        inner.metrics.store_append("incomplete");
        return;
    }
    let parsed = capture.parsed;
    let body = match parsed.or_else(|| serde_json::from_slice(&capture.received).ok()) {
        Some(b) => b,
        None => {
            inner.metrics.store_append("unreadable");
            return;
        }
    };
    let output = match exchange::response_output(dialect, &capture.content_type, &seen.copy) {
        Ok(o) => o,
        Err(why) => {
            tracing::warn!(request_id = %id, reason = %why, "exchange not captured");
            inner.metrics.store_append("not_captured");
            return;
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
    // Appends to one conversation run one at a time, in the order their exchanges
    // ended: a client's next turn can arrive before the last one's append is done, and
    // what is new in it depends on what is stored.
    let turn = inner.conversation_turns.turn(&ex.conversation);
    tokio::spawn(async move {
        let _turn = turn.await;
        match sink.append(ex).await {
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
    });
}
