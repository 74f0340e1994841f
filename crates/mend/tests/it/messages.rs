//! What a finding says matches the body: a message must not name what is not there.

use mend::{check_value, CheckOptions, Dialect, Rule};
use serde_json::{json, Value};

fn unanswered_messages(d: Dialect, body: &Value) -> Vec<String> {
    let opts = CheckOptions {
        dialect: Some(d),
        ..CheckOptions::default()
    };
    let report = check_value(body, &opts).expect("a checkable body");
    report
        .violations
        .iter()
        .filter(|v| v.rule == Rule::ToolCallWithoutResult)
        .map(|v| v.message.clone())
        .collect()
}

/// Gemini calls usually carry no id and are paired by name: an unanswered one is not a
/// call "whose id no result carries".
#[test]
fn an_idless_gemini_call_is_not_said_to_have_an_id() {
    let body = json!({"contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]},
        {"role": "user", "parts": [{"text": "Never mind."}]}
    ]});
    let messages = unanswered_messages(Dialect::Gemini, &body);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].contains("`get_weather`"), "{}", messages[0]);
    assert!(messages[0].contains("no id"), "{}", messages[0]);
    assert!(!messages[0].contains("carries its id"), "{}", messages[0]);
}

/// A call with an id is still named by it.
#[test]
fn a_call_with_an_id_is_named_by_it() {
    let body = json!({"model": "gpt-4o", "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "user", "content": "Never mind."}
    ]});
    let messages = unanswered_messages(Dialect::OpenAiChat, &body);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("`call_1`") && messages[0].contains("carries its id"),
        "{}",
        messages[0]
    );
}

/// Mistral's text for a tool message that answers no call names what came before its
/// run of tool messages: the id it does not know after an assistant message with calls
/// (pydantic/pydantic-ai#3733), the role otherwise.
#[test]
fn mistral_orphan_results_are_quoted_in_mistrals_words() {
    let opts = CheckOptions {
        dialect: Some(Dialect::OpenAiChat),
        provider: Some("mistral".into()),
        ..CheckOptions::default()
    };
    let quoted = |body: &Value| -> Vec<String> {
        check_value(body, &opts)
            .expect("a checkable body")
            .violations
            .into_iter()
            .filter(|v| v.rule == Rule::ToolResultWithoutCall)
            .filter_map(|v| v.provider_error)
            .collect()
    };
    let after_calls = json!({"model": "devstral-2512", "messages": [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "pR1CHbWdz", "type": "function",
            "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "Xk4mQ9zT2", "content": "a.txt"}
    ]});
    assert_eq!(
        quoted(&after_calls),
        ["Unexpected tool call id Xk4mQ9zT2 in tool results"]
    );
    let after_assistant_text = json!({"model": "devstral-2512", "messages": [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": "Listing them."},
        {"role": "tool", "tool_call_id": "Xk4mQ9zT2", "content": "a.txt"}
    ]});
    assert_eq!(
        quoted(&after_assistant_text),
        ["Unexpected role 'tool' after role 'assistant'"]
    );
    let after_user = json!({"model": "devstral-2512", "messages": [
        {"role": "user", "content": "List the files."},
        {"role": "tool", "tool_call_id": "Xk4mQ9zT2", "content": "a.txt"}
    ]});
    assert_eq!(
        quoted(&after_user),
        ["Unexpected role 'tool' after role 'user'"]
    );
}
