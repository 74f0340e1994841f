//! Provider profiles: one provider's extra rules on top of a dialect.
//!
//! A profile is data (limits, switches) plus a few predicates over the wire body for the
//! providers that reject fields they do not know. It never forks a dialect: the engine in
//! [`rules`](crate::rules) reads these switches.

use crate::json::Json;

use crate::chain::Ptr;
use crate::dialect::Dialect;
use crate::violation::{Defect, Rule, Violation};

/// How a provider constrains tool call ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallIdForm {
    /// Any non-empty string.
    Any,
    /// At most this many characters (OpenAI chat: 40, Responses: 64).
    MaxLen(usize),
    /// Exactly nine characters of a-z, A-Z, 0-9 (Mistral).
    NineAlnum,
}

/// Which provider a profile is, for the few texts and rules that differ by provider.
/// Resolved once with the profile; the engine compares these, never names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProfileId {
    /// `generic`.
    Generic,
    /// `openai`.
    OpenAi,
    /// `azure`.
    Azure,
    /// `groq`.
    Groq,
    /// `cerebras`.
    Cerebras,
    /// `fireworks`.
    Fireworks,
    /// `mistral`.
    Mistral,
    /// `deepseek`.
    DeepSeek,
    /// `moonshot`.
    Moonshot,
    /// `xai`.
    XAi,
    /// `openrouter`.
    OpenRouter,
    /// `anthropic`.
    Anthropic,
    /// `bedrock`.
    Bedrock,
    /// `vertex`.
    Vertex,
    /// `gemini`.
    Gemini,
}

/// A provider profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The name given with `--provider` (`openai`, `mistral`, ...).
    pub name: &'static str,
    /// The same, as a value to compare.
    pub id: ProfileId,
    /// What it is, for `--help` and reports.
    pub about: &'static str,
    /// Dialects it can refine.
    pub dialects: &'static [Dialect],
    /// Call id form in OpenAI chat.
    pub chat_call_id: CallIdForm,
    /// `call_id` form in Responses.
    pub responses_call_id: CallIdForm,
    /// Thinking-mode assistant turns with tool calls must carry `reasoning_content`.
    pub requires_reasoning_content: bool,
    /// Roles must strictly alternate, and the first message must be a user message.
    pub strict_alternation: bool,
    /// Mistral's role order: only assistant or tool after tool, last role user or tool.
    pub mistral_role_order: bool,
    /// Responses: each call answered before the next assistant item (DeepSeek).
    pub outputs_before_next_assistant_item: bool,
    /// The `developer` role is not accepted.
    pub rejects_developer_role: bool,
    /// Message keys the provider accepts; others are rejected (Groq, Cerebras).
    pub known_message_keys: Option<&'static [&'static str]>,
    /// Tool call keys the provider accepts; others are rejected (Fireworks).
    pub known_tool_call_keys: Option<&'static [&'static str]>,
    /// Only user messages may carry `name` (xAI).
    pub name_only_on_user: bool,
    /// A message's `name` holds no white space and none of `<|\/>` (OpenAI, Azure).
    pub name_without_spaces: bool,
    /// Chat: a system or assistant message's content is a string, not a list of parts
    /// (Groq).
    pub string_content_outside_user: bool,
    /// Every message needs at least one content element: `""` and `[]` are refused,
    /// an assistant's with tool calls too (xAI).
    pub content_required: bool,
    /// Chat: images, audio and files only in user messages (OpenAI, Azure).
    pub media_only_on_user: bool,
}

const CHAT: &[Dialect] = &[Dialect::OpenAiChat];
const OPENAI: &[Dialect] = &[Dialect::OpenAiChat, Dialect::OpenAiResponses];
const ANTHROPIC: &[Dialect] = &[Dialect::Anthropic];

const BEDROCK: &[Dialect] = &[Dialect::Anthropic, Dialect::BedrockConverse];
const VERTEX: &[Dialect] = &[Dialect::Anthropic, Dialect::Gemini];
const ALL: &[Dialect] = &Dialect::ALL;

const CHAT_MESSAGE_KEYS: &[&str] = &[
    "role",
    "content",
    "name",
    "tool_calls",
    "tool_call_id",
    "reasoning",
];
const TOOL_CALL_KEYS: &[&str] = &["id", "type", "function", "index"];

