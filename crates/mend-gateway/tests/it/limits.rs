//! Body cap, timeouts, unreachable upstreams, and upstream errors passed back as they came.

use std::time::Duration;

use axum::body::{Body, Bytes};
use http_body_util::BodyExt;
use mend::Dialect;
use mend_gateway::{app, Gateway, Mode};
use tower::ServiceExt;

use crate::support::{bodies, config_for, endpoint, request, request_to, send, Mock, Scripted};

#[tokio::test]
async fn a_body_over_the_cap_is_413_in_the_providers_shape() {
    let mock = Mock::start().await;
    let mut config = config_for(&mock, Mode::Observe);
    config.body_limit = 1000;
    let app = app(Gateway::new(config).unwrap());
    let big = format!(
        "{{\"model\":\"gpt-4o\",\"messages\":[{{\"role\":\"user\",\"content\":\"{}\"}}]}}",
        "x".repeat(2000)
    );
    for d in Dialect::ALL {
        let r = send(&app, request_to(d, endpoint(d), big.clone(), &[])).await;
        assert_eq!(r.status, 413, "{d}");
        let v = r.json();
        let msg = match d {
            Dialect::BedrockConverse => {
                assert_eq!(r.header("x-amzn-errortype"), Some("ValidationException"));
                v["message"].clone()
            }
            _ => v["error"]["message"].clone(),
        };
        assert!(
            msg.as_str()
                .unwrap()
                .contains("larger than the gateway's limit of 1000 bytes"),
            "{d}: {msg}"
        );
    }
    // Without a Content-Length (chunked), the cap holds too.
    let chunks: Vec<Result<Bytes, std::io::Error>> =
        (0..10).map(|_| Ok(Bytes::from(vec![b' '; 200]))).collect();
    let r = send(
        &app,
        request_to(
            Dialect::OpenAiChat,
            "/v1/chat/completions",
            Body::from_stream(futures_util::stream::iter(chunks)),
            &[],
        ),
    )
    .await;
    assert_eq!(r.status, 413);
    assert!(mock.received().is_empty());
}

#[tokio::test]
async fn a_slow_upstream_is_a_504_that_names_the_setting() {
    let mock = Mock::start().await;
    let mut config = config_for(&mock, Mode::Observe);
    config.read_timeout = Duration::from_millis(300);
    let app = app(Gateway::new(config).unwrap());
    let mut slow = Scripted::json(200, "{}");
    slow.head_delay = Duration::from_secs(3);
    mock.push(slow);
    let d = Dialect::Anthropic;
    let r = send(&app, request(d, &bodies::valid(d), &[])).await;
    assert_eq!(r.status, 504);
    let v = r.json();
    assert_eq!(v["error"]["type"], "api_error");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("did not answer within 300 ms (read_timeout)"),
        "{msg}"
    );
    assert!(msg.contains(&mock.base_url()), "{msg}");
}

#[tokio::test]
async fn a_stream_that_stalls_is_cut() {
    let mock = Mock::start().await;
    let mut config = config_for(&mock, Mode::Observe);
    config.read_timeout = Duration::from_millis(300);
    let app = app(Gateway::new(config).unwrap());
    let mut stalls = Scripted::sse(vec![
        Bytes::from_static(b"data: {\"a\":1}\n\n"),
        Bytes::from_static(b"data: {\"a\":2}\n\n"),
    ]);
    stalls.chunk_delay = Duration::from_secs(3);
    mock.push(stalls);
    let d = Dialect::OpenAiChat;
    let resp = app
        .clone()
        .oneshot(request(d, &bodies::valid(d), &[]))
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(&first[..], b"data: {\"a\":1}\n\n");
    let next = tokio::time::timeout(Duration::from_secs(2), body.frame())
        .await
        .expect("the gateway gives up after read_timeout");
    assert!(matches!(next, Some(Err(_))), "{next:?}");
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502_that_says_so() {
    // A port that was just free: nothing listens there.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut config = mend_gateway::Config::default();
    config.upstream_mut(Dialect::Gemini).base_url = format!("http://127.0.0.1:{port}");
    let app = app(Gateway::new(config).unwrap());
    let d = Dialect::Gemini;
    let r = send(
        &app,
        request_to(
            d,
            "/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-SECRET-in-query",
            bodies::valid(d).to_string(),
            &[],
        ),
    )
    .await;
    assert_eq!(r.status, 502);
    let v = r.json();
    assert_eq!(v["error"]["status"], "UNAVAILABLE");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("cannot connect to the upstream"), "{msg}");
    assert!(!msg.contains("SECRET"), "{msg}");
}

#[tokio::test]
async fn upstream_errors_come_back_as_they_came() {
    let mock = Mock::start().await;
    let app = app(Gateway::new(config_for(&mock, Mode::Repair)).unwrap());
    let body = r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#;
    let mut limited = Scripted::json(429, body);
    limited.headers.push(("retry-after".into(), "7".into()));
    limited
        .headers
        .push(("x-request-id".into(), "req_123".into()));
    mock.push(limited);
    let d = Dialect::OpenAiChat;
    let r = send(&app, request(d, &bodies::valid(d), &[])).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.text(), body);
    assert_eq!(r.header("retry-after"), Some("7"));
    assert_eq!(r.header("x-request-id"), Some("req_123"));
    assert_eq!(r.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn an_upstream_that_never_accepts_is_a_504_that_names_connect_timeout() {
    // A socket on this machine that listens with a backlog of one and never accepts:
    // once its queue is full the kernel drops further SYNs, so a connection is neither
    // made nor refused.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let silent = socket.listen(1).unwrap();
    let addr = silent.local_addr().unwrap();
    let mut queued = Vec::new();
    loop {
        let connect = tokio::net::TcpStream::connect(addr);
        match tokio::time::timeout(Duration::from_millis(300), connect).await {
            Ok(Ok(s)) => queued.push(s),
            Ok(Err(e)) => panic!("the silent socket refused a connection: {e}"),
            Err(_) => break,
        }
        assert!(queued.len() < 64, "the backlog never filled");
    }
    let mut config = mend_gateway::Config::default();
    for d in Dialect::ALL {
        config.upstream_mut(d).base_url = format!("http://{addr}");
    }
    config.connect_timeout = Duration::from_millis(400);
    let app = app(Gateway::new(config).unwrap());
    for d in [Dialect::OpenAiChat, Dialect::Anthropic, Dialect::Gemini] {
        let started = std::time::Instant::now();
        let r = send(&app, request(d, &bodies::valid(d), &[])).await;
        assert_eq!(r.status, 504, "{d}: {}", r.text());
        let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(
            msg.contains(&format!(
                "the upstream at http://{addr} did not accept a connection within 400 ms (connect_timeout)"
            )),
            "{d}: {msg}"
        );
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(350) && took < Duration::from_secs(5),
            "{d}: {took:?}"
        );
    }
    drop(silent);
}
