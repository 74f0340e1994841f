//! The conversation inspector: a small server-rendered web page at `/ui` over a
//! conversation store (`mend serve --ui`, or `mend ui` on its own).
//!
//! Pages: `/ui` the stored conversations (id, dialect, model, messages, turns, last
//! activity, violations; 50 a page, `?after=ID` for the next), `/ui/c/{id}` one
//! conversation as its chain (`view.rs`: turns, reasoning, call → result links, ids,
//! token counts per group, each violation on its turn with the provider's text, what
//! repair would change as edits and a diff), `/ui/paste` the same view of a pasted
//! request body (nothing stored; at most [`PASTE_LIMIT`] bytes), `/ui/login` the admin
//! token form, `/ui/style.css`. HTML from maud templates (`page.rs`), no script, nothing
//! loaded from elsewhere; the CSP header forbids scripts anyway.
//!
//! Access (`guard`): with an admin token configured, every page but the login form and
//! the stylesheet needs it (bearer header or the login cookie); without one, the
//! inspector answers only requests addressed to a loopback name (the CLI binds it to
//! loopback then; the `Host` check also stops DNS rebinding). Which conversations a
//! viewer may see is decided in one place, [`visible`].
//!
//! Invariants: read-only (the store is only listed, read and loaded; the paste box stores
//! nothing); every stored or pasted string is escaped when rendered (maud); a conversation
//! that cannot be loaded or read shows why on its row or page, never fails the page.

mod page;
mod view;

use std::sync::Arc;

use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use maud::Markup;
use mend::{CheckOptions, Dialect};
use mend_store::{AnyStore, ConversationInfo, Format, ListOptions, Span, Store, StoredMessage};
use serde_json::{Map, Value};

use crate::admin::{self, AdminToken};

/// The largest body the paste box takes, in bytes.
pub const PASTE_LIMIT: usize = 4 * 1024 * 1024;
/// Conversations on one page of the list.
pub const PAGE: u32 = 50;
/// A conversation longer than this (messages or bytes) is listed without its verdict
/// (its own page still checks it).
const LIST_CHECK_MESSAGES: u64 = 2_000;
const LIST_CHECK_BYTES: usize = 8 * 1024 * 1024;

/// Who is looking: an admin (the token holder, or anyone on loopback when no token is
/// configured) sees every conversation; a caller that shows an upstream credential
/// instead (as it would to the gateway: `Authorization: Bearer`, `x-api-key`,
/// `x-goog-api-key`, `api-key`), or the tenant header when one is configured, sees only
/// the conversations of that scope, the ones it could append to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewer {
    /// Sees every conversation.
    Admin,
    /// Sees the conversations of this scope (`crate::scope`).
    Scope(String),
}

/// Whether `viewer` may see the conversation: the one place the inspector decides it.
pub fn visible(viewer: &Viewer, conversation: &ConversationInfo) -> bool {
    match viewer {
        Viewer::Admin => true,
        Viewer::Scope(scope) => conversation.scope == *scope,
    }
}

/// The scope a request to the inspector shows, if it shows one: the tenant header when
/// one is configured, else the first credential header any provider reads. Never
/// `anonymous`: a request without a credential sees nothing by scope.
fn shown_scope(tenant_header: Option<&str>, req: &Request) -> Option<String> {
    let headers = req.headers();
    if let Some(name) = tenant_header {
        return crate::scope::caller_scope(mend::Dialect::OpenAiChat, Some(name), headers, None)
            .ok();
    }
    mend::Dialect::ALL.iter().find_map(|&d| {
        crate::scope::caller_scope(d, None, headers, req.uri().query())
            .ok()
            .filter(|s| s != crate::scope::ANONYMOUS)
    })
}

/// The inspector over one store. Cheap to clone.
#[derive(Clone)]
pub struct Inspector {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    store: AnyStore,
    /// The store's address without credentials, to show.
    label: String,
    token: Option<AdminToken>,
    /// The gateway's `tenant_header`, when it scopes conversations by tenant.
    tenant_header: Option<String>,
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspector")
            .field("store", &self.inner.label)
            .field("token", &self.inner.token.is_some())
            .finish()
    }
}

impl Inspector {
    /// An inspector over an open store; `label` names it on the page (no credentials).
    pub fn new(store: AnyStore, label: impl Into<String>, token: Option<AdminToken>) -> Inspector {
        Inspector {
            inner: Arc::new(Inner {
                store,
                label: label.into(),
                token,
                tenant_header: None,
            }),
        }
    }

    /// Scope viewers by this request header (the gateway's `tenant_header`, behind a
    /// trusted proxy) instead of by the credential they show.
    pub fn with_tenant_header(self, header: Option<String>) -> Inspector {
        let mut inner = (*self.inner).clone();
        inner.tenant_header = header;
        Inspector {
            inner: Arc::new(inner),
        }
    }