const BASE: Profile = Profile {
    name: "generic",
    id: ProfileId::Generic,
    about: "the rules every provider of the dialect enforces",
    dialects: ALL,
    chat_call_id: CallIdForm::Any,
    responses_call_id: CallIdForm::Any,
    requires_reasoning_content: false,
    strict_alternation: false,
    mistral_role_order: false,
    outputs_before_next_assistant_item: false,
    rejects_developer_role: false,
    known_message_keys: None,
    known_tool_call_keys: None,
    name_only_on_user: false,
    name_without_spaces: false,
    string_content_outside_user: false,
    content_required: false,
    media_only_on_user: false,
};

/// Every profile mend knows.
pub const PROFILES: &[Profile] = &[
    BASE,
    Profile {
        name: "openai",
        id: ProfileId::OpenAi,
        about: "OpenAI: chat call ids at most 40 characters, Responses call_id at most 64, message names without spaces, media in user messages only",
        dialects: OPENAI,
        chat_call_id: CallIdForm::MaxLen(40),
        responses_call_id: CallIdForm::MaxLen(64),
        name_without_spaces: true,
        media_only_on_user: true,
        ..BASE
    },
    Profile {
        name: "azure",
        id: ProfileId::Azure,
        about: "Azure OpenAI: as openai",
        dialects: OPENAI,
        chat_call_id: CallIdForm::MaxLen(40),
        responses_call_id: CallIdForm::MaxLen(64),
        name_without_spaces: true,
        media_only_on_user: true,
        ..BASE
    },
    Profile {
        name: "groq",
        id: ProfileId::Groq,
        about: "Groq: rejects message fields it does not know (e.g. reasoning_content, timestamp), and system or assistant content given as a list of parts",
        dialects: CHAT,
        known_message_keys: Some(CHAT_MESSAGE_KEYS),
        string_content_outside_user: true,
        ..BASE
    },
    Profile {
        name: "cerebras",
        id: ProfileId::Cerebras,
        about: "Cerebras: rejects message fields it does not know (e.g. reasoning_content)",
        dialects: CHAT,
        known_message_keys: Some(CHAT_MESSAGE_KEYS),
        ..BASE
    },
    Profile {
        name: "fireworks",
        id: ProfileId::Fireworks,
        about: "Fireworks: rejects tool call fields it does not know",
        dialects: CHAT,
        known_tool_call_keys: Some(TOOL_CALL_KEYS),
        ..BASE
    },
    Profile {
        name: "mistral",
        id: ProfileId::Mistral,
        about: "Mistral: call ids exactly 9 characters of a-z, A-Z, 0-9; no user right after tool; last role user or tool",
        dialects: CHAT,
        chat_call_id: CallIdForm::NineAlnum,
        mistral_role_order: true,
        ..BASE
    },
    Profile {
        name: "deepseek",
        id: ProfileId::DeepSeek,
        about: "DeepSeek: thinking-mode tool-call turns carry reasoning_content; no developer role; Responses calls answered before the next assistant item",
        dialects: OPENAI,
        requires_reasoning_content: true,
        outputs_before_next_assistant_item: true,
        rejects_developer_role: true,
        ..BASE
    },
    Profile {
        name: "moonshot",
        id: ProfileId::Moonshot,
        about: "Moonshot Kimi: thinking-mode tool-call turns carry reasoning_content",
        dialects: CHAT,
        requires_reasoning_content: true,
        ..BASE
    },
    Profile {
        name: "xai",
        id: ProfileId::XAi,
        about: "xAI: only user messages may carry a name, and every message needs content",
        dialects: OPENAI,
        name_only_on_user: true,
        content_required: true,
        ..BASE
    },
    Profile {
        name: "openrouter",
        id: ProfileId::OpenRouter,
        about: "OpenRouter: the generic rules",
        dialects: CHAT,
        ..BASE
    },
    Profile {
        name: "anthropic",
        id: ProfileId::Anthropic,
        about: "Anthropic first-party Messages API",
        dialects: ANTHROPIC,
        ..BASE
    },
    Profile {
        name: "bedrock",
        id: ProfileId::Bedrock,
        about: "AWS Bedrock (Anthropic InvokeModel and Converse): roles strictly alternate, starting with user",
        dialects: BEDROCK,
        strict_alternation: true,
        ..BASE
    },
    Profile {
        name: "vertex",
        id: ProfileId::Vertex,
        about: "Google Vertex AI (Claude or Gemini): the dialect's rules",
        dialects: VERTEX,
        ..BASE
    },
    Profile {
        name: "gemini",
        id: ProfileId::Gemini,
        about: "Gemini API",
        dialects: &[Dialect::Gemini, Dialect::OpenAiChat],
        ..BASE
    },
];

