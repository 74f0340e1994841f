//! What every backend must do, written once over [`Backend`].

use std::collections::{BTreeMap, HashSet};

use mend_store::{
    AppendOptions, Error, Format, ListOptions, NewConversation, NewMessage, Span, Store,
    StoredMessage, Validation,
};
use serde_json::{json, Value};

use crate::support::Backend;

fn v(message: Value) -> NewMessage {
    NewMessage::from_value(&message).expect("a message")
}

fn raw(text: &str) -> NewMessage {
    NewMessage::from_json(text).expect("a message")
}

/// Batches that a careless store would damage: a user and an assistant message in one
/// append (merged by a store that grouped by append), assistant messages that hold only
/// reasoning or thinking in every dialect (dropped by a "clean-up"), role-less Responses
/// items, verbatim text with escapes and odd numbers, empty content, repeated ids.
fn tricky_batches() -> Vec<Vec<NewMessage>> {
    vec![
        vec![
            v(json!({"role": "user", "content": "What's the weather in Paris?"})),
            v(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]})),
        ],
        vec![
            v(json!({"role": "tool", "tool_call_id": "call_1", "content": "18°C"})),
            v(json!({"role": "assistant", "reasoning_content": "The user wants...", "content": ""})),
        ],
        vec![v(json!({"id": "msg_0001", "role": "assistant", "parts": [
            {"type": "reasoning", "text": "think", "signature": "c2ln", "provider_item_id": "rs_1"}]}))],
        vec![
            v(json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Let me think.", "signature": "EqoBCkgIARABGAIiQL"}]})),
            v(json!({"role": "assistant", "content": [
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}]})),
        ],
        vec![
            v(json!({"type": "reasoning", "id": "rs_68a", "summary": [], "encrypted_content": "gAAAAABo"})),
            v(json!({"type": "function_call", "id": "fc_68b", "call_id": "call_2", "name": "f", "arguments": "{}"})),
            v(json!({"type": "function_call_output", "call_id": "call_2", "output": "ok"})),
        ],
        vec![v(json!({"role": "model", "parts": [
            {"text": "hmm", "thought": true, "thoughtSignature": "c2lnbmF0dXJl"}]}))],
        vec![
            raw("{ \"role\" : \"user\",\n  \"content\": \"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\n\\t\",\n  \"n\": [1.50, -0, 12345678901234567890, 1E+2, 0.1] }"),
            raw(r#"{"z":1,"role":"assistant","a":{"y":[],"b":{}},"content":"dup","content":"second"}"#),
        ],
        vec![
            v(json!({"role": "assistant", "content": []})),
            v(json!({"role": "user", "content": ""})),
            v(json!({"id": "same", "role": "user", "content": "one"})),
            v(json!({"id": "same", "role": "user", "content": "two"})),
        ],
        vec![v(json!({"role": "user", "content": "ü€𝄞 ".repeat(20_000)}))],
    ]
}

fn assert_same(stored: &[StoredMessage], appended: &[&NewMessage], first_seq: u64) {
    assert_eq!(stored.len(), appended.len(), "message count");
    for (k, (s, m)) in stored.iter().zip(appended).enumerate() {
        assert_eq!(s.seq, first_seq + k as u64, "sequence of message {k}");
        assert_eq!(s.raw, m.json(), "bytes of message {k}");
        assert_eq!(s.role, m.role(), "role of message {k}");
        if let Some(id) = m.id() {
            assert_eq!(s.id, id, "id of message {k}");
        }
        let parsed = s.value().expect("stored JSON parses");
        let given: Value = serde_json::from_str(m.json()).expect("given JSON parses");
        assert_eq!(
            serde_json::to_string(&parsed).unwrap(),
            serde_json::to_string(&given).unwrap(),
            "parsed message {k}, key order included"
        );
    }
}

