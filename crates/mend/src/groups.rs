//! Atomic groups: the one definition of "what must be kept or dropped together", used by
//! check, repair and trim.
//!
//! A history is a protected prefix (system or developer instructions, plus whatever the
//! caller pins) followed by units. A unit is either a group (an assistant turn that calls
//! tools, the reasoning that belongs to it, every turn holding its results, and every
//! turn between them) or a plain turn. Dropping a whole group can never orphan a result
//! or strand a reasoning item; dropping part of one can.
//!
//! ```
//! let body = serde_json::json!({"messages": [
//!     {"role": "system", "content": "be brief"},
//!     {"role": "user", "content": "weather?"},
//!     {"role": "assistant", "content": null, "tool_calls": [
//!         {"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]},
//!     {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
//!     {"role": "assistant", "content": "Sunny."}
//! ]});
//! let opts = mend::CheckOptions { dialect: Some(mend::Dialect::OpenAiChat), ..Default::default() };
//! let analysis = mend::analyze(&body, &opts).unwrap();
//! let groups = analysis.groups(0);
//! assert_eq!(groups.prefix, 0..1);            // the system message
//! assert_eq!(groups.units[1].turns, 2..4);    // the call and its result, together
//! assert!(groups.units[1].is_group());
//! ```

use std::ops::Range;

use crate::chain::{Chain, NodeKind, Role};
use crate::dialect::Dialect;

/// What a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// Tool calls with their results and reasoning.
    Group,
    /// A turn that stands alone.
    Turn,
}

/// A run of turns that is kept or dropped whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Turn indexes into [`Chain::turns`].
    pub turns: Range<usize>,
    /// Group or plain turn.
    pub kind: UnitKind,
}

impl Unit {
    /// A group of calls and results.
    pub fn is_group(&self) -> bool {
        self.kind == UnitKind::Group
    }
}

/// A history cut into its protected prefix and its units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Groups {
    /// Turns never dropped: the instructions and the pinned turns.
    pub prefix: Range<usize>,
    /// The rest, in order; together they cover every turn after the prefix.
    pub units: Vec<Unit>,
}

/// Cut a chain into its prefix and units. `pairs` are the (call node, result node) pairs
/// the engine found; `protect` pins that many history turns after the instructions.
pub fn atomic_groups(
    chain: &Chain,
    dialect: Dialect,
    pairs: &[(usize, usize)],
    protect: usize,
) -> Groups {
    let n = chain.turns.len();
    // Each turn's reach: the last turn it must stay with.
    let mut reach: Vec<usize> = (0..n).collect();
    let mut grouped = vec![false; n];
    for &(call, result) in pairs {
        let (c, r) = (chain.nodes[call].turn(), chain.nodes[result].turn());
        let (lo, hi) = (c.min(r), c.max(r));
        reach[lo] = reach[lo].max(hi);
        grouped[lo] = true;
    }
    // Calls never answered still form a group of their own turn.
    for node in &chain.nodes {
        if matches!(node.kind, NodeKind::Call { .. }) {
            grouped[node.turn()] = true;
        }
    }
    if dialect == Dialect::OpenAiResponses {
        // An output run (reasoning, messages, calls produced by one response) is one piece:
        // a reasoning item must keep its follower, a call its reasoning.
        let mut t = 0;
        while t < n {
            if chain.turns[t].role == Role::Assistant {
                let start = t;
                while t + 1 < n && chain.turns[t + 1].role == Role::Assistant {
                    t += 1;
                }
                reach[start] = reach[start].max(t);
                if (start..=t).any(|k| grouped[k]) {
                    grouped[start] = true;
                }
            }
            t += 1;
        }
    }

    // The prefix: leading instructions, then `protect` history turns, never ending inside
    // a group.
    let mut prefix_end = 0;
    while prefix_end < n && chain.turns[prefix_end].role == Role::System {
        prefix_end += 1;
    }
    let mut pinned = 0;
    while pinned < protect && prefix_end < n {
        prefix_end = span_end(&reach, prefix_end, n);
        pinned += 1;
    }

    let mut units = Vec::new();
    let mut t = prefix_end;
    while t < n {
        let end = span_end(&reach, t, n);
        let kind = if (t..end).any(|k| grouped[k]) {
            UnitKind::Group
        } else {
            UnitKind::Turn
        };
        units.push(Unit {
            turns: t..end,
            kind,
        });
        t = end;
    }
    Groups {
        prefix: 0..prefix_end,
        units,
    }
}

/// One past the last turn that the span starting at `t` must include.
fn span_end(reach: &[usize], t: usize, n: usize) -> usize {
    let mut end = reach[t];
    let mut k = t;
    while k <= end && k < n {
        end = end.max(reach[k]);
        k += 1;
    }
    (end + 1).min(n)
}
