//! The rule catalog holds what it says: every rule has a spec, its example breaks it, and
//! its repair availability matches what repair does to that example.

use mend::repair::{repair, RepairOptions};
use mend::rules::Repair;
use mend::{check_value, parse_body, CheckOptions, Rule};

#[test]
fn every_rule_is_documented_and_its_example_breaks_it() {
    for &rule in Rule::ALL {
        let spec = rule.spec();
        assert_eq!(spec.id, rule.id());
        assert!(!spec.summary.is_empty(), "{rule}: no summary");
        assert!(!spec.doc.is_empty(), "{rule}: no doc");
        assert!(!spec.dialects.is_empty(), "{rule}: no dialects");
        let body = parse_body(spec.example.as_bytes())
            .unwrap_or_else(|e| panic!("{rule}: example is not JSON: {e}"));
        let report = check_value(&body, &CheckOptions::default())
            .unwrap_or_else(|e| panic!("{rule}: example cannot be checked: {e}"));
        assert!(
            report.violations.iter().any(|v| v.rule == rule),
            "{rule}: its example is not flagged with it: {:?}",
            report.violations
        );
        assert!(
            spec.dialects.contains(&report.dialect),
            "{rule}: example is {} but the rule lists {:?}",
            report.dialect,
            spec.dialects
        );
        let fixed = repair(&body, &RepairOptions::default()).expect("repair");
        let still = fixed.unrepairable.iter().any(|v| v.rule == rule);
        match spec.repair {
            Repair::Never(_) => {
                assert!(!spec.has_fix(), "{rule}: says never, has a fix");
                assert!(still, "{rule}: says never but its example was repaired");
            }
            Repair::Always(_) | Repair::Sometimes(_) => {
                assert!(spec.has_fix(), "{rule}: says it repairs, has no fix");
                assert!(
                    !still,
                    "{rule}: its example is not repaired: {:?}",
                    fixed.unrepairable
                );
                assert!(
                    fixed.edits.iter().any(|e| e.rule == rule),
                    "{rule}: no edit names it"
                );
            }
        }
    }
}

#[test]
fn every_provider_text_names_its_source() {
    for &rule in Rule::ALL {
        for t in rule.spec().provider_texts {
            assert!(!t.text.is_empty() && !t.source.is_empty(), "{rule}: {t:?}");
        }
    }
}
