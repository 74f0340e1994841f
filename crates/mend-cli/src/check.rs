//! `mend check`: a verdict per body, in lines for people or one JSON object for scripts.
//!
//! Invariant: one bad input never stops the run. It gets one line on stderr (and an
//! `error` entry in JSON), the rest are still checked, and the exit code says 2 at the end.

use std::collections::HashMap;
use std::io;

use mend::{Analysis, Report, Rule, Violation};
use serde_json::{json, Map, Value};

use crate::input::{self, BadInput, Given, Source};
use crate::printer::Printer;
use crate::style::Palette;
use crate::Status;

/// Check every body of every input.
pub fn run(
    args: &[String],
    jsonl: bool,
    json: bool,
    opts: &Given,
    printer: &mut Printer,
) -> io::Result<Status> {
    let inputs = input::expand(args, if jsonl { "jsonl" } else { "json" });
    // The output's shape depends on the command line only, never on what was found,
    // so a script reading `--json` of a folder always gets `results`.
    let several = jsonl || args.len() > 1 || inputs.had_folder;
    let mut run = Run {
        json,
        several,
        tally: Tally::default(),
        results: Vec::new(),
    };
    if several {
        printer.start_progress(inputs.items.len() as u64);
    }
    for (label, source) in &inputs.items {
        match source {
            Err(bad) => run.record(label, None, Err(bad.clone()), opts, printer)?,
            Ok(source) => run.check_source(label, source, jsonl, opts, printer)?,
        }
        printer.advance(run.tally.bodies);
    }
    printer.finish_progress();
    if json {
        let out = if several {
            json!({"results": run.results, "summary": run.tally.to_json()})
        } else {
            run.results.pop().unwrap_or(Value::Null)
        };
        printer.out(&format!("{}\n", pretty(&out)))?;
    } else if several {
        for line in run.tally.summary_lines() {
            printer.err_line(&line);
        }
    }
    Ok(run.tally.status())
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

struct Run {
    json: bool,
    several: bool,
    tally: Tally,
    results: Vec<Value>,
}

impl Run {
    fn check_source(
        &mut self,
        label: &str,
        source: &Source,
        jsonl: bool,
        opts: &Given,
        printer: &mut Printer,
    ) -> io::Result<()> {
        let bytes = match source.read() {
            Ok(b) => b,
            Err(bad) => return self.record(label, None, Err(bad), opts, printer),
        };
        if !jsonl {
            return self.record(label, None, Ok(&bytes), opts, printer);
        }
        let mut any = false;
        for (line, body) in input::json_lines(&bytes) {
            any = true;
            self.record(label, Some(line), Ok(body), opts, printer)?;
        }
        if !any {
            let bad = BadInput::new("empty input: no JSON lines at all");
            self.record(label, None, Err(bad), opts, printer)?;
        }
        Ok(())
    }

    /// Judge one body (or one input that never became a body) and print what came of it.
    fn record(
        &mut self,
        file: &str,
        line: Option<usize>,
        bytes: Result<&[u8], BadInput>,
        opts: &Given,
        printer: &mut Printer,
    ) -> io::Result<()> {
        let body_label = input::body_label(file, line);
        let verdict = bytes.and_then(|b| verdict(b, opts));
        self.tally.add(&verdict);
        if let Err(bad) = &verdict {
            printer.bad_input(&body_label, bad);
        }
        if self.json {
            let mut entry = Map::new();
            if self.several {
                entry.insert("file".into(), json!(file));
                if let Some(n) = line {
                    entry.insert("line".into(), json!(n));
                }
            }
            match &verdict {
                Ok(report) => entry.extend(report_json(report)),
                Err(bad) => {
                    if !self.several {
                        entry.insert("file".into(), json!(file));
                    }
                    entry.insert("error".into(), json!(bad.to_string()));
                }
            }
            self.results.push(Value::Object(entry));
            Ok(())
        } else if let Ok(report) = &verdict {
            printer.out(&human_report(&body_label, report, printer.palette))
        } else {
            Ok(())
        }
    }
}

/// Parse and check one body; bad input when it cannot be checked at all. The body is read
/// onto the library's tape (no second copy of its text); one the tape leaves to
/// serde_json is parsed into a `Value` as before.
fn verdict(bytes: &[u8], opts: &Given) -> Result<Report, BadInput> {
    if let Some(doc) = mend::json::parse(bytes) {
        return input::judge_doc(&doc, opts);
    }
    let body = input::parse(bytes)?;
    let analysis = input::analyze(&body, opts)?;
    Ok(Analysis::into_report(analysis))
}

/// The DESIGN.md check object: dialect, provider, valid, violations.
pub fn report_json(report: &Report) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("dialect".into(), json!(report.dialect.name()));
    m.insert("provider".into(), json!(report.provider));
    m.insert("valid".into(), json!(report.valid()));
    m.insert("violations".into(), violations_json(&report.violations));
    m
}

