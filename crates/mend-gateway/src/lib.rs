//! mend's HTTP gateway: checks, repairs or rejects conversation histories in front of
//! every provider.
//!
//! An axum app that serves the providers' own endpoints (`/v1/chat/completions`,
//! `/v1/responses`, `/v1/messages`, Gemini's `:generateContent` and
//! `:streamGenerateContent`, Bedrock's `/model/{modelId}/converse` and
//! `/converse-stream`), judges each request's history with `mend` under a mode
//! (`off`, `observe`, `heal`, `repair`, `strict`; see [`Mode`]), and forwards it to the upstream
//! configured for its dialect. Answers stream back as they arrive. It also passes
//! `GET /v1/models` through and serves `/healthz` and Prometheus `/metrics`.
//!
//! It is not an SDK, a router between models, or a cache: it forwards each request to
//! exactly one configured upstream, and a client keeps talking the provider's API.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use mend_gateway::{app, Config, Gateway, Mode};
//!
//! let mut config = Config::default();
//! config.set_mode_everywhere(Mode::Repair);
//! let gateway = Gateway::new(config)?;
//! let listener = tokio::net::TcpListener::bind(gateway.config().listen).await?;
//! axum::serve(listener, app(gateway)).await?;
//! # Ok(()) }
//! ```
//!
//! Module map: [`config`] (layers: defaults, TOML, environment, flags), `judge` (the
//! verdict on one body, no I/O), `head` (the request's top-level `model` and `stream`,
//! skimmed off its bytes), `proxy` (one request end to end), `stream` (the
//! pass-through body that keeps a copy), [`errors`] (answers in each provider's error
//! shape), [`tap`] (the redacted JSONL debug tap), [`metrics`], [`exchange`]
//! (conversation capture: what an exchange adds, read with `mend::canonical`),
//! [`scope`] (whose a conversation is: a credential's hash, a tenant), [`store`] (the `mend-store` sink behind `x-mend-conversation`), [`ui`] (the
//! conversation inspector at `/ui`, merged in by `mend serve --ui`), [`admin`] (the
//! admin token `/ui` and `/metrics` ask for when one is configured) and [`telemetry`]
//! (OpenTelemetry traces over OTLP/HTTP, from the standard `OTEL_*` variables; the
//! spans themselves are made by the proxy's observe stage).
//!
//! Invariants: the upstream host comes from configuration only; credentials
//! (`Authorization`, `x-api-key`, `x-goog-api-key`, `api-key`, Gemini's `key=`, AWS's
//! `x-amz-security-token` and presigned `X-Amz-*` query parameters) are forwarded
//! untouched and never logged or tapped; a response body (an SSE or AWS event stream
//! too) is never buffered before the client gets it (but for heal mode's read of an
//! error answer, at most 64 KB, and, with a store, a JSON answer whose exchange is
//! kept, read whole so that it is committed before the client gets it; a kept stream
//! holds only its completing chunk until the commit); a body signed with SigV4 is never
//! forwarded changed (mend cannot sign it again: its repair is held back, and heal mode
//! does not retry it); heal mode retries at most once, and only an error it recognized
//! as a history error; an exchange naming a conversation of another scope than its
//! caller's is refused (403) before anything is forwarded or written.

pub mod admin;
pub mod config;
pub mod errors;
pub mod exchange;
mod head;
mod judge;
pub mod metrics;
mod proxy;
pub mod scope;
pub mod store;
mod stream;
pub mod tap;
pub mod telemetry;
pub mod ui;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use mend::Dialect;

pub use config::{Config, ConfigError, Mode, Upstream};
pub use exchange::{Claim, Conversations, Exchange, Kept, MemoryConversations};
pub use metrics::Metrics;
pub use tap::Tap;
pub use telemetry::Telemetry;

use proxy::Route;

/// The request header that picks the mode for one request.
pub const MODE_HEADER: &str = "x-mend-mode";
/// The request header that names the conversation an exchange is appended to.
pub const CONVERSATION_HEADER: &str = "x-mend-conversation";
/// The response header with the gateway's id for the request (also in logs and tap).
pub const REQUEST_ID_HEADER: &str = "x-mend-request-id";

/// Why a gateway cannot start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration is unusable.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The tap folder cannot be written.
    #[error("cannot open the tap in {dir}: {source}")]
    Tap {
        /// The folder.
        dir: String,
        /// Why.
        source: std::io::Error,
    },
    /// The conversation store cannot be opened.
    #[error("cannot open the conversation store: {0}")]
    Store(String),
    /// The HTTP client cannot be built (no TLS backend).
    #[error("cannot build the upstream client: {0}")]
    Client(String),
}

