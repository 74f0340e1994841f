//! Recorded provider answers from `../shared/fixtures` and
//! `../shared/fixtures-bedrock-converse` pass through byte for byte, status and all
//! (Converse's binary event streams too, cut in uneven pieces).

use std::path::Path;

use axum::body::Bytes;
use mend::Dialect;
use mend_gateway::Mode;
use serde_json::Value;

use crate::support::{app_for, bodies, request_to, send, shared_dir, Mock, Scripted};

#[tokio::test]
async fn recorded_answers_pass_through_unchanged() {
    let Some(shared) = shared_dir() else {
        return;
    };
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Observe);
    let mut seen = 0;
    for d in Dialect::ALL {
        if d == Dialect::BedrockConverse {
            // Its recordings live in fixtures-bedrock-converse: the test below.
            continue;
        }
        let dir = shared.join("fixtures").join(d.name());
        let mut cases: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        cases.sort();
        for case in cases {
            let Some((answer, sse)) = recorded_answer(&case) else {
                continue;
            };
            let status = meta_status(&case);
            let mut s = if sse {
                // Sent in uneven pieces, as a network would.
                let pieces = answer.chunks(700).map(Bytes::copy_from_slice).collect();
                Scripted::sse(pieces)
            } else {
                Scripted::json(status, answer.clone())
            };
            s.status = status;
            mock.push(s);
            let request = std::fs::read(case.join("request.json"))
                .unwrap_or_else(|_| bodies::valid(d).to_string().into_bytes());
            let path = match (d, sse) {
                (Dialect::Gemini, true) => {
                    "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
                }
                (Dialect::Gemini, false) => "/v1beta/models/gemini-2.5-flash:generateContent",
                _ => crate::support::endpoint(d),
            };
            let r = send(&app, request_to(d, path, request.clone(), &[])).await;
            assert_eq!(r.status.as_u16(), status, "{}", case.display());
            assert!(r.body == answer, "{}: the body changed", case.display());
            assert_eq!(mock.last().body, request, "{}", case.display());
            seen += 1;
        }
    }
    assert!(seen > 100, "only {seen} recorded answers found");
}

fn recorded_answer(case: &Path) -> Option<(Bytes, bool)> {
    if let Ok(b) = std::fs::read(case.join("response.sse")) {
        return Some((Bytes::from(b), true));
    }
    std::fs::read(case.join("response.json"))
        .ok()
        .map(|b| (Bytes::from(b), false))
}

fn meta_status(case: &Path) -> u16 {
    std::fs::read(case.join("meta.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|m| m["status"].as_u64())
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(200)
}

/// The 80 recorded Converse exchanges through the gateway in repair mode: each request
/// (valid, so left alone) reaches the upstream as its bytes, on the recorded path (the
/// model id still URL-encoded); each answer, JSON, AWS error or binary event stream,
/// comes back unchanged with its status and `x-amzn-ErrorType`.
#[tokio::test]
async fn recorded_converse_exchanges_pass_through_unchanged() {
    use base64::Engine as _;
    let Some(shared) = shared_dir() else {
        return;
    };
    let root = shared.join("fixtures-bedrock-converse");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("meta.json").is_file())
        .collect();
    dirs.sort();
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Repair);
    let (mut json, mut streams) = (0, 0);
    for case in &dirs {
        let meta: Value =
            serde_json::from_slice(&std::fs::read(case.join("meta.json")).unwrap()).unwrap();
        let status = meta_status(case);
        let path = meta["endpoint"]
            .as_str()
            .and_then(|e| e.split(".amazonaws.com").nth(1))
            .expect("a recorded endpoint")
            .to_string();
        let (answer, mut s) = match std::fs::read_to_string(case.join("response.stream.txt")) {
            Ok(b64) => {
                let joined: String = b64.split_ascii_whitespace().collect();
                let bytes = Bytes::from(
                    base64::engine::general_purpose::STANDARD
                        .decode(joined)
                        .unwrap(),
                );
                let pieces = bytes.chunks(333).map(Bytes::copy_from_slice).collect();
                let mut s = Scripted::sse(pieces);
                s.content_type = "application/vnd.amazon.eventstream".into();
                streams += 1;
                (bytes, s)
            }
            Err(_) => {
                let b = Bytes::from(std::fs::read(case.join("response.json")).unwrap());
                json += 1;
                (b.clone(), Scripted::json(status, b))
            }
        };
        s.status = status;
        if let Some(t) = meta["error_type_header"].as_str() {
            s.headers.push(("x-amzn-errortype".into(), t.into()));
        }
        mock.push(s);
        let request = std::fs::read(case.join("request.json"))
            .or_else(|_| std::fs::read(case.join("rejected-request.json")))
            .unwrap();
        let d = Dialect::BedrockConverse;
        let r = send(&app, request_to(d, &path, request.clone(), &[])).await;
        let name = case.display();
        assert_eq!(r.status.as_u16(), status, "{name}");
        assert!(r.body == answer, "{name}: the body changed");
        assert_eq!(r.header("x-mend-repairs"), Some("0"), "{name}");
        assert_eq!(
            r.header("x-amzn-errortype"),
            meta["error_type_header"].as_str(),
            "{name}"
        );
        let got = mock.last();
        assert_eq!(got.path, path, "{name}");
        assert_eq!(got.body, request, "{name}");
    }
    assert_eq!((json, streams), (63, 17), "recorded answers replayed");
}
