//! Streams pass through unbuffered: the client has the first event while the upstream
//! is still holding the rest.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use http_body_util::BodyExt;
use mend::Dialect;
use mend_gateway::Mode;
use serde_json::json;
use tokio::sync::Notify;
use tower::ServiceExt;

use crate::support::{app_for, bodies, request, request_to, send, Mock, Scripted};

#[tokio::test]
async fn the_first_event_arrives_before_the_upstream_finishes() {
    let mock = Mock::start().await;
    for mode in [Mode::Observe, Mode::Repair] {
        let app = app_for(&mock, mode);
        let gate = Arc::new(Notify::new());
        let first =
            Bytes::from_static(b"event: message_start\ndata: {\"type\":\"message_start\"}\n\n");
        let rest =
            Bytes::from_static(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        let mut s = Scripted::sse(vec![first.clone(), rest.clone()]);
        s.gate = Some(gate.clone());
        mock.push(s);
        let d = Dialect::Anthropic;
        let mut body = bodies::valid(d);
        body["stream"] = json!(true);
        let resp = app.clone().oneshot(request(d, &body, &[])).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        let mut stream = resp.into_body();
        // The upstream holds its second event until the gate opens; the first must be
        // here already.
        let got = tokio::time::timeout(Duration::from_secs(5), stream.frame())
            .await
            .expect("the first event was held back")
            .unwrap()
            .unwrap()
            .into_data()
            .unwrap();
        assert_eq!(got, first, "{mode}");
        gate.notify_one();
        let tail = stream.collect().await.unwrap().to_bytes();
        assert_eq!(tail, rest, "{mode}");
    }
}

#[tokio::test]
async fn each_dialects_stream_reaches_the_client_whole() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Repair);
    for d in Dialect::ALL {
        let mut body = bodies::unanswered(d);
        let path = match d {
            Dialect::Gemini => {
                "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse".to_string()
            }
            Dialect::BedrockConverse => {
                crate::support::endpoint(d).replace("/converse", "/converse-stream")
            }
            _ => {
                body["stream"] = json!(true);
                crate::support::endpoint(d).to_string()
            }
        };
        let r = send(&app, request_to(d, &path, body.to_string(), &[])).await;
        assert_eq!(r.status, 200, "{d}: {}", r.text());
        assert_eq!(
            r.header("x-mend-repairs"),
            Some("1; tool-call-without-result=1")
        );
        if d == Dialect::BedrockConverse {
            // Binary AWS event-stream frames, passed back as they came: they decode
            // whole, and capture reads the message they carry.
            assert_eq!(
                r.header("content-type"),
                Some("application/vnd.amazon.eventstream")
            );
            let frames = mend::canonical::capture::split_frames(&r.body).expect("whole frames");
            assert_eq!(frames[0].header(":event-type"), Some("messageStart"));
            let reply = mend::read_stream(d, &r.body).expect("a whole message");
            assert!(
                reply.messages[0].text().starts_with("The tool said"),
                "{reply:?}"
            );
            continue;
        }
        assert_eq!(r.header("content-type"), Some("text/event-stream"));
        let events = mend::canonical::capture::split_events(&r.body).expect("whole events");
        // Gemini sends a call whole in one event; the others in several.
        assert!(!events.is_empty(), "{d}: {}", r.text());
        assert!(r.text().ends_with('\n'), "{d}: {}", r.text());
    }
}
