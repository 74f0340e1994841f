//! `mend inspect`: a history as a table of turns, with the links between calls, results
//! and reasoning, and each violation on the row it concerns.
//!
//! Invariant: the table is built from the library's analysis only (`chain.turns`,
//! `pairs`, `violations`); it never re-reads the wire JSON, so it shows exactly what
//! the rules saw.

use std::collections::HashMap;
use std::io;

use mend::chain::{Chain, NodeKind};
use mend::{Analysis, Dialect, Violation};
use serde_json::{json, Value};

use crate::check::{shown_path, violation_line, violations_json};
use crate::input::{self, BadInput, Given, Source};
use crate::printer::Printer;
use crate::style::Palette;
use crate::Status;

/// Inspect one body.
pub fn run(arg: &str, as_json: bool, opts: &Given, printer: &mut Printer) -> io::Result<Status> {
    let source = match Source::one_file(arg, "a folder; inspect reads one body (try `mend check`)")
    {
        Ok(s) => s,
        Err(bad) => return Ok(bad_input(arg, &bad, printer)),
    };
    let label = source.label();
    let bytes = match source.read() {
        Ok(b) => b,
        Err(bad) => return Ok(bad_input(&label, &bad, printer)),
    };
    let body = match input::parse(&bytes) {
        Ok(v) => v,
        Err(bad) => return Ok(bad_input(&label, &bad, printer)),
    };
    let analysis = match input::analyze(&body, opts) {
        Ok(a) => a,
        Err(bad) => return Ok(bad_input(&label, &bad, printer)),
    };
    let table = Table::of(&analysis);
    let valid = !analysis
        .violations
        .iter()
        .any(|v| v.severity == mend::Severity::Error);
    if as_json {
        printer.out(&format!("{}\n", pretty(&table.to_json(&analysis, valid))))?;
    } else {
        printer.out(&table.render(&label, &analysis, valid, printer.palette))?;
    }
    Ok(if valid {
        Status::Valid
    } else {
        Status::Violations
    })
}

fn bad_input(label: &str, bad: &BadInput, printer: &mut Printer) -> Status {
    printer.bad_input(label, bad);
    Status::BadInput
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// How a link relates a row to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rel {
    /// A call on this row is answered on the target row.
    Result,
    /// A result on this row answers a call on the target row.
    Call,
    /// A Responses reasoning item on this row is followed by the target row.
    Follower,
}

impl Rel {
    fn name(self) -> &'static str {
        match self {
            Rel::Result => "result",
            Rel::Call => "call",
            Rel::Follower => "follower",
        }
    }

    fn arrow(self) -> &'static str {
        match self {
            Rel::Result | Rel::Follower => "→",
            Rel::Call => "←",
        }
    }
}

/// A link from a row; `turn` is `None` when there is nothing to link to (an
/// unanswered call, a result with no call, reasoning as the last item).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Link<'a> {
    rel: Rel,
    turn: Option<usize>,
    call_id: Option<&'a str>,
}

/// One row per turn of the chain.
struct Row<'a> {
    path: String,
    ids: Vec<&'a str>,
    /// Tool names of calls and results that carry no id (Gemini pairs by name).
    names: Vec<&'a str>,
    links: Vec<Link<'a>>,
    /// Indexes into the analysis's violations.
    violations: Vec<usize>,
}

struct Table<'a> {
    rows: Vec<Row<'a>>,
    /// Violations that concern no turn.
    loose: Vec<usize>,
    /// The row of each violation, by index.
    row_of: Vec<Option<usize>>,
}

