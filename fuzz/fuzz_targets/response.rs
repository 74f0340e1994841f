//! `cargo fuzz run response`: see `mend_fuzz::response` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mend_fuzz::response(data));
