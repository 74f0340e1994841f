//! `cargo fuzz run trim`: see `mend_fuzz::trim` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mend_fuzz::trim(data));
