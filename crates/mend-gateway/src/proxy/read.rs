//! Stage 1, read the request: the mode it runs under, the conversation it belongs to,
//! and its body, capped at the configured limit. A bad header, or a body too large or
//! unreadable, ends the exchange here with the gateway's own answer.

use axum::body::Body;
use axum::http::header;
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;

use super::{header_str, Ctx, Early};
use crate::config::Mode;
use crate::errors::Kind;
use crate::{CONVERSATION_HEADER, MODE_HEADER};

/// The mode: the request's header when allowed (and, unless the operator allows
/// lowering, only when it asks for at least the upstream's mode), else the upstream's.
/// A route that is not judged is always `off`.
pub(super) fn mode(ctx: &Ctx) -> Result<Mode, Early> {
    if !ctx.route.judged {
        return Ok(Mode::Off);
    }
    let config = &ctx.inner.config;
    let upstream = ctx.upstream();
    match header_str(&ctx.headers, MODE_HEADER) {
        Some(m) if config.mode_header => match m.parse::<Mode>() {
            Ok(m) if m < upstream.mode && !config.mode_header_lowers => {
                tracing::info!(
                    request_id = %ctx.id, dialect = ctx.dname(), asked = m.name(),
                    applied = upstream.mode.name(),
                    "{MODE_HEADER} asked for a mode below the upstream's; not applied (mode_header_lowers is off)"
                );
                Ok(upstream.mode)
            }
            Ok(m) => Ok(m),
            Err(why) => {
                ctx.inner
                    .metrics
                    .request(ctx.dname(), upstream.mode.name(), "bad_mode");
                let msg = format!("mend: {MODE_HEADER}: {why}");
                Err(ctx.local(Kind::InvalidRequest, &msg))
            }
        },
        _ => Ok(upstream.mode),
    }
}

/// The conversation the exchange is captured into, when the request names one.
pub(super) fn conversation(ctx: &Ctx, mode: Mode) -> Result<Option<String>, Early> {
    match header_str(&ctx.headers, CONVERSATION_HEADER) {
        Some(c) if !valid_conversation_id(c) => {
            ctx.inner
                .metrics
                .request(ctx.dname(), mode.name(), "bad_conversation");
            let msg = format!(
                "mend: {CONVERSATION_HEADER} must be 1 to 256 characters without control characters"
            );
            Err(ctx.local(Kind::InvalidRequest, &msg))
        }
        Some(c) => Ok(Some(c.to_string())),
        None => Ok(None),
    }
}

/// The body, refused before reading when its declared length is over the limit, and
/// while reading when it turns out to be. It is read into one buffer, sized from the
/// declared length; a body that comes as one chunk is kept as that chunk, uncopied.
pub(super) async fn body(ctx: &Ctx, mode: Mode, body: Body) -> Result<Bytes, Early> {
    let limit = ctx.inner.config.body_limit;
    let too_large = || {
        ctx.inner
            .metrics
            .request(ctx.dname(), mode.name(), "too_large");
        let msg = format!(
            "mend: the request body is larger than the gateway's limit of {limit} bytes \
             (body_limit in mend's configuration, MEND_BODY_LIMIT, or --body-limit)"
        );
        ctx.local(Kind::TooLarge, &msg)
    };
    let declared = ctx
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    match read_whole(body, limit, declared).await {
        Ok(b) => Ok(b),
        Err(Unread::TooLarge) => Err(too_large()),
        Err(Unread::Failed(e)) => {
            ctx.inner
                .metrics
                .request(ctx.dname(), mode.name(), "bad_body");
            let msg = format!("mend: could not read the request body: {e}");
            Err(ctx.local(Kind::InvalidRequest, &msg))
        }
    }
}

/// Why a body was not read.
enum Unread {
    TooLarge,
    Failed(axum::Error),
}

/// Read a body whole, at most `limit` bytes: the first chunk as it is, and when more
/// follow, all of them into one buffer of the declared length (or, without one, grown
/// as needed).
async fn read_whole(mut body: Body, limit: usize, declared: Option<u64>) -> Result<Bytes, Unread> {
    let mut first: Option<Bytes> = None;
    let mut buf = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(chunk) = frame.map_err(Unread::Failed)?.into_data() else {
            continue; // trailers
        };
        let len = first.as_ref().map_or(0, Bytes::len) + buf.len() + chunk.len();
        if len > limit {
            return Err(Unread::TooLarge);
        }
        match first.take() {
            None if buf.is_empty() => first = Some(chunk),
            Some(one) => {
                let size = declared.map_or(0, |n| n as usize).clamp(len, limit);
                buf.reserve(size);
                buf.extend_from_slice(&one);
                buf.extend_from_slice(&chunk);
            }
            None => buf.extend_from_slice(&chunk),
        }
    }
    Ok(match first {
        Some(one) => one,
        None => buf.freeze(),
    })
}

fn valid_conversation_id(c: &str) -> bool {
    !c.is_empty() && c.len() <= 256 && !c.chars().any(char::is_control)
}
