//! Conversion of a request body from one dialect to another, with a report of every loss.
//!
//! ```text
//! source body ─repair(source)─▶ Conversation ─carry parts─▶ reshape turns ─write─▶ target body
//!                                   │                                               │
//!                                   └─ settings (tools, tool_choice, limits) ───────┤
//!                                                                         repair(target) ─▶ check
//! ```
//!
//! 0. A source dialect the body contradicts (it reads unambiguously as another) is an
//!    error, unless [`ConvertOptions::force`]: then a loss, and what the given dialect
//!    cannot read of the body is reported lost like any other part.
//! 1. A source history that breaks its own dialect's rules is repaired first, in that
//!    dialect (under [`ConvertOptions::source_model`] when its body names no model), so
//!    that the conversion starts from what the source provider would accept.
//! 2. The body is read into the canonical model and every part is carried to what the
//!    target can hold. What it cannot (a signature from another provider, encrypted
//!    reasoning, a server tool block, a provider item id, a wire field with no
//!    equivalent) is left out and reported as a [`Note`] of kind [`NoteKind::Lost`], with
//!    the JSON pointer of the source. Nothing is left out silently; values that carry
//!    nothing (`null`, empty strings and lists, the wire's own type tags) are not reported.
//!    Claude's reasoning is the exception between Anthropic and Converse, which serve the
//!    same models: signed thinking keeps its signature, redacted thinking its data.
//! 3. Turns are reshaped for the target: tool results become `tool` messages (OpenAI
//!    chat), `function_call_output` items (Responses), `tool_result` blocks at the start
//!    of a user message (Anthropic), `toolResult` blocks likewise (Converse) or
//!    `functionResponse` parts of a user turn with the call's name (Gemini: a tool's
//!    images and files go beside the response, in `functionResponse.parts`, when the
//!    target model is Gemini 3 or later, and are reported lost otherwise; from Gemini,
//!    they join the result's content where the target holds media); consecutive
//!    turns of one role are merged where the target wants alternation; instructions go
//!    where the target keeps them. Call ids Converse would refuse (other than
//!    `[a-zA-Z0-9_-]`, 1 to 64 characters) are rewritten, alike in calls and results, and
//!    said in a note.
//! 4. Top-level settings are mapped field by field (tools, tool choice, token limit,
//!    sampling, stop sequences, stream, answer format, thinking budgets and levels); see
//!    [`settings`]. The model of a target that takes it in the URL (Gemini, Converse) is
//!    said in a note. The model of one that takes it in the body is `--model`'s, else the
//!    source's as the target names it (`model.rs`: a Bedrock or Vertex Claude id becomes
//!    Anthropic's), never one that would make the body read as another dialect (a Claude
//!    model in a chat body); when none is left, a note of kind [`NoteKind::Missing`]
//!    asks for it, since nothing else may tell the body's dialect. A
//!    Converse target whose history holds tool blocks but that declares no function tool
//!    is not given invented tools: its check reports `tools-undeclared`.
//! 5. The target body is repaired under the target's provider profile: call ids are
//!    rewritten to the form it needs (OpenAI: at most 40 characters; Mistral: 9
//!    alphanumerics; Anthropic: `[a-zA-Z0-9_-]`), consistently for calls and results,
//!    and documented placeholders are filled (Gemini 3's thought signature). Then it is
//!    checked: [`Converted::violations`] holds what remains.
//!
//! Invariant: the output is written by the canonical writers from modeled parts only;
//! extras and forms of the source never reach the target.
//!
//! ```
//! use mend::convert::{convert, ConvertOptions};
//! use mend::Dialect;
//! let chat = serde_json::json!({"model": "gpt-4o", "messages": [
//!     {"role": "user", "content": "weather in Paris?"},
//!     {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
//!         "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]},
//!     {"role": "tool", "tool_call_id": "call_1", "content": "18C"}]});
//! let out = convert(&chat, Dialect::OpenAiChat, Dialect::Anthropic, &ConvertOptions::default()).unwrap();
//! assert!(out.valid());
//! assert_eq!(out.body["messages"][2]["content"][0]["type"], "tool_result");
//! ```

