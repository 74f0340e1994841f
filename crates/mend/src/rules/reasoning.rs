//! Reasoning travels with what it produced: an OpenAI Responses `reasoning` item with the
//! exact item that followed it (the `message` with its `msg_` id, or the `function_call`),
//! a reasoning model's output with the reasoning item before it, and a DeepSeek / Kimi
//! thinking-mode tool call with its `reasoning_content`.
//!
//! The response key ([`response_key`]): the `rs_`, `msg_` and `fc_` items of one response
//! share 16 hex digits of their ids (see its doc and test, whose ids come from recorded
//! Responses exchanges). The rules use it only to prove that two items did NOT come from
//! one response; where ids are gone, nothing depends on it.

use serde_json::{json, Value};

use crate::chain::{CallKind, NodeKind, Role};
use crate::dialect::Dialect;
use crate::profile::ProfileId;
use crate::repair::Fixer;
use crate::violation::{Defect, Rule, Severity, Violation};

use super::{Ctx, ProviderText, Repair, RuleSpec};

pub(crate) const REASONING_WITHOUT_FOLLOWER: RuleSpec = RuleSpec {
    id: "reasoning-without-follower",
    summary: "a Responses reasoning item not immediately followed by the message or call it was produced with",
    dialects: &[Dialect::OpenAiResponses],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "openai",
            text: "Item '…' of type 'reasoning' was provided without its required following item.",
            source: "provider-errors.jsonl openai_responses-01",
        },
    ],
    repair: Repair::Always("Drops the reasoning item, whose follower is gone and cannot be recreated. When the same pass moves tool results, the rule waits for the next pass, which sees the history put back."),
    doc: "OpenAI's Responses API requires a replayed reasoning item (rs_…) to be followed directly by the item produced with it: the assistant message or function call of the same response.\nThe check flags a reasoning item that is the last item, that is followed by a user message or another kind of item, or (when it has an id) that is followed by an assistant message without an id (a client that dropped the msg_ id).\nMust not flag: reasoning then its function call then the output, reasoning then its message, reasoning followed by another call or an unknown item type.\nFix: drop the orphaned reasoning item; the model loses that reasoning but the request is accepted.",
    example: r#"{
  "model": "gpt-5",
  "include": [
    "reasoning.encrypted_content"
  ],
  "input": [
    {
      "role": "user",
      "content": "What is the capital of Peru?"
    },
    {
      "type": "reasoning",
      "id": "rs_0f35ed53160b395301693cc95817ac8190b978637daea4987e",
      "encrypted_content": "gAAAAABoxC3jL8rEbUKD8lpf1c-Nsg3pHMMS-F3R8gSD70l1CqSDEDbRHb",
      "summary": []
    },
    {
      "role": "user",
      "content": "And its population?"
    }
  ]
}"#,
    fix: Some(drop_the_stranded_reasoning),
};