/// Other names for profiles (as providers are named in the wild).
const ALIASES: &[(&str, &str)] = &[
    ("azure-openai", "azure"),
    ("google", "gemini"),
    ("google-vertex", "vertex"),
    ("aws-bedrock", "bedrock"),
    ("kimi", "moonshot"),
    ("zai", "generic"),
    ("vercel-ai-gateway", "generic"),
    ("github-copilot", "generic"),
    ("together", "generic"),
];

/// OpenAI's own model names: `gpt-*` (not the open-weight `gpt-oss`, which other
/// providers serve), `chatgpt-*`, and the `o1` / `o3` / `o4` reasoning families.
fn openai_model(m: &str) -> bool {
    let family = |p: &str| m == p || m.starts_with(&format!("{p}-"));
    (m.starts_with("gpt-") && !m.starts_with("gpt-oss"))
        || m.starts_with("chatgpt-")
        || ["o1", "o3", "o4"].iter().any(|p| family(p))
}

impl Profile {
    /// Look a profile up by name or alias.
    pub fn named(name: &str) -> Option<&'static Profile> {
        let name = name.to_ascii_lowercase();
        let target = ALIASES
            .iter()
            .find(|(a, _)| *a == name)
            .map(|(_, t)| *t)
            .unwrap_or(&name);
        PROFILES.iter().find(|p| p.name == target)
    }

    /// The default profile of a dialect.
    pub fn default_for(dialect: Dialect) -> &'static Profile {
        let name = match dialect {
            Dialect::OpenAiChat => "generic",
            Dialect::OpenAiResponses => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::BedrockConverse => "bedrock",
        };
        Profile::named(name).unwrap_or(&PROFILES[0])
    }

    /// The profile a model name implies when it names its maker unambiguously.
    pub fn for_model(model: &str) -> Option<&'static Profile> {
        let m = model.to_ascii_lowercase();
        let m = m.rsplit('/').next().unwrap_or(&m);
        if m.starts_with("deepseek") {
            Profile::named("deepseek")
        } else if [
            "mistral",
            "magistral",
            "codestral",
            "ministral",
            "devstral",
            "pixtral",
        ]
        .iter()
        .any(|p| m.starts_with(p))
        {
            Profile::named("mistral")
        } else if m.starts_with("kimi") || m.starts_with("moonshot") {
            Profile::named("moonshot")
        } else if m.starts_with("grok") {
            Profile::named("xai")
        } else if m.starts_with("claude") {
            Profile::named("anthropic")
        } else if m.starts_with("gemini") {
            Profile::named("gemini")
        } else if openai_model(m) {
            Profile::named("openai")
        } else {
            None
        }
    }

    /// Whether the profile applies to a dialect.
    pub fn fits(&self, dialect: Dialect) -> bool {
        self.dialects.contains(&dialect)
    }

    /// Every profile name and alias, for error messages.
    pub fn names() -> Vec<&'static str> {
        PROFILES.iter().map(|p| p.name).collect()
    }

    /// The predicates that read the wire body directly: fields a strict provider rejects.
    pub(crate) fn check_wire<'a, J: Json<'a>>(
        &self,
        dialect: Dialect,
        body: J,
        out: &mut Vec<Violation>,
    ) {
        let nothing_to_check = self.known_message_keys.is_none()
            && self.known_tool_call_keys.is_none()
            && !self.name_only_on_user
            && !self.name_without_spaces
            && !self.string_content_outside_user;
        if dialect != Dialect::OpenAiChat || nothing_to_check {
            return;
        }
        let Some(msgs) = body.get("messages") else {
            return;
        };
        for (i, m) in msgs.items().enumerate() {
            if !m.is_object() {
                continue;
            }
            let role = m.get("role").and_then(J::str).unwrap_or("?");
            if let Some(keys) = self.known_message_keys {
                for (k, _) in m.members() {
                    if !keys.contains(&k) {
                        out.push(
                            Violation::error(
                                Rule::Malformed,
                                Ptr::item("messages", i).render_with(k),
                                format!("messages[{i}] carries `{k}`, a field {} does not accept on a {role} message", self.name),
                            )
                            .provider(Some(format!(
                                "'messages.{i}' : for 'role:{role}' the following must be satisfied[('messages.{i}' : property '{k}' is unsupported)]"
                            ))),
                        );
                    }
                }
            }
            // Groq's schema takes a system or assistant message's content as a string
            // only (OpenHands#4643, powershai#39: a system prompt as a list of text
            // parts; tidyverse/ellmer#162: an assistant's).
            if self.string_content_outside_user
                && matches!(role, "system" | "assistant")
                && m.get("content").is_some_and(|c| c.is_array())
            {
                out.push(
                    Violation::error(
                        Rule::Malformed,
                        Ptr::item("messages", i).render_with("content"),
                        format!("messages[{i}] (role `{role}`) has its content as a list of parts; {} takes a string there", self.name),
                    )
                    .provider(Some(format!(
                        "'messages.{i}' : for 'role:{role}' the following must be satisfied[('messages.{i}.content' : value must be a string)]"
                    )))
                    .at_turn(i)
                    .with_defect(Defect::ContentNotString),
                );
            }
            if self.name_only_on_user && role != "user" && m.has("name") {
                out.push(
                    Violation::error(
                        Rule::Malformed,
                        Ptr::item("messages", i).render_with("name"),
                        format!("messages[{i}] is a {role} message with a `name`; {} accepts `name` on user messages only", self.name),
                    )
                    .provider(Some("Only messages of role 'user' can have a name.".into())),
                );
            }
            // A participant's name (an agent's, LangChain's `create_agent(name=…)`) with
            // a space in it: semantic-kernel#9340, autogen#3582, langchain#35054. The
            // names of tool and function messages name calls and are left to them.
            let name = m.get("name").and_then(J::str);
            if let Some(name) = name.filter(|n| n.chars().any(name_char_refused)) {
                if self.name_without_spaces && !matches!(role, "tool" | "function") {
                    out.push(
                        Violation::error(
                            Rule::Malformed,
                            Ptr::item("messages", i).render_with("name"),
                            format!("messages[{i}].name `{name}` holds white space or one of `<|\\/>`, which {} refuses in a message's name", self.name),
                        )
                        .provider(Some(format!(
                            "Invalid 'messages[{i}].name': string does not match pattern. Expected a string that matches the pattern '^[^\\s<|\\\\/>]+$'."
                        )))
                        .at_turn(i)
                        .with_defect(Defect::MessageNameForm),
                    );
                }
            }
            if let (Some(keys), Some(calls)) = (self.known_tool_call_keys, m.get("tool_calls")) {
                for (j, c) in calls.items().enumerate() {
                    for (k, v) in c.members() {
                        if !keys.contains(&k) {
                            let v = v.to_json();
                            out.push(
                                Violation::error(
                                    Rule::Malformed,
                                    Ptr::sub("messages", i, "tool_calls", j).render_with(k),
                                    format!("messages[{i}].tool_calls[{j}] carries `{k}`, a field {} does not accept", self.name),
                                )
                                .provider(Some(format!(
                                    "1 request validation error: Extra inputs are not permitted, field: 'messages[{i}].tool_calls[{j}].{k}', value: {v}"
                                ))),
                            );
                        }
                    }
                }
            }
        }
    }
}

