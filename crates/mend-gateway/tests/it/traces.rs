//! OpenTelemetry traces: one span per exchange (GenAI conventions) with a child span for
//! each upstream call, sent over OTLP/HTTP to a receiver the test starts, and W3C
//! `traceparent` carried upstream.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::routing::post;
use mend::Dialect;
use mend_gateway::{app, Gateway, Mode, Telemetry};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::json;

use crate::support::{bodies, config_for, request, send, Mock, Scripted};

/// A span as received, with its resource's attributes.
type Received = (Vec<(String, String)>, Span);

/// A local OTLP/HTTP receiver: every span it was sent, with its resource's attributes.
struct Receiver {
    addr: SocketAddr,
    spans: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    async fn start() -> Receiver {
        let spans: Arc<Mutex<Vec<Received>>> = Arc::default();
        let sink = spans.clone();
        let router = axum::Router::new().route(
            "/v1/traces",
            post(move |body: Bytes| {
                let sink = sink.clone();
                async move {
                    let req = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                    for rs in req.resource_spans {
                        let resource = rs
                            .resource
                            .map(|r| {
                                r.attributes
                                    .iter()
                                    .map(|kv| (kv.key.clone(), text(kv)))
                                    .collect()
                            })
                            .unwrap_or_default();
                        for ss in rs.scope_spans {
                            for s in ss.spans {
                                sink.lock().unwrap().push((Vec::clone(&resource), s));
                            }
                        }
                    }
                    ([("content-type", "application/x-protobuf")], Bytes::new())
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Receiver { addr, spans, task }
    }

    fn url(&self) -> String {
        format!("http://{}/v1/traces", self.addr)
    }

    /// Flush the gateway's spans until `n` have arrived (the exchange span ends once
    /// the response's usage is read, just after its last byte).
    async fn wait_for(&self, telemetry: &Telemetry, n: usize) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let t = telemetry.clone();
            tokio::task::spawn_blocking(move || t.flush())
                .await
                .unwrap()
                .unwrap();
            let got = self.spans.lock().unwrap().clone();
            if got.len() >= n || Instant::now() > deadline {
                assert_eq!(got.len(), n, "spans received: {got:#?}");
                // The requests carried credentials (`support::creds`): no span holds one.
                for (_, s) in &got {
                    for kv in &s.attributes {
                        assert!(!text(kv).contains("SECRET"), "{}: {kv:?}", s.name);
                    }
                }
                return got;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn text(kv: &opentelemetry_proto::tonic::common::v1::KeyValue) -> String {
    match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(Any::StringValue(s)) => s.clone(),
        Some(Any::IntValue(i)) => i.to_string(),
        Some(Any::BoolValue(b)) => b.to_string(),
        Some(Any::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

fn attr(span: &Span, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key == key).map(text)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn one(spans: &[Received], kind: SpanKind) -> Vec<Span> {
    spans
        .iter()
        .map(|(_, s)| s.clone())
        .filter(|s| s.kind == kind as i32)
        .collect()
}

fn expect_attrs(span: &Span, want: &[(&str, &str)]) {
    let mut keys: Vec<&str> = span.attributes.iter().map(|kv| kv.key.as_str()).collect();
    keys.sort_unstable();
    let before = keys.len();
    keys.dedup();
    assert_eq!(
        keys.len(),
        before,
        "an attribute set twice on {}: {keys:?}",
        span.name
    );
    for (k, v) in want {
        assert_eq!(
            attr(span, k).as_deref(),
            Some(*v),
            "{k} on {}: {:#?}",
            span.name,
            span.attributes
        );
    }
}

fn traced_gateway(mock: &Mock, mode: Mode, receiver: &Receiver) -> (axum::Router, Telemetry) {
    let telemetry = Telemetry::otlp_http(&receiver.url()).unwrap();
    let gateway = Gateway::new(config_for(mock, mode))
        .unwrap()
        .with_telemetry(telemetry.clone())
        .unwrap();
    (app(gateway), telemetry)
}

const INCOMING_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const INCOMING_PARENT: &str = "b7ad6b7169203331";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exchange_is_one_genai_span_with_its_upstream_call_as_a_child() {
    let receiver = Receiver::start().await;
    let mock = Mock::start().await;
    let (app, telemetry) = traced_gateway(&mock, Mode::Repair, &receiver);
    let d = Dialect::OpenAiChat;
    let traceparent = format!("00-{INCOMING_TRACE}-{INCOMING_PARENT}-01");
    let r = send(
        &app,
        request(
            d,
            &bodies::unanswered(d),
            &[
                ("traceparent", &traceparent),
                ("x-mend-conversation", "conv-42"),
            ],
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let spans = receiver.wait_for(&telemetry, 2).await;
    let (resource, _) = &spans[0];
    assert!(
        resource.contains(&("service.name".into(), "mend".into())),
        "{resource:?}"
    );

    let exchange = one(&spans, SpanKind::Server)
        .pop()
        .expect("the exchange span");
    let call = one(&spans, SpanKind::Client)
        .pop()
        .expect("the upstream call span");
    assert_eq!(exchange.name, "chat gpt-4o");
    assert_eq!(call.name, "chat gpt-4o");
    // The client's trace continues: the exchange's parent is the incoming span, the
    // call's parent the exchange.
    assert_eq!(hex(&exchange.trace_id), INCOMING_TRACE);
    assert_eq!(hex(&exchange.parent_span_id), INCOMING_PARENT);
    assert_eq!(call.trace_id, exchange.trace_id);
    assert_eq!(call.parent_span_id, exchange.span_id);
    assert!(exchange.start_time_unix_nano <= call.start_time_unix_nano);
    assert!(call.end_time_unix_nano <= exchange.end_time_unix_nano);
    expect_attrs(
        &exchange,
        &[
            ("gen_ai.operation.name", "chat"),
            ("gen_ai.provider.name", "openai"),
            ("gen_ai.request.model", "gpt-4o"),
            ("gen_ai.request.stream", "false"),
            ("gen_ai.response.model", "gpt-4o"),
            ("gen_ai.usage.input_tokens", "10"),
            ("gen_ai.usage.output_tokens", "5"),
            ("gen_ai.conversation.id", "conv-42"),
            ("mend.mode", "repair"),
            ("mend.outcome", "repaired"),
            ("mend.violations", "1"),
            ("mend.repairs", "1"),
            ("mend.healed", "false"),
            ("http.request.method", "POST"),
            ("url.path", "/v1/chat/completions"),
            ("http.response.status_code", "200"),
        ],
    );
    let port = mock.addr.port().to_string();
    expect_attrs(
        &call,
        &[
            ("gen_ai.operation.name", "chat"),
            ("gen_ai.provider.name", "openai"),
            ("gen_ai.request.model", "gpt-4o"),
            ("gen_ai.response.model", "gpt-4o"),
            ("gen_ai.usage.input_tokens", "10"),
            ("server.address", "127.0.0.1"),
            ("server.port", &port),
            ("http.response.status_code", "200"),
        ],
    );
    // Upstream, the trace context is the call's, not the client's.
    let sent = mock.last();
    assert_eq!(
        sent.header("traceparent"),
        Some(format!("00-{INCOMING_TRACE}-{}-01", hex(&call.span_id)).as_str())
    );
    assert_eq!(
        attr(&exchange, "mend.request_id").as_deref(),
        r.header("x-mend-request-id")
    );
    println!("exchange span as received: {exchange:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_answer_gives_its_usage_and_a_new_trace_starts_without_a_traceparent() {
    let receiver = Receiver::start().await;
    let mock = Mock::start().await;
    let (app, telemetry) = traced_gateway(&mock, Mode::Observe, &receiver);
    let d = Dialect::Anthropic;
    let mut body = bodies::valid(d);
    body["stream"] = json!(true);
    let r = send(&app, request(d, &body, &[])).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("message_stop"));
    let spans = receiver.wait_for(&telemetry, 2).await;
    let exchange = one(&spans, SpanKind::Server).pop().unwrap();
    let call = one(&spans, SpanKind::Client).pop().unwrap();
    assert!(exchange.parent_span_id.is_empty(), "a root span");
    assert_eq!(exchange.name, "chat claude-sonnet-4-5");
    expect_attrs(
        &exchange,
        &[
            ("gen_ai.provider.name", "anthropic"),
            ("gen_ai.request.stream", "true"),
            ("gen_ai.usage.input_tokens", "10"),
            ("gen_ai.usage.output_tokens", "5"),
            ("mend.mode", "observe"),
            ("mend.violations", "0"),
        ],
    );
    let sent = mock.last();
    let tp = sent.header("traceparent").expect("a traceparent upstream");
    assert_eq!(
        tp,
        format!("00-{}-{}-01", hex(&exchange.trace_id), hex(&call.span_id))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healed_exchange_says_so_and_has_both_upstream_calls() {
    let receiver = Receiver::start().await;
    let mock = Mock::start().await;
    let (app, telemetry) = traced_gateway(&mock, Mode::Heal, &receiver);
    let d = Dialect::OpenAiChat;
    let text = "An assistant message with 'tool_calls' must be followed by tool messages \
                responding to each 'tool_call_id'. The following tool_call_ids did not have \
                response messages: call_1";
    let refusal = json!({"error": {"message": text, "type": "invalid_request_error",
        "param": "messages", "code": null}});
    mock.push(Scripted::json(400, refusal.to_string()));
    let r = send(&app, request(d, &bodies::unanswered(d), &[])).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-mend-heal"), Some("healed"));
    let spans = receiver.wait_for(&telemetry, 3).await;
    let exchange = one(&spans, SpanKind::Server).pop().unwrap();
    let mut calls = one(&spans, SpanKind::Client);
    calls.sort_by_key(|s| s.start_time_unix_nano);
    assert_eq!(calls.len(), 2);
    expect_attrs(
        &exchange,
        &[
            ("mend.mode", "heal"),
            ("mend.healed", "true"),
            ("mend.heal.outcome", "healed"),
            ("mend.healed_rules", "tool-call-without-result"),
            ("http.response.status_code", "200"),
        ],
    );
    expect_attrs(
        &calls[0],
        &[
            ("http.response.status_code", "400"),
            ("error.type", "400"),
            ("mend.heal.retry", "false"),
        ],
    );
    expect_attrs(
        &calls[1],
        &[
            ("http.response.status_code", "200"),
            ("mend.heal.retry", "true"),
        ],
    );
    assert!(calls.iter().all(|c| c.parent_span_id == exchange.span_id));
}
