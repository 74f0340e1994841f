//! Pairing: every client call is answered exactly once, every result answers an earlier
//! call, each result sits where the dialect requires it, and a Gemini response turn
//! answers as many calls as the turn before made.
//!
//! One walk ([`pair_calls_with_results`]) finds the pairs that check, repair, trim and
//! `inspect` share; the dialect says only where results must sit and whether results
//! find their calls by name ([`Params`](super::Params)).

use std::collections::hash_map::Entry;

use crate::chain::{CallKind, NodeKind, Role};
use crate::dialect::Dialect;
use crate::profile::ProfileId;
use crate::repair::{Fixer, MissingResult};
use crate::violation::{Rule, Severity, Violation};

use super::{ids, Ctx, IdMap, Placement, ProviderText, Repair, RuleSpec};

pub(crate) const TOOL_RESULT_WITHOUT_CALL: RuleSpec = RuleSpec {
    id: "tool-result-without-call",
    summary: "a tool result answers no earlier call (its call id matches no call before it, or it comes before its call)",
    dialects: super::ALL_DIALECTS,
    profiles: &["mistral"],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "openai",
            text: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
            source: "provider-errors.jsonl openai_chat-06",
        },
        ProviderText {
            provider: "mistral",
            text: "Unexpected role 'tool' after role 'user'",
            source: "provider-errors.jsonl openai_chat-26",
        },
        ProviderText {
            provider: "openai",
            text: "No tool call found for function call output with call_id ….",
            source: "provider-errors.jsonl openai_responses-04",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.12.content.0: unexpected `tool_use_id` found in `tool_result` blocks: …. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
            source: "provider-errors.jsonl anthropic-09",
        },
        ProviderText {
            provider: "gemini",
            text: "Please ensure that function response turn comes immediately after a function call turn.",
            source: "provider-errors.jsonl gemini-09 (filed there under `tool-result-not-adjacent`)",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.7.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: …. Each `advisor_tool_result` block must have a corresponding `server_tool_use` block before it.",
            source: "provider-errors.jsonl anthropic-13",
        },
        ProviderText {
            provider: "bedrock",
            text: "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn.",
            source: "provider-errors.jsonl bedrock_converse-04",
        },
        ProviderText {
            provider: "deepseek",
            text: "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
            source: "provider-errors.jsonl openai_chat-09",
        },
        ProviderText {
            provider: "dashscope",
            text: "<400> InternalError.Algo.InvalidParameter: messages with role \"tool\" must be a response to a preceeding message with \"tool_calls\".",
            source: "provider-errors.jsonl openai_chat-17",
        },
        ProviderText {
            provider: "mistral",
            text: "Unexpected role RoleEnum.tool",
            source: "provider-errors.jsonl openai_chat-27",
        },
        ProviderText {
            provider: "mistral",
            text: "Unexpected tool call id … in tool results",
            source: "https://github.com/pydantic/pydantic-ai/issues/3733 (devstral-2512, type invalid_request_message_order, code 3230); onyx-dot-app/onyx#8522 (Mistral through Ollama's cloud); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.2: `tool_result` block(s) provided when previous message does not contain any `tool_use` blocks",
            source: "provider-errors.jsonl anthropic-29",
        },
    ],
    repair: Repair::Always("By default the orphan result is dropped (policy to-text keeps its content as a user text instead); a result whose call comes later is moved to right after that call, and a Responses output that names the call's fc_ item id gets the call's call_id. A Gemini response turn that answers its call turn part for part (as many responses, the same names) with ids no call has gets the calls' ids, by name in order. Nothing is left alone except results of a turn already reported by function-response-count."),
    doc: "Every provider rejects a tool result (chat `tool` message, Responses `function_call_output`, Anthropic `tool_result` block, Gemini `functionResponse`) that answers no call made earlier in the history; a trimmed or reordered history is the usual cause.\nThe check pairs results with calls by call id (Gemini and legacy chat `function` messages fall back to name and order among id-less calls) and flags a result when no earlier call has its id; if the call appears later the message says the result comes before its call.\nAnthropic server tool results (`web_search_tool_result` and kin) must answer an earlier `server_tool_use` with the same id.\nMust not flag: parallel results in another order than their calls, Gemini responses matched by name without ids, and a Responses output whose call lives at the provider (the body continues stored state with `previous_response_id`).\nUnder the mistral profile the quoted text is Mistral's: after an assistant message with calls, \"Unexpected tool call id … in tool results\" (pydantic-ai#3733, devstral-2512); after any other message, its role-order wording with that message's role (openai_chat-26). Gemini's quoted text is gemini-09, which the evidence file files under tool-result-not-adjacent.\nA server tool result answers its server_tool_use within the model's turn that holds the call: the run of assistant messages that holds it, and (Anthropic) the next assistant message behind user messages of client tool results only, where the API puts the result of a server tool deferred beside a client tool (server-tools docs). Behind a user message that says anything else it answers nothing (the claude-code reports of anthropic-13: an advisor_tool_result at content.0 of a later message; claude-code#89348: a reminder spliced between the call and its result).\nFix: drop the result (or keep it as text with --orphan-result to-text), move it after a later call it answers, or correct a Responses output that used the call's item id.\nGemini: responses whose ids a proxy or framework rewrote (CLIProxyAPI#5199, \"functionResponse.id does not match functionCall.id\") in a turn that answers the call turn before it part for part (as many responses as calls, the same names, every id naming no call) take their calls' ids, matched by name in order as Gemini pairs id-less responses; the outputs are kept.\nBedrock Converse: a toolResult answers a toolUseId of the assistant message before it; a server tool's toolResult (Nova's code interpreter, with its own `type`) sits in the assistant message beside its call.",
    example: r#"{
  "model": "gpt-4o",
  "messages": [
    {
      "role": "system",
      "content": "You are a helpful assistant."
    },
    {
      "role": "user",
      "content": "What's the weather in Paris?"
    },
    {
      "role": "tool",
      "tool_call_id": "call_Wn3kQ8rT2vLpX9sYb4HdJm6e",
      "content": "{\"temp_c\": 18, \"sky\": \"overcast\"}"
    },
    {
      "role": "user",
      "content": "And tomorrow?"
    }
  ]
}"#,
    fix: Some(settle_the_orphan),
};

pub(crate) const TOOL_CALL_WITHOUT_RESULT: RuleSpec = RuleSpec {
    id: "tool-call-without-result",
    summary: "a tool call is never answered: no result carries its id (in DeepSeek Responses, it is answered only after another assistant item)",
    dialects: super::ALL_DIALECTS,
    profiles: &["mistral", "deepseek"],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "openai",
            text: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: …",
            source: "provider-errors.jsonl openai_chat-02",
        },
        ProviderText {
            provider: "mistral",
            text: "Not the same number of function calls and responses",
            source: "provider-errors.jsonl openai_chat-10",
        },
        ProviderText {
            provider: "openai",
            text: "No tool output found for function call ….",
            source: "provider-errors.jsonl openai_responses-05",
        },
        ProviderText {
            provider: "deepseek",
            text: "No tool output found for tool call ….",
            source: "fixture /work/shared/fixtures/openai_responses/pydantic-ai--deepseek-responses-rejects-interleaved-function-calls (pydantic/pydantic-ai tests/models/cassettes/test_deepseek_responses/test_deepseek_responses_rejects_interleaved_function_calls.yaml); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.33: `tool_use` ids were found without `tool_result` blocks immediately after: …. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            source: "provider-errors.jsonl anthropic-01",
        },
        ProviderText {
            provider: "deepseek",
            text: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
            source: "provider-errors.jsonl openai_chat-13",
        },
        ProviderText {
            provider: "bedrock",
            text: "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_H4V7nwUkPKObtlllGGYNx6",
            source: "provider-errors.jsonl bedrock_converse-06",
        },
        ProviderText {
            provider: "anthropic",
            text: "Did not find 1 tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.",
            source: "provider-errors.jsonl anthropic-19",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.33: `web_search` tool use with id `…` was found without a corresponding `web_search_tool_result` block",
            source: "https://github.com/AnswerDotAI/lisette/issues/108 (also anthropics/anthropic-sdk-python#1339, gsd-build/gsd-2#2869, vellum-ai/vellum-assistant#42901); no row in provider-errors.jsonl",
        },
    ],
    repair: Repair::Always("By default an error result saying the call was interrupted is inserted where the dialect wants it (policy drop-call removes the call instead); for DeepSeek Responses the late output is moved up to right after its call. An exact copy (id, name, arguments) of a call that is answered elsewhere is a replay and is dropped, wherever it sits: a result with its id would answer the other copy too. Calls already reported as duplicates or id-less, and Gemini turns reported by function-response-count, are left to those rules. An Anthropic server_tool_use whose model turn is over without its result is dropped (no client can answer it; the text beside it stays)."),
    doc: "Every provider requires each client tool call to be answered by a result carrying its id before the conversation moves on; a crashed tool, a user interrupt or a trimmed history leaves a call unanswered.\nThe check pairs calls and results by id (Gemini: by name and order when ids are absent) and reports each unanswered call, grouping the ids of one turn into one provider text.\nDeepSeek's Responses endpoint (deepseek profile) also rejects a call whose output comes only after another assistant item (message or reasoning); that is reported here too, as DeepSeek words it.\nAnthropic server tools (`server_tool_use`): the API runs them inside the model's turn, and their `*_tool_result` follows in the same message, or, for one deferred beside a client tool, at the head of the next assistant message after the client's tool results (server-tools docs, \"Mixing server tools and client tools\"). One left without its result in a turn that is over (a later user message says more than client tool results, or a later assistant message follows) is refused (\"`web_search` tool use with id … was found without a corresponding `web_search_tool_result` block\": a `pause_turn` or a cut stream saved as a finished answer, lisette#108, gsd-2#2869; text beside the client's results of a deferred search, vellum-assistant#42901). Its fix drops the call: no result can be made for a server tool. The provider text is quoted only for `web_search`, the one name recorded; `mcp_tool_use` is left alone (no recorded refusal).\nMust not flag: Anthropic `server_tool_use` answered by the server in the same message, one still open in the last assistant message (a `pause_turn` sent back as the docs say, a deferred tool behind client tool results only), a call answered by an error result, a legacy chat `function_call` answered by a `function` message, Responses outputs placed after all parallel calls.\nGemini's text for this case (gemini-02) is quoted by the code but the evidence file files it under function-response-count.\nFix: insert an interrupted/error result (or drop the call with --missing-result drop-call), or move the late DeepSeek output up. An unanswered exact copy of a call answered elsewhere (a replayed step whose copy landed before the answered call, even at the head of the history) is dropped instead: no result can be made for it, as its id would answer the other copy too.\nBedrock Converse names the message that should hold the results, not the call's; the synthesized result is a toolResult with status error.",
    example: r#"{
  "model": "gpt-4o",
  "messages": [
    {
      "role": "user",
      "content": "What's the weather in Paris?"
    },
    {
      "role": "assistant",
      "content": null,
      "tool_calls": [
        {
          "id": "call_Wn3kQ8rT2vLpX9sYb4HdJm6e",
          "type": "function",
          "function": {
            "name": "get_weather",
            "arguments": "{\"city\":\"Paris\"}"
          }
        }
      ]
    },
    {
      "role": "user",
      "content": "Never mind, just tell me a joke."
    }
  ]
}"#,
    fix: Some(answer_the_call),
};

