//! The rules, written once over the [`Chain`].
//!
//! Each function is named for the invariant it checks. A dialect contributes only
//! [`Params`] (where results must sit, how results find their calls) and the profile's
//! switches; the loops are the same for every dialect.
//!
//! Invariant: rules never fail and never stop early. Every finding is pushed to `out`
//! with a JSON pointer; the order of findings follows the order of the body.

use std::collections::HashMap;

use crate::chain::{CallKind, Chain, NodeKind, Role, Turn};
use crate::dialect::Dialect;
use crate::profile::{CallIdForm, Profile};
use crate::texts;
use crate::violation::{Rule, Severity, Violation};

/// Where a dialect requires a call's results to sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
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
pub struct Params {
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
        }
    }
}

/// Everything a rule needs to see.
pub struct Ctx<'c, 'a> {
    /// The chain.
    pub chain: &'c Chain<'a>,
    /// The dialect.
    pub dialect: Dialect,
    /// The profile.
    pub profile: &'c Profile,
    /// The dialect's parameters.
    pub params: Params,
}

impl Ctx<'_, '_> {
    fn path(&self, node: usize) -> String {
        self.chain.nodes[node].ptr.render()
    }
    fn turn_ix(&self, turn: usize) -> u32 {
        self.chain.turns[turn].ptr.item.unwrap_or(0)
    }
    fn node_sub(&self, node: usize) -> Option<u32> {
        self.chain.nodes[node].ptr.sub
    }
    /// Turns of the history proper (not a top-level `system` / `systemInstruction`).
    fn is_history(&self, t: &Turn) -> bool {
        t.ptr.root == self.dialect.history_key()
    }
}

/// Run every rule. Returns the call/result pairs found, as (call node, result node).
pub fn run(ctx: &Ctx, out: &mut Vec<Violation>) -> Vec<(usize, usize)> {
    let suppressed = gemini_response_counts_match(ctx, out);
    let pairs = pair_calls_with_results(ctx, &suppressed, out);
    call_ids_have_the_providers_form(ctx, out);
    roles_come_in_an_accepted_order(ctx, out);
    content_is_not_empty(ctx, out);
    match ctx.dialect {
        Dialect::OpenAiResponses => {
            reasoning_is_followed_by_its_item(ctx, out);
            outputs_keep_their_reasoning(ctx, out);
            item_ids_are_unique(ctx, out);
        }
        Dialect::Anthropic => {
            if let Some(ptr) = ctx.chain.facts.final_trailing_whitespace {
                let path = ptr.render();
                out.push(
                    Violation::error(
                        Rule::Malformed,
                        path.clone(),
                        format!("the final assistant message (a prefill) ends with white space at {path}; Anthropic rejects that"),
                    )
                    .provider(Some("messages: final assistant content cannot end with trailing whitespace".into())),
                );
            }
            thinking_comes_first(ctx, out);
            thinking_is_unmodified(ctx, out);
        }
        Dialect::Gemini => {
            function_calls_follow_user_or_response(ctx, out);
            current_turn_calls_are_signed(ctx, out);
        }
        Dialect::OpenAiChat => thinking_turns_carry_reasoning_content(ctx, out),
    }
    pairs
}

/// Responses: no two input items carry the same provider item id (`msg_`, `rs_`, `fc_`).
/// OpenAI refuses the second ("Duplicate item found with id msg_…",
/// openai_responses-07). A function call whose call id is already reported as a
/// duplicate is not reported again.
fn item_ids_are_unique(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (n, node) in chain.nodes.iter().enumerate() {
        let id = match node.kind {
            NodeKind::Message { item_id }
            | NodeKind::Reasoning { item_id, .. }
            | NodeKind::Call { item_id, .. } => item_id,
            _ => None,
        };
        let Some(id) = id.filter(|s| !s.is_empty()) else {
            continue;
        };
        let Some(&first) = seen.get(id) else {
            seen.insert(id, n);
            continue;
        };
        let path = ctx.path(n);
        if out
            .iter()
            .any(|v| v.rule == Rule::DuplicateCallId && v.path == path)
        {
            continue;
        }
        out.push(
            Violation::error(
                Rule::DuplicateCallId,
                path.clone(),
                format!(
                    "item id `{id}` is carried by two items: {} and {path}; the provider refuses the second",
                    ctx.path(first)
                ),
            )
            .provider(Some(format!("Duplicate item found with id {id}")))
            .at_turn(node.turn),
        );
    }
}

#[derive(Clone, Copy)]
struct CallRec<'a> {
    node: usize,
    turn: usize,
    id: Option<&'a str>,
    name: Option<&'a str>,
    answered: bool,
}

