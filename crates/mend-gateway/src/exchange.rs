//! Conversation capture: what one request/response exchange adds to a conversation
//! named by `x-mend-conversation`, and the seam to whatever keeps it.
//!
//! The gateway hands a [`Conversations`] sink an [`Exchange`] once the response is
//! complete (before the client gets its end): the request's history as forwarded, and the assistant output of the response
//! as history items of the same dialect, provider ids (`msg_`, `rs_`, `fc_`, call ids,
//! signatures, encrypted reasoning) kept verbatim. The sink appends what is new.
//!
//! Invariant: capture never changes what the client receives, and delays only its end:
//! with a sink, the gateway commits the exchange before it releases the answer's last
//! bytes (`proxy/durable.rs`), within a bounded time; a failure is signalled and
//! counted, and the answer still goes out whole.

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
    /// The caller's scope ([`crate::scope`]): the conversation must be (or be made) its.
    pub scope: String,
    /// The dialect both sides are written in.
    pub dialect: Dialect,
    /// The gateway's request id (an idempotency key for the append).
    pub request_id: String,
    /// The request's whole history (as forwarded, after any repair).
    pub history: Vec<Value>,
    /// The response's assistant output as history items.
    pub output: Vec<Value>,
}

/// Where exchanges go. Implemented over `mend-store` ([`crate::store`]), and in memory
/// for tests ([`MemoryConversations`]).
pub trait Conversations: Send + Sync + 'static {
    /// Append what the exchange adds, in the exchange's scope only; says what was done.
    fn append(&self, exchange: Exchange) -> BoxFuture<'static, Result<Kept, String>>;

    /// Make sure `conversation` belongs to `scope` before an exchange naming it is
    /// forwarded: create it (holding `dialect`'s wire messages), take it when nobody
    /// owns it, or refuse with [`Claim::OutOfScope`], atomically.
    fn claim(
        &self,
        conversation: &str,
        dialect: Dialect,
        scope: &str,
    ) -> BoxFuture<'static, Result<Claim, String>>;
}

/// What a [`Conversations::claim`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// The conversation is the caller's (now, or already).
    Granted,
    /// Another scope has it: the exchange must not go on.
    OutOfScope,
}

/// What became of an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// This many messages were appended.
    Appended(usize),
    /// The conversation already held the exchange's output: a later exchange, which
    /// carried it back in its history, was appended first (through another replica),
    /// or the same exchange was appended before.
    AlreadyStored,
    /// The exchange does not continue the conversation (a second answer to a history
    /// already answered, say): nothing was appended, rather than make one line of
    /// history hold two branches.
    Diverged,
}

impl Kept {
    /// The `outcome` label of `mend_store_appends_total`.
    pub fn outcome(self) -> &'static str {
        match self {
            Kept::Appended(_) => "ok",
            Kept::AlreadyStored => "already_stored",
            Kept::Diverged => "diverged",
        }
    }
}

/// What an exchange adds to a conversation, decided against what it holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Append these items: the request's items the conversation lacks, then the output.
    Append(Vec<Value>),
    /// See [`Kept::AlreadyStored`].
    AlreadyStored,
    /// See [`Kept::Diverged`].
    Diverged,
}