pub(crate) const TOOL_RESULT_NOT_ADJACENT: RuleSpec = RuleSpec {
    id: "tool-result-not-adjacent",
    summary: "a call's result exists but not where the dialect requires it (another message in between, or text before the results in an Anthropic user message)",
    dialects: &[Dialect::OpenAiChat, Dialect::Anthropic, Dialect::Gemini, Dialect::BedrockConverse],
    profiles: &["mistral"],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "openai",
            text: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: …",
            source: "provider-errors.jsonl openai_chat-02 (filed there under `tool-call-without-result`)",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.224: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
            source: "provider-errors.jsonl anthropic-14 (filed there under `tool-call-without-result`)",
        },
        ProviderText {
            provider: "gemini",
            text: "Please ensure that function response turn comes immediately after a function call turn.",
            source: "provider-errors.jsonl gemini-09",
        },
        ProviderText {
            provider: "openai_chat",
            text: "invalid params, tool call result does not follow tool call (2013)",
            source: "provider-errors.jsonl openai_chat-41",
        },
        ProviderText {
            provider: "mistral",
            text: "Not the same number of function calls and responses",
            source: "provider-errors.jsonl openai_chat-10 (filed there under `tool-call-without-result`)",
        },
        ProviderText {
            provider: "bedrock",
            text: "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_H4V7nwUkPKObtlllGGYNx6",
            source: "provider-errors.jsonl bedrock_converse-06 (the call's side of a result sent late)",
        },
    ],
    repair: Repair::Always("Moves the result next to its call: into the run of tool messages right after the assistant message (chat), to the start of the next user message (Anthropic), or into the next turn (Gemini), creating that turn if needed. A result whose call cannot be found is left to tool-result-without-call."),
    doc: "OpenAI chat wants a call's tool messages in the run right after the assistant message that made it; Anthropic wants the `tool_result` blocks at the very start of the next user message, before any text (results in an assistant message after the calls' are in the calls' turn, since the API joins consecutive messages of one role); Gemini wants the function response in the very next turn. Responses accepts outputs anywhere after the call, so this rule does not apply there (DeepSeek's stricter Responses placement is reported as tool-call-without-result).\nThe check pairs each result with its call and then tests the placement; a result that answers no call is tool-result-without-call instead.\nMust not flag: Anthropic results in another order than the calls, results followed by text in the same user message, a chat system message after a complete run of results, a second result after the first in the same run.\nOpenAI and Mistral answer a misplaced result with their unanswered-call texts (openai_chat-02, openai_chat-10; the evidence file files those under tool-call-without-result), and Anthropic with anthropic-14 (also filed under tool-call-without-result). Only openai_chat-41 (MiniMax) and gemini-09 are filed under this rule.\nFix: move the result to where it belongs; a text or message left empty by the move is dropped by empty-content.\nGemini takes a response turn of role `model` (bifrost#1387's converter wrote one; the API refused only its count).
Bedrock Converse: results go in the user message right after the call's message (not an assistant message there), anywhere in it (text beside them is accepted: recorded for Claude, Nova, Llama 4 and Writer, against the single report in bedrock_converse-09); moved results are put first.",
    example: r#"{
  "model": "gpt-4o",
  "messages": [
    {
      "role": "user",
      "content": "What's the weather in Paris?"
    },
    {
      "role": "assistant",
      "content": null,
      "tool_calls": [
        {
          "id": "call_Wn3kQ8rT2vLpX9sYb4HdJm6e",
          "type": "function",
          "function": {
            "name": "get_weather",
            "arguments": "{\"city\":\"Paris\"}"
          }
        }
      ]
    },
    {
      "role": "user",
      "content": "Also, is it windy?"
    },
    {
      "role": "tool",
      "tool_call_id": "call_Wn3kQ8rT2vLpX9sYb4HdJm6e",
      "content": "{\"temp_c\": 18, \"wind_kmh\": 25}"
    }
  ]
}"#,
    fix: Some(move_next_to_its_call),
};

pub(crate) const DUPLICATE_CALL_ID: RuleSpec = RuleSpec {
    id: "duplicate-call-id",
    summary: "one call id used by two calls, or one call answered twice; in Responses, one item id (msg_, rs_, fc_) on two items",
    dialects: super::ALL_DIALECTS,
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "openai",
            text: "Invalid parameter: Duplicate value for 'tool_call_id' of '…', in messages[7] and messages[8].",
            source: "provider-errors.jsonl openai_chat-12",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.1.content.2: `tool_use` ids must be unique",
            source: "provider-errors.jsonl anthropic-11",
        },
        ProviderText {
            provider: "openai",
            text: "Duplicate item found with id …",
            source: "provider-errors.jsonl openai_responses-07",
        },
        ProviderText {
            provider: "openai_chat",
            text: "invalid params, duplicate tool_call id: …",
            source: "provider-errors.jsonl openai_chat-40",
        },
        ProviderText {
            provider: "deepseek",
            text: "Duplicate value for 'tool_call_id' of in message[6]",
            source: "provider-errors.jsonl openai_chat-39",
        },
    ],
    repair: Repair::Sometimes("Drops a second result for an already answered call, a replayed identical copy of a call (unanswered, or answered by the same result as the first; an unanswered copy before the answered call goes with its tool-call-without-result finding, and the answered call keeps its id), and a replayed identical Responses item (or a second reasoning item with the same id); a different Responses message keeps its content without the id. A different call that reuses the id of a call in an earlier turn, or an identical one answered by a different result (a tool without arguments called twice), gets a fresh id (`<id>_2`, then `<id>_3` and on for each later reuse, all in one pass), and so does the result that answers it by position. Two different calls of one turn that share an id are reported and left alone: which result answers which would be a guess."),
    doc: "Providers identify calls by id: OpenAI rejects two tool messages answering the same `tool_call_id`, Anthropic rejects two `tool_use` blocks with one id, and the Responses API rejects two input items with the same item id (\"Duplicate item found with id …\").\nThe check records every client call id; a second call with a known id, or a second result for an answered call, is flagged (and not reported again as unanswered). In Responses it also flags any msg_/rs_/fc_ item id seen twice.\nMust not flag: the same tool called twice with distinct ids, identical result contents for distinct calls, an Anthropic server tool result that repeats its own server_tool_use id.\nOpenAI has no recorded text for two chat calls sharing an id, and Gemini none at all, so those findings carry no provider text.\nA result answers the first unanswered call with its id in the call run it follows, else the first unanswered call with its id in the latest turn that has one: a client that reused an id in a later turn answers the later call there, and that result is not a second answer to the first call.\nFix: drop exact replays (the call and its result as the first time) and second answers (an unanswered copy before the answered call is the replay: it goes with its tool-call-without-result finding, and the answered call is not renamed); rename a later call that reused an earlier id, with its result, also when the call is identical but its result differs; leave different calls of one turn sharing an id for a human.\nResponses continuing `previous_response_id`: an output item of that response sent again (its id carries the response's key, the 16 hex digits after the prefix that resp_, rs_, fc_ and msg_ ids of one response share) is a duplicate of what the provider holds (openai_responses-07, \"Duplicate item found with id …\"); repair drops it. Items of older responses are not flagged: their key proves nothing about the chain.",
    example: r#"{
  "model": "gpt-4o",
  "messages": [
    {
      "role": "user",
      "content": "What's the weather in Paris?"
    },
    {
      "role": "assistant",
      "content": null,
      "tool_calls": [
        {
          "id": "call_gmd4tanjXcwOxfPawOnDmq6R",
          "type": "function",
          "function": {
            "name": "get_weather",
            "arguments": "{\"city\":\"Paris\"}"
          }
        }
      ]
    },
    {
      "role": "tool",
      "tool_call_id": "call_gmd4tanjXcwOxfPawOnDmq6R",
      "content": "{\"temp_c\": 18}"
    },
    {
      "role": "tool",
      "tool_call_id": "call_gmd4tanjXcwOxfPawOnDmq6R",
      "content": "{\"temp_c\": 18}"
    }
  ]
}"#,
    fix: Some(keep_one_copy),
};

