//! mend keeps LLM conversation histories valid for every provider API.
//!
//! This crate is the engine: it reads a request body of one of five dialects
//! (OpenAI chat, OpenAI Responses, Anthropic Messages, Gemini, Bedrock Converse), maps its history onto a
//! dialect-neutral [`chain::Chain`], and runs the rule catalog over it. Every
//! finding names its rule, a JSON pointer into the body, what is wrong, and the error
//! text the provider itself would answer with.
//!
//! It is not an HTTP client and never sends anything: call it just before you do.
//!
//! The API, all at the crate root:
//!
//! | call | does | options | result |
//! |---|---|---|---|
//! | [`check`], [`check_value`], [`check_doc`], [`check_confirmed`] | finds what the provider would reject | [`CheckOptions`] | [`Report`] of [`Violation`]s |
//! | [`repair()`] | the fewest edits that make the body valid | [`RepairOptions`] | [`Repaired`] with its [`Edit`]s |
//! | [`trim()`] | fits a token budget without cutting a call group | [`TrimOptions`] | [`Trimmed`] |
//! | [`convert()`], [`convert_owned`] | the same conversation in another dialect, with what was lost | [`ConvertOptions`] | [`Converted`] |
//! | [`next_request`] | the next request after a response (JSON or SSE) and tool results | [`NextOptions`] | [`next::Next`] |
//! | [`read_response`], [`read_stream`], [`StreamCapture`] | a response or stream as canonical messages | | [`Message`]s |
//! | [`Rule::spec`] | the rule catalog: texts, repair, doc, example | | [`RuleSpec`] |
//! | [`detect_dialect`], [`confirm_dialect`], [`confirm_dialect_bytes`] | the dialect a body reads as; a given one held against it | | [`Dialect`], [`Error::Contradicted`] |
//!
//! The modules hold the rest of each part's types. The engine's internals (the dialect
//! readers, the SSE splitter) are private; [`chain`], [`groups`] and [`canonical`] are
//! public because tools read them (`mend inspect`, the store, trim's properties).
//!
//! ```
//! let body = br#"{"model": "gpt-4o", "messages": [
//!   {"role": "user", "content": "weather?"},
//!   {"role": "assistant", "content": null,
//!    "tool_calls": [{"id": "call_1", "type": "function",
//!                    "function": {"name": "weather", "arguments": "{}"}}]},
//!   {"role": "user", "content": "and?"}
//! ]}"#;
//! let report = mend::check(body, &mend::CheckOptions::default()).unwrap();
//! assert!(!report.valid());
//! assert_eq!(report.violations[0].rule.id(), "tool-call-without-result");
//! assert_eq!(report.violations[0].path, "/messages/1/tool_calls/0");
//! ```
#![deny(missing_docs)]

pub mod canonical;
pub mod chain;
pub mod convert;
mod dialect;
mod eventstream;
pub mod groups;
pub mod json;
pub mod next;
pub mod profile;
pub mod repair;
mod role;
pub mod rules;
mod sse;
mod tokens;
pub mod trim;
mod violation;

use serde_json::Value;

pub use canonical::capture::{read_response, read_stream, StreamCapture};
pub use canonical::{Conversation, Message, Part};
pub use convert::{convert, convert_owned, ConvertOptions, Converted};
pub use dialect::{detect as detect_dialect, kind_of as json_kind, Dialect, Undetected};
pub use next::{next_request, NextOptions, ToolOutput};
pub use profile::{Profile, ProfileId};
pub use repair::{repair, Edit, MissingResult, OrphanResult, RepairOptions, Repaired};
pub use role::Role;
pub use rules::RuleSpec;
pub use trim::{trim, TrimOptions, Trimmed};
pub use violation::{Loc, Rule, Severity, Violation};

use chain::Chain;
use json::Json;

/// What to check a body as. Everything is optional: the dialect is detected, the
/// provider defaults to the dialect's generic profile (or the one the model names).
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The dialect; detected from the endpoint or the body when `None`.
    pub dialect: Option<Dialect>,
    /// A provider profile name (`openai`, `mistral`, ...).
    pub provider: Option<String>,
    /// The model, when the body does not say (Gemini bodies never do).
    pub model: Option<String>,
    /// The endpoint path the body is sent to, to tell the dialect.
    pub endpoint: Option<String>,
}

