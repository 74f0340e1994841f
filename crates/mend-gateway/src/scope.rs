//! Who a request's conversation belongs to: the caller's scope.
//!
//! A conversation named by `x-mend-conversation` is kept in the scope of the caller that
//! first named it, and only callers of that scope may append to it (the `proxy/scope.rs`
//! stage claims it before anything is forwarded). A scope is one of:
//!
//! - `key:<32 hex>`: the upstream credential the request carries, hashed. The credential
//!   read is the one the route's provider checks: OpenAI `Authorization: Bearer` (then
//!   Azure's `api-key`); Anthropic `x-api-key` (then `Authorization`); Gemini
//!   `x-goog-api-key`, then the `key=` query parameter (then `Authorization`); Bedrock
//!   `Authorization: Bearer` (API keys). Any other `Authorization` value counts whole.
//! - `aws:<32 hex>`: a Bedrock request signed with SigV4 (`Authorization:
//!   AWS4-HMAC-SHA256 Credential=AKID/...`, or a presigned `X-Amz-Credential`), hashed
//!   from its access key id: the signature changes on every request, the key id does
//!   not. A key id is not a secret, so it never shares a scope with a key (`aws:` and
//!   `key:` are hashed apart), and the gateway cannot verify the signature: AWS does. A
//!   forged signature gets AWS's 403, and an exchange is captured only when the upstream
//!   answered 2xx, so naming someone's key id writes nothing.
//! - `tenant:<name>`: with a tenant header configured (`--tenant-header`), its value,
//!   for a gateway behind a trusted proxy that authenticates callers and sets it (and
//!   strips it from what clients send). Credentials are then not read; a request that
//!   names a conversation without the header is refused.
//! - `anonymous`: a request with no credential at all. Every such caller shares it, and
//!   it can never be a credentialed scope.
//!
//! The hash is SHA-256, plain (not keyed), over a domain prefix, the kind and the
//! credential, cut to 128 bits: replicas and restarts agree on it without a shared
//! secret to keep, and API keys carry far too much entropy for a dictionary to find one
//! from its hash. Invariant: the credential itself is never kept, logged or returned;
//! only its hash leaves this module.

use axum::http::HeaderMap;
use mend::Dialect;
use sha2::{Digest, Sha256};

/// The scope of callers that send no credential.
pub const ANONYMOUS: &str = "anonymous";

/// Headers that carry credentials: never a tenant header (its value would be stored as
/// the scope's name).
pub(crate) const CREDENTIAL_HEADERS: [&str; 7] = [
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "x-amz-security-token",
    "cookie",
];

/// Longest tenant name accepted, in bytes.
const TENANT_MAX: usize = 128;

/// Why a request has no usable scope; the message is safe to send back (it quotes no
/// credential).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScopeError(String);

/// The scope of the caller of a request to `dialect`'s route, from its headers and query
/// string; `tenant_header` switches from credentials to a tenant named by a trusted
/// proxy.
pub fn caller_scope(
    dialect: Dialect,
    tenant_header: Option<&str>,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<String, ScopeError> {
    if let Some(name) = tenant_header {
        return tenant_scope(name, headers);
    }
    Ok(match credential(dialect, headers, query)? {
        Some(Credential::Key(k)) => hashed("key", k.as_bytes()),
        Some(Credential::AwsKeyId(id)) => hashed("aws", id.as_bytes()),
        None => ANONYMOUS.to_string(),
    })
}

fn tenant_scope(name: &str, headers: &HeaderMap) -> Result<String, ScopeError> {
    let mut values = headers.get_all(name).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(ScopeError(format!(
            "mend: this gateway keeps conversations per tenant, named by the {name} header \
             (set by the proxy in front of it); the request carries {}",
            match headers.get_all(name).iter().count() {
                0 => "none",
                _ => "several",
            }
        )));
    };
    let tenant = value.to_str().map(str::trim).unwrap_or_default();
    let printable = tenant.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
    if tenant.is_empty() || tenant.len() > TENANT_MAX || !printable {
        return Err(ScopeError(format!(
            "mend: the {name} header must name a tenant in 1 to {TENANT_MAX} printable ASCII characters"
        )));
    }
    Ok(format!("tenant:{tenant}"))
}

