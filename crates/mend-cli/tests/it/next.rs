//! `mend next`: the body on stdout, the report on stderr, exit codes, and bad input (a
//! response of another dialect, a cut stream, a provider error, a result that answers no
//! call) as one stderr line naming the file, the position and the reason.

use serde_json::Value;

use crate::support::{arg, folder_with, run, run_with_stdin, Run};

const CASES: &str = "cases/next";

fn case(slug: &str, file: &str) -> String {
    format!("{CASES}/{slug}/{file}")
}

fn read_case(slug: &str, file: &str) -> Vec<u8> {
    let p = crate::support::repo_root().join(case(slug, file));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn expected(slug: &str) -> Value {
    serde_json::from_slice(&read_case(slug, "expected.json")).expect("JSON")
}

/// `mend next` on a case's request and JSON response, with `extra` arguments.
fn run_case(slug: &str, extra: &[&str]) -> Run {
    let (request, response) = (case(slug, "request.json"), case(slug, "response.json"));
    let mut args = vec!["next", "--request", &request, "--response", &response];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn seed_000_gives_the_expected_body_and_exit_0() {
    let slug = "seed-000-responses-reasoning-function-call";
    let r = run_case(slug, &["--tool-results", &case(slug, "tool-results.json")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.json(), expected(slug));
    let last = r.err_lines().last().copied().unwrap_or_default();
    assert_eq!(
        last,
        "mend: next: valid (openai_responses, provider openai): 1 call(s) in the response, 1 answered"
    );
}

#[test]
fn a_stream_on_stdin_and_a_user_turn() {
    let slug = "anthropic-stream-thinking-tool-use";
    let sse = read_case(slug, "response.sse");
    let r = run_with_stdin(
        &[
            "next",
            "--request",
            &case(slug, "request.json"),
            "--response",
            "-",
            "--tool-results",
            &case(slug, "tool-results.json"),
            "--user",
            "and 4 + 5?",
        ],
        sse,
    );
    assert_eq!(r.code, 0, "{r:?}");
    let body = r.json();
    let last = &body["messages"][2]["content"];
    assert_eq!(last[0]["type"], "tool_result");
    assert_eq!(
        last[1],
        serde_json::json!({"type": "text", "text": "and 4 + 5?"})
    );
    assert_eq!(
        body["messages"][1]["content"][0]["signature"],
        "ErUBCkYIBxgCIkAsigned=="
    );
}

/// A Converse event stream is binary: its bytes on stdin, read as they are.
#[test]
fn a_converse_event_stream_on_stdin() {
    use base64::Engine as _;
    let slug = "bedrock-converse-stream-reasoning-tool-use";
    let text = String::from_utf8(read_case(slug, "response.stream.txt")).expect("base64 text");
    let joined: String = text.split_ascii_whitespace().collect();
    let stream = base64::engine::general_purpose::STANDARD
        .decode(joined)
        .expect("base64");
    assert!(std::str::from_utf8(&stream).is_err(), "binary frames");
    let r = run_with_stdin(
        &[
            "next",
            "--request",
            &case(slug, "request.json"),
            "--response",
            "-",
            "--tool-results",
            &case(slug, "tool-results.json"),
            "--model",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ],
        stream,
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.json(), expected(slug));
    let last = r.err_lines().last().copied().unwrap_or_default();
    assert!(
        last.starts_with("mend: next: valid (bedrock_converse"),
        "{last}"
    );
}

#[test]
fn unanswered_calls_exit_1_and_are_named() {
    let slug = "openai-chat-unanswered-without-results";
    let r = run_case(slug, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.json(), expected(slug));
    assert!(
        r.stderr.contains(
            "mend: next: unanswered call call_L1ma (get_weather): no result for it in --tool-results (none given)"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("error[tool-call-without-result]"),
        "{}",
        r.stderr
    );
}

#[test]
fn json_output_holds_body_and_report() {
    let slug = "openai-responses-previous-response-id";
    let r = run_case(
        slug,
        &["--json", "--tool-results", &case(slug, "tool-results.json")],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let out = r.json();
    assert_eq!(out["body"], expected(slug));
    let report = &out["report"];
    assert_eq!(report["dialect"], "openai_responses");
    assert_eq!(report["valid"], true);
    assert_eq!(report["unanswered"], serde_json::json!([]));
    assert_eq!(report["calls"][0]["call_id"], "call_C2F");
    let note = report["notes"][0].as_str().unwrap_or_default();
    assert!(note.contains("previous_response_id"), "{note}");
    assert_eq!(r.stderr, "");
}

/// Run `next` expecting exit 2 and exactly one stderr line `mend: FILE: <rest>`;
/// returns `<rest>`.
fn one_bad(args: &[&str], file: &str) -> String {
    let mut all = vec!["next"];
    all.extend_from_slice(args);
    let r = run(&all);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(r.stdout, "", "nothing on stdout for bad input");
    let lines = r.err_lines();
    assert_eq!(lines.len(), 1, "one line on stderr: {}", r.stderr);
    let prefix = format!("mend: {file}: ");
    lines[0]
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("`{}` does not start with `{prefix}`", lines[0]))
        .to_string()
}

#[test]
fn a_response_of_another_dialect() {
    let resp = case("openai-chat-parallel-tool-calls", "response.json");
    let why = one_bad(
        &[
            "--request",
            &case("anthropic-thinking-signature-tool-use", "request.json"),
            "--response",
            &resp,
        ],
        &resp,
    );
    assert!(
        why.starts_with("byte 0: cannot read it as the anthropic response"),
        "{why}"
    );
    assert!(
        why.contains("it looks like a openai_chat response"),
        "{why}"
    );
}

#[test]
fn a_cut_stream() {
    let slug = "anthropic-stream-thinking-tool-use";
    let sse = read_case(slug, "response.sse");
    // Cut after the thinking block: the tool_use block and message_stop never came.
    let at = String::from_utf8_lossy(&sse)
        .find("\"index\": 1")
        .expect("a second block");
    let dir = folder_with(&[("cut.sse", &sse[..at])]);
    let cut = arg(&dir, "cut.sse");
    let why = one_bad(
        &["--request", &case(slug, "request.json"), "--response", &cut],
        &cut,
    );
    assert!(why.starts_with("byte "), "{why}");
    assert!(why.contains("ends"), "{why}");
}

#[test]
fn a_provider_error_response() {
    let dir = folder_with(&[(
        "error.json",
        br#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
    )]);
    let resp = arg(&dir, "error.json");
    let why = one_bad(
        &[
            "--request",
            &case("anthropic-thinking-signature-tool-use", "request.json"),
            "--response",
            &resp,
        ],
        &resp,
    );
    assert!(
        why.ends_with("the provider reported an error: overloaded_error: Overloaded"),
        "{why}"
    );
}

#[test]
fn a_result_for_an_unknown_call() {
    let slug = "openai-chat-parallel-tool-calls";
    let dir = folder_with(&[(
        "results.json",
        br#"[{"call_id": "call_W3ath3rTky", "output": "ok"}, {"call_id": "call_nope", "output": "x"}]"#,
    )]);
    let results = arg(&dir, "results.json");
    let why = one_bad(
        &[
            "--request",
            &case(slug, "request.json"),
            "--response",
            &case(slug, "response.json"),
            "--tool-results",
            &results,
        ],
        &results,
    );
    assert_eq!(
        why,
        "result 1 answers call id \"call_nope\", which no call of the response has (its calls: call_W3ath3rTky (get_weather), call_T1meTky (get_time))"
    );
}

#[test]
fn a_results_file_of_the_wrong_shape_or_not_json() {
    let slug = "openai-chat-parallel-tool-calls";
    let dir = folder_with(&[
        (
            "shape.json",
            br#"[{"call_id": "a", "output": 1, "is_error": "yes"}]"#,
        ),
        ("cut.json", b"[{\"call_id\": \"a\",\n \"output\": "),
    ]);
    for (name, want) in [
        (
            "shape.json",
            "/0/is_error: `is_error` is a string but must be true or false",
        ),
        ("cut.json", "line 2, column 11: truncated JSON"),
    ] {
        let file = arg(&dir, name);
        let why = one_bad(
            &[
                "--request",
                &case(slug, "request.json"),
                "--response",
                &case(slug, "response.json"),
                "--tool-results",
                &file,
            ],
            &file,
        );
        assert!(why.starts_with(want), "{why} (wanted {want})");
    }
}

#[test]
fn a_choice_past_the_choices() {
    let slug = "openai-chat-second-choice";
    let resp = case(slug, "response.json");
    let why = one_bad(
        &[
            "--request",
            &case(slug, "request.json"),
            "--response",
            &resp,
            "--choice",
            "2",
        ],
        &resp,
    );
    assert_eq!(
        why,
        "choice 2 asked for, but the response has 2 choices (0 to 1)"
    );
}

#[test]
fn help_shows_an_example() {
    let r = run(&["next", "--help"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("mend next --request req.json --response resp.sse"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("--tool-results"), "{}", r.stdout);
}
