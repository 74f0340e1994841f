//! `mend serve` end to end: the official Python SDKs (`openai`, `anthropic`,
//! `google-genai`) run real multi-turn tool loops, streamed and not, through four
//! gateways (one per mode: off, observe, repair, strict) to the mock upstream; a broken
//! history that off and observe pass on and the provider refuses, one that repair mends
//! unnoticed, and one that strict refuses, each SDK reporting the provider's own 400.
//! The SDKs come from PyPI into a venv under `target/` (pinned, reused across runs).
//! Without Python or the registry the test says so and skips, except under `CI=true`,
//! where it fails.
//!
//! Also checked: no credential reaches mend's log (at debug) or its tap.

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

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

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
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sdk-venv");
    let python = venv.join("bin").join("python");
    let marker = venv.join("mend-pins.txt");
    let pins = PINS.join("\n");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == pins) && python.exists() {
        return Ok(python);
    }
    let _ = std::fs::remove_dir_all(&venv);
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("python3 is not available ({e})"))?;
    if !made.status.success() {
        return Err(format!(
            "python3 -m venv failed: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        ));
    }
    let pip = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--retries",
            "1",
            "--timeout",
            "20",
        ])
        .args(PINS)
        .output()
        .map_err(|e| format!("pip did not run ({e})"))?;
    if !pip.status.success() {
        return Err(format!(
            "pip could not install {} (no registry?): {}",
            PINS.join(" "),
            last_lines(&String::from_utf8_lossy(&pip.stderr), 3)
        ));
    }
    std::fs::write(&marker, pins).map_err(|e| e.to_string())?;
    Ok(python)
}

fn last_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// `mend serve` on a free port, its stderr collected.
struct Served {
    child: std::process::Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Served {
    fn start(upstream: &str, mode: &str, tap: &Path, store: &str) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mend"))
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--mode",
                mode,
                "--log",
                "debug",
            ])
            .arg("--tap")
            .arg(tap)
            .args(["--db", store])
            .env("MEND_OPENAI_BASE_URL", upstream)
            .env("MEND_ANTHROPIC_BASE_URL", upstream)
            .env("MEND_GEMINI_BASE_URL", upstream)
            .env_remove("MEND_CONFIG")
            .env_remove("MEND_DB")
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
                if let Some(url) = line.strip_prefix("mend serve: listening on ") {
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
