//! The verdict on one request body under one mode: forward it as it came, forward a
//! repaired copy, or answer 400 without calling upstream.
//!
//! A plain function of (mode, dialect, upstream profile, body bytes): no I/O, no
//! headers, so every mode is tested without a server.
//!
//! Invariants: `off` never parses; every other mode checks the bytes once with
//! `mend::check` (no tree built here but for a repair); `observe`, `heal` and `strict`
//! forward the very bytes that came in (heal's retry is judged again, under `repair`,
//! by the heal stage); `repair` parses and re-serializes only when an edit was made; a body mend cannot read
//! (not JSON, not an object, no history of the endpoint's dialect) is forwarded untouched
//! and counted `unchecked` in `observe`, `heal` and `repair`, and answered 400 in
//! `strict`, which forwards nothing it has not checked.

use bytes::Bytes;
use mend::repair::{repair_owned, splice, Edit, RepairOptions};
use mend::{CheckOptions, Dialect, Violation};
use serde_json::Value;

use crate::config::Mode;
use crate::head::{self, RequestHead};

/// What to do with a request.
#[derive(Debug)]
pub(crate) struct Verdict {
    /// A label for metrics and logs: `off`, `unchecked`, `valid`, `invalid`, `repaired`,
    /// `partly_repaired`, `unrepairable`, `rejected`.
    pub outcome: &'static str,
    /// A new body to forward instead of the one received.
    pub replacement: Option<Bytes>,
    /// Answer 400 with these findings; do not call upstream.
    pub reject: bool,
    /// What the check found (before repair), errors and warnings.
    pub found: Vec<Violation>,
    /// Edits made (repair mode).
    pub edits: Vec<Edit>,
    /// Errors left after repair (repair mode).
    pub left: Vec<Violation>,
    /// The body as forwarded, parsed, when it was parsed (a repaired body, for the
    /// conversation capture; a body forwarded as received is parsed by the capture, off
    /// the request's path, and only when one is wanted).
    pub parsed: Option<Value>,
    /// Why the body was not checked, for the log.
    pub unchecked_because: Option<String>,
    /// Why a repair was made but not forwarded (`x-mend-repair-skipped`).
    pub repair_skipped: Option<&'static str>,
    /// The body's top-level `model` and `stream`, read off the check's tape when the
    /// check read the body onto one (`None`: not read; the log line skims the bytes).
    pub head: Option<RequestHead>,
}

impl Verdict {
    fn pass(outcome: &'static str, parsed: Option<Value>) -> Verdict {
        Verdict {
            outcome,
            replacement: None,
            reject: false,
            found: Vec::new(),
            edits: Vec::new(),
            left: Vec::new(),
            parsed,
            unchecked_because: None,
            repair_skipped: None,
            head: None,
        }
    }

    /// Forward the body as received after all: the repair is dropped, its errors are
    /// what is left, and `why` says so.
    pub(crate) fn hold_back_repair(&mut self, why: &'static str) {
        self.replacement = None;
        self.edits.clear();
        self.left = self
            .found
            .iter()
            .filter(|v| v.severity == mend::Severity::Error)
            .cloned()
            .collect();
        self.outcome = "repair_skipped";
        // `parsed` held the repaired body: the capture reads the one forwarded, as
        // received.
        self.parsed = None;
        self.repair_skipped = Some(why);
    }

    fn unchecked(why: String, parsed: Option<Value>) -> Verdict {
        Verdict {
            unchecked_because: Some(why),
            ..Verdict::pass("unchecked", parsed)
        }
    }

    /// A body mend cannot read: passed on unchecked, or under `strict` refused with why.
    fn unreadable(mode: Mode, why: String, parsed: Option<Value>) -> Verdict {
        if mode != Mode::Strict {
            return Verdict::unchecked(why, parsed);
        }
        Verdict {
            reject: true,
            found: vec![Violation::error(
                mend::Rule::Malformed,
                String::new(),
                format!("the body cannot be checked: {why}"),
            )],
            unchecked_because: Some(why),
            ..Verdict::pass("rejected", parsed)
        }
    }
}

