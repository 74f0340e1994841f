//! Observe, around the stages: what one exchange was, told three ways when it ends (the
//! response's last byte out, or the gateway's own answer):
//!
//! - `mend_request_latency_seconds{dialect, mode, status}` (the whole exchange);
//! - one log line, `exchange`, with the request id, route, dialect, mode, outcome,
//!   status, latency, violations, repairs, heal, bytes, model and the trace id (never a
//!   header value, a credential or a body);
//! - with traces on ([`crate::telemetry`]), one span per exchange following the GenAI
//!   semantic conventions, named `{gen_ai.operation.name} {gen_ai.request.model}`
//!   (kind SERVER; an incoming W3C `traceparent` is its parent), with a child span of
//!   kind CLIENT for each upstream call (heal's retry is a second), whose context
//!   replaces the client's `traceparent` upstream. Usage and the answering model are
//!   read from the response or stream (`mend::canonical::capture`, `Reply::usage`)
//!   once it has gone out, off the request's path.
//!
//! Attributes of the exchange span: `gen_ai.operation.name` (`chat`, Gemini's
//! `generate_content`), `gen_ai.provider.name` (from the upstream's provider profile, or
//! the dialect's), `gen_ai.request.model`, `gen_ai.request.stream`,
//! `gen_ai.conversation.id` (`x-mend-conversation`), `gen_ai.response.model`,
//! `gen_ai.response.id`, `gen_ai.usage.input_tokens` / `output_tokens`,
//! `http.request.method`, `url.path` (never the query, which can hold a key),
//! `http.response.status_code`, `error.type` (the status, or why the upstream failed),
//! `mend.request_id`, `mend.mode`, `mend.outcome`, `mend.violations`, `mend.repairs`,
//! `mend.healed` (with `mend.heal.outcome` and `mend.healed_rules` when heal acted). The
//! upstream span has the `gen_ai.*` request and response attributes, `server.address`,
//! `server.port` and the status.
//!
//! Invariant: with traces off nothing here allocates a span or parses a body; the
//! facts for the log line are a few words behind an uncontended lock.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use mend::canonical::capture::{read_response, read_stream, Usage};
use mend::Dialect;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{SpanKind, SpanRef, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracer;

use super::heal::{rule_ids, Heal};
use super::{header_str, Ctx, Route};
use crate::config::Mode;
use crate::head::{request_head, RequestHead};
use crate::judge::Verdict;
use crate::stream::{End, Seen};
use crate::{Inner, CONVERSATION_HEADER};

/// What the stages learn about an exchange, for its span and its log line.
#[derive(Debug, Clone, Default)]
struct Facts {
    mode: &'static str,
    outcome: &'static str,
    violations: usize,
    repairs: usize,
    /// `x-mend-heal`, when heal recognized a history error.
    heal: Option<&'static str>,
    healed_rules: String,
    model: Option<String>,
    upstream_ms: Option<f64>,
}

/// One exchange being observed: its facts, and its spans when traces are on.
pub(in crate::proxy) struct Observed {
    facts: Mutex<Facts>,
    traced: Option<Traced>,
}

/// The spans of a traced exchange.
struct Traced {
    /// The exchange span, in its context.
    span: Context,
    /// The upstream call in flight, or the last one.
    call: Mutex<Option<Context>>,
    operation: &'static str,
    provider: &'static str,
    tracer: SdkTracer,
}

impl Observed {
    /// The exchange has arrived: its span starts (traces on), as of `started`.
    pub(super) fn start(
        inner: &Inner,
        route: Route,
        id: &str,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        started: Instant,
    ) -> Observed {
        let upstream = inner.config.upstream(route.upstream);
        let facts = Facts {
            mode: if route.judged {
                upstream.mode.name()
            } else {
                Mode::Off.name()
            },
            ..Facts::default()
        };
        let traced = inner.telemetry.get().map(|t| {
            let operation = operation(route.upstream);
            let provider = provider_name(route.upstream, upstream.provider.as_deref());
            let parent = TraceContextPropagator::new().extract(&HeaderReader(headers));
            let model = route
                .judged
                .then(|| Dialect::model_from_endpoint(path))
                .flatten();
            let name = match (&model, route.judged) {
                (Some(m), _) => format!("{operation} {m}"),
                (None, true) => operation.to_string(),
                (None, false) => format!("{method} {path}"),
            };
            let mut attributes = vec![
                KeyValue::new("http.request.method", method.to_string()),
                KeyValue::new("url.path", path.to_string()),
                KeyValue::new("mend.request_id", id.to_string()),
            ];
            if route.judged {
                attributes.push(KeyValue::new("gen_ai.operation.name", operation));
                attributes.push(KeyValue::new("gen_ai.provider.name", provider));
                if let Some(m) = &model {
                    attributes.push(KeyValue::new("gen_ai.request.model", m.clone()));
                }
            }
            let tracer = t.tracer();
            let span = tracer
                .span_builder(name)
                .with_kind(SpanKind::Server)
                .with_start_time(SystemTime::now() - started.elapsed())
                .with_attributes(attributes)
                .start_with_context(tracer, &parent);
            Traced {
                span: parent.with_span(span),
                call: Mutex::new(None),
                operation,
                provider,
                tracer: tracer.clone(),
            }
        });
        Observed {
            facts: Mutex::new(facts),
            traced,
        }
    }

    fn facts(&self, f: impl FnOnce(&mut Facts)) {
        if let Ok(mut facts) = self.facts.lock() {
            f(&mut facts);
        }
    }

    /// The mode the request runs under.
    pub(super) fn mode(&self, mode: Mode) {
        self.facts(|f| f.mode = mode.name());
        if let Some(t) = &self.traced {
            t.span
                .span()
                .set_attribute(KeyValue::new("mend.mode", mode.name()));
        }
    }

    /// The verdict on the body, with the request's model and whether it streams (both
    /// read off the check's tape, or skimmed off the body's top level when the check
    /// read no tape; in `off` mode only for a traced exchange).
    pub(super) fn judged(&self, path: &str, headers: &HeaderMap, verdict: &Verdict, body: &[u8]) {
        let in_path = Dialect::model_from_endpoint(path);
        let head = match &verdict.head {
            Some(h) => h.clone(),
            None if verdict.outcome != "off" || self.traced.is_some() => request_head(body),
            None => RequestHead::default(),
        };
        let model = in_path.clone().or(head.model);
        self.facts(|f| {
            f.outcome = verdict.outcome;
            f.violations = verdict.found.len();
            f.repairs = verdict.edits.len();
            f.model.clone_from(&model);
        });
        let Some(t) = &self.traced else { return };
        let span = t.span.span();
        let stream = path.contains(":streamGenerateContent")
            || path.ends_with("/converse-stream")
            || head.stream == Some(true);
        span.set_attribute(KeyValue::new("gen_ai.request.stream", stream));
        if let Some(c) = header_str(headers, CONVERSATION_HEADER) {
            span.set_attribute(KeyValue::new("gen_ai.conversation.id", c.to_string()));
        }
        // A model in the path was named when the span started.
        if let (Some(m), None) = (model, in_path) {
            span.update_name(format!("{} {m}", t.operation));
            span.set_attribute(KeyValue::new("gen_ai.request.model", m));
        }
    }

    /// What heal did, when it looked at an upstream error.
    pub(super) fn healed(&self, heal: Option<&Heal>) {
        let Some(h) = heal else { return };
        let rules = match &h.repair {
            Some(r) if h.outcome == "healed" => rule_ids(r.edits.iter().map(|e| e.rule)),
            _ => String::new(),
        };
        self.facts(|f| {
            f.heal = Some(h.outcome);
            f.healed_rules = rules;
            if let Some(r) = &h.repair {
                f.repairs = r.edits.len();
            }
        });
    }

    /// An upstream call is about to be made: its span starts (ending the one before,
    /// heal's refused first call) and its context goes upstream as `traceparent`.
    pub(super) fn upstream_call(&self, base: &reqwest::Url, method: &Method, out: &mut HeaderMap) {
        let Some(t) = &self.traced else { return };
        let Ok(mut call) = t.call.lock() else { return };
        let retry = call.is_some();
        if let Some(before) = call.take() {
            before.span().end();
        }
        let model = self.facts.lock().ok().and_then(|f| f.model.clone());
        let name = match &model {
            Some(m) => format!("{} {m}", t.operation),
            None => t.operation.to_string(),
        };
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", t.operation),
            KeyValue::new("gen_ai.provider.name", t.provider),
            KeyValue::new("http.request.method", method.to_string()),
            KeyValue::new("mend.heal.retry", retry),
        ];
        if let Some(host) = base.host_str() {
            attributes.push(KeyValue::new("server.address", host.to_string()));
        }
        if let Some(port) = base.port_or_known_default() {
            attributes.push(KeyValue::new("server.port", i64::from(port)));
        }
        if let Some(m) = model {
            attributes.push(KeyValue::new("gen_ai.request.model", m));
        }
        let child = t
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Client)
            .with_attributes(attributes)
            .start_with_context(&t.tracer, &t.span);
        let cx = t.span.with_span(child);
        // The client's own trace context gives way to this call's.
        out.remove("traceparent");
        out.remove("tracestate");
        TraceContextPropagator::new().inject_context(&cx, &mut HeaderWriter(out));
        *call = Some(cx);
    }

    /// The upstream call answered (its status and time to the response head), or
    /// failed (why, as the requests metric's outcome says it).
    pub(super) fn upstream_answered(&self, answer: Result<(StatusCode, Duration), &'static str>) {
        if let Ok((_, latency)) = answer {
            self.facts(|f| f.upstream_ms = Some(latency.as_secs_f64() * 1000.0));
        }
        let Some(t) = &self.traced else { return };
        let Ok(call) = t.call.lock() else { return };
        let Some(cx) = call.as_ref() else { return };
        let span = cx.span();
        match answer {
            Ok((status, _)) => record_status(&span, status, true),
            Err(why) => {
                span.set_attribute(KeyValue::new("error.type", why));
                span.set_status(Status::error(why));
                span.end();
            }
        }
    }

    /// Whether the exchange has spans (traces on).
    pub(super) fn traced(&self) -> bool {
        self.traced.is_some()
    }

    /// Whether the response body is wanted once it ends (for its usage).
    pub(super) fn wants_body(&self, status: StatusCode) -> bool {
        status.is_success()
            && self
                .traced
                .as_ref()
                .is_some_and(|t| t.span.span().span_context().is_sampled())
    }
}

