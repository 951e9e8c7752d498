//! `cargo +nightly fuzz run nexus_journal`: see `evalhost::internals::fuzzing::nexus_journal` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::internals::fuzzing::nexus_journal(data));
