//! `@mend/core`: mend for Node.js, the addon.
//!
//! Each function is one call of the `mend` library with its arguments read from
//! JavaScript and its outcome written back as plain objects; the verdicts, the repairs,
//! the texts are all the library's. `index.js` wraps these functions (the `MendError`
//! class, `ensureValid`, `mendFetch`) and `index.d.ts` is generated from this crate by
//! `napi build` (its header, `header.d.ts`, declares what `index.js` adds).
//!
//! Not for: anything the library does not do. A rule, a repair or a check written here
//! would be a second place for it.
//!
//! Invariant: bad input (a body that is not JSON or not a request, a dialect the body
//! contradicts, an unknown option value) is thrown as a `MendError` naming the argument,
//! the position and the reason; a body that is a request is never an error, whatever its
//! history holds: that is the report's.

mod body;
mod error;
mod options;
mod out;

use mend::Dialect;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use body::{Body, BodyArg, Text};
use error::{from_mend, BadInput};
use mend::repair::RepairedBytes;
use options::{count, parse_dialect, readable, Given};
pub use options::{
    CheckOptions, ConvertOptions, NextOptions, RepairOptions, ToolResult, TrimOptions,
};
pub use out::{
    Conversion, ConvertEdit, Dropped, Edit, NextRequest, Note, ProviderText, Repair, Report,
    RuleInfo, RuleRepair, ToolCall, Trim, Violation,
};

/// mimalloc for what the addon allocates (what V8 allocates is V8's): a damaged body's
/// tree of small maps and strings, a repair's items, the tape and the reports all come
/// and go per call, and glibc's malloc made `repair` of a string 1.4 times as slow
/// (`bench/node_binding.mjs`, docs/PERFORMANCE.md). Memory Rust allocates is only ever
/// freed by Rust.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Check a request body: what the provider would refuse, each finding with its rule, a
/// JSON pointer into the body and the provider's own error text.
#[napi(ts_args_type = "body: Body, options?: CheckOptions | undefined | null")]
pub fn check(env: &Env, body: BodyArg, options: Option<CheckOptions>) -> Result<Report> {
    let options = options.unwrap_or_default();
    let given = options.given().map_err(|b| b.into_js(env))?;
    let body = Text::read(env, body, "body")?;
    let report = checked(body.bytes(), &given, "body").map_err(|b| b.into_js(env))?;
    Ok(Report {
        valid: report.valid(),
        dialect: report.dialect.name().to_string(),
        provider: report.provider.to_string(),
        violations: out::violations(&report.violations),
    })
}

/// The check of a body's JSON text, read on the tape as the CLI reads it (no tree); a
/// text the tape reader declines (no JSON, or one of the rare shapes it leaves to
/// serde_json) is parsed and checked as a `Value`, which gives the same report and a
/// parse error's place and reason.
fn checked(
    text: &[u8],
    given: &Given,
    argument: &str,
) -> std::result::Result<mend::Report, BadInput> {
    let report = match given.force {
        false => mend::check_confirmed(text, &given.check),
        true => mend::check(text, &given.check),
    }
    .map_err(|e| from_mend(e, argument))?;
    readable(report.dialect, &report.violations, argument)?;
    Ok(report)
}

/// Repair a request body: the fewest edits that make it valid, each said; what cannot be
/// repaired without guessing is left and listed. The body comes back in the form given,
/// and is the very value passed in when nothing needed doing.
#[napi(
    ts_generic_types = "B extends Body",
    ts_args_type = "body: B, options?: RepairOptions | undefined | null",
    ts_return_type = "WithBody<Repair, Returned<B>>"
)]
pub fn repair<'env>(
    env: &'env Env,
    body: BodyArg<'env>,
    options: Option<RepairOptions>,
) -> Result<Repair<'env>> {
    let options = options.unwrap_or_default();
    let (given, lib) = options
        .given()
        .and_then(|g| options.library(&g).map(|l| (g, l)))
        .map_err(|b| b.into_js(env))?;
    let body = Text::read(env, body, "body")?;
    let outcome = (|| {
        given.confirm_text(body.bytes(), "body")?;
        // A valid body costs one check on the tape; a repaired one is the text given with
        // only the changed items written anew.
        let outcome =
            mend::repair::repair_bytes(body.bytes(), &lib).map_err(|e| from_mend(e, "body"))?;
        match &outcome {
            RepairedBytes::AsIs(report) => readable(report.dialect, &report.violations, "body")?,
            RepairedBytes::Ran(fixed, _) => readable(fixed.dialect, &fixed.unrepairable, "body")?,
        }
        Ok::<_, BadInput>(outcome)
    })()
    .map_err(|b| b.into_js(env))?;
    let (fixed, written) = match outcome {
        RepairedBytes::AsIs(report) => {
            return Ok(Repair {
                body: body.give_back(env, None)?,
                valid: true,
                changed: false,
                dialect: report.dialect.name().to_string(),
                provider: report.provider.to_string(),
                edits: Vec::new(),
                unrepairable: Vec::new(),
                warnings: out::violations(&report.violations),
            });
        }
        RepairedBytes::Ran(fixed, written) => (fixed, written),
    };
    Ok(Repair {
        body: body.give_back(env, written)?,
        valid: fixed.valid(),
        changed: fixed.changed(),
        dialect: fixed.dialect.name().to_string(),
        provider: fixed.provider.to_string(),
        edits: out::edits(&fixed.edits),
        unrepairable: out::violations(&fixed.unrepairable),
        warnings: out::violations(&fixed.warnings),
    })
}

