//! One request body as the inspector shows it: its chain turn by turn (roles, ids,
//! call → result and reasoning links, token counts per group), each violation on its
//! turn with the provider's text, and what repair would change as edits and a diff.
//!
//! Invariant: built from the library's analysis only (`mend::analyze`, `Analysis::groups`,
//! `mend::trim::Counter`, `mend::repair`); it re-reads the wire only to show a turn's own
//! JSON and text. Everything here is plain data: the page escapes it when it renders.

use std::ops::Range;

use mend::chain::NodeKind;
use mend::trim::Counter;
use mend::{Analysis, CheckOptions, Dialect, RepairOptions, Severity, Violation};
use serde_json::Value;

/// Most characters of a turn's text preview.
const PREVIEW_CHARS: usize = 400;
/// Most characters of a turn's JSON shown.
const TURN_JSON_CHARS: usize = 16 * 1024;
/// Most lines of the repair diff shown.
const DIFF_LINES: usize = 800;
/// Most characters of one diff line shown.
const DIFF_LINE_CHARS: usize = 400;

/// A finding as shown.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    pub rule: String,
    pub error: bool,
    pub path: String,
    pub message: String,
    pub provider: Option<String>,
}

impl Finding {
    fn of(v: &Violation) -> Finding {
        Finding {
            rule: v.rule.id().to_string(),
            error: v.severity == Severity::Error,
            path: if v.path.is_empty() {
                "(body)".into()
            } else {
                v.path.clone()
            },
            message: v.message.clone(),
            provider: v.provider_error.clone(),
        }
    }
}

/// One thing in a turn: a call, a result, reasoning, an item id, a text or media part.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    /// `call`, `result`, `reasoning`, `message`, `text`, `media`, `empty`, `other`.
    pub kind: &'static str,
    /// What it is: tool name, ids, flags.
    pub label: String,
    /// The turn it is linked to and how (`→ result in`, `← call in`, `→ followed by`);
    /// `None` with a `Some` text when there is nothing to link to.
    pub link: Option<(&'static str, Option<usize>)>,
}

/// One turn (wire message or item) of the chain.
#[derive(Debug, Clone)]
pub(crate) struct TurnRow {
    pub index: usize,
    pub path: String,
    pub role: String,
    /// The unit (group) it belongs to, by index into [`View::groups`].
    pub group: usize,
    pub parts: Vec<Part>,
    pub preview: String,
    pub json: String,
    pub tokens: usize,
    pub findings: Vec<Finding>,
}

/// A unit of the history that trim keeps or drops whole, with its tokens.
#[derive(Debug, Clone)]
pub(crate) struct GroupRow {
    /// `instructions`, `group` (calls with their results and reasoning) or `turn`.
    pub kind: &'static str,
    pub turns: Range<usize>,
    pub tokens: usize,
}

/// One line of the repair diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DiffLine {
    Same(String),
    Removed(String),
    Added(String),
    /// Lines left out between hunks.
    Gap,
}

/// What repair would change.
#[derive(Debug, Clone, Default)]
pub(crate) struct RepairView {
    /// (rule, path, action, detail).
    pub edits: Vec<[String; 4]>,
    pub unrepairable: Vec<Finding>,
    pub diff: Vec<DiffLine>,
    /// The diff was longer than shown.
    pub diff_cut: bool,
    /// Repair could not run at all.
    pub failed: Option<String>,
}

/// A body as the inspector shows it.
#[derive(Debug, Clone)]
pub(crate) struct View {
    pub dialect: Dialect,
    pub provider: &'static str,
    pub model: Option<String>,
    pub counter: &'static str,
    pub turns: Vec<TurnRow>,
    pub groups: Vec<GroupRow>,
    /// Findings that concern no turn.
    pub loose: Vec<Finding>,
    pub errors: usize,
    pub warnings: usize,
    pub repair: RepairView,
}

