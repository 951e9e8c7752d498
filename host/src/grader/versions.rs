//! The versions of the grader world this host loads and what each added: the one table
//! that `evalhost grader check` (what a component misses against the newest) and the
//! compatibility table of `docs/writing-graders.md` are made from. A unit test holds the
//! table to the `wit/since_vX.Y.Z` folders (a folder without a row, or a row whose exports
//! and imports differ from the folder's world, fails) and to the docs (the rendered table
//! must be in the guide).
//!
//! evalhost has had no release yet: every version appeared while evalhost was 0.1.0, so
//! each row also names the commit that added it (a build from that commit on loads it).

use std::fmt;

/// One released version of the `evalhost:grader` world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WitVersion {
    /// The WIT package version, e.g. `0.5.0` (its frozen copy is `wit/since_v0.5.0/`).
    pub version: &'static str,
    /// The first evalhost version that loads it.
    pub since_evalhost: &'static str,
    /// The commit that added its `wit/since_vX.Y.Z` folder (short hash).
    pub since_commit: &'static str,
    /// That commit's date, `YYYY-MM-DD`.
    pub since_date: &'static str,
    /// What it added to the version before.
    pub added: &'static [Addition],
}

/// One thing a version of the world added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Addition {
    /// An export, an import, or documentation only.
    pub kind: AdditionKind,
    /// The world's items it added, as the WIT names them (e.g. `begin-run`); empty for
    /// documentation.
    pub items: &'static [&'static str],
    /// What a grader gets from it, in a phrase.
    pub what: &'static str,
}

/// What kind of thing a version added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdditionKind {
    /// Functions the component exports (the host calls them).
    Export,
    /// Interfaces the component may import (the host answers them).
    Import,
    /// No function or type: the contract's documentation only.
    Documentation,
}

/// Every version of the grader world this host loads, oldest first.
pub const WIT_VERSIONS: &[WitVersion] = &[
    WitVersion {
        version: "0.1.0",
        since_evalhost: "0.1.0",
        since_commit: "9a71f38",
        since_date: "2026-11-29",
        added: &[Addition {
            kind: AdditionKind::Export,
            items: &["list-graders", "check-config", "grade"],
            what: "the graders a component provides, each config checked before any run, \
                   each run graded with its evidence (pass, fail, error or not evaluable)",
        }],
    },
    WitVersion {
        version: "0.2.0",
        since_evalhost: "0.1.0",
        since_commit: "9888e9a",
        since_date: "2026-11-29",
        added: &[Addition {
            kind: AdditionKind::Export,
            items: &["describe"],
            what: "one line saying what a grader checks with a config, shown by \
                   `evalhost grader test`",
        }],
    },
    WitVersion {
        version: "0.3.0",
        since_evalhost: "0.1.0",
        since_commit: "e711e3c",
        since_date: "2026-12-01",
        added: &[Addition {
            kind: AdditionKind::Import,
            items: &["judge"],
            what: "ask a model one question, answered from recorded judgments unless the \
                   run records or asks live (graders granted `judge` only)",
        }],
    },
    WitVersion {
        version: "0.4.0",
        since_evalhost: "0.1.0",
        since_commit: "fae3a39",
        since_date: "2026-12-01",
        added: &[Addition {
            kind: AdditionKind::Documentation,
            items: &[],
            what: "no function or type: documents what the host sends every version (Nexus \
                   event kinds and payloads, what `usage` counts, the `recorded` mode, a \
                   verdict's message on a pass)",
        }],
    },
    WitVersion {
        version: "0.5.0",
        since_evalhost: "0.1.0",
        since_commit: "24931fb",
        since_date: "2026-12-01",
        added: &[Addition {
            kind: AdditionKind::Export,
            items: &["begin-run", "grade-in-run"],
            what: "the run's evidence handed to an instance once, not with every grading \
                   call (cheaper calls when a run has several entries)",
        }],
    },
];

