//! Bad input: each gives exit 2 and one stderr line naming the file, the position and
//! the reason, in bounded time, and never stops the other inputs from being checked.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::support::{arg, folder_with, run, run_with_stdin, VALID_CHAT};

/// Run `check` on one file holding `bytes`; assert exit 2 and exactly one stderr line
/// `mend: FILE: <rest>`; return `<rest>`.
fn one_bad(bytes: &[u8], extra: &[&str]) -> String {
    let dir = folder_with(&[("body.json", bytes)]);
    let file = arg(&dir, "body.json");
    let mut args = vec!["check"];
    args.extend_from_slice(extra);
    args.push(&file);
    let started = Instant::now();
    let r = run(&args);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(r.stdout, "", "nothing on stdout for a bad body");
    let lines = r.err_lines();
    assert_eq!(lines.len(), 1, "one line on stderr: {}", r.stderr);
    let prefix = format!("mend: {file}: ");
    lines[0]
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("`{}` does not start with `{prefix}`", lines[0]))
        .to_string()
}

#[test]
fn an_empty_file() {
    assert_eq!(one_bad(b"", &[]), "empty input: no JSON at all");
    assert_eq!(one_bad(b" \n\t\n", &[]), "empty input: no JSON at all");
}

#[test]
fn a_truncated_file() {
    let why = one_bad(
        b"{\"messages\": [{\"role\": \"user\",\n \"content\": \"hel",
        &[],
    );
    assert!(
        why.starts_with("line 2, column 16: truncated JSON"),
        "{why}"
    );
    // Cut right after a newline: still a 1-based column.
    let why = one_bad(b"{\"messages\": [\n", &[]);
    assert!(why.starts_with("line 2, column 1: truncated JSON"), "{why}");
}

#[test]
fn not_json() {
    let why = one_bad(b"{\"messages\": [}\n", &[]);
    assert!(why.starts_with("line 1, column 15: not JSON"), "{why}");
}

#[test]
fn a_byte_order_mark() {
    let why = one_bad(b"\xEF\xBB\xBF{\"messages\": []}", &[]);
    assert_eq!(
        why,
        "line 1, column 1: not JSON: it starts with a byte-order mark (EF BB BF); save the file as UTF-8 without one"
    );
}

#[test]
fn invalid_utf8() {
    let why = one_bad(
        b"{\"messages\": [\n{\"role\": \"user\", \"content\": \"\xff\xfe\"}]}",
        &[],
    );
    assert_eq!(why, "line 2, column 30: invalid UTF-8 (byte 44)");
}

