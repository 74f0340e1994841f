//! Stage 3, tap: copies of the request (as received and, when repaired, as forwarded)
//! and of every response, including the ones the gateway writes itself, go to the tap
//! when one is configured.

use std::time::Instant;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use bytes::Bytes;

use super::{millis, Ctx};
use crate::config::Mode;
use crate::judge::Verdict;
use crate::stream::Seen;
use crate::tap::Record;
use crate::Inner;

/// The request, before anything is sent upstream (a rejected one too).
pub(super) fn request(ctx: &Ctx, mode: Mode, received: &Bytes, verdict: &Verdict) {
    forwarded_as(ctx, mode, received, verdict.replacement.clone());
}

/// The request, forwarded as received, before its verdict is known (`observe`, whose
/// verdict never changes what is sent).
pub(super) fn request_as_received(ctx: &Ctx, mode: Mode, received: &Bytes) {
    forwarded_as(ctx, mode, received, None);
}

fn forwarded_as(ctx: &Ctx, mode: Mode, received: &Bytes, forwarded: Option<Bytes>) {
    if let Some(tap) = &ctx.inner.tap {
        tap.send(Record::Request {
            id: ctx.id.clone(),
            method: ctx.method.to_string(),
            path: ctx.path.clone(),
            query: ctx.query.clone(),
            headers: ctx.headers.clone(),
            dialect: ctx.route.judged.then_some(ctx.dname()),
            mode: mode.name(),
            body: received.clone(),
            forwarded,
        });
    }
}

/// The upstream's answer, once its body ended (the copy is capped).
pub(super) fn upstream_response(
    inner: &Inner,
    id: &str,
    status: StatusCode,
    headers: HeaderMap,
    seen: &Seen,
    started: Instant,
) {
    if let Some(tap) = &inner.tap {
        tap.send(Record::Response {
            id: id.to_string(),
            status: status.as_u16(),
            headers,
            body: seen.copy.clone(),
            truncated: seen.truncated,
            ended: seen.end.describe(),
            elapsed_ms: millis(started.elapsed()),
        });
    }
}

/// An answer the gateway wrote itself.
pub(super) fn local_response(
    inner: &Inner,
    id: &str,
    resp: &Response,
    body: Bytes,
    elapsed_ms: u64,
) {
    if let Some(tap) = &inner.tap {
        tap.send(Record::Response {
            id: id.to_string(),
            status: resp.status().as_u16(),
            headers: resp.headers().clone(),
            body,
            truncated: false,
            ended: "written by mend".into(),
            elapsed_ms,
        });
    }
}
