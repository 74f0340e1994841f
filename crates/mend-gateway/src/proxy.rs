//! One request through the gateway: read the body (capped), judge it, forward it to the
//! configured upstream, and stream the answer back while a copy is kept for the tap
//! and the conversation capture.
//!
//! Invariants: the upstream URL is the configured base plus the request's path and
//! query, never a host from the request; credential headers pass through untouched and
//! appear in no log line and no error message (reqwest errors are stripped of their URL,
//! which can carry Gemini's `key=`).

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
use crate::exchange::{self, Exchange, Kept};
use crate::judge::{judge, Target, Verdict};
use crate::stream::{End, Seen, Tee};
use crate::tap::Record;
use crate::{Inner, CONVERSATION_HEADER, MODE_HEADER, REQUEST_ID_HEADER};

/// The most of a response body kept for the tap and the capture.
const COPY_CAP: usize = 64 * 1024 * 1024;

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

pub(crate) async fn forward(inner: Arc<Inner>, route: Route, req: Request) -> Response {
    let started = Instant::now();
    let id = inner.next_request_id();
    let dialect = route.upstream;
    let dname = dialect.name();
    let upstream = inner.config.upstream(dialect);
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().map(str::to_string);

    // The mode: the request's header when allowed (and, unless the operator allows
    // lowering, only when it asks for at least the upstream's mode), else the upstream's.
    let mode = if !route.judged {
        Mode::Off
    } else {
        match header_str(&parts.headers, MODE_HEADER) {
            Some(m) if inner.config.mode_header => match m.parse::<Mode>() {
                Ok(m) if m < upstream.mode && !inner.config.mode_header_lowers => {
                    tracing::info!(
                        request_id = %id, dialect = dname, asked = m.name(),
                        applied = upstream.mode.name(),
                        "{MODE_HEADER} asked for a mode below the upstream's; not applied (mode_header_lowers is off)"
                    );
                    upstream.mode
                }
                Ok(m) => m,
                Err(why) => {
                    inner
                        .metrics
                        .request(dname, upstream.mode.name(), "bad_mode");
                    let msg = format!("mend: {MODE_HEADER}: {why}");
                    return finish_local(&inner, &id, Some(dialect), Kind::InvalidRequest, &msg);
                }
            },
            _ => upstream.mode,
        }
    };
    let conversation = match header_str(&parts.headers, CONVERSATION_HEADER) {
        Some(c) if !valid_conversation_id(c) => {
            inner
                .metrics
                .request(dname, mode.name(), "bad_conversation");
            let msg = format!(
                "mend: {CONVERSATION_HEADER} must be 1 to 256 characters without control characters"
            );
            return finish_local(&inner, &id, Some(dialect), Kind::InvalidRequest, &msg);
        }
        Some(c) => Some(c.to_string()),
        None => None,
    };

    // The body, capped.
    let limit = inner.config.body_limit;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let too_large = || {
        inner.metrics.request(dname, mode.name(), "too_large");
        let msg = format!(
            "mend: the request body is larger than the gateway's limit of {limit} bytes \
             (body_limit in mend's configuration, MEND_BODY_LIMIT, or --body-limit)"
        );
        finish_local(&inner, &id, Some(dialect), Kind::TooLarge, &msg)
    };
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large();
    }
    let received = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(e) => {
            if is_length_limit(&e) {
                return too_large();
            }
            inner.metrics.request(dname, mode.name(), "bad_body");
            let msg = format!("mend: could not read the request body: {e}");
            return finish_local(&inner, &id, Some(dialect), Kind::InvalidRequest, &msg);
        }
    };

    // The verdict.
    let model = gemini_model(&path);
    let target = Target {
        dialect,
        provider: upstream.provider.as_deref(),
        model: model.as_deref(),
        endpoint: &path,
    };
    let mut verdict = if route.judged && parts.method == Method::POST {
        judge(mode, &target, &received)
    } else {
        judge(Mode::Off, &target, &received)
    };
    record_findings(&inner, dname, &verdict);
    if let Some(tap) = &inner.tap {
        tap.send(Record::Request {
            id: id.clone(),
            method: parts.method.to_string(),
            path: path.clone(),
            query: query.clone(),
            headers: parts.headers.clone(),
            dialect: route.judged.then_some(dname),
            mode: mode.name(),
            body: received.clone(),
            forwarded: verdict.replacement.clone(),
        });
    }
    if verdict.reject {
        inner.metrics.request(dname, mode.name(), verdict.outcome);
        tracing::info!(
            request_id = %id, dialect = dname, mode = mode.name(), path = %path,
            outcome = verdict.outcome, status = 400u16,
            rules = %rule_list(&verdict.found),
            "rejected without calling upstream"
        );
        let mut resp = errors::strict_rejection(dialect, &verdict.found);
        stamp(&mut resp, &id, mode);
        tap_local_response(&inner, &id, &resp, started);
        return resp;
    }

    // The parsed body is kept only for a conversation capture; otherwise it goes now,
    // and a large one is freed on another thread, off this request's path.
    let wants_capture = conversation.is_some() && inner.conversations.is_some();
    if !wants_capture {
        if let Some(v) = verdict.parsed.take() {
            free_later(v, received.len());
        }
    }

    // Forward.
    let sent = verdict
        .replacement
        .clone()
        .unwrap_or_else(|| received.clone());
    inner
        .metrics
        .request_bytes(dname, received.len(), sent.len());
    let url = upstream_url(inner.base_url(dialect), &path, query.as_deref());
    let mut out = inner
        .client
        .request(parts.method.clone(), url)
        .headers(forward_headers(&parts.headers))
        .header(header::ACCEPT_ENCODING, "identity");
    if !(sent.is_empty() && matches!(parts.method, Method::GET | Method::HEAD)) {
        out = out.body(sent);
    }
    let asked = Instant::now();
    let answer = match out.send().await {
        Ok(r) => r,
        Err(e) => {
            let (kind, outcome, msg) = describe_upstream_error(e, upstream, &inner.config);
            inner.metrics.request(dname, mode.name(), outcome);
            tracing::warn!(
                request_id = %id, dialect = dname, mode = mode.name(), path = %path,
                outcome, error = %msg, "upstream failed"
            );
            return finish_local(&inner, &id, Some(dialect), kind, &msg);
        }
    };
    let latency = asked.elapsed();
    let status = answer.status();
    inner.metrics.upstream(dname, status.as_u16(), latency);
    inner.metrics.request(dname, mode.name(), verdict.outcome);
    tracing::info!(
        request_id = %id, dialect = dname, mode = mode.name(), path = %path,
        outcome = verdict.outcome, status = status.as_u16(),
        upstream_ms = latency.as_secs_f64() * 1000.0,
        violations = verdict.found.len(), edits = verdict.edits.len(),
        rules = %rule_list(&verdict.found),
        "forwarded"
    );
    if let Some(why) = &verdict.unchecked_because {
        tracing::debug!(request_id = %id, reason = %why, "body not checked");
    }

    // The answer, streamed back.
    let mut headers = HeaderMap::with_capacity(answer.headers().len() + 4);
    for (name, value) in answer.headers() {
        if !is_hop_by_hop(name) {
            headers.append(name.clone(), value.clone());
        }
    }
    let content_type = header_str(&headers, header::CONTENT_TYPE.as_str())
        .unwrap_or("")
        .to_string();
    let capture = conversation
        .filter(|_| inner.conversations.is_some() && status.is_success())
        .map(|c| (c, verdict.parsed));
    let keep = inner.tap.is_some() || capture.is_some();
    let tap_headers = inner.tap.as_ref().map(|_| headers.clone());
    let on_end = {
        let inner = inner.clone();
        let id = id.clone();
        Box::new(move |seen: Seen| {
            inner.metrics.response_bytes(dname, seen.bytes);
            match &seen.end {
                End::Complete => {}
                // The client's choice (a cancelled stream, a closed tab): not a fault.
                End::ClientGone => {
                    tracing::debug!(request_id = %id, bytes = seen.bytes, "client went away")
                }
                End::UpstreamError(_) => tracing::warn!(
                    request_id = %id, ended = %seen.end.describe(), bytes = seen.bytes,
                    "response cut"
                ),
            }
            if let (Some(tap), Some(h)) = (&inner.tap, tap_headers) {
                tap.send(Record::Response {
                    id: id.clone(),
                    status: status.as_u16(),
                    headers: h,
                    body: seen.copy.clone(),
                    truncated: seen.truncated,
                    ended: seen.end.describe(),
                    elapsed_ms: millis(started.elapsed()),
                });
            }
            if let Some((conversation, parsed)) = capture {
                capture_exchange(
                    &inner,
                    id,
                    conversation,
                    dialect,
                    parsed,
                    &received,
                    &content_type,
                    seen,
                );
            }
        }) as Box<dyn FnOnce(Seen) + Send>
    };
    let expected = answer.content_length();
    let tee = Tee::new(
        Box::pin(answer.bytes_stream()),
        expected,
        keep,
        COPY_CAP,
        on_end,
    );
    let mut resp = Response::new(Body::from_stream(tee));
    *resp.status_mut() = status;
    *resp.headers_mut() = headers;
    stamp(&mut resp, &id, mode);
    if mode == Mode::Repair && route.judged {
        resp.headers_mut().insert(
            errors::REPAIRS_HEADER,
            errors::repairs_header(&verdict.edits),
        );
    }
    let shown = if mode == Mode::Repair {
        &verdict.left
    } else {
        &verdict.found
    };
    if let Some(h) = errors::violations_header(shown) {
        resp.headers_mut().insert(errors::VIOLATIONS_HEADER, h);
    }
    resp
}

