//! heal against the whole evidence: for every row of `../shared/docs/provider-errors.jsonl`
//! filed under a history rule mend has for the row's API (the rows
//! `crates/mend/tests/it/recognize.rs` checks), the rule's damaged example body goes
//! through the gateway in heal mode, the mock refuses it once with the row's real words
//! in the provider's error shape, and a retry would be answered 200. The outcome of each
//! row (healed, unrepairable, failed, passed through) and the upstream calls it took are
//! printed as a table (`cargo test -p mend-gateway --test it heal_evidence -- --nocapture`),
//! the closing note of issue 18.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mend::{Dialect, Profile, Rule};
use mend_gateway::{app, Gateway, Mode};
use serde_json::{json, Value};

use crate::heal::refusal;
use crate::support::{config_for, endpoint, request_to, send, shared_dir, Mock, Scripted};

/// The damaged body sent for a rule in a dialect, with what it is judged with.
struct Damaged {
    /// `example` (the catalog's) or the case file's name.
    source: String,
    body: Value,
    /// The provider profile the upstream is configured with (a case's `provider`).
    provider: Option<String>,
    /// The path the body is posted to (a case's `model` in it for Gemini and Bedrock).
    path: String,
}

/// The repository's root, which holds `cases/`.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The rule's example when it is a body of the dialect, else the first case of
/// `cases/<dialect>/<rule>/` (in name order) that expects the body invalid.
fn damaged(rule: Rule, d: Dialect) -> Option<Damaged> {
    let spec = rule.spec();
    if let Ok(body) = mend::parse_body(spec.example.as_bytes()) {
        if mend::detect_dialect(&body).ok() == Some(d) {
            return Some(Damaged {
                source: "example".into(),
                body,
                provider: None,
                path: endpoint(d).to_string(),
            });
        }
    }
    let dir = repo_root().join("cases").join(d.name()).join(rule.id());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files.into_iter().find_map(|f| {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let case: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if case.pointer("/expect/valid") != Some(&json!(false)) {
            return None;
        }
        let mut body = case["body"].clone();
        let model = case["model"].as_str();
        let path = match (d, model) {
            (Dialect::Gemini, Some(m)) => format!("/v1beta/models/{m}:generateContent"),
            (Dialect::BedrockConverse, Some(m)) => {
                format!("/model/{}/converse", m.replace(':', "%3A"))
            }
            (_, Some(m)) => {
                if body.get("model").is_none() {
                    body["model"] = json!(m);
                }
                endpoint(d).to_string()
            }
            (_, None) => endpoint(d).to_string(),
        };
        // A provider the gateway could not be configured with is left out: the body is
        // then judged as the dialect's first party.
        let provider = case["provider"]
            .as_str()
            .filter(|p| Profile::named(p).is_some_and(|p| p.fits(d)))
            .map(str::to_string);
        Some(Damaged {
            source: f.file_name().unwrap().to_string_lossy().into_owned(),
            body,
            provider,
            path,
        })
    })
}

