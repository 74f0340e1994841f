//! Signed reasoning comes back as it was sent: Anthropic thinking blocks first in their
//! message, signed and unmodified; Gemini 3 function calls with their thought signature.

use serde_json::json;

use crate::chain::{CallKind, NodeKind, Role};
use crate::dialect::Dialect;
use crate::repair::{Fixer, SKIP_SIGNATURE};
use crate::violation::{Rule, Severity, Violation};

use super::{Ctx, ProviderText, Repair, RuleSpec};

pub(crate) const THINKING_NOT_FIRST: RuleSpec = RuleSpec {
    id: "thinking-not-first",
    summary: "an Anthropic assistant message holds thinking but does not start with it, or (thinking on) the message that opened the current tool loop does not start with a thinking block",
    dialects: &[Dialect::Anthropic, Dialect::BedrockConverse],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "anthropic",
            text: "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
            source: "provider-errors.jsonl anthropic-03",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.129.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
            source: "provider-errors.jsonl anthropic-10",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.5.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `text`.",
            source: "provider-errors.jsonl anthropic-27",
        },
        ProviderText {
            provider: "bedrock",
            text: "The model returned the following errors: messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
            source: "provider-errors.jsonl bedrock_converse-02",
        },
        ProviderText {
            provider: "bedrock",
            text: "If an assistant message contains any thinking blocks, the first block must be thinking. Found text",
            source: "provider-errors.jsonl bedrock_converse-13",
        },
        ProviderText {
            provider: "bedrock",
            text: "The model returned the following errors: messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
            source: "provider-errors.jsonl bedrock_converse-02",
        },
    ],
    repair: Repair::Always("Reorders the message so its thinking and redacted_thinking blocks come first. A loop opener with no thinking block at all cannot get one back (a signed thinking block cannot be invented): thinking is turned off for the request (`thinking: {\"type\": \"disabled\"}`), as Anthropic's own error text advises, and the edit says so."),
    doc: "Anthropic requires thinking blocks to come first in any assistant message that holds them, and with `thinking` enabled, the assistant message that opened the current tool loop (the history ends with a user message of tool results) must start with a thinking or redacted_thinking block.\nThe check flags both; a message already flagged for the first reason is not flagged again for the second.\nMust not flag: a redacted_thinking block opening the loop, a later step of the loop without thinking, an old loop without thinking once a new user turn started, no thinking blocks with thinking disabled.\nFix: move the thinking blocks to the front; when the opener has no thinking the client must disable thinking or restore the original blocks.\nBedrock Converse: reasoningContent blocks are the thinking blocks; thinking is on when additionalModelRequestFields.thinking.type is enabled or adaptive, and repair turns it off there. The order is Claude's rule: on Converse a known other model (DeepSeek-R1 answers with its text before its reasoning, recorded) is not held to it; with no model given, it is.",
    example: r#"{
  "model": "claude-sonnet-4-20250514",
  "max_tokens": 4096,
  "thinking": {
    "type": "enabled",
    "budget_tokens": 2048
  },
  "messages": [
    {
      "role": "user",
      "content": "What's the weather in Paris?"
    },
    {
      "role": "assistant",
      "content": [
        {
          "type": "text",
          "text": "Let me check."
        },
        {
          "type": "thinking",
          "thinking": "The user wants Paris weather; call get_weather.",
          "signature": "EuYBCkYIBxgCKkDxX0Hq3ZpkW2zQ7GmXhYw2u1m5P0m9d8yCE7q3n2J1w0y9o0TqP1rR7sRk6jvM0n4mF0qK7XgqJ8yC1ZbN2H0cEgxq0Zb7xv3bV2n5GkUaDIG3qNq8a4tS7k2mJyIwU1n0"
        },
        {
          "type": "tool_use",
          "id": "toolu_01A09q90qw90lq917835lq9",
          "name": "get_weather",
          "input": {
            "city": "Paris"
          }
        }
      ]
    },
    {
      "role": "user",
      "content": [
        {
          "type": "tool_result",
          "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
          "content": "18 C, overcast"
        }
      ]
    }
  ]
}"#,
    fix: Some(put_thinking_first),
};

