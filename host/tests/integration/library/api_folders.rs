//! One folder per model API (`host/src/api/`, ARCHITECTURE.md "model APIs"): the files of an
//! API's folder use only their own folder, the shared leaves (`reply.rs`, `head.rs`,
//! `request.rs`, `streamed.rs`, `lenient.rs`, `provider/error.rs`, `provider/carry.rs`) and the Responses
//! wire types; the leaves use no API folder but the Responses wire types. So the dispatch over
//! `Api` (`serve.rs`, `provider/`) is the only code that names every API, adding an API touches
//! its folder, the enum and the dispatch, and there is no cycle among these files.

use std::path::{Path, PathBuf};

const APIS: [&str; 4] = ["responses", "chat", "anthropic", "gemini"];
const LEAVES: [&str; 7] = [
    "api::reply",
    "api::lenient",
    "api::head",
    "api::request",
    "api::streamed",
    "api::provider::error",
    "api::provider::carry",
];
const PIVOT: &str = "api::responses::wire";

fn api_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/api")
}

/// The `api::...` module paths a file names (`crate::api::x::y`, and `super::` resolved from
/// `module`, the file's own module path), each with its line, comments and the unit tests
/// (from `#[cfg(test)]` on) skipped.
fn api_paths(text: &str, module: &str) -> Vec<(usize, String)> {
    let parent = module.rsplit_once("::").map_or("", |(parent, _)| parent);
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") {
            continue;
        }
        for (prefix, base) in [("crate::api", "api"), ("super", parent)] {
            let mut rest = code;
            while let Some(at) = rest.find(prefix) {
                let after = &rest[at + prefix.len()..];
                let boundary = at == 0 || !rest.as_bytes()[at - 1].is_ascii_alphanumeric();
                rest = after;
                if !boundary {
                    continue;
                }
                let tail: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let tail = tail.trim_end_matches(':');
                let path = if tail.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}{tail}")
                };
                found.push((index + 1, path));
            }
        }
    }
    found
}

/// Whether `path` names `module` or something inside it.
fn within(path: &str, module: &str) -> bool {
    path == module || path.starts_with(&format!("{module}::"))
}

fn rust_files(dir: &Path, module: &str, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).expect("read host/src/api") {
        let path = entry.expect("entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            rust_files(&path, &format!("{module}::{name}"), out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let own = if name == "mod" {
                module.to_owned()
            } else {
                format!("{module}::{name}")
            };
            out.push((path, own));
        }
    }
}

/// The problems of one file, `module` its module path.
fn problems(text: &str, module: &str, file: &str) -> Vec<String> {
    let folder = APIS
        .iter()
        .map(|api| format!("api::{api}"))
        .find(|folder| within(module, folder));
    let leaf = LEAVES.iter().any(|leaf| within(module, leaf));
    let mut problems = Vec::new();
    for (line, path) in api_paths(text, module) {
        let allowed = if let Some(folder) = &folder {
            // `super` from an API folder's mod.rs is `api` itself.
            (within(&path, folder) && path != "api")
                || LEAVES.iter().any(|leaf| within(&path, leaf))
                || within(&path, PIVOT)
        } else if leaf {
            LEAVES.iter().any(|leaf| within(&path, leaf))
                || within(&path, PIVOT)
                || APIS
                    .iter()
                    .all(|api| !within(&path, &format!("api::{api}")))
                    && path != "api"
                    && !within(&path, "api::serve")
                    && path != "api::provider"
                    && !within(&path, "api::provider::stream")
        } else {
            continue;
        };
        if !allowed {
            problems.push(format!(
                "{file}:{line}: `{module}` uses `{path}`: an API's folder uses only itself, the shared leaves and the Responses wire types; a leaf uses no API folder"
            ));
        }
    }
    problems
}

#[test]
fn api_folders_use_only_themselves_the_leaves_and_the_pivot() {
    let mut files = Vec::new();
    rust_files(&api_dir(), "api", &mut files);
    assert!(
        files.len() >= 20,
        "found {} files in host/src/api",
        files.len()
    );
    let mut all = Vec::new();
    for (path, module) in &files {
        let text = std::fs::read_to_string(path).expect("read");
        let file = path.strip_prefix(api_dir()).unwrap().display().to_string();
        all.extend(problems(&text, module, &file));
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

#[test]
fn a_folder_that_reaches_into_the_dispatch_or_another_api_is_named() {
    let text = "use crate::api::serve::encode;\nuse super::wire::Part;\nuse crate::api::chat::client::tools;\n// crate::api::serve in a comment\nuse crate::api::reply::Reply;\n";
    let found = problems(text, "api::gemini::server", "gemini/server.rs");
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].starts_with("gemini/server.rs:1: `api::gemini::server` uses `api::serve::encode`")
    );
    assert!(found[1].contains(":3:") && found[1].contains("api::chat::client::tools"));
    let leaf = problems(
        "use crate::api::gemini::wire::Part;\n",
        "api::reply",
        "reply.rs",
    );
    assert_eq!(leaf.len(), 1, "{leaf:#?}");
    let from_mod = problems("use super::Reply;\n", "api::gemini", "gemini/mod.rs");
    assert_eq!(from_mod.len(), 1, "{from_mod:#?}");
}