use crate::json::Field;
use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::canonical::{Conversation, ReadError, WriteError};
use crate::repair::{self, Edit, MissingResult, OrphanResult, RepairOptions};
use crate::violation::{Rule, Severity, Violation};
use crate::{CheckOptions, Dialect, Error, Profile};

mod messages;
mod model;
mod paths;
pub mod settings;

pub use model::anthropic_model_name;

/// What to convert to, and how.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// The target's provider profile (`openai`, `mistral`, `deepseek`...). Default: the
    /// one the model names, else the target dialect's first-party provider (`openai`,
    /// `anthropic`, `gemini`).
    pub provider: Option<String>,
    /// The source's provider profile, for the source repair. Default: as for check.
    pub source_provider: Option<String>,
    /// The target model, written as it is. Default: the source's model as the target's
    /// provider names it (a Bedrock or Vertex Claude id becomes Anthropic's), unless it
    /// would make the target body read as another dialect (see `model.rs`).
    pub model: Option<String>,
    /// The source's model, when its body does not say (a Converse or Gemini body names
    /// none: it is in the URL): the source repair's rules follow it, and it is the
    /// target's default model. A `model` in the source body is overridden.
    pub source_model: Option<String>,
    /// The token limit to write when the target requires one and the source has none
    /// (Anthropic's `max_tokens`). Default: [`settings::DEFAULT_MAX_TOKENS`].
    pub max_tokens: Option<u64>,
    /// What to do with calls that have no result, in either repair.
    pub missing_result: MissingResult,
    /// What to do with results that answer no call, in either repair.
    pub orphan_result: OrphanResult,
    /// Convert as it is: no repair of the source nor of the target, so the target check
    /// reports what the source broke (for a store rendering what it holds, or a
    /// validation that must see the violations).
    pub no_repair: bool,
    /// Convert from `from` even when the body reads unambiguously as another dialect;
    /// what `from` cannot read of it is reported lost. Without it that is an error.
    pub force: bool,
}

/// What a note says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NoteKind {
    /// The target cannot carry it: it is not in the output.
    Lost,
    /// Written because the target requires it and the source did not say.
    Added,
    /// Carried, but to another place or form (a system message moved to the top).
    Moved,
    /// Carried with another value, because the target constrains it (a thinking budget
    /// raised to Anthropic's minimum, a Bedrock model id under Anthropic's name).
    Changed,
    /// The target needs it and the conversion cannot say it: the caller must (the model
    /// of a target that takes it in the body).
    Missing,
}

impl NoteKind {
    /// `lost`, `added` or `moved`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::Lost => "lost",
            NoteKind::Added => "added",
            NoteKind::Moved => "moved",
            NoteKind::Changed => "changed",
            NoteKind::Missing => "missing",
        }
    }
}

/// One thing the conversion could not carry as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    /// Lost, added, moved, changed or missing.
    pub kind: NoteKind,
    /// A stable slug of what: `signature`, `reasoning`, `encrypted-reasoning`,
    /// `item-id`, `opaque-part`, `verbatim-item`, `field`, `is-error`, `media`, `tool`,
    /// `setting`, `system`, `max-tokens`, `model`, `call-id`, `thinking`,
    /// `response-format`, `dialect`.
    pub what: &'static str,
    /// JSON pointer in the source body (for `added`, in the target body).
    pub path: String,
    /// What exactly, in a sentence.
    pub detail: String,
}

impl Note {
    pub(crate) fn new(kind: NoteKind, what: &'static str, path: String, detail: String) -> Note {
        Note {
            kind,
            what,
            path,
            detail,
        }
    }
}

/// Which body a repair edit was made on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// The source body, before conversion (paths are source pointers).
    Source,
    /// The converted body (paths are target pointers).
    Target,
}

/// A repair edit made during conversion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StagedEdit {
    /// On which body.
    pub stage: Stage,
    /// The edit.
    #[serde(flatten)]
    pub edit: Edit,
}

