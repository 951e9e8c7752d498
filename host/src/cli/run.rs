//! `evalhost run`.

use std::sync::Arc;

use anyhow::Context;

use super::args::RunArgs;
use super::{Failure, exit, problems};
use crate::cli::exit::EVAL_FAILED;
use evalhost::case::agentcompany::FixtureOptions;
use evalhost::case::{Case, CaseError, LoadOptions, load_each};
use evalhost::grader::GraderHost;
use evalhost::model::LiveModel;
use evalhost::report::{render_text, render_text_in_color};
use evalhost::runner::{RunOptions, prepare_cases_with, prepare_loaded, run_suite};

pub fn run(args: RunArgs, ui: &super::ui::Ui) -> Result<u8, Failure> {
    super::report_files::refuse_own_dirs([
        ("--out", args.out.as_deref()),
        ("--junit", args.junit.as_deref()),
        ("--html", args.html.as_deref()),
    ])?;
    let confine = confine_policy(&args)?;
    let pi_agent = super::pi_agent::find(args.agent, args.expect_agent_core_version.as_deref())?;
    let options = LoadOptions {
        fixtures: FixtureOptions {
            expected_agent_core_version: pi_agent
                .as_ref()
                .map(|a| a.version().to_owned())
                .or_else(|| args.expect_agent_core_version.clone()),
        },
    };
    // Every problem of the suite is reported before anything runs: those of loading (every
    // file, including the cases filtered out below) and, when there are any, those of the
    // graders of the cases that loaded, in load order, as `evalhost check` lists them.
    let mut loaded = load_each(&args.paths, &options);
    if let Some(filter) = &args.filter {
        loaded.retain(|c| {
            c.as_ref()
                .map_or(true, |c| c.name.contains(filter.as_str()))
        });
        if loaded.is_empty() {
            return Err(Failure::usage(anyhow::anyhow!(
                "no case name contains `{filter}` (--filter)"
            )));
        }
    }
    if !args.tags.is_empty() {
        loaded.retain(|c| {
            c.as_ref()
                .map_or(true, |c| args.tags.iter().all(|t| c.tags.contains(t)))
        });
        if loaded.is_empty() {
            return Err(Failure::usage(anyhow::anyhow!(
                "no case has all the tags {} (--tags)",
                args.tags.join(",")
            )));
        }
    }
    if !args.live {
        for slot in loaded.iter_mut() {
            if let Ok(case) = slot
                && let Err(problem) = case.check_replayable()
            {
                *slot = Err(problem);
            }
        }
    }
    if loaded.iter().any(Result::is_err) {
        let host = GraderHost::with_builtins()
            .context("failed to load the built-in graders")
            .map_err(Failure::internal)?;
        let bundles = &mut super::bundle::project_bundles()?;
        let problems = prepare_loaded(loaded, &host, bundles)
            .into_iter()
            .filter_map(Result::err)
            .collect();
        return Err(Failure::usage(problems::error(CaseError::several(
            problems,
        ))));
    }
    let mut cases: Vec<Case> = loaded.into_iter().flatten().collect();
    if let Some(adapter) = &pi_agent {
        super::pi_agent::apply(adapter, &mut cases)?;
    }
    if let Some(partition) = &args.partition {
        // An empty shard is not an error: a suite may have fewer cases than CI has shards.
        cases = partition.select(cases, |c| c.name.as_str());
        println!(
            "Partition {partition}: {} cases in this shard.",
            cases.len()
        );
    }
    if let Some(command) = &args.agent_cmd {
        let agent = evalhost::case::ExternalAgent::shell(command);
        for case in cases.iter_mut() {
            if case.execution == evalhost::case::Execution::Agent {
                case.execution = evalhost::case::Execution::External(agent.clone());
            }
        }
    }
    if let Some(super::args::AgentChoice::Preset(preset)) = args.agent {
        let agent = evalhost::case::ExternalAgent::Preset {
            preset,
            args: Vec::new(),
        };
        for case in cases.iter_mut() {
            if case.execution == evalhost::case::Execution::Agent {
                case.execution = evalhost::case::Execution::External(agent.clone());
            }
        }
    }
    let runs = args.runs.unwrap_or(if args.live {
        super::live::DEFAULT_LIVE_RUNS
    } else {
        1
    });
    if args.live {
        let (live_cases, skipped) = super::live::select(cases)?;
        cases = live_cases;
        for line in skipped {
            println!("{line}");
        }
    }
    if let Some(k) = args.k
        && let Some(case) = cases.iter().find(|c| c.runs.unwrap_or(runs) < k)
    {
        return Err(Failure::usage(anyhow::anyhow!(
            "--k {k} is larger than the {} runs of case {} (k must not exceed n)",
            case.runs.unwrap_or(runs),
            case.name
        )));
    }
    let agents = super::agents::locate(&cases)?;
    let provider = if args.live {
        Some(super::live::provider()?)
    } else {
        None
    };
    let host = GraderHost::with_builtins()
        .context("failed to load the built-in graders")
        .map_err(Failure::internal)?;
    let prepared = prepare_cases_with(cases, &host, &mut super::bundle::project_bundles()?)
        .map_err(|e| Failure::usage(problems::error(e)))?;
    let mut options = RunOptions {
        runs,
        out: args.out,
        timeout_secs: args.timeout,
        k: args.k,
        agents: Arc::new(agents),
        confine,
        ..RunOptions::default()
    };
    if let Some(provider) = &provider {
        options.agent_limits = super::live::agent_limits(provider.config());
    }
    if let Some(jobs) = args.jobs {
        options.jobs = jobs as usize;
    }
    let progress = ui
        .progress
        .then(|| Arc::new(super::progress::RunProgress::new(ui.color_stderr)));
    if let Some(progress) = &progress {
        options.progress = Some(progress.clone());
    }
    if args.html.is_some() {
        options.details = Some(Arc::new(evalhost::runner::RunDetails::new()));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
        .map_err(Failure::internal)?;
    options.judge = args.judge.judge(runtime.handle())?;
    let report = runtime.block_on(async {
        if let Some(provider) = provider {
            options.live = Some(Arc::new(LiveModel::new(provider)));
        }
        super::signals::cancel_on_signal(options.cancel.clone());
        run_suite(prepared, &options)
            .await
            .map_err(Failure::internal)
    });
    if let Some(progress) = &progress {
        progress.finish();
    }
    let report = report?;
    let details = options
        .details
        .as_ref()
        .map(|d| d.take())
        .unwrap_or_default();
    // The table first: a bad --junit/--html path must not hide the suite's results.
    if ui.color_stdout {
        print!("{}", render_text_in_color(&report));
    } else {
        print!("{}", render_text(&report));
    }
    super::report_files::write(
        args.junit.as_deref(),
        args.html.as_deref(),
        &report,
        &details,
    )?;
    if report.interrupted {
        eprintln!(
            "{} Interrupted: {} runs cancelled; the report covers the runs that finished",
            ui.error_prefix(),
            report.cancelled.len()
        );
        return Ok(exit::INTERRUPTED);
    }
    let failed = report.failed_cases();
    if failed == 0 {
        Ok(exit::OK)
    } else {
        eprintln!(
            "{} Eval failed: {failed} of {} cases did not pass every run",
            ui.error_prefix(),
            report.cases.len()
        );
        Ok(EVAL_FAILED)
    }
}

/// The confinement of every run: `--no-confine`, `--confine-*`; with
/// `--require-confinement`, an error (exit 2) when the kernel lacks a protection.
fn confine_policy(args: &RunArgs) -> Result<evalhost::confine::Policy, Failure> {
    use evalhost::confine::{Policy, Support, Widening};
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
            "--require-confinement: this kernel cannot give {} (its Landlock ABI is {})",
            missing.join(", "),
            support.abi
        )));
    }
    Ok(policy)
}
