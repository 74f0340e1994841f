//! A mock upstream that answers like each provider, and records what it received.
//!
//! It serves the five dialects' endpoints (and `GET /v1/models`) on 127.0.0.1, and by
//! default behaves like a strict provider:
//! - it wants the provider's credentials header (`Authorization: Bearer`, `x-api-key`
//!   or a bearer token with `anthropic-version`, `x-goog-api-key` or `?key=`, for
//!   Bedrock a Bedrock API key as a bearer token or a SigV4 `Authorization` with its
//!   `x-amz-date`), else 401/403;
//! - it rejects a history mend finds invalid with 400, in the provider's error shape
//!   and with the provider's own text;
//! - it answers a request that offers tools and does not end in a tool result with a
//!   call of the first tool (`{"city": "Paris"}`), with the provider's reasoning
//!   attached (a Responses `reasoning` item with `encrypted_content`, a signed Anthropic
//!   `thinking` block when thinking is on, a Gemini `thoughtSignature`), and anything
//!   else with a text that quotes the last tool result; as JSON, or as the provider's SSE
//!   stream when the request streams (Bedrock: `converse-stream` answers AWS
//!   event-stream frames with valid CRCs).
//!
//! Tests can queue [`Scripted`] answers instead (any status, body chunks, delays, a gate
//! that holds the stream after its first chunk). The benchmark builds it `lenient`: no
//! checks, a fixed small answer.
//!
//! Shared by the gateway's tests, the CLI's end-to-end test and the benchmark's upstream
//! (`examples/mock_upstream.rs`) through `#[path]`, so it uses only their common
//! dependencies.
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use mend::Dialect;
use serde_json::{json, Value};
use tokio::sync::Notify;

/// One request as the mock received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: Method,
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    /// The body as JSON (panics when it is not: a test helper).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the upstream received JSON")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A canned answer.
#[derive(Debug, Clone)]
pub struct Scripted {
    pub status: u16,
    pub content_type: String,
    pub chunks: Vec<Bytes>,
    /// Wait before the response head.
    pub head_delay: Duration,
    /// Wait between chunks.
    pub chunk_delay: Duration,
    /// Hold the stream after the first chunk until notified.
    pub gate: Option<Arc<Notify>>,
    /// Extra response headers.
    pub headers: Vec<(String, String)>,
}

impl Scripted {
    pub fn json(status: u16, body: impl Into<Bytes>) -> Scripted {
        Scripted {
            status,
            content_type: "application/json".into(),
            chunks: vec![body.into()],
            head_delay: Duration::ZERO,
            chunk_delay: Duration::ZERO,
            gate: None,
            headers: Vec::new(),
        }
    }

    pub fn sse(chunks: Vec<Bytes>) -> Scripted {
        Scripted {
            content_type: "text/event-stream".into(),
            chunks,
            ..Scripted::json(200, Bytes::new())
        }
    }
}

#[derive(Default)]
struct MockState {
    received: Mutex<Vec<Received>>,
    script: Mutex<VecDeque<Scripted>>,
    lenient: bool,
    serial: AtomicU64,
}