/// A character OpenAI refuses in a message's `name` (its pattern `^[^\s<|\\/>]+$`).
pub(crate) fn name_char_refused(c: char) -> bool {
    c.is_whitespace() || matches!(c, '<' | '|' | '\\' | '/' | '>')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_resolve() {
        assert_eq!(
            Profile::named("azure-openai").map(|p| p.name),
            Some("azure")
        );
        assert_eq!(Profile::named("Mistral").map(|p| p.name), Some("mistral"));
        assert!(Profile::named("nope").is_none());
        for needed in [
            "openai",
            "azure",
            "groq",
            "cerebras",
            "fireworks",
            "mistral",
            "deepseek",
            "anthropic",
            "gemini",
        ] {
            assert!(Profile::named(needed).is_some(), "{needed}");
        }
        assert_eq!(
            Profile::for_model("deepseek-reasoner").map(|p| p.name),
            Some("deepseek")
        );
        assert_eq!(
            Profile::for_model("mistralai/mistral-large").map(|p| p.name),
            Some("mistral")
        );
        for (model, profile) in [
            ("gpt-5", Some("openai")),
            ("openai/gpt-4o", Some("openai")),
            ("o4-mini", Some("openai")),
            ("o3", Some("openai")),
            ("chatgpt-4o-latest", Some("openai")),
            ("gpt-oss-120b", None),
            ("olmo-2", None),
            ("claude-sonnet-4-5", Some("anthropic")),
            ("gemini-2.5-pro", Some("gemini")),
            ("grok-4", Some("xai")),
            ("kimi-k2-0905-preview", Some("moonshot")),
            ("moonshot-v1-8k", Some("moonshot")),
            ("llama-3.3-70b", None),
        ] {
            assert_eq!(
                Profile::for_model(model).map(|p| p.name),
                profile,
                "{model}"
            );
        }
    }
}
