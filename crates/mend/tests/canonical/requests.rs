//! body -> canonical -> body is equal JSON for every request fixture, and so is the trip
//! through the canonical JSON form.

use mend::canonical::Conversation;
use mend::Dialect;
use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::support::{files_named, shared_dir};

pub fn dialect_of(file: &Path) -> Dialect {
    let name = file
        .parent()
        .and_then(Path::parent)
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    name.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

fn request_files(fixtures: &Path) -> Vec<PathBuf> {
    let mut files = files_named(fixtures, "request.json");
    files.extend(files_named(fixtures, "rejected-request.json"));
    files.sort();
    files
}

#[test]
fn every_request_fixture_round_trips_exactly() {
    let Some(shared) = shared_dir() else { return };
    let files = request_files(&shared.join("fixtures"));
    assert!(
        files.len() >= 144,
        "expected 135 + 9 requests, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    let mut same_key_order = 0;
    for f in &files {
        let dialect = dialect_of(f);
        let bytes = std::fs::read(f).expect("readable fixture");
        let body: Value = serde_json::from_slice(&bytes).expect("fixture is JSON");
        let conv = match Conversation::from_request(dialect, &body) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{}: read: {e}", f.display()));
                continue;
            }
        };
        match conv.to_request(dialect) {
            Ok(back) if back == body => {
                if serde_json::to_string(&back).ok() == serde_json::to_string(&body).ok() {
                    same_key_order += 1;
                }
            }
            Ok(back) => failures.push(format!(
                "{}: differs\n  was: {}\n  now: {}",
                f.display(),
                body,
                back
            )),
            Err(e) => failures.push(format!("{}: write: {e}", f.display())),
        }
        // Through the JSON form too.
        let json = serde_json::to_vec(&conv.to_json()).expect("serializable");
        let again = Conversation::from_json(&json)
            .unwrap_or_else(|e| panic!("{}: JSON form: {e}", f.display()));
        assert_eq!(again, conv, "{}: the JSON form changed it", f.display());
    }
    eprintln!(
        "{} request bodies round-tripped; {} also in the same key order",
        files.len() - failures.len(),
        same_key_order
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The 80 recorded Converse requests (74 accepted, 6 refused for their model id or a media
/// source) read and write back exactly, and through the JSON form.
#[test]
fn every_recorded_converse_request_round_trips_exactly() {
    let Some(shared) = shared_dir() else { return };
    let all = crate::support::converse_fixtures(&shared);
    assert!(all.len() >= 80, "found {} Converse fixtures", all.len());
    let mut failures = Vec::new();
    let mut modeled = std::collections::BTreeMap::<&str, usize>::new();
    for f in &all {
        let conv = match Conversation::from_request(Dialect::BedrockConverse, &f.body) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{}: read: {e}", f.name()));
                continue;
            }
        };
        for p in conv.messages.iter().flat_map(|m| &m.parts) {
            *modeled.entry(p.kind()).or_default() += 1;
        }
        match conv.to_request(Dialect::BedrockConverse) {
            Ok(back) if back == f.body => {}
            Ok(back) => failures.push(format!(
                "{}: differs\n  was: {}\n  now: {back}",
                f.name(),
                f.body
            )),
            Err(e) => failures.push(format!("{}: write: {e}", f.name())),
        }
        let json = serde_json::to_vec(&conv.to_json()).expect("serializable");
        let again = Conversation::from_json(&json)
            .unwrap_or_else(|e| panic!("{}: JSON form: {e}", f.name()));
        assert_eq!(again, conv, "{}: the JSON form changed it", f.name());
    }
    eprintln!(
        "{} Converse requests round-tripped; parts: {modeled:?}",
        all.len() - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // A reader that made everything opaque would round-trip too: the recordings hold
    // every kind the reader models but inline images (theirs are S3 locations).
    for kind in ["text", "file", "reasoning", "tool_call", "tool_result"] {
        assert!(
            modeled.contains_key(kind),
            "no {kind} part modeled: {modeled:?}"
        );
    }
}
