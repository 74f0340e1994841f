//! Roles: turns come in an order the API accepts (alternation, the first and last role,
//! roles a provider does not know), and a Gemini function-call turn follows a user turn
//! or a function-response turn.
//!
//! Two fixes, both only once nothing else in the body is wrong (so they never act on
//! turns another fix is still moving): messages of one role in a row (Anthropic under a
//! strict profile, Converse) become one message, as Anthropic's own API combines them, an
//! exact copy of the message before it dropped instead; and a Gemini history that opens
//! with a call group followed by a real user turn loses that group. Every other order is
//! reported and left alone: which turn to move cannot be told from the history.

use serde_json::{json, Value};

use crate::chain::{CallKind, NodeKind, Role};
use crate::dialect::Dialect;
use crate::profile::ProfileId;
use crate::repair::Fixer;
use crate::violation::{Defect, Rule, Severity, Violation};

use super::{Ctx, ProviderText, Repair, RuleSpec};

pub(crate) const ROLE_ORDER: RuleSpec = RuleSpec {
    id: "role-order",
    summary: "roles in an order or of a kind the API rejects (system message in Anthropic messages, non user/model role in Gemini, a profile's ordering rules)",
    dialects: &[Dialect::OpenAiChat, Dialect::Anthropic, Dialect::Gemini, Dialect::BedrockConverse],
    profiles: &["bedrock", "mistral", "deepseek"],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "mistral",
            text: "Expected last role to be one of: [tool, user] but got assistant",
            source: "provider-errors.jsonl openai_chat-43 (Mistral models on Azure AI); the code quotes openai_chat-19, Mistral's own wording",
        },
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
            provider: "deepseek",
            text: "deepseek-reasoner does not support successive user or assistant messages (messages[1] and messages[2] in your input). You should interleave the user/assistant messages in the message sequence.",
            source: "https://github.com/deepseek-ai/DeepSeek-R1/issues/21 (also BerriAI/litellm#7972, Aider-AI/aider#2974, CherryHQ/cherry-studio#5051); no row in provider-errors.jsonl",
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
        ProviderText {
            provider: "vllm",
            text: "After the optional system message, conversation roles must alternate user/assistant/user/assistant/...",
            source: "provider-errors.jsonl openai_chat-11",
        },
        ProviderText {
            provider: "perplexity",
            text: "After the (optional) system message(s), user and assistant roles should be alternating.",
            source: "provider-errors.jsonl openai_chat-25",
        },
        ProviderText {
            provider: "github-copilot",
            text: "invalid_message_role: The last message in a Gemini request must not be from the assistant",
            source: "provider-errors.jsonl openai_chat-37",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"assistant\" roles in a row",
            source: "provider-errors.jsonl anthropic-20",
        },
        ProviderText {
            provider: "gemini",
            text: "Please ensure that multiturn requests ends with a user role or a function response.",
            source: "provider-errors.jsonl gemini-13",
        },
    ],
    repair: Repair::Sometimes("Messages of one role in a row (Anthropic under a strict profile such as bedrock, and Converse, which merge nothing) become one message with their blocks in order, which is what Anthropic's own API does with them; a message that is an exact copy of the one before it (sent twice) is dropped instead, so one copy stays. This runs only once nothing else in the body is wrong, so it never joins turns another fix is still moving. A Gemini content under another API's name for its role gets Gemini's name: `assistant` becomes `model`, `tool` and the legacy `function` (a turn of function responses) become `user`. Every other order (a first assistant message, a system message in the history, a prefill a model refuses, Mistral's orders) is reported and left alone."),
    doc: "Anthropic takes instructions in the top-level `system`, so a role:\"system\" message is an error; two user or two assistant messages in a row, or a first assistant message, are warnings on the first-party API (which merges them) and errors under the bedrock profile, which requires strict alternation starting with user.\nGemini contents accept only the roles user and model (error): chat's `assistant`, and `tool` or `function` for the turn of function responses (\"Role 'function' is not supported. Please use a valid role: …\", dart_agent_core#34 on gemini-3.6-flash; sashiko#500, genkit#5782, inspect_ai#2377), are named so by converters and repaired to `model` and `user`; a request ending with a model turn is a warning (newer models reject it).\nOpenAI chat: an unknown role is an error; deepseek rejects `developer`, and for the model `deepseek-reasoner` two user or two assistant messages in a row (\"deepseek-reasoner does not support successive user or assistant messages (messages[1] and messages[2] in your input). …\", deepseek-ai/DeepSeek-R1#21, litellm#7972, cherry-studio#5051: an answer the user stopped, dropped from the history; reported, not joined: how to join two texts is the application's choice; system and tool messages in a row are accepted, recorded); mistral rejects a user message right after a tool message and a last message from the assistant unless it has prefix: true.\nMust not flag: an OpenAI `developer` message (openai profile), mistral tool→assistant→user, an Anthropic final assistant prefill, a Gemini single turn without a role, a Bedrock alternating tool loop.\nThe code's DeepSeek text omits the row's \"`latest_reminder` at line 1 column …\" tail; Gemini's \"valid role\" text has no row in the evidence file. Responses has no role-order checks.\nBedrock Converse: roles are user and assistant, strictly alternating (Converse merges nothing); the first message is the user's except on Claude and Qwen (recorded: Claude Sonnet 4.5 accepted a history opening with the assistant; pydantic-ai documents Qwen), so give --model for those; Claude from the fifth generation (Sonnet 5) takes no final assistant prefill.\nFix: messages of one role in a row are joined (an exact copy dropped), as Anthropic's first-party API does itself (its docs: consecutive user or assistant turns are combined into one), once nothing else in the body is wrong; this keeps every block and never joins turns another fix is still moving.",
    example: r#"{
  "system": [{"text": "You are a weather assistant."}],
  "messages": [
    {"role": "user", "content": [{"text": "Weather in Paris?"}]},
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_weather", "input": {"city": "Paris"}}}]},
    {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "content": [{"text": "18C"}]}}]},
    {"role": "user", "content": [{"text": "And Rome?"}]}
  ],
  "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]},
  "inferenceConfig": {"maxTokens": 512}
}"#,
    fix: Some(put_the_roles_in_order),
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
    repair: Repair::Sometimes("A history that opens with a call turn, its function responses and then a real user turn (a trimmer cut the question that led to the call) loses that leading call group, reported: it answers a question that is no longer there, and the history then opens at the user's turn. Only then, and only when nothing else in the body is wrong. A leading group followed by another call turn is reported and left alone: dropping it would eat the loop step by step (an ungated version did, seeds kept). A call turn after a model turn is reported and left alone too: joining it to that turn, even only once nothing else is wrong, walked back through a run of model turns one pass at a time (20,000 damaged histories found it; the seed is kept)."),
    doc: "Gemini requires a function-call turn to follow a user turn or a function-response turn.\nThe check flags a model turn with a client function call that is the first turn of contents or follows another model turn (a client that split one response into a text turn and a call turn, or a history that starts with a model call after the system prompt moved to systemInstruction).\nMust not flag: a call turn after a function-response turn, a call turn that itself starts with text and a thought part.\nNo fix is attempted.",
    example: r#"{
  "contents": [
    {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"result": "18C"}}}]},
    {"role": "user", "parts": [{"text": "And what should I wear in Rome?"}]}
  ],
  "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]}]
}"#,
    fix: Some(drop_the_leading_group),
};

