//! Which request goes where: paths, queries, hosts, pass-through routes, unknown paths.

use axum::body::Body;
use axum::http::Request;
use mend::Dialect;
use mend_gateway::{app, Gateway, Mode};

use crate::support::{app_for, bodies, config_for, creds, request, request_to, send, Mock};

#[tokio::test]
async fn each_dialect_reaches_its_path_with_its_query_and_credentials() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Observe);
    let cases = [
        (Dialect::OpenAiChat, "/v1/chat/completions"),
        (Dialect::OpenAiResponses, "/v1/responses"),
        (Dialect::Anthropic, "/v1/messages?beta=true"),
        (
            Dialect::Gemini,
            "/v1beta/models/gemini-3-pro-preview:generateContent",
        ),
        (
            Dialect::Gemini,
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        ),
    ];
    for (d, path) in cases {
        let r = send(&app, request_to(d, path, bodies::valid(d).to_string(), &[])).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        let got = mock.last();
        let (p, q) = path
            .split_once('?')
            .map_or((path, None), |(p, q)| (p, Some(q)));
        assert_eq!(got.path, p);
        assert_eq!(got.query.as_deref(), q);
        for (k, v) in creds(d) {
            assert_eq!(got.header(k), Some(v), "{path}: {k} must pass untouched");
        }
    }
}

#[tokio::test]
async fn the_host_is_never_the_requests() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Observe);
    let d = Dialect::OpenAiChat;
    let req = Request::post("http://evil.example:9999/v1/chat/completions")
        .header("host", "evil.example:9999")
        .header("x-forwarded-host", "evil.example")
        .header("authorization", "Bearer sk-x")
        .header("content-type", "application/json")
        .body(Body::from(bodies::valid(d).to_string()))
        .unwrap();
    let r = send(&app, req).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        mock.last().header("host"),
        Some(mock.addr.to_string().as_str())
    );
}

#[tokio::test]
async fn a_base_url_with_a_path_is_joined_without_doubling_v1() {
    let mock = Mock::start().await;
    let mut config = config_for(&mock, Mode::Observe);
    config.upstream_mut(Dialect::OpenAiChat).base_url = format!("{}/v1", mock.base_url());
    config.upstream_mut(Dialect::Anthropic).base_url = format!("{}/anthropic", mock.base_url());
    let app = app(Gateway::new(config).unwrap());
    let d = Dialect::OpenAiChat;
    let r = send(&app, request(d, &bodies::valid(d), &[])).await;
    assert_eq!(r.status, 200);
    assert_eq!(mock.last().path, "/v1/chat/completions");
    let d = Dialect::Anthropic;
    send(&app, request(d, &bodies::valid(d), &[])).await;
    assert_eq!(mock.last().path, "/anthropic/v1/messages");
}

#[tokio::test]
async fn models_pass_through_to_openai_or_anthropic() {
    let openai = Mock::start().await;
    let anthropic = Mock::start().await;
    let mut config = config_for(&openai, Mode::Strict);
    config.upstream_mut(Dialect::Anthropic).base_url = anthropic.base_url();
    let app = app(Gateway::new(config).unwrap());
    let r = send(
        &app,
        Request::get("/v1/models?limit=5")
            .header("authorization", "Bearer sk-x")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["object"], "list");
    assert_eq!(openai.last().query.as_deref(), Some("limit=5"));
    let r = send(
        &app,
        Request::get("/v1/models")
            .header("x-api-key", "sk-ant-x")
            .header("anthropic-version", "2023-06-01")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(anthropic.received().len(), 1);
    assert_eq!(openai.received().len(), 1);
}

#[tokio::test]
async fn other_gemini_actions_pass_through_unjudged() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Strict);
    let d = Dialect::Gemini;
    // A broken history in countTokens is not the gateway's business.
    let body = bodies::unanswered(d);
    send(
        &app,
        request_to(
            d,
            "/v1beta/models/gemini-2.5-flash:countTokens",
            body.to_string(),
            &[],
        ),
    )
    .await;
    assert_eq!(
        mock.last().path,
        "/v1beta/models/gemini-2.5-flash:countTokens"
    );
}

#[tokio::test]
async fn unknown_paths_get_a_404_that_lists_the_routes() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Observe);
    let r = send(
        &app,
        Request::post("/v2/whatever").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(r.status, 404);
    let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("no route for POST /v2/whatever"), "{msg}");
    assert!(msg.contains("/v1/chat/completions"));
    assert!(mock.received().is_empty());
}

#[tokio::test]
async fn healthz_answers() {
    let mock = Mock::start().await;
    let app = app_for(&mock, Mode::Observe);
    let r = send(&app, Request::get("/healthz").body(Body::empty()).unwrap()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["status"], "ok");
}

#[tokio::test]
async fn a_bad_configuration_is_refused_with_its_setting() {
    let mut config = mend_gateway::Config::default();
    config.upstream_mut(Dialect::Anthropic).base_url = "api.anthropic.com".into();
    let e = Gateway::new(config).unwrap_err().to_string();
    assert!(e.contains("upstream.anthropic.base_url"), "{e}");
}
