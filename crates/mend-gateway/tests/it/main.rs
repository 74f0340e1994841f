//! The gateway's integration tests: the app driven with `oneshot` (no port) in front of
//! a mock upstream that answers like each provider.

#![allow(clippy::unwrap_used)]

mod conversations;
mod durable;
mod fixtures;
mod heal;
mod heal_evidence;
mod limits;
mod metrics;
mod modes;
mod replicas;
mod routing;
mod scoping;
mod secrets;
mod streaming;
mod support;
mod traces;
mod ui;