/// Decide what an exchange (`history` sent, `output` received) adds to a conversation
/// holding `stored`, where `is_model` tells the model's items from the others.
///
/// The anchor is the history's last model turn (a run of consecutive model items: an
/// assistant message, a Responses reasoning item with its calls): everything up to it
/// came back from earlier exchanges, what follows it is new. It is looked up in the
/// conversation, and where it occurs more than once (a model that said the same thing
/// twice) the occurrence whose preceding items match the history's longest is taken.
/// - Found, with nothing stored after it: the new items and the output are appended
///   (the usual turn; also a client that trims its oldest turns).
/// - Found, with what follows it stored already (an exchange whose next turn reached
///   another replica and was appended first, carrying this output back): nothing.
/// - Found, with something else after it: a second answer to a history already
///   answered; not appended, rather than make one line of history hold two branches.
/// - Not found: earlier exchanges are not stored yet (another replica is still
///   appending them) when the conversation is a prefix of the history, and the history
///   carries them back, so it is appended from where the conversation ends; otherwise a
///   client (or repair) changed the turn, and what follows it is appended, as it would
///   be on one replica.
/// - A history without model output: appended unless it and the output are stored
///   already (a first turn appended late), or the conversation holds something else.
///
/// Model items are compared by what identifies them whatever client serialized them
/// (ids, call ids, names, arguments, texts, signatures, encrypted reasoning), not by
/// their bytes: an SDK writes back an assistant message with its own field order and
/// nulls, and may split a streamed text into several parts. Other items, which the
/// client wrote and sends again as they were, are compared as JSON.
pub fn plan_append(
    is_model: impl Fn(&Value) -> bool,
    stored: &[Value],
    history: &[Value],
    output: &[Value],
) -> Plan {
    let same = |a: &Value, b: &Value| match (is_model(a), is_model(b)) {
        (true, true) => same_model_item(a, b),
        (false, false) => a == b,
        _ => false,
    };
    let run_eq =
        |a: &[Value], b: &[Value]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y));
    let starts_with = |long: &[Value], head: &[Value]| {
        long.len() >= head.len() && run_eq(&long[..head.len()], head)
    };
    let append = |items: &[Value], output: &[Value]| {
        let mut all = items.to_vec();
        all.extend_from_slice(output);
        Plan::Append(all)
    };
    if stored.is_empty() {
        return append(history, output);
    }
    let turns = model_turns(history, &is_model);
    let Some(anchor) = turns.last().cloned() else {
        let whole: Vec<Value> = history.iter().chain(output).cloned().collect();
        if (0..stored.len()).any(|j| starts_with(&stored[j..], &whole)) {
            return Plan::AlreadyStored;
        }
        if starts_with(history, stored) {
            return append(&history[stored.len()..], output);
        }
        return Plan::Diverged;
    };
    let turn = &history[anchor.clone()];
    // Where the anchor occurs in the conversation, and how many items before it match.
    // (`windows` yields nothing when the conversation is shorter than the turn.)
    let best = stored
        .windows(turn.len())
        .enumerate()
        .filter(|(_, w)| run_eq(w, turn))
        .map(|(j, _)| {
            let context = (1..=j.min(anchor.start))
                .take_while(|&back| same(&stored[j - back], &history[anchor.start - back]))
                .count();
            (context, j)
        })
        .max();
    let wanted: Vec<Value> = history[anchor.end..]
        .iter()
        .chain(output)
        .cloned()
        .collect();
    match best {
        Some((_, j)) => {
            let after = &stored[j + turn.len()..];
            if after.is_empty() {
                append(&wanted, &[])
            } else if starts_with(after, &wanted) {
                Plan::AlreadyStored
            } else {
                Plan::Diverged
            }
        }
        None if starts_with(history, stored) => append(&history[stored.len()..], output),
        None => append(&wanted, &[]),
    }
}

/// The runs of consecutive model items.
fn model_turns(items: &[Value], is_model: impl Fn(&Value) -> bool) -> Vec<std::ops::Range<usize>> {
    let mut turns: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if !is_model(item) {
            continue;
        }
        match turns.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => turns.push(i..i + 1),
        }
    }
    turns
}

/// Whether two model items are the same: the same identifying strings and text, or
/// (when neither has any) the same JSON.
fn same_model_item(a: &Value, b: &Value) -> bool {
    let (fa, fb) = (fingerprint(a), fingerprint(b));
    if fa.0.is_empty() && fa.1.is_empty() && fb.0.is_empty() && fb.1.is_empty() {
        return a == b;
    }
    fa == fb
}

/// A model item's identifying strings (sorted) and its text (concatenated in order, so
/// that a text split over several parts reads the same as one part).
fn fingerprint(item: &Value) -> (Vec<&str>, String) {
    const IDS: [&str; 10] = [
        "id",
        "call_id",
        "name",
        "arguments",
        "signature",
        "data",
        "encrypted_content",
        "thoughtSignature",
        "thought_signature",
        "refusal",
    ];
    const TEXTS: [&str; 3] = ["text", "content", "thinking"];
    fn walk<'a>(v: &'a Value, key: Option<&str>, ids: &mut Vec<&'a str>, text: &mut String) {
        match v {
            Value::String(s) if key.is_some_and(|k| IDS.contains(&k)) && !s.is_empty() => {
                ids.push(s)
            }
            Value::String(s) if key.is_some_and(|k| TEXTS.contains(&k)) => text.push_str(s),
            Value::Array(a) => a.iter().for_each(|x| walk(x, key, ids, text)),
            Value::Object(o) => o.iter().for_each(|(k, x)| walk(x, Some(k), ids, text)),
            _ => {}
        }
    }
    let (mut ids, mut text) = (Vec::new(), String::new());
    walk(item, None, &mut ids, &mut text);
    ids.sort_unstable();
    (ids, text)
}

