//! Stream capture against its baseline: a plain SSE line split plus one
//! `serde_json::from_slice::<Value>` per event, over the same bytes (target: at most 1.5x).
//! For Converse's binary event stream the baseline walks the frames by their length
//! prefix (no CRC check, no header read) and parses each payload the same way.
//!
//! Each group is `stream-{dialect}` with three functions over one ~2 MB stream shaped
//! like the recorded ones (the same event envelopes, deltas of a few tokens, reasoning,
//! text and a tool call; Converse's frames built with `encode_frame`, each payload with
//! its padding field `p`): `split+parse` (the baseline), `capture` (the whole stream in
//! one `feed`) and `capture-4k` (fed in 4 KB chunks, as a network delivers it).
//!
//! `cargo bench -p mend --bench stream -- --test` runs each function once (a smoke run
//! that still checks every corpus captures).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mend::canonical::capture::{encode_frame, read_stream, split_frames, StreamCapture};
use mend::Dialect;
use serde_json::{json, Value};

const TARGET: usize = 2 * 1024 * 1024;

/// Words to stream, a few tokens per delta.
const WORDS: [&str; 12] = [
    "The ",
    "weather ",
    "in ",
    "Florence ",
    "is ",
    "sunny, ",
    "with ",
    "a ",
    "high ",
    "of 31\u{b0}C ",
    "and a light \\\"breeze\\\" ",
    "today.\\n",
];

fn deltas(n: usize) -> impl Iterator<Item = &'static str> {
    WORDS.iter().copied().cycle().take(n)
}

/// The number of deltas of each kind that fills about `TARGET` bytes at `per` bytes each.
fn count(per: usize) -> usize {
    TARGET / per / 3
}

fn anthropic() -> String {
    let mut s = String::from("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5-20250929\",\"id\":\"msg_01QC4g3HwBThD4BaNtBckFDJ\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1,\"service_tier\":\"standard\"}}}\n\n");
    let n = count(150);
    s.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n");
    for (i, d) in deltas(n).enumerate() {
        s.push_str(&format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"thinking_delta\",\"thinking\":\"{d}\"}}   }}\n\n"));
        if i % 50 == 0 {
            s.push_str("event: ping\ndata: {\"type\": \"ping\"}\n\n");
        }
    }
    s.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCkYIBxgCKkCoxqLHLrx4mFL9Ox7/aHKht87WDzXfvZ7qbZKSnHV8imA5b3LXxuVqcXQ9z5sXwDx20JIW\"}}\n\n");
    s.push_str(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    );
    s.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    for d in deltas(n) {
        s.push_str(&format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{d}\"}}}}\n\n"));
    }
    s.push_str(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    );
    s.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01LRmxn9vGM1d2DZSDBowdZ1\",\"name\":\"weather\",\"input\":{}}}\n\n");
    s.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"notes\\\": \\\"\"}}\n\n");
    for d in deltas(n) {
        s.push_str(&format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{d}\"}}}}\n\n"));
    }
    s.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"}\"}}\n\n");
    s.push_str(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
    );
    s.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":4321}}\n\n");
    s.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    s
}

