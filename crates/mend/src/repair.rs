//! Repair: turn violations into the fewest edits, and apply them to the wire JSON.
//!
//! The planner reads the violations and the chain (never the wire types) and decides
//! what to do with the nodes they name: drop, synthesize, move, rename, fill. The dialect
//! module builds the few wire values an edit needs (a synthesized result, a result turned
//! into text). Applying a plan rebuilds only the history array; everything else in the
//! body, unknown fields and key order included, is left as it was.
//!
//! Invariants: a valid body is returned unchanged; only nodes named by a violation are
//! touched; what cannot be repaired without guessing is reported, never invented; running
//! repair on its own output changes nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;
use serde_json::{json, Value};

use crate::chain::{CallKind, NodeKind, Ptr, Role};
use crate::dialect::{self, Dialect};
use crate::violation::{Rule, Severity, Violation};
use crate::{analyze, Analysis, CheckOptions, Error};

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
            Plan::default()
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

/// The provider item id of a Responses message or reasoning item.
fn item_id_of<'a>(k: &NodeKind<'a>) -> Option<&'a str> {
    match *k {
        NodeKind::Message { item_id } | NodeKind::Reasoning { item_id, .. } => item_id,
        _ => None,
    }
}

/// Where an element lives inside a history item: (item, key, index).
type Sub = (usize, &'static str, usize);

/// A field to set (`Some`) or remove (`None`) on an item or on one of its elements.
#[derive(Debug, Clone)]
struct FieldEdit {
    item: usize,
    sub: Option<(&'static str, usize)>,
    name: String,
    value: Option<Value>,
}

/// The edits of one pass, expressed against the body as it is at the start of the pass.
#[derive(Default)]
struct Plan {
    drop_items: BTreeSet<usize>,
    replace_items: BTreeMap<usize, Value>,
    insert_after: BTreeMap<usize, Vec<Value>>,
    /// New items before this history item.
    insert_before: BTreeMap<usize, Vec<Value>>,
    /// Items moved elsewhere (their drop is not a loss to report).
    moved_items: BTreeSet<usize>,
    drop_subs: BTreeSet<Sub>,
    replace_subs: BTreeMap<Sub, Value>,
    /// Inserted before the element at that index (`usize::MAX`: appended).
    insert_subs: BTreeMap<Sub, Vec<Value>>,
    /// (item, optional sub, field, value): set a field; `None` removes it.
    fields: Vec<FieldEdit>,
    edits: Vec<Edit>,
}

impl Plan {
    /// Remove a Responses item's provider id (`msg_`, `fc_`): the item is then plain input.
    fn remove_item_id(&mut self, item: usize) {
        self.fields.push(FieldEdit {
            item,
            sub: None,
            name: "id".into(),
            value: None,
        });
    }

    fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// Move history item `from` to just before item `to`.
    fn move_item_before(&mut self, from: usize, to: usize, value: Value) {
        self.drop_items.insert(from);
        self.moved_items.insert(from);
        self.insert_before.entry(to).or_default().push(value);
    }

    fn note(&mut self, rule: Rule, path: String, action: &'static str, detail: String) {
        self.edits.push(Edit {
            rule,
            path,
            action,
            detail,
        });
    }

    fn apply(&self, body: &Value, d: Dialect) -> Value {
        let key = d.history_key();
        let (Some(obj), Some(items)) = (body.as_object(), body.get(key).and_then(Value::as_array))
        else {
            return body.clone();
        };
        let mut fields_by_item: HashMap<usize, Vec<&FieldEdit>> = HashMap::new();
        for f in &self.fields {
            fields_by_item.entry(f.item).or_default().push(f);
        }
        let mut sub_keys: BTreeMap<usize, BTreeSet<&'static str>> = BTreeMap::new();
        for &(i, k, _) in self
            .drop_subs
            .iter()
            .chain(self.replace_subs.keys())
            .chain(self.insert_subs.keys())
        {
            sub_keys.entry(i).or_default().insert(k);
        }
        for f in &self.fields {
            if let Some((k, _)) = f.sub {
                sub_keys.entry(f.item).or_default().insert(k);
            }
        }
        let mut rebuilt = Vec::with_capacity(items.len() + 4);
        for (i, item) in items.iter().enumerate() {
            if let Some(extra) = self.insert_before.get(&i) {
                rebuilt.extend(extra.iter().cloned());
            }
            if !self.drop_items.contains(&i) {
                let mut it = self
                    .replace_items
                    .get(&i)
                    .cloned()
                    .unwrap_or_else(|| item.clone());
                for k in sub_keys.get(&i).into_iter().flatten() {
                    self.apply_subs(&mut it, i, k, fields_by_item.get(&i));
                }
                if let (Some(fs), Some(obj)) = (fields_by_item.get(&i), it.as_object_mut()) {
                    for FieldEdit {
                        sub, name, value, ..
                    } in fs.iter().copied()
                    {
                        if sub.is_some() {
                            continue;
                        }
                        match value {
                            Some(v) => {
                                obj.insert(name.clone(), v.clone());
                            }
                            None => {
                                obj.shift_remove(name);
                            }
                        }
                    }
                }
                rebuilt.push(it);
            }
            if let Some(extra) = self.insert_after.get(&i) {
                rebuilt.extend(extra.iter().cloned());
            }
        }
        // Everything but the history is copied as it is, in its place.
        let mut rebuilt = Some(Value::Array(rebuilt));
        let out: serde_json::Map<String, Value> = obj
            .iter()
            .map(|(k, v)| {
                let v = if k == key {
                    rebuilt.take().unwrap_or_default()
                } else {
                    v.clone()
                };
                (k.clone(), v)
            })
            .collect();
        Value::Object(out)
    }

    fn apply_subs(
        &self,
        item: &mut Value,
        i: usize,
        k: &'static str,
        fields: Option<&Vec<&FieldEdit>>,
    ) {
        let Some(obj) = item.as_object_mut() else {
            return;
        };
        // Anthropic string content becomes a text block when blocks must go around it.
        if let Some(Value::String(s)) = obj.get(k) {
            let s = s.clone();
            obj.insert(k.to_string(), json!([{"type": "text", "text": s}]));
        }
        let Some(Value::Array(arr)) = obj.get_mut(k) else {
            return;
        };
        let old = std::mem::take(arr);
        let mut new = Vec::with_capacity(old.len() + 2);
        for (j, el) in old.into_iter().enumerate() {
            if let Some(ins) = self.insert_subs.get(&(i, k, j)) {
                new.extend(ins.iter().cloned());
            }
            if self.drop_subs.contains(&(i, k, j)) {
                continue;
            }
            let mut el = self.replace_subs.get(&(i, k, j)).cloned().unwrap_or(el);
            for f in fields.into_iter().flatten() {
                if f.sub == Some((k, j)) {
                    if let Some(o) = el.as_object_mut() {
                        match &f.value {
                            Some(v) => {
                                o.insert(f.name.clone(), v.clone());
                            }
                            None => {
                                o.shift_remove(&f.name);
                            }
                        }
                    }
                }
            }
            new.push(el);
        }
        if let Some(ins) = self.insert_subs.get(&(i, k, usize::MAX)) {
            new.extend(ins.iter().cloned());
        }
        *arr = new;
    }
}

/// Plan the edits for one pass.
fn plan(a: &Analysis, body: &Value, opts: &RepairOptions) -> Plan {
    let mut p = Plan::default();
    if !a.violations.iter().any(|v| v.severity == Severity::Error) {
        return p;
    }
    let d = a.dialect;
    let chain = &a.chain;
    let items = body.get(d.history_key()).and_then(Value::as_array);
    // Findings name their node by path and their turn by index: look there first, and
    // only scan the whole chain when that fails (pointers are rendered on demand).
    // Pointer-to-index maps, built at most once a pass and only when a finding's turn does
    // not already hold what it names.
    let node_paths: std::cell::OnceCell<HashMap<String, usize>> = std::cell::OnceCell::new();
    let turn_paths: std::cell::OnceCell<HashMap<String, usize>> = std::cell::OnceCell::new();
    let node_at = |v: &Violation| -> Option<usize> {
        if let Some(t) = v.turn.and_then(|t| chain.turns.get(t)) {
            if let Some(n) = (t.first..t.end).find(|&n| chain.nodes[n].ptr.render() == v.path) {
                return Some(n);
            }
            if t.ptr.render() == v.path {
                // A finding about the turn itself may name no node.
                return None;
            }
        }
        node_paths
            .get_or_init(|| {
                chain
                    .nodes
                    .iter()
                    .enumerate()
                    .map(|(n, node)| (node.ptr.render(), n))
                    .collect()
            })
            .get(&v.path)
            .copied()
    };
    let turn_at = |path: &str, hint: Option<usize>| -> Option<usize> {
        if let Some(t) = hint.filter(|&t| {
            chain
                .turns
                .get(t)
                .is_some_and(|turn| turn.ptr.render() == path)
        }) {
            return Some(t);
        }
        turn_paths
            .get_or_init(|| {
                chain
                    .turns
                    .iter()
                    .enumerate()
                    .map(|(t, turn)| (turn.ptr.render(), t))
                    .collect()
            })
            .get(path)
            .copied()
    };
    let result_of: HashMap<usize, usize> = a.pairs.iter().copied().collect();
    let call_of: HashMap<usize, usize> = a.pairs.iter().map(|&(c, r)| (r, c)).collect();
    let mut touched: BTreeSet<usize> = BTreeSet::new();
    let mut renames: BTreeMap<String, String> = BTreeMap::new();
    // Synthesized or moved results, grouped by where they go, in call order.
    let mut placed: BTreeMap<Target, Vec<Value>> = BTreeMap::new();
    // Calls that lost their id, where the one orphan result beside them proves which it was.
    // Results that lost their call id, where the one unanswered call before them proves
    // which they answer.
    for (result, id) in restorable_result_ids(a, &result_of, &call_of) {
        let (ri, ci) = (result, id.1);
        touched.insert(ri);
        touched.insert(ci);
        if let Some(edit) = id_field_edit(d, chain.nodes[ri].ptr, false, id.0) {
            p.fields.push(edit);
            p.note(
                Rule::InvalidCallId,
                chain.nodes[ri].ptr.render(),
                "set",
                format!(
                    "gave the result back the id `{}` of the one unanswered call before it ({})",
                    id.0,
                    chain.nodes[ci].ptr.render()
                ),
            );
        }
    }
    let restored = restorable_ids(a, &call_of);
    for (&call, &(result, id)) in &restored {
        touched.insert(call);
        touched.insert(result);
        let ptr = chain.nodes[call].ptr;
        let Some(edit) = id_field_edit(d, ptr, true, id) else {
            continue;
        };
        p.fields.push(edit);
        p.note(
            Rule::InvalidCallId,
            ptr.render(),
            "set",
            format!(
                "gave the call back its id `{id}`, from the one result that answers it ({})",
                chain.nodes[result].ptr.render()
            ),
        );
    }

    // A misplaced result can make its neighbours look broken (a reasoning item followed
    // by the wrong item, a call with no reasoning before it). When a pass moves results,
    // it leaves the reasoning rules to the next pass, which sees the history put back.
    let moves_results = a.violations.iter().any(|v| {
        v.severity == Severity::Error
            && match v.rule {
                Rule::ToolResultNotAdjacent => true,
                Rule::ToolResultWithoutCall => node_at(v).is_some_and(|n| match chain.nodes[n].kind {
                    NodeKind::Result { call_id: Some(rid), .. } => chain.nodes[n + 1..]
                        .iter()
                        .any(|m| matches!(m.kind, NodeKind::Call { call_id: Some(c), kind: CallKind::Client, .. } if c == rid)),
                    _ => false,
                }),
                _ => false,
            }
    });
    for v in &a.violations {
        if v.severity != Severity::Error {
            continue;
        }
        if moves_results
            && matches!(
                v.rule,
                Rule::ReasoningWithoutFollower
                    | Rule::FollowerIdMismatch
                    | Rule::CallWithoutReasoning
            )
        {
            continue;
        }
        let node = node_at(v);
        match (v.rule, node) {
            (Rule::ToolCallWithoutResult, Some(n)) => {
                if !touched.insert(n) {
                    continue;
                }
                if let Some(&r) = result_of.get(&n) {
                    // Answered, but too late (DeepSeek Responses): move the output up.
                    if let Some(value) = value_at(body, chain.nodes[r].ptr) {
                        touched.insert(r);
                        drop_node(&mut p, a, r);
                        placed
                            .entry(target_for(a, n))
                            .or_default()
                            .push(value.clone());
                        p.note(
                            v.rule,
                            chain.nodes[r].ptr.render(),
                            "move",
                            format!("moved the output to right after its call at {}", v.path),
                        );
                    }
                    continue;
                }
                match opts.missing_result {
                    MissingResult::Synthesize => {
                        let Some(value) = synthesized(a, body, n) else {
                            continue;
                        };
                        placed.entry(target_for(a, n)).or_default().push(value);
                        p.note(
                            v.rule,
                            v.path.clone(),
                            "insert",
                            format!(
                                "added an error result for {} saying it was interrupted",
                                describe_call(a, n)
                            ),
                        );
                    }
                    MissingResult::DropCall => {
                        drop_node(&mut p, a, n);
                        p.note(
                            v.rule,
                            v.path.clone(),
                            "drop",
                            format!("dropped {}, which was never answered", describe_call(a, n)),
                        );
                    }
                }
            }
            (Rule::ToolResultWithoutCall, Some(n)) => {
                if !touched.insert(n) {
                    continue;
                }
                let NodeKind::Result {
                    call_id: Some(rid), ..
                } = chain.nodes[n].kind
                else {
                    orphan(&mut p, a, body, n, v, opts.orphan_result);
                    continue;
                };
                // It carries the call's provider item id (fc_…) instead of its call id.
                let by_item_id = chain.nodes[..n].iter().find_map(|m| match m.kind {
                    NodeKind::Call {
                        item_id: Some(item),
                        call_id: Some(cid),
                        ..
                    } if item == rid && cid != rid => Some(cid),
                    _ => None,
                });
                if let Some(cid) = by_item_id {
                    let ptr = chain.nodes[n].ptr;
                    if let Some(edit) = id_field_edit(d, ptr, false, cid) {
                        p.fields.push(edit);
                        p.note(v.rule, v.path.clone(), "set", format!("the result named the call's item id `{rid}`; set it to the call id `{cid}`"));
                        continue;
                    }
                }
                // Its call comes later: move it to where that call's results go.
                let later_call = (n + 1..chain.nodes.len()).find(|&m| {
                    matches!(chain.nodes[m].kind, NodeKind::Call { call_id: Some(c), kind: CallKind::Client, .. } if c == rid)
                        && !result_of.contains_key(&m)
                });
                if let (Some(c), Some(value)) = (later_call, value_at(body, chain.nodes[n].ptr)) {
                    touched.insert(c);
                    drop_node(&mut p, a, n);
                    placed
                        .entry(target_for(a, c))
                        .or_default()
                        .push(value.clone());
                    p.note(
                        v.rule,
                        v.path.clone(),
                        "move",
                        format!(
                            "moved the result after its call at {}",
                            chain.nodes[c].ptr.render()
                        ),
                    );
                    continue;
                }
                orphan(&mut p, a, body, n, v, opts.orphan_result);
            }
            (Rule::ToolResultNotAdjacent, Some(n)) => {
                let Some(&c) = call_of.get(&n) else { continue };
                if !touched.insert(n) {
                    continue;
                }
                let Some(value) = value_at(body, chain.nodes[n].ptr) else {
                    continue;
                };
                drop_node(&mut p, a, n);
                placed
                    .entry(target_for(a, c))
                    .or_default()
                    .push(value.clone());
                p.note(
                    v.rule,
                    v.path.clone(),
                    "move",
                    format!(
                        "moved the result next to its call at {}",
                        chain.nodes[c].ptr.render()
                    ),
                );
            }
            (Rule::DuplicateCallId, Some(n))
                if matches!(chain.nodes[n].kind, NodeKind::Call { .. }) =>
            {
                // A replayed copy of an earlier call (same id, same everything) goes; two
                // different calls sharing an id cannot be told apart without guessing.
                let NodeKind::Call {
                    call_id: Some(id), ..
                } = chain.nodes[n].kind
                else {
                    continue;
                };
                let first = chain.nodes[..n].iter().position(
                    |m| matches!(m.kind, NodeKind::Call { call_id: Some(c), .. } if c == id),
                );
                let same = first.is_some_and(|f| {
                    value_at(body, chain.nodes[f].ptr) == value_at(body, chain.nodes[n].ptr)
                });
                if same && touched.insert(n) {
                    drop_node(&mut p, a, n);
                    p.note(
                        v.rule,
                        v.path.clone(),
                        "drop",
                        format!("dropped a replayed copy of call `{id}`"),
                    );
                }
            }
            (Rule::DuplicateCallId, Some(n))
                if matches!(
                    chain.nodes[n].kind,
                    NodeKind::Message { .. } | NodeKind::Reasoning { .. }
                ) =>
            {
                // Responses: a second item with an id already used. A replayed copy goes;
                // a different message keeps its content without the id; a different
                // reasoning item cannot exist without its id and goes.
                let Some(id) = item_id_of(&chain.nodes[n].kind) else {
                    continue;
                };
                let Some(i) = chain.turns[chain.nodes[n].turn]
                    .ptr
                    .item
                    .map(|i| i as usize)
                else {
                    continue;
                };
                if !touched.insert(n) {
                    continue;
                }
                let first = chain.nodes[..n]
                    .iter()
                    .position(|m| item_id_of(&m.kind) == Some(id));
                let first_item = first.and_then(|f| chain.turns[chain.nodes[f].turn].ptr.item);
                let same = first_item.is_some_and(|f| {
                    items.and_then(|it| it.get(f as usize)) == items.and_then(|it| it.get(i))
                });
                let reasoning = matches!(chain.nodes[n].kind, NodeKind::Reasoning { .. });
                if same || reasoning {
                    drop_node(&mut p, a, n);
                    let what = if same {
                        "a replayed copy of"
                    } else {
                        "a second reasoning item with"
                    };
                    p.note(
                        v.rule,
                        v.path.clone(),
                        "drop",
                        format!("dropped {what} item `{id}`"),
                    );
                } else {
                    p.remove_item_id(i);
                    p.note(
                        v.rule,
                        v.path.clone(),
                        "set",
                        format!("removed the item id `{id}` from the second item that carried it"),
                    );
                }
            }
            (Rule::DuplicateCallId, Some(n))
                if matches!(chain.nodes[n].kind, NodeKind::Result { .. }) =>
            {
                if !touched.insert(n) {
                    continue;
                }
                drop_node(&mut p, a, n);
                p.note(
                    v.rule,
                    v.path.clone(),
                    "drop",
                    "dropped the second result for a call that was already answered".into(),
                );
            }
            (Rule::InvalidCallId, Some(n)) => {
                let id = match chain.nodes[n].kind {
                    NodeKind::Call {
                        call_id: Some(id), ..
                    }
                    | NodeKind::Result {
                        call_id: Some(id), ..
                    } if !id.is_empty() => id,
                    NodeKind::Call { .. } if a.dialect != Dialect::Gemini => {
                        // No id, and no orphan result proves which it was: no result can
                        // ever answer it.
                        if touched.insert(n) {
                            drop_node(&mut p, a, n);
                            p.note(
                                v.rule,
                                v.path.clone(),
                                "drop",
                                format!(
                                    "dropped {}, which has no id and so can never be answered",
                                    describe_call(a, n)
                                ),
                            );
                        }
                        continue;
                    }
                    NodeKind::Result { .. } if a.dialect != Dialect::Gemini => {
                        // A result with no call id answers nothing: handled as an orphan.
                        if touched.insert(n) {
                            orphan(&mut p, a, body, n, v, opts.orphan_result);
                        }
                        continue;
                    }
                    _ => continue,
                };
                if let Some(new) = conforming_id(a, id) {
                    if new != id {
                        renames.insert(id.to_string(), new);
                    }
                }
            }
            (Rule::EmptyContent, _) => {
                let block = node.filter(|&n| {
                    matches!(chain.nodes[n].kind, NodeKind::Text { .. } | NodeKind::Empty)
                });
                // A Gemini part that kept only its thought signature: the signature is
                // worth keeping, on an empty text part (as Gemini itself streams it).
                let signed_part = block.filter(|&n| {
                    d == Dialect::Gemini
                        && value_at(body, chain.nodes[n].ptr).is_some_and(|part| {
                            part.get("thoughtSignature").is_some()
                                || part.get("thought_signature").is_some()
                        })
                });
                if let Some(n) = signed_part {
                    let ptr = chain.nodes[n].ptr;
                    if let (Some(i), Some(k), Some(j), true) =
                        (ptr.item, ptr.key, ptr.sub, touched.insert(n))
                    {
                        p.fields.push(FieldEdit {
                            item: i as usize,
                            sub: Some((k, j as usize)),
                            name: "text".into(),
                            value: Some(json!("")),
                        });
                        p.note(v.rule, v.path.clone(), "set", "gave the signature-only part an empty text, keeping its thought signature".into());
                    }
                } else if let Some(n) = block {
                    if touched.insert(n) {
                        drop_node(&mut p, a, n);
                        p.note(
                            v.rule,
                            v.path.clone(),
                            "drop",
                            "dropped the empty block".into(),
                        );
                    }
                } else if let Some(t) = turn_at(&v.path, v.turn) {
                    let turn = &chain.turns[t];
                    let Some(i) = turn.ptr.item.map(|i| i as usize) else {
                        continue;
                    };
                    if d == Dialect::OpenAiChat && turn.role != Role::Assistant {
                        p.fields.push(FieldEdit {
                            item: i,
                            sub: None,
                            name: "content".into(),
                            value: Some(json!("")),
                        });
                        p.note(
                            v.rule,
                            v.path.clone(),
                            "set",
                            "set the null content to an empty string".into(),
                        );
                    } else if p.drop_items.insert(i) {
                        p.note(
                            v.rule,
                            v.path.clone(),
                            "drop",
                            format!("dropped the {} message, which has no content", turn.wire),
                        );
                    }
                }
            }
            (Rule::ReasoningWithoutFollower, _) => {
                if let Some(i) = turn_at(&v.path, v.turn)
                    .and_then(|t| chain.turns[t].ptr.item)
                    .map(|i| i as usize)
                {
                    if !p.moved_items.contains(&i) && p.drop_items.insert(i) {
                        p.note(v.rule, v.path.clone(), "drop", "dropped the reasoning item, whose follower is gone (it cannot be recreated)".into());
                    }
                }
            }
            (Rule::FollowerIdMismatch, _) => {
                if let Some(i) = turn_at(&v.path, v.turn)
                    .and_then(|t| chain.turns[t].ptr.item)
                    .map(|i| i as usize)
                {
                    if i > 0 && p.drop_items.insert(i - 1) {
                        p.note(v.rule, Ptr::item(d.history_key(), i - 1).render(), "drop", "dropped the reasoning item, whose follower was replaced by another item".into());
                    }
                    // An id the provider never issued (not msg_ on a message) is refused on
                    // its own: send the message without one.
                    let minted = items.and_then(|it| it.get(i)).is_some_and(|m| {
                        m.get("type").and_then(Value::as_str) == Some("message")
                            && m.get("id")
                                .and_then(Value::as_str)
                                .is_some_and(|id| !id.starts_with("msg_"))
                    });
                    if minted {
                        p.remove_item_id(i);
                        p.note(
                            v.rule,
                            v.path.clone(),
                            "set",
                            "removed the message id, which the provider never issued".into(),
                        );
                    }
                }
            }
            (Rule::CallWithoutReasoning, _) => {
                let Some(t) = turn_at(&v.path, v.turn) else {
                    continue;
                };
                // Its reasoning sits after it in the same run: put it back in front.
                let mut later = None;
                for u in t + 1..chain.turns.len() {
                    if chain.turns[u].role != Role::Assistant {
                        break;
                    }
                    if matches!(
                        chain.turn_nodes(u).first().map(|n| &n.kind),
                        Some(NodeKind::Reasoning { .. })
                    ) {
                        // Only a reasoning item that lost its place: one followed by an
                        // output of its own is where it belongs.
                        let stranded = chain
                            .turns
                            .get(u + 1)
                            .is_none_or(|n| n.role != Role::Assistant)
                            || matches!(
                                chain.turn_nodes(u + 1).first().map(|n| &n.kind),
                                Some(NodeKind::Reasoning { .. })
                            );
                        if stranded {
                            later = Some(u);
                        }
                        break;
                    }
                }
                let items_of = |t: usize| chain.turns[t].ptr.item.map(|i| i as usize);
                if let (Some(u), Some(i), Some(ri)) = (later, items_of(t), later.and_then(items_of))
                {
                    if let Some(value) = items.and_then(|it| it.get(ri)) {
                        p.move_item_before(ri, i, value.clone());
                        p.note(
                            v.rule,
                            chain.turns[u].ptr.render(),
                            "move",
                            format!(
                                "moved the reasoning item back in front of its output at {}",
                                v.path
                            ),
                        );
                        continue;
                    }
                }
                if let Some(i) = items_of(t) {
                    p.remove_item_id(i);
                    p.note(v.rule, v.path.clone(), "set", "removed the item id, so the item is sent as plain input that needs no reasoning item".into());
                }
            }
            (Rule::ThinkingNotFirst, _) => {
                let Some(&t) = v.turn.as_ref() else { continue };
                let nodes = &chain.nodes[chain.turns[t].first..chain.turns[t].end];
                if !nodes
                    .iter()
                    .any(|m| matches!(m.kind, NodeKind::Reasoning { .. }))
                {
                    continue; // A loop opener without thinking: a signed block cannot be invented.
                }
                let Some(i) = chain.turns[t].ptr.item.map(|i| i as usize) else {
                    continue;
                };
                let Some(blocks) = items
                    .and_then(|it| it.get(i))
                    .and_then(|m| m.get("content"))
                    .and_then(Value::as_array)
                else {
                    continue;
                };
                let (mut thinking, mut rest): (Vec<Value>, Vec<Value>) = (Vec::new(), Vec::new());
                for b in blocks {
                    let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
                    if ty == "thinking" || ty == "redacted_thinking" {
                        thinking.push(b.clone());
                    } else {
                        rest.push(b.clone());
                    }
                }
                thinking.extend(rest);
                if let Some(item) = items.and_then(|it| it.get(i)) {
                    let mut item = item.clone();
                    if let Some(o) = item.as_object_mut() {
                        o.insert("content".into(), Value::Array(thinking));
                    }
                    p.replace_items.insert(i, item);
                    p.note(
                        v.rule,
                        v.path.clone(),
                        "reorder",
                        "moved the thinking blocks back to the start of the message".into(),
                    );
                }
            }
            (Rule::ThinkingModified, Some(n)) => {
                if !touched.insert(n) {
                    continue;
                }
                drop_node(&mut p, a, n);
                p.note(
                    v.rule,
                    v.path.clone(),
                    "drop",
                    "dropped the thinking block, which cannot be sent as it is".into(),
                );
            }
            (Rule::MissingThoughtSignature, Some(n)) => {
                let ptr = chain.nodes[n].ptr;
                let (Some(i), Some(k), Some(j)) = (ptr.item, ptr.key, ptr.sub) else {
                    continue;
                };
                let snake =
                    value_at(body, ptr).is_some_and(|part| part.get("function_call").is_some());
                let field = if snake {
                    "thought_signature"
                } else {
                    "thoughtSignature"
                };
                // The step's signature landed on a later call of the same step: move it back.
                let t = chain.nodes[n].turn;
                let stray = chain.turn_nodes(t).iter().find(|m| {
                    m.ptr != ptr && matches!(m.kind, NodeKind::Call { signed: true, .. })
                });
                if let Some(other) = stray {
                    let (Some(ok), Some(oj)) = (other.ptr.key, other.ptr.sub) else {
                        continue;
                    };
                    let sig = value_at(body, other.ptr)
                        .and_then(|part| {
                            part.get("thoughtSignature")
                                .or_else(|| part.get("thought_signature"))
                        })
                        .cloned();
                    let other_field = if value_at(body, other.ptr)
                        .is_some_and(|part| part.get("thought_signature").is_some())
                    {
                        "thought_signature"
                    } else {
                        "thoughtSignature"
                    };
                    if let Some(sig) = sig {
                        p.fields.push(FieldEdit {
                            item: i as usize,
                            sub: Some((ok, oj as usize)),
                            name: other_field.into(),
                            value: None,
                        });
                        p.fields.push(FieldEdit {
                            item: i as usize,
                            sub: Some((k, j as usize)),
                            name: field.into(),
                            value: Some(sig),
                        });
                        p.note(
                            v.rule,
                            v.path.clone(),
                            "move",
                            format!(
                                "moved the step's thought signature back from {} to its first call",
                                other.ptr.render()
                            ),
                        );
                        continue;
                    }
                }
                p.fields.push(FieldEdit {
                    item: i as usize,
                    sub: Some((k, j as usize)),
                    name: field.into(),
                    value: Some(json!(SKIP_SIGNATURE)),
                });
                p.note(
                    v.rule,
                    v.path.clone(),
                    "set",
                    format!("set {field} to Google's documented placeholder `{SKIP_SIGNATURE}`"),
                );
            }
            (Rule::FunctionResponseCount, _) => {
                let Some(&t) = v.turn.as_ref() else { continue };
                if t == 0 {
                    continue;
                }
                for (k, node) in chain.nodes.iter().enumerate() {
                    if node.turn == t - 1
                        && matches!(
                            node.kind,
                            NodeKind::Call {
                                kind: CallKind::Client,
                                ..
                            }
                        )
                        && !result_of.contains_key(&k)
                    {
                        if opts.missing_result == MissingResult::DropCall {
                            if touched.insert(k) {
                                drop_node(&mut p, a, k);
                                p.note(
                                    v.rule,
                                    node.ptr.render(),
                                    "drop",
                                    format!(
                                        "dropped {}, which was never answered",
                                        describe_call(a, k)
                                    ),
                                );
                            }
                        } else if let Some(value) = synthesized(a, body, k) {
                            placed.entry(target_for(a, k)).or_default().push(value);
                            p.note(
                                v.rule,
                                node.ptr.render(),
                                "insert",
                                format!("added an error response for {}", describe_call(a, k)),
                            );
                        }
                    }
                    if let (true, Some(&c)) = (node.turn == t, call_of.get(&k)) {
                        if chain.nodes[c].turn != t - 1 && touched.insert(k) {
                            // It answers a call of an earlier turn: take it there.
                            if let Some(value) = value_at(body, node.ptr) {
                                drop_node(&mut p, a, k);
                                placed
                                    .entry(target_for(a, c))
                                    .or_default()
                                    .push(value.clone());
                                p.note(
                                    v.rule,
                                    node.ptr.render(),
                                    "move",
                                    format!(
                                        "moved the response next to its call at {}",
                                        chain.nodes[c].ptr.render()
                                    ),
                                );
                            }
                        }
                    }
                    if node.turn == t
                        && matches!(
                            node.kind,
                            NodeKind::Result {
                                kind: CallKind::Client,
                                ..
                            }
                        )
                        && !call_of.contains_key(&k)
                        && touched.insert(k)
                    {
                        drop_node(&mut p, a, k);
                        p.note(
                            v.rule,
                            node.ptr.render(),
                            "drop",
                            "dropped a function response that answers no call of the turn before"
                                .into(),
                        );
                    }
                }
            }
            (Rule::MissingReasoningContent, _) => {
                if let Some(i) = turn_at(&v.path, v.turn)
                    .and_then(|t| chain.turns[t].ptr.item)
                    .map(|i| i as usize)
                {
                    p.fields.push(FieldEdit {
                        item: i,
                        sub: None,
                        name: "reasoning_content".into(),
                        value: Some(json!("")),
                    });
                    p.note(v.rule, v.path.clone(), "set", "added an empty reasoning_content, which the provider accepts in place of the lost one".into());
                }
            }
            (Rule::Malformed, _)
                if v.provider_error
                    .as_deref()
                    .is_some_and(|e| e.contains("trailing whitespace")) =>
            {
                let Some(ptr) = a.chain.facts.final_trailing_whitespace else {
                    continue;
                };
                let Some(Value::String(text)) = value_at(body, ptr).and_then(|v| {
                    if v.is_string() {
                        Some(v)
                    } else {
                        v.get("text")
                    }
                }) else {
                    continue;
                };
                let trimmed = json!(text.trim_end());
                let Some(i) = ptr.item.map(|i| i as usize) else {
                    continue;
                };
                let edit = match (ptr.key, ptr.sub) {
                    (Some(k), Some(j)) => FieldEdit {
                        item: i,
                        sub: Some((k, j as usize)),
                        name: "text".into(),
                        value: Some(trimmed),
                    },
                    _ => FieldEdit {
                        item: i,
                        sub: None,
                        name: "content".into(),
                        value: Some(trimmed),
                    },
                };
                p.fields.push(edit);
                p.note(
                    v.rule,
                    v.path.clone(),
                    "set",
                    "removed the trailing white space of the final assistant text".into(),
                );
            }
            (Rule::Malformed, _) if v.path.ends_with("/tool_calls") => {
                if let Some(i) = v
                    .path
                    .split('/')
                    .nth(2)
                    .and_then(|s| s.parse::<usize>().ok())
                {
                    p.fields.push(FieldEdit {
                        item: i,
                        sub: None,
                        name: "tool_calls".into(),
                        value: None,
                    });
                    p.note(
                        v.rule,
                        v.path.clone(),
                        "drop",
                        "removed the empty tool_calls array".into(),
                    );
                }
            }
            _ => {}
        }
    }

    if !renames.is_empty() {
        rename_ids(&mut p, a, &renames);
    }
    for (target, values) in placed {
        place(&mut p, a, body, target, values);
    }
    p
}

/// Where results for a call go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    /// New items after this history item.
    AfterItem(usize),
    /// Blocks at the start (after leading results) of this item's content / parts.
    IntoItem(usize, usize),
}

/// Where a result of the call at node `n` must go.
fn target_for(a: &Analysis, n: usize) -> Target {
    let chain = &a.chain;
    let c = chain.nodes[n].turn;
    let item = |t: usize| chain.turns[t].ptr.item.map(|i| i as usize).unwrap_or(0);
    match a.dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => {
            // After the run of tool results (and, in Responses, sibling calls) that follows.
            let mut t = c;
            while t + 1 < chain.turns.len() {
                let next = &chain.turns[t + 1];
                let sibling_call = a.dialect == Dialect::OpenAiResponses
                    && chain.turn_nodes(t + 1).iter().all(|m| {
                        matches!(
                            m.kind,
                            NodeKind::Call {
                                kind: CallKind::Client,
                                ..
                            }
                        )
                    });
                if next.role == Role::Tool || sibling_call {
                    t += 1;
                } else {
                    break;
                }
            }
            Target::AfterItem(item(t))
        }
        Dialect::Anthropic | Dialect::Gemini => {
            let next_holds_results = chain.turns.get(c + 1).is_some_and(|t| {
                matches!(t.role, Role::User | Role::Tool)
                    && (a.dialect == Dialect::Anthropic
                        || chain
                            .turn_nodes(c + 1)
                            .iter()
                            .any(|m| matches!(m.kind, NodeKind::Result { .. })))
            });
            if next_holds_results {
                let leading = chain
                    .turn_nodes(c + 1)
                    .iter()
                    .take_while(|m| matches!(m.kind, NodeKind::Result { .. }))
                    .count();
                Target::IntoItem(
                    item(c + 1),
                    if a.dialect == Dialect::Gemini {
                        usize::MAX
                    } else {
                        leading
                    },
                )
            } else {
                Target::AfterItem(item(c))
            }
        }
    }
}

