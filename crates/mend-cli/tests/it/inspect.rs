//! `mend inspect`: the table (snapshots, colour off) and the `--json` links.

use serde_json::Value;

use crate::support::{run, run_with_stdin, UNANSWERED_CHAT};

fn table(file: &str) -> String {
    let r = run(&["inspect", file]);
    assert!(r.code == 0 || r.code == 1, "{r:?}");
    assert!(!r.stdout.contains('\x1b'), "no colour on a pipe");
    r.stdout
}

#[test]
fn table_openai_chat() {
    insta::assert_snapshot!(table("examples/openai_chat-orphan-tool.json"));
}

#[test]
fn table_openai_responses() {
    insta::assert_snapshot!(table(
        "examples/openai_responses-reasoning-lost-msg-id.json"
    ));
}

#[test]
fn table_anthropic() {
    insta::assert_snapshot!(table("examples/anthropic-text-before-tool-result.json"));
}

#[test]
fn table_gemini() {
    insta::assert_snapshot!(table("examples/gemini-parallel-call-missing-response.json"));
}

fn inspect_json(args: &[&str]) -> (i32, Value) {
    let r = run(args);
    (r.code, r.json())
}

#[test]
fn json_has_the_documented_shape() {
    let (code, v) = inspect_json(&[
        "inspect",
        "--json",
        "examples/anthropic-text-before-tool-result.json",
    ]);
    assert_eq!(code, 1);
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["dialect", "provider", "valid", "turns", "violations"]
    );
    assert_eq!(v["dialect"], "anthropic");
    assert_eq!(v["valid"], false);
    let turn = &v["turns"][3];
    let keys: Vec<&str> = turn
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "index",
            "path",
            "role",
            "wire",
            "ids",
            "links",
            "size",
            "violations"
        ]
    );
    assert_eq!(turn["index"], 3);
    assert_eq!(turn["path"], "/messages/2");
    assert_eq!(turn["role"], "user");
    assert_eq!(
        turn["ids"],
        serde_json::json!(["toolu_01D7FLrfh4GYq7yT1ULFeyMV"])
    );
    assert_eq!(turn["violations"][0]["rule"], "tool-result-not-adjacent");
    assert_eq!(v["violations"].as_array().map(Vec::len), Some(1));
}

#[test]
fn json_links_a_call_to_its_result_row_and_back() {
    let (code, v) = inspect_json(&[
        "inspect",
        "--json",
        "examples/anthropic-valid-parallel-tools.json",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        v["turns"][2]["links"],
        serde_json::json!([
            {"rel": "result", "turn": 3, "call_id": "toolu_01A9xKcQ2mV7bN4pR8sT3wYe"},
            {"rel": "result", "turn": 3, "call_id": "toolu_01B3hJ6kL9nP2qS5tV8wX1zA"}
        ])
    );
    assert_eq!(
        v["turns"][3]["links"],
        serde_json::json!([
            {"rel": "call", "turn": 2, "call_id": "toolu_01A9xKcQ2mV7bN4pR8sT3wYe"},
            {"rel": "call", "turn": 2, "call_id": "toolu_01B3hJ6kL9nP2qS5tV8wX1zA"}
        ])
    );
}

#[test]
fn json_links_reasoning_to_its_follower_and_unanswered_calls_to_nothing() {
    let (_, v) = inspect_json(&[
        "inspect",
        "--json",
        "examples/openai_responses-reasoning-lost-msg-id.json",
    ]);
    assert_eq!(v["turns"][1]["wire"], "reasoning");
    assert_eq!(
        v["turns"][1]["links"],
        serde_json::json!([{"rel": "follower", "turn": 2}])
    );
    assert_eq!(v["turns"][2]["links"][0]["turn"], 3);
    assert_eq!(
        v["turns"][3]["links"][0],
        serde_json::json!({"rel": "call", "turn": 2, "call_id": "call_7bXk2PqR9sT4vW1yZ3aC5dE8"})
    );

    let r = run_with_stdin(&["inspect", "--json", "-"], UNANSWERED_CHAT.into());
    assert_eq!(r.code, 1);
    let v = r.json();
    assert_eq!(
        v["turns"][1]["links"],
        serde_json::json!([{"rel": "result", "turn": null, "call_id": "call_1"}])
    );
    assert_eq!(
        v["turns"][1]["violations"][0]["rule"],
        "tool-call-without-result"
    );
}

#[test]
fn an_unanswered_call_shows_a_question_mark() {
    let r = run_with_stdin(&["inspect", "-"], UNANSWERED_CHAT.into());
    assert_eq!(r.code, 1);
    let row = r
        .stdout
        .lines()
        .find(|l| l.contains("call_1"))
        .expect("the call's row");
    assert!(row.contains("→ ?"), "{row}");
    assert!(row.ends_with("tool-call-without-result"), "{row}");
}
