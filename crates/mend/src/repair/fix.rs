//! The fixer: what a rule's fix may do to a body, as a plan of edits addressed by chain
//! indices and applied in one rebuild of the history array.
//!
//! Invariant: a fix touches only what its violation's `loc` names (and the results it
//! places for the calls it names); it never parses a pointer or reads a message.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{json, Value};

use crate::chain::{CallKind, Chain, NodeKind, Ptr, Role};
use crate::dialect::{self, Dialect};
use crate::rules::IdMap;
use crate::violation::{Rule, Violation};
use crate::Analysis;

use super::{Edit, MissingResult, OrphanResult, RepairOptions, INTERRUPTED};

/// A rule's fix: plans the edits for one violation of the rule.
pub(crate) type FixFn = fn(&mut Fixer<'_, '_>, &Violation);

/// One pass of repair: the analysis of the body as it is, and the plan being built.
pub(crate) struct Fixer<'p, 'a> {
    /// The check of the body this pass repairs.
    pub(crate) a: &'p Analysis<'a>,
    /// That body.
    pub(crate) body: &'p Value,
    /// The repair policy.
    pub(crate) opts: &'p RepairOptions,
    /// The body's history array.
    pub(crate) items: Option<&'p Vec<Value>>,
    /// The edits so far.
    pub(crate) plan: Plan,
    /// Nodes some fix already acted on this pass (a node is fixed once a pass).
    pub(crate) touched: BTreeSet<usize>,
    /// Call ids to rename on calls and results alike, applied at the end of the pass.
    pub(crate) renames: BTreeMap<String, String>,
    /// Ids given back this pass to a call or result that had lost them: the chain does
    /// not show them there yet, so no rename of them may run before the next pass.
    pub(crate) restored: BTreeSet<String>,
    /// Synthesized or moved results, grouped by where they go, with the call node each
    /// answers: placed in call order (Gemini pairs id-less responses by position), not in
    /// the order the fixes ran.
    placed: BTreeMap<Target, Vec<(usize, Value)>>,
    /// Call node -> the result node that answers it.
    pub(crate) result_of: HashMap<usize, usize>,
    /// Result node -> the call node it answers.
    pub(crate) call_of: HashMap<usize, usize>,
    /// The chain's calls by id, read on the first fix that asks.
    calls: std::cell::OnceCell<CallsById<'a>>,
    /// What a fresh call id must not be, read on the first fix that asks for one.
    fresh: Option<FreshIds<'a>>,
    /// The first message or reasoning node carrying each provider item id, read on the
    /// first fix that asks.
    first_items: std::cell::OnceCell<IdMap<'a, usize>>,
}

/// The ids a fresh call id must differ from: every call and result id of the chain, and
/// the ids fixes of this pass gave already (two calls renamed in one pass get two ids).
struct FreshIds<'a> {
    in_chain: std::collections::HashSet<&'a str, foldhash::fast::RandomState>,
    given: std::collections::HashSet<String, foldhash::fast::RandomState>,
    /// Per id renamed, the suffix to try next: a client that reuses one id in every
    /// turn has each later call renamed in one pass, without trying the taken suffixes
    /// again for each.
    next: HashMap<String, u32>,
}

impl<'a> FreshIds<'a> {
    fn read(chain: &Chain<'a>) -> Self {
        let in_chain = chain
            .nodes
            .iter()
            .filter_map(|m| match m.kind {
                NodeKind::Call { call_id, .. } | NodeKind::Result { call_id, .. } => call_id,
                _ => None,
            })
            .collect();
        FreshIds {
            in_chain,
            given: Default::default(),
            next: HashMap::new(),
        }
    }
}

/// The chain's calls by call id and by provider item id, each list in node order: what
/// the pairing fixes look up for every orphan or duplicate, once a pass rather than a
/// walk over the chain each (thousands of orphans made that quadratic).
pub(crate) struct CallsById<'a> {
    /// Call nodes (client and server) by call id.
    pub(crate) by_call_id: IdMap<'a, Vec<usize>>,
    /// Call nodes by provider item id (Responses `fc_…`).
    pub(crate) by_item_id: IdMap<'a, Vec<usize>>,
}

impl<'a> CallsById<'a> {
    fn read(chain: &Chain<'a>) -> Self {
        let by_call_id = crate::rules::nodes_by_call_id(chain, true);
        let mut by_item_id: IdMap<'a, Vec<usize>> = IdMap::default();
        for (n, id) in chain.item_ids() {
            if matches!(chain.nodes[n].kind, NodeKind::Call { .. }) {
                by_item_id.entry(id).or_default().push(n);
            }
        }
        CallsById {
            by_call_id,
            by_item_id,
        }
    }

