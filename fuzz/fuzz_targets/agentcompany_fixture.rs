//! `cargo +nightly fuzz run agentcompany_fixture`: see `evalhost::internals::fuzzing::agentcompany_fixture` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::internals::fuzzing::agentcompany_fixture(data));
