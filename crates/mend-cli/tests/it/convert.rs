//! `mend convert`: the converted body on stdout checks valid for the target, every loss
//! is on stderr with its source pointer, `--json` gives one object, and bad input or
//! usage exits 2 with a line that says what and where.

use crate::support::{arg, folder_with, run, run_with_stdin};

const VALID: &str = "examples/anthropic-valid-parallel-tools.json";
const ORPHAN: &str = "examples/openai_chat-orphan-tool.json";
/// The example declares no tools, which Converse requires of a tool history: that target
/// is `a_tool_history_without_tools_to_converse_says_why_it_is_invalid`.
const DIALECTS: [&str; 4] = ["openai_chat", "openai_responses", "anthropic", "gemini"];

#[test]
fn every_other_dialect_gets_a_body_that_checks_valid() {
    for to in DIALECTS.into_iter().filter(|d| *d != "anthropic") {
        let r = run(&["convert", "--to", to, VALID]);
        assert_eq!(r.code, 0, "{to}: {r:?}");
        assert!(
            r.stderr.contains(&format!("anthropic -> {to}:"))
                && r.stderr.contains("the output checks valid"),
            "{to}: {}",
            r.stderr
        );
        let dir = folder_with(&[("out.json", r.stdout.as_bytes())]);
        let check = run(&["check", "--dialect", to, &arg(&dir, "out.json")]);
        assert_eq!(check.code, 0, "{to}: {check:?}\n{}", r.stdout);
    }
}

#[test]
fn losses_are_reported_with_their_source_pointers() {
    let body = br#"{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[
        {"role":"user","content":"hi"},
        {"role":"assistant","content":[
            {"type":"thinking","thinking":"hmm","signature":"EqQBsig"},
            {"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}"#;
    let r = run_with_stdin(&["convert", "--to", "openai_chat", "-"], body.to_vec());
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("<stdin> /messages/1/content/0 lost[signature] anthropic reasoning"),
        "{}",
        r.stderr
    );
    assert!(
        // The signature, and the Claude model, which would make a chat body read as
        // Anthropic (so no model is known for chat: give --model).
        r.stderr
            .contains("2 lost, 0 added, 0 moved, 0 changed, 1 missing"),
        "{}",
        r.stderr
    );
    let out: serde_json::Value = serde_json::from_str(&r.stdout).expect("a JSON body");
    assert_eq!(out["messages"][2]["role"], "tool");
    assert_eq!(out["messages"][2]["tool_call_id"], "toolu_1");
}

#[test]
fn json_output_is_one_object_with_the_report_and_the_body() {
    let r = run(&["convert", "--to", "gemini", "--json", VALID]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = r.json();
    assert_eq!(v["from"], "anthropic");
    assert_eq!(v["to"], "gemini");
    assert_eq!(v["provider"], "gemini");
    assert_eq!(v["valid"], true);
    for k in ["losses", "notes", "edits", "violations"] {
        assert!(v[k].is_array(), "{k}: {v}");
    }
    assert!(v["body"]["contents"].is_array(), "{v}");
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn a_source_broken_in_its_own_dialect_is_repaired_first() {
    let r = run(&["convert", "--to", "anthropic", ORPHAN]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("source /messages/3 drop[tool-result-without-call]"),
        "{}",
        r.stderr
    );
}

#[test]
fn ids_take_the_target_providers_form() {
    let r = run(&[
        "convert",
        "--to",
        "openai_chat",
        "--provider",
        "mistral",
        "--json",
        VALID,
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = r.json();
    let msgs = v["body"]["messages"].as_array().expect("messages");
    let call_ids: Vec<&str> = msgs
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .filter_map(|c| c["id"].as_str())
        .collect();
    let result_ids: Vec<&str> = msgs
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert!(!call_ids.is_empty(), "{v}");
    for id in &call_ids {
        assert!(
            id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()),
            "{id} is not Mistral's form"
        );
    }
    assert_eq!(call_ids, result_ids, "calls and results renamed alike");
}

#[test]
fn bad_input_and_usage_exit_2_with_one_clear_line() {
    let not_json = run_with_stdin(
        &["convert", "--to", "anthropic", "-"],
        b"{\"messages\": [".to_vec(),
    );
    assert_eq!(not_json.code, 2, "{not_json:?}");
    assert!(
        not_json.stderr.contains("<stdin>: line 1") && not_json.stderr.contains("JSON"),
        "{}",
        not_json.stderr
    );
    let unknown = run(&["convert", "--to", "klingon", VALID]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(
        unknown.stderr.contains("unknown target dialect 'klingon'"),
        "{}",
        unknown.stderr
    );
    let wrong_from = run(&["convert", "--from", "gemini", "--to", "anthropic", VALID]);
    assert_eq!(wrong_from.code, 2, "{wrong_from:?}");
    assert!(
        wrong_from
            .stderr
            .contains("reads as anthropic, not as gemini as given"),
        "{}",
        wrong_from.stderr
    );
    let provider = run(&["convert", "--to", "anthropic", "--provider", "acme", VALID]);
    assert_eq!(provider.code, 2, "{provider:?}");
    assert!(
        provider.stderr.contains("unknown provider 'acme'"),
        "{}",
        provider.stderr
    );
    let mismatch = run(&[
        "convert",
        "--to",
        "anthropic",
        "--provider",
        "mistral",
        ORPHAN,
    ]);
    assert_eq!(mismatch.code, 2, "{mismatch:?}");
    let folder = run(&["convert", "--to", "anthropic", "examples"]);
    assert_eq!(folder.code, 2, "{folder:?}");
    let missing_to = run(&["convert", VALID]);
    assert_eq!(missing_to.code, 2, "{missing_to:?}");
    for r in [
        &not_json,
        &unknown,
        &wrong_from,
        &provider,
        &mismatch,
        &folder,
    ] {
        assert!(
            r.stdout.is_empty(),
            "nothing on stdout for bad input: {r:?}"
        );
        assert_eq!(r.err_lines().len(), 1, "one line: {r:?}");
    }
}

#[test]
fn no_repair_converts_as_it_is_and_the_target_check_names_what_broke() {
    let r = run(&["convert", "--to", "anthropic", "--no-repair", ORPHAN]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        !r.stderr.contains(" source "),
        "no source edit: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("target") && r.stderr.contains("[tool-result-without-call]"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("does not check valid for anthropic"),
        "{}",
        r.stderr
    );
    let out: serde_json::Value = serde_json::from_str(&r.stdout).expect("a body all the same");
    assert!(out["messages"].is_array(), "{out}");
}

/// A Claude tool loop on Converse (no model in the body: it is in the URL).
const CONVERSE: &[u8] = br#"{"messages": [
    {"role": "user", "content": [{"text": "Book a table at 8."}]},
    {"role": "assistant", "content": [
        {"reasoningContent": {"reasoningText": {"text": "call it", "signature": "EqQBsig"}}},
        {"toolUse": {"toolUseId": "tooluse_1", "name": "book", "input": {"time": "20:00"}}}]},
    {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "booked"}]}}]}],
  "inferenceConfig": {"maxTokens": 2048},
  "toolConfig": {"tools": [{"toolSpec": {"name": "book", "inputSchema": {"json": {"type": "object"}}}}]},
  "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}}"#;

