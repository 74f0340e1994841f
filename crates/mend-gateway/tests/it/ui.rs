//! The inspector (`/ui`) over a real SQLite store, driven with `oneshot`: what the pages
//! show, that hostile stored text stays text, that an unreadable conversation says why,
//! the paste box's errors and limits, and who may open it (admin token, loopback only).
//! The same pages in a real browser: `crates/mend-cli/tests/it/ui.rs`.

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use mend_gateway::admin::AdminToken;
use mend_gateway::ui::{self, Inspector};
use mend_store::{AnyStore, Format, NewConversation, NewMessage, Store};
use serde_json::{json, Value};
use tower::ServiceExt;

const TOKEN: &str = "s3cret-admin-token-0123";

/// A history whose last tool message answers no call, with a stored `<script>`.
fn orphan_history() -> Vec<Value> {
    vec![
        json!({"role": "system", "content": "You are a weather bot."}),
        json!({"role": "user", "content": "Paris? <script>document.title='pwned'</script>"}),
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_7Gq2x",
            "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_7Gq2x", "content": "18°C"}),
        json!({"role": "tool", "tool_call_id": "call_9zzzz", "content": "rain"}),
    ]
}

struct Seeded {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    url: String,
}

async fn seeded() -> Seeded {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let url = format!("sqlite:{}", path.display());
    let store = AnyStore::open(&url).await.unwrap();
    let add = |id: &str, msgs: Vec<Value>| {
        let store = store.clone();
        let id = id.to_string();
        async move {
            let new = NewConversation::with_id(&id).format(Format::Wire(mend::Dialect::OpenAiChat));
            store.create(new).await.unwrap();
            let batch = NewMessage::from_values(&msgs).unwrap();
            store
                .append(&id, &batch, &Default::default())
                .await
                .unwrap();
        }
    };
    add("chat-42", orphan_history()).await;
    let long = "x".repeat(1_000_000);
    add(
        "hostile",
        vec![
            json!({"role": "user", "content": format!("</td></tr></table><script>document.title='owned'</script>\"><img src=x onerror=alert(1)>{long}")}),
            json!({"role": "assistant", "content": "ok"}),
        ],
    )
    .await;
    add(
        "broken",
        vec![json!({"role": "user", "content": "placeholder"})],
    )
    .await;
    drop(store);
    // Invalid UTF-8 in a stored message, as a damaged database or another writer left it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let n = conn
        .execute(
            "UPDATE messages SET body = CAST(X'7B22726F6C65223A2275736572222C22636F6E74656E74223A22FF227D' AS TEXT) \
             WHERE conversation = (SELECT pk FROM conversations WHERE id = 'broken')",
            [],
        )
        .unwrap();
    assert_eq!(n, 1);
    Seeded {
        _dir: dir,
        path,
        url,
    }
}

async fn inspector(s: &Seeded, token: Option<&str>) -> Router {
    let token = token.map(|t| AdminToken::new(t, "test").unwrap());
    ui::router(Inspector::open(&s.url, token).await.unwrap())
}

struct Got {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    text: String,
}