/// A running mock upstream.
pub struct Mock {
    pub addr: SocketAddr,
    state: Arc<MockState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Mock {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Mock {
    /// A strict mock on 127.0.0.1, on a free port.
    pub async fn start() -> Mock {
        Mock::start_on("127.0.0.1:0", false).await
    }

    /// A strict mock on a given address.
    pub async fn start_strict(addr: &str) -> Mock {
        Mock::start_on(addr, false).await
    }

    /// A mock that checks nothing and answers a fixed small JSON (for load).
    pub async fn start_lenient(addr: &str) -> Mock {
        Mock::start_on(addr, true).await
    }

    async fn start_on(addr: &str, lenient: bool) -> Mock {
        let state = Arc::new(MockState {
            lenient,
            ..MockState::default()
        });
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .expect("bind the mock upstream");
        let addr = listener.local_addr().expect("the mock's address");
        let app = router(state.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Mock { addr, state, task }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Answer the next request with this instead of the provider behaviour.
    pub fn push(&self, s: Scripted) {
        self.state.script.lock().unwrap().push_back(s);
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }

    /// The last request (panics when none).
    pub fn last(&self) -> Received {
        self.received()
            .pop()
            .expect("the upstream received a request")
    }
}

fn router(state: Arc<MockState>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(answer))
        .route("/v1/responses", post(answer))
        .route("/v1/messages", post(answer))
        .route("/v1beta/models/{action}", post(answer))
        .route("/v1/models", get(answer))
        .fallback(answer)
        .with_state(state)
}

async fn answer(State(state): State<Arc<MockState>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 256 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let rec = Received {
        method: parts.method.clone(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().map(str::to_string),
        headers: parts.headers.clone(),
        body: body.clone(),
    };
    if !state.lenient {
        state.received.lock().unwrap().push(rec.clone());
    }
    let scripted = state.script.lock().unwrap().pop_front();
    if let Some(s) = scripted {
        return play(s).await;
    }
    if state.lenient {
        return json_response(200, &lenient_answer(&rec.path));
    }
    let n = state.serial.fetch_add(1, Ordering::Relaxed) + 1;
    provider(&rec, n)
}

/// Play a scripted answer, streaming its chunks.
async fn play(s: Scripted) -> Response {
    if !s.head_delay.is_zero() {
        tokio::time::sleep(s.head_delay).await;
    }
    let chunks: VecDeque<Bytes> = s.chunks.into();
    let gate = s.gate.clone();
    let delay = s.chunk_delay;
    let stream = futures_util::stream::unfold(
        (chunks, 0usize, gate),
        move |(mut chunks, sent, gate)| async move {
            let chunk = chunks.pop_front()?;
            if sent == 1 {
                if let Some(g) = &gate {
                    g.notified().await;
                }
            }
            if sent > 0 && !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            Some((Ok::<_, std::io::Error>(chunk), (chunks, sent + 1, gate)))
        },
    );
    let mut resp = Response::new(Body::from_stream(stream));
    *resp.status_mut() = StatusCode::from_u16(s.status).unwrap_or(StatusCode::OK);
    resp.headers_mut().insert(
        "content-type",
        HeaderValue::from_str(&s.content_type).unwrap(),
    );
    for (k, v) in s.headers {
        resp.headers_mut().insert(
            axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(&v).unwrap(),
        );
    }
    resp
}

fn lenient_answer(path: &str) -> Value {
    match Dialect::from_endpoint(path) {
        Some(Dialect::Anthropic) => {
            json!({"id": "msg_bench", "type": "message", "role": "assistant",
            "model": "claude", "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}})
        }
        _ => json!({"id": "chatcmpl-bench", "object": "chat.completion", "created": 1,
            "model": "gpt-4o", "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
    }
}

/// What the model "says".
#[derive(Debug, Clone)]
enum Out {
    Reasoning {
        id: String,
        secret: String,
    },
    Call {
        id: String,
        item: String,
        name: String,
        args: Value,
    },
    Text {
        id: String,
        text: String,
    },
}

/// The strict provider behaviour.
fn provider(rec: &Received, n: u64) -> Response {
    if rec.method == Method::GET {
        return json_response(
            200,
            &json!({"object": "list", "data": [{"id": "gpt-4o", "object": "model", "created": 1, "owned_by": "mock"}]}),
        );
    }
    let Some(dialect) = Dialect::from_endpoint(&rec.path) else {
        return json_response(404, &json!({"error": {"message": "no such endpoint"}}));
    };
    if let Some(resp) = refuse_without_credentials(dialect, rec) {
        return resp;
    }
    let Ok(body) = serde_json::from_slice::<Value>(&rec.body) else {
        return provider_error(
            dialect,
            400,
            "We could not parse the JSON body of your request.",
        );
    };
    let model = Dialect::model_from_endpoint(&rec.path)
        .or_else(|| body["model"].as_str().map(str::to_string));
    let opts = mend::CheckOptions {
        dialect: Some(dialect),
        model: model.clone(),
        ..Default::default()
    };
    if let Ok(report) = mend::check_value(&body, &opts) {
        if let Some(v) = report
            .violations
            .iter()
            .find(|v| v.severity == mend::Severity::Error)
        {
            let text = v
                .provider_error
                .clone()
                .unwrap_or_else(|| v.message.clone());
            return provider_error(dialect, 400, &text);
        }
    }
    let model = model.unwrap_or_else(|| "mock-model".into());
    let outs = decide(dialect, &body, n);
    let streaming = body["stream"].as_bool() == Some(true)
        || rec.path.ends_with(":streamGenerateContent")
        || rec.path.ends_with("/converse-stream");
    match (dialect, streaming) {
        (Dialect::OpenAiChat, false) => json_response(200, &chat_json(&model, &outs, n)),
        (Dialect::OpenAiChat, true) => sse_response(chat_sse(&model, &outs, n)),
        (Dialect::OpenAiResponses, false) => {
            json_response(200, &responses_json(&model, &outs, n, "completed"))
        }
        (Dialect::OpenAiResponses, true) => sse_response(responses_sse(&model, &outs, n)),
        (Dialect::Anthropic, false) => json_response(200, &anthropic_json(&model, &outs, n)),
        (Dialect::Anthropic, true) => sse_response(anthropic_sse(&model, &outs, n)),
        (Dialect::Gemini, false) => json_response(200, &gemini_json(&model, &outs, n, true)),
        (Dialect::Gemini, true) => sse_response(gemini_sse(&model, &outs, n)),
        (Dialect::BedrockConverse, false) => json_response(200, &converse_json(&outs)),
        (Dialect::BedrockConverse, true) => eventstream_response(converse_frames(&outs)),
    }
}

fn refuse_without_credentials(dialect: Dialect, rec: &Received) -> Option<Response> {
    match dialect {
        Dialect::BedrockConverse => {
            let auth = rec.header("authorization").unwrap_or("");
            let api_key = auth.starts_with("Bearer ") && auth.len() > 7;
            let sigv4 = auth.starts_with("AWS4-HMAC-SHA256 ") && rec.header("x-amz-date").is_some();
            (!api_key && !sigv4).then(|| {
                let mut r = json_response(403, &json!({"message": "Missing Authentication Token"}));
                r.headers_mut().insert(
                    "x-amzn-errortype",
                    HeaderValue::from_static("MissingAuthenticationTokenException"),
                );
                r
            })
        }
        Dialect::OpenAiChat | Dialect::OpenAiResponses => {
            let ok = rec
                .header("authorization")
                .is_some_and(|a| a.starts_with("Bearer ") && a.len() > 7);
            (!ok).then(|| {
                json_response(
                    401,
                    &json!({"error": {"message": "You didn't provide an API key.",
                    "type": "invalid_request_error", "param": null, "code": null}}),
                )
            })
        }
        Dialect::Anthropic => {
            // The SDK sends `x-api-key`, or (2.x) `Authorization: Bearer` with the key.
            let bearer = rec
                .header("authorization")
                .is_some_and(|a| a.starts_with("Bearer ") && a.len() > 7);
            if rec.header("x-api-key").is_none() && !bearer {
                return Some(json_response(
                    401,
                    &json!({"type": "error", "error":
                    {"type": "authentication_error", "message": "x-api-key header is required"}}),
                ));
            }
            rec.header("anthropic-version")
                .is_none()
                .then(|| provider_error(dialect, 400, "anthropic-version: header is required"))
        }
        Dialect::Gemini => {
            let key = rec.header("x-goog-api-key").is_some()
                || rec
                    .query
                    .as_deref()
                    .is_some_and(|q| q.split('&').any(|p| p.starts_with("key=")));
            (!key).then(|| {
                json_response(403, &json!({"error": {"code": 403, "message":
                    "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
                    "status": "PERMISSION_DENIED"}}))
            })
        }
    }
}

fn provider_error(dialect: Dialect, status: u16, message: &str) -> Response {
    if dialect == Dialect::BedrockConverse {
        let mut r = json_response(status, &json!({"message": message}));
        r.headers_mut().insert(
            "x-amzn-errortype",
            HeaderValue::from_static(
                "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/",
            ),
        );
        return r;
    }
    let body = match dialect {
        Dialect::Anthropic => {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        }
        Dialect::Gemini => {
            json!({"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT"}})
        }
        _ => {
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}})
        }
    };
    json_response(status, &body)
}

/// A tool call when tools are offered and the history does not end in a result; text
/// quoting the last result otherwise.
fn decide(dialect: Dialect, body: &Value, n: u64) -> Vec<Out> {
    let tool = first_tool(dialect, body);
    let last_result = last_tool_result(dialect, body);
    let mut outs = Vec::new();
    match (tool, last_result) {
        (Some(name), None) => {
            let thinking = match dialect {
                Dialect::Anthropic => body.get("thinking").is_some(),
                Dialect::BedrockConverse => body
                    .pointer("/additionalModelRequestFields/thinking")
                    .is_some(),
                _ => false,
            };
            if dialect == Dialect::OpenAiResponses || thinking {
                outs.push(Out::Reasoning {
                    id: format!("rs_mock{n}"),
                    secret: format!("gAAAAABmock-encrypted-reasoning-{n}"),
                });
            }
            outs.push(Out::Call {
                id: format!("call_mock{n}"),
                item: format!("fc_mock{n}"),
                name,
                args: json!({"city": "Paris"}),
            });
        }
        (_, Some(result)) => outs.push(Out::Text {
            id: format!("msg_mock{n}"),
            text: format!("The tool said: {result}"),
        }),
        (None, None) => outs.push(Out::Text {
            id: format!("msg_mock{n}"),
            text: "Hello from the mock upstream.".into(),
        }),
    }
    outs
}

fn first_tool(dialect: Dialect, body: &Value) -> Option<String> {
    let tools = match dialect {
        Dialect::BedrockConverse => body.pointer("/toolConfig/tools")?,
        _ => body.get("tools")?,
    }
    .as_array()?;
    let t = tools.first()?;
    let name = match dialect {
        Dialect::OpenAiChat => t.pointer("/function/name"),
        Dialect::OpenAiResponses | Dialect::Anthropic => t.get("name"),
        Dialect::Gemini => t
            .pointer("/functionDeclarations/0/name")
            .or_else(|| t.pointer("/function_declarations/0/name")),
        Dialect::BedrockConverse => t.pointer("/toolSpec/name"),
    };
    name.and_then(Value::as_str).map(str::to_string)
}

fn last_tool_result(dialect: Dialect, body: &Value) -> Option<String> {
    let history = body.get(dialect.history_key())?.as_array()?;
    let last = history.last()?;
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match dialect {
        Dialect::BedrockConverse => last["content"].as_array().and_then(|blocks| {
            blocks.iter().find_map(|b| {
                b.get("toolResult").map(|r| match &r["content"] {
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join(""),
                    other => text(other),
                })
            })
        }),
        Dialect::OpenAiChat => (last["role"] == "tool").then(|| text(&last["content"])),
        Dialect::OpenAiResponses => {
            (last["type"] == "function_call_output").then(|| text(&last["output"]))
        }
        Dialect::Anthropic => last["content"].as_array().and_then(|blocks| {
            blocks
                .iter()
                .find(|b| b["type"] == "tool_result")
                .map(|b| match &b["content"] {
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join(""),
                    other => text(other),
                })
        }),
        Dialect::Gemini => last["parts"].as_array().and_then(|parts| {
            parts.iter().find_map(|p| {
                p.get("functionResponse")
                    .or_else(|| p.get("function_response"))
                    .map(|r| text(&r["response"]))
            })
        }),
    }
}

fn json_response(status: u16, body: &Value) -> Response {
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    resp.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    resp
}

fn sse_response(events: Vec<String>) -> Response {
    let chunks: Vec<Result<Bytes, std::io::Error>> =
        events.into_iter().map(|e| Ok(Bytes::from(e))).collect();
    let mut resp = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
    resp.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/event-stream"),
    );
    resp
}

fn event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn data(data: &Value) -> String {
    format!("data: {data}\n\n")
}

// --- OpenAI chat ------------------------------------------------------------------

fn chat_json(model: &str, outs: &[Out], n: u64) -> Value {
    let mut message = json!({"role": "assistant", "content": null});
    let mut finish = "stop";
    let mut calls = Vec::new();
    for o in outs {
        match o {
            Out::Text { text, .. } => message["content"] = json!(text),
            Out::Call { id, name, args, .. } => {
                finish = "tool_calls";
                calls.push(json!({"id": id, "type": "function",
                    "function": {"name": name, "arguments": args.to_string()}}));
            }
            Out::Reasoning { .. } => {}
        }
    }
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    json!({"id": format!("chatcmpl-mock{n}"), "object": "chat.completion", "created": 1_700_000_000,
        "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
}

fn chat_sse(model: &str, outs: &[Out], n: u64) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        data(
            &json!({"id": format!("chatcmpl-mock{n}"), "object": "chat.completion.chunk",
            "created": 1_700_000_000, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut ev = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    let mut finish = "stop";
    for o in outs {
        match o {
            Out::Text { text, .. } => {
                let (a, b) = text.split_at(text.len() / 2);
                ev.push(chunk(json!({"content": a}), Value::Null));
                ev.push(chunk(json!({"content": b}), Value::Null));
            }
            Out::Call { id, name, args, .. } => {
                finish = "tool_calls";
                ev.push(chunk(
                    json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                        "function": {"name": name, "arguments": ""}}]}),
                    Value::Null,
                ));
                let a = args.to_string();
                let (x, y) = a.split_at(a.len() / 2);
                for part in [x, y] {
                    ev.push(chunk(
                        json!({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}),
                        Value::Null,
                    ));
                }
            }
            Out::Reasoning { .. } => {}
        }
    }
    ev.push(chunk(json!({}), json!(finish)));
    ev.push("data: [DONE]\n\n".to_string());
    ev
}

// --- OpenAI Responses -------------------------------------------------------------

fn responses_item(o: &Out) -> Value {
    match o {
        Out::Reasoning { id, secret } => {
            json!({"id": id, "type": "reasoning", "summary": [], "encrypted_content": secret})
        }
        Out::Call {
            id,
            item,
            name,
            args,
        } => json!({"id": item, "type": "function_call",
            "status": "completed", "arguments": args.to_string(), "call_id": id, "name": name}),
        Out::Text { id, text } => json!({"id": id, "type": "message", "status": "completed",
            "role": "assistant", "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}]}),
    }
}

fn responses_json(model: &str, outs: &[Out], n: u64, status: &str) -> Value {
    let output: Vec<Value> = if status == "completed" {
        outs.iter().map(responses_item).collect()
    } else {
        Vec::new()
    };
    json!({"id": format!("resp_mock{n}"), "object": "response", "created_at": 1_700_000_000,
        "status": status, "error": null, "incomplete_details": null, "instructions": null,
        "max_output_tokens": null, "model": model, "output": output, "parallel_tool_calls": true,
        "previous_response_id": null, "reasoning": {"effort": "medium", "summary": null},
        "store": false, "temperature": 1.0, "text": {"format": {"type": "text"}},
        "tool_choice": "auto", "tools": [], "top_p": 1.0, "truncation": "disabled",
        "usage": if status == "completed" {
            json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15})
        } else { Value::Null },
        "metadata": {}})
}

fn responses_sse(model: &str, outs: &[Out], n: u64) -> Vec<String> {
    let mut seq = 0u64;
    let mut ev = Vec::new();
    let mut push = |ev: &mut Vec<String>, mut v: Value| {
        v["sequence_number"] = json!(seq);
        seq += 1;
        let name = v["type"].as_str().unwrap_or("").to_string();
        ev.push(event(&name, &v));
    };
    let pending = responses_json(model, outs, n, "in_progress");
    push(
        &mut ev,
        json!({"type": "response.created", "response": pending}),
    );
    push(
        &mut ev,
        json!({"type": "response.in_progress", "response": pending}),
    );
    for (i, o) in outs.iter().enumerate() {
        let done = responses_item(o);
        match o {
            Out::Reasoning { .. } => {
                push(
                    &mut ev,
                    json!({"type": "response.output_item.added", "output_index": i, "item": done}),
                );
            }
            Out::Call { item, args, .. } => {
                let mut added = done.clone();
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
                push(
                    &mut ev,
                    json!({"type": "response.output_item.added", "output_index": i, "item": added}),
                );
                let a = args.to_string();
                let (x, y) = a.split_at(a.len() / 2);
                for d in [x, y] {
                    push(
                        &mut ev,
                        json!({"type": "response.function_call_arguments.delta",
                        "item_id": item, "output_index": i, "delta": d}),
                    );
                }
                push(
                    &mut ev,
                    json!({"type": "response.function_call_arguments.done",
                    "item_id": item, "output_index": i, "arguments": a}),
                );
            }
            Out::Text { id, text } => {
                let mut added = done.clone();
                added["content"] = json!([]);
                added["status"] = json!("in_progress");
                push(
                    &mut ev,
                    json!({"type": "response.output_item.added", "output_index": i, "item": added}),
                );
                let part =
                    json!({"type": "output_text", "annotations": [], "logprobs": [], "text": ""});
                push(
                    &mut ev,
                    json!({"type": "response.content_part.added", "item_id": id,
                    "output_index": i, "content_index": 0, "part": part}),
                );
                let (x, y) = text.split_at(text.len() / 2);
                for d in [x, y] {
                    push(
                        &mut ev,
                        json!({"type": "response.output_text.delta", "item_id": id,
                        "output_index": i, "content_index": 0, "delta": d, "logprobs": []}),
                    );
                }
                push(
                    &mut ev,
                    json!({"type": "response.output_text.done", "item_id": id,
                    "output_index": i, "content_index": 0, "text": text, "logprobs": []}),
                );
                push(
                    &mut ev,
                    json!({"type": "response.content_part.done", "item_id": id,
                    "output_index": i, "content_index": 0,
                    "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": text}}),
                );
            }
        }
        push(
            &mut ev,
            json!({"type": "response.output_item.done", "output_index": i, "item": done}),
        );
    }
    push(
        &mut ev,
        json!({"type": "response.completed", "response": responses_json(model, outs, n, "completed")}),
    );
    ev
}

// --- Bedrock Converse -------------------------------------------------------------

fn converse_block(o: &Out) -> Value {
    match o {
        Out::Reasoning { secret, .. } => json!({"reasoningContent": {"reasoningText": {
            "text": "The user wants the weather; I will call the tool.", "signature": secret}}}),
        Out::Call { id, name, args, .. } => json!({"toolUse": {
            "toolUseId": id.replace("call_", "tooluse_"), "name": name, "input": args,
            "type": "tool_use"}}),
        Out::Text { text, .. } => json!({"text": text}),
    }
}

fn converse_stop(outs: &[Out]) -> &'static str {
    if outs.iter().any(|o| matches!(o, Out::Call { .. })) {
        "tool_use"
    } else {
        "end_turn"
    }
}

fn converse_json(outs: &[Out]) -> Value {
    json!({"output": {"message": {"role": "assistant",
        "content": outs.iter().map(converse_block).collect::<Vec<_>>()}},
        "stopReason": converse_stop(outs),
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 12}})
}

