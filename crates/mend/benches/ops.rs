//! `trim` and `convert` against their baseline: a plain `serde_json::from_slice::<Value>`
//! of the same bytes, per dialect and size, in the same group (as `benches/check.rs` does
//! for check and repair).
//!
//! Each group is `ops-{dialect}-{size}` with `parse`, `trim` and `convert-to-{dialect}`
//! for each other dialect. `trim` and `convert` take a parsed body, so each iteration
//! parses the bytes first (`mend::parse_body`, as the repair bench does): a function's
//! time over `parse` is 1 + (the operation) / parse. `trim` gets a budget of half the
//! body's tokens (so it really drops groups) and keeps the last 2 units; `convert` uses
//! `ConvertOptions::default()` (source and target repair on).
//!
//! Sizes: 200 KB always; 5 MB as well when `MEND_BENCH_5MB=1` (flat sampling, 10 samples).
//! Budget per function: 1 s warm-up, 2 s measurement, 20 samples.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use mend::convert::{convert, ConvertOptions};
use mend::trim::{trim, TrimOptions};
use mend::{CheckOptions, Dialect};
use serde_json::Value;

mod corpus;

fn ops(c: &mut Criterion) {
    let big = std::env::var("MEND_BENCH_5MB").is_ok_and(|v| v == "1");
    for size in corpus::SIZES {
        if size.name != "200KB" && !(big && size.name == "5MB") {
            continue;
        }
        for dialect in Dialect::ALL {
            let bytes = corpus::body(dialect, size.bytes);
            let parsed = mend::parse_body(&bytes).expect("the corpus body is JSON");
            let check = CheckOptions {
                dialect: Some(dialect),
                ..CheckOptions::default()
            };

            // Half the body's tokens, so trim drops about half of the history's units.
            let all = trim(
                &parsed,
                &TrimOptions {
                    check: check.clone(),
                    budget: usize::MAX,
                    keep_last: 2,
                    ..TrimOptions::default()
                },
            )
            .expect("trims");
            let topts = TrimOptions {
                check: check.clone(),
                budget: all.tokens_before / 2,
                keep_last: 2,
                ..TrimOptions::default()
            };
            let trimmed = trim(&parsed, &topts).expect("trims");
            assert!(
                !trimmed.dropped.is_empty() && !trimmed.over_budget,
                "{dialect} {}: the budget {} of {} tokens drops nothing or stays over",
                size.name,
                topts.budget,
                all.tokens_before
            );
            eprintln!(
                "{dialect} {}: {} bytes, {} tokens ({}), trim to {} drops {} units -> {} tokens",
                size.name,
                bytes.len(),
                all.tokens_before,
                all.counter.name(),
                topts.budget,
                trimmed.dropped.len(),
                trimmed.tokens_after
            );

            let copts = ConvertOptions::default();
            let targets: Vec<Dialect> = Dialect::ALL
                .into_iter()
                .filter(|&to| to != dialect)
                .collect();
            for &to in &targets {
                convert(&parsed, dialect, to, &copts)
                    .unwrap_or_else(|e| panic!("{dialect} -> {to} {}: {e}", size.name));
            }

            let mut group = c.benchmark_group(format!("ops-{dialect}-{}", size.name));
            group.throughput(Throughput::Bytes(bytes.len() as u64));
            group
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(2));
            if size.bytes >= 1024 * 1024 {
                group.sampling_mode(SamplingMode::Flat).sample_size(10);
            } else {
                group.sample_size(20);
            }
            group.bench_function("parse", |b| {
                b.iter(|| {
                    serde_json::from_slice::<Value>(black_box(&bytes)).expect("the corpus is JSON")
                })
            });
            group.bench_function("trim", |b| {
                b.iter(|| {
                    let body = mend::parse_body(black_box(&bytes)).expect("JSON");
                    trim(&body, &topts).expect("trims")
                })
            });
            for &to in &targets {
                group.bench_function(format!("convert-to-{to}"), |b| {
                    b.iter(|| {
                        let body = mend::parse_body(black_box(&bytes)).expect("JSON");
                        convert(&body, dialect, to, &copts).expect("converts")
                    })
                });
            }
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = ops
}
criterion_main!(benches);
