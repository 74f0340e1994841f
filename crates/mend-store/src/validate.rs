//! Validation on append: would the history, with these messages at its end, still be one
//! a provider accepts?
//!
//! Invariant: an append is blamed only for what it introduces. Findings the stored
//! history already had are not its fault, and neither are findings that only say the
//! history is not finished: a call whose result has not been appended yet, a reasoning
//! item waiting for its follower (both only while they sit in the open tail of the
//! history: the last assistant turn and the calls, results and reasoning after it), or a
//! complaint about the final turn of a request (a prefill with trailing white space, a
//! request ending with a model turn), which the next user message settles. Everything
//! else the check finds and the history before did not have is the append's, and each
//! finding names its rule.
//!
//! The history is checked as the body [`render`](crate::render::render) makes of it, the
//! same body `mend store load --as` prints: wire messages of the dialect as they are,
//! anything else converted through `mend::canonical`.

use mend::chain::{Chain, NodeKind, Role};
use mend::{CheckOptions, Dialect, Rule, Severity, Violation};
use serde_json::{json, Map, Value};

use crate::message::NewMessage;
use crate::render::render;
use crate::{Error, Format, Result};

/// What to do when an append would make the history invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnViolation {
    /// Refuse it with [`Error::Rejected`]; nothing is written.
    #[default]
    Reject,
    /// Write it and report the findings in [`Appended::findings`](crate::Appended).
    Warn,
}

/// Check the history an append would leave, for one dialect.
///
/// The stored messages are rendered as a body of that dialect first (see
/// [`render`](crate::render::render)), so a conversation of canonical messages, or of
/// another dialect's, can be checked for any dialect.
#[derive(Debug, Clone)]
pub struct Validation {
    /// The dialect to check against.
    pub dialect: Dialect,
    /// A provider profile (`openai`, `mistral`, ...); the dialect's own when `None`.
    pub provider: Option<String>,
    /// The model the history is sent to (some rules depend on it).
    pub model: Option<String>,
    /// The rest of the request the history is sent in (thinking, tools, system):
    /// findings such as "thinking is off" depend on it.
    pub request: Map<String, Value>,
    /// Reject or warn.
    pub on_violation: OnViolation,
}

impl Validation {
    /// Reject appends that make the history invalid for `dialect`.
    pub fn new(dialect: Dialect) -> Validation {
        Validation {
            dialect,
            provider: None,
            model: None,
            request: Map::new(),
            on_violation: OnViolation::Reject,
        }
    }

    /// Write the append anyway and report.
    pub fn warn_only(mut self) -> Validation {
        self.on_violation = OnViolation::Warn;
        self
    }

    /// Use a provider profile's extra rules.
    pub fn provider(mut self, provider: impl Into<String>) -> Validation {
        self.provider = Some(provider.into());
        self
    }

    /// The model the history is sent to.
    pub fn model(mut self, model: impl Into<String>) -> Validation {
        self.model = Some(model.into());
        self
    }

    /// The request fields around the history.
    pub fn request(mut self, request: Map<String, Value>) -> Validation {
        self.request = request;
        self
    }

    fn options(&self) -> CheckOptions {
        CheckOptions {
            dialect: Some(self.dialect),
            provider: self.provider.clone(),
            model: self.model.clone(),
            endpoint: None,
        }
    }
}