/// The frames of a `converse-stream` answer, each with AWS's padding field.
fn converse_frames(outs: &[Out]) -> Vec<Vec<u8>> {
    let frame = |event: &str, mut payload: Value| {
        payload["p"] = json!("abcdefgh");
        mend::canonical::capture::encode_frame(
            &[
                (":event-type", event),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            payload.to_string().as_bytes(),
        )
    };
    let mut frames = vec![frame("messageStart", json!({"role": "assistant"}))];
    for (i, o) in outs.iter().enumerate() {
        let delta = |d: Value| {
            frame(
                "contentBlockDelta",
                json!({"contentBlockIndex": i, "delta": d}),
            )
        };
        match o {
            Out::Reasoning { secret, .. } => {
                frames.push(delta(
                    json!({"reasoningContent": {"text": "The user wants the weather; "}}),
                ));
                frames.push(delta(
                    json!({"reasoningContent": {"text": "I will call the tool."}}),
                ));
                frames.push(delta(json!({"reasoningContent": {"signature": secret}})));
            }
            Out::Call { id, name, args, .. } => {
                frames.push(frame(
                    "contentBlockStart",
                    json!({"contentBlockIndex": i,
                    "start": {"toolUse": {"toolUseId": id.replace("call_", "tooluse_"),
                    "name": name, "type": "tool_use"}}}),
                ));
                let a = args.to_string();
                let (x, y) = a.split_at(a.len() / 2);
                for part in ["", x, y] {
                    frames.push(delta(json!({"toolUse": {"input": part}})));
                }
            }
            Out::Text { text, .. } => {
                let (a, b) = text.split_at(text.len() / 2);
                frames.push(delta(json!({"text": a})));
                frames.push(delta(json!({"text": b})));
            }
        }
        frames.push(frame("contentBlockStop", json!({"contentBlockIndex": i})));
    }
    frames.push(frame(
        "messageStop",
        json!({"stopReason": converse_stop(outs)}),
    ));
    frames.push(frame(
        "metadata",
        json!({"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
            "metrics": {"latencyMs": 12}}),
    ));
    frames
}

fn eventstream_response(frames: Vec<Vec<u8>>) -> Response {
    let chunks: Vec<Result<Bytes, std::io::Error>> =
        frames.into_iter().map(|f| Ok(Bytes::from(f))).collect();
    let mut resp = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
    resp.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("application/vnd.amazon.eventstream"),
    );
    resp
}

