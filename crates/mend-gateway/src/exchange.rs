//! Conversation capture: what one request/response exchange adds to a conversation
//! named by `x-mend-conversation`, and the seam to whatever keeps it.
//!
//! The gateway hands a [`Conversations`] sink an [`Exchange`] once the response has
//! ended: the request's history as forwarded, and the assistant output of the response
//! as history items of the same dialect, provider ids (`msg_`, `rs_`, `fc_`, call ids,
//! signatures, encrypted reasoning) kept verbatim. The sink appends what is new.
//!
//! Invariant: capture never delays or changes what the client receives; it runs after
//! the last byte went out, and a failure is logged and counted, never answered.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use mend::canonical::capture;
use mend::Dialect;
use serde_json::{json, Value};

/// A boxed future, as the sink returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One exchange, ready to append.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The conversation id from `x-mend-conversation`.
    pub conversation: String,
    /// The dialect both sides are written in.
    pub dialect: Dialect,
    /// The gateway's request id (an idempotency key for the append).
    pub request_id: String,
    /// The request's whole history (as forwarded, after any repair).
    pub history: Vec<Value>,
    /// The response's assistant output as history items.
    pub output: Vec<Value>,
}

/// Where exchanges go. Implemented over `mend-store` by the CLI, and in memory for
/// tests ([`MemoryConversations`]).
pub trait Conversations: Send + Sync + 'static {
    /// Append what the exchange adds; returns how many messages were appended.
    fn append(&self, exchange: Exchange) -> BoxFuture<'static, Result<usize, String>>;
}

/// The part of `history` that a conversation holding `stored` messages has not seen:
/// all of it for an empty conversation, else what follows the last item the model
/// produced (that item and everything before it came back from an earlier exchange,
/// whose output was appended then).
pub fn new_messages(dialect: Dialect, history: &[Value], stored: u64) -> &[Value] {
    if stored == 0 {
        return history;
    }
    match history.iter().rposition(|m| is_model_output(dialect, m)) {
        Some(i) => &history[i + 1..],
        None => history,
    }
}

/// Whether a history item was produced by the model.
pub fn is_model_output(dialect: Dialect, item: &Value) -> bool {
    let role = item.get("role").and_then(Value::as_str);
    match dialect {
        Dialect::Gemini => role == Some("model"),
        Dialect::OpenAiChat | Dialect::Anthropic => role == Some("assistant"),
        Dialect::OpenAiResponses => match role {
            Some(r) => r == "assistant",
            None => item
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| !t.ends_with("_output") && t != "item_reference"),
        },
    }
}

/// The history items of a request body (a Responses `input` string is one user item).
pub fn request_history(dialect: Dialect, body: &Value) -> Vec<Value> {
    match body.get(dialect.history_key()) {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(s)) if dialect == Dialect::OpenAiResponses => {
            vec![json!({"role": "user", "content": s})]
        }
        _ => Vec::new(),
    }
}

/// The assistant output of a response (a JSON body, or an SSE stream when
/// `content_type` says so), as history items of the dialect: what the client sends back
/// in its next request, provider ids, signatures and encrypted reasoning kept.
///
/// Read by `mend::canonical::capture`, then written back to the dialect's wire form by
/// `mend::next` (the path `mend next` takes). For chat and Gemini the first choice or
/// candidate is the one a conversation continues with; for Responses every output item
/// is one history item.
pub fn response_output(
    dialect: Dialect,
    content_type: &str,
    body: &[u8],
) -> Result<Vec<Value>, String> {
    let reply = if content_type.starts_with("text/event-stream") {
        capture::read_stream(dialect, body)
    } else {
        capture::read_response(dialect, body)
    }
    .map_err(|e| format!("the response could not be captured: {e}"))?;
    let messages = mend::next::continued_output(dialect, &reply, 0).map_err(|e| e.to_string())?;
    mend::next::history_items(dialect, messages)
        .map_err(|e| format!("the output cannot be written as {dialect}: {e}"))
}

