//! Python tools a test needs (Inspect AI, the OpenTelemetry SDK, Harbor's models), found or
//! the test skipped, as `.ci/run` installs them at pinned versions.

#![allow(dead_code)]

use std::process::Command;

/// `Some(())` when `python3 -c "import MODULES"` works; otherwise skips the test (`None`), or,
/// under `EVALHOST_REQUIRE_TOOLCHAINS=1`, fails it, naming `install` (the pinned command).
pub fn python_modules(modules: &str, install: &str) -> Option<()> {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(());
    }
    if std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1") {
        panic!("python3 cannot import {modules} (EVALHOST_REQUIRE_TOOLCHAINS=1): {install}");
    }
    eprintln!("skipped: python3 cannot import {modules}: {install}");
    None
}