// --- Anthropic --------------------------------------------------------------------

fn anthropic_block(o: &Out) -> Value {
    match o {
        Out::Reasoning { secret, .. } => json!({"type": "thinking",
            "thinking": "The user wants the weather; I will call the tool.", "signature": secret}),
        Out::Call { id, name, args, .. } => {
            json!({"type": "tool_use", "id": id.replace("call_", "toolu_"), "name": name, "input": args})
        }
        Out::Text { text, .. } => json!({"type": "text", "text": text}),
    }
}

fn anthropic_json(model: &str, outs: &[Out], n: u64) -> Value {
    let stop = if outs.iter().any(|o| matches!(o, Out::Call { .. })) {
        "tool_use"
    } else {
        "end_turn"
    };
    json!({"id": format!("msg_mock{n}"), "type": "message", "role": "assistant", "model": model,
        "content": outs.iter().map(anthropic_block).collect::<Vec<_>>(),
        "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}})
}

fn anthropic_sse(model: &str, outs: &[Out], n: u64) -> Vec<String> {
    let mut start = anthropic_json(model, &[], n);
    start["stop_reason"] = Value::Null;
    let mut ev = vec![event(
        "message_start",
        &json!({"type": "message_start", "message": start}),
    )];
    ev.push(event("ping", &json!({"type": "ping"})));
    for (i, o) in outs.iter().enumerate() {
        let block = anthropic_block(o);
        match o {
            Out::Reasoning { secret, .. } => {
                ev.push(event(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": i,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
                ));
                ev.push(event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": i,
                    "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}),
                ));
                ev.push(event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": i,
                    "delta": {"type": "signature_delta", "signature": secret}}),
                ));
            }
            Out::Call { args, .. } => {
                let mut empty = block.clone();
                empty["input"] = json!({});
                ev.push(event(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": i,
                    "content_block": empty}),
                ));
                let a = args.to_string();
                let (x, y) = a.split_at(a.len() / 2);
                for d in [x, y] {
                    ev.push(event(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": d}}),
                    ));
                }
            }
            Out::Text { text, .. } => {
                ev.push(event(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": i,
                    "content_block": {"type": "text", "text": ""}}),
                ));
                let (x, y) = text.split_at(text.len() / 2);
                for d in [x, y] {
                    ev.push(event(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": i,
                        "delta": {"type": "text_delta", "text": d}}),
                    ));
                }
            }
        }
        ev.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": i}),
        ));
    }
    let stop = anthropic_json(model, outs, n)["stop_reason"].clone();
    ev.push(event(
        "message_delta",
        &json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
    ));
    ev.push(event("message_stop", &json!({"type": "message_stop"})));
    ev
}