#[test]
fn json_nested_10000_deep() {
    let mut deep = "[".repeat(10_000);
    deep.push_str(&"]".repeat(10_000));
    let why = one_bad(deep.as_bytes(), &[]);
    assert!(why.starts_with("line 1, column "), "{why}");
    assert!(why.contains("nested too deeply"), "{why}");

    let mut deep = r#"{"messages": "#.to_string();
    for _ in 0..10_000 {
        deep.push_str(r#"{"a": "#);
    }
    let why = one_bad(deep.as_bytes(), &["--dialect", "openai_chat"]);
    assert!(why.contains("nested too deeply"), "{why}");
}

#[test]
fn an_array_or_a_string_is_no_request() {
    let why = one_bad(b"[1,2]", &[]);
    assert!(
        why.starts_with("cannot tell the dialect: the body is an array"),
        "{why}"
    );
    let why = one_bad(b"\"str\"", &[]);
    assert!(
        why.starts_with("cannot tell the dialect: the body is a string"),
        "{why}"
    );
    let why = one_bad(b"[1,2]", &["--dialect", "gemini"]);
    assert!(why.starts_with("cannot read it as gemini: "), "{why}");
}

#[test]
fn an_undetectable_dialect_says_which_were_possible() {
    // No sign of either dialect, and `max_tokens`, which Anthropic requires and chat
    // takes.
    let why = one_bad(
        br#"{"max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}"#,
        &[],
    );
    assert!(why.contains("openai_chat, anthropic"), "{why}");
    assert!(why.contains("--dialect"), "{why}");
    let why = one_bad(br#"{"model": "x"}"#, &[]);
    assert!(why.starts_with("cannot tell the dialect: "), "{why}");
}

#[test]
fn a_body_without_a_history_is_bad_input() {
    let why = one_bad(br#"{"model": "gpt-4o"}"#, &["--dialect", "openai_chat"]);
    assert_eq!(
        why,
        "cannot read it as openai_chat: the body has no `messages` array"
    );
    let why = one_bad(br#"{"model": "x"}"#, &["--dialect", "gemini"]);
    assert!(why.starts_with("cannot read it as gemini: "), "{why}");
}

/// A history key of the wrong type is a body of the dialect whose history is broken: a
/// `malformed` finding in the report (exit 1), in text and in JSON, not a usage error.
#[test]
fn a_history_of_the_wrong_type_is_a_malformed_finding() {
    for (body, dialect, path) in [
        (&br#"{"messages": "hi"}"#[..], "openai_chat", "/messages"),
        (
            br#"{"model": "gpt-4o", "messages": {"role": "user", "content": "hi"}}"#,
            "openai_chat",
            "/messages",
        ),
        (br#"{"contents": {"role": "user"}}"#, "gemini", "/contents"),
        (br#"{"input": 42}"#, "openai_responses", "/input"),
        (
            br#"{"messages": {"role": "user"}, "inferenceConfig": {}}"#,
            "bedrock_converse",
            "/messages",
        ),
    ] {
        let dir = folder_with(&[("body.json", body)]);
        let file = arg(&dir, "body.json");
        let r = run(&["check", "--dialect", dialect, "--json", &file]);
        assert_eq!(r.code, 1, "{r:?}");
        let report: serde_json::Value = serde_json::from_str(&r.stdout).expect("a JSON report");
        let found = &report["violations"];
        assert_eq!(found.as_array().map(Vec::len), Some(1), "{}", r.stdout);
        assert_eq!(found[0]["rule"], "malformed");
        assert_eq!(found[0]["path"], path);
        let text = run(&["check", "--dialect", dialect, &file]);
        assert_eq!(text.code, 1);
        assert!(text.stdout.contains("error[malformed]"), "{}", text.stdout);
    }
}

#[test]
fn a_provider_that_does_not_serve_the_dialect() {
    let why = one_bad(VALID_CHAT.as_bytes(), &["--provider", "bedrock"]);
    assert_eq!(
        why,
        "provider 'bedrock' does not serve the openai_chat dialect"
    );
}

#[test]
fn a_missing_file() {
    let r = run(&["check", "no/such/file.json"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.err_lines().len(), 1);
    assert!(
        r.stderr
            .starts_with("mend: no/such/file.json: cannot read: "),
        "{}",
        r.stderr
    );
}

#[test]
fn an_unknown_dialect_or_provider_is_one_line() {
    let r = run(&["check", "--dialect", "cobol", "examples/"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.err_lines(),
        ["mend: unknown dialect 'cobol' (expected one of auto, openai_chat, openai_responses, anthropic, gemini, bedrock_converse)"]
    );
    let r = run(&[
        "inspect",
        "--provider",
        "acme",
        "examples/anthropic-valid-parallel-tools.json",
    ]);
    assert_eq!(r.code, 2);
    assert_eq!(r.err_lines().len(), 1);
    assert!(
        r.stderr
            .starts_with("mend: unknown provider 'acme' (known: generic, openai"),
        "{}",
        r.stderr
    );
}

#[test]
fn bad_inputs_do_not_stop_the_others() {
    let dir = folder_with(&[
        ("1-empty.json", b""),
        ("2-valid.json", VALID_CHAT.as_bytes()),
        ("3-array.json", b"[1,2]"),
        ("4-utf8.json", b"{\"messages\": \"\xc3\x28\"}"),
    ]);
    let r = run(&["check", &dir.path().display().to_string(), "missing.json"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stdout,
        format!(
            "{}: valid (openai_chat, provider openai)\n",
            arg(&dir, "2-valid.json")
        )
    );
    let err = r.err_lines();
    assert_eq!(err.len(), 5, "{}", r.stderr);
    for (line, name) in err
        .iter()
        .zip(["1-empty.json", "3-array.json", "4-utf8.json"])
    {
        assert!(
            line.starts_with(&format!("mend: {}: ", arg(&dir, name))),
            "{line}"
        );
    }
    assert!(err[3].starts_with("mend: missing.json: cannot read: "));
    assert_eq!(
        err[4],
        "mend: 5 bodies checked: 1 valid, 0 invalid, 4 unreadable"
    );
}

#[test]
fn an_empty_folder_or_jsonl_file_is_bad_input() {
    let dir = folder_with(&[("empty.jsonl", b"\n\n")]);
    let r = run(&["check", "--jsonl", &arg(&dir, "empty.jsonl")]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("empty.jsonl: empty input: no JSON lines at all"),
        "{}",
        r.stderr
    );
    let r = run(&["check", &dir.path().display().to_string()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("a folder with no *.json files"),
        "{}",
        r.stderr
    );
}

#[test]
fn inspect_reports_bad_input_the_same_way() {
    let r = run_with_stdin(&["inspect", "-"], b"{\"messages\": [".to_vec());
    assert_eq!(r.code, 2);
    assert_eq!(
        r.err_lines(),
        ["mend: <stdin>: line 1, column 14: truncated JSON: EOF while parsing a list"]
    );
    let r = run(&["inspect", "examples"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.err_lines().len(), 1);
}

/// A long, valid OpenAI chat tool loop of about `bytes` bytes.
fn long_tool_loop(bytes: usize) -> Vec<u8> {
    let pad = "x".repeat(2000);
    let mut s = String::with_capacity(bytes + 4096);
    s.push_str(r#"{"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}"#);
    let mut i = 0;
    while s.len() < bytes {
        let _ = write!(
            s,
            r#",{{"role": "assistant", "content": null, "tool_calls": [{{"id": "call_{i}", "type": "function", "function": {{"name": "step", "arguments": "{{}}"}}}}]}},{{"role": "tool", "tool_call_id": "call_{i}", "content": "{pad}"}}"#
        );
        i += 1;
    }
    s.push_str("]}");
    s.into_bytes()
}

/// 100 MB bodies are checked in seconds and never panic. The full size runs in debug
/// builds too: about 3 s for the tool loop and under 1 s for the one huge string.
#[test]
fn a_100_mb_body() {
    const SIZE: usize = 100 * 1024 * 1024;
    let dir = folder_with(&[]);
    let looped = arg(&dir, "loop.json");
    std::fs::write(&looped, long_tool_loop(SIZE)).expect("write");
    let started = Instant::now();
    let r = run(&["check", &looped]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!("{looped}: valid (openai_chat, provider openai)\n")
    );
    eprintln!("100 MB tool loop checked in {:?}", started.elapsed());

    // One huge string, and the same body cut in the middle.
    let mut huge = br#"{"model": "gpt-4o", "messages": [{"role": "user", "content": ""#.to_vec();
    huge.resize(huge.len() + SIZE, b'y');
    let cut = huge.clone();
    huge.extend_from_slice(br#""}]}"#);
    let r = run_with_stdin(&["check", "-"], huge);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run_with_stdin(&["check", "-"], cut);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.starts_with("mend: <stdin>: line 1, column "),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("truncated JSON"), "{}", r.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}