/// Why a body could not be checked at all.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bytes are not a JSON document.
    #[error("{0}")]
    Parse(#[from] ParseError),
    /// The dialect could not be told.
    #[error("{0}")]
    Undetected(Undetected),
    /// No such provider profile.
    #[error("unknown provider '{name}' (known: {known})")]
    UnknownProvider {
        /// What was asked for.
        name: String,
        /// The known names.
        known: String,
    },
    /// The dialect given contradicts the body, which reads unambiguously as another.
    #[error("the body reads as {detected}, not as {given} as given: give its dialect, or force reading it as {given} (--force), which loses what {given} cannot read")]
    Contradicted {
        /// The dialect given.
        given: Dialect,
        /// The dialect the body reads as.
        detected: Dialect,
    },
    /// The provider profile does not refine this dialect.
    #[error("provider '{provider}' does not serve the {dialect} dialect")]
    ProviderMismatch {
        /// The profile.
        provider: String,
        /// The dialect.
        dialect: Dialect,
    },
}

/// A body that is not JSON: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason} at line {line}, column {column}")]
pub struct ParseError {
    /// 1-based line (0 when the input is empty).
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// Why.
    pub reason: String,
}

/// Parse request bytes into JSON, with an error that says where and why.
pub fn parse_body(bytes: &[u8]) -> Result<Value, ParseError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => Ok(v),
        Err(e) => Err(explain(bytes, &e)),
    }
}

fn explain(bytes: &[u8], e: &serde_json::Error) -> ParseError {
    // serde_json says column 0 for an error right after a newline; columns are 1-based.
    let (line, column) = (e.line(), e.column().max(1));
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return ParseError {
            line: 0,
            column: 0,
            reason: "empty input: no JSON at all".into(),
        };
    }
    if let Err(u) = std::str::from_utf8(bytes) {
        let at = u.valid_up_to();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at
            - bytes[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map(|p| p + 1)
                .unwrap_or(0)
            + 1;
        return ParseError {
            line,
            column,
            reason: format!("invalid UTF-8 (byte {at})"),
        };
    }
    let msg = e.to_string();
    let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
    let reason = if bytes.starts_with(b"\xEF\xBB\xBF") && (line, column) == (1, 1) {
        // Editors on Windows write one; JSON (RFC 8259, section 8.1) has none.
        "not JSON: it starts with a byte-order mark (EF BB BF); save the file as UTF-8 without one"
            .to_string()
    } else if e.is_eof() {
        format!("truncated JSON: {msg}")
    } else if msg.contains("recursion limit") {
        "JSON nested too deeply (more than 128 levels)".to_string()
    } else {
        format!("not JSON: {msg}")
    };
    ParseError {
        line,
        column,
        reason,
    }
}

/// A finished check.
#[derive(Debug, Clone)]
pub struct Report {
    /// The dialect the body was read as.
    pub dialect: Dialect,
    /// The provider profile used.
    pub provider: &'static str,
    /// Findings, in body order.
    pub violations: Vec<Violation>,
}

impl Report {
    /// No error-severity findings.
    pub fn valid(&self) -> bool {
        !self
            .violations
            .iter()
            .any(|v| v.severity == Severity::Error)
    }
}

/// A check that keeps the chain, for tables and tools that want to look further.
#[derive(Debug, Clone)]
pub struct Analysis<'a> {
    /// The dialect.
    pub dialect: Dialect,
    /// The profile.
    pub profile: &'static Profile,
    /// The chain, borrowing the body.
    pub chain: Chain<'a>,
    /// Findings.
    pub violations: Vec<Violation>,
    /// Calls and the results that answer them, as (call node, result node) indexes
    /// into `chain.nodes`.
    pub pairs: Vec<(usize, usize)>,
}

/// The `malformed` finding that means the body has no readable history at all (the body
/// is not an object, or its history key is missing or of the wrong type): a tool should
/// treat it as bad input rather than as a verdict.
pub fn unreadable_history(dialect: Dialect, violations: &[Violation]) -> Option<&Violation> {
    let root = format!("/{}", dialect.history_key());
    violations
        .iter()
        .find(|v| v.rule == Rule::Malformed && (v.path.is_empty() || v.path == root))
}

