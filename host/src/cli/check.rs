//! `evalhost check`: validate cases, grader references and grader configs without running
//! anything (no model server, no agent).

use std::path::PathBuf;

use anyhow::{Context, anyhow};

use super::{Failure, exit};
use evalhost::case::{case_sources, load_each_source};
use evalhost::grader::GraderHost;
use evalhost::runner::prepare_each;

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
    // Problems in load order: a file's parse error (or a case name an earlier file defined)
    // or its graders' errors, file by file.
    // One slot per source file or case; a case's slot is filled once its graders are bound.
    let mut slots: Vec<Option<String>> = Vec::new();
    let mut cases = Vec::new();
    let listed: Vec<_> = args.paths.iter().map(|path| case_sources(path)).collect();
    let sources: Vec<PathBuf> = listed.iter().flatten().flatten().cloned().collect();
    let mut loaded = load_each_source(&sources, &Default::default()).into_iter();
    for path_sources in listed {
        let count = match path_sources {
            Ok(sources) => sources.len(),
            Err(e) => {
                slots.push(Some(e.to_string()));
                continue;
            }
        };
        for result in loaded.by_ref().take(count) {
            match result {
                Ok(case) => {
                    cases.push((slots.len(), case));
                    slots.push(None);
                }
                Err(e) => slots.push(Some(e.to_string())),
            }
        }
    }
    let total = cases.len();
    let entries: usize = cases.iter().map(|(_, c)| c.graders.len()).sum();
    let (case_slots, cases): (Vec<usize>, Vec<_>) = cases.into_iter().unzip();
    // Every case bound on its own, each component named by path loaded once.
    for (slot, prepared) in case_slots
        .into_iter()
        .zip(prepare_each(cases, &host, &mut bundles))
    {
        if let Err(e) = prepared {
            slots[slot] = Some(e.to_string());
        }
    }
    let errors: Vec<String> = slots.into_iter().flatten().collect();
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
