//! Stage 4, act on the verdict: answer 400 without calling upstream (`strict` found
//! errors), or forward the body (the repaired copy when there is one) to the configured
//! upstream and wait for its status and headers.

use std::time::{Duration, Instant};

use axum::http::{header, HeaderMap, Method};
use axum::response::Response;
use bytes::Bytes;

use super::{is_hop_by_hop, millis, rule_list, stamp, tapping, Ctx, Early};
use crate::config::{Config, Mode, Upstream};
use crate::errors::{self, Kind};
use crate::judge::Verdict;

/// The rejection: the provider's own error shape, naming what was found.
pub(super) fn reject(ctx: &Ctx, mode: Mode, verdict: &Verdict) -> Response {
    let dname = ctx.dname();
    ctx.inner
        .metrics
        .request(dname, mode.name(), verdict.outcome);
    tracing::debug!(
        request_id = %ctx.id, dialect = dname, mode = mode.name(), path = %ctx.path,
        outcome = verdict.outcome, status = 400u16,
        rules = %rule_list(&verdict.found),
        "rejected without calling upstream"
    );
    let mut resp = errors::strict_rejection(ctx.dialect(), &verdict.found);
    stamp(&mut resp, &ctx.id, mode);
    let elapsed = millis(ctx.started.elapsed());
    tapping::local_response(&ctx.inner, &ctx.id, &resp, Bytes::new(), elapsed);
    resp
}

/// The upstream's answer (status and headers; the body still to come), and how long
/// it took to come.
pub(super) struct Answer {
    pub response: reqwest::Response,
    latency: Duration,
}

/// Send `sent` (the body as received, or its repaired copy) upstream and wait for the
/// answer's head, or answer 502/504 when the upstream could not be reached or failed.
pub(super) async fn send_upstream(
    ctx: &Ctx,
    mode: Mode,
    sent: Bytes,
    received_len: usize,
) -> Result<Answer, Early> {
    let (inner, dname) = (&ctx.inner, ctx.dname());
    inner.metrics.request_bytes(dname, received_len, sent.len());
    match post(ctx, sent).await {
        Ok((response, latency)) => Ok(Answer { response, latency }),
        Err(e) => {
            let (kind, outcome, msg) = describe_upstream_error(e, ctx.upstream(), &inner.config);
            inner.metrics.request(dname, mode.name(), outcome);
            tracing::warn!(
                request_id = %ctx.id, dialect = dname, mode = mode.name(), path = %ctx.path,
                outcome, error = %msg, "upstream failed"
            );
            Err(ctx.local(kind, &msg))
        }
    }
}

/// The upstream answered a request judged `verdict`: count it under the verdict's
/// outcome, log it.
pub(super) fn forwarded(ctx: &Ctx, mode: Mode, verdict: &Verdict, answer: &Answer) {
    let (inner, dname) = (&ctx.inner, ctx.dname());
    let status = answer.response.status();
    inner.metrics.request(dname, mode.name(), verdict.outcome);
    tracing::debug!(
        request_id = %ctx.id, dialect = dname, mode = mode.name(), path = %ctx.path,
        outcome = verdict.outcome, status = status.as_u16(),
        upstream_ms = answer.latency.as_secs_f64() * 1000.0,
        violations = verdict.found.len(), edits = verdict.edits.len(),
        rules = %rule_list(&verdict.found),
        "forwarded"
    );
    if let Some(why) = &verdict.unchecked_because {
        tracing::debug!(request_id = %ctx.id, reason = %why, "body not checked");
    }
}

/// Heal mode's one retry: the repaired body, to the same upstream with the same
/// headers. The request was counted once, when it was first sent; the retry counts in
/// the upstream and byte metrics and, when it cannot be sent, answers 502/504.
pub(super) async fn resend(ctx: &Ctx, repaired: Bytes) -> Result<reqwest::Response, Early> {
    let (inner, dname) = (&ctx.inner, ctx.dname());
    inner.metrics.request_bytes(dname, 0, repaired.len());
    match post(ctx, repaired).await {
        Ok((answer, latency)) => {
            tracing::info!(
                request_id = %ctx.id, dialect = dname, path = %ctx.path,
                status = answer.status().as_u16(),
                upstream_ms = latency.as_secs_f64() * 1000.0,
                "retried with the repaired body"
            );
            Ok(answer)
        }
        Err(e) => {
            let (kind, outcome, msg) = describe_upstream_error(e, ctx.upstream(), &inner.config);
            tracing::warn!(
                request_id = %ctx.id, dialect = dname, path = %ctx.path,
                outcome, error = %msg, "upstream failed on the heal retry"
            );
            Err(ctx.local(kind, &msg))
        }
    }
}

/// Send a body to the configured upstream, with the request's method, path, query and
/// headers; count the answer's status and latency.
async fn post(ctx: &Ctx, sent: Bytes) -> Result<(reqwest::Response, Duration), reqwest::Error> {
    let inner = &ctx.inner;
    let url = upstream_url(
        inner.base_url(ctx.dialect()),
        &ctx.path,
        ctx.query.as_deref(),
    );
    let mut headers = forward_headers(&ctx.headers);
    ctx.obs
        .upstream_call(inner.base_url(ctx.dialect()), &ctx.method, &mut headers);
    let mut out = inner
        .client
        .request(ctx.method.clone(), url)
        .headers(headers)
        .header(header::ACCEPT_ENCODING, "identity");
    if !(sent.is_empty() && matches!(ctx.method, Method::GET | Method::HEAD)) {
        out = out.body(sent);
    }
    let asked = Instant::now();
    let answer = out.send().await;
    let latency = asked.elapsed();
    ctx.obs.upstream_answered(match &answer {
        Ok(a) => Ok((a.status(), latency)),
        Err(e) if e.is_timeout() => Err("upstream_timeout"),
        Err(e) if e.is_connect() => Err("upstream_unreachable"),
        Err(_) => Err("upstream_error"),
    });
    let answer = answer?;
    inner
        .metrics
        .upstream(ctx.dname(), answer.status().as_u16(), latency);
    Ok((answer, latency))
}

/// Which 5xx, with a message that names the upstream (never the request URL, which can
/// carry a key) and the setting to change.
fn describe_upstream_error(
    e: reqwest::Error,
    upstream: &Upstream,
    config: &Config,
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
}
