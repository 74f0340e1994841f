//! Where request bodies come from: files, stdin, folders, and JSON Lines files; and the
//! one way a body is judged unreadable.
//!
//! Invariant: nothing here fails the run. Every problem with one input becomes a
//! [`BadInput`] for that input, so the others are still checked.

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use mend::{Analysis, CheckOptions, Report};
use serde_json::Value;

/// Why one input could not be checked: where (when there is a position) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadInput {
    /// 1-based line and column inside the body, when the reason has a position.
    pub position: Option<(usize, usize)>,
    /// What is wrong, in a few words.
    pub reason: String,
}

impl BadInput {
    /// A reason without a position.
    pub fn new(reason: impl Into<String>) -> BadInput {
        BadInput {
            position: None,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "line {line}, column {column}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

/// One place bodies are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Standard input (`-`).
    Stdin,
    /// A file, as named or as found in a folder.
    File(PathBuf),
}

impl Source {
    /// How the source is named in output.
    pub fn label(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_string(),
            Source::File(p) => p.display().to_string(),
        }
    }

    /// The one file (or `-`, stdin) a command reads; a folder is refused with `folder`,
    /// which says what the command reads instead.
    pub fn one_file(arg: &str, folder: &str) -> Result<Source, BadInput> {
        if arg == "-" {
            return Ok(Source::Stdin);
        }
        let path = PathBuf::from(arg);
        if path.is_dir() {
            return Err(BadInput::new(folder));
        }
        Ok(Source::File(path))
    }

    /// All its bytes.
    pub fn read(&self) -> Result<Vec<u8>, BadInput> {
        let mut bytes = Vec::new();
        let read = match self {
            Source::Stdin => std::io::stdin().lock().read_to_end(&mut bytes).map(|_| ()),
            Source::File(p) => std::fs::read(p).map(|b| bytes = b),
        };
        read.map_err(|e| BadInput::new(format!("cannot read: {e}")))?;
        Ok(bytes)
    }
}

/// The inputs named on the command line, folders walked: each a source, or the reason
/// it gave no source (a missing path, an unreadable or empty folder).
#[derive(Debug)]
pub struct Inputs {
    /// In command-line order; a folder's files sorted by path.
    pub items: Vec<(String, Result<Source, BadInput>)>,
    /// Some argument was a folder.
    pub had_folder: bool,
}

/// Expand command-line inputs. `ext` is the file extension taken from folders.
pub fn expand(args: &[String], ext: &str) -> Inputs {
    let mut inputs = Inputs {
        items: Vec::new(),
        had_folder: false,
    };
    for arg in args {
        if arg == "-" {
            inputs
                .items
                .push((Source::Stdin.label(), Ok(Source::Stdin)));
            continue;
        }
        let path = PathBuf::from(arg);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                inputs.had_folder = true;
                let mut files = Vec::new();
                let mut errors = Vec::new();
                walk(&path, ext, &mut files, &mut errors);
                files.sort();
                if files.is_empty() && errors.is_empty() {
                    errors.push((
                        arg.clone(),
                        BadInput::new(format!("a folder with no *.{ext} files")),
                    ));
                }
                for (label, e) in errors {
                    inputs.items.push((label, Err(e)));
                }
                for f in files {
                    let s = Source::File(f);
                    inputs.items.push((s.label(), Ok(s)));
                }
            }
            Ok(_) => inputs.items.push((arg.clone(), Ok(Source::File(path)))),
            Err(e) => inputs
                .items
                .push((arg.clone(), Err(BadInput::new(format!("cannot read: {e}"))))),
        }
    }
    inputs
}

