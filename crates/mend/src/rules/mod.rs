//! The rule catalog: every rule mend knows, one module per family, each rule one unit.
//!
//! A family module holds, for each of its rules, the [`RuleSpec`] (id, dialects,
//! profiles, severity, the provider's own texts with their source, whether and how it
//! repairs, the long explanation and an example body that breaks it), the check that
//! finds it over the [`Chain`], and its fix. The families:
//!
//! | module | rules |
//! |---|---|
//! | `rules/pairing.rs` | `tool-result-without-call`, `tool-call-without-result`, `tool-result-not-adjacent`, `duplicate-call-id`, `function-response-count` |
//! | `rules/ids.rs` | `invalid-call-id` |
//! | `rules/roles.rs` | `role-order`, `function-call-position` |
//! | `rules/content.rs` | `empty-content`, `tools-undeclared`, `cache-breakpoints`, `malformed` |
//! | `rules/reasoning.rs` | `reasoning-without-follower`, `call-without-reasoning`, `follower-id-mismatch`, `item-not-stored`, `missing-reasoning-content` |
//! | `rules/thinking.rs` | `thinking-not-first`, `thinking-modified`, `thinking-final-block`, `missing-thought-signature` |
//!
//! [`recognize`] reads a provider's error message back as the rules whose texts it
//! matches (`rules/recognize.rs`), for the gateway's heal mode and any other caller.
//!
//! Adding a rule: its spec, check and fix in its family module, one line in the
//! `catalog!` below, and its cases under `cases/<dialect>/<rule>/`.
//!
//! Invariants: checks never fail and never stop early; every finding is pushed with its
//! [`Loc`](crate::violation::Loc) (indices into the chain) and the pointer rendered from
//! it. A dialect contributes only `Params` and the profile's switches: the loops are the
//! same for every dialect. Fixes (`RuleSpec::fix`) address what they change by the
//! violation's `loc`, never by its path or its text.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::chain::{Chain, Turn};
use crate::dialect::Dialect;
use crate::profile::{Profile, ProfileId};
use crate::violation::{Severity, Violation};

pub use recognize::recognize;

pub(crate) mod content;
pub(crate) mod ids;
pub(crate) mod pairing;
pub(crate) mod reasoning;
pub mod recognize;
pub(crate) mod roles;
pub(crate) mod thinking;

/// Everything the catalog says about one rule: what `mend rules` and `mend explain`
/// print, and the fix repair runs for it.
#[derive(Debug, Clone, Copy)]
pub struct RuleSpec {
    /// The stable id, e.g. `tool-result-without-call`.
    pub id: &'static str,
    /// One line: what is wrong.
    pub summary: &'static str,
    /// The dialects it applies to.
    pub dialects: &'static [Dialect],
    /// The provider profiles that switch it on or change it; empty when every profile of
    /// its dialects enforces it.
    pub profiles: &'static [&'static str],
    /// The severity of its findings (some findings of a rule may be warnings where only
    /// some deployments reject them: see `doc`).
    pub severity: Severity,
    /// The errors providers return for it, with where each was seen.
    pub provider_texts: &'static [ProviderText],
    /// Whether and how repair fixes it.
    pub repair: Repair,
    /// The long form: what the provider enforces, how the check decides, what the fix
    /// does and when it leaves the body alone.
    pub doc: &'static str,
    /// A request body that breaks the rule (`mend explain` checks and repairs it).
    pub example: &'static str,
    /// The fix, run by repair for each finding of the rule.
    pub(crate) fix: Option<crate::repair::FixFn>,
}

impl RuleSpec {
    /// Whether repair has a fix for the rule (see [`RuleSpec::repair`] for when it applies).
    pub fn has_fix(&self) -> bool {
        self.fix.is_some()
    }
}

/// One error text a provider returns, and where it was seen.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ProviderText {
    /// The dialect or provider that answers with it.
    pub provider: &'static str,
    /// The text, abridged where it carries ids (`…`).
    pub text: &'static str,
    /// The evidence: a row of `provider-errors.jsonl`, a recorded fixture, or a public
    /// source by name.
    pub source: &'static str,
}

