//! `cargo +nightly fuzz run sse_stream`: see `evalhost::internals::fuzzing::sse_stream` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::internals::fuzzing::sse_stream(data));