/// What the body is checked as.
#[derive(Debug, Clone)]
pub(crate) struct Target<'a> {
    pub dialect: Dialect,
    /// The upstream's provider profile.
    pub provider: Option<&'a str>,
    /// The model from the URL (Gemini), when the body does not name one.
    pub model: Option<&'a str>,
    /// The request path.
    pub endpoint: &'a str,
}

impl Target<'_> {
    fn options(&self) -> CheckOptions {
        CheckOptions {
            dialect: Some(self.dialect),
            provider: self.provider.map(str::to_string),
            model: self.model.map(str::to_string),
            endpoint: Some(self.endpoint.to_string()),
        }
    }
}

/// Judge a body: one `mend::check` of the bytes as they came. Only `repair` mode, and
/// only for a body with errors, parses it into a tree (to repair it); a valid body is
/// never parsed twice, and never re-serialized.
pub(crate) fn judge(mode: Mode, target: &Target<'_>, body: &[u8]) -> Verdict {
    if mode == Mode::Off {
        return Verdict::pass("off", None);
    }
    let opts = target.options();
    // `mend::check` reads the bytes onto a tape, or for a body the tape declines into a
    // `Value`; the tape is read here so the log line's `model` and `stream` come off it
    // too (a declined body goes to `mend::check`, whose tape attempt fails the same way).
    let doc = mend::json::parse(body);
    let checked = match &doc {
        Some(doc) => mend::check_doc(doc, &opts),
        None => mend::check(body, &opts),
    };
    let head = doc.as_ref().map(head::from_doc);
    drop(doc);
    let report = match checked {
        Ok(r) => r,
        Err(mend::Error::Parse(e)) => {
            return Verdict::unreadable(mode, format!("not JSON: {e}"), None)
        }
        Err(e) => return Verdict::unreadable(mode, e.to_string(), None),
    };
    if let Some(v) = mend::unreadable_history(report.dialect, &report.violations) {
        let why = format!("no readable history: {}", v.message);
        return Verdict {
            head,
            ..Verdict::unreadable(mode, why, None)
        };
    }
    let valid = report.valid();
    let found = report.violations;
    let verdict = judged(mode, body, opts, valid, found);
    Verdict { head, ..verdict }
}

/// The verdict of a check that read the body.
fn judged(
    mode: Mode,
    body: &[u8],
    opts: CheckOptions,
    valid: bool,
    found: Vec<Violation>,
) -> Verdict {
    match mode {
        Mode::Off => Verdict::pass("off", None),
        Mode::Observe | Mode::Heal => Verdict {
            found,
            ..Verdict::pass(if valid { "valid" } else { "invalid" }, None)
        },
        Mode::Strict => Verdict {
            found,
            reject: !valid,
            ..Verdict::pass(if valid { "valid" } else { "rejected" }, None)
        },
        Mode::Repair if valid => Verdict {
            found,
            ..Verdict::pass("valid", None)
        },
        Mode::Repair => repaired(body, opts, found),
    }
}

/// `repair` mode on a body the check found errors in: the repaired copy (and its tree,
/// for the capture) when an edit was made. The copy is the client's bytes with only the
/// changed history items (and members) written anew (`mend::repair::splice`).
fn repaired(body: &[u8], opts: CheckOptions, found: Vec<Violation>) -> Verdict {
    let Some(parsed) = parse(body) else {
        // The check read it: it is JSON. Kept as a safe fallback all the same.
        return Verdict {
            found,
            ..Verdict::unchecked("repair failed: the body did not parse".into(), None)
        };
    };
    let ropts = RepairOptions {
        check: opts,
        ..RepairOptions::default()
    };
    match repair_owned(parsed, &ropts) {
        Ok(fixed) => {
            let outcome = match (fixed.changed(), fixed.valid()) {
                (true, true) => "repaired",
                (true, false) => "partly_repaired",
                (false, _) => "unrepairable",
            };
            let replacement = if fixed.changed() {
                Some(Bytes::from(splice(body, &fixed)))
            } else {
                None
            };
            // The capture parses the body as received when it wants it; a repaired one
            // is kept as the tree it already is.
            let parsed = replacement.is_some().then_some(fixed.body);
            Verdict {
                outcome,
                replacement,
                found,
                edits: fixed.edits,
                left: fixed.unrepairable,
                ..Verdict::pass(outcome, parsed)
            }
        }
        Err(e) => Verdict {
            found,
            ..Verdict::unchecked(format!("repair failed: {e}"), None)
        },
    }
}

