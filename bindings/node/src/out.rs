//! What the calls give back: plain objects, camelCase, each field the library's.

use napi::bindgen_prelude::Unknown;
use napi_derive::napi;

/// One finding.
#[napi(object, object_from_js = false)]
pub struct Violation {
    /// The rule's id (`tool-result-without-call`, ...; see `rules()`).
    pub rule: String,
    /// `error` (the provider answers 400) or `warning` (some deployments or models only).
    #[napi(ts_type = "'error' | 'warning'")]
    pub severity: String,
    /// A JSON pointer into the body.
    pub path: String,
    /// What, where and why, naming the ids involved.
    pub message: String,
    /// The provider's own error text with the real ids, when known.
    pub provider_error: Option<String>,
}

impl From<&mend::Violation> for Violation {
    fn from(v: &mend::Violation) -> Violation {
        Violation {
            rule: v.rule.id().to_string(),
            severity: v.severity.as_str().to_string(),
            path: v.path.clone(),
            message: v.message.clone(),
            provider_error: v.provider_error.clone(),
        }
    }
}

pub(crate) fn violations<'a>(vs: impl IntoIterator<Item = &'a mend::Violation>) -> Vec<Violation> {
    vs.into_iter().map(Violation::from).collect()
}

/// A finished check.
#[napi(object, object_from_js = false)]
pub struct Report {
    /// No error-severity findings: the provider would take it.
    pub valid: bool,
    /// The dialect the body was read as.
    #[napi(ts_type = "Dialect")]
    pub dialect: String,
    /// The provider profile used.
    pub provider: String,
    /// Findings, in body order.
    pub violations: Vec<Violation>,
}

/// One edit a repair made.
#[napi(object, object_from_js = false)]
pub struct Edit {
    /// The rule whose finding it repairs.
    pub rule: String,
    /// Where, as a JSON pointer into the body as it was when the edit was made.
    pub path: String,
    /// `drop`, `insert`, `move`, `rename`, `set`, `reorder` or `convert`.
    pub action: String,
    /// What exactly.
    pub detail: String,
}

impl From<&mend::Edit> for Edit {
    fn from(e: &mend::Edit) -> Edit {
        Edit {
            rule: e.rule.id().to_string(),
            path: e.path.clone(),
            action: e.action.to_string(),
            detail: e.detail.clone(),
        }
    }
}

pub(crate) fn edits<'a>(es: impl IntoIterator<Item = &'a mend::Edit>) -> Vec<Edit> {
    es.into_iter().map(Edit::from).collect()
}

/// A finished repair.
#[napi(object, object_from_js = false)]
pub struct Repair<'env> {
    /// The repaired body, in the form given (object, string, or Buffer for bytes); the
    /// very value passed in when nothing needed doing.
    #[napi(ts_type = "any")]
    pub body: Unknown<'env>,
    /// The output has no error-severity findings.
    pub valid: bool,
    /// Something was edited.
    pub changed: bool,
    /// The dialect the body was read as.
    #[napi(ts_type = "Dialect")]
    pub dialect: String,
    /// The provider profile used.
    pub provider: String,
    /// The edits made, in order.
    pub edits: Vec<Edit>,
    /// The errors left: what could not be repaired without guessing.
    pub unrepairable: Vec<Violation>,
    /// The warnings left (not repaired: the provider may take them).
    pub warnings: Vec<Violation>,
}

/// A unit trim dropped.
#[napi(object, object_from_js = false)]
pub struct Dropped {
    /// JSON pointers of its turns in the input body.
    pub paths: Vec<String>,
    /// `group` (a call with its results) or `turn`.
    #[napi(ts_type = "'group' | 'turn'")]
    pub kind: String,
    /// Its tokens.
    pub tokens: u32,
}

/// A finished trim.
#[napi(object, object_from_js = false)]
pub struct Trim<'env> {
    /// The trimmed body, in the form given; the value passed in when nothing was dropped
    /// or repaired.
    #[napi(ts_type = "any")]
    pub body: Unknown<'env>,
    /// The output has no error-severity findings.
    pub valid: bool,
    /// Tokens of the input (history, instructions and tool definitions).
    pub tokens_before: u32,
    /// Tokens of the output.
    pub tokens_after: u32,
    /// Still over budget: the instructions, pinned turns and the last units are kept.
    pub over_budget: bool,
    /// The counter: `o200k_base`, `cl100k_base`, or `estimate: 4 characters per token`.
    pub counter: String,
    /// The units dropped, oldest first.
    pub dropped: Vec<Dropped>,
    /// The repairs made to a damaged input before it was trimmed.
    pub repairs: Vec<Edit>,
    /// Errors of the output: when repair cannot make a damaged input valid, the input
    /// comes back untrimmed with them.
    pub violations: Vec<Violation>,
}

/// Something a conversion could not carry as it was.
#[napi(object, object_from_js = false)]
pub struct Note {
    /// `lost` (not in the output), `added` (the target requires it), `moved`, `changed`
    /// (the target constrains it) or `missing` (the caller must give it).
    #[napi(ts_type = "'lost' | 'added' | 'moved' | 'changed' | 'missing'")]
    pub kind: String,
    /// What, as a stable slug: `signature`, `reasoning`, `item-id`, `setting`, `model`...
    pub what: String,
    /// A JSON pointer into the source body (for `added`, into the target body).
    pub path: String,
    /// What exactly.
    pub detail: String,
}

