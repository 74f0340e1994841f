//! Write the benchmark corpus to files, for scripts and tools outside criterion.
//!
//! `cargo run -p mend --example gen_corpus -- [OUT_DIR]` writes
//! `{dialect}-{size}.json` for every dialect and size (default `bench/corpus`, which is
//! gitignored) and checks each body valid before writing it.

use std::path::PathBuf;
use std::process::ExitCode;

use mend::{CheckOptions, Dialect};

#[path = "../benches/corpus.rs"]
mod corpus;

fn main() -> ExitCode {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("bench/corpus"));
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("cannot create {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    for size in corpus::SIZES {
        for dialect in Dialect::ALL {
            let bytes = corpus::body(dialect, size.bytes);
            let opts = CheckOptions {
                dialect: Some(dialect),
                ..CheckOptions::default()
            };
            match mend::check(&bytes, &opts) {
                Ok(r) if r.valid() => {}
                Ok(r) => {
                    eprintln!(
                        "{dialect} {}: generated body is not valid: {:?}",
                        size.name, r.violations
                    );
                    return ExitCode::FAILURE;
                }
                Err(e) => {
                    eprintln!("{dialect} {}: {e}", size.name);
                    return ExitCode::FAILURE;
                }
            }
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
