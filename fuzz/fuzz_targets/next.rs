//! `cargo fuzz run next`: see `mend_fuzz::next` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mend_fuzz::next(data));
