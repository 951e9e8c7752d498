//! `cargo +nightly fuzz run case_yaml`: see `evalhost::internals::fuzzing::case_yaml` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::internals::fuzzing::case_yaml(data));