pub async fn load_returns_exactly_what_was_appended<B: Backend>(b: &B) {
    let store = b.open().await;
    let conv = store.create(NewConversation::default()).await.unwrap();
    assert_eq!(conv.last_sequence, 0);
    assert!(store.load(&conv.id, Span::ALL).await.unwrap().is_empty());
    let batches = tricky_batches();
    let mut next = 1;
    for (i, batch) in batches.iter().enumerate() {
        let key = (i % 2 == 0).then(|| format!("k{i}"));
        let opts = AppendOptions {
            idempotency_key: key,
            ..AppendOptions::default()
        };
        let done = store.append(&conv.id, batch, &opts).await.unwrap();
        let want: Vec<u64> = (next..next + batch.len() as u64).collect();
        assert_eq!(done.sequences, want, "{}: sequences of batch {i}", b.name());
        assert!(!done.replayed);
        next += batch.len() as u64;
    }
    let all: Vec<&NewMessage> = batches.iter().flatten().collect();
    let loaded = store.load(&conv.id, Span::ALL).await.unwrap();
    assert_same(&loaded, &all, 1);
    // Ids the store made are unique and stable across loads and handles.
    let made: Vec<&str> = loaded
        .iter()
        .zip(&all)
        .filter(|(_, m)| m.id().is_none())
        .map(|(s, _)| s.id.as_str())
        .collect();
    assert_eq!(made.iter().collect::<HashSet<_>>().len(), made.len());
    assert!(made.iter().all(|id| !id.is_empty()));
    let other = b.open().await;
    assert_eq!(other.load(&conv.id, Span::ALL).await.unwrap(), loaded);
    assert_eq!(
        store.info(&conv.id).await.unwrap().last_sequence,
        all.len() as u64
    );
    assert!(matches!(
        store.load("no-such", Span::ALL).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        store
            .append(
                "no-such",
                &all[0..1].iter().map(|m| (*m).clone()).collect::<Vec<_>>(),
                &AppendOptions::default()
            )
            .await,
        Err(Error::NotFound(_))
    ));
}

