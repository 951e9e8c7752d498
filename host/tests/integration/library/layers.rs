//! The layer table of `ARCHITECTURE.md` ("## Layers") holds: every module of `host/src` is in
//! it, and no `crate::` path in code goes up a layer or sideways within one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const TABLE_HEADING: &str = "## Layers";

/// Module name → layer, from the table's rows `| N | `a`, `b` | what |`.
fn layer_table(architecture: &str) -> BTreeMap<String, u32> {
    let section = architecture
        .split_once(TABLE_HEADING)
        .map(|(_, rest)| rest)
        .expect("ARCHITECTURE.md has a `## Layers` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut layers = BTreeMap::new();
    for row in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(layer), Some(modules)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Ok(layer) = layer.parse::<u32>() else {
            continue;
        };
        for module in modules.split(',') {
            let module = module.trim().trim_matches('`');
            assert!(
                layers.insert(module.to_owned(), layer).is_none(),
                "`{module}` is in two rows of the layer table"
            );
        }
    }
    layers
}

/// Every `crate::NAME` in the code lines (comments skipped) of `text`, with its line number.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let preceded_by_ident = rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if !preceded_by_ident && !name.is_empty() {
                found.push((index + 1, name));
            }
        }
    }
    found
}

/// The problems of a source tree against a table: modules missing from it, and each use of a
/// module that is not in a lower layer, as `file:line: ...`.
fn violations(
    layers: &BTreeMap<String, u32>,
    modules: &[(String, Vec<(PathBuf, String)>)],
) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, files) in modules {
        let Some(&own) = layers.get(module) else {
            problems.push(format!(
                "module `{module}` is not in ARCHITECTURE.md's layer table"
            ));
            continue;
        };
        for (path, text) in files {
            for (line, used) in crate_paths(text) {
                if &used == module {
                    continue;
                }
                match layers.get(&used) {
                    Some(&layer) if layer < own => {}
                    Some(&layer) => problems.push(format!(
                        "{}:{line}: `{module}` (layer {own}) uses `crate::{used}` (layer {layer}): a module may use only lower layers",
                        path.display()
                    )),
                    None => problems.push(format!(
                        "{}:{line}: `crate::{used}` is not a module in the layer table",
                        path.display()
                    )),
                }
            }
        }
    }
    problems
}

fn rust_files(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read source dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("read source");
            out.push((path, text));
        }
    }
}

/// The library's top-level modules (`main.rs`, the binary, and `lib.rs` are not).
fn library_modules(src: &Path) -> Vec<(String, Vec<(PathBuf, String)>)> {
    let mut modules = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(src)
        .expect("read host/src")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_stem()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        if matches!(name.as_str(), "main" | "lib") {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push((path.clone(), std::fs::read_to_string(&path).expect("read")));
        } else {
            continue;
        }
        modules.push((name, files));
    }
    modules
}

#[test]
fn no_module_uses_a_module_of_its_own_or_a_higher_layer() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture =
        std::fs::read_to_string(manifest.join("../ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let layers = layer_table(&architecture);
    let modules = library_modules(&manifest.join("src"));
    assert!(modules.len() > 10, "found the library's modules");
    let problems = violations(&layers, &modules);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let listed: Vec<&String> = layers
        .keys()
        .filter(|m| !modules.iter().any(|(name, _)| name == *m))
        .collect();
    assert!(
        listed.is_empty(),
        "the layer table names modules that do not exist: {listed:?}"
    );
}

#[test]
fn an_upward_or_sideways_use_is_reported_with_its_line() {
    let layers = layer_table(
        "# x\n## Layers\n| layer | modules | what |\n|---|---|---|\n| 1 | `session`, `wire` | vocabulary |\n| 2 | `agent` | loop |\n## Next\n| 9 | `ignored` | x |\n",
    );
    assert_eq!(layers.len(), 3, "{layers:?}");
    let file = |text: &str| vec![(PathBuf::from("src/x.rs"), text.to_owned())];
    let modules = vec![
        (
            "session".to_owned(),
            file(
                "/// see [`crate::agent`]\nuse crate::agent::CallStatus;\nuse crate::wire::Sse;\n",
            ),
        ),
        (
            "agent".to_owned(),
            file("use crate::session::Event;\nfn f() { crate::agent::g() }\n"),
        ),
        ("report".to_owned(), file("")),
    ];
    assert_eq!(
        violations(&layers, &modules),
        [
            "src/x.rs:2: `session` (layer 1) uses `crate::agent` (layer 2): a module may use only lower layers",
            "src/x.rs:3: `session` (layer 1) uses `crate::wire` (layer 1): a module may use only lower layers",
            "module `report` is not in ARCHITECTURE.md's layer table",
        ]
    );
}