/// Judge an append: the findings to report, or the rejection. `stored` are the
/// conversation's messages as stored, in order, written in `format`.
pub(crate) fn judge(
    v: &Validation,
    format: Format,
    stored: &[String],
    appended: &[NewMessage],
) -> Result<Vec<Violation>> {
    let mut history = Vec::with_capacity(stored.len() + appended.len());
    for (i, raw) in stored.iter().enumerate() {
        history.push(
            serde_json::from_str::<Value>(raw).map_err(|e| Error::Corrupt {
                conversation: String::new(),
                seq: i as u64 + 1,
                reason: e.to_string(),
            })?,
        );
    }
    let before = blamable(
        v,
        render(
            format,
            history.clone(),
            v.dialect,
            &v.request,
            v.model.as_deref(),
        )?,
    )?;
    for (i, m) in appended.iter().enumerate() {
        history.push(serde_json::from_str::<Value>(m.json()).map_err(|e| {
            Error::InvalidMessage {
                index: i,
                reason: e.to_string(),
            }
        })?);
    }
    let after = blamable(
        v,
        render(format, history, v.dialect, &v.request, v.model.as_deref())?,
    )?;
    let introduced: Vec<Violation> = after
        .into_iter()
        .filter(|a| !before.iter().any(|b| b.rule == a.rule && b.path == a.path))
        .collect();
    let errors = introduced.iter().any(|x| x.severity == Severity::Error);
    if errors && v.on_violation == OnViolation::Reject {
        return Err(Error::Rejected {
            dialect: v.dialect,
            violations: introduced
                .into_iter()
                .filter(|x| x.severity == Severity::Error)
                .collect(),
        });
    }
    Ok(introduced)
}

/// Whether a finding is about the stored messages, not about the request a history is
/// sent in: the request's own fields (`max_tokens`, ...), its tool declarations and its
/// cache breakpoints are the caller's to set when it sends the history.
fn about_the_history(v: &Violation, key: &str) -> bool {
    let in_history = v.path == format!("/{key}") || v.path.starts_with(&format!("/{key}/"));
    in_history && !matches!(v.rule, Rule::ToolsUndeclared | Rule::CacheBreakpoints)
}

/// The findings of a request body's history that a continuation cannot settle.
fn blamable(v: &Validation, body: Value) -> Result<Vec<Violation>> {
    let opts = v.options();
    let analysis = mend::analyze(&body, &opts)?;
    let key = v.dialect.history_key();
    let turns = analysis.chain.turns_under(key);
    let tail = open_tail_start(&analysis.chain, &turns);
    let last = turns.last().copied();
    let last_is_assistant = last.is_some_and(|t| analysis.chain.turns[t].role == Role::Assistant);
    let found: Vec<Violation> = analysis
        .violations
        .into_iter()
        .filter(|x| about_the_history(x, key))
        .filter(|x| {
            let turn = turn_of(x, &analysis.chain, key);
            let waiting = matches!(
                x.rule,
                Rule::ToolCallWithoutResult
                    | Rule::ReasoningWithoutFollower
                    | Rule::ThinkingFinalBlock
            ) && turn.is_some_and(|t| t >= tail);
            !waiting
        })
        .collect();
    if !last_is_assistant {
        return Ok(found);
    }
    // Findings about the final turn as final: check again with a user turn after it, and
    // keep those on the last turn only if they are still there.
    let mut probed = body;
    if let Some(Value::Array(history)) = probed.get_mut(key) {
        history.push(probe(v.dialect));
    }
    let settled = mend::analyze(&probed, &opts)?;
    Ok(found
        .into_iter()
        .filter(|x| {
            turn_of(x, &settled.chain, key) != last
                || settled
                    .violations
                    .iter()
                    .any(|s| s.rule == x.rule && s.path == x.path)
        })
        .collect())
}

/// A user turn of the dialect, to end a history with.
fn probe(dialect: Dialect) -> Value {
    match dialect {
        Dialect::Gemini => json!({"role": "user", "parts": [{"text": "next"}]}),
        _ => json!({"role": "user", "content": "next"}),
    }
}

/// The first turn of the open tail: the last assistant turn that makes calls or holds
/// reasoning, followed only by turns of calls, results and reasoning. `usize::MAX` when
/// the history does not end in one.
fn open_tail_start(chain: &Chain, turns: &[usize]) -> usize {
    let holds = |t: usize, f: fn(&NodeKind) -> bool| chain.turn_nodes(t).iter().any(|n| f(&n.kind));
    let mechanical = |t: usize| {
        let nodes = chain.turn_nodes(t);
        !nodes.is_empty()
            && nodes.iter().all(|n| {
                matches!(
                    n.kind,
                    NodeKind::Call { .. } | NodeKind::Result { .. } | NodeKind::Reasoning { .. }
                )
            })
    };
    let mut i = turns.len();
    while i > 0 && mechanical(turns[i - 1]) {
        i -= 1;
    }
    if i > 0 {
        let t = turns[i - 1];
        if chain.turns[t].role == Role::Assistant
            && holds(t, |k| {
                matches!(k, NodeKind::Call { .. } | NodeKind::Reasoning { .. })
            })
        {
            i -= 1;
        }
    }
    // A tail must start at an assistant turn or a mechanical one; an empty run is none.
    turns.get(i).copied().unwrap_or(usize::MAX)
}

