//! heal: the request goes upstream untouched; a history error the provider answers with
//! (its real words, from `../shared/docs/provider-errors.jsonl`) is repaired and retried
//! once; anything else comes back as the provider sent it.

use axum::body::Bytes;
use mend::Dialect;
use mend_gateway::{app, Gateway, Mode};
use serde_json::{json, Value};

use crate::support::{
    app_for, bodies, config_for, endpoint, request, request_to, send, shared_dir, Mock, Scripted,
};

/// The real error text of a row of the evidence (`None`, after one line, when the
/// shared folder is missing outside CI).
fn real_text(row: &str) -> Option<String> {
    let shared = shared_dir()?;
    let path = shared.join("docs/provider-errors.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let found = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == row)
        .unwrap_or_else(|| panic!("no row {row} in {}", path.display()));
    Some(
        found["error_text"]
            .as_str()
            .expect("an error text")
            .to_string(),
    )
}

/// The evidence row with the provider's words for [`bodies::unanswered`].
fn unanswered_row(d: Dialect) -> &'static str {
    match d {
        Dialect::OpenAiChat => "openai_chat-02",
        Dialect::OpenAiResponses => "openai_responses-05",
        Dialect::Anthropic => "anthropic-01",
        Dialect::Gemini => "gemini-02",
        Dialect::BedrockConverse => "bedrock_converse-06",
    }
}

/// A 400 in the provider's own error shape.
pub(crate) fn refusal(d: Dialect, message: &str) -> Scripted {
    let body = match d {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => json!({"error": {"message": message,
            "type": "invalid_request_error", "param": "messages", "code": null}}),
        Dialect::Anthropic => json!({"type": "error",
            "error": {"type": "invalid_request_error", "message": message}}),
        Dialect::Gemini => {
            json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
        }
        Dialect::BedrockConverse => json!({"message": message}),
    };
    let mut s = Scripted::json(400, body.to_string());
    if d == Dialect::BedrockConverse {
        s.headers
            .push(("x-amzn-errortype".into(), "ValidationException".into()));
    }
    s
}

fn valid_for(d: Dialect, body: &Value) -> bool {
    let opts = mend::CheckOptions {
        dialect: Some(d),
        model: Dialect::model_from_endpoint(endpoint(d)),
        ..Default::default()
    };
    mend::check_value(body, &opts).unwrap().valid()
}

#[tokio::test]
async fn a_history_error_is_repaired_and_retried_once_in_every_dialect() {
    let mock = Mock::start().await;
    let gateway = Gateway::new(config_for(&mock, Mode::Heal)).unwrap();
    let metrics = gateway.metrics().clone();
    let app = app(gateway);
    for d in Dialect::ALL {
        let Some(text) = real_text(unanswered_row(d)) else {
            return;
        };
        let before = mock.received().len();
        mock.push(refusal(d, &text));
        let body = bodies::unanswered(d);
        let r = send(&app, request(d, &body, &[])).await;
        assert_eq!(r.status, 200, "{d}: {}", r.text());
        assert_eq!(r.header("x-mend-mode"), Some("heal"), "{d}");
        assert_eq!(r.header("x-mend-heal"), Some("healed"), "{d}");
        assert_eq!(
            r.header("x-mend-healed"),
            Some("tool-call-without-result"),
            "{d}"
        );
        assert_eq!(
            r.header("x-mend-repairs"),
            Some("1; tool-call-without-result=1"),
            "{d}"
        );
        let seen = mock.received();
        assert_eq!(seen.len() - before, 2, "{d}: one retry");
        assert_eq!(
            seen[before].body,
            body.to_string().as_bytes(),
            "{d}: sent as received first"
        );
        let retried = seen[before + 1].json();
        assert_ne!(retried, body, "{d}");
        assert!(valid_for(d, &retried), "{d}: {retried}");
        // The retry carries the client's credentials, as the first send did.
        for (k, _) in crate::support::creds(d) {
            assert_eq!(
                seen[before + 1].header(k),
                seen[before].header(k),
                "{d}: {k}"
            );
            assert!(seen[before + 1].header(k).is_some(), "{d}: {k}");
        }
    }
    let text = metrics.render();
    for d in Dialect::ALL {
        let line = format!(
            r#"mend_heals_total{{dialect="{}",rule="{}",outcome="healed"}} 1"#,
            d.name(),
            if d == Dialect::Gemini {
                "function-response-count"
            } else {
                "tool-call-without-result"
            }
        );
        assert!(text.contains(&line), "{line}\n{text}");
    }
    assert!(
        text.contains(
            r#"mend_repairs_total{dialect="anthropic",rule="tool-call-without-result"} 1"#
        ),
        "{text}"
    );
}