/// What identifies a caller.
#[derive(Debug, PartialEq, Eq)]
enum Credential<'a> {
    /// A secret: an API key or token.
    Key(&'a str),
    /// An AWS access key id (SigV4).
    AwsKeyId(String),
}

/// The credential the route's provider checks, first found in the provider's order.
fn credential<'a>(
    dialect: Dialect,
    headers: &'a HeaderMap,
    query: Option<&'a str>,
) -> Result<Option<Credential<'a>>, ScopeError> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(Credential::Key)
    };
    let authorization = || -> Result<Option<Credential<'a>>, ScopeError> {
        let Some(value) = headers.get("authorization") else {
            return Ok(None);
        };
        let Ok(value) = value.to_str().map(str::trim) else {
            return Err(ScopeError(
                "mend: the Authorization header is not ASCII text".into(),
            ));
        };
        authorization_credential(dialect, value)
    };
    let found = match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => {
            authorization()?.or_else(|| header("api-key"))
        }
        Dialect::Anthropic => match header("x-api-key") {
            Some(k) => Some(k),
            None => authorization()?,
        },
        Dialect::Gemini => match header("x-goog-api-key").or_else(|| query_key(query)) {
            Some(k) => Some(k),
            None => authorization()?,
        },
        Dialect::BedrockConverse => match authorization()? {
            Some(c) => Some(c),
            None => presigned_key_id(query)?,
        },
    };
    Ok(found)
}

/// The credential in an `Authorization` value: a bearer token, a SigV4 access key id on
/// Bedrock's route, or the whole value.
fn authorization_credential(
    dialect: Dialect,
    value: &str,
) -> Result<Option<Credential<'_>>, ScopeError> {
    if value.is_empty() {
        return Ok(None);
    }
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if scheme.eq_ignore_ascii_case("bearer") {
        let token = rest.trim();
        return Ok((!token.is_empty()).then_some(Credential::Key(token)));
    }
    if dialect == Dialect::BedrockConverse && scheme.eq_ignore_ascii_case("AWS4-HMAC-SHA256") {
        return sigv4_key_id(rest)
            .map(|id| Some(Credential::AwsKeyId(id.to_string())))
            .ok_or_else(|| {
                ScopeError(
                    "mend: the AWS4-HMAC-SHA256 Authorization header has no Credential=KEYID/..."
                        .into(),
                )
            });
    }
    Ok(Some(Credential::Key(value)))
}

/// `Credential=AKID/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=..., ...`.
fn sigv4_key_id(params: &str) -> Option<&str> {
    params
        .split(',')
        .filter_map(|p| p.trim().strip_prefix("Credential="))
        .filter_map(|c| c.split('/').next())
        .find(|id| !id.is_empty())
}

/// Gemini's `key=` query parameter.
fn query_key(query: Option<&str>) -> Option<Credential<'_>> {
    query?
        .split('&')
        .filter_map(|p| p.strip_prefix("key="))
        .find(|k| !k.is_empty())
        .map(Credential::Key)
}

/// A presigned request's `X-Amz-Credential=AKID%2F...` access key id.
fn presigned_key_id(query: Option<&str>) -> Result<Option<Credential<'static>>, ScopeError> {
    let Some(cred) = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|p| p.strip_prefix("X-Amz-Credential="))
    else {
        return Ok(None);
    };
    let decoded = percent_decode(cred);
    match decoded.split('/').next().filter(|id| !id.is_empty()) {
        Some(id) => Ok(Some(Credential::AwsKeyId(id.to_string()))),
        None => Err(ScopeError(
            "mend: the X-Amz-Credential query parameter has no access key id".into(),
        )),
    }
}