pub async fn load_of_a_span_returns_that_span<B: Backend>(b: &B) {
    let store = b.open().await;
    let conv = store.create(NewConversation::default()).await.unwrap();
    let messages: Vec<NewMessage> = (0..10)
        .map(|i| v(json!({"role": "user", "content": format!("m{i}")})))
        .collect();
    store
        .append(&conv.id, &messages[..4], &AppendOptions::default())
        .await
        .unwrap();
    store
        .append(&conv.id, &messages[4..], &AppendOptions::default())
        .await
        .unwrap();
    let refs: Vec<&NewMessage> = messages.iter().collect();
    let part = store.load(&conv.id, Span::between(3, 6)).await.unwrap();
    assert_same(&part, &refs[2..6], 3);
    let tail = store.load(&conv.id, (8..).into()).await.unwrap();
    assert_same(&tail, &refs[7..], 8);
    assert!(store
        .load(&conv.id, Span::starting_at(11))
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .load(&conv.id, Span::between(5, 4))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(store.load(&conv.id, (..).into()).await.unwrap().len(), 10);
}

pub async fn a_used_key_returns_the_first_result_and_writes_nothing<B: Backend>(b: &B) {
    let store = b.open().await;
    let conv = store.create(NewConversation::default()).await.unwrap();
    let first = vec![
        v(json!({"role": "user", "content": "a"})),
        v(json!({"role": "assistant", "content": "b"})),
    ];
    let done = store
        .append(&conv.id, &first, &AppendOptions::keyed("turn-1"))
        .await
        .unwrap();
    assert_eq!(done.sequences, vec![1, 2]);
    let loaded = store.load(&conv.id, Span::ALL).await.unwrap();
    // The same append again, from another handle: the first result, nothing written.
    let other = b.open().await;
    let again = other
        .append(&conv.id, &first, &AppendOptions::keyed("turn-1"))
        .await
        .unwrap();
    assert_eq!(again.sequences, vec![1, 2]);
    assert!(again.replayed);
    assert_eq!(store.load(&conv.id, Span::ALL).await.unwrap(), loaded);
    // The key with other messages: refused, nothing written.
    let err = store
        .append(
            &conv.id,
            &[v(json!({"role": "user", "content": "c"}))],
            &AppendOptions::keyed("turn-1"),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::KeyConflict {
                first: 1,
                last: 2,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(store.load(&conv.id, Span::ALL).await.unwrap(), loaded);
    // Later appends do not disturb a replay.
    let third = vec![v(json!({"role": "user", "content": "c"}))];
    let done = store
        .append(&conv.id, &third, &AppendOptions::keyed("turn-2"))
        .await
        .unwrap();
    assert_eq!(done.sequences, vec![3]);
    assert_eq!(
        store
            .append(&conv.id, &first, &AppendOptions::keyed("turn-1"))
            .await
            .unwrap()
            .sequences,
        vec![1, 2]
    );
    // An empty append with a key is remembered too.
    let empty = store
        .append(&conv.id, &[], &AppendOptions::keyed("nothing"))
        .await
        .unwrap();
    assert!(empty.sequences.is_empty() && !empty.replayed);
    let empty = store
        .append(&conv.id, &[], &AppendOptions::keyed("nothing"))
        .await
        .unwrap();
    assert!(empty.sequences.is_empty() && empty.replayed);
    // Keys belong to one conversation.
    let elsewhere = store.create(NewConversation::default()).await.unwrap();
    let done = store
        .append(&elsewhere.id, &first, &AppendOptions::keyed("turn-1"))
        .await
        .unwrap();
    assert!(!done.replayed);
    assert_eq!(store.info(&conv.id).await.unwrap().last_sequence, 3);
}

pub async fn sixteen_concurrent_writers_lose_and_duplicate_nothing<B: Backend>(b: &B) {
    const WRITERS: usize = 16;
    const APPENDS: usize = 12;
    let shared = b.open().await;
    let conv = shared.create(NewConversation::default()).await.unwrap();
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        // Half the writers have connections of their own, half share one handle.
        let store = if w % 2 == 0 {
            b.open().await
        } else {
            shared.clone()
        };
        let conv = conv.id.clone();
        tasks.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0..APPENDS {
                let batch: Vec<NewMessage> = (0..1 + (w + i) % 3)
                    .map(|p| v(json!({"role": "user", "w": w, "i": i, "p": p})))
                    .collect();
                let key = AppendOptions::keyed(format!("{w}-{i}"));
                let done = store.append(&conv, &batch, &key).await.unwrap();
                // Every third append is retried, as a client that lost the answer would.
                if i % 3 == 0 {
                    let again = store.append(&conv, &batch, &key).await.unwrap();
                    assert!(again.replayed);
                    assert_eq!(again.sequences, done.sequences);
                }
                acked.push((w, i, done.sequences, batch));
            }
            acked
        }));
    }
    let mut acked = Vec::new();
    for t in tasks {
        acked.extend(t.await.unwrap());
    }
    let loaded = shared.load(&conv.id, Span::ALL).await.unwrap();
    let total: usize = acked.iter().map(|a| a.3.len()).sum();
    assert_eq!(
        loaded.len(),
        total,
        "{}: nothing lost, nothing duplicated",
        b.name()
    );
    for (k, m) in loaded.iter().enumerate() {
        assert_eq!(m.seq, k as u64 + 1, "gap-free sequence");
    }
    let mut seen = BTreeMap::new();
    for (w, i, seqs, batch) in &acked {
        assert_eq!(seqs.len(), batch.len());
        for (s, m) in seqs.iter().zip(batch) {
            assert_eq!(
                loaded[*s as usize - 1].raw,
                m.json(),
                "writer {w} append {i}"
            );
            assert!(
                seen.insert(*s, (w, i)).is_none(),
                "sequence {s} acknowledged twice"
            );
        }
        assert!(
            seqs.windows(2).all(|p| p[1] == p[0] + 1),
            "one append is contiguous"
        );
    }
    assert_eq!(
        shared.info(&conv.id).await.unwrap().last_sequence,
        total as u64
    );
}

