//! off, observe, repair, strict: what reaches the upstream and what the client gets.

use mend::Dialect;
use mend_gateway::{app, Gateway, Mode};
use serde_json::Value;

use crate::support::{app_for, bodies, config_for, request, send, Mock};

#[tokio::test]
async fn observe_forwards_the_very_bytes_and_says_what_it_saw() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Observe);
    for d in Dialect::ALL {
        let body = bodies::unanswered(d);
        let r = send(&app, request(d, &body, &[])).await;
        // The strict mock rejects the broken history itself: observe does not interfere.
        assert_eq!(r.status, 400, "{d}: {}", r.text());
        assert!(
            r.text().contains(bodies::unanswered_provider_text(d)),
            "{d}: {}",
            r.text()
        );
        assert_eq!(mock.last().body, body.to_string().as_bytes(), "{d}");
        assert_eq!(r.header("x-mend-mode"), Some("observe"));
        let v: Value = serde_json::from_str(r.header("x-mend-violations").unwrap()).unwrap();
        assert_eq!(v[0]["rule"], "tool-call-without-result", "{d}");
        assert!(r.header("x-mend-repairs").is_none());
    }
}

#[tokio::test]
async fn repair_forwards_a_repaired_body_and_counts_the_edits() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Repair);
    for d in Dialect::ALL {
        let body = bodies::unanswered(d);
        let r = send(&app, request(d, &body, &[])).await;
        assert_eq!(r.status, 200, "{d}: {}", r.text());
        assert_eq!(
            r.header("x-mend-repairs"),
            Some("1; tool-call-without-result=1"),
            "{d}"
        );
        assert!(r.header("x-mend-violations").is_none(), "{d}");
        let sent = mock.last().json();
        assert_ne!(sent, body, "{d}");
        let report = mend::check_value(
            &sent,
            &mend::CheckOptions {
                dialect: Some(d),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(report.valid(), "{d}: {:?}", report.violations);
    }
}

#[tokio::test]
async fn repair_leaves_a_valid_body_byte_for_byte() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Repair);
    for d in Dialect::ALL {
        // Odd spacing survives: nothing is re-serialized when nothing is repaired.
        let text = format!("  {}\n", bodies::valid(d));
        let r = send(
            &app,
            crate::support::request_to(d, crate::support::endpoint(d), text.clone(), &[]),
        )
        .await;
        assert_eq!(r.status, 200, "{d}: {}", r.text());
        assert_eq!(r.header("x-mend-repairs"), Some("0"));
        assert_eq!(mock.last().body, text.as_bytes(), "{d}");
    }
}

#[tokio::test]
async fn strict_answers_in_the_providers_own_shape_without_calling_upstream() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Strict);
    for d in Dialect::ALL {
        let r = send(&app, request(d, &bodies::unanswered(d), &[])).await;
        assert_eq!(r.status, 400, "{d}");
        assert_eq!(r.header("content-type"), Some("application/json"));
        let v = r.json();
        let message = match d {
            Dialect::BedrockConverse => {
                // AWS's shape: the message alone, the type in a header.
                assert_eq!(r.header("x-amzn-errortype"), Some("ValidationException"));
                assert!(v.get("__type").is_none() && v.get("error").is_none());
                &v["message"]
            }
            Dialect::OpenAiChat | Dialect::OpenAiResponses => {
                assert_eq!(v["error"]["type"], "invalid_request_error");
                assert_eq!(v["error"]["param"], d.history_key());
                assert!(v["error"]["code"].is_null());
                &v["error"]["message"]
            }
            Dialect::Anthropic => {
                assert_eq!(v["type"], "error");
                assert_eq!(v["error"]["type"], "invalid_request_error");
                &v["error"]["message"]
            }
            Dialect::Gemini => {
                assert_eq!(v["error"]["code"], 400);
                assert_eq!(v["error"]["status"], "INVALID_ARGUMENT");
                &v["error"]["message"]
            }
        };
        assert!(
            message
                .as_str()
                .unwrap()
                .contains(bodies::unanswered_provider_text(d)),
            "{d}: {message}"
        );
        assert_eq!(
            v["mend"]["violations"][0]["rule"], "tool-call-without-result",
            "{d}"
        );
        let h: Value = serde_json::from_str(r.header("x-mend-violations").unwrap()).unwrap();
        assert_eq!(h[0]["rule"], "tool-call-without-result");
        assert!(r.header("x-mend-request-id").is_some());
    }
    assert!(mock.received().is_empty(), "strict must not call upstream");
}

