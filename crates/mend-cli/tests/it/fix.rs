//! `mend repair` and `mend trim`: the body on stdout, the report on stderr, exit codes,
//! `--json`, and the byte-for-byte pass-through of a body that needs nothing.

use crate::support::{arg, folder_with, run};

const VALID: &str = "examples/anthropic-valid-parallel-tools.json";
const ORPHAN: &str = "examples/openai_chat-orphan-tool.json";

#[test]
fn repair_of_a_valid_body_gives_back_the_same_bytes() {
    let r = run(&["repair", VALID]);
    assert_eq!(r.code, 0, "{r:?}");
    let original =
        std::fs::read_to_string(crate::support::repo_root().join(VALID)).expect("example");
    assert_eq!(r.stdout, original);
    assert!(r.stderr.contains("nothing changed"), "{}", r.stderr);
}

#[test]
fn repair_drops_an_orphan_and_the_output_checks_valid() {
    let r = run(&["repair", ORPHAN]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("/messages/3 drop[tool-result-without-call]"),
        "{}",
        r.stderr
    );
    let dir = folder_with(&[("out.json", r.stdout.as_bytes())]);
    let check = run(&["check", &arg(&dir, "out.json")]);
    assert_eq!(check.code, 0, "{check:?}");
}

/// A hand-written file: four-space indents, a call written on one line, an escaped
/// character, a float with a trailing zero. The repair adds a result and drops an
/// orphan; every other byte is the input's, and the new result is indented like its
/// neighbours.
#[test]
fn repair_keeps_the_files_layout_and_writes_only_what_changed() {
    let input = r#"{
    "model": "gpt-4o",
    "messages": [
        {
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
            ]
        },
        {
            "role": "user",
            "content": "caf\u00e9?"
        },
        {
            "role": "tool",
            "tool_call_id": "call_9",
            "content": "orphan"
        }
    ],
    "temperature": 1.0
}
"#;
    let expected = r#"{
    "model": "gpt-4o",
    "messages": [
        {
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
            ]
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "Error: this tool call was interrupted and produced no output."
        },
        {
            "role": "user",
            "content": "caf\u00e9?"
        }
    ],
    "temperature": 1.0
}
"#;
    let dir = folder_with(&[("in.json", input.as_bytes())]);
    let r = run(&["repair", &arg(&dir, "in.json")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, expected, "{}", r.stderr);
    // Compact in, compact out.
    let compact = r#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"x","content":"o"},{"role":"user","content":"b"}]}"#;
    let dir = folder_with(&[("in.json", compact.as_bytes())]);
    let r = run(&["repair", &arg(&dir, "in.json")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stdout,
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\"}]}\n"
    );
}

#[test]
fn repair_policies_change_what_is_done() {
    let body = br#"{"model":"gpt-4o","messages":[
        {"role":"user","content":"hi"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
        {"role":"user","content":"and?"},
        {"role":"tool","tool_call_id":"call_zz","content":"late"}]}"#;
    let dir = folder_with(&[("b.json", body)]);
    let r = run(&["repair", "--json", &arg(&dir, "b.json")]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = r.json();
    assert_eq!(out["valid"], true);
    let msgs = out["body"]["messages"].as_array().expect("messages");
    assert_eq!(
        msgs[2]["role"], "tool",
        "a synthesized result follows the call: {msgs:?}"
    );
    assert_eq!(msgs[2]["tool_call_id"], "call_1");
    assert_eq!(msgs.len(), 4, "the orphan went: {msgs:?}");

    let r = run(&[
        "repair",
        "--json",
        "--missing-result",
        "drop-call",
        "--orphan-result",
        "to-text",
        &arg(&dir, "b.json"),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = r.json();
    let msgs = out["body"]["messages"].as_array().expect("messages");
    assert!(
        msgs.iter().all(|m| m.get("tool_calls").is_none()),
        "the call went: {msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m["content"].as_str().is_some_and(|c| c.contains("late"))),
        "the orphan became text: {msgs:?}"
    );

    let r = run(&["repair", "--missing-result", "maybe", &arg(&dir, "b.json")]);
    assert_eq!(r.code, 2);
}

#[test]
fn repair_exits_1_when_something_cannot_be_repaired() {
    // Two different calls of one turn share an id: which result answers which cannot be
    // told, so repair leaves them and says so.
    let body = br#"{"model":"gpt-4o","messages":[
        {"role":"user","content":"weather and time?"},
        {"role":"assistant","content":null,"tool_calls":[
            {"id":"call_1","type":"function","function":{"name":"weather","arguments":"{}"}},
            {"id":"call_1","type":"function","function":{"name":"time","arguments":"{}"}}]},
        {"role":"tool","tool_call_id":"call_1","content":"sunny"}]}"#;
    let dir = folder_with(&[("b.json", body)]);
    let r = run(&["repair", &arg(&dir, "b.json")]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("unrepairable[duplicate-call-id]"),
        "{}",
        r.stderr
    );
}

#[test]
fn repair_and_trim_reject_bad_input_with_exit_2() {
    let dir = folder_with(&[("bad.json", b"{\"messages\": [")]);
    for cmd in [vec!["repair"], vec!["trim", "--budget", "10"]] {
        let mut args = cmd.clone();
        let path = arg(&dir, "bad.json");
        args.push(&path);
        let r = run(&args);
        assert_eq!(r.code, 2, "{r:?}");
        assert_eq!(r.err_lines().len(), 1, "{}", r.stderr);
        assert!(r.stderr.contains("line 1"), "{}", r.stderr);
    }
}

#[test]
fn trim_drops_whole_groups_and_reports_tokens() {
    let mut msgs = vec![serde_json::json!({"role": "system", "content": "be brief"})];
    for k in 0..20 {
        msgs.push(serde_json::json!({"role": "user", "content": format!("question {k} about the weather in a city")}));
        msgs.push(serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{k}a"), "type": "function", "function": {"name": "w", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": format!("call_{k}b"), "type": "function", "function": {"name": "w", "arguments": "{\"city\":\"Rome\"}"}}]}));
        msgs.push(serde_json::json!({"role": "tool", "tool_call_id": format!("call_{k}b"), "content": "sunny"}));
        msgs.push(serde_json::json!({"role": "tool", "tool_call_id": format!("call_{k}a"), "content": "rain"}));
        msgs.push(serde_json::json!({"role": "assistant", "content": "Rain and sun."}));
    }
    let body = serde_json::json!({"model": "gpt-4o", "messages": msgs}).to_string();
    let dir = folder_with(&[("long.json", body.as_bytes())]);
    let r = run(&[
        "trim",
        "--budget",
        "300",
        "--keep-last",
        "2",
        "--json",
        &arg(&dir, "long.json"),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = r.json();
    assert_eq!(out["counter"], "o200k_base");
    assert_eq!(out["valid"], true);
    assert!(out["tokens_after"].as_u64() <= Some(300), "{out}");
    assert!(out["tokens_before"].as_u64() > Some(300));
    let kept = out["body"]["messages"].as_array().expect("messages");
    assert_eq!(kept[0]["role"], "system");
    assert_eq!(kept[1]["role"], "user");
    // Every kept tool message still follows its call.
    let dir2 = folder_with(&[("t.json", out["body"].to_string().as_bytes())]);
    assert_eq!(run(&["check", &arg(&dir2, "t.json")]).code, 0);

    let r = run(&["trim", "--budget", "300", &arg(&dir, "long.json")]);
    assert_eq!(r.code, 0);
    assert!(
        r.stderr.contains("tokens (o200k_base), budget 300"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("dropped group"), "{}", r.stderr);
}

#[test]
fn trim_within_budget_gives_back_the_same_bytes() {
    let r = run(&["trim", "--budget", "100000", VALID]);
    assert_eq!(r.code, 0, "{r:?}");
    let original =
        std::fs::read_to_string(crate::support::repo_root().join(VALID)).expect("example");
    assert_eq!(r.stdout, original);
}

/// A long chat tool loop under a system prompt, with `tools` of `tool_text` each.
fn long_loop(tool_text: &str) -> String {
    let mut msgs = vec![serde_json::json!({"role": "system", "content": "be brief"})];
    for k in 0..12 {
        msgs.push(serde_json::json!({"role": "user", "content": format!("question {k} about the weather in a city")}));
        msgs.push(serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{k}"), "type": "function", "function": {"name": "w", "arguments": "{\"city\":\"Paris\"}"}}]}));
        msgs.push(serde_json::json!({"role": "tool", "tool_call_id": format!("call_{k}"), "content": "rain"}));
        msgs.push(serde_json::json!({"role": "assistant", "content": "Rain."}));
    }
    let tools = serde_json::json!([{"type": "function", "function": {"name": "w", "description": tool_text, "parameters": {"type": "object"}}}]);
    serde_json::json!({"model": "gpt-4o", "tools": tools, "messages": msgs}).to_string()
}

