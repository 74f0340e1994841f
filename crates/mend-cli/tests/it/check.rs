//! `mend check`: exit codes, human lines, `--json` shapes, folders, JSON Lines, stdin.

use serde_json::Value;

use crate::support::{arg, folder_with, run, run_with_stdin, UNANSWERED_CHAT, VALID_CHAT};

const VALID: &str = "examples/anthropic-valid-parallel-tools.json";
const ORPHAN: &str = "examples/openai_chat-orphan-tool.json";

#[test]
fn a_valid_body_exits_0_and_says_so() {
    let r = run(&["check", VALID]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stdout,
        format!("{VALID}: valid (anthropic, provider anthropic)\n")
    );
    assert_eq!(r.stderr, "", "one body: no summary");
}

#[test]
fn violations_exit_1_with_a_line_each_and_the_providers_words() {
    let r = run(&["check", ORPHAN]);
    assert_eq!(r.code, 1, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    // The line README.md shows.
    assert_eq!(
        lines[0],
        format!(
            "{ORPHAN} /messages/3 error[tool-result-without-call] the tool result answers `call_7Gq2x`, but no earlier tool call has that id"
        )
    );
    assert!(
        lines[1].starts_with("    provider says: \"Invalid parameter: messages with role 'tool'"),
        "{}",
        lines[1]
    );
    assert!(!r.stdout.contains('\x1b'), "no colour on a pipe");
}

#[test]
fn warnings_alone_still_exit_0() {
    // Two user messages in a row: the first-party Anthropic API merges them (a
    // warning), Bedrock rejects them (an error).
    let body = r#"{"model": "claude-sonnet-4-5", "max_tokens": 10, "system": "s", "messages": [
      {"role": "user", "content": "hi"}, {"role": "user", "content": "again"}]}"#;
    let r = run_with_stdin(&["check", "-"], body.into());
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r
        .stdout
        .starts_with("<stdin>: valid (anthropic, provider anthropic)\n"));
    assert!(r
        .stdout
        .contains("<stdin> /messages/1 warning[role-order] "));

    let r = run_with_stdin(&["check", "--provider", "bedrock", "-"], body.into());
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("<stdin> /messages/1 error[role-order] "));
}

#[test]
fn provider_dialect_and_model_options_reach_the_library() {
    let r = run(&["check", "--provider", "mistral", ORPHAN]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("error[invalid-call-id]"), "{}", r.stdout);

    let r = run_with_stdin(
        &["check", "--json", "--dialect", "openai_chat", "-"],
        VALID_CHAT.into(),
    );
    assert_eq!(r.code, 0);
    // The body's model (gpt-4o) names OpenAI.
    assert_eq!(r.json()["provider"], "openai");

    let r = run_with_stdin(
        &["check", "--json", "--model", "deepseek-chat", "-"],
        VALID_CHAT.into(),
    );
    assert_eq!(r.json()["provider"], "deepseek", "{}", r.stdout);
}

#[test]
fn json_for_one_body_is_exactly_the_design_object() {
    let r = run_with_stdin(&["check", "--json", "-"], UNANSWERED_CHAT.into());
    assert_eq!(r.code, 1);
    let v = r.json();
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["dialect", "provider", "valid", "violations"]);
    assert_eq!(v["dialect"], "openai_chat");
    assert_eq!(v["valid"], false);
    let viol = &v["violations"][0];
    let keys: Vec<&str> = viol
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["rule", "severity", "path", "message", "provider_error"]
    );
    assert_eq!(viol["rule"], "tool-call-without-result");
    assert_eq!(viol["severity"], "error");
    assert_eq!(viol["path"], "/messages/1/tool_calls/0");

    let r = run(&["check", "--json", VALID]);
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["violations"], Value::Array(vec![]));
    assert_eq!(r.json()["valid"], true);
}

#[test]
fn json_for_several_bodies_has_results_and_a_summary() {
    let dir = folder_with(&[
        ("bad.json", UNANSWERED_CHAT.as_bytes()),
        ("broken.json", b"{\"messages\": ["),
    ]);
    let (bad, broken) = (arg(&dir, "bad.json"), arg(&dir, "broken.json"));
    let r = run(&["check", "--json", VALID, &bad, &broken]);
    assert_eq!(r.code, 2, "an unreadable body wins: {r:?}");
    let v = r.json();
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["file"], VALID);
    assert_eq!(results[0]["valid"], true);
    assert_eq!(results[0]["dialect"], "anthropic");
    assert!(results[0].get("line").is_none());
    assert_eq!(results[1]["file"], bad.as_str());
    assert_eq!(
        results[1]["violations"][0]["rule"],
        "tool-call-without-result"
    );
    assert_eq!(results[2]["file"], broken.as_str());
    let err = results[2]["error"].as_str().expect("error text");
    assert!(
        err.starts_with("line 1, column 14: truncated JSON"),
        "{err}"
    );
    assert_eq!(
        v["summary"],
        serde_json::json!({"bodies": 3, "valid": 1, "invalid": 1, "unreadable": 1,
                           "by_rule": {"tool-call-without-result": 1}})
    );
    // The bad input still gets its one stderr line.
    assert_eq!(r.err_lines().len(), 1, "{}", r.stderr);
    assert!(r
        .stderr
        .starts_with(&format!("mend: {broken}: line 1, column 14: ")));
}