/// One queue per conversation: appends wait for the ones before them. A FIFO async
/// lock per conversation id, dropped from the map when nobody holds or waits for it.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Holding a conversation's turn; the next append starts when it is dropped.
pub(crate) struct Turn {
    _guard: tokio::sync::OwnedMutexGuard<()>,
    turns: Arc<Turns>,
    id: String,
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Ok(mut map) = self.turns.locks.lock() {
            // Only the map's own reference left (ours goes with the guard): forget it.
            if map.get(&self.id).is_some_and(|l| Arc::strong_count(l) <= 2) {
                map.remove(&self.id);
            }
        }
    }
}

impl Turns {
    /// Queue for a conversation's turn now; the returned future resolves when it comes.
    pub(crate) fn turn(self: &Arc<Self>, id: &str) -> impl Future<Output = Option<Turn>> {
        let lock = self.locks.lock().ok().map(|mut map| {
            map.entry(id.to_string())
                .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(())))
                .clone()
        });
        let turns = self.clone();
        let id = id.to_string();
        // The place in the queue is taken when this future is first polled (tokio's
        // mutex is FIFO). Two exchanges of one conversation end at least a client round
        // trip apart, so their appends queue in the order the exchanges ended.
        async move {
            let lock = lock?;
            let guard = lock.lock_owned().await;
            Some(Turn {
                _guard: guard,
                turns,
                id,
            })
        }
    }
}

/// Conversations in memory, for tests and for trying the gateway without a database.
#[derive(Debug, Default)]
pub struct MemoryConversations {
    conversations: Mutex<HashMap<String, Vec<Value>>>,
}

impl MemoryConversations {
    /// An empty set.
    pub fn new() -> MemoryConversations {
        MemoryConversations::default()
    }

    /// A conversation's messages.
    pub fn load(&self, conversation: &str) -> Vec<Value> {
        self.conversations
            .lock()
            .map(|m| m.get(conversation).cloned().unwrap_or_default())
            .unwrap_or_default()
    }
}

impl Conversations for Arc<MemoryConversations> {
    fn append(&self, exchange: Exchange) -> BoxFuture<'static, Result<usize, String>> {
        let result = self
            .conversations
            .lock()
            .map_err(|_| "the conversation map is poisoned".to_string())
            .map(|mut map| {
                let conv = map.entry(exchange.conversation.clone()).or_default();
                let new = new_messages(exchange.dialect, &exchange.history, conv.len() as u64);
                let n = new.len() + exchange.output.len();
                conv.extend(new.iter().cloned());
                conv.extend(exchange.output.iter().cloned());
                n
            });
        Box::pin(async move { result })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_follows_the_models_last_item_is_new() {
        let h = vec![
            json!({"role": "user", "content": "a"}),
            json!({"type": "reasoning", "id": "rs_1"}),
            json!({"type": "function_call", "call_id": "c1"}),
            json!({"type": "function_call_output", "call_id": "c1"}),
        ];
        assert_eq!(new_messages(Dialect::OpenAiResponses, &h, 0).len(), 4);
        assert_eq!(new_messages(Dialect::OpenAiResponses, &h, 3), &h[3..]);
    }

    #[test]
    fn json_outputs_keep_ids() {
        let body = br#"{"id":"resp_1","object":"response","status":"completed","output":[
            {"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},
            {"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}"}]}"#;
        let out = response_output(Dialect::OpenAiResponses, "application/json", body).unwrap();
        assert_eq!(out[0]["id"], "rs_1");
        assert_eq!(out[0]["encrypted_content"], "gAAA");
        assert_eq!(out[1]["id"], "fc_1");
        assert_eq!(out[1]["call_id"], "call_1");
    }

    #[test]
    fn streamed_outputs_are_assembled() {
        let sse = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",",
            "\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",",
            "\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",",
            "\"partial_json\":\"{\\\"a\\\":1}\"}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "data: {\"type\":\"message_stop\"}\n\n"
        );
        let out = response_output(Dialect::Anthropic, "text/event-stream", sse.as_bytes()).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["role"], "assistant");
        assert_eq!(out[0]["content"][0]["id"], "toolu_1");
        assert_eq!(out[0]["content"][0]["input"]["a"], 1);
    }
}