/// Free a parsed body. Freeing a 200 KB tree takes tens of microseconds of allocator
/// work; above [`FREE_ELSEWHERE`] bytes it is done on the blocking pool instead.
fn free_later(v: serde_json::Value, body_len: usize) {
    if body_len >= FREE_ELSEWHERE {
        drop(tokio::task::spawn_blocking(move || drop(v)));
    }
}

/// The body size from which a parsed body is freed off the request's path.
const FREE_ELSEWHERE: usize = 32 * 1024;

/// Count and log what the check found and what repair did.
fn record_findings(inner: &Inner, dialect: &'static str, v: &Verdict) {
    if !v.found.is_empty() {
        inner
            .metrics
            .violations(dialect, v.found.iter().map(|x| x.rule.id()));
    }
    if !v.edits.is_empty() {
        inner
            .metrics
            .repairs(dialect, v.edits.iter().map(|e| e.rule.id()));
    }
}

#[allow(clippy::too_many_arguments)]
fn capture_exchange(
    inner: &Arc<Inner>,
    id: String,
    conversation: String,
    dialect: Dialect,
    parsed: Option<serde_json::Value>,
    received: &Bytes,
    content_type: &str,
    seen: Seen,
) {
    let Some(sink) = inner.conversations.clone() else {
        return;
    };
    if seen.end != End::Complete || seen.truncated {
        inner.metrics.store_append("incomplete");
        return;
    }
    let body = match parsed.or_else(|| serde_json::from_slice(received).ok()) {
        Some(b) => b,
        None => {
            inner.metrics.store_append("unreadable");
            return;
        }
    };
    let output = match exchange::response_output(dialect, content_type, &seen.copy) {
        Ok(o) => o,
        Err(why) => {
            tracing::warn!(request_id = %id, reason = %why, "exchange not captured");
            inner.metrics.store_append("not_captured");
            return;
        }
    };
    let ex = Exchange {
        conversation,
        dialect,
        request_id: id.clone(),
        history: exchange::request_history(dialect, &body),
        output,
    };
    let metrics = inner.metrics.clone();
    // Appends to one conversation run one at a time, in the order their exchanges
    // ended: a client's next turn can arrive before the last one's append is done, and
    // what is new in it depends on what is stored.
    let turn = inner.conversation_turns.turn(&ex.conversation);
    tokio::spawn(async move {
        let _turn = turn.await;
        match sink.append(ex).await {
            Ok(kept) => {
                metrics.store_append(kept.outcome());
                match kept {
                    Kept::Appended(n) => {
                        tracing::debug!(request_id = %id, appended = n, "exchange appended")
                    }
                    Kept::AlreadyStored => tracing::debug!(
                        request_id = %id, "exchange already in the conversation"
                    ),
                    Kept::Diverged => tracing::warn!(
                        request_id = %id,
                        "exchange not appended: its history does not continue the conversation"
                    ),
                }
            }
            Err(e) => {
                metrics.store_append("error");
                tracing::warn!(request_id = %id, error = %e, "exchange not appended");
            }
        }
    });
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
    if let Some(tap) = &inner.tap {
        tap.send(Record::Response {
            id: id.to_string(),
            status: resp.status().as_u16(),
            headers: resp.headers().clone(),
            body: Bytes::from(message.to_string()),
            truncated: false,
            ended: "written by mend".into(),
            elapsed_ms: 0,
        });
    }
    resp
}

