//! What the gateway is told: upstreams, modes, limits, where to tap.
//!
//! A [`Config`] is built in layers, each overriding the one before: defaults (the
//! providers' public base URLs, `observe`, 127.0.0.1:8787), a TOML file, environment
//! variables (`MEND_OPENAI_BASE_URL`, ...), then whatever the caller sets (the CLI's
//! flags). Everything is checked once, in [`Config::validate`]: a base URL that is not
//! `http(s)://host[/path]`, a provider profile that does not serve the dialect, a zero
//! limit.
//!
//! Invariant: upstream hosts come from here only. Nothing in a request can name one.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use mend::{Dialect, Profile};
use serde::Deserialize;

/// What the gateway does with a history. Ordered by how much mend does to a request
/// (off < observe < heal < repair < strict): a request's `x-mend-mode` may raise its
/// upstream's mode, and lower it only when [`Config::mode_header_lowers`] allows. The
/// order is the variants' declaration order. `heal` sits above `observe` (it may send a
/// repaired body, once, after the provider refused the original) and below `repair`
/// (it never changes a request the provider accepts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Mode {
    /// Forward without looking.
    Off,
    /// Check, log and count; forward the body unchanged.
    #[default]
    Observe,
    /// Forward the body unchanged; when the provider answers it with an error mend
    /// recognizes as a history error (`mend::rules::recognize`), repair it and send it
    /// once more, and answer with that retry (`x-mend-healed` says what was repaired).
    Heal,
    /// Forward the repaired body and say what was done in `x-mend-repairs`.
    Repair,
    /// Answer 400 in the provider's own format, without calling upstream, when the
    /// history has errors.
    Strict,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 5] = [
        Mode::Off,
        Mode::Observe,
        Mode::Heal,
        Mode::Repair,
        Mode::Strict,
    ];

    /// `off`, `observe`, `heal`, `repair` or `strict`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Observe => "observe",
            Mode::Heal => "heal",
            Mode::Repair => "repair",
            Mode::Strict => "strict",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        let s = s.trim();
        Mode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!("unknown mode '{s}' (expected off, observe, heal, repair or strict)")
            })
    }
}

impl<'de> Deserialize<'de> for Mode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Mode, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Where one dialect's requests go, and how they are judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// `scheme://host[:port][/path]`, without a trailing slash. The request's path and
    /// query are appended (a leading `/v1` or `/v1beta` that the base already ends with
    /// is not repeated).
    pub base_url: String,
    /// The provider profile to check with (`openai`, `groq`, ...); `None` for the
    /// dialect's default, or the one the model names.
    pub provider: Option<String>,
    /// The mode when the request does not choose one.
    pub mode: Mode,
}

impl Upstream {
    /// The provider's public API.
    pub fn default_for(dialect: Dialect) -> Upstream {
        let base = match dialect {
            Dialect::OpenAiChat | Dialect::OpenAiResponses => "https://api.openai.com",
            Dialect::Anthropic => "https://api.anthropic.com",
            Dialect::Gemini => "https://generativelanguage.googleapis.com",
            Dialect::BedrockConverse => "https://bedrock-runtime.us-east-1.amazonaws.com",
        };
        Upstream {
            base_url: base.to_string(),
            provider: None,
            mode: Mode::default(),
        }
    }

    /// The base URL without any `user:password@` part, for messages and logs.
    pub fn display_url(&self) -> String {
        strip_userinfo(&self.base_url)
    }
}