fn responses() -> String {
    let resp = "{\"id\":\"resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424\",\"object\":\"response\",\"created_at\":1763474589,\"status\":\"in_progress\",\"model\":\"gpt-5-2025-08-07\",\"output\":[],\"parallel_tool_calls\":true,\"reasoning\":{\"effort\":\"medium\",\"summary\":\"detailed\"},\"store\":true,\"temperature\":1,\"tool_choice\":\"auto\",\"tools\":[],\"usage\":null}";
    let mut seq = 0;
    let mut ev = |s: &mut String, ty: &str, body: &str| {
        s.push_str(&format!(
            "event: {ty}\ndata: {{\"type\":\"{ty}\",\"sequence_number\":{seq},{body}}}\n\n"
        ));
        seq += 1;
    };
    let mut s = String::new();
    ev(&mut s, "response.created", &format!("\"response\":{resp}"));
    ev(
        &mut s,
        "response.in_progress",
        &format!("\"response\":{resp}"),
    );
    let n = count(230);
    let rs = "rs_017e85da2ae23b69016a3c1251dcec819daf72930a854fd4d1";
    ev(
        &mut s,
        "response.output_item.added",
        &format!(
            "\"output_index\":0,\"item\":{{\"id\":\"{rs}\",\"type\":\"reasoning\",\"summary\":[]}}"
        ),
    );
    ev(&mut s, "response.reasoning_summary_part.added", &format!("\"item_id\":\"{rs}\",\"output_index\":0,\"summary_index\":0,\"part\":{{\"type\":\"summary_text\",\"text\":\"\"}}"));
    let mut summary = String::new();
    for d in deltas(n) {
        summary.push_str(d);
        ev(&mut s, "response.reasoning_summary_text.delta", &format!("\"item_id\":\"{rs}\",\"output_index\":0,\"summary_index\":0,\"delta\":\"{d}\",\"obfuscation\":\"2ajSAGID\""));
    }
    ev(
        &mut s,
        "response.reasoning_summary_text.done",
        &format!(
            "\"item_id\":\"{rs}\",\"output_index\":0,\"summary_index\":0,\"text\":\"{summary}\""
        ),
    );
    ev(&mut s, "response.output_item.done", &format!("\"output_index\":0,\"item\":{{\"id\":\"{rs}\",\"type\":\"reasoning\",\"encrypted_content\":\"gAAAAABqPBJWAIvEAmUTQCqLSmR9FPLSaCOTK3cpkKjorwAKVNzysthKw3djyrJ2Q0YC2MCprWw3B5aMyujyhSjp9ulmQZNuRfLtd2e_6eIVdk2Z4IXi9KUF9yMD6CyxZH9vCYUexn\",\"summary\":[{{\"type\":\"summary_text\",\"text\":\"{summary}\"}}]}}"));
    let msg = "msg_01830d662ab3856501693c32183a488190a612c410a0a39823";
    ev(&mut s, "response.output_item.added", &format!("\"output_index\":1,\"item\":{{\"id\":\"{msg}\",\"type\":\"message\",\"status\":\"in_progress\",\"content\":[],\"role\":\"assistant\"}}"));
    ev(&mut s, "response.content_part.added", &format!("\"item_id\":\"{msg}\",\"output_index\":1,\"content_index\":0,\"part\":{{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"\"}}"));
    let mut text = String::new();
    for d in deltas(n) {
        text.push_str(d);
        ev(&mut s, "response.output_text.delta", &format!("\"item_id\":\"{msg}\",\"output_index\":1,\"content_index\":0,\"delta\":\"{d}\",\"logprobs\":[],\"obfuscation\":\"NNpA6Dj2U\""));
    }
    ev(&mut s, "response.output_text.done", &format!("\"item_id\":\"{msg}\",\"output_index\":1,\"content_index\":0,\"text\":\"{text}\",\"logprobs\":[]"));
    let message = format!("{{\"id\":\"{msg}\",\"type\":\"message\",\"status\":\"completed\",\"content\":[{{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"{text}\"}}],\"role\":\"assistant\"}}");
    ev(
        &mut s,
        "response.output_item.done",
        &format!("\"output_index\":1,\"item\":{message}"),
    );
    let fc = "fc_0038f9f9083d2c12016a3c12036e2881a28509892751dc2fc0";
    ev(&mut s, "response.output_item.added", &format!("\"output_index\":2,\"item\":{{\"id\":\"{fc}\",\"type\":\"function_call\",\"status\":\"in_progress\",\"arguments\":\"\",\"call_id\":\"call_IAQ7c0mnAiAE89MUQa42HQy4\",\"name\":\"weather\"}}"));
    for d in deltas(n) {
        ev(&mut s, "response.function_call_arguments.delta", &format!("\"item_id\":\"{fc}\",\"output_index\":2,\"delta\":\"{d}\",\"obfuscation\":\"Wu1Q\""));
    }
    let call = format!("{{\"id\":\"{fc}\",\"type\":\"function_call\",\"status\":\"completed\",\"arguments\":\"{{}}\",\"call_id\":\"call_IAQ7c0mnAiAE89MUQa42HQy4\",\"name\":\"weather\"}}");
    ev(
        &mut s,
        "response.output_item.done",
        &format!("\"output_index\":2,\"item\":{call}"),
    );
    let done = resp
        .replace("\"in_progress\"", "\"completed\"")
        .replace("\"output\":[]", &format!("\"output\":[{message},{call}]"));
    ev(
        &mut s,
        "response.completed",
        &format!("\"response\":{done}"),
    );
    s
}

