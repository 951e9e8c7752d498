//! `cargo +nightly fuzz run judgments`: see `evalhost::internals::fuzzing::judgments` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::internals::fuzzing::judgments(data));
