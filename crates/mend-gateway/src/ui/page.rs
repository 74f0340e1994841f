//! The inspector's HTML, server-rendered with maud (which escapes every value it
//! interpolates): the layout, the conversation list, one conversation, the paste box, the
//! login form and error pages. No script, no external resource.
//!
//! Invariant: nothing is written with `PreEscaped` but the page's own constant markup;
//! every string that comes from a conversation, a pasted body or a request goes through
//! maud's escaping.

use maud::{html, Markup, DOCTYPE};
use mend::Dialect;

use super::view::{DiffLine, Finding, View};
use super::Listed;

/// The whole page around `content`.
pub(crate) fn layout(title: &str, content: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "mend · " (title) }
                link rel="stylesheet" href="/ui/style.css";
            }
            body {
                header {
                    span.brand { "mend inspector" }
                    a href="/ui" { "Conversations" }
                    a href="/ui/paste" { "Paste a body" }
                }
                main { (content) }
            }
        }
    }
}

/// The conversation list, with a link to the next page when there is one.
pub(crate) fn list(rows: &[Listed], next: Option<&str>, store: &str) -> Markup {
    let content = html! {
        h1 { "Conversations" }
        p.dim { "In " code { (store) } ". Violations are those of the stored history read as a request body of its dialect." }
        @if rows.is_empty() {
            p.note { "No conversation is stored yet. The gateway keeps one for each request that carries "
                code { "x-mend-conversation: ID" } " (with " code { "--db" } ")." }
        } @else {
            table {
                thead { tr {
                    th { "id" } th { "dialect" } th { "model" } th.num { "messages" }
                    th.num { "turns" } th { "last activity" } th { "violations" }
                } }
                tbody {
                    @for r in rows {
                        tr class=[row_class(r)] {
                            td.mono { a href={ "/ui/c/" (encode(&r.id)) } { (r.id) } }
                            td { (r.dialect) }
                            td { (r.model.as_deref().unwrap_or("—")) }
                            td.num { (r.messages) }
                            td.num { @match r.turns { Some(t) => (t), None => "—" } }
                            td { @match r.last_activity_ms { Some(ms) => (when(ms)), None => "—" } }
                            td { (verdict(r)) }
                        }
                    }
                }
            }
            @if let Some(after) = next {
                p { a href={ "/ui?after=" (encode(after)) } { "Next page →" } }
            }
        }
    };
    layout("conversations", content)
}

fn row_class(r: &Listed) -> Option<&'static str> {
    match r.verdict {
        Ok((e, _)) if e > 0 => Some("bad"),
        Ok((_, w)) if w > 0 => Some("warn"),
        _ => None,
    }
}

fn verdict(r: &Listed) -> Markup {
    match &r.verdict {
        Ok((0, 0)) => html! { span.pill.ok { "valid" } },
        Ok((e, w)) => html! {
            @if *e > 0 { span.pill.bad { (e) " error" @if *e > 1 { "s" } } " " }
            @if *w > 0 { span.pill.warn { (w) " warning" @if *w > 1 { "s" } } }
        },
        Err(why) => html! { span.pill { "not checked" } " " span.dim { (why) } },
    }
}

/// One stored conversation: its facts, then the chain (or why it cannot be shown).
pub(crate) fn conversation(
    facts: &[(&str, String)],
    id: &str,
    view: &Result<View, String>,
) -> Markup {
    let content = html! {
        h1 { "Conversation " code { (id) } }
        div.facts { @for (k, v) in facts { span { b { (k) ": " } (v) } } }
        (chain_or_error(view))
    };
    layout(
        &format!("conversation {}", super::view::clip(id, 80)),
        content,
    )
}

/// The paste box, with the body pasted (kept in the box) and its view or error.
pub(crate) fn paste(
    body: &str,
    dialect: Option<Dialect>,
    view: Option<&Result<View, String>>,
) -> Markup {
    let content = html! {
        h1 { "Paste a request body" }
        p.dim { "Any request body of the five dialects. It is checked and shown here; nothing is stored." }
        form method="post" action="/ui/paste" {
            textarea name="body" spellcheck="false" placeholder="{\"model\": \"gpt-4o\", \"messages\": [...]}" { (body) }
            div.row {
                label { "dialect " select name="dialect" {
                    option value="" selected[dialect.is_none()] { "detect from the body" }
                    @for d in Dialect::ALL {
                        option value=(d.name()) selected[dialect == Some(d)] { (d.name()) }
                    }
                } }
                button type="submit" { "Check" }
            }
        }
        @if let Some(v) = view { (chain_or_error(v)) }
    };
    layout("paste", content)
}

fn chain_or_error(view: &Result<View, String>) -> Markup {
    match view {
        Err(why) => html! { div.error { (why) } },
        Ok(v) => chain(v),
    }
}