/// A 200 in the provider's success shape, for the retry.
fn success(d: Dialect) -> Scripted {
    let body = match d {
        Dialect::OpenAiChat => json!({"id": "chatcmpl-heal", "object": "chat.completion",
            "created": 1, "model": "mock", "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "ok"}}]}),
        Dialect::OpenAiResponses => json!({"id": "resp_heal", "object": "response",
            "status": "completed", "model": "mock", "output": [{"type": "message",
            "id": "msg_heal", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}]}]}),
        Dialect::Anthropic => json!({"id": "msg_heal", "type": "message", "role": "assistant",
            "model": "mock", "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}}),
        Dialect::Gemini => json!({"candidates": [{"index": 0, "finishReason": "STOP",
            "content": {"role": "model", "parts": [{"text": "ok"}]}}]}),
        Dialect::BedrockConverse => json!({"output": {"message": {"role": "assistant",
            "content": [{"text": "ok"}]}}, "stopReason": "end_turn",
            "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}),
    };
    Scripted::json(200, body.to_string())
}

/// One row's result.
struct Outcome {
    id: String,
    dialect: Dialect,
    rule: String,
    outcome: String,
    calls: usize,
}

#[tokio::test]
async fn heal_evidence_every_history_error_with_a_rule_goes_through_heal() {
    let Some(shared) = shared_dir() else { return };
    let path = shared.join("docs/provider-errors.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (mut results, mut skipped, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // The rows and skips of `crates/mend/tests/it/recognize.rs`.
        let row: Value = serde_json::from_str(line).expect("a JSON row");
        let id = row["id"].as_str().expect("an id").to_string();
        let d: Dialect = row["api"]
            .as_str()
            .expect("an api")
            .parse()
            .expect("a dialect");
        let message = row["error_text"].as_str().expect("an error text");
        let rule_id = row["rule"].as_str().expect("a rule");
        let Ok(rule) = rule_id.parse::<Rule>() else {
            skipped.push(format!("{id} ({rule_id}: no such rule)"));
            continue;
        };
        if rule == Rule::Malformed {
            skipped.push(format!("{id} (malformed: not a history rule)"));
            continue;
        }
        if !rule.spec().dialects.contains(&d) {
            skipped.push(format!("{id} ({rule_id} is no rule of {d})"));
            continue;
        }
        let status = row["http_status"].as_u64().unwrap_or(400) as u16;
        let Some(damaged) = damaged(rule, d) else {
            results.push(Outcome {
                id,
                dialect: d,
                rule: rule_id.into(),
                outcome: "no damaged body".into(),
                calls: 0,
            });
            continue;
        };
        let mock = Mock::start().await;
        let mut config = config_for(&mock, Mode::Heal);
        config.upstream_mut(d).provider = damaged.provider.clone();
        let app = app(Gateway::new(config).unwrap());
        let mut first = refusal(d, message);
        first.status = status;
        let sent_back = first.chunks[0].clone();
        mock.push(first);
        mock.push(success(d));
        let sent = damaged.body.to_string();
        let r = send(&app, request_to(d, &damaged.path, sent.clone(), &[])).await;
        let seen = mock.received();
        let calls = seen.len();
        let heal = r.header("x-mend-heal").map(str::to_string);
        let what = format!("{id} {d} {rule_id} ({})", damaged.source);
        let mut outcome = match heal.as_deref() {
            None => "passed through".to_string(),
            Some("healed") if r.status == 200 => "healed".to_string(),
            Some(other) => other.to_string(),
        };
        if !(1..=2).contains(&calls) {
            failures.push(format!("{what}: {calls} upstream calls"));
        }
        if calls >= 1 && seen[0].body != sent.as_bytes() {
            failures.push(format!(
                "{what}: the first send was not the body as received"
            ));
        }
        match outcome.as_str() {
            "healed" => {
                if r.header("x-mend-healed").unwrap_or("").is_empty() {
                    failures.push(format!("{what}: healed without x-mend-healed"));
                }
                if calls != 2 {
                    failures.push(format!("{what}: healed in {calls} calls"));
                }
                let retried = seen.last().unwrap().json();
                let opts = mend::CheckOptions {
                    dialect: Some(d),
                    provider: damaged.provider.clone(),
                    model: Dialect::model_from_endpoint(&damaged.path),
                    endpoint: None,
                };
                let report = mend::check_value(&retried, &opts).unwrap();
                if !report.valid() {
                    failures.push(format!("{what}: the retried body is not valid: {retried}"));
                }
            }
            "passed through" => {
                if r.status.as_u16() != status || r.body != sent_back {
                    failures.push(format!(
                        "{what}: passed through, but not as the upstream answered: {} {}",
                        r.status,
                        r.text()
                    ));
                }
                if !mend::rules::recognize(d, message).is_empty() {
                    failures.push(format!("{what}: recognized, yet passed through"));
                }
                outcome.push_str(" (not recognized)");
            }
            "unrepairable" | "failed" => {}
            other => failures.push(format!("{what}: unexpected x-mend-heal {other}")),
        }
        if damaged.source != "example" {
            outcome.push_str(&format!(" [{}]", damaged.source));
        }
        results.push(Outcome {
            id,
            dialect: d,
            rule: rule_id.into(),
            outcome,
            calls,
        });
    }
    println!(
        "{:<22} {:<17} {:<27} {:<5} outcome",
        "evidence id", "dialect", "rule", "calls"
    );
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for o in &results {
        println!(
            "{:<22} {:<17} {:<27} {:<5} {}",
            o.id,
            o.dialect.name(),
            o.rule,
            o.calls,
            o.outcome
        );
        let key = o.outcome.split(" [").next().unwrap_or("").to_string();
        *counts.entry(key).or_default() += 1;
    }
    let summary: Vec<String> = counts.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    println!(
        "{} rows through heal; {}; {} rows skipped: {}",
        results.len(),
        summary.join(", "),
        skipped.len(),
        skipped.join(", ")
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    // The evidence holds more than a hundred rows; most are history errors.
    assert!(results.len() >= 80, "only {} rows", results.len());
}