/// Whether and how a rule's findings are repaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "availability", content = "how", rename_all = "lowercase")]
pub enum Repair {
    /// Every finding has a fix; what it does.
    Always(&'static str),
    /// Some findings have a fix (when the history proves what to do); what it does and
    /// when it does not.
    Sometimes(&'static str),
    /// No fix; why.
    Never(&'static str),
}

macro_rules! catalog {
    ($($(#[$doc:meta])* $variant:ident => $spec:path,)*) => {
        /// A rule of the catalog. Ids are stable: scripts and cases depend on them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Rule {
            $($(#[$doc])* $variant,)*
        }

        impl Rule {
            /// Every rule, in catalog order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// Everything the catalog says about it.
            pub fn spec(self) -> &'static RuleSpec {
                match self {
                    $(Rule::$variant => &$spec,)*
                }
            }
        }
    };
}

catalog! {
    /// A result answers no earlier call.
    ToolResultWithoutCall => pairing::TOOL_RESULT_WITHOUT_CALL,
    /// A call is never answered.
    ToolCallWithoutResult => pairing::TOOL_CALL_WITHOUT_RESULT,
    /// The result exists but not where the dialect requires.
    ToolResultNotAdjacent => pairing::TOOL_RESULT_NOT_ADJACENT,
    /// One call id used by two calls, or answered twice; one item id on two items.
    DuplicateCallId => pairing::DUPLICATE_CALL_ID,
    /// A call id too long, of the wrong form, or missing.
    InvalidCallId => ids::INVALID_CALL_ID,
    /// Roles in an order the API rejects.
    RoleOrder => roles::ROLE_ORDER,
    /// A message or block with no content.
    EmptyContent => content::EMPTY_CONTENT,
    /// A reasoning item not followed by the item it was produced with.
    ReasoningWithoutFollower => reasoning::REASONING_WITHOUT_FOLLOWER,
    /// A reasoning model's call or message sent without its reasoning item.
    CallWithoutReasoning => reasoning::CALL_WITHOUT_REASONING,
    /// The follower of a reasoning item lost or changed its provider item id.
    FollowerIdMismatch => reasoning::FOLLOWER_ID_MISMATCH,
    /// A store: false request names an item the provider never kept.
    ItemNotStored => reasoning::ITEM_NOT_STORED,
    /// With thinking on, the assistant turn of the tool loop does not start with thinking.
    ThinkingNotFirst => thinking::THINKING_NOT_FIRST,
    /// A signed thinking block was changed, stripped of its signature, or misplaced.
    ThinkingModified => thinking::THINKING_MODIFIED,
    /// An assistant message whose last block is a thinking block.
    ThinkingFinalBlock => thinking::THINKING_FINAL_BLOCK,
    /// A Gemini function call sent back without its thought signature.
    MissingThoughtSignature => thinking::MISSING_THOUGHT_SIGNATURE,
    /// A function-response turn answers a different number of calls than were made.
    FunctionResponseCount => pairing::FUNCTION_RESPONSE_COUNT,
    /// A function-call turn not right after a user turn or a function-response turn.
    FunctionCallPosition => roles::FUNCTION_CALL_POSITION,
    /// A thinking-mode assistant turn with tool calls lacks `reasoning_content`.
    MissingReasoningContent => reasoning::MISSING_REASONING_CONTENT,
    /// Tool blocks in the history while the request declares no tools.
    ToolsUndeclared => content::TOOLS_UNDECLARED,
    /// More than four cache breakpoints.
    CacheBreakpoints => content::CACHE_BREAKPOINTS,
    /// The body does not have the dialect's shape.
    Malformed => content::MALFORMED,
}

impl Rule {
    /// The stable id, e.g. `tool-result-without-call`.
    pub fn id(self) -> &'static str {
        self.spec().id
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Rule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rule::ALL
            .iter()
            .copied()
            .find(|r| r.id() == s)
            .ok_or_else(|| format!("unknown rule '{s}'"))
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

/// Every dialect, for rules that apply to all of them.
pub(crate) const ALL_DIALECTS: &[Dialect] = &Dialect::ALL;

/// Where a dialect requires a call's results to sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// In the run of tool turns right after the call's turn (OpenAI chat).
    FollowingToolRun,
    /// In the very next turn, before any other content of that turn (Anthropic).
    NextTurnLeading,
    /// In the very next turn (Gemini).
    NextTurn,
    /// Anywhere after the call (OpenAI Responses).
    Anywhere,
    /// After the call, with no assistant message or reasoning in between (DeepSeek Responses).
    BeforeNextAssistantItem,
}

/// What a dialect tells the engine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Params {
    /// Where results sit.
    pub placement: Placement,
    /// A result without a call id finds its call by tool name (Gemini).
    pub pair_by_name: bool,
    /// Calls must carry an id.
    pub call_id_required: bool,
}

impl Params {
    /// The parameters of a dialect under a profile.
    pub fn of(dialect: Dialect, profile: &Profile) -> Params {
        match dialect {
            Dialect::OpenAiChat => Params {
                placement: Placement::FollowingToolRun,
                pair_by_name: false,
                call_id_required: true,
            },
            Dialect::OpenAiResponses => Params {
                placement: if profile.outputs_before_next_assistant_item {
                    Placement::BeforeNextAssistantItem
                } else {
                    Placement::Anywhere
                },
                pair_by_name: false,
                call_id_required: true,
            },
            Dialect::Anthropic => Params {
                placement: Placement::NextTurnLeading,
                pair_by_name: false,
                call_id_required: true,
            },
            Dialect::Gemini => Params {
                placement: Placement::NextTurn,
                pair_by_name: true,
                call_id_required: false,
            },
            Dialect::BedrockConverse => Params {
                placement: Placement::NextTurn,
                pair_by_name: false,
                call_id_required: true,
            },
        }
    }
}

/// Ids (call ids, item ids) to what the rules keep for them. Hashed with foldhash, seeded
/// per process: SipHash was a tenth of a check of a Responses history, and ids come from
/// callers, so the seed stays.
pub(crate) type IdMap<'a, V> = std::collections::HashMap<&'a str, V, foldhash::fast::RandomState>;

/// The nodes that carry each call id, in chain order: the calls (`calls`) or the results.
pub(crate) fn nodes_by_call_id<'a>(
    chain: &crate::chain::Chain<'a>,
    calls: bool,
) -> IdMap<'a, Vec<usize>> {
    use crate::chain::NodeKind;
    let mut m: IdMap<'a, Vec<usize>> = IdMap::default();
    for (n, node) in chain.nodes.iter().enumerate() {
        let id = match node.kind {
            NodeKind::Call { call_id, .. } if calls => call_id,
            NodeKind::Result { call_id, .. } if !calls => call_id,
            _ => None,
        };
        if let Some(id) = id {
            m.entry(id).or_default().push(n);
        }
    }
    m
}

/// Everything a check needs to see.
pub(crate) struct Ctx<'c, 'a> {
    /// The chain.
    pub chain: &'c Chain<'a>,
    /// The dialect.
    pub dialect: Dialect,
    /// The profile.
    pub profile: &'c Profile,
    /// The dialect's parameters.
    pub params: Params,
    /// The indices of the history turns, in order (read once: most rules walk them).
    pub history: Vec<usize>,
}

impl<'c, 'a> Ctx<'c, 'a> {
    /// Responses items a reader noted as over one of OpenAI's limits (the turn their
    /// item began, the item's index, what was noted), each with its turn, under the
    /// profiles that hold those limits (OpenAI's call id form), none under another.
    pub(crate) fn items_over_openai_limits<T: Copy + 'c>(
        &self,
        noted: &'c [(usize, usize, T)],
    ) -> impl Iterator<Item = (usize, usize, &'c Turn<'a>, T)> + 'c {
        let held = matches!(
            self.profile.responses_call_id,
            crate::profile::CallIdForm::MaxLen(_)
        );
        let turns = &self.chain.turns;
        noted
            .iter()
            .filter(move |_| held)
            .filter_map(move |&(t, i, x)| {
                let turn = turns.get(t)?;
                (turn.ptr.item_index() == u32::try_from(i).ok()).then_some((t, i, turn, x))
            })
    }
}

