//! `evalhost check`: validate cases, grader references and grader configs without running
//! anything (no model server, no agent).

use std::path::PathBuf;

use anyhow::{Context, anyhow};

use super::{Failure, exit, problems};
use crate::case::load_each;
use crate::grader::GraderHost;
use crate::runner::prepare_loaded;

/// `evalhost check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Case files, AgentCompany fixtures (`*.jsonl`), Nexus case directories, Harbor task
    /// directories (`task.toml`), or directories of them (searched recursively).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// Run `evalhost check`: every case file is loaded and every case's graders bound and
/// their configs checked, so one run reports every problem of every file rather than the
/// first.
pub fn check(args: CheckArgs) -> Result<u8, Failure> {
    let host = GraderHost::with_builtins()
        .context("failed to load the built-in graders")
        .map_err(Failure::internal)?;
    let mut bundles = super::bundle::project_bundles()?;
    let loaded = load_each(&args.paths, &Default::default());
    let cases = loaded.iter().flatten();
    let total = cases.clone().count();
    let entries: usize = cases.map(|c| c.graders.len()).sum();
    // Problems in load order: a file's own, then its graders', file by file.
    let problems: Vec<_> = prepare_loaded(loaded, &host, &mut bundles)
        .into_iter()
        .filter_map(Result::err)
        .flat_map(|problem| problem.into_problems())
        .collect();
    if problems.is_empty() {
        println!("ok: {total} cases, {entries} grader entries");
        return Ok(exit::OK);
    }
    problems::print(&problems);
    Err(Failure::usage(anyhow!(
        "check failed: {} (each shown above with its file, line and field)",
        problems::count(problems.len())
    )))
}