#[tokio::test]
async fn streaming_requests_heal_and_stream_the_retry() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Heal);
    for d in [
        Dialect::OpenAiChat,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::BedrockConverse,
    ] {
        let Some(text) = real_text(unanswered_row(d)) else {
            return;
        };
        let mut body = bodies::unanswered(d);
        let path = match d {
            Dialect::Gemini => {
                "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse".to_string()
            }
            Dialect::BedrockConverse => endpoint(d).replace("/converse", "/converse-stream"),
            _ => {
                body["stream"] = json!(true);
                endpoint(d).to_string()
            }
        };
        mock.push(refusal(d, &text));
        let before = mock.received().len();
        let r = send(&app, request_to(d, &path, body.to_string(), &[])).await;
        assert_eq!(r.status, 200, "{d}: {}", r.text());
        assert_eq!(
            r.header("x-mend-healed"),
            Some("tool-call-without-result"),
            "{d}"
        );
        let ct = r.header("content-type").unwrap_or("");
        let expected = if d == Dialect::BedrockConverse {
            "application/vnd.amazon.eventstream"
        } else {
            "text/event-stream"
        };
        assert_eq!(ct, expected, "{d}");
        assert!(!r.body.is_empty(), "{d}");
        assert_eq!(mock.received().len() - before, 2, "{d}");
    }
}

#[tokio::test]
async fn an_error_that_is_not_about_the_history_comes_back_unchanged_without_a_retry() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Heal);
    let d = Dialect::OpenAiChat;
    let refusal_body = json!({"error": {"message": "The model `gpt-9` does not exist or you do not have access to it.",
        "type": "invalid_request_error", "param": null, "code": "model_not_found"}})
    .to_string();
    mock.push(Scripted::json(400, refusal_body.clone()));
    // The body is damaged too: heal still does not touch it, the provider did not say so.
    let r = send(&app, request(d, &bodies::unanswered(d), &[])).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, Bytes::from(refusal_body));
    assert_eq!(r.header("x-mend-heal"), None);
    assert_eq!(mock.received().len(), 1);
    // A rate limit is no history error either, whatever its words.
    mock.push(Scripted::json(
        429,
        r#"{"error":{"message":"Not the same number of function calls and responses"}}"#,
    ));
    let r = send(&app, request(d, &bodies::unanswered(d), &[])).await;
    assert_eq!(r.status, 429);
    assert_eq!(mock.received().len(), 2);
}

#[tokio::test]
async fn a_history_error_repair_cannot_fix_returns_the_first_answer() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Heal);
    let d = Dialect::Anthropic;
    let Some(text) = real_text("anthropic-01") else {
        return;
    };
    let first = refusal(d, &text);
    let sent_back = first.chunks[0].clone();
    mock.push(first);
    // mend finds nothing to repair in this body: the provider's answer stands.
    let r = send(&app, request(d, &bodies::valid(d), &[])).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, sent_back);
    assert_eq!(r.header("x-mend-heal"), Some("unrepairable"));
    assert_eq!(r.header("x-mend-healed"), None);
    assert_eq!(mock.received().len(), 1);
}

