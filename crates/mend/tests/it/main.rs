//! Integration tests of the mend library: the recorded fixtures and the data-driven cases.

mod cases;
mod fixtures;
mod mutations;
mod properties;
mod support;