impl Analysis<'_> {
    /// The history cut into its protected prefix and atomic units, with `protect` history
    /// turns pinned after the instructions.
    pub fn groups(&self, protect: usize) -> groups::Groups {
        groups::atomic_groups(&self.chain, self.dialect, &self.pairs, protect)
    }

    /// No error-severity findings.
    pub fn valid(&self) -> bool {
        !self
            .violations
            .iter()
            .any(|v| v.severity == Severity::Error)
    }

    /// Drop the chain, keep the verdict.
    pub fn into_report(self) -> Report {
        Report {
            dialect: self.dialect,
            provider: self.profile.name,
            violations: self.violations,
        }
    }
}

/// Pick the dialect for a body under the options.
pub fn resolve_dialect(body: &Value, opts: &CheckOptions) -> Result<Dialect, Error> {
    resolve_dialect_in(body, opts)
}

fn resolve_dialect_in<'a, J: Json<'a>>(body: J, opts: &CheckOptions) -> Result<Dialect, Error> {
    if let Some(d) = opts.dialect {
        return Ok(d);
    }
    if let Some(d) = opts.endpoint.as_deref().and_then(Dialect::from_endpoint) {
        return Ok(d);
    }
    dialect::detect_in(body).map_err(Error::Undetected)
}

/// Hold a dialect a caller gives against the body's: an error when the body reads
/// unambiguously as another dialect (a body that fits several, or none, contradicts
/// nothing). Every command of the CLI that takes a dialect asks this before reading;
/// [`CheckOptions::dialect`] itself is taken as it is (a gateway knows the dialect from
/// the endpoint).
///
/// ```
/// use mend::{confirm_dialect, Dialect, Error};
/// let gemini = serde_json::json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
/// assert!(confirm_dialect(&gemini, Dialect::Gemini).is_ok());
/// assert!(matches!(confirm_dialect(&gemini, Dialect::OpenAiChat),
///     Err(Error::Contradicted { given: Dialect::OpenAiChat, detected: Dialect::Gemini })));
/// // A plain text history with max_tokens fits chat and Anthropic alike: no contradiction.
/// let plain = serde_json::json!({"max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]});
/// assert!(confirm_dialect(&plain, Dialect::Anthropic).is_ok());
/// ```
pub fn confirm_dialect(body: &Value, given: Dialect) -> Result<(), Error> {
    confirm_dialect_in(body, given)
}

/// [`confirm_dialect`] over a body read onto a [`json`] tape (see [`check_doc`]).
pub fn confirm_dialect_doc(doc: &json::Doc, given: Dialect) -> Result<(), Error> {
    confirm_dialect_in(doc.root(), given)
}

/// [`confirm_dialect`] of a body's bytes: read on the tape, or by serde_json when the tape
/// declines them (bytes that are not JSON are [`Error::Parse`], with where and why).
pub fn confirm_dialect_bytes(bytes: &[u8], given: Dialect) -> Result<(), Error> {
    match json::parse(bytes) {
        Some(doc) => confirm_dialect_doc(&doc, given),
        None => confirm_dialect(&parse_body(bytes)?, given),
    }
}

fn confirm_dialect_in<'a, J: Json<'a>>(body: J, given: Dialect) -> Result<(), Error> {
    match dialect::detect_in(body) {
        Ok(detected) if detected != given => Err(Error::Contradicted { given, detected }),
        _ => Ok(()),
    }
}

/// Pick the provider profile for a dialect under the options.
pub fn resolve_profile(
    dialect: Dialect,
    model: Option<&str>,
    opts: &CheckOptions,
) -> Result<&'static Profile, Error> {
    if let Some(name) = &opts.provider {
        let p = Profile::named(name).ok_or_else(|| Error::UnknownProvider {
            name: name.clone(),
            known: Profile::names().join(", "),
        })?;
        if !p.fits(dialect) {
            return Err(Error::ProviderMismatch {
                provider: p.name.to_string(),
                dialect,
            });
        }
        return Ok(p);
    }
    if let Some(p) = model.and_then(Profile::for_model) {
        if p.fits(dialect) {
            return Ok(p);
        }
    }
    Ok(Profile::default_for(dialect))
}