/// Every file named `*.{ext}` under `dir`. Symbolic links to folders are not followed,
/// so a link cycle cannot make the walk endless.
fn walk(dir: &Path, ext: &str, files: &mut Vec<PathBuf>, errors: &mut Vec<(String, BadInput)>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            errors.push((
                dir.display().to_string(),
                BadInput::new(format!("cannot read folder: {e}")),
            ));
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                errors.push((
                    dir.display().to_string(),
                    BadInput::new(format!("cannot read folder: {e}")),
                ));
                continue;
            }
        };
        let path = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            walk(&path, ext, files, errors);
        } else if path.extension().is_some_and(|e| e == ext)
            && (ft.is_file() || (ft.is_symlink() && path.is_file()))
        {
            files.push(path);
        }
    }
}

/// How a body is named: `FILE`, or `FILE:LINE` for a line of a JSON Lines file.
pub fn body_label(file: &str, line: Option<usize>) -> String {
    match line {
        Some(n) => format!("{file}:{n}"),
        None => file.to_string(),
    }
}

/// The bodies of a JSON Lines file: one per non-blank line, with its line number.
pub fn json_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, line)| (i + 1, line.strip_suffix(b"\r").unwrap_or(line)))
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
}

/// Parse a body, with where and why when it is not JSON.
pub fn parse(bytes: &[u8]) -> Result<Value, BadInput> {
    mend::parse_body(bytes).map_err(|e| BadInput {
        // serde_json says column 0 at the end of input right after a newline; columns
        // here are 1-based.
        position: (e.line > 0).then_some((e.line, e.column.max(1))),
        reason: e.reason,
    })
}

/// What a command was told to read its bodies as: the library's options, and whether a
/// dialect given (`--dialect`, `--from`) is taken even where the body reads
/// unambiguously as another (`--force`). Without `--force` that is bad input naming both:
/// the one place every command holds a given dialect against the body.
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// The options of the check.
    pub check: CheckOptions,
    /// Read as the given dialect whatever the body looks like.
    pub force: bool,
}

/// Run the rules over a parsed body. A body whose dialect cannot be told, whose
/// provider does not fit, or that has no history at all (not an object, or no history
/// key: a `malformed` finding at the body itself) is bad input, not a verdict. A history
/// key of the wrong type (`"messages": {...}`) is a body of the dialect with a broken
/// history: its `malformed` finding is reported like any other.
pub fn analyze<'a>(body: &'a Value, given: &'a Given) -> Result<Analysis<'a>, BadInput> {
    let opts = &given.check;
    if let (Some(d), false) = (opts.dialect, given.force) {
        mend::confirm_dialect(body, d).map_err(|e| BadInput::new(e.to_string()))?;
    }
    let analysis = mend::analyze(body, opts).map_err(bad_check)?;
    if let Some(bad) = unreadable_history(analysis.dialect, &analysis.violations) {
        return Err(bad);
    }
    Ok(analysis)
}

/// [`analyze`]'s verdict on a body read onto the library's tape (`mend::check_doc`).
pub fn judge_doc(doc: &mend::json::Doc, given: &Given) -> Result<Report, BadInput> {
    let opts = &given.check;
    if let (Some(d), false) = (opts.dialect, given.force) {
        mend::confirm_dialect_doc(doc, d).map_err(|e| BadInput::new(e.to_string()))?;
    }
    let report = mend::check_doc(doc, opts).map_err(bad_check)?;
    match unreadable_history(report.dialect, &report.violations) {
        Some(bad) => Err(bad),
        None => Ok(report),
    }
}

fn bad_check(e: mend::Error) -> BadInput {
    match e {
        mend::Error::Parse(p) => BadInput {
            position: (p.line > 0).then_some((p.line, p.column)),
            reason: p.reason,
        },
        mend::Error::Undetected(u) => BadInput::new(format!("cannot tell the dialect: {u}")),
        other => BadInput::new(other.to_string()),
    }
}

/// The `malformed` finding that means there is no history to speak of.
fn unreadable_history(dialect: mend::Dialect, violations: &[mend::Violation]) -> Option<BadInput> {
    mend::unreadable_history(dialect, violations)
        .filter(|v| v.path.is_empty())
        .map(|v| BadInput::new(format!("cannot read it as {dialect}: {}", v.message)))
}