pub async fn fork_copies_the_prefix_and_nothing_else<B: Backend>(b: &B) {
    let store = b.open().await;
    let conv = store
        .create(NewConversation::with_id("source").format(Format::Wire(mend::Dialect::Anthropic)))
        .await
        .unwrap();
    let batches: Vec<Vec<NewMessage>> = (0..5)
        .map(|i| {
            vec![
                v(json!({"role": "user", "content": format!("q{i}")})),
                v(json!({"role": "assistant", "content": [
                    {"type": "thinking", "thinking": format!("t{i}"), "signature": "s"}]})),
            ]
        })
        .collect();
    for (i, batch) in batches.iter().enumerate() {
        store
            .append(&conv.id, batch, &AppendOptions::keyed(format!("k{i}")))
            .await
            .unwrap();
    }
    let before = store.load(&conv.id, Span::ALL).await.unwrap();
    let fork = store.fork(&conv.id, 6, Some("child")).await.unwrap();
    assert_eq!(fork.id, "child");
    assert_eq!(fork.last_sequence, 6);
    assert_eq!(fork.format, Format::Wire(mend::Dialect::Anthropic));
    let origin = fork.forked_from.clone().unwrap();
    assert_eq!(
        (origin.conversation.as_str(), origin.at_sequence),
        ("source", 6)
    );
    assert_eq!(store.info("child").await.unwrap(), fork);
    // The prefix, byte for byte, with the same ids and sequences; nothing after it.
    let copied = store.load("child", Span::ALL).await.unwrap();
    assert_eq!(copied, before[..6].to_vec());
    // Keys stay with the source: a key used after the fork point writes in the fork,
    // and so does one used before it (the fork is a new conversation).
    let late = store
        .append("child", &batches[4], &AppendOptions::keyed("k4"))
        .await
        .unwrap();
    assert!(!late.replayed);
    assert_eq!(late.sequences, vec![7, 8]);
    let early = store
        .append("child", &batches[0], &AppendOptions::keyed("k0"))
        .await
        .unwrap();
    assert!(!early.replayed);
    // The source is untouched, and its appends do not reach the fork.
    assert_eq!(store.load(&conv.id, Span::ALL).await.unwrap(), before);
    store
        .append(&conv.id, &batches[0], &AppendOptions::default())
        .await
        .unwrap();
    assert_eq!(store.info("child").await.unwrap().last_sequence, 10);
    assert_eq!(store.info(&conv.id).await.unwrap().last_sequence, 12);
    // Edges: an empty fork, a fork past the end, of nothing, onto an existing id.
    let empty = store.fork(&conv.id, 0, None).await.unwrap();
    assert!(store.load(&empty.id, Span::ALL).await.unwrap().is_empty());
    assert!(matches!(
        store.fork(&conv.id, 13, None).await,
        Err(Error::OutOfRange {
            at: 13,
            last: 12,
            ..
        })
    ));
    assert!(matches!(
        store.fork("nothing", 0, None).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        store.fork(&conv.id, 1, Some("child")).await,
        Err(Error::AlreadyExists(_))
    ));
    assert_eq!(store.info("child").await.unwrap().last_sequence, 10);
}

pub async fn delete_removes_the_conversation_and_keeps_its_forks<B: Backend>(b: &B) {
    let store = b.open().await;
    let keep = store.create(NewConversation::default()).await.unwrap();
    let conv = store
        .create(NewConversation::with_id("doomed"))
        .await
        .unwrap();
    let batch = vec![v(json!({"role": "user", "content": "x"}))];
    store
        .append(&keep.id, &batch, &AppendOptions::default())
        .await
        .unwrap();
    store
        .append(&conv.id, &batch, &AppendOptions::keyed("k"))
        .await
        .unwrap();
    let fork = store.fork(&conv.id, 1, None).await.unwrap();
    assert!(store.delete(&conv.id).await.unwrap());
    assert!(!store.delete(&conv.id).await.unwrap());
    assert!(matches!(
        store.load(&conv.id, Span::ALL).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        store
            .append(&conv.id, &batch, &AppendOptions::default())
            .await,
        Err(Error::NotFound(_))
    ));
    assert_eq!(store.load(&fork.id, Span::ALL).await.unwrap().len(), 1);
    assert_eq!(
        store.info(&fork.id).await.unwrap().forked_from,
        fork.forked_from
    );
    assert_eq!(store.load(&keep.id, Span::ALL).await.unwrap().len(), 1);
    // A new conversation under the old id starts afresh: no messages, no keys.
    store
        .create(NewConversation::with_id("doomed"))
        .await
        .unwrap();
    let done = store
        .append("doomed", &batch, &AppendOptions::keyed("k"))
        .await
        .unwrap();
    assert_eq!((done.sequences, done.replayed), (vec![1], false));
}

