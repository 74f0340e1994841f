//! Content: messages and blocks carry content where the API requires it, and the body has
//! the dialect's shape (`malformed`, found mostly by the dialect readers while they map
//! the wire onto the chain).

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::chain::{NodeKind, Role};
use crate::dialect::bedrock_converse::{
    document_name, document_name_fault, document_name_is_valid, DocumentNames,
};
use crate::dialect::Dialect;
use crate::repair::{Fixer, ERROR_WITHOUT_OUTPUT};
use crate::violation::{Defect, Rule, Severity, Violation};

use super::{Ctx, ProviderText, Repair, RuleSpec};

pub(crate) const EMPTY_CONTENT: RuleSpec = RuleSpec {
    id: "empty-content",
    summary: "a message, text block or part with no content, or an empty history",
    dialects: &[Dialect::OpenAiChat, Dialect::Anthropic, Dialect::Gemini, Dialect::BedrockConverse],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "xai",
            text: "Invalid request content: Each message must have at least one content element.",
            source: "provider-errors.jsonl openai_chat-31",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages: text content blocks must be non-empty",
            source: "provider-errors.jsonl anthropic-06",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.87.content.1.text: cache_control cannot be set for empty text blocks",
            source: "anthropics/claude-code#55302 and #54013 (an empty text block with a breakpoint, from a screenshot pasted without text); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.0: all messages must have non-empty content except for the optional final assistant message",
            source: "provider-errors.jsonl anthropic-08",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid value for 'content': expected a string, got null.",
            source: "provider-errors.jsonl openai_chat-20",
        },
        ProviderText {
            provider: "gemini",
            text: "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.",
            source: "provider-errors.jsonl gemini-07",
        },
        ProviderText {
            provider: "gemini",
            text: "* GenerateContentRequest.contents[33].parts[0].data: required oneof field 'data' must have one initialized field",
            source: "provider-errors.jsonl gemini-08",
        },
        ProviderText {
            provider: "vertex",
            text: "Unable to submit request because it must include at least one parts field, which describes the prompt input. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini",
            source: "provider-errors.jsonl gemini-06",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
            source: "provider-errors.jsonl openai_chat-35",
        },
        ProviderText {
            provider: "bedrock",
            text: "The text field in the ContentBlock object at messages.15.content.0 is blank. Add text to the text field, and try again.",
            source: "provider-errors.jsonl bedrock_converse-10",
        },
        ProviderText {
            provider: "anthropic",
            text: "text content blocks must contain non-whitespace text",
            source: "provider-errors.jsonl anthropic-16",
        },
        ProviderText {
            provider: "anthropic",
            text: "system: text content blocks must contain non-whitespace text",
            source: "agentjido/req_llm#711 (claude-sonnet-4-5, 2026), BoltAI/BoltAI#165, BerriAI/litellm#28706; no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.4.content.0.tool_result: content cannot be empty if `is_error` is true",
            source: "jlevy/markform#153 (claude-haiku-4-5 and sonnet-4-5, content [] or \"\", 2026); the same text from Claude on Bedrock for TRAE's `\"content\": \"\"` and from the Claude Agent SDK's permission-timeout result (`content=''`); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "bedrock",
            text: "The content field at messages.2.content.0.toolResult cannot be empty when status value is error.",
            source: "aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15 (a failed tool's toolResult built with `status: \"error\"` and no content, every later turn of the session refused); an empty content without an error status is taken (NousResearch/hermes-agent#55092, measured live); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "gemini",
            text: "contents is not specified",
            source: "provider-errors.jsonl gemini-10",
        },
        ProviderText {
            provider: "bedrock",
            text: "The conversation history that you provided is incorrectly formatted. The text in content block cannot be null or empty.",
            source: "provider-errors.jsonl bedrock_converse-11",
        },
    ],
    repair: Repair::Sometimes("Drops an empty or blank text block, an empty Gemini part, or a message with no content; in OpenAI chat, a null content on a user/system/tool message becomes \"\"; a Gemini part that kept only its thought signature gets an empty text so the signature survives; a blank Anthropic text block that carried a `cache_control` breakpoint hands it to the block before it in its message (which ends the same cached prefix) when that block can take one, and the report says when it cannot; blank text blocks inside an Anthropic tool_result go, and its content with them when nothing else is left (the content is optional), but an error tool_result (`is_error: true`) left with no content, or given none, gets the text \"Error: the tool failed and gave no output.\" and stays an error, as does a Converse toolResult with `status: \"error\"` and no content. An empty history (messages: [] or no contents) and a blank Anthropic system block are reported and left alone."),
    doc: "Anthropic rejects any message with empty content except an optional final assistant message, and any text block that is empty or white space only, in the messages, inside a tool_result's content (an empty tool output written as text: anthropic-06, nanobot#949) or in a `system` array (a `system` string is not judged), and an error tool_result (`is_error: true`) whose content is absent, null, \"\" or [] (markform#153: a failed or refused tool reported with nothing; a non-error tool_result may be empty); Gemini rejects a turn with no parts, a turn of only empty text parts, and a part that sets none of its data fields; OpenAI rejects a null content on user/system/tool messages and on an assistant message without tool calls; all three reject an empty history.\nMust not flag: an OpenAI assistant message with null content and tool_calls, a user content of \"\" (accepted), an Anthropic image-only user message, a tool_use-only assistant message, an empty final assistant message, a Gemini part that is an empty text carrying a thought signature.\nResponses has no such check. The catalog line says (anthropic, gemini) but the code checks OpenAI chat as well.\nFix: drop what is empty, keep signatures, set null to \"\"; an empty history cannot be filled without inventing a message.\nBedrock Converse: a blank text block anywhere (white space counts), and a message with no content blocks; the text for an empty list is not recorded. An empty toolResult content is the tool's output and is not flagged (NousResearch/hermes-agent#55092 measured `[]` and blank text there taken by Claude), unless the result has `status: \"error\"`: \"The content field at messages.N.content.0.toolResult cannot be empty when status value is error.\" (aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15); repair gives it the text \"Error: the tool failed and gave no output.\", as for Anthropic.\nUnder the xai profile: a message whose content is an empty list, or an empty string on a message without tool calls (openai_chat-31, crush#964); an assistant tool-call message with content \"\" is what xAI returns itself and is not flagged, nor is null. Reported only: no content to put there is known.",
    example: r#"{
  "model": "claude-sonnet-4-20250514",
  "max_tokens": 1024,
  "messages": [
    {
      "role": "user",
      "content": [
        {
          "type": "text",
          "text": "Summarize the attached notes."
        },
        {
          "type": "text",
          "text": "  "
        }
      ]
    },
    {
      "role": "assistant",
      "content": "Which notes? I see no attachment."
    },
    {
      "role": "user",
      "content": "Sorry, here: buy milk, call Ana."
    }
  ]
}"#,
    fix: Some(fill_or_drop_the_empty),
};

pub(crate) const TOOLS_UNDECLARED: RuleSpec = RuleSpec {
    id: "tools-undeclared",
    summary: "the history holds tool calls or results but the request declares no tools (Bedrock Converse `toolConfig`)",
    dialects: &[Dialect::BedrockConverse],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[ProviderText {
        provider: "bedrock",
        text: "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
        source: "provider-errors.jsonl bedrock_converse-05; dify#17545, kibana#246943, bedrock-access-gateway#239",
    }],
    repair: Repair::Never("The known workaround declares placeholder tools named after the calls in the history (strands-agents#998, bedrock-access-gateway#239). That offers the model tools the caller did not offer, so mend reports it and leaves the request alone: send the request with its `toolConfig`, or convert the old calls and results to text."),
    doc: "Converse refuses any request whose messages carry toolUse or toolResult blocks unless `toolConfig` is set, even when this turn should call no tool: summarization and compaction calls that replay a tool loop without its tools are the usual cause.\nThe check: any client or server call or result node in the history while the body has no (or a null) `toolConfig`. One finding, at the first such block.\nMust not flag: a request with a `toolConfig` (whatever its tools), a history without tool blocks.\nAnthropic's Messages API returned a like error in 2024 (\"Requests which include tool_use or tool_result blocks must define tools.\", anthropic-sdk-python#494); no current recording shows it, so the rule is not applied there.",
    example: r#"{
  "messages": [
    {"role": "user", "content": [{"text": "Weather in Paris?"}]},
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}]},
    {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "18C"}]}}]},
    {"role": "user", "content": [{"text": "Summarize the conversation."}]}
  ],
  "inferenceConfig": {"maxTokens": 256}
}"#,
    fix: None,
};

pub(crate) const CACHE_BREAKPOINTS: RuleSpec = RuleSpec {
    id: "cache-breakpoints",
    summary: "more than four blocks carry cache_control (Anthropic allows four cache breakpoints per request), or a thinking block carries one; a Converse cachePoint with nothing before it in its message, or right after a reasoning block",
    dialects: &[Dialect::Anthropic, Dialect::BedrockConverse],
    profiles: &[],
    severity: Severity::Error,
    provider_texts: &[ProviderText {
        provider: "anthropic",
        text: "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        source: "Anthropic.SDK#50, continue#6937, vellum-assistant#18023; Vertex too (envoyproxy/ai-gateway#1712)",
    }, ProviderText {
        provider: "anthropic",
        text: "messages.16.content.0.thinking.cache_control: Extra inputs are not permitted",
        source: "BerriAI/litellm#39815 (replayed Claude Code turns), router-for-me/CLIProxyAPI#714; no row in provider-errors.jsonl",
    }, ProviderText {
        provider: "bedrock",
        text: "There is nothing available to cache. Please remove the invalid cache point and try again.",
        source: "vercel/ai#19851 (an assistant message left with only its cachePoint, sent to live Converse), strands-agents/harness-sdk#3677 (`[cachePoint, text]` refused live on claude-sonnet-4-5, `[text, cachePoint]` taken); no row in provider-errors.jsonl",
    }, ProviderText {
        provider: "bedrock",
        text: "Cache point cannot be inserted after reasoning block. Please remove the invalid cache point and try again.",
        source: "anomalyco/opencode#36517 and #31687, strands-agents/harness-sdk#1820, 0xPlaygrounds/rig#1673, refly-ai/refly#1962 (Claude with thinking on Bedrock, a cachePoint appended after an assistant message's last block, a reasoningContent); no row in provider-errors.jsonl",
    }],
    repair: Repair::Sometimes("Converse: removes a cachePoint block that has nothing before it in its message or that follows a reasoningContent block, as the service asks (a cache point is a hint: the conversation is unchanged, only that cache write is lost; a message left empty goes by empty-content). Removes `cache_control` from a thinking or redacted_thinking block (the block is then as the API sent it). Removes `cache_control` from the earliest breakpoints until four are left. The cache reads the request as tools, then system, then messages, and a breakpoint caches everything before it, so each removed breakpoint's prefix is still inside a later one's; only the cheaper hits on the shorter prefixes are lost. Breakpoints nested inside a tool_result's content are counted but not moved: when they alone exceed the limit, the finding stays."),
    doc: "Anthropic counts every block that carries `cache_control` in the request (tool definitions, system blocks, message content blocks, including blocks inside a tool_result's content) and refuses more than four. Agents that mark the system prompt, the tools and the last few user turns go over as the conversation grows (continue#6937, vellum-assistant#18023).\nA thinking or redacted_thinking block takes no `cache_control` at all: \"messages.16.content.0.thinking.cache_control: Extra inputs are not permitted\" (BerriAI/litellm#39815, router-for-me/CLIProxyAPI#714: a cache marker put on the last block of an assistant message that was a thinking block). Such a marker is reported on its own and not counted.\nThe check counts the breakpoints the reader found and reports one finding at the fifth.\nMust not flag: four or fewer, `cache_control: null`.\nBedrock Converse: a `cachePoint` block caches the blocks before it in its own message, so one that is the first block of its message (a message of nothing but a cachePoint included) is refused: \"There is nothing available to cache. Please remove the invalid cache point and try again.\" (vercel/ai#19851: an aborted thinking turn whose unsigned reasoning was filtered out, leaving `[{cachePoint}]`; strands-agents/harness-sdk#3677, measured live: `[cachePoint, text]` refused, `[text, cachePoint]` taken). One right after a reasoningContent block is refused too: \"Cache point cannot be inserted after reasoning block. Please remove the invalid cache point and try again.\" (opencode#36517, strands#1820, rig#1673: a cache marker appended to an assistant message whose last block was its reasoning). Must not flag: a cachePoint after a text, image, document, toolUse or toolResult block; system cachePoints (the system list is not a message). Not checked: a cachePoint right after a non-PDF document (strands#1966 saw \"messages.0.content.3.type: Field required\", opencode#29728 \"There is nothing available to cache\" for a message of files only: the reports disagree on the shape), and the count of cachePoints, whose text is not recorded.",
    example: r#"{
  "model": "claude-sonnet-4-5",
  "max_tokens": 1024,
  "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
  "messages": [
    {"role": "user", "content": [{"type": "text", "text": "one", "cache_control": {"type": "ephemeral"}}]},
    {"role": "assistant", "content": [{"type": "text", "text": "two", "cache_control": {"type": "ephemeral"}}]},
    {"role": "user", "content": [{"type": "text", "text": "three", "cache_control": {"type": "ephemeral"}}]},
    {"role": "assistant", "content": [{"type": "text", "text": "four"}]},
    {"role": "user", "content": [{"type": "text", "text": "five", "cache_control": {"type": "ephemeral"}}]}
  ]
}"#,
    fix: Some(keep_four_breakpoints),
};

