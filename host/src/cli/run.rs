//! `evalhost run` and `evalhost graders`.

use anyhow::Context;

use super::args::RunArgs;
use super::{Failure, exit};
use crate::cli::exit::EVAL_FAILED;
use evalhost::case::agentcompany::FixtureOptions;
use evalhost::case::{LoadOptions, load_cases_with};
use evalhost::grader::GraderHost;
use evalhost::report::render_text;
use evalhost::runner::{RunOptions, prepare_cases, run_suite};

pub fn run(args: RunArgs) -> Result<u8, Failure> {
    let options = LoadOptions {
        fixtures: FixtureOptions {
            expected_agent_core_version: args.expect_agent_core_version.clone(),
        },
    };
    let mut cases = load_cases_with(&args.paths, &options).map_err(Failure::usage)?;
    if let Some(filter) = &args.filter {
        cases.retain(|c| c.name.contains(filter.as_str()));
        if cases.is_empty() {
            return Err(Failure::usage(anyhow::anyhow!(
                "no case name contains `{filter}` (--filter)"
            )));
        }
    }
    if !args.tags.is_empty() {
        cases.retain(|c| args.tags.iter().all(|t| c.tags.contains(t)));
        if cases.is_empty() {
            return Err(Failure::usage(anyhow::anyhow!(
                "no case has all the tags {} (--tags)",
                args.tags.join(",")
            )));
        }
    }
    for case in &cases {
        case.check_replayable().map_err(Failure::usage)?;
    }
    let host = GraderHost::with_builtins()
        .context("failed to load the built-in graders")
        .map_err(Failure::internal)?;
    let prepared = prepare_cases(cases, &host).map_err(Failure::usage)?;
    let mut options = RunOptions {
        runs: args.runs,
        out: args.out,
        ..RunOptions::default()
    };
    if let Some(jobs) = args.jobs {
        options.jobs = jobs as usize;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
        .map_err(Failure::internal)?;
    let report = runtime
        .block_on(run_suite(prepared, &options))
        .map_err(Failure::internal)?;
    print!("{}", render_text(&report));
    let failed = report.failed_cases();
    if failed == 0 {
        Ok(exit::OK)
    } else {
        eprintln!(
            "Error: Eval failed: {failed} of {} cases did not pass every run",
            report.cases.len()
        );
        Ok(EVAL_FAILED)
    }
}

pub fn list_graders() -> Result<u8, Failure> {
    let host = GraderHost::with_builtins()
        .context("failed to load the built-in graders")
        .map_err(Failure::internal)?;
    for (info, component) in host.graders() {
        println!(
            "{:<24} {:<8} {:<10} {}",
            info.name,
            info.version,
            component.origin(),
            info.summary
        );
    }
    Ok(exit::OK)
}