/// The body as JSON. UTF-8 is checked once for the whole body and the parse then reads
/// a `&str`, which spares serde_json a UTF-8 check per string (a tenth of the parse of a
/// 200 KB history).
fn parse(body: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(body).ok()?;
    serde_json::from_str(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORPHAN: &[u8] = br#"{"model":"gpt-4o","messages":[
        {"role":"user","content":"hi"},
        {"role":"tool","tool_call_id":"call_1","content":"x"}]}"#;

    fn chat() -> Target<'static> {
        Target {
            dialect: Dialect::OpenAiChat,
            provider: None,
            model: None,
            endpoint: "/v1/chat/completions",
        }
    }

    #[test]
    fn each_mode_decides() {
        let v = judge(Mode::Off, &chat(), ORPHAN);
        assert_eq!(v.outcome, "off");
        for mode in [Mode::Observe, Mode::Heal] {
            let v = judge(mode, &chat(), ORPHAN);
            assert_eq!(v.outcome, "invalid");
            assert!(v.replacement.is_none() && !v.reject);
        }
        let v = judge(Mode::Observe, &chat(), ORPHAN);
        assert_eq!(v.found[0].rule.id(), "tool-result-without-call");
        let v = judge(Mode::Strict, &chat(), ORPHAN);
        assert!(v.reject);
        let v = judge(Mode::Repair, &chat(), ORPHAN);
        assert_eq!(v.outcome, "repaired");
        let fixed: Value = serde_json::from_slice(v.replacement.as_ref().unwrap()).unwrap();
        assert_eq!(fixed["messages"].as_array().unwrap().len(), 1);
        assert_eq!(v.edits.len(), 1);
    }

    /// A repaired body goes upstream as the client's bytes with only the changed part
    /// written anew: the untouched message keeps its spacing and escapes.
    #[test]
    fn repair_keeps_the_untouched_bytes() {
        let body = br#"{"model":"gpt-4o","messages":[ {"role" : "user",  "content":"caf\u00e9"} ,
        {"role":"tool","tool_call_id":"call_1","content":"x"}]}"#;
        let v = judge(Mode::Repair, &chat(), body);
        assert_eq!(v.outcome, "repaired");
        let sent = std::str::from_utf8(v.replacement.as_ref().unwrap()).unwrap();
        assert!(
            sent.contains(r#"{"role" : "user",  "content":"caf\u00e9"}"#),
            "{sent}"
        );
        assert!(!sent.contains("call_1"), "{sent}");
    }

    /// What cannot be read passes unchanged (and counted `unchecked`) in every mode but
    /// strict, which refuses it with the reason: not JSON, not an object, no history of
    /// the endpoint's dialect (a Gemini body at the chat endpoint), a history key of the
    /// wrong type.
    #[test]
    fn unreadable_bodies_pass_but_not_in_strict() {
        let unreadable: [&[u8]; 5] = [
            b"{not json",
            b"[1, 2]",
            br#"{"model":"x"}"#,
            br#"{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}"#,
            br#"{"model": "gpt-4o", "messages": {"role": "user", "content": "hi"}}"#,
        ];
        for body in unreadable {
            for mode in [Mode::Observe, Mode::Heal, Mode::Repair] {
                let v = judge(mode, &chat(), body);
                assert_eq!(v.outcome, "unchecked", "{:?}", v.unchecked_because);
                assert!(!v.reject && v.replacement.is_none());
            }
            let v = judge(Mode::Strict, &chat(), body);
            assert_eq!(v.outcome, "rejected");
            assert!(v.reject && v.replacement.is_none());
            assert_eq!(v.found[0].rule.id(), "malformed");
            assert!(v.found[0]
                .message
                .starts_with("the body cannot be checked: "));
        }
    }
}