/// The outcome of a conversion.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The source dialect.
    pub from: Dialect,
    /// The target dialect.
    pub to: Dialect,
    /// The target's provider profile.
    pub provider: &'static str,
    /// The model the target was checked under: the one its body names, or, for Gemini
    /// and Converse, which take it in the URL, the one the caller sends it to.
    pub model: Option<String>,
    /// The target body.
    pub body: Value,
    /// What was lost, added or moved, in source order.
    pub notes: Vec<Note>,
    /// Repair edits on the source and on the target.
    pub edits: Vec<StagedEdit>,
    /// What the target check still finds (errors and warnings).
    pub violations: Vec<Violation>,
    /// Rules whose fixes repair held back, in the source or the target (see
    /// [`Repaired::held_back`](crate::Repaired::held_back)).
    pub held_back: Vec<Rule>,
}

impl Converted {
    /// The target body has no error-severity violations.
    pub fn valid(&self) -> bool {
        !self
            .violations
            .iter()
            .any(|v| v.severity == Severity::Error)
    }

    /// The notes of kind [`NoteKind::Lost`].
    pub fn losses(&self) -> impl Iterator<Item = &Note> {
        self.notes.iter().filter(|n| n.kind == NoteKind::Lost)
    }
}

/// Why a body could not be converted at all.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// The source could not be checked (unknown provider, a profile that does not fit).
    #[error("{0}")]
    Check(#[from] Error),
    /// The source body is not a request of its dialect.
    #[error("{0}")]
    Read(#[from] ReadError),
    /// The source has no history mend can read.
    #[error("{path}: {reason}")]
    Unreadable {
        /// JSON pointer in the source.
        path: String,
        /// Why.
        reason: String,
    },
    /// A part the target has no place for survived the carrying (a bug in the carrying
    /// rules rather than in the input; reported with the source message it came from).
    #[error("{path}: cannot be written as {to}: {reason}")]
    Write {
        /// The target dialect.
        to: Dialect,
        /// JSON pointer of the source message.
        path: String,
        /// Why.
        reason: String,
    },
}

/// The profile a conversion to `to` uses.
pub fn target_profile(
    to: Dialect,
    model: Option<&str>,
    provider: Option<&str>,
) -> Result<&'static Profile, Error> {
    let named = match provider {
        Some(p) => Some(p),
        None if model
            .and_then(Profile::for_model)
            .is_some_and(|p| p.fits(to)) =>
        {
            None
        }
        None => Some(match to {
            Dialect::OpenAiChat | Dialect::OpenAiResponses => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::BedrockConverse => "bedrock",
        }),
    };
    let opts = CheckOptions {
        dialect: Some(to),
        provider: named.map(str::to_string),
        ..CheckOptions::default()
    };
    crate::resolve_profile(to, model, &opts)
}

/// Convert a request body of `from` into one of `to`.
///
/// ```
/// use mend::Dialect;
/// let chat = serde_json::json!({"model": "gpt-4o", "messages": [
///     {"role": "system", "content": "be brief"},
///     {"role": "user", "content": "weather?"},
///     {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
///         "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
///     {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
/// ]});
/// let to = mend::convert(&chat, Dialect::OpenAiChat, Dialect::Anthropic,
///     &mend::ConvertOptions::default()).unwrap();
/// assert_eq!(to.body["system"][0]["text"], "be brief");
/// // The tool result is a tool_result block in the user message after the call.
/// assert_eq!(to.body["messages"][2]["content"][0]["type"], "tool_result");
/// assert!(to.violations.is_empty());
/// ```
pub fn convert(
    body: &Value,
    from: Dialect,
    to: Dialect,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    convert_from(Cow::Borrowed(body), from, to, opts)
}

/// [`convert`], taking the body (a caller that parsed it for the conversion, or made
/// it, as the CLI and the bindings do): a damaged source is repaired in place rather
/// than in a copy, and a chat source's strings are moved into the conversation rather
/// than copied. The outcome is [`convert`]'s.
pub fn convert_owned(
    body: Value,
    from: Dialect,
    to: Dialect,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    convert_from(Cow::Owned(body), from, to, opts)
}

