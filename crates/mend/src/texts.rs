//! The providers' own error texts, filled with the real ids and indexes.
//!
//! Each text comes from `shared/docs/provider-errors.jsonl` (the evidence behind the
//! rules); the id named in a comment is the row it reproduces.

use crate::dialect::Dialect;
use crate::profile::Profile;

/// Index of a wire item, for texts that name `messages[N]`.
pub(crate) type Ix = u32;

/// `tool-result-without-call`.
pub(crate) fn orphan_result(
    d: Dialect,
    p: &Profile,
    call_id: &str,
    at: Ix,
    sub: Option<Ix>,
) -> String {
    match d {
        // openai_chat-06 / openai_chat-26
        Dialect::OpenAiChat if p.name == "mistral" => "Unexpected role 'tool' after role 'user'".into(),
        Dialect::OpenAiChat => {
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".into()
        }
        // openai_responses-04
        Dialect::OpenAiResponses => format!("No tool call found for function call output with call_id {call_id}."),
        // anthropic-09
        Dialect::Anthropic => format!(
            "messages.{at}.content.{}: unexpected `tool_use_id` found in `tool_result` blocks: {call_id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
            sub.unwrap_or(0)
        ),
        // gemini-09
        Dialect::Gemini => "Please ensure that function response turn comes immediately after a function call turn.".into(),
    }
}

/// `tool-call-without-result`.
pub(crate) fn unanswered_call(d: Dialect, p: &Profile, call_ids: &[&str], at: Ix) -> String {
    let ids = call_ids.join(", ");
    match d {
        // openai_chat-10 / openai_chat-02
        Dialect::OpenAiChat if p.name == "mistral" => "Not the same number of function calls and responses".into(),
        Dialect::OpenAiChat => format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
        ),
        // openai_responses-05, and DeepSeek's wording (fixture deepseek-responses-rejects-interleaved-function-calls)
        Dialect::OpenAiResponses if p.name == "deepseek" => format!("No tool output found for tool call {ids}."),
        Dialect::OpenAiResponses => format!("No tool output found for function call {ids}."),
        // anthropic-01
        Dialect::Anthropic => format!(
            "messages.{at}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
        ),
        // gemini-02
        Dialect::Gemini => "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.".into(),
    }
}

/// `duplicate-call-id`.
pub(crate) fn duplicate(
    d: Dialect,
    call_id: &str,
    first: Ix,
    second: Ix,
    sub: Option<Ix>,
) -> Option<String> {
    match d {
        // openai_chat-12
        Dialect::OpenAiChat => Some(format!(
            "Invalid parameter: Duplicate value for 'tool_call_id' of '{call_id}', in messages[{first}] and messages[{second}]."
        )),
        // anthropic-11
        Dialect::Anthropic => Some(format!("messages.{second}.content.{}: `tool_use` ids must be unique", sub.unwrap_or(0))),
        Dialect::OpenAiResponses | Dialect::Gemini => None,
    }
}

/// `thinking-not-first`.
pub(crate) fn thinking_not_first(at: Ix, found: &str, loop_opener: bool) -> String {
    if loop_opener {
        // anthropic-03 / anthropic-10
        format!(
            "messages.{at}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
        )
    } else {
        // anthropic-27
        format!(
            "messages.{at}.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `{found}`."
        )
    }
}