    /// The call nodes with call id `id`, in order.
    pub(crate) fn with_call_id(&self, id: &str) -> &[usize] {
        self.by_call_id.get(id).map_or(&[], Vec::as_slice)
    }

    /// The call nodes with provider item id `id`, in order.
    pub(crate) fn with_item_id(&self, id: &str) -> &[usize] {
        self.by_item_id.get(id).map_or(&[], Vec::as_slice)
    }
}

impl<'p, 'a> Fixer<'p, 'a> {
    pub(crate) fn new(a: &'p Analysis<'a>, body: &'p Value, opts: &'p RepairOptions) -> Self {
        Fixer {
            a,
            body,
            opts,
            items: body.get(a.dialect.history_key()).and_then(Value::as_array),
            plan: Plan::default(),
            touched: BTreeSet::new(),
            renames: BTreeMap::new(),
            restored: BTreeSet::new(),
            placed: BTreeMap::new(),
            result_of: a.pairs.iter().copied().collect(),
            call_of: a.pairs.iter().map(|&(c, r)| (r, c)).collect(),
            calls: std::cell::OnceCell::new(),
            fresh: None,
            first_items: std::cell::OnceCell::new(),
        }
    }

    /// The first message or reasoning node that carries the provider item id `id`.
    pub(crate) fn first_with_item_id(&self, id: &str) -> Option<usize> {
        let first = self.first_items.get_or_init(|| {
            let chain = &self.a.chain;
            let mut m: IdMap<'a, usize> = IdMap::default();
            for (n, id) in chain.item_ids() {
                if !matches!(chain.nodes[n].kind, NodeKind::Call { .. }) {
                    m.entry(id).or_insert(n);
                }
            }
            m
        });
        first.get(id).copied()
    }

    /// A new id for a call that reuses `id`: `{id}_2`, or the next number, that no call
    /// or result of the body carries and no fix of this pass gave.
    pub(crate) fn fresh_call_id(&mut self, id: &str) -> String {
        self.unused_id(id, usize::MAX)
    }

    /// `candidate` when no call or result of the body carries it and no fix of this pass
    /// gave it, else the first of `{candidate}_2`, `{candidate}_3`, … that is free (the
    /// candidate cut so that it stays within `max` characters): the id a rename gives.
    pub(crate) fn unused_id(&mut self, candidate: &str, max: usize) -> String {
        let chain = &self.a.chain;
        let fresh = self.fresh.get_or_insert_with(|| FreshIds::read(chain));
        let free = |id: &str| !fresh.in_chain.contains(id) && !fresh.given.contains(id);
        let new = if free(candidate) {
            candidate.to_string()
        } else {
            let mut k = fresh.next.get(candidate).copied().unwrap_or(2);
            let new = loop {
                let suffix = format!("_{k}");
                k += 1;
                let keep = max.saturating_sub(suffix.len());
                let numbered: String = candidate.chars().take(keep).chain(suffix.chars()).collect();
                if free(&numbered) {
                    break numbered;
                }
            };
            fresh.next.insert(candidate.to_string(), k);
            new
        };
        fresh.given.insert(new.clone());
        new
    }

