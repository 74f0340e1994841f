//! Answers the gateway writes itself, in each provider's own error shape, so that an SDK
//! shows the message as if the provider had sent it.
//!
//! - OpenAI (chat and Responses): `{"error": {"message", "type", "param", "code"}}`
//! - Anthropic: `{"type": "error", "error": {"type", "message"}}`
//! - Gemini: `{"error": {"code", "message", "status"}}`
//! - Bedrock Converse: `{"message"}`, the AWS error type in `x-amzn-ErrorType` (as AWS
//!   answers; botocore reads the code from that header)
//!
//! mend's own findings go beside, never inside, what a client parses: a top-level `mend`
//! field in the body and the `x-mend-violations` header.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mend::{Dialect, Violation};
use serde::Serialize;
use serde_json::{json, Value};

/// The header that carries mend's findings as compact JSON.
pub const VIOLATIONS_HEADER: &str = "x-mend-violations";

/// The header that says what repair did.
pub const REPAIRS_HEADER: &str = "x-mend-repairs";

/// The header that says why a repair was made but not forwarded (`sigv4-signed body`).
pub const REPAIR_SKIPPED_HEADER: &str = "x-mend-repair-skipped";

/// The header that names the rules heal mode repaired before its retry succeeded
/// (`rule1,rule2`).
pub const HEALED_HEADER: &str = "x-mend-healed";

/// The header that says what heal mode did after a history error: `healed`, `failed`
/// (the retry was refused too; its answer is passed back), `unrepairable` (repair could
/// not make the body valid; the first answer is passed back) or `sigv4-signed body` (not
/// retried).
pub const HEAL_HEADER: &str = "x-mend-heal";

/// The header that says, on a JSON answer to an exchange kept for its conversation
/// (`x-mend-conversation` with a store), whether the exchange was committed before the
/// answer went out: `stored`, `diverged` (it does not continue the conversation, so it
/// was not appended) or `failed` (the store failed or timed out; the answer is whole).
pub const CAPTURE_HEADER: &str = "x-mend-capture";

/// The header AWS names its error type in.
pub const AWS_ERROR_TYPE_HEADER: &str = "x-amzn-errortype";

/// Longest `x-mend-violations` value, in bytes. Proxies commonly cap one header at 8 KB
/// and all headers at 16–64 KB; the full list is in the body's `mend` field anyway.
pub const VIOLATIONS_HEADER_MAX: usize = 2048;

/// What kind of failure, which picks the type/status names each provider uses for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 400: the request (its history) would be rejected.
    InvalidRequest,
    /// 413: the body is larger than the gateway accepts.
    TooLarge,
    /// 404: no such route.
    NotFound,
    /// 403: the caller may not use what it named (another scope's conversation).
    Forbidden,
    /// 502: the upstream could not be reached.
    BadGateway,
    /// 504: the upstream did not answer in time.
    Timeout,
}

impl Kind {
    fn status(self) -> StatusCode {
        match self {
            Kind::InvalidRequest => StatusCode::BAD_REQUEST,
            Kind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Kind::NotFound => StatusCode::NOT_FOUND,
            Kind::Forbidden => StatusCode::FORBIDDEN,
            Kind::BadGateway => StatusCode::BAD_GATEWAY,
            Kind::Timeout => StatusCode::GATEWAY_TIMEOUT,
        }
    }

