//! Finding the recorded provider traffic in `../shared/fixtures` (beside the repository,
//! or under `MEND_SHARED`), for every test crate that reads it: `crates/mend`'s `it` and
//! `canonical` tests and `crates/mend-gateway`'s `it` tests include this file.
//!
//! A fixture test must not pass without having looked at a fixture. When the folder is
//! missing (or empty) a test either fails, under CI (`CI=true`), naming the folder; or, outside CI, says on one stderr line which test skipped what and
//! why, and skips.

use std::cell::Cell;
use std::io::Write;
use std::path::PathBuf;

/// The shared folder, which holds `fixtures/`: `None` for a test that needs it and must
/// skip (after one line on stderr), a panic under CI.
pub fn shared_dir() -> Option<PathBuf> {
    find_shared("skipped")
}

/// The shared folder, for a test that runs on the fixtures *and* the repository's own
/// cases: `None` (after one line on stderr) when it runs on the cases alone, a panic
/// under CI.
#[allow(dead_code)]
pub fn shared_dir_or_cases_only() -> Option<PathBuf> {
    find_shared("running on cases/ only")
}

fn find_shared(otherwise: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("MEND_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let fixtures = dir.join("fixtures");
    let present = std::fs::read_dir(&fixtures).is_ok_and(|mut d| d.next().is_some());
    if present {
        return Some(dir);
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a fixture test")
        .to_string();
    if under_ci() {
        panic!(
            "{test}: the fixtures folder {} is missing or empty, and this is CI: the fixture \
             tests must run here (put the shared folder beside the repository, or set \
             MEND_SHARED to it)",
            fixtures.display()
        );
    }
    // One line per test, however often it asks; written to the process's stderr, not
    // through `eprintln!`, which the test harness captures and hides for a passing test.
    thread_local!(static SAID: Cell<bool> = const { Cell::new(false) });
    if !SAID.with(|s| s.replace(true)) {
        let _ = writeln!(
            std::io::stderr(),
            "SKIP {test}: {} is missing or empty, {otherwise} (set MEND_SHARED to the \
             shared folder to run it; under CI=true this fails)",
            fixtures.display()
        );
    }
    None
}

/// Whether this is a CI run: `CI=true`, as for the project's other tests that need
/// something from outside (GitHub, GitLab and most others set it).
fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}
