//! `check`'s two read paths give the same verdict: [`mend::check_doc`] over the tape
//! (`mend::json`) and [`mend::check_value`] over serde_json's `Value`, on every case
//! body under `cases/`, every recorded request of the shared fixtures, the benchmark
//! corpus, and bodies damaged at random. Each body is also read with every string that
//! holds a `/` or a non-ASCII character escaped (`\/`, `\uXXXX`), as PHP's and Python's
//! encoders write them, so the escaped-string paths are compared too.

use mend::json::parse;
use mend::{CheckOptions, Dialect, Profile};
use proptest::prelude::*;
use serde_json::Value;
use std::path::Path;

use crate::support::{files_named, repo_root, shared_dir};

#[allow(dead_code)]
#[path = "../../benches/corpus.rs"]
mod corpus;

/// The two paths' verdicts on `bytes`, compared; whether the tape judged it alone.
fn same_verdict(bytes: &[u8], opts: &CheckOptions, what: &str) -> bool {
    let value = mend::parse_body(bytes)
        .map_err(mend::Error::from)
        .and_then(|v| mend::check_value(&v, opts));
    let Some(doc) = parse(bytes) else {
        assert!(
            value.is_err() || declined(bytes),
            "{what}: the tape declined a body serde_json reads"
        );
        return false;
    };
    match (mend::check_doc(&doc, opts), value) {
        (Ok(t), Ok(v)) => {
            assert_eq!(t.dialect, v.dialect, "{what}");
            assert_eq!(t.provider, v.provider, "{what}");
            assert_eq!(
                format!("{:#?}", t.violations),
                format!("{:#?}", v.violations),
                "{what}"
            );
        }
        (Err(t), Err(v)) => assert_eq!(t.to_string(), v.to_string(), "{what}"),
        (t, v) => panic!("{what}: tape {t:?}, value {v:?}"),
    }
    true
}

/// A valid body the tape leaves to serde_json: a repeated or escaped key.
fn declined(bytes: &[u8]) -> bool {
    fn repeated(v: &Value) -> bool {
        match v {
            Value::Array(a) => a.iter().any(repeated),
            Value::Object(o) => o.values().any(repeated),
            _ => false,
        }
    }
    let text = String::from_utf8_lossy(bytes);
    // serde_json drops repeats on reading, so they show as a shorter map than the text;
    // the fixtures and cases have none: a backslash in a key is the one reason left.
    text.contains("\\") && serde_json::from_slice::<Value>(bytes).is_ok_and(|v| !repeated(&v))
}

/// `text` with `/` and every non-ASCII character escaped: both occur only in strings.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '/' => out.push_str("\\/"),
            c if c.is_ascii() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out
}

/// Every profile that serves the dialect, and none.
fn option_sets(dialect: Option<Dialect>, model: Option<String>) -> Vec<CheckOptions> {
    let base = CheckOptions {
        dialect,
        model,
        ..CheckOptions::default()
    };
    let mut sets = vec![
        base.clone(),
        CheckOptions {
            dialect: None,
            ..base.clone()
        },
    ];
    for name in Profile::names() {
        let fits = Profile::named(name).is_some_and(|p| dialect.is_none_or(|d| p.fits(d)));
        if fits {
            sets.push(CheckOptions {
                provider: Some(name.to_string()),
                ..base.clone()
            });
        }
    }
    sets
}

/// Compare the paths on a body in its three spellings; how many readings the tape judged.
fn compare_body(
    body: &Value,
    dialect: Option<Dialect>,
    model: Option<String>,
    what: &str,
) -> usize {
    let compact = serde_json::to_string(body).expect("serializes");
    let pretty = serde_json::to_string_pretty(body).expect("serializes");
    let spellings = [compact.clone(), pretty, escaped(&compact)];
    let mut judged = 0;
    for opts in option_sets(dialect, model) {
        for (k, text) in spellings.iter().enumerate() {
            judged += usize::from(same_verdict(
                text.as_bytes(),
                &opts,
                &format!("{what} [{k}] {opts:?}"),
            ));
        }
    }
    judged
}

fn case_bodies() -> Vec<(String, Dialect, Option<String>, Value)> {
    let mut out = Vec::new();
    let root = repo_root().join("cases");
    for d in Dialect::ALL {
        let mut stack = vec![root.join(d.name())];
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "json") {
                    let case: Value =
                        serde_json::from_str(&std::fs::read_to_string(&p).expect("readable"))
                            .expect("a case is JSON");
                    let Some(body) = case.get("body") else {
                        continue;
                    };
                    let model = case
                        .get("model")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    out.push((p.display().to_string(), d, model, body.clone()));
                }
            }
        }
    }
    out
}

#[test]
fn every_case_body_has_one_verdict() {
    let cases = case_bodies();
    assert!(cases.len() > 100, "found {} case bodies", cases.len());
    let (mut judged, mut readings) = (0, 0);
    for (file, d, model, body) in &cases {
        judged += compare_body(body, Some(*d), model.clone(), file);
        readings += 3 * option_sets(Some(*d), model.clone()).len();
    }
    // The tape must carry the check, not hand most bodies back to serde_json.
    assert!(
        judged * 10 >= readings * 9,
        "the tape judged {judged} of {readings} readings"
    );
}

fn request_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = files_named(dir, "request.json");
    files.extend(files_named(dir, "rejected-request.json"));
    files
}

