//! `cargo fuzz run roundtrip`: see `mend_fuzz::roundtrip` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mend_fuzz::roundtrip(data));
