//! `Reply::usage`: the tokens and the model a response reports, read from every recorded
//! response and stream that carries them, and the cache and thinking counts added where
//! a provider counts them apart.

use mend::canonical::capture::{read_response, read_stream, Usage};
use mend::Dialect;
use serde_json::Value;

use crate::support::{converse_fixture_dirs, converse_stream_bytes, files_named, shared_dir};

/// Whether the recorded bytes carry a usage object at all (a chat stream has one only
/// when the client asked for it).
fn reports_usage(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    ["\"usage\"", "\"usageMetadata\""]
        .iter()
        .any(|k| text.contains(k))
}

#[test]
fn every_recorded_answer_that_reports_usage_gives_tokens_and_its_model() {
    let Some(shared) = shared_dir() else { return };
    let mut read = 0;
    for d in [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::Gemini,
    ] {
        let root = shared.join("fixtures").join(d.name());
        for (name, stream) in [("response.json", false), ("response.sse", true)] {
            for f in files_named(&root, name) {
                let bytes = std::fs::read(&f).expect("readable");
                let reply = if stream {
                    read_stream(d, &bytes)
                } else {
                    read_response(d, &bytes)
                };
                // Errors, cut streams and the like are the capture tests' business.
                let Ok(reply) = reply else { continue };
                if !reports_usage(&bytes) {
                    continue;
                }
                let u = reply.usage(d);
                let at = f.display();
                assert!(u.input_tokens.is_some_and(|n| n > 0), "{at}: {u:?}");
                assert!(u.output_tokens.is_some(), "{at}: {u:?}");
                assert!(
                    u.model.as_deref().is_some_and(|m| !m.is_empty()),
                    "{at}: {u:?}"
                );
                read += 1;
            }
        }
    }
    for dir in converse_fixture_dirs() {
        let Some(bytes) = converse_stream_bytes(&dir) else {
            continue;
        };
        let Ok(reply) = read_stream(Dialect::BedrockConverse, &bytes) else {
            continue;
        };
        let u = reply.usage(Dialect::BedrockConverse);
        assert!(
            u.input_tokens.is_some_and(|n| n > 0),
            "{}: {u:?}",
            dir.display()
        );
        assert!(u.output_tokens.is_some(), "{}: {u:?}", dir.display());
        assert_eq!(u.model, None, "a Converse answer names no model");
        read += 1;
    }
    assert!(read >= 100, "only {read} recorded answers reported usage");
}

#[test]
fn cached_and_thinking_tokens_are_counted_where_the_provider_counts_them_apart() {
    let cases: [(Dialect, Value, Usage); 5] = [
        (
            Dialect::OpenAiChat,
            serde_json::json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-2024-08-06",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 120, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 100}}}),
            usage(120, 7, Some("gpt-4o-2024-08-06"), Some("chatcmpl-1")),
        ),
        (
            Dialect::OpenAiResponses,
            serde_json::json!({"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5",
                "output": [{"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}],
                "usage": {"input_tokens": 50, "output_tokens": 300, "output_tokens_details": {"reasoning_tokens": 256}}}),
            usage(50, 300, Some("gpt-5"), Some("resp_1")),
        ),
        (
            Dialect::Anthropic,
            serde_json::json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 3000, "output_tokens": 12}}),
            usage(3210, 12, Some("claude-sonnet-4-5"), Some("msg_1")),
        ),
        (
            Dialect::Gemini,
            serde_json::json!({"candidates": [{"index": 0, "content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 65, "candidatesTokenCount": 16, "thoughtsTokenCount": 138},
                "modelVersion": "gemini-3-pro-preview", "responseId": "r-1"}),
            usage(65, 154, Some("gemini-3-pro-preview"), Some("r-1")),
        ),
        (
            Dialect::BedrockConverse,
            serde_json::json!({"output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}}, "stopReason": "end_turn",
                "usage": {"inputTokens": 4, "cacheReadInputTokens": 40, "cacheWriteInputTokens": 400, "outputTokens": 9, "totalTokens": 453}}),
            usage(444, 9, None, None),
        ),
    ];
    for (d, body, want) in cases {
        let reply = read_response(d, body.to_string().as_bytes()).expect("a response");
        assert_eq!(reply.usage(d), want, "{d}");
    }
    // Nothing reported, nothing made up.
    let bare = serde_json::json!({"id": "chatcmpl-2", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]});
    let reply =
        read_response(Dialect::OpenAiChat, bare.to_string().as_bytes()).expect("a response");
    assert_eq!(
        reply.usage(Dialect::OpenAiChat),
        Usage {
            response_id: Some("chatcmpl-2".into()),
            ..Usage::default()
        }
    );
}

fn usage(input: u64, output: u64, model: Option<&str>, id: Option<&str>) -> Usage {
    Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        model: model.map(str::to_string),
        response_id: id.map(str::to_string),
    }
}
