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
//! touched; what cannot be repaired without guessing is reported, never invented; a
//! history with an item whose shape could not be read gets only the known reshapes (the
//! other rules may have misread it, see `plan`); a
//! fix that leaves an error of a rule the input did not break is held back when that
//! only takes edits away and leaves no more errors (see `repair`); running repair on its
//! own output changes nothing; no fix reads a rendered pointer or a message.

mod fix;
mod splice;

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::dialect::Dialect;
use crate::violation::{Rule, Severity, Violation};
use crate::{analyze, Analysis, CheckOptions, Error};

pub(crate) use fix::{FixFn, Fixer};
pub use splice::{repair_bytes, splice, splice_with, Layout, RepairedBytes};

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
    /// Rules whose fixes were held back: made, they left an error of a rule the input
    /// did not break and no fix can answer (see [`repair`]); their errors are among
    /// `unrepairable`.
    pub held_back: Vec<Rule>,
    /// What of the input the body still is, as it was: for a caller holding the input in
    /// another form (its bytes, its Python objects) that writes only what changed.
    pub kept: Kept,
}

/// What of the input a repaired body keeps as it was (see [`Repaired::kept`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    /// `None` when the history member is the input's, unchanged. Else, for each item of
    /// the body's history: `Some(i)` when it is item `i` of the input's history,
    /// unchanged; `None` for an item an edit made or changed.
    pub history: Option<Vec<Option<usize>>>,
    /// The other top-level members an edit set or removed (Anthropic's `thinking`);
    /// every other member is the input's, unchanged and in its place.
    pub members: Vec<&'static str>,
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

/// The text an Anthropic error result (`is_error: true`) with no content is given: the
/// API refuses it empty, and that it failed is all that is known of it.
pub const ERROR_WITHOUT_OUTPUT: &str = "Error: the tool failed and gave no output.";

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
    repair_analyzed(body, opts, None)
}

/// [`repair`] of a body whose check the caller already ran: `analysis` is
/// [`analyze`]`(body, &opts.check)`, and the first pass plans from it instead of
/// checking the body again (convert checks a source before it knows it must repair it).
pub(crate) fn repair_analyzed<'a>(
    body: &'a Value,
    opts: &'a RepairOptions,
    analysis: Option<Analysis<'a>>,
) -> Result<Repaired, Error> {
    let (first, _) = Run::new(Input::Borrowed(body), opts, &[], analysis)?;
    let (run, held) = settle(first, body, opts)?;
    Ok(run.done(|| body.clone(), &held))
}

/// [`repair`], taking the body: a body that needs nothing is handed back as it is, not
/// copied, and the first pass moves the items it keeps instead of copying them.
pub fn repair_owned(body: Value, opts: &RepairOptions) -> Result<Repaired, Error> {
    repair_owned_analyzed(body, opts, None)
}

/// [`repair_owned`] of a body whose check the caller already ran, on the body or on the
/// tape of its bytes (repair from bytes): `analysis` is taken as the first pass's.
pub(crate) fn repair_owned_analyzed<'a>(
    body: Value,
    opts: &'a RepairOptions,
    analysis: Option<Analysis<'a>>,
) -> Result<Repaired, Error> {
    let (first, back) = Run::new(Input::Owned(body), opts, &[], analysis)?;
    if first.made_worse().is_none() {
        return Ok(first.done(move || back.unwrap_or_default(), &[]));
    }
    // The rare run that is held back again needs the input: rebuilt from what the first
    // pass kept and what it took away.
    let input = back.unwrap_or_else(|| first.input_again());
    let (run, held) = settle(first, &input, opts)?;
    Ok(run.done(move || input, &held))
}

/// The run whose outcome is the repair of `body`, `first` being the first run over it,
/// and the rules it held back.
fn settle(first: Run, body: &Value, opts: &RepairOptions) -> Result<(Run, Vec<Rule>), Error> {
    let Some(k) = first.made_worse() else {
        return Ok((first, Vec::new()));
    };
    // The run left an error of a rule the input did not break. Hold back the fixes of
    // the pass that brought it in (one alone first: the others may be sound, then all of
    // them) and run again; a run is taken instead of the first only when it ends no worse,
    // with no more errors left, and makes no kind of edit the first did not (holding back
    // takes edits away, it never trades them for others, such as a synthesized result for
    // a moved one). The
    // held set only grows, so this ends; ordinary damage never gets here.
    let allowed = first.edit_rules();
    let left = first.errors_left();
    let better = |run: &Run| {
        run.made_worse().is_none()
            && run.errors_left() <= left
            && run.edit_rules().iter().all(|r| allowed.contains(r))
    };
    let mut held: Vec<Rule> = Vec::new();
    let mut culprits = first.rules_of_pass(k);
    while !culprits.is_empty() {
        if culprits.len() > 1 {
            for &c in &culprits {
                let one = [held.as_slice(), &[c]].concat();
                let (run, _) = Run::new(Input::Borrowed(body), opts, &one, None)?;
                if better(&run) {
                    return Ok((run, one));
                }
            }
        }
        held.extend(culprits);
        let (run, _) = Run::new(Input::Borrowed(body), opts, &held, None)?;
        if better(&run) {
            return Ok((run, held));
        }
        culprits = match run.made_worse() {
            Some(k) => run
                .rules_of_pass(k)
                .into_iter()
                .filter(|r| !held.contains(r))
                .collect(),
            None => Vec::new(),
        };
    }
    Ok((first, Vec::new()))
}