#[test]
fn trim_counts_the_tool_definitions_against_the_budget() {
    let short = folder_with(&[("b.json", long_loop("Weather.").as_bytes())]);
    let long = folder_with(&[(
        "b.json",
        long_loop(&"Weather for a city. ".repeat(40)).as_bytes(),
    )]);
    let tokens = |dir: &tempfile::TempDir| {
        let r = run(&["trim", "--budget", "100000", "--json", &arg(dir, "b.json")]);
        assert_eq!(r.code, 0, "{r:?}");
        r.json()["tokens_before"].as_u64().expect("a count")
    };
    // The same history; only the tool's description differs, and it is counted.
    assert!(tokens(&long) > tokens(&short) + 100);
    // Under a budget the long definitions take from the history: more is dropped.
    let dropped = |dir: &tempfile::TempDir| {
        let r = run(&["trim", "--budget", "400", "--json", &arg(dir, "b.json")]);
        r.json()["dropped"].as_array().map(Vec::len).unwrap_or(0)
    };
    assert!(dropped(&long) > dropped(&short));
}

#[test]
fn trim_exits_3_when_the_budget_cannot_be_met() {
    let dir = folder_with(&[(
        "b.json",
        long_loop(&"Weather for a city. ".repeat(200)).as_bytes(),
    )]);
    // The tool definitions alone are over 50 tokens: no cut can meet the budget.
    let r = run(&["trim", "--budget", "50", "--json", &arg(&dir, "b.json")]);
    assert_eq!(r.code, 3, "{r:?}");
    let out = r.json();
    assert_eq!(out["valid"], true);
    assert_eq!(out["over_budget"], true);
    let r = run(&["trim", "--budget", "50", &arg(&dir, "b.json")]);
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("still over budget"), "{}", r.stderr);
}

