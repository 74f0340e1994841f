//! Trim: fit a history into a token budget by dropping whole atomic units, oldest first.
//!
//! The protected prefix (instructions plus `protect` pinned turns) always stays, and so
//! do the last `keep_last` units (at least one), even over budget (the report says so).
//! A unit is a group of calls with their results and reasoning, or a plain turn (see
//! [`groups`](crate::groups)), so trimming never orphans a result or strands a reasoning
//! item; for Anthropic and Gemini the kept history starts at a user turn (or right after
//! a pinned user turn), because both reject a history that starts with the assistant;
//! OpenAI's APIs accept an assistant turn right after the instructions.
//!
//! Token counts use the model's real tokenizer where one is public (`o200k_base` for
//! GPT-4o, GPT-4.1, GPT-5 and the o-series; `cl100k_base` for GPT-4 and GPT-3.5), offline,
//! through the crate's own `tokens` module (the same vocabularies as tiktoken, counted without
//! building the token list; counts equal tiktoken's: a test pins a few, another compares
//! with `bpe-openai` on random text, and `bench/trim-vs-langchain.sh` compares every
//! conversation of its corpus with Python tiktoken),
//! and else a declared estimate: one token per four characters of text, which is the rule
//! of thumb Anthropic and Google publish for English. Each history item is counted once per
//! call ([`trim`] keeps nothing between calls; [`trim_with_cache`] reuses counts).

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use serde_json::Value;

use crate::chain::{Chain, Role};
use crate::groups::Groups;
use crate::tokens::{Merged, Vocab};
use crate::violation::{Severity, Violation};
use crate::{analyze, Analysis, CheckOptions, Dialect, Error};

/// Which counter was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Counter {
    /// tiktoken `o200k_base`.
    O200kBase,
    /// tiktoken `cl100k_base`.
    Cl100kBase,
    /// Four characters per token (no public tokenizer for the model).
    EstimateCharsOver4,
}

impl Counter {
    /// The counter for a model (and dialect, when the model is unknown).
    pub fn for_model(model: Option<&str>, dialect: Dialect) -> Counter {
        let m = model.map(|m| m.rsplit('/').next().unwrap_or(m).to_ascii_lowercase());
        match m.as_deref() {
            Some(m)
                if m.starts_with("gpt-4o")
                    || m.starts_with("gpt-4.1")
                    || m.starts_with("gpt-5")
                    || m.starts_with("o1")
                    || m.starts_with("o3")
                    || m.starts_with("o4")
                    || m.starts_with("gpt-oss")
                    || m.contains("codex") =>
            {
                Counter::O200kBase
            }
            Some(m) if m.starts_with("gpt-4") || m.starts_with("gpt-3.5") => Counter::Cl100kBase,
            Some(_) => Counter::EstimateCharsOver4,
            None => match dialect {
                Dialect::OpenAiChat | Dialect::OpenAiResponses => Counter::O200kBase,
                Dialect::Anthropic | Dialect::Gemini | Dialect::BedrockConverse => {
                    Counter::EstimateCharsOver4
                }
            },
        }
    }

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Counter::O200kBase => "o200k_base",
            Counter::Cl100kBase => "cl100k_base",
            Counter::EstimateCharsOver4 => "estimate: 4 characters per token",
        }
    }

    /// Tokens in a text.
    pub fn count(self, text: &str) -> usize {
        self.count_in(text, &mut Merged::default())
    }

    /// [`Counter::count`], remembering the merged pieces in `merged`.
    fn count_in(self, text: &str, merged: &mut Merged) -> usize {
        match self {
            Counter::O200kBase => Vocab::O200k.count_in(text, merged),
            Counter::Cl100kBase => Vocab::Cl100k.count_in(text, merged),
            Counter::EstimateCharsOver4 => text.chars().count().div_ceil(4),
        }
    }

    /// Tokens of one history item: the text of every string in it (keys excluded) plus
    /// three tokens of per-message framing, as OpenAI's counting guide does.
    pub fn count_item(self, item: &Value) -> usize {
        self.count_item_in(item, &mut Scratch::default())
    }

    /// Tokens of several items, each as [`Counter::count_item`] counts it, with what a
    /// cold [`trim`] reuses from item to item: the counting a trim does, without its
    /// checks and its output (`trim_bench` times it as the floor of a cold trim).
    pub fn count_items<'v>(self, items: impl IntoIterator<Item = &'v Value>) -> usize {
        let mut scratch = Scratch::default();
        items
            .into_iter()
            .map(|item| self.count_item_in(item, &mut scratch))
            .sum()
    }

    /// [`Counter::count_item`] with what counting item after item reuses.
    fn count_item_in(self, item: &Value, scratch: &mut Scratch) -> usize {
        scratch.gather(item);
        self.count_gathered(scratch)
    }

    /// The count of the item whose text `scratch` holds ([`Scratch::gather`]).
    fn count_gathered(self, scratch: &mut Scratch) -> usize {
        3 + self.count_in(&scratch.text, &mut scratch.merged)
    }
}