/// A gateway, ready to serve: configuration, the upstream client, metrics, the tap.
/// Cheap to clone.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) config: Config,
    pub(crate) client: reqwest::Client,
    pub(crate) metrics: Metrics,
    pub(crate) tap: Option<Tap>,
    pub(crate) conversations: Option<Arc<dyn Conversations>>,
    /// Appends to one conversation, one at a time.
    pub(crate) conversation_turns: Arc<exchange::Turns>,
    /// Where spans go, when traces are on ([`Gateway::with_telemetry`]).
    pub(crate) telemetry: std::sync::OnceLock<Telemetry>,
    /// Each dialect's base URL, parsed once (in `Dialect::ALL` order).
    bases: Vec<(Dialect, reqwest::Url)>,
    id_prefix: String,
    next_id: AtomicU64,
}

impl Inner {
    /// A dialect's upstream base URL.
    pub(crate) fn base_url(&self, dialect: Dialect) -> &reqwest::Url {
        // `bases` holds every dialect (built from `Dialect::ALL` in `Gateway::new`).
        match self.bases.iter().find(|(d, _)| *d == dialect) {
            Some((_, u)) => u,
            None => &self.bases[0].1,
        }
    }

    /// `<start time><random>-<n>` in base 36: ordered within a run, unique across runs
    /// and replicas.
    pub(crate) fn next_request_id(&self) -> String {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        format!("{}-{n}", self.id_prefix)
    }
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("config", &self.inner.config)
            .field("tap", &self.inner.tap.as_ref().map(Tap::path))
            .field("conversations", &self.inner.conversations.is_some())
            .finish()
    }
}

impl Gateway {
    /// Check the configuration, build the upstream client, open the tap.
    pub fn new(config: Config) -> Result<Gateway, Error> {
        Gateway::with_conversations(config, None)
    }

    /// As [`Gateway::new`], and open the conversation store the configuration names
    /// (`db`), if any, for requests that carry `x-mend-conversation`.
    pub async fn open(config: Config) -> Result<Gateway, Error> {
        let sink: Option<Arc<dyn Conversations>> = match &config.db {
            Some(url) => {
                let store = mend_store::AnyStore::open(url)
                    .await
                    .map_err(|e| Error::Store(e.to_string()))?;
                Some(Arc::new(store::StoreConversations::new(Arc::new(store))))
            }
            None => None,
        };
        Gateway::with_conversations(config, sink)
    }

    /// Whether requests with `x-mend-conversation` are kept.
    pub fn keeps_conversations(&self) -> bool {
        self.inner.conversations.is_some()
    }

    /// As [`Gateway::new`], with a sink for requests that carry `x-mend-conversation`.
    pub fn with_conversations(
        config: Config,
        conversations: Option<Arc<dyn Conversations>>,
    ) -> Result<Gateway, Error> {
        config.validate()?;
        let mut bases = Vec::with_capacity(Dialect::ALL.len());
        for d in Dialect::ALL {
            let up = config.upstream(d);
            let url = up
                .base_url
                .parse::<reqwest::Url>()
                .map_err(|e| ConfigError {
                    origin: "configuration".into(),
                    setting: format!("upstream.{}.base_url", d.name()),
                    reason: format!("'{}' is not a URL: {e}", up.display_url()),
                })?;
            bases.push((d, url));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.read_timeout)
            .tcp_nodelay(true)
            .pool_idle_timeout(std::time::Duration::from_secs(90))
            .build()
            .map_err(|e| Error::Client(e.to_string()))?;
        let metrics = Metrics::new();
        let tap = match &config.tap {
            Some(dir) => Some(
                Tap::open(dir, metrics.clone()).map_err(|source| Error::Tap {
                    dir: dir.display().to_string(),
                    source,
                })?,
            ),
            None => None,
        };
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        // Replicas sharing a store key appends by request id: two started in the same
        // millisecond must still not share ids, so a random part follows the time.
        let salt = {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(started);
            h.write_u32(std::process::id());
            h.finish()
        };
        Ok(Gateway {
            inner: Arc::new(Inner {
                config,
                client,
                metrics,
                tap,
                conversations,
                conversation_turns: Arc::default(),
                telemetry: std::sync::OnceLock::new(),
                bases,
                id_prefix: format!("{}{}", base36(started), base36(u128::from(salt))),
                next_id: AtomicU64::new(1),
            }),
        })
    }

    /// The configuration it serves.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Its metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// Trace every exchange to `telemetry` (see [`telemetry`] and `proxy/observe.rs`
    /// for the spans). A gateway takes one: a second is refused, and given back.
    pub fn with_telemetry(self, telemetry: Telemetry) -> Result<Gateway, Telemetry> {
        self.inner.telemetry.set(telemetry)?;
        Ok(self)
    }

