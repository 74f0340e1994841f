//! Roles: turns come in an order the API accepts (alternation, the first and last role,
//! roles a provider does not know), and a Gemini function-call turn follows a user turn
//! or a function-response turn.
//!
//! No fix: reordering or merging turns changes what the conversation says, and which
//! turn to move cannot be told from the history alone (a merge tried here joined turns
//! an earlier repair pass had made adjacent). Findings are reported, the body left alone.

use crate::chain::{CallKind, NodeKind, Role};
use crate::dialect::Dialect;
use crate::violation::{Rule, Severity, Violation};

use super::{Ctx, ProviderText, Repair, RuleSpec};

pub(crate) const ROLE_ORDER: RuleSpec = RuleSpec {
    id: "role-order",
    summary: "roles in an order or of a kind the API rejects (system message in Anthropic messages, non user/model role in Gemini, a profile's ordering rules)",
    dialects: &[Dialect::OpenAiChat, Dialect::Anthropic, Dialect::Gemini, Dialect::BedrockConverse],
    profiles: &["bedrock", "mistral", "deepseek"],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "gemini",
            text: "Please use a valid role: user, model.",
            source: "case cases/gemini/role-order/assistant-role-in-contents.json citing https://github.com/the-open-agent/openagent/issues/1666; no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.",
            source: "provider-errors.jsonl anthropic-26",
        },
        ProviderText {
            provider: "bedrock",
            text: "messages: first message must use the \"user\" role",
            source: "provider-errors.jsonl anthropic-07",
        },
        ProviderText {
            provider: "bedrock",
            text: "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row",
            source: "provider-errors.jsonl anthropic-17",
        },
        ProviderText {
            provider: "mistral",
            text: "Unexpected role 'user' after role 'tool'",
            source: "provider-errors.jsonl openai_chat-05",
        },
        ProviderText {
            provider: "mistral",
            text: "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
            source: "provider-errors.jsonl openai_chat-19",
        },
        ProviderText {
            provider: "deepseek",
            text: "Failed to deserialize the JSON body into the target type: messages[1].role: unknown variant `developer`, expected one of `system`, `user`, `assistant`, `tool`, `latest_reminder` at line 1 column 51036",
            source: "provider-errors.jsonl openai_chat-36",
        },
        ProviderText {
            provider: "gemini",
            text: "Requests ending with a model turn are not supported.",
            source: "provider-errors.jsonl gemini-05",
        },
        ProviderText {
            provider: "bedrock",
            text: "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.",
            source: "provider-errors.jsonl bedrock_converse-01",
        },
        ProviderText {
            provider: "bedrock",
            text: "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
            source: "provider-errors.jsonl bedrock_converse-03",
        },
        ProviderText {
            provider: "bedrock",
            text: "This model does not support assistant message prefill. The conversation must end with a user message.",
            source: "provider-errors.jsonl bedrock_converse-12",
        },
    ],
    repair: Repair::Never("No fix: renaming, merging or reordering roles would change what the conversation says, so every finding is reported and the body is left as it is."),
    doc: "Anthropic takes instructions in the top-level `system`, so a role:\"system\" message is an error; two user or two assistant messages in a row, or a first assistant message, are warnings on the first-party API (which merges them) and errors under the bedrock profile, which requires strict alternation starting with user.\nGemini contents accept only the roles user and model (error), and a request ending with a model turn is a warning (newer models reject it).\nOpenAI chat: an unknown role is an error; deepseek rejects `developer`; mistral rejects a user message right after a tool message and a last message from the assistant unless it has prefix: true.\nMust not flag: an OpenAI `developer` message (openai profile), mistral tool→assistant→user, an Anthropic final assistant prefill, a Gemini single turn without a role, a Bedrock alternating tool loop.\nThe code's DeepSeek text omits the row's \"`latest_reminder` at line 1 column …\" tail; Gemini's \"valid role\" text has no row in the evidence file. Responses has no role-order checks.\nBedrock Converse: roles are user and assistant, strictly alternating (Converse merges nothing); the first message is the user's except on Claude and Qwen (recorded: Claude Sonnet 4.5 accepted a history opening with the assistant; pydantic-ai documents Qwen), so give --model for those; Claude from the fifth generation (Sonnet 5) takes no final assistant prefill.",
    example: r#"{
  "contents": [
    {
      "role": "user",
      "parts": [
        {
          "text": "What is the capital of Peru?"
        }
      ]
    },
    {
      "role": "assistant",
      "parts": [
        {
          "text": "Lima."
        }
      ]
    },
    {
      "role": "user",
      "parts": [
        {
          "text": "And of Chile?"
        }
      ]
    }
  ]
}"#,
    fix: None,
};

