//! Running the binary from the repository root, with colour off and a time limit.

use std::path::PathBuf;
use std::time::Duration;

use assert_cmd::Command;

/// The repository root, where `examples/` lives; tests run there so paths in the
/// output are short and stable.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What a run gave.
#[derive(Debug)]
pub struct Run {
    /// Exit code; -1 when the process was killed (the time limit).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// Stderr lines.
    pub fn err_lines(&self) -> Vec<&str> {
        self.stderr.lines().collect()
    }
}

/// The binary, in the repository root, colour off, at most 120 s (debug builds of a
/// 100 MB body take a few seconds; a hang is killed and fails the test).
pub fn mend() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mend"));
    c.current_dir(repo_root())
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(120));
    c
}

/// Run with arguments and an empty stdin.
pub fn run(args: &[&str]) -> Run {
    run_with_stdin(args, Vec::new())
}

/// Run with arguments and bytes on stdin.
pub fn run_with_stdin(args: &[&str], stdin: Vec<u8>) -> Run {
    let out = mend()
        .args(args)
        .write_stdin(stdin)
        .output()
        .expect("the binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A temporary folder with the given files written into it.
pub fn folder_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, bytes) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, bytes).expect("write");
    }
    dir
}

/// A path inside a temp dir, as a string argument.
pub fn arg(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).display().to_string()
}

/// A valid OpenAI chat body with one answered tool call.
pub const VALID_CHAT: &str = r#"{"model": "gpt-4o", "messages": [
  {"role": "user", "content": "weather?"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
  {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
]}"#;

/// The same with the result gone: one `tool-call-without-result`.
pub const UNANSWERED_CHAT: &str = r#"{"model": "gpt-4o", "messages": [
  {"role": "user", "content": "weather?"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
  {"role": "user", "content": "and?"}
]}"#;
