//! Gateway replicas sharing one conversation store: exchanges on one conversation that
//! end at the same time, or a next turn that reaches another replica before this turn's
//! append (its commit past the capture timeout), leave one ordered history, each exchange's messages together, each output
//! once. On SQLite (one file, two handles) and PostgreSQL (when reachable).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mend::Dialect;
use mend_gateway::exchange::BoxFuture;
use mend_gateway::store::StoreConversations;
use mend_gateway::{Claim, Conversations, Exchange, Gateway, Kept, Mode};
use mend_store::{AnyStore, Span, Store};
use serde_json::Value;

use crate::conversations::{assistant_items, first_turn, path, post, result_for};
use crate::support::{config_for, Mock};

/// A replica's sink: the store, maybe slowed down, with each outcome recorded.
struct Replica {
    store: Arc<dyn Conversations>,
    delay: Duration,
    kept: Arc<Mutex<Vec<Kept>>>,
}

impl Conversations for Replica {
    fn append(&self, ex: Exchange) -> BoxFuture<'static, Result<Kept, String>> {
        let (store, delay, kept) = (self.store.clone(), self.delay, self.kept.clone());
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            let outcome = store.append(ex).await;
            kept.lock()
                .unwrap()
                .push(outcome.clone().unwrap_or_else(|e| panic!("{e}")));
            outcome
        })
    }

    fn claim(
        &self,
        conversation: &str,
        dialect: Dialect,
        scope: &str,
    ) -> BoxFuture<'static, Result<Claim, String>> {
        self.store.claim(conversation, dialect, scope)
    }
}

/// A gateway on a real socket whose sink is `db`, through a store handle of its own.
/// A slowed replica gives up waiting for its commits at a third of the delay, so its
/// answers go out before their appends land (`x-mend-capture: failed`).
async fn replica(mock: &Mock, db: &str, delay: Duration) -> (SocketAddr, Arc<Mutex<Vec<Kept>>>) {
    let store = AnyStore::open(db).await.unwrap();
    let kept = Arc::new(Mutex::new(Vec::new()));
    let sink: Arc<dyn Conversations> = Arc::new(Replica {
        store: Arc::new(StoreConversations::new(Arc::new(store))),
        delay,
        kept: kept.clone(),
    });
    let mut config = config_for(mock, Mode::Repair);
    if !delay.is_zero() {
        config.capture_timeout = delay / 3;
    }
    let gateway = Gateway::with_conversations(config, Some(sink)).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(mend_gateway::serve(
        gateway,
        listener,
        std::future::pending(),
    ));
    (addr, kept)
}