fn place(p: &mut Plan, a: &Analysis, body: &Value, target: Target, values: Vec<Value>) {
    match (a.dialect, target) {
        (Dialect::OpenAiChat | Dialect::OpenAiResponses, Target::AfterItem(i)) => {
            p.insert_after.entry(i).or_default().extend(values);
        }
        (Dialect::Anthropic, Target::AfterItem(i)) => {
            p.insert_after
                .entry(i)
                .or_default()
                .push(json!({"role": "user", "content": values}));
        }
        (Dialect::Gemini, Target::AfterItem(i)) => {
            p.insert_after
                .entry(i)
                .or_default()
                .push(json!({"role": "user", "parts": values}));
        }
        (_, Target::IntoItem(i, at)) => {
            let key = if a.dialect == Dialect::Gemini {
                "parts"
            } else {
                "content"
            };
            // A string content counts as one block at index 0.
            let len = body
                .get(a.dialect.history_key())
                .and_then(|h| h.get(i))
                .and_then(|m| m.get(key))
                .map(|c| c.as_array().map(Vec::len).unwrap_or(1))
                .unwrap_or(0);
            let at = if at >= len { usize::MAX } else { at };
            p.insert_subs
                .entry((i, key, at))
                .or_default()
                .extend(values);
        }
    }
}

