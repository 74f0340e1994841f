//! `cargo fuzz run stream`: see `mend_fuzz::stream` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mend_fuzz::stream(data));
