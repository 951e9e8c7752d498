//! The nested `cargo build --target wasm32-wasip2 --profile guest` that builds guest components
//! from source, shared by `host/build.rs` (the built-in graders the library embeds) and the
//! integration tests (the test-only guests, `host/tests/integration/support/guests.rs`).
//!
//! The nested build uses its own target directory (`<target>/guests`), so it never waits on
//! the lock the outer build holds, and a clean environment, so flags meant for the host
//! (RUSTFLAGS, wrappers, profile overrides) do not leak into the guests. Under a build script
//! it shares the outer build's jobserver through the inherited `CARGO_MAKEFLAGS`, so both
//! together stay within `-j`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const TARGET: &str = "wasm32-wasip2";
pub const PROFILE: &str = "guest";

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

/// Prefixes of variables cargo sets for a build script or a test that describe the
/// host target and package; nested build scripts must see their own.
const CLEARED_PREFIXES: [&str; 5] = [
    "CARGO_PROFILE_",
    "CARGO_CFG_",
    "CARGO_FEATURE_",
    "CARGO_PKG_",
    "DEP_",
];

/// The guest target directory beside the outer build's artifacts in `target_dir`.
pub fn guest_target_dir(target_dir: &Path) -> PathBuf {
    target_dir.join("guests")
}

/// `cargo build` of `packages` for the guest target and profile, run in `workspace`,
/// into `guest_target_dir`, with the outer build's host-only environment cleared.
pub fn command(
    cargo: &OsStr,
    workspace: &Path,
    guest_target_dir: &Path,
    packages: &[&str],
) -> Command {
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .args(["build", "--target", TARGET, "--profile", PROFILE])
        .arg("--target-dir")
        .arg(guest_target_dir);
    for package in packages {
        command.args(["-p", package]);
    }
    for name in CLEARED {
        command.env_remove(name);
    }
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if CLEARED_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            command.env_remove(&*name);
        }
    }
    command
}

/// Where the nested build leaves the component of the artifact `stem`.
pub fn artifact(guest_target_dir: &Path, stem: &str) -> PathBuf {
    guest_target_dir
        .join(TARGET)
        .join(PROFILE)
        .join(format!("{stem}.wasm"))
}

/// Whether cargo's stderr says the standard library for the target is missing.
pub fn target_missing(stderr: &str) -> bool {
    stderr.contains("target may not be installed")
        || stderr.contains("can't find crate for `core`")
        || stderr.contains("can't find crate for `std`")
}
