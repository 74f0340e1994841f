//! Integration tests of the `mend` binary: exit codes, output shapes, bad input, and
//! snapshots of the rendered tables. Every test runs the real binary.

mod bad_input;
mod check;
mod commands;
mod convert;
mod fix;
mod forced;
mod inspect;
mod next;
mod serve_kill;
mod store;
mod support;
mod ui;