pub(crate) const FUNCTION_RESPONSE_COUNT: RuleSpec = RuleSpec {
    id: "function-response-count",
    summary: "a Gemini function-response turn answers a different number of calls than the model turn before it made",
    dialects: &[Dialect::Gemini],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "gemini",
            text: "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
            source: "provider-errors.jsonl gemini-02",
        },
    ],
    repair: Repair::Always("Adds an error response for each call of the call turn that has none (or drops those calls with --missing-result drop-call; a call that is an exact copy of one answered in another turn is dropped as a replay), moves a response that answers a call of an earlier turn back next to it, and drops a response that answers no call of the turn before."),
    doc: "Gemini requires the turn after a model turn with N function calls to hold exactly N function responses.\nThe check counts client calls in each model turn and responses in the next turn; when that turn holds responses and the counts differ it reports one finding on the response turn and silences the pairing findings of both turns (which would repeat it).\nMust not flag: parallel calls answered in another order, parallel calls of one function without ids matched by name and order.\nFix: complete, move or drop responses until the counts match.",
    example: r#"{
  "contents": [
    {
      "role": "user",
      "parts": [
        {
          "text": "Add and multiply 2 and 3."
        }
      ]
    },
    {
      "role": "model",
      "parts": [
        {
          "functionCall": {
            "id": "wxvlv0tv",
            "name": "add",
            "args": {
              "a": 2,
              "b": 3
            }
          }
        },
        {
          "functionCall": {
            "id": "75p2opbh",
            "name": "multiply",
            "args": {
              "a": 2,
              "b": 3
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
            "id": "wxvlv0tv",
            "name": "add",
            "response": {
              "result": "5"
            }
          }
        }
      ]
    }
  ]
}"#,
    fix: Some(balance_the_responses),
};

// ---------------------------------------------------------------------------------------
// The checks.

#[derive(Clone, Copy)]
struct CallRec<'a> {
    node: usize,
    turn: usize,
    id: Option<&'a str>,
    name: Option<&'a str>,
    answered: bool,
    /// An earlier call has the same id (reported as `duplicate-call-id`, not again as
    /// unanswered).
    duplicate: bool,
}

/// The state of one walk over the chain that pairs calls with results.
struct Pairing<'c, 'a> {
    ctx: &'c Ctx<'c, 'a>,
    /// Turns whose pairing findings `function-response-count` already stands for.
    suppressed: &'c [bool],
    calls: Vec<CallRec<'a>>,
    /// Every client call with an id, by id, in order.
    by_id: IdMap<'a, IdCalls>,
    /// Every server call with an id (the last one of each id), and whether a server
    /// result of the model's turn answers it.
    server_ids: IdMap<'a, (usize, bool)>,
    /// Where the model's turns end (Anthropic), read on the first server call or result.
    model_turns: Option<ModelTurns>,
    /// Calls reported as misplaced (DeepSeek Responses), not reported again as unanswered.
    misplaced_calls: Vec<usize>,
    pairs: Vec<(usize, usize)>,
    /// Where the turns stand, read once so that no result walks back over the turns
    /// before it (a run of thousands of tool messages would make that quadratic).
    layout: TurnLayout,
    /// The last call node carrying each id, built on the first orphan result.
    last_call_by_id: Option<IdMap<'a, usize>>,
    /// The result nodes carrying each id, in order, built on the first second answer.
    results_by_id: Option<IdMap<'a, Vec<usize>>>,
    /// The leading run of results of one turn, as (turn, first node past it).
    leading_results: Option<(usize, usize)>,
    /// The calls without an id, by name, for results paired by name.
    by_name: IdMap<'a, NameQueue>,
}

/// The calls that carry one id, in order: nearly always one, kept inline until a second
/// (a vector per call was an allocation per call of every check).
enum IdCalls {
    One(usize),
    Many(Vec<usize>),
}

impl IdCalls {
    fn push(&mut self, ci: usize) {
        match self {
            IdCalls::One(first) => *self = IdCalls::Many(vec![*first, ci]),
            IdCalls::Many(v) => v.push(ci),
        }
    }

    fn as_slice(&self) -> &[usize] {
        match self {
            IdCalls::One(ci) => std::slice::from_ref(ci),
            IdCalls::Many(v) => v,
        }
    }
}

/// The calls of one name that carry no id, in order, with what is known of which are
/// answered: `skip[k]` is past position `k` and every position between them is
/// answered. Answered calls stay answered, so each is stepped over about once, and
/// thousands of same-named responses do not each walk the calls already answered.
#[derive(Default)]
struct NameQueue {
    calls: Vec<usize>,
    skip: Vec<u32>,
}

impl NameQueue {
    fn push(&mut self, ci: usize) {
        self.skip.push(self.calls.len() as u32);
        self.calls.push(ci);
    }

    /// The first position at or after `from` whose call is unanswered.
    fn first_open(&mut self, calls: &[CallRec], from: usize) -> Option<usize> {
        let len = self.calls.len();
        let mut at = from;
        while at < len && calls[self.calls[at]].answered {
            at = (self.skip[at] as usize).max(at + 1);
        }
        // Point every position walked over straight at the answer.
        let mut k = from;
        while k < at {
            let next = (self.skip[k] as usize).max(k + 1);
            self.skip[k] = at as u32;
            k = next;
        }
        (at < len).then_some(at)
    }
}

/// No turn: the `u32` stand-in for `None` in [`TurnLayout`].
const NO_TURN: u32 = u32::MAX;

/// Where the model's turn ends, for Anthropic server tools: counts over the turns,
/// read in one pass, so that asking of any two turns costs nothing.
struct ModelTurns {
    /// `closing[t]`: how many turns before `t` end the model's turn (a message of
    /// another role than the assistant's that holds anything but client tool results).
    closing: Vec<u32>,
    /// `others[t]`: how many turns before `t` are not the assistant's.
    others: Vec<u32>,
    /// The last assistant turn.
    last_assistant: Option<usize>,
}

impl ModelTurns {
    fn read(chain: &crate::chain::Chain) -> Self {
        let n = chain.turns.len();
        let mut closing = Vec::with_capacity(n + 1);
        let mut others = Vec::with_capacity(n + 1);
        let (mut c, mut o) = (0u32, 0u32);
        let mut last_assistant = None;
        for (t, turn) in chain.turns.iter().enumerate() {
            closing.push(c);
            others.push(o);
            if turn.role == Role::Assistant {
                last_assistant = Some(t);
                continue;
            }
            o += 1;
            // Client tool results (and nothing) keep a deferred server tool's turn open.
            let results_only = chain.turn_nodes(t).iter().all(|m| {
                matches!(
                    m.kind,
                    NodeKind::Result {
                        kind: CallKind::Client,
                        ..
                    }
                )
            });
            if !results_only {
                c += 1;
            }
        }
        closing.push(c);
        others.push(o);
        ModelTurns {
            closing,
            others,
            last_assistant,
        }
    }

    /// Whether nothing between turns `c` and `r` (`c < r`) ends the model's turn.
    fn continues(&self, c: usize, r: usize) -> bool {
        self.closing[r] == self.closing[c + 1]
    }

    /// Whether the model's turn holding turn `c` is over: a turn that ends it, or a
    /// later assistant message after another speaker's, follows.
    fn over_after(&self, c: usize) -> bool {
        let end = self.closing.len() - 1;
        self.closing[end] > self.closing[c + 1]
            || self
                .last_assistant
                .is_some_and(|l| l > c && self.others[l] > self.others[c + 1])
    }
}

/// Per-turn facts the pairing walk asks of the turns before a result, each read in one
/// pass over the chain.
struct TurnLayout {
    /// The latest turn before each turn whose role is not `tool`.
    prev_non_tool: Vec<u32>,
    /// For an assistant turn that made client calls, the first turn of the run of such
    /// turns ending there.
    call_run_start: Vec<u32>,
    /// The latest turn before each turn that is neither a tool turn nor made only of
    /// client calls (only for [`Placement::BeforeNextAssistantItem`]).
    prev_assistant_item: Vec<u32>,
}

impl TurnLayout {
    fn read(ctx: &Ctx) -> Self {
        let chain = ctx.chain;
        let n_turns = chain.turns.len();
        let mut calls_in = vec![false; n_turns];
        for node in chain.nodes.iter().filter(|m| is_client_call(m)) {
            calls_in[node.turn()] = true;
        }
        for (t, turn) in chain.turns.iter().enumerate() {
            calls_in[t] &= turn.role == Role::Assistant;
        }
        let mut prev_non_tool = Vec::with_capacity(n_turns);
        let mut call_run_start = Vec::with_capacity(n_turns);
        let mut last = NO_TURN;
        for (t, turn) in chain.turns.iter().enumerate() {
            prev_non_tool.push(last);
            if turn.role != Role::Tool {
                last = t as u32;
            }
            call_run_start.push(match (calls_in[t], t.checked_sub(1)) {
                (false, _) => NO_TURN,
                (true, Some(p)) if calls_in[p] => call_run_start[p],
                (true, _) => t as u32,
            });
        }
        let mut prev_assistant_item = Vec::new();
        if ctx.params.placement == Placement::BeforeNextAssistantItem {
            let mut last = NO_TURN;
            for (t, turn) in chain.turns.iter().enumerate() {
                prev_assistant_item.push(last);
                if turn.role != Role::Tool && !chain.turn_nodes(t).iter().all(is_client_call) {
                    last = t as u32;
                }
            }
        }
        TurnLayout {
            prev_non_tool,
            call_run_start,
            prev_assistant_item,
        }
    }

    /// Whether `u` (a turn or [`NO_TURN`]) is absent or at most `c`.
    fn at_most(u: u32, c: usize) -> bool {
        u == NO_TURN || u as usize <= c
    }
}

