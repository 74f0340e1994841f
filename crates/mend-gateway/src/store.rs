//! Conversations kept in a `mend-store` [`Store`]: the [`Conversations`] sink that
//! `mend serve --db` (or `db = "..."` in the configuration) plugs in.
//!
//! A conversation the gateway creates holds the wire messages of the dialect it was
//! first spoken in (`Format::Wire`), so `mend store load ID --as DIALECT` gives back the
//! exact history. An existing conversation keeps its declared format: canonical
//! conversations get canonical messages (through `mend::canonical`); one declared for
//! another dialect refuses the exchange rather than mixing dialects.
//!
//! Invariants, also with several gateway replicas on one database: one exchange is one
//! atomic append, keyed by the gateway's request id (unique across replicas), so its
//! messages are never interleaved with another's and a retried append writes nothing.
//! What an exchange adds is decided against what the conversation holds
//! ([`plan_append`]) and written only if the conversation has not moved since it was
//! read (a compare-and-append; on a move, it is read and decided again): so exchanges
//! that end at the same time on two replicas, or a next turn that reaches another
//! replica before this turn's append, leave one ordered history with each output once.

use std::sync::Arc;

use mend::canonical::{Conversation, Role};
use mend::Dialect;
use mend_store::{
    AppendOptions, ConversationInfo, Format, NewConversation, NewMessage, Span, Store,
};
use serde_json::{Map, Value};

use crate::exchange::{
    is_model_output, plan_append, BoxFuture, Claim, Conversations, Exchange, Kept, Plan,
};

/// How many times an exchange is decided again when the conversation keeps moving.
const ATTEMPTS: usize = 16;

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
    fn append(&self, exchange: Exchange) -> BoxFuture<'static, Result<Kept, String>> {
        let store = self.store.clone();
        Box::pin(async move { append_exchange(store.as_ref(), exchange).await })
    }

    fn claim(
        &self,
        conversation: &str,
        dialect: Dialect,
        scope: &str,
    ) -> BoxFuture<'static, Result<Claim, String>> {
        let store = self.store.clone();
        let (conversation, scope) = (conversation.to_string(), scope.to_string());
        Box::pin(async move {
            match store
                .claim(&conversation, &scope, Format::Wire(dialect))
                .await
            {
                Ok((_, mend_store::Claim::Adopted)) => {
                    tracing::info!(
                        conversation = %conversation, scope = %scope,
                        "an unscoped conversation now belongs to its first scoped caller"
                    );
                    Ok(Claim::Granted)
                }
                Ok(_) => Ok(Claim::Granted),
                Err(mend_store::Error::OutOfScope { .. }) => Ok(Claim::OutOfScope),
                Err(e) => Err(e.to_string()),
            }
        })
    }
}

/// Append what an exchange adds: the request's items the conversation lacks, then the
/// output (see [`plan_append`]).
pub async fn append_exchange<S: Store>(store: &S, ex: Exchange) -> Result<Kept, String> {
    for _ in 0..ATTEMPTS {
        let info = conversation_for(store, &ex).await?;
        let (history, output, canonical_roles) = match info.format {
            Format::Any => (ex.history.clone(), ex.output.clone(), false),
            Format::Wire(d) if d == ex.dialect => (ex.history.clone(), ex.output.clone(), false),
            Format::Canonical(_) => (
                canonical(ex.dialect, ex.history.clone())?,
                canonical(ex.dialect, ex.output.clone())?,
                true,
            ),
            Format::Wire(other) => {
                return Err(format!(
                    "conversation '{}' holds {other} messages; this exchange is {}",
                    ex.conversation, ex.dialect
                ))
            }
        };
        let loaded = if info.last_sequence == 0 {
            Vec::new()
        } else {
            store
                .load(&ex.conversation, Span::ALL)
                .await
                .map_err(|e| e.to_string())?
        };
        // The end this decision is based on: what the load saw.
        let seen_last = loaded.last().map_or(0, |m| m.seq);
        let stored = mend_store::values(&loaded).map_err(|e| e.to_string())?;
        let dialect = ex.dialect;
        let is_model = |v: &Value| {
            if canonical_roles {
                v.get("role").and_then(Value::as_str) == Some(Role::<String>::Assistant.as_str())
            } else {
                is_model_output(dialect, v)
            }
        };
        let items = match plan_append(is_model, &stored, &history, &output) {
            Plan::Append(items) => items,
            Plan::AlreadyStored => return Ok(Kept::AlreadyStored),
            Plan::Diverged => return Ok(Kept::Diverged),
        };
        let messages = NewMessage::from_values(&items).map_err(|e| e.to_string())?;
        let options = AppendOptions::keyed(ex.request_id.clone())
            .expecting_last(seen_last)
            .in_scope(ex.scope.clone());
        match store.append(&ex.conversation, &messages, &options).await {
            Ok(done) if done.replayed => return Ok(Kept::AlreadyStored),
            Ok(_) => return Ok(Kept::Appended(messages.len())),
            // Another replica appended meanwhile: read again and decide again.
            Err(mend_store::Error::Moved { .. }) => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(format!(
        "conversation '{}' kept moving; gave up after {ATTEMPTS} attempts",
        ex.conversation
    ))
}

/// The conversation's row, creating it (holding this exchange's dialect) if need be.
async fn conversation_for<S: Store>(store: &S, ex: &Exchange) -> Result<ConversationInfo, String> {
    match store.info(&ex.conversation).await {
        Ok(info) => Ok(info),
        Err(mend_store::Error::NotFound(_)) => {
            let new = NewConversation::with_id(ex.conversation.clone())
                .format(Format::Wire(ex.dialect))
                .scope(ex.scope.clone());
            match store.create(new).await {
                Ok(info) => Ok(info),
                // Another exchange created it first.
                Err(mend_store::Error::AlreadyExists(_)) => store
                    .info(&ex.conversation)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            }
        }
        Err(e) => Err(e.to_string()),
    }
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
