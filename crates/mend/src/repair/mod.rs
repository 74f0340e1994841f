//! Repair: run the fix of each violation found, apply the edits, check again.
//!
//! This module is the driver. The fixes live with their rules (`crate::rules::*`, each
//! rule's `RuleSpec::fix`); they read the chain and the violation's typed location and
//! plan edits on a `Fixer` (`repair/fix.rs`), which holds the edit primitives (drop a node,
//! place a result where the dialect wants it, set a field). The dialect modules build the
//! few wire values an edit needs (a synthesized result, a result turned into text).
//! Applying a plan rebuilds only the history array (and sets the rare top-level setting a
//! fix must change, such as Anthropic's `thinking`); everything else in the body, unknown
//! fields and key order included, is left as it was.
//!
//! Invariants: a valid body is returned unchanged; only nodes named by a violation are
//! touched; what cannot be repaired without guessing is reported, never invented; running
//! repair on its own output changes nothing; no fix reads a rendered pointer or a message.

mod fix;

use serde::Serialize;
use serde_json::Value;

use crate::dialect::Dialect;
use crate::violation::{Rule, Severity, Violation};
use crate::{analyze, Analysis, CheckOptions, Error};

pub(crate) use fix::{FixFn, Fixer};

/// What to do with a call that has no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingResult {
    /// Add a result saying the call was interrupted (an error result where the dialect can).
    #[default]
    Synthesize,
    /// Remove the call.
    DropCall,
}

/// What to do with a result that answers no call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OrphanResult {
    /// Remove it.
    #[default]
    Drop,
    /// Keep its content as plain text.
    ToText,
}

/// Repair policy.
#[derive(Debug, Clone, Default)]
pub struct RepairOptions {
    /// Dialect, provider and model, as for check.
    pub check: CheckOptions,
    /// Calls without results.
    pub missing_result: MissingResult,
    /// Results without calls.
    pub orphan_result: OrphanResult,
    /// The text of a synthesized result, [`INTERRUPTED`] when `None`. An application that
    /// must tell synthesized results from real tool output sets a marker of its own here
    /// (Anthropic results are also marked `is_error`, Gemini's carry it as `error`).
    pub synthesized_text: Option<String>,
}

/// One edit made, in the words of the rule it answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Edit {
    /// The rule whose violation it repairs.
    pub rule: Rule,
    /// Where, in the body as it was when the edit was planned.
    pub path: String,
    /// `drop`, `insert`, `move`, `rename`, `set`, `reorder` or `convert`.
    pub action: &'static str,
    /// What exactly.
    pub detail: String,
}

/// The outcome of a repair.
#[derive(Debug, Clone)]
pub struct Repaired {
    /// The dialect the body was read as.
    pub dialect: Dialect,
    /// The provider profile used.
    pub provider: &'static str,
    /// The repaired body (the input itself when nothing needed doing).
    pub body: Value,
    /// Edits made, in order.
    pub edits: Vec<Edit>,
    /// Error-severity violations that remain: what could not be repaired without guessing.
    pub unrepairable: Vec<Violation>,
    /// Warnings that remain (not repaired: the provider may accept them).
    pub warnings: Vec<Violation>,
}

impl Repaired {
    /// The output has no error-severity violations.
    pub fn valid(&self) -> bool {
        self.unrepairable.is_empty()
    }

    /// Whether anything was changed.
    pub fn changed(&self) -> bool {
        !self.edits.is_empty()
    }
}

/// The text of a synthesized result.
pub const INTERRUPTED: &str = "Error: this tool call was interrupted and produced no output.";

/// Google's documented placeholder for function calls that have no real thought signature
/// (history from another model or client).
pub const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

// Ordinary damage settles in two or three passes; a mangled history found by the fuzzer
// needed nine. The cap bounds what an adversarial body can cost.
const MAX_PASSES: usize = 32;

/// Repair a body: plan edits for its violations, apply them, check again, until it is
/// valid or nothing more can be done.
///
/// ```
/// let body = serde_json::json!({"model": "gpt-4o", "messages": [
///     {"role": "user", "content": "weather?"},
///     {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
///         "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
///     {"role": "user", "content": "and?"}
/// ]});
/// let fixed = mend::repair(&body, &mend::RepairOptions::default()).unwrap();
/// assert!(fixed.valid());
/// // The unanswered call got an error result saying it was interrupted.
/// assert_eq!(fixed.edits[0].action, "insert");
/// assert_eq!(fixed.body["messages"][2]["tool_call_id"], "call_1");
/// ```
pub fn repair(body: &Value, opts: &RepairOptions) -> Result<Repaired, Error> {
    // The input is borrowed until the first edit, and each pass's analysis is the verdict
    // when it plans nothing: a valid body costs one check and one clone.
    let mut current: Option<Value> = None;
    let mut edits = Vec::new();
    let mut passes = 0;
    let (dialect, provider, violations) = loop {
        let now = current.as_ref().unwrap_or(body);
        let analysis = analyze(now, &opts.check)?;
        passes += 1;
        let plan = if passes > MAX_PASSES {
            fix::Plan::default()
        } else {
            plan(&analysis, now, opts)
        };
        if plan.is_empty() {
            break (analysis.dialect, analysis.profile.name, analysis.violations);
        }
        let next = plan.apply(now, analysis.dialect);
        if &next == now {
            // A plan that changed nothing (its edits had nowhere to go, as a result for a
            // message whose content is not a list) made no edits worth reporting, and this
            // pass's verdict is the body's.
            break (analysis.dialect, analysis.profile.name, analysis.violations);
        }
        drop(analysis);
        edits.extend(plan.edits);
        current = Some(next);
    };
    let (unrepairable, warnings) = violations
        .into_iter()
        .partition(|v| v.severity == Severity::Error);
    Ok(Repaired {
        dialect,
        provider,
        body: current.unwrap_or_else(|| body.clone()),
        edits,
        unrepairable,
        warnings,
    })
}

/// Plan the edits of one pass: each error's fix, in body order.
fn plan(a: &Analysis, body: &Value, opts: &RepairOptions) -> fix::Plan {
    let errors = || {
        a.violations
            .iter()
            .filter(|v| v.severity == Severity::Error)
    };
    if errors().next().is_none() {
        return fix::Plan::default();
    }
    let mut fx = Fixer::new(a, body, opts);
    crate::rules::ids::restore_lost_ids(&mut fx);
    // A misplaced result can make its neighbours look broken (a reasoning item followed
    // by the wrong item, a call with no reasoning before it). When a pass moves results,
    // it leaves the reasoning rules to the next pass, which sees the history put back.
    let moves_results = errors().any(|v| crate::rules::pairing::moves_a_result(&fx, v));
    for v in errors() {
        if moves_results && crate::rules::reasoning::waits_for_results(v.rule) {
            continue;
        }
        if let Some(fix) = v.rule.spec().fix {
            fix(&mut fx, v);
        }
    }
    fx.finish()
}
