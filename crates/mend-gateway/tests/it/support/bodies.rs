//! Request bodies per dialect: a valid tool loop, and one whose call has no result.

use mend::Dialect;
use serde_json::{json, Value};

/// A valid history that ends in a tool result.
pub fn valid(d: Dialect) -> Value {
    match d {
        // No model in the body: it is in the path.
        Dialect::BedrockConverse => json!({"messages": [
            {"role": "user", "content": [{"text": "weather in Paris?"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "18C and sunny"}], "status": "success"}}]}],
            "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather",
                "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}}}}]}}),
        Dialect::OpenAiChat => json!({"model": "gpt-4o", "messages": [
            {"role": "user", "content": "weather in Paris?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18C and sunny"}],
            "tools": [{"type": "function", "function": {"name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]}),
        Dialect::OpenAiResponses => json!({"model": "gpt-4o", "input": [
            {"role": "user", "content": "weather in Paris?"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "18C and sunny"}],
            "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]}),
        Dialect::Anthropic => json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [
            {"role": "user", "content": "weather in Paris?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C and sunny"}]}],
            "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]}),
        Dialect::Gemini => json!({"contents": [
            {"role": "user", "parts": [{"text": "weather in Paris?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2ln"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"result": "18C and sunny"}}}]}],
            "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": {"type": "object"}}]}]}),
    }
}

/// A history whose tool call is never answered (`tool-call-without-result`): the
/// result was replaced by a user question.
pub fn unanswered(d: Dialect) -> Value {
    let mut b = valid(d);
    let key = d.history_key();
    let history = b[key].as_array_mut().expect("an array history");
    history.pop();
    history.push(match d {
        Dialect::Gemini => json!({"role": "user", "parts": [{"text": "and?"}]}),
        Dialect::Anthropic => {
            json!({"role": "user", "content": [{"type": "text", "text": "and?"}]})
        }
        Dialect::BedrockConverse => json!({"role": "user", "content": [{"text": "and?"}]}),
        _ => json!({"role": "user", "content": "and?"}),
    });
    b
}

/// The provider's words for [`unanswered`], as mend quotes them.
pub fn unanswered_provider_text(d: Dialect) -> &'static str {
    match d {
        Dialect::BedrockConverse => "Expected toolResult blocks at messages.2.content",
        Dialect::OpenAiChat => {
            "An assistant message with 'tool_calls' must be followed by tool messages"
        }
        Dialect::OpenAiResponses => "No tool output found for function call call_1.",
        Dialect::Anthropic => {
            "`tool_use` ids were found without `tool_result` blocks immediately after"
        }
        Dialect::Gemini => {
            "number of function response parts is equal to the number of function call parts"
        }
    }
}