pub(crate) const MALFORMED: RuleSpec = RuleSpec {
    id: "malformed",
    summary: "the body does not have the dialect's shape (wrong type, missing or unknown field), or a field the chosen provider rejects",
    dialects: super::ALL_DIALECTS,
    profiles: &["groq", "cerebras", "fireworks", "xai", "openai", "azure"],
    severity: Severity::Error,
    provider_texts: &[
        ProviderText {
            provider: "openai",
            text: "Invalid 'messages[234]'. Image URLs are only allowed for messages with role 'user', but this message with role 'tool' contains an image URL.",
            source: "https://github.com/OpenHands/OpenHands/issues/7700 (role 'assistant': https://github.com/openai/openai-node/issues/1030); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "gemini",
            text: "Unable to submit request because `function_response.parts` is not supported for this model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling",
            source: "https://github.com/google-gemini/gemini-cli/issues/19436 (Gemini 2.5); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid value: 'file'. Supported values are: 'text', 'refusal', 'image_url', and 'input_audio'.",
            source: "https://github.com/epam/ai-dial-adapter-openai/issues/434 (a file part in a tool message, param messages[9].content[1]); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid 'input[15].arguments': string too long. Expected a string with maximum length 1048576, but got a string with length 1524940 instead.",
            source: "https://github.com/openai/codex/issues/13270; no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "bedrock",
            text: "The format of the value at messages.28.content.0.toolResult.content.0.json is invalid. Provide a json object for the field and try again.",
            source: "haystack-core-integrations#3766, aws-sdk-js-v3#7330; the same wording for toolUse.input in vercel/ai#19023",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.",
            source: "provider-errors.jsonl openai_chat-08",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages: final assistant content cannot end with trailing whitespace",
            source: "provider-errors.jsonl anthropic-12",
        },
        ProviderText {
            provider: "bedrock",
            text: "The model returned the following errors: messages: final assistant content cannot end with trailing whitespace",
            source: "https://github.com/aws/aws-sdk-net/pull/4015 (Converse, a Claude model); langchain-aws#599 (Invoke and Converse); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid 'messages[69].tool_calls[0].function.name': empty string. Expected a string with minimum length 1, but got an empty string instead.",
            source: "provider-errors.jsonl openai_chat-22",
        },
        ProviderText {
            provider: "groq",
            text: "'messages.0' : for 'role:user' the following must be satisfied[('messages.0' : property 'timestamp' is unsupported)]",
            source: "provider-errors.jsonl openai_chat-15",
        },
        ProviderText {
            provider: "xai",
            text: "Only messages of role 'user' can have a name.",
            source: "provider-errors.jsonl openai_chat-21",
        },
        ProviderText {
            provider: "fireworks",
            text: "3 request validation errors: Extra inputs are not permitted, field: 'messages[7].tool_calls[0].approxNumTokens', value: 0; Extra inputs are not permitted, field: 'messages[7].tool_calls[1].approxNumTokens', value: 0; Extra inputs are not permitted, field: 'messages[7].tool_calls[2].approxNumTokens', value: 0",
            source: "provider-errors.jsonl openai_chat-23",
        },
        ProviderText {
            provider: "bedrock",
            text: "Unknown parameter in messages[N].content[M].reasoningContent: \"text\", must be one of: reasoningText, redactedContent",
            source: "provider-errors.jsonl bedrock_converse-14",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.1.content.1.tool_use.input: Field required",
            source: "go-anthropic#67, mastra#11376, gptel#1281",
        },
        ProviderText {
            provider: "openai",
            text: "Missing required parameter: 'input[42].id'.",
            source: "openai/codex#6926, #6725, #6934, #6937",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.",
            source: "anomalyco/opencode#10803 (Responses input with a chat `tool` message); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Unknown parameter: 'input[3].tool_calls'.",
            source: "openai/openai-python#2677 (a chat assistant message with tool_calls sent to /v1/responses); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.",
            source: "tinyhumansai/openhuman#3624 (param input[3].content[0]: an assistant message with an input_text part); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid value: 'text'. Supported values are: 'input_text', 'input_image', 'input_audio', 'output_text', 'refusal', 'input_file', 'computer_screenshot', 'summary_text', and 'encrypted_content'.",
            source: "MervinPraison/PraisonAI#3934 (param input[0].content[0].type: chat messages appended to Responses input unchanged); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.0.content.2: Input tag 'image_url' found using 'type' does not match any of the expected tags: 'document', 'image', 'redacted_thinking', 'search_result', 'server_tool_use', 'text', 'thinking', 'tool_result', 'tool_use', 'web_search_tool_result'",
            source: "AstrBotDevs/AstrBot#4444 (history kept in OpenAI's part shapes); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "bedrock",
            text: "This model doesn't support the s3Uri field. Remove s3Uri and try again.",
            source: "recorded: ../shared/fixtures-bedrock-converse/pydantic-ai--multimodal-tool-return-tool-return-content-uploaded-file-image-bedrock-claude-02 (an S3 image sent to Claude Sonnet 4.5 on Converse); the Converse supported-models table (docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-supported-models-features.html: S3 links for multimedia, Nova Premier, Pro and Lite only); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "anthropic",
            text: "messages.7.content.0.tool_result.content.0: Input tag 'input_text' found using 'type' does not match any of the expected tags: 'document', 'image', 'search_result', 'text'",
            source: "a production rejection quoted in the source of a gateway that carries histories across APIs (its list abridged there; the full list from the same text recorded for a beta `tool_reference` part sent without its beta, cited with anthropics/claude-code#11678); NanmiCoder/cc-haha#1255 (tool_result content parts written as input_text/output_text); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Invalid 'messages[2].name': string does not match pattern. Expected a string that matches the pattern '^[^\\s<|\\\\/>]+$'.",
            source: "langchain-ai/langchain#35054 (an agent's name with spaces); the older pattern '^[a-zA-Z0-9_-]+$' in microsoft/semantic-kernel#9340, microsoft/autogen#3582; no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Missing required parameter: 'messages[2].tool_calls[0].type'.",
            source: "langchain-ai/langchain-azure#35 (Azure; tool calls generated without `type`); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "bedrock",
            text: "1 validation error detected: Value at 'messages.1.member.content.2.member.image.format' failed to satisfy …",
            source: "NousResearch/hermes-agent#55429 (measured live on claude-sonnet-4-5: `jpeg` taken, `jpg`, `JPEG`, `tiff`, `bmp`, `svg+xml` refused; the report cuts the text there, and the code renders the rest as AWS's enum constraint with the ImageBlock reference's values); no row in provider-errors.jsonl",
        },
        ProviderText {
            provider: "openai",
            text: "Missing required parameter: 'messages[1].tool_calls[1].function.arguments'",
            source: "mark3labs/mcphost#117; DeepSeek: \"Failed to deserialize the JSON body into the target type: messages[2]: missing field `arguments`\" (neuron-core/neuron-ai#498); no row in provider-errors.jsonl",
        },
    ],
    repair: Repair::Sometimes("Removes an empty tool_calls array from an OpenAI chat assistant message, writes a chat call's `function.arguments` object as its JSON text, and trims trailing white space from a final assistant prefill for Claude (Anthropic, and Converse when the model is Claude). Every other shape problem is reported and left alone, and while a history item's shape is unreadable no other rule's fix runs either: what they found may be a misreading of it (a numeric call id read as none, a `tool_calls` object as no calls). A body with no history at all (not an object, or no history key) is a usage error for the CLI (exit 2); a history key of the wrong type is this finding. Converse: a toolUse input given as its JSON text becomes the object; a toolResult json value that is not an object is sent as text. Responses: a chat `tool` message becomes the function_call_output item it stands for, a chat message's `tool_calls` become function_call items (its text stays a message), an assistant's input_text part becomes output_text, and a chat `text` part becomes input_text (output_text in an assistant's message) and a chat `image_url` part input_image. Anthropic: an OpenAI `image_url` (or Responses `input_image`) part given by a data URL of an image type or an http(s) URL becomes an `image` block, an `input_text` / `output_text` part a `text` block, in a message or inside a tool_result's content. OpenAI chat: another API's `image` block (Anthropic's `source`, LangChain's standard block) that names an image by its bytes of an image type or an http(s) URL, and says nothing more, becomes an `image_url` part (a `document` block is reported only: a chat `file` part needs a file name); a tool call without `type` gets the type of the object it holds (\"function\"); one without `function.arguments` is reported only; under the openai and azure profiles a message's `name` with white space or `<|\\/>` in it has each such character written as `_`, and a tool message's file parts (and image parts, for the GPT-4o, GPT-4 and GPT-3.5 families) move, in order, into one user message right after the tool results (a result left with no part keeps an empty text); an assistant's or a system message's image is reported only."),
    doc: "Each dialect reader reports shapes it cannot read (a value of the wrong type, a block or part without its type, a missing required field) as malformed with a JSON pointer, instead of failing.\nAlso reported here: an OpenAI chat `tool_calls: []` and an empty function name, an Anthropic final assistant prefill ending in white space (through Converse too, when the model is Claude: \"The model returned the following errors: messages: final assistant content cannot end with trailing whitespace\", aws/aws-sdk-net#4015; repair trims it), and under strict profiles the fields a provider rejects: groq and cerebras unknown message fields (e.g. reasoning_content, timestamp), fireworks unknown tool call fields, xai a name on a non-user message.\nResponses (openai and azure profiles) also: a call's `arguments` over 1,048,576 characters (\"Invalid 'input[15].arguments': string too long. Expected a string with maximum length 1048576, but got a string with length 1524940 instead.\", https://github.com/openai/codex/issues/13270, several sessions that replayed a large file write in every later request); reported only, as no shorter call is the one the model made.\nMust not flag: unknown fields under the generic profile (kept verbatim), Anthropic document and image blocks, Gemini fileData and code-execution parts, Responses input as a plain string.\nThe code quotes Groq's wording for Cerebras too; the Cerebras row (openai_chat-33) reads \"messages.2.assistant.reasoning_content: property '…' is unsupported\". The empty tool_calls row (openai_chat-08) matches but is not quoted (the finding has no provider text).\nFix: only the two safe edits above; everything else needs the client fixed.\nBedrock Converse: a content block is a union that sets exactly one member (text, toolUse, toolResult, reasoningContent, image, document, video, cachePoint, guardContent, citationsContent); content is always a list; reasoningContent is reasoningText {text, signature} or redactedContent.\nOpenAI chat also: `function.arguments` that is not a string (an object stored parsed: OpenAI's type error, its wording for wrong types; repair writes the JSON text), and content parts of another dialect (Anthropic tool_use, tool_result, thinking, server tool blocks; Responses input_text, output_text, input_image, input_file, function_call) with OpenAI's enum error wording (the exact text for these types is not recorded; qwen-code#1888 shows a compatible API's instance). Types chat-compatible APIs add (video_url, document_url, ...) are not flagged. Anthropic's `image` and `document` blocks, and LangChain's standard `image` block, kept in a chat history are flagged with the same enum wording (a recorded instance, with the older list of part types: \"Invalid value: 'image'. Supported values are: 'text' and 'image_url'.\", https://github.com/aallam/openai-kotlin/issues/320; \"400 Invalid value: 'image'\" for an image tool result, https://github.com/langchain-ai/langchainjs/issues/11684).\nAnthropic also: a missing or non-integer `max_tokens` (\"max_tokens: Field required\", the API's validation wording; every deployment, Vertex and Bedrock InvokeModel included, requires it). Reported, never filled in: the limit is the caller's choice.\nAnthropic and Converse also: an image whose declared type (`source.media_type`, Converse's `format`) is not the one its first bytes prove (JPEG, PNG, GIF or WebP), in a message or inside a tool result: \"The image was specified using the image/png media type, but the image appears to be a image/jpeg image\" (recorded by gateways' tests and by Bedrock users after the service began checking); repair declares what the bytes are. Bytes that prove none of the four are left to the provider. Converse also: an image `format` that is not one of the four names it takes, lowercase (`jpg`, `JPEG`, `image/png`, `tiff`: hermes-agent#55429, measured live); repair declares what the bytes are, or, when the bytes are not in the body (an S3 location), the name the label gives one of the four (`jpg` is jpeg); any other label is reported only.\nConverse also: a document name the service refuses (a character other than ASCII letters and digits, single spaces, `-`, `_`, `()` and `[]`, two spaces in a row, more than 200 characters: vercel/ai#20365, simonw/llm-bedrock#8; underscores are accepted though the text does not list them) or one an earlier document of the request already has (\"Messages can't contain duplicate document names.\", maximhq/bifrost#7003, langchain-aws#963), in a message or inside a toolResult; repair renames the document (the extension that repeats its format dropped, refused characters as one space, `document` when nothing is left, a repeated name numbered ` (2)`): a file's name is a label, and its content is untouched.\nConverse also, when the model (from the URL, or `--model`) is Claude: an image or document given by an S3 location (`source.s3Location`), in a message or inside a toolResult: \"This model doesn't support the s3Uri field. Remove s3Uri and try again.\" (recorded: the Claude Sonnet 4.5 exchange of pydantic-ai's multimodal tool-return cassettes in ../shared/fixtures-bedrock-converse; the Converse supported-models table marks S3 links for multimedia as Nova Premier, Pro and Lite only). Reported only, at the `s3Location`: the bytes are not in the body, and dropping the media loses it. Must not flag: S3 media for Nova or a model not given (other models' support is not recorded here), media given by bytes.\nConverse also: a `toolUse.input` that is not an object (vercel/ai#19023; repair writes the object when the string is its JSON text, else reports) and a toolResult `json` member that is not an object (haystack-core-integrations#3766, aws-sdk-js-v3#7330; repair sends the value as text), both answered \"The format of the value at … is invalid. Provide a json object for the field and try again.\"\nAnthropic also: a tool_use (or server tool) input that is not an object (\"messages.N.content.M.tool_use.input: Input should be a valid dictionary\", claude-code#6696, anthropic-sdk-typescript#648); repaired like Converse's.\nGemini also: `functionCall.args` and `functionResponse.response` are protobuf Structs, so a string, number or list there is refused (\"Invalid value at '…function_response.response' (type.googleapis.com/google.protobuf.Struct)\", AstrBot#7216; a list: \"Proto field is not repeating, cannot start list.\", vercel/ai#3589, symfony/ai#2040); repair writes args given as their JSON text as the object, and puts a non-object response under `result`, as Google's SDKs do.\nGemini also, when the model (from the URL, or `--model`) is one before Gemini 3 (1.0, 1.5, 2.0, 2.5): media nested in a function response (`functionResponse.parts` with inlineData or fileData, Gemini 3's multimodal function responses): \"Unable to submit request because `function_response.parts` is not supported for this model.\" (gemini-cli#19436 on Gemini 2.5; bifrost#4202 drops such media for gemini-2.5-flash to avoid the 400). Reported only, at the `parts`: where an earlier model should get the tool's image instead is the application's choice. Must not flag: the same on Gemini 3, or with no model given.\nOpenAI also: a tool's output given as an object (chat `tool` content, Responses `function_call_output.output`): \"Invalid type for 'messages[2].content': expected one of a string or array of objects, but got an object instead.\" (paperless-ai#748, nanobot#1344); repair writes its JSON text. Any other message's object content is reported only.\nResponses also: a `tool_search_call`'s `arguments` written as JSON text: unlike a function call's, a tool search's arguments are an object (\"Invalid type for 'input[40].arguments': expected an object, but got a string instead.\", Wei-Shaw/sub2api#3818, Codex histories through a relay); repair writes the object when the string is its JSON text, else reports. Must not flag: a function_call's arguments as text (the form it takes), a tool search's arguments as an object.\nAnthropic also: a tool_result whose `content` is neither a string nor a list of blocks (the tool-use docs: \"The result of the tool, as a string … or list of nested content blocks\"), such as a tool's returned object kept as it was; repair writes an object as its JSON text, as for OpenAI, and reports any other value.\nEvery dialect also: a call's or result's id that is not a string (chat `tool_calls[].id` and `tool_call_id`, Responses `call_id`, Anthropic `id` and `tool_use_id` of client, server and MCP tool blocks, Converse `toolUseId`, Gemini's optional `functionCall.id` and `functionResponse.id`, Responses `approval_request_id`) and a Responses item's own `id` (`fc_…`, `msg_…`, `rs_…`, a server call's): \"… is a number but must be a string\" at the id's pointer, the one finding (the chain marks the id as there, `id_mistyped`, so no rule also calls the call or result id-less). Null is no id. The call and its results are there, unreadable, so nothing is repaired while it stands.\nAnthropic also: a `tool_use` block without `input` (\"messages.1.content.1.tool_use.input: Field required\": a serializer that leaves out an empty value, go-anthropic#67, mastra#11376, gptel#1281). Reported only: the arguments are not known (`{}` is the usual loss, not the only one); the other rules still run.\nResponses also: a server tool call item (`web_search_call`, `file_search_call`, `code_interpreter_call`, `image_generation_call`, `mcp_call`, `mcp_list_tools`) sent back without its own `id`, which OpenAI's reference marks required (\"Missing required parameter: 'input[42].id'.\", openai/codex#6926 and #6725, #6934, #6937: web search items a coding agent sent back without their ids). Reported only: the id is the one the provider gave; the other rules still run.\nResponses also: a `function_call_output` or `custom_tool_call_output` without its required `output` (or a null one), the shape a store that drops empty strings leaves: \"Missing required parameter: 'input[2].output'.\", OpenAI's wording for a missing field (the exact row is not recorded; vLLM's Responses server refuses the same item, vllm#41355). Repair sets it to an empty string, as chat's null tool content is sent: the output is not known, and an empty one says no more than the item did.\nGemini, Converse and Anthropic also: tool calls in a turn that is not the model's (a Gemini content of role `user` or with no role, which Gemini reads as the user's; a Converse or Anthropic `user` message): the turn is misread (a role lost in a store or rewritten by a converter), so it is reported at its `role` and left, and no other rule's fix runs on it: answering and dropping around a misread turn would invent results and lose the real ones. (Results in the model's turn are tool-result-not-adjacent's: they answer their calls by id, so moving them guesses nothing.)\nResponses also: chat-completions shapes in `input` (a history carried over from chat): a `tool` message (\"Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.\", opencode#10803), an assistant message's `tool_calls` (\"Unknown parameter: 'input[3].tool_calls'.\", openai-python#2677), read as the results and calls they are so pairing judges them; and an `input_text` part in an assistant message (\"Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.\", openhuman#3624). Repair writes each as the items the API takes, nothing dropped, when the ids, names and outputs read as such; a tool message without its `tool_call_id` is reported only.\nResponses also: chat-completions content parts in a message (`text`, `image_url`: PraisonAI#3934, \"Invalid value: 'text'. Supported values are: 'input_text', 'input_image', …\"); repair writes `text` as `input_text` (`output_text` in an assistant's message) and `image_url` as `input_image` with its URL and detail; an image in an assistant's message is reported only (an assistant message takes no image part).\nAnthropic also: content parts of another API (OpenAI chat's `image_url`, `input_audio`, `refusal`; the Responses API's `input_text`, `output_text`, `input_image`, `input_file`, `summary_text`, `function_call`, `function_call_output`; the AI SDK's `reasoning`, `tool-call`, `tool-result`, `file`): \"Input tag 'image_url' found using 'type' does not match any of the expected tags: …\" (AstrBot#4444). Repair writes a text part as a `text` block and an image given by a data URL (jpeg, png, gif, webp) or an http(s) URL as an `image` block; the others are reported only. Types the Messages API adds are not in the list, so they are never flagged.\nAnthropic also: the same part types inside a `tool_result`'s content, which takes only `text`, `image`, `document` and `search_result` blocks (and beta types such as `tool_reference`): \"messages.7.content.0.tool_result.content.0: Input tag 'input_text' found using 'type' does not match any of the expected tags: 'document', 'image', 'search_result', 'text'\" (a production rejection quoted in a cross-API gateway's source; the same text recorded for a `tool_reference` sent without its beta, cited with anthropics/claude-code#11678; NanmiCoder/cc-haha#1255): a tool's output kept in OpenAI's shapes. One finding per part at its `type`; repair writes the text and image parts as their blocks, all of the result's at once, and reports the others (an `input_file` names OpenAI's file, not a document the API can read). Must not flag: text, image, document, search_result, tool_reference or any type not in the list.\nOpenAI chat also: a tool call without `type` (\"Missing required parameter: 'messages[2].tool_calls[0].type'.\", langchain-azure#35), set from the object it holds; a tool call whose `function` has no `arguments` (\"Missing required parameter: 'messages[1].tool_calls[1].function.arguments'\", mcphost#117; DeepSeek's \"missing field `arguments`\", neuron-ai#498), reported only: what the arguments were is not known; the other rules still run.\nOpenAI chat also, under the openai and azure profiles: a participant's `name` (user, assistant, system, developer) with white space or one of `<|\\/>` (\"Invalid 'messages[2].name': string does not match pattern. Expected a string that matches the pattern '^[^\\s<|\\\\/>]+$'.\", langchain#35054; the older `^[a-zA-Z0-9_-]+$` in semantic-kernel#9340, autogen#3582): an agent's name kept on its messages. Repair writes each refused character as `_`; tool and function messages' names are not checked (they name calls).\nOpenAI chat also, under the openai and azure profiles: a `file` part in a tool message, whatever the model (\"Invalid value: 'file'. Supported values are: 'text', 'refusal', 'image_url', and 'input_audio'.\", epam/ai-dial-adapter-openai#434), and, for the GPT-4o, GPT-4 and GPT-3.5 families, an `image_url` part in any message other than a user message (\"Invalid 'messages[234]'. Image URLs are only allowed for messages with role 'user', but this message with role 'tool' contains an image URL.\", OpenHands#7700, a screenshot tool's result; role 'assistant' for a generated image with gpt-4o-mini, openai-node#1030). Later models take an image there without an error (GPT-4.1 in an assistant message, llama_index#18478; GPT-5.2 in a tool message, openai-openapi#523), but do not read a tool message's image (langchainjs#8663, openai-openapi#523): for them a tool message's image is a warning, and an assistant's is not judged. Repair moves a tool message's refused parts, in order, into one user message right after the last tool result of the run (the workaround of OpenHands#10200), the text staying in the result and a result left with no part getting an empty text; it waits while another finding of the run is fixed. An assistant's or a system message's image is reported only: where it should go is the application's choice. Must not flag: media in user messages, media outside user messages under the generic profile (servers that render a tool's image into the prompt take it, antirez/ds4#944), audio parts (no refusal recorded), another API's `image` block (its own finding; once written as `image_url` it is judged here).\nGemini also: a field a functionCall or functionResponse does not have (Gemini reads the request as a protobuf message: \"Invalid JSON payload received. Unknown name \\\"content\\\" at 'contents[1].parts[0].function_response': Cannot find field.\", hexstrike-ai#70, a tool's output under chat's `content`). Reported only, and the other rules still run: what the field meant is not known. Known fields: id, name, args, partialArgs, willContinue; id, name, response, parts, willContinue, scheduling (both casings).\nAnthropic, Converse, Responses and Gemini also: a call without its name (Anthropic `tool_use.name`, Converse `toolUse.name`, Responses `function_call.name`, Gemini `functionCall.name`: each API's reference marks it required; no exact text is recorded), from a store that kept a call's id and arguments but not its tool. Reported only, and while the call stands no fix runs: which tool was called is not known, and in Gemini, which pairs a call and its response by name, the response would otherwise be dropped as an orphan (the turn and the one after it are kept out of pairing's findings). An empty Anthropic or Converse name is `invalid-call-id`'s, a Gemini response without a name too (\"function_response.name: Name cannot be empty.\").\nOpenAI chat (groq profile) also: a system or assistant message whose content is a list of parts, where Groq's schema takes a string (\"'messages.0' : for 'role:system' the following must be satisfied[('messages.0.content' : value must be a string)]\", provider-errors.jsonl openai_chat-16, OpenHands#4643, powershai#39; the assistant's in tidyverse/ellmer#162). Repair writes one text part (with nothing else on it) as the string; several parts are reported only, as how to join them is a guess. Must not flag: a user message's list of parts (Groq's vision models take images there), any of these under another profile.",
    example: r#"{
  "model": "gpt-4o",
  "messages": [
    {
      "role": "user",
      "content": "Hi there"
    },
    {
      "role": "assistant",
      "content": "Hello! How can I help?",
      "tool_calls": []
    },
    {
      "role": "user",
      "content": "What's 2+2?"
    }
  ]
}"#,
    fix: Some(reshape_the_known_defects),
};

