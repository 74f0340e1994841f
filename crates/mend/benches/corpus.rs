//! The benchmark corpus: realistic agent-loop request bodies of every dialect, grown to
//! a target size.
//!
//! A body is a system prompt, a tool set, and a history of rounds: a user question, one
//! or two assistant steps that reason and make parallel tool calls, the tool results,
//! and a final assistant step with reasoning and text. The last round stops after its
//! tool results, as a request in the middle of a tool loop does. Shapes follow the
//! fixtures under `/work/shared/fixtures` (ids, signatures, encrypted reasoning).
//!
//! Invariant: every body is deterministic for a (dialect, size) and checks valid, so a
//! benchmark over it measures the path real traffic takes. Shared by `benches/check.rs`,
//! `benches/ops.rs`, `examples/gen_corpus.rs`, `examples/check_pair.rs` and
//! `tests/bench_corpus.rs` through `#[path]`.

use mend::{CheckOptions, Dialect};
use serde_json::{json, Value};

/// A corpus size: a name for tables and file names, and a target in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    /// `5KB`, `200KB`, `5MB`.
    pub name: &'static str,
    /// Target body size in bytes; a body ends within one round below it.
    pub bytes: usize,
}

/// The sizes the benchmark runs: a short exchange, a long session, a ~2,000-round loop.
pub const SIZES: [Size; 3] = [
    Size {
        name: "5KB",
        bytes: 5 * 1024,
    },
    Size {
        name: "200KB",
        bytes: 200 * 1024,
    },
    Size {
        name: "5MB",
        bytes: 5 * 1024 * 1024,
    },
];

/// The body of `dialect` at `size` and the options that check it in that dialect, or
/// why it does not check valid (which would break the invariant above). Not every
/// program that includes this file uses it.
#[allow(dead_code)]
pub fn checked_body(dialect: Dialect, size: Size) -> Result<(Vec<u8>, CheckOptions), String> {
    let bytes = body(dialect, size.bytes);
    let opts = CheckOptions {
        dialect: Some(dialect),
        ..CheckOptions::default()
    };
    match mend::check(&bytes, &opts) {
        Ok(r) if r.valid() => Ok((bytes, opts)),
        Ok(r) => Err(format!(
            "the {dialect} {} body is not valid: {:?}",
            size.name, r.violations
        )),
        Err(e) => Err(format!("the {dialect} {} body: {e}", size.name)),
    }
}

/// A request body of `dialect`, at most about `target` bytes, compact JSON as SDKs send it.
pub fn body(dialect: Dialect, target: usize) -> Vec<u8> {
    let mut g = Gen {
        rng: Rng(0x6d65_6e64 ^ ((target as u64) << 8) ^ (dialect as u64)),
        dialect,
        step: 0,
    };
    let (mut envelope, key) = g.envelope();
    let mut history: Vec<Value> = Vec::new();
    // Serialized size so far: the envelope with an empty history, plus each item and comma.
    let mut len = serde_json::to_vec(&envelope).map(|v| v.len()).unwrap_or(0);
    let measure = |items: &[Value]| -> usize {
        items
            .iter()
            .map(|v| serde_json::to_vec(v).map(|b| b.len() + 1).unwrap_or(0))
            .sum()
    };
    loop {
        let open = g.round_open();
        let close = g.round_close();
        let (a, b) = (measure(&open), measure(&close));
        if len + a + b <= target {
            history.extend(open);
            history.extend(close);
            len += a + b;
            continue;
        }
        // The request stops mid-loop: a last question and its tool results. Draw a few
        // candidates and keep the first that fits (else the smallest), so small bodies
        // land near their target instead of one large round past it.
        let mut best = (a, open);
        for _ in 0..64 {
            if len + best.0 <= target {
                break;
            }
            let open = g.round_open();
            let a = measure(&open);
            if a < best.0 {
                best = (a, open);
            }
        }
        history.extend(best.1);
        break;
    }
    envelope[key] = Value::Array(history);
    serde_json::to_vec(&envelope).expect("a serde_json::Value always serializes")
}

