//! mend's side of `bench/report`: repair and convert timed in-process on the report
//! corpus (`bench/report_corpus.py`), with the output of every run kept for judging.
//!
//! ```text
//! cargo run --release -p mend --example report_bench -- [--reps N] corpus.jsonl > out.jsonl
//! ```
//!
//! For each sample it runs, after one warm-up pass over the whole corpus:
//! - `repair:<dialect>`: `mend::repair::repair` on each rendered body, in its dialect with
//!   the dialect's first-party provider profile;
//! - `convert:<target>`: `mend::convert::convert` of the `openai_chat` body to
//!   `anthropic`, `gemini` and `openai_responses` (the direction LiteLLM and the AI SDK
//!   go), with the target model the peers get; it repairs the source and the target.
//!
//! Each timing is the median of `--reps` runs (default 15) of the call plus
//! `serde_json::to_vec` of its output (every tool in the report is timed from an
//! in-memory history to the request bytes). One JSON line per sample and task:
//! `{"id", "task", "ns", "ok", "error"?, "body"?, "check_valid"?}`; `check_valid` is
//! `mend::check_value`'s verdict on the input (repair tasks), for the agreement table.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::time::Instant;

use mend::convert::{convert, ConvertOptions};
use mend::repair::{repair, RepairOptions};
use mend::{CheckOptions, Dialect, Severity};
use serde_json::{json, Value};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const DIALECTS: [(&str, Dialect, &str); 4] = [
    ("openai_chat", Dialect::OpenAiChat, "openai"),
    ("anthropic", Dialect::Anthropic, "anthropic"),
    ("gemini", Dialect::Gemini, "gemini"),
    ("openai_responses", Dialect::OpenAiResponses, "openai"),
];

fn check_opts(d: Dialect, provider: &str) -> CheckOptions {
    CheckOptions {
        dialect: Some(d),
        provider: Some(provider.into()),
        ..Default::default()
    }
}

fn median(xs: &mut [u128]) -> u128 {
    xs.sort_unstable();
    xs.get(xs.len() / 2).copied().unwrap_or(0)
}

/// One task on one input: (output body or error, median ns).
fn timed<F: Fn() -> Result<Value, String>>(reps: usize, f: F) -> (Result<Value, String>, u128) {
    let mut times = Vec::with_capacity(reps);
    let mut last = Err("not run".to_string());
    for _ in 0..reps {
        let t = Instant::now();
        let out = f().and_then(|v| {
            serde_json::to_vec(&v)
                .map(|b| (v, b))
                .map_err(|e| e.to_string())
        });
        times.push(t.elapsed().as_nanos());
        last = out.map(|(v, bytes)| {
            std::hint::black_box(bytes);
            v
        });
    }
    (last, median(&mut times))
}

fn run_repair(body: &Value, d: Dialect, provider: &str) -> Result<Value, String> {
    let opts = RepairOptions {
        check: check_opts(d, provider),
        ..Default::default()
    };
    let r = repair(body, &opts).map_err(|e| e.to_string())?;
    if r.valid() {
        Ok(r.body)
    } else {
        // mend says it cannot repair without guessing: a rejection before sending.
        let rules: Vec<_> = r.unrepairable.iter().map(|v| v.rule.id()).collect();
        Err(format!("unrepairable: {}", rules.join(", ")))
    }
}

/// The target models of the conversions (the peers get the same ones).
fn target_model(d: Dialect) -> &'static str {
    match d {
        Dialect::Anthropic => "claude-sonnet-4-5",
        Dialect::Gemini => "gemini-2.5-flash",
        _ => "gpt-4o",
    }
}

fn run_convert(body: &Value, to: Dialect) -> Result<Value, String> {
    let opts = ConvertOptions {
        model: Some(target_model(to).into()),
        ..Default::default()
    };
    let c = convert(body, Dialect::OpenAiChat, to, &opts).map_err(|e| e.to_string())?;
    if c.valid() {
        Ok(c.body)
    } else {
        // mend knows the target would refuse it: a rejection before sending.
        let rules: Vec<_> = c
            .violations
            .iter()
            .filter(|v| v.severity == Severity::Error)
            .map(|v| v.rule.id())
            .collect();
        Err(format!("invalid after conversion: {}", rules.join(", ")))
    }
}

const TARGETS: [Dialect; 3] = [
    Dialect::Anthropic,
    Dialect::Gemini,
    Dialect::OpenAiResponses,
];

fn main() -> Res<()> {
    let mut reps = 15usize;
    let mut input = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--reps" => reps = it.next().ok_or("--reps N")?.parse()?,
            _ if input.is_none() && !a.starts_with('-') => input = Some(a),
            _ => return Err(format!("unexpected argument '{a}'").into()),
        }
    }
    let input = input.ok_or("usage: report_bench [--reps N] corpus.jsonl")?;
    let reps = reps.max(1);
    let f = std::fs::File::open(&input).map_err(|e| format!("{input}: {e}"))?;
    let mut corpus = Vec::new();
    for line in BufReader::new(f).lines() {
        let line = line?;
        if !line.trim().is_empty() {
            corpus.push(serde_json::from_str::<Value>(&line)?);
        }
    }
    // Warm-up: every task once.
    for s in &corpus {
        for (name, d, provider) in DIALECTS {
            if let Some(body) = s["bodies"].get(name) {
                let _ = std::hint::black_box(run_repair(body, d, provider));
            }
        }
        if let Some(body) = s["bodies"].get("openai_chat") {
            for to in TARGETS {
                let _ = std::hint::black_box(run_convert(body, to));
            }
        }
    }

    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    for s in &corpus {
        let id = &s["id"];
        for (name, d, provider) in DIALECTS {
            let Some(body) = s["bodies"].get(name) else {
                continue;
            };
            let check_valid =
                mend::check_value(body, &check_opts(d, provider)).is_ok_and(|r| r.valid());
            let (res, ns) = timed(reps, || run_repair(body, d, provider));
            let line = match res {
                Ok(b) => json!({"id": id, "task": format!("repair:{name}"), "ns": ns as u64,
                                "ok": true, "body": b, "check_valid": check_valid}),
                Err(e) => json!({"id": id, "task": format!("repair:{name}"), "ns": ns as u64,
                                 "ok": false, "error": e, "check_valid": check_valid}),
            };
            writeln!(out, "{line}")?;
        }
        if let Some(body) = s["bodies"].get("openai_chat") {
            for to in TARGETS {
                let task = format!("convert:{}", to.name());
                let (res, ns) = timed(reps, || run_convert(body, to));
                let line = match res {
                    Ok(b) => {
                        json!({"id": id, "task": task, "ns": ns as u64, "ok": true, "body": b})
                    }
                    Err(e) => {
                        json!({"id": id, "task": task, "ns": ns as u64, "ok": false, "error": e})
                    }
                };
                writeln!(out, "{line}")?;
            }
        }
    }
    out.flush()?;
    Ok(())
}