/// Drop the node `n`: a whole item where the node is the item, else the element.
fn drop_node(p: &mut Plan, a: &Analysis, n: usize) {
    let ptr = a.chain.nodes[n].ptr;
    match (ptr.item, ptr.key, ptr.sub) {
        (Some(i), Some(k), Some(j)) => {
            p.drop_subs.insert((i as usize, k, j as usize));
        }
        (Some(i), _, None) => {
            p.drop_items.insert(i as usize);
        }
        _ => {}
    }
}

fn replace_node(p: &mut Plan, ptr: Ptr, value: Value) {
    match (ptr.item, ptr.key, ptr.sub) {
        (Some(i), Some(k), Some(j)) => {
            p.replace_subs.insert((i as usize, k, j as usize), value);
        }
        (Some(i), _, None) => {
            p.replace_items.insert(i as usize, value);
        }
        _ => {}
    }
}

fn value_at(body: &Value, ptr: Ptr) -> Option<&Value> {
    let mut v = body.get(ptr.root)?;
    if let Some(i) = ptr.item {
        v = v.get(i as usize)?;
    }
    if let Some(k) = ptr.key {
        v = v.get(k)?;
    }
    if let Some(j) = ptr.sub {
        v = v.get(j as usize)?;
    }
    Some(v)
}