/// `%2F` and friends; a malformed escape is kept as it is.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let v = hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0);
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `kind:` and the first 128 bits of SHA-256 over a domain prefix, the kind and the
/// credential, in hex.
fn hashed(kind: &str, credential: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(b"mend-scope-v1\0");
    h.update(kind.as_bytes());
    h.update(b"\0");
    h.update(credential);
    let digest = h.finalize();
    let mut out = String::with_capacity(kind.len() + 33);
    out.push_str(kind);
    out.push(':');
    for b in &digest[..16] {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    fn scope(d: Dialect, pairs: &[(&str, &str)], query: Option<&str>) -> String {
        caller_scope(d, None, &headers(pairs), query).unwrap()
    }

    /// Each provider's credential, and what must not change the scope (the bearer
    /// scheme's case, white space, a SigV4 signature) or must (another key).
    #[test]
    fn each_dialect_reads_the_credential_its_provider_checks() {
        use Dialect::*;
        let k = hashed("key", b"sk-one");
        assert!(k.starts_with("key:") && k.len() == 36, "{k}");
        assert_eq!(
            scope(OpenAiChat, &[("authorization", "Bearer sk-one")], None),
            k
        );
        assert_eq!(
            scope(
                OpenAiResponses,
                &[("authorization", "bearer  sk-one ")],
                None
            ),
            k
        );
        assert_eq!(scope(OpenAiChat, &[("api-key", "sk-one")], None), k);
        assert_eq!(scope(Anthropic, &[("x-api-key", "sk-one")], None), k);
        assert_eq!(scope(Gemini, &[("x-goog-api-key", "sk-one")], None), k);
        assert_eq!(scope(Gemini, &[], Some("alt=sse&key=sk-one")), k);
        assert_eq!(
            scope(BedrockConverse, &[("authorization", "Bearer sk-one")], None),
            k
        );
        assert_ne!(
            scope(OpenAiChat, &[("authorization", "Bearer sk-two")], None),
            k
        );
        // The header the provider reads wins over another one a client adds.
        assert_eq!(
            scope(
                Anthropic,
                &[("x-api-key", "sk-one"), ("authorization", "Bearer sk-two")],
                None
            ),
            k
        );
        let sig = |s: &str| {
            format!(
                "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20251126/us-east-1/bedrock/aws4_request, \
                 SignedHeaders=host;x-amz-date, Signature={s}"
            )
        };
        let aws = scope(BedrockConverse, &[("authorization", &sig("aaaa"))], None);
        assert_eq!(aws, hashed("aws", b"AKIAEXAMPLE"));
        assert_eq!(
            scope(BedrockConverse, &[("authorization", &sig("bbbb"))], None),
            aws
        );
        let presigned = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20251126%2Fus-east-1%2Fbedrock%2Faws4_request&X-Amz-Signature=cc";
        assert_eq!(scope(BedrockConverse, &[], Some(presigned)), aws);
        // A key id is no secret: sent as a bearer token it is not the signer's scope.
        assert_ne!(
            scope(
                BedrockConverse,
                &[("authorization", "Bearer AKIAEXAMPLE")],
                None
            ),
            aws
        );
        // SigV4 means something only where AWS checks it.
        assert_ne!(
            scope(Anthropic, &[("authorization", &sig("aaaa"))], None),
            aws
        );
        assert_eq!(scope(OpenAiChat, &[], None), ANONYMOUS);
        assert_eq!(
            scope(Gemini, &[("authorization", "Bearer ")], Some("key=")),
            ANONYMOUS
        );
        let bad = caller_scope(
            BedrockConverse,
            None,
            &headers(&[("authorization", "AWS4-HMAC-SHA256 SignedHeaders=host")]),
            None,
        );
        assert!(bad.unwrap_err().to_string().contains("Credential="));
    }

    #[test]
    fn a_tenant_header_replaces_credentials() {
        let of = |pairs: &[(&str, &str)]| {
            caller_scope(Dialect::OpenAiChat, Some("x-tenant"), &headers(pairs), None)
        };
        assert_eq!(
            of(&[("x-tenant", " acme "), ("authorization", "Bearer sk-one")]).unwrap(),
            "tenant:acme"
        );
        for bad in [
            vec![],
            vec![("x-tenant", "a"), ("x-tenant", "b")],
            vec![("x-tenant", "")],
        ] {
            let err = of(&bad).unwrap_err().to_string();
            assert!(err.contains("x-tenant"), "{err}");
        }
        let long = "t".repeat(TENANT_MAX + 1);
        assert!(of(&[("x-tenant", &long)]).is_err());
    }

    #[test]
    fn no_scope_error_quotes_a_credential() {
        let h = headers(&[("authorization", "AWS4-HMAC-SHA256 Secret=sk-secret-value")]);
        let err = caller_scope(Dialect::BedrockConverse, None, &h, None).unwrap_err();
        assert!(!err.to_string().contains("sk-secret-value"), "{err}");
    }
}