#[tokio::test]
async fn strict_forwards_a_valid_history_untouched() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Strict);
    for d in Dialect::ALL {
        let body = bodies::valid(d);
        let r = send(&app, request(d, &body, &[])).await;
        assert_eq!(r.status, 200, "{d}: {}", r.text());
        assert_eq!(mock.last().body, body.to_string().as_bytes());
        assert!(r.text().contains("The tool said"), "{d}: {}", r.text());
    }
}

#[tokio::test]
async fn off_forwards_without_looking() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Off);
    let body = bodies::unanswered(Dialect::OpenAiChat);
    let r = send(&app, request(Dialect::OpenAiChat, &body, &[])).await;
    assert_eq!(r.status, 400);
    assert!(r.header("x-mend-violations").is_none());
    assert_eq!(mock.last().body, body.to_string().as_bytes());
}

#[tokio::test]
async fn bodies_mend_cannot_read_go_to_the_provider_unless_strict() {
    let mock = Mock::start().await;
    for mode in [Mode::Observe, Mode::Heal, Mode::Repair] {
        let app = app_for(&mock, mode);
        let r = send(
            &app,
            crate::support::request_to(Dialect::OpenAiChat, "/v1/chat/completions", "{oops", &[]),
        )
        .await;
        // The provider's own parse error, not mend's.
        assert_eq!(r.status, 400);
        assert!(
            r.text().contains("could not parse the JSON body"),
            "{}",
            r.text()
        );
        assert_eq!(&mock.last().body[..], b"{oops");
    }
    // Strict forwards nothing it has not checked: a body that is not JSON, or not a
    // request of the endpoint's dialect, is answered in the provider's shape, with why.
    let app = app_for(&mock, Mode::Strict);
    let before = mock.received().len();
    for (d, path, body) in [
        (Dialect::OpenAiChat, "/v1/chat/completions", "{oops"),
        (
            Dialect::OpenAiChat,
            "/v1/chat/completions",
            r#"{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}"#,
        ),
        (
            Dialect::Anthropic,
            "/v1/messages",
            r#"{"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": "hi"}"#,
        ),
    ] {
        let r = send(&app, crate::support::request_to(d, path, body, &[])).await;
        assert_eq!(r.status, 400, "{body}");
        let v = r.json();
        // Anthropic's and OpenAI's error shapes both keep it at error.message.
        let message = &v["error"]["message"];
        assert!(
            message
                .as_str()
                .is_some_and(|m| m.contains("the body cannot be checked")),
            "{v}"
        );
        assert_eq!(v["mend"]["violations"][0]["rule"], "malformed");
    }
    assert_eq!(
        mock.received().len(),
        before,
        "strict forwarded an unreadable body"
    );
}

#[tokio::test]
async fn a_request_header_picks_the_mode_and_is_not_forwarded() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Observe);
    let d = Dialect::Anthropic;
    let r = send(
        &app,
        request(d, &bodies::unanswered(d), &[("x-mend-mode", "strict")]),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.header("x-mend-mode"), Some("strict"));
    assert!(mock.received().is_empty());

    let r = send(
        &app,
        request(d, &bodies::unanswered(d), &[("x-mend-mode", "repair")]),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(mock.last().header("x-mend-mode").is_none());

    let r = send(
        &app,
        request(d, &bodies::valid(d), &[("x-mend-mode", "loud")]),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["type"], "error");
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown mode 'loud'"));
}

