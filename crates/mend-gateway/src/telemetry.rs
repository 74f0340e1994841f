//! OpenTelemetry traces: where the gateway's spans go, over OTLP/HTTP.
//!
//! Off unless an OTLP endpoint is configured: [`Telemetry::from_env`] reads the standard
//! variables as the OpenTelemetry SDK does (`OTEL_EXPORTER_OTLP_ENDPOINT`, to which
//! `/v1/traces` is added, or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is;
//! `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`, `_PROTOCOL` (`http/protobuf`, the default, or
//! `http/json`), `_TIMEOUT`; `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`;
//! `OTEL_TRACES_SAMPLER` and its `_ARG`; `OTEL_BSP_*` for the batch processor), and
//! honours `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none`. gRPC is not
//! offered: it would bring a second HTTP stack for one exporter.
//!
//! Spans are batched and sent from the SDK's own thread, never on a request's path;
//! [`Telemetry::shutdown`] sends what is left (`mend serve` calls it once the server
//! has drained). What the spans hold is the proxy's business (`proxy/observe.rs`).
//!
//! Invariant: an endpoint's credentials (its user info, the values of
//! `OTEL_EXPORTER_OTLP_HEADERS`) are never printed or logged.

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;

use crate::config::strip_userinfo;

/// The service name spans carry when neither `OTEL_SERVICE_NAME` nor
/// `OTEL_RESOURCE_ATTRIBUTES` names one.
pub const DEFAULT_SERVICE_NAME: &str = "mend";

/// Why traces cannot be sent as configured.
#[derive(Debug, thiserror::Error)]
#[error("{setting}: {reason}")]
pub struct TelemetryError {
    /// The variable (or setting) at fault.
    pub setting: String,
    /// What is wrong with it.
    pub reason: String,
}

/// A tracer and the pipeline behind it. Cheap to clone: clones share the pipeline.
#[derive(Clone)]
pub struct Telemetry {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    /// Where spans go, for the start-up line (user info stripped).
    destination: String,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("destination", &self.destination)
            .finish()
    }
}

impl Telemetry {
    /// Traces as the process environment configures them; `None` when no OTLP
    /// endpoint is set, or tracing is turned off.
    pub fn from_env() -> Result<Option<Telemetry>, TelemetryError> {
        Telemetry::from_vars(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
    }

    /// As [`Telemetry::from_env`], reading the variables through `var` (the SDK itself
    /// still reads the process environment for headers, timeouts, resource and sampler).
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Telemetry>, TelemetryError> {
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        if let Some(exporters) = var("OTEL_TRACES_EXPORTER") {
            let names: Vec<String> = exporters
                .split(',')
                .map(|e| e.trim().to_ascii_lowercase())
                .collect();
            if names.iter().all(|e| e == "none") {
                return Ok(None);
            }
            if let Some(other) = names.iter().find(|e| *e != "otlp" && *e != "none") {
                return Err(TelemetryError {
                    setting: "OTEL_TRACES_EXPORTER".into(),
                    reason: format!("'{other}' is not offered; mend exports traces with otlp"),
                });
            }
        }
        let (setting, endpoint) = match (
            var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            var("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(e), _) => ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", e),
            (None, Some(e)) => ("OTEL_EXPORTER_OTLP_ENDPOINT", e),
            (None, None) => return Ok(None),
        };
        let protocol = protocol(&var)?;
        // The generic endpoint is a base the traces' path is added to; the traces'
        // endpoint is taken as it is (as the SDK does).
        let url = if setting == "OTEL_EXPORTER_OTLP_ENDPOINT" {
            format!("{}/v1/traces", endpoint.trim().trim_end_matches('/'))
        } else {
            endpoint.trim().to_string()
        };
        Telemetry::otlp(setting, &url, protocol).map(Some)
    }

    /// Spans sent to one OTLP/HTTP traces URL (`http://host:4318/v1/traces`, taken as
    /// it is) in protobuf.
    pub fn otlp_http(traces_url: &str) -> Result<Telemetry, TelemetryError> {
        Telemetry::otlp("traces endpoint", traces_url, Protocol::HttpBinary)
    }

    /// The exporter (headers and timeout from the environment, as the SDK reads them)
    /// behind a batch processor.
    fn otlp(setting: &str, url: &str, protocol: Protocol) -> Result<Telemetry, TelemetryError> {
        check_endpoint(setting, url)?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(protocol)
            .with_endpoint(url)
            .build()
            .map_err(|e| TelemetryError {
                setting: setting.into(),
                reason: format!("cannot build the OTLP exporter: {e}"),
            })?;
        Ok(Telemetry::with_exporter(exporter, url, protocol))
    }

    fn with_exporter(
        exporter: opentelemetry_otlp::SpanExporter,
        destination: &str,
        protocol: Protocol,
    ) -> Telemetry {
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource())
            .build();
        let tracer = provider.tracer("mend-gateway");
        let kind = match protocol {
            Protocol::HttpJson => "http/json",
            _ => "http/protobuf",
        };
        Telemetry {
            provider,
            tracer,
            destination: format!("{} (OTLP {kind})", strip_userinfo(destination)),
        }
    }