    /// Where its spans go, when traces are on.
    pub fn telemetry(&self) -> Option<&Telemetry> {
        self.inner.telemetry.get()
    }

    /// The tap file, when tapping.
    pub fn tap_path(&self) -> Option<&std::path::Path> {
        self.inner.tap.as_ref().map(Tap::path)
    }
}

/// The router: every endpoint of the gateway, over one [`Gateway`].
pub fn app(gateway: Gateway) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(openai_chat))
        .route("/v1/responses", post(openai_responses))
        .route("/v1/messages", post(anthropic_messages))
        .route(
            "/v1beta/models/{model_action}",
            post(gemini_action).get(gemini_models),
        )
        .route("/v1/models/{model_action}", post(gemini_action).get(models))
        .route("/v1beta/models", get(gemini_models))
        .route("/model/{model_id}/{operation}", post(bedrock_converse))
        .route("/v1/models", get(models))
        .route("/healthz", get(|| async { proxy::healthz() }))
        .route("/metrics", get(metrics_text))
        .fallback(fallback)
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
        .with_state(gateway.inner)
}

type AppState = State<Arc<Inner>>;

async fn openai_chat(State(inner): AppState, req: Request) -> Response {
    proxy::forward(inner, judged(Dialect::OpenAiChat), req).await
}

async fn openai_responses(State(inner): AppState, req: Request) -> Response {
    proxy::forward(inner, judged(Dialect::OpenAiResponses), req).await
}

async fn anthropic_messages(State(inner): AppState, req: Request) -> Response {
    proxy::forward(inner, judged(Dialect::Anthropic), req).await
}

/// `models/{model}:{action}`: the two content-generating actions are judged; other
/// actions (`countTokens`, `embedContent`, ...) pass through to the Gemini upstream.
async fn gemini_action(State(inner): AppState, req: Request) -> Response {
    let path = req.uri().path();
    let action = path.rsplit_once(':').map(|(_, a)| a).unwrap_or("");
    let route = match action {
        "generateContent" | "streamGenerateContent" => judged(Dialect::Gemini),
        "" => return proxy::not_found(req.method(), path),
        _ => passed(Dialect::Gemini),
    };
    proxy::forward(inner, route, req).await
}

/// `/model/{modelId}/converse` and `/converse-stream` (the model id URL-encoded, `%3A`
/// for `:`; the check reads it from the path). Bedrock's other model operations are
/// not served.
async fn bedrock_converse(State(inner): AppState, req: Request) -> Response {
    let path = req.uri().path();
    if Dialect::from_endpoint(path) != Some(Dialect::BedrockConverse) {
        return proxy::not_found(req.method(), path);
    }
    proxy::forward(inner, judged(Dialect::BedrockConverse), req).await
}

async fn gemini_models(State(inner): AppState, req: Request) -> Response {
    proxy::forward(inner, passed(Dialect::Gemini), req).await
}

/// `GET /v1/models`: Anthropic's when the request speaks Anthropic (its key header or
/// version header), OpenAI's otherwise.
async fn models(State(inner): AppState, req: Request) -> Response {
    let upstream = if speaks_anthropic(req.headers()) {
        Dialect::Anthropic
    } else {
        Dialect::OpenAiChat
    };
    proxy::forward(inner, passed(upstream), req).await
}

async fn metrics_text(State(inner): AppState, headers: HeaderMap) -> Response {
    if let Some(token) = &inner.config.admin_token {
        if !token.admits(&headers) {
            return admin::refused("/metrics");
        }
    }
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        inner.metrics.render(),
    )
        .into_response()
}

async fn fallback(method: Method, uri: Uri) -> Response {
    proxy::not_found(&method, uri.path())
}

fn speaks_anthropic(h: &HeaderMap) -> bool {
    h.contains_key("x-api-key") || h.contains_key("anthropic-version")
}

fn judged(dialect: Dialect) -> Route {
    Route {
        upstream: dialect,
        judged: true,
    }
}

fn passed(dialect: Dialect) -> Route {
    Route {
        upstream: dialect,
        judged: false,
    }
}

fn base36(mut n: u128) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

/// Serve on a bound listener until `shutdown` resolves; in-flight requests finish.
pub async fn serve(
    gateway: Gateway,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_router(app(gateway), listener, shutdown).await
}

/// As [`serve`], for a router the caller put together (the gateway with the inspector
/// merged in, or the inspector alone: [`ui::router`]).
pub async fn serve_router(
    router: Router,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}
