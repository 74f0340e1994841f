//! Properties of repair and trim over generated histories of every dialect: valid
//! conversations, then random damage (drop, duplicate, swap, move, truncate, strip ids).
//!
//! - a generated conversation checks valid, and repair returns it unchanged;
//! - after damage, repair leaves only violations of rules that cannot be repaired without
//!   guessing (and names them);
//! - repair is idempotent, and local: items far from every finding come through unchanged;
//! - trim never returns an invalid history from a valid one;
//! - convert gives every other dialect a valid body with every call and text, and back
//!   (every history declares its one tool, as a request that replays calls does: Converse
//!   refuses tool blocks without a `toolConfig`);
//!   from a damaged history, a valid body or only what cannot be repaired, named.

use mend::convert::{convert, ConvertError, ConvertOptions, Stage};
use mend::repair::{repair, RepairOptions};
use mend::trim::{trim, TrimOptions};
use mend::{CheckOptions, Dialect, Rule};
use proptest::prelude::*;
use serde_json::{json, Value};

/// One tool step: calls, and the order their results come back in.
#[derive(Debug, Clone)]
struct Step {
    calls: usize,
    order: Vec<usize>,
}

#[derive(Debug, Clone)]
struct Exchange {
    steps: Vec<Step>,
}

fn exchanges() -> impl Strategy<Value = Vec<Exchange>> {
    let step = (1usize..=3).prop_flat_map(|n| {
        Just((0..n).collect::<Vec<_>>())
            .prop_shuffle()
            .prop_map(move |order| Step { calls: n, order })
    });
    prop::collection::vec(
        prop::collection::vec(step, 0..3).prop_map(|steps| Exchange { steps }),
        1..5,
    )
}

/// 50 hex digits whose first 16 are the response key, as OpenAI's ids.
fn oid(prefix: &str, response: usize, item: usize) -> String {
    format!(
        "{prefix}_{:016x}{:034x}",
        0x0adb_81d1_c2f6_0000u64 + response as u64,
        item
    )
}

