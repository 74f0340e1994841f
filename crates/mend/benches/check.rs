//! `check` against its baseline: a plain `serde_json::from_slice::<Value>` of the same
//! bytes, per dialect and size (DESIGN.md "Performance budget": at most 1.5x).
//!
//! Each group is `{dialect}-{size}` with two functions, `parse` and `check`, over the same
//! body; `bench/check-ratios.sh` turns them into the ratio table.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mend::{CheckOptions, Dialect};
use serde_json::Value;

mod corpus;

fn parse_vs_check(c: &mut Criterion) {
    for size in corpus::SIZES {
        for dialect in Dialect::ALL {
            let bytes = corpus::body(dialect, size.bytes);
            let opts = CheckOptions {
                dialect: Some(dialect),
                ..CheckOptions::default()
            };
            // A benchmark over invalid bodies would measure the reporting path, not traffic.
            let report = mend::check(&bytes, &opts).expect("the corpus body is JSON");
            assert!(
                report.valid(),
                "{dialect} {} corpus body is not valid: {:#?}",
                size.name,
                report.violations
            );

            let mut group = c.benchmark_group(format!("{dialect}-{}", size.name));
            group.throughput(Throughput::Bytes(bytes.len() as u64));
            // Budget per function: ~3 s at 5 KB and 200 KB, ~6 s at 5 MB (20 ms per run).
            match size.bytes {
                b if b >= 1024 * 1024 => group
                    .sample_size(20)
                    .warm_up_time(Duration::from_secs(1))
                    .measurement_time(Duration::from_secs(5)),
                _ => group
                    .sample_size(50)
                    .warm_up_time(Duration::from_millis(500))
                    .measurement_time(Duration::from_secs(2)),
            };
            group.bench_function("parse", |b| {
                b.iter(|| {
                    serde_json::from_slice::<Value>(black_box(&bytes)).expect("the corpus is JSON")
                })
            });
            group.bench_function("check", |b| {
                b.iter(|| mend::check(black_box(&bytes), &opts).expect("the corpus checks"))
            });
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = parse_vs_check
}
criterion_main!(benches);
