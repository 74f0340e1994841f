//! Finding `../shared` and the project's `cases/`.

use std::path::{Path, PathBuf};

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

/// One recorded Converse exchange of `../shared/fixtures-bedrock-converse`.
pub struct ConverseFixture {
    /// The folder.
    pub dir: PathBuf,
    /// `request.json`, or `rejected-request.json`.
    pub body: serde_json::Value,
    /// `meta.json` (`model` is the URL's, decoded).
    pub meta: serde_json::Value,
    /// The provider answered HTTP 200 (`request.json`).
    pub accepted: bool,
}

impl ConverseFixture {
    /// The folder's name.
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    }

    /// The model of the request's URL.
    pub fn model(&self) -> Option<String> {
        self.meta
            .get("model")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    }
}

/// Every recorded Converse exchange below `shared`, sorted by folder (a panic when the
/// folder is missing: the shared folder is there, so its Converse recordings must be).
pub fn converse_fixtures(shared: &Path) -> Vec<ConverseFixture> {
    let root = shared.join("fixtures-bedrock-converse");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("meta.json").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let read = |name: &str| -> Option<serde_json::Value> {
                let text = std::fs::read_to_string(dir.join(name)).ok()?;
                Some(
                    serde_json::from_str(&text)
                        .unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display())),
                )
            };
            let meta = read("meta.json").expect("meta.json");
            let (body, accepted) = match read("request.json") {
                Some(b) => (b, true),
                None => (
                    read("rejected-request.json")
                        .unwrap_or_else(|| panic!("{}: no request body", dir.display())),
                    false,
                ),
            };
            ConverseFixture {
                dir,
                body,
                meta,
                accepted,
            }
        })
        .collect()
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
