//! `cargo +nightly fuzz run provider_stream`: see `evalhost::fuzzing::provider_stream` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::fuzzing::provider_stream(data));
