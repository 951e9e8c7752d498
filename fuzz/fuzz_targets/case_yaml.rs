//! `cargo +nightly fuzz run case_yaml`: see `evalhost::fuzzing::case_yaml` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::fuzzing::case_yaml(data));