/// What an exchange needs at its end, moved to where the response body ends.
pub(in crate::proxy) struct Ending {
    inner: Arc<Inner>,
    id: String,
    dialect: Dialect,
    method: Method,
    path: String,
    started: Instant,
    facts: Facts,
    status: StatusCode,
    content_type: String,
    span: Option<Context>,
    call: Option<Context>,
}

/// The answer is the upstream's, streaming back: what is needed once it ends.
pub(super) fn hand_over(ctx: &Ctx, status: StatusCode, headers: &HeaderMap) -> Ending {
    let obs = &ctx.obs;
    let traced = obs.traced.as_ref();
    Ending {
        inner: ctx.inner.clone(),
        id: ctx.id.clone(),
        dialect: ctx.dialect(),
        method: ctx.method.clone(),
        path: ctx.path.clone(),
        started: ctx.started,
        facts: obs.facts.lock().map(|f| f.clone()).unwrap_or_default(),
        status,
        content_type: header_str(headers, "content-type")
            .unwrap_or("")
            .to_string(),
        span: traced.map(|t| t.span.clone()),
        call: traced.and_then(|t| t.call.lock().ok().and_then(|mut c| c.take())),
    }
}

/// The gateway's own answer ends the exchange now.
pub(super) fn answered_early(ctx: &Ctx, status: StatusCode) {
    hand_over(ctx, status, &HeaderMap::new()).finish(None);
}

