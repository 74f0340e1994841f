//! The tape reader (`mend::json`) against serde_json: on generated JSON and on fuzzed
//! bytes it accepts only what serde_json accepts, reads it as the same value (the tree
//! `Node::to_value` builds equals serde_json's, member order included), and
//! declines valid JSON only for the reasons it documents (duplicate or escaped keys).

use mend::json::parse;
use proptest::prelude::*;
use serde_json::Value;

fn same_as_serde(bytes: &[u8]) {
    let serde = serde_json::from_slice::<Value>(bytes);
    match (parse(bytes), serde) {
        (Some(doc), Ok(v)) => {
            // The tree built from the tape (what repair from bytes uses) is serde_json's,
            // members in the same order.
            let tree = doc.root().to_value();
            assert_eq!(
                tree.as_ref(),
                Some(&v),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
            assert_eq!(
                serde_json::to_vec(&tree).ok(),
                serde_json::to_vec(&v).ok(),
                "member order: {:?}",
                String::from_utf8_lossy(bytes)
            );
        }
        (Some(_), Err(e)) => panic!(
            "tape accepts what serde_json rejects ({e}): {:?}",
            String::from_utf8_lossy(bytes)
        ),
        (None, _) => {}
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[a-z\"\\\\\n\u{e9}\u{1F600}]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,4}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A mutation of JSON text: bytes dropped, duplicated, replaced or inserted.
fn mutate(text: &[u8], ops: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut b = text.to_vec();
    for &(at, op, byte) in ops {
        if b.is_empty() {
            b.push(byte);
            continue;
        }
        let i = at % b.len();
        match op % 4 {
            0 => {
                b.remove(i);
            }
            1 => b.insert(i, b[i]),
            2 => b[i] = byte,
            _ => b.insert(i, byte),
        }
    }
    b
}

const ALPHABET: &[u8] = b"{}[]\":,.-+eE0123456789 \n\t\\/untrfalsebu\x01\xc3\xa9\xff";

proptest! {
    #[test]
    fn generated_json_reads_as_serde_json_reads_it(v in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) }
            .expect("serializes");
        // Generated keys are plain `[a-z]` and a serde_json map repeats none: nothing here
        // is a reason to decline.
        let doc = parse(text.as_bytes());
        prop_assert!(doc.is_some(), "declined valid JSON: {}", text);
        if let Some(doc) = doc {
            let tree = doc.root().to_value();
            prop_assert_eq!(tree.as_ref(), Some(&v));
            prop_assert_eq!(serde_json::to_string(&tree).ok(), serde_json::to_string(&v).ok());
        }
    }

    #[test]
    fn mutated_json_is_accepted_only_as_serde_json_accepts_it(
        v in json_value(),
        ops in prop::collection::vec((any::<usize>(), any::<u8>(), prop::sample::select(ALPHABET)), 1..4),
    ) {
        let text = serde_json::to_vec(&v).expect("serializes");
        same_as_serde(&mutate(&text, &ops));
    }

    #[test]
    fn random_bytes_are_accepted_only_as_serde_json_accepts_them(
        bytes in prop::collection::vec(prop::sample::select(ALPHABET), 0..24),
    ) {
        same_as_serde(&bytes);
    }
}

#[test]
fn numbers_at_the_edges_read_as_serde_json_reads_them() {
    let edges = [
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "1e308",
        "1.8e308",
        "1e-400",
        "0e400",
        "-0",
        "-0.0",
        "123456789012345678901234567890",
        "4.9e-324",
        "2.5e-324",
        "1e+0",
        "0.1e1",
    ];
    for e in edges {
        same_as_serde(e.as_bytes());
        same_as_serde(format!("[{e}]").as_bytes());
    }
}

/// What can sit in a string next to the scan's stops: escapes of every form, raw control
/// characters (rejected), multi-byte UTF-8, a quote that ends the string early.
const STRING_PIECES: [&str; 16] = [
    "\\n",
    "\\\"",
    "\\\\",
    "\\u00e9",
    "\\ud83d\\ude00",
    "\\ud83d",
    "\\x",
    "\u{0}",
    "\u{1f}",
    "\n",
    "\t",
    "\u{7f}",
    "\u{e9}",
    "\u{2028}",
    "\u{1F600}",
    "\"",
];

#[test]
fn strings_with_a_stop_at_every_offset_read_as_serde_json_reads_them() {
    // The scan reads sixteen bytes at a time (eight in its tail and on other targets):
    // a stop at every offset across several of those edges, after a run of plain text,
    // followed by more text, as a whole value and inside a container.
    for before in 0..40 {
        for piece in STRING_PIECES {
            for after in [0, 1, 7, 8, 9, 15, 16, 17, 31] {
                let text = format!("{}{piece}{}", "a".repeat(before), "é".repeat(after / 2));
                same_as_serde(format!("\"{text}\"").as_bytes());
                same_as_serde(format!("[\"{text}\",1]").as_bytes());
                same_as_serde(format!("{{\"k\":\"{text}\"}}").as_bytes());
            }
        }
    }
}

#[test]
fn bodies_ending_inside_a_string_are_declined() {
    for before in 0..40 {
        for piece in STRING_PIECES {
            let body = format!(
                "{{\"k\":[\"{}{piece}{}\"]}}",
                "a".repeat(before),
                "b".repeat(9)
            );
            for cut in 0..body.len() {
                // Only char boundaries: a cut inside a character is a UTF-8 error first.
                if body.is_char_boundary(cut) {
                    same_as_serde(&body.as_bytes()[..cut]);
                }
            }
            same_as_serde(body.as_bytes());
        }
    }
}