// ---------------------------------------------------------------------------------------
// The checks.

/// Messages and blocks carry content where the API requires it.
pub(crate) fn content_is_not_empty(ctx: &Ctx, out: &mut Vec<Violation>) {
    let history = ctx.history();
    if ctx.chain.facts.history_is_array && history.is_empty() {
        history_is_empty(ctx, out);
    }
    if ctx.dialect == Dialect::Anthropic {
        system_blocks_are_not_blank(ctx, out);
    }
    let last = history.last().copied();
    for &t in history {
        match ctx.dialect {
            Dialect::OpenAiChat => chat_message_is_not_empty(ctx, t, out),
            Dialect::Anthropic => anthropic_message_is_not_empty(ctx, t, Some(t) == last, out),
            Dialect::Gemini => gemini_turn_is_not_empty(ctx, t, out),
            Dialect::BedrockConverse => converse_message_is_not_empty(ctx, t, out),
            Dialect::OpenAiResponses => {}
        }
    }
}

/// An empty history array (Responses takes an empty input).
fn history_is_empty(ctx: &Ctx, out: &mut Vec<Violation>) {
    let key = ctx.dialect.history_key();
    let text = match ctx.dialect {
        Dialect::OpenAiResponses => return,
        Dialect::OpenAiChat => "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        Dialect::Anthropic => "messages: at least one message is required",
        // Not recorded for Converse; AWS's validation of the list's minimum length.
        Dialect::BedrockConverse => "Value at 'messages' failed to satisfy constraint: Member must have length greater than or equal to 1",
        Dialect::Gemini => "contents is not specified",
    };
    out.push(
        Violation::error(
            Rule::EmptyContent,
            crate::chain::Ptr::root(key).render(),
            format!("`{key}` is empty: the request has no history to answer"),
        )
        .provider(Some(text.into())),
    );
}

