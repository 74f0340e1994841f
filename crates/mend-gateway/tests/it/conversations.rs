//! `x-mend-conversation`: each exchange (the request's new messages, the response's
//! assistant output with its ids) is appended to the named conversation, from JSON
//! answers and from streams, in memory and in a real SQLite store.

use std::sync::Arc;

use mend::Dialect;
use mend_gateway::{app, Conversations, Gateway, MemoryConversations, Mode};
use mend_store::{AnyStore, Span, Store};
use serde_json::{json, Value};

use crate::support::{config_for, request, request_to, send, Mock};

/// The dialects whose exchanges are kept: every one.
const KEPT: [Dialect; 5] = Dialect::ALL;

pub(crate) fn first_turn(d: Dialect, stream: bool) -> Value {
    let mut b = crate::support::bodies::valid(d);
    b[d.history_key()].as_array_mut().unwrap().truncate(1);
    if d == Dialect::Anthropic {
        b["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
        b["max_tokens"] = json!(2048);
    }
    if d == Dialect::BedrockConverse {
        b["additionalModelRequestFields"] =
            json!({"thinking": {"type": "enabled", "budget_tokens": 1024}});
    }
    if stream && !matches!(d, Dialect::Gemini | Dialect::BedrockConverse) {
        b["stream"] = json!(true);
    }
    b
}

pub(crate) fn path(d: Dialect, stream: bool) -> &'static str {
    match (d, stream) {
        (Dialect::Gemini, true) => {
            "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
        }
        (Dialect::BedrockConverse, true) => {
            "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
        }
        _ => crate::support::endpoint(d),
    }
}

/// The assistant items a client sends back: from the JSON answer, or assembled from the
/// stream the way an SDK does.
pub(crate) fn assistant_items(d: Dialect, stream: bool, body: &[u8]) -> Vec<Value> {
    let ct = match (stream, d) {
        (true, Dialect::BedrockConverse) => "application/vnd.amazon.eventstream",
        (true, _) => "text/event-stream",
        (false, _) => "application/json",
    };
    mend_gateway::exchange::response_output(d, ct, body).unwrap()
}

/// The tool result answering the call among `items`.
pub(crate) fn result_for(d: Dialect, items: &[Value]) -> Value {
    match d {
        Dialect::BedrockConverse => {
            let blocks = items[0]["content"].as_array().unwrap();
            let id = &blocks.iter().find(|b| b.get("toolUse").is_some()).unwrap()["toolUse"]
                ["toolUseId"];
            json!({"role": "user", "content": [{"toolResult": {"toolUseId": id, "content": [{"text": "18C"}]}}]})
        }
        Dialect::OpenAiChat => {
            let id = &items[0]["tool_calls"][0]["id"];
            json!({"role": "tool", "tool_call_id": id, "content": "18C"})
        }
        Dialect::OpenAiResponses => {
            let call = items.iter().find(|i| i["type"] == "function_call").unwrap();
            json!({"type": "function_call_output", "call_id": call["call_id"], "output": "18C"})
        }
        Dialect::Anthropic => {
            let blocks = items[0]["content"].as_array().unwrap();
            let id = &blocks.iter().find(|b| b["type"] == "tool_use").unwrap()["id"];
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "18C"}]})
        }
        Dialect::Gemini => {
            let parts = items[0]["parts"].as_array().unwrap();
            let call = &parts
                .iter()
                .find(|p| p.get("functionCall").is_some())
                .unwrap()["functionCall"];
            json!({"role": "user", "parts": [{"functionResponse": {"id": call["id"], "name": call["name"], "response": {"result": "18C"}}}]})
        }
    }
}

/// Two turns of a tool loop through the app; returns what the client sent and got, in
/// conversation order.
async fn tool_loop(app: &axum::Router, d: Dialect, stream: bool, conv: &str) -> Vec<Value> {
    let h = [("x-mend-conversation", conv)];
    let body = first_turn(d, stream);
    let r = send(app, request_to(d, path(d, stream), body.to_string(), &h)).await;
    assert_eq!(r.status, 200, "{d}: {}", r.text());
    let assistant = assistant_items(d, stream, &r.body);
    let result = result_for(d, &assistant);
    let mut body2 = body.clone();
    let history = body2[d.history_key()].as_array_mut().unwrap();
    history.extend(assistant.iter().cloned());
    history.push(result.clone());
    let r = send(app, request_to(d, path(d, stream), body2.to_string(), &h)).await;
    assert_eq!(r.status, 200, "{d}: {}", r.text());
    let last = assistant_items(d, stream, &r.body);
    let mut expected = vec![body[d.history_key()][0].clone()];
    expected.extend(assistant);
    expected.push(result);
    expected.extend(last);
    expected
}