/// Everything `mend serve` needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Where to listen. Default 127.0.0.1:8787.
    pub listen: SocketAddr,
    /// One upstream per dialect, in `Dialect::ALL` order; see [`Config::upstream`].
    upstreams: [Upstream; 5],
    /// Largest request body accepted, in bytes (413 above). Default 32 MiB.
    pub body_limit: usize,
    /// How long to wait for a connection to an upstream (504 after). Default 10 s.
    pub connect_timeout: Duration,
    /// How long to wait for each read from an upstream, response head included (504
    /// before the head, a cut stream after). Default 600 s: reasoning models can think
    /// for minutes before their first byte.
    pub read_timeout: Duration,
    /// Whether `x-mend-mode` on a request is read at all. Default true.
    pub mode_header: bool,
    /// Whether `x-mend-mode` may choose a mode less strict than the upstream's (`off`
    /// on a `strict` upstream, say). Default false: a client may ask for more checking,
    /// never for less than the operator configured; a lower mode asked for is not
    /// applied, and the response's `x-mend-mode` says which mode was.
    pub mode_header_lowers: bool,
    /// A folder for the debug tap (JSONL of each request and response, credentials
    /// redacted). Off by default.
    pub tap: Option<PathBuf>,
    /// The conversation store's database (`sqlite:PATH`, `postgres://...`, as
    /// `mend store --db` takes), for requests that carry `x-mend-conversation`. Off by
    /// default.
    pub db: Option<String>,
    /// The admin token `/metrics` and the inspector (`/ui`) ask for; none by default
    /// (then `/metrics` is open and the inspector serves loopback only). Set by the CLI
    /// from `MEND_ADMIN_TOKEN` or `--admin-token-file`, never read from the TOML file.
    pub admin_token: Option<crate::admin::AdminToken>,
    /// How long the end of an answer waits for its exchange to commit to the store
    /// before it goes out anyway, the capture reported failed. Default 5 s.
    pub capture_timeout: Duration,
    /// The request header that names the caller's tenant, set by a trusted proxy in
    /// front of mend: conversations are then scoped to its value instead of to the
    /// upstream credential (see [`crate::scope`]). Lowercase; never a credential header.
    /// Off by default.
    pub tenant_header: Option<String>,
}

/// The default listen address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";

impl Default for Config {
    fn default() -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            upstreams: Dialect::ALL.map(Upstream::default_for),
            body_limit: 32 * 1024 * 1024,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(600),
            mode_header: true,
            mode_header_lowers: false,
            tap: None,
            db: None,
            admin_token: None,
            capture_timeout: Duration::from_secs(5),
            tenant_header: None,
        }
    }
}

/// A configuration that cannot be used: which setting, from where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {setting}: {reason}")]
pub struct ConfigError {
    /// The file, `environment` or `flags`.
    pub origin: String,
    /// The key or variable.
    pub setting: String,
    /// What is wrong.
    pub reason: String,
}

impl ConfigError {
    fn new(origin: &str, setting: &str, reason: impl Into<String>) -> ConfigError {
        ConfigError {
            origin: origin.to_string(),
            setting: setting.to_string(),
            reason: reason.into(),
        }
    }
}

/// The TOML file, every key optional.
///
/// ```toml
/// listen = "127.0.0.1:8787"
/// mode = "repair"              # every upstream's default
/// body_limit = 33554432        # bytes
/// connect_timeout_ms = 10000
/// read_timeout_ms = 600000
/// mode_header = true          # read x-mend-mode on requests
/// mode_header_lowers = false   # ... and let it choose a mode below the upstream's
/// tap = "/tmp/mend-tap"
/// db = "sqlite:/var/lib/mend/conversations.db"
/// capture_timeout_ms = 5000    # the most an answer's end waits for its commit
/// tenant_header = "x-tenant"   # scope conversations by it (behind a trusted proxy)
///
/// [upstream.openai]            # both OpenAI dialects; openai_chat / openai_responses for one
/// base_url = "https://api.groq.com/openai"
/// provider = "groq"
///
/// [upstream.anthropic]
/// mode = "strict"
///
/// [upstream.bedrock]           # Converse; the region is in the host
/// base_url = "https://bedrock-runtime.eu-west-1.amazonaws.com"
/// ```
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<String>,
    mode: Option<Mode>,
    body_limit: Option<usize>,
    connect_timeout_ms: Option<u64>,
    read_timeout_ms: Option<u64>,
    mode_header: Option<bool>,
    mode_header_lowers: Option<bool>,
    tap: Option<PathBuf>,
    db: Option<String>,
    capture_timeout_ms: Option<u64>,
    tenant_header: Option<String>,
    #[serde(default)]
    upstream: BTreeMap<String, FileUpstream>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileUpstream {
    base_url: Option<String>,
    provider: Option<String>,
    mode: Option<Mode>,
}