#[tokio::test]
async fn the_mode_header_can_be_switched_off() {
    let mock = Mock::start().await;
    let mut config = config_for(&mock, Mode::Observe);
    config.mode_header = false;
    let app = app(Gateway::new(config).unwrap());
    let d = Dialect::OpenAiChat;
    let r = send(
        &app,
        request(d, &bodies::unanswered(d), &[("x-mend-mode", "strict")]),
    )
    .await;
    assert_eq!(r.header("x-mend-mode"), Some("observe"));
    assert_eq!(mock.received().len(), 1);
}

#[tokio::test]
async fn the_mode_header_raises_the_mode_but_lowers_it_only_when_allowed() {
    let mock = Mock::start().await;
    let d = Dialect::OpenAiChat;
    let strict = app_for(&mock, Mode::Strict);
    // A client cannot talk its way past a strict upstream: the lower mode asked for is
    // not applied, and the answer says which mode was.
    for asked in ["off", "observe", "repair"] {
        let r = send(
            &strict,
            request(d, &bodies::unanswered(d), &[("x-mend-mode", asked)]),
        )
        .await;
        assert_eq!(r.status, 400, "{asked}");
        assert_eq!(r.header("x-mend-mode"), Some("strict"), "{asked}");
    }
    assert!(mock.received().is_empty());
    // On a repair upstream, observe is lower (forwarded repaired all the same) and
    // strict is higher (applied).
    let repair = app_for(&mock, Mode::Repair);
    let r = send(
        &repair,
        request(d, &bodies::unanswered(d), &[("x-mend-mode", "observe")]),
    )
    .await;
    assert_eq!(
        (r.status.as_u16(), r.header("x-mend-mode")),
        (200, Some("repair"))
    );
    assert!(r
        .header("x-mend-repairs")
        .is_some_and(|h| h.starts_with("1;")));
    let r = send(
        &repair,
        request(d, &bodies::unanswered(d), &[("x-mend-mode", "strict")]),
    )
    .await;
    assert_eq!(
        (r.status.as_u16(), r.header("x-mend-mode")),
        (400, Some("strict"))
    );
    // The operator may allow lowering.
    let mut config = config_for(&mock, Mode::Strict);
    config.mode_header_lowers = true;
    let lowers = app(Gateway::new(config).unwrap());
    let before = mock.received().len();
    let r = send(
        &lowers,
        request(d, &bodies::unanswered(d), &[("x-mend-mode", "off")]),
    )
    .await;
    assert_eq!(r.header("x-mend-mode"), Some("off"));
    // Forwarded unchanged: the mock (a strict provider) answers with its own 400.
    assert_eq!(r.status, 400);
    assert_eq!(mock.received().len(), before + 1);
    assert!(r.header("x-mend-violations").is_none());
}

#[tokio::test]
async fn modes_can_differ_per_upstream() {
    let mock = Mock::start().await;
    let mut config = config_for(&mock, Mode::Observe);
    config.upstream_mut(Dialect::Gemini).mode = Mode::Strict;
    let app = app(Gateway::new(config).unwrap());
    let r = send(
        &app,
        request(Dialect::Gemini, &bodies::unanswered(Dialect::Gemini), &[]),
    )
    .await;
    assert_eq!(r.header("x-mend-mode"), Some("strict"));
    assert!(mock.received().is_empty());
    let d = Dialect::OpenAiChat;
    let r = send(&app, request(d, &bodies::unanswered(d), &[])).await;
    assert_eq!(r.header("x-mend-mode"), Some("observe"));
}