    /// OpenAI's `error.type`.
    fn openai_type(self) -> &'static str {
        match self {
            Kind::InvalidRequest | Kind::TooLarge | Kind::NotFound | Kind::Forbidden => {
                "invalid_request_error"
            }
            Kind::BadGateway | Kind::Timeout => "server_error",
        }
    }

    /// Anthropic's `error.type`.
    fn anthropic_type(self) -> &'static str {
        match self {
            Kind::InvalidRequest => "invalid_request_error",
            Kind::TooLarge => "request_too_large",
            Kind::NotFound => "not_found_error",
            Kind::Forbidden => "permission_error",
            Kind::BadGateway | Kind::Timeout => "api_error",
        }
    }

    /// Gemini's `error.status` (google.rpc.Code names).
    fn gemini_status(self) -> &'static str {
        match self {
            Kind::InvalidRequest | Kind::TooLarge => "INVALID_ARGUMENT",
            Kind::NotFound => "NOT_FOUND",
            Kind::Forbidden => "PERMISSION_DENIED",
            Kind::BadGateway => "UNAVAILABLE",
            Kind::Timeout => "DEADLINE_EXCEEDED",
        }
    }

    /// The AWS error type (`x-amzn-ErrorType`) Bedrock answers with.
    fn bedrock_type(self) -> &'static str {
        match self {
            Kind::InvalidRequest | Kind::TooLarge => "ValidationException",
            Kind::NotFound => "ResourceNotFoundException",
            Kind::Forbidden => "AccessDeniedException",
            Kind::BadGateway => "ServiceUnavailableException",
            Kind::Timeout => "ModelTimeoutException",
        }
    }
}

/// An error answer for one dialect (`None`: a route of no dialect, answered in
/// OpenAI's shape, the most widely understood).
pub fn provider_error(dialect: Option<Dialect>, kind: Kind, message: &str) -> Response {
    let body = error_body(dialect, kind, message, None);
    let mut resp = json_response(kind.status(), &body);
    if dialect == Some(Dialect::BedrockConverse) {
        aws_error_type(&mut resp, kind);
    }
    resp
}

/// AWS's error type header on an answer in Converse's shape.
fn aws_error_type(resp: &mut Response, kind: Kind) {
    resp.headers_mut().insert(
        AWS_ERROR_TYPE_HEADER,
        HeaderValue::from_static(kind.bedrock_type()),
    );
}

/// The body of an error answer; `param` is OpenAI's `error.param`.
pub fn error_body(
    dialect: Option<Dialect>,
    kind: Kind,
    message: &str,
    param: Option<&str>,
) -> Value {
    match dialect {
        Some(Dialect::Anthropic) => json!({
            "type": "error",
            "error": {"type": kind.anthropic_type(), "message": message},
        }),
        Some(Dialect::Gemini) => json!({
            "error": {
                "code": kind.status().as_u16(),
                "message": message,
                "status": kind.gemini_status(),
            },
        }),
        // AWS's JSON protocol: the message alone; the type goes in `x-amzn-ErrorType`.
        Some(Dialect::BedrockConverse) => json!({"message": message}),
        Some(Dialect::OpenAiChat | Dialect::OpenAiResponses) | None => json!({
            "error": {
                "message": message,
                "type": kind.openai_type(),
                "param": param,
                "code": null,
            },
        }),
    }
}

/// One finding as the header and the `mend` field show it.
#[derive(Debug, Serialize)]
struct Finding<'a> {
    rule: &'a str,
    severity: &'a str,
    path: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    provider_error: Option<&'a str>,
}

fn finding(v: &Violation) -> Finding<'_> {
    Finding {
        rule: v.rule.id(),
        severity: v.severity.as_str(),
        path: &v.path,
        message: &v.message,
        provider_error: v.provider_error.as_deref(),
    }
}

/// The strict-mode answer: 400 in the provider's shape, with the first error's provider
/// text as the message (mend's own message when the provider's is not known), every
/// finding in a top-level `mend` field, and a compact list in `x-mend-violations`.
pub fn strict_rejection(dialect: Dialect, violations: &[Violation]) -> Response {
    let first = violations
        .iter()
        .find(|v| v.severity == mend::Severity::Error)
        .or(violations.first());
    let message = first
        .map(|v| match &v.provider_error {
            Some(p) => p.clone(),
            None if v.path.is_empty() => format!("{} (mend: {})", v.message, v.rule),
            None => format!("{} (mend: {} at {})", v.message, v.rule, v.path),
        })
        .unwrap_or_else(|| "the history is invalid".to_string());
    let mut body = error_body(
        Some(dialect),
        Kind::InvalidRequest,
        &message,
        Some(dialect.history_key()),
    );
    if let Some(obj) = body.as_object_mut() {
        obj.insert(
            "mend".to_string(),
            json!({
                "mode": "strict",
                "dialect": dialect.name(),
                "violations": violations.iter().map(finding).collect::<Vec<_>>(),
            }),
        );
    }
    let mut resp = json_response(StatusCode::BAD_REQUEST, &body);
    if dialect == Dialect::BedrockConverse {
        aws_error_type(&mut resp, Kind::InvalidRequest);
    }
    if let Some(h) = violations_header(violations) {
        resp.headers_mut().insert(VIOLATIONS_HEADER, h);
    }
    resp
}

