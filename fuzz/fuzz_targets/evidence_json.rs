//! `cargo +nightly fuzz run evidence_json`: see `evalhost::internals::fuzzing::evidence_json` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::internals::fuzzing::evidence_json(data));