pub(crate) const FUNCTION_CALL_POSITION: RuleSpec = RuleSpec {
    id: "function-call-position",
    summary: "a Gemini model turn with function calls does not come right after a user turn or a function-response turn",
    dialects: &[Dialect::Gemini],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "gemini",
            text: "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
            source: "provider-errors.jsonl gemini-03",
        },
    ],
    repair: Repair::Never("No fix. Merging a call turn into the model turn before it, or dropping a call group that opens `contents`, looked sound on one body, but across repair passes both act on turns an earlier fix made adjacent (an empty user turn dropped between two answers), joining or dropping what the conversation kept apart. The finding is reported and the body left alone."),
    doc: "Gemini requires a function-call turn to follow a user turn or a function-response turn.\nThe check flags a model turn with a client function call that is the first turn of contents or follows another model turn (a client that split one response into a text turn and a call turn, or a history that starts with a model call after the system prompt moved to systemInstruction).\nMust not flag: a call turn after a function-response turn, a call turn that itself starts with text and a thought part.\nNo fix is attempted.",
    example: r#"{
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
          "text": "Let me check the weather for you."
        }
      ]
    },
    {
      "role": "model",
      "parts": [
        {
          "functionCall": {
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
    fix: None,
};

/// Roles appear in an order the API accepts.
pub(crate) fn roles_come_in_an_accepted_order(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let history = ctx.history();
    let mut prev: Option<usize> = None;
    for (k, &t) in history.iter().enumerate() {
        let turn = &chain.turns[t];
        let path = turn.ptr;
        let ix = ctx.turn_ix(t);
        match ctx.dialect {
            Dialect::Anthropic => {
                if turn.role == Role::System {
                    out.push(
                        ctx.at_turn(Rule::RoleOrder, t, format!("{path} has role \"system\"; the Messages API takes instructions in the top-level `system`, not as a message"))
                            .provider(Some("messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.".into()))
                    );
                } else if matches!(turn.role, Role::Other(_)) {
                    out.push(ctx.at_turn(
                        Rule::RoleOrder,
                        t,
                        format!(
                            "{path} has role \"{}\"; messages are \"user\" or \"assistant\"",
                            turn.wire
                        ),
                    ));
                }
                let strict = ctx.profile.strict_alternation;
                let sev = if strict {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                if k == 0 && turn.role == Role::Assistant {
                    out.push(
                        ctx.at_turn(Rule::RoleOrder, t,
                            format!("the first message ({path}) is from the assistant; {} requires the first message to be a user message", if strict { ctx.profile.name } else { "Bedrock and older deployments" }),
                        )
                        .severity(sev)
                        .provider(Some("messages: first message must use the \"user\" role".into()))
                    );
                }
                if let Some(p) = prev {
                    let pr = chain.turns[p].role;
                    if pr == turn.role && matches!(pr, Role::User | Role::Assistant) {
                        let r = turn.wire;
                        out.push(
                            ctx.at_turn(Rule::RoleOrder, t,
                                format!(
                                    "{path} is a second \"{r}\" message in a row; {}",
                                    if strict { "roles must alternate on this provider" } else { "the first-party API merges them, but Bedrock and strict gateways reject it" }
                                ),
                            )
                            .severity(sev)
                            .provider(Some(format!("messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"{r}\" roles in a row")))
                        );
                    }
                }
            }
            Dialect::Gemini => {
                if matches!(turn.role, Role::System | Role::Developer | Role::Other(_)) {
                    out.push(
                        ctx.at_turn(
                            Rule::RoleOrder,
                            t,
                            format!(
                                "{path} has role \"{}\"; contents are \"user\" or \"model\"",
                                turn.wire
                            ),
                        )
                        .provider(Some("Please use a valid role: user, model.".to_string())),
                    );
                }
                if k + 1 == history.len() && turn.role == Role::Assistant && history.len() > 1 {
                    out.push(
                        ctx.at_turn(Rule::RoleOrder, t,
                            format!("the request ends with a model turn ({path}); newer Gemini models reject that"),
                        )
                        .severity(Severity::Warning)
                        .provider(Some("Requests ending with a model turn are not supported.".into()))
                    );
                }
            }
            Dialect::OpenAiChat => {
                if matches!(turn.role, Role::Other(_)) {
                    out.push(ctx.at_turn(
                        Rule::RoleOrder,
                        t,
                        format!(
                            "{path} has role \"{}\", which the chat API does not know",
                            turn.wire
                        ),
                    ));
                }
                if ctx.profile.rejects_developer_role && turn.wire == "developer" {
                    out.push(
                        ctx.at_turn(Rule::RoleOrder, t, format!("{path} has role \"developer\", which {} does not accept; use \"system\"", ctx.profile.name))
                            .provider(Some(format!("Failed to deserialize the JSON body into the target type: messages[{ix}].role: unknown variant `developer`, expected one of `system`, `user`, `assistant`, `tool`")))
                    );
                }
                if ctx.profile.mistral_role_order {
                    if let Some(p) = prev {
                        let pr = chain.turns[p].role;
                        if pr == Role::Tool && turn.role == Role::User {
                            out.push(
                                ctx.at_turn(Rule::RoleOrder, t, format!("{path} is a user message right after a tool message; {} needs an assistant message in between", ctx.profile.name))
                                    .provider(Some("Unexpected role 'user' after role 'tool'".into()))
                            );
                        }
                    }
                    if k + 1 == history.len()
                        && turn.role == Role::Assistant
                        && !chain.facts.assistant_prefix
                    {
                        out.push(
                            ctx.at_turn(Rule::RoleOrder, t, format!("the last message ({path}) is from the assistant; {} serves only after a user or tool message (or an assistant message with prefix: true)", ctx.profile.name))
                                .provider(Some("Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant".into()))
                        );
                    }
                }
            }
            Dialect::BedrockConverse => converse_order(ctx, t, k, prev, history.len(), out),
            Dialect::OpenAiResponses => {}
        }
        prev = Some(t);
    }
}

/// Bedrock Converse: `user` and `assistant` only, strictly alternating (Converse merges
/// nothing), starting with a user message where the model requires it, and ending with
/// one where the model takes no prefill.
fn converse_order(
    ctx: &Ctx,
    t: usize,
    k: usize,
    prev: Option<usize>,
    len: usize,
    out: &mut Vec<Violation>,
) {
    let turn = &ctx.chain.turns[t];
    let path = turn.ptr;
    let model = ctx.chain.facts.model.unwrap_or("");
    if matches!(turn.role, Role::Other(_)) {
        out.push(ctx.at_turn(
            Rule::RoleOrder,
            t,
            format!(
                "{path} has role \"{}\"; Converse messages are \"user\" or \"assistant\" (instructions go in the top-level `system`)",
                turn.wire
            ),
        ));
    }
    if k == 0 && turn.role == Role::Assistant && !accepts_leading_assistant(model) {
        out.push(
            ctx.at_turn(
                Rule::RoleOrder,
                t,
                format!("the first message ({path}) is from the assistant; Converse requires a user message first{}", if model.is_empty() { " (Claude and Qwen models accept it: pass --model to say which model serves the request)" } else { "" }),
            )
            .provider(Some("A conversation must start with a user message. Try again with a conversation that starts with a user message.".into())),
        );
    }
    if let Some(p) = prev {
        let pr = ctx.chain.turns[p].role;
        if pr == turn.role && matches!(pr, Role::User | Role::Assistant) {
            out.push(
                ctx.at_turn(
                    Rule::RoleOrder,
                    t,
                    format!("{path} is a second \"{}\" message in a row; Converse does not merge messages, so roles must alternate", turn.wire),
                )
                .provider(Some("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.".into())),
            );
        }
    }
    if k + 1 == len && k > 0 && turn.role == Role::Assistant && refuses_prefill(model) {
        out.push(
            ctx.at_turn(
                Rule::RoleOrder,
                t,
                format!("the request ends with an assistant message ({path}); {model} takes no prefill, so the last message must be the user's"),
            )
            .provider(Some("This model does not support assistant message prefill. The conversation must end with a user message.".into())),
        );
    }
}

/// Models recorded or documented to accept a Converse history that opens with the
/// assistant: Claude (recorded: Sonnet 4.5) and Qwen (pydantic-ai's Bedrock model notes).
fn accepts_leading_assistant(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    m.contains("anthropic.claude") || m.contains("qwen")
}

/// Claude models from the fifth generation on take no assistant prefill (reported for
/// Sonnet 5 on Converse, hermes-agent#105780).
fn refuses_prefill(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    let Some(rest) = m.split("anthropic.claude-").nth(1) else {
        return false;
    };
    rest.split('-')
        .find_map(|s| s.parse::<u32>().ok())
        .is_some_and(|generation| (5..100).contains(&generation))
}

/// Gemini: a model turn with function calls comes right after a user turn or a
/// function-response turn.
pub(crate) fn function_calls_follow_user_or_response(ctx: &Ctx, out: &mut Vec<Violation>) {
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
                    ctx.at_turn(Rule::FunctionCallPosition, t,
                        format!("the function-call turn {path} must come right after a user turn or a function-response turn, but {why}"),
                    )
                    .provider(Some("Please ensure that function call turn comes immediately after a user turn or after a function response turn.".into()))
                );
            }
        }
        prev = Some(t);
    }
}
