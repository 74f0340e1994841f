//! The canonical model over the recorded fixtures: request bodies round-trip exactly,
//! responses and streams are captured with their ids, and bad input gives clear errors.

#[path = "../it/support.rs"]
#[allow(dead_code)]
mod support;

mod bad_input;
mod bedrock_capture;
mod capture;
mod convert;
mod golden;
mod proptests;
mod requests;
