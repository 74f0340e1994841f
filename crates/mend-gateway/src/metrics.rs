//! Prometheus metrics, one recorder per gateway.
//!
//! The recorder is owned by the [`Metrics`] value rather than installed process-wide, so
//! that two gateways in one process (the tests run dozens) count apart. Every name is
//! listed in [`NAMES`] and described on the first render.
//!
//! | metric | labels |
//! |---|---|
//! | `mend_requests_total` | `dialect`, `mode`, `outcome` |
//! | `mend_violations_total` | `dialect`, `rule` |
//! | `mend_repairs_total` | `dialect`, `rule` (one per edit) |
//! | `mend_repairs_skipped_total` (a repair made but not forwarded) | `dialect`, `reason` (`sigv4`: the body is signed) |
//! | `mend_heals_total` (heal mode: an upstream error recognized as a history error) | `dialect`, `rule` (the most specific rule recognized), `outcome` (`healed`, `failed`: the retry was refused too, `unrepairable`: repair could not make the body valid, `sigv4`: the body is signed, not retried) |
//! | `mend_upstream_responses_total` | `dialect`, `status` |
//! | `mend_upstream_latency_seconds` (histogram: request sent to response head) | `dialect` |
//! | `mend_request_latency_seconds` (histogram: the whole exchange, request head in to the response's last byte out) | `dialect`, `mode` (the one applied), `status` (`2xx`, `3xx`, `4xx`, `5xx`) |
//! | `mend_request_bytes_total` (as received) / `mend_upstream_request_bytes_total` (as sent) | `dialect` |
//! | `mend_response_bytes_total` | `dialect` |
//! | `mend_store_appends_total` | `outcome` (`ok`, `already_stored`, `diverged`, `error`, `incomplete`, `unreadable`, `not_captured`, `claim_error`) |
//! | `mend_capture_failures_total` (an answer whose end went out without its exchange committed) | `reason` (`store`, `timeout`, `unreadable`, `too_large`) |
//! | `mend_tap_dropped_total` | |
//!
//! Every family is shown from start-up, before the first request. What "at zero" means
//! depends on whether its label values are known then: the families keyed by `dialect`
//! alone (the byte counters, `mend_upstream_latency_seconds`), the unlabelled one and
//! `mend_store_appends_total` and `mend_capture_failures_total` (their outcomes and
//! reasons are fixed) have a series at zero for each
//! value; the others, keyed also by what only a request shows (a mode it asked for, an
//! outcome, a rule, a status), show their `# HELP` and `# TYPE` lines, and each series
//! from the first time it is counted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mend::Dialect;
use metrics::{counter, histogram, with_local_recorder};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

/// Every metric name, with its help text.
pub const NAMES: [(&str, &str); 14] = [
    (
        "mend_requests_total",
        "Requests by dialect, mode and outcome",
    ),
    (
        "mend_violations_total",
        "Violations found, by dialect and rule",
    ),
    (
        "mend_repairs_total",
        "Repair edits made, by dialect and rule",
    ),
    (
        "mend_repairs_skipped_total",
        "Repairs made but not forwarded (a SigV4-signed body), by dialect and reason",
    ),
    (
        "mend_heals_total",
        "Upstream errors recognized as history errors in heal mode, by dialect, rule and outcome",
    ),
    (
        "mend_upstream_responses_total",
        "Upstream answers by dialect and HTTP status",
    ),
    (
        "mend_upstream_latency_seconds",
        "Time from sending a request upstream to its response head",
    ),
    (
        "mend_request_latency_seconds",
        "Time from a request's head in to its response's last byte out, by dialect, mode and status class",
    ),
    (
        "mend_request_bytes_total",
        "Request body bytes received from clients",
    ),
    (
        "mend_upstream_request_bytes_total",
        "Request body bytes sent upstream",
    ),
    (
        "mend_response_bytes_total",
        "Response body bytes passed back to clients",
    ),
    (
        "mend_store_appends_total",
        "Conversation store appends by outcome",
    ),
    (
        "mend_capture_failures_total",
        "Answers whose end went out without their exchange committed to the conversation, by reason",
    ),
    (
        "mend_tap_dropped_total",
        "Tap records dropped because the writer fell behind",
    ),
];

/// The outcomes of `mend_store_appends_total`, each at zero from start-up.
const STORE_OUTCOMES: [&str; 8] = [
    "ok",
    "already_stored",
    "diverged",
    "error",
    "incomplete",
    "unreadable",
    "not_captured",
    "claim_error",
];

/// The reasons of `mend_capture_failures_total`, each at zero from start-up.
const CAPTURE_FAILURES: [&str; 4] = ["store", "timeout", "unreadable", "too_large"];

/// Latency buckets, in seconds: 1 ms to 10 minutes.
const LATENCY_BUCKETS: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0,
    600.0,
];

/// Histogram observations are kept one by one until an upkeep folds them into their
/// buckets; a scrape runs one, and so does every this-many-th exchange, so that a
/// gateway nobody scrapes does not grow by every observation it makes.
const UPKEEP_EVERY: u64 = 4096;

