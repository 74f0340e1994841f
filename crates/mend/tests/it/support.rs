//! Finding `../shared` and the project's `cases/`.

use std::path::PathBuf;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared` beside the repository, or `MEND_SHARED`. `None` (after saying so) when it
/// is absent outside CI; a panic when it is absent under `CI=true`.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("MEND_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared"));
    if dir.join("fixtures").is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{} is missing, and CI=true: the fixture tests must run in CI",
            dir.display()
        );
    }
    eprintln!(
        "SKIP: {} not found; fixture tests skipped (set MEND_SHARED to run them)",
        dir.display()
    );
    None
}

/// Every file named `name` below `dir`, sorted.
pub fn files_named(dir: &std::path::Path, name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == name) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
