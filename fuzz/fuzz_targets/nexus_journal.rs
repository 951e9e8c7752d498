//! `cargo +nightly fuzz run nexus_journal`: see `evalhost::fuzzing::nexus_journal` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evalhost::fuzzing::nexus_journal(data));
