//! Long damaged histories whose every step needs a fix: each repair must settle all of
//! them in one body, keeping every tool output. Their cost is measured where speed is
//! (`bench/adversarial.py`: `ch-renamed`, `gm-split`, `ch-unanswered`, under callgrind;
//! docs/PERFORMANCE.md), not here: these hold what the repairs give.

use mend::repair::{repair, RepairOptions};
use mend::{CheckOptions, Dialect};
use serde_json::{json, Value};

/// Steps of each history: enough that a fix that walked the whole chain per finding would
/// show in the test run, few enough for a debug build.
const STEPS: usize = 2_000;

fn repaired(d: Dialect, body: &Value, label: &str) -> mend::repair::Repaired {
    let opts = RepairOptions {
        check: CheckOptions {
            dialect: Some(d),
            ..CheckOptions::default()
        },
        ..RepairOptions::default()
    };
    let r = repair(body, &opts).expect("a repairable body");
    assert!(r.valid(), "{label}: {:?}", r.unrepairable.first());
    r
}

/// Every tool message names an id no call has (a client that rewrote the ids of its
/// results): an orphan and an unanswered call per step. Each orphan goes and each call
/// gets its interrupted result, right after it.
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
    let r = repaired(Dialect::OpenAiChat, &body, "chat orphans");
    let out = r.body["messages"].as_array().expect("messages");
    assert_eq!(out.len(), 1 + 2 * STEPS);
    for (i, pair) in out[1..].chunks(2).enumerate() {
        assert_eq!(
            pair[1]["tool_call_id"],
            json!(format!("call_{i}")),
            "step {i}"
        );
    }
}

/// Gemini: the responses of two parallel calls sent in two turns, at every step. Both
/// responses end up in one turn after their calls; none is lost.
#[test]
fn gemini_with_every_step_split() {
    let mut contents = vec![json!({"role": "user", "parts": [{"text": "go"}]})];
    for _ in 0..STEPS / 2 {
        contents.push(json!({"role": "model", "parts": [
            {"functionCall": {"name": "a", "args": {}}},
            {"functionCall": {"name": "b", "args": {}}}]}));
        for name in ["a", "b"] {
            contents.push(json!({"role": "user", "parts": [
                {"functionResponse": {"name": name, "response": {"from": name}}}]}));
        }
    }
    let r = repaired(
        Dialect::Gemini,
        &json!({"contents": contents}),
        "gemini split",
    );
    let text = r.body.to_string();
    assert_eq!(
        text.matches(r#""response":{"from":"b"}"#).count(),
        STEPS / 2,
        "every second response kept"
    );
}