fn render(d: Dialect, ex: &[Exchange]) -> Value {
    let mut items: Vec<Value> = Vec::new();
    let mut resp = 0;
    let mut next_call = 0;
    for (e, x) in ex.iter().enumerate() {
        let question = format!("question {e}");
        items.push(match d {
            Dialect::Gemini => json!({"role": "user", "parts": [{"text": question}]}),
            Dialect::OpenAiResponses => json!({"role": "user", "content": question}),
            Dialect::BedrockConverse => json!({"role": "user", "content": [{"text": question}]}),
            _ => json!({"role": "user", "content": question}),
        });
        for s in &x.steps {
            resp += 1;
            let ids: Vec<String> = (0..s.calls)
                .map(|k| {
                    next_call += 1;
                    match d {
                        Dialect::Anthropic => format!("toolu_{:024}", next_call * 10 + k),
                        Dialect::Gemini => format!("fc{next_call}"),
                        Dialect::BedrockConverse => format!("tooluse_{:022}", next_call * 10 + k),
                        _ => format!("call_{next_call:020}"),
                    }
                })
                .collect();
            match d {
                Dialect::OpenAiChat => {
                    let calls: Vec<Value> = ids
                        .iter()
                        .map(|id| json!({"id": id, "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":1}"}}))
                        .collect();
                    items.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
                    for &k in &s.order {
                        items.push(json!({"role": "tool", "tool_call_id": ids[k], "content": format!("result {k}")}));
                    }
                }
                Dialect::OpenAiResponses => {
                    items.push(json!({"type": "reasoning", "id": oid("rs", resp, 0), "encrypted_content": "gAAAAAB", "summary": []}));
                    for (k, id) in ids.iter().enumerate() {
                        items.push(json!({"type": "function_call", "id": oid("fc", resp, k + 1), "call_id": id, "name": "lookup", "arguments": "{}"}));
                    }
                    for &k in &s.order {
                        items.push(json!({"type": "function_call_output", "call_id": ids[k], "output": format!("result {k}")}));
                    }
                }
                Dialect::Anthropic => {
                    let mut blocks = vec![
                        json!({"type": "thinking", "thinking": "let me look", "signature": "EqQBCkYIBxgCKkB"}),
                    ];
                    for id in &ids {
                        blocks.push(json!({"type": "tool_use", "id": id, "name": "lookup", "input": {"q": 1}}));
                    }
                    items.push(json!({"role": "assistant", "content": blocks}));
                    let results: Vec<Value> = s
                        .order
                        .iter()
                        .map(|&k| json!({"type": "tool_result", "tool_use_id": ids[k], "content": format!("result {k}")}))
                        .collect();
                    items.push(json!({"role": "user", "content": results}));
                }
                Dialect::Gemini => {
                    let parts: Vec<Value> = ids
                        .iter()
                        .enumerate()
                        .map(|(k, id)| {
                            let mut p = json!({"functionCall": {"id": id, "name": "lookup", "args": {"q": 1}}});
                            if k == 0 {
                                p["thoughtSignature"] = json!("CiQBjz1rX0");
                            }
                            p
                        })
                        .collect();
                    items.push(json!({"role": "model", "parts": parts}));
                    let results: Vec<Value> = s
                        .order
                        .iter()
                        .map(|&k| json!({"functionResponse": {"id": ids[k], "name": "lookup", "response": {"r": k}}}))
                        .collect();
                    items.push(json!({"role": "user", "parts": results}));
                }
                Dialect::BedrockConverse => {
                    let mut blocks = vec![
                        json!({"reasoningContent": {"reasoningText": {"text": "let me look", "signature": "EqQBCkYIBxgCKkB"}}}),
                    ];
                    for id in &ids {
                        blocks.push(json!({"toolUse": {"toolUseId": id, "name": "lookup", "input": {"q": 1}}}));
                    }
                    items.push(json!({"role": "assistant", "content": blocks}));
                    let results: Vec<Value> = s
                        .order
                        .iter()
                        .map(|&k| json!({"toolResult": {"toolUseId": ids[k], "content": [{"text": format!("result {k}")}], "status": "success"}}))
                        .collect();
                    items.push(json!({"role": "user", "content": results}));
                }
            }
        }
        resp += 1;
        if d == Dialect::OpenAiResponses {
            items.push(json!({"type": "reasoning", "id": oid("rs", resp, 0), "encrypted_content": "gAAAAAB", "summary": []}));
        }
        items.push(match d {
            Dialect::OpenAiChat => json!({"role": "assistant", "content": format!("answer {e}")}),
            Dialect::OpenAiResponses => {
                json!({"type": "message", "role": "assistant", "id": oid("msg", resp, 1), "content": [{"type": "output_text", "text": format!("answer {e}")}]})
            }
            Dialect::Anthropic => json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "done", "signature": "EqQBCkYIBxgCKkB"}, {"type": "text", "text": format!("answer {e}")}]}),
            Dialect::Gemini => json!({"role": "model", "parts": [{"text": format!("answer {e}")}]}),
            Dialect::BedrockConverse => json!({"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "done", "signature": "EqQBCkYIBxgCKkB"}}}, {"text": format!("answer {e}")}]}),
        });
    }
    let last = "and now?";
    match d {
        Dialect::OpenAiChat => {
            json!({"model": "gpt-4o", "messages": items.into_iter().chain([json!({"role": "user", "content": last})]).collect::<Vec<_>>(), "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]})
        }
        Dialect::OpenAiResponses => {
            json!({"model": "gpt-5", "input": items.into_iter().chain([json!({"role": "user", "content": last})]).collect::<Vec<_>>(), "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]})
        }
        Dialect::Anthropic => {
            json!({"model": "claude-sonnet-4-5", "max_tokens": 1024, "thinking": {"type": "enabled", "budget_tokens": 2048}, "messages": items.into_iter().chain([json!({"role": "user", "content": last})]).collect::<Vec<_>>(), "tools": [{"name": "lookup", "input_schema": {"type": "object"}}]})
        }
        Dialect::Gemini => {
            json!({"contents": items.into_iter().chain([json!({"role": "user", "parts": [{"text": last}]})]).collect::<Vec<_>>(), "tools": [{"functionDeclarations": [{"name": "lookup"}]}]})
        }
        Dialect::BedrockConverse => {
            json!({
                "system": [{"text": "be brief"}],
                "messages": items.into_iter().chain([json!({"role": "user", "content": [{"text": last}]})]).collect::<Vec<_>>(),
                "toolConfig": {"tools": [{"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object"}}}}]},
                "inferenceConfig": {"maxTokens": 1024},
                "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}},
            })
        }
    }
}

/// Damage kinds.
#[derive(Debug, Clone)]
enum Damage {
    Drop(usize),
    Duplicate(usize),
    Swap(usize),
    Move(usize, usize),
    Truncate(usize),
    StripIds(usize),
    DropBlock(usize, usize),
}

fn damage() -> impl Strategy<Value = Vec<Damage>> {
    let one = prop_oneof![
        any::<usize>().prop_map(Damage::Drop),
        any::<usize>().prop_map(Damage::Duplicate),
        any::<usize>().prop_map(Damage::Swap),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::Move(a, b)),
        any::<usize>().prop_map(Damage::Truncate),
        any::<usize>().prop_map(Damage::StripIds),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::DropBlock(a, b)),
    ];
    prop::collection::vec(one, 1..4)
}