#[test]
fn a_folder_is_walked_recursively_sorted_json_only() {
    let dir = folder_with(&[
        ("b.json", UNANSWERED_CHAT.as_bytes()),
        ("a/z.json", VALID_CHAT.as_bytes()),
        ("a.json", VALID_CHAT.as_bytes()),
        ("notes.txt", b"not a body"),
        ("c.jsonl", b"not a body either"),
    ]);
    let root = dir.path().display().to_string();
    let r = run(&["check", &root]);
    assert_eq!(r.code, 1, "{r:?}");
    let files: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split([' ', ':']).next())
        .collect();
    let p = |n: &str| arg(&dir, n);
    // Sorted by path components: a folder's files come where the folder's name sorts.
    assert_eq!(files, [p("a/z.json"), p("a.json"), p("b.json")]);
    assert_eq!(
        r.err_lines(),
        [
            "mend: 3 bodies checked: 2 valid, 1 invalid, 0 unreadable",
            "  1  tool-call-without-result"
        ]
    );
}

#[test]
fn a_folder_with_one_file_still_gives_results_in_json() {
    let dir = folder_with(&[("only.json", VALID_CHAT.as_bytes())]);
    let r = run(&["check", "--json", &dir.path().display().to_string()]);
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["summary"]["bodies"], 1);
}

#[test]
fn the_examples_folder_shows_real_violations() {
    let r = run(&["check", "examples/"]);
    assert_eq!(r.code, 1, "{r:?}");
    for rule in [
        "tool-result-without-call",
        "reasoning-without-follower",
        "tool-result-not-adjacent",
        "function-response-count",
        "invalid-call-id",
    ] {
        assert!(
            r.stdout.contains(&format!("error[{rule}]")),
            "{rule}: {}",
            r.stdout
        );
    }
    assert!(r
        .stdout
        .contains("anthropic-valid-parallel-tools.json: valid"));
    insta::assert_snapshot!("check_examples_stdout", r.stdout);
    insta::assert_snapshot!("check_examples_stderr", r.stderr);
}

#[test]
fn jsonl_checks_each_line_and_names_it() {
    let unanswered = UNANSWERED_CHAT.replace('\n', " ");
    let valid = VALID_CHAT.replace('\n', " ");
    let text = format!("{valid}\n\n   \n{unanswered}\r\n{{\"messages\": [1,\n");
    let dir = folder_with(&[("log.jsonl", text.as_bytes())]);
    let file = arg(&dir, "log.jsonl");
    let r = run(&["check", "--jsonl", &file]);
    assert_eq!(r.code, 2, "{r:?}");
    let out: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        out[0],
        format!("{file}:1: valid (openai_chat, provider openai)")
    );
    assert!(out[1].starts_with(&format!(
        "{file}:4 /messages/1/tool_calls/0 error[tool-call-without-result]"
    )));
    let err = r.err_lines();
    assert!(
        err[0].starts_with(&format!("mend: {file}:5: line 1, column "))
            && err[0].contains("truncated JSON"),
        "{}",
        r.stderr
    );
    assert_eq!(
        err[1],
        "mend: 3 bodies checked: 1 valid, 1 invalid, 1 unreadable"
    );

    let r = run(&["check", "--jsonl", "--json", &file]);
    let v = r.json();
    let lines: Vec<&Value> = v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|e| &e["line"])
        .collect();
    assert_eq!(lines, [1, 4, 5]);
    assert_eq!(v["results"][0]["file"], file.as_str());
    assert_eq!(v["summary"]["bodies"], 3);
}

#[test]
fn jsonl_folders_take_jsonl_files() {
    let dir = folder_with(&[
        ("x/1.jsonl", VALID_CHAT.replace('\n', " ").as_bytes()),
        ("skip.json", b"[1,2]"),
    ]);
    let r = run(&["check", "--jsonl", &dir.path().display().to_string()]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stdout,
        format!(
            "{}:1: valid (openai_chat, provider openai)\n",
            arg(&dir, "x/1.jsonl")
        )
    );
}

#[test]
fn stdin_is_read_with_a_dash() {
    let r = run_with_stdin(&["check", "-"], VALID_CHAT.into());
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "<stdin>: valid (openai_chat, provider openai)\n");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["check"]).code, 2);
    assert_eq!(run(&["check", "--no-such-flag", VALID]).code, 2);
    assert_eq!(run(&["frobnicate"]).code, 2);
    assert_eq!(run(&[]).code, 2);
}