fn chat() -> String {
    let head = "\"id\":\"chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt\",\"object\":\"chat.completion.chunk\",\"created\":1762317021,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_cbf1785567\"";
    let mut s = format!("data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null,\"obfuscation\":\"D3Wb\"}}\n\n");
    let n = count(330);
    for d in deltas(n) {
        s.push_str(&format!("data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{\"reasoning_content\":\"{d}\"}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null,\"obfuscation\":\"NNpA6Dj2U\"}}\n\n"));
    }
    for d in deltas(n) {
        s.push_str(&format!("data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{d}\"}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null,\"obfuscation\":\"NNpA6Dj2U\"}}\n\n"));
    }
    s.push_str(&format!("data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"call_IAQ7c0mnAiAE89MUQa42HQy4\",\"type\":\"function\",\"function\":{{\"name\":\"weather\",\"arguments\":\"\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n"));
    for d in deltas(n) {
        s.push_str(&format!("data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{d}\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null,\"obfuscation\":\"Wu1Q\"}}\n\n"));
    }
    s.push_str(&format!("data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{}},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}}],\"usage\":null}}\n\n"));
    s.push_str(&format!("data: {{{head},\"choices\":[],\"usage\":{{\"prompt_tokens\":43,\"completion_tokens\":4321,\"total_tokens\":4364}}}}\n\n"));
    s.push_str("data: [DONE]\n\n");
    s
}

fn gemini() -> String {
    let tail = "\"usageMetadata\": {\"promptTokenCount\": 61, \"candidatesTokenCount\": 9, \"totalTokenCount\": 143, \"promptTokensDetails\": [{\"modality\": \"TEXT\", \"tokenCount\": 61}], \"thoughtsTokenCount\": 73}, \"modelVersion\": \"gemini-3-pro-preview\", \"responseId\": \"uVgdaduXHu-vjMcPkbqmyAM\"";
    let mut s = String::new();
    let n = count(330);
    for d in deltas(n) {
        s.push_str(&format!("data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"{d}\", \"thought\": true}}], \"role\": \"model\"}}, \"index\": 0}}], {tail}}}\r\n\r\n"));
    }
    for d in deltas(n) {
        s.push_str(&format!("data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"{d}\"}}], \"role\": \"model\"}}, \"index\": 0}}], {tail}}}\r\n\r\n"));
    }
    for i in 0..n {
        s.push_str(&format!("data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"functionCall\": {{\"name\": \"weather\", \"args\": {{\"location\": \"Florence, Italy\", \"n\": {i}}}, \"id\": \"8hd0{i}\"}}, \"thoughtSignature\": \"EsINCr8NAb4+9vt\"}}], \"role\": \"model\"}}, \"index\": 0}}], {tail}}}\r\n\r\n"));
    }
    s.push_str(&format!("data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"\", \"thoughtSignature\": \"EpEBCo4B\"}}], \"role\": \"model\"}}, \"finishReason\": \"STOP\", \"index\": 0}}], {tail}}}\r\n\r\n"));
    s
}

/// One Converse event frame, as `converse-stream` sends it: the JSON payload with its
/// padding field `p` (of a length that varies, as the recordings' does).
fn converse_frame(out: &mut Vec<u8>, event: &str, mut payload: Value, pad: usize) {
    const PAD: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    if let Value::Object(o) = &mut payload {
        o.insert("p".into(), Value::String(PAD[..pad % 40 + 3].into()));
    }
    let body = serde_json::to_vec(&payload).expect("JSON");
    out.extend(encode_frame(
        &[
            (":event-type", event),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        &body,
    ));
}

fn converse() -> Vec<u8> {
    let mut s = Vec::new();
    let n = count(190);
    converse_frame(&mut s, "messageStart", json!({"role": "assistant"}), 7);
    for (i, d) in deltas(n).enumerate() {
        let delta = json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": d}}});
        converse_frame(&mut s, "contentBlockDelta", delta, i);
    }
    let signature = json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "EqQBCkYIBxgCKkCoxqLHLrx4mFL9Ox7/aHKht87WDzXfvZ7qbZKSnHV8imA5b3LXxuVqcXQ9z5sXwDx20JIW"}}});
    converse_frame(&mut s, "contentBlockDelta", signature, 1);
    converse_frame(
        &mut s,
        "contentBlockStop",
        json!({"contentBlockIndex": 0}),
        2,
    );
    for (i, d) in deltas(n).enumerate() {
        let delta = json!({"contentBlockIndex": 1, "delta": {"text": d}});
        converse_frame(&mut s, "contentBlockDelta", delta, i);
    }
    converse_frame(
        &mut s,
        "contentBlockStop",
        json!({"contentBlockIndex": 1}),
        3,
    );
    let start = json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_Zsi5nODkqYT50BEZ9GG8ud", "name": "weather", "type": "tool_use"}}});
    converse_frame(&mut s, "contentBlockStart", start, 4);
    let input = |s: &mut Vec<u8>, piece: &str, i: usize| {
        let delta = json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": piece}}});
        converse_frame(s, "contentBlockDelta", delta, i);
    };
    input(&mut s, "{\"notes\": \"", 5);
    for (i, d) in deltas(n).enumerate() {
        input(&mut s, d, i);
    }
    input(&mut s, "\"}", 6);
    converse_frame(
        &mut s,
        "contentBlockStop",
        json!({"contentBlockIndex": 2}),
        7,
    );
    converse_frame(&mut s, "messageStop", json!({"stopReason": "tool_use"}), 8);
    let metadata = json!({"usage": {"inputTokens": 43, "outputTokens": 4321, "totalTokens": 4364}, "metrics": {"latencyMs": 52310}});
    converse_frame(&mut s, "metadata", metadata, 9);
    s
}