#[tokio::test]
async fn an_error_on_the_retry_comes_back_unchanged() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Heal);
    let d = Dialect::Gemini;
    let Some(text) = real_text("gemini-02") else {
        return;
    };
    mock.push(refusal(d, &text));
    let second = r#"{"error":{"code":400,"message":"Please ensure that function call turn comes immediately after a user turn or after a function response turn.","status":"INVALID_ARGUMENT"}}"#;
    mock.push(Scripted::json(400, second));
    let r = send(&app, request(d, &bodies::unanswered(d), &[])).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.text(), second);
    assert_eq!(r.header("x-mend-heal"), Some("failed"));
    assert_eq!(r.header("x-mend-healed"), None);
    // Exactly one retry, even though the retry's error is a history error too.
    assert_eq!(mock.received().len(), 2);
}

#[tokio::test]
async fn a_valid_request_passes_through_untouched_with_one_upstream_call() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Heal);
    for d in Dialect::ALL {
        let text = format!("  {}\n", bodies::valid(d));
        let before = mock.received().len();
        let r = send(&app, request_to(d, endpoint(d), text.clone(), &[])).await;
        assert_eq!(r.status, 200, "{d}: {}", r.text());
        assert_eq!(r.header("x-mend-heal"), None, "{d}");
        assert_eq!(r.header("x-mend-repairs"), None, "{d}");
        assert_eq!(mock.received().len() - before, 1, "{d}");
        assert_eq!(mock.last().body, text.as_bytes(), "{d}");
    }
}

#[tokio::test]
async fn a_sigv4_signed_bedrock_request_is_not_retried() {
    let mock = Mock::start().await;
    let gateway = Gateway::new(config_for(&mock, Mode::Heal)).unwrap();
    let metrics = gateway.metrics().clone();
    let app = app(gateway);
    let d = Dialect::BedrockConverse;
    let Some(text) = real_text("bedrock_converse-06") else {
        return;
    };
    let first = refusal(d, &text);
    let sent_back = first.chunks[0].clone();
    mock.push(first);
    let body = bodies::unanswered(d).to_string();
    let signed = axum::http::Request::post(endpoint(d))
        .header("content-type", "application/json")
        .header(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20250101/us-east-1/bedrock/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, Signature=0123abcd",
        )
        .header("x-amz-date", "20250101T000000Z")
        .body(axum::body::Body::from(body.clone()))
        .unwrap();
    let r = send(&app, signed).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, sent_back);
    assert_eq!(r.header("x-mend-heal"), Some("sigv4-signed body"));
    assert_eq!(r.header("x-amzn-errortype"), Some("ValidationException"));
    assert_eq!(mock.received().len(), 1);
    assert_eq!(mock.last().body, body.as_bytes());
    let text = metrics.render();
    assert!(
        text.contains(r#"mend_heals_total{dialect="bedrock_converse",rule="tool-call-without-result",outcome="sigv4"} 1"#),
        "{text}"
    );
}

#[tokio::test]
async fn an_error_body_over_the_limit_is_passed_back_whole_without_a_retry() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Heal);
    let d = Dialect::OpenAiResponses;
    let Some(text) = real_text("openai_responses-05") else {
        return;
    };
    let padded = json!({"error": {"message": text, "pad": "x".repeat(100 * 1024)}}).to_string();
    let mut s = Scripted::json(400, Bytes::new());
    let (a, b) = padded.split_at(padded.len() / 2);
    s.chunks = vec![Bytes::from(a.to_string()), Bytes::from(b.to_string())];
    mock.push(s);
    let r = send(&app, request(d, &bodies::unanswered(d), &[])).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.text(), padded);
    assert_eq!(r.header("x-mend-heal"), None);
    assert_eq!(mock.received().len(), 1);
}

