//! The inspector in a real browser: `mend serve --ui` over a SQLite store seeded with
//! `mend store append`, its pages loaded by headless Chromium (Debian's `chromium`; the
//! DOM as the browser built it, and a screenshot). Checked: the list shows the
//! conversation and its error, the chain page shows the violation beside the provider's
//! text, a stored `<script>` is text on the page and never ran (the title is still
//! mend's), and with an admin token `/ui` is refused (401 and the login form) until the
//! token is presented. Without Chromium the test says so and skips, except under
//! `CI=true`, where it fails. `MEND_UI_SCREENSHOT=PATH` keeps the chain page's screenshot
//! (the README's `docs/inspector.png` is made so).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::mend;

const TOKEN: &str = "browser-test-admin-token-42";

/// What the seeded conversation holds: a weather tool loop whose last tool message
/// answers no call, and a user message with a script that would retitle the page.
const HISTORY: &str = r#"[
 {"role": "system", "content": "You are a weather assistant. Call get_weather for any city."},
 {"role": "user", "content": "What's the weather in Paris? <script>document.title='pwned'</script>"},
 {"role": "assistant", "content": null, "tool_calls": [{"id": "call_7Gq2x", "type": "function",
   "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
 {"role": "tool", "tool_call_id": "call_7Gq2x", "content": "{\"temp_c\": 18, \"sky\": \"sunny\"}"},
 {"role": "assistant", "content": "It is 18°C and sunny in Paris."},
 {"role": "user", "content": "And in Lyon tomorrow?"},
 {"role": "tool", "tool_call_id": "call_9zzzz", "content": "{\"temp_c\": 11, \"sky\": \"rain\"}"}
]"#;

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Chromium from `MEND_CHROMIUM` or the PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MEND_CHROMIUM") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// A `mend serve --ui` on a free loopback port, killed when dropped.
struct Served {
    child: Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(db: &str, token: Option<&str>) -> Served {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mend"));
    cmd.args([
        "serve",
        "--ui",
        "--listen",
        "127.0.0.1:0",
        "--log",
        "warn",
        "--db",
        db,
    ])
    .env_remove("MEND_CONFIG")
    .env_remove("MEND_DB")
    .env_remove("MEND_ADMIN_TOKEN_FILE")
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    match token {
        Some(t) => cmd.env("MEND_ADMIN_TOKEN", t),
        None => cmd.env_remove("MEND_ADMIN_TOKEN"),
    };
    let mut child = cmd.spawn().expect("mend serve starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut said = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            said.push_str(&line);
            said.push('\n');
            if line.contains("inspector: ") {
                let _ = tx.send(said.clone());
            }
        }
        let _ = tx.send(said);
    });
    let said = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("mend serve says where it listens");
    let base = said
        .lines()
        .find_map(|l| l.strip_prefix("mend serve: listening on "))
        .unwrap_or_else(|| panic!("no listen line in:\n{said}"))
        .to_string();
    let access = if token.is_some() {
        "(admin token required)"
    } else {
        "(no admin token: loopback only"
    };
    assert!(
        said.contains(access),
        "start-up says how /ui is guarded:\n{said}"
    );
    Served { child, base }
}

/// Run Chromium headless with `args` then `url`, at most 90 s; its stdout.
fn browse(chrome: &Path, profile: &Path, args: &[&str], url: &str) -> String {
    let mut child = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut out = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait on chromium").is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish loading {url} within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().expect("stdout reader")
}

fn dom(chrome: &Path, profile: &Path, url: &str) -> String {
    let dom = browse(chrome, profile, &["--dump-dom"], url);
    assert!(dom.contains("</html>"), "no page from {url}:\n{dom}");
    dom
}

/// The page's `<title>` text as the browser has it after load.
fn title(dom: &str) -> &str {
    let start = dom.find("<title>").map_or(0, |i| i + "<title>".len());
    let end = dom[start..].find("</title>").map_or(start, |i| start + i);
    &dom[start..end]
}

/// A plain HTTP/1.1 GET: the status code and the body.
fn http_get(base: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a read timeout");
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("send the request");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read the answer");
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

#[test]
fn the_inspector_in_a_browser_shows_violations_and_keeps_stored_scripts_as_text() {
    let Some(chrome) = chromium() else {
        if in_ci() {
            panic!("chromium is not installed, and CI=true: .ci/run installs it (apt-get install chromium)");
        }
        eprintln!("SKIP: chromium is not installed (apt-get install chromium); the browser test of the inspector is skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history.json");
    std::fs::write(&history, HISTORY).unwrap();
    let db = format!("sqlite:{}", dir.path().join("conversations.db").display());
    let seeded = mend()
        .args(["store", "--db", &db, "append", "chat-42"])
        .arg(&history)
        .args(["--dialect", "openai_chat"])
        .output()
        .unwrap();
    assert!(seeded.status.success(), "{:?}", seeded);
    let profile = dir.path().join("chromium");

    let open = serve(&db, None);
    let list = dom(&chrome, &profile, &format!("{}/ui", open.base));
    assert_eq!(title(&list), "mend · conversations");
    assert!(
        list.contains(">chat-42</a>"),
        "the list links the conversation"
    );
    assert!(list.contains("1 error"), "and shows its error");

    let chain_url = format!("{}/ui/c/chat-42", open.base);
    let chain = dom(&chrome, &profile, &chain_url);
    assert_eq!(
        title(&chain),
        "mend · conversation chat-42",
        "the stored script did not run"
    );
    assert!(
        chain.contains(
            "What's the weather in Paris? &lt;script&gt;document.title='pwned'&lt;/script&gt;"
        ),
        "the stored script is text on the page"
    );
    assert!(!chain.contains("<script"), "no script element in the DOM");
    assert!(chain.contains("error[tool-result-without-call]"));
    assert!(chain.contains(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
    ));
    assert!(chain.contains("get_weather"), "the call");
    assert!(chain.contains("<div class=\"del\">"), "repair's diff");

    let shot = std::env::var_os("MEND_UI_SCREENSHOT")
        .map_or_else(|| dir.path().join("chain.png"), PathBuf::from);
    let size = "--window-size=1280,1000";
    browse(
        &chrome,
        &profile,
        &[&format!("--screenshot={}", shot.display()), size],
        &chain_url,
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
    drop(open);

    let guarded = serve(&db, Some(TOKEN));
    let refused = dom(&chrome, &profile, &format!("{}/ui", guarded.base));
    assert!(refused.contains("Admin token required"), "{refused}");
    assert!(
        !refused.contains("chat-42"),
        "nothing of the store without the token"
    );
    let (status, _) = http_get(&guarded.base, "/ui", &[]);
    assert_eq!(status, 401);
    let (status, _) = http_get(&guarded.base, "/metrics", &[]);
    assert_eq!(status, 401);
    let bearer = format!("Bearer {TOKEN}");
    let (status, page) = http_get(&guarded.base, "/ui", &[("Authorization", &bearer)]);
    assert_eq!(status, 200);
    assert!(page.contains("chat-42"));
    let (status, _) = http_get(&guarded.base, "/metrics", &[("Authorization", &bearer)]);
    assert_eq!(status, 200);
}

#[test]
fn without_a_token_the_inspector_stays_on_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("c.db").display());
    // `mend ui` refuses to listen beyond loopback without a token...
    let r = mend()
        .args(["ui", "--db", &db, "--listen", "0.0.0.0:0"])
        .env_remove("MEND_ADMIN_TOKEN")
        .env_remove("MEND_ADMIN_TOKEN_FILE")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("reachable from other machines") && err.contains("admin token"),
        "{err}"
    );
    // ...as `mend serve --ui --ui-listen` does; --ui without a store is an error too.
    let r = mend()
        .args(["serve", "--ui", "--db", &db, "--ui-listen", "0.0.0.0:0"])
        .env_remove("MEND_ADMIN_TOKEN")
        .env_remove("MEND_ADMIN_TOKEN_FILE")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--ui-listen 0.0.0.0:0"));
    let r = mend()
        .args(["serve", "--ui"])
        .env_remove("MEND_DB")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--ui needs --db"));
    // A short token is refused, saying where it came from.
    let r = mend()
        .args(["ui", "--db", &db])
        .env("MEND_ADMIN_TOKEN", "short")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("MEND_ADMIN_TOKEN: "));
}
