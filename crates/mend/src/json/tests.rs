use super::*;

fn accepts(text: &str) -> bool {
    parse(text.as_bytes()).is_some()
}

#[test]
fn reads_every_kind_with_its_span() {
    let text = r#" {"a": null, "b": [true, false, -1.5e3, "x\"y"], "c": {}} "#;
    let doc = parse(text.as_bytes()).expect("JSON");
    let root = doc.root();
    assert_eq!(root.kind(), Kind::Object);
    assert_eq!(root.len(), 3);
    assert!(root.get("a").expect("a").is_null());
    let b = root.get("b").expect("b");
    let kinds: Vec<_> = b.items().map(|n| n.kind()).collect();
    assert_eq!(kinds, [Kind::Bool, Kind::Bool, Kind::Number, Kind::String]);
    assert_eq!(b.index(0).and_then(|n| n.as_bool()), Some(true));
    assert_eq!(b.index(1).and_then(|n| n.as_bool()), Some(false));
    assert_eq!(b.index(2).and_then(|n| n.as_f64()), Some(-1500.0));
    let s = b.index(3).expect("string");
    assert!(s.has_escapes());
    assert_eq!(s.as_str(), Some("x\"y"));
    assert_eq!(s.raw_str(), Some(r#"x\"y"#));
    assert_eq!(&text[s.span()], r#""x\"y""#);
    assert_eq!(&text[root.span()], text.trim());
    let c = root.get("c").expect("c");
    assert!(c.is_empty() && c.members().next().is_none());
    let keys: Vec<_> = root.members().map(|(k, _)| k).collect();
    assert_eq!(keys, ["a", "b", "c"]);
    assert!(root.get("d").is_none() && b.get("a").is_none() && root.index(0).is_none());
}

#[test]
fn long_escaped_strings_are_unescaped_on_demand() {
    let long = "line\\n".repeat(100);
    let text = format!(r#"["{long}"]"#);
    let doc = parse(text.as_bytes()).expect("JSON");
    let s = doc.root().index(0).expect("item");
    assert_eq!(s.to_str().as_deref(), Some("line\n".repeat(100).as_str()));
    assert_eq!(s.as_str(), Some("line\n".repeat(100).as_str()));
}

#[test]
fn skips_subtrees_in_one_step() {
    let doc = parse(br#"[[1, [2, {"k": [3]}]], {"x": [4, 5]}, 6]"#).expect("JSON");
    let items: Vec<_> = doc.root().items().map(|n| n.kind()).collect();
    assert_eq!(items, [Kind::Array, Kind::Object, Kind::Number]);
    assert_eq!(doc.root().index(2).and_then(|n| n.as_u64()), Some(6));
}

#[test]
fn accepts_and_declines_as_serde_json_does() {
    for ok in [
        "0",
        "-0",
        "1e5",
        "1E+5",
        "0.5e-3",
        "\"\\u0000\"",
        " [ ] ",
        "{\"a\":{}}",
        "1e-400",
    ] {
        assert!(accepts(ok), "{ok}");
        assert!(
            serde_json::from_str::<serde_json::Value>(ok).is_ok(),
            "{ok}"
        );
    }
    let bad = [
        "",
        " ",
        "01",
        "1.",
        ".5",
        "-",
        "+1",
        "1e",
        "1e400",
        "[1,]",
        "{\"a\":1,}",
        "[1 2]",
        "{\"a\" 1}",
        "{1:2}",
        "tru",
        "nul",
        "\"a",
        "\"\t\"",
        "[1]x",
        "\"\\ud800\"",
        "'a'",
        "\u{feff}1",
        "NaN",
        "[",
        "{\"a\":1}}",
    ];
    for b in bad {
        assert!(!accepts(b), "{b:?}");
        assert!(
            serde_json::from_str::<serde_json::Value>(b).is_err(),
            "{b:?}"
        );
    }
    assert!(parse(b"\"\xff\"").is_none(), "invalid UTF-8");
}

#[test]
fn declines_what_it_leaves_to_serde_json() {
    // serde_json reads these; the tape leaves them to it.
    for text in [r#"{"a":1,"a":2}"#, r#"{"\u0061":1}"#] {
        assert!(serde_json::from_str::<serde_json::Value>(text).is_ok());
        assert!(!accepts(text), "{text}");
    }
    let many: Vec<String> = (0..40).map(|i| format!("\"k{}\":1", i % 39)).collect();
    assert!(!accepts(&format!("{{{}}}", many.join(","))));
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(accepts(&deep));
    let deeper = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert!(!accepts(&deeper));
}

#[test]
fn a_duplicate_key_is_found_whatever_its_length_and_place() {
    // Keys that share a length and their first eight bytes and differ after them, keys
    // that differ in one byte, and keys ending at the last bytes of the body (where the
    // eight-byte read falls back to a shorter one).
    let keys = [
        "",
        "a",
        "b",
        "ab",
        "ba",
        "type",
        "text",
        "role",
        "name",
        "tool_cal",
        "tool_cam",
        "tool_calls",
        "tool_callz",
        "tool_call_id",
        "tool_call_ix",
        "é",
        "ée",
    ];
    for a in keys {
        for b in keys {
            for (text, dup) in [
                (format!(r#"{{"{a}":1,"{b}":2}}"#), a == b),
                (format!(r#"{{"{a}":{{"{b}":1}},"{b}":2}}"#), a == b),
                (format!(r#"{{"{a}":{{"{b}":1,"z":2}}}}"#), false),
                (format!(r#"{{"x":0,"{a}":1,"y":[],"{b}":2}}"#), a == b),
            ] {
                assert_eq!(!accepts(&text), dup, "{text}");
            }
        }
    }
    // Past sixteen keys the check hashes the whole keys.
    let long: Vec<String> = (0..20)
        .map(|i| format!(r#""same_first_8_{i}":1"#))
        .collect();
    assert!(accepts(&format!("{{{}}}", long.join(","))));
}

#[test]
fn a_tape_entry_stays_sixteen_bytes() {
    // At a check's peak the tape is alive with the body and the chain: on a 60 MB body
    // at 20 bytes an entry and an entry per key it was half the body's size.
    assert_eq!(std::mem::size_of::<Entry>(), 16);
}

#[test]
fn keys_are_read_back_from_the_bytes_before_each_value() {
    // Every spacing JSON allows around the colon, every kind of value after it, and
    // keys that are empty, that end another key, or hold what a value could hold.
    let text =
        "{ \"a\" : 1 , \"ba\":\"x\",\"\" : [ ],\"xc\" :[1],\"c\"\n:\t{\"d\" :null},\"e\":true,\
                \"f:\"\r: -2 , \"g\":\"\\\"\"}";
    let doc = parse(text.as_bytes()).expect("JSON");
    let root = doc.root();
    let keys: Vec<_> = root.members().map(|(k, _)| k).collect();
    assert_eq!(keys, ["a", "ba", "", "xc", "c", "e", "f:", "g"]);
    let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
    for key in [
        "a", "ba", "", "xc", "c", "e", "f:", "g", "b", "d", "ab", "f", "x", "\"",
    ] {
        let tape = root.get(key).map(|n| &text[n.span()]);
        let serde = value.get(key).map(|v| v.to_string());
        assert_eq!(tape.is_some(), serde.is_some(), "{key:?}");
    }
    assert_eq!(root.get("a").and_then(|n| n.as_u64()), Some(1));
    assert_eq!(root.get("ba").and_then(|n| n.as_str()), Some("x"));
    assert_eq!(root.get("").map(|n| n.kind()), Some(Kind::Array));
    // A key that ends another key is not that key, whether the member's value keeps
    // its key's length (a scalar or string) or not (an array or object).
    assert_eq!(root.get("c").map(|n| n.kind()), Some(Kind::Object));
    assert_eq!(root.get("a").map(|n| n.kind()), Some(Kind::Number));
    let c = root.get("c").expect("c");
    assert!(c.get("d").is_some_and(|n| n.is_null()));
    assert_eq!(c.members().map(|(k, _)| k).collect::<Vec<_>>(), ["d"]);
    assert_eq!(root.get("e").and_then(|n| n.as_bool()), Some(true));
    assert_eq!(root.get("g").and_then(|n| n.as_str()), Some("\""));
}

#[test]
fn declines_an_array_or_object_past_the_element_limit() {
    let max = MAX_ELEMENTS as usize;
    let items = |n: usize| format!("[{}0]", "0,".repeat(n - 1));
    assert!(accepts(&items(max)));
    assert_eq!(
        parse(items(max).as_bytes()).map(|d| d.root().len()),
        Some(max)
    );
    assert!(!accepts(&items(max + 1)));
}

mod against_the_value {
    use proptest::prelude::*;
    use serde_json::Value;

    use crate::json::{parse, Json, Node};

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[a-z\"\\\\\n \u{e9}\u{1F600}]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                // Keys of one length and of several, so a lookup passes keys of its own
                // length, and members whose values are containers (a lookup skips them).
                prop::collection::vec(("[ab]{1,3}", inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// Every lookup and size a reader asks of the tape, against the same on the `Value`.
    fn same(n: Node, v: &Value) {
        assert_eq!(n.string_bytes(), v.string_bytes(), "{v}");
        for probe in [
            "a", "b", "aa", "ab", "ba", "bb", "aaa", "bbb", "", "c", "aab",
        ] {
            assert_eq!(
                Json::get(n, probe).map(|m| m.span()),
                v.get(probe).map(|_| n
                    .members()
                    .find(|(k, _)| *k == probe)
                    .map(|(_, m)| m.span())
                    .expect("member")),
                "{probe} in {v}"
            );
        }
        match v {
            Value::Array(items) => n.items().zip(items).for_each(|(n, v)| same(n, v)),
            Value::Object(m) => n.members().zip(m.values()).for_each(|(n, v)| same(n.1, v)),
            _ => {}
        }
    }

    proptest! {
        #[test]
        fn lookups_and_string_bytes_on_the_tape_are_those_of_the_value(v in json_value()) {
            let text = serde_json::to_string(&v).expect("JSON");
            let doc = parse(text.as_bytes()).expect("tape");
            same(doc.root(), &v);
        }
    }
}
