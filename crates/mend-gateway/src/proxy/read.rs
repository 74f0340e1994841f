//! Stage 1, read the request: the mode it runs under, the conversation it belongs to,
//! and its body, capped at the configured limit. A bad header, or a body too large or
//! unreadable, ends the exchange here with the gateway's own answer.

use axum::body::Body;
use axum::http::header;
use bytes::Bytes;

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
/// while reading when it turns out to be.
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
    match axum::body::to_bytes(body, limit).await {
        Ok(b) => Ok(b),
        Err(e) if is_length_limit(&e) => Err(too_large()),
        Err(e) => {
            ctx.inner
                .metrics
                .request(ctx.dname(), mode.name(), "bad_body");
            let msg = format!("mend: could not read the request body: {e}");
            Err(ctx.local(Kind::InvalidRequest, &msg))
        }
    }
}

fn valid_conversation_id(c: &str) -> bool {
    !c.is_empty() && c.len() <= 256 && !c.chars().any(char::is_control)
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
