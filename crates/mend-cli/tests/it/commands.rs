//! `--help`, `mend rules`, `mend providers`.

use crate::support::run;

#[test]
fn help_says_what_each_command_does_with_an_example() {
    let r = run(&["--help"]);
    assert_eq!(r.code, 0);
    for needle in [
        "check",
        "inspect",
        "rules",
        "providers",
        "Example:",
        "mend check request.json",
    ] {
        assert!(r.stdout.contains(needle), "{needle}: {}", r.stdout);
    }
    let r = run(&["check", "--help"]);
    assert_eq!(r.code, 0);
    for needle in [
        "--dialect",
        "--provider",
        "--model",
        "--json",
        "--jsonl",
        "Example:",
        "Exit codes",
    ] {
        assert!(r.stdout.contains(needle), "{needle}: {}", r.stdout);
    }
    let r = run(&["inspect", "--help"]);
    assert_eq!(r.code, 0);
    for needle in ["→ #k", "Example:", "mend inspect examples/"] {
        assert!(r.stdout.contains(needle), "{needle}: {}", r.stdout);
    }
}

#[test]
fn rules_lists_every_rule_once() {
    let r = run(&["rules"]);
    assert_eq!(r.code, 0);
    // One line per rule, in catalog order, then its first provider text indented.
    let heads: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty() && !l.starts_with('`'))
        .collect();
    assert_eq!(heads.len(), mend::Rule::ALL.len());
    for (line, rule) in heads.iter().zip(mend::Rule::ALL) {
        assert!(line.starts_with(&format!("{} ", rule.id())), "{line}");
        assert!(line.contains("repair: "), "{line}");
    }
    let r = run(&["rules", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let rows = v.as_array().expect("an array");
    assert_eq!(rows.len(), mend::Rule::ALL.len());
    assert_eq!(v[0]["id"], "tool-result-without-call");
    for row in rows {
        for field in [
            "id",
            "summary",
            "dialects",
            "profiles",
            "severity",
            "provider_texts",
            "repair",
            "doc",
        ] {
            assert!(row.get(field).is_some(), "{field} missing in {row}");
        }
        assert!(!row["doc"].as_str().unwrap_or("").is_empty(), "{row}");
        assert!(row["repair"]["availability"].is_string(), "{row}");
    }
}

#[test]
fn explain_prints_every_rule_with_its_example_checked_and_repaired() {
    for rule in mend::Rule::ALL {
        let r = run(&["explain", rule.id()]);
        assert_eq!(r.code, 0, "{}: {}", rule.id(), r.stderr);
        assert!(
            r.stdout.starts_with(&format!("{}: ", rule.id())),
            "{}",
            r.stdout
        );
        for needle in [
            "What the providers say:",
            "An example that breaks it:",
            "mend check finds:",
            "mend repair does:",
        ] {
            assert!(r.stdout.contains(needle), "{}: {needle}", rule.id());
        }
        assert!(
            r.stdout.contains(&format!("[{}]", rule.id())),
            "{}: its example is not flagged",
            rule.id()
        );
        let r = run(&["explain", rule.id(), "--json"]);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
        assert_eq!(v["id"], rule.id());
        assert!(v["example_repair"]["edits"].is_array(), "{v}");
    }
    let r = run(&["explain", "no-such-rule"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("unknown rule 'no-such-rule'"),
        "{}",
        r.stderr
    );
}

#[test]
fn providers_lists_every_profile() {
    let r = run(&["providers"]);
    assert_eq!(r.code, 0);
    for p in mend::profile::PROFILES {
        assert!(
            r.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{} ", p.name)) && l.contains(p.about)),
            "{}",
            p.name
        );
    }
}