    /// The chain's calls by id (read once a pass).
    pub(crate) fn calls(&self) -> &CallsById<'a> {
        self.calls.get_or_init(|| CallsById::read(&self.a.chain))
    }

    /// The chain of the body.
    pub(crate) fn chain(&self) -> &'p Chain<'a> {
        &self.a.chain
    }

    /// The dialect of the body.
    pub(crate) fn dialect(&self) -> Dialect {
        self.a.dialect
    }

    /// The indices of the history turns, in order (not a top-level system or
    /// instructions turn).
    pub(crate) fn history(&self) -> Vec<usize> {
        self.chain().turns_under(self.dialect().history_key())
    }

    /// Whether the body is wrong only by `rule`: the fixes that join or drop whole
    /// turns wait for that, so they never act on turns another fix is still moving.
    pub(crate) fn only_wrong_by(&self, rule: Rule) -> bool {
        !self
            .a
            .violations
            .iter()
            .any(|w| w.severity == crate::violation::Severity::Error && w.rule != rule)
    }

    /// Mark node `n` as acted on; false when a fix already did this pass.
    pub(crate) fn claim(&mut self, n: usize) -> bool {
        self.touched.insert(n)
    }

    /// The history item index of turn `t`.
    pub(crate) fn item_of_turn(&self, t: usize) -> Option<usize> {
        self.chain()
            .turns
            .get(t)?
            .ptr
            .item_index()
            .map(|i| i as usize)
    }

    /// The wire value of node `n`.
    pub(crate) fn value_of(&self, n: usize) -> Option<&'p Value> {
        self.chain().nodes[n].ptr.resolve(self.body)
    }

    /// The wire value at `ptr`.
    pub(crate) fn value_at(&self, ptr: Ptr) -> Option<&'p Value> {
        ptr.resolve(self.body)
    }

    /// Report an edit.
    pub(crate) fn note(&mut self, rule: Rule, path: String, action: &'static str, detail: String) {
        self.plan.note(rule, path, action, detail);
    }

    /// Drop node `n`: a whole item where the node is the item, else the element.
    pub(crate) fn drop_node(&mut self, n: usize) {
        drop_node(&mut self.plan, self.a, n);
    }

    /// Replace node `n`'s wire value (the whole item, or its element) with `value`, for
    /// violation `v`, reported as `action` and `detail`. A whole item written anew waits
    /// for the next pass when another edit of the pass touches the item
    /// ([`Plan::settle`]); its report waits with it.
    pub(crate) fn replace_node(
        &mut self,
        n: usize,
        value: Value,
        v: &Violation,
        action: &'static str,
        detail: String,
    ) {
        self.replace_node_as(n, value, (v.rule, v.path.clone()), action, detail);
    }

    /// [`Fixer::replace_node`], reported under `rule` at `path` (a fix that acts on a
    /// node other than its finding's).
    pub(crate) fn replace_node_as(
        &mut self,
        n: usize,
        value: Value,
        (rule, path): (Rule, String),
        action: &'static str,
        detail: String,
    ) {
        let ptr = self.a.chain.nodes[n].ptr;
        replace_node(&mut self.plan, ptr, value);
        self.note(rule, path, action, detail);
        if let (Some(i), None) = (ptr.item_index(), ptr.sub_index()) {
            let note = self.plan.edits.len() - 1;
            if let Some(r) = self.plan.replace_items.get_mut(&(i as usize)) {
                r.notes.push(note);
            }
        }
    }

    /// Write history item `item` as `values`, in their order: one wire item the dialect
    /// takes as several (a chat message with `tool_calls` in Responses `input`), for
    /// violation `v`, reported as `action` and `detail`. It is a whole-item replacement
    /// (the first value) that brings the others after it ([`Replace::then`]): it waits
    /// with them when another edit of the pass touches the item ([`Plan::settle`]).
    /// Results placed after the item in the same pass come after all of them.
    pub(crate) fn split_item(
        &mut self,
        item: usize,
        values: Vec<Value>,
        v: &Violation,
        action: &'static str,
        detail: String,
    ) {
        let mut values = values.into_iter();
        let Some(first) = values.next() else { return };
        let from = self.plan.edits.len();
        self.note(v.rule, v.path.clone(), action, detail);
        self.plan.replace_item(item, first, Vec::new(), from);
        if let Some(r) = self.plan.replace_items.get_mut(&item) {
            r.then = values.collect();
        }
    }

    /// Put `value` (a result of the call at node `call`) where that call's results go.
    pub(crate) fn place_result_of(&mut self, call: usize, value: Value) {
        let target = target_for(self.a, call);
        self.placed.entry(target).or_default().push((call, value));
    }

    /// Move the result at node `r` to where the results of the call at node `call` go.
    pub(crate) fn move_result(&mut self, r: usize, call: usize) -> bool {
        let Some(value) = self.value_of(r) else {
            return false;
        };
        self.drop_node(r);
        self.place_result_of(call, value.clone());
        true
    }

    /// Set (`Some`) or remove (`None`) a field on the item of `ptr`, or on its element.
    pub(crate) fn set_field(&mut self, ptr: Ptr, name: &str, value: Option<Value>) -> bool {
        let Some(item) = ptr.item_index().map(|i| i as usize) else {
            return false;
        };
        let sub = match (ptr.inner_key(), ptr.sub_index()) {
            (Some(k), Some(j)) => Some((k, j as usize)),
            _ => None,
        };
        self.plan.fields.push(FieldEdit {
            item,
            sub,
            inner: None,
            name: name.into(),
            value,
        });
        true
    }

    /// Set (`Some`) or remove (`None`) a top-level field of the body, once a pass.
    pub(crate) fn set_body_field(&mut self, name: &'static str, value: Option<Value>) -> bool {
        if self.plan.body_fields.iter().any(|(n, _)| *n == name) {
            return false;
        }
        self.plan.body_fields.push((name, value));
        true
    }

    /// Set the call id of a call (`is_call`) or result node; false where the dialect has
    /// no such field to set (Gemini pairs by name).
    pub(crate) fn set_call_id(&mut self, ptr: Ptr, is_call: bool, id: &str) -> bool {
        match id_field_edit(self.dialect(), ptr, is_call, id) {
            Some(edit) => {
                self.plan.fields.push(edit);
                true
            }
            None => false,
        }
    }

    /// "call `id` to `name`", for reports.
    pub(crate) fn describe_call(&self, n: usize) -> String {
        describe_call(self.a, n)
    }

    /// A result for the call at node `n` saying it was interrupted (see [`synthesized`]).
    pub(crate) fn synthesized(&self, n: usize) -> Option<Value> {
        let text = self.opts.synthesized_text.as_deref().unwrap_or(INTERRUPTED);
        // An id two calls share names neither: a result made for it would answer both.
        // Looked up in the calls by id, not by a walk of the chain per call (thousands
        // of unanswered calls made that quadratic).
        if let NodeKind::Call {
            call_id: Some(id), ..
        } = self.a.chain.nodes[n].kind
        {
            if self.calls().with_call_id(id).len() > 1 {
                return None;
            }
        }
        synthesized(self.a, self.body, n, text)
    }

    /// Add an interrupted result for the call at node `n`, or drop the call, as the
    /// policy says; `rule` and `path` name the finding in the report, `noun` what the
    /// dialect calls a result.
    pub(crate) fn answer_or_drop(&mut self, rule: Rule, path: String, n: usize, noun: &str) {
        match self.opts.missing_result {
            MissingResult::Synthesize => {
                let Some(value) = self.synthesized(n) else {
                    return;
                };
                self.place_result_of(n, value);
                let detail = format!(
                    "added an error {noun} for {} saying it was interrupted",
                    self.describe_call(n)
                );
                self.note(rule, path, "insert", detail);
            }
            MissingResult::DropCall => {
                self.drop_node(n);
                let detail = format!(
                    "dropped {}, which was never answered",
                    self.describe_call(n)
                );
                self.note(rule, path, "drop", detail);
            }
        }
    }

    /// Drop a result that answers no call, or keep its content as text, as the policy says.
    pub(crate) fn orphan(&mut self, n: usize, v: &Violation) {
        match self.opts.orphan_result {
            OrphanResult::Drop => {
                self.drop_node(n);
                self.note(
                    v.rule,
                    v.path.clone(),
                    "drop",
                    "dropped the result, which answers no call".into(),
                );
            }
            OrphanResult::ToText => {
                let ptr = self.chain().nodes[n].ptr;
                let Some(value) = self.value_at(ptr) else {
                    return;
                };
                let text = dialect_result_as_text(self.dialect(), value);
                let detail = "turned the result, which answers no call, into plain text";
                self.replace_node(n, text, v, "convert", detail.into());
            }
        }
    }

    /// The plan, with the renames and the placed results of the pass added.
    pub(crate) fn finish(mut self) -> Plan {
        let renames = std::mem::take(&mut self.renames);
        if !renames.is_empty() {
            crate::rules::ids::rename_ids(&mut self, &renames);
        }
        for (target, mut placed) in std::mem::take(&mut self.placed) {
            placed.sort_by_key(|&(call, _)| call);
            let mut values: Vec<Value> = placed.into_iter().map(|(_, v)| v).collect();
            if !renames.is_empty() {
                let d = self.dialect();
                values
                    .iter_mut()
                    .for_each(|v| rename_placed_result(d, v, &renames));
            }
            place(&mut self.plan, self.a, self.body, target, values);
        }
        self.plan.settle();
        self.plan
    }
}