pub(crate) const THINKING_FINAL_BLOCK: RuleSpec = RuleSpec {
    id: "thinking-final-block",
    summary: "an Anthropic assistant message ends with a thinking block (a thinking-only message, or text stripped after the thinking)",
    dialects: &[Dialect::Anthropic],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[ProviderText {
        provider: "anthropic",
        text: "messages.1: The final block in an assistant message cannot be `thinking`.",
        source: "provider-errors.jsonl anthropic-15; forgecode#2107, claude-code#11514",
    }],
    repair: Repair::Sometimes("In an assistant message of an earlier turn (a user message that is not only tool results follows it), the trailing thinking blocks go: Anthropic strips the thinking of earlier turns anyway, so nothing the model reads is lost; a message left empty goes with them. In the current turn the thinking is the model's own and cannot be changed or completed: reported, left alone."),
    doc: "Anthropic refuses an assistant message, in any position, whose last block is `thinking` or `redacted_thinking`: a reasoning-only turn kept in history (an interrupted response, a store that keeps reasoning-only messages) or a client that stripped the text after the thinking.\nThe check flags every assistant message of the history whose last block is a thinking block.\nMust not flag: thinking followed by text or tool_use, an assistant message without thinking.\nFix: drop the trailing thinking of earlier turns (the API drops them itself); the current turn is reported.",
    example: r#"{
  "model": "claude-sonnet-4-5",
  "max_tokens": 2048,
  "thinking": {"type": "enabled", "budget_tokens": 1024},
  "messages": [
    {"role": "user", "content": "What is 17 * 19?"},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "17 * 19 = 323", "signature": "EqQBCkYIBxgCKkB"}]},
    {"role": "user", "content": "Please answer."}
  ]
}"#,
    fix: Some(drop_the_trailing_thinking),
};

