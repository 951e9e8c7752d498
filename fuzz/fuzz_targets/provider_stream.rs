//! `cargo +nightly fuzz run provider_stream`: see `evalhost::internals::fuzzing::provider_stream` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::internals::fuzzing::provider_stream(data));
