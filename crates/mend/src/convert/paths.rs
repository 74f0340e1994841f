//! JSON pointers into the source body for a canonical message or part, so that every
//! note names where the thing was.

use crate::canonical::{Conversation, Form, Message, Part, Role};
use crate::Dialect;

/// Pointers of one source conversation. It keeps what the pointers depend on (forms and
/// kinds of parts, not their content), so the conversation's parts can be moved into the
/// target while pointers are still asked for.
pub(crate) struct SourcePaths {
    dialect: Dialect,
    /// Per message: its form and where its parts start in `parts`.
    messages: Vec<(Option<Form>, usize)>,
    parts: Vec<Shape>,
    /// Index of the first history message (after instructions kept out of the history).
    offset: usize,
}

/// What a part's pointer depends on.
#[derive(Clone, Copy)]
enum Shape {
    Reasoning(Option<Form>),
    ToolCall(Option<Form>),
    Opaque(Option<Form>),
    ToolResult,
    Content,
}

impl SourcePaths {
    pub(crate) fn new(dialect: Dialect, conv: &Conversation) -> SourcePaths {
        let first_is_system = conv
            .messages
            .first()
            .is_some_and(|m| is_top_level_instructions(dialect, m));
        let mut messages = Vec::with_capacity(conv.messages.len());
        let mut parts = Vec::new();
        for m in &conv.messages {
            messages.push((m.form, parts.len()));
            parts.extend(m.parts.iter().map(|p| match p {
                Part::Reasoning(r) => Shape::Reasoning(r.form),
                Part::ToolCall(c) => Shape::ToolCall(c.form),
                Part::Opaque(o) => Shape::Opaque(o.form),
                Part::ToolResult(_) => Shape::ToolResult,
                Part::Text(_) | Part::Image(_) | Part::File(_) => Shape::Content,
            }));
        }
        SourcePaths {
            dialect,
            messages,
            parts,
            offset: usize::from(first_is_system),
        }
    }

    /// The source dialect.
    pub(crate) fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The shapes of message `i`'s parts.
    fn parts_of(&self, i: usize) -> &[Shape] {
        let Some(&(_, from)) = self.messages.get(i) else {
            return &[];
        };
        let to = self.messages.get(i + 1).map_or(self.parts.len(), |m| m.1);
        &self.parts[from..to]
    }

    /// The pointer of message `i`.
    pub(crate) fn message(&self, i: usize) -> String {
        let Some(&(form, _)) = self.messages.get(i) else {
            return String::new();
        };
        if i == 0 && self.offset == 1 {
            return match (self.dialect, form) {
                (Dialect::Anthropic | Dialect::BedrockConverse, _) => "/system".into(),
                (Dialect::Gemini, Some(Form::SnakeCase)) => "/system_instruction".into(),
                (Dialect::Gemini, _) => "/systemInstruction".into(),
                _ => "/instructions".into(),
            };
        }
        if self.dialect == Dialect::OpenAiResponses && form == Some(Form::InputString) {
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
        let Some(&(form, _)) = self.messages.get(i) else {
            return base;
        };
        let string_form = matches!(
            form,
            Some(Form::String | Form::InputString | Form::Instructions)
        );
        match self.dialect {
            Dialect::Anthropic if string_form => base,
            Dialect::Anthropic | Dialect::BedrockConverse if i == 0 && self.offset == 1 => {
                format!("{base}/{j}")
            }
            Dialect::Anthropic | Dialect::BedrockConverse => format!("{base}/content/{j}"),
            Dialect::Gemini => format!("{base}/parts/{j}"),
            Dialect::OpenAiResponses => match self.parts_of(i).get(j) {
                Some(Shape::Reasoning(_) | Shape::ToolCall(_) | Shape::ToolResult) => base,
                _ if string_form => base,
                _ => format!("{base}/content/{j}"),
            },
            Dialect::OpenAiChat => chat_part(&base, form, self.parts_of(i), j),
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
fn chat_part(base: &str, form: Option<Form>, parts: &[Shape], j: usize) -> String {
    let Some(&here) = parts.get(j) else {
        return base.to_string();
    };
    // How many parts before `j` went to the same list.
    let before = |same: fn(Shape) -> bool| parts[..j].iter().filter(|&&p| same(p)).count();
    let in_details = |p: Shape| {
        matches!(p, Shape::Reasoning(f)
            if !matches!(f, Some(Form::ReasoningContent | Form::ReasoningString)))
    };
    let in_calls = |p: Shape| match p {
        Shape::ToolCall(f) => f != Some(Form::LegacyFunction),
        Shape::Opaque(f) => f == Some(Form::ToolCalls),
        _ => false,
    };
    let in_content = |p: Shape| match p {
        Shape::Reasoning(_) | Shape::ToolCall(_) | Shape::ToolResult => false,
        Shape::Opaque(f) => f != Some(Form::ToolCalls),
        Shape::Content => true,
    };
    match here {
        Shape::Reasoning(Some(Form::ReasoningContent)) => format!("{base}/reasoning_content"),
        Shape::Reasoning(Some(Form::ReasoningString)) => format!("{base}/reasoning"),
        Shape::Reasoning(_) => format!("{base}/reasoning_details/{}", before(in_details)),
        Shape::ToolCall(Some(Form::LegacyFunction)) => format!("{base}/function_call"),
        Shape::ToolCall(_) => format!("{base}/tool_calls/{}", before(in_calls)),
        Shape::Opaque(Some(Form::ToolCalls)) => format!("{base}/tool_calls/{}", before(in_calls)),
        Shape::ToolResult => base.to_string(),
        _ if form == Some(Form::String) => format!("{base}/content"),
        _ => format!("{base}/content/{}", before(in_content)),
    }
}