pub(crate) const CALL_WITHOUT_REASONING: RuleSpec = RuleSpec {
    id: "call-without-reasoning",
    summary: "a reasoning model's function call or message, sent back with its item id, lacks the reasoning item that came before it",
    dialects: &[Dialect::OpenAiResponses],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "openai",
            text: "Item '…' of type 'function_call' was provided without its required 'reasoning' item: '…'.",
            source: "provider-errors.jsonl openai_responses-03",
        },
        ProviderText {
            provider: "openai",
            text: "Item '…' of type 'message' was provided without its required 'reasoning' item: '…'.",
            source: "provider-errors.jsonl openai_responses-09",
        },
        ProviderText {
            provider: "azure",
            text: "Item '…' of type 'mcp_call' was provided without its required 'reasoning' item: '…'.",
            source: "https://github.com/microsoft/agent-framework/issues/6074 (gpt-5.4 with a hosted MCP tool, reasoning stripped and the mcp_call kept; again #6883); no row in provider-errors.jsonl",
        },
    ],
    repair: Repair::Always("Moves a reasoning item stranded after its output back in front of it; otherwise removes the output's item id so it is sent as plain input that needs no reasoning item (a server tool call, refused without its id, is reported and left: dropping it would lose its output). Deferred to the next pass when the same pass moves tool results."),
    doc: "OpenAI rejects an fc_/msg_ item replayed with its id when the reasoning item it was produced with is missing.\nA response may produce no reasoning at all, so a step without reasoning is not wrong by itself: the check runs only when the history replays reasoning items with ids, and flags the first output with an item id in a run of assistant items that has no reasoning before it when the loss is evident: it opens a user turn, a later step of the same turn still has its reasoning (a client that kept only the latest reasoning), or its reasoning sits after it.\nMust not flag: later steps of a tool loop that produced no reasoning, function calls without item ids, histories with no reasoning items at all.\nNot flagged, on evidence: a history that kept the item ids and lost every reasoning item. Whether an fc_/msg_ item needs reasoning depends on the response that produced it, not on this request's model: an accepted recording sends gpt-5 an fc_ item with no reasoning item anywhere (fixtures openai_responses/pydantic-ai--openai-responses-history-with-combined-tool-call-id), so the request's model proves nothing and the check would guess.\nA server tool call the model made (`mcp_call`, `web_search_call`, `file_search_call`, `code_interpreter_call`, `image_generation_call`, `tool_search_call`; not `mcp_list_tools`, the server's listing) is an output of its response too, judged the same way: \"Item 'mcp_…' of type 'mcp_call' was provided without its required 'reasoning' item: 'rs_…'.\" (microsoft/agent-framework#6074 and #6883, gpt-5.4 with a hosted MCP tool on Azure).\nFix: put the reasoning back in front, or drop the item id; a server tool call, which is refused without its id, is reported and left (agent-framework#6210 drops it, which loses the tool's output with it: the application's choice).",
    example: r#"{
  "model": "gpt-5",
  "include": [
    "reasoning.encrypted_content"
  ],
  "input": [
    {
      "role": "user",
      "content": "Say hi"
    },
    {
      "type": "message",
      "role": "assistant",
      "content": [
        {
          "type": "output_text",
          "text": "Hi! How can I help you today?",
          "annotations": []
        }
      ],
      "id": "msg_0320e3f50879ffd0016a3c1218fb1881a0881b261ab719bafa"
    },
    {
      "role": "user",
      "content": "What's the weather like on Mars?"
    },
    {
      "type": "reasoning",
      "id": "rs_01417dd5017b29b4016a3c121e635481a1855d8f0c57044cbd",
      "encrypted_content": "gAAAAABoxC3jL8rEbUKD8lpf1c-Nsg3pHMMS-F3R8gSD70l1CqSDEDbRHb",
      "summary": []
    },
    {
      "type": "message",
      "role": "assistant",
      "content": [
        {
          "type": "output_text",
          "text": "Cold: about -60 C on average.",
          "annotations": []
        }
      ],
      "id": "msg_01417dd5017b29b4016a3c122197c081a1b71206bc7990a4fd"
    },
    {
      "role": "user",
      "content": "And on Venus?"
    }
  ]
}"#,
    fix: Some(restore_or_unlink_the_output),
};

pub(crate) const ITEM_NOT_STORED: RuleSpec = RuleSpec {
    id: "item-not-stored",
    summary: "a store: false Responses request names an item only by its id (an item_reference, or a reasoning item without encrypted_content), which the provider never kept",
    dialects: &[Dialect::OpenAiResponses],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[ProviderText {
        provider: "openai",
        text: "Item with id 'rs_…' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
        source: "provider-errors.jsonl openai_responses-06",
    }],
    repair: Repair::Always("Drops the item, as the provider's text advises: what it named was never kept and cannot be sent again (a reasoning item without its encrypted_content has nothing the model can read back)."),
    doc: "With `store: false` the provider keeps nothing of the exchange, so an item that the request gives only by id has nothing behind it: an `item_reference`, or a reasoning item replayed with its rs_ id but without `encrypted_content` (a client that did not ask for `include: [\"reasoning.encrypted_content\"]`). OpenAI answers 404 with the text above.\nThe check runs only on `store: false` bodies and flags each such item.\nMust not flag: a reasoning item with encrypted_content, any item of a request with `store` true or absent (stored by default), an id-less reasoning item.\nAn item_reference to an item stored by an earlier `store: true` request may still resolve; the recorded text says these requests are refused, and the check follows it.\nFix: drop the item; a call it was paired with then loses its reasoning and is judged by call-without-reasoning.",
    example: r#"{
  "model": "o4-mini",
  "store": false,
  "input": [
    {"role": "user", "content": "What is 17 * 19?"},
    {"type": "reasoning", "id": "rs_04962823ecde01b901698e138042688193a657e07614b238c3", "summary": []},
    {"type": "message", "role": "assistant", "id": "msg_04962823ecde01b901698e138042688193a657e07614b2380a", "content": [{"type": "output_text", "text": "323"}]},
    {"role": "user", "content": "And 17 * 21?"}
  ]
}"#,
    fix: Some(drop_the_unstored_item),
};