fn apply(body: &mut Value, key: &str, dmg: &[Damage]) {
    let Some(items) = body.get_mut(key).and_then(Value::as_array_mut) else {
        return;
    };
    for d in dmg {
        let n = items.len();
        if n == 0 {
            return;
        }
        match *d {
            Damage::Drop(i) => {
                items.remove(i % n);
            }
            Damage::Duplicate(i) => {
                let v = items[i % n].clone();
                items.insert(i % n, v);
            }
            Damage::Swap(i) if n > 1 => items.swap(i % (n - 1), i % (n - 1) + 1),
            Damage::Move(a, b) => {
                let v = items.remove(a % n);
                items.insert(b % n, v);
            }
            Damage::Truncate(k) => items.truncate(k % n + 1),
            Damage::StripIds(i) => strip(&mut items[i % n]),
            Damage::DropBlock(i, j) => {
                for key in ["content", "parts", "tool_calls"] {
                    if let Some(a) = items[i % n].get_mut(key).and_then(Value::as_array_mut) {
                        if !a.is_empty() {
                            let len = a.len();
                            a.remove(j % len);
                        }
                    }
                }
            }
            Damage::Swap(_) => {}
        }
    }
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for k in [
                "id",
                "call_id",
                "tool_call_id",
                "tool_use_id",
                "toolUseId",
                "thoughtSignature",
                "signature",
            ] {
                o.shift_remove(k);
            }
            o.values_mut().for_each(strip);
        }
        Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

/// Rules that repair leaves alone because fixing them would mean inventing content: an
/// id nobody knows, a signed thinking block, a turn order the user must decide.
const CANNOT_REPAIR: [Rule; 8] = [
    Rule::RoleOrder,
    Rule::ThinkingFinalBlock,
    Rule::FunctionCallPosition,
    Rule::ThinkingNotFirst,
    Rule::DuplicateCallId,
    Rule::InvalidCallId,
    Rule::EmptyContent,
    Rule::Malformed,
];

