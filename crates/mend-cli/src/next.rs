//! `mend next`: a request, its response and the tool results in; the next request body
//! out, checked.
//!
//! The body goes to stdout and the report to stderr (notes on what was done, calls left
//! without a result, the check's violations), or both as one JSON object with `--json`.
//! Every bad input (unreadable, not JSON, a response of another dialect or cut short, a
//! result that answers no call) is one stderr line naming the file, the position and the
//! reason, and exit 2.
//!
//! Invariant: the body on stdout is exactly what `mend::next::next_request` built, and
//! its verdict is `mend::check_value`'s, with the unanswered calls of the new response
//! counted as violations (a stored-state body cannot show them to the check).

use std::io;

use clap::Args;
use mend::next::{next_request, read_reply, NextError, NextOptions, ToolOutput};
use serde_json::json;

use crate::check::{shown_path, violations_json};
use crate::fix::render_like;
use crate::input::{self, Given, Source};
use crate::printer::Printer;
use crate::{Status, Target};

#[derive(Debug, Args)]
pub struct NextArgs {
    /// The request body that was sent (a file, or `-` for stdin)
    #[arg(long, value_name = "FILE|-")]
    request: String,
    /// The response it got: a JSON body, an SSE stream or Converse's binary event stream, told from the bytes (a file, or `-`)
    #[arg(long, value_name = "FILE|-")]
    response: String,
    /// A JSON array of results: [{"call_id": "...", "output": <string or JSON>, "is_error"?: bool}];
    /// {"name": "...", "output": ...} answers the next call of that name (Gemini calls without ids)
    #[arg(long = "tool-results", value_name = "FILE|-")]
    tool_results: Option<String>,
    #[command(flatten)]
    target: Target,
    /// A next user turn to append after the results
    #[arg(long, value_name = "TEXT")]
    user: Option<String>,
    /// The choice (openai_chat) or candidate (gemini) to continue with
    #[arg(long, value_name = "N", default_value_t = 0)]
    choice: usize,
    /// One JSON object on stdout: {body, report: {dialect, provider, valid, unanswered, notes, violations}}
    #[arg(long)]
    json: bool,
}

/// Read one named input; on failure, say so and give the status.
fn read(arg: &str, printer: &mut Printer) -> Result<(String, Vec<u8>), Status> {
    let source =
        Source::one_file(arg, "a folder; `mend next` reads one file here").map_err(|b| {
            printer.bad_input(arg, &b);
            Status::BadInput
        })?;
    let label = source.label();
    match source.read() {
        Ok(bytes) => Ok((label, bytes)),
        Err(b) => {
            printer.bad_input(&label, &b);
            Err(Status::BadInput)
        }
    }
}

/// `mend next`.
pub fn run(args: NextArgs, printer: &mut Printer) -> io::Result<Status> {
    let opts = match args.target.options() {
        Ok(o) => o,
        Err(why) => return Ok(crate::usage_error(&why, printer)),
    };
    let stdin_uses = [
        Some(&args.request),
        Some(&args.response),
        args.tool_results.as_ref(),
    ]
    .iter()
    .filter(|a| a.is_some_and(|a| a == "-"))
    .count();
    if stdin_uses > 1 {
        return Ok(crate::usage_error(
            "only one of --request, --response and --tool-results can read stdin (`-`)",
            printer,
        ));
    }
    match build(&args, &opts, printer) {
        Ok(status) => status,
        Err(status) => Ok(status),
    }
}

/// Everything after the command line is known good; `Err` is a status already reported.
fn build(
    args: &NextArgs,
    opts: &Given,
    printer: &mut Printer,
) -> Result<io::Result<Status>, Status> {
    let bad = |printer: &mut Printer, label: &str, what: &dyn std::fmt::Display| {
        printer.bad_input(label, &what);
        Status::BadInput
    };
    let (req_label, req_bytes) = read(&args.request, printer)?;
    let request = input::parse(&req_bytes).map_err(|b| bad(printer, &req_label, &b))?;
    // The request must be readable as its dialect; its own violations are the check's.
    let dialect = input::analyze(&request, opts)
        .map(|a| a.dialect)
        .map_err(|b| bad(printer, &req_label, &b))?;

    let (resp_label, resp_bytes) = read(&args.response, printer)?;
    let reply = read_reply(dialect, &resp_bytes).map_err(|e| {
        // Where (a byte offset: a stream has no useful lines), then why.
        let what = format!(
            "byte {}: cannot read it as the {dialect} response to {req_label}: {}",
            e.offset, e.reason
        );
        bad(printer, &resp_label, &what)
    })?;

    let (results_label, results) = match &args.tool_results {
        None => (String::new(), Vec::new()),
        Some(arg) => {
            let (label, bytes) = read(arg, printer)?;
            let v = input::parse(&bytes).map_err(|b| bad(printer, &label, &b))?;
            let list = ToolOutput::list_from_json(&v).map_err(|e| bad(printer, &label, &e))?;
            (label, list)
        }
    };

    let nopts = NextOptions {
        choice: args.choice,
        user: args.user.clone(),
        model: opts.check.model.clone(),
    };
    let next = next_request(&request, dialect, &reply, &results, &nopts).map_err(|e| {
        let label = match &e {
            NextError::Request { .. } => &req_label,
            NextError::UnknownCall { .. } | NextError::DuplicateResult { .. } => &results_label,
            _ => &resp_label,
        };
        bad(printer, label, &e)
    })?;

    let copts = mend::CheckOptions {
        dialect: Some(dialect),
        ..opts.check.clone()
    };
    let report = mend::check_value(&next.body, &copts).map_err(|e| bad(printer, &req_label, &e))?;
    let status = if report.valid() && next.unanswered.is_empty() {
        Status::Valid
    } else {
        Status::Violations
    };
    if args.json {
        let out = json!({
            "body": next.body,
            "report": {
                "dialect": report.dialect.name(),
                "provider": report.provider,
                "valid": status == Status::Valid,
                "calls": next.calls,
                "unanswered": next.unanswered,
                "notes": next.notes,
                "violations": violations_json(&report.violations),
            },
        });
        let text = serde_json::to_string_pretty(&out).unwrap_or_default();
        return Ok(printer.out(&(text + "\n")).map(|()| status));
    }
    if let Err(e) = printer.out(&render_like(&req_bytes, &next.body)) {
        return Ok(Err(e));
    }
    for n in &next.notes {
        printer.err_line(&format!("mend: next: note: {n}"));
    }
    for c in &next.unanswered {
        printer.err_line(&format!(
            "mend: next: unanswered call {c}: no result for it in {}",
            if results_label.is_empty() {
                "--tool-results (none given)"
            } else {
                &results_label
            }
        ));
    }
    for v in &report.violations {
        printer.err_line(&format!(
            "mend: next {} {}[{}] {}",
            shown_path(&v.path),
            v.severity.as_str(),
            v.rule,
            v.message
        ));
        if let Some(said) = &v.provider_error {
            printer.err_line(&format!("    provider says: \"{said}\""));
        }
    }
    printer.err_line(&format!(
        "mend: next: {} ({}, provider {}): {} call(s) in the response, {} answered",
        match status {
            Status::Valid => "valid",
            _ => "not ready to send",
        },
        report.dialect,
        report.provider,
        next.calls.len(),
        next.calls.len() - next.unanswered.len(),
    ));
    Ok(Ok(status))
}
