//! JSON pointers into the source body for a canonical message or part, so that every
//! note names where the thing was.

use crate::canonical::{Conversation, Form, Message, Part, Role};
use crate::Dialect;

/// Pointers of one source conversation.
pub(crate) struct SourcePaths<'a> {
    dialect: Dialect,
    conv: &'a Conversation,
    /// Index of the first history message (after instructions kept out of the history).
    offset: usize,
}

impl<'a> SourcePaths<'a> {
    pub(crate) fn new(dialect: Dialect, conv: &'a Conversation) -> SourcePaths<'a> {
        let first_is_system = conv
            .messages
            .first()
            .is_some_and(|m| is_top_level_instructions(dialect, m));
        SourcePaths {
            dialect,
            conv,
            offset: usize::from(first_is_system),
        }
    }

    /// The pointer of message `i`.
    pub(crate) fn message(&self, i: usize) -> String {
        let Some(m) = self.conv.messages.get(i) else {
            return String::new();
        };
        if i == 0 && self.offset == 1 {
            return match (self.dialect, m.form) {
                (Dialect::Anthropic | Dialect::BedrockConverse, _) => "/system".into(),
                (Dialect::Gemini, Some(Form::SnakeCase)) => "/system_instruction".into(),
                (Dialect::Gemini, _) => "/systemInstruction".into(),
                _ => "/instructions".into(),
            };
        }
        if self.dialect == Dialect::OpenAiResponses && m.form == Some(Form::InputString) {
            return "/input".into();
        }
        format!(
            "/{}/{}",
            self.dialect.history_key(),
            i.saturating_sub(self.offset)
        )
    }

    /// The pointer of part `j` of message `i`, as close as the wire allows.
    pub(crate) fn part(&self, i: usize, j: usize) -> String {
        let base = self.message(i);
        let Some(m) = self.conv.messages.get(i) else {
            return base;
        };
        let string_form = matches!(
            m.form,
            Some(Form::String | Form::InputString | Form::Instructions)
        );
        match self.dialect {
            Dialect::Anthropic if string_form => base,
            Dialect::Anthropic | Dialect::BedrockConverse if i == 0 && self.offset == 1 => {
                format!("{base}/{j}")
            }
            Dialect::Anthropic | Dialect::BedrockConverse => format!("{base}/content/{j}"),
            Dialect::Gemini => format!("{base}/parts/{j}"),
            Dialect::OpenAiResponses => match m.parts.get(j) {
                Some(Part::Reasoning(_) | Part::ToolCall(_) | Part::ToolResult(_)) => base,
                _ if string_form => base,
                _ => format!("{base}/content/{j}"),
            },
            Dialect::OpenAiChat => chat_part(&base, m, j),
        }
    }
}

/// Whether `m` is the instructions a dialect keeps outside its history array.
fn is_top_level_instructions(dialect: Dialect, m: &Message) -> bool {
    match dialect {
        Dialect::Anthropic | Dialect::Gemini | Dialect::BedrockConverse => {
            m.role == Role::System && !m.is_verbatim()
        }
        Dialect::OpenAiResponses => m.form == Some(Form::Instructions),
        Dialect::OpenAiChat => false,
    }
}

/// Chat spreads a message's parts over several keys; find part `j`'s.
fn chat_part(base: &str, m: &Message, j: usize) -> String {
    let (mut content, mut calls, mut details) = (0, 0, 0);
    for (k, p) in m.parts.iter().enumerate() {
        let here = k == j;
        let path = match p {
            Part::Reasoning(r) => match r.form {
                Some(Form::ReasoningContent) => format!("{base}/reasoning_content"),
                Some(Form::ReasoningString) => format!("{base}/reasoning"),
                _ => {
                    details += 1;
                    format!("{base}/reasoning_details/{}", details - 1)
                }
            },
            Part::ToolCall(c) if c.form == Some(Form::LegacyFunction) => {
                format!("{base}/function_call")
            }
            Part::ToolCall(_) => {
                calls += 1;
                format!("{base}/tool_calls/{}", calls - 1)
            }
            Part::Opaque(o) if o.form == Some(Form::ToolCalls) => {
                calls += 1;
                format!("{base}/tool_calls/{}", calls - 1)
            }
            Part::ToolResult(_) => base.to_string(),
            _ if m.form == Some(Form::String) => format!("{base}/content"),
            _ => {
                content += 1;
                format!("{base}/content/{}", content - 1)
            }
        };
        if here {
            return path;
        }
    }
    base.to_string()
}
