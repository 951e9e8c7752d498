//! The one list of built-in graders, `register_graders!`'s (read natively as
//! `Registered::NAMES`), is the list the documentation and the case-file schema give: a grader
//! registered but undocumented, left out of `schema/case.schema.json`, or a README count that
//! drifts fails here, naming what to fix.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use evalhost_builtin_graders::Registered;

fn repo_file(path: &str) -> (PathBuf, String) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("graders/builtin sits two levels below the repository root");
    let full = repo.join(path);
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()));
    (full, text)
}

fn registered() -> BTreeSet<&'static str> {
    let names: BTreeSet<&str> = Registered::NAMES.iter().copied().collect();
    assert_eq!(
        names.len(),
        Registered::NAMES.len(),
        "a name is registered twice: {:?}",
        Registered::NAMES
    );
    names
}

/// The number in the README's first paragraph: "providing N graders".
fn readme_count(readme: &str) -> Option<usize> {
    let after = readme.split_once("providing ")?.1;
    let (number, rest) = after.split_once(' ')?;
    rest.starts_with("graders").then(|| number.parse().ok())?
}

#[test]
fn the_readme_states_the_registered_count() {
    let (path, readme) = repo_file("graders/builtin/README.md");
    assert_eq!(
        readme_count(&readme),
        Some(Registered::NAMES.len()),
        "{}: its first paragraph must say \"providing {} graders\" (register_graders! in \
         graders/builtin/src/lib.rs lists {})",
        path.display(),
        Registered::NAMES.len(),
        Registered::NAMES.len(),
    );
}

#[test]
fn the_readme_documents_every_registered_grader_and_no_other() {
    let (path, readme) = repo_file("graders/builtin/README.md");
    let registered = registered();
    let undocumented: Vec<&str> = registered
        .iter()
        .copied()
        .filter(|name| !readme.contains(&format!("`{name}`")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "{}: registered graders not documented (each needs a row, or a mention as `name`): {undocumented:?}",
        path.display()
    );
    // The first cell of a table row that is one bare name, `name`, names a grader.
    let documented: BTreeSet<&str> = readme
        .lines()
        .filter_map(|line| line.strip_prefix("| `")?.split_once("` |"))
        .map(|(cell, _)| cell)
        .filter(|cell| cell.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect();
    let unknown: Vec<&&str> = documented.difference(&registered).collect();
    assert!(
        unknown.is_empty(),
        "{}: rows for graders that are not registered: {unknown:?}",
        path.display()
    );
}

#[test]
fn the_case_schema_has_every_registered_grader() {
    let (path, text) = repo_file("schema/case.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    let properties = schema
        .pointer("/$defs/GraderEntry/properties")
        .and_then(serde_json::Value::as_object)
        .unwrap_or_else(|| panic!("{}: no $defs.GraderEntry.properties", path.display()));
    let in_schema: BTreeSet<&str> = properties
        .keys()
        .map(String::as_str)
        .filter(|key| *key != "judge")
        .collect();
    assert_eq!(
        in_schema,
        registered(),
        "{}: its graders differ from the registered ones; regenerate it with \
         `cargo run -p evalhost -- schema case > schema/case.schema.json`",
        path.display()
    );
}

#[test]
fn the_count_is_read_from_the_readme_s_sentence() {
    assert_eq!(
        readme_count("One component providing 7 graders (`x`)"),
        Some(7)
    );
    assert_eq!(readme_count("providing many graders"), None);
    assert_eq!(readme_count("providing 7 things"), None);
}