#[test]
fn converse_converts_from_and_to_with_the_model_from_the_option() {
    let r = run_with_stdin(
        &[
            "convert",
            "--to",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "-",
        ],
        CONVERSE.to_vec(),
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("bedrock_converse -> anthropic: 0 lost, 0 added, 0 moved"),
        "{}",
        r.stderr
    );
    let out: serde_json::Value = serde_json::from_str(&r.stdout).expect("a JSON body");
    assert_eq!(out["model"], "claude-sonnet-4-5");
    assert_eq!(out["max_tokens"], 2048);
    assert_eq!(out["thinking"]["budget_tokens"], 1024);
    assert_eq!(out["messages"][1]["content"][0]["signature"], "EqQBsig");

    // And back: the model goes to the URL, said on stderr.
    let back = run_with_stdin(
        &[
            "convert",
            "--from",
            "anthropic",
            "--to",
            "bedrock_converse",
            "-",
        ],
        r.stdout.into_bytes(),
    );
    assert_eq!(back.code, 0, "{back:?}");
    assert!(
        back.stderr.contains(
            "/model moved[model] Converse takes the model in the URL: POST /model/claude-sonnet-4-5/converse"
        ),
        "{}",
        back.stderr
    );
    let again: serde_json::Value = serde_json::from_str(&back.stdout).expect("a JSON body");
    let original: serde_json::Value = serde_json::from_slice(CONVERSE).expect("JSON");
    assert_eq!(again, original);
}

#[test]
fn a_tool_history_without_tools_to_converse_says_why_it_is_invalid() {
    let body = br#"{"model": "gpt-4o", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]}"#;
    let r = run_with_stdin(&["convert", "--to", "bedrock_converse", "-"], body.to_vec());
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("target /messages/1/content/0 error[tools-undeclared]")
            && r.stderr
                .contains("the output does not check valid for bedrock_converse"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_converse_body_it_cannot_read_exits_2_saying_where() {
    let r = run_with_stdin(
        &[
            "convert",
            "--from",
            "bedrock_converse",
            "--to",
            "gemini",
            "-",
        ],
        br#"{"messages": {"role": "user"}}"#.to_vec(),
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("/messages: `messages` is an object but must be an array"),
        "{}",
        r.stderr
    );
}
