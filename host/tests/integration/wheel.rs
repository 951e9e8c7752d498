//! evalhost from pip: the wheel built by the README's command (`maturin build`, here with the
//! dev profile in the test build's target directory) installs into a fresh venv, and
//! `evalhost run cases/mino` runs from it. Under `EVALHOST_REQUIRE_TOOLCHAINS=1` a missing
//! maturin fails the test instead of skipping it.
//!
//! maturin runs `cargo rustc --bin evalhost` for the evalhost package alone, where `cargo test`
//! builds the binary with the features its dev-dependencies and the other workspace members
//! turn on in shared crates. `host/Cargo.toml` turns those features on for every build, so
//! maturin's cargo finds the test build's binary fresh: nothing is compiled again (no second
//! wasmtime build). The test checks it: before building, that the feature sets agree
//! (`cargo tree`, naming the crates that differ); after, that maturin compiled nothing. Cargo
//! still removes and links `target/debug/evalhost` again, so the other tests, which run
//! meanwhile, start their own hard link of it (`support/evalhost.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use crate::support::common::repo;
use crate::support::evalhost::Output;

/// maturin, as `.ci/run` installs it.
const MATURIN_INSTALL: &str = "pip install maturin==1.16.0";

/// Variables cargo sets for a running test (besides `CARGO_PKG_*` and `CARGO_BIN_EXE_*`).
const TEST_RUN_VARS: [&str; 9] = [
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "OUT_DIR",
];

/// Run `command` to completion; it must succeed.
fn run(mut command: Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let output = Output::from_process(&command, output);
    output.assert_success();
    output
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(repo());
    command
}

/// `crate version` → the feature sets it is built with, per `cargo tree ARGS`.
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let mut command = cargo();
    command
        .arg("tree")
        .args(args)
        .args(["--format", "{p} [{f}]", "--prefix", "none"]);
    let output = run(command);
    let mut features: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in output.stdout().lines() {
        let line = line.trim_end_matches(" (*)");
        let Some((package, rest)) = line.split_once(" [") else {
            continue;
        };
        let mut words = package.split(' ');
        let name = format!(
            "{} {}",
            words.next().unwrap_or_default(),
            words.next().unwrap_or_default()
        );
        features
            .entry(name)
            .or_default()
            .insert(rest.trim_end_matches(']').to_owned());
    }
    features
}

/// The crates `cargo build -p evalhost` (maturin's build) compiles with other features than
/// `cargo test --workspace` does: `crate version: build features -> test features`.
fn misaligned_features() -> Vec<String> {
    let build = features(&["-p", "evalhost", "--edges", "normal,build"]);
    let test = features(&["--workspace", "--edges", "normal,build,dev"]);
    build
        .iter()
        .filter_map(|(name, sets)| {
            let tested = test.get(name)?;
            (tested != sets).then(|| format!("{name}: {sets:?} -> {tested:?}"))
        })
        .collect()
}

#[test]
fn the_wheel_installs_into_a_fresh_venv_and_runs_the_shipped_cases() {
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
    let misaligned = misaligned_features();
    assert!(
        misaligned.is_empty(),
        "maturin's build of evalhost would compile these crates with other features than the \
         test build, and so build wasmtime a second time and re-link the binary the other tests \
         run; turn the test build's features on in host/Cargo.toml (\"Feature alignment\"):\n{}",
        misaligned.join("\n")
    );

    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    // README: `maturin build --release --out dist`; here with the dev profile in the test
    // build's target directory, where cargo finds everything fresh. The target directory is
    // the test build's by inheritance (`CARGO_TARGET_DIR` as `cargo test` saw it, else the
    // workspace's `target/`): setting the variable when `cargo test` ran without it would
    // rerun host/build.rs (`rerun-if-env-changed=CARGO_TARGET_DIR`) and re-link the binary.
    let mut maturin = Command::new("maturin");
    maturin
        .args(["build", "--profile", "dev", "--out"])
        .arg(&dist)
        .current_dir(repo());
    // As from the shell `cargo test` was started in: without the variables cargo sets for a
    // running test, which build scripts watch (ring's `rerun-if-env-changed=CARGO_PKG_NAME`,
    // `CARGO_MANIFEST_DIR`, ...) and which would make cargo run them and rebuild their crates.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if TEST_RUN_VARS.contains(&&*name)
            || ["CARGO_PKG_", "CARGO_BIN_EXE_"]
                .iter()
                .any(|prefix| name.starts_with(prefix))
        {
            maturin.env_remove(&*name);
        }
    }
    let built = run(maturin);
    let compiled: Vec<&str> = built
        .stderr()
        .lines()
        .filter(|line| line.trim_start().starts_with("Compiling "))
        .collect();
    assert!(
        compiled.is_empty(),
        "maturin's cargo compiled again what the test build made (compare the two builds' \
         fingerprints with CARGO_LOG=cargo::core::compiler::fingerprint=info):\n{built}"
    );
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
    let mut python = Command::new("python3");
    python.arg("-m").arg("venv").arg(&venv);
    run(python);
    let mut pip = Command::new(venv.join("bin/pip"));
    pip.args(["install", "--no-index", "--quiet"]).arg(wheel);
    run(pip);
    let installed = venv.join("bin/evalhost");
    assert!(
        installed.is_file(),
        "pip did not install {}",
        installed.display()
    );

    let mut version = Command::new(&installed);
    version.arg("--version");
    assert_eq!(
        run(version).stdout(),
        format!("evalhost {}\n", env!("CARGO_PKG_VERSION"))
    );
    // The wheel's binary records into a history of its own (its bundled SQLite works).
    let history = tempfile::tempdir().unwrap();
    let store = history.path().join("history.db");
    let mut mino = Command::new(&installed);
    mino.args(["run", "cases/mino"])
        .current_dir(repo())
        .env("XDG_CACHE_HOME", repo().join("target/test-cache"))
        .env("EVALHOST_HISTORY", &store);
    let output = run(mino);
    let stdout = output.stdout();
    assert!(
        stdout.contains("All cases passed.\nRecorded as run ")
            && stdout.ends_with(&format!(
                " in {} (evalhost history; evalhost view).\n",
                store.display()
            )),
        "{output}"
    );
    assert!(
        stdout.starts_with("Eval replay mode: 5 cases, 1 runs each"),
        "{output}"
    );
}