/// Every client call is answered exactly once, every result answers an earlier call, and
/// each result sits where the dialect requires. Also finds duplicate call ids. Returns the
/// pairs found, as (call node, result node).
pub(crate) fn pair_calls_with_results(
    ctx: &Ctx,
    suppressed: &[bool],
    out: &mut Vec<Violation>,
) -> Vec<(usize, usize)> {
    let chain = ctx.chain;
    let n_calls = chain
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Call { .. }))
        .count();
    let mut p = Pairing {
        ctx,
        suppressed,
        calls: Vec::with_capacity(n_calls),
        by_id: IdMap::with_capacity_and_hasher(n_calls, Default::default()),
        server_ids: IdMap::default(),
        model_turns: None,
        misplaced_calls: Vec::new(),
        pairs: Vec::new(),
        layout: TurnLayout::read(ctx),
        last_call_by_id: None,
        results_by_id: None,
        leading_results: None,
        by_name: IdMap::default(),
    };
    for (n, node) in chain.nodes.iter().enumerate() {
        match node.kind {
            NodeKind::Call {
                call_id: Some(id),
                kind: CallKind::Server,
                ..
            } => {
                p.server_ids.insert(id, (n, false));
            }
            NodeKind::Call {
                kind: CallKind::Server,
                ..
            } => {}
            NodeKind::Call {
                call_id,
                name,
                wire,
                id_mistyped,
                ..
            } => p.on_call(n, (call_id, id_mistyped), name, chain.wire_text(wire), out),
            // A server result whose id is not a string names no call: `malformed` says so.
            NodeKind::Result {
                kind: CallKind::Server,
                id_mistyped: true,
                ..
            } => {}
            NodeKind::Result {
                call_id,
                kind: CallKind::Server,
                wire,
                ..
            } => p.on_server_result(n, call_id, chain.wire_text(wire), out),
            NodeKind::Result {
                call_id,
                name,
                wire,
                id_mistyped,
                ..
            } => p.on_result(n, (call_id, id_mistyped), name, chain.wire_text(wire), out),
            _ => {}
        }
    }
    p.report_unanswered(out);
    if ctx.dialect == Dialect::Anthropic && !p.server_ids.is_empty() {
        p.report_unanswered_server_calls(out);
    }
    p.pairs
}

