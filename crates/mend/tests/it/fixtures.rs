//! Real recorded traffic from `../shared/fixtures`: every accepted request checks clean,
//! the two rejected for their history are flagged with the rule their meta names, and
//! every response and stream is read without a panic.

use mend::{CheckOptions, Dialect};
use serde_json::Value;
use std::path::Path;

use crate::support::{files_named, shared_dir};

fn meta(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("meta.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

fn dialect_of(dir: &Path) -> Dialect {
    let name = dir
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    name.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// The profile the fixture's provider maps to, when mend knows it.
fn provider_of(meta: &Value) -> Option<String> {
    let p = meta.get("provider")?.as_str()?;
    mend::Profile::named(p).map(|p| p.name.to_string())
}

fn options(dir: &Path, with_provider: bool) -> CheckOptions {
    let m = meta(dir);
    CheckOptions {
        dialect: Some(dialect_of(dir)),
        provider: if with_provider { provider_of(&m) } else { None },
        model: m.get("model").and_then(Value::as_str).map(str::to_string),
        endpoint: None,
    }
}

#[test]
fn every_accepted_request_checks_clean() {
    let Some(shared) = shared_dir() else { return };
    let files = files_named(&shared.join("fixtures"), "request.json");
    assert!(
        files.len() >= 135,
        "expected the 135 accepted requests, found {}",
        files.len()
    );
    let mut flagged = Vec::new();
    for f in &files {
        let dir = f.parent().expect("a fixture file has a folder");
        let bytes = std::fs::read(f).expect("readable fixture");
        for with_provider in [true, false] {
            let opts = options(dir, with_provider);
            match mend::check(&bytes, &opts) {
                Ok(r) if r.violations.is_empty() => {}
                Ok(r) => flagged.push(format!(
                    "{} (provider {}): {}",
                    f.display(),
                    r.provider,
                    r.violations
                        .iter()
                        .map(|v| format!("{} at {}: {}", v.rule, v.path, v.message))
                        .collect::<Vec<_>>()
                        .join("; ")
                )),
                Err(e) => flagged.push(format!("{}: error {e}", f.display())),
            }
        }
    }
    eprintln!(
        "checked {} accepted request bodies, {} flagged",
        files.len(),
        flagged.len()
    );
    assert!(
        flagged.is_empty(),
        "false positives:\n{}",
        flagged.join("\n")
    );
}

#[test]
fn rejected_requests_are_flagged_only_for_their_history() {
    let Some(shared) = shared_dir() else { return };
    let files = files_named(&shared.join("fixtures"), "rejected-request.json");
    assert_eq!(files.len(), 9, "expected the 9 rejected requests");
    let mut history = 0;
    for f in &files {
        let dir = f.parent().expect("a fixture file has a folder");
        let m = meta(dir);
        let bytes = std::fs::read(f).expect("readable fixture");
        let report = mend::check(&bytes, &options(dir, true))
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let found: Vec<&str> = report.violations.iter().map(|v| v.rule.id()).collect();
        match m.get("rejected_for").and_then(Value::as_str) {
            Some("history") => {
                history += 1;
                let expected: Vec<&str> = m["expected_rules"]
                    .as_array()
                    .expect("expected_rules")
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                for rule in &expected {
                    assert!(
                        found.contains(rule),
                        "{}: expected {rule}, found {found:?}",
                        f.display()
                    );
                }
                assert!(!report.valid(), "{}", f.display());
                // And the provider's own words are quoted.
                let response =
                    std::fs::read_to_string(dir.join("response.json")).unwrap_or_default();
                assert!(
                    report.violations.iter().any(|v| v.provider_error.is_some()),
                    "{}: no provider text ({response})",
                    f.display()
                );
            }
            _ => assert!(
                found.is_empty(),
                "{}: rejected for something else, but flagged {found:?}",
                f.display()
            ),
        }
    }
    assert_eq!(history, 2);
}

#[test]
fn the_reasoning_rejection_quotes_openais_text_with_the_real_id() {
    let Some(shared) = shared_dir() else { return };
    let dir = shared.join(
        "fixtures/openai_responses/pydantic-ai--openai-responses-thinking-with-modified-history-02",
    );
    let bytes = std::fs::read(dir.join("rejected-request.json")).expect("fixture");
    let report = mend::check(&bytes, &options(&dir, true)).expect("checks");
    let response: Value =
        serde_json::from_slice(&std::fs::read(dir.join("response.json")).expect("response"))
            .expect("json");
    let said = response
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let v = report
        .violations
        .iter()
        .find(|v| v.rule.id() == "reasoning-without-follower")
        .expect("flagged");
    assert_eq!(v.path, "/input/1");
    assert_eq!(
        v.provider_error.as_deref(),
        Some(said.as_str()),
        "the provider said: {said}"
    );
}

#[test]
fn every_response_and_stream_is_read_without_a_panic() {
    let Some(shared) = shared_dir() else { return };
    let fixtures = shared.join("fixtures");
    let mut read = 0;
    for f in files_named(&fixtures, "response.json") {
        let bytes = std::fs::read(&f).expect("readable");
        // A response is not a request: checking it must give a verdict or a clean error.
        if let Ok(v) = mend::parse_body(&bytes) {
            let _ = mend::check_value(&v, &CheckOptions::default());
        }
        read += 1;
    }
    for f in files_named(&fixtures, "response.sse") {
        let bytes = std::fs::read(&f).expect("readable");
        let events = match mend::canonical::capture::split_events(&bytes) {
            Ok(e) => e,
            Err(t) => t.complete,
        };
        assert!(!events.is_empty(), "{}: no events", f.display());
        for ev in events {
            if ev.data == "[DONE]" || ev.data.is_empty() {
                continue;
            }
            assert!(
                mend::parse_body(ev.data.as_bytes()).is_ok(),
                "{}: event at byte {} is not JSON",
                f.display(),
                ev.offset
            );
        }
        read += 1;
    }
    assert!(read >= 171, "read {read} responses and streams");
}