/// A body with a plan applied: the body, where each history item came from (see
/// [`Plan::apply`]), and the input items that did not come through, as they were.
pub(crate) type Applied = (Value, Vec<Option<usize>>, Vec<(usize, Value)>);

/// Where an element lives inside a history item: (item, key, index).
type Sub = (usize, &'static str, usize);

/// A field to set (`Some`) or remove (`None`) on an item or on one of its elements.
#[derive(Debug, Clone)]
pub(crate) struct FieldEdit {
    pub(crate) item: usize,
    pub(crate) sub: Option<(&'static str, usize)>,
    /// The union member the field lives in (Bedrock `toolUse` / `toolResult`).
    pub(crate) inner: Option<&'static str>,
    pub(crate) name: String,
    pub(crate) value: Option<Value>,
}

/// The edits of one pass, expressed against the body as it is at the start of the pass.
#[derive(Default)]
pub(crate) struct Plan {
    pub(crate) drop_items: BTreeSet<usize>,
    /// Items written anew as a whole. Never beside another edit of the same item in a
    /// pass ([`Plan::settle`]).
    pub(crate) replace_items: BTreeMap<usize, Replace>,
    pub(crate) insert_after: BTreeMap<usize, Vec<Value>>,
    /// New items before this history item.
    pub(crate) insert_before: BTreeMap<usize, Vec<Value>>,
    /// Items moved elsewhere (their drop is not a loss to report).
    pub(crate) moved_items: BTreeSet<usize>,
    pub(crate) drop_subs: BTreeSet<Sub>,
    pub(crate) replace_subs: BTreeMap<Sub, Value>,
    /// Inserted before the element at that index (`usize::MAX`: appended).
    pub(crate) insert_subs: BTreeMap<Sub, Vec<Value>>,
    /// (item, optional sub, field, value): set a field; `None` removes it.
    pub(crate) fields: Vec<FieldEdit>,
    /// Top-level fields of the body to set (`Some`) or remove (`None`): a request setting
    /// a fix must change (Anthropic `thinking`, turned off as the provider advises).
    pub(crate) body_fields: Vec<(&'static str, Option<Value>)>,
    pub(crate) edits: Vec<Edit>,
}

/// A history item written anew as a whole: its new value, built from the item as the pass
/// found it, the reports of the fix that wrote it (indexes into [`Plan::edits`]), and the
/// items it takes in (a join: dropped, `true` when moved into it rather than dropped as a
/// copy), which go only if the replacement is made.
#[derive(Debug, Clone)]
pub(crate) struct Replace {
    pub(crate) value: Value,
    pub(crate) notes: Vec<usize>,
    pub(crate) absorbs: Vec<(usize, bool)>,
    /// Items written right after it, in its place with it (a split item's others).
    pub(crate) then: Vec<Value>,
}

impl Plan {
    /// Write history item `i` anew as `value`, taking in the items `absorbs` (see
    /// [`Replace`]), reported by the edits pushed from `notes_from` on.
    pub(crate) fn replace_item(
        &mut self,
        i: usize,
        value: Value,
        absorbs: Vec<(usize, bool)>,
        notes_from: usize,
    ) {
        let notes = (notes_from..self.edits.len()).collect();
        self.replace_items.insert(
            i,
            Replace {
                value,
                notes,
                absorbs,
                then: Vec::new(),
            },
        );
    }

    /// Whether an edit of this plan other than a whole replacement touches history item
    /// `i`: drops it, or edits its elements or fields.
    fn edits_inside(&self, i: usize) -> bool {
        let elements = (i, "", 0)..(i + 1, "", 0);
        self.drop_items.contains(&i)
            || self.drop_subs.range(elements.clone()).next().is_some()
            || self.replace_subs.range(elements.clone()).next().is_some()
            || self.insert_subs.range(elements).next().is_some()
            || self.fields.iter().any(|f| f.item == i)
    }

    /// Settle the pass's whole-item replacements against its other edits. A replacement
    /// is built from the item as the pass found it, and element and field edits address
    /// the item's elements by their index there: applied to the replacement, an element
    /// edit would name another element (the thinking fix once wrote a reordered message
    /// while another fix dropped a block of it by its old index, and the drop took the
    /// thinking block). So the two never meet in one pass: a replacement of an item that
    /// another edit touches (or that takes in such an item) is withdrawn with its reports
    /// and the items it would take in, and its finding is fixed in the next pass, on the
    /// body the other edits made (the driver runs passes until the body is valid). The
    /// replacement waits rather than the element edits, as an element edit may be half
    /// of a move (a result dropped in one item and placed in another); a replacement
    /// carries everything it does with it.
    pub(crate) fn settle(&mut self) {
        let mut withdrawn = BTreeSet::new();
        let replaces = std::mem::take(&mut self.replace_items);
        for (i, r) in replaces {
            let touched = std::iter::once(i)
                .chain(r.absorbs.iter().map(|&(a, _)| a))
                .any(|j| self.edits_inside(j));
            if touched {
                withdrawn.extend(r.notes);
                continue;
            }
            for &(a, moved) in &r.absorbs {
                self.drop_items.insert(a);
                if moved {
                    self.moved_items.insert(a);
                }
            }
            let mut r = r;
            if !r.then.is_empty() {
                // Before what the pass placed after the item (its results).
                let after = self.insert_after.entry(i).or_default();
                after.splice(0..0, std::mem::take(&mut r.then));
            }
            self.replace_items.insert(i, r);
        }
        if !withdrawn.is_empty() {
            let mut k = 0;
            self.edits.retain(|_| {
                k += 1;
                !withdrawn.contains(&(k - 1))
            });
        }
    }

    /// Remove a Responses item's provider id (`msg_`, `fc_`): the item is then plain input.
    pub(crate) fn remove_item_id(&mut self, item: usize) {
        self.fields.push(FieldEdit {
            item,
            sub: None,
            inner: None,
            name: "id".into(),
            value: None,
        });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// Move history item `from` to just before item `to`.
    pub(crate) fn move_item_before(&mut self, from: usize, to: usize, value: Value) {
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

    /// The body with the plan applied, and for each item of its history the index of the
    /// item of `body`'s it is a copy of, unchanged (`None`: made or changed here).
    pub(crate) fn apply(&self, body: &Value, d: Dialect) -> (Value, Vec<Option<usize>>) {
        let (next, origin, _) = self.apply_owned(body.clone(), d);
        (next, origin)
    }

    /// [`Plan::apply`], taking the body: the items kept are moved, not copied. Also the
    /// input's items that did not come through unchanged (dropped or edited), as they
    /// were, with their index.
    pub(crate) fn apply_owned(&self, body: Value, d: Dialect) -> Applied {
        let key = d.history_key();
        let Value::Object(mut obj) = body else {
            return (body, Vec::new(), Vec::new());
        };
        let items = match obj.get_mut(key) {
            Some(Value::Array(items)) => std::mem::take(items),
            _ => return (Value::Object(obj), Vec::new(), Vec::new()),
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
        let mut origin = Vec::with_capacity(items.len() + 4);
        let mut removed = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            if let Some(extra) = self.insert_before.get(&i) {
                rebuilt.extend(extra.iter().cloned());
            }
            let untouched = !self.replace_items.contains_key(&i)
                && !sub_keys.contains_key(&i)
                && !fields_by_item.contains_key(&i);
            let dropped = self.drop_items.contains(&i);
            if !dropped && untouched {
                rebuilt.push(item);
            } else if !dropped {
                let mut it = self
                    .replace_items
                    .get(&i)
                    .map(|r| r.value.clone())
                    .unwrap_or_else(|| item.clone());
                for k in sub_keys.get(&i).into_iter().flatten() {
                    self.apply_subs(&mut it, i, k, fields_by_item.get(&i));
                }
                if let (Some(fs), Some(o)) = (fields_by_item.get(&i), it.as_object_mut()) {
                    for f in fs.iter().filter(|f| f.sub.is_none()) {
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
                rebuilt.push(it);
                removed.push((i, item));
            } else {
                removed.push((i, item));
            }
            if let Some(extra) = self.insert_after.get(&i) {
                rebuilt.extend(extra.iter().cloned());
            }
            // Everything pushed for this item is new, but the item itself when untouched.
            origin.resize(rebuilt.len(), None);
            if untouched && !dropped {
                let at = rebuilt.len() - 1 - self.insert_after.get(&i).map_or(0, Vec::len);
                origin[at] = Some(i);
            }
        }
        // Everything but the history stays as it is, in its place.
        if let Some(slot) = obj.get_mut(key) {
            *slot = Value::Array(rebuilt);
        }
        for (name, value) in &self.body_fields {
            match value {
                Some(v) => {
                    obj.insert((*name).to_string(), v.clone());
                }
                None => {
                    obj.shift_remove(*name);
                }
            }
        }
        (Value::Object(obj), origin, removed)
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
                    let el = match f.inner {
                        Some(member) => match el.get_mut(member) {
                            Some(v) => v,
                            None => continue,
                        },
                        None => &mut el,
                    };
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
    let c = chain.nodes[n].turn();
    let item = |t: usize| {
        chain.turns[t]
            .ptr
            .item_index()
            .map(|i| i as usize)
            .unwrap_or(0)
    };
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
        Dialect::Anthropic | Dialect::Gemini | Dialect::BedrockConverse => {
            // Gemini: the turn after the call turn that holds its responses, whatever its
            // role (a client that sent them as `model`, bifrost#1387): a response put in
            // a new turn before it would pair by order with another call.
            let next_holds_results = chain.turns.get(c + 1).is_some_and(|t| {
                (matches!(t.role, Role::User | Role::Tool) || a.dialect == Dialect::Gemini)
                    && (a.dialect != Dialect::Gemini
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
        (Dialect::Anthropic | Dialect::BedrockConverse, Target::AfterItem(i)) => {
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
    match (ptr.item_index(), ptr.inner_key(), ptr.sub_index()) {
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
    match (ptr.item_index(), ptr.inner_key(), ptr.sub_index()) {
        (Some(i), Some(k), Some(j)) => {
            p.replace_subs.insert((i as usize, k, j as usize), value);
        }
        (Some(i), _, None) => {
            let from = p.edits.len();
            p.replace_item(i as usize, value, Vec::new(), from);
        }
        _ => {}
    }
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
fn synthesized(a: &Analysis, body: &Value, n: usize, text: &str) -> Option<Value> {
    let NodeKind::Call {
        call_id,
        name,
        wire,
        ..
    } = a.chain.nodes[n].kind
    else {
        return None;
    };
    let wire = a.chain.wire_text(wire);
    Some(match a.dialect {
        Dialect::OpenAiChat => dialect::openai_chat::synthesized_result(call_id?, text),
        Dialect::OpenAiResponses => {
            dialect::openai_responses::synthesized_result(wire, call_id?, text)?
        }
        Dialect::Anthropic => dialect::anthropic::synthesized_result(call_id?, text),
        Dialect::BedrockConverse => dialect::bedrock_converse::synthesized_result(call_id?, text),
        Dialect::Gemini => {
            let snake = a.chain.nodes[n]
                .ptr
                .resolve(body)
                .is_some_and(|part| part.get("function_call").is_some());
            dialect::gemini::synthesized_result(call_id, name?, text, snake)
        }
    })
}

fn dialect_result_as_text(d: Dialect, value: &Value) -> Value {
    match d {
        Dialect::OpenAiChat => dialect::openai_chat::result_as_text(value),
        Dialect::OpenAiResponses => dialect::openai_responses::result_as_text(value),
        Dialect::Anthropic => dialect::anthropic::result_as_text(value),
        Dialect::Gemini => dialect::gemini::result_as_text(value),
        Dialect::BedrockConverse => dialect::bedrock_converse::result_as_text(value),
    }
}

/// The field that holds a call's id (`is_call`) or a result's call id in a dialect.
fn id_field(d: Dialect, is_call: bool) -> &'static str {
    match (d, is_call) {
        (Dialect::OpenAiChat, true) | (Dialect::Anthropic, true) | (Dialect::Gemini, _) => "id",
        (Dialect::OpenAiChat, false) => "tool_call_id",
        (Dialect::OpenAiResponses, _) => "call_id",
        (Dialect::Anthropic, false) => "tool_use_id",
        (Dialect::BedrockConverse, _) => "toolUseId",
    }
}

/// A result placed this pass (moved next to its call, or synthesized for it) was built
/// from the body as the pass found it, so it still carries its call's old id: it gets
/// the pass's rename too. Left out, the next pass finds it answering no call and drops
/// it, and a moved result is the tool's real output, lost behind an "interrupted" one.
fn rename_placed_result(d: Dialect, value: &mut Value, renames: &BTreeMap<String, String>) {
    let holder = match d {
        Dialect::BedrockConverse => value.get_mut(dialect::bedrock_converse::INNER.1),
        _ => Some(value),
    };
    let field = id_field(d, false);
    if let Some(Value::String(id)) = holder.and_then(|h| h.get_mut(field)) {
        if let Some(new) = renames.get(id.as_str()) {
            id.clone_from(new);
        }
    }
}

/// The edit that sets the call id on a call (`is_call`) or result node.
fn id_field_edit(d: Dialect, ptr: Ptr, is_call: bool, id: &str) -> Option<FieldEdit> {
    let field = id_field(d, is_call);
    if d == Dialect::Gemini {
        return None;
    }
    let item = ptr.item_index()? as usize;
    let sub = match (ptr.inner_key(), ptr.sub_index()) {
        (Some(k), Some(j)) => Some((k, j as usize)),
        _ => None,
    };
    let (call, result) = dialect::bedrock_converse::INNER;
    Some(FieldEdit {
        item,
        sub,
        inner: (d == Dialect::BedrockConverse).then_some(if is_call { call } else { result }),
        name: field.into(),
        value: Some(json!(id)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(p: &mut Plan, detail: &str) {
        p.note(
            Rule::ThinkingNotFirst,
            "/messages/1".into(),
            "x",
            detail.into(),
        );
    }

    fn body() -> Value {
        json!({"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
                {"type": "thinking", "thinking": "I call it.", "signature": "sig"}
            ]},
            {"role": "user", "content": "Never mind."}
        ]})
    }

    #[test]
    fn a_replaced_item_and_an_element_edit_of_it_never_share_a_pass() {
        // One fix writes the message anew with its thinking first; another drops the
        // tool_use by its index in the message as the pass found it (0). Applied to the
        // replacement, that drop would take the thinking block and keep the call.
        let body = body();
        let mut p = Plan::default();
        let reordered = json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I call it.", "signature": "sig"},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
        ]});
        let from = p.edits.len();
        note(&mut p, "reordered");
        p.replace_item(1, reordered, Vec::new(), from);
        p.drop_subs.insert((1, "content", 0));
        note(&mut p, "dropped the call");
        p.settle();
        let (next, origin) = p.apply(&body, Dialect::Anthropic);
        assert_eq!(
            next["messages"][1]["content"],
            json!([{"type": "thinking", "thinking": "I call it.", "signature": "sig"}]),
            "the call went by its own index and the replacement waits for the next pass"
        );
        let details: Vec<_> = p.edits.iter().map(|e| e.detail.as_str()).collect();
        assert_eq!(
            details,
            ["dropped the call"],
            "the waiting replacement is not reported"
        );
        assert_eq!(origin, [Some(0), None, Some(2)]);
    }

    #[test]
    fn a_replacement_alone_on_its_items_is_made_with_what_it_takes_in() {
        let body = body();
        let joined = json!({"role": "user", "content": "joined"});
        let mut p = Plan::default();
        let from = p.edits.len();
        note(&mut p, "joined");
        p.replace_item(0, joined.clone(), vec![(2, true)], from);
        p.settle();
        let (next, _) = p.apply(&body, Dialect::Anthropic);
        assert_eq!(next["messages"], json!([joined, body["messages"][1]]));
        assert_eq!(p.edits.len(), 1);
        assert!(p.moved_items.contains(&2));
    }

    /// A split of item 1 into two: its first value replaces it, the other follows it.
    fn split(p: &mut Plan) -> (Value, Value) {
        let (first, second) = (
            json!({"role": "assistant", "content": "first"}),
            json!({"role": "assistant", "content": "second"}),
        );
        let from = p.edits.len();
        note(p, "split");
        p.replace_item(1, first.clone(), Vec::new(), from);
        if let Some(r) = p.replace_items.get_mut(&1) {
            r.then = vec![second.clone()];
        }
        (first, second)
    }

    #[test]
    fn a_split_item_brings_its_others_before_what_the_pass_placed_after_it() {
        let body = body();
        let mut p = Plan::default();
        let placed = json!({"role": "user", "content": "placed"});
        p.insert_after.insert(1, vec![placed.clone()]);
        let (first, second) = split(&mut p);
        p.settle();
        let (next, _) = p.apply(&body, Dialect::Anthropic);
        assert_eq!(
            next["messages"],
            json!([
                body["messages"][0],
                first,
                second,
                placed,
                body["messages"][2]
            ])
        );
    }

    #[test]
    fn a_split_item_another_edit_touches_waits_with_the_items_it_brings() {
        let body = body();
        let mut p = Plan::default();
        split(&mut p);
        p.drop_subs.insert((1, "content", 0));
        note(&mut p, "dropped the call");
        p.settle();
        let (next, _) = p.apply(&body, Dialect::Anthropic);
        let messages = next["messages"].as_array().map(Vec::len);
        assert_eq!(messages, Some(3), "neither part of the split is written");
        let details: Vec<_> = p.edits.iter().map(|e| e.detail.as_str()).collect();
        assert_eq!(details, ["dropped the call"]);
    }

    #[test]
    fn a_replacement_taking_in_an_item_another_edit_touches_waits_whole() {
        // The item the join would take in gets a field edit this pass: the join waits,
        // and the item it would have dropped stays, with its edit.
        let body = body();
        let mut p = Plan::default();
        let from = p.edits.len();
        note(&mut p, "joined");
        p.replace_item(
            0,
            json!({"role": "user", "content": "joined"}),
            vec![(2, true)],
            from,
        );
        p.fields.push(FieldEdit {
            item: 2,
            sub: None,
            inner: None,
            name: "content".into(),
            value: Some(json!("edited")),
        });
        note(&mut p, "edited");
        p.settle();
        let (next, _) = p.apply(&body, Dialect::Anthropic);
        assert_eq!(next["messages"][0], body["messages"][0]);
        assert_eq!(next["messages"][2]["content"], json!("edited"));
        assert!(p.drop_items.is_empty() && p.moved_items.is_empty());
        let details: Vec<_> = p.edits.iter().map(|e| e.detail.as_str()).collect();
        assert_eq!(details, ["edited"]);
    }
}
