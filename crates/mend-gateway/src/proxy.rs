//! One request through the gateway, as a short pipeline of stages, each in its own file
//! under `proxy/`:
//!
//! 1. [`read`]: the mode, the conversation id and the body (capped);
//! 2. [`verdict`]: judge the body under the mode (check, and repair in `repair` mode);
//! 3. [`tapping`]: copy the request, as received and as it will be forwarded, to the tap;
//! 4. [`act`]: reject without calling upstream, or forward (the repaired copy when
//!    there is one) to the configured upstream;
//!
//!    4b. [`heal`] (`heal` mode): when the upstream refused the body with a history
//!    error mend recognizes, repair it and send it once more;
//! 5. [`capture`]: decide whether the exchange is kept for its conversation (it is
//!    committed once the answer is complete), and [`scope`]: claim that conversation for the caller's scope before anything is
//!    forwarded (another scope's: refused, nothing forwarded or written);
//! 6. [`respond`]: stream the answer back while a copy is kept, and once it ends tap it;
//!    an exchange kept for its conversation is committed before the answer's end goes
//!    out ([`durable`]).
//!
//! [`observe`] runs alongside: it starts with the exchange (its span, when traces are
//! on), hears from the stages (mode, verdict, heal, each upstream call) and, when the
//! exchange ends, records its latency, logs its one `exchange` line and ends its spans.
//!
//! A stage that ends the exchange early (a bad header, a body too large, a rejection,
//! the upstream unreachable) returns the gateway's own answer as its `Err`.
//!
//! Invariants: the upstream URL is the configured base plus the request's path and
//! query, never a host from the request; credential headers pass through untouched and
//! appear in no log line and no error message (reqwest errors are stripped of their URL,
//! which can carry Gemini's `key=`).

mod act;
mod capture;
mod durable;
mod heal;
mod observe;
mod read;
mod respond;
mod scope;
mod tapping;
mod verdict;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use mend::Dialect;

use crate::config::{Mode, Upstream};
use crate::errors::{self, Kind};
use crate::{Inner, MODE_HEADER, REQUEST_ID_HEADER};

/// Where a request goes and whether its body is judged.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Route {
    /// The upstream to forward to.
    pub upstream: Dialect,
    /// Judge the body as this dialect (`None`: pass through untouched).
    pub judged: bool,
}

/// Headers that belong to one hop and never cross the gateway.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// One request through the stages.
pub(crate) async fn forward(inner: Arc<Inner>, route: Route, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let ctx = Ctx::new(inner, route, parts);
    match run_stages(&ctx, body).await {
        Ok(resp) => resp,
        Err(early) => {
            observe::answered_early(&ctx, early.status());
            *early
        }
    }
}

/// An answer that ends the exchange before the upstream's is streamed back: written by
/// the gateway, or a rejection. Boxed, since most exchanges get past every stage.
type Early = Box<Response>;

/// The stages in order.
async fn run_stages(ctx: &Ctx, body: Body) -> Result<Response, Early> {
    let mode = read::mode(ctx)?;
    ctx.obs.mode(mode);
    let conversation = read::conversation(ctx, mode)?;
    let received = read::body(ctx, mode, body).await?;
    if verdict::alongside(ctx, mode) {
        return observe_alongside(ctx, mode, conversation, received).await;
    }
    let mut verdict = verdict::judge_body(ctx, mode, &received);
    ctx.obs.judged(&ctx.path, &ctx.headers, &verdict, &received);
    tapping::request(ctx, mode, &received, &verdict);
    if verdict.reject {
        return Err(Box::new(act::reject(ctx, mode, &verdict)));
    }
    let conversation = capture::wanted(ctx, conversation, &mut verdict.parsed, received.len());
    let conversation = scope::claim(ctx, mode, conversation).await?;
    let sent = verdict
        .replacement
        .clone()
        .unwrap_or_else(|| received.clone());
    let answer = act::send_upstream(ctx, mode, sent, received.len()).await?;
    act::forwarded(ctx, mode, &verdict, &answer);
    let (answer, healed) = heal::after(ctx, mode, &received, answer.response).await?;
    ctx.obs.healed(healed.as_ref());
    Ok(respond::stream_back(ctx, mode, verdict, healed, received, conversation, answer).await)
}

