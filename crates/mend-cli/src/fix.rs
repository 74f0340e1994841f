//! `mend repair` and `mend trim`: one body in, the changed body on stdout, the report on
//! stderr (or both as one JSON object with `--json`).
//!
//! Invariant: a body that needs nothing is written back byte for byte as it was read, and
//! `mend repair` writes a changed one as the input's bytes with only what it changed
//! written anew, in the input's layout.

use std::io;

use mend::repair::{repair_owned, splice_with, Layout, MissingResult, OrphanResult, RepairOptions};
use mend::trim::{trim_owned, TrimOptions};
use serde_json::{json, Value};

use crate::input::{self, BadInput, Given, Source};
use crate::printer::Printer;
use crate::Status;

/// Read, parse and vet one body for a command that rewrites it.
pub(crate) fn read_one(
    arg: &str,
    opts: &Given,
    printer: &mut Printer,
) -> Result<(String, Vec<u8>, Value), Status> {
    let source =
        Source::one_file(arg, "a folder; this command rewrites one body").map_err(|b| {
            printer.bad_input(arg, &b);
            Status::BadInput
        })?;
    let label = source.label();
    let bad = |printer: &mut Printer, bad: BadInput| {
        printer.bad_input(&label, &bad);
        Status::BadInput
    };
    let bytes = source.read().map_err(|b| bad(printer, b))?;
    let body = input::parse(&bytes).map_err(|b| bad(printer, b))?;
    if let Err(b) = input::analyze(&body, opts) {
        return Err(bad(printer, b));
    }
    Ok((label, bytes, body))
}

/// Serialize a body the way the input was written: indented when it was, compact if not.
pub(crate) fn render_like(input: &[u8], body: &Value) -> String {
    let indented = input.windows(2).any(|w| w == b"\n " || w == b"\n\t");
    let text = if indented {
        serde_json::to_string_pretty(body)
    } else {
        serde_json::to_string(body)
    };
    text.unwrap_or_default() + "\n"
}

pub(crate) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The repair policies named on the command line.
pub(crate) fn policies(
    missing: &str,
    orphan: &str,
) -> Result<(MissingResult, OrphanResult), String> {
    let missing = match missing {
        "synthesize" => MissingResult::Synthesize,
        "drop-call" => MissingResult::DropCall,
        other => {
            return Err(format!(
                "unknown --missing-result '{other}' (expected synthesize or drop-call)"
            ))
        }
    };
    let orphan = match orphan {
        "drop" => OrphanResult::Drop,
        "to-text" => OrphanResult::ToText,
        other => {
            return Err(format!(
                "unknown --orphan-result '{other}' (expected drop or to-text)"
            ))
        }
    };
    Ok((missing, orphan))
}