pub async fn list_pages_in_creation_order<B: Backend>(b: &B) {
    let store = b.open().await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let id = format!("c{}", 9 - i); // not in lexical order
        store.create(NewConversation::with_id(&id)).await.unwrap();
        ids.push(id);
    }
    let all = store.list(&ListOptions::default()).await.unwrap();
    assert_eq!(all.iter().map(|c| c.id.clone()).collect::<Vec<_>>(), ids);
    let page = store
        .list(&ListOptions {
            limit: Some(2),
            after: Some(ids[1].clone()),
            ..ListOptions::default()
        })
        .await
        .unwrap();
    assert_eq!(
        page.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        vec![ids[2].as_str(), ids[3].as_str()]
    );
    assert!(matches!(
        store
            .list(&ListOptions {
                limit: None,
                after: Some("nothing".into()),
                ..ListOptions::default()
            })
            .await,
        Err(Error::NotFound(_))
    ));
}

pub async fn ids_are_unique_and_checked<B: Backend>(b: &B) {
    let store = b.open().await;
    let a = store.create(NewConversation::default()).await.unwrap();
    let c = store.create(NewConversation::default()).await.unwrap();
    assert_ne!(a.id, c.id);
    store.create(NewConversation::with_id("x")).await.unwrap();
    assert!(matches!(
        store.create(NewConversation::with_id("x")).await,
        Err(Error::AlreadyExists(_))
    ));
    for bad in ["", "a\nb"] {
        assert!(matches!(
            store.create(NewConversation::with_id(bad)).await,
            Err(Error::InvalidId(_))
        ));
    }
    let info = store.info("x").await.unwrap();
    assert_eq!((info.format, info.last_sequence), (Format::Any, 0));
}

pub async fn validation_rejects_naming_the_rule_and_writes_nothing<B: Backend>(b: &B) {
    let store = b.open().await;
    let conv = store
        .create(NewConversation::default().format(Format::Wire(mend::Dialect::OpenAiChat)))
        .await
        .unwrap();
    let check = AppendOptions::default()
        .validate(Validation::new(mend::Dialect::OpenAiChat).model("gpt-4o"));
    let turn = vec![
        v(json!({"role": "user", "content": "weather?"})),
        v(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]})),
    ];
    // A call waiting for its result is fine: the result comes with the next append.
    store.append(&conv.id, &turn, &check).await.unwrap();
    let err = store
        .append(
            &conv.id,
            &[v(json!({"role": "user", "content": "hello?"}))],
            &check,
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("tool-call-without-result"),
        "{err}"
    );
    assert_eq!(store.info(&conv.id).await.unwrap().last_sequence, 2);
    let result = vec![v(
        json!({"role": "tool", "tool_call_id": "call_1", "content": "sun"}),
    )];
    assert_eq!(
        store
            .append(&conv.id, &result, &check)
            .await
            .unwrap()
            .sequences,
        vec![3]
    );
    // Warn instead: written, and reported.
    let warn = AppendOptions::keyed("w").validate(
        Validation::new(mend::Dialect::OpenAiChat)
            .model("gpt-4o")
            .warn_only(),
    );
    let orphan = vec![v(
        json!({"role": "tool", "tool_call_id": "call_9", "content": "?"}),
    )];
    let done = store.append(&conv.id, &orphan, &warn).await.unwrap();
    assert_eq!(done.sequences, vec![4]);
    assert_eq!(done.findings[0].rule.id(), "tool-result-without-call");
}