/// The names an upstream section or variable may use, and the dialects each covers.
/// `openai` covers both OpenAI dialects; the specific names, applied after it, win.
const UPSTREAM_NAMES: [(&str, &[Dialect]); 7] = [
    ("openai", &[Dialect::OpenAiChat, Dialect::OpenAiResponses]),
    ("openai_chat", &[Dialect::OpenAiChat]),
    ("openai_responses", &[Dialect::OpenAiResponses]),
    ("anthropic", &[Dialect::Anthropic]),
    ("gemini", &[Dialect::Gemini]),
    ("bedrock", &[Dialect::BedrockConverse]),
    ("bedrock_converse", &[Dialect::BedrockConverse]),
];

impl Config {
    /// Apply a TOML document (the text of a config file named `origin`).
    pub fn apply_toml(&mut self, text: &str, origin: &str) -> Result<(), ConfigError> {
        let file: FileConfig = toml::from_str(text).map_err(|e| {
            ConfigError::new(origin, "toml", e.to_string().trim_end().replace('\n', " "))
        })?;
        if let Some(l) = &file.listen {
            self.listen = parse_listen(l).map_err(|r| ConfigError::new(origin, "listen", r))?;
        }
        if let Some(m) = file.mode {
            self.set_mode_everywhere(m);
        }
        if let Some(n) = file.body_limit {
            self.body_limit = n;
        }
        if let Some(ms) = file.connect_timeout_ms {
            self.connect_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = file.read_timeout_ms {
            self.read_timeout = Duration::from_millis(ms);
        }
        if let Some(b) = file.mode_header {
            self.mode_header = b;
        }
        if let Some(b) = file.mode_header_lowers {
            self.mode_header_lowers = b;
        }
        if let Some(t) = file.tap {
            self.tap = Some(t);
        }
        if let Some(s) = file.db {
            self.db = Some(s);
        }
        if let Some(ms) = file.capture_timeout_ms {
            self.capture_timeout = Duration::from_millis(ms);
        }
        if let Some(h) = file.tenant_header {
            self.tenant_header = Some(h.trim().to_ascii_lowercase());
        }
        for name in file.upstream.keys() {
            if !UPSTREAM_NAMES.iter().any(|(n, _)| n == name) {
                return Err(ConfigError::new(
                    origin,
                    &format!("upstream.{name}"),
                    "unknown upstream (expected openai, openai_chat, openai_responses, anthropic, gemini, bedrock or bedrock_converse)",
                ));
            }
        }
        for (name, dialects) in UPSTREAM_NAMES {
            let Some(u) = file.upstream.get(name) else {
                continue;
            };
            for d in dialects {
                let up = self.upstream_mut(*d);
                if let Some(b) = &u.base_url {
                    up.base_url = trim_base(b);
                }
                if let Some(p) = u.provider.as_ref().filter(|p| applies(p, *d, dialects)) {
                    up.provider = Some(p.clone());
                }
                if let Some(m) = u.mode {
                    up.mode = m;
                }
            }
        }
        Ok(())
    }

    /// Read and apply a TOML file.
    pub fn apply_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new(&origin, "file", format!("cannot read it: {e}")))?;
        self.apply_toml(&text, &origin)
    }

    /// Apply environment variables, read through `var` (so tests need not touch the
    /// process environment):
    ///
    /// - `MEND_LISTEN`, `MEND_MODE`, `MEND_BODY_LIMIT` (bytes), `MEND_CONNECT_TIMEOUT_MS`,
    ///   `MEND_READ_TIMEOUT_MS`, `MEND_TAP`, `MEND_DB` (as for `mend store`),
    ///   `MEND_CAPTURE_TIMEOUT_MS`, `MEND_MODE_HEADER_LOWERS` (`true` or `false`),
    ///   `MEND_TENANT_HEADER`;
    /// - per upstream `MEND_<NAME>_BASE_URL`, `MEND_<NAME>_PROVIDER`, `MEND_<NAME>_MODE`
    ///   with NAME one of `OPENAI` (both OpenAI dialects), `OPENAI_CHAT`,
    ///   `OPENAI_RESPONSES`, `ANTHROPIC`, `GEMINI`, `BEDROCK` (Converse; the base URL
    ///   names the region: `https://bedrock-runtime.eu-west-1.amazonaws.com`) or
    ///   `BEDROCK_CONVERSE`.
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        const ORIGIN: &str = "environment";
        let get = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        if let Some(l) = get("MEND_LISTEN") {
            self.listen =
                parse_listen(&l).map_err(|r| ConfigError::new(ORIGIN, "MEND_LISTEN", r))?;
        }
        if let Some(m) = get("MEND_MODE") {
            let m = m
                .parse()
                .map_err(|r: String| ConfigError::new(ORIGIN, "MEND_MODE", r))?;
            self.set_mode_everywhere(m);
        }
        if let Some(n) = get("MEND_BODY_LIMIT") {
            self.body_limit = parse_number(&n, ORIGIN, "MEND_BODY_LIMIT")?;
        }
        if let Some(n) = get("MEND_CONNECT_TIMEOUT_MS") {
            self.connect_timeout =
                Duration::from_millis(parse_number(&n, ORIGIN, "MEND_CONNECT_TIMEOUT_MS")?);
        }
        if let Some(n) = get("MEND_READ_TIMEOUT_MS") {
            self.read_timeout =
                Duration::from_millis(parse_number(&n, ORIGIN, "MEND_READ_TIMEOUT_MS")?);
        }
        if let Some(b) = get("MEND_MODE_HEADER_LOWERS") {
            self.mode_header_lowers = match b.trim() {
                "true" | "1" => true,
                "false" | "0" => false,
                other => {
                    return Err(ConfigError::new(
                        ORIGIN,
                        "MEND_MODE_HEADER_LOWERS",
                        format!("'{other}' is not true or false"),
                    ))
                }
            };
        }
        if let Some(t) = get("MEND_TAP") {
            self.tap = Some(PathBuf::from(t));
        }
        if let Some(s) = get("MEND_DB") {
            self.db = Some(s);
        }
        if let Some(n) = get("MEND_CAPTURE_TIMEOUT_MS") {
            self.capture_timeout =
                Duration::from_millis(parse_number(&n, ORIGIN, "MEND_CAPTURE_TIMEOUT_MS")?);
        }
        if let Some(h) = get("MEND_TENANT_HEADER") {
            self.tenant_header = Some(h.trim().to_ascii_lowercase());
        }
        for (name, dialects) in UPSTREAM_NAMES {
            let prefix = format!("MEND_{}", name.to_ascii_uppercase());
            let base = get(&format!("{prefix}_BASE_URL"));
            let provider = get(&format!("{prefix}_PROVIDER"));
            let mode = match get(&format!("{prefix}_MODE")) {
                Some(m) => Some(
                    m.parse::<Mode>()
                        .map_err(|r| ConfigError::new(ORIGIN, &format!("{prefix}_MODE"), r))?,
                ),
                None => None,
            };
            for d in dialects {
                let up = self.upstream_mut(*d);
                if let Some(b) = &base {
                    up.base_url = trim_base(b);
                }
                if let Some(p) = provider.as_ref().filter(|p| applies(p, *d, dialects)) {
                    up.provider = Some(p.clone());
                }
                if let Some(m) = mode {
                    up.mode = m;
                }
            }
        }
        Ok(())
    }

    /// Set one mode on every upstream.
    pub fn set_mode_everywhere(&mut self, mode: Mode) {
        for u in &mut self.upstreams {
            u.mode = mode;
        }
    }

    /// The upstream of a dialect.
    pub fn upstream(&self, dialect: Dialect) -> &Upstream {
        &self.upstreams[slot(dialect)]
    }

    /// The upstream of a dialect, to change it.
    pub fn upstream_mut(&mut self, dialect: Dialect) -> &mut Upstream {
        &mut self.upstreams[slot(dialect)]
    }

    /// Check everything that can be checked before serving.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const ORIGIN: &str = "configuration";
        for d in Dialect::ALL {
            let up = self.upstream(d);
            let key = format!("upstream.{}", d.name());
            check_base_url(&up.base_url)
                .map_err(|r| ConfigError::new(ORIGIN, &format!("{key}.base_url"), r))?;
            if let Some(p) = &up.provider {
                let profile = Profile::named(p).ok_or_else(|| {
                    ConfigError::new(
                        ORIGIN,
                        &format!("{key}.provider"),
                        format!(
                            "unknown provider '{p}' (known: {})",
                            Profile::names().join(", ")
                        ),
                    )
                })?;
                if !profile.fits(d) {
                    return Err(ConfigError::new(
                        ORIGIN,
                        &format!("{key}.provider"),
                        format!("provider '{p}' does not serve the {} dialect", d.name()),
                    ));
                }
            }
        }
        if self.body_limit == 0 {
            return Err(ConfigError::new(ORIGIN, "body_limit", "must be above 0"));
        }
        if let Some(h) = &self.tenant_header {
            check_tenant_header(h).map_err(|r| ConfigError::new(ORIGIN, "tenant_header", r))?;
        }
        if self.connect_timeout.is_zero()
            || self.read_timeout.is_zero()
            || self.capture_timeout.is_zero()
        {
            return Err(ConfigError::new(ORIGIN, "timeouts", "must be above 0"));
        }
        Ok(())
    }
}