/// `mend repair`.
pub fn run_repair(
    arg: &str,
    opts: &Given,
    missing: &str,
    orphan: &str,
    synthesized_text: Option<&str>,
    as_json: bool,
    printer: &mut Printer,
) -> io::Result<Status> {
    let (missing_result, orphan_result) = match policies(missing, orphan) {
        Ok(p) => p,
        Err(why) => {
            printer.err_line(&format!("mend: {why}"));
            return Ok(Status::BadInput);
        }
    };
    let (label, bytes, body) = match read_one(arg, opts, printer) {
        Ok(x) => x,
        Err(s) => return Ok(s),
    };
    let ropts = RepairOptions {
        check: opts.check.clone(),
        missing_result,
        orphan_result,
        synthesized_text: synthesized_text.map(str::to_string),
    };
    let r = match repair_owned(body, &ropts) {
        Ok(r) => r,
        Err(e) => {
            printer.bad_input(&label, &e);
            return Ok(Status::BadInput);
        }
    };
    let status = if r.valid() {
        Status::Valid
    } else {
        Status::Violations
    };
    if as_json {
        let out = json!({
            "dialect": r.dialect.name(),
            "provider": r.provider,
            "valid": r.valid(),
            "edits": r.edits,
            "unrepairable": r.unrepairable,
            "held_back": r.held_back,
            "warnings": r.warnings,
            "body": r.body,
        });
        printer.out(&format!("{}\n", pretty(&out)))?;
        return Ok(status);
    }
    if r.changed() {
        // The input's bytes with only what changed written anew, in its layout: a
        // diff of the file shows the repair and nothing else.
        let mut out = splice_with(&bytes, &r, Layout::FollowInput);
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        printer.out(&String::from_utf8_lossy(&out))?;
    } else {
        // Nothing to do: the very bytes that came in.
        printer.out(&String::from_utf8_lossy(&bytes))?;
    }
    for e in &r.edits {
        printer.err_line(&format!(
            "mend: {label} {} {}[{}] {}",
            e.path, e.action, e.rule, e.detail
        ));
    }
    for v in &r.unrepairable {
        printer.err_line(&format!(
            "mend: {label} {} unrepairable[{}] {}",
            v.path, v.rule, v.message
        ));
    }
    for rule in &r.held_back {
        printer.err_line(&format!(
            "mend: {label} held back the fixes of {rule}: made, they left an error no fix can answer"
        ));
    }
    let verdict = match (r.changed(), r.valid()) {
        (false, true) => "valid as it was; nothing changed".to_string(),
        (true, true) => format!("{} edit(s); the output checks valid", r.edits.len()),
        (_, false) => format!(
            "{} edit(s); {} violation(s) could not be repaired without guessing",
            r.edits.len(),
            r.unrepairable.len()
        ),
    };
    printer.err_line(&format!("mend: {label}: {verdict}"));
    Ok(status)
}

/// `mend trim`.
pub fn run_trim(
    arg: &str,
    opts: &Given,
    budget: usize,
    keep_last: usize,
    protect: usize,
    as_json: bool,
    printer: &mut Printer,
) -> io::Result<Status> {
    let (label, bytes, body) = match read_one(arg, opts, printer) {
        Ok(x) => x,
        Err(s) => return Ok(s),
    };
    let topts = TrimOptions {
        check: opts.check.clone(),
        budget,
        keep_last,
        protect,
    };
    let t = match trim_owned(body, &topts) {
        Ok(t) => t,
        Err(e) => {
            printer.bad_input(&label, &e);
            return Ok(Status::BadInput);
        }
    };
    let valid = t.violations.is_empty();
    let status = match (valid, t.over_budget) {
        (false, _) => Status::Violations,
        (true, true) => Status::OverBudget,
        (true, false) => Status::Valid,
    };
    if as_json {
        let out = json!({
            "dialect": t.dialect.name(),
            "valid": valid,
            "counter": t.counter.name(),
            "budget": budget,
            "tokens_before": t.tokens_before,
            "tokens_after": t.tokens_after,
            "over_budget": t.over_budget,
            "dropped": t.dropped,
            "repairs": t.repairs,
            "violations": t.violations,
            "body": t.body,
        });
        printer.out(&format!("{}\n", pretty(&out)))?;
        return Ok(status);
    }
    if t.dropped.is_empty() && t.repairs.is_empty() {
        printer.out(&String::from_utf8_lossy(&bytes))?;
    } else {
        printer.out(&render_like(&bytes, &t.body))?;
    }
    for e in &t.repairs {
        printer.err_line(&format!(
            "mend: {label} {} {}[{}] {} (repaired before trimming)",
            e.path, e.action, e.rule, e.detail
        ));
    }
    for d in &t.dropped {
        printer.err_line(&format!(
            "mend: {label} dropped {} {} ({} tokens)",
            d.kind,
            d.paths.join(" "),
            d.tokens
        ));
    }
    printer.err_line(&format!(
        "mend: {label}: {} -> {} tokens ({}), budget {budget}{}",
        t.tokens_before,
        t.tokens_after,
        t.counter.name(),
        if !valid {
            "; not trimmed: the input has violations repair cannot settle"
        } else if t.over_budget {
            "; still over budget: the instructions, tool definitions, pinned turns and the last units are kept whole"
        } else {
            ""
        }
    ));
    for v in &t.violations {
        printer.err_line(&format!(
            "mend: {label} {} error[{}] {}",
            v.path, v.rule, v.message
        ));
    }
    Ok(status)
}
