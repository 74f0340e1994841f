//! The target's model: the one `--model` gives, else the source's, named the way the
//! target's provider names it, and never one that would make the target body read as
//! another dialect.
//!
//! | source model | openai_chat, openai_responses | anthropic | gemini, bedrock_converse |
//! |---|---|---|---|
//! | `claude-…`, Bedrock `[us.\|eu.\|apac.\|global.]anthropic.claude-…-vN:M`, Vertex `claude-…@date` | not carried (a Claude model reads as Anthropic) | Anthropic's `claude-…` | in the URL, as the source names it |
//! | `gpt-…`, `o1`, `o3`, `o4` | carried | not carried (reads as chat) | in the URL |
//! | another Bedrock model id (`amazon.nova-…`, `us.meta.llama…`) | carried | not carried (Anthropic serves none) | in the URL |
//! | a model whose provider profile does not serve the target (`gemini-…` to Anthropic) | not carried | not carried | in the URL |
//! | a model mend does not know | carried | carried | in the URL |
//!
//! A target that takes its model in the body (chat, Responses, Anthropic) and is left
//! without one gets a note of kind `missing`: the body cannot say which provider's it is
//! when nothing else does, and every one of those APIs requires `model`.

use super::{Note, NoteKind};
use crate::{Dialect, Profile};

/// The region prefixes of Bedrock's cross-region inference profiles.
const BEDROCK_REGIONS: &[&str] = &["us.", "eu.", "apac.", "global."];

/// The model providers of Bedrock's model ids (`<provider>.<model>-vN:M`).
const BEDROCK_PROVIDERS: &[&str] = &[
    "anthropic.",
    "amazon.",
    "meta.",
    "mistral.",
    "cohere.",
    "ai21.",
    "deepseek.",
    "openai.",
    "qwen.",
    "writer.",
    "moonshot.",
    "google.",
    "nvidia.",
    "minimax.",
    "twelvelabs.",
    "stability.",
];

/// A Bedrock model id without its ARN prefix and region prefix, when it is one.
fn bedrock_base(model: &str) -> Option<&str> {
    if model.starts_with("arn:aws") && !model.contains("anthropic.") {
        // An application inference profile names no model.
        return Some(model);
    }
    let m = model.rsplit('/').next().unwrap_or(model);
    let m = BEDROCK_REGIONS
        .iter()
        .find_map(|r| m.strip_prefix(r))
        .unwrap_or(m);
    BEDROCK_PROVIDERS
        .iter()
        .any(|p| m.starts_with(p))
        .then_some(m)
}