pub(crate) const THINKING_MODIFIED: RuleSpec = RuleSpec {
    id: "thinking-modified",
    summary: "a thinking block cannot be sent as it is: unsigned (Anthropic, Claude on Converse), a redacted block without its data, thinking in the final assistant message with thinking off, or any reasoning sent back to DeepSeek-R1 on Converse",
    dialects: &[Dialect::Anthropic, Dialect::BedrockConverse],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "anthropic",
            text: "messages.1.content.0.thinking.signature: Field required",
            source: "provider-errors.jsonl anthropic-23",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.1.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
            source: "provider-errors.jsonl anthropic-18",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.N.content.M.redacted_thinking.data: Field required",
            source: "unknown: exact text not recorded (the code's text for a redacted_thinking block without data, by analogy with anthropic-23; the case cites anthropic-02)",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.3.content.11: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
            source: "provider-errors.jsonl anthropic-02",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.1.content.0: Invalid `signature` in `thinking` block",
            source: "provider-errors.jsonl anthropic-05",
        },
        ProviderText {
            provider: "bedrock",
            text: "messages.N.content.1: thinking or redacted_thinking blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
            source: "provider-errors.jsonl bedrock_converse-07",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.N.content.M.thinking.thinking: Field required",
            source: "provider-errors.jsonl anthropic-24",
        },
        ProviderText {
            provider: "github-copilot",
            text: "messages.1.content.0.thinking: each thinking block must contain thinking",
            source: "provider-errors.jsonl anthropic-28",
        },
        ProviderText {
            provider: "bedrock",
            text: "User messages cannot contain reasoning content. Please remove the reasoning content and try again.",
            source: "langchain-ai/langchain-aws#401, aws-samples/bedrock-chat#845 and #851, zed-industries/zed#32341 (DeepSeek-R1 on Converse: the follow-up request that sends the assistant's reasoningContent back; pydantic-ai replays it as text instead); no row in provider-errors.jsonl",
        },
    ],
    repair: Repair::Always("Drops the thinking block, which cannot be sent as it is. When the dropped block opened the current tool loop with thinking on, thinking-not-first then turns thinking off for the request."),
    doc: "Anthropic requires thinking blocks to come back exactly as returned: signed, redacted_thinking with its opaque data, and no thinking in a final assistant message when thinking is disabled.\nThe check flags a thinking block without a signature (or an empty one), a redacted_thinking block without `data`, and with thinking disabled a thinking block in the final assistant message.\nIt cannot see a changed text or a forged signature (anthropic-02, anthropic-05 report those); mend does not verify signatures.\nMust not flag: earlier thinking blocks with thinking disabled, a signed block whose thinking text was omitted, signed thinking and redacted blocks in a loop.\nThe Responses \"encrypted content could not be verified\" rows (openai_responses-02, -08) are filed under this rule but the code has no Responses check for them.\nFix: drop the block.\nBedrock Converse: signatures are Claude's, so an unsigned reasoningText is flagged only for a Claude model (give --model) or with Claude's thinking switched on; DeepSeek-R1, Kimi and Qwen return reasoning without one. A redactedContent without data is flagged for every model. Thinking counts as off for Claude when additionalModelRequestFields has no thinking. Converse's text for a missing signature is not recorded.\nDeepSeek-R1 on Converse (a model id with `deepseek.r1`) returns reasoningContent but refuses any sent back, in whichever message: \"User messages cannot contain reasoning content. Please remove the reasoning content and try again.\" (langchain-aws#401, aws-samples/bedrock-chat#845, zed#32341: the second request of every conversation); each block is flagged and repair drops it, as the service asks and as bedrock-chat#851 does (the model reads none of it back). Other non-Claude models are not held to it: no refusal is recorded for them.",
    example: r#"{
  "model": "claude-sonnet-4-20250514",
  "max_tokens": 4096,
  "thinking": {
    "type": "enabled",
    "budget_tokens": 2048
  },
  "messages": [
    {
      "role": "user",
      "content": "Is 1001 prime?"
    },
    {
      "role": "assistant",
      "content": [
        {
          "type": "thinking",
          "thinking": "1001 = 7 * 11 * 13, so it is not prime."
        },
        {
          "type": "text",
          "text": "No: 1001 = 7 x 11 x 13."
        }
      ]
    },
    {
      "role": "user",
      "content": "What about 1009?"
    }
  ]
}"#,
    fix: Some(drop_the_unsendable_thinking),
};

