//! `cargo +nightly fuzz run bundle`: see `evalhost::internals::fuzzing::bundle` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::internals::fuzzing::bundle(data));
