//! Conversion over the recorded fixtures: every accepted request converts to each of the
//! other three dialects, and the result checks valid for the target.

use std::collections::BTreeMap;

use mend::convert::{convert, ConvertOptions, Stage};
use mend::Dialect;
use serde_json::Value;

use crate::requests::dialect_of;
use crate::support::{files_named, shared_dir};

const ALL: [Dialect; 4] = [
    Dialect::OpenAiChat,
    Dialect::OpenAiResponses,
    Dialect::Anthropic,
    Dialect::Gemini,
];

#[test]
fn every_accepted_fixture_converts_valid_to_every_other_dialect() {
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

/// `cases/convert/<slug>.json`: `{description, from, to, provider?, model?, body,
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
    assert_eq!(
        pairs.len(),
        12,
        "the cases cover {} of the 12 dialect pairs: {pairs:?}",
        pairs.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
