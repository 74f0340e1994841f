//! Integration tests of the mend library: the recorded fixtures and the data-driven cases.

mod fixtures;
mod support;