/// `observe` (untraced): nothing before sending depends on the verdict (the body goes
/// as received, nothing is rejected, the tap's request record and the scope's claim
/// name no finding), so the body is handed to the upstream connection first and checked
/// while it goes out: the check waits one turn of the scheduler (`yield_now`), in which
/// the connection's task starts writing the body, then runs on this task as on the
/// sequential path (no thread hand-off), while the upstream reads. The verdict is in
/// before the answer's head goes back: counted, logged, tapped and stamped
/// (`x-mend-violations`) as on the sequential path. A traced exchange stays sequential:
/// its upstream span is named after the model, which is read with the check.
async fn observe_alongside(
    ctx: &Ctx,
    mode: Mode,
    conversation: Option<String>,
    received: Bytes,
) -> Result<Response, Early> {
    tapping::request_as_received(ctx, mode, &received);
    let conversation = capture::wanted(ctx, conversation, &mut None, received.len());
    let conversation = match scope::claim(ctx, mode, conversation).await {
        Ok(c) => c,
        Err(early) => {
            // Refused before sending: the body is judged all the same, as it would
            // have been before the claim.
            let verdict = verdict::judge_body(ctx, mode, &received);
            ctx.obs.judged(&ctx.path, &ctx.headers, &verdict, &received);
            return Err(early);
        }
    };
    let judged = async {
        tokio::task::yield_now().await;
        let verdict = verdict::judge_body(ctx, mode, &received);
        ctx.obs.judged(&ctx.path, &ctx.headers, &verdict, &received);
        verdict
    };
    let (answer, verdict) = tokio::join!(
        act::send_upstream(ctx, mode, received.clone(), received.len()),
        judged
    );
    let answer = answer?;
    act::forwarded(ctx, mode, &verdict, &answer);
    Ok(respond::stream_back(
        ctx,
        mode,
        verdict,
        None,
        received,
        conversation,
        answer.response,
    )
    .await)
}

/// What every stage knows about the request, fixed when it arrives.
pub(super) struct Ctx {
    inner: Arc<Inner>,
    /// The request id, in the response header and every log line.
    id: String,
    route: Route,
    started: Instant,
    method: Method,
    path: String,
    query: Option<String>,
    headers: HeaderMap,
    /// The caller's scope, once the scope stage has claimed a conversation for it.
    scope: std::sync::OnceLock<String>,
    /// What is seen of the exchange, for its latency, log line and spans.
    obs: observe::Observed,
}

impl Ctx {
    fn new(inner: Arc<Inner>, route: Route, parts: axum::http::request::Parts) -> Ctx {
        let started = Instant::now();
        let id = inner.next_request_id();
        let obs = observe::Observed::start(
            &inner,
            route,
            &id,
            &parts.method,
            parts.uri.path(),
            &parts.headers,
            started,
        );
        Ctx {
            inner,
            id,
            route,
            started,
            path: parts.uri.path().to_string(),
            query: parts.uri.query().map(str::to_string),
            method: parts.method,
            headers: parts.headers,
            scope: std::sync::OnceLock::new(),
            obs,
        }
    }

    fn dialect(&self) -> Dialect {
        self.route.upstream
    }

    /// The dialect's name, the `dialect` label of metrics and logs.
    fn dname(&self) -> &'static str {
        self.route.upstream.name()
    }

    /// The configured upstream for this route.
    fn upstream(&self) -> &Upstream {
        self.inner.config.upstream(self.route.upstream)
    }

    /// An answer the gateway writes itself for this request.
    fn local(&self, kind: Kind, message: &str) -> Early {
        Box::new(finish_local(
            &self.inner,
            &self.id,
            Some(self.dialect()),
            kind,
            message,
        ))
    }
}

/// An answer the gateway writes itself (a bad header, a body too large, the upstream
/// unreachable), tapped like any other.
fn finish_local(
    inner: &Inner,
    id: &str,
    dialect: Option<Dialect>,
    kind: Kind,
    message: &str,
) -> Response {
    let mut resp = errors::provider_error(dialect, kind, message);
    if let Ok(v) = HeaderValue::from_str(id) {
        resp.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
    tapping::local_response(inner, id, &resp, Bytes::from(message.to_string()), 0);
    resp
}

/// The request id and the applied mode, on every response that went through a mode.
fn stamp(resp: &mut Response, id: &str, mode: Mode) {
    if let Ok(v) = HeaderValue::from_str(id) {
        resp.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
    resp.headers_mut()
        .insert(MODE_HEADER, HeaderValue::from_static(mode.name()));
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn is_hop_by_hop(name: &HeaderName) -> bool {
    HOP_BY_HOP.contains(&name.as_str())
}

fn header_str<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

/// The rules of some findings, for a log line.
fn rule_list(v: &[mend::Violation]) -> String {
    let mut rules: Vec<&str> = v.iter().map(|x| x.rule.id()).collect();
    rules.dedup();
    rules.join(",")
}

/// 404 for paths the gateway does not serve.
pub(crate) fn not_found(method: &Method, path: &str) -> Response {
    let msg = format!(
        "mend: no route for {method} {path}; the gateway serves POST /v1/chat/completions, \
         POST /v1/responses, POST /v1/messages, POST /v1beta/models/{{model}}:generateContent \
         and :streamGenerateContent, POST /model/{{modelId}}/converse and /converse-stream, \
         GET /v1/models, /healthz and /metrics"
    );
    errors::provider_error(None, Kind::NotFound, &msg)
}

/// `/healthz`.
pub(crate) fn healthz() -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        "{\"status\":\"ok\"}",
    )
        .into_response()
}
