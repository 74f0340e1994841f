//! `mend serve` end to end: the official Python SDKs (`openai`, `anthropic`,
//! `google-genai`) run real multi-turn tool loops, streamed and not, through four
//! gateways (one per mode: off, observe, repair, strict) to the mock upstream; a broken
//! history that off and observe pass on and the provider refuses, one that repair mends
//! unnoticed, and one that strict refuses, each SDK reporting the provider's own 400.
//! The SDKs come from PyPI into a venv under `target/` (pinned, reused across runs).
//! Without Python or the registry the test says so and skips, except under `CI=true`,
//! where it fails.
//!
//! Also checked: no credential reaches mend's log (at debug) or its tap. And, without
//! Python: `mend serve --log-format json` with the standard `OTEL_*` variables pointing
//! at a local OTLP/HTTP (JSON) receiver writes one JSON object a line (the `exchange`
//! line among them, no credential), and sends, when it stops, the exchange's GenAI span
//! and its upstream call's, continuing the client's `traceparent` and carrying the
//! call's upstream; traces configured beyond what mend offers stop it with the reason.

#![allow(clippy::unwrap_used)]

#[path = "../../mend-gateway/tests/it/support/mock.rs"]
mod mock;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The SDKs, pinned.
const PINS: [&str; 3] = ["openai==3.54.0", "anthropic==2.12.0", "google-genai==3.4.0"];

const OPENAI_KEY: &str = "sk-e2e-openai-SECRET-7f3a9c";
const ANTHROPIC_KEY: &str = "sk-ant-e2e-SECRET-41be07";
const GEMINI_KEY: &str = "AIza-e2e-SECRET-c0ffee";

#[path = "support/venv.rs"]
mod venv;
use venv::in_ci;

/// Skip (outside CI) or fail (in CI) with a reason.
fn unavailable(why: &str) {
    if in_ci() {
        panic!("{why}, and CI=true: the SDK end-to-end test must run in CI");
    }
    eprintln!("SKIP: {why}; the Python SDK end-to-end test is skipped");
}

/// A venv with the pinned SDKs: `target/tmp/sdk-venv`, made once and reused while the
/// pins are the same.
fn sdk_python() -> Result<PathBuf, String> {
    venv::pinned_python("sdk-venv", &PINS)
}