/// OpenAI chat: null content where the API wants some, and (xai) `""` or `[]`.
fn chat_message_is_not_empty(ctx: &Ctx, t: usize, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let turn = &chain.turns[t];
    let nodes = chain.turn_nodes(t);
    let path = turn.ptr;
    let has = |f: fn(&NodeKind) -> bool| nodes.iter().any(|n| f(&n.kind));
    let empty = turn.empty
        && match turn.role {
            Role::Assistant => {
                !has(|k| matches!(k, NodeKind::Call { .. } | NodeKind::Reasoning { .. }))
            }
            Role::User | Role::System | Role::Developer | Role::Tool => true,
            Role::Other(_) => false,
        };
    if empty {
        out.push(
            ctx.at_turn(
                Rule::EmptyContent,
                t,
                format!("{path} ({}) has no content", turn.wire),
            )
            .provider(Some(
                "Invalid value for 'content': expected a string, got null.".into(),
            )),
        );
    } else if ctx.profile.content_required
            && chain.facts.empty_contents.contains(&t)
            // xAI itself answers a tool call with `content: ""`; an empty list, or
            // an empty string with no call, is what it was seen refusing.
            && !(turn.role == Role::Assistant
                && !turn.empty
                && has(|k| matches!(k, NodeKind::Call { .. })))
    {
        // openai_chat-31
        out.push(
                ctx.at_turn(
                    Rule::EmptyContent,
                    t,
                    format!("{path} ({}) has an empty content; {} needs at least one content element in every message", turn.wire, ctx.profile.name),
                )
                .provider(Some(
                    "Invalid request content: Each message must have at least one content element.".into(),
                ))
                .with_defect(Defect::ContentRequired),
            );
    }
}

/// Anthropic: a text block of the top-level `system` array that is empty or white space
/// only (req_llm#711, BoltAI#165, litellm#28706). A `system` string is not judged: no
/// rejection of a blank one is recorded.
fn system_blocks_are_not_blank(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    for t in chain.turns_under("system") {
        for (k, n) in chain.turn_nodes(t).iter().enumerate() {
            if matches!(n.kind, NodeKind::Text { blank: true }) && n.ptr.item_index().is_some() {
                let p = n.ptr.render();
                out.push(
                    ctx.at_node(
                        Rule::EmptyContent,
                        chain.turns[t].first() + k,
                        format!("the system text block at {p} is empty or only white space"),
                    )
                    .provider(Some(
                        "system: text content blocks must contain non-whitespace text".into(),
                    )),
                );
            }
        }
    }
}

/// An Anthropic block dropped for being empty that carried a `cache_control` breakpoint:
/// the breakpoint goes to the block before it in its message, which ends the same cached
/// prefix (the empty block added nothing to it), when that block can carry one and has
/// none; otherwise it is lost with the block, and the report says so.
fn keep_the_breakpoint_of_a_dropped_block(fx: &mut Fixer, v: &Violation, n: usize) {
    let chain = fx.chain();
    let ptr = chain.nodes[n].ptr;
    if fx.dialect() != Dialect::Anthropic || !chain.facts.cache_points.contains(&ptr) {
        return;
    }
    let Some(mark) = fx.value_of(n).and_then(|b| b.get("cache_control")).cloned() else {
        return;
    };
    let before = n
        .checked_sub(1)
        .filter(|&p| chain.nodes[p].turn() == chain.nodes[n].turn());
    let takes_it = |p: usize| {
        let kinds = [
            "text",
            "image",
            "document",
            "search_result",
            "tool_use",
            "tool_result",
        ];
        matches!(
            chain.nodes[p].kind,
            NodeKind::Text { blank: false }
                | NodeKind::Media
                | NodeKind::Call { .. }
                | NodeKind::Result { .. }
        ) && fx.value_of(p).is_some_and(|b| {
            b.get("cache_control").is_none()
                && b.get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| kinds.contains(&t))
        })
    };
    match before.filter(|&p| takes_it(p)) {
        Some(p) if fx.claim(p) && fx.set_field(chain.nodes[p].ptr, "cache_control", Some(mark)) => {
            let detail = "moved the dropped block's cache_control breakpoint to the block before it, which ends the same cached prefix";
            fx.note(v.rule, chain.nodes[p].ptr.render(), "set", detail.into());
        }
        _ => {
            let detail = "the dropped block's cache_control breakpoint is lost with it: no block before it in its message can take it";
            fx.note(v.rule, v.path.clone(), "drop", detail.into());
        }
    }
}

/// Anthropic: no empty message but an optional final assistant one, no blank text block.
fn anthropic_message_is_not_empty(ctx: &Ctx, t: usize, is_last: bool, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let turn = &chain.turns[t];
    let nodes = chain.turn_nodes(t);
    let path = turn.ptr;
    let ix = ctx.turn_ix(t);
    let final_assistant = is_last && turn.role == Role::Assistant;
    if turn.empty && !final_assistant {
        out.push(
                ctx.at_turn(Rule::EmptyContent, t, format!("{path} ({}) has no content", turn.wire))
                    .provider(Some(format!("messages.{ix}: all messages must have non-empty content except for the optional final assistant message")))
            );
    } else if !final_assistant {
        for (k, n) in nodes.iter().enumerate() {
            let blank = "messages: text content blocks must be non-empty";
            let (message, provider) = match n.kind {
                // A breakpoint on the block: the API names that first
                // (claude-code#55302, #54013: a pasted screenshot with no text).
                NodeKind::Text { blank: true } if chain.facts.cache_points.contains(&n.ptr) => (
                    format!("the text at {} is empty or only white space, and carries a cache_control breakpoint", n.ptr),
                    format!("messages.{ix}.content.{}.text: cache_control cannot be set for empty text blocks", n.ptr.sub_index().unwrap_or(0)),
                ),
                NodeKind::Text { blank: true } => (
                    format!("the text at {} is empty or only white space", n.ptr),
                    blank.to_string(),
                ),
                NodeKind::Result {
                    blank_text: true, ..
                } => (format!(
                    "the tool_result at {} holds a text block that is empty or only white space (an empty tool output written as text)",
                    n.ptr
                ), blank.to_string()),
                NodeKind::Result {
                    empty_error: true, ..
                } => (format!(
                    "the tool_result at {} is an error (`is_error: true`) with no content",
                    n.ptr
                ), format!(
                    "messages.{ix}.content.{}.tool_result: content cannot be empty if `is_error` is true",
                    n.ptr.sub_index().unwrap_or(0)
                )),
                _ => continue,
            };
            out.push(
                ctx.at_node(Rule::EmptyContent, turn.first() + k, message)
                    .provider(Some(provider)),
            );
        }
    }
}

/// Gemini: no turn without parts, of blank text only, or with a part that sets nothing.
fn gemini_turn_is_not_empty(ctx: &Ctx, t: usize, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let turn = &chain.turns[t];
    let nodes = chain.turn_nodes(t);
    let path = turn.ptr;
    let ix = ctx.turn_ix(t);
    let all_blank = !nodes.is_empty()
        && nodes
            .iter()
            .all(|n| matches!(n.kind, NodeKind::Text { blank: true }));
    if all_blank {
        out.push(
                ctx.at_turn(Rule::EmptyContent, t, format!("{path} holds only empty text parts"))
                    .provider(Some("Unable to submit request because it must include at least one parts field, which describes the prompt input. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini".into()))
            );
    }
    if turn.empty {
        out.push(
                ctx.at_turn(Rule::EmptyContent, t, format!("{path} has no parts"))
                    .provider(Some(format!("* GenerateContentRequest.contents[{ix}].parts: contents.parts must not be empty.")))
            );
    }
    for (k, n) in nodes.iter().enumerate() {
        if matches!(n.kind, NodeKind::Empty) {
            let p = n.ptr.render();
            out.push(
                    ctx.at_node(Rule::EmptyContent, turn.first() + k, format!("the part at {p} sets none of text, inlineData, fileData, functionCall or functionResponse"))
                        .provider(Some(format!(
                            "* GenerateContentRequest.contents[{ix}].parts[{}].data: required oneof field 'data' must have one initialized field",
                            n.ptr.sub_index().unwrap_or(0)
                        )))
                );
        }
    }
}

/// Converse: no message without blocks, no blank text block anywhere.
fn converse_message_is_not_empty(ctx: &Ctx, t: usize, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let turn = &chain.turns[t];
    let nodes = chain.turn_nodes(t);
    let path = turn.ptr;
    let ix = ctx.turn_ix(t);
    if turn.empty {
        out.push(ctx.at_turn(
            Rule::EmptyContent,
            t,
            format!("{path} ({}) has no content blocks", turn.wire),
        ));
    }
    for (k, n) in nodes.iter().enumerate() {
        if let NodeKind::Result {
            empty_error: true, ..
        } = n.kind
        {
            out.push(
                ctx.at_node(
                    Rule::EmptyContent,
                    turn.first() + k,
                    format!("the toolResult at {} has status `error` and no content", n.ptr),
                )
                .provider(Some(format!(
                    "The content field at messages.{ix}.content.{}.toolResult cannot be empty when status value is error.",
                    n.ptr.sub_index().unwrap_or(0)
                ))),
            );
        }
        if matches!(n.kind, NodeKind::Text { blank: true }) {
            let p = n.ptr.render();
            out.push(
                    ctx.at_node(
                        Rule::EmptyContent,
                        turn.first() + k,
                        format!("the text at {p} is empty or only white space"),
                    )
                    .provider(Some(format!(
                        "The text field in the ContentBlock object at messages.{ix}.content.{} is blank. Add text to the text field, and try again.",
                        n.ptr.sub_index().unwrap_or(0)
                    ))),
                );
        }
    }
}