/// A dialect's place in `Dialect::ALL` (and in `Config::upstreams`).
fn slot(dialect: Dialect) -> usize {
    match dialect {
        Dialect::OpenAiChat => 0,
        Dialect::OpenAiResponses => 1,
        Dialect::Anthropic => 2,
        Dialect::Gemini => 3,
        Dialect::BedrockConverse => 4,
    }
}

/// Whether a provider set for a group of dialects (`openai`: chat and Responses) applies
/// to one of them: a chat-only profile (`groq`, `mistral`) set on `openai` refines chat
/// and leaves Responses alone. Set on one dialect alone, it always applies (and
/// [`Config::validate`] says when it does not fit).
fn applies(provider: &str, dialect: Dialect, group: &[Dialect]) -> bool {
    group.len() == 1 || Profile::named(provider).is_none_or(|p| p.fits(dialect))
}

/// Set a provider profile on a group of dialects, as the `openai` section does.
pub fn set_provider(config: &mut Config, provider: &str, group: &[Dialect]) {
    for d in group {
        if applies(provider, *d, group) {
            config.upstream_mut(*d).provider = Some(provider.to_string());
        }
    }
}

/// `host:port` or a bare port (bound on 127.0.0.1).
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    let s = s.trim();
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse::<SocketAddr>()
        .map_err(|_| format!("'{s}' is not an address (expected 127.0.0.1:8787 or a port)"))
}

