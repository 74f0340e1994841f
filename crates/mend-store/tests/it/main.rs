//! The store's tests: one binary, one conformance suite run against each backend.
//!
//! PostgreSQL tests use `MEND_TEST_POSTGRES` (default
//! `postgres://postgres@127.0.0.1:5432/test`), each in a schema of its own that is
//! dropped at the end. When the server cannot be reached they say so and pass, except
//! under `CI=true`, where they fail.

// The suite's properties are generic functions called from the tests below: in them, as
// in a test, a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod conformance;
mod crash;
mod migrations;
mod scopes;
mod support;

/// One `#[test]` per property and backend, so a failure names both.
macro_rules! for_each_backend {
    ($($name:ident => $suite:path),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $name() {
                crate::support::run_sqlite(|b| async move { $suite(&b).await });
            })*
        }
        mod postgres {
            $(#[test]
            fn $name() {
                crate::support::run_postgres(|b| async move { $suite(&b).await });
            })*
        }
    };
}

for_each_backend! {
    load_returns_exactly_what_was_appended => crate::conformance::load_returns_exactly_what_was_appended,
    load_of_a_span_returns_that_span => crate::conformance::load_of_a_span_returns_that_span,
    a_used_key_returns_the_first_result_and_writes_nothing => crate::conformance::a_used_key_returns_the_first_result_and_writes_nothing,
    used_keys_are_forgotten_after_their_lifetime => crate::conformance::used_keys_are_forgotten_after_their_lifetime,
    compare_and_append_refuses_a_conversation_that_moved_on => crate::conformance::compare_and_append_refuses_a_conversation_that_moved_on,
    sixteen_concurrent_writers_lose_and_duplicate_nothing => crate::conformance::sixteen_concurrent_writers_lose_and_duplicate_nothing,
    fork_copies_the_prefix_and_nothing_else => crate::conformance::fork_copies_the_prefix_and_nothing_else,
    delete_removes_the_conversation_and_keeps_its_forks => crate::conformance::delete_removes_the_conversation_and_keeps_its_forks,
    list_pages_in_creation_order => crate::conformance::list_pages_in_creation_order,
    ids_are_unique_and_checked => crate::conformance::ids_are_unique_and_checked,
    validation_rejects_naming_the_rule_and_writes_nothing => crate::conformance::validation_rejects_naming_the_rule_and_writes_nothing,
    canonical_messages_come_back_and_render_for_any_dialect => crate::conformance::canonical_messages_come_back_and_render_for_any_dialect,
    killed_writer_leaves_every_acknowledged_append_and_no_partial_one => crate::crash::killed_writer_leaves_every_acknowledged_append_and_no_partial_one,
    an_old_database_is_migrated_and_a_newer_one_refused => crate::migrations::an_old_database_is_migrated_and_a_newer_one_refused,
    claim_creates_adopts_and_refuses => crate::scopes::claim_creates_adopts_and_refuses,
    an_append_in_another_scope_writes_nothing => crate::scopes::an_append_in_another_scope_writes_nothing,
    racing_claims_of_one_id_have_one_winner => crate::scopes::racing_claims_of_one_id_have_one_winner,
    list_filters_by_scope_and_forks_keep_theirs => crate::scopes::list_filters_by_scope_and_forks_keep_theirs,
}