    /// Open the store at `db` (`sqlite:PATH`, `postgres://...`).
    pub async fn open(db: &str, token: Option<AdminToken>) -> Result<Inspector, crate::Error> {
        let store = AnyStore::open(db)
            .await
            .map_err(|e| crate::Error::Store(e.to_string()))?;
        Ok(Inspector::new(
            store,
            crate::config::strip_userinfo(db),
            token,
        ))
    }

    /// Whether it asks for an admin token.
    pub fn has_token(&self) -> bool {
        self.inner.token.is_some()
    }

    /// Who the request is, or why it is refused.
    fn viewer_of(&self, req: &Request) -> Result<Viewer, Refusal> {
        let scoped = || shown_scope(self.inner.tenant_header.as_deref(), req).map(Viewer::Scope);
        match &self.inner.token {
            Some(t) if t.admits(req.headers()) => Ok(Viewer::Admin),
            Some(_) => scoped().ok_or(Refusal::NoToken),
            None if addressed_to_loopback(req) => Ok(Viewer::Admin),
            None => Err(Refusal::NotLoopback),
        }
    }
}

/// Why a request to the inspector is refused.
#[derive(Debug, Clone, Copy)]
enum Refusal {
    /// A token is configured and the request does not present it: 401 and the login form.
    NoToken,
    /// No token is configured and the request names a host that is not loopback: 403.
    NotLoopback,
}

impl Refusal {
    fn answer(self) -> Response {
        match self {
            Refusal::NoToken => {
                let mut r = html(StatusCode::UNAUTHORIZED, page::login(false));
                r.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"mend\""),
                );
                r
            }
            Refusal::NotLoopback => html(
                StatusCode::FORBIDDEN,
                page::error(
                    "Loopback only",
                    "This inspector has no admin token, so it answers only requests addressed \
                     to 127.0.0.1, ::1 or localhost. Set MEND_ADMIN_TOKEN (or \
                     --admin-token-file) to open it to others.",
                ),
            ),
        }
    }
}

/// The inspector's routes, all under `/ui`.
pub fn router(inspector: Inspector) -> Router {
    Router::new()
        .route("/ui", get(list))
        .route("/ui/", get(list))
        .route("/ui/c/{id}", get(conversation))
        .route("/ui/paste", get(paste_form).post(paste))
        .route("/ui/login", get(login_form).post(login))
        .route("/ui/style.css", get(style))
        .route("/ui/{*rest}", get(not_found))
        .layer(middleware::from_fn_with_state(inspector.clone(), guard))
        .with_state(inspector)
}

/// Admit or refuse, then add the headers every inspector answer carries.
async fn guard(State(i): State<Inspector>, mut req: Request, next: Next) -> Response {
    let open = matches!(req.uri().path(), "/ui/login" | "/ui/style.css");
    let mut resp = match i.viewer_of(&req) {
        Ok(viewer) => {
            req.extensions_mut().insert(viewer);
            next.run(req).await
        }
        Err(_) if open => next.run(req).await,
        Err(refused) => refused.answer(),
    };
    let h = resp.headers_mut();
    for (name, value) in [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        h.insert(name, HeaderValue::from_static(value));
    }
    resp
}

/// The request names a loopback host (`Host`, or the URI's authority).
fn addressed_to_loopback(req: &Request) -> bool {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()));
    let Some(host) = host else { return false };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn html(status: StatusCode, page: Markup) -> Response {
    (status, Html(page.into_string())).into_response()
}

async fn style() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("style.css"),
    )
        .into_response()
}

async fn not_found(Path(rest): Path<String>) -> Response {
    html(
        StatusCode::NOT_FOUND,
        page::error(
            "Not found",
            &format!("The inspector has no page /ui/{rest}."),
        ),
    )
}

/// A row of the list.
#[derive(Debug)]
pub(crate) struct Listed {
    pub id: String,
    pub dialect: String,
    pub model: Option<String>,
    pub messages: u64,
    pub turns: Option<usize>,
    pub last_activity_ms: Option<i64>,
    /// (errors, warnings), or why it was not checked.
    pub verdict: Result<(usize, usize), String>,
}

#[derive(Debug, serde::Deserialize)]
struct ListQuery {
    after: Option<String>,
}

