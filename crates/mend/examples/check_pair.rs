//! `check` against its baseline in paired rounds: the ratio of issue 17 target 1
//! (`serde_json::from_slice::<Value>` time / `mend::check` time, same bytes) measured so
//! that a change in the shared host's speed falls on both sides of it.
//!
//! The criterion bench (`benches/check.rs`) measures the parse for a few seconds and then
//! the check for a few seconds, and divides the two medians: when the host slows down or
//! speeds up between the two, the ratio moves with it (2.86x to 4.99x for the same code
//! and the same 5 MB body between two runs). Here every round times a batch of parses and
//! a batch of checks back to back, the order alternating from round to round, and keeps
//! that round's ratio; the figure is the median round, with the quartiles beside it.
//!
//! Same bodies (`benches/corpus.rs`) and the same allocator (the system's) as the
//! criterion bench. One JSON line per dialect and size on stdout:
//!
//! ```text
//! cargo run --release -p mend --example check_pair -- [--rounds N] [--sizes 200KB,5MB]
//! ```

use std::hint::black_box;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mend::Dialect;
use serde_json::Value;

#[path = "../benches/corpus.rs"]
mod corpus;

/// How long one side of a round runs, about: long enough that a 200 KB body is timed over
/// dozens of calls, short enough that a round sees one state of the host.
const SIDE: Duration = Duration::from_millis(60);

struct Args {
    rounds: usize,
    sizes: Vec<corpus::Size>,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        rounds: 31,
        sizes: corpus::SIZES
            .iter()
            .copied()
            .filter(|s| s.name != "5KB")
            .collect(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--rounds" => {
                a.rounds = value
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or(format!("--rounds {value}: not a positive number"))?;
            }
            "--sizes" => {
                a.sizes = value
                    .split(',')
                    .map(|name| {
                        corpus::SIZES
                            .iter()
                            .copied()
                            .find(|s| s.name == name)
                            .ok_or(format!("--sizes: no size {name} (5KB, 200KB, 5MB)"))
                    })
                    .collect::<Result<_, _>>()?;
            }
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    Ok(a)
}

/// Seconds per call of `f` over `n` calls.
fn per_call(n: usize, f: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_secs_f64() / n as f64
}

/// The value at fraction `q` of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn main() -> ExitCode {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("check_pair: {e}");
            return ExitCode::from(2);
        }
    };
    for size in &a.sizes {
        for dialect in Dialect::ALL {
            let (bytes, opts) = match corpus::checked_body(dialect, *size) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("check_pair: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let mut parse = || {
                black_box(serde_json::from_slice::<Value>(black_box(&bytes)).ok());
            };
            let mut check = || {
                black_box(mend::check(black_box(&bytes), &opts).ok());
            };
            // Warm up both (caches, the allocator's free lists, the check's kept tape) and
            // size the batches from the warm times.
            let (mut tp, mut tc) = (0.0, 0.0);
            for _ in 0..3 {
                tp = per_call(1, &mut parse);
                tc = per_call(1, &mut check);
            }
            let batch = |t: f64| ((SIDE.as_secs_f64() / t).ceil() as usize).max(1);
            let (np, nc) = (batch(tp), batch(tc));
            per_call(np, &mut parse);
            per_call(nc, &mut check);
            let mut rounds = Vec::with_capacity(a.rounds);
            for r in 0..a.rounds {
                let (p, c) = if r % 2 == 0 {
                    let p = per_call(np, &mut parse);
                    (p, per_call(nc, &mut check))
                } else {
                    let c = per_call(nc, &mut check);
                    (per_call(np, &mut parse), c)
                };
                rounds.push((p / c, p, c));
            }
            let mut ratios: Vec<f64> = rounds.iter().map(|r| r.0).collect();
            let mut ps: Vec<f64> = rounds.iter().map(|r| r.1).collect();
            let mut cs: Vec<f64> = rounds.iter().map(|r| r.2).collect();
            for v in [&mut ratios, &mut ps, &mut cs] {
                v.sort_by(f64::total_cmp);
            }
            let line = serde_json::json!({
                "dialect": dialect.to_string(),
                "size": size.name,
                "bytes": bytes.len(),
                "rounds": a.rounds,
                "parse_calls": np,
                "check_calls": nc,
                "ratio": quantile(&ratios, 0.5),
                "ratio_q1": quantile(&ratios, 0.25),
                "ratio_q3": quantile(&ratios, 0.75),
                "ratio_min": ratios[0],
                "ratio_max": ratios[ratios.len() - 1],
                "parse_ns": quantile(&ps, 0.5) * 1e9,
                "check_ns": quantile(&cs, 0.5) * 1e9,
            });
            // A reader that went away (`| head`) ends the run without a panic.
            if writeln!(std::io::stdout(), "{line}").is_err() {
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