/// What counting item after item reuses: the buffer an item's text is gathered in (cleared
/// for each), and the counts of the pieces that are not one token (which come back within
/// a history).
#[derive(Debug, Default)]
struct Scratch {
    text: String,
    merged: Merged,
}

impl Scratch {
    /// Gather the text of `item` in `text`, which is all its count depends on.
    fn gather(&mut self, item: &Value) {
        self.text.clear();
        collect_text(item, &mut self.text);
    }
}

fn collect_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(s);
        }
        Value::Array(a) => a.iter().for_each(|x| collect_text(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect_text(x, out)),
        Value::Number(n) => {
            use std::fmt::Write;
            out.push(' ');
            // Writing to a String cannot fail.
            let _ = write!(out, "{n}");
        }
        Value::Null | Value::Bool(_) => {}
    }
}

/// A cache of item token counts, keyed by a hash of the item's gathered text (what its
/// count is made from: two items with the same text have the same count), for callers
/// that trim the same growing conversation again and again. Bounded: past
/// [`TokenCache::LIMIT`] items it starts over.
#[derive(Debug, Default)]
pub struct TokenCache {
    counts: HashMap<(Counter, u64), usize>,
    /// The keys of the item hash, random per cache: a caller who can choose items (one
    /// process-wide cache serves every caller of the Python binding) cannot craft two
    /// that collide and so read another's count.
    keys: std::collections::hash_map::RandomState,
    /// What counting reuses.
    scratch: Scratch,
}

impl TokenCache {
    /// The most item counts a cache holds (about 10 MB) before it is emptied.
    pub const LIMIT: usize = 1 << 18;

    fn count(&mut self, counter: Counter, item: &Value) -> usize {
        // The text is gathered either way: a hash of one buffer costs less than a walk
        // of the item's tree, and a new item's count reads the same buffer.
        self.scratch.gather(item);
        let key = (
            counter,
            std::hash::BuildHasher::hash_one(&self.keys, self.scratch.text.as_str()),
        );
        if let Some(&n) = self.counts.get(&key) {
            return n;
        }
        if self.counts.len() >= Self::LIMIT {
            self.counts.clear();
        }
        let n = counter.count_gathered(&mut self.scratch);
        self.counts.insert(key, n);
        n
    }

    /// Items counted.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

/// Where item counts come from: counted afresh (with one [`Scratch`] for the call), or
/// through a cache.
enum Counts<'c> {
    Fresh(Scratch),
    Cached(&'c mut TokenCache),
}

impl Counts<'_> {
    fn count(&mut self, counter: Counter, item: &Value) -> usize {
        match self {
            Counts::Fresh(scratch) => counter.count_item_in(item, scratch),
            Counts::Cached(cache) => cache.count(counter, item),
        }
    }
}

/// Trim settings.
#[derive(Debug, Clone, Default)]
pub struct TrimOptions {
    /// Dialect, provider and model, as for check; the model picks the tokenizer.
    pub check: CheckOptions,
    /// The token budget for the request's prompt: the history, its instructions and the
    /// tool definitions.
    pub budget: usize,
    /// Units always kept at the end, even over budget (0 is taken as 1: a history is
    /// never trimmed to nothing).
    pub keep_last: usize,
    /// History turns pinned after the instructions.
    pub protect: usize,
}

/// A unit that was dropped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DroppedUnit {
    /// JSON pointers of its turns in the input body.
    pub paths: Vec<String>,
    /// `group` or `turn`.
    pub kind: &'static str,
    /// Its tokens.
    pub tokens: usize,
}