pub(crate) const FOLLOWER_ID_MISMATCH: RuleSpec = RuleSpec {
    id: "follower-id-mismatch",
    summary: "the item after a reasoning item carries an id that is not its own (not a msg_ id on a message, or an id from another response)",
    dialects: &[Dialect::OpenAiResponses],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "openai",
            text: "Item '…' of type 'reasoning' was provided without its required following item.",
            source: "provider-errors.jsonl openai_responses-01 (filed there under `reasoning-without-follower`; the code quotes it for this rule too). No row is filed under follower-id-mismatch.",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid 'input[66].id': '…'. Expected an ID that begins with 'rs'.",
            source: "provider-errors.jsonl openai_responses-10 (filed there under `invalid-call-id`)",
        },
    ],
    repair: Repair::Always("Drops the reasoning item whose follower was replaced, and removes a message id the provider never issued (one not starting with msg_) so the message is sent as plain input."),
    doc: "The Responses API checks that the item after a reasoning item is the one produced with it, by its provider id.\nThe check flags the follower when a reasoning item rs_… is followed by a message whose id does not start with msg_ (a client-minted id), or by a message or call whose id belongs to another response: OpenAI ids share a 16-hex-digit response key (the first 16 digits of the 50-digit form, the last 16 of the older 48-digit form), and different keys prove different responses.\nMust not flag: older 48-digit ids of one response, a commentary message then a call of the same response, followers without a key in their id.\nEvidence gap: no row of provider-errors.jsonl is filed under this rule; the provider text is reasoning-without-follower's (openai_responses-01), and the minted-id case is backed by openai_responses-10 (filed under invalid-call-id).\nFix: drop the reasoning item and strip a minted id.",
    example: r#"{
  "model": "gpt-5",
  "include": [
    "reasoning.encrypted_content"
  ],
  "input": [
    {
      "role": "user",
      "content": "Say hi"
    },
    {
      "type": "reasoning",
      "id": "rs_0320e3f50879ffd0016a3c1217f90c81a0bf64cc451638f3e6",
      "encrypted_content": "gAAAAABoxC3jL8rEbUKD8lpf1c-Nsg3pHMMS-F3R8gSD70l1CqSDEDbRHb",
      "summary": []
    },
    {
      "type": "message",
      "role": "assistant",
      "content": [
        {
          "type": "output_text",
          "text": "Hi! How can I help you today?",
          "annotations": []
        }
      ],
      "id": "item_df7e40c3f04fc8ade5c3800e"
    },
    {
      "role": "user",
      "content": "Tell me a joke."
    }
  ]
}"#,
    fix: Some(drop_the_replaced_reasoning),
};

