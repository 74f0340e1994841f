//! Repair of long damaged histories stays linear: every finding's fix looks at its own
//! turns and at indexes built once a pass, never at the whole chain again. Each history
//! here took seconds when a fix walked the chain per finding (quadratic), and takes a
//! fraction of one now; the bound leaves room for a loaded machine.

use std::time::{Duration, Instant};

use mend::repair::{repair, RepairOptions};
use mend::{CheckOptions, Dialect};
use serde_json::{json, Value};

const STEPS: usize = 40_000;
const BOUND: Duration = Duration::from_secs(10);

fn repaired_in_bound(d: Dialect, body: &Value, label: &str) {
    let opts = RepairOptions {
        check: CheckOptions {
            dialect: Some(d),
            ..CheckOptions::default()
        },
        ..RepairOptions::default()
    };
    let started = Instant::now();
    let r = repair(body, &opts).expect("a repairable body");
    let took = started.elapsed();
    assert!(r.valid(), "{label}: {:?}", r.unrepairable.first());
    assert!(took < BOUND, "{label}: repair took {took:?}");
}

/// Every tool message names an id no call has (a client that rewrote the ids of its
/// results): an orphan and an unanswered call per step.
#[test]
fn chat_with_every_result_orphaned() {
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    for i in 0..STEPS {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{i}"), "type": "function",
             "function": {"name": "step", "arguments": "{}"}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": format!("x_{i}"), "content": "ok"}));
    }
    let body = json!({"model": "gpt-4o", "messages": messages});
    repaired_in_bound(Dialect::OpenAiChat, &body, "chat orphans");
}

/// Gemini: the responses of two parallel calls sent in two turns, at every step.
#[test]
fn gemini_with_every_step_split() {
    let mut contents = vec![json!({"role": "user", "parts": [{"text": "go"}]})];
    for _ in 0..STEPS / 2 {
        contents.push(json!({"role": "model", "parts": [
            {"functionCall": {"name": "a", "args": {}}},
            {"functionCall": {"name": "b", "args": {}}}]}));
        for name in ["a", "b"] {
            contents.push(json!({"role": "user", "parts": [
                {"functionResponse": {"name": name, "response": {}}}]}));
        }
    }
    repaired_in_bound(
        Dialect::Gemini,
        &json!({"contents": contents}),
        "gemini split",
    );
}