#[tokio::test]
async fn a_request_may_ask_for_heal_above_observe() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Observe);
    let d = Dialect::OpenAiResponses;
    let Some(text) = real_text("openai_responses-05") else {
        return;
    };
    mock.push(refusal(d, &text));
    let r = send(
        &app,
        request(d, &bodies::unanswered(d), &[("x-mend-mode", "heal")]),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-mend-mode"), Some("heal"));
    assert_eq!(r.header("x-mend-healed"), Some("tool-call-without-result"));
    // On a repair upstream, heal is a lower mode: not applied unless lowering is allowed.
    let app = app_for(&mock, Mode::Repair);
    let r = send(
        &app,
        request(d, &bodies::unanswered(d), &[("x-mend-mode", "heal")]),
    )
    .await;
    assert_eq!(r.header("x-mend-mode"), Some("repair"));
}

#[tokio::test]
async fn a_healed_exchange_is_kept_as_it_was_retried() {
    use mend_gateway::{Conversations, MemoryConversations};
    use std::sync::Arc;
    let mock = Mock::start().await;
    let store = Arc::new(MemoryConversations::new());
    let sink: Arc<dyn Conversations> = Arc::new(store.clone());
    let app = app(Gateway::with_conversations(config_for(&mock, Mode::Heal), Some(sink)).unwrap());
    let d = Dialect::OpenAiChat;
    let Some(text) = real_text("openai_chat-02") else {
        return;
    };
    mock.push(refusal(d, &text));
    let r = send(
        &app,
        request(
            d,
            &bodies::unanswered(d),
            &[("x-mend-conversation", "healed")],
        ),
    )
    .await;
    assert_eq!(r.header("x-mend-heal"), Some("healed"), "{}", r.text());
    let retried = mock.last().json();
    let sent = retried["messages"].as_array().unwrap().clone();
    let mut kept = Vec::new();
    for _ in 0..300 {
        kept = store.load("healed");
        if kept.len() > sent.len() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The history as retried (repaired), then the answer to it.
    assert_eq!(kept.len(), sent.len() + 1, "{kept:?}");
    assert_eq!(kept[..sent.len()], sent[..]);
    assert_eq!(kept[sent.len()]["role"], "assistant");
}

/// The tap holds the whole story once: the request, the refused answer, the request as
/// retried, the retry's answer; an answer passed back without a retry is tapped once.
#[tokio::test]
async fn the_tap_says_what_was_healed() {
    let mock = Mock::start().await;
    let dir = crate::secrets::tempdir("tap-heal");
    let mut config = config_for(&mock, Mode::Heal);
    config.tap = Some(dir);
    let gateway = Gateway::new(config).unwrap();
    let tap = gateway.tap_path().unwrap().to_path_buf();
    let app = app(gateway);
    let d = Dialect::Anthropic;
    let Some(text) = real_text("anthropic-01") else {
        return;
    };
    mock.push(refusal(d, &text));
    let r = send(&app, request(d, &bodies::unanswered(d), &[])).await;
    assert_eq!(r.header("x-mend-heal"), Some("healed"));
    mock.push(refusal(d, &text));
    let r = send(&app, request(d, &bodies::valid(d), &[])).await;
    assert_eq!(r.header("x-mend-heal"), Some("unrepairable"));
    let mut lines = Vec::new();
    for _ in 0..500 {
        lines = std::fs::read_to_string(&tap)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect();
        if lines.len() >= 6 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| format!("{} {}", l["kind"].as_str().unwrap(), l["status"]))
        .collect();
    assert_eq!(
        kinds,
        [
            "request null",
            "response 400",
            "request null",
            "response 200",
            "request null",
            "response 400"
        ],
        "{lines:?}"
    );
    assert!(lines[0].get("forwarded_body").is_none());
    assert_ne!(lines[2]["forwarded_body"], lines[2]["body"]);
    assert_eq!(lines[2]["forwarded_body"], mock.received()[1].json());
}
