//! The capture contract (`proxy/durable.rs`): with a store, an exchange is committed
//! before the client sees the end of its answer. A conversation loaded as soon as each
//! request returns holds that request's new turn and its answer, every time (SQLite, and
//! PostgreSQL when reachable; every dialect, JSON and streamed); a store that fails or
//! stalls still lets the whole answer through, the failure said and counted; a client
//! that leaves mid-stream leaves nothing written.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use mend::Dialect;
use mend_gateway::exchange::BoxFuture;
use mend_gateway::{app, Claim, Conversations, Exchange, Gateway, Kept, MemoryConversations, Mode};
use mend_store::{AnyStore, Span, Store};
use serde_json::{json, Value};

use crate::conversations::{assistant_items, first_turn, path, result_for};
use crate::support::{config_for, creds, request_to, send, Mock, Scripted};

/// Turns per conversation in the load-after-each-request test.
const TURNS: usize = 6;

/// A user turn of the dialect that asks again (after a text answer).
fn user_text(d: Dialect, text: &str) -> Value {
    match d {
        Dialect::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
        Dialect::BedrockConverse => json!({"role": "user", "content": [{"text": text}]}),
        _ => json!({"role": "user", "content": text}),
    }
}

/// Whether the answer's items call a tool.
fn calls_a_tool(items: &[Value]) -> bool {
    let text = serde_json::to_string(items).unwrap();
    [
        "call_mock",
        "toolu_mock",
        "fc_mock",
        "tooluse_mock",
        "functionCall",
    ]
    .iter()
    .any(|n| text.contains(n))
}