/// One run of repair passes over a body: plan the errors' fixes (but those of `held`
/// rules), apply them, check again, until nothing more is planned. It keeps the rules
/// each state broke and which pass made which edits, so that `repair` can tell a run that
/// ended worse than it started and which fixes brought that in.
///
/// Worse means: what is left unrepaired includes an error of a rule the input did not
/// break. Dropping an empty first user message leaves an assistant message first, which
/// a strict profile refuses and no fix can answer without inventing a message; that
/// drop is held back and the empty message reported instead.
struct Run {
    dialect: Dialect,
    provider: &'static str,
    /// The body after the last pass that changed it (`None`: the input, unchanged).
    state: Option<Value>,
    /// For each item of `state`'s history, the input's item it is, unchanged (`None`
    /// while `state` is).
    origin: Option<Vec<Option<usize>>>,
    /// The top-level members set or removed.
    members: Vec<&'static str>,
    /// The length of the input's history.
    input_items: usize,
    /// For each pass after the first that changed an owned input, how to get the body
    /// before it back from the body after it (see [`Back`]); used only to give the
    /// input back (`input_again`).
    backs: Vec<Back>,
    /// The number of edits made up to each state after the input.
    marks: Vec<usize>,
    edits: Vec<Edit>,
    /// The error rules of each state, the input's first.
    seen: Vec<Vec<Rule>>,
    /// The last state's violations.
    violations: Vec<Violation>,
}

