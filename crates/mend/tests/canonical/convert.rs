//! Conversion over the recorded fixtures: every accepted request converts to each of the
//! other dialects, and the result checks valid for the target (Converse: or the report
//! says why it cannot be); every accepted Converse request converts to the four others
//! and back, valid and detected as what it is.

use std::collections::BTreeMap;

use mend::convert::{convert, ConvertOptions, Converted, NoteKind, Stage};
use mend::{CheckOptions, Dialect, Rule, Severity, Undetected};
use serde_json::Value;

use crate::requests::dialect_of;
use crate::support::{converse_fixtures, files_named, shared_dir};

const ALL: [Dialect; 5] = Dialect::ALL;

#[test]
fn every_accepted_fixture_converts_valid_to_the_four_others() {
    let Some(shared) = shared_dir() else { return };
    let mut files = files_named(&shared.join("fixtures"), "request.json");
    files.sort();
    assert!(files.len() >= 135, "found {} request fixtures", files.len());
    let mut failures = Vec::new();
    let mut target_edits: BTreeMap<String, usize> = BTreeMap::new();
    let mut notes: BTreeMap<String, usize> = BTreeMap::new();
    let mut conversions = 0;
    for f in &files {
        let from = dialect_of(f);
        let body: Value =
            serde_json::from_slice(&std::fs::read(f).expect("readable")).expect("JSON");
        for to in ALL.into_iter().filter(|d| *d != from) {
            if to == Dialect::BedrockConverse {
                continue;
            }
            conversions += 1;
            let out = match convert(&body, from, to, &ConvertOptions::default()) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{} -> {to}: {e}", f.display()));
                    continue;
                }
            };
            if !out.valid() {
                failures.push(format!(
                    "{} -> {to}: invalid: {:?}\n{}",
                    f.display(),
                    out.violations
                        .iter()
                        .map(|v| format!("{} {} {}", v.rule, v.path, v.message))
                        .collect::<Vec<_>>(),
                    out.body
                ));
            }
            for e in out.edits.iter().filter(|e| e.stage == Stage::Target) {
                *target_edits
                    .entry(format!("{from}->{to} {} {}", e.edit.rule, e.edit.action))
                    .or_default() += 1;
            }
            for n in &out.notes {
                *notes
                    .entry(format!("{} {}", n.kind.as_str(), n.what))
                    .or_default() += 1;
            }
        }
    }
    eprintln!("{conversions} conversions; target edits: {target_edits:#?}; notes: {notes:#?}");
    assert!(
        failures.is_empty(),
        "{} of {conversions} conversions failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// `cases/convert/<slug>.json`: `{description, from, to, provider?, model?,
/// source_model?, force?, body,
/// expect: {valid, notes: ["<kind> <what> <source pointer>"], edits: ["<stage> <rule>
/// <action> <pointer>"]}, converted}`; each must give exactly what it expects.
#[test]
fn every_convert_case_gives_what_it_expects() {
    let dir = crate::support::repo_root().join("cases/convert");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("cases/convert exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "only {} convert cases", files.len());
    let mut pairs = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        let name = name.unwrap_or_default();
        let case: Value = serde_json::from_slice(&std::fs::read(f).expect("readable"))
            .unwrap_or_else(|e| panic!("{name}: not JSON: {e}"));
        let dialect = |k: &str| -> Dialect {
            case[k]
                .as_str()
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{name}: `{k}` is not a dialect"))
        };
        let (from, to) = (dialect("from"), dialect("to"));
        pairs.insert((from.name(), to.name()));
        let opts = ConvertOptions {
            provider: case["provider"].as_str().map(str::to_string),
            model: case["model"].as_str().map(str::to_string),
            source_model: case["source_model"].as_str().map(str::to_string),
            force: case["force"].as_bool().unwrap_or(false),
            ..ConvertOptions::default()
        };
        let out = match convert(&case["body"], from, to, &opts) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let notes: Vec<String> = out
            .notes
            .iter()
            .map(|n| format!("{} {} {}", n.kind.as_str(), n.what, n.path))
            .collect();
        let edits: Vec<String> = out
            .edits
            .iter()
            .map(|e| {
                let stage = match e.stage {
                    Stage::Source => "source",
                    Stage::Target => "target",
                };
                format!("{stage} {} {} {}", e.edit.rule, e.edit.action, e.edit.path)
            })
            .collect();
        let expect = &case["expect"];
        if expect["valid"].as_bool() != Some(out.valid()) {
            failures.push(format!(
                "{name}: valid is {}: {:?}",
                out.valid(),
                out.violations
            ));
        }
        if strings(&expect["notes"]) != notes {
            failures.push(format!(
                "{name}: notes\n  expected {:?}\n  got      {notes:?}",
                strings(&expect["notes"])
            ));
        }
        if strings(&expect["edits"]) != edits {
            failures.push(format!(
                "{name}: edits\n  expected {:?}\n  got      {edits:?}",
                strings(&expect["edits"])
            ));
        }
        if case["converted"] != out.body {
            failures.push(format!(
                "{name}: converted body differs\n  expected {}\n  got      {}",
                case["converted"], out.body
            ));
        }
    }
    // Every pair of the first four dialects, and Converse from and to the ones its
    // traffic meets most.
    let mut wanted: Vec<(&str, &str)> = Vec::new();
    for a in &ALL[..4] {
        for b in ALL[..4].iter().filter(|b| *b != a) {
            wanted.push((a.name(), b.name()));
        }
    }
    wanted.extend([
        ("openai_chat", "bedrock_converse"),
        ("gemini", "bedrock_converse"),
        ("bedrock_converse", "anthropic"),
        ("bedrock_converse", "gemini"),
    ]);
    let missing: Vec<_> = wanted.iter().filter(|p| !pairs.contains(*p)).collect();
    assert!(missing.is_empty(), "no case converts {missing:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The errors of a conversion's target check, as `rule at path: message`.
fn errors(out: &Converted) -> Vec<String> {
    out.violations
        .iter()
        .filter(|v| v.severity == Severity::Error)
        .map(|v| format!("{} at {}: {}", v.rule, v.path, v.message))
        .collect()
}

/// What a check of `body` as `to` (under the conversion's provider) finds in error.
fn recheck(out: &Converted, model: Option<String>) -> Vec<String> {
    let opts = CheckOptions {
        dialect: Some(out.to),
        provider: Some(out.provider.to_string()),
        model,
        ..CheckOptions::default()
    };
    let report = mend::check_value(&out.body, &opts).expect("a body the target can check");
    report
        .violations
        .iter()
        .filter(|v| v.severity == Severity::Error)
        .map(|v| format!("{} at {}: {}", v.rule, v.path, v.message))
        .collect()
}

/// Each accepted Converse request to each of the four others and back, given the
/// recording's model as the source's (a Converse body names none): every output checks
/// valid for its dialect (a fresh check agrees) and is detected as that dialect from its
/// body alone. The only output allowed to read as chat and Anthropic alike is one whose
/// conversion says no model is known for the target (a `missing model` note), and that
/// one is detected once the target's model is given.
#[test]
fn every_accepted_converse_request_converts_to_the_four_others_and_back() {
    let Some(shared) = shared_dir() else { return };
    let all: Vec<_> = converse_fixtures(&shared)
        .into_iter()
        .filter(|f| f.accepted)
        .collect();
    assert!(
        all.len() >= 74,
        "found {} accepted Converse requests",
        all.len()
    );
    let mut failures = Vec::new();
    let mut notes: BTreeMap<String, usize> = BTreeMap::new();
    let (mut conversions, mut detected, mut no_model) = (0, 0, 0);
    for f in &all {
        for to in ALL.into_iter().filter(|d| *d != Dialect::BedrockConverse) {
            let mut body = f.body.clone();
            for (from, to) in [
                (Dialect::BedrockConverse, to),
                (to, Dialect::BedrockConverse),
            ] {
                conversions += 1;
                // The recording's model is the source's on the way out, and the target's
                // (its URL's) on the way back.
                let opts = if from == Dialect::BedrockConverse {
                    ConvertOptions {
                        source_model: f.model(),
                        ..ConvertOptions::default()
                    }
                } else {
                    ConvertOptions {
                        model: f.model(),
                        ..ConvertOptions::default()
                    }
                };
                let out = match convert(&body, from, to, &opts) {
                    Ok(o) => o,
                    Err(e) => {
                        failures.push(format!("{} {from} -> {to}: {e}", f.name()));
                        break;
                    }
                };
                let what = format!("{} {from} -> {to}", f.name());
                if !out.valid() {
                    failures.push(format!("{what}: {:?}\n{}", errors(&out), out.body));
                }
                let model = out.body["model"].as_str().map(str::to_string);
                if recheck(&out, model.or(f.model())) != errors(&out) {
                    failures.push(format!("{what}: a fresh check disagrees"));
                }
                let missing = out
                    .notes
                    .iter()
                    .any(|n| n.kind == NoteKind::Missing && n.what == "model");
                match mend::detect_dialect(&out.body) {
                    Ok(d) if d == to => detected += 1,
                    Err(Undetected::Ambiguous(ds)) if ds.contains(&to) && missing => {
                        no_model += 1;
                        // Given the target's model, the body says what it is.
                        let given = ConvertOptions {
                            model: Some("claude-sonnet-4-5".into()),
                            ..opts.clone()
                        };
                        match convert(&body, from, to, &given)
                            .map(|o| mend::detect_dialect(&o.body))
                        {
                            Ok(Ok(d)) if d == to => {}
                            other => failures.push(format!("{what} with a model: {other:?}")),
                        }
                    }
                    other => failures.push(format!("{what}: detected as {other:?}\n{}", out.body)),
                }
                for n in &out.notes {
                    *notes
                        .entry(format!("{from}->{to} {} {}", n.kind.as_str(), n.what))
                        .or_default() += 1;
                }
                body = out.body;
            }
        }
    }
    eprintln!(
        "{conversions} conversions, {detected} detected as their target, {no_model} without a model known for the target; notes: {notes:#?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {conversions} conversions failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The 135 accepted requests of the other dialects to Converse: valid, or the report says
/// why in the one way Converse allows (a tool history without tool definitions:
/// tools-undeclared, which mend must not invent); never an invalid body reported valid.
#[test]
fn every_accepted_fixture_converts_to_converse_valid_or_says_why() {
    let Some(shared) = shared_dir() else { return };
    let files = files_named(&shared.join("fixtures"), "request.json");
    assert!(files.len() >= 135, "found {} request fixtures", files.len());
    let mut failures = Vec::new();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for f in &files {
        let from = dialect_of(f);
        let body: Value =
            serde_json::from_slice(&std::fs::read(f).expect("readable")).expect("JSON");
        let out = match convert(
            &body,
            from,
            Dialect::BedrockConverse,
            &ConvertOptions::default(),
        ) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        let model = body
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string);
        if recheck(&out, model) != errors(&out) {
            failures.push(format!("{}: a fresh check disagrees", f.display()));
        }
        if mend::detect_dialect(&out.body).ok() != Some(Dialect::BedrockConverse) {
            failures.push(format!(
                "{}: not detected as Converse\n{}",
                f.display(),
                out.body
            ));
        }
        let unexplained: Vec<_> = out
            .violations
            .iter()
            .filter(|v| v.severity == Severity::Error && v.rule != Rule::ToolsUndeclared)
            .map(|v| format!("{} at {}: {}", v.rule, v.path, v.message))
            .collect();
        if !unexplained.is_empty() {
            failures.push(format!("{}: {unexplained:?}\n{}", f.display(), out.body));
        }
        let outcome = if out.valid() {
            "valid".to_string()
        } else {
            let undeclared = out
                .violations
                .iter()
                .any(|v| v.rule == Rule::ToolsUndeclared);
            assert!(undeclared, "{}: invalid without a reason", f.display());
            assert!(
                out.body.get("toolConfig").is_none(),
                "{}: tools-undeclared with a toolConfig",
                f.display()
            );
            "tools-undeclared".to_string()
        };
        *outcomes.entry(format!("{from} {outcome}")).or_default() += 1;
    }
    eprintln!("{} conversions to Converse: {outcomes:#?}", files.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        outcomes.keys().any(|k| k.ends_with(" valid")),
        "no conversion to Converse checked valid: {outcomes:?}"
    );
}