/// The outcome of a trim.
#[derive(Debug, Clone)]
pub struct Trimmed {
    /// The dialect.
    pub dialect: Dialect,
    /// The trimmed body (the input when nothing was dropped).
    pub body: Value,
    /// The counter used.
    pub counter: Counter,
    /// Tokens before.
    pub tokens_before: usize,
    /// Tokens after.
    pub tokens_after: usize,
    /// Units dropped, oldest first.
    pub dropped: Vec<DroppedUnit>,
    /// The result is still over budget because the prefix and the last units are kept.
    pub over_budget: bool,
    /// Error-severity violations of the output. A damaged input is repaired before it
    /// is trimmed; when repair cannot make it valid, the input comes back untrimmed with
    /// what could not be repaired here.
    pub violations: Vec<Violation>,
    /// The repairs made to a damaged input before it was trimmed.
    pub repairs: Vec<crate::repair::Edit>,
}

/// Trim a body to a token budget.
///
/// ```
/// let turn = |role: &str, text: &str| serde_json::json!({"role": role, "content": text});
/// let long = "many words ".repeat(200);
/// let body = serde_json::json!({"model": "gpt-4o", "messages": [
///     turn("system", "be brief"),
///     turn("user", &long), turn("assistant", &long),
///     turn("user", "and now?"), turn("assistant", "now this."), turn("user", "thanks"),
/// ]});
/// let opts = mend::TrimOptions { budget: 100, keep_last: 1, ..Default::default() };
/// let trimmed = mend::trim(&body, &opts).unwrap();
/// assert!(trimmed.tokens_after <= 100 && trimmed.tokens_before > 100);
/// assert_eq!(trimmed.body["messages"][0]["role"], "system"); // instructions are kept
/// assert!(trimmed.violations.is_empty()); // and no group is cut
/// ```
pub fn trim(body: &Value, opts: &TrimOptions) -> Result<Trimmed, Error> {
    trim_counted(
        Given::Borrowed(body),
        opts,
        &mut Counts::Fresh(Scratch::default()),
    )
}

/// Trim, reusing token counts from earlier calls.
pub fn trim_with_cache(
    body: &Value,
    opts: &TrimOptions,
    cache: &mut TokenCache,
) -> Result<Trimmed, Error> {
    trim_counted(Given::Borrowed(body), opts, &mut Counts::Cached(cache))
}

/// [`trim`], taking the body: the kept items are moved into the output, not copied, and
/// a body that loses nothing is handed back as it is.
pub fn trim_owned(body: Value, opts: &TrimOptions) -> Result<Trimmed, Error> {
    trim_counted(
        Given::Owned(body),
        opts,
        &mut Counts::Fresh(Scratch::default()),
    )
}

/// [`trim_with_cache`], taking the body as [`trim_owned`] does.
pub fn trim_owned_with_cache(
    body: Value,
    opts: &TrimOptions,
    cache: &mut TokenCache,
) -> Result<Trimmed, Error> {
    trim_counted(Given::Owned(body), opts, &mut Counts::Cached(cache))
}

/// A body as given to trim: borrowed (the output copies what it keeps) or owned (the
/// output is made of it).
enum Given<'b> {
    Borrowed(&'b Value),
    Owned(Value),
}

impl Given<'_> {
    fn get(&self) -> &Value {
        match self {
            Given::Borrowed(b) => b,
            Given::Owned(v) => v,
        }
    }

    fn into_owned(self) -> Value {
        match self {
            Given::Borrowed(b) => b.clone(),
            Given::Owned(v) => v,
        }
    }
}

/// What trim makes of a body once it is counted: repaired first, handed back as it is,
/// or cut.
enum Step {
    /// Damaged and repaired: trim the repaired body.
    Repaired(Value, Vec<crate::repair::Edit>),
    /// Handed back untrimmed (damaged beyond repair): the outcome but its body.
    AsIs(Trimmed),
    /// Valid: what to drop, and the outcome but its body.
    Cut(Dropping, Trimmed),
}