#[tokio::test]
async fn a_provider_profile_adds_its_rules() {
    let mock = Mock::start().await;
    let mut config = config_for(&mock, Mode::Strict);
    config.upstream_mut(Dialect::OpenAiChat).provider = Some("mistral".into());
    let app = app(Gateway::new(config).unwrap());
    // `call_1` is fine for OpenAI but not Mistral's nine alphanumerics.
    let r = send(
        &app,
        request(
            Dialect::OpenAiChat,
            &bodies::valid(Dialect::OpenAiChat),
            &[],
        ),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["mend"]["violations"][0]["rule"], "invalid-call-id");
}

/// A SigV4 signature covers the body: a repaired body would fail it upstream, and mend
/// cannot sign again. Repair is held back, said in a header and counted; the same
/// history under a Bedrock API key (a bearer token) is repaired.
#[tokio::test]
async fn a_sigv4_signed_body_is_forwarded_unchanged_in_repair_mode() {
    let mock = Mock::start().await;
    let gateway = Gateway::new(config_for(&mock, Mode::Repair)).unwrap();
    let metrics = gateway.metrics().clone();
    let app = app(gateway);
    let d = Dialect::BedrockConverse;
    let body = bodies::unanswered(d).to_string();
    let signed = axum::http::Request::post(crate::support::endpoint(d))
        .header("content-type", "application/json")
        .header(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20250101/us-east-1/bedrock/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, Signature=0123abcd",
        )
        .header("x-amz-date", "20250101T000000Z")
        .header("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
        .body(axum::body::Body::from(body.clone()))
        .unwrap();
    let r = send(&app, signed).await;
    // The mock answers the unrepaired history as Bedrock would: 400, its own text.
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.text().contains(bodies::unanswered_provider_text(d)),
        "{}",
        r.text()
    );
    assert_eq!(mock.last().body, body.as_bytes(), "sent as signed");
    assert_eq!(r.header("x-mend-repairs"), Some("0"));
    assert_eq!(r.header("x-mend-repair-skipped"), Some("sigv4-signed body"));
    let h: Value = serde_json::from_str(r.header("x-mend-violations").unwrap()).unwrap();
    assert_eq!(h[0]["rule"], "tool-call-without-result");
    let text = metrics.render();
    assert!(
        text.contains(r#"mend_repairs_skipped_total{dialect="bedrock_converse",reason="sigv4"} 1"#),
        "{text}"
    );
    assert!(
        !text.contains("mend_repairs_total{"),
        "no edit was made: {text}"
    );

    // A Bedrock API key signs nothing: the history is repaired.
    let r = send(&app, request(d, &bodies::unanswered(d), &[])).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.header("x-mend-repairs"),
        Some("1; tool-call-without-result=1")
    );
    assert_eq!(r.header("x-mend-repair-skipped"), None);
    assert_ne!(mock.last().body, body.as_bytes());
}

/// The model id comes from the path, URL-encoded or not, and reaches the check: Claude
/// Sonnet 5 refuses a history that ends with the assistant (a prefill), and the route
/// says so in strict mode; the same body for Nova is forwarded.
#[tokio::test]
async fn the_converse_model_is_read_from_the_path() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Strict);
    let d = Dialect::BedrockConverse;
    let prefill = serde_json::json!({"messages": [
        {"role": "user", "content": [{"text": "Name a colour."}]},
        {"role": "assistant", "content": [{"text": "The colour is"}]}]});
    let run = |model: &str| {
        crate::support::request_to(
            d,
            &format!("/model/{model}/converse"),
            prefill.to_string(),
            &[],
        )
    };
    let nova = send(&app, run("us.amazon.nova-micro-v1%3A0")).await;
    assert_eq!(nova.status, 200, "{}", nova.text());
    let claude = send(&app, run("us.anthropic.claude-sonnet-5")).await;
    assert_eq!(claude.status, 400, "{}", claude.text());
    assert_eq!(
        claude.header("x-amzn-errortype"),
        Some("ValidationException")
    );
    // Another model operation is not served, and not forwarded.
    let before = mock.received().len();
    let r = send(
        &app,
        crate::support::request_to(d, "/model/x/invoke", "{}", &[]),
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(mock.received().len(), before);
}