/// `mend serve` on a free port, its stderr collected.
struct Served {
    child: std::process::Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Served {
    fn start(upstream: &str, mode: &str, tap: &Path, store: &str) -> Served {
        let tap = tap.display().to_string();
        Served::start_with(
            upstream,
            &[
                "--mode", mode, "--log", "debug", "--tap", &tap, "--db", store,
            ],
            &[],
        )
    }

    /// `mend serve` with these flags and variables (beside the upstreams and a free
    /// port); no `OTEL_*` variable reaches it but those given.
    fn start_with(upstream: &str, args: &[&str], vars: &[(&str, &str)]) -> Served {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mend"));
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .env("MEND_OPENAI_BASE_URL", upstream)
            .env("MEND_ANTHROPIC_BASE_URL", upstream)
            .env("MEND_GEMINI_BASE_URL", upstream)
            .env_remove("MEND_CONFIG")
            .env_remove("MEND_DB");
        for (k, _) in std::env::vars() {
            if k.starts_with("OTEL_") {
                cmd.env_remove(k);
            }
        }
        cmd.envs(vars.iter().copied());
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mend serve starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().expect("piped stderr"));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                // A text line, or the message of a JSON one.
                const SAYS: &str = "mend serve: listening on ";
                if let Some(at) = line.find(SAYS) {
                    let url = line[at + SAYS.len()..].split('"').next().unwrap_or("");
                    let _ = tx.send(url.to_string());
                }
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("mend serve did not start:\n{}", stderr.lock().unwrap()));
        Served { child, url, stderr }
    }

    /// SIGTERM, then wait; the log as written.
    fn stop(mut self) -> String {
        #[cfg(unix)]
        {
            let _ = Command::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status();
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                assert!(status.success(), "mend serve exited with {status}");
                break;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("mend serve did not stop on SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Let the reader thread take the last lines.
        std::thread::sleep(Duration::from_millis(100));
        let log = self.stderr.lock().unwrap().clone();
        log
    }
}

const MODES: [&str; 4] = ["off", "observe", "repair", "strict"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdks_run_tool_loops_through_mend_serve_in_every_mode() {
    let python = match tokio::task::spawn_blocking(sdk_python).await.unwrap() {
        Ok(p) => p,
        Err(why) => return unavailable(&why),
    };
    let upstream = mock::Mock::start().await;
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("serve-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let taps = scratch.join("tap");
    // The four gateways keep conversations in one database, as replicas would.
    let db = format!("sqlite:{}", scratch.join("conversations.db").display());
    std::fs::create_dir_all(&scratch).unwrap();
    let served: Vec<Served> = MODES
        .iter()
        .map(|m| Served::start(&upstream.base_url(), m, &taps.join(m), &db))
        .collect();
    let urls: serde_json::Map<String, Value> = MODES
        .iter()
        .zip(&served)
        .map(|(m, s)| (m.to_string(), Value::String(s.url.clone())))
        .collect();
    let urls = Value::Object(urls).to_string();
    let scripts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk");

    // The three SDKs at once, each in its own process, each through every gateway.
    let runs: Vec<_> = ["openai_loop.py", "anthropic_loop.py", "genai_loop.py"]
        .into_iter()
        .map(|script| {
            tokio::process::Command::new(&python)
                .arg(scripts.join(script))
                .env("MEND_URLS", &urls)
                .env("E2E_OPENAI_KEY", OPENAI_KEY)
                .env("E2E_ANTHROPIC_KEY", ANTHROPIC_KEY)
                .env("E2E_GEMINI_KEY", GEMINI_KEY)
                .env("E2E_CONVERSATION", "e2e")
                .env("PYTHONWARNINGS", "ignore")
                .kill_on_drop(true)
                .output()
        })
        .collect();
    let outputs = futures_util::future::join_all(
        runs.into_iter()
            .map(|r| async move { tokio::time::timeout(Duration::from_secs(240), r).await }),
    )
    .await;
    let log: String = served.into_iter().map(Served::stop).collect();
    let mut summaries = Vec::new();
    for out in outputs {
        let out = out.expect("an SDK script timed out").expect("python runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "an SDK script failed:\n{stdout}\n{}\nmend's log:\n{log}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary: Value = serde_json::from_str(stdout.trim().lines().last().unwrap_or(""))
            .unwrap_or_else(|e| panic!("no summary ({e}): {stdout}"));
        // Every mode, streamed and not, ran its loops to the end.
        for m in MODES {
            for kind in ["sse", "json"] {
                assert!(
                    summary["loops"].get(format!("{m}-{kind}")).is_some(),
                    "{m}-{kind}: {summary}"
                );
            }
        }
        summaries.push(summary);
    }
    eprintln!("{}", serde_json::to_string_pretty(&summaries).unwrap());

    // Every SDK talked to the upstream through the gateways, streaming and not.
    let got = upstream.received();
    let agents: Vec<String> = got
        .iter()
        .filter_map(|r| r.header("user-agent").map(str::to_string))
        .collect();
    for sdk in ["OpenAI/Python", "Anthropic/Python", "google-genai-sdk"] {
        assert!(
            agents.iter().any(|a| a.contains(sdk)),
            "no request from {sdk}: {agents:?}"
        );
    }
    for path in ["/v1/chat/completions", "/v1/responses", "/v1/messages"] {
        let n = got.iter().filter(|r| r.path == path).count();
        // Two turns per loop, streamed and not, in four modes.
        assert!(n >= 16, "{path}: {n} requests");
    }
    for action in [":streamGenerateContent", ":generateContent"] {
        let n = got.iter().filter(|r| r.path.ends_with(action)).count();
        assert!(n >= 8, "{action}: {n} requests");
    }
    // The second turn of each loop carried the first turn's ids back.
    let responses_turn2 = got
        .iter()
        .filter(|r| r.path == "/v1/responses")
        .find(|r| r.body.windows(7).any(|w| w == b"rs_mock"))
        .expect("the Responses loop sent its reasoning item back");
    assert!(
        String::from_utf8_lossy(&responses_turn2.body).contains("gAAAAABmock-encrypted-reasoning-")
    );
    // Repair mended a request; off and observe passed the broken ones on (the provider
    // refused them); strict refused its own without calling upstream.
    assert!(log.contains("outcome=\"repaired\""), "{log}");
    assert!(log.contains("rejected without calling upstream"), "{log}");
    let lost = got
        .iter()
        .filter(|r| r.body.windows(9).any(|w| w == b"call_lost"))
        .count();
    assert_eq!(
        lost, 3,
        "call_lost reached the upstream from off, observe and repair"
    );

    // No credential in the logs or the taps.
    let mut tapped = String::new();
    for m in MODES {
        for e in std::fs::read_dir(taps.join(m))
            .expect("the tap folder")
            .flatten()
        {
            tapped.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    assert!(
        tapped.lines().count() >= 2 * got.len(),
        "the taps hold every exchange"
    );
    assert!(log.contains("forwarded"), "{log}");
    for key in [OPENAI_KEY, ANTHROPIC_KEY, GEMINI_KEY] {
        assert!(!log.contains(key), "{key} in mend's log");
        assert!(!tapped.contains(key), "{key} in the tap");
        assert!(
            got.iter().any(|r| r
                .headers
                .values()
                .any(|v| v.as_bytes().ends_with(key.as_bytes()))),
            "{key} did not reach the upstream"
        );
    }

    // Each loop, in every mode, streamed or not, was kept as a conversation, the
    // provider's opaque state intact.
    let store = mend_store::AnyStore::open(&db).await.expect("the store");
    for m in MODES {
        for kind in ["sse", "json"] {
            for (name, dialect, needles) in [
                ("chat", mend::Dialect::OpenAiChat, &["call_mock"][..]),
                (
                    "responses",
                    mend::Dialect::OpenAiResponses,
                    &["rs_mock", "gAAAAABmock-encrypted-reasoning-", "fc_mock"][..],
                ),
                (
                    "messages",
                    mend::Dialect::Anthropic,
                    &["toolu_mock", "gAAAAABmock-encrypted-reasoning-"][..],
                ),
                ("gemini", mend::Dialect::Gemini, &["thoughtSignature"][..]),
            ] {
                let conv = format!("e2e-{m}-{name}-{kind}");
                assert_kept(&store, &conv, dialect, needles, &log).await;
            }
        }
    }
    assert!(!log.contains("exchange not appended"), "{log}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A loop's conversation: user, the call turn (Responses: reasoning and call items),
/// the result, the answer; the needles kept; a valid history of its dialect.
async fn assert_kept(
    store: &mend_store::AnyStore,
    conv: &str,
    dialect: mend::Dialect,
    needles: &[&str],
    log: &str,
) {
    use mend_store::Store;
    // The gateway commits an exchange before the client sees its answer's end: the
    // last one is there as soon as the SDK returns.
    let kept = store
        .load(conv, mend_store::Span::ALL)
        .await
        .unwrap_or_else(|e| panic!("{conv}: {e}\nmend's log:\n{log}"));
    assert!(kept.len() >= 4, "{conv}: {} messages", kept.len());
    let text: String = kept.iter().map(|m| m.raw.as_str()).collect();
    for n in needles {
        assert!(text.contains(n), "{conv}: {n} not kept: {text}");
    }
    assert!(text.contains("The tool said"), "{conv}: {text}");
    let history: Vec<Value> = kept
        .iter()
        .map(|m| serde_json::from_str(&m.raw).unwrap())
        .collect();
    let mut body = serde_json::json!({ dialect.history_key(): history });
    if dialect == mend::Dialect::Anthropic {
        body["max_tokens"] = serde_json::json!(1024);
    }
    let report = mend::check_value(
        &body,
        &mend::CheckOptions {
            dialect: Some(dialect),
            model: Some("gemini-3-pro-preview".into()).filter(|_| dialect == mend::Dialect::Gemini),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(report.valid(), "{conv}: {:?}", report.violations);
}

/// What a local OTLP/HTTP (JSON) receiver was sent: each request's headers and body.
type Exports = Arc<Mutex<Vec<(axum::http::HeaderMap, Value)>>>;

async fn otlp_json_receiver() -> (String, Exports, tokio::task::JoinHandle<()>) {
    let got: Exports = Arc::default();
    let sink = got.clone();
    let router = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let sink = sink.clone();
                async move {
                    let v: Value = serde_json::from_slice(&body).expect("OTLP JSON");
                    sink.lock().unwrap().push((headers, v));
                    ([("content-type", "application/json")], "{}")
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    (url, got, task)
}

/// One HTTP/1.1 POST over a plain socket; the whole answer as text.
fn post(base: &str, path: &str, headers: &[(&str, &str)], body: &str) -> String {
    use std::io::{Read, Write};
    let host = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// An OTLP JSON attribute's value as text (`intValue` is a string in OTLP JSON).
fn otlp_attr(span: &Value, key: &str) -> Option<String> {
    let kv = span["attributes"]
        .as_array()?
        .iter()
        .find(|kv| kv["key"] == key)?;
    let v = &kv["value"];
    ["stringValue", "intValue", "boolValue"]
        .iter()
        .find_map(|t| v.get(*t))
        .map(|x| match x {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_and_otlp_traces_from_mend_serve_as_a_user_starts_it() {
    let upstream = mock::Mock::start().await;
    let (otlp, exports, _receiver) = otlp_json_receiver().await;
    const OTLP_TOKEN: &str = "otlp-SECRET-token-5150";
    let headers_var = format!("authorization=Bearer%20{OTLP_TOKEN}");
    let served = tokio::task::spawn_blocking({
        let upstream = upstream.base_url();
        let otlp = otlp.clone();
        move || {
            Served::start_with(
                &upstream,
                &["--mode", "repair", "--log-format", "json"],
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", &otlp),
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
                    ("OTEL_EXPORTER_OTLP_HEADERS", &headers_var),
                    ("OTEL_SERVICE_NAME", "mend-e2e"),
                ],
            )
        }
    })
    .await
    .unwrap();
    // A chat history whose call is never answered: repaired on the way.
    let body = serde_json::json!({"model": "gpt-4o", "messages": [
        {"role": "user", "content": "weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "user", "content": "and?"}]})
    .to_string();
    let url = served.url.clone();
    let answer = tokio::task::spawn_blocking(move || {
        post(
            &url,
            "/v1/chat/completions",
            &[
                ("Authorization", &format!("Bearer {OPENAI_KEY}")),
                (
                    "traceparent",
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                ),
            ],
            &body,
        )
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // SIGTERM: the server drains, then the spans go out before it exits (the batch
    // processor's own schedule is 5 s, longer than this test waits).
    let log = tokio::task::spawn_blocking(move || served.stop())
        .await
        .unwrap();

    // Every line of stderr is one JSON object; the exchange line says what happened.
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let exchange = lines
        .iter()
        .find(|l| l["fields"]["message"] == "exchange")
        .unwrap_or_else(|| panic!("no exchange line in\n{log}"));
    let f = &exchange["fields"];
    assert_eq!(f["dialect"], "openai_chat", "{exchange}");
    assert_eq!(f["mode"], "repair");
    assert_eq!(f["outcome"], "repaired");
    assert_eq!(f["status"], 200);
    assert_eq!(f["violations"], 1);
    assert_eq!(f["repairs"], 1);
    assert_eq!(f["model"], "gpt-4o");
    assert!(f["latency_ms"].as_f64().is_some_and(|ms| ms > 0.0));
    assert!(f["request_id"].as_str().is_some_and(|id| !id.is_empty()));
    assert_eq!(f["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert!(lines.iter().any(|l| l["fields"]["message"]
        == "  traces: ".to_string() + &otlp + "/v1/traces (OTLP http/json)"));
    for secret in [OPENAI_KEY, OTLP_TOKEN] {
        assert!(!log.contains(secret), "{secret} in mend's log:\n{log}");
    }

    // The receiver got the spans, with the configured headers, service and attributes.
    let exports = exports.lock().unwrap().clone();
    assert!(!exports.is_empty(), "no spans exported; mend's log:\n{log}");
    let mut spans = Vec::new();
    for (headers, v) in &exports {
        assert_eq!(
            headers.get("authorization").and_then(|h| h.to_str().ok()),
            Some(format!("Bearer {OTLP_TOKEN}").as_str())
        );
        for rs in v["resourceSpans"].as_array().unwrap() {
            assert!(
                rs["resource"]["attributes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|kv| kv["key"] == "service.name"
                        && kv["value"]["stringValue"] == "mend-e2e"),
                "{rs}"
            );
            for ss in rs["scopeSpans"].as_array().unwrap() {
                spans.extend(ss["spans"].as_array().unwrap().iter().cloned());
            }
        }
    }
    let server = spans
        .iter()
        .find(|s| s["kind"] == 2)
        .unwrap_or_else(|| panic!("no SERVER span in {spans:#?}"));
    let client = spans
        .iter()
        .find(|s| s["kind"] == 3)
        .unwrap_or_else(|| panic!("no CLIENT span in {spans:#?}"));
    assert_eq!(server["name"], "chat gpt-4o");
    assert_eq!(server["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(server["parentSpanId"], "00f067aa0ba902b7");
    assert_eq!(client["parentSpanId"], server["spanId"]);
    for (k, v) in [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", "openai"),
        ("gen_ai.request.model", "gpt-4o"),
        ("gen_ai.response.model", "gpt-4o"),
        ("gen_ai.usage.input_tokens", "10"),
        ("gen_ai.usage.output_tokens", "5"),
        ("mend.mode", "repair"),
        ("mend.violations", "1"),
        ("mend.repairs", "1"),
        ("mend.healed", "false"),
    ] {
        assert_eq!(otlp_attr(server, k).as_deref(), Some(v), "{k}: {server:#}");
    }
    println!("the exchange span as the receiver got it:\n{server:#}");
    let received = upstream.last();
    let tp = received
        .header("traceparent")
        .expect("traceparent upstream");
    assert_eq!(
        tp,
        format!(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-{}-01",
            client["spanId"].as_str().unwrap()
        )
    );
}

#[test]
fn traces_configured_beyond_what_mend_offers_stop_it_with_the_reason() {
    let cases = [
        (
            vec![
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ],
            "mend serve: traces: OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' is not offered",
        ),
        (
            vec![(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "//user:SECRET@collector/v1/traces",
            )],
            "mend serve: traces: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '…@collector/v1/traces' is not an http(s):// URL",
        ),
    ];
    for (vars, says) in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mend"));
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .env_remove("MEND_CONFIG")
            .stdin(Stdio::null());
        for (k, _) in std::env::vars() {
            if k.starts_with("OTEL_") {
                cmd.env_remove(k);
            }
        }
        let out = cmd.envs(vars).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!stderr.contains("SECRET"), "{stderr}");
    }
}
