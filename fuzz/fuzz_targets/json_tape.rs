//! `cargo fuzz run json_tape`: see `mend_fuzz::json_tape` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mend_fuzz::json_tape(data));