impl Ending {
    /// The exchange is over: count its time, log it, and end its spans (with the usage
    /// the response reports, read off the request's path).
    pub(super) fn finish(self, seen: Option<&Seen>) {
        let latency = self.started.elapsed();
        let f = &self.facts;
        self.inner
            .metrics
            .exchange(self.dialect.name(), f.mode, self.status.as_u16(), latency);
        let trace_id = self
            .span
            .as_ref()
            .map(|cx| cx.span().span_context().trace_id().to_string());
        tracing::info!(
            request_id = %self.id, method = %self.method, path = %self.path,
            dialect = self.dialect.name(), mode = f.mode, outcome = f.outcome,
            status = self.status.as_u16(), latency_ms = latency.as_secs_f64() * 1000.0,
            upstream_ms = f.upstream_ms, violations = f.violations, repairs = f.repairs,
            heal = f.heal, healed = %f.healed_rules, model = f.model.as_deref(),
            bytes = seen.map(|s| s.bytes), ended = seen.map(|s| s.end.describe()),
            trace_id = trace_id.as_deref(),
            "exchange"
        );
        let Some(span) = self.span else { return };
        record_facts(&span.span(), f);
        let ended_at = SystemTime::now();
        let body = seen
            .filter(|s| s.end == End::Complete && !s.truncated && !s.copy.is_empty())
            .map(|s| s.copy.clone());
        let (status, dialect, content_type, call) =
            (self.status, self.dialect, self.content_type, self.call);
        let end = move || {
            let usage = body
                .filter(|_| status.is_success())
                .map(|b| usage_of(dialect, &content_type, &b));
            for (cx, client) in [(call.as_ref(), true), (Some(&span), false)] {
                let Some(cx) = cx else { continue };
                let s = cx.span();
                if let Some(u) = &usage {
                    record_usage(&s, u);
                }
                // The call's status was recorded when its head arrived.
                if !client {
                    record_status(&s, status, false);
                }
                s.end_with_timestamp(ended_at);
            }
        };
        // Reading a long stream's usage takes a while: not on the response's path.
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(end)),
            Err(_) => end(),
        }
    }
}

