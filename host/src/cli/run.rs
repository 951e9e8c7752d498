//! `evalhost run`.

use std::sync::Arc;

use anyhow::Context;

use super::args::{AgentChoice, RunArgs};
use super::{Failure, exit, problems};
use crate::cli::exit::EVAL_FAILED;
use crate::suite::{AgentOverride, Suite, SuiteError};

pub fn run(args: RunArgs, ui: &super::ui::Ui) -> Result<u8, Failure> {
    super::report_files::refuse_own_dirs([
        ("--out", args.out.as_deref()),
        ("--junit", args.junit.as_deref()),
        ("--html", args.html.as_deref()),
        ("--otel-file", args.otel.otel_file.as_deref()),
    ])?;
    let confine = confine_policy(&args)?;
    let pi_agent = super::pi_agent::find(args.agent, args.expect_agent_core_version.as_deref())?;
    let mut suite = Suite::new(args.paths.iter().cloned()).options(|options| {
        options.out = args.out.clone();
        options.timeout_secs = args.timeout;
        options.k = args.k;
        options.confine = confine;
        options.images = std::sync::Arc::new(crate::environment::Images::new(args.locked_images));
    });
    if args.strict {
        suite = suite.strict();
    }
    if let Some(filter) = &args.filter {
        suite = suite.filter(filter);
    }
    if !args.tags.is_empty() {
        suite = suite.tags(args.tags.iter().cloned());
    }
    if let Some(partition) = &args.partition {
        suite = suite.partition(*partition);
    }
    if let Some(version) = &args.expect_agent_core_version {
        suite = suite.expect_agent_core_version(version);
    }
    if let Some(adapter) = pi_agent {
        suite = suite.agent(AgentOverride::PiAgentCore(adapter));
    } else if let Some(command) = &args.agent_cmd {
        suite = suite.agent(AgentOverride::Command(command.clone()));
    } else if let Some(AgentChoice::Preset(preset)) = args.agent {
        suite = suite.agent(AgentOverride::Preset(preset));
    } else if let Some(AgentChoice::Oracle) = args.agent {
        suite = suite.agent(AgentOverride::Oracle);
    }
    if let Some(value) = &args.environment {
        let environment = crate::case::environment_arg(value).map_err(|error| match error {
            crate::case::EnvironmentArgError::File(problems) => {
                Failure::usage(problems::error(problems))
            }
            other => Failure::usage(other),
        })?;
        suite = suite.environment(environment);
    }
    if args.live {
        suite = suite.live_from_config();
    }
    if let Some(usd) = args.max_cost {
        suite = suite.max_cost(usd);
    }
    if let Some(runs) = args.runs {
        suite = suite.runs(runs);
    }
    if let Some(jobs) = args.jobs {
        suite = suite.jobs(jobs as usize);
    }
    let mut plan = suite
        .bundles(super::bundle::project_bundles()?)
        .plan()
        .map_err(failure)?;
    for note in &plan.notes {
        println!("{note}");
    }
    let progress = ui
        .progress
        .then(|| Arc::new(super::progress::RunProgress::new(ui.color_stderr)));
    if let Some(progress) = &progress {
        plan.options.progress = Some(progress.clone());
    }
    let details = args
        .html
        .is_some()
        .then(|| Arc::new(crate::report::RunDetails::new()));
    plan.options.details = details.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
        .map_err(Failure::internal)?;
    plan.options.judge = args.judge.judge(runtime.handle())?;
    let history = args.history.location()?;
    let project = std::env::current_dir()
        .context("the current directory")
        .map_err(Failure::internal)?;
    plan.options.provenance = plan.options.provenance_now(&project);
    if let Some(spec) = &args.resume {
        plan.options.resume = Some(super::history::resumable(&history, spec)?);
    }
    let recorder = super::history::start_recording(&history, plan.options.recorded_run("run"), ui);
    plan.options.history = recorder.clone();
    let exporter = args.otel.exporter(runtime.handle())?;
    plan.options.telemetry = exporter.clone();
    let report = runtime.block_on(async {
        super::signals::cancel_on_signal(plan.options.cancel.clone());
        plan.run().await.map_err(Failure::internal)
    });
    let exported = exporter.map(|exporter| runtime.block_on(exporter.finish()));
    if let Some(progress) = &progress {
        progress.finish();
    }
    let report = report?;
    let recorded = super::history::finish_recording(recorder, &report, ui);
    let details = details.unwrap_or_default();
    // The table first: a bad --junit/--html path must not hide the suite's results.
    super::report_files::print_text(&report, ui.color_stdout)?;
    super::report_files::write(
        args.junit.as_deref(),
        args.html.as_deref(),
        &report,
        &details,
    )?;
    if let Some(recorded) = recorded {
        println!("{recorded}");
    }
    if let Some(exported) = exported {
        super::otel::print_summary(&exported, ui);
    }
    if report.interrupted && report.budget.is_some_and(|b| b.exhausted) {
        eprintln!(
            "{} Stopped by --max-cost: the budget was spent, {} runs not made; the report covers the runs that finished",
            ui.error_prefix(),
            report.cancelled.len()
        );
        return Ok(exit::INTERRUPTED);
    }
    if report.interrupted {
        eprintln!(
            "{} Interrupted: {} runs cancelled; the report covers the runs that finished",
            ui.error_prefix(),
            report.cancelled.len()
        );
        return Ok(exit::INTERRUPTED);
    }
    let failed = super::report_files::failed_cases(&report)?;
    if failed == 0 {
        Ok(exit::OK)
    } else {
        eprintln!(
            "{} {}",
            ui.error_prefix(),
            super::report_files::eval_failed(&report, failed)?
        );
        Ok(EVAL_FAILED)
    }
}

/// A suite that cannot be planned: its problems (exit 2), or evalhost's own failure (exit 3).
pub(super) fn failure(error: SuiteError) -> Failure {
    match error {
        SuiteError::Cases(problems) => Failure::usage(problems::error(problems)),
        SuiteError::AgentsMissing(ref missing) if missing.len() > 1 => {
            for problem in missing {
                eprintln!("{problem}");
            }
            Failure::usage(error)
        }
        error if error.is_internal() => Failure::internal(error),
        error => Failure::usage(error),
    }
}

/// The confinement of every run: `--no-confine`, `--confine-*`; with
/// `--require-confinement`, an error (exit 2) when the kernel lacks a protection.
fn confine_policy(args: &RunArgs) -> Result<crate::confine::Policy, Failure> {
    use crate::confine::{Policy, Support, Widening};
    let absolute = |paths: &[std::path::PathBuf], flag: &str| {
        paths
            .iter()
            .map(|p| {
                std::path::absolute(p)
                    .with_context(|| format!("{flag} `{}`", p.display()))
                    .map_err(Failure::usage)
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let policy = Policy {
        enabled: !args.no_confine,
        widen: Widening {
            read: absolute(&args.confine_read, "--confine-read")?,
            write: absolute(&args.confine_write, "--confine-write")?,
            connect: args
                .confine_connect
                .iter()
                .filter_map(|c| match c {
                    super::args::Connect::Port(port) => Some(*port),
                    super::args::Connect::Any => None,
                })
                .collect(),
            any_port: args.confine_connect.contains(&super::args::Connect::Any),
        },
    };
    let support = Support::current();
    let missing = support.missing();
    if args.require_confinement && !missing.is_empty() {
        return Err(Failure::usage(anyhow::anyhow!(
            "--require-confinement: this machine cannot give {} (its Landlock ABI is {})",
            missing.join(", "),
            support.abi
        )));
    }
    Ok(policy)
}