pub(crate) const MISSING_REASONING_CONTENT: RuleSpec = RuleSpec {
    id: "missing-reasoning-content",
    summary: "a thinking-mode assistant message with tool calls (in DeepSeek V4, any assistant message) lacks the reasoning_content the API returned with it (DeepSeek, Kimi)",
    dialects: &[Dialect::OpenAiChat],
    profiles: &["deepseek", "moonshot"],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "deepseek",
            text: "Missing `reasoning_content` field in the assistant message at message index 2. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
            source: "provider-errors.jsonl openai_chat-04",
        },
        ProviderText {
            provider: "moonshot",
            text: "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2",
            source: "provider-errors.jsonl openai_chat-18",
        },
        ProviderText {
            provider: "deepseek",
            text: "The `reasoning_content` in the thinking mode must be passed back to the API.",
            source: "provider-errors.jsonl openai_chat-01",
        },
    ],
    repair: Repair::Always("Adds an empty reasoning_content to the assistant message, which the provider accepts in place of the lost one."),
    doc: "DeepSeek and Moonshot Kimi in thinking mode require every assistant message that made tool calls to carry its reasoning_content when sent back.\nThe check runs only under the deepseek or moonshot profile (from --provider, or the body's model: deepseek*, kimi*thinking*) and only when the model name says thinking (reasoner, thinking, v4, r1) or the body carries reasoning anywhere; then it flags assistant messages with tool calls and no reasoning_content.\nDeepSeek V4 (deepseek-v4-*) wants the reasoning_content of every assistant message back, a plain reply too (openclaw#73417: \"The `reasoning_content` in the thinking mode must be passed back to the API.\" for a reply without tool calls; kimi-cli#2141: the final answer after a tool result), so there every assistant message without it is flagged, with that text.\nMust not flag: deepseek-chat in non-thinking mode, a request with `thinking: {\"type\": \"disabled\"}`, a reasoning_content of \"\" (present), a final assistant prefix (`prefix: true`), a V4 reply under another profile.\nanthropic-25 (DeepSeek's Anthropic endpoint) is filed under this rule but the code checks only OpenAI chat.\nFix: add reasoning_content: \"\".",
    example: r#"{
  "model": "deepseek-reasoner",
  "messages": [
    {
      "role": "user",
      "content": "What's the weather in Hangzhou tomorrow?"
    },
    {
      "role": "assistant",
      "content": "",
      "tool_calls": [
        {
          "id": "call_00_Rk4mW8qT2xLp9ZbN6cHs3Jd1",
          "type": "function",
          "function": {
            "name": "get_date",
            "arguments": "{}"
          }
        }
      ]
    },
    {
      "role": "tool",
      "tool_call_id": "call_00_Rk4mW8qT2xLp9ZbN6cHs3Jd1",
      "content": "2025-12-01"
    }
  ]
}"#,
    fix: Some(add_empty_reasoning_content),
};

// ---------------------------------------------------------------------------------------
// The checks.

/// OpenAI's item ids carry a key shared by the items of one response and by the responses
/// of one stateless conversation: the first 16 hex digits in the current 50-digit form,
/// the last 16 in the older 48-digit form. `None` for other ids. Equal keys do not prove
/// two items came from one response; different keys prove they did not.
fn response_key(id: &str) -> Option<&str> {
    let (hex, key) = key_span(id)?;
    all_hex(hex).then_some(key)
}

/// The hex part of an id and where [`response_key`] finds the key in it, before the
/// digits are checked.
fn key_span(id: &str) -> Option<(&str, &str)> {
    let (_, hex) = id.split_once('_')?;
    let key = match hex.len() {
        50 => hex.get(..16),
        48 => hex.get(32..),
        _ => None,
    }?;
    Some((hex, key))
}

fn all_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether both ids have a response key and the keys differ: `response_key(a)` and
/// `response_key(b)` both `Some` and unequal, the digits checked only when the keys
/// differ (a reasoning item and its follower share theirs).
fn other_response(a: &str, b: &str) -> bool {
    match (key_span(a), key_span(b)) {
        (Some((ha, ka)), Some((hb, kb))) => ka != kb && all_hex(ha) && all_hex(hb),
        _ => false,
    }
}