/// The view of a parsed body under the options (the dialect given or detected).
pub(crate) fn view_of(body: &Value, opts: &CheckOptions) -> Result<View, String> {
    let analysis = mend::analyze(body, opts).map_err(|e| e.to_string())?;
    if let Some(v) = mend::unreadable_history(analysis.dialect, &analysis.violations) {
        return Err(format!(
            "no {} history to show: {} ({})",
            analysis.dialect,
            v.message,
            if v.path.is_empty() { "body" } else { &v.path }
        ));
    }
    let counter = Counter::for_model(analysis.chain.facts.model, analysis.dialect);
    let tokens: Vec<usize> = analysis
        .chain
        .turns
        .iter()
        .map(|t| t.ptr.resolve(body).map_or(0, |v| counter.count_item(v)))
        .collect();
    let groups = groups_of(&analysis, &tokens);
    let mut turns = turn_rows(&analysis, body, &tokens, &groups);
    let mut loose = Vec::new();
    for v in &analysis.violations {
        match v.loc.turn.and_then(|t| turns.get_mut(t)) {
            Some(row) => row.findings.push(Finding::of(v)),
            None => loose.push(Finding::of(v)),
        }
    }
    let errors = analysis
        .violations
        .iter()
        .filter(|v| v.severity == Severity::Error)
        .count();
    Ok(View {
        dialect: analysis.dialect,
        provider: analysis.profile.name,
        model: analysis.chain.facts.model.map(str::to_string),
        counter: counter.name(),
        turns,
        groups,
        loose,
        errors,
        warnings: analysis.violations.len() - errors,
        repair: repair_view(body, analysis.dialect, opts),
    })
}

/// The prefix (instructions) and the units, each with its tokens.
fn groups_of(a: &Analysis, tokens: &[usize]) -> Vec<GroupRow> {
    let g = a.groups(0);
    let sum = |r: &Range<usize>| tokens.get(r.clone()).map_or(0, |t| t.iter().sum());
    let mut out = Vec::with_capacity(g.units.len() + 1);
    if !g.prefix.is_empty() {
        out.push(GroupRow {
            kind: "instructions",
            tokens: sum(&g.prefix),
            turns: g.prefix,
        });
    }
    for u in g.units {
        out.push(GroupRow {
            kind: if u.is_group() { "group" } else { "turn" },
            tokens: sum(&u.turns),
            turns: u.turns,
        });
    }
    out
}

fn turn_rows(a: &Analysis, body: &Value, tokens: &[usize], groups: &[GroupRow]) -> Vec<TurnRow> {
    let chain = &a.chain;
    // For each node, the node it is paired with (call ↔ result).
    let mut peer: Vec<Option<usize>> = vec![None; chain.nodes.len()];
    for &(call, result) in &a.pairs {
        if let Some(p) = peer.get_mut(call) {
            *p = Some(result);
        }
        if let Some(p) = peer.get_mut(result) {
            *p = Some(call);
        }
    }
    let turn_of = |n: Option<usize>| n.and_then(|n| chain.nodes.get(n)).map(|n| n.turn());
    chain
        .turns
        .iter()
        .enumerate()
        .map(|(t, turn)| {
            let wire = turn.ptr.resolve(body);
            let parts = chain
                .turn_nodes(t)
                .iter()
                .enumerate()
                .map(|(k, _)| {
                    let linked = turn_of(peer[turn.first() + k]);
                    part_of(turn.first() + k, linked, t, chain, a.dialect)
                })
                .collect();
            TurnRow {
                index: t,
                path: turn.ptr.render(),
                role: turn.wire.to_string(),
                group: groups
                    .iter()
                    .position(|g| g.turns.contains(&t))
                    .unwrap_or(0),
                parts,
                preview: wire.map(preview_of).unwrap_or_default(),
                json: wire.map(json_of).unwrap_or_default(),
                tokens: tokens.get(t).copied().unwrap_or(0),
                findings: Vec::new(),
            }
        })
        .collect()
}

