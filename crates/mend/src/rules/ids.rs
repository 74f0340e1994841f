//! Call ids: every call carries an id its results can name, of the form the provider
//! accepts (OpenAI's length limits, Mistral's nine alphanumerics, Anthropic's pattern).
//!
//! The fix renames to a conforming id derived from the old one (the same old id always
//! maps to the same new one, so calls and results stay paired), and gives an id back to
//! a call or result that lost it only where the history proves which it was.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::chain::{CallKind, NodeKind, Role};
use crate::dialect::{self, Dialect};
use crate::profile::CallIdForm;
use crate::repair::Fixer;
use crate::violation::{Defect, Rule, Severity, Violation};
use crate::Analysis;

use super::{Ctx, ProviderText, Repair, RuleSpec};

pub(crate) const INVALID_CALL_ID: RuleSpec = RuleSpec {
    id: "invalid-call-id",
    summary: "a call id too long, of the wrong form for the provider, or missing (or a Gemini functionResponse without a name, or a call name the provider refuses)",
    dialects: super::ALL_DIALECTS,
    profiles: &["openai", "azure", "mistral"],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "openai",
            text: "Invalid 'messages[68].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 46 instead.",
            source: "provider-errors.jsonl openai_chat-07",
        },
        ProviderText {
            provider: "mistral",
            text: "Tool call id was … but must be a-z, A-Z, 0-9, with a length of 9.",
            source: "provider-errors.jsonl openai_chat-03",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid 'input[95].call_id': string too long. Expected a string with maximum length 64, but got a string with length 116 instead.",
            source: "provider-errors.jsonl openai_responses-13",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
            source: "provider-errors.jsonl anthropic-04",
        },
        ProviderText {
            provider: "openai",
            text: "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
            source: "provider-errors.jsonl openai_chat-28",
        },
        ProviderText {
            provider: "anthropic",
            text: "***.***.content.2.server_tool_use.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'",
            source: "provider-errors.jsonl anthropic-22",
        },
        ProviderText {
            provider: "gemini",
            text: "* GenerateContentRequest.contents[3].parts[0].function_response.name: Name cannot be empty.",
            source: "provider-errors.jsonl gemini-12",
        },
        ProviderText {
            provider: "groq",
            text: "'messages.3' : for 'role:tool' the following must be satisfied[('messages.3.tool_call_id' : property 'tool_call_id' is missing)]",
            source: "provider-errors.jsonl openai_chat-29",
        },
        ProviderText {
            provider: "mistral",
            text: "Tool call id has to be defined.",
            source: "provider-errors.jsonl openai_chat-30",
        },
        ProviderText {
            provider: "lmstudio",
            text: "[Server Error] Invalid 'messages' in payload. Please check the structure of your 'messages' and try again",
            source: "provider-errors.jsonl openai_chat-44",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid 'input[4].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead.",
            source: "provider-errors.jsonl openai_responses-11",
        },
        ProviderText {
            provider: "openai-compatible relays",
            text: "Missing required parameter: input[3].call_id",
            source: "provider-errors.jsonl openai_responses-12",
        },
        ProviderText {
            provider: "bedrock",
            text: "Value at 'messages.73.member.content.2.member.toolUse.name' failed to satisfy constraint: Member must have length less than or equal to 64",
            source: "provider-errors.jsonl bedrock_converse-08",
        },
        ProviderText {
            provider: "bedrock",
            text: "Value at 'messages.1.member.content.0.member.toolUse.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
            source: "openclaw/openclaw#23373 (a replayed toolUse named with a dot); vercel/ai#17769 (`$READFILE`), NousResearch/hermes-agent#90016; no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.1.content.1.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
            source: "drorm/vmpilot docs/source/tips.md (also \"tool_use.name: String should have at most 64 characters\"); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid 'messages[9].tool_calls[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
            source: "mcp-use/mcp-use#90 (a replayed tool call named with a dot); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid 'input[2].id': string too long. Expected a string with maximum length 64, but got a string with length 416 instead.",
            source: "https://github.com/can1357/oh-my-pi/issues/284 (also ranxianglei/billion-context#244, openai/codex#39133, github/app#499); no row in provider-errors.jsonl",
        },
    ],
    repair: Repair::Sometimes("Renames a too-long or wrongly formed id to a conforming one on the call and all its results alike; gives an id-less result (or call) back the id of the one unanswered call (or orphan result) beside it; otherwise drops an id-less call and treats an id-less result as an orphan; an id of another type than a string (a number) is not no id: it is `malformed`'s finding alone (this rule does not also call the call id-less), and left alone. A server_tool_use id without the srvtoolu_ prefix and a Gemini functionResponse without a name are reported and left alone. A call name outside the provider's form is written in it (each other character as `_`, cut at 64 characters), as the clients that met the error do (vercel/ai#17769, openclaw#23373, hermes-agent#90016); results pair by id, so they stay with their call. An empty name is reported and left alone. A Responses item `id` over 64 characters is removed from a message, client call or output (the item is sent as plain input; results pair by call_id), and its reasoning item dropped (it cannot be sent without its own id); any other item's is reported."),
    doc: "Providers constrain call ids: OpenAI chat at most 40 characters and Responses call_id at most 64 (openai and azure profiles; the Responses default profile is openai, the chat default is generic and does not check length), Mistral exactly 9 characters of a-z, A-Z, 0-9, Anthropic `^[a-zA-Z0-9_-]+$` for tool ids and `^srvtoolu_` for server tool ids.\nEvery dialect but Gemini also needs an id on each call and result: a chat tool message without `tool_call_id`, a Responses output with an empty or missing `call_id`; Gemini pairs by name, so a functionResponse without a name is flagged here.\nMust not flag: an id of exactly 40 (chat) or 64 (Responses) characters, Mistral-form ids under mistral, Bedrock/Vertex-style toolu_vrtx ids, Gemini calls and responses without ids.\nAlso quoted by the code: openai_chat-30 (Mistral, missing id), openai_responses-11 (empty call_id) and openai_responses-12 (missing call_id).\nCall names are checked here too, in the dialects that check a replayed call's name: Anthropic tool_use names `^[a-zA-Z0-9_-]{1,64}$` (drorm/vmpilot's tips quote \"messages.1.content.1.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'\" and \"… should have at most 64 characters\"), Converse toolUse names `[a-zA-Z0-9_-]+` of 1 to 64 characters (openclaw#23373, vercel/ai#17769, hermes-agent#90016, bedrock_converse-08), OpenAI chat tool call names `^[a-zA-Z0-9_-]+$` under the openai and azure profiles (mcp-use#90); a model that calls a tool by a name it made up (`browser.tabs.open`, `$READFILE`), or an MCP name kept whole, leaves it in every later request. Must not flag: those names under the generic chat profile (a self-hosted server's rule is its own), Gemini's names (which take dots and colons), server tool names.\nResponses (openai and azure profiles) also bounds an item's own `id` at 64 characters (\"Invalid 'input[2].id': string too long. Expected a string with maximum length 64, but got a string with length 416 instead.\": a reasoning item's encrypted id from GitHub Copilot's deployment, oh-my-pi#284; message ids a proxy minted, billion-context#244; codex#39133). Must not flag: ids of exactly 64 characters; a server call's id (judged as its call id).\nFix: rename to a conforming id (keeping the call/result pairing), restore a lost id when one neighbour proves it, otherwise drop what can never be answered; write a call's name in the provider's characters.",
    example: r#"{
  "model": "gpt-5",
  "input": [
    {
      "role": "user",
      "content": "List the files in the repo."
    },
    {
      "type": "function_call",
      "call_id": "toolu_vrtx_01KKMxh6V7Kx6g5tZbQBfQ9b_shell_20250101_attempt_0001_ab",
      "name": "shell",
      "arguments": "{\"cmd\":\"ls\"}"
    },
    {
      "type": "function_call_output",
      "call_id": "toolu_vrtx_01KKMxh6V7Kx6g5tZbQBfQ9b_shell_20250101_attempt_0001_ab",
      "output": "README.md\nsrc"
    }
  ]
}"#,
    fix: Some(give_a_valid_id),
};