/// Bedrock Converse: tool blocks in the history need a declared `toolConfig`.
pub(crate) fn tool_history_has_tools(ctx: &Ctx, out: &mut Vec<Violation>) {
    if ctx.chain.facts.tools_declared {
        return;
    }
    let history = ctx.history();
    let first = history.iter().find_map(|&t| {
        let turn = &ctx.chain.turns[t];
        (turn.first()..turn.end()).find(|&n| {
            matches!(
                ctx.chain.nodes[n].kind,
                NodeKind::Call { .. } | NodeKind::Result { .. }
            )
        })
    });
    if let Some(n) = first {
        let p = ctx.chain.nodes[n].ptr;
        out.push(
            ctx.at_node(
                Rule::ToolsUndeclared,
                n,
                format!("{p} is a tool block but the request has no `toolConfig`; Converse requires one whenever the history holds toolUse or toolResult blocks"),
            )
            .provider(Some(
                "The toolConfig field must be defined when using toolUse and toolResult content blocks.".into(),
            )),
        );
    }
}

/// The most `cache_control` breakpoints Anthropic takes in one request.
const MAX_CACHE_POINTS: usize = 4;

/// Anthropic: at most four blocks carry `cache_control`.
pub(crate) fn cache_breakpoints_fit(ctx: &Ctx, out: &mut Vec<Violation>) {
    let facts = &ctx.chain.facts;
    // The markers and the nodes are both in body order: one walk finds each marker's node.
    let mut from = 0;
    for &p in &facts.cache_on_thinking {
        let node = ctx.chain.nodes[from..]
            .iter()
            .position(|n| n.ptr == p)
            .map(|k| from + k);
        from = node.map_or(from, |n| n + 1);
        let wire = match node.map(|n| &ctx.chain.nodes[n].kind) {
            Some(NodeKind::Reasoning { redacted: true, .. }) => "redacted_thinking",
            _ => "thinking",
        };
        let (i, j) = (p.item_index().unwrap_or(0), p.sub_index().unwrap_or(0));
        let v = Violation::error(
            Rule::CacheBreakpoints,
            format!("{}/cache_control", p.render()),
            format!("the {wire} block at {p} carries cache_control; Anthropic takes no cache breakpoint on a thinking block"),
        )
        .provider(Some(format!(
            "messages.{i}.content.{j}.{wire}.cache_control: Extra inputs are not permitted"
        )))
        .with_defect(Defect::CacheOnThinking);
        out.push(match node {
            Some(n) => v.at_node(n, ctx.chain.nodes[n].turn()),
            None => v,
        });
    }
    let found = facts.cache_points.len() + facts.nested_cache_points;
    if found <= MAX_CACHE_POINTS {
        return;
    }
    let path = facts
        .cache_points
        .get(MAX_CACHE_POINTS)
        .or(facts.cache_points.last())
        .map(|p| p.render())
        .unwrap_or_default();
    out.push(
        Violation::error(
            Rule::CacheBreakpoints,
            path,
            format!("{found} blocks carry cache_control; Anthropic takes at most {MAX_CACHE_POINTS} cache breakpoints per request"),
        )
        .provider(Some(format!(
            "A maximum of {MAX_CACHE_POINTS} blocks with cache_control may be provided. Found {found}."
        ))),
    );
}

/// Converse: a `cachePoint` block caches the blocks before it in its own message, and
/// none may follow a reasoning block. The block before it is the node before it in the
/// turn when their indexes touch (a block the reader could not read has no node, and
/// `malformed` names it).
pub(crate) fn cache_points_have_a_prefix(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    for &t in ctx.history() {
        let turn = &chain.turns[t];
        let nodes = chain.turn_nodes(t);
        for (k, n) in nodes.iter().enumerate() {
            if !matches!(n.kind, NodeKind::Other { wire: "cachePoint" }) {
                continue;
            }
            let Some(j) = n.ptr.sub_index() else { continue };
            let before = k
                .checked_sub(1)
                .map(|b| &nodes[b])
                .filter(|b| b.ptr.sub_index().map(|s| s + 1) == Some(j));
            let (message, provider) = match before.map(|b| &b.kind) {
                _ if j == 0 => (
                    format!("the cachePoint at {} is the first block of its message: there is nothing before it to cache", n.ptr),
                    "There is nothing available to cache. Please remove the invalid cache point and try again.",
                ),
                Some(NodeKind::Reasoning { .. }) => (
                    format!("the cachePoint at {} follows a reasoning block, which Converse takes no cache point after", n.ptr),
                    "Cache point cannot be inserted after reasoning block. Please remove the invalid cache point and try again.",
                ),
                _ => continue,
            };
            out.push(
                ctx.at_node(Rule::CacheBreakpoints, turn.first() + k, message)
                    .provider(Some(provider.into()))
                    .with_defect(Defect::CachePointPlacement),
            );
        }
    }
}

/// Converse refuses a document name of other characters than ASCII letters and digits,
/// single spaces, `-`, `_`, `()` and `[]`, or longer than 200 characters.
const DOCUMENT_NAME_RULE: &str = "The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can't contain more than one consecutive whitespace character. Check that the file name conforms to these restrictions and retry your request.";

/// Where a document of `facts.document_names` is, as a pointer text.
fn document_path(block: crate::chain::Ptr, nested: Option<u32>) -> String {
    match nested {
        Some(k) => format!("{}/toolResult/content/{k}/document/name", block.render()),
        None => format!("{}/document/name", block.render()),
    }
}

/// Converse: every document's name is one the service takes, and no two documents of the
/// request share one ("Messages can't contain duplicate document names.").
pub(crate) fn document_names_fit(ctx: &Ctx, out: &mut Vec<Violation>) {
    let mut first: HashMap<&str, String> = HashMap::new();
    for &(block, node, nested, name) in &ctx.chain.facts.document_names {
        let Some(name) = name else { continue };
        let path = document_path(block, nested);
        let (message, provider) = if let Some(why) = document_name_fault(name) {
            (
                format!("document name `{name}` {why}"),
                DOCUMENT_NAME_RULE.to_string(),
            )
        } else if let Some(earlier) = first.get(name) {
            (
                format!("document name `{name}` is already the name of the document at {earlier}"),
                "Messages can't contain duplicate document names. Rename the document and retry your request.".to_string(),
            )
        } else {
            first.insert(name, path);
            continue;
        };
        let v = Violation::error(Rule::Malformed, path, message)
            .provider(Some(provider))
            .with_defect(Defect::DocumentName);
        out.push(match ctx.chain.nodes.get(node).filter(|n| n.ptr == block) {
            Some(n) => v.at_node(node, n.turn()),
            None => v,
        });
    }
}

/// Converse: an image or document given by an S3 location, sent to Claude. The Converse
/// models table marks "Amazon S3 links for multimedia" as supported by Amazon Nova
/// (Premier, Pro, Lite) and not by any Claude model, and the service answers Claude's
/// request "This model doesn't support the s3Uri field. Remove s3Uri and try again."
/// (recorded: pydantic-ai's multimodal tool-return cassette for Claude Sonnet 4.5 on
/// Converse). Judged only when the model (from the URL, `--model`) is Claude: another
/// model's support is not recorded here. Reported only: the bytes are not in the body,
/// and dropping the media loses what the user sent.
pub(crate) fn s3_media_fits_the_model(ctx: &Ctx, out: &mut Vec<Violation>) {
    let Some(model) = ctx.chain.facts.model else {
        return;
    };
    if !crate::dialect::bedrock_converse::is_claude_id(model) {
        return;
    }
    for &(block, node, member, nested) in &ctx.chain.facts.s3_media {
        let path = match nested {
            Some(k) => format!(
                "{}/toolResult/content/{k}/{member}/source/s3Location",
                block.render()
            ),
            None => format!("{}/{member}/source/s3Location", block.render()),
        };
        let v = Violation::error(
            Rule::Malformed,
            path,
            format!("the {member} is given by an S3 location, which {model} does not read (on Converse only Amazon Nova models take S3 media)"),
        )
        .provider(Some("This model doesn't support the s3Uri field. Remove s3Uri and try again.".to_string()))
        .with_defect(Defect::S3MediaRefused);
        out.push(match ctx.chain.nodes.get(node).filter(|n| n.ptr == block) {
            Some(n) => v.at_node(node, n.turn()),
            None => v,
        });
    }
}

/// OpenAI chat: an image or file part in a message other than a user message.
/// - A `file` part in a tool message meets the part types tool content takes, whatever
///   the model: "Invalid value: 'file'. Supported values are: 'text', 'refusal',
///   'image_url', and 'input_audio'." (epam/ai-dial-adapter-openai#434).
/// - An `image_url` outside a user message is refused by the GPT-4o, GPT-4 and GPT-3.5
///   families: "Invalid 'messages[234]'. Image URLs are only allowed for messages with
///   role 'user', but this message with role 'tool' contains an image URL."
///   (OpenHands#7700, a screenshot tool's result; role 'assistant' for a generated image,
///   gpt-4o-mini, openai-node#1030). Later models take it without an error (GPT-4.1 in an
///   assistant message, llama_index#18478; GPT-5.2 in a tool message,
///   openai-openapi#523), but a tool message's image is not read: GPT-5 and GPT-5.2
///   answered as if it were not there (langchainjs#8663, openai-openapi#523). That is a
///   warning, and any other model's image outside a tool message is not judged.
///
/// Judged under the profiles that say so (openai, azure): servers that render a tool's
/// result into the prompt take its image. Only chat's own part types are read; another
/// API's `image` block has a finding of its own, and once written as `image_url` it is
/// judged here in the next pass. Audio is not judged: no refusal is recorded.
pub(crate) fn media_sits_in_user_messages(ctx: &Ctx, out: &mut Vec<Violation>) {
    if !ctx.profile.media_only_on_user {
        return;
    }
    let chain = ctx.chain;
    let model = chain.facts.model.unwrap_or_default();
    let refuses_images = refuses_images_off_user(model);
    for &(n, part) in &chain.facts.media_off_user {
        let node = &chain.nodes[n];
        let t = node.turn();
        let turn = &chain.turns[t];
        let (i, role) = (turn.ptr.item_index().unwrap_or_default(), turn.wire);
        let j = node.ptr.sub_index().unwrap_or_default();
        let tool = turn.role == Role::Tool;
        let then = if tool {
            "repair moves it into a user message right after the tool results"
        } else {
            "reported only: where it would go instead is the application's choice"
        };
        let name = ctx.profile.name;
        let (message, provider) = match part {
            "file" if tool => (
                format!("messages[{i}].content[{j}] is a `file` part in a tool message, whose content takes text; {name} takes files in user messages only ({then})"),
                Some("Invalid value: 'file'. Supported values are: 'text', 'refusal', 'image_url', and 'input_audio'.".to_string()),
            ),
            "image_url" if refuses_images => (
                format!("messages[{i}].content[{j}] is an image in a message with role `{role}`; {model} takes images in user messages only ({then})"),
                Some(format!("Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role 'user', but this message with role '{role}' contains an image URL.")),
            ),
            // Taken, not read: a warning, which no fix acts on.
            "image_url" if tool => (
                format!("messages[{i}].content[{j}] is an image in a tool message: {name} takes it, but the model does not read a tool message's image (GPT-5 and GPT-5.2 answered as if it were not there); in a user message right after the tool results it is read"),
                None,
            ),
            _ => continue,
        };
        let severity = if provider.is_some() {
            Severity::Error
        } else {
            Severity::Warning
        };
        let v = Violation::error(Rule::Malformed, node.ptr.render(), message)
            .provider(provider)
            .severity(severity);
        out.push(v.with_defect(Defect::MediaOffUser).at_node(n, t));
    }
}

/// Gemini: media nested in a function response (`functionResponse.parts`, the
/// multimodal function responses of Gemini 3) sent to an earlier model, which refuses the
/// field. Judged only when the model is known (a Gemini body names none: `--model`, or
/// the URL a gateway forwards to). Reported only: the image is the tool's output, and
/// where else an earlier model would read it is the application's choice.
pub(crate) fn response_parts_fit_the_model(ctx: &Ctx, out: &mut Vec<Violation>) {
    let chain = ctx.chain;
    let before_3 = |m: &&str| crate::dialect::gemini::generation(m).is_some_and(|g| g < 3);
    let Some(model) = chain.facts.model.filter(before_3) else {
        return;
    };
    for &(n, key) in &chain.facts.response_parts {
        let node = &chain.nodes[n];
        let t = node.turn();
        let i = chain.turns[t].ptr.item_index().unwrap_or_default();
        let j = node.ptr.sub_index().unwrap_or_default();
        let v = Violation::error(
            Rule::Malformed,
            format!("{}/{key}/parts", node.ptr.render()),
            format!("contents[{i}].parts[{j}].{key} nests media in `parts`, which only Gemini 3 models take in a function response; {model} refuses it (reported only: where an earlier model should get the tool's image instead is the application's choice)"),
        )
        .provider(Some("Unable to submit request because `function_response.parts` is not supported for this model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling".to_string()));
        out.push(
            v.with_defect(Defect::ResponsePartsUnsupported)
                .at_node(n, t),
        );
    }
}

