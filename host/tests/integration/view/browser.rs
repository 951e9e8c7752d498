//! `evalhost view` in a real browser: `browser_check.py` drives headless Chromium (Playwright's
//! Python package with the system's `/usr/bin/chromium`) through what a person does: the runs
//! list, the status filter and the search box of a run, a case's transcript, a case's
//! history, a comparison with its changed case first, no console error. Without Chromium or
//! Playwright the test prints why and skips, unless `EVALHOST_REQUIRE_TOOLCHAINS=1`.

use std::path::Path;
use std::process::Command;

use super::store::{GREETING, Store, View};
use crate::support::common::repo;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Whether Chromium and Playwright are here; otherwise prints why (or fails under
/// `EVALHOST_REQUIRE_TOOLCHAINS=1`).
fn browser_available() -> bool {
    let missing = if !Path::new(CHROMIUM).exists() {
        Some(format!(
            "{CHROMIUM} is not installed (Debian package chromium)"
        ))
    } else if !Command::new("python3")
        .args(["-c", "import playwright.sync_api"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        Some("Playwright's Python package is not installed (pip install playwright==1.63.0)".into())
    } else {
        None
    };
    let Some(missing) = missing else {
        return true;
    };
    if std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1") {
        panic!("required (EVALHOST_REQUIRE_TOOLCHAINS=1): {missing}");
    }
    eprintln!("skipped: {missing}");
    false
}

#[test]
fn a_person_sees_the_runs_filters_transcripts_history_and_comparison() {
    if !browser_available() {
        return;
    }
    let store = Store::new();
    let view = View::start(&store.db, &[]);
    let script = repo().join("host/tests/integration/view/browser_check.py");
    let output = Command::new("python3")
        .arg(&script)
        .args([
            view.url.as_str(),
            &store.mino,
            &store.first,
            &store.second,
            GREETING,
        ])
        .output()
        .expect("python3 runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    eprintln!("{stdout}");
    assert!(
        output.status.success(),
        "browser_check.py failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("all browser checks passed"), "{stdout}");
}