impl Run {
    /// The run over `input`, and an owned input back when no pass took its items.
    /// `analysis`, when given, is the input's check under `opts.check`, taken as the
    /// first pass's.
    fn new<'a>(
        input: Input<'a>,
        opts: &'a RepairOptions,
        held: &[Rule],
        mut analysis: Option<Analysis<'a>>,
    ) -> Result<(Run, Option<Value>), Error> {
        // The input is read until the first edit, and each pass's analysis is the
        // verdict when it plans nothing: a valid body costs one check.
        let (borrowed, mut owned) = match input {
            Input::Borrowed(b) => (Some(b), None),
            Input::Owned(v) => (None, Some(v)),
        };
        let mut state: Option<Value> = None;
        let mut backs: Vec<Back> = Vec::new();
        let mut passes = 0;
        let mut origin: Option<Vec<Option<usize>>> = None;
        let mut members: Vec<&'static str> = Vec::new();
        let mut marks = Vec::new();
        let mut edits = Vec::new();
        let mut seen = Vec::new();
        let mut input_items = 0;
        // The dialect read in the first pass is the one of every later pass: the
        // body's dialect is not detected again in each.
        let mut pinned: Option<CheckOptions> = None;
        loop {
            let now = state
                .as_ref()
                .or(owned.as_ref())
                .or(borrowed)
                .unwrap_or(&NULL);
            let analysis = match analysis.take() {
                Some(a) => a,
                None => analyze(now, pinned.as_ref().unwrap_or(&opts.check))?,
            };
            seen.push(error_rules(&analysis.violations));
            if state.is_none() {
                input_items = history_len(now, analysis.dialect);
            }
            let plan = if passes >= MAX_PASSES {
                fix::Plan::default()
            } else {
                plan(&analysis, now, opts, held)
            };
            // A plan that changed nothing (its edits had nowhere to go, as a result for a
            // message whose content is not a list) made no edits worth reporting, and
            // this pass's verdict is the body's.
            let Analysis {
                dialect,
                profile,
                violations,
                ..
            } = analysis;
            // A pass moves the items of a body it owns (the owned input, or the state a
            // pass before it made) instead of copying them; a top-level member to set
            // means a copy, which leaves what it was made from as it was.
            let movable = plan.body_fields.is_empty() && (state.is_some() || owned.is_some());
            let next = if plan.is_empty() {
                None
            } else if !movable {
                Some(plan.apply(now, dialect))
                    .filter(|(next, _)| next != now)
                    .map(|(next, from)| (next, from, None))
            } else {
                let key = dialect.history_key();
                let from_input = state.is_none();
                let before = state.take().or_else(|| owned.take()).unwrap_or_default();
                let len = history_len(&before, dialect);
                let (next, from, removed) = plan.apply_owned(before, dialect);
                if same_as_input(&next, &from, &removed, len, key) {
                    let back = Some(restored(next, &from, removed, len, key));
                    match from_input {
                        true => owned = back,
                        false => state = back,
                    }
                    None
                } else {
                    let back = Back::Moved(from.clone(), removed, len);
                    Some((next, from, Some(back)))
                }
            };
            let Some((next, from, moved)) = next else {
                let run = Run {
                    dialect,
                    provider: profile.name,
                    violations,
                    state,
                    origin,
                    members,
                    input_items,
                    backs,
                    marks,
                    edits,
                    seen,
                };
                return Ok((run, owned));
            };
            if pinned.is_none() && opts.check.dialect.is_none() {
                pinned = Some(CheckOptions {
                    dialect: Some(dialect),
                    ..opts.check.clone()
                });
            }
            // Where each item came from, through this pass and the ones before.
            origin = Some(match origin {
                None => from,
                Some(before) => from
                    .into_iter()
                    .map(|o| o.and_then(|i| before.get(i).copied().flatten()))
                    .collect(),
            });
            for (name, _) in &plan.body_fields {
                if !members.contains(name) {
                    members.push(name);
                }
            }
            edits.extend(plan.edits);
            let before = state.replace(next);
            backs.push(match (moved, before) {
                (Some(moved), _) => moved,
                (None, Some(before)) => Back::Kept(before),
                (None, None) => Back::Input,
            });
            passes += 1;
            marks.push(edits.len());
        }
    }

    /// The input of a run whose first pass took the items of its owned input: each pass
    /// undone from the last state back.
    fn input_again(&self) -> Value {
        let key = self.dialect.history_key();
        let mut now = self.state.clone().unwrap_or_default();
        for back in self.backs.iter().rev() {
            now = match back {
                Back::Moved(from, removed, len) => {
                    restored(now, from, removed.iter().cloned(), *len, key)
                }
                Back::Kept(before) => before.clone(),
                Back::Input => break,
            };
        }
        now
    }

    /// The first state that broke a rule the input did not and that is still broken at
    /// the end, if any.
    fn made_worse(&self) -> Option<usize> {
        let input = self.seen.first()?;
        let left: Vec<Rule> = error_rules(&self.violations)
            .into_iter()
            .filter(|r| !input.contains(r))
            .collect();
        if left.is_empty() {
            return None;
        }
        self.seen
            .iter()
            .position(|rules| rules.iter().any(|r| left.contains(r)))
    }

    /// The errors its last state has.
    fn errors_left(&self) -> usize {
        self.violations
            .iter()
            .filter(|v| v.severity == Severity::Error)
            .count()
    }

    /// The rules of all its edits.
    fn edit_rules(&self) -> Vec<Rule> {
        distinct(self.edits.iter().map(|e| e.rule))
    }

    /// The rules of the edits of the pass that made state `k`.
    fn rules_of_pass(&self, k: usize) -> Vec<Rule> {
        let from = k.checked_sub(2).map_or(0, |j| self.marks[j]);
        let to = self.marks[k - 1];
        distinct(self.edits[from..to].iter().map(|e| e.rule))
    }

    /// The outcome, its body the last state or, when nothing changed, `input()`.
    fn done(self, input: impl FnOnce() -> Value, held: &[Rule]) -> Repaired {
        let (unrepairable, warnings) = self
            .violations
            .into_iter()
            .partition(|v| v.severity == Severity::Error);
        let kept = match &self.state {
            None => Kept::default(),
            Some(_) => Kept {
                history: self.origin.filter(|o| {
                    o.len() != self.input_items || o.iter().enumerate().any(|(k, &i)| i != Some(k))
                }),
                members: self.members,
            },
        };
        Repaired {
            dialect: self.dialect,
            provider: self.provider,
            body: self.state.unwrap_or_else(input),
            edits: self.edits,
            unrepairable,
            warnings,
            held_back: held.to_vec(),
            kept,
        }
    }
}

/// How to get the body before a pass back from the body after it.
enum Back {
    /// The pass moved the items of the body it was given: where each item of its output
    /// came from, the items it took away, as they were, with their index, and the length
    /// of the history it was given.
    Moved(Vec<Option<usize>>, Vec<(usize, Value)>, usize),
    /// The pass copied the body it was given: that body, as it was.
    Kept(Value),
    /// The pass copied the run's input, which the caller holds (or the run gives back).
    Input,
}