/// Trim a request body to a token budget (the history, its instructions and the tool
/// definitions), dropping whole call groups oldest first and never cutting one; a
/// damaged body is repaired first.
#[napi(
    ts_generic_types = "B extends Body",
    ts_args_type = "body: B, budget: number, options?: TrimOptions | undefined | null",
    ts_return_type = "WithBody<Trim, Returned<B>>"
)]
pub fn trim<'env>(
    env: &'env Env,
    body: BodyArg<'env>,
    budget: f64,
    options: Option<TrimOptions>,
) -> Result<Trim<'env>> {
    let options = options.unwrap_or_default();
    let (given, lib) = (|| {
        let given = options.given()?;
        let lib = mend::TrimOptions {
            check: given.check.clone(),
            budget: count(budget, "budget")?,
            keep_last: options
                .keep_last
                .map(|n| count(n, "keepLast"))
                .transpose()?
                .unwrap_or(1),
            protect: options
                .protect
                .map(|n| count(n, "protect"))
                .transpose()?
                .unwrap_or(0),
        };
        Ok::<_, BadInput>((given, lib))
    })()
    .map_err(|b| b.into_js(env))?;
    let mut body = Body::read(env, body, "body")?;
    let trimmed = (|| {
        given.confirm(&body.value, "body")?;
        // The value read is trim's to keep: its kept items are moved, not copied.
        let value = std::mem::take(&mut body.value);
        let t = mend::trim::trim_owned(value, &lib).map_err(|e| from_mend(e, "body"))?;
        readable(t.dialect, &t.violations, "body")?;
        Ok::<_, BadInput>(t)
    })()
    .map_err(|b| b.into_js(env))?;
    // A trim that dropped and repaired nothing hands its body back as it was given.
    let unchanged = trimmed.dropped.is_empty() && trimmed.repairs.is_empty();
    Ok(Trim {
        body: body.give_back(env, &trimmed.body, unchanged)?,
        valid: trimmed.violations.is_empty(),
        tokens_before: saturate(trimmed.tokens_before),
        tokens_after: saturate(trimmed.tokens_after),
        over_budget: trimmed.over_budget,
        counter: trimmed.counter.name().to_string(),
        dropped: trimmed
            .dropped
            .iter()
            .map(|d| Dropped {
                paths: d.paths.clone(),
                kind: d.kind.to_string(),
                tokens: saturate(d.tokens),
            })
            .collect(),
        repairs: out::edits(&trimmed.repairs),
        violations: out::violations(&trimmed.violations),
    })
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Convert a request body to another dialect: the same conversation, tool results where
/// the target wants them, settings mapped, and everything the target cannot carry
/// reported with its source pointer.
#[napi(
    ts_generic_types = "B extends Body",
    ts_args_type = "body: B, to: Dialect, options?: ConvertOptions | undefined | null",
    ts_return_type = "WithBody<Conversion, Converted<B>>"
)]
pub fn convert<'env>(
    env: &'env Env,
    body: BodyArg<'env>,
    to: String,
    options: Option<ConvertOptions>,
) -> Result<Conversion<'env>> {
    let options = options.unwrap_or_default();
    let (from, to, lib) = (|| {
        let from = options
            .from
            .as_deref()
            .map(|d| parse_dialect(d, "from"))
            .transpose()?;
        Ok::<_, BadInput>((from, parse_dialect(&to, "to")?, options.library()?))
    })()
    .map_err(|b| b.into_js(env))?;
    let mut body = Body::read(env, body, "body")?;
    let converted = (|| {
        let from = match from {
            Some(d) => d,
            None => mend::detect_dialect(&body.value)
                .map_err(|u| from_mend(mend::Error::Undetected(u), "body"))?,
        };
        // The tree was made for this call: given to the conversion, not copied.
        mend::convert_owned(std::mem::take(&mut body.value), from, to, &lib).map_err(convert_error)
    })()
    .map_err(|b| b.into_js(env))?;
    Ok(Conversion {
        body: body.give_back(env, &converted.body, false)?,
        valid: converted.valid(),
        from: converted.from.name().to_string(),
        to: converted.to.name().to_string(),
        provider: converted.provider.to_string(),
        model: converted.model.clone(),
        losses: converted.losses().map(Note::from).collect(),
        notes: converted.notes.iter().map(Note::from).collect(),
        edits: converted
            .edits
            .iter()
            .map(|e| ConvertEdit {
                stage: match e.stage {
                    mend::convert::Stage::Source => "source",
                    mend::convert::Stage::Target => "target",
                }
                .to_string(),
                rule: e.edit.rule.id().to_string(),
                path: e.edit.path.clone(),
                action: e.edit.action.to_string(),
                detail: e.edit.detail.clone(),
            })
            .collect(),
        violations: out::violations(&converted.violations),
    })
}

