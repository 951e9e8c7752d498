//! The library's public API, item by item, is `host/tests/public-api.txt`: a change to it shows
//! in review as a change to that file. The listing is made from rustdoc's JSON by `public-api`
//! (the library of `cargo public-api`, in its own crate, `tests/public-api/`), for the features
//! an embedder that runs suites turns on (`default-features = false, features = ["run"]`).
//! rustdoc's JSON output is unstable: `RUSTC_BOOTSTRAP=1` lets the pinned stable rustdoc write it,
//! and the tool's `public-api` version is the one that reads that rustdoc's format.
//!
//! After a deliberate change: `UPDATE_SNAPSHOTS=1 cargo test -p evalhost --test integration
//! library::public_api`, then review the file's diff.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::support::common::{cargo, repo, run_ok as run};

const SNAPSHOT: &str = "host/tests/public-api.txt";

/// The target directory of this build (the test binary is `TARGET/debug/deps/integration-…`).
fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is TARGET/tmp")
        .to_owned()
}

/// The public API as `public-api` lists it, one item per line.
fn public_api() -> String {
    let target = target_dir();
    let mut rustdoc = cargo();
    rustdoc
        .env("RUSTC_BOOTSTRAP", "1")
        .args([
            "rustdoc",
            "-p",
            "evalhost",
            "--lib",
            "--no-default-features",
        ])
        .args(["--features", "run", "--target-dir"])
        .arg(target.join("public-api"))
        .args(["--", "-Z", "unstable-options", "--output-format", "json"]);
    run(rustdoc);
    let json = target.join("public-api/doc/evalhost.json");
    let mut list = cargo();
    list.args(["run", "--quiet", "--locked", "--manifest-path"])
        .arg(repo().join("tests/public-api/Cargo.toml"))
        .arg("--target-dir")
        .arg(target.join("public-api-tool"))
        .arg("--")
        .arg(&json);
    run(list).stdout().to_owned()
}

#[test]
fn the_public_api_is_the_snapshot() {
    let listed = public_api();
    let path = repo().join(SNAPSHOT);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &listed).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let snapshot =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let now: BTreeSet<&str> = listed.lines().collect();
    let before: BTreeSet<&str> = snapshot.lines().collect();
    let added: Vec<&&str> = now.difference(&before).collect();
    let removed: Vec<&&str> = before.difference(&now).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the public API differs from {SNAPSHOT}; if the change is deliberate, run \
         `UPDATE_SNAPSHOTS=1 cargo test -p evalhost --test integration library::public_api` \
         and review the file's diff.\nadded:\n  {}\nremoved:\n  {}",
        added.iter().map(|l| **l).collect::<Vec<_>>().join("\n  "),
        removed.iter().map(|l| **l).collect::<Vec<_>>().join("\n  "),
    );
}
