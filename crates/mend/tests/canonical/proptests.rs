//! Properties: a stream fed in any chunking gives the same reply as fed whole, and any
//! request body of wire-like shape (valid or not) round-trips exactly.

use mend::canonical::capture::read_stream;
use mend::canonical::Conversation;
use mend::Dialect;
use proptest::prelude::*;
use serde_json::{Map, Value};
use std::sync::OnceLock;

use crate::capture::{capture_in_chunks, fixtures, Fixture};

/// `PROPTEST_CASES` when set (for a longer run), else `n`.
fn cases(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(n)
}

fn streams() -> &'static [Fixture] {
    static STREAMS: OnceLock<Vec<Fixture>> = OnceLock::new();
    let all = STREAMS.get_or_init(|| fixtures("response.sse"));
    if all.is_empty() {
        // Only the first test to ask read the folder: let each one that skips say so.
        let _ = crate::support::shared_dir();
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_gives_the_same_reply(pick in any::<prop::sample::Index>(),
                                         cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..40)) {
        let all = streams();
        if all.is_empty() {
            return Ok(());
        }
        let f = &all[pick.index(all.len())];
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(f.bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let whole = read_stream(f.dialect, &f.bytes);
        prop_assert_eq!(capture_in_chunks(f.dialect, &f.bytes, &cuts), whole, "{}", f.name());
    }

    #[test]
    fn damaged_streams_and_bodies_give_errors_not_panics(pick in any::<prop::sample::Index>(),
                                                        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..8),
                                                        as_dialect in prop::sample::select(Dialect::ALL.to_vec())) {
        let all = streams();
        if all.is_empty() {
            return Ok(());
        }
        let f = &all[pick.index(all.len())];
        let mut bytes = f.bytes.clone();
        for (at, byte, op) in edits {
            let i = at.index(bytes.len().max(1));
            match op {
                0 if i < bytes.len() => bytes[i] = byte,
                1 if i < bytes.len() => {
                    bytes.remove(i);
                }
                _ => bytes.insert(i.min(bytes.len()), byte),
            }
        }
        let _ = read_stream(as_dialect, &bytes);
        let _ = mend::canonical::capture::read_response(as_dialect, &bytes);
    }
}

/// Keys the dialects use, so that generated junk hits the readers' paths.
const KEYS: &[&str] = &[
    "role",
    "content",
    "type",
    "text",
    "tool_calls",
    "id",
    "call_id",
    "output",
    "summary",
    "signature",
    "thinking",
    "data",
    "input",
    "parts",
    "thought",
    "thoughtSignature",
    "functionCall",
    "function_response",
    "args",
    "response",
    "mimeType",
    "status",
    "toolUseId",
    "json",
    "x",
];

const STRINGS: &[&str] = &[
    "user",
    "assistant",
    "system",
    "model",
    "function",
    "text",
    "output_text",
    "reasoning",
    "function_call",
    "message",
    "tool_use",
    "thinking",
    "image",
    "base64",
    "url",
    "{}",
    "{\"a\":1}",
    "",
    "data:image/png;base64,AAAA",
    "image/png",
    "call_1",
    "rs_1",
    " ",
];

type S = BoxedStrategy<Value>;
type O = BoxedStrategy<Option<Value>>;

fn leaf() -> S {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..1000).prop_map(Value::from),
        (0.0f64..10.0).prop_map(Value::from),
        prop::sample::select(STRINGS).prop_map(|s| Value::String(s.to_string())),
    ]
    .boxed()
}

/// Anything, shallow.
fn junk() -> S {
    leaf()
        .prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(KEYS), inner), 0..4).prop_map(|kv| {
                    Value::Object(
                        kv.into_iter()
                            .map(|(k, v)| (k.to_string(), v))
                            .collect::<Map<String, Value>>(),
                    )
                }),
            ]
        })
        .boxed()
}

fn lit(choices: &'static [&'static str]) -> S {
    prop::sample::select(choices)
        .prop_map(|s| Value::String(s.to_string()))
        .boxed()
}