async fn list(
    State(i): State<Inspector>,
    Extension(viewer): Extension<Viewer>,
    Query(q): Query<ListQuery>,
) -> Response {
    let store = &i.inner.store;
    let options = ListOptions {
        limit: Some(PAGE + 1),
        after: q.after,
        scope: match &viewer {
            Viewer::Admin => None,
            Viewer::Scope(s) => Some(s.clone()),
        },
    };
    let mut infos = match store.list(&options).await {
        Ok(l) => l,
        Err(e) => {
            return html(
                StatusCode::SERVICE_UNAVAILABLE,
                page::error("Cannot list conversations", &e.to_string()),
            )
        }
    };
    let more = infos.len() > PAGE as usize;
    infos.truncate(PAGE as usize);
    let next = more.then(|| infos.last().map(|c| c.id.clone())).flatten();
    let mut rows = Vec::with_capacity(infos.len());
    for info in infos.iter().filter(|c| visible(&viewer, c)) {
        rows.push(listed(store, info).await);
    }
    html(
        StatusCode::OK,
        page::list(&rows, next.as_deref(), &i.inner.label),
    )
}

/// One conversation's row: loaded and checked when it is not too long.
async fn listed(store: &AnyStore, info: &ConversationInfo) -> Listed {
    let mut row = Listed {
        id: info.id.clone(),
        dialect: dialect_name(info.format),
        model: None,
        messages: info.last_sequence,
        turns: None,
        last_activity_ms: (info.last_sequence == 0).then_some(info.created_at_ms),
        verdict: Err("empty".into()),
    };
    if info.last_sequence == 0 {
        return row;
    }
    let span = if info.last_sequence > LIST_CHECK_MESSAGES {
        Span::starting_at(info.last_sequence)
    } else {
        Span::ALL
    };
    let loaded = match store.load(&info.id, span).await {
        Ok(m) => m,
        Err(e) => {
            row.verdict = Err(format!("cannot load: {e}"));
            return row;
        }
    };
    row.last_activity_ms = loaded.last().map(|m| m.appended_at_ms);
    let bytes: usize = loaded.iter().map(|m| m.raw.len()).sum();
    if span != Span::ALL || bytes > LIST_CHECK_BYTES {
        row.verdict = Err("too long to check in the list; open it".into());
        return row;
    }
    row.model = model_of(&loaded);
    let format = info.format;
    let checked = off_the_runtime(move || {
        let (body, opts) = body_of(format, &loaded)?;
        let a = mend::analyze(&body, &opts).map_err(|e| e.to_string())?;
        let errors = a
            .violations
            .iter()
            .filter(|v| v.severity == mend::Severity::Error)
            .count();
        Ok((a.chain.turns.len(), errors, a.violations.len() - errors))
    })
    .await;
    match checked {
        Ok((turns, errors, warnings)) => {
            row.turns = Some(turns);
            row.verdict = Ok((errors, warnings));
        }
        Err(why) => row.verdict = Err(why),
    }
    row
}

/// Run a check or a repair on the blocking pool: a long history must not hold up the
/// gateway's requests on the same runtime.
async fn off_the_runtime<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(format!("the check stopped: {e}")))
}

async fn conversation(
    State(i): State<Inspector>,
    Extension(viewer): Extension<Viewer>,
    Path(id): Path<String>,
) -> Response {
    let store = &i.inner.store;
    let missing = || {
        html(
            StatusCode::NOT_FOUND,
            page::error(
                "No such conversation",
                &format!("No conversation '{id}' is stored."),
            ),
        )
    };
    let info = match store.info(&id).await {
        Ok(info) if visible(&viewer, &info) => info,
        Ok(_) | Err(mend_store::Error::NotFound(_)) => return missing(),
        Err(e) => {
            return html(
                StatusCode::SERVICE_UNAVAILABLE,
                page::error("Cannot read the conversation", &e.to_string()),
            )
        }
    };
    let loaded = store
        .load(&id, Span::ALL)
        .await
        .map_err(|e| format!("cannot load its messages: {e}"));
    let mut facts = vec![
        ("format", info.format.name().to_string()),
        ("created", page::when(info.created_at_ms)),
        ("messages", info.last_sequence.to_string()),
    ];
    if let Some(last) = loaded.as_ref().ok().and_then(|m| m.last()) {
        facts.push(("last activity", page::when(last.appended_at_ms)));
    }
    if let Some(model) = loaded.as_ref().ok().and_then(|m| model_of(m)) {
        facts.push(("model", model));
    }
    if let Some(f) = &info.forked_from {
        facts.push((
            "forked from",
            format!("{} at message {}", f.conversation, f.at_sequence),
        ));
    }
    let format = info.format;
    let view = match loaded {
        Ok(m) => {
            off_the_runtime(move || {
                let (body, opts) = body_of(format, &m)?;
                view::view_of(&body, &opts)
            })
            .await
        }
        Err(why) => Err(why),
    };
    html(StatusCode::OK, page::conversation(&facts, &id, &view))
}