fn opts(d: Dialect) -> RepairOptions {
    RepairOptions {
        check: CheckOptions {
            dialect: Some(d),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn dialects() -> impl Strategy<Value = Dialect> {
    prop_oneof![
        Just(Dialect::OpenAiChat),
        Just(Dialect::OpenAiResponses),
        Just(Dialect::Anthropic),
        Just(Dialect::Gemini),
        Just(Dialect::BedrockConverse)
    ]
}

proptest! {
    // 256 cases by default; PROPTEST_CASES=N for a longer run.
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn generated_histories_are_valid_and_left_alone(d in dialects(), ex in exchanges()) {
        let body = render(d, &ex);
        let report = mend::check_value(&body, &opts(d).check).unwrap();
        prop_assert!(report.violations.is_empty(), "{:?}\n{}", report.violations, body);
        let r = repair(&body, &opts(d)).unwrap();
        prop_assert!(r.edits.is_empty());
        prop_assert_eq!(r.body, body);
    }

    #[test]
    fn damaged_histories_are_repaired_or_named(d in dialects(), ex in exchanges(), dmg in damage()) {
        let mut body = render(d, &ex);
        apply(&mut body, d.history_key(), &dmg);
        let r = repair(&body, &opts(d)).unwrap();
        // A fix may be held back when made it leaves an error no fix can answer; its
        // rule's errors then stay, named.
        for v in &r.unrepairable {
            prop_assert!(
                CANNOT_REPAIR.contains(&v.rule) || r.held_back.contains(&v.rule),
                "{} stayed after repair at {}: {}\ndamage {:?}\nedits {:?}\ninput {}\noutput {}",
                v.rule, v.path, v.message, dmg, r.edits, body, r.body
            );
        }
        // The verdict matches a fresh check of the output.
        let recheck = mend::check_value(&r.body, &opts(d).check).unwrap();
        prop_assert_eq!(recheck.valid(), r.valid());
        // Local: every item of an atomic unit that no finding touches (nor a neighbour
        // unit, where moved results land) comes through unchanged and in order.
        let opts_check = opts(d).check;
        let analysis = mend::analyze(&body, &opts_check).unwrap();
        let key = format!("/{}/", d.history_key());
        let named: Vec<usize> = analysis
            .violations
            .iter()
            .flat_map(|v| {
                let text = format!("{} {}", v.path, v.message);
                text.match_indices(&key)
                    .filter_map(|(at, _)| {
                        let digits: String = text[at + key.len()..].chars().take_while(char::is_ascii_digit).collect();
                        digits.parse().ok()
                    })
                    .collect::<Vec<usize>>()
            })
            .collect();
        let groups = analysis.groups(0);
        let unit_of_item = |i: usize| {
            groups.units.iter().position(|u| {
                u.turns.clone().any(|t| analysis.chain.turns[t].ptr.item_index() == Some(i as u32))
            })
        };
        let touched_units: Vec<usize> = named.iter().filter_map(|&i| unit_of_item(i)).collect();
        if let (Some(inp), Some(outp)) = (body[d.history_key()].as_array(), r.body[d.history_key()].as_array()) {
            let far: Vec<&Value> = inp
                .iter()
                .enumerate()
                .filter(|(i, _)| {
                    unit_of_item(*i).is_some_and(|u| touched_units.iter().all(|&t| t.abs_diff(u) > 1))
                })
                .map(|(_, v)| v)
                .collect();
            let mut rest = outp.iter();
            for item in far {
                prop_assert!(rest.any(|o| o == item), "an item of a unit no finding touches was changed or lost: {}\nfindings at {:?}\nedits {:?}\ninput {}\noutput {}", item, named, r.edits, body, r.body);
            }
        }
        // From bytes, the same repair, spliced into the input's bytes.
        let spliced = crate::splice::agrees(&body, &opts(d));
        prop_assert!(spliced.is_ok(), "{:?}\ninput {}", spliced, body);
        // Idempotent.
        let again = repair(&r.body, &opts(d)).unwrap();
        prop_assert!(again.edits.is_empty(), "second repair made edits: {:?}\n{}", again.edits, r.body);
        prop_assert_eq!(&again.body, &r.body);
    }

    #[test]
    fn trim_keeps_valid_histories_valid(d in dialects(), ex in exchanges(), frac in 0.05f64..1.0) {
        let body = render(d, &ex);
        let full = trim(&body, &TrimOptions { check: opts(d).check, budget: usize::MAX, ..Default::default() }).unwrap();
        let budget = (full.tokens_before as f64 * frac) as usize;
        let topts = TrimOptions { check: opts(d).check, budget, keep_last: 1, protect: 0 };
        let t = trim(&body, &topts).unwrap();
        prop_assert!(t.violations.is_empty(), "{:?}\n{}", t.violations, t.body);
        prop_assert!(t.over_budget || t.tokens_after <= budget);
        // Taking the body, the kept items are moved: the same outcome.
        let owned = mend::trim::trim_owned(body.clone(), &topts).unwrap();
        prop_assert_eq!(&owned.body, &t.body);
        prop_assert_eq!(&owned.dropped, &t.dropped);
        prop_assert_eq!((owned.tokens_before, owned.tokens_after), (t.tokens_before, t.tokens_after));
    }
}

/// Two different dialects: a source and a target.
fn pairs() -> impl Strategy<Value = (Dialect, Dialect)> {
    (0usize..5, 1usize..5).prop_map(|(a, k)| (Dialect::ALL[a], Dialect::ALL[(a + k) % 5]))
}

/// The calls of a body (name and parsed arguments) and its texts, in order: what a
/// conversion must carry whatever the dialects.
fn calls_and_texts(d: Dialect, body: &Value) -> (Vec<(String, Value)>, Vec<String>) {
    use mend::canonical::{Conversation, Part};
    let conv = Conversation::from_request(d, body).expect("a request body");
    let (mut calls, mut texts) = (Vec::new(), Vec::new());
    for p in conv.messages.iter().flat_map(|m| &m.parts) {
        match p {
            Part::ToolCall(c) => {
                let args = serde_json::from_str(&c.arguments).unwrap_or(json!({}));
                calls.push((c.name.clone(), args));
            }
            Part::Text(t) => texts.push(t.text.clone()),
            _ => {}
        }
    }
    (calls, texts)
}

proptest! {
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn valid_histories_convert_valid_and_keep_every_call_and_text(
        (d, to) in pairs(), ex in exchanges()
    ) {
        let body = render(d, &ex);
        let out = convert(&body, d, to, &ConvertOptions::default()).unwrap();
        prop_assert!(out.valid(), "{:?}\n{}", out.violations, out.body);
        for e in &out.edits {
            prop_assert!(
                e.stage == Stage::Target && e.edit.rule == Rule::InvalidCallId,
                "a valid source needs no repair beyond id forms: {:?}", e
            );
        }
        let source = calls_and_texts(d, &body);
        prop_assert_eq!(&calls_and_texts(to, &out.body), &source, "{}", out.body);
        // And back again, nothing of it lost either.
        let back = convert(&out.body, to, d, &ConvertOptions::default()).unwrap();
        prop_assert!(back.valid(), "{:?}\n{}", back.violations, back.body);
        prop_assert_eq!(&calls_and_texts(d, &back.body), &source, "{}", back.body);
    }

    #[test]
    fn damaged_histories_convert_valid_or_named(
        (d, to) in pairs(), ex in exchanges(), dmg in damage()
    ) {
        let mut body = render(d, &ex);
        apply(&mut body, d.history_key(), &dmg);
        let out = match convert(&body, d, to, &ConvertOptions::default()) {
            Ok(o) => o,
            Err(ConvertError::Unreadable { .. }) => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(format!("{e}\n{body}"))),
        };
        for v in out.violations.iter().filter(|v| v.severity == mend::Severity::Error) {
            prop_assert!(
                CANNOT_REPAIR.contains(&v.rule) || out.held_back.contains(&v.rule),
                "{} at {}: {}\ninput {}\noutput {}", v.rule, v.path, v.message, body, out.body
            );
        }
        let recheck = mend::check_value(&out.body, &CheckOptions {
            dialect: Some(to),
            provider: Some(out.provider.to_string()),
            model: out.model.clone(),
            ..Default::default()
        }).unwrap();
        prop_assert_eq!(recheck.valid(), out.valid());
    }
}
