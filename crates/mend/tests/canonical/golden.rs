//! Conversions held byte for byte: every body of `cases/` (valid and damaged, so the
//! source repair runs too), every shared request fixture (accepted and rejected) and
//! every recorded Converse request, converted to each other dialect, repaired and
//! unrepaired, must give exactly the outcome recorded in `tests/data/convert_digests.txt`
//! (a 64-bit FNV-1a digest of the written body's bytes, the notes, the edits, the
//! violations and the held-back rules, or of the error). Work on convert's speed must
//! leave every one of them as it was; a change that means to change an output re-records
//! them with `MEND_BLESS=1 cargo test -p mend --test canonical golden` and says why.
//!
//! The shared fixtures' lines are compared only where `../shared` is present (CI); the
//! cases' lines always.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mend::convert::{convert, convert_owned, ConvertError, ConvertOptions, Converted};
use mend::Dialect;
use serde_json::Value;

use crate::requests::dialect_of;
use crate::support::{converse_fixtures, files_named, repo_root, shared_dir};

const DIGESTS: &str = "tests/data/convert_digests.txt";

/// FNV-1a, 64 bits: stable across platforms and crate versions.
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Everything a conversion says, as one digest.
fn outcome(body: &Value, from: Dialect, to: Dialect, opts: &ConvertOptions) -> String {
    let text = said(convert(body, from, to, opts));
    // The body given rather than lent converts the same, in every respect.
    assert_eq!(
        said(convert_owned(body.clone(), from, to, opts)),
        text,
        "convert_owned differs from convert ({from} -> {to})"
    );
    format!("{:016x}", fnv(text.as_bytes()))
}

/// Everything a conversion says, as text.
fn said(converted: Result<Converted, ConvertError>) -> String {
    match converted {
        Ok(c) => {
            let mut s = serde_json::to_string(&c.body).expect("a body serializes");
            let _ = write!(
                s,
                "\n{} {:?}\n{}\n{}\n{:?}\n{:?}",
                c.provider,
                c.model,
                serde_json::to_string(&c.notes).expect("notes serialize"),
                serde_json::to_string(&c.edits).expect("edits serialize"),
                c.violations,
                c.held_back
            );
            s
        }
        Err(e) => format!("error: {e}"),
    }
}

/// The inputs: (name, source dialect, body, source model).
fn inputs(shared: Option<&Path>) -> Vec<(String, Dialect, Value, Option<String>)> {
    let root = repo_root();
    let mut out = Vec::new();
    let read = |f: &Path| -> Value {
        serde_json::from_slice(&std::fs::read(f).expect("readable")).expect("JSON")
    };
    for d in Dialect::ALL {
        let mut files: Vec<PathBuf> = Vec::new();
        let dir = root.join("cases").join(d.name());
        for rule in std::fs::read_dir(&dir).expect("cases/<dialect>") {
            let rule = rule.expect("a folder entry").path();
            for f in std::fs::read_dir(&rule).into_iter().flatten() {
                let f = f.expect("a folder entry").path();
                if f.extension().is_some_and(|e| e == "json") {
                    files.push(f);
                }
            }
        }
        files.sort();
        for f in files {
            let case = read(&f);
            let Some(body) = case.get("body") else {
                continue;
            };
            let name = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
            out.push((name, d, body.clone(), None));
        }
    }
    let Some(shared) = shared else { return out };
    let mut files = files_named(&shared.join("fixtures"), "request.json");
    files.sort();
    for f in files {
        let name = f.strip_prefix(shared).unwrap_or(&f).display().to_string();
        out.push((format!("shared/{name}"), dialect_of(&f), read(&f), None));
    }
    for f in converse_fixtures(shared) {
        let name = format!("shared/converse/{}", f.name());
        let model = f.model();
        out.push((name, Dialect::BedrockConverse, f.body, model));
    }
    out
}

fn digests(shared: Option<&Path>) -> BTreeMap<String, String> {
    let mut lines = BTreeMap::new();
    for (name, from, body, source_model) in inputs(shared) {
        for to in Dialect::ALL.into_iter().filter(|d| *d != from) {
            for no_repair in [false, true] {
                let opts = ConvertOptions {
                    source_model: source_model.clone(),
                    no_repair,
                    ..ConvertOptions::default()
                };
                let how = if no_repair { "as-is" } else { "repaired" };
                lines.insert(
                    format!("{name} {from}->{to} {how}"),
                    outcome(&body, from, to, &opts),
                );
            }
        }
    }
    lines
}

#[test]
fn every_conversion_gives_the_recorded_bytes() {
    let shared = shared_dir();
    let got = digests(shared.as_deref());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DIGESTS);
    if std::env::var_os("MEND_BLESS").is_some() {
        let mut text = String::new();
        for (k, v) in &got {
            let _ = writeln!(text, "{k} {v}");
        }
        std::fs::write(&path, text).expect("writable");
        return;
    }
    let recorded: BTreeMap<String, String> = std::fs::read_to_string(&path)
        .expect("tests/data/convert_digests.txt (MEND_BLESS=1 writes it)")
        .lines()
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect();
    let mut diffs = Vec::new();
    for (k, v) in &recorded {
        if k.starts_with("shared/") && shared.is_none() {
            continue;
        }
        match got.get(k) {
            Some(g) if g == v => {}
            Some(g) => diffs.push(format!("{k}: {v} recorded, {g} now")),
            None => diffs.push(format!("{k}: recorded, not converted now")),
        }
    }
    for k in got.keys().filter(|k| !recorded.contains_key(*k)) {
        diffs.push(format!("{k}: converted, not recorded"));
    }
    let cases = recorded.keys().filter(|k| k.starts_with("cases/")).count();
    assert!(cases > 500, "only {cases} case conversions recorded");
    assert!(
        diffs.is_empty(),
        "{} of {} conversions differ from the record:\n{}",
        diffs.len(),
        recorded.len(),
        diffs.join("\n")
    );
}