// ---------------------------------------------------------------------------------------
// The checks.

/// Call ids have the form the target provider accepts.
pub(crate) fn call_ids_have_the_providers_form(ctx: &Ctx, out: &mut Vec<Violation>) {
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
        let wire = ctx.chain.wire_text(wire);
        if id.is_empty() {
            continue;
        }
        let turn_ix = ctx.turn_ix(node.turn());
        let problem: Option<(String, Option<String>)> = match (ctx.dialect, form) {
            (Dialect::Anthropic, _) if is_call && wire == "server_tool_use" && !id.starts_with("srvtoolu_") => Some((
                format!("server tool call id `{id}` does not start with `srvtoolu_`"),
                Some(format!(
                    "messages.{turn_ix}.content.{}.server_tool_use.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'",
                    ctx.node_sub(n).unwrap_or(0)
                )),
            )),
            (Dialect::Anthropic, _) if !is_word(id) => Some((
                format!("tool id `{id}` has characters outside a-z, A-Z, 0-9, `_` and `-`"),
                Some(format!(
                    "messages.{turn_ix}.content.{}.{wire}.{}: String should match pattern '^[a-zA-Z0-9_-]+$'",
                    ctx.node_sub(n).unwrap_or(0),
                    if is_call { "id" } else { "tool_use_id" }
                )),
            )),
            (Dialect::OpenAiChat, CallIdForm::MaxLen(max)) if is_call && longer_than(id, max) => Some((
                format!("call id `{id}` is {} characters long; {} accepts at most {max}", id.chars().count(), ctx.profile.name),
                Some(format!(
                    "Invalid 'messages[{turn_ix}].tool_calls[{}].id': string too long. Expected a string with maximum length {max}, but got a string with length {} instead.",
                    ctx.node_sub(n).unwrap_or(0),
                    id.chars().count()
                )),
            )),
            (Dialect::OpenAiResponses, CallIdForm::MaxLen(max)) if longer_than(id, max) => Some((
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
                ctx.at_node(Rule::InvalidCallId, n, message)
                    .provider(provider),
            );
        }
    }
}