fn trim_counted(
    given: Given<'_>,
    opts: &TrimOptions,
    cache: &mut Counts,
) -> Result<Trimmed, Error> {
    let (drop, out) = match step(given.get(), opts, cache)? {
        Step::Repaired(fixed, edits) => {
            let mut t = trim_counted(Given::Owned(fixed), opts, cache)?;
            t.repairs = edits;
            return Ok(t);
        }
        Step::AsIs(t) => {
            return Ok(Trimmed {
                body: given.into_owned(),
                ..t
            });
        }
        Step::Cut(drop, t) => (drop, t),
    };
    let key = out.dialect.history_key();
    let (body, borrowed, taken) = match given {
        Given::Borrowed(b) => (drop.copy_of(b, key), Some(b), Vec::new()),
        Given::Owned(v) => {
            let (body, taken) = drop.move_out_of(v, key);
            (body, None, taken)
        }
    };
    if drop.items.is_empty() {
        return Ok(Trimmed { body, ..out });
    }
    let violations = errors_in(&body, &opts.check)?;
    if violations.is_empty() {
        return Ok(Trimmed { body, ..out });
    }
    // Trimming never makes a valid body invalid: the rare cut that breaks a rule tying
    // kept turns to dropped ones steps back, on the input as it was.
    match borrowed {
        Some(input) => step_back(input, opts, cache, out, violations),
        None => step_back(
            &drop.put_back(body, key, taken),
            opts,
            cache,
            out,
            violations,
        ),
    }
}

/// Check and count a body, and decide what trim does with it.
fn step(body: &Value, opts: &TrimOptions, cache: &mut Counts) -> Result<Step, Error> {
    let analysis = analyze(body, &opts.check)?;
    let counter = Counter::for_model(analysis.chain.facts.model, analysis.dialect);
    let damaged = analysis
        .violations
        .iter()
        .any(|v| v.severity == Severity::Error);
    // A damaged history is repaired first, so what trim hands on is valid; what repair
    // cannot settle is handed back untrimmed, with its violations.
    let unrepairable = match damaged {
        false => None,
        true => {
            let ropts = crate::repair::RepairOptions {
                check: opts.check.clone(),
                ..Default::default()
            };
            let fixed = crate::repair::repair(body, &ropts)?;
            if fixed.valid() {
                return Ok(Step::Repaired(fixed.body, fixed.edits));
            }
            Some(fixed.unrepairable)
        }
    };
    let units = Units::count(body, &analysis, opts.protect, counter, cache);
    let outcome = |tokens_after: usize, dropped: Vec<DroppedUnit>, violations| Trimmed {
        dialect: analysis.dialect,
        body: Value::Null,
        counter,
        tokens_before: units.tokens_before,
        tokens_after,
        dropped,
        over_budget: tokens_after > opts.budget,
        violations,
        repairs: Vec::new(),
    };
    if let Some(violations) = unrepairable {
        return Ok(Step::AsIs(outcome(
            units.tokens_before,
            Vec::new(),
            violations,
        )));
    }
    let cut = units.choose_cut(opts.budget, opts.keep_last);
    let mut drop = units.dropping(cut.units, cut.kept_request);
    let out = outcome(drop.tokens, std::mem::take(&mut drop.dropped), Vec::new());
    Ok(Step::Cut(drop, out))
}

/// The outcome of a trim of `input` whose cut left `violations`: the first earlier cut
/// that leaves none, else that cut with them.
fn step_back(
    input: &Value,
    opts: &TrimOptions,
    cache: &mut Counts,
    out: Trimmed,
    violations: Vec<Violation>,
) -> Result<Trimmed, Error> {
    let analysis = analyze(input, &opts.check)?;
    let units = Units::count(input, &analysis, opts.protect, out.counter, cache);
    let cut = units.choose_cut(opts.budget, opts.keep_last);
    Ok(match units.earlier_valid_cut(cut.units, &opts.check)? {
        Some(valid) => Trimmed {
            body: valid.body,
            tokens_after: valid.tokens,
            over_budget: valid.tokens > opts.budget,
            dropped: valid.dropped,
            violations: Vec::new(),
            ..out
        },
        None => Trimmed {
            body: units.without(cut.units, cut.kept_request).body,
            violations,
            ..out
        },
    })
}

/// The top-level fields a provider reads as prompt besides the history's turns: tool
/// definitions (and their choice), output schemas, and Responses `instructions`. Never
/// dropped, always counted.
fn request_fields(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::OpenAiChat => &["tools", "functions", "response_format"],
        Dialect::OpenAiResponses => &["instructions", "tools", "text"],
        Dialect::Anthropic => &["tools"],
        Dialect::Gemini => &["tools", "toolConfig", "tool_config"],
        Dialect::BedrockConverse => &["toolConfig"],
    }
}

