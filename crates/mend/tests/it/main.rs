//! Integration tests of the mend library: the recorded fixtures, the data-driven cases,
//! damage that must never panic, and the properties of repair and trim.

mod bedrock_fixtures;
mod cases;
mod catalog;
mod check_paths;
mod fixtures;
mod json_tape;
mod long_arguments;
mod messages;
mod mutations;
mod next_cases;
mod properties;
mod recognize;
mod reused_ids;
mod scale;
mod splice;
mod support;
mod usage;