impl<'a> Pairing<'_, 'a> {
    fn model_turns(&mut self) -> &ModelTurns {
        let chain = self.ctx.chain;
        self.model_turns
            .get_or_insert_with(|| ModelTurns::read(chain))
    }

    /// Anthropic: a `server_tool_use` that no server result answers, in a model's turn
    /// that is over. The API runs a server tool inside the model's turn; one left
    /// without its result (a `pause_turn` or a cut stream saved as a finished answer, a
    /// deferred tool whose client results came with text) can no longer get it. Still
    /// open (the last assistant message, behind client tool results at most), it is a
    /// paused or deferred call the API goes on with.
    fn report_unanswered_server_calls(&mut self, out: &mut Vec<Violation>) {
        let ctx = self.ctx;
        for (n, node) in ctx.chain.nodes.iter().enumerate() {
            let NodeKind::Call {
                call_id: Some(id),
                name,
                kind: CallKind::Server,
                wire,
                ..
            } = node.kind
            else {
                continue;
            };
            if ctx.chain.wire_text(wire) != "server_tool_use"
                || self.server_ids.get(id) != Some(&(n, false))
            {
                continue;
            }
            let turn = node.turn();
            if !self.model_turns().over_after(turn) {
                continue;
            }
            let shown = name.unwrap_or("?");
            out.push(
                ctx.at_node(
                    Rule::ToolCallWithoutResult,
                    n,
                    format!(
                        "server tool call `{id}` to `{shown}` is never answered: no server tool result with its id follows it in the model's turn, and that turn is over (a later message says more than client tool results, or a later assistant message follows); the API runs a server tool only inside the model's turn"
                    ),
                )
                .provider((name == Some("web_search")).then(|| {
                    // lisette#108, anthropic-sdk-python#1339, gsd-2#2869
                    format!(
                        "messages.{}: `web_search` tool use with id `{id}` was found without a corresponding `web_search_tool_result` block",
                        ctx.turn_ix(turn)
                    )
                })),
            );
        }
    }

    fn quiet(&self, turn: usize) -> bool {
        self.suppressed.get(turn).copied().unwrap_or(false)
    }

    /// A call; `call_id` is its id and whether it is there but not a string.
    fn on_call(
        &mut self,
        n: usize,
        (call_id, mistyped): (Option<&'a str>, bool),
        name: Option<&'a str>,
        wire: &'a str,
        out: &mut Vec<Violation>,
    ) {
        let ctx = self.ctx;
        let turn = ctx.chain.nodes[n].turn();
        let id = call_id.filter(|s| !s.is_empty());
        // An id of another type than a string is not no id: its `malformed` finding is
        // the one report (no "has no id" beside it), and the call is not held
        // unanswered, as its results name it by that id.
        let reported_idless = id.is_none()
            && ctx.params.call_id_required
            && wire != crate::dialect::openai_chat::LEGACY_FUNCTION_CALL;
        if reported_idless && !mistyped {
            out.push(ids::idless_call(ctx, n, call_id, name, wire));
        }
        // A call whose id another call already took is reported as a duplicate, not
        // again as unanswered; an id-less call is reported as such.
        let ci = self.calls.len();
        let mut duplicate = false;
        if let Some(id) = id {
            let first = match self.by_id.entry(id) {
                Entry::Occupied(mut e) => {
                    let first = e.get().as_slice()[0];
                    e.get_mut().push(ci);
                    Some(first)
                }
                Entry::Vacant(e) => {
                    e.insert(IdCalls::One(ci));
                    None
                }
            };
            if let Some(first) = first {
                duplicate = true;
                let f = self.calls[first];
                out.push(
                    ctx.at_node(
                        Rule::DuplicateCallId,
                        n,
                        format!(
                            "call id `{id}` is used by two calls: {} and {}; results cannot tell them apart",
                            ctx.path(f.node),
                            ctx.path(n)
                        ),
                    )
                    .with_peer(f.node)
                    .provider(match ctx.dialect {
                        // OpenAI's known text is about tool messages, not calls.
                        Dialect::Anthropic => texts::duplicate(ctx.dialect, id, ctx.turn_ix(f.turn), ctx.turn_ix(turn), ctx.node_sub(n)),
                        _ => None,
                    }),
                );
            }
        } else if let Some(name) = name {
            self.by_name.entry(name).or_default().push(ci);
        }
        self.calls.push(CallRec {
            node: n,
            turn,
            id,
            name,
            answered: reported_idless,
            duplicate,
        });
    }

    fn on_server_result(
        &mut self,
        n: usize,
        call_id: Option<&str>,
        wire: &str,
        out: &mut Vec<Violation>,
    ) {
        let ctx = self.ctx;
        let turn = ctx.chain.nodes[n].turn();
        let call_turn = call_id
            .and_then(|id| self.server_ids.get(id))
            .map(|&(c, _)| ctx.chain.nodes[c].turn());
        // A server tool runs inside the model's turn: its result is in the message of its
        // call, or in a message of the same run of assistant messages (which the API
        // reads as one). Behind a user message that says anything, it answers nothing
        // there (claude-code#89348: a reminder spliced between the two). Anthropic
        // defers a server tool called beside a client tool to the next request, whose
        // answer opens with its result: behind user messages of client tool results
        // only, the model's turn goes on (server-tools docs).
        let same_run = call_turn.is_some_and(|c| {
            (c..=turn).all(|t| ctx.chain.turns[t].role == ctx.chain.turns[turn].role)
        });
        let assistant = |t: usize| ctx.chain.turns[t].role == Role::Assistant;
        let deferred = ctx.dialect == Dialect::Anthropic
            && call_turn.is_some_and(|c| {
                c < turn && assistant(c) && assistant(turn) && self.model_turns().continues(c, turn)
            });
        if same_run || deferred {
            if let Some(entry) = call_id.and_then(|id| self.server_ids.get_mut(id)) {
                entry.1 = true;
            }
            return;
        }
        let id = call_id.unwrap_or("");
        let message = match call_turn {
            Some(c) => format!("the {wire} block answers server tool call `{id}`, but that call is in {}, an earlier message behind another speaker's that ends the model's turn; a server tool's result stays in its call's turn", ctx.chain.turns[c].ptr),
            None => format!("the {wire} block answers server tool call `{id}`, but no earlier server tool call has that id"),
        };
        out.push(
            ctx.at_node(Rule::ToolResultWithoutCall, n, message)
                .provider((ctx.dialect == Dialect::Anthropic).then(|| {
                    // anthropic-13
                    format!(
                        "messages.{}.content.{}: unexpected `tool_use_id` found in `{wire}` blocks: {id}. Each `{wire}` block must have a corresponding `server_tool_use` block before it.",
                        ctx.turn_ix(turn),
                        ctx.node_sub(n).unwrap_or(0)
                    )
                })),
        );
    }

    /// A result; `call_id` is the id it names and whether that is there but not a string.
    fn on_result(
        &mut self,
        n: usize,
        (call_id, mistyped): (Option<&'a str>, bool),
        name: Option<&'a str>,
        wire: &str,
        out: &mut Vec<Violation>,
    ) {
        let ctx = self.ctx;
        let turn = ctx.chain.nodes[n].turn();
        let id = call_id.filter(|s| !s.is_empty());
        let by_name = ctx.params.pair_by_name || (id.is_none() && name.is_some());
        let found = self.find_call(id, name, by_name, turn);
        if found.is_none() && id.is_none() && !by_name {
            // An id of another type: its `malformed` finding is the one report.
            if !mistyped {
                out.push(ids::idless_result(ctx, n, call_id, wire));
            }
            return;
        }
        if ctx.dialect == Dialect::Gemini && name.is_none_or(str::is_empty) {
            out.push(ids::nameless_response(ctx, n));
        }
        let Some(ci) = found else {
            if self.quiet(turn) || ctx.chain.facts.continues_stored_state {
                // With stored state, the call may live at the provider, not in the body.
                return;
            }
            let later = id.is_some_and(|id| self.call_at_or_after(id, n));
            out.push(orphan_result(ctx, n, id, name, wire, later));
            return;
        };
        let call = self.calls[ci];
        if call.answered {
            if !self.quiet(turn) {
                let first_result = match ctx.dialect {
                    Dialect::OpenAiChat => id.and_then(|id| self.result_before(id, n)),
                    _ => None,
                };
                out.push(answered_twice(
                    ctx,
                    n,
                    first_result,
                    id.or(name).unwrap_or("?"),
                    call.node,
                ));
            }
            return;
        }
        self.calls[ci].answered = true;
        self.pairs.push((call.node, n));
        if !self.result_is_placed(call.turn, turn, n) {
            if ctx.params.placement == Placement::BeforeNextAssistantItem {
                self.misplaced_calls.push(ci);
                out.push(answered_too_late(ctx, call.node, call.id.unwrap_or("?"), n));
            } else if !self.quiet(turn) {
                out.push(misplaced_result(
                    ctx,
                    n,
                    id.or(name).unwrap_or("?"),
                    call.node,
                ));
            }
        }
    }

    /// The call a result answers: by id; else (Gemini, and legacy chat `function`
    /// messages) by name and position, among calls that carry no id of their own (or the
    /// same id) and are not answered yet.
    ///
    /// A result in the turn (or run of tool turns) right after a model turn that made
    /// calls answers a call of that turn, in order, or none: a same-named call left
    /// unanswered in an earlier turn is not its call (the response belongs to the call it
    /// follows, and moving it would give the earlier call another call's output). A
    /// result that follows no call turn answers the one unanswered call of its name, and
    /// none when several could claim it.
    fn find_call(
        &mut self,
        id: Option<&str>,
        name: Option<&str>,
        by_name: bool,
        turn: usize,
    ) -> Option<usize> {
        if let Some(calls) = id.and_then(|id| self.by_id.get(id)) {
            return Some(self.call_with_id(calls.as_slice(), turn));
        }
        if !by_name {
            return None;
        }
        // The candidates are the unanswered calls of that name without an id (a call
        // with the result's id would have been found by id).
        let run = self.call_run_before(turn);
        let calls = &self.calls;
        let q = self.by_name.get_mut(name?)?;
        if let Some(run) = run {
            let from = q.calls.partition_point(|&ci| calls[ci].turn < *run.start());
            let at = q.first_open(calls, from)?;
            return Some(q.calls[at]).filter(|&ci| run.contains(&calls[ci].turn));
        }
        let first = q.first_open(calls, 0)?;
        match q.first_open(calls, first + 1) {
            None => Some(q.calls[first]),
            Some(_) => None,
        }
    }

    /// Of the calls that share one id, the one a result in `turn` answers: the first
    /// unanswered one of the call run it follows, else the first unanswered one of the
    /// latest turn that has one (a client that reused an id in a later turn answers the
    /// later call there), else the first (the result answers a call twice).
    fn call_with_id(&self, calls: &[usize], turn: usize) -> usize {
        // The calls are in node order, so in turn order: the first of a stretch of turns
        // is found by bisection, not by walking every call of the id (a client that
        // reuses one id in every turn has thousands).
        let turn_of = |ci: usize| self.calls[ci].turn;
        let first_open_in = |from: usize, to: usize| {
            let at = calls.partition_point(|&ci| turn_of(ci) < from);
            calls[at..]
                .iter()
                .copied()
                .take_while(|&ci| turn_of(ci) <= to)
                .find(|&ci| !self.calls[ci].answered)
        };
        if let Some(run) = self.call_run_before(turn) {
            if let Some(ci) = first_open_in(*run.start(), *run.end()) {
                return ci;
            }
        }
        if let Some(&latest) = calls.iter().rev().find(|&&ci| !self.calls[ci].answered) {
            let t = turn_of(latest);
            if let Some(ci) = first_open_in(t, t) {
                return ci;
            }
        }
        calls.first().copied().unwrap_or(0)
    }

    /// The call run whose calls the results of `turn` answer by position: the model
    /// turn just before it (past a run of tool turns) when it made calls, with the model
    /// turns right before it that made calls too (Responses sends parallel calls as one
    /// item each).
    fn call_run_before(&self, turn: usize) -> Option<std::ops::RangeInclusive<usize>> {
        let end = *self.layout.prev_non_tool.get(turn)?;
        if end == NO_TURN {
            return None;
        }
        let start = *self.layout.call_run_start.get(end as usize)?;
        (start != NO_TURN).then_some(start as usize..=end as usize)
    }

    /// Whether the result node `n` in turn `r` sits where the dialect wants the result of
    /// a call made in turn `c`.
    fn result_is_placed(&mut self, c: usize, r: usize, n: usize) -> bool {
        let ctx = self.ctx;
        let layout = &self.layout;
        match ctx.params.placement {
            Placement::Anywhere => true,
            // Every turn from c + 1 to r is a tool turn.
            Placement::FollowingToolRun => {
                r > c
                    && ctx.chain.turns[r].role == Role::Tool
                    && TurnLayout::at_most(layout.prev_non_tool[r], c)
            }
            // Gemini takes a response turn of role `model` (bifrost#1387's converter
            // wrote one; the API refused only its count); Converse does not.
            Placement::NextTurn => {
                r == c + 1
                    && (ctx.dialect == Dialect::Gemini
                        || ctx.chain.turns[r].role != Role::Assistant)
            }
            // Anthropic joins consecutive messages of one role: results in an assistant
            // message after the calls' are in the calls' turn, not the next.
            Placement::NextTurnLeading => {
                r == c + 1
                    && ctx.chain.turns[r].role != Role::Assistant
                    && n <= self.leading_results_end(r)
            }
            // Every turn between c and r is a tool turn or holds only client calls.
            Placement::BeforeNextAssistantItem => {
                r > c && TurnLayout::at_most(layout.prev_assistant_item[r], c)
            }
        }
    }

    /// The first node of turn `t` past its leading run of results (remembered for the
    /// turn last asked: a turn's results are paired one after another).
    fn leading_results_end(&mut self, t: usize) -> usize {
        if let Some((turn, end)) = self.leading_results {
            if turn == t {
                return end;
            }
        }
        let turn = &self.ctx.chain.turns[t];
        let end = (turn.first()..turn.end())
            .find(|&m| !matches!(self.ctx.chain.nodes[m].kind, NodeKind::Result { .. }))
            .unwrap_or(turn.end());
        self.leading_results = Some((t, end));
        end
    }

    /// Whether a call with id `id` comes at node `n` or after it.
    fn call_at_or_after(&mut self, id: &str, n: usize) -> bool {
        let chain = self.ctx.chain;
        let last = self.last_call_by_id.get_or_insert_with(|| {
            let mut m = IdMap::default();
            for (k, node) in chain.nodes.iter().enumerate() {
                if let NodeKind::Call {
                    call_id: Some(c), ..
                } = node.kind
                {
                    m.insert(c, k);
                }
            }
            m
        });
        last.get(id).is_some_and(|&k| k >= n)
    }

    /// The latest result node before `n` that carries `id`.
    fn result_before(&mut self, id: &str, n: usize) -> Option<usize> {
        let chain = self.ctx.chain;
        let by_id = self
            .results_by_id
            .get_or_insert_with(|| super::nodes_by_call_id(chain, false));
        let rs = by_id.get(id)?;
        rs[..rs.partition_point(|&k| k < n)].last().copied()
    }

    /// Unanswered calls, grouped by their turn so the provider text names them together.
    fn report_unanswered(&self, out: &mut Vec<Violation>) {
        let ctx = self.ctx;
        let mut by_turn: Vec<(usize, Vec<usize>)> = Vec::new();
        for (ci, c) in self.calls.iter().enumerate() {
            if c.answered || c.duplicate || self.misplaced_calls.contains(&ci) || self.quiet(c.turn)
            {
                continue;
            }
            match by_turn.last_mut() {
                Some((t, v)) if *t == c.turn => v.push(ci),
                _ => by_turn.push((c.turn, vec![ci])),
            }
        }
        for (turn, cis) in by_turn {
            let shown = |c: &CallRec<'a>| c.id.or(c.name).unwrap_or("?");
            let ids: Vec<&str> = cis.iter().map(|&ci| shown(&self.calls[ci])).collect();
            for &ci in &cis {
                let c = self.calls[ci];
                // A call without an id (Gemini pairs by name) is not one whose id no
                // result carries: say what does pair it.
                let message = match (c.id, c.name) {
                    (None, Some(name)) => format!(
                        "call to `{name}` (no id) is never answered: no response of that name follows it"
                    ),
                    _ => format!(
                        "call `{}`{} is never answered: no result carries its id",
                        shown(&c),
                        c.name
                            .filter(|n| Some(*n) != c.id.or(c.name).filter(|_| c.id.is_none()))
                            .map(|n| format!(" to `{n}`"))
                            .unwrap_or_default()
                    ),
                };
                out.push(
                    ctx.at_node(Rule::ToolCallWithoutResult, c.node, message)
                        .provider(Some(texts::unanswered_call(
                            ctx.dialect,
                            ctx.profile,
                            &ids,
                            ctx.turn_ix(turn),
                        ))),
                );
            }
        }
    }
}

/// A result that answers no earlier call (or comes before the call it answers).
fn orphan_result(
    ctx: &Ctx,
    n: usize,
    id: Option<&str>,
    name: Option<&str>,
    wire: &str,
    later: bool,
) -> Violation {
    let shown = id.or(name).unwrap_or("?");
    let turn = ctx.chain.nodes[n].turn();
    ctx.at_node(
        Rule::ToolResultWithoutCall,
        n,
        if later {
            format!("the {wire} result for `{shown}` comes before the call it answers")
        } else if id.is_none() {
            format!("the {wire} result for `{shown}` has no id and no call it can be told to answer: it does not follow a turn that called `{shown}`, and no single unanswered call of that name is left")
        } else {
            format!("the {wire} result answers `{shown}`, but no earlier tool call has that id")
        },
    )
    .provider(Some(
        mistral_orphan_text(ctx, turn, shown).unwrap_or_else(|| {
            texts::orphan_result(
                ctx.dialect,
                ctx.profile,
                shown,
                ctx.turn_ix(turn),
                ctx.node_sub(n),
            )
        }),
    ))
}

/// Mistral's text for a tool message that answers no call, which names what came before
/// its run of tool messages: after an assistant message with calls, the id it does not
/// know ("Unexpected tool call id pR1CHbWdz in tool results", pydantic/pydantic-ai#3733
/// on devstral-2512; onyx-dot-app/onyx#8522 through Ollama's cloud); after any other
/// message, its role (openai_chat-26's "Unexpected role 'tool' after role 'user'").
fn mistral_orphan_text(ctx: &Ctx, turn: usize, shown: &str) -> Option<String> {
    if ctx.dialect != Dialect::OpenAiChat || ctx.profile.id != ProfileId::Mistral {
        return None;
    }
    let chain = ctx.chain;
    let before = (0..turn)
        .rev()
        .find(|&u| chain.turns[u].role != Role::Tool)?;
    let calls = chain
        .turn_nodes(before)
        .iter()
        .any(|m| matches!(m.kind, NodeKind::Call { .. }));
    Some(if chain.turns[before].role == Role::Assistant && calls {
        format!("Unexpected tool call id {shown} in tool results")
    } else {
        format!(
            "Unexpected role 'tool' after role '{}'",
            chain.turns[before].wire
        )
    })
}

/// A second result for a call already answered; `first_result` is the latest result
/// before it with its id (chat names its message).
fn answered_twice(
    ctx: &Ctx,
    n: usize,
    first_result: Option<usize>,
    shown: &str,
    call: usize,
) -> Violation {
    let chain = ctx.chain;
    let turn = chain.nodes[n].turn();
    let provider = match ctx.dialect {
        Dialect::OpenAiChat => {
            let first_result = first_result
                .map(|m| ctx.turn_ix(chain.nodes[m].turn()))
                .unwrap_or(0);
            texts::duplicate(ctx.dialect, shown, first_result, ctx.turn_ix(turn), None)
        }
        _ => None,
    };
    ctx.at_node(
        Rule::DuplicateCallId,
        n,
        format!(
            "call `{shown}` ({}) is answered twice; only one result may answer a call",
            ctx.path(call)
        ),
    )
    .with_peer(call)
    .provider(provider)
}

/// DeepSeek Responses: a call answered only after another assistant item.
fn answered_too_late(ctx: &Ctx, call: usize, cid: &str, result: usize) -> Violation {
    let turn = ctx.chain.nodes[call].turn();
    ctx.at_node(
        Rule::ToolCallWithoutResult,
        call,
        format!(
            "call `{cid}` is answered at {} only after another assistant item; {} needs each call's output before the next assistant item",
            ctx.path(result),
            ctx.profile.name
        ),
    )
    .with_peer(result)
    .provider(Some(texts::unanswered_call(ctx.dialect, ctx.profile, &[cid], ctx.turn_ix(turn))))
}

/// A result that answers its call, but not where the dialect wants it.
fn misplaced_result(ctx: &Ctx, n: usize, shown: &str, call: usize) -> Violation {
    let (r_turn, c_turn) = (ctx.chain.nodes[n].turn(), ctx.chain.nodes[call].turn());
    let where_ = match ctx.params.placement {
        Placement::FollowingToolRun => "in the tool messages right after the assistant message that made the call",
        Placement::NextTurnLeading => "at the start of the user message right after the assistant message that made the call, before any other block",
        _ => "in the turn right after the call's turn",
    };
    let provider = match ctx.dialect {
        Dialect::Anthropic if r_turn == c_turn + 1 => Some(format!(
            "messages.{}: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
            ctx.turn_ix(r_turn)
        )),
        Dialect::Gemini => Some(texts::orphan_result(ctx.dialect, ctx.profile, shown, 0, None)),
        _ => Some(texts::unanswered_call(ctx.dialect, ctx.profile, &[shown], ctx.turn_ix(c_turn))),
    };
    ctx.at_node(
        Rule::ToolResultNotAdjacent,
        n,
        format!(
            "the result for `{shown}` is not where it must be: it must sit {where_} ({})",
            ctx.path(call)
        ),
    )
    .with_peer(call)
    .provider(provider)
}

/// Responses: no two input items carry the same provider item id (`msg_`, `rs_`, `fc_`).
/// OpenAI refuses the second ("Duplicate item found with id msg_…",
/// openai_responses-07). A function call whose call id is already reported as a
/// duplicate is not reported again.
pub(crate) fn item_ids_are_unique(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let mut seen: IdMap<'_, usize> =
        IdMap::with_capacity_and_hasher(chain.nodes.len(), Default::default());
    // Read once: a walk of the findings per duplicate made thousands of them quadratic.
    let reported: std::collections::HashSet<usize> = out
        .iter()
        .filter(|v| v.rule == Rule::DuplicateCallId)
        .filter_map(|v| v.loc.node)
        .collect();
    for (n, id) in chain.item_ids() {
        if id.is_empty() {
            continue;
        }
        let Some(&first) = seen.get(id) else {
            seen.insert(id, n);
            continue;
        };
        if reported.contains(&n) {
            continue;
        }
        out.push(
            ctx.at_node(
                Rule::DuplicateCallId,
                n,
                format!(
                    "item id `{id}` is carried by two items: {} and {}; the provider refuses the second",
                    ctx.path(first),
                    ctx.path(n)
                ),
            )
            .with_peer(first)
            .provider(Some(format!("Duplicate item found with id {id}"))),
        );
    }
}

/// Gemini: a function-response turn answers exactly as many calls as the call turn before
/// it made. Returns the turns whose pairing findings this one replaces.
pub(crate) fn gemini_response_counts_match(ctx: &Ctx, out: &mut Vec<Violation>) -> Vec<bool> {
    let chain = ctx.chain;
    let mut quiet = vec![false; chain.turns.len()];
    if ctx.dialect != Dialect::Gemini {
        return quiet;
    }
    let count = |t: usize, calls: bool| {
        chain
            .turn_nodes(t)
            .iter()
            .filter(|n| match n.kind {
                NodeKind::Call { kind, .. } => calls && kind == CallKind::Client,
                NodeKind::Result { kind, .. } => !calls && kind == CallKind::Client,
                _ => false,
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
                ctx.at_turn(
                    Rule::FunctionResponseCount,
                    t + 1,
                    format!(
                        "{} answers {r} function call(s), but the model turn before it ({}) made {k}",
                        chain.turns[t + 1].ptr,
                        chain.turns[t].ptr
                    ),
                )
                .provider(Some(texts::unanswered_call(Dialect::Gemini, ctx.profile, &[], 0))),
            );
        }
    }
    quiet
}

// ---------------------------------------------------------------------------------------
// The fixes.

/// Whether repairing `v` moves a result (so the reasoning rules wait for the next pass).
pub(crate) fn moves_a_result(fx: &Fixer, v: &Violation) -> bool {
    let chain = fx.chain();
    match v.rule {
        Rule::ToolResultNotAdjacent => true,
        Rule::ToolResultWithoutCall => v.loc.node.is_some_and(|n| match chain.nodes[n].kind {
            NodeKind::Result {
                call_id: Some(rid), ..
            } => fx
                .calls()
                .with_call_id(rid)
                .iter()
                .any(|&m| m > n && is_client_call(&chain.nodes[m])),
            _ => false,
        }),
        _ => false,
    }
}

/// `tool-call-without-result`: an output answered too late moves up to its call;
/// otherwise an interrupted result is added, or the call dropped, as the policy says.
fn answer_the_call(fx: &mut Fixer, v: &Violation) {
    let Some(n) = v.loc.node else { return };
    if !fx.claim(n) {
        return;
    }
    if matches!(
        fx.chain().nodes[n].kind,
        NodeKind::Call {
            kind: CallKind::Server,
            ..
        }
    ) {
        // No client can answer a server tool, and the model's turn it ran in is over:
        // the call goes (what the model said beside it stays).
        fx.drop_node(n);
        let detail = format!(
            "dropped server {}, whose result can no longer come",
            fx.describe_call(n)
        );
        fx.note(v.rule, v.path.clone(), "drop", detail);
        return;
    }
    if let Some(&r) = fx.result_of.get(&n) {
        // Answered, but too late (DeepSeek Responses): move the output up.
        fx.claim(r);
        if fx.move_result(r, n) {
            let from = fx.chain().nodes[r].ptr.render();
            let detail = format!("moved the output to right after its call at {}", v.path);
            fx.note(v.rule, from, "move", detail);
        }
        return;
    }
    if drop_a_replayed_copy(fx, v.rule, v.path.clone(), n) {
        return;
    }
    fx.answer_or_drop(v.rule, v.path.clone(), n, "result");
}

/// The answered call that the unanswered call at node `n` is an exact copy of (its id,
/// name, arguments and signature): `n` is then a replay of that step whose result stayed
/// with the other copy, wherever the two sit. Only the first call with an id is not
/// reported as a duplicate, so when a replayed copy lands before the answered call (a
/// history that opens with it, a swap), the unanswered one is the first: no result may
/// be synthesized for it (one with its id would answer the other copy too), and the
/// duplicate's fix keeps the answered copy. `None` when `n` has a result, no id, or no
/// answered exact copy (a different call that shares the id is a duplicate to report).
fn answered_copy_of(fx: &Fixer, n: usize) -> Option<usize> {
    let NodeKind::Call {
        call_id: Some(id),
        kind: CallKind::Client,
        ..
    } = fx.chain().nodes[n].kind
    else {
        return None;
    };
    if fx.result_of.contains_key(&n) {
        return None;
    }
    let value = fx.value_of(n)?;
    fx.calls()
        .with_call_id(id)
        .iter()
        .copied()
        .find(|&m| m != n && fx.result_of.contains_key(&m) && fx.value_of(m) == Some(value))
}

/// Drop the unanswered call at node `n` when it is a replayed copy of an answered call
/// (see [`answered_copy_of`]); whether it did. The caller has claimed `n`.
fn drop_a_replayed_copy(fx: &mut Fixer, rule: Rule, path: String, n: usize) -> bool {
    let Some(m) = answered_copy_of(fx, n) else {
        return false;
    };
    fx.drop_node(n);
    let chain = fx.chain();
    let detail = format!(
        "dropped a replayed copy of {}: its exact copy at {} is answered",
        fx.describe_call(n),
        chain.nodes[m].ptr
    );
    fx.note(rule, path, "drop", detail);
    true
}

/// `tool-result-without-call`: a result naming its call's item id gets the call id; a
/// result before its own (unanswered) call moves after it; anything else is an orphan,
/// dropped or kept as text as the policy says. Never attached to another call.
fn settle_the_orphan(fx: &mut Fixer, v: &Violation) {
    let Some(n) = v.loc.node else { return };
    if !fx.claim(n) {
        return;
    }
    let chain = fx.chain();
    let NodeKind::Result {
        call_id: Some(rid), ..
    } = chain.nodes[n].kind
    else {
        fx.orphan(n, v);
        return;
    };
    // It carries the call's provider item id (fc_…) instead of its call id.
    let by_item_id = fx
        .calls()
        .with_item_id(rid)
        .iter()
        .take_while(|&&m| m < n)
        .find_map(|&m| match chain.nodes[m].kind {
            NodeKind::Call {
                call_id: Some(cid), ..
            } if cid != rid => Some(cid),
            _ => None,
        });
    if let Some(cid) = by_item_id {
        if fx.set_call_id(chain.nodes[n].ptr, false, cid) {
            let detail = format!(
                "the result named the call's item id `{rid}`; set it to the call id `{cid}`"
            );
            fx.note(v.rule, v.path.clone(), "set", detail);
            return;
        }
    }
    // Its call comes later: move it to where that call's results go.
    let later_call = fx
        .calls()
        .with_call_id(rid)
        .iter()
        .copied()
        .find(|&m| m > n && is_client_call(&chain.nodes[m]) && !fx.result_of.contains_key(&m));
    if let Some(c) = later_call.filter(|_| fx.value_of(n).is_some()) {
        fx.claim(c);
        fx.move_result(n, c);
        let detail = format!(
            "moved the result after its call at {}",
            chain.nodes[c].ptr.render()
        );
        fx.note(v.rule, v.path.clone(), "move", detail);
        return;
    }
    fx.orphan(n, v);
}

/// Before the fixes of a pass, Gemini: a response turn that answers its call turn part
/// for part (as many responses as calls, and the same names) but whose ids name no call
/// at all (ids a proxy or a framework rewrote, CLIProxyAPI#5199: "functionResponse.id
/// does not match functionCall.id") gets the ids of its turn's unanswered calls, matched
/// by name in order, as Gemini pairs responses that carry no id. The tool output is kept:
/// dropping it and synthesizing an "interrupted" result would lose it for nothing.
pub(crate) fn give_responses_their_calls_ids(fx: &mut Fixer) {
    if fx.dialect() != Dialect::Gemini {
        return;
    }
    let chain = fx.chain();
    let client = |n: usize, call: bool| match chain.nodes[n].kind {
        NodeKind::Call {
            kind: CallKind::Client,
            call_id,
            name,
            ..
        } if call => Some((call_id.filter(|id| !id.is_empty())?, name)),
        NodeKind::Result {
            kind: CallKind::Client,
            call_id,
            name,
            ..
        } if !call => Some((call_id.filter(|id| !id.is_empty())?, name)),
        _ => None,
    };
    let mut found = Vec::new();
    for t in 1..chain.turns.len() {
        let (calls, results) = (&chain.turns[t - 1], &chain.turns[t]);
        let count = |turn: &crate::chain::Turn, call: bool| {
            (turn.first()..turn.end())
                .filter(|&n| match chain.nodes[n].kind {
                    NodeKind::Call { kind, .. } => call && kind == CallKind::Client,
                    NodeKind::Result { kind, .. } => !call && kind == CallKind::Client,
                    _ => false,
                })
                .count()
        };
        if count(calls, true) == 0 || count(calls, true) != count(results, false) {
            continue;
        }
        let unanswered: Vec<usize> = (calls.first()..calls.end())
            .filter(|n| !fx.result_of.contains_key(n))
            .filter(|&n| {
                client(n, true).is_some_and(|(id, _)| fx.calls().with_call_id(id).len() == 1)
            })
            .collect();
        let orphans: Vec<usize> = (results.first()..results.end())
            .filter(|n| !fx.call_of.contains_key(n))
            .filter(|&n| {
                client(n, false).is_some_and(|(id, _)| fx.calls().with_call_id(id).is_empty())
            })
            .collect();
        if unanswered.is_empty() || unanswered.len() != orphans.len() {
            continue;
        }
        let mut left = unanswered.clone();
        let pairs: Option<Vec<(usize, usize)>> = orphans
            .iter()
            .map(|&r| {
                let name = client(r, false)?.1;
                let k = left
                    .iter()
                    .position(|&c| client(c, true).is_some_and(|(_, n)| n == name))?;
                Some((r, left.remove(k)))
            })
            .collect();
        found.extend(pairs.into_iter().flatten());
    }
    for (r, c) in found {
        let (Some((old, _)), Some((id, name))) = (client(r, false), client(c, true)) else {
            continue;
        };
        let Some(part) = fx.value_of(r) else { continue };
        let key = if part.get("function_response").is_some() {
            "function_response"
        } else {
            "functionResponse"
        };
        let mut part = part.clone();
        let Some(response) = part.get_mut(key).and_then(serde_json::Value::as_object_mut) else {
            continue;
        };
        response.insert("id".into(), serde_json::Value::String(id.to_string()));
        fx.claim(r);
        fx.claim(c);
        let detail = format!(
            "the response named `{old}`, which no call has; set it to `{id}`, the unanswered call{} it answers part for part in the turn before ({})",
            name.map(|n| format!(" to `{n}`")).unwrap_or_default(),
            chain.nodes[c].ptr.render()
        );
        let at = (Rule::ToolResultWithoutCall, chain.nodes[r].ptr.render());
        fx.replace_node_as(r, part, at, "set", detail);
    }
}

/// Whether node `m` is a client call.
fn is_client_call(m: &crate::chain::Node) -> bool {
    matches!(
        m.kind,
        NodeKind::Call {
            kind: CallKind::Client,
            ..
        }
    )
}

/// `tool-result-not-adjacent`: the result moves next to its call (the violation's peer).
fn move_next_to_its_call(fx: &mut Fixer, v: &Violation) {
    let (Some(n), Some(c)) = (v.loc.node, v.loc.peer) else {
        return;
    };
    if !fx.claim(n) || !fx.move_result(n, c) {
        return;
    }
    let detail = format!(
        "moved the result next to its call at {}",
        fx.chain().nodes[c].ptr.render()
    );
    fx.note(v.rule, v.path.clone(), "move", detail);
}

/// The provider item id of a Responses message or reasoning item.
fn item_id_of<'a>(k: &NodeKind<'a>) -> Option<&'a str> {
    match *k {
        NodeKind::Message { item_id } | NodeKind::Reasoning { item_id, .. } => item_id,
        _ => None,
    }
}

