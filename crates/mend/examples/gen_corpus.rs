//! Write the benchmark corpus to files, for scripts and tools outside criterion.
//!
//! `cargo run -p mend --example gen_corpus -- [OUT_DIR]` writes
//! `{dialect}-{size}.json` for every dialect and size (default `bench/corpus`, which is
//! gitignored) and checks each body valid before writing it.
//! `... -- OUT_DIR MEGABYTES [DIALECT]` writes bodies of that one size instead
//! (`{dialect}-{N}MB.json`; `bench/check-memory.sh` makes its 60 MB bodies so).

use std::path::PathBuf;
use std::process::ExitCode;

use mend::Dialect;

#[path = "../benches/corpus.rs"]
mod corpus;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(args.first().map_or("bench/corpus", String::as_str));
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("cannot create {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    let (sizes, dialects) = match plan(&args) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    for size in sizes {
        for &dialect in &dialects {
            let bytes = match corpus::checked_body(dialect, size) {
                Ok((bytes, _)) => bytes,
                Err(e) => {
                    eprintln!("gen_corpus: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let path = out.join(format!("{dialect}-{}.json", size.name));
            if let Err(e) = std::fs::write(&path, &bytes) {
                eprintln!("cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            println!("{:>9} bytes  {}", bytes.len(), path.display());
        }
    }
    ExitCode::SUCCESS
}

/// The sizes and dialects asked for: every corpus size and dialect, or one size in MB
/// (and optionally one dialect).
fn plan(args: &[String]) -> Result<(Vec<corpus::Size>, Vec<Dialect>), String> {
    let Some(mb) = args.get(1) else {
        return Ok((corpus::SIZES.to_vec(), Dialect::ALL.to_vec()));
    };
    let mb: usize = mb
        .parse()
        .map_err(|_| format!("size '{mb}' is not a whole number of megabytes"))?;
    let name: &'static str = Box::leak(format!("{mb}MB").into_boxed_str());
    let size = corpus::Size {
        name,
        bytes: mb * 1024 * 1024,
    };
    let dialects = match args.get(2) {
        Some(d) => vec![d.parse::<Dialect>()?],
        None => Dialect::ALL.to_vec(),
    };
    Ok((vec![size], dialects))
}
