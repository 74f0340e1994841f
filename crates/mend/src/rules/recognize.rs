//! Recognizing a provider's error message as a history error of the catalog: which rules
//! a provider's 400 is about, read from the words it answered with.
//!
//! The catalog's provider texts ([`RuleSpec::provider_texts`](super::RuleSpec)) are
//! quoted with the concrete ids and indices of the request they were seen on
//! (`messages.33`, `call_jJATmoU…`), abridged with `…` where they list ids. A text is
//! turned into a pattern once:
//!
//! - both the text and the message are *normalized*: backticks dropped, double quotes
//!   read as single quotes, whitespace runs as one space, ASCII case folded, and every
//!   *id-like word* (a run of `[A-Za-z0-9_-]` holding a digit, or a `_`/`-` joined word
//!   in mixed case, or the placeholders `N` and `M`) read as `#`; so `messages.33` and
//!   `messages.7` are both `messages.#`, and any two call ids are the same `#`;
//! - the text is then cut at each `…` (and `***`, Anthropic's masked path) into pieces,
//!   the last piece without its final period.
//!
//! A message matches a text when the pieces occur in it in order (anywhere: Bedrock
//! wraps a model's text in `The model returned the following errors: …`). Matching a
//! glob of literal pieces by leftmost search is exact for `*`-only globs and linear in
//! the message; the message is read up to [`MESSAGE_LIMIT`] bytes.
//!
//! Only the rules that apply to the dialect are candidates, and `malformed` never is:
//! its texts are about request fields, not the history. The rules come back most
//! specific first (by the length of the longest text that matched).

use std::sync::OnceLock;

use super::Rule;
use crate::dialect::Dialect;

/// The most of a message that is read, in bytes (the texts of the catalog are shorter
/// than 1 KB; an error message longer than this is cut at a character boundary).
pub const MESSAGE_LIMIT: usize = 16 * 1024;

/// The rules of the catalog whose provider texts for `dialect` match `message`, most
/// specific first; empty when the message is not recognized as a history error.
///
/// ```
/// use mend::{rules::recognize, Dialect, Rule};
///
/// let msg = "messages.12: `tool_use` ids were found without `tool_result` blocks \
///            immediately after: toolu_01XyZ. Each `tool_use` block must have a \
///            corresponding `tool_result` block in the next message.";
/// assert_eq!(recognize(Dialect::Anthropic, msg)[0], Rule::ToolCallWithoutResult);
/// assert!(recognize(Dialect::Anthropic, "Overloaded").is_empty());
/// ```
pub fn recognize(dialect: Dialect, message: &str) -> Vec<Rule> {
    let message = normalize(cut(message, MESSAGE_LIMIT));
    let mut found: Vec<(usize, Rule)> = Vec::new();
    for p in patterns() {
        if !p.rule.spec().dialects.contains(&dialect) || !p.matches(&message) {
            continue;
        }
        match found.iter_mut().find(|(_, r)| *r == p.rule) {
            Some((len, _)) => *len = (*len).max(p.len),
            None => found.push((p.len, p.rule)),
        }
    }
    // Stable: equal lengths keep the catalog's order.
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, r)| r).collect()
}

/// One provider text of one rule, as pieces to find in order.
struct Pattern {
    rule: Rule,
    pieces: Vec<String>,
    /// The pieces' total length: how specific the text is.
    len: usize,
}

impl Pattern {
    fn new(rule: Rule, text: &str) -> Option<Pattern> {
        let text = text.replace("***", "…");
        let mut pieces: Vec<String> = text
            .split('…')
            .map(|p| normalize(p).trim().to_string())
            .collect();
        if let Some(last) = pieces.last_mut() {
            if last.ends_with('.') {
                last.pop();
            }
        }
        pieces.retain(|p| !p.is_empty());
        let len = pieces.iter().map(String::len).sum();
        // A text of ids and ellipses alone would match anything: it is no pattern.
        (len >= 8).then_some(Pattern { rule, pieces, len })
    }

    fn matches(&self, message: &str) -> bool {
        let mut at = 0;
        for piece in &self.pieces {
            match message[at..].find(piece.as_str()) {
                Some(i) => at += i + piece.len(),
                None => return false,
            }
        }
        true
    }
}

/// Every provider text of every rule but `malformed`, built once.
fn patterns() -> &'static [Pattern] {
    static PATTERNS: OnceLock<Vec<Pattern>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        Rule::ALL
            .iter()
            .filter(|r| **r != Rule::Malformed)
            .flat_map(|&r| {
                r.spec()
                    .provider_texts
                    .iter()
                    .filter_map(move |t| Pattern::new(r, t.text))
            })
            .collect()
    })
}