impl<'a> Table<'a> {
    fn of(a: &Analysis<'a>) -> Table<'a> {
        let chain = &a.chain;
        let mut rows: Vec<Row<'a>> = chain
            .turns
            .iter()
            .enumerate()
            .map(|(t, turn)| Row {
                path: turn.ptr.render(),
                ids: ids_of(chain, t),
                names: unnamed_calls(chain, t),
                links: Vec::new(),
                violations: Vec::new(),
            })
            .collect();
        link_calls_and_results(a, &mut rows);
        if a.dialect == Dialect::OpenAiResponses {
            for (t, turn) in chain.turns.iter().enumerate() {
                if turn.wire == "reasoning" {
                    rows[t].links.push(Link {
                        rel: Rel::Follower,
                        turn: (t + 1 < chain.turns.len()).then_some(t + 1),
                        call_id: None,
                    });
                }
            }
        }
        let by_path: HashMap<&str, usize> = rows
            .iter()
            .enumerate()
            .map(|(t, r)| (r.path.as_str(), t))
            .collect();
        let row_of: Vec<Option<usize>> = a
            .violations
            .iter()
            .map(|v| row_of_violation(v, chain.turns.len(), &by_path))
            .collect();
        let mut loose = Vec::new();
        for (i, r) in row_of.iter().enumerate() {
            match r {
                Some(t) => rows[*t].violations.push(i),
                None => loose.push(i),
            }
        }
        Table {
            rows,
            loose,
            row_of,
        }
    }

    fn to_json(&self, a: &Analysis<'_>, valid: bool) -> Value {
        let turns: Vec<Value> = self
            .rows
            .iter()
            .zip(&a.chain.turns)
            .enumerate()
            .map(|(t, (row, turn))| {
                let links: Vec<Value> = row
                    .links
                    .iter()
                    .map(|l| {
                        let mut o = json!({"rel": l.rel.name(), "turn": l.turn});
                        if let (Some(id), Some(m)) = (l.call_id, o.as_object_mut()) {
                            m.insert("call_id".into(), json!(id));
                        }
                        o
                    })
                    .collect();
                let vs: Vec<Violation> = row
                    .violations
                    .iter()
                    .map(|&i| a.violations[i].clone())
                    .collect();
                json!({
                    "index": t,
                    "path": row.path,
                    "role": turn.role.as_str(),
                    "wire": turn.wire,
                    "ids": row.ids,
                    "links": links,
                    "size": turn.size(),
                    "violations": violations_json(&vs),
                })
            })
            .collect();
        json!({
            "dialect": a.dialect.name(),
            "provider": a.profile.name,
            "valid": valid,
            "turns": turns,
            "violations": violations_json(&a.violations),
        })
    }

    fn render(&self, label: &str, a: &Analysis<'_>, valid: bool, pal: Palette) -> String {
        let errors = a
            .violations
            .iter()
            .filter(|v| v.severity == mend::Severity::Error)
            .count();
        let warnings = a.violations.len() - errors;
        let verdict = if valid {
            pal.green("valid")
        } else {
            pal.red("invalid")
        };
        let mut out = format!(
            "{}: {} ({}, provider {}), {} {}, {} {}, {} {}\n\n",
            pal.bold(label),
            verdict,
            a.dialect,
            a.profile.name,
            a.chain.turns.len(),
            plural(a.chain.turns.len(), "turn", "turns"),
            errors,
            plural(errors, "error", "errors"),
            warnings,
            plural(warnings, "warning", "warnings"),
        );

        // Cells as plain text first, so widths are counted without colour codes.
        let header = ["#", "path", "type", "ids", "links", "size", "rules"];
        let cells: Vec<[String; 7]> = self
            .rows
            .iter()
            .zip(&a.chain.turns)
            .enumerate()
            .map(|(t, (row, turn))| {
                let mut ids: Vec<String> = row.ids.iter().map(|s| s.to_string()).collect();
                ids.extend(row.names.iter().map(|n| format!("({n})")));
                let mut rules: Vec<&str> = Vec::new();
                for &i in &row.violations {
                    let id = a.violations[i].rule.id();
                    if !rules.contains(&id) {
                        rules.push(id);
                    }
                }
                [
                    t.to_string(),
                    row.path.clone(),
                    turn.wire.to_string(),
                    ids.join(" "),
                    render_links(&row.links),
                    turn.size().to_string(),
                    rules.join(", "),
                ]
            })
            .collect();
        let mut width = header.map(|h| h.chars().count());
        for row in &cells {
            for (w, c) in width.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cols: [String; 7], paint: &dyn Fn(usize, &str) -> String| -> String {
            let mut s = String::from(" ");
            for (k, c) in cols.iter().enumerate() {
                let pad = width[k].saturating_sub(c.chars().count());
                // Numbers right-aligned, text left-aligned.
                let (left, right) = if k == 0 || k == 5 {
                    (" ".repeat(pad), String::new())
                } else {
                    (String::new(), " ".repeat(pad))
                };
                s.push(' ');
                s.push_str(&left);
                s.push_str(&paint(k, c));
                s.push_str(&right);
                s.push(' ');
            }
            s.trim_end().to_string() + "\n"
        };
        out.push_str(&line(header.map(String::from), &|_, c| pal.dim(c)));
        for (t, cols) in cells.into_iter().enumerate() {
            let severity = self.rows[t]
                .violations
                .iter()
                .map(|&i| a.violations[i].severity)
                .min();
            out.push_str(&line(cols, &|k, c| match (k, severity) {
                (1, _) => pal.cyan(c),
                (4, _) => pal.cyan(c),
                (6, Some(s)) => pal.severity(s, c),
                _ => c.to_string(),
            }));
        }

        if !a.violations.is_empty() {
            out.push_str("\nviolations:\n");
            for (i, v) in a.violations.iter().enumerate() {
                let at = match self.row_of[i] {
                    Some(t) => format!("#{t}"),
                    None => "-".to_string(),
                };
                let text = violation_line(&at, v, pal);
                out.push_str("  ");
                out.push_str(&text.replace("\n    ", "\n      "));
            }
        }
        if !self.loose.is_empty() {
            out.push_str(&format!(
                "\n{} {} no turn (marked -): {}\n",
                self.loose.len(),
                plural(self.loose.len(), "violation concerns", "violations concern"),
                self.loose
                    .iter()
                    .map(|&i| shown_path(&a.violations[i].path))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        out
    }
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Provider ids on a turn: item ids (`rs_`, `msg_`, `fc_`) and call ids, each once.
fn ids_of<'a>(chain: &Chain<'a>, t: usize) -> Vec<&'a str> {
    let mut ids: Vec<&'a str> = Vec::new();
    let mut push = |id: Option<&'a str>| {
        if let Some(id) = id {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    };
    for (k, n) in chain.turn_nodes(t).iter().enumerate() {
        match &n.kind {
            NodeKind::Call { call_id, .. } => {
                push(chain.call_item_id(chain.turns[t].first() + k));
                push(*call_id);
            }
            NodeKind::Result { call_id, .. } => push(*call_id),
            NodeKind::Reasoning { item_id, .. } | NodeKind::Message { item_id } => push(*item_id),
            _ => {}
        }
    }
    ids
}

/// Names of calls and results on a turn that have no call id.
fn unnamed_calls<'a>(chain: &Chain<'a>, t: usize) -> Vec<&'a str> {
    let mut names = Vec::new();
    for n in chain.turn_nodes(t) {
        match &n.kind {
            NodeKind::Call {
                call_id: None,
                name: Some(name),
                ..
            }
            | NodeKind::Result {
                call_id: None,
                name: Some(name),
                ..
            } => names.push(*name),
            _ => {}
        }
    }
    names
}

/// Links from `Analysis::pairs`: each call to the row of its result (or `?`), each
/// result to the row of its call (or `?`).
fn link_calls_and_results<'a>(a: &Analysis<'a>, rows: &mut [Row<'a>]) {
    let chain = &a.chain;
    let mut results_of: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut call_of: HashMap<usize, usize> = HashMap::new();
    for &(call, result) in &a.pairs {
        results_of.entry(call).or_default().push(result);
        call_of.insert(result, call);
    }
    let turn_of = |node: usize| chain.nodes.get(node).map(|n| n.turn());
    for (i, n) in chain.nodes.iter().enumerate() {
        let Some(row) = rows.get_mut(n.turn()) else {
            continue;
        };
        match &n.kind {
            NodeKind::Call { call_id, .. } => match results_of.get(&i) {
                Some(results) => {
                    for &r in results {
                        row.links.push(Link {
                            rel: Rel::Result,
                            turn: turn_of(r),
                            call_id: *call_id,
                        });
                    }
                }
                None => row.links.push(Link {
                    rel: Rel::Result,
                    turn: None,
                    call_id: *call_id,
                }),
            },
            NodeKind::Result { call_id, .. } => row.links.push(Link {
                rel: Rel::Call,
                turn: call_of.get(&i).and_then(|&c| turn_of(c)),
                call_id: *call_id,
            }),
            _ => {}
        }
    }
}

/// `→ #3 #4 ← #1`: targets grouped by direction, each shown once, `?` for none.
fn render_links(links: &[Link<'_>]) -> String {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for l in links {
        let target = l.turn.map_or_else(|| "?".to_string(), |t| format!("#{t}"));
        let arrow = l.rel.arrow();
        match groups.iter_mut().find(|(a, _)| *a == arrow) {
            Some((_, ts)) => {
                if !ts.contains(&target) {
                    ts.push(target);
                }
            }
            None => groups.push((arrow, vec![target])),
        }
    }
    groups
        .into_iter()
        .map(|(a, ts)| format!("{a} {}", ts.join(" ")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The row a violation belongs to: the turn the rule named, else the turn whose
/// pointer is the longest prefix of the violation's path.
fn row_of_violation(v: &Violation, turns: usize, by_path: &HashMap<&str, usize>) -> Option<usize> {
    if let Some(t) = v.loc.turn.filter(|&t| t < turns) {
        return Some(t);
    }
    let mut path = v.path.as_str();
    loop {
        if let Some(&t) = by_path.get(path) {
            return Some(t);
        }
        match path.rfind('/') {
            Some(cut) if cut > 0 => path = &path[..cut],
            _ => return None,
        }
    }
}