/// The history cut into its protected prefix and droppable units, with what each unit
/// costs.
struct Units<'a> {
    body: &'a Value,
    dialect: Dialect,
    chain: &'a Chain<'a>,
    groups: Groups,
    /// Tokens of each unit, in order.
    tokens: Vec<usize>,
    /// Tokens of the whole history, prefix included.
    tokens_before: usize,
}

/// Where to cut: drop the first `units` units, but keep `kept_request` (the user turn that
/// opened the agent loop the cut falls in, when there is one to keep).
#[derive(Debug, Clone, Copy)]
struct Cut {
    units: usize,
    kept_request: Option<usize>,
}

/// What a cut drops: the units, the history items, and the tokens left.
struct Dropping {
    /// The units dropped (moved into the outcome once it is made).
    dropped: Vec<DroppedUnit>,
    /// Indices of the history items dropped.
    items: BTreeSet<usize>,
    tokens: usize,
}

impl Dropping {
    /// `body` without the dropped items: only the other members and the kept items are
    /// copied.
    fn copy_of(&self, body: &Value, key: &str) -> Value {
        match (body, body.get(key)) {
            (Value::Object(fields), Some(Value::Array(items))) if !self.items.is_empty() => {
                let mut kept = Some(
                    items
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !self.items.contains(i))
                        .map(|(_, v)| v.clone())
                        .collect(),
                );
                let fields = fields
                    .iter()
                    .map(|(k, v)| match kept.take_if(|_| k == key) {
                        Some(kept) => (k.clone(), Value::Array(kept)),
                        None => (k.clone(), v.clone()),
                    });
                Value::Object(fields.collect())
            }
            _ => body.clone(),
        }
    }

    /// `body` without the dropped items, made of it: the kept items moved, not copied.
    /// Also the dropped items, with their index, for [`Dropping::put_back`].
    fn move_out_of(&self, mut body: Value, key: &str) -> (Value, Vec<(usize, Value)>) {
        let Some(Value::Array(items)) = body.get_mut(key).filter(|_| !self.items.is_empty()) else {
            return (body, Vec::new());
        };
        let mut taken = Vec::with_capacity(self.items.len());
        let mut kept = Vec::with_capacity(items.len().saturating_sub(self.items.len()));
        for (i, item) in std::mem::take(items).into_iter().enumerate() {
            match self.items.contains(&i) {
                true => taken.push((i, item)),
                false => kept.push(item),
            }
        }
        *items = kept;
        (body, taken)
    }

    /// The body [`Dropping::move_out_of`] was given, from its output and what it took.
    fn put_back(&self, mut out: Value, key: &str, taken: Vec<(usize, Value)>) -> Value {
        let Some(Value::Array(items)) = out.get_mut(key) else {
            return out;
        };
        let mut kept = std::mem::take(items).into_iter();
        let mut taken = taken.into_iter().peekable();
        let mut all = Vec::with_capacity(kept.len() + taken.len());
        while taken.peek().is_some() || kept.len() > 0 {
            match taken.next_if(|(i, _)| *i == all.len()) {
                Some((_, item)) => all.push(item),
                None => match kept.next() {
                    Some(item) => all.push(item),
                    None => all.extend(taken.by_ref().map(|(_, item)| item)),
                },
            }
        }
        *items = all;
        out
    }
}

/// A trimmed body, what was dropped from it, and the tokens left.
struct Output {
    body: Value,
    dropped: Vec<DroppedUnit>,
    tokens: usize,
}

