//! Stage 6, respond: the upstream's status and headers (minus hop-by-hop ones) and its
//! body, streamed back as each chunk arrives while a capped copy is kept for the tap
//! and the capture; mend's headers say the request id, the mode, the repairs made and
//! the violations seen. When the body ends, the answer is tapped. An exchange kept for
//! its conversation is committed before the answer's end goes out (`durable.rs`).

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use mend::Dialect;

use super::capture::Capture;
use super::durable::{self, Held};
use super::heal::{rule_ids, Heal};
use super::observe;
use super::{header_str, is_hop_by_hop, stamp, tapping, Ctx};
use crate::config::Mode;
use crate::errors;
use crate::judge::Verdict;
use crate::stream::{End, Seen, Tee};
use crate::Inner;

/// The most of a response body kept for the tap and the capture.
const COPY_CAP: usize = 64 * 1024 * 1024;

/// The response to the client, its body streaming from the upstream's.
pub(super) async fn stream_back(
    ctx: &Ctx,
    mode: Mode,
    mut verdict: Verdict,
    mut healed: Option<Heal>,
    received: Bytes,
    conversation: Option<String>,
    answer: reqwest::Response,
) -> Response {
    let status = answer.status();
    let headers = passed_back_headers(answer.headers());
    // After a heal retry, the body forwarded (and parsed) is the repaired one.
    let parsed = match healed.as_mut().and_then(|h| h.repair.as_mut()) {
        Some(repair) => repair.parsed.take(),
        None => verdict.parsed.take(),
    };
    let capture = conversation
        .filter(|_| status.is_success())
        .map(|conversation| Capture {
            conversation,
            scope: ctx.scope.get().cloned().unwrap_or_default(),
            parsed,
            received,
            content_type: header_str(&headers, header::CONTENT_TYPE.as_str())
                .unwrap_or("")
                .to_string(),
        });
    let expected = answer.content_length();
    let (body, watch, captured) = durable::prepare(ctx, capture, answer, COPY_CAP).await;
    let end = StreamEnd {
        inner: ctx.inner.clone(),
        id: ctx.id.clone(),
        dialect: ctx.dialect(),
        started: ctx.started,
        status,
        tap_headers: ctx.inner.tap.as_ref().map(|_| headers.clone()),
        observed: observe::hand_over(ctx, status, &headers),
    };
    let on_end = Box::new(move |seen: Seen| end.finish(seen)) as Box<dyn FnOnce(Seen) + Send>;
    // A copy is kept for the tap, and for the trace's usage when there is a trace.
    let copy = ctx.inner.tap.is_some() || ctx.obs.wants_body(status);
    let tee = Tee::new(body, expected, copy, COPY_CAP, on_end);
    let mut resp = Response::new(match watch {
        Some(watch) => Body::from_stream(Held::new(tee, watch)),
        None => Body::from_stream(tee),
    });
    *resp.status_mut() = status;
    *resp.headers_mut() = headers;
    add_mend_headers(&mut resp, ctx, mode, &verdict);
    if let Some(h) = &healed {
        add_heal_headers(&mut resp, h);
    }
    if let Some(c) = captured {
        resp.headers_mut().insert(
            errors::CAPTURE_HEADER,
            axum::http::HeaderValue::from_static(c.header_value()),
        );
    }
    resp
}

/// What heal mode did: `x-mend-heal`, and after a retry the repairs sent
/// (`x-mend-repairs`) and, when it succeeded, the rules repaired (`x-mend-healed`).
fn add_heal_headers(resp: &mut Response, heal: &Heal) {
    let headers = resp.headers_mut();
    headers.insert(
        errors::HEAL_HEADER,
        axum::http::HeaderValue::from_static(heal.outcome),
    );
    let Some(repair) = &heal.repair else { return };
    headers.insert(
        errors::REPAIRS_HEADER,
        errors::repairs_header(&repair.edits),
    );
    if heal.outcome == "healed" {
        let rules = rule_ids(repair.edits.iter().map(|e| e.rule));
        if let Ok(v) = axum::http::HeaderValue::from_str(&rules) {
            headers.insert(errors::HEALED_HEADER, v);
        }
    }
}

/// The upstream's headers, minus the ones that belong to its hop.
fn passed_back_headers(upstream: &HeaderMap) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(upstream.len() + 4);
    for (name, value) in upstream {
        if !is_hop_by_hop(name) {
            headers.append(name.clone(), value.clone());
        }
    }
    headers
}

/// The request id and mode; in `repair` mode on a judged route the edits made; the
/// violations seen (those left after repair, in `repair` mode).
fn add_mend_headers(resp: &mut Response, ctx: &Ctx, mode: Mode, verdict: &Verdict) {
    stamp(resp, &ctx.id, mode);
    if mode == Mode::Repair && ctx.route.judged {
        resp.headers_mut().insert(
            errors::REPAIRS_HEADER,
            errors::repairs_header(&verdict.edits),
        );
        if let Some(why) = verdict.repair_skipped {
            resp.headers_mut().insert(
                errors::REPAIR_SKIPPED_HEADER,
                axum::http::HeaderValue::from_static(why),
            );
        }
    }
    let shown = if mode == Mode::Repair {
        &verdict.left
    } else {
        &verdict.found
    };
    if let Some(h) = errors::violations_header(shown) {
        resp.headers_mut().insert(errors::VIOLATIONS_HEADER, h);
    }
}

/// What is done once the answer's body has ended: count it, say how it ended, tap it.
struct StreamEnd {
    inner: Arc<Inner>,
    id: String,
    dialect: Dialect,
    started: Instant,
    status: StatusCode,
    /// The headers for the tap (only when there is one).
    tap_headers: Option<HeaderMap>,
    observed: observe::Ending,
}

impl StreamEnd {
    fn finish(self, seen: Seen) {
        let (inner, id) = (&self.inner, &self.id);
        inner
            .metrics
            .response_bytes(self.dialect.name(), seen.bytes);
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
        self.observed.finish(Some(&seen));
        if let Some(headers) = self.tap_headers {
            tapping::upstream_response(inner, id, self.status, headers, &seen, self.started);
        }
    }
}