/// Call names in history have the form the provider takes: Anthropic's tool_use and
/// Converse's toolUse `[a-zA-Z0-9_-]` of 1 to 64 characters, OpenAI chat's (openai and
/// azure profiles) `[a-zA-Z0-9_-]`. A name the model made up (`browser.tabs.open`,
/// `$READFILE`) or an MCP name kept whole stays in the history and fails every request
/// after it. A chat call with an empty name is `malformed`'s (OpenAI's own wording).
pub(crate) fn call_names_have_the_providers_form(ctx: &Ctx, out: &mut Vec<Violation>) {
    use crate::profile::ProfileId;
    let max = match ctx.dialect {
        Dialect::Anthropic | Dialect::BedrockConverse => Some(64),
        Dialect::OpenAiChat if matches!(ctx.profile.id, ProfileId::OpenAi | ProfileId::Azure) => {
            None
        }
        _ => return,
    };
    for (n, node, name, wire) in client_calls(ctx) {
        let Some(name) = name else { continue };
        if !matches!(wire, "tool_use" | "toolUse" | "tool_calls") {
            continue;
        }
        let allowed = is_word(name);
        let len = name.chars().count();
        let too_long = max.is_some_and(|m| len > m);
        if allowed && !too_long && (len > 0 || wire == "tool_calls") {
            continue;
        }
        let ix = ctx.turn_ix(node.turn());
        let sub = ctx.node_sub(n).unwrap_or(0);
        let text = match ctx.dialect {
            Dialect::Anthropic if too_long && allowed => format!("messages.{ix}.content.{sub}.tool_use.name: String should have at most 64 characters"),
            Dialect::Anthropic => format!("messages.{ix}.content.{sub}.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"),
            Dialect::BedrockConverse if too_long && allowed => format!("Value at 'messages.{ix}.member.content.{sub}.member.toolUse.name' failed to satisfy constraint: Member must have length less than or equal to 64"),
            Dialect::BedrockConverse if len == 0 => format!("Value at 'messages.{ix}.member.content.{sub}.member.toolUse.name' failed to satisfy constraint: Member must have length greater than or equal to 1"),
            Dialect::BedrockConverse => format!("Value at 'messages.{ix}.member.content.{sub}.member.toolUse.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"),
            _ => format!("Invalid 'messages[{ix}].tool_calls[{sub}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."),
        };
        let what = match (len, too_long) {
            (0, _) => "the call's name is empty".to_string(),
            (_, true) if allowed => {
                format!("the call's name `{name}` is {len} characters long (at most 64)")
            }
            _ => format!(
                "the call's name `{name}` has characters outside a-z, A-Z, 0-9, `_` and `-`"
            ),
        };
        let v = ctx
            .at_node(
                Rule::InvalidCallId,
                n,
                format!(
                    "{what}, which {} refuses in a replayed call",
                    ctx.profile.name
                ),
            )
            .provider(Some(text));
        // An empty name has no form to write it in: reported only.
        out.push(if len > 0 {
            v.with_defect(Defect::CallNameForm)
        } else {
            v
        });
    }
}