    /// The tracer spans are made with.
    pub(crate) fn tracer(&self) -> &SdkTracer {
        &self.tracer
    }

    /// Where spans go, for people: the URL without user info, and the protocol.
    pub fn destination(&self) -> &str {
        &self.destination
    }

    /// Send the spans ended so far now, waiting for the export. Blocks: call it off
    /// the async runtime (`spawn_blocking`) or after it.
    pub fn flush(&self) -> Result<(), String> {
        self.provider.force_flush().map_err(|e| e.to_string())
    }

    /// Send what is left and stop, waiting at most `timeout`. Blocks, as `flush`.
    pub fn shutdown(&self, timeout: Duration) -> Result<(), String> {
        self.provider
            .shutdown_with_timeout(timeout)
            .map_err(|e| e.to_string())
    }
}

/// `http/protobuf` (the default) or `http/json`, from the traces' variable or the
/// generic one.
fn protocol(var: &impl Fn(&str) -> Option<String>) -> Result<Protocol, TelemetryError> {
    let (setting, value) = match (
        var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
        var("OTEL_EXPORTER_OTLP_PROTOCOL"),
    ) {
        (Some(p), _) => ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", p),
        (None, Some(p)) => ("OTEL_EXPORTER_OTLP_PROTOCOL", p),
        (None, None) => return Ok(Protocol::HttpBinary),
    };
    match value.trim() {
        "http/protobuf" => Ok(Protocol::HttpBinary),
        "http/json" => Ok(Protocol::HttpJson),
        other => Err(TelemetryError {
            setting: setting.into(),
            reason: format!(
                "'{other}' is not offered; mend sends OTLP over HTTP: http/protobuf (the default) or http/json"
            ),
        }),
    }
}

/// An endpoint must be an `http(s)://` URL.
fn check_endpoint(setting: &str, endpoint: &str) -> Result<(), TelemetryError> {
    let e = endpoint.trim();
    let ok = e
        .parse::<reqwest::Url>()
        .ok()
        .is_some_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
    if ok {
        return Ok(());
    }
    // A value that is no URL may still hold user info (`//user:pw@host`): nothing
    // before an `@` is shown.
    let shown = strip_userinfo(e);
    let shown = match shown.rsplit_once('@') {
        Some((_, host)) => format!("…@{host}"),
        None => shown,
    };
    Err(TelemetryError {
        setting: setting.into(),
        reason: format!(
            "'{}' is not an http(s):// URL",
            shown.chars().take(200).collect::<String>()
        ),
    })
}

/// The SDK's resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, the SDK's own
/// attributes), named `mend` when nothing names the service, with mend's version.
fn resource() -> Resource {
    let detected = Resource::builder().build();
    let unnamed = detected
        .get(&opentelemetry::Key::from_static_str("service.name"))
        .is_none_or(|v| v.as_str().starts_with("unknown_service"));
    let mut builder = Resource::builder()
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    if unnamed {
        builder = builder.with_service_name(DEFAULT_SERVICE_NAME);
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Vars<'a> = &'a [(&'a str, &'a str)];

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn off_unless_an_endpoint_is_set_and_tracing_is_not_turned_off() {
        let off: [Vars; 4] = [
            &[],
            &[("OTEL_SERVICE_NAME", "gw")],
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_SDK_DISABLED", "true"),
            ],
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_TRACES_EXPORTER", "none"),
            ],
        ];
        for pairs in off {
            assert!(
                Telemetry::from_vars(vars(pairs)).unwrap().is_none(),
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn bad_settings_say_which_and_why_without_credentials() {
        let cases: [(Vars, &str, &str); 4] = [
            (
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ],
                "OTEL_EXPORTER_OTLP_PROTOCOL",
                "'grpc' is not offered",
            ),
            (
                &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector:4318")],
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "not an http(s):// URL",
            ),
            (
                &[(
                    "OTEL_EXPORTER_OTLP_ENDPOINT",
                    "ftp://user:SECRET-pw@collector:4318",
                )],
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "'ftp://collector:4318/v1/traces' is not",
            ),
            (
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                    ("OTEL_TRACES_EXPORTER", "zipkin"),
                ],
                "OTEL_TRACES_EXPORTER",
                "'zipkin' is not offered",
            ),
        ];
        for (pairs, setting, says) in cases {
            let e = Telemetry::from_vars(vars(pairs)).unwrap_err();
            assert_eq!(e.setting, setting, "{pairs:?}");
            let text = e.to_string();
            assert!(text.contains(says), "{text}");
            assert!(!text.contains("SECRET"), "{text}");
        }
    }
}