/// The chain turn a finding concerns: its own, or the history item its path names.
fn turn_of(v: &Violation, chain: &Chain, key: &str) -> Option<usize> {
    if v.loc.turn.is_some() {
        return v.loc.turn;
    }
    let mut parts = v.path.split('/').skip(1);
    if parts.next()? != key {
        return None;
    }
    let item: u32 = parts.next()?.parse().ok()?;
    chain
        .turns
        .iter()
        .position(|t| t.ptr.root_key() == key && t.ptr.item_index() == Some(item))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(values: &[Value]) -> Vec<NewMessage> {
        NewMessage::from_values(values).unwrap()
    }

    fn stored(values: &[Value]) -> Vec<String> {
        values.iter().map(|v| v.to_string()).collect()
    }

    #[test]
    fn a_call_waiting_for_its_result_is_not_blamed_but_text_after_it_is() {
        let v = Validation::new(Dialect::OpenAiChat).model("gpt-4o");
        let user = json!({"role": "user", "content": "weather?"});
        let call = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]});
        assert!(judge(
            &v,
            Format::Any,
            &stored(std::slice::from_ref(&user)),
            &msgs(std::slice::from_ref(&call))
        )
        .is_ok());
        let err = judge(
            &v,
            Format::Any,
            &stored(&[user.clone(), call.clone()]),
            &msgs(&[json!({"role": "user", "content": "and?"})]),
        )
        .unwrap_err();
        assert_eq!(
            err.violations()[0].rule,
            Rule::ToolCallWithoutResult,
            "{err}"
        );
        let result = json!({"role": "tool", "tool_call_id": "call_1", "content": "sun"});
        assert!(judge(&v, Format::Any, &stored(&[user, call]), &msgs(&[result])).is_ok());
    }

    #[test]
    fn an_orphan_result_is_rejected_naming_the_rule_or_reported_when_warning() {
        let v = Validation::new(Dialect::OpenAiChat).model("gpt-4o");
        let history = stored(&[json!({"role": "user", "content": "hi"})]);
        let orphan = msgs(&[json!({"role": "tool", "tool_call_id": "call_9", "content": "x"})]);
        let err = judge(&v, Format::Any, &history, &orphan).unwrap_err();
        assert!(
            err.to_string().contains("tool-result-without-call"),
            "{err}"
        );
        let found = judge(&v.warn_only(), Format::Any, &history, &orphan).unwrap();
        assert_eq!(found[0].rule, Rule::ToolResultWithoutCall);
    }

    #[test]
    fn a_final_thinking_only_turn_and_trailing_white_space_are_not_blamed() {
        let v = Validation::new(Dialect::Anthropic).model("claude-sonnet-4-5");
        let history = stored(&[json!({"role": "user", "content": "hi"})]);
        let thinking = msgs(&[json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"}]})]);
        assert_eq!(judge(&v, Format::Any, &history, &thinking).unwrap(), vec![]);
        let spaced = msgs(&[json!({"role": "assistant", "content": "hello\n"})]);
        assert_eq!(judge(&v, Format::Any, &history, &spaced).unwrap(), vec![]);
    }

    #[test]
    fn what_was_wrong_before_is_not_the_appends_fault() {
        let v = Validation::new(Dialect::OpenAiChat).model("gpt-4o");
        let broken = stored(&[
            json!({"role": "user", "content": "hi"}),
            json!({"role": "tool", "tool_call_id": "call_9", "content": "x"}),
        ]);
        let next = msgs(&[json!({"role": "user", "content": "again"})]);
        assert_eq!(judge(&v, Format::Any, &broken, &next).unwrap(), vec![]);
    }
}