fn describe_call(a: &Analysis, n: usize) -> String {
    match a.chain.nodes[n].kind {
        NodeKind::Call { call_id, name, .. } => match (call_id, name) {
            (Some(id), Some(name)) => format!("call `{id}` to `{name}`"),
            (Some(id), None) => format!("call `{id}`"),
            (None, Some(name)) => format!("the call to `{name}`"),
            (None, None) => "the call".into(),
        },
        _ => "the call".into(),
    }
}

/// A result for the call at node `n`, saying it was interrupted. None when another call
/// has the same id: a result with that id would answer the other call just as well (and
/// the next pass would drop it again as a second answer), so that is left unrepairable.
fn synthesized(a: &Analysis, body: &Value, n: usize) -> Option<Value> {
    let NodeKind::Call {
        call_id,
        name,
        wire,
        ..
    } = a.chain.nodes[n].kind
    else {
        return None;
    };
    if let Some(id) = call_id {
        let shared = a.chain.nodes.iter().enumerate().any(|(k, m)| {
            k != n && matches!(m.kind, NodeKind::Call { call_id: Some(c), .. } if c == id)
        });
        if shared {
            return None;
        }
    }
    Some(match a.dialect {
        Dialect::OpenAiChat => dialect::openai_chat::synthesized_result(call_id?, INTERRUPTED),
        Dialect::OpenAiResponses => {
            dialect::openai_responses::synthesized_result(wire, call_id?, INTERRUPTED)?
        }
        Dialect::Anthropic => dialect::anthropic::synthesized_result(call_id?, INTERRUPTED),
        Dialect::Gemini => {
            let snake = value_at(body, a.chain.nodes[n].ptr)
                .is_some_and(|part| part.get("function_call").is_some());
            dialect::gemini::synthesized_result(call_id, name?, INTERRUPTED, snake)
        }
    })
}