/// The models recorded refusing an image outside a user message: the GPT-4o, GPT-4 and
/// GPT-3.5 families (by their ids, with or without a router's `openai/` prefix).
fn refuses_images_off_user(model: &str) -> bool {
    let id = model.rsplit('/').next().unwrap_or(model);
    id.starts_with("gpt-4o")
        || id.starts_with("chatgpt-4o")
        || id.starts_with("gpt-3.5")
        || id == "gpt-4"
        || id.starts_with("gpt-4-")
}

/// `malformed`'s fix for Converse document names: each name made one the service takes,
/// and a name an earlier document already has made unique with ` (2)`, ` (3)`, ...; every
/// block whose names change is written once (the first finding's fix does it all).
fn name_the_documents_as_converse_takes(fx: &mut Fixer, v: &Violation) {
    // The first finding's fix wrote every block it names: the others' blocks are done.
    if v.loc.node.is_some_and(|n| fx.touched.contains(&n)) {
        return;
    }
    let docs = fx.chain().facts.document_names.clone();
    let mut names = DocumentNames::default();
    // The block being written: its node, its new value, what changed in it, where.
    let mut block: Option<(usize, Value, Vec<String>, String)> = None;
    let write = |fx: &mut Fixer, done: Option<(usize, Value, Vec<String>, String)>| {
        if let Some((n, value, notes, path)) = done {
            if fx.claim(n) {
                fx.replace_node_as(n, value, (v.rule, path), "rename", notes.join("; "));
            }
        }
    };
    for (ptr, n, nested, name) in docs {
        let Some(name) = name else { continue };
        let at = match nested {
            Some(k) => format!("/toolResult/content/{k}/document"),
            None => "/document".to_string(),
        };
        let Some(value) = fx
            .chain()
            .nodes
            .get(n)
            .filter(|m| m.ptr == ptr)
            .and_then(|_| fx.value_of(n))
        else {
            continue;
        };
        let format = value
            .pointer(&format!("{at}/format"))
            .and_then(Value::as_str);
        let base = match document_name_is_valid(name) {
            true => name.to_string(),
            false => document_name(name, format),
        };
        let new = names.unique(&base);
        if new == name {
            continue;
        }
        if block.as_ref().is_none_or(|b| b.0 != n) {
            let start = (n, value.clone(), Vec::new(), document_path(ptr, nested));
            write(fx, block.replace(start));
        }
        if let Some((_, value, notes, _)) = block.as_mut() {
            if let Some(slot) = value.pointer_mut(&format!("{at}/name")) {
                *slot = json!(new);
                notes.push(format!(
                    "renamed the document `{name}` to `{new}`, a name Converse takes"
                ));
            }
        }
    }
    write(fx, block);
}

/// Responses (openai and azure profiles): a call's `arguments` over 1 MiB of characters,
/// which the API refuses ("Invalid 'input[15].arguments': string too long. Expected a
/// string with maximum length 1048576, but got a string with length 1524940 instead.",
/// openai/codex#13270: a file written by one call, replayed in every later request).
/// Reported only: the call is what the model made, and no shorter one is it.
pub(crate) fn call_arguments_fit(ctx: &Ctx, out: &mut Vec<Violation>) {
    use crate::dialect::openai_responses::MAX_ARGUMENTS;
    for (t, i, turn, len) in ctx.items_over_openai_limits(&ctx.chain.facts.long_arguments) {
        out.push(
            Violation::error(
                Rule::Malformed,
                turn.ptr.render_with("arguments"),
                format!(
                    "input[{i}].arguments is {len} characters long; {} takes at most {MAX_ARGUMENTS} in a call sent back",
                    ctx.profile.name
                ),
            )
            .provider(Some(format!(
                "Invalid 'input[{i}].arguments': string too long. Expected a string with maximum length {MAX_ARGUMENTS}, but got a string with length {len} instead."
            )))
            .at_turn(t),
        );
    }
}

/// Anthropic, and Claude through Converse: the final assistant message (a prefill) does
/// not end with white space. Converse passes Claude's refusal on ("The model returned the
/// following errors: messages: final assistant content cannot end with trailing
/// whitespace", aws/aws-sdk-net#4015; langchain-aws#599 strips it for Invoke and
/// Converse); judged there only when the model (from the URL, `--model`) is Claude,
/// since another model's prefill rules are not recorded.
pub(crate) fn prefill_has_no_trailing_whitespace(ctx: &Ctx, out: &mut Vec<Violation>) {
    let Some(ptr) = ctx.chain.facts.final_trailing_whitespace else {
        return;
    };
    let converse = ctx.dialect == Dialect::BedrockConverse;
    if converse
        && !ctx
            .chain
            .facts
            .model
            .is_some_and(crate::dialect::bedrock_converse::is_claude_id)
    {
        return;
    }
    let path = ptr.render();
    let chain = ctx.chain;
    let node = chain.nodes.iter().rposition(|n| n.ptr == ptr);
    // The text's own node when it has one (a block), else the message (string content).
    let turn = node.map(|n| chain.nodes[n].turn()).or_else(|| {
        let item = ptr.item_index()?;
        chain
            .turns
            .iter()
            .rposition(|t| t.ptr.root_key() == ptr.root_key() && t.ptr.item_index() == Some(item))
    });
    let text = "messages: final assistant content cannot end with trailing whitespace";
    let v = Violation::error(
        Rule::Malformed,
        path.clone(),
        format!(
            "the final assistant message (a prefill) ends with white space at {path}; {} rejects that",
            if converse { "Claude" } else { "Anthropic" }
        ),
    )
    .provider(Some(if converse {
        format!("The model returned the following errors: {text}")
    } else {
        text.into()
    }))
    .with_defect(Defect::TrailingWhitespace);
    out.push(match (node, turn) {
        (Some(n), Some(t)) => v.at_node(n, t),
        (None, Some(t)) => v.at_turn(t),
        _ => v,
    });
}

// ---------------------------------------------------------------------------------------
// The fixes.

/// `empty-content`: an empty text block goes (a Gemini part that kept only its thought
/// signature gets an empty text instead, keeping the signature); an OpenAI chat message
/// with null content gets an empty string; any other empty message goes.
fn fill_or_drop_the_empty(fx: &mut Fixer, v: &Violation) {
    if v.defect == Some(Defect::ContentRequired) {
        return; // what the message should say is not known
    }
    let chain = fx.chain();
    let outside_the_history = v
        .loc
        .node
        .is_some_and(|n| chain.nodes[n].ptr.root_key() != fx.dialect().history_key());
    if outside_the_history {
        return; // a blank Anthropic system block: the plan edits the history only
    }
    let block = v
        .loc
        .node
        .filter(|&n| matches!(chain.nodes[n].kind, NodeKind::Text { .. } | NodeKind::Empty));
    // A Gemini part that kept only its thought signature: the signature is worth keeping,
    // on an empty text part (as Gemini itself streams it).
    let signed_part = block.filter(|&n| {
        fx.dialect() == Dialect::Gemini
            && fx.value_of(n).is_some_and(|part| {
                part.get("thoughtSignature").is_some() || part.get("thought_signature").is_some()
            })
    });
    let result = v.loc.node.filter(|&n| {
        matches!(
            chain.nodes[n].kind,
            NodeKind::Result {
                blank_text: true,
                ..
            } | NodeKind::Result {
                empty_error: true,
                ..
            }
        )
    });
    if let (Some(n), Dialect::BedrockConverse) = (result, fx.dialect()) {
        say_the_error_result_failed(fx, v, n);
    } else if let Some(n) = result {
        empty_the_blank_result(fx, v, n);
    } else if let Some(n) = signed_part {
        let ptr = chain.nodes[n].ptr;
        if ptr.sub_index().is_some() && fx.claim(n) && fx.set_field(ptr, "text", Some(json!(""))) {
            let detail =
                "gave the signature-only part an empty text, keeping its thought signature";
            fx.note(v.rule, v.path.clone(), "set", detail.into());
        }
    } else if let Some(n) = block {
        if fx.claim(n) {
            fx.drop_node(n);
            keep_the_breakpoint_of_a_dropped_block(fx, v, n);
            fx.note(
                v.rule,
                v.path.clone(),
                "drop",
                "dropped the empty block".into(),
            );
        }
    } else if let Some(t) = v.loc.turn {
        let turn = &chain.turns[t];
        let Some(i) = fx.item_of_turn(t) else {
            return;
        };
        if fx.dialect() == Dialect::OpenAiChat && turn.role != Role::Assistant {
            fx.set_field(turn.ptr, "content", Some(json!("")));
            let detail = "set the null content to an empty string";
            fx.note(v.rule, v.path.clone(), "set", detail.into());
        } else if fx.plan.drop_items.insert(i) {
            let detail = format!("dropped the {} message, which has no content", turn.wire);
            fx.note(v.rule, v.path.clone(), "drop", detail);
        }
    }
}

/// A Converse toolResult with `status: "error"` and no content says it failed
/// ([`ERROR_WITHOUT_OUTPUT`]), as an Anthropic error result does, and stays an error.
fn say_the_error_result_failed(fx: &mut Fixer, v: &Violation, n: usize) {
    let Some(mut block) = fx.value_of(n).cloned() else {
        return;
    };
    let Some(Value::Object(result)) = block.get_mut("toolResult") else {
        return;
    };
    result.insert("content".into(), json!([{ "text": ERROR_WITHOUT_OUTPUT }]));
    if fx.claim(n) {
        let detail = format!(
            "gave the error toolResult, which had no content, the text \"{ERROR_WITHOUT_OUTPUT}\""
        );
        fx.replace_node(n, block, v, "set", detail);
    }
}

/// An Anthropic tool_result whose content holds blank text blocks: those blocks go, and
/// the content with them when nothing else is left (a tool_result's content is optional:
/// a tool that printed nothing answered with nothing). An error result (`is_error: true`)
/// cannot be empty: one with nothing left, or nothing to begin with, says it failed
/// ([`ERROR_WITHOUT_OUTPUT`]), in the content's own shape, and stays an error.
fn empty_the_blank_result(fx: &mut Fixer, v: &Violation, n: usize) {
    let Some(Value::Object(block)) = fx.value_of(n) else {
        return;
    };
    let blank = |p: &Value| {
        p.get("type").and_then(Value::as_str) == Some("text")
            && p.get("text")
                .and_then(Value::as_str)
                .is_some_and(|t| t.trim().is_empty())
    };
    let is_error = block.get("is_error") == Some(&Value::Bool(true));
    let parts = block.get("content").and_then(Value::as_array);
    let kept: Vec<Value> = parts
        .into_iter()
        .flatten()
        .filter(|p| !blank(p))
        .cloned()
        .collect();
    let dropped = parts.map_or(0, Vec::len) - kept.len();
    let mut new = block.clone();
    let (action, detail) = if !kept.is_empty() {
        new.insert("content".into(), Value::Array(kept));
        let detail =
            format!("dropped {dropped} empty text block(s) from the tool_result's content");
        ("drop", detail)
    } else if is_error {
        // In the content's own shape: a list stays a list.
        let text = match parts {
            Some(_) => json!([{"type": "text", "text": ERROR_WITHOUT_OUTPUT}]),
            None => json!(ERROR_WITHOUT_OUTPUT),
        };
        new.insert("content".into(), text);
        let had = if dropped > 0 {
            "left with"
        } else {
            "which had"
        };
        let detail = format!(
            "gave the error tool_result, {had} no content, the text \"{ERROR_WITHOUT_OUTPUT}\""
        );
        ("set", detail)
    } else if dropped > 0 {
        new.shift_remove("content");
        let detail = format!(
            "dropped the tool_result's content, {dropped} empty text block(s) and nothing else"
        );
        ("drop", detail)
    } else {
        return;
    };
    if fx.claim(n) {
        fx.replace_node(n, Value::Object(new), v, action, detail);
    }
}

