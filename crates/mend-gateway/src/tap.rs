//! The debug tap: every request and response as one JSON line each, credentials
//! redacted.
//!
//! Records go through a bounded channel to one writer thread that owns the file
//! (`DIR/mend-tap-<start ms>-<pid>.jsonl`), so a request never waits on the disk; when
//! the writer falls behind, records are dropped and counted
//! (`mend_tap_dropped_total`), never queued without bound.
//!
//! Invariant: a credential never reaches the file. Header values of [`CREDENTIAL_HEADERS`]
//! and cookies become `[redacted]`, and so does a `key=` query parameter (Gemini's API
//! key). Redaction happens here, on the writer thread, for every record: no caller can
//! forget it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::HeaderMap;
use bytes::Bytes;
use serde_json::{json, Map, Value};

use crate::metrics::Metrics;

/// Headers whose values are credentials. Matched case-insensitively (HTTP header names
/// are).
pub const CREDENTIAL_HEADERS: [&str; 8] = [
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "cookie",
    "set-cookie",
    "x-amz-security-token",
];

/// What a redacted value reads as.
pub const REDACTED: &str = "[redacted]";

/// Query parameters whose values are credentials (Gemini's key; a presigned AWS URL's
/// signature, credential scope and session token).
const CREDENTIAL_PARAMS: [&str; 5] = [
    "key",
    "api_key",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
];

/// How many records may wait for the writer.
const QUEUE: usize = 1024;

/// One record.
#[derive(Debug)]
pub(crate) enum Record {
    /// A request as received, and as forwarded when mend changed it.
    Request {
        id: String,
        method: String,
        path: String,
        query: Option<String>,
        headers: HeaderMap,
        dialect: Option<&'static str>,
        mode: &'static str,
        body: Bytes,
        forwarded: Option<Bytes>,
    },
    /// A response as passed back (from upstream, or written by mend).
    Response {
        id: String,
        status: u16,
        headers: HeaderMap,
        body: Bytes,
        /// The body was longer than the capture limit and is cut.
        truncated: bool,
        /// `complete`, `upstream error: ...`, or `client gone`.
        ended: String,
        /// Milliseconds from the request's arrival.
        elapsed_ms: u64,
    },
}

/// A handle to the writer. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Tap {
    tx: SyncSender<Record>,
    path: PathBuf,
    metrics: Metrics,
}

impl Tap {
    /// Create `dir` if needed, open a fresh file in it, and start the writer.
    pub fn open(dir: &Path, metrics: Metrics) -> std::io::Result<Tap> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!(
            "mend-tap-{}-{}.jsonl",
            now_ms(),
            std::process::id()
        ));
        let file = File::options().create_new(true).append(true).open(&path)?;
        let (tx, rx) = sync_channel::<Record>(QUEUE);
        std::thread::Builder::new()
            .name("mend-tap".into())
            .spawn(move || {
                let mut out = BufWriter::new(file);
                // Write what is waiting, then flush: the file is current whenever the
                // gateway is idle, and a burst costs one flush.
                while let Ok(first) = rx.recv() {
                    let mut batch = vec![first];
                    batch.extend(rx.try_iter());
                    let written = batch
                        .into_iter()
                        .try_for_each(|rec| writeln!(out, "{}", render(rec)))
                        .and_then(|()| out.flush());
                    if let Err(e) = written {
                        tracing::error!(error = %e, "the tap cannot write; it stops");
                        return;
                    }
                }
            })?;
        Ok(Tap { tx, path, metrics })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn send(&self, rec: Record) {
        match self.tx.try_send(rec) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.metrics.tap_dropped();
            }
        }
    }
}

