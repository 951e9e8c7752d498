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
//!
//! What people download: the wheel carries the binary its profile linked, byte for byte, and
//! stays under [`WHEEL_BOUND_BYTES`]; the release profile, which `maturin build --release`
//! and `cargo install` use, links it without debug info (`Cargo.toml`; the sizes are in
//! docs/performance.md, "Release artifacts"). The test's wheel is the dev profile's, which
//! keeps line tables for the tests' backtraces: stripping only the shipped profile is what
//! lets the test reuse the test build's binary instead of linking another.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::common::{cargo, repo, run_ok as run};
use crate::support::evalhost::Evalhost;

/// The wheel the test builds (dev profile: line tables in evalhost's own code) stays under
/// 45 MB: it was 29.7 MB for a 115 MB binary on 2026-12-05, and the release wheel 18.0 MB
/// (docs/performance.md, "Release artifacts"). Half again leaves room for the code to grow;
/// a binary with full debug info, or a second binary, does not fit.
const WHEEL_BOUND_BYTES: u64 = 45_000_000;

/// How `[profile.release]` may strip the binary the wheel and `cargo install` ship: without
/// debug info, with or without its symbols.
const RELEASE_STRIP: [&str; 3] = ["debuginfo", "symbols", "true"];

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
    let size = std::fs::metadata(wheel).unwrap().len();
    assert!(
        size < WHEEL_BOUND_BYTES,
        "{name} is {size} bytes, over the bound of {WHEEL_BOUND_BYTES} (wheel.rs): what made \
         it grow? (`unzip -l` lists it)"
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
    // The wheel ships the binary the profile linked, unchanged: so the release wheel is the
    // release profile's stripped binary (the test below).
    assert!(
        same_bytes(&installed, Evalhost::program()),
        "the wheel's binary ({}, {} bytes) is not the binary cargo built ({}, {} bytes)",
        installed.display(),
        std::fs::metadata(&installed).unwrap().len(),
        Evalhost::program().display(),
        std::fs::metadata(Evalhost::program()).unwrap().len(),
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

/// Whether two files hold the same bytes.
fn same_bytes(a: &Path, b: &Path) -> bool {
    let open = |path: &Path| {
        std::io::BufReader::new(
            std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        )
    };
    let (mut a, mut b) = (open(a), open(b));
    let (mut left, mut right) = (vec![0; 1 << 16], vec![0; 1 << 16]);
    loop {
        let n = read_full(&mut a, &mut left);
        if n != read_full(&mut b, &mut right) || left[..n] != right[..n] {
            return false;
        }
        if n == 0 {
            return true;
        }
    }
}

/// Fills `buf` as far as the reader goes; the number of bytes read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> usize {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]).unwrap() {
            0 => break,
            n => filled += n,
        }
    }
    filled
}

/// The release profile is what people download (`maturin build --release`, `cargo install`):
/// it must link the binary without debug info, 52 MB instead of 239 MB with line tables.
/// Profiling uses `[profile.profiling]`, which keeps them.
#[test]
fn the_release_profile_ships_the_binary_without_debug_info() {
    let path = repo().join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let manifest: toml::Table =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let release = manifest
        .get("profile")
        .and_then(|profiles| profiles.get("release"));
    let strip = release.and_then(|release| release.get("strip"));
    let named = strip.map(|strip| match strip {
        toml::Value::String(name) => name.clone(),
        other => other.to_string(),
    });
    assert!(
        named
            .as_deref()
            .is_some_and(|name| RELEASE_STRIP.contains(&name)),
        "{}: [profile.release] must set `strip` to one of {RELEASE_STRIP:?} (got {strip:?}): \
         the wheel and `cargo install` ship that binary; line tables for `perf` belong in \
         [profile.profiling]",
        path.display()
    );
}