/// [`WIT_VERSIONS`]' version numbers, oldest first.
pub const WORLD_VERSIONS: &[&str] = &version_numbers();

const fn version_numbers() -> [&'static str; WIT_VERSIONS.len()] {
    let mut out = [""; WIT_VERSIONS.len()];
    let mut i = 0;
    while i < WIT_VERSIONS.len() {
        out[i] = WIT_VERSIONS[i].version;
        i += 1;
    }
    out
}

/// The newest version of the grader world this host loads.
pub const NEWEST_WORLD_VERSION: &str = WIT_VERSIONS[WIT_VERSIONS.len() - 1].version;

/// One thing a component of an older version lacks against the newest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Missing {
    /// The version that added it.
    pub version: &'static str,
    /// What it added.
    #[serde(flatten)]
    pub addition: Addition,
}

/// What a component targeting `version` lacks against [`NEWEST_WORLD_VERSION`]: every
/// export and import the later versions added, oldest first. Documentation-only versions
/// add nothing a component can lack (the host sends every version the same evidence).
/// Empty for the newest version, and for a version this host does not know.
pub fn missing_against_newest(version: &str) -> Vec<Missing> {
    let Some(at) = WIT_VERSIONS.iter().position(|v| v.version == version) else {
        return Vec::new();
    };
    WIT_VERSIONS[at + 1..]
        .iter()
        .flat_map(|later| {
            later.added.iter().map(|addition| Missing {
                version: later.version,
                addition: *addition,
            })
        })
        .filter(|missing| missing.addition.kind != AdditionKind::Documentation)
        .collect()
}

impl fmt::Display for Addition {
    /// E.g. ``exports `begin-run`, `grade-in-run`: the run's evidence ...``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match (self.kind, self.items.len()) {
            (AdditionKind::Documentation, _) => return f.write_str(self.what),
            (AdditionKind::Export, 1) => "export",
            (AdditionKind::Export, _) => "exports",
            (AdditionKind::Import, 1) => "import",
            (AdditionKind::Import, _) => "imports",
        };
        let items: Vec<String> = self.items.iter().map(|item| format!("`{item}`")).collect();
        write!(f, "{kind} {}: {}", items.join(", "), self.what)
    }
}

