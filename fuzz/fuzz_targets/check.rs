//! `cargo fuzz run check`: see `mend_fuzz::check` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mend_fuzz::check(data));