impl Ctx<'_, '_> {
    fn path(&self, node: usize) -> String {
        self.chain.nodes[node].ptr.render()
    }
    fn turn_ix(&self, turn: usize) -> u32 {
        self.chain.turns[turn].ptr.item_index().unwrap_or(0)
    }
    fn node_sub(&self, node: usize) -> Option<u32> {
        self.chain.nodes[node].ptr.sub_index()
    }
    /// Turns of the history proper (not a top-level `system` / `systemInstruction`).
    fn is_history(&self, t: &Turn) -> bool {
        t.ptr.root_key() == self.dialect.history_key()
    }
    /// The indices of the history turns, in order.
    fn history(&self) -> &[usize] {
        &self.history
    }

    /// An error about node `n`, located at it.
    fn at_node(&self, rule: Rule, n: usize, message: String) -> Violation {
        Violation::error(rule, self.path(n), message).at_node(n, self.chain.nodes[n].turn())
    }

    /// An error about turn `t` as a whole, located at it. Where the turn is a single node
    /// at its own pointer (a Responses input item), that node is the one it names.
    fn at_turn(&self, rule: Rule, t: usize, message: String) -> Violation {
        let turn = &self.chain.turns[t];
        let v = Violation::error(rule, turn.ptr.render(), message).at_turn(t);
        match (turn.first()..turn.end()).find(|&n| self.chain.nodes[n].ptr == turn.ptr) {
            Some(n) => v.at_node(n, t),
            None => v,
        }
    }
}

