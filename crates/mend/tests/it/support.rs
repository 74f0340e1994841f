//! Finding `../shared` and the project's `cases/`.

use std::path::PathBuf;

#[path = "shared_fixtures.rs"]
pub mod shared_fixtures;
pub use shared_fixtures::shared_dir;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
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

/// The recorded Converse exchanges (`../shared/fixtures-bedrock-converse/*/`), sorted;
/// empty when the shared fixtures are absent (and then `shared_dir` says so).
#[allow(dead_code)] // support.rs is shared by both test binaries
pub fn converse_fixture_dirs() -> Vec<PathBuf> {
    let Some(shared) = shared_dir() else {
        return Vec::new();
    };
    let root = shared.join("fixtures-bedrock-converse");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("meta.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The exact event-stream bytes of a recorded Converse stream (`response.stream.txt`
/// is their base64, wrapped), when the folder holds one.
#[allow(dead_code)] // support.rs is shared by both test binaries
pub fn converse_stream_bytes(dir: &std::path::Path) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let text = std::fs::read_to_string(dir.join("response.stream.txt")).ok()?;
    let joined: String = text.split_ascii_whitespace().collect();
    Some(
        base64::engine::general_purpose::STANDARD
            .decode(joined)
            .unwrap_or_else(|e| panic!("{}: not base64: {e}", dir.display())),
    )
}