async fn call(app: &Router, req: Request<Body>) -> Got {
    let r = app.clone().oneshot(req).await.unwrap();
    let status = r.status();
    let headers = r.headers().clone();
    let bytes = axum::body::to_bytes(r.into_body(), usize::MAX)
        .await
        .unwrap();
    Got {
        status,
        headers,
        text: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

fn get(path: &str) -> axum::http::request::Builder {
    Request::get(path).header(header::HOST, "127.0.0.1:8787")
}

async fn page(app: &Router, path: &str) -> Got {
    call(app, get(path).body(Body::empty()).unwrap()).await
}

#[tokio::test]
async fn the_list_and_the_chain_show_each_violation_with_the_providers_text() {
    let s = seeded().await;
    let app = inspector(&s, None).await;
    let list = page(&app, "/ui").await;
    assert_eq!(list.status, 200, "{}", list.text);
    for want in ["chat-42", "openai_chat", "1 error", "hostile", "broken"] {
        assert!(list.text.contains(want), "missing {want}");
    }
    let chain = page(&app, "/ui/c/chat-42").await;
    assert_eq!(chain.status, 200);
    let t = &chain.text;
    for want in [
        "tool-result-without-call",
        "must be a response to a preceeding message with 'tool_calls'",
        "get_weather",
        "call_7Gq2x",
        "→ result in",
        "What repair would change",
        "class=\"del\"",
    ] {
        assert!(t.contains(want), "missing {want} in the chain page");
    }
    assert!(
        t.contains("&lt;script&gt;document.title="),
        "the stored script as text"
    );
    assert!(!t.contains("<script"), "no script element");
    let csp = chain.headers[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap();
    assert!(csp.contains("default-src 'none'"));
}

#[tokio::test]
async fn hostile_long_and_unreadable_stored_messages_stay_text_and_say_why() {
    let s = seeded().await;
    let app = inspector(&s, None).await;
    let hostile = page(&app, "/ui/c/hostile").await;
    assert_eq!(hostile.status, 200);
    assert!(!hostile.text.contains("<script") && !hostile.text.contains("<img"));
    assert!(hostile
        .text
        .contains("&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;"));
    assert!(hostile.text.contains("more characters not shown"));
    assert!(
        hostile.text.len() < 200_000,
        "a 1 MB message is clipped, the page is {} bytes",
        hostile.text.len()
    );
    // Invalid UTF-8 in the store: the page and its row say the message cannot be read.
    let broken = page(&app, "/ui/c/broken").await;
    assert_eq!(broken.status, 200);
    assert!(
        broken.text.contains("cannot load its messages"),
        "{}",
        broken.text
    );
    let list = page(&app, "/ui").await;
    assert!(list.text.contains("cannot load"), "{}", list.text);
    // Unknown conversations and pages are 404 pages.
    let none = page(&app, "/ui/c/%3Cscript%3E").await;
    assert_eq!(none.status, 404);
    assert!(
        none.text
            .contains("No conversation &#39;&lt;script&gt;&#39;")
            || none.text.contains("No conversation '&lt;script&gt;'"),
        "{}",
        none.text
    );
    assert_eq!(page(&app, "/ui/nope").await.status, 404);
    assert!(s.path.exists());
}

fn paste(body: &str, dialect: &str) -> Request<Body> {
    let form: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("body", body)
        .append_pair("dialect", dialect)
        .finish();
    get("/ui/paste")
        .method("POST")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(form))
        .unwrap()
}

#[tokio::test]
async fn the_paste_box_shows_a_body_and_says_what_is_wrong_with_bad_input() {
    let s = seeded().await;
    let app = inspector(&s, None).await;
    let body = json!({"model": "gpt-4o", "messages": orphan_history()}).to_string();
    let ok = call(&app, paste(&body, "")).await;
    assert_eq!(ok.status, 200);
    assert!(ok.text.contains("tool-result-without-call"));
    assert!(ok.text.contains("&lt;script&gt;") && !ok.text.contains("<script"));
    for (bad, dialect, want) in [
        ("{\"messages\": [", "", "truncated JSON"),
        ("not json", "", "line 1, column"),
        ("", "", "Paste a request body first"),
        ("{\"messages\": []}", "klingon", "dialect:"),
        (
            "{\"contents\": [{\"role\": \"user\", \"parts\": [{\"text\": \"hi\"}]}]}",
            "openai_chat",
            "reads as gemini",
        ),
        ("[1, 2]", "", "not"),
    ] {
        let r = call(&app, paste(bad, dialect)).await;
        assert_eq!(r.status, 400, "{bad}: {}", r.text);
        assert!(r.text.contains("class=\"error\""), "{bad}");
        assert!(r.text.contains(want), "{bad}: want {want} in {}", r.text);
    }
    let huge = format!("{{\"messages\": \"{}\"}}", "a".repeat(ui::PASTE_LIMIT + 1));
    let r = call(&app, paste(&huge, "")).await;
    assert_eq!(r.status, 413);
    assert!(r.text.contains("at most 4 MiB"));
    // Nothing pasted was stored.
    let store = AnyStore::open(&s.url).await.unwrap();
    assert_eq!(store.list(&Default::default()).await.unwrap().len(), 3);
}

#[tokio::test]
async fn with_an_admin_token_every_page_asks_for_it() {
    let s = seeded().await;
    let app = inspector(&s, Some(TOKEN)).await;
    for path in ["/ui", "/ui/c/chat-42", "/ui/paste"] {
        let r = page(&app, path).await;
        assert_eq!(r.status, 401, "{path}");
        assert!(r.text.contains("Admin token required"), "{path}");
        assert!(
            !r.text.contains("openai_chat") && !r.text.contains("tool-result"),
            "{path}"
        );
    }
    let bearer = |t: &str| {
        get("/ui/c/chat-42")
            .header(header::AUTHORIZATION, format!("Bearer {t}"))
            .body(Body::empty())
            .unwrap()
    };
    assert_eq!(call(&app, bearer(TOKEN)).await.status, 200);
    // Any other bearer is a caller's credential: it sees only its own scope's
    // conversations, and this one is not of it.
    let wrong = call(&app, bearer("s3cret-admin-token-0124")).await;
    assert_eq!(wrong.status, 404);
    assert!(!wrong.text.contains("tool-result"));
    // A pasted body is not shown without the token either.
    assert_eq!(call(&app, paste("{}", "")).await.status, 401);
    assert_eq!(page(&app, "/ui/style.css").await.status, 200);
    // The login form: a wrong token is said so, the right one sets the cookie.
    let login = |t: &str| {
        get("/ui/login")
            .method("POST")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(format!("token={t}")))
            .unwrap()
    };
    let wrong = call(&app, login("nope-nope-nope-nope")).await;
    assert_eq!(wrong.status, 401);
    assert!(wrong.text.contains("That is not the admin token"));
    let right = call(&app, login(TOKEN)).await;
    assert_eq!(right.status, 303);
    let cookie = right.headers[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(
        !cookie.contains(TOKEN),
        "the cookie is not the token: {cookie}"
    );
    let pair = cookie.split(';').next().unwrap();
    let with_cookie = get("/ui")
        .header(header::COOKIE, pair)
        .body(Body::empty())
        .unwrap();
    let r = call(&app, with_cookie).await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains("chat-42"));
    // With a token the inspector answers any host name (it may sit behind a proxy).
    let far = Request::get("/ui")
        .header(header::HOST, "mend.internal")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(call(&app, far).await.status, 200);
}

#[tokio::test]
async fn without_a_token_only_loopback_names_are_answered() {
    let s = seeded().await;
    let app = inspector(&s, None).await;
    for (host, want) in [
        ("127.0.0.1:8787", 200),
        ("localhost:8787", 200),
        ("[::1]:8787", 200),
        ("localhost", 200),
        ("evil.example:8787", 403),
        ("10.0.0.5:8787", 403),
        ("127.0.0.1.evil.example", 403),
    ] {
        let r = call(
            &app,
            Request::get("/ui")
                .header(header::HOST, host)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(r.status.as_u16(), want, "{host}");
        if want == 403 {
            assert!(r.text.contains("Loopback only") && !r.text.contains("chat-42"));
        }
    }
}

#[tokio::test]
async fn metrics_ask_for_the_admin_token_when_one_is_configured() {
    use mend_gateway::{app, Config, Gateway};
    let metrics = || Request::get("/metrics").body(Body::empty()).unwrap();
    let open = app(Gateway::new(Config::default()).unwrap());
    assert_eq!(call(&open, metrics()).await.status, 200);
    let mut config = Config::default();
    config.admin_token = Some(AdminToken::new(TOKEN, "test").unwrap());
    let guarded = app(Gateway::new(config).unwrap());
    let r = call(&guarded, metrics()).await;
    assert_eq!(r.status, 401);
    assert!(r.headers.contains_key(header::WWW_AUTHENTICATE));
    assert!(!r.text.contains("mend_requests_total"));
    let with = Request::get("/metrics")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    let r = call(&guarded, with).await;
    assert_eq!(r.status, 200);
}

#[test]
fn an_admin_sees_every_conversation_and_a_caller_only_its_own() {
    let info = mend_store::ConversationInfo {
        id: "any".into(),
        format: Format::Any,
        created_at_ms: 0,
        last_sequence: 0,
        forked_from: None,
        scope: "key:0123".into(),
    };
    assert!(ui::visible(&ui::Viewer::Admin, &info));
    assert!(ui::visible(&ui::Viewer::Scope("key:0123".into()), &info));
    assert!(!ui::visible(&ui::Viewer::Scope("key:4567".into()), &info));
}

/// A caller that shows its upstream credential instead of the admin token sees the
/// conversations made with that credential and no other: a second credential can
/// neither list nor open the first one's.
#[tokio::test]
async fn a_second_credential_cannot_see_the_first_ones_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("c.db").display());
    let store = AnyStore::open(&url).await.unwrap();
    let (alice, mallory) = ("sk-alice-0123456789", "sk-mallory-0123456789");
    let scope_of = |key: &str| {
        let mut h = axum::http::HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            format!("Bearer {key}").parse().unwrap(),
        );
        mend_gateway::scope::caller_scope(mend::Dialect::OpenAiChat, None, &h, None).unwrap()
    };
    for (id, key) in [("alice-conv", alice), ("mallory-conv", mallory)] {
        let new = NewConversation::with_id(id)
            .format(Format::Wire(mend::Dialect::OpenAiChat))
            .scope(scope_of(key));
        store.create(new).await.unwrap();
        let batch = NewMessage::from_values(&orphan_history()).unwrap();
        store.append(id, &batch, &Default::default()).await.unwrap();
    }
    drop(store);
    let token = AdminToken::new(TOKEN, "test").unwrap();
    let app = ui::router(Inspector::open(&url, Some(token)).await.unwrap());
    let as_caller = |path: &str, key: &str| {
        get(path)
            .header(header::AUTHORIZATION, format!("Bearer {key}"))
            .body(Body::empty())
            .unwrap()
    };
    let list = call(&app, as_caller("/ui", alice)).await;
    assert_eq!(list.status, 200, "{}", list.text);
    assert!(list.text.contains("alice-conv"), "{}", list.text);
    assert!(!list.text.contains("mallory-conv"), "{}", list.text);
    let own = call(&app, as_caller("/ui/c/alice-conv", alice)).await;
    assert_eq!(own.status, 200);
    let other = call(&app, as_caller("/ui/c/mallory-conv", alice)).await;
    assert_eq!(other.status, 404, "{}", other.text);
    assert!(!other.text.contains("get_weather"), "{}", other.text);
    // The admin sees both; a request with neither is refused.
    let admin = call(&app, as_caller("/ui", TOKEN)).await;
    assert!(admin.text.contains("alice-conv") && admin.text.contains("mallory-conv"));
    let none = page(&app, "/ui").await;
    assert_eq!(none.status, 401);
}

