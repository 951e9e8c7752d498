//! `evalhost list`: the cases a suite holds, without running anything.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::{Failure, exit};
use crate::case::{Case, load_cases_with};
use crate::report::render_table;

/// `evalhost list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Case files, AgentCompany fixtures (`*.jsonl`), Nexus case directories, Harbor task
    /// directories (`task.toml`), or directories of them (searched recursively).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Print a JSON array, one object per case (name, path, format, description, runs,
    /// live, tags, graders with their configs).
    #[arg(long)]
    pub json: bool,
}

/// Run `evalhost list`.
pub fn list(args: ListArgs) -> Result<u8, Failure> {
    let cases = load_cases_with(&args.paths, &Default::default())
        .map_err(|e| Failure::usage(super::problems::error(e)))?;
    let out = if args.json {
        let cases: Vec<serde_json::Value> = cases.iter().map(case_json).collect();
        let mut text = serde_json::to_string_pretty(&cases).map_err(Failure::internal)?;
        text.push('\n');
        text
    } else {
        table(&cases)
    };
    // A closed stdout (`| head`) is not an error worth a panic.
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(exit::OK)
}

/// One row per case, then a count.
fn table(cases: &[Case]) -> String {
    let mut rows = vec![
        ["CASE", "FORMAT", "RUNS", "TAGS", "GRADERS"]
            .map(String::from)
            .to_vec(),
    ];
    for case in cases {
        rows.push(vec![
            case.name.clone(),
            format(&case.path).to_owned(),
            case.runs.map_or_else(|| "-".to_owned(), |n| n.to_string()),
            if case.tags.is_empty() {
                "-".to_owned()
            } else {
                case.tags.join(",")
            },
            grader_names(case).join(", "),
        ]);
    }
    let entries: usize = cases.iter().map(|c| c.graders.len()).sum();
    format!(
        "{}{} cases, {entries} grader entries\n",
        render_table(&rows),
        cases.len()
    )
}

fn case_json(case: &Case) -> serde_json::Value {
    let graders: Vec<serde_json::Value> = case
        .graders
        .iter()
        .map(|g| json!({ "name": g.name, "config": g.config }))
        .collect();
    json!({
        "name": case.name,
        "path": case.path.display().to_string(),
        "format": format(&case.path),
        "description": case.description,
        "runs": case.runs,
        "live": case.live,
        "tags": case.tags,
        "graders": graders,
    })
}

/// The case source format, from what was loaded: a Harbor task is a directory holding
/// `task.toml`, a Nexus case another directory, an AgentCompany fixture a `.jsonl` file,
/// anything else a YAML case file.
fn format(path: &Path) -> &'static str {
    if crate::case::harbor::is_task_dir(path) {
        "harbor"
    } else if path.is_dir() {
        "nexus"
    } else if crate::case::agentcompany::is_fixture(path) {
        "agentcompany"
    } else {
        "yaml"
    }
}

/// The graders a case uses, each named once, in the order first used.
fn grader_names(case: &Case) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for grader in &case.graders {
        if !names.contains(&&*grader.name) {
            names.push(&grader.name);
        }
    }
    names
}
