//! `mend rules` and `mend providers`: the rule catalog and the provider profiles.
//!
//! The descriptions are a `match` over [`Rule`], so a rule added to the library fails
//! the build here until it has a line.

use std::io;

use mend::profile::PROFILES;
use mend::Rule;
use serde_json::json;

use crate::printer::Printer;
use crate::Status;

/// Which dialects a rule applies to, and what it finds, in one line (DESIGN.md catalog).
pub fn describe(rule: Rule) -> (&'static str, &'static str) {
    match rule {
        Rule::ToolResultWithoutCall => ("all", "a tool result answers no earlier call"),
        Rule::ToolCallWithoutResult => ("all", "a tool call is never answered"),
        Rule::ToolResultNotAdjacent => (
            "openai_chat, anthropic, gemini",
            "the result exists but not where the dialect requires it",
        ),
        Rule::DuplicateCallId => (
            "all",
            "one call id used by two calls, or answered twice; in Responses, one item id (msg_, rs_, fc_) on two items",
        ),
        Rule::InvalidCallId => (
            "profiles",
            "a call id too long, of the wrong form for the provider, or missing",
        ),
        Rule::RoleOrder => (
            "anthropic, gemini, profiles",
            "roles in an order the API rejects",
        ),
        Rule::EmptyContent => (
            "anthropic, gemini",
            "a message or text block with no content",
        ),
        Rule::ReasoningWithoutFollower => (
            "openai_responses",
            "a reasoning item not followed by the item it was produced with",
        ),
        Rule::CallWithoutReasoning => (
            "openai_responses",
            "a reasoning model's call or message sent without its reasoning item",
        ),
        Rule::FollowerIdMismatch => (
            "openai_responses",
            "the item after a reasoning item lost or changed its provider id (msg_, fc_)",
        ),
        Rule::ThinkingNotFirst => (
            "anthropic",
            "with thinking on, an assistant turn of the tool loop does not start with thinking",
        ),
        Rule::ThinkingModified => (
            "anthropic",
            "a signed thinking block was changed, stripped of its signature, or moved",
        ),
        Rule::MissingThoughtSignature => (
            "gemini",
            "a Gemini 3 function call sent back without its thought signature",
        ),
        Rule::FunctionResponseCount => (
            "gemini",
            "a response turn answers a different number of calls than its call turn made",
        ),
        Rule::FunctionCallPosition => (
            "gemini",
            "a call turn not right after a user turn or a function-response turn",
        ),
        Rule::MissingReasoningContent => (
            "deepseek, moonshot",
            "a thinking-mode assistant turn with tool calls lacks reasoning_content",
        ),
        Rule::Malformed => (
            "all",
            "the body does not have the dialect's shape (wrong type, missing or unknown field)",
        ),
    }
}

/// Print the rule catalog.
pub fn rules(as_json: bool, printer: &mut Printer) -> io::Result<Status> {
    if as_json {
        let rows: Vec<_> = Rule::ALL
            .iter()
            .map(|r| {
                let (dialects, what) = describe(*r);
                json!({"id": r.id(), "dialects": dialects, "description": what})
            })
            .collect();
        printer.out(&format!("{}\n", json!(rows)))?;
        return Ok(Status::Valid);
    }
    let width = Rule::ALL.iter().map(|r| r.id().len()).max().unwrap_or(0);
    let mut s = String::new();
    for r in Rule::ALL {
        let (dialects, what) = describe(r);
        s.push_str(&format!("{:<width$}  {what} ({dialects})\n", r.id()));
    }
    printer.out(&s)?;
    Ok(Status::Valid)
}

/// Print the provider profiles.
pub fn providers(as_json: bool, printer: &mut Printer) -> io::Result<Status> {
    let dialects = |p: &mend::Profile| {
        p.dialects
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if as_json {
        let rows: Vec<_> = PROFILES
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "dialects": p.dialects.iter().map(|d| d.name()).collect::<Vec<_>>(),
                    "about": p.about,
                })
            })
            .collect();
        printer.out(&format!("{}\n", json!(rows)))?;
        return Ok(Status::Valid);
    }
    let width = PROFILES.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut s = String::new();
    for p in PROFILES {
        s.push_str(&format!(
            "{:<width$}  {} [{}]\n",
            p.name,
            p.about,
            dialects(p)
        ));
    }
    printer.out(&s)?;
    Ok(Status::Valid)
}