#[test]
fn every_recorded_request_has_one_verdict() {
    let Some(shared) = shared_dir() else { return };
    let mut n = 0;
    for root in ["fixtures", "fixtures-bedrock-converse"] {
        for f in request_files(&shared.join(root)) {
            let dir = f.parent().expect("in a folder");
            let meta: Value = std::fs::read_to_string(dir.join("meta.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null);
            let model = meta
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_string);
            let dialect = if root == "fixtures" {
                dir.parent()
                    .and_then(|p| p.file_name())
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.parse().ok())
            } else {
                Some(Dialect::BedrockConverse)
            };
            let bytes = std::fs::read(&f).expect("readable");
            // The recorded bytes as they were sent, then re-spelled.
            for opts in option_sets(dialect, model.clone()) {
                same_verdict(&bytes, &opts, &f.display().to_string());
            }
            let body: Value = serde_json::from_slice(&bytes).expect("a recorded request is JSON");
            compare_body(&body, dialect, model, &f.display().to_string());
            n += 1;
        }
    }
    assert!(n > 50, "found {n} recorded requests");
}

#[test]
fn every_corpus_body_has_one_verdict() {
    for d in Dialect::ALL {
        for size in [5 * 1024, 200 * 1024] {
            let bytes = corpus::body(d, size);
            let opts = CheckOptions {
                dialect: Some(d),
                ..CheckOptions::default()
            };
            assert!(
                same_verdict(&bytes, &opts, &format!("{d} {size}")),
                "{d} {size}: the tape did not judge it"
            );
            let body: Value = serde_json::from_slice(&bytes).expect("JSON");
            let text = escaped(&serde_json::to_string(&body).expect("serializes"));
            same_verdict(text.as_bytes(), &opts, &format!("{d} {size} escaped"));
        }
    }
}

/// A body with one value somewhere replaced by another kind, or removed.
fn damage(body: &Value, at: usize, with: u8) -> Value {
    fn walk(v: &mut Value, at: &mut usize, with: u8) -> bool {
        if *at == 0 {
            *v = match with % 9 {
                0 => Value::Null,
                1 => Value::from(1),
                2 => Value::from(""),
                3 => Value::from(" \n\t"),
                4 => Value::from("x"),
                5 => Value::Array(vec![]),
                6 => serde_json::json!({}),
                7 => Value::Bool(false),
                _ => serde_json::json!([{"type": "text", "text": "y"}]),
            };
            return true;
        }
        *at -= 1;
        match v {
            Value::Array(a) => {
                for i in 0..a.len() {
                    if *at == 0 && with % 11 == 10 {
                        a.remove(i);
                        return true;
                    }
                    if walk(&mut a[i], at, with) {
                        return true;
                    }
                }
                false
            }
            Value::Object(o) => {
                let keys: Vec<String> = o.keys().cloned().collect();
                for k in keys {
                    if *at == 0 && with % 11 == 10 {
                        o.shift_remove(&k);
                        return true;
                    }
                    if let Some(child) = o.get_mut(&k) {
                        if walk(child, at, with) {
                            return true;
                        }
                    }
                }
                false
            }
            _ => false,
        }
    }
    let mut b = body.clone();
    let mut at = at;
    walk(&mut b, &mut at, with);
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn damaged_bodies_have_one_verdict(
        d in prop::sample::select(Dialect::ALL.to_vec()),
        hits in prop::collection::vec((0usize..400, any::<u8>()), 1..4),
        detect in any::<bool>(),
    ) {
        let bytes = corpus::body(d, 5 * 1024);
        let mut body: Value = serde_json::from_slice(&bytes).expect("JSON");
        for (at, with) in hits {
            body = damage(&body, at, with);
        }
        let opts = CheckOptions { dialect: (!detect).then_some(d), ..CheckOptions::default() };
        let text = serde_json::to_string(&body).expect("serializes");
        same_verdict(text.as_bytes(), &opts, &text);
        same_verdict(escaped(&text).as_bytes(), &opts, &text);
    }
}

/// A dialect given for bytes is held against them on both reads: the tape, and
/// serde_json for bytes the tape declines (a duplicated key); bytes that are no JSON say
/// where.
#[test]
fn a_given_dialect_is_held_against_bytes_on_both_reads() {
    let chat = br#"{"model": "gpt-4o", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]}"#;
    let declined = br#"{"model": "gpt-4o", "model": "gpt-4o", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]}"#;
    assert!(parse(chat).is_some() && parse(declined).is_none());
    let given = |d| CheckOptions {
        dialect: Some(d),
        ..Default::default()
    };
    for bytes in [&chat[..], &declined[..]] {
        let contradicted = mend::check_confirmed(bytes, &given(Dialect::Anthropic));
        assert!(
            matches!(
                contradicted,
                Err(mend::Error::Contradicted {
                    given: Dialect::Anthropic,
                    detected: Dialect::OpenAiChat
                })
            ),
            "{contradicted:?}"
        );
        assert!(mend::confirm_dialect_bytes(bytes, Dialect::Anthropic).is_err());
        assert!(mend::confirm_dialect_bytes(bytes, Dialect::OpenAiChat).is_ok());
        let confirmed = mend::check_confirmed(bytes, &given(Dialect::OpenAiChat)).expect("chat");
        let plain = mend::check(bytes, &given(Dialect::OpenAiChat)).expect("chat");
        assert_eq!(confirmed.violations, plain.violations);
        assert_eq!(confirmed.dialect, Dialect::OpenAiChat);
    }
    let broken = br#"{"model": "gpt-4o", "messages": [}"#;
    for e in [
        mend::check_confirmed(broken, &given(Dialect::OpenAiChat)).err(),
        mend::confirm_dialect_bytes(broken, Dialect::OpenAiChat).err(),
    ] {
        assert!(
            matches!(e, Some(mend::Error::Parse(ref p)) if p.line == 1 && p.column > 30),
            "{e:?}"
        );
    }
}
