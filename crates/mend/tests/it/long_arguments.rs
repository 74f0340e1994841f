//! A Responses call's `arguments` over 1,048,576 characters is refused ("Invalid
//! 'input[15].arguments': string too long. Expected a string with maximum length
//! 1048576, but got a string with length 1524940 instead.", openai/codex#13270). The
//! bodies are built here rather than kept as cases: each is a megabyte.

use mend::repair::{repair, RepairOptions};
use mend::{check, check_value, CheckOptions, Dialect, Rule};
use serde_json::{json, Value};

const MAX: usize = 1 << 20;

/// A history whose one call carries `arguments`.
fn body(arguments: String, model: &str) -> Value {
    json!({"model": model, "input": [
        {"role": "user", "content": "Write the fixture file."},
        {"type": "function_call", "call_id": "call_Wq4nB7xLm2PzK9tYc3RdV5", "name": "write_file",
         "arguments": arguments},
        {"type": "function_call_output", "call_id": "call_Wq4nB7xLm2PzK9tYc3RdV5", "output": "written"},
        {"role": "user", "content": "Now run the tests."}
    ]})
}

/// `{"content":"…"}` of exactly `chars` characters, the filler repeated.
fn arguments_of(chars: usize, filler: char) -> String {
    let frame = r#"{"content":""}"#.len();
    let mut s = String::from(r#"{"content":""#);
    s.extend(std::iter::repeat_n(filler, chars - frame));
    s.push_str(r#""}"#);
    s
}

/// The `malformed` findings at the call's arguments, by both read paths (the tape from
/// bytes, and the `Value`), which must agree.
fn findings(b: &Value) -> Vec<(String, Option<String>)> {
    let opts = CheckOptions {
        dialect: Some(Dialect::OpenAiResponses),
        ..CheckOptions::default()
    };
    let pick = |r: mend::Report| -> Vec<(String, Option<String>)> {
        r.violations
            .into_iter()
            .filter(|v| v.rule == Rule::Malformed)
            .map(|v| (v.path, v.provider_error))
            .collect()
    };
    let from_value = pick(check_value(b, &opts).expect("checkable"));
    let bytes = serde_json::to_vec(b).expect("serializable");
    let from_bytes = pick(check(&bytes, &opts).expect("checkable"));
    assert_eq!(from_value, from_bytes, "the two read paths disagree");
    from_value
}

#[test]
fn arguments_of_the_limit_pass() {
    assert!(findings(&body(arguments_of(MAX, 'a'), "gpt-5")).is_empty());
}

#[test]
fn arguments_past_the_limit_are_reported_and_left_alone() {
    let b = body(arguments_of(MAX + 1, 'a'), "gpt-5");
    let found = findings(&b);
    assert_eq!(
        found,
        vec![(
            "/input/1/arguments".to_string(),
            Some(format!("Invalid 'input[1].arguments': string too long. Expected a string with maximum length {MAX}, but got a string with length {} instead.", MAX + 1))
        )]
    );
    let fixed = repair(&b, &RepairOptions::default()).expect("repair");
    assert_eq!(fixed.body, b, "no shorter call is the one the model made");
    assert!(fixed.unrepairable.iter().any(|v| v.rule == Rule::Malformed));
}

/// The bound is in characters: two-byte characters up to it pass, one past it does not.
#[test]
fn the_bound_counts_characters_not_bytes() {
    assert!(findings(&body(arguments_of(MAX, 'é'), "gpt-5")).is_empty());
    assert_eq!(
        findings(&body(arguments_of(MAX + 1, 'é'), "gpt-5")).len(),
        1
    );
}

/// Escapes count as the characters they stand for: a text of quotes, written `\"` on
/// the wire, passes at the limit.
#[test]
fn escaped_characters_count_once() {
    assert!(findings(&body(arguments_of(MAX, '"'), "gpt-5")).is_empty());
}

/// Only the profiles that bound Responses ids bound the arguments: another provider's
/// Responses endpoint is not judged by OpenAI's limit.
#[test]
fn other_profiles_are_not_judged_by_openais_limit() {
    assert!(findings(&body(arguments_of(MAX + 1, 'a'), "deepseek-v4-flash")).is_empty());
}