impl<'a> Units<'a> {
    /// The units of an analyzed body, counted: one count per turn, each wire item counted
    /// once.
    fn count(
        body: &'a Value,
        analysis: &'a Analysis<'a>,
        protect: usize,
        counter: Counter,
        cache: &mut Counts,
    ) -> Units<'a> {
        let chain = &analysis.chain;
        let groups = analysis.groups(protect);
        // The turns' top-level member, looked up once for a run of turns under it.
        let mut last_root: Option<(&str, Option<&Value>)> = None;
        let turn_tokens: Vec<usize> = chain
            .turns
            .iter()
            .map(|t| {
                let root = match last_root {
                    Some((name, v)) if name == t.ptr.root_key() => v,
                    _ => {
                        let v = body.get(t.ptr.root_key());
                        last_root = Some((t.ptr.root_key(), v));
                        v
                    }
                };
                let v = match (t.ptr.item_index(), root) {
                    (Some(i), Some(root)) => root.get(i as usize),
                    (None, root) => root,
                    _ => None,
                };
                v.map(|v| cache.count(counter, v)).unwrap_or(0)
            })
            .collect();
        let tokens: Vec<usize> = groups
            .units
            .iter()
            .map(|u| turn_tokens[u.turns.clone()].iter().sum())
            .collect();
        let request_tokens: usize = request_fields(analysis.dialect)
            .iter()
            .filter_map(|f| body.get(*f).filter(|v| !v.is_null()))
            .map(|v| cache.count(counter, v))
            .sum();
        let prefix_tokens: usize =
            request_tokens + turn_tokens[groups.prefix.clone()].iter().sum::<usize>();
        let tokens_before = prefix_tokens + tokens.iter().sum::<usize>();
        Units {
            body,
            dialect: analysis.dialect,
            chain,
            groups,
            tokens,
            tokens_before,
        }
    }

    /// Whether the history kept after dropping `cut` units starts at a user turn (or is
    /// only the prefix).
    fn starts_with_user(&self, cut: usize) -> bool {
        self.groups
            .units
            .get(cut)
            .is_none_or(|u| self.chain.turns[u.turns.start].role == Role::User)
    }

    /// Drop the oldest units until the rest fits the budget, then move the cut so the
    /// kept history starts where the dialect accepts it.
    fn choose_cut(&self, budget: usize, keep_last: usize) -> Cut {
        // At least the last unit stays: a history trimmed to nothing is rejected by every
        // provider, so dropping it all would make a valid body invalid.
        let droppable = self.groups.units.len().saturating_sub(keep_last.max(1));
        let mut total = self.tokens_before;
        let mut cut = 0;
        while cut < droppable && total > budget {
            total -= self.tokens[cut];
            cut += 1;
        }
        if cut > 0 && !self.starts_with_user(cut) {
            self.start_at_a_user_turn(cut, total, droppable, budget)
        } else {
            Cut {
                units: cut,
                kept_request: None,
            }
        }
    }

    /// A cut whose kept history would start with an assistant turn, moved. Prefer a cut
    /// that starts the kept history at a user turn (whole exchanges go). When none is left
    /// to drop to (an agent loop under one request), OpenAI's APIs take an assistant turn
    /// right after the instructions, and so does any dialect when the user request is
    /// pinned in the prefix; otherwise keep back to the last user turn.
    fn start_at_a_user_turn(
        &self,
        mut cut: usize,
        mut total: usize,
        droppable: usize,
        budget: usize,
    ) -> Cut {
        let prefix = &self.groups.prefix;
        let prefix_ends_with_user =
            prefix.end > 0 && self.chain.turns[prefix.end - 1].role == Role::User;
        let assistant_may_lead =
            matches!(self.dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses)
                || prefix_ends_with_user;
        let mut kept_request = None;
        match (cut..droppable).find(|&c| self.starts_with_user(c)) {
            Some(c) => cut = c,
            None if assistant_may_lead => {
                // Cutting inside one request's agent loop: keep that request (the last user
                // turn before the cut) so the model still knows its task, paid for by
                // dropping more of the oldest calls.
                kept_request = (0..cut)
                    .rev()
                    .find(|&u| self.starts_with_user(u) && !self.groups.units[u].is_group());
                if let Some(u) = kept_request {
                    total += self.tokens[u];
                    while total > budget && cut < droppable {
                        total -= self.tokens[cut];
                        cut += 1;
                    }
                }
            }
            None => {
                while cut > 0 && !self.starts_with_user(cut) {
                    cut -= 1;
                }
            }
        }
        Cut {
            units: cut,
            kept_request,
        }
    }

    /// The body without its first `cut` units (but `kept`).
    /// What dropping the first `cut` units, but `kept`, drops.
    fn dropping(&self, cut: usize, kept: Option<usize>) -> Dropping {
        let mut dropped = Vec::new();
        let mut items = BTreeSet::new();
        let mut left = self.tokens_before;
        for (u, unit) in self.groups.units[..cut].iter().enumerate() {
            if Some(u) == kept {
                continue;
            }
            let mut paths = Vec::new();
            for t in unit.turns.clone() {
                paths.push(self.chain.turns[t].ptr.render());
                if let Some(i) = self.chain.turns[t].ptr.item_index() {
                    items.insert(i as usize);
                }
            }
            left -= self.tokens[u];
            dropped.push(DroppedUnit {
                paths,
                kind: if unit.is_group() { "group" } else { "turn" },
                tokens: self.tokens[u],
            });
        }
        Dropping {
            dropped,
            items,
            tokens: left,
        }
    }

    /// The body without the first `cut` units, but `kept`.
    fn without(&self, cut: usize, kept: Option<usize>) -> Output {
        let drop = self.dropping(cut, kept);
        Output {
            body: drop.copy_of(self.body, self.dialect.history_key()),
            dropped: drop.dropped,
            tokens: drop.tokens,
        }
    }

    /// The cut at `cut` broke a rule that ties kept turns to dropped ones (an Anthropic
    /// thinking loop must open with its thinking): step back to earlier cuts at a user
    /// turn, a few at most, and else keep everything. `None` when none of those is
    /// valid either.
    fn earlier_valid_cut(&self, cut: usize, check: &CheckOptions) -> Result<Option<Output>, Error> {
        let earlier = (1..cut).rev().filter(|&c| self.starts_with_user(c)).take(4);
        for c in earlier.chain([0]) {
            let out = self.without(c, None);
            if errors_in(&out.body, check)?.is_empty() {
                return Ok(Some(out));
            }
        }
        Ok(None)
    }
}