/// A call without a name where the dialect's reference marks it required: Anthropic
/// `tool_use.name`, Converse `toolUse.name`, Responses `function_call.name`, Gemini
/// `functionCall.name`. (Chat's reader reports `function.name` itself, an empty
/// Anthropic or Converse name is the form check's, and a Gemini response without a
/// name is [`nameless_response`]'s.) `malformed`, reported only: which tool was called
/// is not known, and while a call is unreadable no fix runs, so no result of it is
/// dropped as an orphan. Gemini pairs a call and its response by name, so a model turn
/// with a nameless call and the turn after it are made `quiet` for pairing: what it would
/// say of them is a misreading.
pub(crate) fn calls_have_names(ctx: &Ctx, quiet: &mut [bool], out: &mut Vec<Violation>) {
    if ctx.dialect == Dialect::OpenAiChat {
        return;
    }
    for (n, node, name, wire) in client_calls(ctx) {
        let nameless = match wire {
            // An empty name is the form check's (`invalid-call-id`).
            "tool_use" | "toolUse" => name.is_none(),
            "function_call" | "functionCall" => name.is_none_or(str::is_empty),
            _ => false,
        };
        if !nameless {
            continue;
        }
        let field = if wire == "functionCall" {
            "functionCall.name"
        } else {
            "name"
        };
        let state = if name.is_some() { "an empty" } else { "no" };
        if ctx.dialect == Dialect::Gemini {
            let t = node.turn();
            for q in quiet.iter_mut().skip(t).take(2) {
                *q = true;
            }
        }
        out.push(ctx.at_node(
            Rule::Malformed,
            n,
            format!(
                "this {wire} call has {state} `{field}` string, which {} requires: which tool it calls is not known, so it is reported and left as it is",
                ctx.profile.name,
            ),
        ));
    }
}

/// The client calls of the chain: node index, node, name and wire type.
fn client_calls<'c, 'a>(
    ctx: &Ctx<'c, 'a>,
) -> impl Iterator<Item = (usize, &'c crate::chain::Node<'a>, Option<&'a str>, &'a str)> + 'c {
    let chain = ctx.chain;
    chain
        .nodes
        .iter()
        .enumerate()
        .filter_map(move |(n, node)| match node.kind {
            NodeKind::Call {
                name,
                kind: CallKind::Client,
                wire,
                ..
            } => Some((n, node, name, chain.wire_text(wire))),
            _ => None,
        })
}

/// A call's name in the characters the provider takes: every other character as `_`,
/// cut at `max` characters. Results pair by id in the dialects that check names, so the
/// call keeps its results.
fn conforming_name(name: &str, max: usize) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect()
}

/// A call with no id (or an empty one), where the dialect requires one.
pub(crate) fn idless_call(
    ctx: &Ctx,
    n: usize,
    call_id: Option<&str>,
    name: Option<&str>,
    wire: &str,
) -> Violation {
    let what = if call_id == Some("") {
        "an empty id"
    } else {
        "no id"
    };
    let ix = ctx.turn_ix(ctx.chain.nodes[n].turn());
    ctx.at_node(
        Rule::InvalidCallId,
        n,
        format!(
            "the {wire} call{} has {what}, so no result can answer it",
            name.map(|s| format!(" to `{s}`")).unwrap_or_default()
        ),
    )
    .provider(responses_missing_call_id(ctx.dialect, call_id, ix))
}

/// A result with no call id, in a dialect that pairs by id.
pub(crate) fn idless_result(ctx: &Ctx, n: usize, call_id: Option<&str>, wire: &str) -> Violation {
    let ix = ctx.turn_ix(ctx.chain.nodes[n].turn());
    let text = match ctx.dialect {
        Dialect::OpenAiChat if ctx.profile.id == crate::profile::ProfileId::Mistral => {
            Some("Tool call id has to be defined.".to_string())
        }
        Dialect::OpenAiChat => Some(
            "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'."
                .into(),
        ),
        _ => responses_missing_call_id(ctx.dialect, call_id, ix),
    };
    ctx.at_node(
        Rule::InvalidCallId,
        n,
        format!("the {wire} result carries no call id, so it answers no call"),
    )
    .provider(text)
}

