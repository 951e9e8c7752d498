//! The fuzz corpora as regression tests on stable: every committed input of every fuzz target
//! (`fuzz/corpus/<target>/`) goes through the same entry point the fuzz target calls
//! (`evalhost::internals::fuzzing`), so a parser change that panics on, or breaks a property for, an
//! input the fuzzer once found interesting fails `cargo test` (see `docs/fuzzing.md`).

use std::path::PathBuf;

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

fn corpus_dir(target: &str) -> PathBuf {
    fuzz_dir().join("corpus").join(target)
}

#[test]
fn every_corpus_input_of_every_target_passes_its_checks() {
    for (target, run) in evalhost::internals::fuzzing::TARGETS {
        let dir = corpus_dir(target);
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("corpus entry").path())
            .collect();
        inputs.sort();
        assert!(
            inputs.len() >= 3,
            "{}: a corpus of {} inputs; seed it (fuzz/seed_corpus.py)",
            dir.display(),
            inputs.len()
        );
        for input in inputs {
            let data = std::fs::read(&input).expect("corpus input");
            let outcome = std::panic::catch_unwind(|| run(&data));
            assert!(outcome.is_ok(), "{target}: {} failed", input.display());
        }
    }
}

#[test]
fn every_fuzz_target_has_a_corpus_and_a_cargo_fuzz_binary() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for (target, _) in evalhost::internals::fuzzing::TARGETS {
        assert!(
            manifest.contains(&format!("name = \"{target}\"")),
            "fuzz/Cargo.toml has no [[bin]] for {target}"
        );
        assert!(corpus_dir(target).is_dir(), "no corpus for {target}");
    }
}
