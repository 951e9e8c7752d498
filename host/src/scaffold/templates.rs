//! The template files of each language, compiled into the binary.
//!
//! One template per file of a project, whatever its variant: the grader that asks the judge
//! (`--judge`) is a section of the same text as the plain one (`sections.rs`). The README
//! and the example case are shared by every language, with a section per language where
//! they differ.

/// A language `evalhost grader new` scaffolds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Lang {
    /// Rust with the evalhost-sdk crate, built by cargo.
    Rust,
    /// Python, built by componentize-py.
    Python,
    /// JavaScript, built by componentize-js.
    Js,
    /// C, built by clang (wasi-libc), wit-bindgen and wasm-tools.
    C,
}

impl Lang {
    /// Every language.
    #[cfg(test)]
    pub const ALL: [Lang; 4] = [Lang::Rust, Lang::Python, Lang::Js, Lang::C];

    /// The name used on the command line, and the flag of the language's template sections.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Js => "js",
            Lang::C => "c",
        }
    }
}

/// The README every project gets.
const README: &str = include_str!("../../templates/README.md");

/// The example case every project gets.
const CASE: &str = include_str!("../../templates/example.yaml");

/// `(path in the project, template)` of every file of a `lang` project but the WIT copy.
pub(crate) fn files(lang: Lang) -> Vec<(&'static str, &'static str)> {
    let mut files = match lang {
        Lang::Rust => vec![
            (
                "Cargo.toml",
                include_str!("../../templates/rust/Cargo.toml"),
            ),
            ("src/lib.rs", include_str!("../../templates/rust/lib.rs")),
            ("build.sh", include_str!("../../templates/rust/build.sh")),
            (".gitignore", include_str!("../../templates/rust/gitignore")),
        ],
        Lang::Python => vec![
            ("app.py", include_str!("../../templates/python/app.py")),
            ("build.sh", include_str!("../../templates/python/build.sh")),
            (
                ".gitignore",
                include_str!("../../templates/python/gitignore"),
            ),
        ],
        Lang::Js => vec![
            ("grader.js", include_str!("../../templates/js/grader.js")),
            ("build.sh", include_str!("../../templates/js/build.sh")),
            (".gitignore", include_str!("../../templates/js/gitignore")),
        ],
        Lang::C => vec![
            ("grader.c", include_str!("../../templates/c/grader.c")),
            ("json.c", include_str!("../../templates/c/json.c")),
            ("json.h", include_str!("../../templates/c/json.h")),
            ("text.c", include_str!("../../templates/c/text.c")),
            ("text.h", include_str!("../../templates/c/text.h")),
            ("build.sh", include_str!("../../templates/c/build.sh")),
            (".gitignore", include_str!("../../templates/c/gitignore")),
        ],
    };
    files.push(("README.md", README));
    files.push(("cases/example.yaml", CASE));
    files
}