/// Violations as their serde form.
pub fn violations_json(vs: &[Violation]) -> Value {
    Value::Array(
        vs.iter()
            .map(|v| serde_json::to_value(v).unwrap_or(Value::Null))
            .collect(),
    )
}

/// `FILE: valid (...)`, or a line per violation with the provider's words under it.
fn human_report(label: &str, report: &Report, pal: Palette) -> String {
    let mut s = String::new();
    if report.valid() {
        s.push_str(&format!(
            "{}: {} ({}, provider {})\n",
            pal.bold(label),
            pal.green("valid"),
            report.dialect,
            report.provider
        ));
    }
    for v in &report.violations {
        s.push_str(&violation_line(label, v, pal));
    }
    s
}

/// `FILE /json/pointer error[rule] message` and `    provider says: "..."`.
pub fn violation_line(label: &str, v: &Violation, pal: Palette) -> String {
    let mut s = format!(
        "{} {} {} {}\n",
        pal.bold(label),
        pal.cyan(shown_path(&v.path)),
        pal.severity(v.severity, &format!("{}[{}]", v.severity.as_str(), v.rule)),
        v.message
    );
    if let Some(said) = &v.provider_error {
        s.push_str(&format!(
            "    {}\n",
            pal.dim(&format!("provider says: \"{said}\""))
        ));
    }
    s
}

/// The empty pointer names the whole body; say so rather than print nothing.
pub fn shown_path(path: &str) -> &str {
    if path.is_empty() {
        "(body)"
    } else {
        path
    }
}

/// Counts over a run.
#[derive(Debug, Default)]
struct Tally {
    bodies: usize,
    valid: usize,
    invalid: usize,
    unreadable: usize,
    by_rule: HashMap<Rule, usize>,
}

impl Tally {
    fn add(&mut self, verdict: &Result<Report, BadInput>) {
        self.bodies += 1;
        match verdict {
            Ok(r) if r.valid() => self.valid += 1,
            Ok(_) => self.invalid += 1,
            Err(_) => self.unreadable += 1,
        }
        if let Ok(r) = verdict {
            for v in &r.violations {
                *self.by_rule.entry(v.rule).or_default() += 1;
            }
        }
    }

    fn status(&self) -> Status {
        if self.unreadable > 0 {
            Status::BadInput
        } else if self.invalid > 0 {
            Status::Violations
        } else {
            Status::Valid
        }
    }

    /// Rules by count, most first; ties in catalog order.
    fn rules_by_count(&self) -> Vec<(Rule, usize)> {
        let mut v: Vec<(Rule, usize)> = self.by_rule.iter().map(|(r, n)| (*r, *n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    fn to_json(&self) -> Value {
        let by_rule: Map<String, Value> = self
            .rules_by_count()
            .into_iter()
            .map(|(r, n)| (r.id().to_string(), json!(n)))
            .collect();
        json!({
            "bodies": self.bodies,
            "valid": self.valid,
            "invalid": self.invalid,
            "unreadable": self.unreadable,
            "by_rule": by_rule,
        })
    }

    fn summary_lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "mend: {} {} checked: {} valid, {} invalid, {} unreadable",
            self.bodies,
            if self.bodies == 1 { "body" } else { "bodies" },
            self.valid,
            self.invalid,
            self.unreadable
        )];
        let rules = self.rules_by_count();
        let width = rules.first().map(|(_, n)| n.to_string().len()).unwrap_or(1);
        for (rule, n) in rules {
            lines.push(format!("  {n:>width$}  {rule}"));
        }
        lines
    }
}
