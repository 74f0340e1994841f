//! `rules::recognize` against the providers' real error texts: every row of
//! `../shared/docs/provider-errors.jsonl` filed under a history rule the catalog holds
//! for the row's API is recognized as that rule (or as the rule the catalog files the
//! same row under, when its source says so), and errors that are not about the history
//! are not recognized at all.

use mend::{rules::recognize, Dialect, Rule};
use serde_json::Value;

use crate::support::shared_dir;

#[test]
fn every_history_error_of_the_evidence_is_recognized() {
    let Some(shared) = shared_dir() else { return };
    let path = shared.join("docs/provider-errors.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (mut checked, mut skipped) = (0, Vec::new());
    let mut missed = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).expect("a JSON row");
        let id = row["id"].as_str().expect("an id");
        let dialect: Dialect = row["api"]
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
            continue;
        }
        if !rule.spec().dialects.contains(&dialect) {
            skipped.push(format!("{id} ({rule_id} is no rule of {dialect})"));
            continue;
        }
        checked += 1;
        let got = recognize(dialect, message);
        let cites = |r: &Rule| {
            r.spec().provider_texts.iter().any(|t| {
                t.source
                    .strip_prefix("provider-errors.jsonl ")
                    .and_then(|s| s.split_whitespace().next())
                    == Some(id)
            })
        };
        if !got.contains(&rule) && !got.iter().any(cites) {
            missed.push(format!("{id} {rule_id} got {got:?}: {message}"));
        }
    }
    assert!(missed.is_empty(), "not recognized:\n{}", missed.join("\n"));
    // The evidence holds more than a hundred rows; most are history errors.
    assert!(checked >= 80, "only {checked} rows checked");
    assert!(skipped.len() <= 3, "skipped: {skipped:?}");
}

#[test]
fn errors_that_are_not_about_the_history_are_not_recognized() {
    for (d, msg) in [
        (Dialect::OpenAiChat, "Rate limit reached for gpt-4o in organization org-AbC123 on tokens per min (TPM): Limit 30000, Used 29851, Requested 1200. Please try again in 2.1s."),
        (Dialect::OpenAiChat, "The model `gpt-9` does not exist or you do not have access to it."),
        (Dialect::OpenAiChat, "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages."),
        (Dialect::OpenAiChat, "You exceeded your current quota, please check your plan and billing details."),
        (Dialect::OpenAiResponses, "Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys."),
        (Dialect::OpenAiResponses, "Unsupported parameter: 'temperature' is not supported with this model."),
        (Dialect::Anthropic, "prompt is too long: 208477 tokens > 200000 maximum"),
        (Dialect::Anthropic, "model: claude-opus-9"),
        (Dialect::Anthropic, "invalid x-api-key"),
        (Dialect::Anthropic, "Number of request tokens has exceeded your per-minute rate limit"),
        (Dialect::Gemini, "API key not valid. Please pass a valid API key."),
        (Dialect::Gemini, "models/gemini-9 is not found for API version v1beta, or is not supported for generateContent."),
        (Dialect::Gemini, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."),
        (Dialect::BedrockConverse, "The security token included in the request is invalid."),
        (Dialect::BedrockConverse, "Too many requests, please wait before trying again."),
        (Dialect::BedrockConverse, "The provided model identifier is invalid."),
        (Dialect::BedrockConverse, "Input is too long for requested model."),
    ] {
        assert!(recognize(d, msg).is_empty(), "{d}: {msg}: {:?}", recognize(d, msg));
    }
}