fn convert_error(e: mend::convert::ConvertError) -> BadInput {
    use mend::convert::ConvertError;
    match e {
        ConvertError::Check(e) => from_mend(e, "body"),
        ConvertError::Read(e) => BadInput::new("unreadable", "body", e.to_string()),
        ConvertError::Unreadable { path, reason } => {
            BadInput::new("unreadable", "body", reason).at_path(path)
        }
        ConvertError::Write { to, path, reason } => BadInput::new(
            "cannot-convert",
            "body",
            format!("cannot be written as {to}: {reason}"),
        )
        .at_path(path),
    }
}

/// The next request after `request` got `response` (a JSON body, an SSE stream as text,
/// or Converse's binary event stream as bytes): the response's output appended exactly
/// as the provider needs it back (reasoning, ids, signatures), then the tool results
/// where the dialect wants them, checked.
#[napi(
    ts_generic_types = "B extends Body",
    ts_args_type = "request: B, response: string | Uint8Array | { [key: string]: any }, options?: NextOptions | undefined | null",
    ts_return_type = "WithBody<NextRequest, Returned<B>>"
)]
pub fn next_request<'env>(
    env: &'env Env,
    request: BodyArg<'env>,
    response: BodyArg<'env>,
    options: Option<NextOptions>,
) -> Result<NextRequest<'env>> {
    let options = options.unwrap_or_default();
    let given = options.given().map_err(|b| b.into_js(env))?;
    let request = Body::read(env, request, "request")?;
    let response = body::raw(env, response, "response")?;
    let next = (|| {
        given.confirm(&request.value, "request")?;
        let analysis =
            mend::analyze(&request.value, &given.check).map_err(|e| from_mend(e, "request"))?;
        readable(analysis.dialect, &analysis.violations, "request")?;
        let dialect = analysis.dialect;
        let reply = mend::next::read_reply(dialect, &response).map_err(|e| BadInput {
            at: error::At::Offset(e.offset),
            ..BadInput::new(
                "bad-response",
                "response",
                format!("cannot read it as the {dialect} response: {}", e.reason),
            )
        })?;
        let results = options.tool_outputs()?;
        let nopts = mend::NextOptions {
            choice: options
                .choice
                .map(|n| count(n, "choice"))
                .transpose()?
                .unwrap_or(0),
            user: options.user.clone(),
            model: given.check.model.clone(),
        };
        let next = mend::next_request(&request.value, dialect, &reply, &results, &nopts)
            .map_err(next_error)?;
        let copts = mend::CheckOptions {
            dialect: Some(dialect),
            ..given.check.clone()
        };
        let report = mend::check_value(&next.body, &copts).map_err(|e| from_mend(e, "request"))?;
        Ok::<_, BadInput>((dialect, next, report))
    })()
    .map_err(|b| b.into_js(env))?;
    let (dialect, next, report) = next;
    Ok(NextRequest {
        body: request.give_back(env, &next.body, false)?,
        valid: report.valid() && next.unanswered.is_empty(),
        dialect: dialect.name().to_string(),
        calls: next.calls.iter().map(ToolCall::from).collect(),
        unanswered: next.unanswered.iter().map(ToolCall::from).collect(),
        notes: next.notes.clone(),
        violations: out::violations(&report.violations),
    })
}

fn next_error(e: mend::next::NextError) -> BadInput {
    use mend::next::NextError;
    let argument = match &e {
        NextError::Request { .. } => "request",
        NextError::UnknownCall { .. } | NextError::DuplicateResult { .. } => "options.toolResults",
        NextError::NoSuchChoice { .. } | NextError::ChoiceNotApplicable { .. } => "options.choice",
        _ => "response",
    };
    BadInput::new("no-next-request", argument, e.to_string())
}

/// The rule catalog: every rule with its dialects, profiles, severity, repair and the
/// providers' own texts.
#[napi]
pub fn rules() -> Vec<RuleInfo> {
    mend::Rule::ALL.iter().map(|&r| RuleInfo::from(r)).collect()
}

/// The dialect an endpoint path belongs to (`/v1/chat/completions` is `openai_chat`), or
/// null for a path that is no history endpoint (`/v1/embeddings`).
#[napi(ts_return_type = "Dialect | null")]
pub fn endpoint_dialect(path: String) -> Option<String> {
    Dialect::from_endpoint(&path).map(|d| d.name().to_string())
}