fn render(rec: Record) -> String {
    let v = match rec {
        Record::Request {
            id,
            method,
            path,
            query,
            headers,
            dialect,
            mode,
            body,
            forwarded,
        } => {
            let mut o = json!({
                "ts_ms": now_ms(),
                "id": id,
                "kind": "request",
                "method": method,
                "path": path,
                "query": query.as_deref().map(redact_query),
                "dialect": dialect,
                "mode": mode,
                "headers": redact_headers(&headers),
                "body": body_value(&body),
            });
            if let (Some(f), Some(obj)) = (forwarded, o.as_object_mut()) {
                obj.insert("forwarded_body".into(), body_value(&f));
            }
            o
        }
        Record::Response {
            id,
            status,
            headers,
            body,
            truncated,
            ended,
            elapsed_ms,
        } => json!({
            "ts_ms": now_ms(),
            "id": id,
            "kind": "response",
            "status": status,
            "elapsed_ms": elapsed_ms,
            "ended": ended,
            "headers": redact_headers(&headers),
            "body": body_value(&body),
            "truncated": truncated,
        }),
    };
    v.to_string()
}

/// A body as JSON when it is JSON, else as text (an SSE stream, or anything else).
fn body_value(b: &[u8]) -> Value {
    if b.is_empty() {
        return Value::Null;
    }
    match serde_json::from_slice::<Value>(b) {
        Ok(v) => v,
        Err(_) => Value::String(String::from_utf8_lossy(b).into_owned()),
    }
}

/// Whether a header carries a credential.
pub fn is_credential_header(name: &str) -> bool {
    CREDENTIAL_HEADERS
        .iter()
        .any(|c| c.eq_ignore_ascii_case(name))
}

/// Headers as a JSON object, credentials replaced by [`REDACTED`]. Repeated headers
/// become arrays.
pub fn redact_headers(headers: &HeaderMap) -> Value {
    let mut out = Map::new();
    for name in headers.keys() {
        let values: Vec<Value> = headers
            .get_all(name)
            .iter()
            .map(|v| {
                if is_credential_header(name.as_str()) {
                    Value::String(REDACTED.into())
                } else {
                    Value::String(String::from_utf8_lossy(v.as_bytes()).into_owned())
                }
            })
            .collect();
        let v = match <[Value; 1]>::try_from(values) {
            Ok([one]) => one,
            Err(many) => Value::Array(many),
        };
        out.insert(name.as_str().to_string(), v);
    }
    Value::Object(out)
}

/// A query string with the values of credential parameters replaced.
pub fn redact_query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| {
            let name = pair.split('=').next().unwrap_or(pair);
            if CREDENTIAL_PARAMS
                .iter()
                .any(|p| p.eq_ignore_ascii_case(name))
            {
                format!("{name}={REDACTED}")
            } else {
                pair.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted() {
        let mut h = HeaderMap::new();
        h.insert("Authorization", "Bearer sk-secret".parse().unwrap());
        h.insert("x-goog-api-key", "AIzaSecret".parse().unwrap());
        h.insert("API-Key", "azure-secret".parse().unwrap());
        h.insert("content-type", "application/json".parse().unwrap());
        let v = redact_headers(&h).to_string();
        assert!(!v.contains("secret") && !v.contains("Secret"), "{v}");
        assert!(v.contains("application/json"));
        assert_eq!(
            redact_query("alt=sse&key=AIzaSecret&x=1"),
            "alt=sse&key=[redacted]&x=1"
        );
        assert_eq!(redact_query("KEY=s"), "KEY=[redacted]");
        assert_eq!(
            redact_query("X-Amz-Credential=AKIA/x&X-Amz-Signature=abc&X-Amz-Date=1"),
            "X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]&X-Amz-Date=1"
        );
        // A SigV4 Authorization header names the access key id: redacted whole.
        let mut h = HeaderMap::new();
        h.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIASECRET/20250101/us-east-1/bedrock/aws4_request"
                .parse()
                .unwrap(),
        );
        h.insert("x-amz-security-token", "IQoSECRET".parse().unwrap());
        assert!(!redact_headers(&h).to_string().contains("SECRET"));
    }
}