/// `duplicate-call-id`: a replayed copy goes; a second answer to a call goes; a different
/// Responses message keeps its content without the id; two different calls sharing an id
/// cannot be told apart without guessing, and are left alone.
fn keep_one_copy(fx: &mut Fixer, v: &Violation) {
    let Some(n) = v.loc.node else { return };
    if v.defect == Some(crate::violation::Defect::HeldUpstream) {
        if fx.claim(n) {
            fx.drop_node(n);
            let detail = "dropped the item: the response this request continues holds it already";
            fx.note(v.rule, v.path.clone(), "drop", detail.into());
        }
        return;
    }
    match fx.chain().nodes[n].kind {
        NodeKind::Call {
            call_id: Some(id), ..
        } => drop_replayed_call(fx, v, n, id),
        NodeKind::Message { .. } | NodeKind::Reasoning { .. } => keep_one_item_id(fx, v, n),
        NodeKind::Result { .. } if fx.claim(n) => {
            fx.drop_node(n);
            let detail = "dropped the second result for a call that was already answered";
            fx.note(v.rule, v.path.clone(), "drop", detail.into());
        }
        _ => {}
    }
}

/// A call that reuses an earlier call's id: an exact replay (the same call, unanswered or
/// answered as the first was) goes; a different call in a later turn, or the same call
/// answered otherwise, gets a fresh id, and so does the result that answers it (its pairing is
/// proven by position: it answers the call it follows); two different calls of one turn
/// that share an id cannot be told apart and are left alone.
fn drop_replayed_call(fx: &mut Fixer, v: &Violation, n: usize, id: &str) {
    let chain = fx.chain();
    let same_id = fx.calls().with_call_id(id);
    let Some(first) = same_id.first().copied().filter(|&f| f < n) else {
        return;
    };
    // The calls of one turn are neighbours in the list, which is in node order.
    let turn = chain.nodes[n].turn();
    let at = same_id.partition_point(|&k| k < n);
    let shares_its_turn = [at.checked_sub(1), Some(at), Some(at + 1)]
        .into_iter()
        .flatten()
        .filter_map(|i| same_id.get(i))
        .any(|&k| k != n && chain.nodes[k].turn() == turn);
    // An unanswered exact copy before it is the replay, not this answered call: that
    // copy's own unanswered finding drops it, and this call keeps its id.
    let answered = fx.result_of.contains_key(&n);
    if answered && answered_copy_of(fx, first).is_some() && fx.value_of(first) == fx.value_of(n) {
        return;
    }
    if !fx.claim(n) {
        return;
    }
    // A replay repeats the step: the call and what answered it. A copy of the call
    // answered by a result of its own that says something else is a second call (a tool
    // without arguments polled twice by a client that reuses ids), not a replay.
    let result = |c: usize| fx.result_of.get(&c).and_then(|&r| fx.value_of(r));
    let replayed = fx.value_of(first) == fx.value_of(n)
        && (!fx.result_of.contains_key(&n) || result(first) == result(n));
    if replayed {
        fx.drop_node(n);
        let detail = format!("dropped a replayed copy of call `{id}`");
        fx.note(v.rule, v.path.clone(), "drop", detail);
        return;
    }
    if shares_its_turn || chain.nodes[first].turn() == turn {
        return;
    }
    let fresh = fx.fresh_call_id(id);
    if !fx.set_call_id(chain.nodes[n].ptr, true, &fresh) {
        return;
    }
    let answered_by = fx.result_of.get(&n).copied();
    let mut detail = format!(
        "gave the call, which reused the id `{id}` of {}, the new id `{fresh}`",
        chain.nodes[first].ptr
    );
    if let Some(r) = answered_by {
        if fx.claim(r) && fx.set_call_id(chain.nodes[r].ptr, false, &fresh) {
            detail.push_str(&format!(
                ", and its result at {} with it",
                chain.nodes[r].ptr
            ));
        }
    }
    fx.note(v.rule, v.path.clone(), "rename", detail);
}

