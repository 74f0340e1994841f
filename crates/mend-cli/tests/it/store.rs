//! `mend store`: messages go in and come out with their bytes, keys replay, validation
//! refuses with the rule's name, and the store lives where `--db` (or the default) says.

use crate::support::{mend, run, run_with_stdin, Run};

fn db(dir: &tempfile::TempDir) -> String {
    format!("sqlite:{}", dir.path().join("m.db").display())
}

fn store(db: &str, args: &[&str], stdin: &str) -> Run {
    let mut all = vec!["store", "--db", db];
    all.extend_from_slice(args);
    run_with_stdin(&all, stdin.as_bytes().to_vec())
}

const TURN: &str = r#"{"model": "gpt-4o", "messages": [
  {"role": "user", "content": "caf\u00e9 at 1.50?"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]}
]}"#;

#[test]
fn append_then_load_gives_back_each_message_token_for_token() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    let r = store(&db, &["append", "c1", "-", "--key", "t1"], TURN);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "c1: appended 2 messages as sequences 1..2\n");
    assert!(r.stderr.contains("not stored: model"), "{}", r.stderr);
    let r = store(&db, &["load", "c1"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "[\n{\"role\":\"user\",\"content\":\"caf\\u00e9 at 1.50?\"},\n\
         {\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"w\",\"arguments\":\"{}\"}}]}\n]\n"
    );
    // The same key again writes nothing.
    let r = store(&db, &["append", "c1", "-", "--key", "t1", "--json"], TURN);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(
        (j["replayed"].as_bool(), j["sequences"].clone()),
        (Some(true), serde_json::json!([1, 2]))
    );
    // A reasoning-only assistant message, alone in its append, is kept as it is.
    let r = store(
        &db,
        &["append", "c1", "--jsonl"],
        "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"x\"}\n\n{\"role\":\"assistant\",\"reasoning_content\":\"hm\",\"content\":\"\"}\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = store(&db, &["load", "c1", "--from", "4", "--meta"], "");
    let j = r.json();
    assert_eq!(j[0]["seq"], 4);
    assert_eq!(j[0]["message"]["reasoning_content"], "hm");
}

#[test]
fn validation_refuses_naming_the_rule_and_load_as_renders_a_checked_body() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    let r = store(&db, &["append", "c", "-", "--validate", "reject"], TURN);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = store(
        &db,
        &["append", "c", "-", "--validate", "reject"],
        r#"{"role": "user", "content": "and?"}"#,
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("tool-call-without-result"),
        "{}",
        r.stderr
    );
    // As a request body now: the call is unanswered, so the body is printed and exit 1.
    let r = store(
        &db,
        &["load", "c", "--as", "openai_chat", "--model", "gpt-4o"],
        "",
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.json()["messages"].as_array().map(Vec::len), Some(2));
    assert!(
        r.stderr.contains("tool-call-without-result"),
        "{}",
        r.stderr
    );
    let r = store(
        &db,
        &["append", "c", "-"],
        r#"[{"role": "tool", "tool_call_id": "call_1", "content": "sun"}]"#,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = store(
        &db,
        &["load", "c", "--as", "openai_chat", "--model", "gpt-4o"],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["model"], "gpt-4o");
    // Another dialect's messages are converted through the canonical model.
    let chat = r#"[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]"#;
    assert_eq!(
        store(
            &db,
            &["append", "plain", "-", "--dialect", "openai_chat"],
            chat
        )
        .code,
        0
    );
    let r = store(
        &db,
        &["load", "plain", "--as", "anthropic", "--model", "claude-x"],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert!(j["system"].to_string().contains("Be brief."), "{j}");
    assert_eq!(
        (j["messages"][0]["role"].as_str(), j["max_tokens"].as_u64()),
        (Some("user"), Some(4096))
    );
}

#[test]
fn fork_list_export_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    assert_eq!(store(&db, &["append", "a", "-"], TURN).code, 0);
    let r = store(&db, &["fork", "a", "1", "--id", "b"], "");
    assert_eq!((r.code, r.stdout.as_str()), (0, "b\n"), "{}", r.stderr);
    let r = store(&db, &["list", "--json"], "");
    let j = r.json();
    assert_eq!(j[1]["forked_from"]["conversation"], "a");
    assert_eq!(j[1]["last_sequence"], 1);
    let r = store(&db, &["export"], "");
    let lines: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["messages"].as_array().map(Vec::len), Some(2));
    assert_eq!(store(&db, &["delete", "a"], "").code, 0);
    let r = store(&db, &["delete", "a"], "");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no conversation 'a'"), "{}", r.stderr);
    let r = store(&db, &["load", "b"], "");
    assert_eq!(r.code, 0);
}

#[test]
fn bad_input_and_addresses_exit_2_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    let r = store(&db, &["append", "c", "-"], "[{\"content\": 1}]");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("message 0"), "{}", r.stderr);
    let r = store(&db, &["append", "c", "-"], "{\"role\":");
    assert_eq!(r.code, 2);
    let r = run(&["store", "--db", "mysql://x", "list"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("sqlite:PATH"), "{}", r.stderr);
}

#[test]
fn without_db_the_store_is_in_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = mend()
        .args(["store", "create", "--id", "x"])
        .env_remove("MEND_DB")
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("mend/mend.db").exists());
}

#[test]
fn a_canonical_conversation_renders_for_the_dialect_it_came_from_and_others() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    let body = r#"{"model": "claude-x", "max_tokens": 4096, "system": "Be brief.",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}"#;
    let r = store(&db, &["append", "c", "-", "--canonical"], body);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "c: appended 3 messages as sequences 1..3\n");
    let r = store(&db, &["list", "--json"], "");
    assert_eq!(r.json()[0]["format"], "canonical:anthropic");
    let r = store(
        &db,
        &["load", "c", "--as", "anthropic", "--model", "claude-x"],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.json(),
        serde_json::from_str::<serde_json::Value>(body).unwrap()
    );
    let r = store(
        &db,
        &["load", "c", "--as", "openai_chat", "--model", "gpt-4o"],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(
        (j["model"].as_str(), j["messages"][0]["role"].as_str()),
        (Some("gpt-4o"), Some("system"))
    );
    // Another dialect's messages are not mixed into it.
    let r = store(
        &db,
        &["append", "c", "-", "--dialect", "gemini"],
        r#"{"contents": []}"#,
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("read from anthropic"), "{}", r.stderr);
}
