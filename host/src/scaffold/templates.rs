//! The template files of each language, compiled into the binary.

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
    /// C, built by clang (wasi-libc) and wasm-tools.
    C,
}

impl Lang {
    /// Every language.
    pub const ALL: [Lang; 4] = [Lang::Rust, Lang::Python, Lang::Js, Lang::C];

    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Js => "js",
            Lang::C => "c",
        }
    }
}

/// The example case every project gets.
const CASE: &str = include_str!("../../templates/example.yaml");

/// The judge variants (`--judge`): a grader asking the judge to score a rubric.
const JUDGE_CASE: &str = include_str!("../../templates/judge/example.yaml");
const JUDGE_README: &str = include_str!("../../templates/judge/README.md");

/// `(path in the project, template text)` for `lang`; with `judge`, the grader that asks
/// the judge, its example case, and a README section on recording judgments.
pub(crate) fn files(lang: Lang, judge: bool) -> Vec<(&'static str, String)> {
    let files = plain_files(lang);
    if !judge {
        return files.into_iter().map(|(p, t)| (p, t.to_owned())).collect();
    }
    files
        .into_iter()
        .map(|(path, text)| {
            let text = match path {
                "src/lib.rs" => include_str!("../../templates/judge/lib.rs").to_owned(),
                "app.py" => include_str!("../../templates/judge/app.py").to_owned(),
                "grader.js" => include_str!("../../templates/judge/grader.js").to_owned(),
                "cases/example.yaml" => JUDGE_CASE.to_owned(),
                "README.md" => format!("{text}{JUDGE_README}"),
                _ => text.to_owned(),
            };
            (path, text)
        })
        .collect()
}

fn plain_files(lang: Lang) -> Vec<(&'static str, &'static str)> {
    let mut files = match lang {
        Lang::Rust => vec![
            (
                "Cargo.toml",
                include_str!("../../templates/rust/Cargo.toml"),
            ),
            ("src/lib.rs", include_str!("../../templates/rust/lib.rs")),
            ("build.sh", include_str!("../../templates/rust/build.sh")),
            ("README.md", include_str!("../../templates/rust/README.md")),
            (".gitignore", include_str!("../../templates/rust/gitignore")),
        ],
        Lang::Python => vec![
            ("app.py", include_str!("../../templates/python/app.py")),
            ("build.sh", include_str!("../../templates/python/build.sh")),
            (
                "README.md",
                include_str!("../../templates/python/README.md"),
            ),
            (
                ".gitignore",
                include_str!("../../templates/python/gitignore"),
            ),
        ],
        Lang::Js => vec![
            ("grader.js", include_str!("../../templates/js/grader.js")),
            ("build.sh", include_str!("../../templates/js/build.sh")),
            ("README.md", include_str!("../../templates/js/README.md")),
            (".gitignore", include_str!("../../templates/js/gitignore")),
        ],
        Lang::C => vec![
            ("grader.c", include_str!("../../templates/c/grader.c")),
            ("build.sh", include_str!("../../templates/c/build.sh")),
            ("README.md", include_str!("../../templates/c/README.md")),
            (".gitignore", include_str!("../../templates/c/gitignore")),
        ],
    };
    files.push(("cases/example.yaml", CASE));
    files
}