/// A string of the usual kind, sometimes junk.
fn text() -> S {
    prop_oneof![8 => lit(&["hi", "", " ", "call_1", "toolu_1", "{\"a\":1}", "{}", "sig=="]), 1 => junk()].boxed()
}

/// The usual value most of the time, junk sometimes.
fn mostly(s: S) -> S {
    prop_oneof![9 => s, 1 => junk()].boxed()
}

fn opt(s: S) -> O {
    prop::option::weighted(0.5, s).boxed()
}

fn req(s: S) -> O {
    prop::option::weighted(0.95, s).boxed()
}

fn list(s: S, max: usize) -> S {
    prop::collection::vec(s, 0..max)
        .prop_map(Value::Array)
        .boxed()
}

/// An object of the present fields (plus, sometimes, a stray one).
fn obj(fields: Vec<(&'static str, O)>) -> S {
    let stray = opt(junk());
    (
        fields
            .into_iter()
            .map(|(k, s)| s.prop_map(move |v| v.map(|v| (k, v))).boxed())
            .collect::<Vec<_>>(),
        stray,
    )
        .prop_map(|(kv, stray)| {
            let mut o: Map<String, Value> = kv
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            if let Some(v) = stray {
                o.insert("x_extra".into(), v);
            }
            Value::Object(o)
        })
        .boxed()
}

fn data_url() -> S {
    lit(&[
        "data:image/png;base64,iVBORw0K",
        "https://x.test/a.png",
        "data:text/plain,hi",
        "data:image/png;charset=x;base64,AA",
    ])
}

fn chat_part() -> S {
    prop_oneof![
        obj(vec![
            ("type", req(lit(&["text"]))),
            ("text", req(text())),
            ("cache_control", opt(junk()))
        ]),
        obj(vec![
            ("type", req(lit(&["image_url"]))),
            (
                "image_url",
                req(obj(vec![
                    ("url", req(data_url())),
                    ("detail", opt(lit(&["auto", "low"])))
                ]))
            )
        ]),
        obj(vec![
            ("type", req(lit(&["file"]))),
            (
                "file",
                req(obj(vec![
                    ("file_id", opt(text())),
                    ("file_data", opt(data_url())),
                    ("filename", opt(text()))
                ]))
            )
        ]),
        obj(vec![
            ("type", req(lit(&["refusal", "input_audio"]))),
            ("refusal", opt(text()))
        ]),
        junk(),
    ]
    .boxed()
}

fn chat_message() -> S {
    let call = obj(vec![
        ("id", opt(mostly(text()))),
        ("type", opt(lit(&["function"]))),
        (
            "function",
            req(mostly(obj(vec![
                ("name", req(text())),
                ("arguments", req(text())),
            ]))),
        ),
        ("extra_content", opt(junk())),
    ]);
    let detail = obj(vec![
        (
            "type",
            req(lit(&[
                "reasoning.text",
                "reasoning.encrypted",
                "reasoning.summary",
            ])),
        ),
        ("text", opt(text())),
        ("summary", opt(text())),
        ("data", opt(text())),
        ("signature", opt(mostly(text()))),
        ("id", opt(text())),
        ("format", opt(lit(&["anthropic-claude-v1"]))),
        ("index", opt(leaf())),
    ]);
    obj(vec![
        (
            "role",
            req(mostly(lit(&[
                "system",
                "developer",
                "user",
                "assistant",
                "tool",
                "function",
            ]))),
        ),
        (
            "content",
            opt(prop_oneof![text(), list(chat_part(), 3), Just(Value::Null).boxed()].boxed()),
        ),
        ("tool_calls", opt(mostly(list(call, 3)))),
        ("tool_call_id", opt(text())),
        ("name", opt(text())),
        (
            "function_call",
            opt(mostly(obj(vec![
                ("name", req(text())),
                ("arguments", req(text())),
            ]))),
        ),
        ("reasoning_content", opt(mostly(text()))),
        ("reasoning", opt(text())),
        ("reasoning_details", opt(mostly(list(detail, 3)))),
        ("prefix", opt(junk())),
    ])
}

fn responses_part() -> S {
    prop_oneof![
        obj(vec![
            ("type", req(lit(&["input_text", "output_text", "text"]))),
            ("text", req(text())),
            ("annotations", opt(junk()))
        ]),
        obj(vec![
            ("type", req(lit(&["input_image"]))),
            ("image_url", opt(data_url())),
            ("file_id", opt(text())),
            ("detail", opt(text()))
        ]),
        obj(vec![
            ("type", req(lit(&["input_file"]))),
            ("file_url", opt(data_url())),
            ("file_data", opt(data_url())),
            ("file_id", opt(text())),
            ("filename", opt(text()))
        ]),
        obj(vec![
            ("type", req(lit(&["refusal"]))),
            ("refusal", opt(text()))
        ]),
        junk(),
    ]
    .boxed()
}

fn responses_item() -> S {
    let summary = mostly(obj(vec![
        ("type", req(lit(&["summary_text"]))),
        ("text", req(text())),
    ]));
    let reasoning_text = mostly(obj(vec![
        ("type", req(lit(&["reasoning_text"]))),
        ("text", req(text())),
    ]));
    prop_oneof![
        obj(vec![
            ("type", opt(lit(&["message"]))),
            ("id", opt(mostly(lit(&["msg_1"])))),
            (
                "role",
                req(mostly(lit(&["user", "assistant", "system", "developer"])))
            ),
            (
                "content",
                opt(prop_oneof![text(), list(responses_part(), 3)].boxed())
            ),
            ("status", opt(lit(&["completed"]))),
            ("phase", opt(text())),
        ]),
        obj(vec![
            ("type", req(lit(&["reasoning"]))),
            ("id", opt(mostly(lit(&["rs_1"])))),
            ("summary", opt(mostly(list(summary, 3)))),
            ("content", opt(mostly(list(reasoning_text, 2)))),
            ("encrypted_content", opt(mostly(text()))),
        ]),
        obj(vec![
            ("type", req(lit(&["function_call"]))),
            ("id", opt(mostly(lit(&["fc_1"])))),
            ("call_id", req(mostly(lit(&["call_1"])))),
            ("name", req(text())),
            ("arguments", req(text())),
            ("status", opt(text())),
        ]),
        obj(vec![
            ("type", req(lit(&["function_call_output"]))),
            ("call_id", req(mostly(lit(&["call_1"])))),
            (
                "output",
                opt(prop_oneof![text(), list(responses_part(), 2)].boxed())
            ),
            ("id", opt(text())),
        ]),
        obj(vec![
            (
                "type",
                req(lit(&[
                    "web_search_call",
                    "item_reference",
                    "custom_tool_call",
                    "user"
                ]))
            ),
            ("id", opt(text()))
        ]),
        junk(),
    ]
    .boxed()
}

fn anthropic_block() -> S {
    let source = prop_oneof![
        obj(vec![
            ("type", req(lit(&["base64"]))),
            ("media_type", req(lit(&["image/png"]))),
            ("data", req(text()))
        ]),
        obj(vec![("type", req(lit(&["url"]))), ("url", req(data_url()))]),
        obj(vec![
            ("type", req(lit(&["file"]))),
            ("file_id", req(text()))
        ]),
        junk(),
    ]
    .boxed();
    let leafs = prop_oneof![
        obj(vec![
            ("type", req(lit(&["text"]))),
            ("text", req(text())),
            ("cache_control", opt(junk())),
            ("citations", opt(junk()))
        ]),
        obj(vec![
            ("type", req(lit(&["image", "document"]))),
            ("source", req(source)),
            ("title", opt(text()))
        ]),
        obj(vec![
            ("type", req(lit(&["thinking"]))),
            ("thinking", req(text())),
            ("signature", opt(mostly(text())))
        ]),
        obj(vec![
            ("type", req(lit(&["redacted_thinking"]))),
            ("data", req(text()))
        ]),
        obj(vec![
            ("type", req(lit(&["tool_use", "server_tool_use"]))),
            ("id", req(text())),
            ("name", req(text())),
            ("input", req(junk()))
        ]),
        junk(),
    ]
    .boxed();
    let result = obj(vec![
        ("type", req(lit(&["tool_result"]))),
        ("tool_use_id", req(text())),
        (
            "content",
            opt(prop_oneof![text(), list(leafs.clone(), 3)].boxed()),
        ),
        ("is_error", opt(junk())),
    ]);
    prop_oneof![3 => leafs, 1 => result].boxed()
}

fn anthropic_message() -> S {
    obj(vec![
        ("role", req(mostly(lit(&["user", "assistant", "system"])))),
        (
            "content",
            opt(prop_oneof![text(), list(anthropic_block(), 4)].boxed()),
        ),
    ])
}

fn gemini_part() -> S {
    let sig = || opt(text());
    let call = mostly(obj(vec![
        ("id", opt(text())),
        ("name", req(text())),
        ("args", opt(junk())),
        ("willContinue", opt(junk())),
    ]));
    let resp = mostly(obj(vec![
        ("id", opt(text())),
        ("name", opt(text())),
        ("response", opt(junk())),
        ("parts", opt(junk())),
    ]));
    let inline = |snake: bool| {
        mostly(obj(vec![
            (
                if snake { "mime_type" } else { "mimeType" },
                req(lit(&["image/png", "application/pdf"])),
            ),
            ("data", req(text())),
        ]))
    };
    let file = |snake: bool| {
        mostly(obj(vec![
            (
                if snake { "mime_type" } else { "mimeType" },
                opt(lit(&["image/png"])),
            ),
            (if snake { "file_uri" } else { "fileUri" }, req(text())),
        ]))
    };
    prop_oneof![
        obj(vec![
            ("text", req(text())),
            ("thought", opt(mostly(Just(Value::Bool(true)).boxed()))),
            ("thoughtSignature", sig())
        ]),
        obj(vec![
            ("thought", req(Just(Value::Bool(true)).boxed())),
            ("thoughtSignature", sig())
        ]),
        obj(vec![
            ("functionCall", req(call.clone())),
            ("thoughtSignature", sig())
        ]),
        obj(vec![
            ("function_call", req(call)),
            ("thought_signature", sig()),
            ("thoughtSignature", opt(text()))
        ]),
        obj(vec![("functionResponse", req(resp.clone()))]),
        obj(vec![("function_response", req(resp))]),
        obj(vec![("inlineData", req(inline(false)))]),
        obj(vec![("inline_data", req(inline(true)))]),
        obj(vec![("fileData", req(file(false)))]),
        obj(vec![("file_data", req(file(true))), ("text", opt(text()))]),
        junk(),
    ]
    .boxed()
}

fn gemini_content() -> S {
    obj(vec![
        (
            "role",
            opt(mostly(lit(&[
                "user", "model", "tool", "function", "system",
            ]))),
        ),
        ("parts", req(mostly(list(gemini_part(), 4)))),
    ])
}

/// A Converse block: a union of one member (sometimes with a stray second one).
fn converse_block() -> S {
    let source = prop_oneof![
        obj(vec![("bytes", req(text()))]),
        obj(vec![("s3Location", req(junk()))]),
        junk(),
    ]
    .boxed();
    let media = |formats: &'static [&'static str]| {
        obj(vec![
            ("format", req(mostly(lit(formats)))),
            ("name", opt(text())),
            ("source", req(source.clone())),
        ])
    };
    let reasoning = prop_oneof![
        obj(vec![(
            "reasoningText",
            req(obj(vec![
                ("text", req(text())),
                ("signature", opt(mostly(text())))
            ]))
        )]),
        obj(vec![("redactedContent", req(text()))]),
    ]
    .boxed();
    let leafs = prop_oneof![
        obj(vec![("text", req(text()))]),
        obj(vec![("image", req(media(&["png", "jpeg", "tiff"])))]),
        obj(vec![("document", req(media(&["pdf", "txt", "exe"])))]),
        obj(vec![("reasoningContent", req(mostly(reasoning)))]),
        obj(vec![(
            "toolUse",
            req(mostly(obj(vec![
                ("toolUseId", req(text())),
                ("name", req(text())),
                ("input", req(junk())),
                ("type", opt(lit(&["tool_use", "server_tool_use"])))
            ])))
        )]),
        obj(vec![("cachePoint", req(junk()))]),
        obj(vec![("json", req(junk()))]),
        junk(),
    ]
    .boxed();
    prop_oneof![
        4 => leafs.clone(),
        1 => obj(vec![(
            "toolResult",
            req(mostly(obj(vec![
                ("toolUseId", req(text())),
                ("content", req(mostly(list(leafs, 3)))),
                ("status", opt(lit(&["success", "error", "other"]))),
                ("type", opt(lit(&["tool_result", "nova_code_interpreter_result"])))
            ])))
        )]),
    ]
    .boxed()
}

