//! Recorded Bedrock Converse traffic from `../shared/fixtures-bedrock-converse`: every
//! request (74 accepted, and the 6 refused for reasons other than their history) is told
//! to be Converse from its shape alone, checks clean under the model of its URL, and
//! comes back from repair unchanged.

use mend::repair::{repair, RepairOptions};
use mend::{CheckOptions, Dialect};
use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::support::shared_dir;

/// Each fixture folder with its request body (accepted or rejected) and meta.
fn fixtures(root: &Path) -> Vec<(PathBuf, Value, Value)> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("meta.json").is_file())
        .collect();
    dirs.sort();
    for dir in dirs {
        let read = |name: &str| -> Option<Value> {
            let text = std::fs::read_to_string(dir.join(name)).ok()?;
            Some(
                serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display())),
            )
        };
        let meta = read("meta.json").expect("meta.json");
        let body = read("request.json")
            .or_else(|| read("rejected-request.json"))
            .unwrap_or_else(|| panic!("{}: no request body", dir.display()));
        out.push((dir, body, meta));
    }
    out
}

fn model(meta: &Value) -> Option<String> {
    meta.get("model")
        .and_then(Value::as_str)
        .map(str::to_string)
}

#[test]
fn every_recorded_converse_request_is_detected_valid_and_left_alone() {
    let Some(shared) = shared_dir() else { return };
    let root = shared.join("fixtures-bedrock-converse");
    let all = fixtures(&root);
    assert!(
        all.len() >= 80,
        "expected the 80 recorded exchanges, found {}",
        all.len()
    );
    let mut problems = Vec::new();
    for (dir, body, meta) in &all {
        let name = dir.file_name().unwrap_or_default().to_string_lossy();
        match mend::detect_dialect(body) {
            Ok(Dialect::BedrockConverse) => {}
            other => problems.push(format!("{name}: detected as {other:?}")),
        }
        // Rejected bodies were refused for a bad model id or a media source, never for
        // their history: their meta says `rejected_for: other`.
        if let Some(why) = meta.get("rejected_for").and_then(Value::as_str) {
            assert_eq!(
                why, "other",
                "{name}: a history rejection needs its own expectation"
            );
        }
        let check = CheckOptions {
            dialect: Some(Dialect::BedrockConverse),
            model: model(meta),
            ..CheckOptions::default()
        };
        let report = mend::check_value(body, &check).unwrap();
        if !report.violations.is_empty() {
            problems.push(format!(
                "{name}: {}",
                report
                    .violations
                    .iter()
                    .map(|v| format!("{} at {}: {}", v.rule, v.path, v.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        let r = repair(
            body,
            &RepairOptions {
                check,
                ..RepairOptions::default()
            },
        )
        .unwrap();
        if !r.edits.is_empty() || &r.body != body {
            problems.push(format!(
                "{name}: repair changed a valid body: {:?}",
                r.edits
            ));
        }
    }
    eprintln!(
        "checked {} recorded Converse requests, {} problems",
        all.len(),
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Without the model, the one history that opens with the assistant (accepted from
/// Claude) is the only finding: the rule is the model's, and the report says to pass it.
#[test]
fn without_its_model_only_the_leading_assistant_history_is_flagged() {
    let Some(shared) = shared_dir() else { return };
    let all = fixtures(&shared.join("fixtures-bedrock-converse"));
    let mut flagged = Vec::new();
    for (dir, body, _) in &all {
        let report = mend::check_value(body, &CheckOptions::default()).unwrap();
        for v in &report.violations {
            flagged.push((
                dir.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                v.rule.id(),
                v.path.clone(),
                v.message.contains("--model"),
            ));
        }
    }
    assert_eq!(
        flagged,
        [(
            "pydantic-ai--bedrock-anthropic-message-history-starting-with-response".to_string(),
            "role-order",
            "/messages/0".to_string(),
            true
        )]
    );
}