fn part_of(
    n: usize,
    linked: Option<usize>,
    turn: usize,
    chain: &mend::chain::Chain,
    dialect: Dialect,
) -> Part {
    let turns = chain.turns.len();
    let kind = &chain.nodes[n].kind;
    let id = |label: &str, id: Option<&str>| match id {
        Some(i) => format!("{label} {i}"),
        None => String::new(),
    };
    let join = |bits: Vec<String>| {
        bits.into_iter()
            .filter(|b| !b.is_empty())
            .collect::<Vec<_>>()
            .join(" · ")
    };
    match kind {
        NodeKind::Call {
            call_id,
            name,
            kind,
            wire,
            signed,
            ..
        } => Part {
            kind: "call",
            label: join(vec![
                name.unwrap_or("(unnamed)").to_string(),
                id("id", *call_id),
                id("item", chain.call_item_id(n)),
                chain.wire_text(*wire).to_string(),
                if *kind == mend::chain::CallKind::Server {
                    "server tool".into()
                } else {
                    String::new()
                },
                if *signed {
                    "signed".into()
                } else {
                    String::new()
                },
            ]),
            link: (*kind == mend::chain::CallKind::Client).then_some(("→ result in", linked)),
        },
        NodeKind::Result {
            call_id,
            name,
            wire,
            ..
        } => Part {
            kind: "result",
            label: join(vec![
                name.unwrap_or("").to_string(),
                id("answers", *call_id),
                chain.wire_text(*wire).to_string(),
            ]),
            link: Some(("← call in", linked)),
        },
        NodeKind::Reasoning {
            item_id,
            signed,
            encrypted,
            redacted,
            wire,
        } => {
            let flags = [
                (*signed, "signed"),
                (*encrypted, "encrypted"),
                (*redacted, "redacted"),
            ];
            let wire = chain.wire_text(*wire);
            let mut bits = vec![wire.to_string(), id("id", *item_id)];
            bits.extend(flags.iter().filter(|f| f.0).map(|f| f.1.to_string()));
            // A Responses reasoning item must be followed by the item it came with.
            let follows = dialect == Dialect::OpenAiResponses && wire == "reasoning";
            Part {
                kind: "reasoning",
                label: join(bits),
                link: follows.then_some(("→ followed by", (turn + 1 < turns).then_some(turn + 1))),
            }
        }
        NodeKind::Message { item_id } => Part {
            kind: "message",
            label: join(vec!["output message".into(), id("id", *item_id)]),
            link: None,
        },
        NodeKind::Text { blank } => Part {
            kind: "text",
            label: if *blank {
                "blank text".into()
            } else {
                "text".into()
            },
            link: None,
        },
        NodeKind::Media => Part {
            kind: "media",
            label: "media".into(),
            link: None,
        },
        NodeKind::Empty => Part {
            kind: "empty",
            label: "empty part".into(),
            link: None,
        },
        NodeKind::Other { wire } => Part {
            kind: "other",
            label: (*wire).to_string(),
            link: None,
        },
    }
}