impl From<&mend::convert::Note> for Note {
    fn from(n: &mend::convert::Note) -> Note {
        Note {
            kind: n.kind.as_str().to_string(),
            what: n.what.to_string(),
            path: n.path.clone(),
            detail: n.detail.clone(),
        }
    }
}

/// A repair edit made while converting.
#[napi(object, object_from_js = false)]
pub struct ConvertEdit {
    /// On which body: `source` (before conversion) or `target`.
    #[napi(ts_type = "'source' | 'target'")]
    pub stage: String,
    /// The rule whose finding it repairs.
    pub rule: String,
    /// Where, in that body.
    pub path: String,
    /// What kind of edit.
    pub action: String,
    /// What exactly.
    pub detail: String,
}

/// A finished conversion.
#[napi(object, object_from_js = false)]
pub struct Conversion<'env> {
    /// The target body, in the form the source was given.
    #[napi(ts_type = "any")]
    pub body: Unknown<'env>,
    /// The target body has no error-severity findings.
    pub valid: bool,
    /// The source dialect.
    #[napi(ts_type = "Dialect")]
    pub from: String,
    /// The target dialect.
    #[napi(ts_type = "Dialect")]
    pub to: String,
    /// The target's provider profile.
    pub provider: String,
    /// The model the target was checked under.
    pub model: Option<String>,
    /// What the target cannot carry: the notes of kind `lost`.
    pub losses: Vec<Note>,
    /// Everything lost, added, moved, changed or missing, in source order.
    pub notes: Vec<Note>,
    /// Repair edits on the source and on the target.
    pub edits: Vec<ConvertEdit>,
    /// What the target check still finds.
    pub violations: Vec<Violation>,
}

/// A tool call a response made.
#[napi(object, object_from_js = false)]
pub struct ToolCall {
    /// Its call id (Gemini calls often have none).
    pub call_id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The wire kind: `function_call`, `custom_tool_call`... for Responses; `tool_call`
    /// otherwise.
    pub kind: String,
}

impl From<&mend::next::ResponseCall> for ToolCall {
    fn from(c: &mend::next::ResponseCall) -> ToolCall {
        ToolCall {
            call_id: c.call_id.clone(),
            name: c.name.clone(),
            kind: c.kind.clone(),
        }
    }
}

/// The next request.
#[napi(object, object_from_js = false)]
pub struct NextRequest<'env> {
    /// The body to send, in the form the request was given.
    #[napi(ts_type = "any")]
    pub body: Unknown<'env>,
    /// The body checks valid and every call of the response is answered.
    pub valid: bool,
    /// The dialect.
    #[napi(ts_type = "Dialect")]
    pub dialect: String,
    /// The calls the response made, in order.
    pub calls: Vec<ToolCall>,
    /// The calls no result answers: the body is not ready to send until they are.
    pub unanswered: Vec<ToolCall>,
    /// What was done that a reader would not guess, and why.
    pub notes: Vec<String>,
    /// What the check of the body finds.
    pub violations: Vec<Violation>,
}

/// One error text a provider answers with.
#[napi(object, object_from_js = false)]
pub struct ProviderText {
    /// The dialect or provider that answers with it.
    pub provider: String,
    /// The text, abridged where it carries ids (`…`).
    pub text: String,
    /// Where it was seen.
    pub source: String,
}

/// Whether and how a rule's findings are repaired.
#[napi(object, object_from_js = false)]
pub struct RuleRepair {
    /// `always`, `sometimes` (when the history proves what to do) or `never`.
    #[napi(ts_type = "'always' | 'sometimes' | 'never'")]
    pub availability: String,
    /// What the repair does, or why there is none.
    pub how: String,
}

/// A rule of the catalog.
#[napi(object, object_from_js = false)]
pub struct RuleInfo {
    /// The stable id.
    pub id: String,
    /// One line: what is wrong.
    pub summary: String,
    /// The dialects it applies to.
    #[napi(ts_type = "Dialect[]")]
    pub dialects: Vec<String>,
    /// The provider profiles that switch it on or change it (empty: all of its dialects').
    pub profiles: Vec<String>,
    /// The severity of its findings.
    #[napi(ts_type = "'error' | 'warning'")]
    pub severity: String,
    /// The errors providers answer with, and where each was seen.
    pub provider_texts: Vec<ProviderText>,
    /// Whether and how repair fixes it.
    pub repair: RuleRepair,
    /// The long form.
    pub doc: String,
    /// A request body (JSON text) that breaks the rule.
    pub example: String,
}

impl From<mend::Rule> for RuleInfo {
    fn from(r: mend::Rule) -> RuleInfo {
        use mend::rules::Repair;
        let s = r.spec();
        let (availability, how) = match s.repair {
            Repair::Always(how) => ("always", how),
            Repair::Sometimes(how) => ("sometimes", how),
            Repair::Never(why) => ("never", why),
        };
        RuleInfo {
            id: s.id.to_string(),
            summary: s.summary.to_string(),
            dialects: s.dialects.iter().map(|d| d.name().to_string()).collect(),
            profiles: s.profiles.iter().map(|p| p.to_string()).collect(),
            severity: s.severity.as_str().to_string(),
            provider_texts: s
                .provider_texts
                .iter()
                .map(|t| ProviderText {
                    provider: t.provider.to_string(),
                    text: t.text.to_string(),
                    source: t.source.to_string(),
                })
                .collect(),
            repair: RuleRepair {
                availability: availability.to_string(),
                how: how.to_string(),
            },
            doc: s.doc.to_string(),
            example: s.example.to_string(),
        }
    }
}