// --- Gemini -----------------------------------------------------------------------

fn gemini_part(o: &Out) -> Option<Value> {
    match o {
        Out::Reasoning { .. } => None,
        Out::Call { id, name, args, .. } => Some(
            json!({"functionCall": {"name": name, "args": args, "id": id},
            "thoughtSignature": "c2lnbmF0dXJlLW1vY2stdGhvdWdodA=="}),
        ),
        Out::Text { text, .. } => Some(json!({"text": text})),
    }
}

fn gemini_json(model: &str, outs: &[Out], n: u64, last: bool) -> Value {
    let parts: Vec<Value> = outs.iter().filter_map(gemini_part).collect();
    let mut cand = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if last {
        cand["finishReason"] = json!("STOP");
    }
    json!({"candidates": [cand],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model, "responseId": format!("mock{n}")})
}

fn gemini_sse(model: &str, outs: &[Out], n: u64) -> Vec<String> {
    // Data-only events separated by CRLF pairs, as Google sends them; a text is split
    // over two events, a call comes whole in one.
    let mut ev = Vec::new();
    let mut pieces: Vec<Out> = Vec::new();
    for o in outs {
        match o {
            Out::Text { id, text } => {
                let (a, b) = text.split_at(text.len() / 2);
                pieces.push(Out::Text {
                    id: id.clone(),
                    text: a.into(),
                });
                pieces.push(Out::Text {
                    id: id.clone(),
                    text: b.into(),
                });
            }
            other => pieces.push(other.clone()),
        }
    }
    let count = pieces.len();
    for (i, p) in pieces.into_iter().enumerate() {
        if gemini_part(&p).is_none() {
            continue;
        }
        let v = gemini_json(model, &[p], n, i + 1 == count);
        ev.push(format!("data: {v}\r\n\r\n"));
    }
    ev
}