/// At most `limit` bytes of `s`, cut at a character boundary.
fn cut(s: &str, limit: usize) -> &str {
    if s.len() <= limit {
        return s;
    }
    let mut end = limit;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether a word stands for an id or an index, which differ from request to request.
fn id_like(word: &str) -> bool {
    if word.bytes().any(|b| b.is_ascii_digit()) || word == "N" || word == "M" {
        return true;
    }
    let joined = word.contains(['_', '-']);
    let upper = word.bytes().any(|b| b.is_ascii_uppercase());
    let lower = word.bytes().any(|b| b.is_ascii_lowercase());
    joined && upper && lower
}

/// The form texts and messages are compared in (see the module's doc).
fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut word = String::new();
    let mut space = false;
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        if id_like(word) {
            out.push('#');
        } else {
            out.push_str(&word.to_ascii_lowercase());
        }
        word.clear();
    };
    for c in s.chars() {
        if is_word_char(c) {
            if space {
                out.push(' ');
                space = false;
            }
            word.push(c);
            continue;
        }
        flush(&mut word, &mut out);
        match c {
            '`' => {}
            c if c.is_whitespace() => space = !out.is_empty(),
            c => {
                if space {
                    out.push(' ');
                    space = false;
                }
                out.push(if c == '"' { '\'' } else { c });
            }
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_indices_are_wildcards() {
        assert_eq!(
            normalize("messages.33: `tool_use` ids   were found: toolu_01AbC"),
            "messages.#: tool_use ids were found: #"
        );
        assert_eq!(
            normalize("messages[N].content[M]"),
            "messages[#].content[#]"
        );
        // Words of the sentence stay words, ids with no digit in mixed case do not.
        assert_eq!(
            normalize("tool_call_id call_jJATmoUduQWxiRwcQjsodM"),
            "tool_call_id #"
        );
    }

    #[test]
    fn texts_match_other_ids_and_wrappers() {
        let openai = "An assistant message with 'tool_calls' must be followed by tool messages \
             responding to each 'tool_call_id'. The following tool_call_ids did not have \
             response messages: call_a1, call_b2";
        assert!(recognize(Dialect::OpenAiChat, openai).contains(&Rule::ToolCallWithoutResult));
        let bedrock = "The model returned the following errors: messages.3.content.0.type: \
             Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is \
             enabled, a final `assistant` message must start with a thinking block (preceeding \
             the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include \
             thinking blocks from previous turns. To avoid this requirement, disable `thinking`. \
             Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking";
        assert_eq!(
            recognize(Dialect::BedrockConverse, bedrock).first(),
            Some(&Rule::ThinkingNotFirst)
        );
        let responses = "No tool output found for function call call_Qx81ZZ.";
        assert_eq!(
            recognize(Dialect::OpenAiResponses, responses),
            vec![Rule::ToolCallWithoutResult]
        );
    }

    #[test]
    fn a_rule_is_recognized_only_for_its_dialects() {
        // Gemini's count text is no rule of OpenAI chat's.
        let gemini = "Please ensure that the number of function response parts is equal to the \
             number of function call parts of the function call turn.";
        assert_eq!(
            recognize(Dialect::Gemini, gemini),
            vec![Rule::FunctionResponseCount]
        );
        assert!(recognize(Dialect::OpenAiChat, gemini).is_empty());
    }

    #[test]
    fn other_errors_are_not_history_errors() {
        for (d, msg) in [
            (Dialect::OpenAiChat, "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000."),
            (Dialect::OpenAiChat, "The model `gpt-5-foo` does not exist or you do not have access to it."),
            (Dialect::OpenAiChat, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages."),
            (Dialect::OpenAiResponses, "Incorrect API key provided: sk-abc***1234. You can find your API key at https://platform.openai.com/account/api-keys."),
            (Dialect::Anthropic, "prompt is too long: 210000 tokens > 200000 maximum"),
            (Dialect::Anthropic, "model: claude-foo-9"),
            (Dialect::Anthropic, "Overloaded"),
            (Dialect::Gemini, "API key not valid. Please pass a valid API key."),
            (Dialect::Gemini, "Resource has been exhausted (e.g. check quota)."),
            (Dialect::BedrockConverse, "The security token included in the request is invalid."),
            (Dialect::BedrockConverse, "Too many requests, please wait before trying again."),
            (Dialect::BedrockConverse, "The provided model identifier is invalid."),
            (Dialect::OpenAiChat, ""),
            (Dialect::OpenAiChat, "…"),
        ] {
            assert!(recognize(d, msg).is_empty(), "{d}: {msg}: {:?}", recognize(d, msg));
        }
    }

    #[test]
    fn long_and_odd_messages_are_read_safely() {
        let long = "é".repeat(MESSAGE_LIMIT);
        assert!(recognize(Dialect::Anthropic, &long).is_empty());
        let tail = format!(
            "{}No tool output found for function call x1.",
            "a".repeat(MESSAGE_LIMIT)
        );
        // Past the limit: not read.
        assert!(recognize(Dialect::OpenAiResponses, &tail).is_empty());
    }

    #[test]
    fn every_catalog_text_recognizes_its_own_rule() {
        for &rule in Rule::ALL {
            if rule == Rule::Malformed {
                continue;
            }
            for t in rule.spec().provider_texts {
                let owned = rule
                    .spec()
                    .dialects
                    .iter()
                    .any(|&d| recognize(d, t.text).contains(&rule));
                assert!(owned, "{rule}: {}", t.text);
            }
        }
    }
}