/// Every client call is answered exactly once, every result answers an earlier call, and
/// each result sits where the dialect requires. Also finds duplicate call ids.
fn pair_calls_with_results(
    ctx: &Ctx,
    suppressed: &[bool],
    out: &mut Vec<Violation>,
) -> Vec<(usize, usize)> {
    let chain = ctx.chain;
    let mut pairs = Vec::new();
    let n_calls = chain
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Call { .. }))
        .count();
    let mut calls: Vec<CallRec> = Vec::with_capacity(n_calls);
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(n_calls);
    let mut server_ids: HashMap<&str, usize> = HashMap::new();
    // Calls reported as misplaced (DeepSeek Responses) are not reported again as unanswered.
    let mut misplaced_calls: Vec<usize> = Vec::new();
    let quiet = |turn: usize| suppressed.get(turn).copied().unwrap_or(false);

    for (n, node) in chain.nodes.iter().enumerate() {
        match node.kind {
            NodeKind::Call {
                call_id,
                name,
                kind: CallKind::Server,
                ..
            } => {
                let _ = name;
                if let Some(id) = call_id {
                    server_ids.insert(id, n);
                }
            }
            NodeKind::Call {
                call_id,
                name,
                wire,
                ..
            } => {
                let id = call_id.filter(|s| !s.is_empty());
                let reported_idless = id.is_none()
                    && ctx.params.call_id_required
                    && wire != crate::dialect::openai_chat::LEGACY_FUNCTION_CALL;
                if reported_idless {
                    let what = if call_id == Some("") {
                        "an empty id"
                    } else {
                        "no id"
                    };
                    let text = match ctx.dialect {
                        Dialect::OpenAiResponses if call_id == Some("") => Some(format!(
                            "Invalid 'input[{}].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead.",
                            ctx.turn_ix(node.turn)
                        )),
                        Dialect::OpenAiResponses => Some(format!("Missing required parameter: input[{}].call_id", ctx.turn_ix(node.turn))),
                        _ => None,
                    };
                    out.push(
                        Violation::error(
                            Rule::InvalidCallId,
                            ctx.path(n),
                            format!(
                                "the {wire} call{} has {what}, so no result can answer it",
                                name.map(|s| format!(" to `{s}`")).unwrap_or_default()
                            ),
                        )
                        .provider(text)
                        .at_turn(node.turn),
                    );
                }
                if let Some(id) = id {
                    if let Some(&first) = by_id.get(id) {
                        let f = calls[first];
                        out.push(
                            Violation::error(
                                Rule::DuplicateCallId,
                                ctx.path(n),
                                format!(
                                    "call id `{id}` is used by two calls: {} and {}; results cannot tell them apart",
                                    ctx.path(f.node),
                                    ctx.path(n)
                                ),
                            )
                            .provider(match ctx.dialect {
                                // OpenAI's known text is about tool messages, not calls.
                                Dialect::Anthropic => texts::duplicate(ctx.dialect, id, ctx.turn_ix(f.turn), ctx.turn_ix(node.turn), ctx.node_sub(n)),
                                _ => None,
                            })
                            .at_turn(node.turn),
                        );
                    } else {
                        by_id.insert(id, calls.len());
                    }
                }
                // A call whose id another call already took is reported as a duplicate,
                // not again as unanswered.
                let duplicate =
                    id.is_some_and(|id| by_id.get(id).is_some_and(|&ci| ci != calls.len()));
                calls.push(CallRec {
                    node: n,
                    turn: node.turn,
                    id,
                    name,
                    // An id-less call is reported as such, not again as unanswered.
                    answered: duplicate || reported_idless,
                });
            }
            NodeKind::Result {
                call_id,
                kind: CallKind::Server,
                wire,
                ..
            } => {
                let known = call_id.is_some_and(|id| server_ids.contains_key(id));
                if !known {
                    let id = call_id.unwrap_or("");
                    out.push(
                        Violation::error(
                            Rule::ToolResultWithoutCall,
                            ctx.path(n),
                            format!("the {wire} block answers server tool call `{id}`, but no earlier server tool call has that id"),
                        )
                        .provider((ctx.dialect == Dialect::Anthropic).then(|| {
                            format!(
                                "messages.{}.content.{}: unexpected `tool_use_id` found in `{wire}` blocks: {id}. Each `{wire}` block must have a corresponding `server_tool_use` block in the same message.",
                                ctx.turn_ix(node.turn),
                                ctx.node_sub(n).unwrap_or(0)
                            )
                        }))
                        .at_turn(node.turn),
                    );
                }
            }
            NodeKind::Result {
                call_id,
                name,
                wire,
                ..
            } => {
                let id = call_id.filter(|s| !s.is_empty());
                let mut found = id.and_then(|id| by_id.get(id).copied());
                let by_name = ctx.params.pair_by_name || (id.is_none() && name.is_some());
                if found.is_none() && by_name {
                    // Gemini, and legacy chat `function` messages: by name and order, among
                    // calls that carry no id of their own (or the same id), earliest
                    // unanswered first.
                    found = calls.iter().position(|c| {
                        !c.answered
                            && c.name.is_some()
                            && c.name == name
                            && (c.id.is_none() || c.id == id)
                    });
                }
                if found.is_none() && id.is_none() && !by_name {
                    let text = match ctx.dialect {
                        Dialect::OpenAiChat if ctx.profile.name == "mistral" => Some("Tool call id has to be defined.".to_string()),
                        Dialect::OpenAiChat => Some("Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.".into()),
                        Dialect::OpenAiResponses if call_id == Some("") => Some(format!(
                            "Invalid 'input[{}].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead.",
                            ctx.turn_ix(node.turn)
                        )),
                        Dialect::OpenAiResponses => Some(format!("Missing required parameter: input[{}].call_id", ctx.turn_ix(node.turn))),
                        _ => None,
                    };
                    out.push(
                        Violation::error(
                            Rule::InvalidCallId,
                            ctx.path(n),
                            format!("the {wire} result carries no call id, so it answers no call"),
                        )
                        .provider(text)
                        .at_turn(node.turn),
                    );
                    continue;
                }
                if ctx.dialect == Dialect::Gemini && name.is_none_or(str::is_empty) {
                    out.push(
                        Violation::error(
                            Rule::InvalidCallId,
                            ctx.path(n),
                            "the functionResponse has no name; Gemini pairs responses with calls by name".into(),
                        )
                        .provider(Some(format!(
                            "* GenerateContentRequest.contents[{}].parts[{}].function_response.name: Name cannot be empty.",
                            ctx.turn_ix(node.turn),
                            ctx.node_sub(n).unwrap_or(0)
                        )))
                        .at_turn(node.turn),
                    );
                }
                let Some(ci) = found else {
                    if quiet(node.turn) || chain.facts.continues_stored_state {
                        // With stored state, the call may live at the provider, not in the body.
                        continue;
                    }
                    let shown = id.or(name).unwrap_or("?");
                    let later = id.is_some_and(|id| {
                        chain.nodes[n..].iter().any(|m| matches!(m.kind, NodeKind::Call { call_id: Some(c), .. } if c == id))
                    });
                    out.push(
                        Violation::error(
                            Rule::ToolResultWithoutCall,
                            ctx.path(n),
                            if later {
                                format!("the {wire} result for `{shown}` comes before the call it answers")
                            } else {
                                format!("the {wire} result answers `{shown}`, but no earlier tool call has that id")
                            },
                        )
                        .provider(Some(texts::orphan_result(ctx.dialect, ctx.profile, shown, ctx.turn_ix(node.turn), ctx.node_sub(n))))
                        .at_turn(node.turn),
                    );
                    continue;
                };
                let call = calls[ci];
                if call.answered {
                    if quiet(node.turn) {
                        continue;
                    }
                    let shown = id.or(name).unwrap_or("?");
                    out.push(
                        Violation::error(
                            Rule::DuplicateCallId,
                            ctx.path(n),
                            format!("call `{shown}` ({}) is answered twice; only one result may answer a call", ctx.path(call.node)),
                        )
                        .provider(match ctx.dialect {
                            Dialect::OpenAiChat => {
                                let first_result = chain.nodes[..n]
                                    .iter()
                                    .rev()
                                    .find(|m| matches!(m.kind, NodeKind::Result { call_id: Some(c), .. } if Some(c) == id))
                                    .map(|m| ctx.turn_ix(m.turn))
                                    .unwrap_or(0);
                                texts::duplicate(ctx.dialect, shown, first_result, ctx.turn_ix(node.turn), None)
                            }
                            _ => None,
                        })
                        .at_turn(node.turn),
                    );
                    continue;
                }
                calls[ci].answered = true;
                pairs.push((call.node, n));
                if !result_is_placed(ctx, call.turn, node.turn, n) {
                    if ctx.params.placement == Placement::BeforeNextAssistantItem {
                        misplaced_calls.push(ci);
                        let cid = call.id.unwrap_or("?");
                        out.push(
                            Violation::error(
                                Rule::ToolCallWithoutResult,
                                ctx.path(call.node),
                                format!(
                                    "call `{cid}` is answered at {} only after another assistant item; {} needs each call's output before the next assistant item",
                                    ctx.path(n),
                                    ctx.profile.name
                                ),
                            )
                            .provider(Some(texts::unanswered_call(ctx.dialect, ctx.profile, &[cid], ctx.turn_ix(call.turn))))
                            .at_turn(call.turn),
                        );
                    } else if !quiet(node.turn) {
                        let shown = id.or(name).unwrap_or("?");
                        let where_ = match ctx.params.placement {
                            Placement::FollowingToolRun => "in the tool messages right after the assistant message that made the call",
                            Placement::NextTurnLeading => "at the start of the user message right after the assistant message that made the call, before any other block",
                            _ => "in the turn right after the call's turn",
                        };
                        let provider = match ctx.dialect {
                            Dialect::Anthropic if node.turn == call.turn + 1 => Some(format!(
                                "messages.{}: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
                                ctx.turn_ix(node.turn)
                            )),
                            Dialect::Gemini => Some(texts::orphan_result(ctx.dialect, ctx.profile, shown, 0, None)),
                            _ => Some(texts::unanswered_call(ctx.dialect, ctx.profile, &[shown], ctx.turn_ix(call.turn))),
                        };
                        out.push(
                            Violation::error(
                                Rule::ToolResultNotAdjacent,
                                ctx.path(n),
                                format!(
                                    "the result for `{shown}` is not where it must be: it must sit {where_} ({})",
                                    ctx.path(call.node)
                                ),
                            )
                            .provider(provider)
                            .at_turn(node.turn),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    // Unanswered calls, grouped by their turn so the provider text names them together.
    let mut by_turn: Vec<(usize, Vec<usize>)> = Vec::new();
    for (ci, c) in calls.iter().enumerate() {
        if c.answered || misplaced_calls.contains(&ci) || quiet(c.turn) {
            continue;
        }
        match by_turn.last_mut() {
            Some((t, v)) if *t == c.turn => v.push(ci),
            _ => by_turn.push((c.turn, vec![ci])),
        }
    }
    for (turn, cis) in by_turn {
        let ids: Vec<&str> = cis
            .iter()
            .map(|&ci| calls[ci].id.or(calls[ci].name).unwrap_or("?"))
            .collect();
        for &ci in &cis {
            let c = calls[ci];
            let shown = c.id.or(c.name).unwrap_or("?");
            out.push(
                Violation::error(
                    Rule::ToolCallWithoutResult,
                    ctx.path(c.node),
                    format!(
                        "call `{shown}`{} is never answered: no result carries its id",
                        c.name
                            .filter(|n| Some(*n) != c.id.or(c.name).filter(|_| c.id.is_none()))
                            .map(|n| format!(" to `{n}`"))
                            .unwrap_or_default()
                    ),
                )
                .provider(Some(texts::unanswered_call(
                    ctx.dialect,
                    ctx.profile,
                    &ids,
                    ctx.turn_ix(turn),
                )))
                .at_turn(turn),
            );
        }
    }
    pairs
}

/// Whether the result node `n` in turn `r` sits where the dialect wants the result of a
/// call made in turn `c`.
fn result_is_placed(ctx: &Ctx, c: usize, r: usize, n: usize) -> bool {
    let turns = &ctx.chain.turns;
    match ctx.params.placement {
        Placement::Anywhere => true,
        Placement::FollowingToolRun => {
            r > c && turns[c + 1..=r].iter().all(|t| t.role == Role::Tool)
        }
        Placement::NextTurn => r == c + 1,
        Placement::NextTurnLeading => {
            r == c + 1
                && ctx.chain.nodes[turns[r].first..n]
                    .iter()
                    .all(|m| matches!(m.kind, NodeKind::Result { .. }))
        }
        Placement::BeforeNextAssistantItem => {
            r > c
                && turns[c + 1..r].iter().enumerate().all(|(k, t)| {
                    t.role == Role::Tool
                        || ctx.chain.turn_nodes(c + 1 + k).iter().all(|m| {
                            matches!(
                                m.kind,
                                NodeKind::Call {
                                    kind: CallKind::Client,
                                    ..
                                }
                            )
                        })
                })
        }
    }
}

/// Gemini: a function-response turn answers exactly as many calls as the call turn before
/// it made. Returns the turns whose pairing findings this one replaces.
fn gemini_response_counts_match(ctx: &Ctx, out: &mut Vec<Violation>) -> Vec<bool> {
    let chain = ctx.chain;
    let mut quiet = vec![false; chain.turns.len()];
    if ctx.dialect != Dialect::Gemini {
        return quiet;
    }
    let count = |t: usize, calls: bool| {
        chain
            .turn_nodes(t)
            .iter()
            .filter(|n| {
                if calls {
                    matches!(
                        n.kind,
                        NodeKind::Call {
                            kind: CallKind::Client,
                            ..
                        }
                    )
                } else {
                    matches!(
                        n.kind,
                        NodeKind::Result {
                            kind: CallKind::Client,
                            ..
                        }
                    )
                }
            })
            .count()
    };
    for t in 0..chain.turns.len().saturating_sub(1) {
        let k = count(t, true);
        if k == 0 || chain.turns[t].role != Role::Assistant {
            continue;
        }
        let r = count(t + 1, false);
        if r > 0 && r != k {
            quiet[t] = true;
            quiet[t + 1] = true;
            out.push(
                Violation::error(
                    Rule::FunctionResponseCount,
                    chain.turns[t + 1].ptr.render(),
                    format!(
                        "{} answers {r} function call(s), but the model turn before it ({}) made {k}",
                        chain.turns[t + 1].ptr.render(),
                        chain.turns[t].ptr.render()
                    ),
                )
                .provider(Some(texts::unanswered_call(Dialect::Gemini, ctx.profile, &[], 0)))
                .at_turn(t + 1),
            );
        }
    }
    quiet
}

/// Call ids have the form the target provider accepts.
fn call_ids_have_the_providers_form(ctx: &Ctx, out: &mut Vec<Violation>) {
    let form = match ctx.dialect {
        Dialect::OpenAiChat => ctx.profile.chat_call_id,
        Dialect::OpenAiResponses => ctx.profile.responses_call_id,
        _ => CallIdForm::Any,
    };
    for (n, node) in ctx.chain.nodes.iter().enumerate() {
        let (id, is_call, wire) = match node.kind {
            NodeKind::Call {
                call_id: Some(id),
                wire,
                ..
            } => (id, true, wire),
            NodeKind::Result {
                call_id: Some(id),
                wire,
                ..
            } => (id, false, wire),
            _ => continue,
        };
        if id.is_empty() {
            continue;
        }
        let turn_ix = ctx.turn_ix(node.turn);
        let problem: Option<(String, Option<String>)> = match (ctx.dialect, form) {
            (Dialect::Anthropic, _) if is_call && wire == "server_tool_use" && !id.starts_with("srvtoolu_") => Some((
                format!("server tool call id `{id}` does not start with `srvtoolu_`"),
                Some(format!(
                    "messages.{turn_ix}.content.{}.server_tool_use.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'",
                    ctx.node_sub(n).unwrap_or(0)
                )),
            )),
            (Dialect::Anthropic, _) if !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') => Some((
                format!("tool id `{id}` has characters outside a-z, A-Z, 0-9, `_` and `-`"),
                Some(format!(
                    "messages.{turn_ix}.content.{}.{}.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
                    ctx.node_sub(n).unwrap_or(0),
                    if is_call { "tool_use" } else { "tool_result" }
                )),
            )),
            (Dialect::OpenAiChat, CallIdForm::MaxLen(max)) if is_call && id.chars().count() > max => Some((
                format!("call id `{id}` is {} characters long; {} accepts at most {max}", id.chars().count(), ctx.profile.name),
                Some(format!(
                    "Invalid 'messages[{turn_ix}].tool_calls[{}].id': string too long. Expected a string with maximum length {max}, but got a string with length {} instead.",
                    ctx.node_sub(n).unwrap_or(0),
                    id.chars().count()
                )),
            )),
            (Dialect::OpenAiResponses, CallIdForm::MaxLen(max)) if id.chars().count() > max => Some((
                format!("call_id `{id}` is {} characters long; {} accepts at most {max}", id.chars().count(), ctx.profile.name),
                Some(format!(
                    "Invalid 'input[{turn_ix}].call_id': string too long. Expected a string with maximum length {max}, but got a string with length {} instead.",
                    id.chars().count()
                )),
            )),
            (_, CallIdForm::NineAlnum) if !(id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric())) => Some((
                format!("call id `{id}` is not 9 characters of a-z, A-Z, 0-9, as {} requires", ctx.profile.name),
                Some(format!("Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9.")),
            )),
            _ => None,
        };
        if let Some((message, provider)) = problem {
            out.push(
                Violation::error(Rule::InvalidCallId, ctx.path(n), message)
                    .provider(provider)
                    .at_turn(node.turn),
            );
        }
    }
}

/// Roles appear in an order the API accepts.
fn roles_come_in_an_accepted_order(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let history: Vec<usize> = (0..chain.turns.len())
        .filter(|&t| ctx.is_history(&chain.turns[t]))
        .collect();
    let mut prev: Option<usize> = None;
    for (k, &t) in history.iter().enumerate() {
        let turn = &chain.turns[t];
        let path = turn.ptr;
        let ix = ctx.turn_ix(t);
        match ctx.dialect {
            Dialect::Anthropic => {
                if turn.role == Role::System {
                    out.push(
                        Violation::error(Rule::RoleOrder, path.render(), format!("{path} has role \"system\"; the Messages API takes instructions in the top-level `system`, not as a message"))
                            .provider(Some("messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.".into()))
                            .at_turn(t),
                    );
                } else if turn.role == Role::Unknown {
                    out.push(
                        Violation::error(
                            Rule::RoleOrder,
                            path.render(),
                            format!(
                                "{path} has role \"{}\"; messages are \"user\" or \"assistant\"",
                                turn.wire
                            ),
                        )
                        .at_turn(t),
                    );
                }
                let strict = ctx.profile.strict_alternation;
                let sev = if strict {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                if k == 0 && turn.role == Role::Assistant {
                    out.push(
                        Violation::error(
                            Rule::RoleOrder,
                            path.render(),
                            format!("the first message ({path}) is from the assistant; {} requires the first message to be a user message", if strict { ctx.profile.name } else { "Bedrock and older deployments" }),
                        )
                        .severity(sev)
                        .provider(Some("messages: first message must use the \"user\" role".into()))
                        .at_turn(t),
                    );
                }
                if let Some(p) = prev {
                    let pr = chain.turns[p].role;
                    if pr == turn.role && matches!(pr, Role::User | Role::Assistant) {
                        let r = turn.wire;
                        out.push(
                            Violation::error(
                                Rule::RoleOrder,
                                path.render(),
                                format!(
                                    "{path} is a second \"{r}\" message in a row; {}",
                                    if strict { "roles must alternate on this provider" } else { "the first-party API merges them, but Bedrock and strict gateways reject it" }
                                ),
                            )
                            .severity(sev)
                            .provider(Some(format!("messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"{r}\" roles in a row")))
                            .at_turn(t),
                        );
                    }
                }
            }
            Dialect::Gemini => {
                if matches!(turn.role, Role::System | Role::Unknown) {
                    out.push(
                        Violation::error(
                            Rule::RoleOrder,
                            path.render(),
                            format!(
                                "{path} has role \"{}\"; contents are \"user\" or \"model\"",
                                turn.wire
                            ),
                        )
                        .provider(Some("Please use a valid role: user, model.".to_string()))
                        .at_turn(t),
                    );
                }
                if k + 1 == history.len() && turn.role == Role::Assistant && history.len() > 1 {
                    out.push(
                        Violation::error(
                            Rule::RoleOrder,
                            path.render(),
                            format!("the request ends with a model turn ({path}); newer Gemini models reject that"),
                        )
                        .severity(Severity::Warning)
                        .provider(Some("Requests ending with a model turn are not supported.".into()))
                        .at_turn(t),
                    );
                }
            }
            Dialect::OpenAiChat => {
                if turn.role == Role::Unknown {
                    out.push(
                        Violation::error(
                            Rule::RoleOrder,
                            path.render(),
                            format!(
                                "{path} has role \"{}\", which the chat API does not know",
                                turn.wire
                            ),
                        )
                        .at_turn(t),
                    );
                }
                if ctx.profile.rejects_developer_role && turn.wire == "developer" {
                    out.push(
                        Violation::error(Rule::RoleOrder, path.render(), format!("{path} has role \"developer\", which {} does not accept; use \"system\"", ctx.profile.name))
                            .provider(Some(format!("Failed to deserialize the JSON body into the target type: messages[{ix}].role: unknown variant `developer`, expected one of `system`, `user`, `assistant`, `tool`")))
                            .at_turn(t),
                    );
                }
                if ctx.profile.mistral_role_order {
                    if let Some(p) = prev {
                        let pr = chain.turns[p].role;
                        if pr == Role::Tool && turn.role == Role::User {
                            out.push(
                                Violation::error(Rule::RoleOrder, path.render(), format!("{path} is a user message right after a tool message; {} needs an assistant message in between", ctx.profile.name))
                                    .provider(Some("Unexpected role 'user' after role 'tool'".into()))
                                    .at_turn(t),
                            );
                        }
                    }
                    if k + 1 == history.len()
                        && turn.role == Role::Assistant
                        && !chain.facts.assistant_prefix
                    {
                        out.push(
                            Violation::error(Rule::RoleOrder, path.render(), format!("the last message ({path}) is from the assistant; {} serves only after a user or tool message (or an assistant message with prefix: true)", ctx.profile.name))
                                .provider(Some("Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant".into()))
                                .at_turn(t),
                        );
                    }
                }
            }
            Dialect::OpenAiResponses => {}
        }
        prev = Some(t);
    }
}

/// Messages and blocks carry content where the API requires it.
fn content_is_not_empty(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let history: Vec<usize> = (0..chain.turns.len())
        .filter(|&t| ctx.is_history(&chain.turns[t]))
        .collect();
    if chain.facts.history_is_array && history.is_empty() && ctx.dialect != Dialect::OpenAiResponses
    {
        let key = ctx.dialect.history_key();
        let text = match ctx.dialect {
            Dialect::OpenAiChat => "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
            Dialect::Anthropic => "messages: at least one message is required",
            _ => "contents is not specified",
        };
        out.push(
            Violation::error(
                Rule::EmptyContent,
                format!("/{key}"),
                format!("`{key}` is empty: the request has no history to answer"),
            )
            .provider(Some(text.into())),
        );
    }
    let last = history.last().copied();
    for &t in &history {
        let turn = &chain.turns[t];
        let nodes = chain.turn_nodes(t);
        let path = turn.ptr;
        let ix = ctx.turn_ix(t);
        let has = |f: fn(&NodeKind) -> bool| nodes.iter().any(|n| f(&n.kind));
        match ctx.dialect {
            Dialect::OpenAiChat => {
                let empty = turn.empty
                    && match turn.role {
                        Role::Assistant => !has(|k| {
                            matches!(k, NodeKind::Call { .. } | NodeKind::Reasoning { .. })
                        }),
                        Role::User | Role::System | Role::Tool => true,
                        Role::Unknown => false,
                    };
                if empty {
                    out.push(
                        Violation::error(
                            Rule::EmptyContent,
                            path.render(),
                            format!("{path} ({}) has no content", turn.wire),
                        )
                        .provider(Some(
                            "Invalid value for 'content': expected a string, got null.".into(),
                        ))
                        .at_turn(t),
                    );
                }
            }
            Dialect::Anthropic => {
                let final_assistant = Some(t) == last && turn.role == Role::Assistant;
                if turn.empty && !final_assistant {
                    out.push(
                        Violation::error(Rule::EmptyContent, path.render(), format!("{path} ({}) has no content", turn.wire))
                            .provider(Some(format!("messages.{ix}: all messages must have non-empty content except for the optional final assistant message")))
                            .at_turn(t),
                    );
                } else if !final_assistant {
                    for n in nodes {
                        if matches!(n.kind, NodeKind::Text { blank: true }) {
                            let p = n.ptr.render();
                            out.push(
                                Violation::error(
                                    Rule::EmptyContent,
                                    p.clone(),
                                    format!("the text at {p} is empty or only white space"),
                                )
                                .provider(Some(
                                    "messages: text content blocks must be non-empty".into(),
                                ))
                                .at_turn(t),
                            );
                        }
                    }
                }
            }
            Dialect::Gemini => {
                let all_blank = !nodes.is_empty()
                    && nodes
                        .iter()
                        .all(|n| matches!(n.kind, NodeKind::Text { blank: true }));
                if all_blank {
                    out.push(
                        Violation::error(Rule::EmptyContent, path.render(), format!("{path} holds only empty text parts"))
                            .provider(Some("Unable to submit request because it must include at least one parts field, which describes the prompt input. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini".into()))
                            .at_turn(t),
                    );
                }
                if turn.empty {
                    out.push(
                        Violation::error(Rule::EmptyContent, path.render(), format!("{path} has no parts"))
                            .provider(Some(format!("* GenerateContentRequest.contents[{ix}].parts: contents.parts must not be empty.")))
                            .at_turn(t),
                    );
                }
                for n in nodes {
                    if matches!(n.kind, NodeKind::Empty) {
                        let p = n.ptr.render();
                        out.push(
                            Violation::error(Rule::EmptyContent, p.clone(), format!("the part at {p} sets none of text, inlineData, fileData, functionCall or functionResponse"))
                                .provider(Some(format!(
                                    "* GenerateContentRequest.contents[{ix}].parts[{}].data: required oneof field 'data' must have one initialized field",
                                    n.ptr.sub.unwrap_or(0)
                                )))
                                .at_turn(t),
                        );
                    }
                }
            }
            Dialect::OpenAiResponses => {}
        }
    }
}

/// OpenAI's item ids carry a key shared by the items of one response and by the responses
/// of one stateless conversation: the first 16 hex digits in the current 50-digit form,
/// the last 16 in the older 48-digit form. `None` for other ids. Equal keys do not prove
/// two items came from one response; different keys prove they did not.
fn response_key(id: &str) -> Option<&str> {
    let (_, hex) = id.split_once('_')?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    match hex.len() {
        50 => hex.get(..16),
        48 => hex.get(32..),
        _ => None,
    }
}

/// Responses: a reasoning item is immediately followed by the item it was produced with,
/// with that item's original id.
fn reasoning_is_followed_by_its_item(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    for (t, turn) in chain.turns.iter().enumerate() {
        let Some(NodeKind::Reasoning { item_id, .. }) =
            chain.turn_nodes(t).first().map(|n| &n.kind)
        else {
            continue;
        };
        let rid = item_id.unwrap_or("");
        // Rendered only when something is found: this runs on every reasoning item.
        let shown = if rid.is_empty() { "(no id)" } else { rid };
        let path = turn.ptr;
        let provider = || {
            Some(format!(
                "Item '{rid}' of type 'reasoning' was provided without its required following item."
            ))
        };
        let next = chain
            .turns
            .get(t + 1)
            .map(|nt| (nt, chain.turn_nodes(t + 1).first().map(|n| &n.kind)));
        let lost = |why: String| {
            Violation::error(
                Rule::ReasoningWithoutFollower,
                path.render(),
                format!("reasoning item {shown} at {path} {why}"),
            )
            .provider(provider())
            .at_turn(t)
        };
        match next {
            None => out.push(lost(
                "is the last item; the message or call it was produced with must follow it".into(),
            )),
            Some((nt, Some(NodeKind::Message { item_id: None }))) => {
                if item_id.is_some() {
                    out.push(lost(format!(
                        "is followed by an assistant message without an id ({}); the message it was produced with must come back with its original msg_ id",
                        nt.ptr.render()
                    )));
                }
            }
            Some((
                nt,
                Some(
                    NodeKind::Message { item_id: Some(fid) }
                    | NodeKind::Call {
                        item_id: Some(fid), ..
                    },
                ),
            )) => {
                let expected =
                    if matches!(chain.turn_nodes(t + 1)[0].kind, NodeKind::Message { .. }) {
                        "msg_"
                    } else {
                        ""
                    };
                let wrong_family =
                    rid.starts_with("rs_") && !expected.is_empty() && !fid.starts_with(expected);
                let other_response =
                    matches!((response_key(rid), response_key(fid)), (Some(a), Some(b)) if a != b);
                if wrong_family || other_response {
                    let np = nt.ptr.render();
                    out.push(
                        Violation::error(
                            Rule::FollowerIdMismatch,
                            np.clone(),
                            if wrong_family {
                                format!("the item after reasoning {shown} has id `{fid}`, not the msg_ id of the message it was produced with")
                            } else {
                                format!("the item after reasoning {shown} has id `{fid}`, which belongs to another response; the reasoning's own follower was replaced")
                            },
                        )
                        .provider(provider())
                        .at_turn(t + 1),
                    );
                }
            }
            Some((_, Some(NodeKind::Call { .. } | NodeKind::Other { .. }))) => {}
            Some((nt, _)) => out.push(lost(format!(
                "is followed by {} ({}), not by the message or call it was produced with",
                nt.wire,
                nt.ptr.render()
            ))),
        }
    }
}

/// Responses: a reasoning model's call or message, sent back with its item id, keeps the
/// reasoning item that came before it in the same response.
///
/// A response may produce no reasoning at all (later steps of a tool loop often do not:
/// recorded stateless codex loops reason in their first step only), so a step without
/// reasoning is not wrong by itself. A step whose output (with its item id) has no
/// reasoning before it is flagged when the history shows the reasoning was lost: the
/// history replays reasoning items and this is the first step of a user turn (where a
/// reasoning model reasons), or a later step of the same turn still has its reasoning
/// (a client that kept only the latest reasoning item), or the step's reasoning sits
/// after its output (reordered).
fn outputs_keep_their_reasoning(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let replays_reasoning = chain.nodes.iter().any(|n| {
        matches!(
            n.kind,
            NodeKind::Reasoning {
                item_id: Some(_),
                ..
            }
        )
    });
    if !replays_reasoning {
        return;
    }
    /// One output run: consecutive assistant items.
    struct Run {
        has_reasoning: bool,
        /// The first output with an item id that no reasoning of the run precedes.
        bare: Option<(usize, &'static str, String)>,
        reasoning_after_bare: bool,
    }
    let flush = |segment: &mut Vec<Run>, out: &mut Vec<Violation>| {
        let last_with_reasoning = segment.iter().rposition(|r| r.has_reasoning);
        for (k, run) in segment.iter().enumerate() {
            let Some((t, ty, id)) = &run.bare else {
                continue;
            };
            let why = if run.reasoning_after_bare {
                "its reasoning item comes after it instead of before"
            } else if last_with_reasoning.is_some_and(|l| l > k) {
                "a later step of the same turn keeps its reasoning: the signature of a history that kept only the latest reasoning item"
            } else if k == 0 {
                "it opens the turn, where a reasoning model reasons first, and this history replays reasoning items elsewhere"
            } else {
                continue;
            };
            let path = chain.turns[*t].ptr.render();
            out.push(
                Violation::error(
                    Rule::CallWithoutReasoning,
                    path.clone(),
                    format!("{ty} {id} at {path} is sent with its item id but without the reasoning item before it; {why}"),
                )
                .provider(Some(format!("Item '{id}' of type '{ty}' was provided without its required 'reasoning' item: 'rs_…'.")))
                .at_turn(*t),
            );
        }
        segment.clear();
    };
    let mut segment: Vec<Run> = Vec::new();
    let mut in_run = false;
    for (t, turn) in chain.turns.iter().enumerate() {
        if turn.role == Role::User {
            flush(&mut segment, out);
            in_run = false;
            continue;
        }
        if turn.role != Role::Assistant {
            in_run = false;
            continue;
        }
        if !in_run {
            segment.push(Run {
                has_reasoning: false,
                bare: None,
                reasoning_after_bare: false,
            });
            in_run = true;
        }
        let Some(run) = segment.last_mut() else {
            continue;
        };
        let output = match chain.turn_nodes(t).first().map(|n| &n.kind) {
            Some(NodeKind::Reasoning { .. }) => {
                if run.bare.is_some() {
                    run.reasoning_after_bare = true;
                }
                run.has_reasoning = true;
                None
            }
            Some(NodeKind::Message { item_id: Some(id) }) if id.starts_with("msg_") => {
                Some(("message", *id))
            }
            Some(NodeKind::Call {
                item_id: Some(id),
                kind: CallKind::Client,
                ..
            }) if id.starts_with("fc_") => Some(("function_call", *id)),
            _ => None,
        };
        if let Some((ty, id)) = output {
            if !run.has_reasoning && run.bare.is_none() {
                run.bare = Some((t, ty, id.to_string()));
            }
        }
    }
    flush(&mut segment, out);
}

/// Anthropic: thinking blocks come first in their message, and with thinking on, the
/// assistant message that opened the current tool loop starts with one.
fn thinking_comes_first(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let wire_of = |k: &NodeKind| -> String {
        match k {
            NodeKind::Text { .. } => "text".into(),
            NodeKind::Call { wire, .. }
            | NodeKind::Result { wire, .. }
            | NodeKind::Other { wire } => (*wire).to_string(),
            NodeKind::Media => "image".into(),
            _ => "block".into(),
        }
    };
    let mut reported = vec![false; chain.turns.len()];
    for (t, turn) in chain.turns.iter().enumerate() {
        if turn.role != Role::Assistant {
            continue;
        }
        let nodes = chain.turn_nodes(t);
        let has_thinking = nodes
            .iter()
            .any(|n| matches!(n.kind, NodeKind::Reasoning { .. }));
        if let Some(first) = nodes.first() {
            if has_thinking && !matches!(first.kind, NodeKind::Reasoning { .. }) {
                let found = wire_of(&first.kind);
                reported[t] = true;
                out.push(
                    Violation::error(
                        Rule::ThinkingNotFirst,
                        first.ptr.render(),
                        format!("{} holds thinking blocks but starts with a {found} block; thinking must come first", turn.ptr.render()),
                    )
                    .provider(Some(texts::thinking_not_first(ctx.turn_ix(t), &found, false)))
                    .at_turn(t),
                );
            }
        }
    }
    if !chain.facts.thinking_enabled {
        return;
    }
    // The current tool loop: the history ends with a user message of tool results.
    let history: Vec<usize> = (0..chain.turns.len())
        .filter(|&t| ctx.is_history(&chain.turns[t]))
        .collect();
    let Some(&last) = history.last() else { return };
    let only_results = |t: usize| {
        let nodes = chain.turn_nodes(t);
        !nodes.is_empty()
            && nodes.iter().all(|n| {
                matches!(
                    n.kind,
                    NodeKind::Result {
                        kind: CallKind::Client,
                        ..
                    }
                )
            })
    };
    if chain.turns[last].role != Role::User || !only_results(last) {
        return;
    }
    let mut opener = None;
    for &t in history.iter().rev() {
        let turn = &chain.turns[t];
        if turn.role == Role::User && !only_results(t) {
            break;
        }
        if turn.role == Role::Assistant {
            opener = Some(t);
        }
    }
    let Some(t) = opener else { return };
    if reported[t] {
        return;
    }
    let nodes = chain.turn_nodes(t);
    if let Some(first) = nodes.first() {
        if !matches!(first.kind, NodeKind::Reasoning { .. }) {
            let found = wire_of(&first.kind);
            out.push(
                Violation::error(
                    Rule::ThinkingNotFirst,
                    first.ptr.render(),
                    format!(
                        "thinking is enabled and {} opened the current tool loop, but it starts with a {found} block instead of its thinking block",
                        chain.turns[t].ptr.render()
                    ),
                )
                .provider(Some(texts::thinking_not_first(ctx.turn_ix(t), &found, true)))
                .at_turn(t),
            );
        }
    }
}

/// Anthropic: thinking blocks come back as they were sent: signed, with their data, and
/// not in a final assistant message when thinking is off.
fn thinking_is_unmodified(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let last = (0..chain.turns.len())
        .rev()
        .find(|&t| ctx.is_history(&chain.turns[t]));
    for (n, node) in chain.nodes.iter().enumerate() {
        let NodeKind::Reasoning {
            signed, redacted, ..
        } = node.kind
        else {
            continue;
        };
        let ix = ctx.turn_ix(node.turn);
        let sub = ctx.node_sub(n).unwrap_or(0);
        if !signed {
            let (message, provider) = if redacted {
                (
                    format!("the redacted_thinking block at {} has no `data`; it must come back exactly as it was received", ctx.path(n)),
                    format!("messages.{ix}.content.{sub}.redacted_thinking.data: Field required"),
                )
            } else {
                (
                    format!("the thinking block at {} has no signature; thinking blocks must come back signed and unmodified", ctx.path(n)),
                    format!("messages.{ix}.content.{sub}.thinking.signature: Field required"),
                )
            };
            out.push(
                Violation::error(Rule::ThinkingModified, ctx.path(n), message)
                    .provider(Some(provider))
                    .at_turn(node.turn),
            );
        }
        if chain.facts.thinking_disabled
            && Some(node.turn) == last
            && chain.turns[node.turn].role == Role::Assistant
        {
            out.push(
                Violation::error(
                    Rule::ThinkingModified,
                    ctx.path(n),
                    format!("thinking is off, but the final assistant message holds a thinking block at {}", ctx.path(n)),
                )
                .provider(Some(format!(
                    "messages.{ix}.content.{sub}: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
                )))
                .at_turn(node.turn),
            );
        }
    }
}

/// Gemini: a model turn with function calls comes right after a user turn or a
/// function-response turn.
fn function_calls_follow_user_or_response(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let mut prev: Option<usize> = None;
    for (t, turn) in chain.turns.iter().enumerate() {
        if !ctx.is_history(turn) {
            continue;
        }
        let calls = chain.turn_nodes(t).iter().any(|n| {
            matches!(
                n.kind,
                NodeKind::Call {
                    kind: CallKind::Client,
                    ..
                }
            )
        });
        if turn.role == Role::Assistant && calls {
            let ok = prev.is_some_and(|p| matches!(chain.turns[p].role, Role::User | Role::Tool));
            if !ok {
                let path = turn.ptr.render();
                let why = match prev {
                    None => "it is the first turn of `contents`".to_string(),
                    Some(p) => format!(
                        "it follows {} ({})",
                        chain.turns[p].ptr.render(),
                        chain.turns[p].wire
                    ),
                };
                out.push(
                    Violation::error(
                        Rule::FunctionCallPosition,
                        path.clone(),
                        format!("the function-call turn {path} must come right after a user turn or a function-response turn, but {why}"),
                    )
                    .provider(Some("Please ensure that function call turn comes immediately after a user turn or after a function response turn.".into()))
                    .at_turn(t),
                );
            }
        }
        prev = Some(t);
    }
}

/// Gemini 3: in the current turn, the first function call of each model step carries
/// the thought signature the API returned.
fn current_turn_calls_are_signed(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let gemini3 = chain
        .facts
        .model
        .is_some_and(|m| m.rsplit('/').next().unwrap_or(m).starts_with("gemini-3"));
    if !(chain.facts.signatures_seen || gemini3) {
        return;
    }
    let start = (0..chain.turns.len())
        .rev()
        .find(|&t| {
            chain.turns[t].role == Role::User
                && chain
                    .turn_nodes(t)
                    .iter()
                    .any(|n| !matches!(n.kind, NodeKind::Result { .. }))
        })
        .unwrap_or(0);
    for t in start..chain.turns.len() {
        if chain.turns[t].role != Role::Assistant {
            continue;
        }
        let first_call = chain
            .turn_nodes(t)
            .iter()
            .find(|n| matches!(n.kind, NodeKind::Call { .. }));
        if let Some(node) = first_call {
            if let NodeKind::Call {
                signed: false,
                name,
                ..
            } = node.kind
            {
                let p = node.ptr.render();
                out.push(
                    Violation::error(
                        Rule::MissingThoughtSignature,
                        p.clone(),
                        format!(
                            "the function call{} at {p} is the first of its step in the current turn and has no thoughtSignature; Gemini 3 needs the signature it returned",
                            name.map(|n| format!(" to `{n}`")).unwrap_or_default()
                        ),
                    )
                    .provider(Some(format!(
                        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `{}` , position {}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                        name.unwrap_or("default_api"),
                        ctx.turn_ix(t) + 1
                    )))
                    .at_turn(t),
                );
            }
        }
    }
}

/// DeepSeek and Kimi in thinking mode: an assistant turn with tool calls carries its
/// `reasoning_content`.
fn thinking_turns_carry_reasoning_content(ctx: &Ctx, out: &mut Vec<Violation>) {
    if !ctx.profile.requires_reasoning_content {
        return;
    }
    let chain = ctx.chain;
    let thinking_model = chain.facts.model.is_some_and(|m| {
        let m = m.to_ascii_lowercase();
        m.contains("reasoner") || m.contains("thinking") || m.contains("v4") || m.contains("r1")
    });
    let any_reasoning = chain
        .nodes
        .iter()
        .any(|n| matches!(n.kind, NodeKind::Reasoning { .. }));
    if !(thinking_model || any_reasoning) {
        return;
    }
    for (t, turn) in chain.turns.iter().enumerate() {
        if turn.role != Role::Assistant {
            continue;
        }
        let nodes = chain.turn_nodes(t);
        let calls = nodes
            .iter()
            .any(|n| matches!(n.kind, NodeKind::Call { .. }));
        let reasoning = nodes
            .iter()
            .any(|n| matches!(n.kind, NodeKind::Reasoning { .. }));
        if calls && !reasoning {
            let path = turn.ptr.render();
            let ix = ctx.turn_ix(t);
            let provider = if ctx.profile.name == "moonshot" {
                format!("thinking is enabled but reasoning_content is missing in assistant tool call message at index {ix}")
            } else {
                format!("Missing `reasoning_content` field in the assistant message at message index {ix}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls")
            };
            out.push(
                Violation::error(
                    Rule::MissingReasoningContent,
                    path.clone(),
                    format!("the assistant message {path} makes tool calls in thinking mode but lacks the `reasoning_content` the API returned with them"),
                )
                .provider(Some(provider))
                .at_turn(t),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::response_key;

    #[test]
    fn response_keys_follow_both_id_forms() {
        assert_eq!(
            response_key("rs_0adb81d1c2f6e68a016a3c12286a0081a184e1b23cca2ac02d"),
            response_key("fc_0adb81d1c2f6e68a016a3c122b744481a197df0b5a6edff94b")
        );
        assert_eq!(
            response_key("rs_68c42de022c881948db7ed1cc2529f2e0202c9ad459e0d23"),
            response_key("msg_68c42de31d348194a251b43ad913ef140202c9ad459e0d23")
        );
        assert_ne!(
            response_key("rs_0adb81d1c2f6e68a016a3c12286a0081a184e1b23cca2ac02d"),
            response_key("fc_0320e3f50879ffd0016a3c1218fb1881a0881b261ab719bafa")
        );
        assert_eq!(response_key("msg_17"), None);
        assert_eq!(response_key("76f8b89e-4a41-46fb-86ae-546cc1e4ba6c"), None);
    }
}
