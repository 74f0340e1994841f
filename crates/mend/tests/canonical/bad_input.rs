//! Bad input gives a clear error and never a panic: the wrong dialect, cut and malformed
//! streams, provider errors inside a 200 stream, unknown events, very large bodies.

use mend::canonical::capture::{read_response, read_stream, CaptureErrorKind, StreamCapture};
use mend::canonical::{Conversation, Part, ReadError};
use mend::Dialect;
use serde_json::json;

use crate::capture::fixtures;

#[test]
fn a_stream_of_another_dialect_is_refused_at_its_first_event() {
    let mut refused = 0;
    for f in fixtures("response.sse") {
        if !f.expect_ok() {
            continue;
        }
        for d in Dialect::ALL {
            if d == f.dialect {
                continue;
            }
            let e = read_stream(d, &f.bytes).expect_err(&f.name());
            assert_eq!(
                e.kind,
                CaptureErrorKind::WrongDialect,
                "{} as {d}: {e}",
                f.name()
            );
            assert!(e.reason.contains(f.dialect.name()), "{}: {e}", f.name());
            refused += 1;
        }
    }
    if refused > 0 {
        eprintln!("{refused} streams read as the wrong dialect refused");
    }
}

#[test]
fn a_response_of_another_dialect_is_refused() {
    for f in fixtures("response.json") {
        if !f.expect_ok() {
            continue;
        }
        for d in Dialect::ALL {
            if d == f.dialect {
                continue;
            }
            let e = read_response(d, &f.bytes).expect_err(&f.name());
            assert_eq!(
                e.kind,
                CaptureErrorKind::WrongDialect,
                "{} as {d}: {e}",
                f.name()
            );
        }
    }
}

#[test]
fn an_error_inside_a_200_stream_is_a_provider_error_at_its_event() {
    let stream = concat!(
        "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"output\":[]}}\n\n",
        "data: {\"type\":\"error\",\"error\":{\"type\":\"insufficient_quota\",\"message\":\"You exceeded your quota\"}}\n\n",
        "data: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_1\",\"status\":\"failed\"}}\n\n"
    );
    let e = read_stream(Dialect::OpenAiResponses, stream.as_bytes()).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::Provider);
    assert_eq!(e.offset, stream.find("data: {\"type\":\"error\"").unwrap());
    assert!(
        e.reason
            .contains("insufficient_quota: You exceeded your quota"),
        "{e}"
    );
    assert!(e.provider_error.is_some());

    let anthropic = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"role\":\"assistant\",\"content\":[]}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
    );
    let e = read_stream(Dialect::Anthropic, anthropic.as_bytes()).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::Provider);
    assert!(e.reason.contains("overloaded_error: Overloaded"), "{e}");
}