pub(crate) const MISSING_THOUGHT_SIGNATURE: RuleSpec = RuleSpec {
    id: "missing-thought-signature",
    summary: "in Gemini 3's current turn, the first function call of a model step is sent back without its thought signature",
    dialects: &[Dialect::Gemini, Dialect::OpenAiChat],
    profiles: &["gemini"],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "gemini",
            text: "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:shell` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
            source: "provider-errors.jsonl gemini-01",
        },
        ProviderText {
            provider: "gemini",
            text: "Corrupted thought signature.",
            source: "provider-errors.jsonl gemini-04",
        },
        ProviderText {
            provider: "vertex",
            text: "Unable to submit request because Thought signature is not valid.. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini",
            source: "provider-errors.jsonl gemini-11",
        },
        ProviderText {
            provider: "vertex",
            text: "Unable to submit request because function call `…` in the 3. content block is missing a thought_signature.",
            source: "https://github.com/JohnnyZ93/oai-compatible-copilot/issues/49 (gemini-3-pro-preview through an OpenAI-compatible endpoint); no row in provider-errors.jsonl",
        },
    ],
    repair: Repair::Always("Moves the step's signature back when it landed on a later call of the same step; otherwise sets thoughtSignature (thought_signature in snake-case bodies) to Google's documented placeholder `skip_thought_signature_validator`. OpenAI chat (gemini profile): sets the tool call's extra_content.google.thought_signature to the placeholder, keeping the rest of its extra_content."),
    doc: "Gemini 3 returns a thoughtSignature on the first functionCall part of each model step and requires it back for the current turn (the steps since the last user turn that is not only function responses).\nThe check runs when the model is gemini-3* (body `model` or --model) or the body carries any signature, and flags the first call of each model turn in the current turn that has none.\nMust not flag: parallel calls where only the first is signed, unsigned calls in older turns, Gemini 2 histories without signatures, a placeholder signature on a foreign history.\nIt does not detect corrupted or invalid signatures (gemini-04, gemini-11). The code's text fills the bare function name where the row shows `default_api:shell`.\nOpenAI chat under the gemini profile (Gemini's OpenAI-compatible endpoints, a gemini-3* model or any signature in the body): the signature travels on the tool call as `extra_content.google.thought_signature` (Vertex: `extra_content.vertex`), and a client that drops it is refused the same way (provider-errors.jsonl gemini-01 lists gemini-openai-compat; securo-finance/securo#884, CherryHQ/cherry-studio#12729, crmne/ruby_llm#591, earendil-works/pi#6733 on Vertex's endpoint, JohnnyZ93/oai-compatible-copilot#49). The first tool call of each assistant message of the current turn (since the last user message) is judged; a message that carries OpenRouter's `reasoning_details` (which holds the signatures by call id) is not.\nFix: restore the moved signature or use the placeholder.",
    example: r#"{
  "model": "gemini-3-pro-preview",
  "contents": [
    {
      "role": "user",
      "parts": [
        {
          "text": "What's the weather in Paris?"
        }
      ]
    },
    {
      "role": "model",
      "parts": [
        {
          "functionCall": {
            "id": "9d532gc9",
            "name": "get_weather",
            "args": {
              "city": "Paris"
            }
          }
        }
      ]
    },
    {
      "role": "user",
      "parts": [
        {
          "functionResponse": {
            "id": "9d532gc9",
            "name": "get_weather",
            "response": {
              "result": "18 C, light rain"
            }
          }
        }
      ]
    }
  ]
}"#,
    fix: Some(give_the_call_its_signature),
};

// ---------------------------------------------------------------------------------------
// The checks.

/// Anthropic: thinking blocks come first in their message, and with thinking on, the
/// assistant message that opened the current tool loop starts with one.
pub(crate) fn thinking_comes_first(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    // Converse serves models whose own answers put text before reasoning (DeepSeek-R1,
    // recorded): the order is Claude's rule, so a known other model is not held to it.
    let other_model = chain
        .facts
        .model
        .is_some_and(|m| !m.to_ascii_lowercase().contains("claude"));
    if ctx.dialect == Dialect::BedrockConverse && other_model {
        return;
    }
    let wire_of = |k: &NodeKind| -> String {
        match k {
            NodeKind::Text { .. } => "text".into(),
            NodeKind::Call { wire, .. } | NodeKind::Result { wire, .. } => {
                chain.wire_text(*wire).to_string()
            }
            NodeKind::Other { wire } => (*wire).to_string(),
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
                    ctx.at_node(
                        Rule::ThinkingNotFirst,
                        turn.first(),
                        format!("{} holds thinking blocks but starts with a {found} block; thinking must come first", turn.ptr.render()),
                    )
                    .provider(Some(thinking_not_first(ctx.dialect, ctx.turn_ix(t), &found, false)))
                );
            }
        }
    }
    if !chain.facts.thinking_enabled {
        return;
    }
    // The current tool loop: the history ends with a user message of tool results.
    let history = ctx.history();
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
                ctx.at_node(
                    Rule::ThinkingNotFirst,
                    chain.turns[t].first(),
                    format!(
                        "thinking is enabled and {} opened the current tool loop, but it starts with a {found} block instead of its thinking block",
                        chain.turns[t].ptr.render()
                    ),
                )
                .provider(Some(thinking_not_first(ctx.dialect, ctx.turn_ix(t), &found, true)))
            );
        }
    }
}