/// `x-mend-violations`: a JSON array of `{"rule", "path"}`, ASCII only, at most
/// [`VIOLATIONS_HEADER_MAX`] bytes; when cut, its last element is `{"more": N}`.
pub fn violations_header(violations: &[Violation]) -> Option<HeaderValue> {
    if violations.is_empty() {
        return None;
    }
    let items: Vec<String> = violations
        .iter()
        .map(|v| ascii_json(&json!({"rule": v.rule.id(), "path": v.path})))
        .collect();
    let mut out = String::from("[");
    let mut kept = 0;
    for (i, item) in items.iter().enumerate() {
        let left = items.len() - i - 1;
        // Room for this item, a comma, and a closing `{"more":N}]` should more follow.
        let tail = if left > 0 { 24 } else { 1 };
        if out.len() + item.len() + 1 + tail > VIOLATIONS_HEADER_MAX {
            break;
        }
        if kept > 0 {
            out.push(',');
        }
        out.push_str(item);
        kept += 1;
    }
    if kept < items.len() {
        if kept > 0 {
            out.push(',');
        }
        out.push_str(&format!("{{\"more\":{}}}", items.len() - kept));
    }
    out.push(']');
    HeaderValue::from_str(&out).ok()
}

/// `x-mend-repairs`: `N; rule=count, rule=count` (`0` when nothing was done).
pub fn repairs_header(edits: &[mend::repair::Edit]) -> HeaderValue {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for e in edits {
        match counts.iter_mut().find(|(r, _)| *r == e.rule.id()) {
            Some((_, n)) => *n += 1,
            None => counts.push((e.rule.id(), 1)),
        }
    }
    let mut s = edits.len().to_string();
    if !counts.is_empty() {
        s.push_str("; ");
        let parts: Vec<String> = counts.iter().map(|(r, n)| format!("{r}={n}")).collect();
        s.push_str(&parts.join(", "));
    }
    // Rule ids and digits only: always a valid header value.
    HeaderValue::from_str(&s).unwrap_or_else(|_| HeaderValue::from_static("0"))
}

/// Compact JSON with every non-ASCII character escaped, fit for a header value.
fn ascii_json(v: &Value) -> String {
    let s = v.to_string();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() && !c.is_ascii_control() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut resp = (status, body.to_string()).into_response();
    resp.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use mend::Rule;

    fn v(path: &str) -> Violation {
        Violation::error(Rule::ToolCallWithoutResult, path.into(), "m".into())
    }

    #[test]
    fn header_is_cut_with_a_count() {
        let many: Vec<Violation> = (0..500).map(|i| v(&format!("/messages/{i}"))).collect();
        let h = violations_header(&many).unwrap();
        let s = h.to_str().unwrap();
        assert!(s.len() <= VIOLATIONS_HEADER_MAX, "{}", s.len());
        let parsed: Vec<Value> = serde_json::from_str(s).unwrap();
        let more = parsed.last().unwrap()["more"].as_u64().unwrap() as usize;
        assert_eq!(parsed.len() - 1 + more, 500);
    }

    #[test]
    fn header_escapes_non_ascii() {
        let h = violations_header(&[v("/contents/0/parts/0/é")]).unwrap();
        let parsed: Value = serde_json::from_slice(h.as_bytes()).unwrap();
        assert_eq!(parsed[0]["path"], "/contents/0/parts/0/é");
    }
}