#[tokio::test]
async fn the_inspector_reads_a_postgres_store_and_never_shows_its_password() {
    let base = std::env::var("MEND_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    // Trust auth ignores the password; the page must not show it.
    let with_password = base.replacen("postgres://postgres@", "postgres://postgres:hunter2-pw@", 1);
    let schema = format!("mend_ui_test_{}", std::process::id());
    let sep = if base.contains('?') { '&' } else { '?' };
    let db = format!("{with_password}{sep}schema={schema}");
    let store = match AnyStore::open(&db).await {
        Ok(s) => s,
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("PostgreSQL at {base} is unreachable ({e}), and CI=true requires it");
            }
            eprintln!("SKIP: PostgreSQL at {base} is unreachable ({e}); the inspector's test on it does not run");
            return;
        }
    };
    let outcome = tokio::spawn({
        let db = db.clone();
        async move {
            let new =
                NewConversation::with_id("pg-1").format(Format::Wire(mend::Dialect::OpenAiChat));
            store.create(new).await.unwrap();
            let batch = NewMessage::from_values(&orphan_history()).unwrap();
            store
                .append("pg-1", &batch, &Default::default())
                .await
                .unwrap();
            let app = ui::router(Inspector::open(&db, None).await.unwrap());
            let list = page(&app, "/ui").await;
            assert_eq!(list.status, 200);
            assert!(list.text.contains("pg-1") && list.text.contains("1 error"));
            assert!(
                !list.text.contains("hunter2"),
                "the store's password is never shown"
            );
            let chain = page(&app, "/ui/c/pg-1").await;
            assert!(chain.text.contains("tool-result-without-call"));
            assert!(!chain.text.contains("<script"));
        }
    })
    .await;
    mend_store::testing::drop_postgres_schema(&base, &schema)
        .await
        .unwrap();
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}