pub async fn canonical_messages_come_back_and_render_for_any_dialect<B: Backend>(b: &B) {
    use mend::canonical::Conversation;
    use mend::Dialect;
    let store = b.open().await;
    let body = json!({"model": "claude-sonnet-4-5", "max_tokens": 1024,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "weather in Paris?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Use the tool.", "signature": "EqQBCkgIARAB"},
                {"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "18C"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Done.", "signature": "EqQBCkgIARAC"}]}]});
    let conv = Conversation::from_request(Dialect::Anthropic, &body).unwrap();
    let messages: Vec<NewMessage> = conv
        .messages
        .iter()
        .map(|m| NewMessage::from_canonical(m).unwrap())
        .collect();
    let c = store
        .create(NewConversation::default().format(Format::Canonical(Some(Dialect::Anthropic))))
        .await
        .unwrap();
    store
        .append(&c.id, &messages, &AppendOptions::default())
        .await
        .unwrap();
    let loaded = store.load(&c.id, Span::ALL).await.unwrap();
    // Back as canonical messages: the same, each with the id the store gave it.
    for (s, m) in loaded.iter().zip(&conv.messages) {
        let mut back = s.canonical().unwrap();
        assert_eq!(back.id.as_deref(), Some(s.id.as_str()));
        back.id = None;
        assert_eq!(&back, m);
    }
    // Rendered for the dialect it came from: the body it was read from.
    let values = mend_store::values(&loaded).unwrap();
    let mut request = conv.request.clone();
    let again = mend_store::render::render(
        Format::Canonical(Some(Dialect::Anthropic)),
        values.clone(),
        Dialect::Anthropic,
        &request,
        None,
    )
    .unwrap();
    assert_eq!(again, body);
    // And for another, through the canonical model, with the fields asked for.
    request.clear();
    let chat = mend_store::render::render(
        Format::Canonical(Some(Dialect::Anthropic)),
        values,
        Dialect::OpenAiChat,
        &request,
        Some("gpt-4o"),
    )
    .unwrap();
    assert_eq!(chat["model"], "gpt-4o");
    // (Whether the converted body is valid is the converter's to promise and test.)
    assert_eq!(chat["messages"][1]["role"], "user", "{chat}");
    // Validation of a canonical conversation checks its rendering for the dialect.
    let orphan = NewMessage::from_canonical(
        &Conversation::from_request(
            Dialect::Anthropic,
            &json!({"messages": [{"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_99", "content": "?"}]}]}),
        )
        .unwrap()
        .messages[0],
    )
    .unwrap();
    let check = AppendOptions::default()
        .validate(Validation::new(Dialect::Anthropic).model("claude-sonnet-4-5"));
    let err = store.append(&c.id, &[orphan], &check).await.unwrap_err();
    assert!(
        err.to_string().contains("tool-result-without-call"),
        "{err}"
    );
}

