//! `check` against its baseline: a plain `serde_json::from_slice::<Value>` of the same
//! bytes (the workspace's serde_json, `preserve_order`), per dialect and size (issue 17
//! target 1: check at least 3x faster than that parse on the 200 KB and 5 MB bodies).
//!
//! Each group is `{dialect}-{size}` with two functions, `parse` and `check`, over the same
//! body; `bench/check-ratios.sh` turns them into the ratio table.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mend::repair::{repair, RepairOptions};
use mend::Dialect;
use serde_json::Value;

mod corpus;

fn parse_vs_check(c: &mut Criterion) {
    for size in corpus::SIZES {
        for dialect in Dialect::ALL {
            // A benchmark over invalid bodies would measure the reporting path, not traffic.
            let (bytes, opts) =
                corpus::checked_body(dialect, size).unwrap_or_else(|e| panic!("{e}"));

            let mut group = c.benchmark_group(format!("{dialect}-{}", size.name));
            group.throughput(Throughput::Bytes(bytes.len() as u64));
            budget(&mut group, size.bytes);
            group.bench_function("parse", |b| {
                b.iter(|| {
                    serde_json::from_slice::<Value>(black_box(&bytes)).expect("the corpus is JSON")
                })
            });
            group.bench_function("check", |b| {
                b.iter(|| mend::check(black_box(&bytes), &opts).expect("the corpus checks"))
            });
            group.finish();

            // check + repair on a damaged copy, against a parse of the same damaged bytes
            // (DESIGN.md: at most 3x).
            let damaged = damage(&bytes, dialect);
            let ropts = RepairOptions {
                check: opts.clone(),
                ..RepairOptions::default()
            };
            let sample = mend::parse_body(&damaged).expect("damaged body is JSON");
            let repaired = repair(&sample, &ropts).expect("repairs");
            assert!(
                !repaired.edits.is_empty(),
                "{dialect} {}: the damage needs no repair",
                size.name
            );
            let mut group = c.benchmark_group(format!("{dialect}-{}-damaged", size.name));
            group.throughput(Throughput::Bytes(damaged.len() as u64));
            budget(&mut group, size.bytes);
            group.bench_function("parse", |b| {
                b.iter(|| serde_json::from_slice::<Value>(black_box(&damaged)).expect("JSON"))
            });
            group.bench_function("repair", |b| {
                b.iter(|| {
                    let body = mend::parse_body(black_box(&damaged)).expect("JSON");
                    repair(&body, &ropts).expect("repairs")
                })
            });
            group.finish();
        }
    }
}

/// Budget per function: ~3 s at 5 KB and 200 KB, ~6 s at 5 MB (20 ms per run).
fn budget(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    bytes: usize,
) {
    if bytes >= 1024 * 1024 {
        group
            .sample_size(20)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(5));
    } else {
        group
            .sample_size(50)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
    }
}

/// The body with every 37th history item removed and every 53rd duplicated (in a short
/// history, the second item removed and the last doubled): orphaned
/// results, unanswered calls, duplicates, stranded reasoning, spread through the history.
fn damage(bytes: &[u8], dialect: Dialect) -> Vec<u8> {
    let mut body: Value = serde_json::from_slice(bytes).expect("the corpus is JSON");
    if let Some(items) = body
        .get_mut(dialect.history_key())
        .and_then(Value::as_array_mut)
    {
        // Every 37th item goes and every 53rd is doubled; a short history loses its second
        // item (the first call turn) and doubles its last.
        let n = items.len();
        let (drop, dup): (Vec<usize>, Vec<usize>) = if n > 100 {
            ((36..n).step_by(37).collect(), (52..n).step_by(53).collect())
        } else {
            (vec![1], vec![n.saturating_sub(1)])
        };
        let old = std::mem::take(items);
        for (i, item) in old.into_iter().enumerate() {
            if drop.contains(&i) {
                continue;
            }
            if dup.contains(&i) {
                items.push(item.clone());
            }
            items.push(item);
        }
    }
    serde_json::to_vec(&body).expect("serializes")
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = parse_vs_check
}
criterion_main!(benches);
