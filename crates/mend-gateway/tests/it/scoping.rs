//! Conversations are scoped to their callers: a second credential (or tenant) cannot
//! append to the first one's conversation (a 403 in the provider's shape, the upstream
//! not called, nothing written); the same credential can, however the provider lets it
//! be sent; SigV4 requests are scoped by access key id; racing first requests have one
//! winner; an unscoped conversation (made before scopes) is taken by its first caller;
//! and no credential is ever written to the store.

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use axum::Router;
use mend::Dialect;
use mend_gateway::{app, Gateway, Mode};
use mend_store::{AnyStore, NewConversation, Store};
use serde_json::Value;

use crate::conversations::first_turn;
use crate::support::{config_for, endpoint, send, Mock, Reply};

/// Credential headers, as (name, value).
type Headers = Vec<(&'static str, &'static str)>;

/// One request of the credentials test: dialect, path, headers.
type Case = (Dialect, String, Vec<(&'static str, String)>);

/// SigV4 requests carry their signing time (the mock upstream wants it).
const DATE: (&str, &str) = ("x-amz-date", "20251126T031500Z");

/// A gateway on a fresh SQLite store, with `tenant_header` if given.
async fn gateway(mock: &Mock, tenant_header: Option<&str>) -> (Router, String, std::path::PathBuf) {
    let dir = crate::secrets::tempdir("scoping");
    let db = format!("sqlite:{}", dir.join("conversations.db").display());
    let mut config = config_for(mock, Mode::Repair);
    config.db = Some(db.clone());
    config.tenant_header = tenant_header.map(str::to_string);
    let gateway = Gateway::open(config).await.unwrap();
    (app(gateway), db, dir)
}

/// A first turn of `d` to `path`, with exactly these credential headers.
fn turn(d: Dialect, path: &str, conversation: &str, headers: &[(&str, &str)]) -> Request<Body> {
    let mut b = Request::post(path)
        .header("content-type", "application/json")
        .header("x-mend-conversation", conversation);
    if d == Dialect::Anthropic {
        b = b.header("anthropic-version", "2023-06-01");
    }
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::from(first_turn(d, false).to_string()))
        .unwrap()
}

/// The conversation's length once appends have settled (it is appended after the
/// answer's last byte, on a task of its own).
async fn settled_len(store: &AnyStore, conversation: &str) -> u64 {
    let mut last = None;
    for _ in 0..40 {
        let n = store
            .info(conversation)
            .await
            .map_or(0, |i| i.last_sequence);
        if last == Some(n) && n > 0 {
            return n;
        }
        last = Some(n);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    last.unwrap_or(0)
}

/// A refusal in the provider's own shape, saying why.
fn assert_refused(d: Dialect, r: &Reply) {
    assert_eq!(r.status, 403, "{d}: {}", r.text());
    let j: Value = r.json();
    let message = match d {
        Dialect::BedrockConverse => {
            assert_eq!(r.header("x-amzn-errortype"), Some("AccessDeniedException"));
            j["message"].as_str()
        }
        Dialect::Anthropic => {
            assert_eq!(j["error"]["type"], "permission_error", "{j}");
            j["error"]["message"].as_str()
        }
        Dialect::Gemini => {
            assert_eq!(j["error"]["status"], "PERMISSION_DENIED", "{j}");
            j["error"]["message"].as_str()
        }
        Dialect::OpenAiChat | Dialect::OpenAiResponses => j["error"]["message"].as_str(),
    };
    let message = message.unwrap_or_default();
    assert!(
        message.contains("belongs to another caller"),
        "{d}: {message}"
    );
}

/// Per dialect: the owner's credential, the same credential sent another way the
/// provider accepts, and another caller's.
fn callers(d: Dialect) -> (Headers, Headers, Headers) {
    match d {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => (
            vec![("authorization", "Bearer sk-owner-0001")],
            vec![("authorization", "Bearer  sk-owner-0001 ")],
            vec![("authorization", "Bearer sk-intruder-0002")],
        ),
        Dialect::Anthropic => (
            vec![("x-api-key", "sk-ant-owner-0001")],
            vec![("x-api-key", " sk-ant-owner-0001 ")],
            vec![("x-api-key", "sk-ant-intruder-0002")],
        ),
        Dialect::Gemini => (
            vec![("x-goog-api-key", "AIza-owner-0001")],
            vec![],
            vec![("x-goog-api-key", "AIza-intruder-0002")],
        ),
        Dialect::BedrockConverse => (
            vec![("authorization", "Bearer ABSK-owner-0001")],
            vec![("authorization", "Bearer ABSK-owner-0001")],
            vec![("authorization", "Bearer ABSK-intruder-0002")],
        ),
    }
}

#[tokio::test]
async fn a_second_credential_cannot_append_to_the_first_ones_conversation() {
    let mock = Mock::start().await;
    let (app, db, _dir) = gateway(&mock, None).await;
    let store = AnyStore::open(&db).await.unwrap();
    for d in Dialect::ALL {
        let conv = format!("owned-{}", d.name());
        let (owner, same, intruder) = callers(d);
        let r = send(&app, turn(d, endpoint(d), &conv, &owner)).await;
        assert_eq!(r.status, 200, "{d}: {}", r.text());
        let kept = settled_len(&store, &conv).await;
        assert!(kept >= 2, "{d}: the first exchange is kept ({kept})");
        let calls = mock.received().len();
        let r = send(&app, turn(d, endpoint(d), &conv, &intruder)).await;
        assert_refused(d, &r);
        assert_eq!(mock.received().len(), calls, "{d}: the upstream was called");
        assert_eq!(
            settled_len(&store, &conv).await,
            kept,
            "{d}: something was written"
        );
        // The owner goes on, with its credential sent as the provider also takes it
        // (Gemini: the key= query parameter).
        let path = match d {
            Dialect::Gemini => format!("{}?key=AIza-owner-0001", endpoint(d)),
            _ => endpoint(d).to_string(),
        };
        let r = send(&app, turn(d, &path, &conv, &same)).await;
        assert_eq!(r.status, 200, "{d}: the owner is refused: {}", r.text());
        let info = store.info(&conv).await.unwrap();
        assert!(info.scope.starts_with("key:"), "{d}: {}", info.scope);
    }
}

#[tokio::test]
async fn sigv4_requests_are_scoped_by_access_key_id() {
    let mock = Mock::start().await;
    let (app, db, _dir) = gateway(&mock, None).await;
    let store = AnyStore::open(&db).await.unwrap();
    let d = Dialect::BedrockConverse;
    let signed = |key_id: &str, signature: &str| {
        format!(
            "AWS4-HMAC-SHA256 Credential={key_id}/20251126/us-east-1/bedrock/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, Signature={signature}"
        )
    };
    let first = signed("AKIAOWNER0001", "1111");
    let r = send(
        &app,
        turn(d, endpoint(d), "sigv4", &[("authorization", &first), DATE]),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    // Every request is signed anew: the same key id is the same caller.
    let again = signed("AKIAOWNER0001", "2222");
    let r = send(
        &app,
        turn(d, endpoint(d), "sigv4", &[("authorization", &again), DATE]),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let other = signed("AKIAOTHER0002", "3333");
    let r = send(
        &app,
        turn(d, endpoint(d), "sigv4", &[("authorization", &other), DATE]),
    )
    .await;
    assert_refused(d, &r);
    // The key id is no secret: as a bearer token it is not the signer.
    let bearer = [("authorization", "Bearer AKIAOWNER0001")];
    let r = send(&app, turn(d, endpoint(d), "sigv4", &bearer)).await;
    assert_refused(d, &r);
    assert!(store.info("sigv4").await.unwrap().scope.starts_with("aws:"));
    // A SigV4 header without a key id has no scope: refused before anything else.
    let calls = mock.received().len();
    let broken = [(
        "authorization",
        "AWS4-HMAC-SHA256 SignedHeaders=host, Signature=1",
    )];
    let r = send(&app, turn(d, endpoint(d), "sigv4-broken", &broken)).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("Credential="), "{}", r.text());
    assert_eq!(mock.received().len(), calls);
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_tenant_header_is_the_scope() {
    let mock = Mock::start().await;
    let (app, db, _dir) = gateway(&mock, Some("x-tenant")).await;
    let store = AnyStore::open(&db).await.unwrap();
    let d = Dialect::OpenAiChat;
    let acme_1 = [("authorization", "Bearer sk-a"), ("x-tenant", "acme")];
    let acme_2 = [("authorization", "Bearer sk-b"), ("x-tenant", "acme")];
    let globex = [("authorization", "Bearer sk-a"), ("x-tenant", "globex")];
    let r = send(&app, turn(d, endpoint(d), "t1", &acme_1)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    // Two credentials of one tenant share its conversations ...
    let r = send(&app, turn(d, endpoint(d), "t1", &acme_2)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    // ... and one credential of two tenants does not.
    let r = send(&app, turn(d, endpoint(d), "t1", &globex)).await;
    assert_refused(d, &r);
    assert!(r.text().contains("per tenant (x-tenant)"), "{}", r.text());
    assert_eq!(store.info("t1").await.unwrap().scope, "tenant:acme");
    // Without the header, a request that names a conversation is refused; one that
    // names none goes through.
    let calls = mock.received().len();
    let r = send(
        &app,
        turn(d, endpoint(d), "t1", &[("authorization", "Bearer sk-a")]),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("x-tenant"), "{}", r.text());
    assert_eq!(mock.received().len(), calls);
    let plain = Request::post(endpoint(d))
        .header("content-type", "application/json")
        .header("authorization", "Bearer sk-a")
        .body(Body::from(first_turn(d, false).to_string()))
        .unwrap();
    assert_eq!(send(&app, plain).await.status, 200);
    // A credential header is never a tenant header.
    let mut config = config_for(&mock, Mode::Repair);
    config.tenant_header = Some("authorization".into());
    let err = Gateway::new(config).unwrap_err().to_string();
    assert!(
        err.contains("tenant_header") && err.contains("credentials"),
        "{err}"
    );
}

#[tokio::test]
async fn callers_without_credentials_share_anonymous_and_never_a_credentialed_scope() {
    let mock = Mock::start().await;
    let (app, db, _dir) = gateway(&mock, None).await;
    let store = AnyStore::open(&db).await.unwrap();
    let d = Dialect::OpenAiChat;
    // The conversation is claimed before the request goes up (OpenAI refuses it: a
    // refused answer is passed back and never captured).
    let r = send(&app, turn(d, endpoint(d), "anon", &[])).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(store.info("anon").await.unwrap().scope, "anonymous");
    assert_eq!(settled_len(&store, "anon").await, 0);
    let keyed = [("authorization", "Bearer sk-a")];
    assert_refused(d, &send(&app, turn(d, endpoint(d), "anon", &keyed)).await);
    let r = send(&app, turn(d, endpoint(d), "keyed", &keyed)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_refused(d, &send(&app, turn(d, endpoint(d), "keyed", &[])).await);
}

/// Eight first requests for one id, each with its own credential, spread over two
/// gateway replicas (each with its own store handle) on `db`: one goes through.
async fn racing_first_requests_have_one_winner(db: &str) {
    let mock = Mock::start().await;
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let mut config = config_for(&mock, Mode::Repair);
        config.db = Some(db.to_string());
        replicas.push(app(Gateway::open(config).await.unwrap()));
    }
    let d = Dialect::OpenAiChat;
    let keys: Vec<String> = (0..8).map(|i| format!("Bearer sk-racer-{i}")).collect();
    let replies = futures_util::future::join_all(keys.iter().enumerate().map(|(i, k)| {
        let app = replicas[i % 2].clone();
        async move { send(&app, turn(d, endpoint(d), "raced", &[("authorization", k)])).await }
    }))
    .await;
    let won: Vec<u16> = replies.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(won.iter().filter(|s| **s == 200).count(), 1, "{won:?}");
    assert_eq!(won.iter().filter(|s| **s == 403).count(), 7, "{won:?}");
    assert_eq!(
        mock.received().len(),
        1,
        "only the winner reached the upstream"
    );
    let store = AnyStore::open(db).await.unwrap();
    assert!(settled_len(&store, "raced").await >= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_first_requests_on_sqlite_have_one_winner() {
    let dir = crate::secrets::tempdir("scoping-race");
    racing_first_requests_have_one_winner(&format!(
        "sqlite:{}",
        dir.join("conversations.db").display()
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_first_requests_on_postgres_have_one_winner() {
    crate::support::on_postgres("mend_scoping_test", |db| async move {
        racing_first_requests_have_one_winner(&db).await
    })
    .await;
}

#[tokio::test]
async fn an_unscoped_conversation_is_taken_by_its_first_caller() {
    let mock = Mock::start().await;
    let (app, db, _dir) = gateway(&mock, None).await;
    let store = AnyStore::open(&db).await.unwrap();
    // As a conversation made before scopes existed (or by `mend store create`).
    store.create(NewConversation::with_id("old")).await.unwrap();
    let d = Dialect::Anthropic;
    let owner = [("x-api-key", "sk-ant-first")];
    let r = send(&app, turn(d, endpoint(d), "old", &owner)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(store.info("old").await.unwrap().scope.starts_with("key:"));
    let other = [("x-api-key", "sk-ant-second")];
    assert_refused(d, &send(&app, turn(d, endpoint(d), "old", &other)).await);
    // A request that is no exchange (a model listing) claims nothing.
    let listing = Request::get("/v1/models")
        .header("authorization", "Bearer sk-a")
        .header("x-mend-conversation", "listing")
        .body(Body::empty())
        .unwrap();
    send(&app, listing).await;
    assert!(
        store.info("listing").await.is_err(),
        "a listing made a conversation"
    );
}

/// The store keeps message bodies only: no header, query string or credential, for
/// every way a credential travels.
#[tokio::test]
async fn no_credential_is_ever_written_to_the_store() {
    let mock = Mock::start().await;
    let (app, db, dir) = gateway(&mock, None).await;
    let secrets = [
        "sk-SECRET-openai-1111",
        "sk-ant-SECRET-anthropic-2222",
        "AIza-SECRET-gemini-header-3333",
        "AIza-SECRET-gemini-query-4444",
        "azure-SECRET-api-key-5555",
        "AKIASECRETSIGV46666",
        "IQoJ-SECRET-session-token-7777",
        "ABSK-SECRET-bedrock-8888",
    ];
    let sigv4 = format!(
        "AWS4-HMAC-SHA256 Credential={}/20251126/us-east-1/bedrock/aws4_request, \
         SignedHeaders=host, Signature=abcdef",
        secrets[5]
    );
    let gemini_query = format!("{}?key={}", endpoint(Dialect::Gemini), secrets[3]);
    let bearer = |s: &str| format!("Bearer {s}");
    let cases: Vec<Case> = vec![
        (
            Dialect::OpenAiChat,
            endpoint(Dialect::OpenAiChat).into(),
            vec![("authorization", bearer(secrets[0]))],
        ),
        (
            Dialect::OpenAiResponses,
            endpoint(Dialect::OpenAiResponses).into(),
            vec![
                ("authorization", bearer(secrets[0])),
                ("api-key", secrets[4].into()),
            ],
        ),
        (
            Dialect::Anthropic,
            endpoint(Dialect::Anthropic).into(),
            vec![("x-api-key", secrets[1].into())],
        ),
        (
            Dialect::Gemini,
            endpoint(Dialect::Gemini).into(),
            vec![("x-goog-api-key", secrets[2].into())],
        ),
        (Dialect::Gemini, gemini_query, vec![]),
        (
            Dialect::BedrockConverse,
            endpoint(Dialect::BedrockConverse).into(),
            vec![
                ("authorization", sigv4.clone()),
                ("x-amz-date", "20251126T031500Z".into()),
                ("x-amz-security-token", secrets[6].into()),
            ],
        ),
        (
            Dialect::BedrockConverse,
            endpoint(Dialect::BedrockConverse).into(),
            vec![("authorization", bearer(secrets[7]))],
        ),
    ];
    let store = AnyStore::open(&db).await.unwrap();
    for (i, (d, path, headers)) in cases.iter().enumerate() {
        let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let conv = format!("secret-{i}");
        let r = send(&app, turn(*d, path, &conv, &h)).await;
        assert_eq!(r.status, 200, "{d}: {}", r.text());
        assert!(settled_len(&store, &conv).await >= 2, "{d}: kept");
    }
    drop(store);
    // Every byte the store wrote: the database, its WAL and anything beside them.
    let mut written = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        written.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    assert!(written.len() > 4096, "the store wrote its pages");
    let text = String::from_utf8_lossy(&written);
    for s in secrets {
        assert!(!text.contains(s), "{s} was written to the store");
    }
}