/// Whether a name ends with an eight-digit date after a dash (`-20250929`).
fn ends_with_date(name: &str) -> bool {
    name.rsplit_once('-').is_some_and(|(head, d)| {
        !head.is_empty() && d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Anthropic's own name of a Claude model that Bedrock or Vertex names its way:
/// `us.anthropic.claude-sonnet-4-5-20250929-v1:0` and `claude-sonnet-4-5@20250929` are
/// both `claude-sonnet-4-5-20250929`. None when the name is not one of those forms, or
/// when its Anthropic name cannot be told for sure (a Vertex `-v2` model, a Bedrock id
/// without a date).
///
/// ```
/// use mend::convert::anthropic_model_name as name;
/// assert_eq!(name("us.anthropic.claude-sonnet-4-5-20250929-v1:0").as_deref(), Some("claude-sonnet-4-5-20250929"));
/// assert_eq!(name("anthropic.claude-3-7-sonnet-20250219-v1:0").as_deref(), Some("claude-3-7-sonnet-20250219"));
/// assert_eq!(name("claude-opus-4-1@20250805").as_deref(), Some("claude-opus-4-1-20250805"));
/// assert_eq!(name("claude-sonnet-4-5-20250929"), None); // already Anthropic's
/// assert_eq!(name("amazon.nova-pro-v1:0"), None);
/// ```
pub fn anthropic_model_name(model: &str) -> Option<String> {
    if let Some(base) = bedrock_base(model) {
        let rest = base.strip_prefix("anthropic.")?;
        // `-v1:0`, `-v2`: the Bedrock version suffix, after a dated name. The newest
        // ids have neither (`anthropic.claude-sonnet-4-6` is `claude-sonnet-4-6`).
        let versioned = rest.rsplit_once("-v").filter(|(_, v)| {
            v.split(':')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        });
        let name = match versioned {
            Some((name, _)) if ends_with_date(name) => name,
            Some(_) => return None,
            None if !rest.contains(':') && !ends_with_date(rest) => rest,
            None => return None,
        };
        let plain = name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        return (plain && name.starts_with("claude-")).then(|| name.to_string());
    }
    let m = model.rsplit('/').next().unwrap_or(model);
    let (name, date) = m.split_once('@')?;
    let vertex_version = name
        .rsplit_once("-v")
        .is_some_and(|(_, v)| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
    let dated = date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit());
    (name.starts_with("claude-") && dated && !vertex_version).then(|| format!("{name}-{date}"))
}

/// Why a model is not written into a body of `to`, or None when it may be.
fn refused(model: &str, to: Dialect) -> Option<String> {
    let m = model.to_ascii_lowercase();
    if m.starts_with("claude") && to != Dialect::Anthropic {
        return Some(format!(
            "`{model}` is a Claude model: written in a {to} body it would read as Anthropic"
        ));
    }
    if bedrock_base(&m).is_some() {
        return (to == Dialect::Anthropic)
            .then(|| format!("`{model}` is a Bedrock model id with no Anthropic name"));
    }
    match Profile::for_model(&m) {
        Some(p) if !p.fits(to) => Some(format!(
            "`{model}` is a model of the `{}` profile, which does not serve {to}",
            p.name
        )),
        _ => None,
    }
}

/// The model to write for `to` and to check it under: `given` (`--model`) as it is, else
/// `source`'s as the target names it. Notes what was renamed, refused or is missing.
pub(crate) fn target_model(
    given: Option<&str>,
    source: Option<&str>,
    to: Dialect,
    notes: &mut Vec<Note>,
) -> Option<String> {
    if let Some(m) = given {
        return Some(m.to_string());
    }
    let in_body = matches!(
        to,
        Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Anthropic
    );
    let Some(source) = source else {
        if in_body {
            notes.push(missing(to, "the source names none"));
        }
        return None;
    };
    if !in_body {
        // Said in the URL note as the source names it.
        return Some(source.to_string());
    }
    let mapped = anthropic_model_name(source);
    let model = mapped.as_deref().unwrap_or(source);
    if let Some(why) = refused(model, to) {
        notes.push(Note::new(
            NoteKind::Lost,
            "model",
            "/model".into(),
            format!("{why}; not carried"),
        ));
        notes.push(missing(to, "the source's is not one of its models"));
        return None;
    }
    if mapped.is_some() {
        notes.push(Note::new(
            NoteKind::Changed,
            "model",
            "/model".into(),
            format!("`{source}` is `{model}` as Anthropic names it"),
        ));
    }
    Some(model.to_string())
}

fn missing(to: Dialect, why: &str) -> Note {
    Note::new(
        NoteKind::Missing,
        "model",
        "/model".into(),
        format!(
            "{to} requires `model` and no model is known for it ({why}): give it with --model; without it nothing in the body may tell its dialect"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bedrock_and_vertex_claude_ids_have_anthropic_names() {
        for (id, name) in [
            (
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                Some("claude-sonnet-4-5-20250929"),
            ),
            (
                "global.anthropic.claude-haiku-4-5-20251001-v1:0",
                Some("claude-haiku-4-5-20251001"),
            ),
            (
                "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-3-7-sonnet-20250219-v1:0",
                Some("claude-3-7-sonnet-20250219"),
            ),
            ("anthropic.claude-instant-v1", None),
            ("us.anthropic.claude-sonnet-4-6", Some("claude-sonnet-4-6")),
            ("anthropic.claude-sonnet-4-5-20250929", None),
            ("anthropic.claude-v2:1", None),
            ("claude-3-5-sonnet-v2@20241022", None),
            ("claude-sonnet-4@20250514", Some("claude-sonnet-4-20250514")),
            ("claude-sonnet-4@latest", None),
            ("us.amazon.nova-micro-v1:0", None),
            ("gpt-4o", None),
            ("", None),
            ("@", None),
            ("anthropic.-v", None),
        ] {
            assert_eq!(anthropic_model_name(id).as_deref(), name, "{id}");
        }
    }

    #[test]
    fn a_model_that_would_read_as_another_dialect_is_refused() {
        let mut notes = Vec::new();
        let to_chat = target_model(
            None,
            Some("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Dialect::OpenAiChat,
            &mut notes,
        );
        assert_eq!(to_chat, None);
        assert_eq!(notes.len(), 2);
        assert_eq!(notes[1].kind, NoteKind::Missing);
        notes.clear();
        assert_eq!(
            target_model(None, Some("gpt-4o"), Dialect::Anthropic, &mut notes),
            None
        );
        notes.clear();
        assert_eq!(
            target_model(None, Some("gpt-4o"), Dialect::Gemini, &mut notes).as_deref(),
            Some("gpt-4o")
        );
        assert!(notes.is_empty());
        assert_eq!(
            target_model(Some("claude-x"), None, Dialect::OpenAiChat, &mut notes).as_deref(),
            Some("claude-x")
        );
        assert!(notes.is_empty());
    }
}
