//! The data-driven cases under `cases/<dialect>/<rule>/<slug>.json`.
//!
//! A case is `{"description", "provider"?, "model"?, "body", "expect": {"valid", "rules",
//! "paths"}, "repaired"?, "repair_policy"?}`. The rules found (errors and warnings) must be
//! exactly `expect.rules`, every path in `expect.paths` must be among the findings' paths,
//! and `valid` must match. When `repaired` is given, `mend::repair` (with the optional
//! `repair_policy`: `{"missing_result": "synthesize|drop-call", "orphan_result":
//! "drop|to-text", "synthesized_text": "..."}`) must give exactly that body, and it must check
//! valid, unless the case lists `"unrepairable": [rules]`: then exactly those rules' errors
//! must be left (a repair that must report rather than move data). A valid case must come
//! back from repair unchanged. Adding a case needs no Rust.

use mend::repair::{repair, MissingResult, OrphanResult, RepairOptions};
use mend::{CheckOptions, Dialect, Rule};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::repo_root;

struct Case {
    file: String,
    dialect: Dialect,
    folder_rule: String,
    json: Value,
}

fn load_cases() -> Vec<Case> {
    let root = repo_root().join("cases");
    let mut out = Vec::new();
    let mut files = Vec::new();
    collect(&root, &mut files);
    // Other commands keep their own cases beside the rule cases, each with its walker.
    let others = [root.join("next"), root.join("convert")];
    files.retain(|f| !others.iter().any(|o| f.starts_with(o)));
    files.sort();
    for f in files {
        let rel = f.strip_prefix(&root).expect("under cases/").to_path_buf();
        let parts: Vec<String> = rel
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            parts.len(),
            3,
            "{}: a case lives at cases/<dialect>/<rule>/<slug>.json",
            rel.display()
        );
        let dialect: Dialect = parts[0]
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
        let text = std::fs::read_to_string(&f).expect("readable case");
        let json: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not JSON: {e}", rel.display()));
        out.push(Case {
            file: rel.display().to_string(),
            dialect,
            folder_rule: parts[1].clone(),
            json,
        });
    }
    out
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn strs(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_case_finds_what_it_expects() {
    let cases = load_cases();
    assert!(!cases.is_empty(), "no cases under cases/");
    let mut failures = Vec::new();
    let mut repaired_checked = 0;
    for c in &cases {
        let j = &c.json;
        assert!(
            j.get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.is_empty()),
            "{}: a case says what it is and where its evidence is in `description`",
            c.file
        );
        assert!(
            c.folder_rule.parse::<Rule>().is_ok(),
            "{}: folder is not a rule id",
            c.file
        );
        let opts = CheckOptions {
            dialect: Some(c.dialect),
            provider: j
                .get("provider")
                .and_then(Value::as_str)
                .map(str::to_string),
            model: j.get("model").and_then(Value::as_str).map(str::to_string),
            endpoint: None,
        };
        let body = j
            .get("body")
            .unwrap_or_else(|| panic!("{}: no body", c.file));
        let expect = j
            .get("expect")
            .unwrap_or_else(|| panic!("{}: no expect", c.file));
        let report = match mend::check_value(body, &opts) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{}: {e}", c.file));
                continue;
            }
        };
        let found: BTreeSet<String> = report
            .violations
            .iter()
            .map(|v| v.rule.id().to_string())
            .collect();
        let wanted: BTreeSet<String> = strs(expect.get("rules")).into_iter().collect();
        let valid = expect
            .get("valid")
            .and_then(Value::as_bool)
            .unwrap_or_else(|| panic!("{}: expect.valid", c.file));
        let paths: BTreeSet<&str> = report.violations.iter().map(|v| v.path.as_str()).collect();
        let detail = || {
            report
                .violations
                .iter()
                .map(|v| {
                    format!(
                        "  {} {} at {}: {}",
                        v.severity.as_str(),
                        v.rule,
                        v.path,
                        v.message
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        if found != wanted || report.valid() != valid {
            failures.push(format!(
                "{}: expected valid={valid} rules={wanted:?}, found valid={} rules={found:?}\n{}",
                c.file,
                report.valid(),
                detail()
            ));
            continue;
        }
        for p in strs(expect.get("paths")) {
            if !paths.contains(p.as_str()) {
                failures.push(format!(
                    "{}: expected a finding at {p}\n{}",
                    c.file,
                    detail()
                ));
            }
        }
        if !valid && !wanted.contains(&c.folder_rule) {
            failures.push(format!(
                "{}: an invalid case in folder {} must expect that rule",
                c.file, c.folder_rule
            ));
        }
        if let Some(repaired) = j.get("repaired") {
            let policy = j.get("repair_policy");
            let ropts = RepairOptions {
                check: opts.clone(),
                missing_result: match policy
                    .and_then(|p| p.get("missing_result"))
                    .and_then(Value::as_str)
                {
                    Some("drop-call") => MissingResult::DropCall,
                    _ => MissingResult::Synthesize,
                },
                orphan_result: match policy
                    .and_then(|p| p.get("orphan_result"))
                    .and_then(Value::as_str)
                {
                    Some("to-text") => OrphanResult::ToText,
                    _ => OrphanResult::Drop,
                },
                synthesized_text: policy
                    .and_then(|p| p.get("synthesized_text"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
            };
            let left: BTreeSet<String> = j
                .get("unrepairable")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let left_as_expected = |r: &mend::Repaired| {
                let got: BTreeSet<String> = r
                    .unrepairable
                    .iter()
                    .map(|v| v.rule.id().to_string())
                    .collect();
                got == left
            };
            if let Err(e) = crate::splice::agrees(body, &ropts) {
                failures.push(format!("{}: repair from bytes: {e}", c.file));
            }
            match repair(body, &ropts) {
                Ok(r) if &r.body == repaired && left_as_expected(&r) => repaired_checked += 1,
                Ok(r) => failures.push(format!(
                    "{}: repair gave (valid={}, edits {:?}, unrepairable {:?})\n{}\nbut the case expects\n{}",
                    c.file,
                    r.valid(),
                    r.edits.iter().map(|e| format!("{} {} {}", e.action, e.path, e.detail)).collect::<Vec<_>>(),
                    r.unrepairable.iter().map(|v| v.rule.id()).collect::<Vec<_>>(),
                    serde_json::to_string_pretty(&r.body).unwrap_or_default(),
                    serde_json::to_string_pretty(repaired).unwrap_or_default()
                )),
                Err(e) => failures.push(format!("{}: repair failed: {e}", c.file)),
            }
        } else if valid {
            // A valid body comes back from repair unchanged, from bytes too.
            let ropts = RepairOptions {
                check: opts.clone(),
                ..Default::default()
            };
            if let Err(e) = crate::splice::agrees(body, &ropts) {
                failures.push(format!("{}: repair from bytes: {e}", c.file));
            }
            match repair(
                body,
                &RepairOptions {
                    check: opts.clone(),
                    ..Default::default()
                },
            ) {
                Ok(r) if r.edits.is_empty() && &r.body == body => {}
                Ok(r) => failures.push(format!(
                    "{}: repair changed a valid body: {:?}",
                    c.file, r.edits
                )),
                Err(e) => failures.push(format!("{}: repair failed: {e}", c.file)),
            }
        }
    }
    eprintln!(
        "{} cases, {repaired_checked} with a repair expectation",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_rule_has_invalid_and_tricky_valid_cases() {
    let cases = load_cases();
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for c in &cases {
        let valid = c
            .json
            .pointer("/expect/valid")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let e = counts.entry(c.folder_rule.clone()).or_default();
        if valid {
            e.1 += 1;
        } else {
            e.0 += 1;
        }
    }
    let mut missing = Vec::new();
    for r in Rule::ALL {
        let (bad, good) = counts.get(r.id()).copied().unwrap_or_default();
        eprintln!("{:28} {bad:3} invalid {good:3} valid", r.id());
        if bad < 3 || good < 2 {
            missing.push(format!(
                "{}: {bad} invalid (need 3), {good} valid (need 2)",
                r.id()
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "rules short of cases:\n{}",
        missing.join("\n")
    );
}
