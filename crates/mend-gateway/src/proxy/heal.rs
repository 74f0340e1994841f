//! Stage 4b, heal (`heal` mode only): the request went upstream untouched; when the
//! provider refused it with an error mend recognizes as a history error, repair the
//! body as received and send it once more.
//!
//! - Only an answer with a status providers use for a bad request (400, 404 for a
//!   Responses item not found, 422 for OpenAI-compatible servers that validate with
//!   it) is looked at; its body is read up to [`ERROR_BODY_LIMIT`] bytes (an error body
//!   is small; a longer one is passed back as it came, unread past the limit).
//! - The message is taken from the error shape (`error.message` for OpenAI, Anthropic
//!   and Gemini; `message` or `Message` for Bedrock; a bare `message`, `detail` or string
//!   `error` for OpenAI-compatible servers) and given to `mend::rules::recognize` for the
//!   route's dialect. Not recognized: the answer goes back unchanged.
//! - Recognized: a SigV4-signed body is not retried (mend cannot sign a changed body);
//!   else the body as received is repaired as `repair` mode repairs it. When repair
//!   changes nothing or leaves errors, the first answer goes back unchanged. Otherwise
//!   the repaired body is sent once, and its answer (streamed, when the request streams)
//!   is the one passed back, whatever its status.
//!
//! `x-mend-heal` says which of these happened, `x-mend-healed` names the repaired rules
//! when the retry succeeded, `mend_heals_total` counts each by dialect, rule and outcome,
//! and the tap gets the refused answer and the retried request.

use axum::http::{HeaderValue, Method, StatusCode};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use mend::Rule;
use serde_json::Value;

use super::{act, tapping, verdict, Ctx, Early};
use crate::config::Mode;
use crate::errors::HEAL_HEADER;
use crate::judge::Verdict;
use crate::stream::{End, Seen};

/// The most of an upstream error body read to recognize it, in bytes.
pub(super) const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// The statuses whose answers are read for a history error.
const LOOKED_AT: [u16; 3] = [400, 404, 422];

/// What heal did, for the response headers and the capture.
pub(super) struct Heal {
    /// `x-mend-heal`.
    pub outcome: &'static str,
    /// The repair that was retried (`healed` and `failed` only).
    pub repair: Option<Verdict>,
}

/// The answer to pass back, and what heal did (`None`: the error was not a history
/// error, or there was none).
pub(super) async fn after(
    ctx: &Ctx,
    mode: Mode,
    received: &Bytes,
    answer: reqwest::Response,
) -> Result<(reqwest::Response, Option<Heal>), Early> {
    if mode != Mode::Heal
        || !ctx.route.judged
        || ctx.method != Method::POST
        || !LOOKED_AT.contains(&answer.status().as_u16())
    {
        return Ok((answer, None));
    }
    let first = Buffered::read(answer).await;
    let message = first.whole().and_then(error_message);
    let rules = message
        .as_deref()
        .map(|m| mend::rules::recognize(ctx.dialect(), m))
        .unwrap_or_default();
    let Some(&rule) = rules.first() else {
        return Ok((first.into_response(), None));
    };
    let (inner, dname) = (&ctx.inner, ctx.dname());
    let recognized = rule_ids(rules.iter().copied());
    // `outcome` for the header and the log, `label` for the metric.
    let skip = |outcome: &'static str, label: &'static str, first: Buffered| {
        inner.metrics.heal(dname, rule.id(), label);
        tracing::info!(
            request_id = %ctx.id, dialect = dname, recognized = %recognized, outcome,
            status = first.status.as_u16(), "history error not healed; the provider's answer is passed back"
        );
        Ok((
            first.into_response(),
            Some(Heal {
                outcome,
                repair: None,
            }),
        ))
    };
    if verdict::signed_with_sigv4(ctx) {
        return skip(verdict::SIGV4_SIGNED, "sigv4", first);
    }
    let repair = verdict::repair_for_heal(ctx, received);
    let Some(repaired) = repair
        .replacement
        .clone()
        .filter(|_| repair.left.is_empty())
    else {
        return skip("unrepairable", "unrepairable", first);
    };
    // The refused answer is not passed back: the tap is the one place it is kept.
    tapping::upstream_response(
        inner,
        &ctx.id,
        first.status,
        first.headers.clone(),
        &first.seen(),
        ctx.started,
    );
    tapping::request(ctx, mode, received, &repair);
    let retried = match act::resend(ctx, repaired).await {
        Ok(r) => r,
        Err(mut early) => {
            inner.metrics.heal(dname, rule.id(), "failed");
            early
                .headers_mut()
                .insert(HEAL_HEADER, HeaderValue::from_static("failed"));
            return Err(early);
        }
    };
    let outcome = if retried.status().is_success() {
        "healed"
    } else {
        "failed"
    };
    inner.metrics.heal(dname, rule.id(), outcome);
    tracing::info!(
        request_id = %ctx.id, dialect = dname, recognized = %recognized, outcome,
        first_status = first.status.as_u16(), status = retried.status().as_u16(),
        repaired = %rule_ids(repair.edits.iter().map(|e| e.rule)), edits = repair.edits.len(),
        "history error healed: the repaired body was sent once more"
    );
    Ok((
        retried,
        Some(Heal {
            outcome,
            repair: Some(repair),
        }),
    ))
}

