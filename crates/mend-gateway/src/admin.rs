//! The admin token: what `/ui` (the conversation inspector), `/metrics` and any admin
//! endpoint ask for when one is configured (`MEND_ADMIN_TOKEN`, or a file with
//! `--admin-token-file` / `MEND_ADMIN_TOKEN_FILE`).
//!
//! A request presents it as `Authorization: Bearer TOKEN` (a scraper, curl) or as the
//! `mend_admin` cookie the inspector's login form sets (a browser). The cookie holds a
//! value derived from the token ([`AdminToken::cookie_value`]), not the token, so the
//! browser's cookie jar never holds it. Both are compared in constant time (the token
//! over SHA-256 digests, so that not even its length leaks).
//!
//! Invariant: the token is never logged, printed or rendered: its `Debug` says
//! `AdminToken(..)`, and a refusal never echoes what was presented.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The cookie the inspector's login form sets.
pub const COOKIE: &str = "mend_admin";

/// The shortest token accepted: shorter ones are guessable.
pub const MIN_LEN: usize = 16;

/// A configured admin token (only its digest is kept).
#[derive(Clone, PartialEq, Eq)]
pub struct AdminToken {
    digest: [u8; 32],
}

impl std::fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AdminToken(..)")
    }
}

/// Why a token cannot be used; `origin` says where it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {reason}")]
pub struct TokenError {
    /// `MEND_ADMIN_TOKEN`, or the file's path.
    pub origin: String,
    /// Why.
    pub reason: String,
}

impl AdminToken {
    /// A token as given (surrounding white space, a file's final newline, removed). At
    /// least [`MIN_LEN`] characters, printable ASCII (it travels in a header and a
    /// cookie).
    pub fn new(token: &str, origin: &str) -> Result<AdminToken, TokenError> {
        let t = token.trim();
        let bad = |reason: String| TokenError {
            origin: origin.to_string(),
            reason,
        };
        if t.len() < MIN_LEN {
            return Err(bad(format!(
                "the admin token is {} characters long; it must have at least {MIN_LEN}",
                t.len()
            )));
        }
        if let Some(c) = t.chars().find(|c| !c.is_ascii_graphic()) {
            return Err(bad(format!(
                "the admin token holds {c:?}; only printable ASCII without spaces is accepted"
            )));
        }
        Ok(AdminToken {
            digest: digest(t.as_bytes()),
        })
    }

    /// The token in a file (its first line).
    pub fn from_file(path: &std::path::Path) -> Result<AdminToken, TokenError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| TokenError {
            origin: origin.clone(),
            reason: format!("cannot read the admin token file: {e}"),
        })?;
        AdminToken::new(text.lines().next().unwrap_or(""), &origin)
    }

    /// Whether `presented` is this token, in constant time.
    pub fn matches(&self, presented: &[u8]) -> bool {
        bool::from(self.digest.ct_eq(&digest(presented)))
    }

    /// What the login cookie holds: 64 hex digits derived from the token (a SHA-256 of
    /// its digest under a label), which opens the inspector but is not the token.
    pub fn cookie_value(&self) -> String {
        let mut h = Sha256::new();
        h.update(b"mend inspector cookie v1\0");
        h.update(self.digest);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Whether the request presents this token (`Authorization: Bearer TOKEN`), or the
    /// login cookie made from it.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        if let Some(t) = bearer(headers) {
            return self.matches(t.as_bytes());
        }
        cookie(headers).is_some_and(|c| {
            let want = self.cookie_value();
            // Equal lengths (64) before the constant-time comparison: the length is public.
            c.len() == want.len() && bool::from(c.as_bytes().ct_eq(want.as_bytes()))
        })
    }
}

/// The bearer token of a request, if any.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        })
}

/// The `mend_admin` cookie of a request, if any.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v)
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// 401 for a request to an admin endpoint without the token (text, for scrapers and
/// curl; the inspector answers with its login page instead).
pub fn refused(what: &str) -> Response {
    let mut r = (
        StatusCode::UNAUTHORIZED,
        format!(
            "{what} needs the admin token: send `Authorization: Bearer TOKEN` \
             (the token set with MEND_ADMIN_TOKEN or --admin-token-file)\n"
        ),
    )
        .into_response();
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"mend\""),
    );
    r
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_admitted_by_bearer_or_cookie_only_when_it_matches() {
        let t = AdminToken::new("  correct-horse-battery\n", "test").unwrap();
        let mut h = HeaderMap::new();
        assert!(!t.admits(&h));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer correct-horse-battery"),
        );
        assert!(t.admits(&h));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer correct-horse-batter"),
        );
        assert!(!t.admits(&h));
        // The cookie holds the derived value, never the token itself.
        let mut h = HeaderMap::new();
        let value = t.cookie_value();
        assert_eq!(value.len(), 64);
        assert!(!value.contains("correct-horse"));
        let good = HeaderValue::from_str(&format!("a=b; mend_admin={value}")).unwrap();
        h.insert(header::COOKIE, good);
        assert!(t.admits(&h));
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("mend_admin=correct-horse-battery"),
        );
        assert!(!t.admits(&h));
        let other = AdminToken::new("another-token-entirely", "test").unwrap();
        assert_ne!(other.cookie_value(), value);
    }

    #[test]
    fn short_or_odd_tokens_are_refused_saying_where_and_why() {
        let e = AdminToken::new("short", "MEND_ADMIN_TOKEN").unwrap_err();
        assert!(e.to_string().starts_with("MEND_ADMIN_TOKEN: "), "{e}");
        assert!(e.reason.contains("at least 16"), "{e}");
        let e = AdminToken::new("with a space inside it", "f").unwrap_err();
        assert!(e.reason.contains("' '"), "{e}");
        let e = AdminToken::from_file(std::path::Path::new("/nonexistent/token")).unwrap_err();
        assert!(e.reason.contains("cannot read"), "{e}");
        assert_eq!(
            format!("{:?}", AdminToken::new("0123456789abcdef", "x").unwrap()),
            "AdminToken(..)"
        );
    }
}