fn tap_local_response(inner: &Inner, id: &str, resp: &Response, started: Instant) {
    if let Some(tap) = &inner.tap {
        tap.send(Record::Response {
            id: id.to_string(),
            status: resp.status().as_u16(),
            headers: resp.headers().clone(),
            body: Bytes::new(),
            truncated: false,
            ended: "written by mend".into(),
            elapsed_ms: millis(started.elapsed()),
        });
    }
}

fn stamp(resp: &mut Response, id: &str, mode: Mode) {
    if let Ok(v) = HeaderValue::from_str(id) {
        resp.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
    resp.headers_mut()
        .insert(MODE_HEADER, HeaderValue::from_static(mode.name()));
}

/// Which 5xx, with a message that names the upstream (never the request URL, which can
/// carry a key) and the setting to change.
fn describe_upstream_error(
    e: reqwest::Error,
    upstream: &Upstream,
    config: &crate::config::Config,
) -> (Kind, &'static str, String) {
    let e = e.without_url();
    let at = upstream.display_url();
    if e.is_timeout() && e.is_connect() {
        (
            Kind::Timeout,
            "upstream_timeout",
            format!(
                "mend: the upstream at {at} did not accept a connection within {} (connect_timeout)",
                secs(config.connect_timeout)
            ),
        )
    } else if e.is_timeout() {
        (
            Kind::Timeout,
            "upstream_timeout",
            format!(
                "mend: the upstream at {at} did not answer within {} (read_timeout)",
                secs(config.read_timeout)
            ),
        )
    } else if e.is_connect() {
        (
            Kind::BadGateway,
            "upstream_unreachable",
            format!(
                "mend: cannot connect to the upstream at {at}: {}",
                chain(&e)
            ),
        )
    } else {
        (
            Kind::BadGateway,
            "upstream_error",
            format!("mend: the upstream at {at} failed: {}", chain(&e)),
        )
    }
}

/// An error and its causes, one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The configured base plus the request's path and query. A base that already ends
/// with the path's first segment (`https://api.groq.com/openai/v1` and
/// `/v1/chat/completions`) does not get it twice. The base was parsed once, at start:
/// only the path and query are set here, so the host is never read from a request.
pub(crate) fn upstream_url(base: &reqwest::Url, path: &str, query: Option<&str>) -> reqwest::Url {
    let base_path = base.path().trim_end_matches('/');
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    let path = if !first.is_empty()
        && base_path.len() > first.len()
        && base_path.ends_with(first)
        && base_path.as_bytes()[base_path.len() - first.len() - 1] == b'/'
    {
        &path[first.len() + 1..]
    } else {
        path
    };
    let mut url = base.clone();
    url.set_path(&format!("{base_path}{path}"));
    url.set_query(query);
    url
}

/// The request's headers minus hop-by-hop ones, the length (recomputed), the encodings
/// asked for (the gateway asks for identity, to read what it passes on), and mend's
/// own. Credentials pass untouched.
fn forward_headers(h: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(h.len());
    for (name, value) in h {
        let n = name.as_str();
        if is_hop_by_hop(name)
            || n == "content-length"
            || n == "accept-encoding"
            || n.starts_with("x-mend-")
        {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

fn is_hop_by_hop(name: &HeaderName) -> bool {
    HOP_BY_HOP.contains(&name.as_str())
}

fn header_str<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

fn valid_conversation_id(c: &str) -> bool {
    !c.is_empty() && c.len() <= 256 && !c.chars().any(char::is_control)
}

/// The model in a Gemini path: `/v1beta/models/gemini-2.5-flash:generateContent`.
fn gemini_model(path: &str) -> Option<String> {
    let rest = path.split("/models/").nth(1)?;
    let model = rest.split(':').next()?;
    (!model.is_empty()).then(|| model.to_string())
}

fn is_length_limit(e: &axum::Error) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cur = err.source();
    }
    false
}

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
         and :streamGenerateContent, GET /v1/models, /healthz and /metrics"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_join_without_doubling() {
        let join = |base: &str, path: &str, query: Option<&str>| {
            upstream_url(&base.parse().unwrap(), path, query).to_string()
        };
        assert_eq!(
            join("https://api.openai.com", "/v1/chat/completions", None),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            join(
                "https://api.groq.com/openai/v1",
                "/v1/chat/completions",
                None
            ),
            "https://api.groq.com/openai/v1/chat/completions"
        );
        assert_eq!(
            join(
                "http://127.0.0.1:1",
                "/v1beta/models/g:streamGenerateContent",
                Some("alt=sse")
            ),
            "http://127.0.0.1:1/v1beta/models/g:streamGenerateContent?alt=sse"
        );
        // `.../xv1` is not `/v1`.
        assert_eq!(
            join("http://h/xv1", "/v1/messages", None),
            "http://h/xv1/v1/messages"
        );
        // A path that looks like an authority stays a path.
        assert_eq!(
            join("http://h:1", "//evil.example/v1/messages", None),
            "http://h:1//evil.example/v1/messages"
        );
    }

    #[test]
    fn gemini_models_come_from_the_path() {
        assert_eq!(
            gemini_model("/v1beta/models/gemini-3-pro-preview:generateContent").as_deref(),
            Some("gemini-3-pro-preview")
        );
        assert_eq!(gemini_model("/v1/chat/completions"), None);
    }
}
