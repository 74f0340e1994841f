//! Test support: the mock upstream, sample bodies, and helpers to drive the app.

pub mod bodies;
pub mod mock;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use mend::Dialect;
use mend_gateway::{app, Config, Gateway, Mode};
use serde_json::Value;
use tower::ServiceExt;

pub use mock::{Mock, Scripted};

// The one helper that finds the shared fixtures, for every test crate that reads them.
#[path = "../../../../mend/tests/it/shared_fixtures.rs"]
mod shared_fixtures;
pub use shared_fixtures::shared_dir;

/// A configuration with every upstream at the mock, in one mode.
pub fn config_for(mock: &Mock, mode: Mode) -> Config {
    let mut c = Config::default();
    for d in Dialect::ALL {
        c.upstream_mut(d).base_url = mock.base_url();
    }
    c.set_mode_everywhere(mode);
    c
}

/// The app in front of the mock.
pub fn app_for(mock: &Mock, mode: Mode) -> Router {
    app(Gateway::new(config_for(mock, mode)).expect("a valid gateway"))
}

/// A response read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Send one request through the app without a port.
pub async fn send(app: &Router, req: Request<Body>) -> Reply {
    let resp = app.clone().oneshot(req).await.expect("the router answers");
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = resp
        .into_body()
        .collect()
        .await
        .expect("a whole body")
        .to_bytes();
    Reply {
        status,
        headers,
        body,
    }
}

/// The endpoint of a dialect (Gemini's non-streaming one).
pub fn endpoint(d: Dialect) -> &'static str {
    match d {
        // The model id URL-encoded, as the AWS SDKs send it.
        Dialect::BedrockConverse => {
            "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
        }
        Dialect::OpenAiChat => "/v1/chat/completions",
        Dialect::OpenAiResponses => "/v1/responses",
        Dialect::Anthropic => "/v1/messages",
        Dialect::Gemini => "/v1beta/models/gemini-3-pro-preview:generateContent",
    }
}

/// The credentials headers a provider wants, with recognisable fake secrets.
pub fn creds(d: Dialect) -> Vec<(&'static str, &'static str)> {
    match d {
        // A Bedrock API key (SigV4 requests are tested on their own).
        Dialect::BedrockConverse => vec![("authorization", "Bearer ABSK-SECRET-bedrock-0006")],
        Dialect::OpenAiChat | Dialect::OpenAiResponses => {
            vec![("authorization", "Bearer sk-test-SECRET-openai-0001")]
        }
        Dialect::Anthropic => vec![
            ("x-api-key", "sk-ant-SECRET-anthropic-0002"),
            ("anthropic-version", "2023-06-01"),
        ],
        Dialect::Gemini => vec![("x-goog-api-key", "AIza-SECRET-gemini-0003")],
    }
}

/// A POST of `body` to the dialect's endpoint, with credentials and extra headers.
pub fn request(d: Dialect, body: &Value, extra: &[(&str, &str)]) -> Request<Body> {
    request_to(d, endpoint(d), body.to_string(), extra)
}

/// A POST of raw bytes to a path.
pub fn request_to(
    d: Dialect,
    path: &str,
    body: impl Into<Body>,
    extra: &[(&str, &str)],
) -> Request<Body> {
    let mut b = Request::post(path).header("content-type", "application/json");
    for (k, v) in creds(d) {
        b = b.header(k, v);
    }
    for (k, v) in extra {
        b = b.header(*k, *v);
    }
    b.body(body.into()).expect("a request")
}

/// Run `test` on a fresh PostgreSQL schema `{name}_{pid}` of the server in
/// `MEND_TEST_POSTGRES` (default: the local one), handing it the store URL, and drop the
/// schema afterwards whether it passed or panicked. `None` when the server is unreachable:
/// the test says so and skips, except under `CI=true`, where it fails.
pub async fn on_postgres<T, F, Fut>(name: &str, test: F) -> Option<T>
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let base = std::env::var("MEND_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    let schema = format!("{name}_{}", std::process::id());
    let sep = if base.contains('?') { '&' } else { '?' };
    let db = format!("{base}{sep}schema={schema}");
    if let Err(e) = mend_store::AnyStore::open(&db).await {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("PostgreSQL at {base} is unreachable ({e}), and CI=true requires it");
        }
        eprintln!("SKIP: PostgreSQL at {base} is unreachable ({e}); {name} does not run on it");
        return None;
    }
    let outcome = tokio::spawn(test(db)).await;
    mend_store::testing::drop_postgres_schema(&base, &schema)
        .await
        .expect("the test schema is dropped");
    match outcome {
        Ok(v) => Some(v),
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}