/// Responses: a reasoning item is immediately followed by the item it was produced with,
/// with that item's original id.
pub(crate) fn reasoning_is_followed_by_its_item(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let mut call_items = chain.call_item_cursor();
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
            ctx.at_turn(
                Rule::ReasoningWithoutFollower,
                t,
                format!("reasoning item {shown} at {path} {why}"),
            )
            .provider(provider())
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
            Some((_, Some(k @ (NodeKind::Message { .. } | NodeKind::Call { .. }))))
                if match k {
                    NodeKind::Message { item_id } => item_id.is_some(),
                    _ => call_items.at(chain.turns[t + 1].first()).is_some(),
                } =>
            {
                let fid = match k {
                    NodeKind::Message { item_id } => item_id.unwrap_or_default(),
                    _ => call_items
                        .at(chain.turns[t + 1].first())
                        .unwrap_or_default(),
                };
                let expected =
                    if matches!(chain.turn_nodes(t + 1)[0].kind, NodeKind::Message { .. }) {
                        "msg_"
                    } else {
                        ""
                    };
                let wrong_family =
                    rid.starts_with("rs_") && !expected.is_empty() && !fid.starts_with(expected);
                let other_response = other_response(rid, fid);
                if wrong_family || other_response {
                    out.push(
                        ctx.at_turn(
                            Rule::FollowerIdMismatch,
                            t + 1,
                            if wrong_family {
                                format!("the item after reasoning {shown} has id `{fid}`, not the msg_ id of the message it was produced with")
                            } else {
                                format!("the item after reasoning {shown} has id `{fid}`, which belongs to another response; the reasoning's own follower was replaced")
                            },
                        )
                        .with_peer(turn.first())
                        .provider(provider()),
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
pub(crate) fn outputs_keep_their_reasoning(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let mut call_items = chain.call_item_cursor();
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
        bare: Option<(usize, String, String)>,
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
                ctx.at_turn(Rule::CallWithoutReasoning, *t,
                    format!("{ty} {id} at {path} is sent with its item id but without the reasoning item before it; {why}"),
                )
                .provider(Some(format!("Item '{id}' of type '{ty}' was provided without its required 'reasoning' item: 'rs_…'.")))
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
                kind: CallKind::Client,
                ..
            }) => call_items
                .at(turn.first())
                .filter(|id| id.starts_with("fc_"))
                .map(|id| ("function_call", id)),
            // A server tool call the model made (`mcp_call`, `web_search_call`, ...) is an
            // output of its response like a function call: "Item 'mcp_…' of type
            // 'mcp_call' was provided without its required 'reasoning' item: 'rs_…'."
            // (microsoft/agent-framework#6074, #6883). `mcp_list_tools` is the server's
            // listing, made before the model reasons.
            Some(NodeKind::Call {
                kind: CallKind::Server,
                ..
            }) if turn.wire != "mcp_list_tools" => {
                call_items.at(turn.first()).map(|id| (turn.wire, id))
            }
            _ => None,
        };
        if let Some((ty, id)) = output {
            if !run.has_reasoning && run.bare.is_none() {
                run.bare = Some((t, ty.to_string(), id.to_string()));
            }
        }
    }
    flush(&mut segment, out);
}

/// Responses with `store: false`: no item is named only by an id the provider never kept.
pub(crate) fn stored_items_are_resolvable(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    if !chain.facts.store_disabled {
        return;
    }
    let text = |id: &str| {
        format!("Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.")
    };
    for (n, node) in chain.nodes.iter().enumerate() {
        if let NodeKind::Reasoning {
            item_id: Some(id),
            encrypted: false,
            ..
        } = node.kind
        {
            out.push(
                ctx.at_node(Rule::ItemNotStored, n, format!("the reasoning item {id} at {} has no encrypted_content and `store` is false: the provider kept nothing under its id", node.ptr))
                    .provider(Some(text(id))),
            );
        }
    }
    for &(ptr, id) in &chain.facts.item_references {
        let Some(n) = chain.nodes.iter().position(|m| m.ptr == ptr) else {
            continue;
        };
        let id = id.unwrap_or("?");
        out.push(
            ctx.at_node(Rule::ItemNotStored, n, format!("the item_reference at {ptr} names {id}, but `store` is false: the provider keeps no item to refer to"))
                .provider(Some(text(id))),
        );
    }
}

/// Responses continuing `previous_response_id`: the output items of that response are
/// not sent again (the provider holds them already; its items share the response's key).
pub(crate) fn held_items_are_not_replayed(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let Some(key) = chain.facts.previous_response.and_then(response_key) else {
        return;
    };
    for (n, id) in chain.item_ids() {
        if response_key(id) != Some(key) {
            continue;
        }
        let node = &chain.nodes[n];
        out.push(
            ctx.at_node(
                Rule::DuplicateCallId,
                n,
                format!(
                    "{id} at {} is an output of {}, the response this request continues: the provider holds it already",
                    node.ptr,
                    chain.facts.previous_response.unwrap_or("")
                ),
            )
            .provider(Some(format!("Duplicate item found with id {id}")))
            .with_defect(Defect::HeldUpstream),
        );
    }
}

