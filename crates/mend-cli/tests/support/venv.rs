//! A Python venv for a test, under the test's `CARGO_TARGET_TMPDIR`, with pinned packages
//! from PyPI: made once and reused while the pins are the same. Shared (by `#[path]`) by
//! the gateway's SDK end-to-end test (`crates/mend-cli/tests/serve.rs`) and the Python
//! binding's test (`bindings/python/tests/it/main.rs`).

use std::path::PathBuf;
use std::process::Command;

/// Under `CI=true` a test that cannot run fails instead of skipping.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The venv's python, `name` under the target's temporary directory, holding `pins`;
/// `Err` says why it could not be made (no python3, no registry).
pub fn pinned_python(name: &str, pins: &[&str]) -> Result<PathBuf, String> {
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let python = venv.join("bin").join("python");
    let marker = venv.join("mend-pins.txt");
    let wanted = pins.join("\n");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted) && python.exists() {
        return Ok(python);
    }
    let _ = std::fs::remove_dir_all(&venv);
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("python3 is not available ({e})"))?;
    if !made.status.success() {
        return Err(format!(
            "python3 -m venv failed: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        ));
    }
    let pip = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(["--retries", "1", "--timeout", "20"])
        .args(pins)
        .output()
        .map_err(|e| format!("pip did not run ({e})"))?;
    if !pip.status.success() {
        return Err(format!(
            "pip could not install {} (no registry?): {}",
            pins.join(" "),
            last_lines(&String::from_utf8_lossy(&pip.stderr), 3, " | ")
        ));
    }
    std::fs::write(&marker, wanted).map_err(|e| e.to_string())?;
    Ok(python)
}

/// The last `n` lines of `s`, joined by `sep`.
pub fn last_lines(s: &str, n: usize, sep: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(sep)
}