fn converse_message() -> S {
    obj(vec![
        ("role", req(mostly(lit(&["user", "assistant", "system"])))),
        ("content", req(mostly(list(converse_block(), 4)))),
    ])
}

fn body() -> impl Strategy<Value = (Dialect, Value)> {
    let chat = obj(vec![
        ("model", opt(text())),
        ("messages", req(list(chat_message(), 5))),
        ("tools", opt(junk())),
    ])
    .prop_map(|b| (Dialect::OpenAiChat, b));
    let responses = obj(vec![
        ("model", opt(text())),
        ("instructions", opt(text())),
        (
            "input",
            req(prop_oneof![1 => text(), 6 => list(responses_item(), 5)].boxed()),
        ),
        ("store", opt(junk())),
    ])
    .prop_map(|b| (Dialect::OpenAiResponses, b));
    let anthropic = obj(vec![
        ("model", opt(text())),
        (
            "system",
            opt(prop_oneof![text(), list(anthropic_block(), 2)].boxed()),
        ),
        ("messages", req(list(anthropic_message(), 5))),
    ])
    .prop_map(|b| (Dialect::Anthropic, b));
    let gemini = obj(vec![
        (
            "systemInstruction",
            opt(mostly(obj(vec![
                ("parts", req(list(gemini_part(), 2))),
                ("role", opt(text())),
            ]))),
        ),
        (
            "system_instruction",
            opt(obj(vec![("parts", req(list(gemini_part(), 2)))])),
        ),
        ("contents", req(list(gemini_content(), 5))),
        ("generationConfig", opt(junk())),
    ])
    .prop_map(|b| (Dialect::Gemini, b));
    let converse = obj(vec![
        ("messages", req(list(converse_message(), 5))),
        ("system", opt(mostly(list(converse_block(), 2)))),
        ("inferenceConfig", opt(junk())),
        ("additionalModelRequestFields", opt(junk())),
    ])
    .prop_map(|b| (Dialect::BedrockConverse, b));
    prop_oneof![chat, responses, anthropic, gemini, converse]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2000), ..ProptestConfig::default() })]

    #[test]
    fn any_wire_like_body_round_trips((dialect, body) in body()) {
        let conv = Conversation::from_request(dialect, &body).expect("an object");
        let back = conv.to_request(dialect).expect("its own dialect can always be written");
        prop_assert_eq!(&back, &body);
        let json = conv.to_json().to_string();
        let again = Conversation::from_json(json.as_bytes()).expect("the JSON form reads back");
        prop_assert_eq!(again, conv);
    }

    #[test]
    fn writing_another_dialect_never_panics((dialect, body) in body(), to in prop::sample::select(Dialect::ALL.to_vec())) {
        let conv = Conversation::from_request(dialect, &body).expect("an object");
        let _ = conv.to_request(to);
    }
}