/// Keys live for the store's key lifetime: within it a used key replays, past it the key
/// is forgotten (by the next append to its conversation, or by `prune_keys` for all).
pub async fn used_keys_are_forgotten_after_their_lifetime<B: Backend>(b: &B) {
    let ttl = std::time::Duration::from_millis(600);
    let store = b.try_open_with_key_ttl(ttl).await.unwrap();
    let one = [v(json!({"role": "user", "content": "once"}))];
    let conv = store
        .create(NewConversation::with_id("live"))
        .await
        .unwrap();
    let idle = store
        .create(NewConversation::with_id("idle"))
        .await
        .unwrap();
    store
        .append(&idle.id, &one, &AppendOptions::keyed("old"))
        .await
        .unwrap();
    let first = store
        .append(&conv.id, &one, &AppendOptions::keyed("k"))
        .await
        .unwrap();
    assert_eq!(first.sequences, vec![1]);
    // Within the lifetime: replayed, nothing written (also by another handle).
    let again = b
        .try_open_with_key_ttl(ttl)
        .await
        .unwrap()
        .append(&conv.id, &one, &AppendOptions::keyed("k"))
        .await
        .unwrap();
    assert!(again.replayed, "{}: a live key must replay", b.name());
    assert_eq!(again.sequences, vec![1]);
    tokio::time::sleep(ttl + std::time::Duration::from_millis(100)).await;
    // Past it: the key is forgotten and the append writes.
    let late = store
        .append(&conv.id, &one, &AppendOptions::keyed("k"))
        .await
        .unwrap();
    assert!(
        !late.replayed,
        "{}: an expired key must not replay",
        b.name()
    );
    assert_eq!(late.sequences, vec![2]);
    // ... and is remembered afresh from then on.
    let replay = store
        .append(&conv.id, &one, &AppendOptions::keyed("k"))
        .await
        .unwrap();
    assert_eq!((replay.replayed, replay.sequences), (true, vec![2]));
    // The idle conversation's expired key is still there until pruned: exactly one key
    // is older than the lifetime, and pruning it leaves messages alone.
    assert_eq!(store.prune_keys(ttl).await.unwrap(), 1, "{}", b.name());
    assert_eq!(store.prune_keys(ttl).await.unwrap(), 0);
    assert_eq!(store.load(&idle.id, Span::ALL).await.unwrap().len(), 1);
    assert_eq!(store.load(&conv.id, Span::ALL).await.unwrap().len(), 2);
    let after = store
        .append(&idle.id, &one, &AppendOptions::keyed("old"))
        .await
        .unwrap();
    assert_eq!((after.replayed, after.sequences), (false, vec![2]));
    // `prune_keys` with a short age forgets the live key too.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert_eq!(
        store
            .prune_keys(std::time::Duration::from_millis(10))
            .await
            .unwrap(),
        2
    );
    let fresh = store
        .append(&conv.id, &one, &AppendOptions::keyed("k"))
        .await
        .unwrap();
    assert_eq!((fresh.replayed, fresh.sequences), (false, vec![3]));
}

/// A compare-and-append writes only when the conversation still ends where the caller
/// saw it end; a replayed key is answered first.
pub async fn compare_and_append_refuses_a_conversation_that_moved_on<B: Backend>(b: &B) {
    let store = b.open().await;
    let conv = store.create(NewConversation::default()).await.unwrap();
    let two = [
        v(json!({"role": "user", "content": "a"})),
        v(json!({"role": "assistant", "content": "b"})),
    ];
    let done = store
        .append(
            &conv.id,
            &two,
            &AppendOptions::keyed("t1").expecting_last(0),
        )
        .await
        .unwrap();
    assert_eq!(done.sequences, vec![1, 2]);
    let stale = AppendOptions::default().expecting_last(0);
    match store.append(&conv.id, &two, &stale).await {
        Err(Error::Moved {
            expected: 0,
            last: 2,
            ..
        }) => {}
        other => panic!("{}: expected Moved, got {other:?}", b.name()),
    }
    assert_eq!(store.info(&conv.id).await.unwrap().last_sequence, 2);
    // The same key again, even expecting the old end, replays.
    let again = store
        .append(
            &conv.id,
            &two,
            &AppendOptions::keyed("t1").expecting_last(0),
        )
        .await
        .unwrap();
    assert!(again.replayed);
    let next = store
        .append(
            &conv.id,
            &two[..1],
            &AppendOptions::default().expecting_last(2),
        )
        .await
        .unwrap();
    assert_eq!(next.sequences, vec![3]);
    // Concurrent compare-and-appends from one observed end: exactly one wins.
    let mut tasks = Vec::new();
    for w in 0..8 {
        let store = b.open().await;
        let id = conv.id.clone();
        tasks.push(tokio::spawn(async move {
            let m = [NewMessage::from_value(&json!({"role": "user", "content": w})).unwrap()];
            store
                .append(&id, &m, &AppendOptions::default().expecting_last(3))
                .await
        }));
    }
    let mut won = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(a) => {
                won += 1;
                assert_eq!(a.sequences, vec![4]);
            }
            Err(Error::Moved { last: 4, .. }) => {}
            Err(e) => panic!("{}: {e}", b.name()),
        }
    }
    assert_eq!(won, 1, "{}", b.name());
    assert_eq!(store.info(&conv.id).await.unwrap().last_sequence, 4);
}
