//! Stage 2, judge the body: check it under the request's mode, and in `repair` mode
//! repair it (see [`crate::judge`]); count what was found and what was edited. Heal
//! mode's repair of a refused body (`repair_for_heal`) is made here too, the same way.
//!
//! A request signed with AWS SigV4 (Bedrock's `Authorization: AWS4-HMAC-SHA256 ...`, or
//! a presigned `X-Amz-Signature` query) carries a signature over its body: a repaired
//! body would fail it, and mend cannot sign again. Its repair is held back: the body is
//! forwarded as it came, `x-mend-repair-skipped` says why, and
//! `mend_repairs_skipped_total` counts it.

use axum::http::Method;
use bytes::Bytes;
use mend::Dialect;

use super::{header_str, Ctx};
use crate::config::Mode;
use crate::judge::{judge, Target, Verdict};
use crate::Inner;

/// The verdict on the body. Only a POST on a judged route is judged under the mode;
/// anything else is judged under `off` (forwarded untouched, never parsed).
pub(super) fn judge_body(ctx: &Ctx, mode: Mode, received: &Bytes) -> Verdict {
    let model = Dialect::model_from_endpoint(&ctx.path);
    let target = target(ctx, model.as_deref());
    let applied = if ctx.route.judged && ctx.method == Method::POST {
        mode
    } else {
        Mode::Off
    };
    let mut verdict = judge(applied, &target, received);
    if verdict.replacement.is_some() && signed_with_sigv4(ctx) {
        verdict.hold_back_repair(SIGV4_SIGNED);
        ctx.inner.metrics.repair_skipped(ctx.dname(), "sigv4");
        tracing::info!(
            request_id = %ctx.id, dialect = ctx.dname(),
            "repair held back: the body is signed with SigV4 and mend cannot sign it again"
        );
    }
    record_findings(&ctx.inner, ctx.dname(), &verdict);
    verdict
}

/// Whether the body is judged alongside its forwarding rather than before it: `observe`
/// on a judged POST of an untraced exchange (see `proxy::observe_alongside`). Never
/// `heal`, `repair` or `strict`, whose verdict decides what is sent.
pub(super) fn alongside(ctx: &Ctx, mode: Mode) -> bool {
    mode == Mode::Observe && ctx.route.judged && ctx.method == Method::POST && !ctx.obs.traced()
}

/// The body repaired as `repair` mode repairs it (same target, same options), for heal
/// mode's retry; the edits are counted in `mend_repairs_total`.
pub(super) fn repair_for_heal(ctx: &Ctx, received: &Bytes) -> Verdict {
    let model = Dialect::model_from_endpoint(&ctx.path);
    let target = target(ctx, model.as_deref());
    let verdict = judge(Mode::Repair, &target, received);
    if !verdict.edits.is_empty() {
        ctx.inner
            .metrics
            .repairs(ctx.dname(), verdict.edits.iter().map(|e| e.rule.id()));
    }
    verdict
}

/// What the route's body is judged as: its dialect, the upstream's profile, the model
/// from the path (Gemini, Bedrock).
fn target<'a>(ctx: &'a Ctx, model: Option<&'a str>) -> Target<'a> {
    Target {
        dialect: ctx.dialect(),
        provider: ctx.upstream().provider.as_deref(),
        model,
        endpoint: &ctx.path,
    }
}

/// Why a repair was held back, as `x-mend-repair-skipped` says it.
pub(super) const SIGV4_SIGNED: &str = "sigv4-signed body";

/// Whether the request carries an AWS SigV4 signature (a header or a presigned query),
/// which covers the body.
pub(super) fn signed_with_sigv4(ctx: &Ctx) -> bool {
    let header = header_str(&ctx.headers, "authorization").is_some_and(|a| {
        a.starts_with("AWS4-HMAC-SHA256") || a.starts_with("AWS4-ECDSA-P256-SHA256")
    });
    let query = ctx.query.as_deref().is_some_and(|q| {
        q.split('&').any(|p| {
            p.split('=')
                .next()
                .is_some_and(|k| k.eq_ignore_ascii_case("X-Amz-Signature"))
        })
    });
    header || query
}

/// Count what the check found and what repair did.
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
