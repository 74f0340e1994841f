//! The Python binding end to end, from `cargo test`: the package is built (dev profile,
//! reusing `target/`) and installed with `maturin develop` into a venv under `target/`
//! that also holds pytest, mypy and the official SDKs from PyPI (pinned, made once and
//! reused while the pins are the same); then `pytest bindings/python/tests` (the API on
//! the shared fixtures, the transports with the real SDKs against a mock upstream) and
//! `mypy --strict` over the package and a typed usage file.
//!
//! Without python3 or the registry the test says so and skips, except under `CI=true`,
//! where it fails. A build, test or type error always fails.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What the venv holds, pinned.
const PINS: [&str; 6] = [
    "maturin==1.16.0",
    "pytest==9.2.0",
    "mypy==2.4.1",
    "openai==3.54.0",
    "anthropic==2.12.0",
    "google-genai==3.4.0",
];

#[path = "../../../../crates/mend-cli/tests/support/venv.rs"]
mod venv;
use venv::in_ci;

/// Skip (outside CI) or fail (in CI) with a reason.
fn unavailable(why: &str) {
    if in_ci() {
        panic!("{why}, and CI=true: the Python binding's tests must run in CI");
    }
    eprintln!("SKIP: {why}; the Python binding's tests are skipped");
}

fn binding_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `target/`, where the workspace builds (the venv is in `target/tmp`).
fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn venv_python() -> Result<PathBuf, String> {
    venv::pinned_python("py-venv", &PINS)
}

fn last_lines(s: &str, n: usize) -> String {
    venv::last_lines(s, n, "\n")
}

/// Run a command of the venv; a failure is the test's failure, with its output.
fn run_in(python: &Path, what: &str, cmd: &mut Command) -> Output {
    let bin = python.parent().unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    let out = cmd
        .current_dir(binding_dir())
        .env("VIRTUAL_ENV", bin.parent().unwrap())
        .env("PATH", format!("{}:{path}", bin.display()))
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .unwrap_or_else(|e| panic!("{what} did not run: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed:\n{text}");
    eprintln!("{what}: {}", last_lines(text.trim(), 1));
    out
}

#[test]
fn python_binding() {
    let python = match venv_python() {
        Ok(p) => p,
        Err(why) => return unavailable(&why),
    };
    let bin = python.parent().unwrap();
    run_in(
        &python,
        "maturin develop",
        Command::new(bin.join("maturin")).args([
            "develop",
            "--quiet",
            "--manifest-path",
            "Cargo.toml",
        ]),
    );
    let pytest = run_in(
        &python,
        "pytest",
        Command::new(&python).args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]),
    );
    let said = String::from_utf8_lossy(&pytest.stdout);
    assert!(
        !said.contains("skipped") || !in_ci(),
        "pytest skipped tests under CI:\n{said}"
    );
    let cache = target_dir().join("tmp").join("mypy-cache");
    run_in(
        &python,
        "mypy --strict",
        Command::new(&python)
            .args(["-m", "mypy", "--strict", "--cache-dir"])
            .arg(cache)
            .args(["tests/typed_usage.py", "python/mend"]),
    );
}
