//! Convert alone, for a profiler: every `openai_chat` body of the report corpus
//! converted to one target, `--reps` times, with `serde_json::to_vec` of the output (as
//! `report_bench` times it). Prints the total wall time; under
//! `valgrind --tool=callgrind` the instruction count is the stable figure.
//!
//! ```text
//! cargo build --release -p mend --example convert_profile
//! valgrind --tool=callgrind target/release/examples/convert_profile anthropic bench/corpus/report.jsonl
//! valgrind --tool=callgrind --toggle-collect='convert_profile::convert_one' \
//!     target/release/examples/convert_profile anthropic bench/corpus/report.jsonl
//! ```

use std::io::{BufRead, BufReader};
use std::time::Instant;

use mend::convert::{convert, ConvertOptions};
use mend::Dialect;
use serde_json::Value;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// One conversion as `report_bench` times it (convert, then the output's bytes), the
/// output body handed back to be dropped outside (the timer does not see that drop):
/// under callgrind, `--toggle-collect=convert_profile::convert_one` counts only what the
/// timer sees.
#[inline(never)]
fn convert_one(b: &Value, to: Dialect, opts: &ConvertOptions) -> Option<(Value, usize)> {
    let c = convert(b, Dialect::OpenAiChat, to, opts).ok()?;
    let n = serde_json::to_vec(&c.body).map_or(0, |v| v.len());
    Some((c.body, n))
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: convert_profile TARGET corpus.jsonl [--reps N]";
    let to: Dialect = args.next().ok_or(usage)?.parse()?;
    let input = args.next().ok_or(usage)?;
    let reps: usize = match (args.next().as_deref(), args.next()) {
        (Some("--reps"), Some(n)) => n.parse()?,
        (None, _) => 1,
        _ => return Err(usage.into()),
    };
    let model = match to {
        Dialect::Anthropic => "claude-sonnet-4-5",
        Dialect::Gemini => "gemini-2.5-flash",
        _ => "gpt-4o",
    };
    let opts = ConvertOptions {
        model: Some(model.into()),
        ..Default::default()
    };
    let mut bodies = Vec::new();
    for line in BufReader::new(std::fs::File::open(&input)?).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let mut s: Value = serde_json::from_str(&line)?;
        if let Some(b) = s["bodies"].get_mut("openai_chat") {
            bodies.push(b.take());
        }
    }
    let t = Instant::now();
    let mut bytes = 0usize;
    for _ in 0..reps {
        for b in &bodies {
            if let Some((body, n)) = convert_one(b, to, &opts) {
                bytes += n;
                drop(body);
            }
        }
    }
    let ns = t.elapsed().as_nanos();
    println!(
        "{} bodies x {reps}: {:.1} µs per conversion ({bytes} bytes written)",
        bodies.len(),
        ns as f64 / 1e3 / (bodies.len() * reps).max(1) as f64
    );
    Ok(())
}
