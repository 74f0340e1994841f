//! The benchmark corpus is what it claims to be: valid bodies of each dialect, near
//! their target size, that mend tells apart without being told.

use mend::{CheckOptions, Dialect};

#[path = "../benches/corpus.rs"]
mod corpus;

#[test]
fn every_corpus_body_checks_valid_and_is_near_its_target_size() {
    for size in corpus::SIZES {
        for dialect in Dialect::ALL {
            let bytes = corpus::body(dialect, size.bytes);
            assert!(
                bytes.len() * 4 <= size.bytes * 5 && bytes.len() * 10 >= size.bytes * 6,
                "{dialect} {}: {} bytes is not near the target {}",
                size.name,
                bytes.len(),
                size.bytes
            );
            let given = CheckOptions {
                dialect: Some(dialect),
                ..CheckOptions::default()
            };
            let report = mend::check(&bytes, &given).expect("the corpus is JSON");
            assert!(
                report.violations.is_empty(),
                "{dialect} {}: {:#?}",
                size.name,
                report.violations
            );
            let detected = mend::check(&bytes, &CheckOptions::default())
                .expect("the corpus dialect is detectable");
            assert_eq!(detected.dialect, dialect, "{}", size.name);
        }
    }
}

#[test]
fn the_corpus_is_deterministic() {
    for dialect in Dialect::ALL {
        assert_eq!(
            corpus::body(dialect, 20 * 1024),
            corpus::body(dialect, 20 * 1024)
        );
    }
}