/// Roles appear in an order the API accepts.
pub(crate) fn roles_come_in_an_accepted_order(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let history = ctx.history();
    let reasoner = deepseek_reasoner(ctx);
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
                if let Some(mut v) = same_role_in_a_row(ctx, t, prev) {
                    let r = turn.wire;
                    v.message.push_str(if strict {
                        "roles must alternate on this provider"
                    } else {
                        "the first-party API merges them, but Bedrock and strict gateways reject it"
                    });
                    out.push(
                        v.severity(sev)
                            .provider(Some(format!("messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"{r}\" roles in a row"))),
                    );
                }
            }
            Dialect::Gemini => {
                // Another API's name for a Gemini role: chat's `assistant` for the model,
                // `tool` or the legacy `function` for the turn that answers calls.
                let gemini_role = match turn.wire {
                    "assistant" => Some("model"),
                    "function" | "tool" => Some("user"),
                    _ => None,
                };
                if let Some(role) = gemini_role {
                    out.push(
                        ctx.at_turn(
                            Rule::RoleOrder,
                            t,
                            format!(
                                "{path} has role \"{}\"; contents are \"user\" or \"model\" (this turn is Gemini's \"{role}\")",
                                turn.wire
                            ),
                        )
                        .provider(Some("Please use a valid role: user, model.".to_string()))
                        .with_defect(Defect::ForeignRole),
                    );
                } else if matches!(turn.role, Role::System | Role::Developer | Role::Other(_)) {
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
                if let Some(p) = prev.filter(|_| reasoner) {
                    successive_for_deepseek_reasoner(ctx, p, t, out);
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

/// `deepseek-reasoner`: turn `t` of the same role (user or assistant) as the turn `p`
/// before it.
fn successive_for_deepseek_reasoner(ctx: &Ctx, p: usize, t: usize, out: &mut Vec<Violation>) {
    let turn = &ctx.chain.turns[t];
    let pr = ctx.chain.turns[p].role;
    if pr == turn.role && matches!(pr, Role::User | Role::Assistant) {
        let (a, ix, path) = (ctx.turn_ix(p), ctx.turn_ix(t), turn.ptr);
        out.push(
            ctx.at_turn(Rule::RoleOrder, t, format!("{path} is a second \"{}\" message in a row; deepseek-reasoner takes user and assistant messages only interleaved", turn.wire))
                .provider(Some(format!("deepseek-reasoner does not support successive user or assistant messages (messages[{a}] and messages[{ix}] in your input). You should interleave the user/assistant messages in the message sequence.")))
        );
    }
}

/// DeepSeek's `deepseek-reasoner` refuses two user or two assistant messages in a row
/// ("deepseek-reasoner does not support successive user or assistant messages
/// (messages[1] and messages[2] in your input). You should interleave the user/assistant
/// messages in the message sequence.": deepseek-ai/DeepSeek-R1#21, BerriAI/litellm#7972,
/// CherryHQ/cherry-studio#5051, a stopped answer dropped from the history; deepseek-chat
/// took the same history). Judged for that model name on DeepSeek's own API only.
fn deepseek_reasoner(ctx: &Ctx) -> bool {
    ctx.profile.id == ProfileId::DeepSeek && ctx.chain.facts.model == Some("deepseek-reasoner")
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
    if let Some(mut v) = same_role_in_a_row(ctx, t, prev) {
        v.message
            .push_str("Converse does not merge messages, so roles must alternate");
        out.push(v.provider(Some("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.".into())));
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

/// A user or assistant message right after one of the same role (Anthropic, Converse):
/// the finding, its message ending in "; " for the dialect to say why, marked for the
/// fix that joins the run.
fn same_role_in_a_row(ctx: &Ctx, t: usize, prev: Option<usize>) -> Option<Violation> {
    let turn = &ctx.chain.turns[t];
    let pr = ctx.chain.turns[prev?].role;
    (pr == turn.role && matches!(pr, Role::User | Role::Assistant)).then(|| {
        ctx.at_turn(
            Rule::RoleOrder,
            t,
            format!(
                "{} is a second \"{}\" message in a row; ",
                turn.ptr, turn.wire
            ),
        )
        .with_defect(Defect::SameRoleInARow)
    })
}

/// Models recorded or documented to accept a Converse history that opens with the
/// assistant: Claude (recorded: Sonnet 4.5) and Qwen (pydantic-ai's Bedrock model notes).
fn accepts_leading_assistant(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    claude_name(&m).is_some() || m.contains("qwen")
}

/// What follows `claude-` in a Claude model id, in Bedrock's form
/// (`us.anthropic.claude-sonnet-4-5-…`) or Anthropic's (`claude-sonnet-4-5-…`).
fn claude_name(m: &str) -> Option<&str> {
    m.split("anthropic.claude-")
        .nth(1)
        .or_else(|| m.rsplit('/').next().and_then(|m| m.strip_prefix("claude-")))
}

/// Claude models from the fifth generation on take no assistant prefill (reported for
/// Sonnet 5 on Converse, hermes-agent#105780).
fn refuses_prefill(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    let Some(rest) = claude_name(&m) else {
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

// ---------------------------------------------------------------------------------------
// The fix.

/// `role-order`: a Gemini turn under another API's name for its role gets the Gemini
/// name; messages of one role in a row are joined ([`join_the_run`]).
fn put_the_roles_in_order(fx: &mut Fixer, v: &Violation) {
    match v.defect {
        Some(Defect::ForeignRole) => give_the_turn_its_gemini_role(fx, v),
        Some(Defect::SameRoleInARow) => join_the_run(fx, v),
        _ => {}
    }
}

/// A Gemini content whose role is another API's name for a Gemini role (`assistant` for
/// `model`; `tool` or `function`, whose turn answers calls, for `user`) gets its Gemini
/// name: which role it is is not in doubt, and nothing else of the turn changes.
fn give_the_turn_its_gemini_role(fx: &mut Fixer, v: &Violation) {
    let Some(t) = v.loc.turn else { return };
    let turn = &fx.chain().turns[t];
    let (ptr, wire) = (turn.ptr, turn.wire);
    let role = match wire {
        "assistant" => "model",
        "function" | "tool" => "user",
        _ => return,
    };
    if ptr.item_index().is_some() && fx.set_field(ptr, "role", Some(json!(role))) {
        let detail = format!("wrote the role \"{wire}\" as Gemini's \"{role}\"");
        fx.note(v.rule, v.path.clone(), "set", detail);
    }
}

/// `role-order`, messages of one role in a row: the run becomes its first message, with
/// the blocks of the others after its own; exact copies of the message before them are
/// dropped rather than joined. Only when role order is all that is wrong with the body,
/// so no other fix is moving turns in the same pass.
fn join_the_run(fx: &mut Fixer, v: &Violation) {
    if !fx.only_wrong_by(Rule::RoleOrder) {
        return;
    }
    let Some(t) = v.loc.turn else { return };
    let chain = fx.chain();
    let history = fx.history();
    let Some(k) = history.iter().position(|&u| u == t) else {
        return;
    };
    let role = chain.turns[t].role;
    let mut start = k;
    while start > 0 && chain.turns[history[start - 1]].role == role {
        start -= 1;
    }
    let mut end = k;
    while end + 1 < history.len() && chain.turns[history[end + 1]].role == role {
        end += 1;
    }
    let items: Vec<usize> = history[start..=end]
        .iter()
        .filter_map(|&u| fx.item_of_turn(u))
        .collect();
    let Some(&first) = items.first() else { return };
    if fx.plan.replace_items.contains_key(&first) || items.len() < 2 {
        return; // the run was joined by its first finding this pass
    }
    let Some(all) = fx.items else { return };
    let values: Vec<&Value> = items.iter().filter_map(|&i| all.get(i)).collect();
    if values.len() != items.len() {
        return;
    }
    let mut joined = values[0].clone();
    let mut blocks = blocks_of(values[0]);
    // The items taken in go with the joined message, in one edit ([`Plan::replace_item`]).
    let notes_from = fx.plan.edits.len();
    let mut absorbs = Vec::with_capacity(items.len() - 1);
    for (pos, value) in values.iter().enumerate().skip(1) {
        let item = items[pos];
        let path = chain.turns[history[start + pos]].ptr.render();
        if *value == values[pos - 1] {
            absorbs.push((item, false));
            let detail =
                "dropped the message: it is an exact copy of the one before it".to_string();
            fx.note(v.rule, path, "drop", detail);
            continue;
        }
        blocks.extend(blocks_of(value));
        absorbs.push((item, true));
        let detail = format!(
            "joined the message to the {} message before it, its blocks after that one's, as Anthropic's API combines them",
            chain.turns[t].wire
        );
        fx.note(v.rule, path, "merge", detail);
    }
    if let Some(o) = joined.as_object_mut() {
        o.insert("content".into(), Value::Array(blocks));
    }
    fx.plan.replace_item(first, joined, absorbs, notes_from);
}

/// A message's content as a list of blocks (Anthropic's string content is one text
/// block).
fn blocks_of(message: &Value) -> Vec<Value> {
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
        _ => Vec::new(),
    }
}

/// `function-call-position`, at the first turn of `contents` only: the call turn and the
/// function responses after it go when a real user turn follows them, so the history
/// opens at that turn; only when nothing else in the body is wrong.
fn drop_the_leading_group(fx: &mut Fixer, v: &Violation) {
    if !fx.only_wrong_by(Rule::FunctionCallPosition) {
        return;
    }
    let Some(t) = v.loc.turn else { return };
    let chain = fx.chain();
    let history = fx.history();
    if history.first() != Some(&t) {
        return;
    }
    let only_responses = |u: usize| {
        let nodes = chain.turn_nodes(u);
        !nodes.is_empty()
            && nodes
                .iter()
                .all(|n| matches!(n.kind, NodeKind::Result { .. }))
    };
    let mut end = 1;
    while end < history.len() && only_responses(history[end]) {
        end += 1;
    }
    let next_is_the_user = history
        .get(end)
        .is_some_and(|&u| chain.turns[u].role == Role::User && !only_responses(u));
    if end == 1 || !next_is_the_user {
        return;
    }
    for &u in &history[..end] {
        let Some(i) = fx.item_of_turn(u) else {
            continue;
        };
        if fx.plan.drop_items.insert(i) {
            let detail = "dropped the leading call group: the history opened mid-loop (the question that led to the call was cut), and a call turn may not open it".to_string();
            fx.note(v.rule, chain.turns[u].ptr.render(), "drop", detail);
        }
    }
}
