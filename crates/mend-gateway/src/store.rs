//! Conversations kept in a `mend-store` [`Store`]: the [`Conversations`] sink that
//! `mend serve --store` (or `store = "..."` in the configuration) plugs in.
//!
//! A conversation the gateway creates holds the wire messages of the dialect it was
//! first spoken in (`Format::Wire`), so `mend store load ID --as DIALECT` gives back the
//! exact history. An existing conversation keeps its declared format: canonical
//! conversations get canonical messages (through `mend::canonical`); one declared for
//! another dialect refuses the exchange rather than mixing dialects.
//!
//! Invariant: one exchange is one atomic append, keyed by the gateway's request id.

use std::sync::Arc;

use mend::canonical::Conversation;
use mend::Dialect;
use mend_store::{AppendOptions, Format, NewConversation, NewMessage, Store};
use serde_json::{Map, Value};

use crate::exchange::{new_messages, BoxFuture, Conversations, Exchange};

/// A store as the gateway's conversation sink.
#[derive(Debug)]
pub struct StoreConversations<S> {
    store: Arc<S>,
}

impl<S> StoreConversations<S> {
    /// Wrap a store.
    pub fn new(store: Arc<S>) -> StoreConversations<S> {
        StoreConversations { store }
    }
}

impl<S: Store + 'static> Conversations for StoreConversations<S> {
    fn append(&self, exchange: Exchange) -> BoxFuture<'static, Result<usize, String>> {
        let store = self.store.clone();
        Box::pin(async move { append_exchange(store.as_ref(), exchange).await })
    }
}

/// Append what an exchange adds: the request's new messages, then the output.
pub async fn append_exchange<S: Store>(store: &S, ex: Exchange) -> Result<usize, String> {
    let info = match store.info(&ex.conversation).await {
        Ok(info) => info,
        Err(mend_store::Error::NotFound(_)) => {
            let new =
                NewConversation::with_id(ex.conversation.clone()).format(Format::Wire(ex.dialect));
            match store.create(new).await {
                Ok(info) => info,
                // Another exchange created it first.
                Err(mend_store::Error::AlreadyExists(_)) => store
                    .info(&ex.conversation)
                    .await
                    .map_err(|e| e.to_string())?,
                Err(e) => return Err(e.to_string()),
            }
        }
        Err(e) => return Err(e.to_string()),
    };
    let mut items: Vec<Value> = new_messages(ex.dialect, &ex.history, info.last_sequence).to_vec();
    items.extend(ex.output);
    let items = match info.format {
        Format::Any => items,
        Format::Wire(d) if d == ex.dialect => items,
        Format::Canonical(_) => canonical(ex.dialect, items)?,
        Format::Wire(other) => {
            return Err(format!(
                "conversation '{}' holds {other} messages; this exchange is {}",
                ex.conversation, ex.dialect
            ))
        }
    };
    let messages = NewMessage::from_values(&items).map_err(|e| e.to_string())?;
    store
        .append(
            &ex.conversation,
            &messages,
            &AppendOptions::keyed(ex.request_id),
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(messages.len())
}

/// Wire history items of a dialect as canonical messages in their JSON form.
fn canonical(dialect: Dialect, items: Vec<Value>) -> Result<Vec<Value>, String> {
    let mut body = Map::new();
    body.insert(dialect.history_key().to_string(), Value::Array(items));
    let conv =
        Conversation::from_request(dialect, &Value::Object(body)).map_err(|e| e.to_string())?;
    conv.messages
        .iter()
        .map(|m| serde_json::to_value(m).map_err(|e| e.to_string()))
        .collect()
}