/// A body as given to a run: borrowed, or owned (its items are then moved, not copied,
/// by the first pass).
enum Input<'b> {
    Borrowed(&'b Value),
    Owned(Value),
}

static NULL: Value = Value::Null;

/// Whether the output of a pass that moved the input's items (`from`: where each came
/// from; `removed`: the input items it took away, as they were) is the input.
fn same_as_input(
    next: &Value,
    from: &[Option<usize>],
    removed: &[(usize, Value)],
    input_items: usize,
    key: &str,
) -> bool {
    let Some(items) = next.get(key).and_then(Value::as_array) else {
        return from.is_empty() && removed.is_empty();
    };
    if items.len() != input_items || from.len() != items.len() {
        return false;
    }
    let at: HashMap<usize, &Value> = from
        .iter()
        .enumerate()
        .filter_map(|(k, o)| o.map(|i| (i, &items[k])))
        .chain(removed.iter().map(|(i, v)| (*i, v)))
        .collect();
    items
        .iter()
        .enumerate()
        .all(|(k, item)| from[k] == Some(k) || at.get(&k).is_some_and(|was| *was == item))
}

/// The input of a pass that moved its items, from its output: each item put back from
/// where it went (`from`) or from what the pass took away (`removed`).
fn restored(
    mut next: Value,
    from: &[Option<usize>],
    removed: impl IntoIterator<Item = (usize, Value)>,
    input_items: usize,
    key: &str,
) -> Value {
    let Some(Value::Array(items)) = next.get_mut(key) else {
        return next;
    };
    let mut was = vec![Value::Null; input_items];
    for (k, item) in std::mem::take(items).into_iter().enumerate() {
        if let Some(slot) = from.get(k).copied().flatten().and_then(|i| was.get_mut(i)) {
            *slot = item;
        }
    }
    for (i, v) in removed {
        if let Some(slot) = was.get_mut(i) {
            *slot = v;
        }
    }
    *items = was;
    next
}

/// The number of items in a body's history (0 when it has none).
fn history_len(body: &Value, d: Dialect) -> usize {
    body.get(d.history_key())
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// The rules of the error-severity violations, each once.
fn error_rules(violations: &[Violation]) -> Vec<Rule> {
    distinct(
        violations
            .iter()
            .filter(|v| v.severity == Severity::Error)
            .map(|v| v.rule),
    )
}

/// Each rule once, in a fixed order.
fn distinct(rules: impl Iterator<Item = Rule>) -> Vec<Rule> {
    let mut rules: Vec<Rule> = rules.collect();
    rules.sort_unstable();
    rules.dedup();
    rules
}

/// Plan the edits of one pass: each error's fix, in body order.
fn plan(a: &Analysis, body: &Value, opts: &RepairOptions, held: &[Rule]) -> fix::Plan {
    let errors = || {
        a.violations
            .iter()
            .filter(|v| v.severity == Severity::Error)
    };
    if errors().next().is_none() {
        return fix::Plan::default();
    }
    // A history item whose shape could not be read (a `malformed` finding with no sound
    // reshape: a field of the wrong type) hides what it holds from every other rule: a
    // call behind a numeric id reads as id-less, a `tool_calls` object as no calls, and
    // the results that answer them as orphans. Their fixes would drop real data on that
    // misreading, and the body stays invalid whatever they do: so only the known
    // reshapes run, and everything else is reported and left as it was.
    let history = format!("/{}/", a.dialect.history_key());
    let unreadable = errors()
        .any(|v| v.rule == Rule::Malformed && v.defect.is_none() && v.path.starts_with(&history));
    let mut fx = Fixer::new(a, body, opts);
    if unreadable {
        for v in errors().filter(|v| v.rule == Rule::Malformed) {
            if let Some(fix) = v.rule.spec().fix {
                fix(&mut fx, v);
            }
        }
        return fx.finish();
    }
    if !held.contains(&Rule::InvalidCallId) {
        crate::rules::ids::restore_lost_ids(&mut fx);
    }
    if !held.contains(&Rule::ToolResultWithoutCall) {
        crate::rules::pairing::give_responses_their_calls_ids(&mut fx);
    }
    // A misplaced result can make its neighbours look broken (a reasoning item followed
    // by the wrong item, a call with no reasoning before it). When a pass moves results,
    // it leaves the reasoning rules to the next pass, which sees the history put back.
    let moves_results = errors().any(|v| crate::rules::pairing::moves_a_result(&fx, v));
    for v in errors() {
        if held.contains(&v.rule)
            || moves_results && crate::rules::reasoning::waits_for_results(v.rule)
        {
            continue;
        }
        if let Some(fix) = v.rule.spec().fix {
            fix(&mut fx, v);
        }
    }
    fx.finish()
}