fn chain(v: &View) -> Markup {
    html! {
        div.facts {
            span { b { "dialect: " } (v.dialect) }
            span { b { "profile: " } (v.provider) }
            span { b { "model: " } (v.model.as_deref().unwrap_or("—")) }
            span { b { "turns: " } (v.turns.len()) }
            span { b { "tokens: " } (v.turns.iter().map(|t| t.tokens).sum::<usize>()) span.dim { " (" (v.counter) ")" } }
            span { b { "verdict: " }
                @if v.errors == 0 && v.warnings == 0 { span.pill.ok { "valid" } }
                @if v.errors > 0 { span.pill.bad { (v.errors) " error" @if v.errors > 1 { "s" } } " " }
                @if v.warnings > 0 { span.pill.warn { (v.warnings) " warning" @if v.warnings > 1 { "s" } } }
            }
        }
        @if !v.loose.is_empty() {
            h2 { "Findings about the whole body" }
            @for f in &v.loose { (finding(f)) }
        }
        h2 { "Chain" }
        table.chain {
            thead { tr { th.num { "#" } th { "role" } th { "group" } th { "calls, results, reasoning, ids" } th { "content" } th.num { "tokens" } } }
            tbody {
                @for t in &v.turns {
                    @let errs = t.findings.iter().any(|f| f.error);
                    tr id={ "t" (t.index) } class=[if errs { Some("bad") } else if t.findings.is_empty() { None } else { Some("warn") }] {
                        td.num.mono { (t.index) }
                        td.role { b { (t.role) } br; span.dim.mono { (t.path) } }
                        td { a href={ "#g" (t.group) } { "g" (t.group) } }
                        td {
                            @for p in t.parts.iter().filter(|p| p.label != "text") {
                                span.part { span.kind { (p.kind) } (p.label)
                                    @if let Some((how, to)) = p.link {
                                        " " span.dim { (how) " " }
                                        @match to { Some(n) => a href={ "#t" (n) } { "#" (n) }, None => span.pill.bad { "nothing" } }
                                    }
                                }
                            }
                            @for f in &t.findings { (finding(f)) }
                        }
                        td {
                            div.preview { (t.preview) }
                            details { summary { "JSON" } pre { (t.json) } }
                        }
                        td.num { (t.tokens) }
                    }
                }
            }
        }
        h2 { "Groups" }
        p.dim { "The units trim keeps or drops whole (calls with their results and reasoning), with their tokens." }
        table {
            thead { tr { th { "group" } th { "kind" } th { "turns" } th.num { "tokens" } } }
            tbody {
                @for (i, g) in v.groups.iter().enumerate() {
                    tr id={ "g" (i) } {
                        td { "g" (i) } td { (g.kind) }
                        td { a href={ "#t" (g.turns.start) } { "#" (g.turns.start) }
                            @if g.turns.len() > 1 { " – #" (g.turns.end - 1) } }
                        td.num { (g.tokens) }
                    }
                }
            }
        }
        (repair(v))
    }
}

fn finding(f: &Finding) -> Markup {
    html! {
        div.finding.warn[!f.error] {
            span.pill.bad[f.error].warn[!f.error] { (if f.error { "error" } else { "warning" }) "[" (f.rule) "]" }
            " " span.mono.dim { (f.path) } " " (f.message)
            @if let Some(p) = &f.provider { div.provider { (p) } }
        }
    }
}

fn repair(v: &View) -> Markup {
    let r = &v.repair;
    html! {
        h2 { "What repair would change" }
        @if let Some(why) = &r.failed {
            div.error { "repair could not run: " (why) }
        } @else if r.edits.is_empty() && r.unrepairable.is_empty() {
            p.note { "Nothing: repair would send this body as it is." }
        } @else {
            @if !r.edits.is_empty() {
                table {
                    thead { tr { th { "rule" } th { "path" } th { "action" } th { "detail" } } }
                    tbody { @for e in &r.edits { tr { td { (e[0]) } td.mono { (e[1]) } td { (e[2]) } td { (e[3]) } } } }
                }
            }
            @if !r.unrepairable.is_empty() {
                p { b { "Left as it is" } " (repair would have to guess):" }
                @for f in &r.unrepairable { (finding(f)) }
            }
            @if !r.diff.is_empty() {
                h2 { "Diff of the body" }
                div.diff {
                    @for l in &r.diff {
                        @match l {
                            DiffLine::Same(s) => div { "  " (s) },
                            DiffLine::Removed(s) => div.del { "- " (s) },
                            DiffLine::Added(s) => div.add { "+ " (s) },
                            DiffLine::Gap => div.gap { "  …" },
                        }
                    }
                    @if r.diff_cut { div.gap { "  … the rest of the diff is not shown" } }
                }
            }
        }
    }
}

/// The login form (a browser without the admin cookie); `wrong` after a bad token.
pub(crate) fn login(wrong: bool) -> Markup {
    layout(
        "admin token required",
        html! {
            h1 { "Admin token required" }
            p { "The inspector shows stored conversations; this gateway asks for its admin token (MEND_ADMIN_TOKEN or --admin-token-file)." }
            @if wrong { div.error { "That is not the admin token." } }
            form method="post" action="/ui/login" {
                div.row {
                    input type="password" name="token" autocomplete="current-password" size="48";
                    button type="submit" { "Open" }
                }
            }
        },
    )
}

/// An error page: a title and why.
pub(crate) fn error(title: &str, why: &str) -> Markup {
    layout(title, html! { h1 { (title) } div.error { (why) } })
}

/// What [`encode`] escapes: all but RFC 3986's unreserved characters.
const ESCAPED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encode an id for a path segment or query value.
pub(crate) fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, ESCAPED).to_string()
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM:SS UTC`.
pub(crate) fn when(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_utc_dates() {
        assert_eq!(when(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(when(1_795_000_000_000), "2026-11-18 11:06:40 UTC");
        assert_eq!(when(951_782_400_000), "2000-02-29 00:00:00 UTC");
    }

    #[test]
    fn interpolated_text_is_escaped() {
        let page = error("<b>t</b>", "<script>alert(1)</script>").into_string();
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{page}"
        );
        assert!(!page.contains("<script>"));
        assert_eq!(encode("a b/<c>"), "a%20b%2F%3Cc%3E");
    }
}
