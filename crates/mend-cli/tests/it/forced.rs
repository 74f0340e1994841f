//! A dialect given on the command line (`--dialect`, `--from`) that the body
//! contradicts: every command says so naming both and exits 2, unless `--force`, with
//! which the body is read as given and what that dialect cannot read is reported. A body
//! that fits several dialects contradicts none of them.

use crate::support::{folder_with, run, run_with_stdin};

/// A chat body no other dialect reads: a tool call and its `tool` message.
const CHAT: &[u8] = br#"{"model":"gpt-4o","messages":[
    {"role":"user","content":"hi"},
    {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
        "function":{"name":"f","arguments":"{}"}}]},
    {"role":"tool","tool_call_id":"call_1","content":"ok"}]}"#;

/// An Anthropic body that is unmistakably one: a string `system`, tool blocks.
const ANTHROPIC: &[u8] = br#"{"model":"claude-sonnet-4-5","max_tokens":1024,"system":"be brief",
    "messages":[{"role":"user","content":"hi"},
    {"role":"assistant","content":[{"type":"text","text":"hello"},
        {"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}"#;

fn names_both(stderr: &str, given: &str, detected: &str) -> bool {
    stderr.contains(&format!("reads as {detected}, not as {given} as given"))
        && stderr.contains("--force")
}

#[test]
fn every_command_refuses_a_dialect_the_body_contradicts() {
    let dir = folder_with(&[("chat.json", CHAT)]);
    let file = crate::support::arg(&dir, "chat.json");
    for args in [
        vec!["check", "--dialect", "anthropic", file.as_str()],
        vec!["inspect", "--dialect", "anthropic", file.as_str()],
        vec!["repair", "--dialect", "anthropic", file.as_str()],
        vec![
            "trim",
            "--dialect",
            "anthropic",
            "--budget",
            "100",
            file.as_str(),
        ],
        vec![
            "convert",
            "--from",
            "anthropic",
            "--to",
            "gemini",
            file.as_str(),
        ],
    ] {
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(
            names_both(&r.stderr, "anthropic", "openai_chat"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            r.stdout.is_empty() || args[0] == "check",
            "{args:?}: {}",
            r.stdout
        );
    }
}

#[test]
fn check_with_force_reads_the_body_as_given() {
    let r = run_with_stdin(
        &["check", "--dialect", "anthropic", "--force", "-"],
        CHAT.to_vec(),
    );
    // Read as Anthropic, the chat body breaks Anthropic's rules: a verdict, not bad input.
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("error[role-order]"), "{}", r.stdout);
    assert!(r.stdout.contains("error[malformed]"), "{}", r.stdout);
}

#[test]
fn convert_with_force_reports_what_the_given_dialect_cannot_read() {
    let r = run_with_stdin(
        &[
            "convert",
            "--from",
            "openai_chat",
            "--to",
            "gemini",
            "--force",
            "-",
        ],
        ANTHROPIC.to_vec(),
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains(
            "lost[dialect] the body reads as anthropic and was converted as openai_chat (forced)"
        ),
        "{}",
        r.stderr
    );
    // Chat has no tool blocks: the call and its result are lost, said where they were.
    assert!(
        r.stderr
            .contains("/messages/1/content/1 lost[opaque-part] a `tool_use` part"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("/messages/2/content/0 lost[opaque-part] a `tool_result` part"),
        "{}",
        r.stderr
    );
    let out: serde_json::Value = serde_json::from_str(&r.stdout).expect("a JSON body");
    assert_eq!(out["contents"][1]["parts"][0]["text"], "hello");
    assert!(out["contents"][1]["parts"]
        .as_array()
        .is_some_and(|p| p.len() == 1));
}

#[test]
fn a_body_that_fits_several_dialects_contradicts_none() {
    let plain = br#"{"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;
    for d in ["openai_chat", "anthropic"] {
        let r = run_with_stdin(&["check", "--dialect", d, "-"], plain.to_vec());
        assert_eq!(r.code, 0, "{d}: {r:?}");
    }
    let r = run_with_stdin(&["check", "-"], plain.to_vec());
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("could be any of openai_chat, anthropic"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_right_dialect_given_is_no_contradiction() {
    let r = run_with_stdin(&["check", "--dialect", "openai_chat", "-"], CHAT.to_vec());
    assert_eq!(r.code, 0, "{r:?}");
    let r = run_with_stdin(
        &["convert", "--from", "anthropic", "--to", "openai_chat", "-"],
        ANTHROPIC.to_vec(),
    );
    assert_eq!(r.code, 0, "{r:?}");
}

/// A Converse body names no model: `--source-model` gives it, for the source's rules and
/// as the target's (a Bedrock Claude id under Anthropic's name).
#[test]
fn the_source_model_of_a_converse_body_names_the_target_model() {
    let converse = br#"{"messages":[
        {"role":"assistant","content":[{"text":"Hello there!"}]},
        {"role":"user","content":[{"text":"Now say goodbye."}]}]}"#;
    let r = run_with_stdin(&["convert", "--to", "anthropic", "-"], converse.to_vec());
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("/model missing[model] anthropic requires `model`")
            && r.stderr.contains("give it with --model"),
        "{}",
        r.stderr
    );
    let out: serde_json::Value = serde_json::from_str(&r.stdout).expect("a JSON body");
    assert!(out.get("model").is_none(), "{out}");

    let r = run_with_stdin(
        &[
            "convert",
            "--to",
            "anthropic",
            "--source-model",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "-",
        ],
        converse.to_vec(),
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("changed[model]"), "{}", r.stderr);
    assert!(!r.stderr.contains("missing[model]"), "{}", r.stderr);
    let out: serde_json::Value = serde_json::from_str(&r.stdout).expect("a JSON body");
    assert_eq!(out["model"], "claude-sonnet-4-5-20250929");
    let dir = folder_with(&[("out.json", r.stdout.as_bytes())]);
    // Detected without a hint.
    let check = run(&["check", &crate::support::arg(&dir, "out.json")]);
    assert_eq!(check.code, 0, "{check:?}");
    assert!(check.stdout.contains("anthropic"), "{}", check.stdout);

    // To chat, a Claude model would make the body read as Anthropic: not carried.
    let r = run_with_stdin(
        &[
            "convert",
            "--to",
            "openai_chat",
            "--source-model",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "-",
        ],
        converse.to_vec(),
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains("lost[model]") && r.stderr.contains("read as Anthropic"),
        "{}",
        r.stderr
    );
    let out: serde_json::Value = serde_json::from_str(&r.stdout).expect("a JSON body");
    assert!(out.get("model").is_none(), "{out}");
}