/// Rule ids, each once, in order: `rule1,rule2`.
pub(super) fn rule_ids(rules: impl Iterator<Item = Rule>) -> String {
    let mut ids: Vec<&str> = Vec::new();
    for r in rules {
        if !ids.contains(&r.id()) {
            ids.push(r.id());
        }
    }
    ids.join(",")
}

/// An upstream answer whose body was read, up to the limit.
struct Buffered {
    status: StatusCode,
    version: axum::http::Version,
    headers: axum::http::HeaderMap,
    head: Bytes,
    /// What was not read: the rest of a body over the limit, or the read's error.
    rest: Option<Rest>,
}

enum Rest {
    Stream(std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<Bytes>> + Send>>),
    Failed(reqwest::Error),
}

impl Buffered {
    async fn read(answer: reqwest::Response) -> Buffered {
        let (status, version) = (answer.status(), answer.version());
        let headers = answer.headers().clone();
        let mut stream = Box::pin(answer.bytes_stream());
        let mut head = BytesMut::new();
        let rest = loop {
            match stream.next().await {
                None => break None,
                Some(Ok(chunk)) => {
                    head.extend_from_slice(&chunk);
                    if head.len() > ERROR_BODY_LIMIT {
                        break Some(Rest::Stream(stream));
                    }
                }
                Some(Err(e)) => break Some(Rest::Failed(e)),
            }
        };
        Buffered {
            status,
            version,
            headers,
            head: head.freeze(),
            rest,
        }
    }

    /// The whole body, when it was read whole.
    fn whole(&self) -> Option<&[u8]> {
        self.rest.is_none().then_some(&self.head[..])
    }

    /// The body as the tap sees it.
    fn seen(&self) -> Seen {
        Seen {
            bytes: self.head.len() as u64,
            copy: self.head.clone(),
            truncated: self.rest.is_some(),
            end: End::Complete,
        }
    }

    /// The answer again, its body the bytes read followed by whatever was not.
    fn into_response(self) -> reqwest::Response {
        let head = futures_util::stream::once(async move { Ok::<_, reqwest::Error>(self.head) });
        let body = match self.rest {
            None => reqwest::Body::wrap_stream(head),
            Some(Rest::Stream(s)) => reqwest::Body::wrap_stream(head.chain(s)),
            Some(Rest::Failed(e)) => reqwest::Body::wrap_stream(
                head.chain(futures_util::stream::once(async move { Err(e) })),
            ),
        };
        let mut resp = axum::http::Response::new(body);
        *resp.status_mut() = self.status;
        *resp.version_mut() = self.version;
        *resp.headers_mut() = self.headers;
        reqwest::Response::from(resp)
    }
}

/// The message of a provider's error body: `error.message` (OpenAI, Anthropic, Gemini,
/// also inside the one-element array Gemini answers a stream with), `message` or
/// `Message` (Bedrock), or the bare `message`, `detail` or string `error` some
/// OpenAI-compatible servers answer with. `None` when the body is not JSON or holds
/// none of these.
pub(crate) fn error_message(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let v = match &v {
        Value::Array(items) => items.first()?,
        other => other,
    };
    [
        "/error/message",
        "/message",
        "/Message",
        "/detail",
        "/error",
    ]
    .iter()
    .find_map(|p| v.pointer(p).and_then(Value::as_str))
    .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_read_from_each_error_shape() {
        let cases: [(&str, Option<&str>); 9] = [
            (
                r#"{"error":{"message":"a","type":"invalid_request_error"}}"#,
                Some("a"),
            ),
            (
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"b"}}"#,
                Some("b"),
            ),
            (
                r#"[{"error":{"code":400,"message":"c","status":"INVALID_ARGUMENT"}}]"#,
                Some("c"),
            ),
            (r#"{"message":"d"}"#, Some("d")),
            (r#"{"Message":"e"}"#, Some("e")),
            (r#"{"detail":"f"}"#, Some("f")),
            (r#"{"error":"g"}"#, Some("g")),
            (r#"{"error":{"code":400}}"#, None),
            ("<html>Bad Request</html>", None),
        ];
        for (body, want) in cases {
            assert_eq!(error_message(body.as_bytes()).as_deref(), want, "{body}");
        }
        assert_eq!(error_message(b""), None);
        assert_eq!(error_message(b"[]"), None);
        assert_eq!(error_message(&[0xff, 0xfe]), None);
    }

    #[test]
    fn rule_ids_are_listed_once_in_order() {
        let rules = [
            Rule::ToolCallWithoutResult,
            Rule::InvalidCallId,
            Rule::ToolCallWithoutResult,
        ];
        assert_eq!(
            rule_ids(rules.into_iter()),
            "tool-call-without-result,invalid-call-id"
        );
    }
}