/// Run every rule. Returns the call/result pairs found, as (call node, result node).
pub(crate) fn run(ctx: &Ctx, out: &mut Vec<Violation>) -> Vec<(usize, usize)> {
    let mut suppressed = pairing::gemini_response_counts_match(ctx, out);
    ids::calls_have_names(ctx, &mut suppressed, out);
    let pairs = pairing::pair_calls_with_results(ctx, &suppressed, out);
    ids::call_ids_have_the_providers_form(ctx, out);
    ids::call_names_have_the_providers_form(ctx, out);
    roles::roles_come_in_an_accepted_order(ctx, out);
    content::content_is_not_empty(ctx, out);
    match ctx.dialect {
        Dialect::OpenAiResponses => {
            reasoning::reasoning_is_followed_by_its_item(ctx, out);
            reasoning::outputs_keep_their_reasoning(ctx, out);
            reasoning::stored_items_are_resolvable(ctx, out);
            reasoning::held_items_are_not_replayed(ctx, out);
            pairing::item_ids_are_unique(ctx, out);
            ids::item_ids_fit(ctx, out);
            content::call_arguments_fit(ctx, out);
        }
        Dialect::Anthropic => {
            content::prefill_has_no_trailing_whitespace(ctx, out);
            content::cache_breakpoints_fit(ctx, out);
            thinking::thinking_comes_first(ctx, out);
            thinking::thinking_is_unmodified(ctx, out);
            thinking::thinking_is_not_last(ctx, out);
        }
        Dialect::Gemini => {
            roles::function_calls_follow_user_or_response(ctx, out);
            thinking::current_turn_calls_are_signed(ctx, out);
            content::response_parts_fit_the_model(ctx, out);
        }
        Dialect::OpenAiChat => {
            reasoning::thinking_turns_carry_reasoning_content(ctx, out);
            content::media_sits_in_user_messages(ctx, out);
            if ctx.profile.id == ProfileId::Gemini {
                thinking::current_turn_calls_are_signed(ctx, out);
            }
        }
        Dialect::BedrockConverse => {
            content::tool_history_has_tools(ctx, out);
            content::document_names_fit(ctx, out);
            content::s3_media_fits_the_model(ctx, out);
            content::prefill_has_no_trailing_whitespace(ctx, out);
            content::cache_points_have_a_prefix(ctx, out);
            thinking::thinking_comes_first(ctx, out);
            thinking::thinking_is_unmodified(ctx, out);
        }
    }
    pairs
}
