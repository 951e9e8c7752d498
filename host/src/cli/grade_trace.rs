//! `evalhost grade --trace FILE... CASE`: runs made elsewhere, read from their traces, graded
//! with the case's graders (docs/traces.md).

use anyhow::Context;

use super::Failure;
use super::grade::GradeArgs;
use crate::case::{LoadOptions, load_cases_with};
use crate::grader::GraderHost;
use crate::runner::prepare_cases_with;

pub fn grade_traces(args: GradeArgs) -> Result<u8, Failure> {
    let mut cases = load_cases_with(&args.paths, &LoadOptions::default())
        .map_err(|e| Failure::usage(super::problems::error(e)))?;
    if cases.len() != 1 {
        let names: Vec<String> = cases.iter().map(|c| format!("`{}`", c.name)).collect();
        return Err(Failure::usage(anyhow::anyhow!(
            "--trace grades the traces' runs as runs of one case, and {} hold {}{} (name one case file)",
            args.paths
                .iter()
                .map(|p| format!("`{}`", p.display()))
                .collect::<Vec<_>>()
                .join(", "),
            cases.len(),
            if names.is_empty() {
                " cases".to_owned()
            } else {
                format!(" cases: {}", names.join(", "))
            }
        )));
    }
    let traces = args
        .trace
        .iter()
        .map(|path| crate::trace::import(path))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::usage)?;
    let host = GraderHost::with_builtins()
        .context("failed to load the built-in graders")
        .map_err(Failure::internal)?;
    let prepared = prepare_cases_with(
        vec![cases.remove(0)],
        &host,
        &mut super::bundle::project_bundles()?,
    )
    .map_err(|e| Failure::usage(super::problems::error(e)))?
    .remove(0);
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(2, |n| n.get()),
        |j| j as usize,
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
        .map_err(Failure::internal)?;
    let judge = args.judge.judge(runtime.handle())?;
    let mut report = runtime.block_on(crate::runner::grade_traces(
        &traces,
        prepared,
        jobs,
        judge,
        args.strict,
    ));
    let history = args.history.location()?;
    let recorded = super::grade::record_graded(&history, &mut report, None);
    println!(
        "Graded {} from {} (no agent or model ran).",
        plural(report.summary.runs as usize, "run"),
        plural(traces.len(), "trace"),
    );
    for trace in &traces {
        println!(
            "{} ({}): {}",
            trace.path.display(),
            trace.format,
            plural(trace.runs.len(), "run")
        );
        for note in &trace.unmapped {
            println!("  not mapped: {note}");
        }
    }
    super::grade::finish(&report, args.out.as_deref(), recorded)
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