impl fmt::Display for Missing {
    /// E.g. ``0.2.0 export `describe`: one line ...``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.version, self.addition)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    /// The compatibility table of `docs/writing-graders.md`, as Markdown: each version, the
    /// evalhost builds that load it, what it added.
    fn markdown_table() -> String {
        let mut table =
            String::from("| WIT version | loaded by | what it added |\n|---|---|---|\n");
        for row in WIT_VERSIONS {
            let added: Vec<String> = row.added.iter().map(Addition::to_string).collect();
            table.push_str(&format!(
                "| [`{v}`](../wit/since_v{v}/grader.wit) | evalhost ≥ {e}, from commit `{c}` ({d}) | {a} |\n",
                v = row.version,
                e = row.since_evalhost,
                c = row.since_commit,
                d = row.since_date,
                a = added.join("; "),
            ));
        }
        table
    }

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("host/ has a parent")
            .to_owned()
    }

    /// The `export NAME:` and `import NAME;` items of a WIT file's `world grader` block.
    fn world_items(wit: &str) -> BTreeSet<(AdditionKind, String)> {
        let world = wit
            .split_once("world grader {")
            .map(|(_, rest)| rest)
            .expect("the WIT has `world grader {`");
        let mut items = BTreeSet::new();
        for line in world.lines().map(str::trim) {
            if line == "}" {
                break;
            }
            let item = |rest: &str, end: char| rest.split(end).next().unwrap().trim().to_owned();
            if let Some(rest) = line.strip_prefix("export ") {
                items.insert((AdditionKind::Export, item(rest, ':')));
            } else if let Some(rest) = line.strip_prefix("import ") {
                items.insert((AdditionKind::Import, item(rest, ';')));
            }
        }
        items
    }

    #[test]
    fn every_wit_folder_has_a_row_and_every_row_a_folder() {
        let mut folders: Vec<String> = std::fs::read_dir(repo().join("wit"))
            .expect("wit/ is readable")
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|name| name.strip_prefix("since_v").map(str::to_owned))
            .collect();
        folders.sort_by_key(|v| {
            v.split('.')
                .map(|n| n.parse::<u32>().unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(
            folders, WORLD_VERSIONS,
            "wit/since_vX.Y.Z folders against WIT_VERSIONS (host/src/grader/versions.rs): \
             give each folder a row, oldest first"
        );
        assert_eq!(NEWEST_WORLD_VERSION, *folders.last().unwrap());
    }

    #[test]
    fn each_row_adds_what_its_wit_adds_to_the_one_before() {
        let mut before = BTreeSet::new();
        for row in WIT_VERSIONS {
            let path = repo().join(format!("wit/since_v{}/grader.wit", row.version));
            let wit = std::fs::read_to_string(&path).unwrap();
            assert!(
                wit.contains(&format!("package evalhost:grader@{};", row.version)),
                "{}",
                path.display()
            );
            let now = world_items(&wit);
            let added_in_wit: BTreeSet<_> = now.difference(&before).cloned().collect();
            assert!(
                before.is_subset(&now),
                "{} removes {:?}",
                row.version,
                before.difference(&now).collect::<Vec<_>>()
            );
            let added_in_row: BTreeSet<_> = row
                .added
                .iter()
                .flat_map(|a| a.items.iter().map(|i| (a.kind, (*i).to_owned())))
                .collect();
            assert_eq!(
                added_in_row,
                added_in_wit,
                "{}: the row's exports and imports against {}",
                row.version,
                path.display()
            );
            let documentation_only = row
                .added
                .iter()
                .all(|a| a.kind == AdditionKind::Documentation);
            assert_eq!(
                documentation_only,
                added_in_wit.is_empty(),
                "{}",
                row.version
            );
            assert!(!row.added.is_empty(), "{}", row.version);
            before = now;
        }
    }

    #[test]
    fn every_row_is_loaded_by_this_evalhost() {
        let number = |v: &str| -> Vec<u32> { v.split('.').map(|n| n.parse().unwrap()).collect() };
        for row in WIT_VERSIONS {
            assert!(
                number(row.since_evalhost) <= number(env!("CARGO_PKG_VERSION")),
                "{} claims evalhost {}",
                row.version,
                row.since_evalhost
            );
        }
    }

    #[test]
    fn the_guide_has_the_table() {
        let path = repo().join("docs/writing-graders.md");
        let guide = std::fs::read_to_string(&path).unwrap();
        let table = markdown_table();
        assert!(
            guide.contains(&table),
            "{} lacks the compatibility table; put this in its Compatibility section:\n{table}",
            path.display()
        );
    }

    #[test]
    fn an_old_component_misses_the_later_exports_and_imports() {
        let missing: Vec<String> = missing_against_newest("0.1.0")
            .iter()
            .map(Missing::to_string)
            .collect();
        assert_eq!(missing.len(), 3, "{missing:?}");
        assert!(
            missing[0].starts_with("0.2.0 export `describe`: "),
            "{missing:?}"
        );
        assert!(
            missing[1].starts_with("0.3.0 import `judge`: "),
            "{missing:?}"
        );
        assert!(
            missing[2].starts_with("0.5.0 exports `begin-run`, `grade-in-run`: "),
            "{missing:?}"
        );
        // 0.4.0 only documented what every version gets: nothing to lack.
        assert_eq!(missing_against_newest("0.3.0").len(), 1);
        assert!(missing_against_newest(NEWEST_WORLD_VERSION).is_empty());
        assert!(missing_against_newest("9.9.9").is_empty());
    }
}