fn dialect_result_as_text(d: Dialect, value: &Value) -> Value {
    match d {
        Dialect::OpenAiChat => dialect::openai_chat::result_as_text(value),
        Dialect::OpenAiResponses => dialect::openai_responses::result_as_text(value),
        Dialect::Anthropic => dialect::anthropic::result_as_text(value),
        Dialect::Gemini => dialect::gemini::result_as_text(value),
    }
}

/// An id of the form the profile wants, derived from `id` so that the same id always maps
/// to the same new one (calls and their results stay paired).
fn conforming_id(a: &Analysis, id: &str) -> Option<String> {
    use crate::profile::CallIdForm;
    let h = fnv(id);
    let form = match a.dialect {
        Dialect::OpenAiChat => a.profile.chat_call_id,
        Dialect::OpenAiResponses => a.profile.responses_call_id,
        _ => CallIdForm::Any,
    };
    match (a.dialect, form) {
        (_, CallIdForm::NineAlnum) => Some(base62(h, 9)),
        (_, CallIdForm::MaxLen(max)) if id.chars().count() > max => {
            let keep: String = id.chars().take(max.saturating_sub(9)).collect();
            Some(format!("{keep}_{}", base62(h, 8)))
        }
        (Dialect::Anthropic, _) => {
            let cleaned: String = id
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            Some(cleaned)
        }
        _ => None,
    }
}

fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn base62(mut h: u64, len: usize) -> String {
    const ABC: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut s = String::with_capacity(len);
    for _ in 0..len {
        s.push(ABC[(h % 62) as usize] as char);
        h /= 62;
        if h == 0 {
            h = fnv(&s) | 1;
        }
    }
    s
}

/// Rename call ids consistently on calls and results.
fn rename_ids(p: &mut Plan, a: &Analysis, renames: &BTreeMap<String, String>) {
    for node in &a.chain.nodes {
        let (id, is_call) = match node.kind {
            NodeKind::Call {
                call_id: Some(id), ..
            } => (id, true),
            NodeKind::Result {
                call_id: Some(id), ..
            } => (id, false),
            _ => continue,
        };
        let Some(new) = renames.get(id) else { continue };
        let Some(edit) = id_field_edit(a.dialect, node.ptr, is_call, new) else {
            continue;
        };
        p.fields.push(edit);
        p.note(
            Rule::InvalidCallId,
            node.ptr.render(),
            "rename",
            format!("renamed call id `{id}` to `{new}`, on the call and its results alike"),
        );
    }
}

/// Calls without an id whose turn has exactly one such call, with exactly one result that
/// answers nothing where that call's results must sit: (call node) -> (result node, id).
fn restorable_ids<'a>(
    a: &Analysis<'a>,
    call_of: &HashMap<usize, usize>,
) -> BTreeMap<usize, (usize, &'a str)> {
    let chain = &a.chain;
    let mut out = BTreeMap::new();
    if a.dialect == Dialect::Gemini {
        return out;
    }
    for t in 0..chain.turns.len() {
        let idless: Vec<usize> = (chain.turns[t].first..chain.turns[t].end)
            .filter(|&n| {
                matches!(chain.nodes[n].kind, NodeKind::Call { kind: CallKind::Client, call_id, wire, .. }
                    if call_id.is_none_or(str::is_empty) && wire != dialect::openai_chat::LEGACY_FUNCTION_CALL)
            })
            .collect();
        if idless.len() != 1 {
            continue;
        }
        let window = result_window(a, t + 1);
        let orphans: Vec<(usize, &str)> = window
            .flat_map(|u| chain.turns[u].first..chain.turns[u].end)
            .filter(|n| !call_of.contains_key(n))
            .filter_map(|n| match chain.nodes[n].kind {
                NodeKind::Result {
                    kind: CallKind::Client,
                    call_id: Some(id),
                    ..
                } if !id.is_empty() => Some((n, id)),
                _ => None,
            })
            .collect();
        if let [(r, id)] = orphans[..] {
            out.insert(idless[0], (r, id));
        }
    }
    out
}