/// SplitMix64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.range(0, xs.len() - 1)]
    }
    fn chars(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| alphabet[self.range(0, alphabet.len() - 1)] as char)
            .collect()
    }
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const LOWER_ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &[u8] = b"0123456789abcdef";
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const WORDS: &[&str] = &[
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "that",
    "for",
    "it",
    "with",
    "as",
    "on",
    "this",
    "function",
    "module",
    "request",
    "response",
    "error",
    "value",
    "config",
    "parser",
    "test",
    "file",
    "line",
    "call",
    "result",
    "history",
    "token",
    "budget",
    "cache",
    "index",
    "buffer",
    "should",
    "would",
    "could",
    "check",
    "read",
    "write",
    "update",
    "return",
    "handle",
    "look",
    "first",
    "next",
    "last",
    "before",
    "after",
    "because",
    "since",
    "then",
    "now",
    "again",
    "user",
    "model",
    "tool",
    "message",
    "assistant",
    "output",
    "input",
    "field",
    "type",
    "Rust",
    "JSON",
    "HTTP",
    "timeout",
    "retry",
    "panic",
    "thread",
    "lock",
    "queue",
    "stream",
    "let",
    "me",
    "I",
    "we",
    "need",
    "see",
    "find",
    "where",
    "why",
    "how",
    "which",
    "what",
    "café",
    "naïve",
    "—",
    "“quoted”",
    "→",
    "✓",
    "日本語",
    "über",
];

const FILES: &[&str] = &[
    "src/lib.rs",
    "src/main.rs",
    "src/config.rs",
    "src/http/client.rs",
    "src/store/sqlite.rs",
    "tests/integration.rs",
    "Cargo.toml",
    "README.md",
    "docs/DESIGN.md",
    "web/src/App.tsx",
];

const CODE: &[&str] = &[
    "fn main() {",
    "    let config = Config::load(\"app.toml\")?;",
    "    let client = Client::builder().timeout(Duration::from_secs(30)).build()?;",
    "    for (i, item) in items.iter().enumerate() {",
    "        if item.is_empty() { continue; }",
    "    }",
    "    println!(\"{}\\t{}\", name, value);",
    "    return Err(Error::Timeout { after: elapsed });",
    "}",
    "#[derive(Debug, Clone, Serialize)]",
    "pub struct Request<'a> { pub model: &'a str, pub messages: Vec<Message> }",
    "// TODO: handle the 'retry-after' header",
    "impl Drop for Guard { fn drop(&mut self) { self.0.unlock(); } }",
    "    match status { 429 | 503 => backoff.wait().await, _ => break }",
    "    assert_eq!(parse(\"{\\\"a\\\": 1}\"), Ok(json!({\"a\": 1})));",
];

/// (name, description, parameters as a JSON schema in the OpenAI / Anthropic form).
fn tool_set() -> Vec<(&'static str, &'static str, Value)> {
    let path = json!({"type": "string", "description": "Path relative to the repository root."});
    vec![
        (
            "read_file",
            "Read a file from the workspace. Returns its contents with line numbers.",
            json!({"type": "object", "properties": {"path": path, "start_line": {"type": "integer", "description": "First line to read (1-based)."}, "end_line": {"type": "integer", "description": "Last line to read, inclusive."}}, "required": ["path"], "additionalProperties": false}),
        ),
        (
            "grep",
            "Search the workspace for a regular expression and return matching lines.",
            json!({"type": "object", "properties": {"pattern": {"type": "string", "description": "A Rust regex."}, "glob": {"type": "string", "description": "Only files matching this glob."}, "max_results": {"type": "integer"}}, "required": ["pattern"], "additionalProperties": false}),
        ),
        (
            "run_command",
            "Run a shell command in the workspace and return stdout, stderr and the exit code.",
            json!({"type": "object", "properties": {"command": {"type": "string"}, "timeout_secs": {"type": "integer", "description": "Kill the command after this many seconds."}}, "required": ["command"], "additionalProperties": false}),
        ),
        (
            "list_dir",
            "List the entries of a directory.",
            json!({"type": "object", "properties": {"path": path}, "required": ["path"], "additionalProperties": false}),
        ),
        (
            "web_search",
            "Search the web and return the top results with titles, URLs and snippets.",
            json!({"type": "object", "properties": {"query": {"type": "string"}, "count": {"type": "integer", "minimum": 1, "maximum": 10}}, "required": ["query"], "additionalProperties": false}),
        ),
    ]
}