/// Give the item of `v`'s turn the required field it came without, at its empty value.
fn set_the_missing_field(fx: &mut Fixer, v: &Violation, key: &str, value: Value, detail: &str) {
    let Some(t) = v.loc.turn else { return };
    let ptr = fx.chain().turns[t].ptr;
    if ptr.item_index().is_some() && fx.set_field(ptr, key, Some(value)) {
        fx.note(v.rule, v.path.clone(), "set", detail.into());
    }
}

/// Chat-completions shapes in Responses `input` written as the items the API takes (a
/// `tool` message as its function_call_output, `tool_calls` as function_call items, an
/// assistant's input_text part as output_text), nothing of them lost.
fn write_chat_shapes_as_responses_items(fx: &mut Fixer, v: &Violation) {
    match v.defect {
        Some(Defect::ChatToolMessage) => {
            // The output and the call it answers are both there: the item is written as
            // the `function_call_output` the API takes, nothing of it lost.
            let Some(t) = v.loc.turn else { return };
            let turn = &fx.chain().turns[t];
            let (n, ptr) = (turn.first(), turn.ptr);
            let Some(item) = fx
                .value_at(ptr)
                .and_then(crate::dialect::openai_responses::output_of_chat_tool_message)
            else {
                return;
            };
            if fx.claim(n) {
                let detail = "wrote the chat `tool` message as the function_call_output item Responses takes";
                fx.replace_node(n, item, v, "set", detail.into());
            }
        }
        Some(Defect::ChatToolCalls) => {
            let Some(t) = v.loc.turn else { return };
            let turn = &fx.chain().turns[t];
            let (n, ptr) = (turn.first(), turn.ptr);
            let (Some(item), Some(items)) = (
                fx.item_of_turn(t),
                fx.value_at(ptr)
                    .and_then(crate::dialect::openai_responses::items_of_chat_tool_calls),
            ) else {
                return;
            };
            if fx.claim(n) {
                let calls = items.len();
                let detail = format!("wrote the chat message's tool_calls as the function_call items Responses takes ({calls} item(s))");
                fx.split_item(item, items, v, "set", detail);
            }
        }
        Some(Defect::AssistantInputText) => {
            let Some(n) = v.loc.node else { return };
            let ptr = fx.chain().nodes[n].ptr;
            if fx.claim(n) && fx.set_field(ptr, "type", Some(json!("output_text"))) {
                let detail = "made the assistant's input_text part the output_text part an assistant message takes";
                fx.note(v.rule, v.path.clone(), "set", detail.into());
            }
        }
        Some(Defect::ChatContentPart) => {
            let Some(n) = v.loc.node else { return };
            let assistant = fx.chain().turns[fx.chain().nodes[n].turn()].role == Role::Assistant;
            let Some(part) = fx
                .value_of(n)
                .and_then(|p| crate::dialect::openai_responses::part_of_chat_part(p, assistant))
            else {
                return;
            };
            if fx.claim(n) {
                let t = part.get("type").and_then(Value::as_str).unwrap_or_default();
                let detail =
                    format!("wrote the chat-completions part as the `{t}` part Responses takes");
                fx.replace_node(n, part, v, "set", detail);
            }
        }
        _ => {}
    }
}

/// A result's value of a type the dialect refuses there (`Defect::ResultJsonNotObject`):
/// Gemini's response put under `result`, Converse's json member sent as text.
fn write_the_result_value_as_the_dialect_takes(fx: &mut Fixer, v: &Violation) {
    match fx.dialect() {
        Dialect::Gemini => {
            // Gemini's response is a Struct: the value goes under `result`, as Google's
            // own SDKs send a function's non-object return value.
            let Some(n) = v.loc.node else { return };
            let Some(part) = fx.value_of(n) else { return };
            let key = if part.get("function_response").is_some() {
                "function_response"
            } else {
                "functionResponse"
            };
            let Some(response) = part.get(key).and_then(|r| r.get("response")) else {
                return;
            };
            let mut part = part.clone();
            part[key]["response"] = json!({ "result": response.clone() });
            if fx.claim(n) {
                let detail =
                    "put the response under `result`, the object Gemini takes, as Google's SDKs do";
                fx.replace_node(n, part, v, "set", detail.into());
            }
        }
        _ => {
            // The value stays, as the text it is: Converse's `json` takes objects only.
            let Some(n) = v.loc.node else { return };
            let Some(block) = fx.value_of(n) else { return };
            let mut block = block.clone();
            let Some(Value::Array(content)) = block.pointer_mut("/toolResult/content") else {
                return;
            };
            for c in content.iter_mut() {
                let text = match c.get("json") {
                    Some(Value::Object(_)) | None => continue,
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                };
                *c = json!({ "text": text });
            }
            if fx.claim(n) {
                let detail = "sent the tool's non-object json output as text, which keeps it whole";
                fx.replace_node(n, block, v, "set", detail.into());
            }
        }
    }
}

fn reshape_the_known_defects(fx: &mut Fixer, v: &Violation) {
    match v.defect {
        Some(Defect::TrailingWhitespace) => trim_the_prefill(fx, v),
        Some(Defect::ReasoningWithoutSummary) => {
            let detail = "added the required summary, empty: the reasoning item came without one";
            set_the_missing_field(fx, v, "summary", json!([]), detail);
        }
        Some(Defect::OutputMissing) => {
            // As chat's null tool content is sent as "": the output is not known, and
            // an empty one says no more than the item did.
            let detail =
                "added the required output, empty: the tool's output item came without one";
            set_the_missing_field(fx, v, "output", json!(""), detail);
        }
        Some(
            Defect::HeldUpstream
            | Defect::SameRoleInARow
            | Defect::ContentRequired
            | Defect::ToolInputMissing
            | Defect::ArgumentsMissing
            | Defect::S3MediaRefused
            | Defect::ResponsePartsUnsupported
            | Defect::UnknownField
            | Defect::ItemIdMissing
            | Defect::CacheOnThinking
            | Defect::CachePointPlacement
            // Other rules' findings: never `malformed`'s.
            | Defect::CallNameForm
            | Defect::ItemIdTooLong
            | Defect::ForeignRole,
        ) => {}
        Some(Defect::DocumentName) => name_the_documents_as_converse_takes(fx, v),
        Some(Defect::ImageFormat) => declare_the_image_as_its_bytes_are(fx, v),
        Some(
            Defect::ChatToolMessage
            | Defect::ChatToolCalls
            | Defect::AssistantInputText
            | Defect::ChatContentPart,
        ) => write_chat_shapes_as_responses_items(fx, v),
        Some(Defect::ResultJsonNotObject) => write_the_result_value_as_the_dialect_takes(fx, v),
        Some(Defect::EmptyToolCalls | Defect::CallTypeMissing | Defect::ArgumentsNotString) => {
            reshape_a_chat_call(fx, v)
        }
        Some(Defect::ToolInputNotObject) => write_the_input_as_its_object(fx, v),
        Some(Defect::OutputNotText) => write_the_output_as_text(fx, v),
        Some(Defect::ForeignBlock) => write_the_foreign_part_as_its_block(fx, v),
        Some(Defect::ForeignResultPart) => write_the_results_foreign_parts_as_blocks(fx, v),
        Some(Defect::MessageNameForm) => write_the_message_name_in_its_form(fx, v),
        Some(Defect::MediaOffUser) => move_the_results_media_after_them(fx, v),
        Some(Defect::ContentNotString) => write_the_text_part_as_the_content(fx, v),
        None => {}
    }
}

/// Each image of the finding's block (the block itself, or the images of its tool
/// result's content) declared as another format than its bytes prove gets the proven one
/// (the bytes are what the provider reads; the declaration was a label). The block is
/// read again, not the finding's pointer: one write answers all its images' findings.
fn declare_the_image_as_its_bytes_are(fx: &mut Fixer, v: &Violation) {
    let Some(n) = v.loc.node.filter(|n| !fx.touched.contains(n)) else {
        return;
    };
    let Some(mut block) = fx.value_of(n).cloned() else {
        return;
    };
    let converse = fx.dialect() == Dialect::BedrockConverse;
    // Where a block keeps its image(s) (Anthropic's type and bytes sit in `source`), and
    // the field that declares the type.
    let (own, nested, field) = match converse {
        true => ("/image", "/toolResult/content", "format"),
        false => ("/source", "/content", "media_type"),
    };
    let count = block
        .pointer(nested)
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let images = std::iter::once(own.to_string()).chain((0..count).map(|k| match converse {
        true => format!("{nested}/{k}/image"),
        false => format!("{nested}/{k}/source"),
    }));
    let mut notes = Vec::new();
    for at in images {
        let Some(Value::Object(image)) = block.pointer_mut(&at) else {
            continue;
        };
        let bytes = match converse {
            true => image.get("source").and_then(|s| s.get("bytes")),
            false => image.get("data"),
        };
        let proven = bytes
            .and_then(Value::as_str)
            .and_then(crate::dialect::image_format_of_base64);
        let old = image
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or("nothing")
            .to_string();
        // Bytes that prove no format: a Converse label that names one of its four
        // formats another way (`jpg`, `JPEG`) is written as Converse spells it.
        let (declared, why) = match (proven, converse) {
            (Some(p), true) => (p.to_string(), "what its bytes are"),
            (Some(p), false) => (format!("image/{p}"), "what its bytes are"),
            (None, true) => match crate::dialect::bedrock_converse::image_format_named(&old) {
                Some(f) => (f.to_string(), "as Converse spells that format"),
                None => continue,
            },
            (None, false) => continue,
        };
        if old == declared {
            continue;
        }
        image.insert(field.to_string(), json!(declared));
        notes.push(format!(
            "declared the image as `{declared}`, {why}, not `{old}`"
        ));
    }
    if !notes.is_empty() && fx.claim(n) {
        fx.replace_node(n, block, v, "set", notes.join("; "));
    }
}

/// OpenAI chat tool calls in a shape the API refuses: an empty `tool_calls` array goes;
/// a call without `type` gets the one its object names; arguments given as an object are
/// written as their JSON text.
fn reshape_a_chat_call(fx: &mut Fixer, v: &Violation) {
    match v.defect {
        Some(Defect::EmptyToolCalls) => {
            let Some(ptr) = v
                .loc
                .turn
                .and_then(|t| fx.chain().turns.get(t))
                .map(|t| t.ptr)
            else {
                return;
            };
            if ptr.item_index().is_some() && fx.set_field(ptr, "tool_calls", None) {
                let detail = "removed the empty tool_calls array";
                fx.note(v.rule, v.path.clone(), "drop", detail.into());
            }
        }
        Some(Defect::CallTypeMissing) => {
            // The call holds a `function` (or `custom`) object: that is its type.
            let Some(n) = v.loc.node else { return };
            let ptr = fx.chain().nodes[n].ptr;
            let Some(call) = fx.value_at(ptr) else { return };
            let ty = match (call.get("function"), call.get("custom")) {
                (Some(Value::Object(_)), _) => "function",
                (_, Some(Value::Object(_))) => "custom",
                _ => return,
            };
            if fx.claim(n) && fx.set_field(ptr, "type", Some(json!(ty))) {
                let detail =
                    format!("set the tool call's missing type to \"{ty}\", the object it holds");
                fx.note(v.rule, v.path.clone(), "set", detail);
            }
        }
        _ => {
            let Some(n) = v.loc.node else { return };
            let ptr = fx.chain().nodes[n].ptr;
            let Some(call) = fx.value_at(ptr) else { return };
            let (Some(function), Some(args)) =
                (call.get("function"), call.pointer("/function/arguments"))
            else {
                return;
            };
            let mut function = function.clone();
            function["arguments"] = Value::String(args.to_string());
            if fx.claim(n) && fx.set_field(ptr, "function", Some(function)) {
                let detail =
                    "wrote the arguments object as its JSON text, the string the API takes";
                fx.note(v.rule, v.path.clone(), "set", detail.into());
            }
        }
    }
}

/// A tool's output given as an object written as its JSON text (OpenAI chat `content`,
/// Responses `output`, an Anthropic tool_result's `content`), which the API takes.
fn write_the_output_as_text(fx: &mut Fixer, v: &Violation) {
    if fx.dialect() == Dialect::Anthropic {
        let Some(n) = v.loc.node else { return };
        let Some(block) = fx.value_of(n) else { return };
        let Some(text) = block
            .get("content")
            .filter(|c| c.is_object())
            .map(Value::to_string)
        else {
            return;
        };
        let mut block = block.clone();
        block["content"] = Value::String(text);
        if fx.claim(n) {
            let detail = "wrote the tool's output object as its JSON text, which the API takes";
            fx.replace_node(n, block, v, "set", detail.into());
        }
        return;
    }
    let Some(t) = v.loc.turn else { return };
    let ptr = fx.chain().turns[t].ptr;
    let field = match fx.dialect() {
        Dialect::OpenAiResponses => "output",
        _ => "content",
    };
    let Some(value) = fx.value_at(ptr).and_then(|it| it.get(field)) else {
        return;
    };
    if ptr.item_index().is_some()
        && fx.set_field(ptr, field, Some(Value::String(value.to_string())))
    {
        let detail = "wrote the tool's output object as its JSON text, which the API takes";
        fx.note(v.rule, v.path.clone(), "set", detail.into());
    }
}