/// Responses' texts for a missing or empty `call_id`.
fn responses_missing_call_id(d: Dialect, call_id: Option<&str>, ix: u32) -> Option<String> {
    match d {
        Dialect::OpenAiResponses if call_id == Some("") => Some(format!(
            "Invalid 'input[{ix}].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead."
        )),
        Dialect::OpenAiResponses => Some(format!("Missing required parameter: input[{ix}].call_id")),
        _ => None,
    }
}

/// Gemini: a functionResponse without a name (Gemini pairs responses by name).
pub(crate) fn nameless_response(ctx: &Ctx, n: usize) -> Violation {
    let ix = ctx.turn_ix(ctx.chain.nodes[n].turn());
    ctx.at_node(
        Rule::InvalidCallId,
        n,
        "the functionResponse has no name; Gemini pairs responses with calls by name".into(),
    )
    .provider(Some(format!(
        "* GenerateContentRequest.contents[{ix}].parts[{}].function_response.name: Name cannot be empty.",
        ctx.node_sub(n).unwrap_or(0)
    )))
}

// ---------------------------------------------------------------------------------------
// The fixes.

/// `invalid-call-id`: an id of the wrong form is renamed (on the call and its results
/// alike); a call with no id, that no orphan result proves, is dropped (no result can
/// ever answer it); a result with no call id is an orphan. An id of another type than a
/// string never comes here: its reader reports it as `malformed`, and repair then runs no
/// other fix while that item stands.
fn give_a_valid_id(fx: &mut Fixer, v: &Violation) {
    if v.defect == Some(Defect::ItemIdTooLong) {
        return unlink_the_long_item_id(fx, v);
    }
    let Some(n) = v.loc.node else { return };
    let d = fx.dialect();
    if v.defect == Some(Defect::CallNameForm) {
        return write_the_name_in_the_providers_form(fx, v, n);
    }
    let id = match fx.chain().nodes[n].kind {
        NodeKind::Call {
            call_id: Some(id), ..
        }
        | NodeKind::Result {
            call_id: Some(id), ..
        } if !id.is_empty() => id,
        NodeKind::Call { .. } if d != Dialect::Gemini => {
            if fx.claim(n) {
                fx.drop_node(n);
                let detail = format!(
                    "dropped {}, which has no id and so can never be answered",
                    fx.describe_call(n)
                );
                fx.note(v.rule, v.path.clone(), "drop", detail);
            }
            return;
        }
        NodeKind::Result { .. } if d != Dialect::Gemini => {
            if fx.claim(n) {
                fx.orphan(n, v);
            }
            return;
        }
        _ => return,
    };
    if fx.renames.contains_key(id) {
        return; // its call or another of its results came first
    }
    if fx.restored.contains(id) {
        // Given back to its call or result this pass, where the chain does not show it
        // yet: a rename now would miss that one and part the pair. The next pass
        // renames them alike.
        return;
    }
    if let Some(new) = conforming_id(fx.a, id) {
        if new != id {
            // An id cleaned of its characters may be one the body has already (`call.1`
            // beside `call_1`): the rename then takes a number, so no two calls share it.
            let new = match d {
                Dialect::Anthropic => fx.unused_id(&new, usize::MAX),
                _ => new,
            };
            fx.renames.insert(id.to_string(), new);
        }
    }
}

/// Responses (openai and azure profiles, which also bound `call_id`): an item's own `id`
/// over 64 characters. The API refuses it ("Invalid 'input[2].id': string too long.
/// Expected a string with maximum length 64, but got a string with length 416 instead.",
/// can1357/oh-my-pi#284: a reasoning item's id from another deployment;
/// ranxianglei/billion-context#244: message ids a proxy minted; openai/codex#39133).
pub(crate) fn item_ids_fit(ctx: &Ctx, out: &mut Vec<Violation>) {
    let max = crate::dialect::openai_responses::MAX_ITEM_ID;
    for (t, i, turn, id) in ctx.items_over_openai_limits(&ctx.chain.facts.long_item_ids) {
        let len = id.chars().count();
        out.push(
            Violation::error(
                Rule::InvalidCallId,
                turn.ptr.render_with("id"),
                format!(
                    "the {} item's id is {len} characters long; {} accepts at most {max}",
                    turn.wire, ctx.profile.name
                ),
            )
            .provider(Some(format!(
                "Invalid 'input[{i}].id': string too long. Expected a string with maximum length {max}, but got a string with length {len} instead."
            )))
            .at_turn(t)
            .with_defect(Defect::ItemIdTooLong),
        );
    }
}