#[test]
fn trim_repairs_a_damaged_history_first_and_refuses_what_repair_cannot_settle() {
    // An orphan tool message: repaired (dropped), then trimmed; the repair is reported.
    let orphan = crate::support::repo_root().join(ORPHAN);
    let r = run(&[
        "trim",
        "--budget",
        "100000",
        "--json",
        orphan.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = r.json();
    assert_eq!(out["valid"], true);
    assert_eq!(
        out["repairs"][0]["rule"], "tool-result-without-call",
        "{out}"
    );
    let dir = folder_with(&[("t.json", out["body"].to_string().as_bytes())]);
    assert_eq!(run(&["check", &arg(&dir, "t.json")]).code, 0);
    let r = run(&["trim", "--budget", "100000", orphan.to_str().unwrap()]);
    assert!(
        r.stderr.contains("(repaired before trimming)"),
        "{}",
        r.stderr
    );

    // Two calls of one turn share an id: repair cannot tell the results apart, so the
    // body comes back untrimmed, exit 1, with the violation.
    let body = br#"{"model":"gpt-4o","messages":[
        {"role":"user","content":"weather and time?"},
        {"role":"assistant","content":null,"tool_calls":[
            {"id":"call_1","type":"function","function":{"name":"weather","arguments":"{}"}},
            {"id":"call_1","type":"function","function":{"name":"time","arguments":"{}"}}]},
        {"role":"tool","tool_call_id":"call_1","content":"sunny"}]}"#;
    let dir = folder_with(&[("b.json", body)]);
    let r = run(&["trim", "--budget", "1", "--json", &arg(&dir, "b.json")]);
    assert_eq!(r.code, 1, "{r:?}");
    let out = r.json();
    assert_eq!(out["valid"], false);
    assert_eq!(out["dropped"].as_array().map(Vec::len), Some(0));
    assert_eq!(out["violations"][0]["rule"], "duplicate-call-id");
    let original: serde_json::Value = serde_json::from_slice(body).unwrap();
    assert_eq!(out["body"], original);
}