/// What mend did, on the exchange span (each attribute once: the SDK keeps repeats).
fn record_facts(span: &SpanRef<'_>, f: &Facts) {
    if !f.outcome.is_empty() {
        span.set_attribute(KeyValue::new("mend.outcome", f.outcome));
        span.set_attribute(KeyValue::new("mend.violations", count(f.violations)));
        span.set_attribute(KeyValue::new("mend.repairs", count(f.repairs)));
        span.set_attribute(KeyValue::new("mend.healed", f.heal == Some("healed")));
    }
    if let Some(h) = f.heal {
        span.set_attribute(KeyValue::new("mend.heal.outcome", h));
    }
    if !f.healed_rules.is_empty() {
        span.set_attribute(KeyValue::new("mend.healed_rules", f.healed_rules.clone()));
    }
}

/// `chat`, or Gemini's `generate_content`.
fn operation(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Gemini => "generate_content",
        _ => "chat",
    }
}

/// `gen_ai.provider.name`: the conventions' name for the upstream's provider profile,
/// or for the dialect's own provider.
fn provider_name(dialect: Dialect, profile: Option<&str>) -> &'static str {
    match profile.map(str::to_ascii_lowercase).as_deref() {
        Some("openai") => "openai",
        Some("azure") => "azure.ai.openai",
        Some("groq") => "groq",
        Some("cerebras") => "cerebras",
        Some("fireworks") => "fireworks",
        Some("mistral") => "mistral_ai",
        Some("deepseek") => "deepseek",
        Some("moonshot") => "moonshot",
        Some("xai") => "x_ai",
        Some("anthropic") => "anthropic",
        Some("bedrock") => "aws.bedrock",
        Some("vertex") => "gcp.vertex_ai",
        Some("gemini") => "gcp.gemini",
        _ => match dialect {
            Dialect::OpenAiChat | Dialect::OpenAiResponses => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gcp.gemini",
            Dialect::BedrockConverse => "aws.bedrock",
        },
    }
}

/// The status on a span: its code, and for an error its class (`error.type`). A
/// client span is in error from 400; a server span from 500 (a 4xx is the client's).
fn record_status(span: &SpanRef<'_>, status: StatusCode, client: bool) {
    span.set_attribute(KeyValue::new(
        "http.response.status_code",
        i64::from(status.as_u16()),
    ));
    if status.as_u16() >= 400 {
        span.set_attribute(KeyValue::new("error.type", status.as_u16().to_string()));
    }
    if status.as_u16() >= 500 || (client && status.as_u16() >= 400) {
        span.set_status(Status::error(format!("HTTP {}", status.as_u16())));
    }
}

fn record_usage(span: &SpanRef<'_>, u: &Usage) {
    let pairs = [
        ("gen_ai.usage.input_tokens", u.input_tokens),
        ("gen_ai.usage.output_tokens", u.output_tokens),
    ];
    for (k, v) in pairs {
        if let Some(n) = v {
            span.set_attribute(KeyValue::new(k, i64::try_from(n).unwrap_or(i64::MAX)));
        }
    }
    if let Some(m) = &u.model {
        span.set_attribute(KeyValue::new("gen_ai.response.model", m.clone()));
    }
    if let Some(id) = &u.response_id {
        span.set_attribute(KeyValue::new("gen_ai.response.id", id.clone()));
    }
}

/// The usage a response or stream reports; nothing when it cannot be read.
fn usage_of(dialect: Dialect, content_type: &str, body: &[u8]) -> Usage {
    let stream = ["text/event-stream", "application/vnd.amazon.eventstream"]
        .iter()
        .any(|t| content_type.starts_with(t));
    let reply = if stream {
        read_stream(dialect, body)
    } else {
        read_response(dialect, body)
    };
    reply.map(|r| r.usage(dialect)).unwrap_or_default()
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Incoming headers as the propagator reads them.
struct HeaderReader<'a>(&'a HeaderMap);

impl Extractor for HeaderReader<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(HeaderName::as_str).collect()
    }
}

/// Outgoing headers as the propagator writes them.
struct HeaderWriter<'a>(&'a mut HeaderMap);

impl Injector for HeaderWriter<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(k), Ok(v)) = (
            HeaderName::from_bytes(key.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            self.0.insert(k, v);
        }
    }
}
