//! `cargo fuzz run convert`: see `mend_fuzz::convert` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mend_fuzz::convert(data));
