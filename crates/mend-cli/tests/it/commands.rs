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
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), mend::Rule::ALL.len());
    for (line, rule) in lines.iter().zip(mend::Rule::ALL) {
        assert!(line.starts_with(&format!("{} ", rule.id())), "{line}");
    }
    let r = run(&["rules", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v[0]["id"], "tool-result-without-call");
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