/// Responses: a second item with an id already used. A replayed copy goes; a different
/// message keeps its content without the id; a different reasoning item cannot exist
/// without its id and goes.
fn keep_one_item_id(fx: &mut Fixer, v: &Violation, n: usize) {
    let chain = fx.chain();
    let Some(id) = item_id_of(&chain.nodes[n].kind) else {
        return;
    };
    let Some(i) = fx.item_of_turn(chain.nodes[n].turn()) else {
        return;
    };
    if !fx.claim(n) {
        return;
    }
    let first = fx.first_with_item_id(id).filter(|&f| f < n);
    let first_item = first.and_then(|f| fx.item_of_turn(chain.nodes[f].turn()));
    let items = fx.items;
    let same = first_item
        .is_some_and(|f| items.and_then(|it| it.get(f)) == items.and_then(|it| it.get(i)));
    let reasoning = matches!(chain.nodes[n].kind, NodeKind::Reasoning { .. });
    if same || reasoning {
        fx.drop_node(n);
        let what = if same {
            "a replayed copy of"
        } else {
            "a second reasoning item with"
        };
        fx.note(
            v.rule,
            v.path.clone(),
            "drop",
            format!("dropped {what} item `{id}`"),
        );
    } else {
        fx.plan.remove_item_id(i);
        let detail = format!("removed the item id `{id}` from the second item that carried it");
        fx.note(v.rule, v.path.clone(), "set", detail);
    }
}