/// An item id over the API's length ([`item_ids_fit`]): a message's or a client call's
/// or output's id is optional, and goes (the item is sent as plain input); a reasoning
/// item cannot be sent without its id and no other is its own, so it goes (as a
/// reasoning item whose follower is gone does). Any other item's id is required and the
/// provider's: reported only.
fn unlink_the_long_item_id(fx: &mut Fixer, v: &Violation) {
    let Some(t) = v.loc.turn else { return };
    let Some(i) = fx.item_of_turn(t) else { return };
    let wire = fx.chain().turns[t].wire;
    let optional = wire == "message"
        || crate::dialect::openai_responses::CLIENT_CALLS
            .iter()
            .any(|(c, o)| *c == wire || *o == wire);
    if wire == "reasoning" {
        if fx.plan.drop_items.insert(i) {
            let detail = "dropped the reasoning item: its id is longer than the API takes, and it cannot be sent without its own";
            fx.note(v.rule, v.path.clone(), "drop", detail.into());
        }
    } else if optional {
        fx.plan.remove_item_id(i);
        let detail =
            "removed the item id, longer than the API takes, so the item is sent as plain input";
        fx.note(v.rule, v.path.clone(), "set", detail.into());
    }
}

/// A call name outside the provider's form ([`call_names_have_the_providers_form`]) is
/// written in it ([`conforming_name`]), as the clients that hit the error do
/// (vercel/ai#17769, openclaw#23373, hermes-agent#90016): the name is the model's, the
/// call and its results stay as they were.
fn write_the_name_in_the_providers_form(fx: &mut Fixer, v: &Violation, n: usize) {
    // A call whose id is renamed this pass keeps its name until the next one: the
    // rename is an edit of the same block.
    let id_fixed_too =
        fx.a.violations
            .iter()
            .any(|w| w.rule == Rule::InvalidCallId && w.loc.node == Some(n) && w.defect.is_none());
    if id_fixed_too {
        return;
    }
    let at = match fx.dialect() {
        Dialect::BedrockConverse => "/toolUse/name",
        Dialect::Anthropic => "/name",
        _ => "/function/name",
    };
    let Some(call) = fx.value_of(n) else { return };
    let Some(Value::String(name)) = call.pointer(at) else {
        return;
    };
    let max = if fx.dialect() == Dialect::OpenAiChat {
        usize::MAX
    } else {
        64
    };
    let new = conforming_name(name, max);
    if new.is_empty() || &new == name {
        return;
    }
    let mut call = call.clone();
    if let Some(slot) = call.pointer_mut(at) {
        *slot = Value::String(new.clone());
    }
    if fx.claim(n) {
        let detail = format!("wrote the call's name `{name}` as `{new}`, in the characters the provider takes (its results pair by id)");
        fx.replace_node(n, call, v, "set", detail);
    }
}

/// Before the fixes of a pass: give ids back where the history proves them. A result
/// that lost its call id, alone where the results of exactly one unanswered call must
/// sit, gets that call's id; a call that lost its id, alone in its turn, with exactly one
/// orphan result where its results sit, gets that result's id.
pub(crate) fn restore_lost_ids(fx: &mut Fixer) {
    let a = fx.a;
    let chain = fx.chain();
    let shared = |id: &str| fx.calls().with_call_id(id).len() > 1;
    let found = restorable_result_ids(a, &fx.result_of, &fx.call_of, shared);
    for (r, (id, c)) in found {
        fx.claim(r);
        fx.claim(c);
        if fx.set_call_id(chain.nodes[r].ptr, false, id) {
            fx.restored.insert(id.to_string());
            let detail = format!(
                "gave the result back the id `{id}` of the one unanswered call before it ({})",
                chain.nodes[c].ptr.render()
            );
            fx.note(
                Rule::InvalidCallId,
                chain.nodes[r].ptr.render(),
                "set",
                detail,
            );
        }
    }
    let restored = restorable_ids(a, &fx.call_of);
    for (&call, &(result, id)) in &restored {
        fx.claim(call);
        fx.claim(result);
        let ptr = chain.nodes[call].ptr;
        if !fx.set_call_id(ptr, true, id) {
            continue;
        }
        fx.restored.insert(id.to_string());
        let detail = format!(
            "gave the call back its id `{id}`, from the one result that answers it ({})",
            chain.nodes[result].ptr.render()
        );
        fx.note(Rule::InvalidCallId, ptr.render(), "set", detail);
    }
}

