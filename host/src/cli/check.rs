//! `evalhost check`: validate cases, grader references and grader configs without running
//! anything (no model server, no agent).

use std::path::PathBuf;

use anyhow::{Context, anyhow};

use super::{Failure, exit};
use evalhost::case::{case_sources, load_cases_with};
use evalhost::grader::GraderHost;
use evalhost::runner::prepare_cases_with;

/// `evalhost check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Case files, AgentCompany fixtures (`*.jsonl`), Nexus case directories, or directories
    /// of them.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// Run `evalhost check`: every case file is loaded and every case's graders bound and
/// their configs checked, so one run reports every broken file rather than the first.
pub fn check(args: CheckArgs) -> Result<u8, Failure> {
    let host = GraderHost::with_builtins()
        .context("failed to load the built-in graders")
        .map_err(Failure::internal)?;
    let mut bundles = super::bundle::project_bundles()?;
    // Problems in load order: a file's parse error or its graders' errors, file by file.
    let mut errors: Vec<String> = Vec::new();
    let (mut total, mut entries) = (0, 0);
    for path in &args.paths {
        let sources = match case_sources(path) {
            Ok(sources) => sources,
            Err(e) => {
                errors.push(e.to_string());
                continue;
            }
        };
        for source in sources {
            let cases = match load_cases_with(&[source], &Default::default()) {
                Ok(cases) => cases,
                Err(e) => {
                    errors.push(e.to_string());
                    continue;
                }
            };
            for case in cases {
                total += 1;
                entries += case.graders.len();
                if let Err(e) = prepare_cases_with(vec![case], &host, &mut bundles) {
                    errors.push(e.to_string());
                }
            }
        }
    }
    if errors.is_empty() {
        // What only shows across files (a case name defined twice), with the loader's rule.
        if let Err(e) = load_cases_with(&args.paths, &Default::default()) {
            errors.push(e.to_string());
        }
    }
    if errors.is_empty() {
        println!("ok: {total} cases, {entries} grader entries");
        return Ok(exit::OK);
    }
    for error in &errors {
        eprintln!("{error}");
    }
    let problems = match errors.len() {
        1 => "1 problem".to_owned(),
        n => format!("{n} problems"),
    };
    Err(Failure::usage(anyhow!(
        "check failed: {problems} (each shown above with its file, line and field)"
    )))
}