/// Check a parsed body and keep the chain.
pub fn analyze<'a>(body: &'a Value, opts: &'a CheckOptions) -> Result<Analysis<'a>, Error> {
    analyze_in(body, opts)
}

/// [`analyze`] over either view of a body: a `Value`, or the tape [`check`] reads.
fn analyze_in<'a, J: Json<'a>>(body: J, opts: &'a CheckOptions) -> Result<Analysis<'a>, Error> {
    let dialect = resolve_dialect_in(body, opts)?;
    let mut violations = Vec::new();
    let mut chain = dialect.read_chain(body, &mut violations);
    if let Some(m) = opts.model.as_deref() {
        // The caller's word wins over the body's (Gemini bodies carry no model).
        chain.facts.model = Some(m);
    }
    let profile = resolve_profile(dialect, chain.facts.model, opts)?;
    profile.check_wire(dialect, body, &mut violations);
    let ctx = rules::Ctx {
        chain: &chain,
        dialect,
        profile,
        params: rules::Params::of(dialect, profile),
        history: chain.turns_under(dialect.history_key()),
    };
    let pairs = rules::run(&ctx, &mut violations);
    sort_by_position(&mut violations);
    Ok(Analysis {
        dialect,
        profile,
        chain,
        violations,
        pairs,
    })
}

/// Order findings by where they are in the body, then by rule, so output is stable.
fn sort_by_position(v: &mut [Violation]) {
    v.sort_by(|a, b| {
        pointer_key(&a.path)
            .cmp(&pointer_key(&b.path))
            .then(a.rule.cmp(&b.rule))
    });
}

fn pointer_key(p: &str) -> Vec<(u64, &str)> {
    p.split('/')
        .skip(1)
        .map(|s| (s.parse::<u64>().unwrap_or(u64::MAX), s))
        .collect()
}

/// Parse and check request bytes.
///
/// The bytes are read onto a [`json`] tape, never into a `Value`: strings are borrowed
/// and what no rule reads is skipped. A body the tape reader declines (not JSON, or one
/// of the rare shapes it leaves to serde_json) is read through [`parse_body`] and
/// [`check_value`] instead, so the report (and a parse error's text) is always the one
/// `check_value` gives.
pub fn check(bytes: &[u8], opts: &CheckOptions) -> Result<Report, Error> {
    if let Some(doc) = json::parse(bytes) {
        return check_doc(&doc, opts);
    }
    let body = parse_body(bytes)?;
    check_value(&body, opts)
}

/// [`check`], holding a dialect given in `opts` against the body first, as
/// [`confirm_dialect`] does: a body that reads unambiguously as another dialect is
/// [`Error::Contradicted`]. The bytes are read once (on the tape, or by serde_json when
/// the tape declines them).
pub fn check_confirmed(bytes: &[u8], opts: &CheckOptions) -> Result<Report, Error> {
    if let Some(doc) = json::parse(bytes) {
        if let Some(d) = opts.dialect {
            confirm_dialect_doc(&doc, d)?;
        }
        return check_doc(&doc, opts);
    }
    let body = parse_body(bytes)?;
    if let Some(d) = opts.dialect {
        confirm_dialect(&body, d)?;
    }
    check_value(&body, opts)
}

/// Check a body read onto a [`json`] tape (the same report [`check_value`] gives for
/// its `Value`).
pub fn check_doc(doc: &json::Doc, opts: &CheckOptions) -> Result<Report, Error> {
    analyze_doc(doc, opts).map(Analysis::into_report)
}

/// [`analyze`] on the tape of a body's bytes.
pub(crate) fn analyze_doc<'a>(
    doc: &'a json::Doc,
    opts: &'a CheckOptions,
) -> Result<Analysis<'a>, Error> {
    analyze_in(doc.root(), opts)
}

/// Check a parsed body.
pub fn check_value(body: &Value, opts: &CheckOptions) -> Result<Report, Error> {
    analyze(body, opts).map(Analysis::into_report)
}