/// Anthropic: thinking blocks come back as they were sent: signed, with their data, and
/// not in a final assistant message when thinking is off.
/// Whether `model` on `dialect` returns reasoning but takes none back, in any message:
/// DeepSeek-R1 on Converse ("User messages cannot contain reasoning content. Please
/// remove the reasoning content and try again.", langchain-aws#401,
/// aws-samples/bedrock-chat#845, zed#32341). The check reports such reasoning, and
/// `next` leaves it out of the turn it sends back.
pub(crate) fn takes_no_reasoning_back(dialect: Dialect, model: Option<&str>) -> bool {
    dialect == Dialect::BedrockConverse
        && model.is_some_and(|m| m.to_ascii_lowercase().contains("deepseek.r1"))
}

pub(crate) fn thinking_is_unmodified(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let (signs, thinking_off) = match ctx.dialect {
        // Converse serves models that return unsigned reasoning (DeepSeek-R1, Kimi, Qwen):
        // signatures are Claude's, and so is "thinking off" when the field is absent.
        Dialect::BedrockConverse => {
            let claude = chain
                .facts
                .model
                .is_some_and(crate::dialect::bedrock_converse::is_claude_id);
            (
                claude || chain.facts.thinking_enabled,
                chain.facts.thinking_disabled || (claude && !chain.facts.thinking_enabled),
            )
        }
        _ => (true, chain.facts.thinking_disabled),
    };
    let takes_no_reasoning = takes_no_reasoning_back(ctx.dialect, chain.facts.model);
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
        let ix = ctx.turn_ix(node.turn());
        let sub = ctx.node_sub(n).unwrap_or(0);
        if takes_no_reasoning {
            out.push(
                ctx.at_node(
                    Rule::ThinkingModified,
                    n,
                    format!("the reasoningContent block at {} goes back to DeepSeek-R1, which takes no reasoning in its input", ctx.path(n)),
                )
                .provider(Some(
                    "User messages cannot contain reasoning content. Please remove the reasoning content and try again.".into(),
                )),
            );
            continue;
        }
        if !signed && (signs || redacted) {
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
            // Converse has no recorded text for these.
            let provider = (ctx.dialect != Dialect::BedrockConverse).then_some(provider);
            out.push(
                ctx.at_node(Rule::ThinkingModified, n, message)
                    .provider(provider),
            );
        }
        if thinking_off
            && Some(node.turn()) == last
            && chain.turns[node.turn()].role == Role::Assistant
        {
            out.push(
                ctx.at_node(
                    Rule::ThinkingModified,
                    n,
                    format!("thinking is off, but the final assistant message holds a thinking block at {}", ctx.path(n)),
                )
                .provider(Some(format!(
                    "messages.{ix}.content.{sub}: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
                )))
            );
        }
    }
}

/// Anthropic: no assistant message ends with a thinking block.
pub(crate) fn thinking_is_not_last(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    for &t in ctx.history() {
        let turn = &chain.turns[t];
        if turn.role != Role::Assistant || turn.end() == turn.first() {
            continue;
        }
        let n = turn.end() - 1;
        if matches!(chain.nodes[n].kind, NodeKind::Reasoning { .. }) {
            out.push(
                ctx.at_node(
                    Rule::ThinkingFinalBlock,
                    n,
                    format!("{} ends with a thinking block; an assistant message must end with text or a tool call", turn.ptr),
                )
                .provider(Some(format!(
                    "messages.{}: The final block in an assistant message cannot be `thinking`.",
                    ctx.turn_ix(t)
                ))),
            );
        }
    }
}