/// A tool's input given as its JSON text written as the object (Converse, Anthropic,
/// Gemini, a Responses tool search's arguments), only where the string is the object's JSON text: anything else would be a
/// guess at what the model meant.
fn write_the_input_as_its_object(fx: &mut Fixer, v: &Violation) {
    let Some(n) = v.loc.node else { return };
    let Some(block) = fx.value_of(n) else { return };
    let at = match fx.dialect() {
        Dialect::BedrockConverse => "/toolUse/input",
        Dialect::Gemini if block.get("function_call").is_some() => "/function_call/args",
        Dialect::Gemini => "/functionCall/args",
        Dialect::OpenAiResponses => "/arguments",
        _ => "/input",
    };
    let Some(Value::String(text)) = block.pointer(at) else {
        return;
    };
    let Ok(parsed @ Value::Object(_)) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let mut block = block.clone();
    if let Some(slot) = block.pointer_mut(at) {
        *slot = parsed;
    }
    if fx.claim(n) {
        let detail = "wrote the input's JSON text as the object it holds, as the API takes it";
        fx.replace_node(n, block, v, "set", detail.into());
    }
}

/// An Anthropic message's part of another API written as the block it is; a chat
/// message's image block of another API as the `image_url` part it is.
fn write_the_foreign_part_as_its_block(fx: &mut Fixer, v: &Violation) {
    // A part of another API that is an Anthropic block written another way: it
    // is written as that block, nothing of it lost.
    let Some(n) = v.loc.node else { return };
    if fx.dialect() == Dialect::OpenAiChat {
        let Some(url) = fx
            .value_of(n)
            .and_then(crate::dialect::openai_chat::image_url_of_foreign_block)
        else {
            return;
        };
        if fx.claim(n) {
            let part = json!({"type": "image_url", "image_url": {"url": url}});
            let detail = "wrote the image block of another API as the `image_url` part chat takes";
            fx.replace_node(n, part, v, "set", detail.into());
        }
        return;
    }
    let Some(block) = fx
        .value_of(n)
        .and_then(crate::dialect::anthropic::block_of_foreign_part)
    else {
        return;
    };
    if fx.claim(n) {
        let t = block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let detail =
            format!("wrote the part of another API as the `{t}` block the Messages API takes");
        fx.replace_node(n, block, v, "set", detail);
    }
}

/// The parts of another API inside an Anthropic tool_result's content that are blocks
/// a tool result takes written another way (`input_text` / `output_text` as `text`, an
/// `image_url` / `input_image` of a data or http(s) URL as `image`), all of the block's at
/// once; the others (an `input_file`, a `refusal`) are left for the report. The block is
/// read again, not the finding's pointer: one write answers all its parts' findings.
fn write_the_results_foreign_parts_as_blocks(fx: &mut Fixer, v: &Violation) {
    let Some(n) = v.loc.node.filter(|n| !fx.touched.contains(n)) else {
        return;
    };
    let Some(mut block) = fx.value_of(n).cloned() else {
        return;
    };
    let Some(parts) = block.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    let mut notes = Vec::new();
    for (k, part) in parts.iter_mut().enumerate() {
        let Some(written) = crate::dialect::anthropic::block_of_foreign_part(part) else {
            continue;
        };
        let old = part.get("type").and_then(Value::as_str).unwrap_or_default();
        let new = written
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        notes.push(format!(
            "wrote the tool result's `{old}` part {k} as the `{new}` block the Messages API takes"
        ));
        *part = written;
    }
    if !notes.is_empty() && fx.claim(n) {
        fx.replace_node(n, block, v, "set", notes.join("; "));
    }
}

/// A system or assistant message's content given as one text part, where the provider
/// takes a string (Groq), written as that text. Several parts, or a part that says more
/// than its text (a `cache_control`), are reported only: how to join them is a guess.
fn write_the_text_part_as_the_content(fx: &mut Fixer, v: &Violation) {
    let Some(t) = v.loc.turn else { return };
    let ptr = fx.chain().turns[t].ptr;
    let Some(Value::Array(parts)) = fx.value_at(ptr).and_then(|m| m.get("content")) else {
        return;
    };
    let text = match parts.as_slice() {
        [Value::Object(p)]
            if p.get("type").and_then(Value::as_str) == Some("text")
                && p.keys().all(|k| k == "type" || k == "text") =>
        {
            match p.get("text") {
                Some(Value::String(s)) => s.clone(),
                _ => return,
            }
        }
        _ => return,
    };
    if ptr.item_index().is_some() && fx.set_field(ptr, "content", Some(Value::String(text))) {
        let detail = "wrote the content's one text part as the string the provider takes";
        fx.note(v.rule, v.path.clone(), "set", detail.into());
    }
}

/// A chat message's `name` in the characters the provider takes.
fn write_the_message_name_in_its_form(fx: &mut Fixer, v: &Violation) {
    // The name labels a participant; each refused character becomes `_`, as
    // the frameworks that met the error now write agent names.
    let Some(t) = v.loc.turn else { return };
    let ptr = fx.chain().turns[t].ptr;
    let Some(Value::String(name)) = fx.value_at(ptr).and_then(|m| m.get("name")) else {
        return;
    };
    let new: String = name
        .chars()
        .map(|c| {
            if crate::profile::name_char_refused(c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    if ptr.item_index().is_some() && fx.set_field(ptr, "name", Some(json!(new))) {
        let detail = format!("wrote the message's name `{name}` as `{new}`");
        fx.note(v.rule, v.path.clone(), "set", detail);
    }
}

/// `cache-breakpoints`: the earliest breakpoints lose their `cache_control` until four
/// are left (see the spec for why the earliest).
fn keep_four_breakpoints(fx: &mut Fixer, v: &Violation) {
    if v.defect == Some(Defect::CachePointPlacement) {
        // What the service asks: the cache point goes, the conversation is unchanged.
        let Some(n) = v.loc.node else { return };
        if fx.claim(n) {
            fx.drop_node(n);
            let detail = "removed the cachePoint block, which Converse refuses here";
            fx.note(v.rule, v.path.clone(), "drop", detail.into());
        }
        return;
    }
    if v.defect == Some(Defect::CacheOnThinking) {
        // The block goes back as it was received: the API never sends cache_control on
        // one, and the signature does not cover it.
        let Some(n) = v.loc.node else { return };
        let ptr = fx.chain().nodes[n].ptr;
        if fx.claim(n) && fx.set_field(ptr, "cache_control", None) {
            let detail = "removed cache_control from the thinking block, which takes none";
            fx.note(v.rule, v.path.clone(), "drop", detail.into());
        }
        return;
    }
    let facts = &fx.chain().facts;
    let found = facts.cache_points.len() + facts.nested_cache_points;
    let surplus = found
        .saturating_sub(MAX_CACHE_POINTS)
        .min(facts.cache_points.len());
    let dropped: Vec<crate::chain::Ptr> = facts.cache_points[..surplus].to_vec();
    for root in ["tools", "system"] {
        let Some(Value::Array(items)) = fx.body.get(root) else {
            continue;
        };
        let at: Vec<usize> = dropped
            .iter()
            .filter(|p| p.root_key() == root)
            .filter_map(|p| p.item_index().map(|i| i as usize))
            .collect();
        if at.is_empty() {
            continue;
        }
        let mut items = items.clone();
        for &j in &at {
            if let Some(o) = items.get_mut(j).and_then(Value::as_object_mut) {
                o.shift_remove("cache_control");
            }
        }
        fx.set_body_field(root, Some(Value::Array(items)));
    }
    for p in dropped.iter().filter(|p| p.root_key() == "messages") {
        fx.set_field(*p, "cache_control", None);
    }
    for p in &dropped {
        fx.note(
            v.rule,
            p.render(),
            "drop",
            "removed this cache_control breakpoint: a later one caches the same prefix".into(),
        );
    }
}

fn trim_the_prefill(fx: &mut Fixer, v: &Violation) {
    let Some(ptr) = fx.chain().facts.final_trailing_whitespace else {
        return;
    };
    let Some(Value::String(text)) = fx.value_at(ptr).and_then(|v| {
        if v.is_string() {
            Some(v)
        } else {
            v.get("text")
        }
    }) else {
        return;
    };
    let trimmed = json!(text.trim_end());
    let set = match (ptr.inner_key(), ptr.sub_index()) {
        (Some(_), Some(_)) => fx.set_field(ptr, "text", Some(trimmed)),
        _ => fx.set_field(ptr.without_key(), "content", Some(trimmed)),
    };
    if set {
        let detail = "removed the trailing white space of the final assistant text";
        fx.note(v.rule, v.path.clone(), "set", detail.into());
    }
}

/// `malformed`'s fix for media in tool messages (OpenAI): the parts the rule found refused
/// (files, and images for the models that refuse them) in a run of tool messages go, in
/// their order, into one user message written right after the run's last tool message, where the provider takes them and the results still answer
/// their calls first. A tool message left with no part gets the empty text content
/// OpenAI takes. The first finding of the run moves them all. Nothing moves while
/// another finding of the run is being fixed (a missing result placed after the run
/// would land after the user message): the next pass does it. An assistant's or a system
/// message's media stays where it is, reported.
fn move_the_results_media_after_them(fx: &mut Fixer, v: &Violation) {
    let (Some(n), Some(t)) = (v.loc.node, v.loc.turn) else {
        return;
    };
    let chain = fx.chain();
    if chain.turns[t].role != Role::Tool || fx.touched.contains(&n) {
        return;
    }
    let is_tool = |t: &usize| chain.turns[*t].role == Role::Tool;
    let first = (0..t).rev().take_while(is_tool).last().unwrap_or(t);
    let last = (t + 1..chain.turns.len())
        .take_while(is_tool)
        .last()
        .unwrap_or(t);
    let busy = fx.a.violations.iter().any(|w| {
        w.defect != Some(Defect::MediaOffUser)
            && w.severity == Severity::Error
            && w.loc.turn.is_some_and(|u| u + 1 >= first && u <= last)
    });
    // The parts the rule found refused in the run (a newer model's image is a warning,
    // and no fix runs for a warning), in body order.
    let mut media: Vec<usize> =
        fx.a.violations
            .iter()
            .filter(|w| w.defect == Some(Defect::MediaOffUser) && w.severity == Severity::Error)
            .filter_map(|w| w.loc.node)
            .filter(|&m| (first..=last).contains(&chain.nodes[m].turn()))
            .collect();
    media.sort_unstable();
    if busy || media.iter().any(|m| fx.touched.contains(m)) {
        return;
    }
    let Some(after) = fx.item_of_turn(last) else {
        return;
    };
    let Some(moved) = media
        .iter()
        .map(|&m| fx.value_of(m).cloned())
        .collect::<Option<Vec<Value>>>()
    else {
        return;
    };
    for u in first..=last {
        let of_turn: Vec<usize> = media
            .iter()
            .copied()
            .filter(|&m| chain.nodes[m].turn() == u)
            .collect();
        let ptr = chain.turns[u].ptr;
        let parts = fx
            .value_at(ptr)
            .and_then(|msg| msg.get("content"))
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if !of_turn.is_empty() && of_turn.len() == parts {
            // Every part moves: the result keeps the empty text OpenAI takes.
            fx.set_field(ptr, "content", Some(json!("")));
        } else {
            for &m in &of_turn {
                fx.drop_node(m);
            }
        }
        for m in of_turn {
            fx.claim(m);
        }
    }
    let count = moved.len();
    fx.plan
        .insert_after
        .entry(after)
        .or_default()
        .push(json!({"role": "user", "content": moved}));
    let detail = format!(
        "moved the tool results' {} into a user message right after them (messages[{after}] is the last result): the provider takes images and files in user messages only",
        if count == 1 { "media part".to_string() } else { format!("{count} media parts") }
    );
    fx.note(v.rule, v.path.clone(), "moved", detail);
}
