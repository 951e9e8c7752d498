//! evalhost from pip: the wheel built by the README's command (`maturin build`, here with the
//! dev profile in the test build's target directory, so that cargo reuses what `cargo test`
//! already compiled instead of a second, ~15-minute release build) installs into a fresh
//! venv, and `evalhost run cases/mino` runs from it. Under `EVALHOST_REQUIRE_TOOLCHAINS=1` a missing maturin fails the test instead of
//! skipping it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::common::repo;

/// maturin, as `.ci/run` installs it.
const MATURIN_INSTALL: &str = "pip install maturin==1.16.0";

/// The cargo target directory this test binary was built in (`<target>/debug/evalhost`).
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_evalhost"))
        .parent()
        .and_then(Path::parent)
        .expect("the binary lives in <target>/debug")
        .to_owned()
}

fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_wheel_installs_into_a_fresh_venv_and_runs_the_shipped_cases() {
    // maturin re-links target/debug/evalhost, which the other tests run concurrently: only
    // on request until the wheel is built in a target directory of its own.
    if std::env::var_os("EVALHOST_WHEEL_TEST").is_none_or(|v| v != "1") {
        eprintln!("skipped: set EVALHOST_WHEEL_TEST=1 to build and test the wheel");
        return;
    }
    let have_maturin = Command::new("maturin")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_maturin {
        if std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1") {
            panic!("maturin is required (EVALHOST_REQUIRE_TOOLCHAINS=1): {MATURIN_INSTALL}");
        }
        eprintln!("skipped: maturin is not installed: {MATURIN_INSTALL}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");

    // README: `maturin build --release --out dist`; here with the dev profile in the test
    // build's target directory, so cargo reuses what `cargo test` compiled (it recompiles only
    // the crates whose features the dev-dependencies widen, and evalhost).
    run(Command::new("maturin")
        .args(["build", "--profile", "dev", "--out"])
        .arg(&dist)
        .current_dir(repo())
        .env("CARGO_TARGET_DIR", target_dir()));
    let wheels: Vec<PathBuf> = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:?}");
    let wheel = &wheels[0];
    let name = wheel.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with(&format!("evalhost-{}-py3-none-", env!("CARGO_PKG_VERSION")))
            && name.ends_with(".whl"),
        "{name}"
    );

    let venv = tmp.path().join("venv");
    run(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--no-index", "--quiet"])
        .arg(wheel));
    let installed = venv.join("bin/evalhost");
    assert!(
        installed.is_file(),
        "pip did not install {}",
        installed.display()
    );

    let version = run(Command::new(&installed).arg("--version"));
    assert_eq!(version, format!("evalhost {}\n", env!("CARGO_PKG_VERSION")));
    let output = Command::new(&installed)
        .args(["run", "cases/mino"])
        .current_dir(repo())
        .env("XDG_CACHE_HOME", repo().join("target/test-cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.ends_with("All cases passed.\n"), "{stdout}");
    assert!(
        stdout.starts_with("Eval replay mode: 5 cases, 1 runs each"),
        "{stdout}"
    );
}