/// The error-severity violations of a body.
fn errors_in(body: &Value, check: &CheckOptions) -> Result<Vec<Violation>, Error> {
    Ok(analyze(body, check)?
        .violations
        .into_iter()
        .filter(|v| v.severity == Severity::Error)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn loop_body(n: usize) -> Value {
        let mut msgs = vec![json!({"role": "system", "content": "be brief"})];
        for k in 0..n {
            msgs.push(json!({"role": "user", "content": format!("question {k} about the weather in some city")}));
            msgs.push(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": format!("call_{k}a"), "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": format!("call_{k}b"), "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Rome\"}"}}]}));
            msgs.push(
                json!({"role": "tool", "tool_call_id": format!("call_{k}b"), "content": "sunny"}),
            );
            msgs.push(
                json!({"role": "tool", "tool_call_id": format!("call_{k}a"), "content": "rain"}),
            );
            msgs.push(json!({"role": "assistant", "content": "Rain in Paris, sun in Rome."}));
        }
        json!({"model": "gpt-4o", "messages": msgs})
    }

    #[test]
    fn trimming_drops_whole_groups_and_stays_valid() {
        let body = loop_body(20);
        let full = trim(
            &body,
            &TrimOptions {
                budget: usize::MAX,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(full.dropped.is_empty());
        let budget = full.tokens_before / 3;
        let t = trim(
            &body,
            &TrimOptions {
                budget,
                keep_last: 2,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(t.tokens_after <= budget, "{} > {budget}", t.tokens_after);
        assert!(!t.dropped.is_empty());
        assert!(t.violations.is_empty(), "{:?}", t.violations);
        let msgs = t.body["messages"].as_array().unwrap();
        assert_eq!(msgs[0]["role"], "system");
        assert_eq!(msgs[1]["role"], "user");
        assert_eq!(t.counter, Counter::O200kBase);
    }

    /// A cache keyed by the items' text counts as fresh counting does: on a conversation
    /// that grows, trimmed again and again through one cache, whose items repeat texts in
    /// other shapes (a user and an assistant saying the same, the same arguments in
    /// calls of other ids) and differ in texts alone.
    #[test]
    fn a_cache_counts_as_counting_afresh() {
        let mut cache = TokenCache::default();
        for n in [1, 2, 5, 9, 9, 14] {
            let mut body = loop_body(n);
            let msgs = body["messages"].as_array_mut().unwrap();
            msgs.push(json!({"role": "user", "content": "Rain in Paris, sun in Rome."}));
            msgs.push(json!({"role": "assistant", "content": "Rain in Paris, sun in Rome!"}));
            for budget in [usize::MAX, 400, 150] {
                let opts = TrimOptions {
                    budget,
                    ..Default::default()
                };
                let fresh = trim(&body, &opts).unwrap();
                let cached = trim_with_cache(&body, &opts, &mut cache).unwrap();
                assert_eq!(cached.tokens_before, fresh.tokens_before, "{n} messages");
                assert_eq!(cached.tokens_after, fresh.tokens_after, "{n} messages");
                assert_eq!(cached.body, fresh.body, "{n} messages");
            }
        }
        assert!(!cache.is_empty());
    }

    #[test]
    fn keep_last_wins_over_the_budget_and_says_so() {
        let body = loop_body(3);
        let t = trim(
            &body,
            &TrimOptions {
                budget: 1,
                keep_last: 2,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(t.over_budget);
        let msgs = t.body["messages"].as_array().unwrap();
        assert!(msgs.len() > 1);
        assert!(t.violations.is_empty());
    }

    /// One request, then a long agent loop: there is no user turn to cut at.
    fn agent_loop(dialect: Dialect) -> Value {
        let read = |k: usize| {
            (0..40)
                .map(|i| format!("line {k} {i} of the file"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut items = Vec::new();
        match dialect {
            Dialect::OpenAiChat => {
                items.push(json!({"role": "system", "content": "You are a coding agent."}));
                items.push(json!({"role": "user", "content": "Fix the failing test."}));
                for k in 0..10 {
                    items.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{k}"), "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}));
                    items.push(json!({"role": "tool", "tool_call_id": format!("call_{k}"), "content": read(k)}));
                }
                json!({"model": "gpt-4o", "messages": items})
            }
            _ => {
                items.push(json!({"role": "user", "content": "Fix the failing test."}));
                for k in 0..10 {
                    items.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{k}"), "name": "read_file", "input": {}}]}));
                    items.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{k}"), "content": read(k)}]}));
                }
                json!({"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": items})
            }
        }
    }

    #[test]
    fn agent_loops_are_trimmed_by_groups() {
        // OpenAI: the kept loop may start with a call group right after the instructions.
        let chat = trim(
            &agent_loop(Dialect::OpenAiChat),
            &TrimOptions {
                budget: 800,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(
            !chat.dropped.is_empty() && !chat.over_budget,
            "{:?}",
            chat.dropped
        );
        assert!(chat.violations.is_empty(), "{:?}", chat.violations);
        // ... and keeps the request that started the loop.
        assert_eq!(chat.body["messages"][1]["content"], "Fix the failing test.");
        assert_eq!(chat.body["messages"][2]["role"], "assistant");
        // Anthropic wants a user turn first: pinning the request makes room to cut.
        let body = agent_loop(Dialect::Anthropic);
        let unpinned = trim(
            &body,
            &TrimOptions {
                budget: 800,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(unpinned.dropped.is_empty() && unpinned.over_budget);
        let pinned = trim(
            &body,
            &TrimOptions {
                budget: 800,
                protect: 1,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(
            !pinned.dropped.is_empty() && !pinned.over_budget,
            "{:?}",
            pinned.dropped
        );
        assert!(pinned.violations.is_empty(), "{:?}", pinned.violations);
        assert_eq!(
            pinned.body["messages"][0]["content"],
            "Fix the failing test."
        );
    }

    #[test]
    fn counts_match_tiktoken_on_known_strings() {
        // Counts from tiktoken 0.14 (Python) with the same vocabularies.
        assert_eq!(Counter::O200kBase.count("hello world"), 2);
        assert_eq!(Counter::Cl100kBase.count("hello world"), 2);
        assert_eq!(
            Counter::O200kBase.count("The weather in Paris is sunny today."),
            8
        );
        assert_eq!(
            Counter::Cl100kBase.count("The weather in Paris is sunny today."),
            8
        );
        assert_eq!(Counter::O200kBase.count(""), 0);
    }

    #[test]
    fn counters_follow_the_model() {
        assert_eq!(
            Counter::for_model(Some("gpt-4-turbo"), Dialect::OpenAiChat),
            Counter::Cl100kBase
        );
        assert_eq!(
            Counter::for_model(Some("claude-sonnet-4"), Dialect::Anthropic),
            Counter::EstimateCharsOver4
        );
        assert_eq!(Counter::O200kBase.count("hello world"), 2);
    }
}