/// The Converse baseline: walk the frames by their length prefix, parse each payload.
fn frames_and_parse(bytes: &[u8]) -> usize {
    let word = |at: usize| -> usize {
        let b: [u8; 4] = bytes[at..at + 4].try_into().expect("four bytes");
        u32::from_be_bytes(b) as usize
    };
    let (mut at, mut n) = (0, 0);
    while at + 16 <= bytes.len() {
        let (total, headers) = (word(at), word(at + 4));
        let payload = &bytes[at + 12 + headers..at + total - 4];
        let v: Value = serde_json::from_slice(payload).expect("the corpus is JSON");
        black_box(&v);
        n += 1;
        at += total;
    }
    n
}

/// A baseline: the events of a stream split and parsed, counted.
type Baseline = fn(&[u8]) -> usize;

/// The baseline: split lines, parse each `data:` line as JSON.
fn split_and_parse(bytes: &[u8]) -> usize {
    let mut n = 0;
    for line in bytes.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(data) = line.strip_prefix(b"data:") {
            let data = data.trim_ascii_start();
            if data == b"[DONE]" {
                continue;
            }
            let v: Value = serde_json::from_slice(data).expect("the corpus is JSON");
            black_box(&v);
            n += 1;
        }
    }
    n
}

fn capture_in_chunks(dialect: Dialect, bytes: &[u8], chunk: usize) -> usize {
    let mut cap = StreamCapture::new(dialect);
    for c in bytes.chunks(chunk) {
        cap.feed(c).expect("the corpus is a good stream");
    }
    cap.finish().expect("the corpus is complete").messages.len()
}

fn capture_vs_parse(c: &mut Criterion) {
    for dialect in Dialect::ALL {
        let (bytes, baseline): (Vec<u8>, Baseline) = match dialect {
            Dialect::Anthropic => (anthropic().into_bytes(), split_and_parse),
            Dialect::OpenAiResponses => (responses().into_bytes(), split_and_parse),
            Dialect::OpenAiChat => (chat().into_bytes(), split_and_parse),
            Dialect::Gemini => (gemini().into_bytes(), split_and_parse),
            Dialect::BedrockConverse => (converse(), frames_and_parse),
        };
        let reply = read_stream(dialect, &bytes)
            .unwrap_or_else(|e| panic!("{dialect} corpus is not a good stream: {e}"));
        assert!(!reply.messages.is_empty());
        // The corpus holds a reasoning, a text and a call, and the baseline sees every
        // event the capture does.
        let kinds: Vec<&str> = reply.messages[0].parts.iter().map(|p| p.kind()).collect();
        assert!(
            ["reasoning", "text", "tool_call"].iter().all(|k| reply
                .messages
                .iter()
                .flat_map(|m| &m.parts)
                .any(|p| p.kind() == *k)),
            "{dialect} corpus gives {kinds:?}"
        );
        if dialect == Dialect::BedrockConverse {
            let frames = split_frames(&bytes).expect("good frames").len();
            assert_eq!(frames, baseline(&bytes), "the baseline walks every frame");
        }

        let mut group = c.benchmark_group(format!("stream-{dialect}"));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group
            .sample_size(30)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        group.bench_function("split+parse", |b| b.iter(|| baseline(black_box(&bytes))));
        group.bench_function("capture", |b| {
            b.iter(|| read_stream(dialect, black_box(&bytes)).expect("captured"))
        });
        group.bench_function("capture-4k", |b| {
            b.iter(|| capture_in_chunks(dialect, black_box(&bytes), 4096))
        });
        group.finish();
    }
}

criterion_group!(benches, capture_vs_parse);
criterion_main!(benches);
