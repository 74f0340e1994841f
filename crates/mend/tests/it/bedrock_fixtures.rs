//! Recorded Bedrock Converse traffic from `../shared/fixtures-bedrock-converse`: every
//! request (74 accepted, and the 6 refused for reasons other than their history) is told
//! to be Converse from its shape alone, checks clean under the model of its URL, and
//! comes back from repair unchanged; but the one refused for an S3 image sent to Claude
//! ("This model doesn't support the s3Uri field."), which is flagged for exactly that
//! image (`malformed`, reported only).

use mend::repair::{repair, RepairOptions};
use mend::{CheckOptions, Dialect};
use serde_json::Value;

use crate::support::{converse_fixtures, shared_dir};

/// The refused request whose refusal mend finds, and where: Claude on Converse reads no
/// S3 media.
const S3_IMAGE_FOR_CLAUDE: &[(&str, &str)] = &[(
    "pydantic-ai--multimodal-tool-return-tool-return-content-uploaded-file-image-bedrock-claude-02",
    "/messages/2/content/1/image/source/s3Location",
)];

#[test]
fn every_recorded_converse_request_is_detected_valid_and_left_alone() {
    let Some(shared) = shared_dir() else { return };
    let all = converse_fixtures(&shared);
    assert!(
        all.len() >= 80,
        "expected the 80 recorded exchanges, found {}",
        all.len()
    );
    let mut problems = Vec::new();
    for f in &all {
        let (name, body, meta) = (f.name(), &f.body, &f.meta);
        match mend::detect_dialect(body) {
            Ok(Dialect::BedrockConverse) => {}
            other => problems.push(format!("{name}: detected as {other:?}")),
        }
        // Rejected bodies were refused for a bad model id or a media source, never for
        // their history: their meta says `rejected_for: other`.
        if !f.accepted {
            assert_eq!(
                meta.get("rejected_for").and_then(Value::as_str),
                Some("other"),
                "{name}: a history rejection needs its own expectation"
            );
        }
        let check = CheckOptions {
            dialect: Some(Dialect::BedrockConverse),
            model: f.model(),
            ..CheckOptions::default()
        };
        let report = mend::check_value(body, &check).unwrap();
        let s3_image = S3_IMAGE_FOR_CLAUDE
            .iter()
            .find_map(|(n, path)| (*n == name).then_some(*path));
        if let Some(path) = s3_image {
            let found: Vec<_> = report
                .violations
                .iter()
                .map(|v| (v.rule.id(), v.path.as_str()))
                .collect();
            if found != [("malformed", path)] {
                problems.push(format!(
                    "{name}: expected the S3 image alone, found {found:?}"
                ));
            }
        } else if !report.violations.is_empty() {
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
    let all = converse_fixtures(&shared);
    let mut flagged = Vec::new();
    for f in &all {
        let report = mend::check_value(&f.body, &CheckOptions::default()).unwrap();
        for v in &report.violations {
            flagged.push((
                f.name(),
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