/// Gemini 3: in the current turn, the first function call of each model step carries
/// the thought signature the API returned.
pub(crate) fn current_turn_calls_are_signed(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let gemini3 = chain
        .facts
        .model
        .and_then(crate::dialect::gemini::generation)
        .is_some_and(|g| g >= 3);
    // `thinkingLevel` is Gemini 3's setting: a body that sets it is for Gemini 3.
    if !(chain.facts.signatures_seen || gemini3 || chain.facts.thinking_level_set) {
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
    let chat = ctx.dialect == Dialect::OpenAiChat;
    for t in start..chain.turns.len() {
        if chain.turns[t].role != Role::Assistant {
            continue;
        }
        let turn = &chain.turns[t];
        // OpenRouter carries a chat message's signatures in its `reasoning_details`
        // (matched to the calls there by id): a message that kept them is not judged.
        if chat
            && chain
                .turn_nodes(t)
                .iter()
                .any(|n| matches!(n.kind, NodeKind::Reasoning { signed: true, .. }))
        {
            continue;
        }
        let first_call = (turn.first()..turn.end())
            .find(|&n| matches!(chain.nodes[n].kind, NodeKind::Call { .. }));
        if let Some((n, node)) = first_call.map(|n| (n, &chain.nodes[n])) {
            if let NodeKind::Call {
                signed: false,
                name,
                ..
            } = node.kind
            {
                let p = node.ptr.render();
                out.push(
                    ctx.at_node(
                        Rule::MissingThoughtSignature,
                        n,
                        format!(
                            "the function call{} at {p} is the first of its step in the current turn and has no {}; Gemini 3 needs the signature it returned",
                            name.map(|n| format!(" to `{n}`")).unwrap_or_default(),
                            if chat { "extra_content.google.thought_signature" } else { "thoughtSignature" }
                        ),
                    )
                    .provider(Some(format!(
                        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `{}` , position {}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                        name.unwrap_or("default_api"),
                        ctx.turn_ix(t) + 1
                    )))
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The fixes.

/// `thinking-not-first`: the message's thinking blocks move back to its start, in their
/// order, unmodified. A loop opener with no thinking at all cannot get one back (a signed
/// block cannot be invented): thinking is turned off for the request instead.
fn put_thinking_first(fx: &mut Fixer, v: &Violation) {
    let Some(t) = v.loc.turn else { return };
    let chain = fx.chain();
    if !chain
        .turn_nodes(t)
        .iter()
        .any(|m| matches!(m.kind, NodeKind::Reasoning { .. }))
    {
        turn_thinking_off(fx, v);
        return;
    }
    let Some(i) = fx.item_of_turn(t) else { return };
    let Some(item) = fx.items.and_then(|it| it.get(i)) else {
        return;
    };
    let Some(blocks) = item.get("content").and_then(|c| c.as_array()) else {
        return;
    };
    let thinking_at: Vec<usize> = chain
        .turn_nodes(t)
        .iter()
        .filter(|m| matches!(m.kind, NodeKind::Reasoning { .. }))
        .filter_map(|m| m.ptr.sub_index().map(|j| j as usize))
        .collect();
    // As edits of the blocks where they are (each thinking block dropped there and put
    // back before the first block), not the message written anew: another fix of this
    // pass may address a block of the message by its index (a call dropped, an id set),
    // and on a reordered message that index would name another block.
    let front: Vec<_> = thinking_at
        .iter()
        .filter_map(|&j| blocks.get(j).map(|b| (j, b.clone())))
        .collect();
    let Some(&(first, _)) = front.first() else {
        return;
    };
    if !fx.plan.drop_subs.insert((i, "content", first)) {
        return; // already put first this pass
    }
    let mut moved = Vec::with_capacity(front.len());
    for (j, b) in front {
        fx.plan.drop_subs.insert((i, "content", j));
        moved.push(b);
    }
    let at_start = fx.plan.insert_subs.entry((i, "content", 0)).or_default();
    at_start.splice(0..0, moved);
    let detail = "moved the thinking blocks back to the start of the message";
    fx.note(v.rule, v.path.clone(), "reorder", detail.into());
}

/// The loop opener lost its thinking block, and a signed block cannot be invented: the
/// provider's own advice ("To avoid this requirement, disable `thinking`.", anthropic-03)
/// is to send this request with thinking off. Reported; the history is left as it is.
fn turn_thinking_off(fx: &mut Fixer, v: &Violation) {
    if !fx.chain().facts.thinking_enabled {
        return;
    }
    let off = json!({"type": "disabled"});
    let (field, value, shown) = if fx.dialect() == Dialect::BedrockConverse {
        // Claude's switch lives in the model's own fields; the others there stay.
        let mut fields = fx
            .body
            .get("additionalModelRequestFields")
            .and_then(|f| f.as_object())
            .cloned()
            .unwrap_or_default();
        fields.insert("thinking".into(), off);
        (
            "additionalModelRequestFields",
            serde_json::Value::Object(fields),
            "`additionalModelRequestFields.thinking: {\"type\": \"disabled\"}`",
        )
    } else {
        ("thinking", off, "`thinking: {\"type\": \"disabled\"}`")
    };
    if fx.set_body_field(field, Some(value)) {
        let detail = format!("turned thinking off for this request ({shown}), as Anthropic advises: the thinking block that opened the current tool loop is gone and cannot be recreated");
        fx.note(v.rule, v.path.clone(), "set", detail);
    }
}

/// `thinking-final-block`: in an earlier turn, the message's trailing thinking blocks
/// go (the API strips earlier turns' thinking itself); in the current turn, nothing.
fn drop_the_trailing_thinking(fx: &mut Fixer, v: &Violation) {
    let Some(t) = v.loc.turn else { return };
    let chain = fx.chain();
    let earlier_turn = (t + 1..chain.turns.len()).any(|u| {
        chain.turns[u].role == Role::User
            && chain
                .turn_nodes(u)
                .iter()
                .any(|n| !matches!(n.kind, NodeKind::Result { .. }))
    });
    // Another finding about the same message (thinking not first, say) is settled
    // first: its fix may be what makes the thinking not last.
    let others = fx.a.violations.iter().any(|w| {
        w.rule != Rule::ThinkingFinalBlock && w.severity == Severity::Error && w.loc.turn == Some(t)
    });
    if !earlier_turn || others {
        return;
    }
    let turn = &chain.turns[t];
    let trailing: Vec<usize> = (turn.first()..turn.end())
        .rev()
        .take_while(|&n| matches!(chain.nodes[n].kind, NodeKind::Reasoning { .. }))
        .collect();
    if trailing.len() == turn.end() - turn.first() {
        if let Some(i) = fx.item_of_turn(t) {
            if fx.plan.drop_items.insert(i) {
                let detail = "dropped the thinking-only message of an earlier turn: Anthropic strips earlier turns' thinking, so the model loses nothing".to_string();
                fx.note(v.rule, turn.ptr.render(), "drop", detail);
            }
        }
        return;
    }
    for n in trailing {
        if fx.claim(n) {
            fx.drop_node(n);
            let detail = "dropped the trailing thinking block of an earlier turn: Anthropic strips earlier turns' thinking, so the model loses nothing".to_string();
            fx.note(v.rule, chain.nodes[n].ptr.render(), "drop", detail);
        }
    }
}

/// `thinking-modified`: the block goes; it cannot be sent as it is, and its signature
/// cannot be recreated.
fn drop_the_unsendable_thinking(fx: &mut Fixer, v: &Violation) {
    let Some(n) = v.loc.node else { return };
    if fx.claim(n) {
        fx.drop_node(n);
        let detail = "dropped the thinking block, which cannot be sent as it is";
        fx.note(v.rule, v.path.clone(), "drop", detail.into());
    }
}

/// `missing-thought-signature`: a step's signature that landed on a later call of the
/// same step moves back to its first call; otherwise the call gets Google's documented
/// placeholder.
fn give_the_call_its_signature(fx: &mut Fixer, v: &Violation) {
    let Some(n) = v.loc.node else { return };
    let chain = fx.chain();
    let ptr = chain.nodes[n].ptr;
    if ptr.sub_index().is_none() {
        return;
    }
    if fx.dialect() == Dialect::OpenAiChat {
        sign_the_chat_call(fx, v, ptr);
        return;
    }
    let field = signature_field(fx.value_at(ptr), "function_call");
    let stray = chain
        .turn_nodes(chain.nodes[n].turn())
        .iter()
        .find(|m| m.ptr != ptr && matches!(m.kind, NodeKind::Call { signed: true, .. }));
    if let Some(other) = stray.filter(|o| o.ptr.sub_index().is_some()) {
        let part = fx.value_at(other.ptr);
        let sig = part
            .and_then(|p| {
                p.get("thoughtSignature")
                    .or_else(|| p.get("thought_signature"))
            })
            .cloned();
        if let Some(sig) = sig {
            fx.set_field(other.ptr, signature_field(part, "thought_signature"), None);
            fx.set_field(ptr, field, Some(sig));
            let detail = format!(
                "moved the step's thought signature back from {} to its first call",
                other.ptr
            );
            fx.note(v.rule, v.path.clone(), "move", detail);
            return;
        }
    }
    fx.set_field(ptr, field, Some(json!(SKIP_SIGNATURE)));
    let detail = format!("set {field} to Google's documented placeholder `{SKIP_SIGNATURE}`");
    fx.note(v.rule, v.path.clone(), "set", detail);
}

/// OpenAI chat (Gemini's compatible endpoints): the tool call's
/// `extra_content.google.thought_signature` (under `vertex` when the call's
/// `extra_content` already speaks Vertex's name) gets Google's placeholder; the call's
/// other `extra_content` stays.
fn sign_the_chat_call(fx: &mut Fixer, v: &Violation, ptr: crate::chain::Ptr) {
    let mut extra = fx
        .value_at(ptr)
        .and_then(|c| c.get("extra_content"))
        .filter(|e| e.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    let ns = if extra.get("vertex").is_some_and(|g| g.is_object()) {
        "vertex"
    } else {
        "google"
    };
    let Some(fields) = extra.as_object_mut() else {
        return;
    };
    let inner = fields.entry(ns).or_insert_with(|| json!({}));
    if !inner.is_object() {
        *inner = json!({});
    }
    if let Some(inner) = inner.as_object_mut() {
        inner.insert("thought_signature".into(), json!(SKIP_SIGNATURE));
    }
    if fx.set_field(ptr, "extra_content", Some(extra)) {
        let detail = format!(
            "set extra_content.{ns}.thought_signature to Google's documented placeholder `{SKIP_SIGNATURE}`"
        );
        fx.note(v.rule, v.path.clone(), "set", detail);
    }
}

/// The signature field a part uses: snake case when the part has the snake-case `key`.
fn signature_field(part: Option<&serde_json::Value>, key: &str) -> &'static str {
    if part.is_some_and(|p| p.get(key).is_some()) {
        "thought_signature"
    } else {
        "thoughtSignature"
    }
}

/// `thinking-not-first`'s texts (anthropic-03 / anthropic-10, anthropic-27).
/// `thinking-not-first`.
fn thinking_not_first(d: Dialect, at: u32, found: &str, loop_opener: bool) -> String {
    if d == Dialect::BedrockConverse {
        return if loop_opener {
            // bedrock_converse-02: Claude's own text, in its own block names.
            let found = if found == "toolUse" {
                "tool_use"
            } else {
                found
            };
            format!(
                "The model returned the following errors: {}",
                thinking_not_first(Dialect::Anthropic, at, found, true)
            )
        } else {
            // bedrock_converse-13
            format!("If an assistant message contains any thinking blocks, the first block must be thinking. Found {found}")
        };
    }
    if loop_opener {
        // anthropic-03 / anthropic-10
        format!(
            "messages.{at}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
        )
    } else {
        // anthropic-27
        format!(
            "messages.{at}.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `{found}`."
        )
    }
}
