//! Clients that number tool calls per turn (`call_0`, `call_1` in every turn) reuse each
//! id in every turn of a long session. Each result answers the call it follows, so repair
//! renames every later call with its result, all in one pass: the calls and results all
//! stay, and the ids come out distinct whatever the number of turns.

use mend::chain::NodeKind;
use mend::repair::{repair, RepairOptions};
use mend::{CheckOptions, Dialect};
use serde_json::{json, Value};

/// Turns of the session: more than repair's 32 passes, so a repair that renamed one
/// reuse per pass would not finish.
const TURNS: usize = 50;
/// Parallel calls per turn.
const CALLS: usize = 2;

fn session(d: Dialect) -> Value {
    let mut h = Vec::new();
    for t in 0..TURNS {
        let (calls, results): (Vec<Value>, Vec<Value>) = (0..CALLS)
            .map(|k| call_and_result(d, format!("call_{k}"), t, k))
            .unzip();
        match d {
            Dialect::OpenAiChat => {
                h.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
                h.extend(results);
            }
            Dialect::OpenAiResponses => {
                h.extend(calls);
                h.extend(results);
            }
            _ => {
                h.push(json!({"role": "assistant", "content": calls}));
                h.push(json!({"role": "user", "content": results}));
            }
        }
    }
    let text = |t: &str| match d {
        Dialect::BedrockConverse => json!([{"text": t}]),
        _ => json!(t),
    };
    let mut history = vec![json!({"role": "user", "content": text("go")})];
    history.extend(h);
    if matches!(d, Dialect::Anthropic | Dialect::BedrockConverse) {
        // Ends on a user turn, as both require.
        history.push(json!({"role": "assistant", "content": text("done")}));
        history.push(json!({"role": "user", "content": text("ok")}));
    }
    match d {
        Dialect::OpenAiChat => json!({"model": "gpt-4o", "messages": history}),
        Dialect::OpenAiResponses => json!({"model": "gpt-4.1", "input": history}),
        Dialect::Anthropic => {
            json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": history})
        }
        _ => json!({"messages": history, "toolConfig": {"tools": [
            {"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}}]}}),
    }
}

fn call_and_result(d: Dialect, id: String, t: usize, k: usize) -> (Value, Value) {
    let args = json!({"turn": t, "k": k});
    let out = format!("result {t}.{k}");
    match d {
        Dialect::OpenAiChat => (
            json!({"id": id, "type": "function", "function": {"name": "f", "arguments": args.to_string()}}),
            json!({"role": "tool", "tool_call_id": id, "content": out}),
        ),
        Dialect::OpenAiResponses => (
            json!({"type": "function_call", "call_id": id, "name": "f", "arguments": args.to_string()}),
            json!({"type": "function_call_output", "call_id": id, "output": out}),
        ),
        Dialect::Anthropic => (
            json!({"type": "tool_use", "id": id, "name": "f", "input": args}),
            json!({"type": "tool_result", "tool_use_id": id, "content": out}),
        ),
        _ => (
            json!({"toolUse": {"toolUseId": id, "name": "f", "input": args}}),
            json!({"toolResult": {"toolUseId": id, "content": [{"text": out}]}}),
        ),
    }
}

/// The call ids of the calls and of the results, in body order.
fn ids(body: &Value, d: Dialect) -> (Vec<String>, Vec<String>) {
    let check = CheckOptions {
        dialect: Some(d),
        ..CheckOptions::default()
    };
    let a = mend::analyze(body, &check).expect("a readable body");
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    for node in &a.chain.nodes {
        match node.kind {
            NodeKind::Call { call_id, .. } => calls.push(call_id.unwrap_or("").to_string()),
            NodeKind::Result { call_id, .. } => results.push(call_id.unwrap_or("").to_string()),
            _ => {}
        }
    }
    (calls, results)
}

#[test]
fn ids_reused_in_every_turn_are_renamed_in_one_pass() {
    for d in [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::BedrockConverse,
    ] {
        let body = session(d);
        let opts = RepairOptions {
            check: CheckOptions {
                dialect: Some(d),
                ..CheckOptions::default()
            },
            ..RepairOptions::default()
        };
        let r = repair(&body, &opts).expect("a repairable body");
        assert!(
            r.valid(),
            "{d}: {} findings left, the first {:?}",
            r.unrepairable.len(),
            r.unrepairable.first()
        );
        assert_eq!(
            r.edits.len(),
            (TURNS - 1) * CALLS,
            "{d}: one rename per reuse"
        );
        assert!(
            r.edits.iter().all(|e| e.action == "rename"),
            "{d}: {:?}",
            r.edits
        );
        let (calls, results) = ids(&r.body, d);
        // Every call and result stays, each result still answers the call it follows.
        assert_eq!(calls.len(), TURNS * CALLS, "{d}");
        assert_eq!(calls, results, "{d}: results answer their calls in order");
        let distinct: std::collections::HashSet<_> = calls.iter().collect();
        assert_eq!(distinct.len(), calls.len(), "{d}: ids distinct");
        // The renamed ids stay short: `call_0_2` … `call_0_50`.
        assert!(
            calls.iter().all(|c| c.len() <= "call_0_50".len()),
            "{d}: {calls:?}"
        );
    }
}
