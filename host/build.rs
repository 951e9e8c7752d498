//! Builds the guest components the host embeds or tests against, from source:
//! `graders/builtin` (the built-in graders), `tests/guests/hostile` (the
//! sandbox probes), `tests/guests/v0_1_0`, `v0_2_0` and `v0_3_0` (components of the 0.1.0,
//! 0.2.0 and 0.3.0 WIT; the SDK targets the newest) and the
//! misfit components of the hardening tests (`tests/guests/wrong_world`,
//! `unknown_import`, `huge_schema`), with a nested `cargo build --target wasm32-wasip2`.
//!
//! The nested build uses its own target directory (`<target>/guests`), so it
//! never waits on the lock the outer build holds, and a clean environment, so
//! flags meant for the host (RUSTFLAGS, wrappers, profile overrides) do not
//! leak into the guests. It shares the outer build's jobserver through the
//! inherited `CARGO_MAKEFLAGS`, so both together stay within `-j`.
//!
//! Outputs `EVALHOST_BUILTIN_GRADERS_WASM`, `EVALHOST_TEST_HOSTILE_WASM`,
//! `EVALHOST_TEST_V0_1_0_WASM`, `EVALHOST_TEST_V0_2_0_WASM`, `EVALHOST_TEST_V0_3_0_WASM`,
//! `EVALHOST_TEST_WRONG_WORLD_WASM`,
//! `EVALHOST_TEST_UNKNOWN_IMPORT_WASM` and `EVALHOST_TEST_HUGE_SCHEMA_WASM`: absolute paths
//! of the components, for `include_bytes!(env!(..))`.

use std::env;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

const TARGET: &str = "wasm32-wasip2";
const PROFILE: &str = "guest";

/// (package, artifact file stem, env var naming its path).
const GUESTS: [(&str, &str, &str); 8] = [
    (
        "evalhost-builtin-graders",
        "evalhost_builtin_graders",
        "EVALHOST_BUILTIN_GRADERS_WASM",
    ),
    (
        "evalhost-test-hostile",
        "evalhost_test_hostile",
        "EVALHOST_TEST_HOSTILE_WASM",
    ),
    (
        "evalhost-test-v0-1-0",
        "evalhost_test_v0_1_0",
        "EVALHOST_TEST_V0_1_0_WASM",
    ),
    (
        "evalhost-test-v0-2-0",
        "evalhost_test_v0_2_0",
        "EVALHOST_TEST_V0_2_0_WASM",
    ),
    (
        "evalhost-test-v0-3-0",
        "evalhost_test_v0_3_0",
        "EVALHOST_TEST_V0_3_0_WASM",
    ),
    (
        "evalhost-test-wrong-world",
        "evalhost_test_wrong_world",
        "EVALHOST_TEST_WRONG_WORLD_WASM",
    ),
    (
        "evalhost-test-unknown-import",
        "evalhost_test_unknown_import",
        "EVALHOST_TEST_UNKNOWN_IMPORT_WASM",
    ),
    (
        "evalhost-test-huge-schema",
        "evalhost_test_huge_schema",
        "EVALHOST_TEST_HUGE_SCHEMA_WASM",
    ),
];

/// Environment variables of the outer build that must not reach the nested
/// one: flags and wrappers for the host target (clippy's driver among them),
/// a target or target dir that would redirect it, and profile overrides.
const CLEARED: [&str; 14] = [
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_BUILD_DIR",
    "RUSTC_LINKER",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_MANIFEST_PATH",
];

/// Prefixes of variables cargo sets for this build script that describe the
/// host target and package; nested build scripts must see their own.
const CLEARED_PREFIXES: [&str; 5] = [
    "CARGO_PROFILE_",
    "CARGO_CFG_",
    "CARGO_FEATURE_",
    "CARGO_PKG_",
    "DEP_",
];

fn main() -> ExitCode {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir
        .parent()
        .expect("host/ sits in the workspace root")
        .to_path_buf();

    // Everything the guests are built from: their sources, the WIT, and the
    // workspace manifest (the `guest` profile) and lock file. A new path
    // dependency of a guest outside these directories must be added here.
    for input in [
        "sdk",
        "graders/builtin",
        "tests/guests",
        "wit",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");

    // `cargo fuzz` builds with `--cfg fuzzing` on a nightly that may lack the guest target;
    // the fuzz targets exercise the parsers only, so the components are empty placeholders.
    if env::var_os("CARGO_CFG_FUZZING").is_some() {
        return placeholder_guests();
    }

    // Beside the outer build's artifacts. A relative CARGO_TARGET_DIR is
    // relative to wherever cargo was started, which a build script cannot
    // know, so only an absolute one moves the guests.
    let target_dir = match env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir.join("guests"),
        _ => workspace.join("target").join("guests"),
    };
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(&workspace)
        .args(["build", "--target", TARGET, "--profile", PROFILE])
        .arg("--target-dir")
        .arg(&target_dir);
    for (package, _, _) in GUESTS {
        command.args(["-p", package]);
    }
    for name in CLEARED {
        command.env_remove(name);
    }
    for (name, _) in env::vars_os() {
        let name = name.to_string_lossy();
        if CLEARED_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            command.env_remove(&*name);
        }
    }

    let output = match command.output() {
        Ok(output) => output,
        Err(error) => {
            eprintln!("error: failed to run `{command:?}` to build the guest components: {error}");
            return ExitCode::FAILURE;
        }
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        eprintln!("{stderr}");
        eprintln!(
            "error: building the guest components failed ({}): {command:?}",
            output.status
        );
        if target_missing(&stderr) {
            eprintln!(
                "hint: the `{TARGET}` target is not installed; run `rustup target add {TARGET}`"
            );
        }
        return ExitCode::FAILURE;
    }

    let artifacts = target_dir.join(TARGET).join(PROFILE);
    for (_, stem, var) in GUESTS {
        let wasm = artifacts.join(format!("{stem}.wasm"));
        if !wasm.is_file() {
            eprintln!(
                "error: the guest build succeeded but left no component at {}",
                wasm.display()
            );
            return ExitCode::FAILURE;
        }
        println!("cargo:rustc-env={var}={}", wasm.display());
    }
    ExitCode::SUCCESS
}

/// Empty stand-ins for the guest components, for fuzzing builds (see `main`).
fn placeholder_guests() -> ExitCode {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let placeholder = out_dir.join("placeholder.wasm");
    if let Err(error) = std::fs::write(&placeholder, b"") {
        eprintln!("error: failed to write {}: {error}", placeholder.display());
        return ExitCode::FAILURE;
    }
    for (_, _, var) in GUESTS {
        println!("cargo:rustc-env={var}={}", placeholder.display());
    }
    ExitCode::SUCCESS
}

/// Whether cargo's stderr says the standard library for the target is missing.
fn target_missing(stderr: &str) -> bool {
    stderr.contains("target may not be installed")
        || stderr.contains("can't find crate for `core`")
        || stderr.contains("can't find crate for `std`")
}
