//! The test-only guest components (`tests/guests/`), built from source the first time a test
//! asks for one, once per test process, with the same nested `cargo build --target
//! wasm32-wasip2 --profile guest` as `host/build.rs` (`host/build/guest_cargo.rs`) into the same
//! guest target directory beside the test binary. The library and the release binary never
//! compile them.

#![allow(dead_code)]

#[path = "../../../build/guest_cargo.rs"]
mod guest_cargo;

use std::path::Path;
use std::sync::OnceLock;

use super::common::repo;

/// (package, artifact file stem) of every test guest; one nested build makes them all.
const GUESTS: [(&str, &str); 9] = [
    ("evalhost-test-hostile", "evalhost_test_hostile"),
    ("evalhost-test-v0-1-0", "evalhost_test_v0_1_0"),
    ("evalhost-test-v0-2-0", "evalhost_test_v0_2_0"),
    ("evalhost-test-v0-3-0", "evalhost_test_v0_3_0"),
    ("evalhost-test-v0-4-0", "evalhost_test_v0_4_0"),
    ("evalhost-test-begin-run", "evalhost_test_begin_run"),
    ("evalhost-test-wrong-world", "evalhost_test_wrong_world"),
    (
        "evalhost-test-unknown-import",
        "evalhost_test_unknown_import",
    ),
    ("evalhost-test-huge-schema", "evalhost_test_huge_schema"),
];

/// The sandbox probes (`tests/guests/hostile`).
pub fn hostile() -> &'static str {
    path("evalhost_test_hostile")
}

/// A grader built against the first released WIT, 0.1.0 (`tests/guests/v0_1_0`).
pub fn v0_1_0() -> &'static str {
    path("evalhost_test_v0_1_0")
}

/// A grader built against WIT 0.2.0 (`tests/guests/v0_2_0`).
pub fn v0_2_0() -> &'static str {
    path("evalhost_test_v0_2_0")
}

/// A grader built against WIT 0.3.0, which asks the judge (`tests/guests/v0_3_0`).
pub fn v0_3_0() -> &'static str {
    path("evalhost_test_v0_3_0")
}

/// A grader built against WIT 0.4.0, which gets the evidence with every call
/// (`tests/guests/v0_4_0`).
pub fn v0_4_0() -> &'static str {
    path("evalhost_test_v0_4_0")
}

/// A 0.5.0 grader whose `begin-run` counts its calls, or fails as `/workspace/begin-run`
/// says (`tests/guests/begin_run`).
pub fn begin_run() -> &'static str {
    path("evalhost_test_begin_run")
}

/// A component of another world (`tests/guests/wrong_world`).
pub fn wrong_world() -> &'static str {
    path("evalhost_test_wrong_world")
}

/// A component importing what the sandbox lacks (`tests/guests/unknown_import`).
pub fn unknown_import() -> &'static str {
    path("evalhost_test_unknown_import")
}

/// A grader with a 100 MiB config schema (`tests/guests/huge_schema`).
pub fn huge_schema() -> &'static str {
    path("evalhost_test_huge_schema")
}

/// The component of artifact `stem`, building every test guest on the first call.
fn path(stem: &str) -> &'static str {
    let index = GUESTS
        .iter()
        .position(|(_, known)| *known == stem)
        .expect("one of GUESTS");
    &built()[index]
}

/// The paths of every test guest's component, in `GUESTS` order, after building them all
/// (once per process).
fn built() -> &'static [String] {
    static BUILT: OnceLock<Vec<String>> = OnceLock::new();
    BUILT.get_or_init(|| {
        // The test binary's target directory (`<target>/debug/evalhost` → `<target>`), so the
        // guests sit where `host/build.rs` puts the built-in graders and share their compiled
        // dependencies.
        let target_dir = Path::new(env!("CARGO_BIN_EXE_evalhost"))
            .parent()
            .and_then(Path::parent)
            .expect("the binary sits in <target>/<profile>/");
        let guest_target_dir = guest_cargo::guest_target_dir(target_dir);
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
        let packages: Vec<&str> = GUESTS.iter().map(|(package, _)| *package).collect();
        let mut command = guest_cargo::command(&cargo, &repo(), &guest_target_dir, &packages);
        let output = command
            .output()
            .unwrap_or_else(|error| panic!("`{command:?}` did not start: {error}"));
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let hint = if guest_cargo::target_missing(&stderr) {
                format!("\nhint: run `rustup target add {}`", guest_cargo::TARGET)
            } else {
                String::new()
            };
            panic!(
                "building the test guest components failed ({}): {command:?}\n{stderr}{hint}",
                output.status
            );
        }
        GUESTS
            .iter()
            .map(|(_, stem)| {
                let wasm = guest_cargo::artifact(&guest_target_dir, stem);
                assert!(
                    wasm.is_file(),
                    "the guest build succeeded but left no component at {}",
                    wasm.display()
                );
                wasm.into_os_string()
                    .into_string()
                    .expect("a UTF-8 target path")
            })
            .collect()
    })
}
