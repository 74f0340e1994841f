//! `mend rules`, `mend explain` and `mend providers`: the rule catalog, one rule in full,
//! and the provider profiles.
//!
//! Everything printed comes from the rule's spec in the library (`Rule::spec`): a rule
//! added there is listed and explained here without a line of its own.

use std::io;

use mend::profile::PROFILES;
use mend::rules::Repair;
use mend::Rule;
use serde_json::json;

use crate::printer::Printer;
use crate::Status;

/// One rule as data: every field of its spec (`mend rules --json`, `mend explain --json`).
fn spec_json(r: Rule) -> serde_json::Value {
    let s = r.spec();
    json!({
        "id": s.id,
        "summary": s.summary,
        "dialects": s.dialects.iter().map(|d| d.name()).collect::<Vec<_>>(),
        "profiles": s.profiles,
        "severity": s.severity,
        "provider_texts": s.provider_texts,
        "repair": s.repair,
        "doc": s.doc,
    })
}

fn dialects_of(r: Rule) -> String {
    let ds = r.spec().dialects;
    if ds.len() == mend::Dialect::ALL.len() {
        "all".into()
    } else {
        ds.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
    }
}

fn repair_of(r: Rule) -> (&'static str, &'static str) {
    match r.spec().repair {
        Repair::Always(how) => ("always", how),
        Repair::Sometimes(how) => ("sometimes", how),
        Repair::Never(why) => ("never", why),
    }
}

/// Print the rule catalog: for each rule its id, what it finds, its dialects, profiles and
/// severity, whether it repairs; then, indented, the provider's first known text and how
/// it repairs (or why not).
pub fn rules(as_json: bool, printer: &mut Printer) -> io::Result<Status> {
    if as_json {
        let rows: Vec<_> = Rule::ALL.iter().map(|&r| spec_json(r)).collect();
        printer.out(&format!("{}\n", json!(rows)))?;
        return Ok(Status::Valid);
    }
    let width = Rule::ALL.iter().map(|r| r.id().len()).max().unwrap_or(0);
    let mut s = String::new();
    for &r in Rule::ALL {
        let spec = r.spec();
        let profiles = if spec.profiles.is_empty() {
            String::new()
        } else {
            format!("; profiles: {}", spec.profiles.join(", "))
        };
        s.push_str(&format!(
            "{:<width$}  {} ({}{profiles}; {}; repair: {})\n",
            r.id(),
            spec.summary,
            dialects_of(r),
            spec.severity.as_str(),
            repair_of(r).0,
        ));
        if let Some(t) = spec.provider_texts.first() {
            s.push_str(&format!(
                "{:<width$}    {}: \"{}\"\n",
                "", t.provider, t.text
            ));
        }
        s.push_str(&format!("{:<width$}    repair: {}\n", "", repair_of(r).1));
    }
    s.push_str("\n`mend explain RULE` prints one rule in full, with an example and its repair.\n");
    printer.out(&s)?;
    Ok(Status::Valid)
}

/// Print one rule in full: the spec, then its example body checked and repaired now.
pub fn explain(id: &str, as_json: bool, printer: &mut Printer) -> io::Result<Status> {
    let Ok(rule) = id.parse::<Rule>() else {
        let known: Vec<_> = Rule::ALL.iter().map(|r| r.id()).collect();
        printer.err_line(&format!(
            "mend explain: unknown rule '{id}' (known: {})",
            known.join(", ")
        ));
        return Ok(Status::BadInput);
    };
    let spec = rule.spec();
    // The examples are the library's own (the catalog test checks each); should one ever
    // fail to read, say so on stderr rather than print an explanation without its run.
    let example = match mend::parse_body(spec.example.as_bytes()) {
        Ok(body) => Some(body),
        Err(e) => {
            printer.err_line(&format!(
                "mend explain: the example of {} is not JSON: {e}",
                spec.id
            ));
            None
        }
    };
    let check = example.as_ref().and_then(|b| {
        mend::check_value(b, &mend::CheckOptions::default())
            .map_err(|e| {
                printer.err_line(&format!(
                    "mend explain: the example of {} cannot be checked: {e}",
                    spec.id
                ))
            })
            .ok()
    });
    let repaired = example
        .as_ref()
        .and_then(|b| mend::repair::repair(b, &mend::repair::RepairOptions::default()).ok());
    if as_json {
        let mut o = spec_json(rule);
        o["example"] = example.clone().unwrap_or_default();
        o["example_violations"] = json!(check.as_ref().map(|c| &c.violations));
        o["example_repair"] = json!(repaired.as_ref().map(|r| json!({
            "valid": r.valid(), "edits": r.edits, "body": r.body,
        })));
        printer.out(&format!("{}\n", o))?;
        return Ok(Status::Valid);
    }
    let (availability, how) = repair_of(rule);
    let mut s = format!("{}: {}\n\n", spec.id, spec.summary);
    s.push_str(&format!("dialects:  {}\n", dialects_of(rule)));
    if !spec.profiles.is_empty() {
        s.push_str(&format!("profiles:  {}\n", spec.profiles.join(", ")));
    }
    s.push_str(&format!("severity:  {}\n", spec.severity.as_str()));
    s.push_str(&format!("repair:    {availability}: {how}\n\n"));
    s.push_str(spec.doc);
    s.push_str("\n\nWhat the providers say:\n");
    for t in spec.provider_texts {
        s.push_str(&format!(
            "  {}: \"{}\"\n    ({})\n",
            t.provider, t.text, t.source
        ));
    }
    if spec.provider_texts.is_empty() {
        s.push_str("  (no provider text recorded)\n");
    }
    s.push_str(&format!(
        "\nAn example that breaks it:\n{}\n",
        spec.example.trim()
    ));
    if let Some(c) = &check {
        s.push_str("\nmend check finds:\n");
        for v in &c.violations {
            s.push_str(&format!(
                "  {} {}[{}] {}\n",
                v.path,
                v.severity.as_str(),
                v.rule,
                v.message
            ));
        }
    }
    if let Some(r) = &repaired {
        s.push_str("\nmend repair does:\n");
        for e in &r.edits {
            s.push_str(&format!(
                "  {} {} {}: {}\n",
                e.path, e.rule, e.action, e.detail
            ));
        }
        if r.edits.is_empty() {
            s.push_str("  nothing: the body is left as it is\n");
        }
        let body = serde_json::to_string_pretty(&r.body).unwrap_or_default();
        s.push_str(&format!(
            "\nrepaired ({}):\n{body}\n",
            if r.valid() { "valid" } else { "still invalid" }
        ));
    }
    printer.out(&s)?;
    Ok(Status::Valid)
}

/// Print the provider profiles.
pub fn providers(as_json: bool, printer: &mut Printer) -> io::Result<Status> {
    let dialects = |p: &mend::Profile| {
        p.dialects
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if as_json {
        let rows: Vec<_> = PROFILES
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "dialects": p.dialects.iter().map(|d| d.name()).collect::<Vec<_>>(),
                    "about": p.about,
                })
            })
            .collect();
        printer.out(&format!("{}\n", json!(rows)))?;
        return Ok(Status::Valid);
    }
    let width = PROFILES.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut s = String::new();
    for p in PROFILES {
        s.push_str(&format!(
            "{:<width$}  {} [{}]\n",
            p.name,
            p.about,
            dialects(p)
        ));
    }
    printer.out(&s)?;
    Ok(Status::Valid)
}
