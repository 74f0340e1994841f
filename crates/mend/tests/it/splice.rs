//! Repair from bytes writes its output by splicing: the output parses to exactly the body
//! repair from the `Value` gives, and the items the repair kept are the input's bytes.
//! Held on every data-driven case (`cases.rs`) and on damaged generated histories
//! (`properties.rs`), each written compact and pretty; laid out like the input
//! ([`Layout::FollowInput`], what `mend repair` writes), the output is what the input's
//! writer makes of the repaired body.

use mend::repair::{repair, repair_bytes, splice_with, Layout, RepairOptions, RepairedBytes};
use serde_json::Value;

/// `Err` saying how repair from the bytes of `body` departs from repair of `body`.
pub fn agrees(body: &Value, opts: &RepairOptions) -> Result<(), String> {
    let tree = repair(body, opts).map_err(|e| e.to_string())?;
    let compact = serde_json::to_vec(body).map_err(|e| e.to_string())?;
    let pretty = serde_json::to_vec_pretty(body).map_err(|e| e.to_string())?;
    for (input, indented) in [(compact, false), (pretty, true)] {
        let (r, out) = match repair_bytes(&input, opts).map_err(|e| e.to_string())? {
            RepairedBytes::Ran(r, out) => (*r, out),
            RepairedBytes::AsIs(report) => {
                // Taken as it is only when repair would neither change it nor leave an error.
                if tree.changed() || !tree.valid() || report.violations != tree.warnings {
                    return Err(format!(
                        "bytes taken as they are, but repair made {:?} and left {:?}",
                        tree.edits, tree.unrepairable
                    ));
                }
                continue;
            }
        };
        let rules = |r: &mend::Repaired| r.unrepairable.iter().map(|v| v.rule).collect::<Vec<_>>();
        if r.edits != tree.edits
            || r.body != tree.body
            || r.held_back != tree.held_back
            || rules(&r) != rules(&tree)
        {
            return Err(format!("repair from bytes differs: {:?}", r.edits));
        }
        let Some(out) = out else {
            if tree.changed() {
                return Err("bytes said unchanged, but the body changed".into());
            }
            continue;
        };
        if !tree.changed() {
            return Err("bytes changed, but the body did not".into());
        }
        let parsed: Value = serde_json::from_slice(&out).map_err(|e| e.to_string())?;
        if parsed != tree.body {
            return Err(format!(
                "the spliced bytes read as\n{parsed}\nnot as the repaired\n{}",
                tree.body
            ));
        }
        // Laid out like the input, the new items are written as the input's writer
        // (serde_json, compact or pretty) writes them: the output is byte for byte what
        // that writer makes of the repaired body.
        let written = if indented {
            serde_json::to_vec_pretty(&tree.body)
        } else {
            serde_json::to_vec(&tree.body)
        }
        .map_err(|e| e.to_string())?;
        for layout in [Layout::FollowInput, Layout::Compact] {
            let laid = splice_with(&input, &r, layout);
            if (layout == Layout::FollowInput || !indented) && laid != written {
                return Err(format!(
                    "{layout:?} on {} input gave\n{}\nnot\n{}",
                    if indented { "indented" } else { "compact" },
                    String::from_utf8_lossy(&laid),
                    String::from_utf8_lossy(&written)
                ));
            }
        }
        // Every kept item is the input's own text.
        let doc = mend::json::parse(&input).ok_or("the tape reader declined the input")?;
        let key = r.dialect.history_key();
        let items: Vec<_> = doc
            .root()
            .get(key)
            .map(|h| h.items().collect())
            .unwrap_or_default();
        for i in r.kept.history.iter().flatten().flatten() {
            let text = &input[items[*i].span()];
            if !out.windows(text.len()).any(|w| w == text) {
                return Err(format!("kept item {i} is not the input's bytes"));
            }
        }
    }
    Ok(())
}