/// `function-response-count`: the response turn answers each call of the turn before
/// once: unanswered calls get an error response (or are dropped, as the policy says), a
/// response to a call of an earlier turn moves there, a response to no call goes.
fn balance_the_responses(fx: &mut Fixer, v: &Violation) {
    let Some(t) = v.loc.turn.filter(|&t| t > 0) else {
        return;
    };
    let chain = fx.chain();
    // Only the call turn and the response turn are acted on: their nodes, not a walk of
    // the whole chain per finding (a long loop of split responses made that quadratic).
    let nodes = chain.turns[t - 1].first()..chain.turns[t].end();
    for (k, node) in nodes.map(|k| (k, &chain.nodes[k])) {
        let client = |kind: &NodeKind| match kind {
            NodeKind::Call { kind, .. } | NodeKind::Result { kind, .. } => {
                *kind == CallKind::Client
            }
            _ => false,
        };
        let is_call = matches!(node.kind, NodeKind::Call { .. });
        if node.turn() == t - 1 && is_call && client(&node.kind) && !fx.result_of.contains_key(&k) {
            respond_to_unanswered(fx, v, k);
        }
        if let (true, Some(&c)) = (node.turn() == t, fx.call_of.get(&k)) {
            if chain.nodes[c].turn() != t - 1 && fx.claim(k) && fx.move_result(k, c) {
                // It answers a call of an earlier turn: take it there.
                let detail = format!(
                    "moved the response next to its call at {}",
                    chain.nodes[c].ptr.render()
                );
                fx.note(v.rule, node.ptr.render(), "move", detail);
            }
        }
        let is_result = matches!(node.kind, NodeKind::Result { .. });
        if node.turn() == t
            && is_result
            && client(&node.kind)
            && !fx.call_of.contains_key(&k)
            && fx.claim(k)
        {
            fx.drop_node(k);
            let detail = "dropped a function response that answers no call of the turn before";
            fx.note(v.rule, node.ptr.render(), "drop", detail.into());
        }
    }
}

fn respond_to_unanswered(fx: &mut Fixer, v: &Violation, k: usize) {
    let path = fx.chain().nodes[k].ptr.render();
    if answered_copy_of(fx, k).is_some() {
        if fx.claim(k) {
            drop_a_replayed_copy(fx, v.rule, path, k);
        }
        return;
    }
    // A call is dropped once a pass; an interrupted response may be added for it anyway.
    if fx.opts.missing_result == MissingResult::DropCall && !fx.claim(k) {
        return;
    }
    fx.answer_or_drop(v.rule, path, k, "response");
}

/// The providers' own texts, filled with the real ids and indexes. Each comes from
/// `provider-errors.jsonl` (the evidence behind the rules); the id in a comment is the
/// row it reproduces.
mod texts {
    use crate::dialect::Dialect;
    use crate::profile::{Profile, ProfileId};

    /// Index of a wire item, for texts that name `messages[N]`.
    type Ix = u32;

    /// `tool-result-without-call`.
    pub(super) fn orphan_result(
        d: Dialect,
        p: &Profile,
        call_id: &str,
        at: Ix,
        sub: Option<Ix>,
    ) -> String {
        match d {
            // openai_chat-06 / openai_chat-26
            Dialect::OpenAiChat if p.id == ProfileId::Mistral => "Unexpected role 'tool' after role 'user'".into(),
            Dialect::OpenAiChat => {
                "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".into()
            }
            // openai_responses-04
            Dialect::OpenAiResponses => format!("No tool call found for function call output with call_id {call_id}."),
            // anthropic-09
            Dialect::Anthropic => format!(
                "messages.{at}.content.{}: unexpected `tool_use_id` found in `tool_result` blocks: {call_id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
                sub.unwrap_or(0)
            ),
            // gemini-09
            Dialect::Gemini => "Please ensure that function response turn comes immediately after a function call turn.".into(),
            // bedrock_converse-04
            Dialect::BedrockConverse => format!("The number of toolResult blocks at messages.{at}.content exceeds the number of toolUse blocks of previous turn."),
        }
    }

    /// `tool-call-without-result`.
    pub(super) fn unanswered_call(d: Dialect, p: &Profile, call_ids: &[&str], at: Ix) -> String {
        let ids = call_ids.join(", ");
        match d {
            // openai_chat-10 / openai_chat-02
            Dialect::OpenAiChat if p.id == ProfileId::Mistral => "Not the same number of function calls and responses".into(),
            Dialect::OpenAiChat => format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
            ),
            // openai_responses-05, and DeepSeek's wording (fixture deepseek-responses-rejects-interleaved-function-calls)
            Dialect::OpenAiResponses if p.id == ProfileId::DeepSeek => format!("No tool output found for tool call {ids}."),
            Dialect::OpenAiResponses => format!("No tool output found for function call {ids}."),
            // anthropic-01
            Dialect::Anthropic => format!(
                "messages.{at}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
            ),
            // gemini-02
            Dialect::Gemini => "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.".into(),
            // bedrock_converse-06: it names the message that should hold the results.
            Dialect::BedrockConverse => format!("Expected toolResult blocks at messages.{}.content for the following Ids: {ids}", at + 1),
        }
    }

    /// `duplicate-call-id`.
    pub(super) fn duplicate(
        d: Dialect,
        call_id: &str,
        first: Ix,
        second: Ix,
        sub: Option<Ix>,
    ) -> Option<String> {
        match d {
            // openai_chat-12
            Dialect::OpenAiChat => Some(format!(
                "Invalid parameter: Duplicate value for 'tool_call_id' of '{call_id}', in messages[{first}] and messages[{second}]."
            )),
            // anthropic-11
            Dialect::Anthropic => Some(format!("messages.{second}.content.{}: `tool_use` ids must be unique", sub.unwrap_or(0))),
            // No recorded text for Converse.
            Dialect::OpenAiResponses | Dialect::Gemini | Dialect::BedrockConverse => None,
        }
    }
}