const SYSTEM: &str = "You are a coding agent working in a Rust repository. Use the tools to read, \
search and run code before you answer. Prefer small, verifiable steps; run the tests after \
every change. When several lookups are independent, make the tool calls in parallel. \
Answer concisely and cite file paths with line numbers.";

struct Gen {
    rng: Rng,
    dialect: Dialect,
    /// Model steps so far, to give each response its own id key.
    step: u64,
}

/// One tool call of a step: id, name, arguments, and the result text the tool returns.
struct Call {
    id: String,
    name: &'static str,
    args: Value,
    result: String,
}

impl Gen {
    fn words(&mut self, lo: usize, hi: usize) -> String {
        let n = self.rng.range(lo, hi);
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(if self.rng.range(0, 14) == 0 {
                    '\n'
                } else {
                    ' '
                });
            }
            s.push_str(self.rng.pick(WORDS));
        }
        s.push('.');
        s
    }

    fn tool_output(&mut self, name: &str) -> String {
        match name {
            "read_file" | "grep" => {
                let file = self.rng.pick(FILES);
                let n = self.rng.range(3, 16);
                let start = self.rng.range(1, 400);
                (0..n)
                    .map(|k| format!("{file}:{}: {}", start + k, self.rng.pick(CODE)))
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            "run_command" => format!(
                "exit code: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                self.rng.range(0, 1),
                (0..self.rng.range(2, 10))
                    .map(|k| format!("test tests::case_{k} ... ok"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                self.words(0, 20)
            ),
            "list_dir" => (0..self.rng.range(3, 12))
                .map(|_| self.rng.pick(FILES).to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => {
                let hits: Vec<Value> = (0..self.rng.range(2, 4))
                    .map(|k| {
                        json!({"title": self.words(3, 8), "url": format!("https://example.com/{}/{k}", self.rng.chars(LOWER_ALNUM, 10)), "snippet": self.words(10, 30)})
                    })
                    .collect();
                Value::Array(hits).to_string()
            }
        }
    }

    fn calls(&mut self) -> Vec<Call> {
        let n = self.rng.range(1, 3);
        (0..n)
            .map(|_| {
                let name = self
                    .rng
                    .pick(&["read_file", "grep", "run_command", "list_dir", "web_search"]);
                let args = match name {
                    "read_file" => {
                        let start = self.rng.range(1, 300);
                        json!({"path": self.rng.pick(FILES), "start_line": start, "end_line": start + self.rng.range(10, 80)})
                    }
                    "grep" => json!({"pattern": format!("fn {}\\(", self.rng.pick(WORDS)), "glob": "**/*.rs"}),
                    "run_command" => json!({"command": "cargo test -p mend --lib -- --nocapture", "timeout_secs": 120}),
                    "list_dir" => json!({"path": "src"}),
                    _ => json!({"query": self.words(3, 8), "count": 5}),
                };
                let id = self.call_id();
                let result = self.tool_output(name);
                Call {
                    id,
                    name,
                    args,
                    result,
                }
            })
            .collect()
    }

    fn call_id(&mut self) -> String {
        match self.dialect {
            Dialect::OpenAiChat => format!("call_00_{}", self.rng.chars(ALNUM, 24)),
            Dialect::OpenAiResponses => format!("call_{}", self.rng.chars(ALNUM, 24)),
            Dialect::Anthropic => format!("toolu_01{}", self.rng.chars(ALNUM, 22)),
            Dialect::Gemini => self.rng.chars(LOWER_ALNUM, 8),
            Dialect::BedrockConverse => format!("tooluse_{}", self.rng.chars(ALNUM, 22)),
        }
    }

    /// An opaque blob (signature, encrypted reasoning) of a realistic length.
    fn blob(&mut self, alphabet: &[u8], lo: usize, hi: usize) -> String {
        let n = self.rng.range(lo, hi);
        self.rng.chars(alphabet, n)
    }

    /// A Responses item id: `{prefix}_` + 50 hex digits whose first 16 are the response's key.
    fn item_id(&mut self, prefix: &str, key: &str) -> String {
        format!("{prefix}_{key}{}", self.rng.chars(HEX, 34))
    }

    /// The body without its history, and the key the history goes under.
    fn envelope(&mut self) -> (Value, &'static str) {
        let tools = tool_set();
        match self.dialect {
            Dialect::OpenAiChat => (
                json!({
                    "model": "deepseek-reasoner",
                    "messages": [],
                    "tools": tools.iter().map(|(n, d, p)| json!({"type": "function", "function": {"name": n, "description": d, "parameters": p, "strict": true}})).collect::<Vec<_>>(),
                    "tool_choice": "auto",
                    "stream": true,
                    "stream_options": {"include_usage": true},
                    "max_tokens": 8192,
                }),
                "messages",
            ),
            Dialect::OpenAiResponses => (
                json!({
                    "model": "gpt-5",
                    "instructions": SYSTEM,
                    "input": [],
                    "tools": tools.iter().map(|(n, d, p)| json!({"type": "function", "name": n, "description": d, "parameters": p, "strict": true})).collect::<Vec<_>>(),
                    "tool_choice": "auto",
                    "parallel_tool_calls": true,
                    "reasoning": {"effort": "medium", "summary": "auto"},
                    "include": ["reasoning.encrypted_content"],
                    "store": false,
                    "stream": true,
                }),
                "input",
            ),
            Dialect::Anthropic => (
                json!({
                    "model": "claude-sonnet-4-5-20250929",
                    "max_tokens": 16000,
                    "system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
                    "messages": [],
                    "tools": tools.iter().map(|(n, d, p)| json!({"name": n, "description": d, "input_schema": p})).collect::<Vec<_>>(),
                    "tool_choice": {"type": "auto"},
                    "thinking": {"type": "enabled", "budget_tokens": 8000},
                    "stream": true,
                }),
                "messages",
            ),
            Dialect::Gemini => (
                json!({
                    "contents": [],
                    "systemInstruction": {"role": "user", "parts": [{"text": SYSTEM}]},
                    "tools": [{"functionDeclarations": tools.iter().map(|(n, d, p)| json!({"name": n, "description": d, "parameters": gemini_schema(p)})).collect::<Vec<_>>()}],
                    "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
                    "generationConfig": {"maxOutputTokens": 8192, "thinkingConfig": {"includeThoughts": true, "thinkingLevel": "HIGH"}},
                }),
                "contents",
            ),
            Dialect::BedrockConverse => (
                json!({
                    "system": [{"text": SYSTEM}, {"cachePoint": {"type": "default"}}],
                    "messages": [],
                    "toolConfig": {
                        "tools": tools.iter().map(|(n, d, p)| json!({"toolSpec": {"name": n, "description": d, "inputSchema": {"json": p}}})).collect::<Vec<_>>(),
                        "toolChoice": {"auto": {}},
                    },
                    "inferenceConfig": {"maxTokens": 16000},
                    "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 8000}},
                }),
                "messages",
            ),
        }
    }

    /// A user question, then one or two steps of reasoning and parallel calls, each
    /// followed by its results.
    fn round_open(&mut self) -> Vec<Value> {
        let question = self.words(8, 40);
        let mut items = vec![self.user_text(&question)];
        let steps = if self.rng.range(0, 4) == 0 { 2 } else { 1 };
        for _ in 0..steps {
            let calls = self.calls();
            items.extend(self.call_step(&calls));
            items.extend(self.results(&calls));
        }
        items
    }

    /// The final assistant step of a round: reasoning and text.
    fn round_close(&mut self) -> Vec<Value> {
        let text = self.words(20, 80);
        self.text_step(&text)
    }

    fn user_text(&mut self, text: &str) -> Value {
        match self.dialect {
            Dialect::OpenAiChat => json!({"role": "user", "content": text}),
            Dialect::OpenAiResponses => {
                json!({"role": "user", "content": [{"type": "input_text", "text": text}]})
            }
            Dialect::Anthropic => {
                json!({"role": "user", "content": [{"type": "text", "text": text}]})
            }
            Dialect::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
            Dialect::BedrockConverse => json!({"role": "user", "content": [{"text": text}]}),
        }
    }

    /// The wire items of one assistant step that reasons and makes `calls`.
    fn call_step(&mut self, calls: &[Call]) -> Vec<Value> {
        self.step += 1;
        let thought = self.words(15, 60);
        match self.dialect {
            Dialect::OpenAiChat => {
                let content = if self.rng.range(0, 1) == 0 {
                    Value::Null
                } else {
                    Value::String(self.words(5, 20))
                };
                vec![json!({
                    "role": "assistant",
                    "content": content,
                    "reasoning_content": thought,
                    "tool_calls": calls.iter().map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args.to_string()}})).collect::<Vec<_>>(),
                })]
            }
            Dialect::OpenAiResponses => {
                let key = self.rng.chars(HEX, 16);
                let mut items = vec![self.reasoning_item(&key, &thought)];
                for c in calls {
                    let id = self.item_id("fc", &key);
                    items.push(json!({"type": "function_call", "id": id, "call_id": c.id, "name": c.name, "arguments": c.args.to_string(), "status": "completed"}));
                }
                items
            }
            Dialect::Anthropic => {
                let mut blocks = vec![self.thinking_block(&thought)];
                if self.rng.range(0, 1) == 0 {
                    blocks.push(json!({"type": "text", "text": self.words(5, 20)}));
                }
                for c in calls {
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.args}),
                    );
                }
                vec![json!({"role": "assistant", "content": blocks})]
            }
            Dialect::Gemini => {
                let mut parts = vec![json!({"text": thought, "thought": true})];
                for (k, c) in calls.iter().enumerate() {
                    let mut part =
                        json!({"functionCall": {"id": c.id, "name": c.name, "args": c.args}});
                    if k == 0 {
                        // Gemini 3 signs the first call of each step.
                        part["thoughtSignature"] = Value::String(self.blob(BASE64, 300, 1000));
                    }
                    parts.push(part);
                }
                vec![json!({"role": "model", "parts": parts})]
            }
            Dialect::BedrockConverse => {
                let mut blocks = vec![self.reasoning_block(&thought)];
                for c in calls {
                    blocks.push(
                        json!({"toolUse": {"toolUseId": c.id, "name": c.name, "input": c.args}}),
                    );
                }
                vec![json!({"role": "assistant", "content": blocks})]
            }
        }
    }

    /// The results of `calls`, in the wire form of the dialect.
    fn results(&mut self, calls: &[Call]) -> Vec<Value> {
        match self.dialect {
            Dialect::OpenAiChat => calls
                .iter()
                .map(|c| json!({"role": "tool", "tool_call_id": c.id, "content": c.result}))
                .collect(),
            Dialect::OpenAiResponses => calls
                .iter()
                .map(|c| json!({"type": "function_call_output", "call_id": c.id, "output": c.result}))
                .collect(),
            Dialect::Anthropic => {
                let blocks: Vec<Value> = calls
                    .iter()
                    .map(|c| {
                        let content = if self.rng.range(0, 1) == 0 {
                            Value::String(c.result.clone())
                        } else {
                            json!([{"type": "text", "text": c.result}])
                        };
                        json!({"type": "tool_result", "tool_use_id": c.id, "content": content, "is_error": false})
                    })
                    .collect();
                vec![json!({"role": "user", "content": blocks})]
            }
            Dialect::Gemini => {
                let parts: Vec<Value> = calls
                    .iter()
                    .map(|c| json!({"functionResponse": {"id": c.id, "name": c.name, "response": {"result": c.result}}}))
                    .collect();
                vec![json!({"role": "user", "parts": parts})]
            }
            Dialect::BedrockConverse => {
                let blocks: Vec<Value> = calls
                    .iter()
                    .map(|c| json!({"toolResult": {"toolUseId": c.id, "content": [{"text": c.result}], "status": "success"}}))
                    .collect();
                vec![json!({"role": "user", "content": blocks})]
            }
        }
    }

    /// The wire items of one assistant step that reasons and answers in text.
    fn text_step(&mut self, text: &str) -> Vec<Value> {
        self.step += 1;
        let thought = self.words(10, 40);
        match self.dialect {
            Dialect::OpenAiChat => vec![json!({
                "role": "assistant",
                "content": text,
                "reasoning_content": thought,
            })],
            Dialect::OpenAiResponses => {
                let key = self.rng.chars(HEX, 16);
                let reasoning = self.reasoning_item(&key, &thought);
                let id = self.item_id("msg", &key);
                vec![
                    reasoning,
                    json!({"type": "message", "id": id, "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}),
                ]
            }
            Dialect::Anthropic => vec![json!({
                "role": "assistant",
                "content": [self.thinking_block(&thought), {"type": "text", "text": text}],
            })],
            Dialect::Gemini => {
                let sig = self.blob(BASE64, 150, 600);
                vec![json!({"role": "model", "parts": [
                    {"text": thought, "thought": true},
                    {"text": text, "thoughtSignature": sig},
                ]})]
            }
            Dialect::BedrockConverse => vec![json!({
                "role": "assistant",
                "content": [self.reasoning_block(&thought), {"text": text}],
            })],
        }
    }

    /// A Converse `reasoningContent` block, signed as Claude signs it.
    fn reasoning_block(&mut self, thought: &str) -> Value {
        let signature = self.blob(BASE64, 300, 900);
        json!({"reasoningContent": {"reasoningText": {"text": thought, "signature": signature}}})
    }

    fn reasoning_item(&mut self, key: &str, summary: &str) -> Value {
        let id = self.item_id("rs", key);
        let encrypted = format!("gAAAAAB{}", self.blob(BASE64URL, 600, 1400));
        json!({
            "type": "reasoning",
            "id": id,
            "summary": [{"type": "summary_text", "text": format!("**Planning the next step**\n\n{summary}")}],
            "encrypted_content": encrypted,
        })
    }

    fn thinking_block(&mut self, thought: &str) -> Value {
        let sig = self.blob(BASE64, 300, 900);
        json!({"type": "thinking", "thinking": thought, "signature": sig})
    }
}

/// The OpenAPI-subset schema Gemini declarations use: upper-case types, no
/// `additionalProperties`.
fn gemini_schema(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| *k != "additionalProperties")
                .map(|(k, v)| match (k.as_str(), v) {
                    ("type", Value::String(t)) => (k.clone(), Value::String(t.to_uppercase())),
                    _ => (k.clone(), gemini_schema(v)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(gemini_schema).collect()),
        other => other.clone(),
    }
}
