//! Builds the guest component the library embeds, the built-in graders (`graders/builtin`),
//! from source with a nested `cargo build --target wasm32-wasip2` (`build/guest_cargo.rs`,
//! which says how it is isolated from the outer build). The test-only guests
//! (`tests/guests/`) are built by the tests that use them
//! (`host/tests/integration/support/guests.rs`), not here, so neither the library nor
//! the release binary compiles them.
//!
//! Outputs `EVALHOST_BUILTIN_GRADERS_WASM`: the absolute path of the component, for
//! `include_bytes!(env!(..))`.

#[path = "build/guest_cargo.rs"]
mod guest_cargo;

use std::env;
use std::path::PathBuf;
use std::process::ExitCode;

use guest_cargo::TARGET;

/// The package, its artifact's file stem and the env var naming its path.
const BUILTIN: (&str, &str, &str) = (
    "evalhost-builtin-graders",
    "evalhost_builtin_graders",
    "EVALHOST_BUILTIN_GRADERS_WASM",
);

fn main() -> ExitCode {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir
        .parent()
        .expect("host/ sits in the workspace root")
        .to_path_buf();
    let (package, stem, var) = BUILTIN;

    // Everything the built-in graders are built from: their sources, the SDK, the WIT, and the
    // workspace manifest (the `guest` profile) and lock file. A new path dependency of theirs
    // outside these directories must be added here.
    for input in ["sdk", "graders/builtin", "wit", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");

    // `cargo fuzz` builds with `--cfg fuzzing` on a nightly that may lack the guest target;
    // the fuzz targets exercise the parsers only, so the component is an empty placeholder.
    if env::var_os("CARGO_CFG_FUZZING").is_some() {
        return placeholder(var);
    }

    // Beside the outer build's artifacts. A relative CARGO_TARGET_DIR is
    // relative to wherever cargo was started, which a build script cannot
    // know, so only an absolute one moves the guests.
    let target_dir = match env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => workspace.join("target"),
    };
    let guest_target_dir = guest_cargo::guest_target_dir(&target_dir);
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = guest_cargo::command(&cargo, &workspace, &guest_target_dir, &[package]);

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
        if guest_cargo::target_missing(&stderr) {
            eprintln!(
                "hint: the `{TARGET}` target is not installed; run `rustup target add {TARGET}`"
            );
        }
        return ExitCode::FAILURE;
    }

    let wasm = guest_cargo::artifact(&guest_target_dir, stem);
    if !wasm.is_file() {
        eprintln!(
            "error: the guest build succeeded but left no component at {}",
            wasm.display()
        );
        return ExitCode::FAILURE;
    }
    println!("cargo:rustc-env={var}={}", wasm.display());
    ExitCode::SUCCESS
}

/// An empty stand-in for the guest component, for fuzzing builds (see `main`).
fn placeholder(var: &str) -> ExitCode {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let placeholder = out_dir.join("placeholder.wasm");
    if let Err(error) = std::fs::write(&placeholder, b"") {
        eprintln!("error: failed to write {}: {error}", placeholder.display());
        return ExitCode::FAILURE;
    }
    println!("cargo:rustc-env={var}={}", placeholder.display());
    ExitCode::SUCCESS
}
