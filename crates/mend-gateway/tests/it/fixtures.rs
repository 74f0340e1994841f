//! Recorded provider answers from `../shared/fixtures` pass through byte for byte,
//! status and all.

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
    for d in crate::support::SERVED {
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