/// A gateway with `db` as its store, on a real socket (hyper drives the bodies).
async fn serve(mock: &Mock, db: &str) -> (SocketAddr, Gateway) {
    let mut config = config_for(mock, Mode::Repair);
    config.db = Some(db.to_string());
    let gateway = Gateway::open(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(mend_gateway::serve(
        gateway.clone(),
        listener,
        std::future::pending(),
    ));
    (addr, gateway)
}

/// POST through the socket; the status, `x-mend-capture`, and the whole body.
async fn post(
    client: &reqwest::Client,
    addr: SocketAddr,
    d: Dialect,
    stream: bool,
    body: &Value,
    conv: &str,
) -> (u16, Option<String>, Bytes) {
    let mut req = client
        .post(format!("http://{addr}{}", path(d, stream)))
        .header("content-type", "application/json")
        .header("x-mend-conversation", conv)
        .body(body.to_string());
    for (k, v) in creds(d) {
        req = req.header(k, v);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let capture = resp
        .headers()
        .get("x-mend-capture")
        .map(|v| v.to_str().unwrap().to_string());
    (status, capture, resp.bytes().await.unwrap())
}

/// Tool loops in every dialect, JSON and streamed, each answer followed at once by a
/// load of its conversation from another handle on the store: the load holds what was
/// sent and what came back. Returns the loads made.
async fn every_answer_is_stored_when_its_request_returns(db: &str) -> usize {
    let mock = Mock::start().await;
    let (addr, _gateway) = serve(&mock, db).await;
    let store = AnyStore::open(db).await.unwrap();
    let client = reqwest::Client::new();
    let mut loads = 0;
    for stream in [false, true] {
        for d in Dialect::ALL {
            let conv = format!("durable-{}-{stream}", d.name());
            let mut body = first_turn(d, stream);
            for turn in 0..TURNS {
                let (status, capture, answer) = post(&client, addr, d, stream, &body, &conv).await;
                assert_eq!(status, 200, "{d} stream={stream} turn {turn}");
                // A JSON answer says what became of its exchange; a stream's head
                // went out before its exchange was complete.
                let want = (!stream).then(|| "stored".to_string());
                assert_eq!(capture, want, "{d} stream={stream} turn {turn}");
                let items = assistant_items(d, stream, &answer);
                let mut expected = body[d.history_key()].as_array().unwrap().clone();
                expected.extend(items.iter().cloned());
                let kept = store.load(&conv, Span::ALL).await.unwrap();
                let kept = mend_store::values(&kept).unwrap();
                assert_eq!(kept, expected, "{d} stream={stream} turn {turn}");
                loads += 1;
                let next = if calls_a_tool(&items) {
                    result_for(d, &items)
                } else {
                    user_text(d, "again?")
                };
                let history = body[d.history_key()].as_array_mut().unwrap();
                history.extend(items);
                history.push(next);
            }
        }
    }
    loads
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_every_answer_is_stored_when_its_request_returns() {
    let dir = crate::secrets::tempdir("durable");
    let db = format!("sqlite:{}", dir.join("conversations.db").display());
    let loads = every_answer_is_stored_when_its_request_returns(&db).await;
    assert_eq!(loads, 2 * Dialect::ALL.len() * TURNS);
    eprintln!("sqlite: {loads} loads right after their request, each held both sides");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_every_answer_is_stored_when_its_request_returns() {
    let loads = crate::support::on_postgres("mend_gateway_durable", |db| async move {
        every_answer_is_stored_when_its_request_returns(&db).await
    })
    .await;
    if let Some(loads) = loads {
        assert_eq!(loads, 2 * Dialect::ALL.len() * TURNS);
        eprintln!("postgres: {loads} loads right after their request, each held both sides");
    }
}

/// A sink that fails every append, or stalls before handing it to a memory store.
struct Faulty {
    stall: Option<Duration>,
    then: Arc<MemoryConversations>,
}

impl Conversations for Faulty {
    fn append(&self, ex: Exchange) -> BoxFuture<'static, Result<Kept, String>> {
        let (stall, then) = (self.stall, self.then.clone());
        Box::pin(async move {
            match stall {
                None => Err("disk I/O error (a test sink)".to_string()),
                Some(d) => {
                    tokio::time::sleep(d).await;
                    then.append(ex).await
                }
            }
        })
    }

    fn claim(
        &self,
        conversation: &str,
        dialect: Dialect,
        scope: &str,
    ) -> BoxFuture<'static, Result<Claim, String>> {
        self.then.claim(conversation, dialect, scope)
    }
}

fn failures(gateway: &Gateway, reason: &str) -> u64 {
    let line = format!("mend_capture_failures_total{{reason=\"{reason}\"}} ");
    gateway
        .metrics()
        .render()
        .lines()
        .find_map(|l| l.strip_prefix(&line).map(|n| n.parse().unwrap()))
        .unwrap_or(0)
}

#[tokio::test]
async fn a_failing_or_stalled_store_still_lets_the_whole_answer_through() {
    let mock = Mock::start().await;
    let memory = Arc::new(MemoryConversations::new());
    for stall in [None, Some(Duration::from_millis(1500))] {
        let sink: Arc<dyn Conversations> = Arc::new(Faulty {
            stall,
            then: memory.clone(),
        });
        let mut config = config_for(&mock, Mode::Repair);
        config.capture_timeout = Duration::from_millis(200);
        let gateway = Gateway::with_conversations(config, Some(sink)).unwrap();
        let app = app(gateway.clone());
        let reason = if stall.is_some() { "timeout" } else { "store" };
        for (d, stream) in [(Dialect::OpenAiChat, false), (Dialect::Anthropic, true)] {
            let conv = format!("faulty-{reason}-{}", d.name());
            let started = Instant::now();
            let r = send(
                &app,
                request_to(
                    d,
                    path(d, stream),
                    first_turn(d, stream).to_string(),
                    &[("x-mend-conversation", &conv)],
                ),
            )
            .await;
            assert!(
                started.elapsed() < Duration::from_millis(1200),
                "{reason}: waited {:?}",
                started.elapsed()
            );
            assert_eq!(r.status, 200, "{reason} {d}");
            // The answer is whole: it reads as the dialect's complete response.
            assert_eq!(assistant_items(d, stream, &r.body).len(), 1, "{reason} {d}");
            let header = r.header("x-mend-capture");
            assert_eq!(header, (!stream).then_some("failed"), "{reason} {d}");
        }
        assert_eq!(failures(&gateway, reason), 2, "{reason}");
    }
    // The stalled appends went on after the answers went out, and landed.
    tokio::time::sleep(Duration::from_millis(1800)).await;
    assert_eq!(memory.load("faulty-timeout-openai_chat").len(), 2);
    assert_eq!(memory.load("faulty-timeout-anthropic").len(), 2);
}

#[tokio::test]
async fn a_second_answer_to_an_answered_history_is_said_to_diverge() {
    let mock = Mock::start().await;
    let sink: Arc<dyn Conversations> = Arc::new(Arc::new(MemoryConversations::new()));
    let gateway = Gateway::with_conversations(config_for(&mock, Mode::Repair), Some(sink));
    let app = app(gateway.unwrap());
    let d = Dialect::OpenAiChat;
    let h = [("x-mend-conversation", "twice")];
    let first = first_turn(d, false).to_string();
    let r = send(&app, request_to(d, path(d, false), first.clone(), &h)).await;
    assert_eq!(r.header("x-mend-capture"), Some("stored"));
    // The mock numbers its calls: the same question gets another answer.
    let r = send(&app, request_to(d, path(d, false), first, &h)).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-mend-capture"), Some("diverged"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_leaves_mid_stream_leaves_nothing_written() {
    let mock = Mock::start().await;
    let dir = crate::secrets::tempdir("durable-gone");
    let db = format!("sqlite:{}", dir.join("conversations.db").display());
    let (addr, gateway) = serve(&mock, &db).await;
    // A chat stream that stops after its first chunk until the gate opens, then goes on
    // slowly: the gateway learns that a client left only when a write to it fails,
    // so the stream must not complete within the first writes after it left.
    let gate = Arc::new(tokio::sync::Notify::new());
    let chunk = |delta: Value, finish: Value| {
        let c = json!({"id": "chatcmpl-gone", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        Bytes::from(format!("data: {c}\n\n"))
    };
    let mut chunks = vec![chunk(
        json!({"role": "assistant", "content": "Hel"}),
        Value::Null,
    )];
    for word in ["lo", " there", ",", " how", " are", " you"] {
        chunks.push(chunk(json!({ "content": word }), Value::Null));
    }
    chunks.push(chunk(json!({}), json!("stop")));
    chunks.push(Bytes::from_static(b"data: [DONE]\n\n"));
    let mut scripted = Scripted::sse(chunks);
    scripted.gate = Some(gate.clone());
    scripted.chunk_delay = Duration::from_millis(100);
    mock.push(scripted);
    let d = Dialect::OpenAiChat;
    let client = reqwest::Client::new();
    let mut req = client
        .post(format!("http://{addr}{}", path(d, true)))
        .header("x-mend-conversation", "gone")
        .body(first_turn(d, true).to_string());
    for (k, v) in creds(d) {
        req = req.header(k, v);
    }
    let mut resp = req.send().await.unwrap();
    let first = resp.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("Hel"));
    drop(resp);
    // The upstream finishes its answer after the client left.
    gate.notify_one();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let store = AnyStore::open(&db).await.unwrap();
    let kept = store.load("gone", Span::ALL).await.unwrap_or_default();
    assert!(kept.is_empty(), "{kept:?}");
    let text = gateway.metrics().render();
    assert!(
        text.contains(r#"mend_store_appends_total{outcome="incomplete"} 1"#),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_json_array_stream_still_streams_and_is_stored_before_its_end() {
    let mock = Mock::start().await;
    let dir = crate::secrets::tempdir("durable-array");
    let db = format!("sqlite:{}", dir.join("conversations.db").display());
    let (addr, _gateway) = serve(&mock, &db).await;
    // `:streamGenerateContent` without `alt=sse`: a JSON array, one element a chunk,
    // held after its first until the gate opens.
    let gate = Arc::new(tokio::sync::Notify::new());
    let element = |text: &str, last: bool| {
        let mut c = json!({"content": {"role": "model", "parts": [{"text": text}]}, "index": 0});
        if last {
            c["finishReason"] = json!("STOP");
        }
        json!({"candidates": [c], "responseId": "resp-array"}).to_string()
    };
    let mut scripted = Scripted::json(200, format!("[{}", element("Hel", false)));
    scripted
        .chunks
        .push(Bytes::from(format!(",\r\n{}", element("lo", true))));
    scripted.chunks.push(Bytes::from_static(b"]"));
    scripted.gate = Some(gate.clone());
    mock.push(scripted);
    let d = Dialect::Gemini;
    let body = first_turn(d, false);
    let mut req = reqwest::Client::new()
        .post(format!(
            "http://{addr}/v1beta/models/gemini-3-pro-preview:streamGenerateContent"
        ))
        .header("x-mend-conversation", "array")
        .body(body.to_string());
    for (k, v) in creds(d) {
        req = req.header(k, v);
    }
    let mut resp = req.send().await.unwrap();
    // The first element comes through while the upstream holds the rest: not buffered.
    let first = tokio::time::timeout(Duration::from_secs(5), resp.chunk())
        .await
        .expect("the first element is passed on at once")
        .unwrap()
        .unwrap();
    assert!(String::from_utf8_lossy(&first).contains("Hel"));
    gate.notify_one();
    let mut all = first.to_vec();
    while let Some(c) = resp.chunk().await.unwrap() {
        all.extend_from_slice(&c);
    }
    let answer: Value = serde_json::from_slice(&all).unwrap();
    assert_eq!(answer.as_array().unwrap().len(), 2);
    let store = AnyStore::open(&db).await.unwrap();
    let kept = mend_store::values(&store.load("array", Span::ALL).await.unwrap()).unwrap();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert_eq!(kept[0], body["contents"][0]);
    assert_eq!(kept[1]["parts"][0]["text"], "Hello", "{kept:?}");
}
