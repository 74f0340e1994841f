//! What a check finds: a [`Violation`] of a [`Rule`] at a JSON pointer.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The rule catalog of DESIGN.md. Ids are stable: scripts and cases depend on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// A result answers no earlier call.
    ToolResultWithoutCall,
    /// A call is never answered.
    ToolCallWithoutResult,
    /// The result exists but not where the dialect requires.
    ToolResultNotAdjacent,
    /// One call id used by two calls, or answered twice; in Responses, one provider item
    /// id on two input items.
    DuplicateCallId,
    /// A call id too long, of the wrong form, or missing.
    InvalidCallId,
    /// Roles in an order the API rejects.
    RoleOrder,
    /// A message or block with no content.
    EmptyContent,
    /// A reasoning item not followed by the item it was produced with.
    ReasoningWithoutFollower,
    /// A reasoning model's call or message sent without its reasoning item.
    CallWithoutReasoning,
    /// The follower of a reasoning item lost or changed its provider item id.
    FollowerIdMismatch,
    /// With thinking on, the assistant turn of the tool loop does not start with thinking.
    ThinkingNotFirst,
    /// A signed thinking block was changed, stripped of its signature, or misplaced.
    ThinkingModified,
    /// A Gemini function call sent back without its thought signature.
    MissingThoughtSignature,
    /// A function-response turn answers a different number of calls than were made.
    FunctionResponseCount,
    /// A function-call turn not right after a user turn or a function-response turn.
    FunctionCallPosition,
    /// A thinking-mode assistant turn with tool calls lacks `reasoning_content`.
    MissingReasoningContent,
    /// The body does not have the dialect's shape.
    Malformed,
}

impl Rule {
    /// Every rule, in catalog order.
    pub const ALL: [Rule; 17] = [
        Rule::ToolResultWithoutCall,
        Rule::ToolCallWithoutResult,
        Rule::ToolResultNotAdjacent,
        Rule::DuplicateCallId,
        Rule::InvalidCallId,
        Rule::RoleOrder,
        Rule::EmptyContent,
        Rule::ReasoningWithoutFollower,
        Rule::CallWithoutReasoning,
        Rule::FollowerIdMismatch,
        Rule::ThinkingNotFirst,
        Rule::ThinkingModified,
        Rule::MissingThoughtSignature,
        Rule::FunctionResponseCount,
        Rule::FunctionCallPosition,
        Rule::MissingReasoningContent,
        Rule::Malformed,
    ];

    /// The stable id, e.g. `tool-result-without-call`.
    pub fn id(self) -> &'static str {
        match self {
            Rule::ToolResultWithoutCall => "tool-result-without-call",
            Rule::ToolCallWithoutResult => "tool-call-without-result",
            Rule::ToolResultNotAdjacent => "tool-result-not-adjacent",
            Rule::DuplicateCallId => "duplicate-call-id",
            Rule::InvalidCallId => "invalid-call-id",
            Rule::RoleOrder => "role-order",
            Rule::EmptyContent => "empty-content",
            Rule::ReasoningWithoutFollower => "reasoning-without-follower",
            Rule::CallWithoutReasoning => "call-without-reasoning",
            Rule::FollowerIdMismatch => "follower-id-mismatch",
            Rule::ThinkingNotFirst => "thinking-not-first",
            Rule::ThinkingModified => "thinking-modified",
            Rule::MissingThoughtSignature => "missing-thought-signature",
            Rule::FunctionResponseCount => "function-response-count",
            Rule::FunctionCallPosition => "function-call-position",
            Rule::MissingReasoningContent => "missing-reasoning-content",
            Rule::Malformed => "malformed",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Rule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rule::ALL
            .into_iter()
            .find(|r| r.id() == s)
            .ok_or_else(|| format!("unknown rule '{s}'"))
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

/// How sure mend is that the provider rejects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The provider answers 400.
    Error,
    /// Rejected by some deployments or models only, or likely to degrade the answer.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// Which rule.
    pub rule: Rule,
    /// Error or warning.
    pub severity: Severity,
    /// JSON pointer into the body.
    pub path: String,
    /// What, where and why, naming the ids involved.
    pub message: String,
    /// The provider's own error text with the real ids, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_error: Option<String>,
    /// Index of the turn it concerns in the chain (for tables), when it concerns one.
    #[serde(skip)]
    pub turn: Option<usize>,
}

impl Violation {
    /// A new error-severity violation.
    pub fn error(rule: Rule, path: String, message: String) -> Self {
        Violation {
            rule,
            severity: Severity::Error,
            path,
            message,
            provider_error: None,
            turn: None,
        }
    }

    /// Set the provider's text.
    pub fn provider(mut self, text: Option<String>) -> Self {
        self.provider_error = text;
        self
    }

    /// Set the severity.
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Tie it to a turn of the chain.
    pub fn at_turn(mut self, turn: usize) -> Self {
        self.turn = Some(turn);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_round_trip() {
        for r in Rule::ALL {
            assert_eq!(r.id().parse::<Rule>(), Ok(r));
        }
        assert!("no-such-rule".parse::<Rule>().is_err());
    }
}
