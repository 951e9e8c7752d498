//! Colour: `--color always|never|auto`, NO_COLOR, and the progress bar on a terminal.
//!
//! Terminal cases run evalhost under `script` (util-linux), which gives it a pseudo-terminal
//! for stdout and stderr.

use std::process::Command;

use crate::support::common::repo;
use crate::support::evalhost::Evalhost;

const RED_BOLD: &str = "\x1b[1;31m";
const GREEN: &str = "\x1b[32m";

#[test]
fn color_always_paints_status_words_and_the_error_line() {
    let output = Evalhost::new()
        .args(["run", "--color", "always", "cases/mino-failing"])
        .run();
    output.assert_code(1);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert!(
        stdout.contains(&format!("{RED_BOLD}FAIL\x1b[0m")),
        "{stdout:?}"
    );
    assert!(
        stdout.contains(&format!("{GREEN}pass\x1b[0m")),
        "{stdout:?}"
    );
    assert!(
        stdout.contains(&format!("{RED_BOLD}1 of 2 cases failed\x1b[0m.")),
        "{stdout:?}"
    );
    assert_eq!(
        stderr.trim_end(),
        format!("{RED_BOLD}Error:\x1b[0m Eval failed: 1 of 2 cases did not pass every run")
    );
    // Without the codes it is the plain report, byte for byte.
    let output = Evalhost::new().args(["run", "cases/mino-failing"]).run();
    let plain = output.stdout();
    assert_eq!(strip_ansi(stdout), plain);
}

#[test]
fn color_never_and_non_terminals_get_no_escape_codes() {
    for args in [
        &["run", "--color", "never", "cases/mino-failing"][..],
        &["run", "cases/mino-failing"][..],
        &["--color", "never", "check", "cases/no-such-suite"][..],
    ] {
        let output = Evalhost::new().args(args).run();
        let (stdout, stderr) = (output.stdout(), output.stderr());
        assert!(!stdout.contains('\x1b'), "{args:?}: {stdout:?}");
        assert!(!stderr.contains('\x1b'), "{args:?}: {stderr:?}");
    }
}

#[test]
fn a_terminal_gets_colour_unless_no_color_is_set() {
    let colored = on_terminal(&["run", "--quiet", "cases/mino-failing"], None);
    assert!(colored.contains(&format!("{RED_BOLD}FAIL")), "{colored:?}");
    assert!(
        colored.contains(&format!("{RED_BOLD}Error:")),
        "{colored:?}"
    );
    // An empty NO_COLOR does not count (no-color.org).
    let empty = on_terminal(&["run", "--quiet", "cases/mino-failing"], Some(""));
    assert!(empty.contains(&format!("{RED_BOLD}FAIL")), "{empty:?}");
    let plain = on_terminal(&["run", "--quiet", "cases/mino-failing"], Some("1"));
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert!(
        plain.contains("FAIL") && plain.contains("Error: Eval failed"),
        "{plain:?}"
    );
    // The flag wins over the variable.
    let forced = on_terminal(
        &["run", "--quiet", "--color", "always", "cases/mino-failing"],
        Some("1"),
    );
    assert!(forced.contains(&format!("{RED_BOLD}FAIL")), "{forced:?}");
}

#[test]
fn a_terminal_shows_a_progress_bar_unless_quiet() {
    let dir = tempfile::tempdir().unwrap();
    // Long enough that the bar (redrawn every 250 ms) is drawn while the case runs.
    std::fs::write(
        dir.path().join("slow.yaml"),
        "name: slow\nprompt: Wait.\napprove: all\nmodel:\n  - call: {tool: bash, arguments: {command: sleep 2}}\n  - text: done\ngraders:\n  - final_text_contains: done\n",
    )
    .unwrap();
    let suite = dir.path().to_str().unwrap();
    let shown = on_terminal(&["run", "--color", "never", suite], None);
    assert!(shown.contains("0/1 runs ["), "{shown:?}");
    assert!(shown.contains("elapsed, ETA"), "{shown:?}");
    assert!(shown.contains("All cases passed."), "{shown:?}");
    let quiet = on_terminal(&["run", "--quiet", "--color", "never", suite], None);
    assert!(!quiet.contains("runs ["), "{quiet:?}");
    assert!(quiet.contains("All cases passed."), "{quiet:?}");
}

/// Run evalhost with a pseudo-terminal as stdout and stderr; what the terminal received.
fn on_terminal(args: &[&str], no_color: Option<&str>) -> String {
    let command = format!("{} {}", Evalhost::program().display(), args.join(" "));
    let mut script = Command::new("script");
    script
        .args(["--quiet", "--return", "--command", &command, "/dev/null"])
        .current_dir(repo())
        .env("XDG_CACHE_HOME", repo().join("target/test-cache"))
        .env("TERM", "xterm-256color")
        .env("EVALHOST_HISTORY", "off")
        .env_remove("NO_COLOR");
    if let Some(value) = no_color {
        script.env("NO_COLOR", value);
    }
    let output = script.output().expect("`script` (util-linux) runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The text without ANSI SGR sequences (`ESC [ ... m`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
