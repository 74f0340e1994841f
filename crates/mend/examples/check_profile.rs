//! One job of the `check` bench, alone in a process, for a profiler: `mend::check` of a
//! body in a given dialect, the serde_json `Value` parse it is measured against, or the
//! tape pass alone (docs/PERFORMANCE.md's check figures).
//!
//! ```text
//! cargo run --release -p mend --example gen_corpus -- /tmp/corpus
//! cargo build --release -p mend --example check_profile
//! valgrind --tool=callgrind target/release/examples/check_profile check openai_responses /tmp/corpus/openai_responses-5MB.json
//! ```
//!
//! Arguments: `check|parse|tape DIALECT FILE [N]` (N runs, default 1).

use mend::{CheckOptions, Dialect};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: check_profile check|parse|tape DIALECT FILE [N]";
    let (Some(job), Some(dialect), Some(file)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let Ok(dialect) = dialect.parse::<Dialect>() else {
        eprintln!("unknown dialect {dialect}");
        std::process::exit(2);
    };
    let bytes = std::fs::read(file).expect("a readable file");
    let runs: usize = args
        .get(4)
        .map_or(1, |n| n.parse().expect("a number of runs"));
    let opts = CheckOptions {
        dialect: Some(dialect),
        ..CheckOptions::default()
    };
    for _ in 0..runs {
        match job.as_str() {
            "check" => {
                let report = mend::check(&bytes, &opts).expect("a checkable body");
                std::hint::black_box(report.valid());
            }
            "parse" => {
                let value = serde_json::from_slice::<serde_json::Value>(&bytes).expect("JSON");
                std::hint::black_box(value);
            }
            "tape" => {
                let doc = mend::json::parse(&bytes).expect("a body the tape reads");
                std::hint::black_box(doc.tape_len());
            }
            _ => {
                eprintln!("{usage}");
                std::process::exit(2);
            }
        }
    }
}