/// The provider's opaque state survived in what was kept.
pub(crate) fn assert_ids_kept(d: Dialect, kept: &[Value]) {
    let text = serde_json::to_string(kept).unwrap();
    let needles: &[&str] = match d {
        Dialect::BedrockConverse => &["tooluse_mock", "gAAAAABmock-encrypted-reasoning-"],
        Dialect::OpenAiChat => &["call_mock"],
        Dialect::OpenAiResponses => &[
            "rs_mock",
            "gAAAAABmock-encrypted-reasoning-",
            "fc_mock",
            "msg_mock",
        ],
        Dialect::Anthropic => &["toolu_mock", "gAAAAABmock-encrypted-reasoning-"],
        Dialect::Gemini => &["c2lnbmF0dXJlLW1vY2stdGhvdWdodA=="],
    };
    for n in needles {
        assert!(text.contains(n), "{d}: {n} not kept in {text}");
    }
    assert!(text.contains("The tool said"), "{d}: {text}");
}

#[tokio::test]
async fn tool_loops_are_kept_with_their_ids_from_json_and_streams() {
    let mock = Mock::start().await;
    let store = Arc::new(MemoryConversations::new());
    let sink: Arc<dyn Conversations> = Arc::new(store.clone());
    let app =
        app(Gateway::with_conversations(config_for(&mock, Mode::Repair), Some(sink)).unwrap());
    for stream in [false, true] {
        for d in KEPT {
            let conv = format!("conv-{}-{stream}", d.name());
            let expected = tool_loop(&app, d, stream, &conv).await;
            // Committed before the answer's end: there as soon as the request returns.
            let kept = store.load(&conv);
            assert_eq!(kept, expected, "{d} stream={stream}");
            assert_ids_kept(d, &kept);
        }
    }
}

#[tokio::test]
async fn requests_without_the_header_are_not_kept() {
    let mock = Mock::start().await;
    let store = Arc::new(MemoryConversations::new());
    let sink: Arc<dyn Conversations> = Arc::new(store.clone());
    let app =
        app(Gateway::with_conversations(config_for(&mock, Mode::Observe), Some(sink)).unwrap());
    let d = Dialect::OpenAiChat;
    send(&app, request(d, &first_turn(d, false), &[])).await;
    let r = send(
        &app,
        request(d, &first_turn(d, false), &[("x-mend-conversation", "")]),
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(r.text().contains("x-mend-conversation"), "{}", r.text());
}

#[tokio::test]
async fn a_sqlite_store_keeps_exchanges_through_a_real_socket() {
    let mock = Mock::start().await;
    let dir = crate::secrets::tempdir("store");
    let db = format!("sqlite:{}", dir.join("conversations.db").display());
    let mut config = config_for(&mock, Mode::Repair);
    config.db = Some(db.clone());
    let gateway = Gateway::open(config).await.unwrap();
    assert!(gateway.keeps_conversations());
    // A real socket, so hyper (not a test harness) drives the bodies: a JSON answer
    // with a Content-Length is complete when its last byte is out.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(mend_gateway::serve(
        gateway,
        listener,
        std::future::pending(),
    ));
    let client = reqwest::Client::new();
    let store = AnyStore::open(&db).await.unwrap();
    for (d, stream) in [
        (Dialect::OpenAiResponses, false),
        (Dialect::Anthropic, true),
        (Dialect::Gemini, false),
    ] {
        let conv = format!("sqlite-{}", d.name());
        let h = [("x-mend-conversation", conv.as_str())];
        let body = first_turn(d, stream);
        let answer = post(&client, addr, d, path(d, stream), &body, &h).await;
        let assistant = assistant_items(d, stream, &answer);
        let result = result_for(d, &assistant);
        let mut body2 = body.clone();
        let history = body2[d.history_key()].as_array_mut().unwrap();
        history.extend(assistant.iter().cloned());
        history.push(result.clone());
        let answer = post(&client, addr, d, path(d, stream), &body2, &h).await;
        let n = 1 + assistant.len() + 1 + assistant_items(d, stream, &answer).len();
        // Committed before the answer's end: there as soon as the request returns.
        let kept = store.load(&conv, Span::ALL).await.unwrap();
        assert_eq!(kept.len(), n, "{d}");
        let values: Vec<Value> = kept
            .iter()
            .map(|m| serde_json::from_str(&m.raw).unwrap())
            .collect();
        assert_eq!(values[0], body[d.history_key()][0], "{d}");
        assert_eq!(values[1..1 + assistant.len()], assistant[..], "{d}");
        assert_eq!(values[1 + assistant.len()], result, "{d}");
        assert_ids_kept(d, &values);
        let info = store.info(&conv).await.unwrap();
        assert_eq!(info.format, mend_store::Format::Wire(d));
    }
    server.abort();
}

pub(crate) async fn post(
    client: &reqwest::Client,
    addr: std::net::SocketAddr,
    d: Dialect,
    path: &str,
    body: &Value,
    extra: &[(&str, &str)],
) -> axum::body::Bytes {
    let mut req = client
        .post(format!("http://{addr}{path}"))
        .header("content-type", "application/json")
        .body(body.to_string());
    for (k, v) in crate::support::creds(d)
        .into_iter()
        .chain(extra.iter().copied())
    {
        req = req.header(k, v);
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    resp.bytes().await.unwrap()
}