/// DeepSeek and Kimi in thinking mode: an assistant turn with tool calls carries its
/// `reasoning_content`.
pub(crate) fn thinking_turns_carry_reasoning_content(ctx: &Ctx, out: &mut Vec<Violation>) {
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
    // `thinking: {"type": "disabled"}` turns thinking mode off: no reasoning came back.
    if !(thinking_model || any_reasoning) || chain.facts.thinking_disabled {
        return;
    }
    // DeepSeek V4 wants the reasoning of every assistant message back, not only of the
    // ones that made tool calls (openclaw#73417: a plain reply without it, refused;
    // kimi-cli#2141: the final answer after a tool result).
    let v4 = ctx.profile.id == ProfileId::DeepSeek
        && chain
            .facts
            .model
            .is_some_and(|m| m.to_ascii_lowercase().contains("deepseek-v4"));
    let last = chain.turns.len().saturating_sub(1);
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
        // A final assistant prefix (`prefix: true`) is the answer being written.
        let prefix = t == last && chain.facts.assistant_prefix;
        if reasoning || prefix || !(calls || v4) {
            continue;
        }
        let path = turn.ptr.render();
        let ix = ctx.turn_ix(t);
        let provider = if ctx.profile.id == ProfileId::Moonshot {
            format!("thinking is enabled but reasoning_content is missing in assistant tool call message at index {ix}")
        } else if v4 {
            "The `reasoning_content` in the thinking mode must be passed back to the API.".into()
        } else {
            format!("Missing `reasoning_content` field in the assistant message at message index {ix}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls")
        };
        let message = if calls {
            format!("the assistant message {path} makes tool calls in thinking mode but lacks the `reasoning_content` the API returned with them")
        } else {
            format!("the assistant message {path} was written in DeepSeek V4's thinking mode but lacks the `reasoning_content` the API returned with it")
        };
        out.push(
            ctx.at_turn(Rule::MissingReasoningContent, t, message)
                .provider(Some(provider)),
        );
    }
}

// ---------------------------------------------------------------------------------------
// The fixes.

/// The rules whose findings wait, in a pass that moves results, for the next pass: a
/// misplaced result can make its neighbours look as if their reasoning were lost.
pub(crate) fn waits_for_results(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::ReasoningWithoutFollower | Rule::FollowerIdMismatch | Rule::CallWithoutReasoning
    )
}

/// `reasoning-without-follower`: the reasoning item goes (it cannot be sent without the
/// item it produced, and that item cannot be recreated).
fn drop_the_stranded_reasoning(fx: &mut Fixer, v: &Violation) {
    let Some(i) = v.loc.turn.and_then(|t| fx.item_of_turn(t)) else {
        return;
    };
    if !fx.plan.moved_items.contains(&i) && fx.plan.drop_items.insert(i) {
        let detail = "dropped the reasoning item, whose follower is gone (it cannot be recreated)";
        fx.note(v.rule, v.path.clone(), "drop", detail.into());
    }
}

/// `follower-id-mismatch`: the reasoning item (the violation's peer) goes, since its own
/// follower was replaced; a message id the provider never issued is removed too.
fn drop_the_replaced_reasoning(fx: &mut Fixer, v: &Violation) {
    let Some(i) = v.loc.turn.and_then(|t| fx.item_of_turn(t)) else {
        return;
    };
    let chain = fx.chain();
    if let Some(rt) = v.loc.peer.map(|r| chain.nodes[r].turn()) {
        if fx
            .item_of_turn(rt)
            .is_some_and(|r| fx.plan.drop_items.insert(r))
        {
            let detail = "dropped the reasoning item, whose follower was replaced by another item";
            fx.note(v.rule, chain.turns[rt].ptr.render(), "drop", detail.into());
        }
    }
    // An id the provider never issued (not msg_ on a message) is refused on its own: send
    // the message without one.
    let minted = fx.items.and_then(|it| it.get(i)).is_some_and(|m| {
        m.get("type").and_then(Value::as_str) == Some("message")
            && m.get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| !id.starts_with("msg_"))
    });
    if minted {
        fx.plan.remove_item_id(i);
        let detail = "removed the message id, which the provider never issued";
        fx.note(v.rule, v.path.clone(), "set", detail.into());
    }
}