/// Whether a history item was produced by the model.
pub fn is_model_output(dialect: Dialect, item: &Value) -> bool {
    let role = item.get("role").and_then(Value::as_str);
    match dialect {
        Dialect::Gemini => role == Some("model"),
        Dialect::OpenAiChat | Dialect::Anthropic | Dialect::BedrockConverse => {
            role == Some("assistant")
        }
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

/// The assistant output of a response (a JSON body, or an SSE stream or, for Converse, an
/// AWS event stream when `content_type` says so), as history items of the dialect: what the client sends back
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
    let stream = ["text/event-stream", "application/vnd.amazon.eventstream"]
        .iter()
        .any(|t| content_type.starts_with(t));
    let reply = if stream {
        capture::read_stream(dialect, body)
    } else {
        capture::read_response(dialect, body)
    }
    .map_err(|e| format!("the response could not be captured: {e}"))?;
    reply_output(dialect, &reply)
}

/// The assistant output of a captured reply, as history items of the dialect (see
/// [`response_output`]).
pub(crate) fn reply_output(dialect: Dialect, reply: &capture::Reply) -> Result<Vec<Value>, String> {
    let messages = mend::next::continued_output(dialect, reply, 0).map_err(|e| e.to_string())?;
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
    /// Each conversation's scope, set by its first claim or append.
    scopes: Mutex<HashMap<String, String>>,
}

impl MemoryConversations {
    /// An empty set.
    pub fn new() -> MemoryConversations {
        MemoryConversations::default()
    }

    /// A conversation's scope, once it has one.
    pub fn scope(&self, conversation: &str) -> Option<String> {
        self.scopes
            .lock()
            .ok()
            .and_then(|m| m.get(conversation).cloned())
    }

    /// Give `conversation` to `scope` unless another scope has it.
    fn take(&self, conversation: &str, scope: &str) -> Result<Claim, String> {
        let mut scopes = self
            .scopes
            .lock()
            .map_err(|_| "the scope map is poisoned".to_string())?;
        let owner = scopes
            .entry(conversation.to_string())
            .or_insert_with(|| scope.to_string());
        Ok(if owner == scope {
            Claim::Granted
        } else {
            Claim::OutOfScope
        })
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
    fn claim(
        &self,
        conversation: &str,
        _dialect: Dialect,
        scope: &str,
    ) -> BoxFuture<'static, Result<Claim, String>> {
        let result = self.take(conversation, scope);
        Box::pin(async move { result })
    }

    fn append(&self, exchange: Exchange) -> BoxFuture<'static, Result<Kept, String>> {
        if let Err(e) = self
            .take(&exchange.conversation, &exchange.scope)
            .and_then(|c| match c {
                Claim::Granted => Ok(()),
                Claim::OutOfScope => Err(format!(
                    "conversation '{}' belongs to another scope than '{}'; nothing was written",
                    exchange.conversation, exchange.scope
                )),
            })
        {
            return Box::pin(async move { Err(e) });
        }
        let result = self
            .conversations
            .lock()
            .map_err(|_| "the conversation map is poisoned".to_string())
            .map(|mut map| {
                let conv = map.entry(exchange.conversation.clone()).or_default();
                let dialect = exchange.dialect;
                let is_model = |v: &Value| is_model_output(dialect, v);
                // The same decision the store-backed sink makes.
                match plan_append(is_model, conv, &exchange.history, &exchange.output) {
                    Plan::Append(items) => {
                        let n = items.len();
                        conv.extend(items);
                        Kept::Appended(n)
                    }
                    Plan::AlreadyStored => Kept::AlreadyStored,
                    Plan::Diverged => Kept::Diverged,
                }
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
        let is_model = |v: &Value| is_model_output(Dialect::OpenAiResponses, v);
        let new = |stored: &[Value]| match plan_append(is_model, stored, &h, &[]) {
            Plan::Append(items) => items,
            other => panic!("expected an append, got {other:?}"),
        };
        assert_eq!(new(&[]).len(), 4);
        assert_eq!(new(&h[..3]), &h[3..]);
    }

    /// Chat items: `u(text)`, a tool-calling assistant `a(id)` as captured, `a2(id)`
    /// the same as an SDK writes it back, a text answer `t(text)`, a result `r(id)`.
    fn u(text: &str) -> Value {
        json!({"role": "user", "content": text})
    }
    fn a(id: &str) -> Value {
        json!({"role": "assistant", "tool_calls": [{"id": id, "type": "function",
            "function": {"name": "w", "arguments": "{}"}}]})
    }
    fn a2(id: &str) -> Value {
        json!({"content": null, "tool_calls": [{"type": "function", "id": id,
            "function": {"arguments": "{}", "name": "w"}}], "role": "assistant", "refusal": null})
    }
    fn t(text: &str) -> Value {
        json!({"role": "assistant", "content": text})
    }
    fn r(id: &str) -> Value {
        json!({"role": "tool", "tool_call_id": id, "content": "18C"})
    }
    fn plan(stored: &[Value], history: &[Value], output: &[Value]) -> Plan {
        plan_append(
            |v| is_model_output(Dialect::OpenAiChat, v),
            stored,
            history,
            output,
        )
    }

    #[test]
    fn exchanges_add_what_the_conversation_lacks_in_any_order_of_arrival() {
        // In order: each turn adds what follows the model's last turn, and its output.
        assert_eq!(
            plan(&[], &[u("q")], &[a("c1")]),
            Plan::Append(vec![u("q"), a("c1")])
        );
        let one = [u("q"), a("c1")];
        assert_eq!(
            plan(&one, &[u("q"), a2("c1"), r("c1")], &[t("ok")]),
            Plan::Append(vec![r("c1"), t("ok")])
        );
        // Turn 2 appended first (another replica): it carries turn 1 back ...
        let two = [u("q"), a2("c1"), r("c1"), t("ok")];
        assert_eq!(plan(&[], &two[..3], &[t("ok")]), Plan::Append(two.to_vec()));
        // ... so turn 1, late, finds its output stored and adds nothing.
        assert_eq!(plan(&two, &[u("q")], &[a("c1")]), Plan::AlreadyStored);
        // Turn 3 before turn 2: appended from where the conversation ends.
        let three = [
            u("q"),
            a2("c1"),
            r("c1"),
            t("ok"),
            u("again"),
            a2("c2"),
            r("c2"),
        ];
        assert_eq!(
            plan(&one, &three, &[t("ok")]),
            Plan::Append(vec![
                r("c1"),
                t("ok"),
                u("again"),
                a2("c2"),
                r("c2"),
                t("ok")
            ])
        );
        // A second answer to an answered history is not appended.
        assert_eq!(plan(&one, &[u("q")], &[a("c9")]), Plan::Diverged);
        assert_eq!(
            plan(&two, &[u("q"), a2("c1"), r("c1")], &[t("other")]),
            Plan::Diverged
        );
    }

    #[test]
    fn repeated_answers_and_trimmed_histories_find_their_place() {
        // The model said "ok" twice; a late turn anchors on the first by its context.
        let stored = [
            u("q"),
            a("c1"),
            r("c1"),
            t("ok"),
            u("again"),
            a("c2"),
            r("c2"),
            t("ok"),
        ];
        assert_eq!(plan(&stored, &stored[..5], &[a("c2")]), Plan::AlreadyStored);
        // A client that trims its oldest turns but keeps its first message.
        let trimmed = [u("q"), u("again"), a2("c2"), r("c2"), t("ok"), u("more")];
        assert_eq!(
            plan(&stored, &trimmed, &[t("fine")]),
            Plan::Append(vec![u("more"), t("fine")])
        );
        // A turn changed by the client (or repair) is not in the conversation: what
        // follows it is appended, as on one replica.
        assert_eq!(
            plan(&stored, &[u("q"), t("edited"), u("next")], &[t("fine")]),
            Plan::Append(vec![u("next"), t("fine")])
        );
        // A model turn longer than the whole conversation is simply not found there.
        assert_eq!(
            plan(
                &[u("q")],
                &[u("q"), t("a"), t("b"), u("next")],
                &[t("fine")]
            ),
            Plan::Append(vec![t("a"), t("b"), u("next"), t("fine")])
        );
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
