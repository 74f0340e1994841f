//! `cargo fuzz run repair`: see `mend_fuzz::repair` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mend_fuzz::repair(data));