/// The stored messages as a request body of their dialect, with the options to check it.
fn body_of(format: Format, messages: &[StoredMessage]) -> Result<(Value, CheckOptions), String> {
    let values =
        mend_store::values(messages).map_err(|e| format!("a stored message is not JSON: {e}"))?;
    let dialect = match format {
        Format::Wire(d) | Format::Canonical(Some(d)) => d,
        Format::Canonical(None) | Format::Any => detect(&values)?,
    };
    let body = mend_store::render::render(format, values, dialect, &Map::new(), None)
        .map_err(|e| e.to_string())?;
    let opts = CheckOptions {
        dialect: Some(dialect),
        ..CheckOptions::default()
    };
    Ok((body, opts))
}

/// The dialect of undeclared messages: the first whose history reads them.
fn detect(values: &[Value]) -> Result<Dialect, String> {
    for key in ["messages", "input", "contents"] {
        let mut body = Map::new();
        body.insert(key.into(), Value::Array(values.to_vec()));
        if let Ok(d) = mend::detect_dialect(&Value::Object(body)) {
            return Ok(d);
        }
    }
    Err("its messages declare no dialect and read as none".into())
}

/// The first model a stored message names, if any (the store keeps no model of its own).
fn model_of(messages: &[StoredMessage]) -> Option<String> {
    messages.iter().find_map(|m| {
        let v: Value = serde_json::from_str(&m.raw).ok()?;
        v.get("model")?.as_str().map(str::to_string)
    })
}

fn dialect_name(format: Format) -> String {
    match format {
        Format::Wire(d) => d.name().to_string(),
        other => other.name().to_string(),
    }
}

async fn paste_form() -> Response {
    html(StatusCode::OK, page::paste("", None, None))
}

/// Check a pasted body (`body`, `dialect` form fields) and show it; nothing is stored.
async fn paste(req: Request) -> Response {
    let bytes = match axum::body::to_bytes(req.into_body(), PASTE_LIMIT + 64 * 1024).await {
        Ok(b) => b,
        Err(_) => return too_large(),
    };
    let mut body = String::new();
    let mut dialect_field = String::new();
    for (k, v) in form_urlencoded::parse(&bytes) {
        match &*k {
            "body" => body = v.into_owned(),
            "dialect" => dialect_field = v.into_owned(),
            _ => {}
        }
    }
    if body.len() > PASTE_LIMIT {
        return too_large();
    }
    let dialect = match dialect_field.as_str() {
        "" => None,
        name => match name.parse::<Dialect>() {
            Ok(d) => Some(d),
            Err(e) => {
                let view = Err(format!("dialect: {e}"));
                return html(
                    StatusCode::BAD_REQUEST,
                    page::paste(&body, None, Some(&view)),
                );
            }
        },
    };
    let pasted = body.clone();
    let view = off_the_runtime(move || paste_view(&pasted, dialect)).await;
    let status = if view.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    html(status, page::paste(&body, dialect, Some(&view)))
}

fn paste_view(body: &str, dialect: Option<Dialect>) -> Result<view::View, String> {
    if body.trim().is_empty() {
        return Err("Paste a request body first.".into());
    }
    let value = mend::parse_body(body.as_bytes()).map_err(|e| format!("the body is {e}"))?;
    if let Some(d) = dialect {
        mend::confirm_dialect(&value, d).map_err(|e| e.to_string())?;
    }
    let opts = CheckOptions {
        dialect,
        ..CheckOptions::default()
    };
    view::view_of(&value, &opts)
}

fn too_large() -> Response {
    html(
        StatusCode::PAYLOAD_TOO_LARGE,
        page::error(
            "Body too large",
            &format!(
                "The paste box takes bodies of at most {} MiB; use `mend inspect FILE` for larger ones.",
                PASTE_LIMIT / (1024 * 1024)
            ),
        ),
    )
}

async fn login_form(State(i): State<Inspector>) -> Response {
    if !i.has_token() {
        return redirect_to_list(None);
    }
    html(StatusCode::OK, page::login(false))
}

/// Check the token of the login form; on a match set the cookie and go to the list.
async fn login(State(i): State<Inspector>, req: Request) -> Response {
    let Some(token) = &i.inner.token else {
        return redirect_to_list(None);
    };
    let bytes = axum::body::to_bytes(req.into_body(), 4096)
        .await
        .unwrap_or_default();
    let given = form_urlencoded::parse(&bytes)
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    if !token.matches(given.as_bytes()) {
        return html(StatusCode::UNAUTHORIZED, page::login(true));
    }
    let cookie = format!(
        "{}={}; Path=/ui; HttpOnly; SameSite=Strict",
        admin::COOKIE,
        token.cookie_value()
    );
    redirect_to_list(HeaderValue::from_str(&cookie).ok())
}

fn redirect_to_list(cookie: Option<HeaderValue>) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert(header::LOCATION, HeaderValue::from_static("/ui"));
    if let Some(c) = cookie {
        headers.insert(header::SET_COOKIE, c);
    }
    (StatusCode::SEE_OTHER, headers).into_response()
}