fn parse_number<T: FromStr>(s: &str, origin: &str, setting: &str) -> Result<T, ConfigError> {
    s.trim()
        .parse()
        .map_err(|_| ConfigError::new(origin, setting, format!("'{s}' is not a number")))
}

fn trim_base(s: &str) -> String {
    s.trim().trim_end_matches('/').to_string()
}

/// `http://` or `https://`, a host, maybe a port and a path; no query or fragment.
fn check_base_url(s: &str) -> Result<(), String> {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .ok_or_else(|| {
            format!(
                "'{}' must start with http:// or https://",
                strip_userinfo(s)
            )
        })?;
    let authority = rest.split('/').next().unwrap_or(rest);
    if authority.is_empty() {
        return Err(format!("'{}' has no host", strip_userinfo(s)));
    }
    if rest.contains(['?', '#']) || rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "'{}' must be scheme://host[:port][/path], without query, fragment or spaces",
            strip_userinfo(s)
        ));
    }
    Ok(())
}

/// `https://user:secret@host/x` → `https://host/x`.
pub fn strip_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find('/').unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// A tenant header must be a header name, and neither a credential header (its value
/// would be kept as the scope's name) nor one of mend's own.
fn check_tenant_header(h: &str) -> Result<(), String> {
    if axum::http::HeaderName::from_bytes(h.as_bytes()).is_err() {
        return Err(format!("'{h}' is not a header name"));
    }
    if crate::scope::CREDENTIAL_HEADERS.contains(&h) {
        return Err(format!(
            "'{h}' carries credentials; name the header your proxy sets for the tenant"
        ));
    }
    if h.starts_with("x-mend-") {
        return Err(format!("'{h}' is one of mend's own headers"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_override_in_order() {
        let mut c = Config::default();
        assert_eq!(c.listen.to_string(), DEFAULT_LISTEN);
        c.apply_toml(
            r#"
            mode = "repair"
            body_limit = 1000
            [upstream.openai]
            base_url = "http://127.0.0.1:9000/"
            provider = "groq"
            [upstream.openai_responses]
            provider = "openai"
            mode = "strict"
            "#,
            "mend.toml",
        )
        .unwrap();
        let env = |k: &str| match k {
            "MEND_ANTHROPIC_MODE" => Some("off".to_string()),
            "MEND_GEMINI_BASE_URL" => Some("http://127.0.0.1:9001".to_string()),
            _ => None,
        };
        c.apply_env(env).unwrap();
        let chat = c.upstream(Dialect::OpenAiChat);
        assert_eq!(chat.base_url, "http://127.0.0.1:9000");
        assert_eq!(chat.provider.as_deref(), Some("groq"));
        assert_eq!(chat.mode, Mode::Repair);
        let resp = c.upstream(Dialect::OpenAiResponses);
        assert_eq!(resp.base_url, "http://127.0.0.1:9000");
        assert_eq!(resp.provider.as_deref(), Some("openai"));
        assert_eq!(resp.mode, Mode::Strict);
        assert_eq!(c.upstream(Dialect::Anthropic).mode, Mode::Off);
        assert_eq!(
            c.upstream(Dialect::Gemini).base_url,
            "http://127.0.0.1:9001"
        );
        assert_eq!(c.body_limit, 1000);
        c.validate().unwrap();
        // heal is a mode like the others, in the file, the environment and the header.
        c.apply_toml("[upstream.gemini]\nmode = \"heal\"", "mend.toml")
            .unwrap();
        assert_eq!(c.upstream(Dialect::Gemini).mode, Mode::Heal);
        c.apply_env(|k| (k == "MEND_MODE").then(|| "HEAL".to_string()))
            .unwrap();
        assert!(Dialect::ALL
            .iter()
            .all(|d| c.upstream(*d).mode == Mode::Heal));
        assert!(Mode::Observe < Mode::Heal && Mode::Heal < Mode::Repair);
    }

    #[test]
    fn bad_settings_say_where() {
        let mut c = Config::default();
        let e = c
            .apply_toml("[upstream.azure]\nbase_url = \"x\"", "f.toml")
            .unwrap_err();
        assert_eq!(e.setting, "upstream.azure");
        let e = c.apply_toml("mode = \"loud\"", "f.toml").unwrap_err();
        assert!(e.to_string().contains("unknown mode 'loud'"), "{e}");
        let e = c
            .apply_env(|k| (k == "MEND_OPENAI_BASE_URL").then(|| "ftp://x".to_string()))
            .and_then(|()| c.validate())
            .unwrap_err();
        assert_eq!(e.setting, "upstream.openai_chat.base_url");
        let mut c = Config::default();
        c.upstream_mut(Dialect::OpenAiResponses).provider = Some("mistral".into());
        let e = c.validate().unwrap_err();
        assert!(e.reason.contains("does not serve"), "{e}");
        // Set on both OpenAI dialects, a chat-only profile refines chat alone.
        let mut c = Config::default();
        c.apply_env(|k| (k == "MEND_OPENAI_PROVIDER").then(|| "mistral".to_string()))
            .unwrap();
        c.validate().unwrap();
        assert_eq!(
            c.upstream(Dialect::OpenAiChat).provider.as_deref(),
            Some("mistral")
        );
        assert_eq!(c.upstream(Dialect::OpenAiResponses).provider, None);
    }

    #[test]
    fn userinfo_never_shows() {
        assert_eq!(
            strip_userinfo("https://u:secret@host:1/v1"),
            "https://host:1/v1"
        );
        assert_eq!(strip_userinfo("http://host/a@b"), "http://host/a@b");
    }

    #[test]
    fn the_tenant_header_comes_from_file_or_environment_and_is_never_a_credential() {
        let mut c = Config::default();
        c.apply_toml("tenant_header = \"X-Tenant\"", "mend.toml")
            .unwrap();
        assert_eq!(c.tenant_header.as_deref(), Some("x-tenant"));
        c.validate().unwrap();
        c.apply_env(|k| (k == "MEND_TENANT_HEADER").then(|| "X-Org".to_string()))
            .unwrap();
        assert_eq!(c.tenant_header.as_deref(), Some("x-org"));
        for bad in [
            "authorization",
            "x-api-key",
            "x-mend-conversation",
            "bad header",
        ] {
            c.tenant_header = Some(bad.to_string());
            let err = c.validate().unwrap_err();
            assert_eq!(err.setting, "tenant_header", "{bad}: {err}");
        }
    }
}