/// Drop a result that answers no call, or keep its content as text.
fn orphan(p: &mut Plan, a: &Analysis, body: &Value, n: usize, v: &Violation, policy: OrphanResult) {
    match policy {
        OrphanResult::Drop => {
            drop_node(p, a, n);
            p.note(
                v.rule,
                v.path.clone(),
                "drop",
                "dropped the result, which answers no call".into(),
            );
        }
        OrphanResult::ToText => {
            let Some(value) = value_at(body, a.chain.nodes[n].ptr) else {
                return;
            };
            let text = dialect_result_as_text(a.dialect, value);
            replace_node(p, a.chain.nodes[n].ptr, text);
            p.note(
                v.rule,
                v.path.clone(),
                "convert",
                "turned the result, which answers no call, into plain text".into(),
            );
        }
    }
}

/// The edit that sets the call id on a call (`is_call`) or result node.
fn id_field_edit(d: Dialect, ptr: Ptr, is_call: bool, id: &str) -> Option<FieldEdit> {
    let field = match (d, is_call) {
        (Dialect::OpenAiChat, true) | (Dialect::Anthropic, true) | (Dialect::Gemini, _) => "id",
        (Dialect::OpenAiChat, false) => "tool_call_id",
        (Dialect::OpenAiResponses, _) => "call_id",
        (Dialect::Anthropic, false) => "tool_use_id",
    };
    if d == Dialect::Gemini {
        return None;
    }
    let item = ptr.item? as usize;
    let sub = match (ptr.key, ptr.sub) {
        (Some(k), Some(j)) => Some((k, j as usize)),
        _ => None,
    };
    Some(FieldEdit {
        item,
        sub,
        name: field.into(),
        value: Some(json!(id)),
    })
}