/// The readable text of a wire message: its strings under the keys that hold what was
/// said, thought or passed to a tool, cut to [`PREVIEW_CHARS`].
fn preview_of(wire: &Value) -> String {
    const SAID: [&str; 10] = [
        "text",
        "content",
        "thinking",
        "output",
        "arguments",
        "input",
        "summary",
        "reasoning_content",
        "result",
        "args",
    ];
    fn walk(v: &Value, under_said: bool, out: &mut String) {
        if out.chars().count() > PREVIEW_CHARS {
            return;
        }
        match v {
            Value::String(s) if under_said => {
                if !out.is_empty() {
                    out.push_str(" ¶ ");
                }
                out.push_str(&clip(s, PREVIEW_CHARS + 1));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, under_said, out)),
            Value::Object(o) => {
                for (k, x) in o {
                    let said = under_said || SAID.contains(&k.as_str());
                    if matches!(x, Value::Object(_)) && said && k != "content" {
                        // Tool arguments given as an object: their JSON is the text.
                        walk(&Value::String(x.to_string()), true, out);
                    } else {
                        walk(x, said, out);
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = String::new();
    walk(wire, false, &mut out);
    let shown = clip(&out, PREVIEW_CHARS);
    if shown.len() < out.len() {
        format!("{shown}…")
    } else {
        shown
    }
}

fn json_of(wire: &Value) -> String {
    let text = serde_json::to_string_pretty(wire).unwrap_or_default();
    let shown = clip(&text, TURN_JSON_CHARS);
    if shown.len() < text.len() {
        format!(
            "{shown}\n… {} more characters not shown",
            text[shown.len()..].chars().count()
        )
    } else {
        shown
    }
}

/// The first `max` characters of `s`.
pub(crate) fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => s[..at].to_string(),
        None => s.to_string(),
    }
}

fn repair_view(body: &Value, dialect: Dialect, opts: &CheckOptions) -> RepairView {
    let ropts = RepairOptions {
        check: CheckOptions {
            dialect: Some(dialect),
            ..opts.clone()
        },
        ..RepairOptions::default()
    };
    let repaired = match mend::repair(body, &ropts) {
        Ok(r) => r,
        Err(e) => {
            return RepairView {
                failed: Some(e.to_string()),
                ..RepairView::default()
            }
        }
    };
    let edits = repaired
        .edits
        .iter()
        .map(|e| {
            [
                e.rule.id().to_string(),
                e.path.clone(),
                e.action.to_string(),
                e.detail.clone(),
            ]
        })
        .collect();
    let (diff, diff_cut) = if repaired.edits.is_empty() {
        (Vec::new(), false)
    } else {
        let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
        diff_lines(&pretty(body), &pretty(&repaired.body))
    };
    RepairView {
        edits,
        unrepairable: repaired.unrepairable.iter().map(Finding::of).collect(),
        diff,
        diff_cut,
        failed: None,
    }
}

/// A line diff with three lines of context around each change, at most [`DIFF_LINES`]
/// lines; whether it was cut.
pub(crate) fn diff_lines(before: &str, after: &str) -> (Vec<DiffLine>, bool) {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_lines(before, after);
    let mut out = Vec::new();
    for (i, group) in diff.grouped_ops(3).iter().enumerate() {
        if i > 0 {
            out.push(DiffLine::Gap);
        }
        for op in group {
            for change in diff.iter_changes(op) {
                if out.len() >= DIFF_LINES {
                    return (out, true);
                }
                let line = clip(change.value().trim_end_matches('\n'), DIFF_LINE_CHARS);
                out.push(match change.tag() {
                    ChangeTag::Equal => DiffLine::Same(line),
                    ChangeTag::Delete => DiffLine::Removed(line),
                    ChangeTag::Insert => DiffLine::Added(line),
                });
            }
        }
    }
    (out, false)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_orphan_result_is_shown_on_its_turn_with_the_providers_text_and_its_repair() {
        let body = json!({"model": "gpt-4o", "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_9", "content": "orphan"}
        ]});
        let v = view_of(&body, &CheckOptions::default()).unwrap();
        assert_eq!(v.dialect, Dialect::OpenAiChat);
        assert_eq!(v.turns.len(), 4);
        let call = &v.turns[1].parts[0];
        assert_eq!(call.kind, "call");
        assert!(call.label.contains("get_weather") && call.label.contains("call_1"));
        assert_eq!(call.link, Some(("→ result in", Some(2))));
        let f = &v.turns[3].findings[0];
        assert_eq!(f.rule, "tool-result-without-call");
        assert!(f.provider.as_deref().unwrap().contains("role 'tool'"));
        assert!(v
            .repair
            .edits
            .iter()
            .any(|e| e[0] == "tool-result-without-call"));
        assert!(v
            .repair
            .diff
            .iter()
            .any(|l| matches!(l, DiffLine::Removed(s) if s.contains("call_9"))));
        // The call and its result are one group, with the tokens of both turns.
        let g = &v.groups[v.turns[1].group];
        assert_eq!(g.kind, "group");
        assert_eq!(g.tokens, v.turns[1].tokens + v.turns[2].tokens);
        assert!(v.turns[0].preview.contains("weather?"));
    }

    #[test]
    fn a_body_with_no_history_is_an_error_not_a_view() {
        let e = view_of(&json!({"model": "x"}), &CheckOptions::default()).unwrap_err();
        assert!(!e.is_empty());
        let e = view_of(
            &json!({"messages": 3}),
            &CheckOptions {
                dialect: Some(Dialect::OpenAiChat),
                ..CheckOptions::default()
            },
        )
        .unwrap_err();
        assert!(e.contains("no openai_chat history"), "{e}");
    }

    #[test]
    fn long_text_is_clipped_on_a_character_boundary() {
        let s = "é".repeat(10);
        assert_eq!(clip(&s, 3), "ééé");
        let body = json!({"messages": [{"role": "user", "content": "ß".repeat(100_000)}]});
        let v = view_of(&body, &CheckOptions::default()).unwrap();
        assert!(v.turns[0].preview.chars().count() <= PREVIEW_CHARS + 1);
        assert!(v.turns[0].json.contains("more characters not shown"));
        let (d, cut) = diff_lines(&"a\n".repeat(2000), &"b\n".repeat(2000));
        assert!(cut && d.len() == DIFF_LINES);
    }
}