/// `call-without-reasoning`: where the output's reasoning item sits after it in the same
/// run (stranded, with no output of its own), it moves back in front; otherwise the
/// output's item id is removed, so it is sent as plain input that needs no reasoning.
fn restore_or_unlink_the_output(fx: &mut Fixer, v: &Violation) {
    let Some(t) = v.loc.turn else { return };
    let chain = fx.chain();
    let starts_with_reasoning = |u: usize| {
        matches!(
            chain.turn_nodes(u).first().map(|n| &n.kind),
            Some(NodeKind::Reasoning { .. })
        )
    };
    let mut later = None;
    for u in t + 1..chain.turns.len() {
        if chain.turns[u].role != Role::Assistant {
            break;
        }
        if starts_with_reasoning(u) {
            // Only a reasoning item that lost its place: one followed by an output of its
            // own is where it belongs.
            let stranded = chain
                .turns
                .get(u + 1)
                .is_none_or(|n| n.role != Role::Assistant)
                || starts_with_reasoning(u + 1);
            if stranded {
                later = Some(u);
            }
            break;
        }
    }
    let (i, ri) = (fx.item_of_turn(t), later.and_then(|u| fx.item_of_turn(u)));
    if let (Some(u), Some(i), Some(ri)) = (later, i, ri) {
        if let Some(value) = fx.items.and_then(|it| it.get(ri)) {
            fx.plan.move_item_before(ri, i, value.clone());
            let detail = format!(
                "moved the reasoning item back in front of its output at {}",
                v.path
            );
            fx.note(v.rule, chain.turns[u].ptr.render(), "move", detail);
            return;
        }
    }
    let Some(i) = i else { return };
    // A server tool call is refused without its own id ("Missing required parameter:
    // 'input[42].id'."), so it cannot be sent as plain input. Dropping it (as
    // microsoft/agent-framework#6210 does) would lose the tool's output with it: that
    // is the application's choice, so it is reported and left.
    let server_call = matches!(
        chain.turn_nodes(t).first().map(|n| &n.kind),
        Some(NodeKind::Call {
            kind: CallKind::Server,
            ..
        })
    );
    if server_call {
        return;
    }
    fx.plan.remove_item_id(i);
    let detail =
        "removed the item id, so the item is sent as plain input that needs no reasoning item";
    fx.note(v.rule, v.path.clone(), "set", detail.into());
}

/// `item-not-stored`: the item goes, as the provider advises.
fn drop_the_unstored_item(fx: &mut Fixer, v: &Violation) {
    let Some(n) = v.loc.node else { return };
    // Another finding about the same item may have dropped it already this pass.
    let item = fx.chain().nodes[n].ptr.item_index().map(|i| i as usize);
    if item.is_some_and(|i| fx.plan.drop_items.contains(&i)) {
        return;
    }
    if fx.claim(n) {
        fx.drop_node(n);
        let detail =
            "dropped the item: `store` is false, so the provider kept nothing under its id";
        fx.note(v.rule, v.path.clone(), "drop", detail.into());
    }
}

/// `missing-reasoning-content`: an empty `reasoning_content`, which the provider accepts
/// in place of the lost one (the lost text cannot be recreated).
fn add_empty_reasoning_content(fx: &mut Fixer, v: &Violation) {
    let Some(t) = v.loc.turn else { return };
    let ptr = fx.chain().turns[t].ptr;
    if ptr.item_index().is_some() && fx.set_field(ptr, "reasoning_content", Some(json!(""))) {
        let detail =
            "added an empty reasoning_content, which the provider accepts in place of the lost one";
        fx.note(v.rule, v.path.clone(), "set", detail.into());
    }
}

#[cfg(test)]
mod tests {
    use super::response_key;

    #[test]
    fn other_response_is_two_keys_that_differ() {
        let ids = [
            "rs_0adb81d1c2f6e68a016a3c12286a0081a184e1b23cca2ac02d",
            "fc_0adb81d1c2f6e68a016a3c122b744481a197df0b5a6edff94b",
            "fc_0320e3f50879ffd0016a3c1218fb1881a0881b261ab719bafa",
            "fc_0320e3f50879ffd0016a3c1218fb1881a0881b261ab719bafx",
            "fc_0adb81d1c2f6e68a016a3c122b744481a197df0b5a6edff94x",
            "rs_68c42de022c881948db7ed1cc2529f2e0202c9ad459e0d23",
            "msg_68c42de31d348194a251b43ad913ef140202c9ad459e0d23",
            "msg_68c42de31d348194a251b43ad913ef140202c9ad459e0d2z",
            "msg_68c42de31d348194a251b43ad913ef140202c9ad459e0d24",
            "msg_17",
            "76f8b89e-4a41-46fb-86ae-546cc1e4ba6c",
            "",
        ];
        for a in ids {
            for b in ids {
                let want =
                    matches!((response_key(a), response_key(b)), (Some(x), Some(y)) if x != y);
                assert_eq!(super::other_response(a, b), want, "{a} {b}");
            }
        }
    }

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