/// An id of the form the profile wants, derived from `id` so that the same id always maps
/// to the same new one (calls and their results stay paired).
fn conforming_id(a: &Analysis, id: &str) -> Option<String> {
    let h = fnv(id);
    let form = match a.dialect {
        Dialect::OpenAiChat => a.profile.chat_call_id,
        Dialect::OpenAiResponses => a.profile.responses_call_id,
        _ => CallIdForm::Any,
    };
    match (a.dialect, form) {
        (_, CallIdForm::NineAlnum) => Some(base62(h, 9)),
        (_, CallIdForm::MaxLen(max)) if longer_than(id, max) => {
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
pub(crate) fn rename_ids(fx: &mut Fixer, renames: &BTreeMap<String, String>) {
    for node in &fx.chain().nodes {
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
        if !fx.set_call_id(node.ptr, is_call, new) {
            continue;
        }
        let detail =
            format!("renamed call id `{id}` to `{new}`, on the call and its results alike");
        fx.note(Rule::InvalidCallId, node.ptr.render(), "rename", detail);
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
        let idless: Vec<usize> = (chain.turns[t].first()..chain.turns[t].end())
            .filter(|&n| {
                matches!(chain.nodes[n].kind, NodeKind::Call { kind: CallKind::Client, call_id, wire, .. }
                    if call_id.is_none_or(str::is_empty) && chain.wire_text(wire) != dialect::openai_chat::LEGACY_FUNCTION_CALL)
            })
            .collect();
        if idless.len() != 1 {
            continue;
        }
        let window = result_window(a, t + 1);
        let orphans: Vec<(usize, &str)> = window
            .flat_map(|u| chain.turns[u].first()..chain.turns[u].end())
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

/// Results without a call id, alone where the results of exactly one unanswered call must
/// sit: (result node) -> (that call's id, call node). `shared_call_id` says whether more
/// than one call carries an id (the fixer's calls by id, not a walk of the chain per call).
fn restorable_result_ids<'a>(
    a: &Analysis<'a>,
    result_of: &HashMap<usize, usize>,
    call_of: &HashMap<usize, usize>,
    shared_call_id: impl Fn(&str) -> bool,
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
        let unanswered: Vec<(usize, &str)> = (chain.turns[t].first()..chain.turns[end - 1].end())
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
        // An id two calls carry names neither of them: it proves nothing.
        if unanswered.iter().any(|&(_, id)| shared_call_id(id)) {
            t = end;
            continue;
        }
        let window = result_window(a, end);
        let idless: Vec<usize> = window
            .flat_map(|u| chain.turns[u].first()..chain.turns[u].end())
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

/// Whether `id` has more than `max` characters (no more bytes than `max` answers it
/// without counting).
/// Whether `s` is all `[a-zA-Z0-9_-]`, the pattern Anthropic's ids and several APIs'
/// tool names must match. A table lookup per byte: the id check runs on every call and
/// result of a check, and the three tests per byte were 4% of an Anthropic check.
pub(crate) fn is_word(s: &str) -> bool {
    const WORD: [bool; 256] = {
        let mut t = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            t[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
            b += 1;
        }
        t
    };
    s.bytes().all(|b| WORD[usize::from(b)])
}

fn longer_than(id: &str, max: usize) -> bool {
    id.len() > max && id.chars().count() > max
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_word_is_ascii_letters_digits_underscore_and_hyphen() {
        for b in 0..=255u8 {
            let s = [b];
            let Ok(s) = std::str::from_utf8(&s) else {
                continue;
            };
            let want = b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
            assert_eq!(super::is_word(s), want, "byte {b:#04x}");
        }
        assert!(super::is_word("toolu_01A-b"));
        assert!(!super::is_word("toolu 01"));
        assert!(!super::is_word("callé"));
    }

    #[test]
    fn longer_than_counts_characters_not_bytes() {
        for id in [
            "",
            "a",
            "call_1",
            "é",
            "ééé",
            "a😀b",
            "call_ééééé",
            &"x".repeat(64),
        ] {
            for max in 0..12 {
                assert_eq!(
                    super::longer_than(id, max),
                    id.chars().count() > max,
                    "{id} {max}"
                );
            }
        }
    }
}