/// [`convert`] of a body borrowed or given.
fn convert_from(
    body: Cow<'_, Value>,
    from: Dialect,
    to: Dialect,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    let mut notes = Vec::new();
    if let Err(Error::Contradicted { detected, .. }) = crate::confirm_dialect(&body, from) {
        if !opts.force {
            return Err(Error::Contradicted {
                given: from,
                detected,
            }
            .into());
        }
        notes.push(Note::new(
            NoteKind::Lost,
            "dialect",
            String::new(),
            format!(
                "the body reads as {detected} and was converted as {from} (forced): what {from} cannot read of it is lost"
            ),
        ));
    }
    // Owned: the body may be given to the source repair below.
    let source_model = opts.source_model.clone().or_else(|| {
        body.field("model")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let source_model = source_model.as_deref();
    let model = if from == to {
        opts.model.as_deref().or(source_model).map(str::to_string)
    } else {
        model::target_model(opts.model.as_deref(), source_model, to, &mut notes)
    };
    let model = model.as_deref();
    let profile = target_profile(to, model, opts.provider.as_deref())?;
    let mut edits = Vec::new();
    let mut held_back = Vec::new();

    // 1. The source, repaired in its own dialect.
    let source = if opts.no_repair {
        body
    } else {
        let fixed = repaired(
            body,
            &RepairOptions {
                check: CheckOptions {
                    dialect: Some(from),
                    provider: opts.source_provider.clone(),
                    model: source_model.map(str::to_string),
                    endpoint: None,
                },
                missing_result: opts.missing_result,
                orphan_result: opts.orphan_result,
                synthesized_text: None,
            },
        )?;
        if let Some(v) = crate::unreadable_history(from, &fixed.unrepairable) {
            return Err(ConvertError::Unreadable {
                path: v.path.clone(),
                reason: v.message.clone(),
            });
        }
        held_back.extend(fixed.held_back.iter().copied());
        edits.extend(fixed.edits.into_iter().map(|edit| StagedEdit {
            stage: Stage::Source,
            edit,
        }));
        fixed.body
    };

    // 2-4. Carried, reshaped and written.
    let converted = if from == to {
        source.into_owned()
    } else {
        carry_and_write(source, from, to, opts, model, profile, &mut notes)?
    };

    // 5. The target, under its profile.
    let target_check = CheckOptions {
        dialect: Some(to),
        provider: Some(profile.name.to_string()),
        model: model.map(str::to_string),
        endpoint: None,
    };
    if opts.no_repair {
        let report = crate::check_value(&converted, &target_check)?;
        return Ok(Converted {
            from,
            to,
            provider: profile.name,
            model: model.map(str::to_string),
            body: converted,
            notes,
            edits,
            violations: report.violations,
            held_back,
        });
    }
    let fixed = repaired(
        Cow::Owned(converted),
        &RepairOptions {
            check: target_check,
            missing_result: opts.missing_result,
            orphan_result: opts.orphan_result,
            synthesized_text: None,
        },
    )?;
    edits.extend(fixed.edits.into_iter().map(|edit| StagedEdit {
        stage: Stage::Target,
        edit,
    }));
    let mut violations = fixed.unrepairable;
    violations.extend(fixed.warnings);
    held_back.extend(fixed.held_back);
    held_back.sort_unstable();
    held_back.dedup();
    Ok(Converted {
        from,
        to,
        provider: profile.name,
        model: model.map(str::to_string),
        body: fixed.body.into_owned(),
        notes,
        edits,
        violations,
        held_back,
    })
}

/// Steps 2 to 4: `source`, read as `from`, carried into `to`'s shape with its settings,
/// and written.
fn carry_and_write(
    source: Cow<'_, Value>,
    from: Dialect,
    to: Dialect,
    opts: &ConvertOptions,
    model: Option<&str>,
    profile: &'static Profile,
    notes: &mut Vec<Note>,
) -> Result<Value, ConvertError> {
    // A repaired chat source is convert's own copy: its strings and top-level members are
    // moved into the conversation. Any other source is read with its top-level members
    // left in the body, where the settings read them.
    let (mut conv, body) = match source {
        Cow::Owned(Value::Object(obj)) if from == Dialect::OpenAiChat => {
            (Conversation::from_chat_owned(obj), None)
        }
        source => (
            Conversation::from_request_keys(from, &source)?,
            Some(source),
        ),
    };
    let paths = paths::SourcePaths::new(from, &conv);
    let write_error = |origins: &[usize], e: WriteError| {
        let origin = origins.get(e.message).copied().unwrap_or(0);
        ConvertError::Write {
            to,
            path: paths.message(origin),
            reason: e.reason,
        }
    };
    // Carrying reads the source again only to pair calls and results that have no id:
    // a source given up is written back for that (the body read, as its own dialect
    // writes it).
    let rebuilt;
    let source: &Value = match &body {
        Some(b) => b,
        None if messages::lacks_ids(&conv) => {
            rebuilt = conv.to_request(from).map_err(|e| write_error(&[], e))?;
            &rebuilt
        }
        None => &Value::Null,
    };
    let shaped = messages::carry(source, &mut conv, &paths, (to, model), profile, notes);
    let request = match &body {
        Some(b) => {
            settings::convert_settings(conv.request_in(b), from, to, opts, model, profile, notes)
        }
        None => settings::convert_settings(&conv.request, from, to, opts, model, profile, notes),
    };
    let out = Conversation {
        dialect: None,
        form: None,
        request,
        messages: shaped.messages,
    };
    let mut written = out
        .into_request(to)
        .map_err(|e| write_error(&shaped.origins, e))?;
    if to == Dialect::OpenAiChat {
        plain_text_as_string(&mut written);
    }
    Ok(written)
}

/// What [`repair::repair`] gives, with the body kept as it came when nothing needed doing.
struct Fixed<'a> {
    body: Cow<'a, Value>,
    edits: Vec<Edit>,
    unrepairable: Vec<Violation>,
    warnings: Vec<Violation>,
    held_back: Vec<Rule>,
}

/// Repair `body`, or keep it without a copy when its check finds no error: repair's
/// outcome then is the body as it was, no edit, and the check's warnings, and its
/// copy of a body (the size of the conversation) is the largest cost of a conversion
/// after the check itself. A body with errors goes through [`repair::repair`]; one that
/// is convert's own (given, or written by it) through [`repair::repair_owned`], which
/// hands a valid body back as it is and repairs a damaged one in place.
fn repaired<'a>(body: Cow<'a, Value>, opts: &RepairOptions) -> Result<Fixed<'a>, Error> {
    let body = match body {
        Cow::Owned(body) => {
            let fixed = repair::repair_owned(body, opts)?;
            return Ok(Fixed {
                body: Cow::Owned(fixed.body),
                edits: fixed.edits,
                unrepairable: fixed.unrepairable,
                warnings: fixed.warnings,
                held_back: fixed.held_back,
            });
        }
        Cow::Borrowed(body) => body,
    };
    let analysis = crate::analyze(body, &opts.check)?;
    if !analysis
        .violations
        .iter()
        .any(|v| v.severity == Severity::Error)
    {
        let warnings = analysis.violations;
        return Ok(Fixed {
            body: Cow::Borrowed(body),
            edits: Vec::new(),
            unrepairable: Vec::new(),
            warnings,
            held_back: Vec::new(),
        });
    }
    // Repair's first pass plans from this check rather than making it again.
    let fixed = repair::repair_analyzed(body, opts, Some(analysis))?;
    Ok(Fixed {
        body: Cow::Owned(fixed.body),
        edits: fixed.edits,
        unrepairable: fixed.unrepairable,
        warnings: fixed.warnings,
        held_back: fixed.held_back,
    })
}

/// Chat content that is one plain text part is written as a string: the form every
/// compatible API takes (several type `content` as a string only).
fn plain_text_as_string(body: &mut Value) {
    let Some(msgs) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    for m in msgs {
        let Some(content) = m.get_mut("content") else {
            continue;
        };
        let text = match content.as_array().map(Vec::as_slice) {
            Some([part]) => match part.as_object() {
                Some(o) if o.len() == 2 && o.field("type") == Some(&Value::from("text")) => {
                    o.field("text").and_then(Value::as_str).map(str::to_string)
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(t) = text {
            *content = Value::String(t);
        }
    }
}
