//! Stage 2, judge the body: check it under the request's mode, and in `repair` mode
//! repair it (see [`crate::judge`]); count what was found and what was edited.

use axum::http::Method;
use bytes::Bytes;

use super::Ctx;
use crate::config::Mode;
use crate::judge::{judge, Target, Verdict};
use crate::Inner;

/// The verdict on the body. Only a POST on a judged route is judged under the mode;
/// anything else is judged under `off` (forwarded untouched, never parsed).
pub(super) fn judge_body(ctx: &Ctx, mode: Mode, received: &Bytes) -> Verdict {
    let model = gemini_model(&ctx.path);
    let target = Target {
        dialect: ctx.dialect(),
        provider: ctx.upstream().provider.as_deref(),
        model: model.as_deref(),
        endpoint: &ctx.path,
    };
    let applied = if ctx.route.judged && ctx.method == Method::POST {
        mode
    } else {
        Mode::Off
    };
    let verdict = judge(applied, &target, received);
    record_findings(&ctx.inner, ctx.dname(), &verdict);
    verdict
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

/// The model in a Gemini path: `/v1beta/models/gemini-2.5-flash:generateContent`.
fn gemini_model(path: &str) -> Option<String> {
    let rest = path.split("/models/").nth(1)?;
    let model = rest.split(':').next()?;
    (!model.is_empty()).then(|| model.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_models_come_from_the_path() {
        assert_eq!(
            gemini_model("/v1beta/models/gemini-3-pro-preview:generateContent").as_deref(),
            Some("gemini-3-pro-preview")
        );
        assert_eq!(gemini_model("/v1/chat/completions"), None);
    }
}