/// The gateway's metrics.
#[derive(Clone)]
pub struct Metrics {
    recorder: Arc<PrometheusRecorder>,
    handle: PrometheusHandle,
    /// Exchanges counted, for the upkeep every [`UPKEEP_EVERY`].
    exchanges: Arc<AtomicU64>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// A fresh recorder, every family described and, where its label values are known
    /// now, at zero (see the module's doc).
    pub fn new() -> Metrics {
        let builder = PrometheusBuilder::new();
        let builder = match builder
            .set_buckets_for_metric(Matcher::Suffix("_seconds".to_string()), &LATENCY_BUCKETS)
        {
            Ok(b) => b,
            // Only fails on an empty bucket list, which LATENCY_BUCKETS is not.
            Err(_) => PrometheusBuilder::new(),
        };
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        let m = Metrics {
            recorder: Arc::new(recorder),
            handle,
            exchanges: Arc::default(),
        };
        m.with(|| {
            for (name, help) in NAMES {
                if is_histogram(name) {
                    metrics::describe_histogram!(name, metrics::Unit::Seconds, help);
                } else {
                    metrics::describe_counter!(name, help);
                }
            }
            for d in Dialect::ALL {
                let dialect = d.name();
                for name in [
                    "mend_request_bytes_total",
                    "mend_upstream_request_bytes_total",
                    "mend_response_bytes_total",
                ] {
                    counter!(name, "dialect" => dialect).increment(0);
                }
                // Registering a histogram shows it with no observations.
                let _ = histogram!("mend_upstream_latency_seconds", "dialect" => dialect);
            }
            for reason in CAPTURE_FAILURES {
                counter!("mend_capture_failures_total", "reason" => reason).increment(0);
            }
            for outcome in STORE_OUTCOMES {
                counter!("mend_store_appends_total", "outcome" => outcome).increment(0);
            }
            counter!("mend_tap_dropped_total").increment(0);
        });
        m
    }

    fn with<T>(&self, f: impl FnOnce() -> T) -> T {
        with_local_recorder(self.recorder.as_ref(), f)
    }

    /// The Prometheus text exposition: every family, those not counted yet by their
    /// `# HELP` and `# TYPE` lines.
    pub fn render(&self) -> String {
        self.handle.run_upkeep();
        let mut text = self.handle.render();
        for (name, help) in NAMES {
            if !text.contains(&format!("# TYPE {name} ")) {
                let kind = if is_histogram(name) {
                    "histogram"
                } else {
                    "counter"
                };
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
            }
        }
        text
    }

    /// One request handled.
    pub fn request(&self, dialect: &'static str, mode: &'static str, outcome: &'static str) {
        self.with(|| {
            counter!("mend_requests_total", "dialect" => dialect, "mode" => mode, "outcome" => outcome)
                .increment(1);
        });
    }

    /// Violations found in one body.
    pub fn violations<'a>(&self, dialect: &'static str, rules: impl Iterator<Item = &'a str>) {
        self.with(|| {
            for r in rules {
                counter!("mend_violations_total", "dialect" => dialect, "rule" => r.to_string())
                    .increment(1);
            }
        });
    }

    /// Edits made on one body.
    pub fn repairs<'a>(&self, dialect: &'static str, rules: impl Iterator<Item = &'a str>) {
        self.with(|| {
            for r in rules {
                counter!("mend_repairs_total", "dialect" => dialect, "rule" => r.to_string())
                    .increment(1);
            }
        });
    }

    /// A repair was made but the body went as it came.
    pub fn repair_skipped(&self, dialect: &'static str, reason: &'static str) {
        self.with(|| {
            counter!("mend_repairs_skipped_total", "dialect" => dialect, "reason" => reason)
                .increment(1);
        });
    }

    /// Heal mode recognized an upstream error as a history error, and what came of it.
    pub fn heal(&self, dialect: &'static str, rule: &'static str, outcome: &'static str) {
        self.with(|| {
            counter!("mend_heals_total", "dialect" => dialect, "rule" => rule, "outcome" => outcome)
                .increment(1);
        });
    }

    /// The upstream answered.
    pub fn upstream(&self, dialect: &'static str, status: u16, latency: Duration) {
        self.with(|| {
            counter!("mend_upstream_responses_total", "dialect" => dialect, "status" => status.to_string())
                .increment(1);
            histogram!("mend_upstream_latency_seconds", "dialect" => dialect)
                .record(latency.as_secs_f64());
        });
    }

    /// One exchange ended: its whole time, by the mode applied and the class of the
    /// status the client got.
    pub fn exchange(
        &self,
        dialect: &'static str,
        mode: &'static str,
        status: u16,
        latency: Duration,
    ) {
        let class = match status {
            200..=299 => "2xx",
            300..=399 => "3xx",
            400..=499 => "4xx",
            500..=599 => "5xx",
            _ => "other",
        };
        self.with(|| {
            histogram!("mend_request_latency_seconds", "dialect" => dialect, "mode" => mode, "status" => class)
                .record(latency.as_secs_f64());
        });
        let n = self.exchanges.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_multiple_of(UPKEEP_EVERY) {
            self.handle.run_upkeep();
        }
    }

    /// Request body sizes: as received, and as forwarded.
    pub fn request_bytes(&self, dialect: &'static str, received: usize, sent: usize) {
        self.with(|| {
            counter!("mend_request_bytes_total", "dialect" => dialect).increment(received as u64);
            counter!("mend_upstream_request_bytes_total", "dialect" => dialect)
                .increment(sent as u64);
        });
    }

    /// Response body bytes passed back.
    pub fn response_bytes(&self, dialect: &'static str, n: u64) {
        self.with(|| {
            counter!("mend_response_bytes_total", "dialect" => dialect).increment(n);
        });
    }

    /// A conversation append ended.
    pub fn store_append(&self, outcome: &'static str) {
        self.with(|| counter!("mend_store_appends_total", "outcome" => outcome).increment(1));
    }

    /// An answer's end went out without its exchange committed.
    pub fn capture_failed(&self, reason: &'static str) {
        self.with(|| counter!("mend_capture_failures_total", "reason" => reason).increment(1));
    }

    /// The tap dropped a record.
    pub fn tap_dropped(&self) {
        self.with(|| counter!("mend_tap_dropped_total").increment(1));
    }
}

/// The latency families are the ones in seconds.
fn is_histogram(name: &str) -> bool {
    name.ends_with("_seconds")
}