/// Results without a call id, alone where the results of exactly one unanswered call must
/// sit: (result node) -> (that call's id, call node).
fn restorable_result_ids<'a>(
    a: &Analysis<'a>,
    result_of: &HashMap<usize, usize>,
    call_of: &HashMap<usize, usize>,
) -> Vec<(usize, (&'a str, usize))> {
    let chain = &a.chain;
    let mut out = Vec::new();
    if a.dialect == Dialect::Gemini {
        return out;
    }
    let only_calls = |t: usize| {
        let nodes = chain.turn_nodes(t);
        !nodes.is_empty()
            && nodes.iter().all(|n| {
                matches!(
                    n.kind,
                    NodeKind::Call {
                        kind: CallKind::Client,
                        ..
                    }
                )
            })
    };
    let mut t = 0;
    while t < chain.turns.len() {
        if !chain.turn_nodes(t).iter().any(|n| {
            matches!(
                n.kind,
                NodeKind::Call {
                    kind: CallKind::Client,
                    ..
                }
            )
        }) {
            t += 1;
            continue;
        }
        // The call run: this turn, and in Responses the sibling call items after it.
        let mut end = t + 1;
        while a.dialect == Dialect::OpenAiResponses && end < chain.turns.len() && only_calls(end) {
            end += 1;
        }
        let unanswered: Vec<(usize, &str)> = (chain.turns[t].first..chain.turns[end - 1].end)
            .filter(|n| !result_of.contains_key(n))
            .filter_map(|n| match chain.nodes[n].kind {
                NodeKind::Call {
                    kind: CallKind::Client,
                    call_id: Some(id),
                    ..
                } if !id.is_empty() => Some((n, id)),
                _ => None,
            })
            .collect();
        let window = result_window(a, end);
        let idless: Vec<usize> = window
            .flat_map(|u| chain.turns[u].first..chain.turns[u].end)
            .filter(|n| !call_of.contains_key(n))
            .filter(|&n| {
                matches!(chain.nodes[n].kind, NodeKind::Result { kind: CallKind::Client, call_id, name, .. }
                    if call_id.is_none_or(str::is_empty) && name.is_none())
            })
            .collect();
        if let ([(c, id)], [r]) = (&unanswered[..], &idless[..]) {
            out.push((*r, (*id, *c)));
        }
        t = end;
    }
    out
}

/// The turns, from `start` on, where the results of the calls just before must sit: the
/// next user message (Anthropic), or the run of tool turns (OpenAI dialects).
fn result_window(a: &Analysis, start: usize) -> std::ops::Range<usize> {
    let chain = &a.chain;
    let mut end = start;
    while end < chain.turns.len() {
        let fits = match a.dialect {
            Dialect::Anthropic => end == start && chain.turns[end].role == Role::User,
            _ => chain.turns[end].role == Role::Tool,
        };
        if !fits {
            break;
        }
        end += 1;
    }
    start..end
}