async fn settle(kept: &[&Arc<Mutex<Vec<Kept>>>], n: usize) {
    for _ in 0..500 {
        if kept.iter().map(|k| k.lock().unwrap().len()).sum::<usize>() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the appends did not finish");
}

async fn loaded(db: &str, conv: &str) -> Vec<Value> {
    let store = AnyStore::open(db).await.unwrap();
    let kept = store.load(conv, Span::ALL).await.unwrap();
    mend_store::values(&kept).unwrap()
}

fn assert_valid(d: Dialect, history: &[Value]) {
    let mut body = serde_json::json!({ d.history_key(): history });
    if d == Dialect::Anthropic {
        body["max_tokens"] = serde_json::json!(1024);
    }
    let report = mend::check_value(
        &body,
        &mend::CheckOptions {
            dialect: Some(d),
            model: Some("gemini-3-pro-preview".into()).filter(|_| d == Dialect::Gemini),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(report.valid(), "{d}: {:?}\n{history:?}", report.violations);
}

async fn replicas_keep_one_ordered_history(db: &str) {
    let mock = Mock::start().await;
    // Replica A appends a beat late, as a loaded replica or a slow disk would, past its
    // capture timeout: its answers go out before their exchanges are stored.
    let (a, kept_a) = replica(&mock, db, Duration::from_millis(300)).await;
    let (b, kept_b) = replica(&mock, db, Duration::ZERO).await;
    let client = reqwest::Client::new();
    for (d, stream) in [
        (Dialect::OpenAiChat, false),
        (Dialect::OpenAiResponses, true),
        (Dialect::Anthropic, true),
        (Dialect::Gemini, false),
    ] {
        // Turn 1 through A, turn 2 through B at once: B's append lands first.
        let conv = format!("lag-{}", d.name());
        let h = [("x-mend-conversation", conv.as_str())];
        let body = first_turn(d, stream);
        let answer = post(&client, a, d, path(d, stream), &body, &h).await;
        let assistant = assistant_items(d, stream, &answer);
        let result = result_for(d, &assistant);
        let mut body2 = body.clone();
        let history = body2[d.history_key()].as_array_mut().unwrap();
        history.extend(assistant.iter().cloned());
        history.push(result.clone());
        let answer = post(&client, b, d, path(d, stream), &body2, &h).await;
        let last = assistant_items(d, stream, &answer);
        settle(&[&kept_a, &kept_b], 2).await;
        let mut expected = vec![body[d.history_key()][0].clone()];
        expected.extend(assistant);
        expected.push(result);
        expected.extend(last);
        assert_eq!(loaded(db, &conv).await, expected, "{d}");
        assert_eq!(
            kept_a.lock().unwrap().pop(),
            Some(Kept::AlreadyStored),
            "{d}"
        );
        assert!(
            matches!(kept_b.lock().unwrap().pop(), Some(Kept::Appended(_))),
            "{d}"
        );
    }

    // Eight first turns of one conversation at once, split over both replicas: one is
    // kept, the others answer a history already answered and are not appended.
    let (a, kept_a) = replica(&mock, db, Duration::ZERO).await;
    let d = Dialect::OpenAiChat;
    let body = first_turn(d, false);
    let h = [("x-mend-conversation", "race")];
    let sent = futures_util::future::join_all((0..8).map(|i| {
        let addr = if i % 2 == 0 { a } else { b };
        let (client, body) = (client.clone(), body.clone());
        async move { post(&client, addr, d, path(d, false), &body, &h).await }
    }))
    .await;
    settle(&[&kept_a, &kept_b], 8).await;
    let kept = loaded(db, "race").await;
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert_eq!(kept[0], body["messages"][0]);
    let winner = &kept[1]["tool_calls"][0]["id"];
    let answered: Vec<Value> = sent
        .iter()
        .map(|b| assistant_items(d, false, b)[0]["tool_calls"][0]["id"].clone())
        .collect();
    assert_eq!(answered.iter().filter(|id| *id == winner).count(), 1);
    let all: Vec<Kept> = [kept_a, kept_b]
        .iter()
        .flat_map(|k| k.lock().unwrap().clone())
        .collect();
    assert_eq!(
        all.iter()
            .filter(|k| matches!(k, Kept::Appended(2)))
            .count(),
        1,
        "{all:?}"
    );
    assert_eq!(
        all.iter().filter(|k| **k == Kept::Diverged).count(),
        7,
        "{all:?}"
    );

    // A tool loop whose turns alternate between the replicas, each turn sent as soon as
    // the last answer is in: every output once, in order, a valid history.
    for (d, stream) in [
        (Dialect::OpenAiResponses, false),
        (Dialect::Anthropic, false),
    ] {
        let conv = format!("alternate-{}", d.name());
        let h = [("x-mend-conversation", conv.as_str())];
        let mut body = first_turn(d, stream);
        let mut expected = vec![body[d.history_key()][0].clone()];
        for turn in 0..6 {
            let addr = if turn % 2 == 0 { a } else { b };
            let answer = post(&client, addr, d, path(d, stream), &body, &h).await;
            let assistant = assistant_items(d, stream, &answer);
            let history = body[d.history_key()].as_array_mut().unwrap();
            history.extend(assistant.iter().cloned());
            expected.extend(assistant.iter().cloned());
            // Answer each call; after a text answer, ask again.
            let text = serde_json::to_string(&assistant).unwrap();
            let next = if text.contains("fc_mock") || text.contains("toolu_mock") {
                result_for(d, &assistant)
            } else {
                serde_json::json!({"role": "user", "content": "again?"})
            };
            history.push(next.clone());
            expected.push(next);
        }
        expected.pop();
        for _ in 0..500 {
            if loaded(db, &conv).await.len() >= expected.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let kept = loaded(db, &conv).await;
        assert_eq!(kept, expected, "{d}");
        assert_valid(d, &kept);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_on_one_sqlite_file_keep_one_ordered_history() {
    let dir = crate::secrets::tempdir("replicas");
    let db = format!("sqlite:{}", dir.join("conversations.db").display());
    replicas_keep_one_ordered_history(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_on_one_postgres_schema_keep_one_ordered_history() {
    crate::support::on_postgres("mend_gateway_test", |db| async move {
        replicas_keep_one_ordered_history(&db).await
    })
    .await;
}