#[test]
fn unknown_events_and_blocks_are_kept_not_fatal() {
    let stream = concat!(
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"role\":\"assistant\",\"content\":[]}}\n\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\": \\\"x\\\"}\"}}\n\n",
        "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "data: {\"type\":\"brand_new_event\",\"payload\":1}\n\n",
        "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"sparkle_delta\",\"x\":1}}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n",
        "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "data: {\"type\":\"message_stop\"}\n\n"
    );
    let reply = read_stream(Dialect::Anthropic, stream.as_bytes()).unwrap();
    assert_eq!(reply.unknown.len(), 2);
    assert_eq!(reply.unknown[0]["type"], "brand_new_event");
    let parts = &reply.messages[0].parts;
    match &parts[0] {
        Part::Opaque(o) => {
            assert_eq!(o.value["id"], "srvtoolu_1");
            assert_eq!(o.value["input"], json!({"query": "x"}));
        }
        p => panic!("expected an opaque server tool block, got {p:?}"),
    }
    assert_eq!(reply.messages[0].text(), "ok");

    let responses = concat!(
        "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"output\":[]}}\n\n",
        "data: {\"type\":\"response.something_new\",\"x\":1}\n\n",
        "data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"hologram_call\",\"id\":\"hc_1\"}}\n\n",
        "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\"}}\n\n"
    );
    let reply = read_stream(Dialect::OpenAiResponses, responses.as_bytes()).unwrap();
    assert_eq!(reply.unknown.len(), 1);
    assert!(reply.messages[0].is_verbatim());
}

#[test]
fn malformed_events_say_where() {
    let stream = "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[]}}\n\ndata: {\"type\": nope}\n\n";
    let e = read_stream(Dialect::Anthropic, stream.as_bytes()).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::Malformed);
    assert_eq!(e.offset, stream.find("data: {\"type\": nope").unwrap());

    let bad_utf8 = b"data: {\"candidates\": [\xff]}\n\n";
    let e = read_stream(Dialect::Gemini, bad_utf8).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::Malformed);
    assert!(e.reason.contains("UTF-8"), "{e}");

    let delta_first = "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[]}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n";
    let e = read_stream(Dialect::Anthropic, delta_first.as_bytes()).unwrap_err();
    assert!(e.reason.contains("block 3"), "{e}");

    for d in Dialect::ALL {
        let e = read_stream(d, b"").unwrap_err();
        assert_eq!(e.kind, CaptureErrorKind::Truncated, "{d}");
        let e = read_stream(d, br#"{"choices": []}"#).unwrap_err();
        assert!(e.reason.contains("read_response"), "{d}: {e}");
        let e = read_response(d, b"data: {}\n\n").unwrap_err();
        assert!(e.reason.contains("read_stream"), "{d}: {e}");
        let e = read_response(d, b"{\"id\": ").unwrap_err();
        assert_eq!(e.kind, CaptureErrorKind::Truncated, "{d}");
        assert_eq!(e.offset, 7, "{d}");
    }
}

#[test]
fn after_an_error_the_capture_keeps_saying_it() {
    let mut cap = StreamCapture::new(Dialect::OpenAiChat);
    let e = cap.feed(b"data: {not json}\n\n").unwrap_err();
    assert_eq!(cap.feed(b"data: {}\n\n").unwrap_err(), e);
    assert_eq!(cap.finish().unwrap_err(), e);
}

#[test]
fn a_request_body_that_is_not_an_object_is_refused() {
    for d in Dialect::ALL {
        let e = Conversation::from_request(d, &json!([1, 2])).unwrap_err();
        assert_eq!(
            e,
            ReadError::NotAnObject {
                dialect: d,
                kind: "an array"
            }
        );
        assert!(e.to_string().contains(d.name()));
    }
}

const MB: usize = 1024 * 1024;

#[test]
fn a_100_mb_event_is_refused_early_and_a_100_mb_stream_is_read() {
    // One line of 100 MB: refused once it passes the limit, not buffered whole.
    let mut big = b"data: {\"x\": \"".to_vec();
    big.resize(100 * MB, b'a');
    let e = read_stream(Dialect::OpenAiChat, &big).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::TooLarge);
    assert_eq!(e.offset, 0);

    // 100 MB of text deltas in 1,600 events: read.
    let piece = "y".repeat(64 * 1024);
    let mut s = String::with_capacity(101 * MB);
    s.push_str("data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"role\":\"assistant\",\"content\":[]}}\n\n");
    s.push_str("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    for _ in 0..1600 {
        s.push_str("data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"");
        s.push_str(&piece);
        s.push_str("\"}}\n\n");
    }
    s.push_str("data: {\"type\":\"content_block_stop\",\"index\":0}\n\ndata: {\"type\":\"message_stop\"}\n\n");
    assert!(s.len() > 100 * MB);
    let mut cap = StreamCapture::new(Dialect::Anthropic);
    for chunk in s.as_bytes().chunks(MB + 7) {
        cap.feed(chunk).unwrap();
    }
    let reply = cap.finish().unwrap();
    assert_eq!(reply.messages[0].text().len(), 1600 * piece.len());
}

#[test]
fn a_100_mb_response_body_is_read_or_refused_cleanly() {
    let text = "z".repeat(100 * MB);
    let body = json!({"type": "message", "id": "msg_1", "role": "assistant",
                      "content": [{"type": "text", "text": text}]})
    .to_string();
    let reply = read_response(Dialect::Anthropic, body.as_bytes()).unwrap();
    assert_eq!(reply.messages[0].text().len(), 100 * MB);

    // Cut at 100 MB: the end of the body is missing.
    let e = read_response(Dialect::Anthropic, &body.as_bytes()[..100 * MB]).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::Truncated);

    // 100 MB of zero bytes: not JSON, not SSE.
    let zeros = vec![0u8; 100 * MB];
    let e = read_response(Dialect::Gemini, &zeros).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::Malformed);
    let e = read_stream(Dialect::Gemini, &zeros).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::TooLarge);
}
