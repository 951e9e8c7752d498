//! docs/cli.md's "Using evalhost as a library", as an outside project follows it: a new cargo
//! project outside this workspace depends on the crate with the section's `[dependencies]`
//! line (`features = ["run"]`, the path pointed at this checkout) and tokio as the section
//! says, and its `main` is the section's Rust example. `cargo check` must pass: the example
//! compiles against the public API alone, and the dependency line works.
//!
//! The project shares the target directory of `library::public_api` (the same crate and
//! features, checked there), and starts from this workspace's lock file, so no dependency is
//! checked twice.

use crate::support::common::{cargo, repo};

const SECTION: &str = "## Using evalhost as a library";

/// The body of the first fenced block of `language` in `text`.
fn fenced<'a>(text: &'a str, language: &str) -> &'a str {
    let open = format!("```{language}\n");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("a ```{language} block"))
        + open.len();
    let len = text[start..].find("```").expect("the block ends");
    &text[start..start + len]
}

/// The section's Rust example as a program: its `use` lines, then the rest inside a `main`
/// that returns errors with `?`.
fn program(example: &str) -> String {
    let (uses, body): (Vec<&str>, Vec<&str>) = example.lines().partition(|l| l.starts_with("use "));
    format!(
        "{}\n\nfn main() -> Result<(), Box<dyn std::error::Error>> {{\n{}\n    Ok(())\n}}\n",
        uses.join("\n"),
        body.join("\n")
    )
}

/// The section's dependency line for running suites, uncommented, with its path pointed at
/// this checkout's crate.
fn dependency(toml: &str) -> String {
    let line = toml
        .lines()
        .find(|l| l.contains("path = ") && l.contains("features = [\"run\"]"))
        .expect("a path dependency with features = [\"run\"]");
    let line = line.trim_start_matches('#').trim();
    let host = repo().join("host");
    let start = line.find("path = \"").expect("path") + "path = \"".len();
    let end = start + line[start..].find('"').expect("closing quote");
    format!("{}{}{}", &line[..start], host.display(), &line[end..])
}

/// `cargo check` of an outside project `name` whose `main.rs` is `main` (empty: the section's
/// example) and whose dependencies are the library section's. Each project has its own name:
/// cargo keys a package's artifacts by its name and its path within its workspace, so two
/// projects of one name in one target directory would share them.
fn check_outside_project(name: &str, main: &str) -> std::process::Output {
    let docs = std::fs::read_to_string(repo().join("docs/cli.md")).expect("docs/cli.md");
    let section = docs
        .split_once(SECTION)
        .map(|(_, rest)| rest)
        .expect("the library section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let project = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(project.path().join("src")).expect("src");
    std::fs::write(
        project.path().join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n\n\
             [dependencies]\n{}\ntokio = {{ version = \"1\", features = [\"rt-multi-thread\"] }}\n",
            dependency(fenced(section, "toml"))
        ),
    )
    .expect("Cargo.toml");
    let main = if main.is_empty() {
        program(fenced(section, "rust"))
    } else {
        main.to_owned()
    };
    std::fs::write(project.path().join("src/main.rs"), main).expect("main.rs");
    std::fs::copy(repo().join("Cargo.lock"), project.path().join("Cargo.lock")).expect("lock");
    let target = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is TARGET/tmp")
        .join("public-api");
    cargo()
        .current_dir(project.path())
        .args(["check", "--quiet", "--target-dir"])
        .arg(&target)
        .output()
        .expect("cargo check")
}

#[test]
fn the_library_section_compiles_in_an_outside_project() {
    let output = check_outside_project("embedder_docs", "");
    assert!(
        output.status.success(),
        "docs/cli.md's library example does not compile in an outside project:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn an_outside_project_cannot_reach_a_private_module() {
    // The control: the same project, reaching into the session log (private).
    let output = check_outside_project(
        "embedder_control",
        "use evalhost::session::SessionLog;\n\nfn main() {\n    let _ = std::mem::size_of::<SessionLog>();\n}\n",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "a private module was reachable");
    assert!(stderr.contains("module `session` is private"), "{stderr}");
}
