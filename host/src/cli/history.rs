//! `evalhost history`: the runs remembered (list, import, gc, flaky), and the `--history` /
//! `--no-history` flags of the commands that record or read it.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;

use super::{Failure, exit};
use crate::config::ConfigSources;
use crate::history::{Location, Recorder, Retention, RunFilter, Store};

/// Where the history is, for a command that records (`run`) into it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RecordingArgs {
    /// The history store: a SQLite file, a `postgres://` URL, or `off` (default:
    /// `EVALHOST_HISTORY`, `[history] store` in evalhost.toml, else .evalhost/history.db).
    #[arg(long, value_name = "STORE", conflicts_with = "no_history")]
    pub history: Option<String>,
    /// Do not record this run in the history.
    #[arg(long)]
    pub no_history: bool,
}

/// Where the history is, for a command that reads it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StoreArgs {
    /// The history store: a SQLite file or a `postgres://` URL (default: `EVALHOST_HISTORY`,
    /// `[history] store` in evalhost.toml, else .evalhost/history.db).
    #[arg(long, value_name = "STORE")]
    pub history: Option<String>,
}

impl RecordingArgs {
    pub fn location(&self) -> Result<Location, Failure> {
        location(self.history.as_deref(), self.no_history)
    }
}

impl StoreArgs {
    pub fn location(&self) -> Result<Location, Failure> {
        location(self.history.as_deref(), false)
    }

    /// The store, which must exist.
    pub fn open(&self) -> Result<Store, Failure> {
        let location = self.location()?;
        if location == Location::Off {
            return Err(Failure::usage(anyhow::anyhow!(
                "the history is off (EVALHOST_HISTORY=off or [history] store = \"off\"): give --history STORE"
            )));
        }
        location.open_existing().map_err(Failure::usage)
    }
}

fn location(flag: Option<&str>, no_history: bool) -> Result<Location, Failure> {
    let cwd = std::env::current_dir()
        .context("the current directory")
        .map_err(Failure::internal)?;
    Location::resolve(flag, no_history, &cwd, &ConfigSources::from_environment())
        .map_err(Failure::usage)
}

/// What `run --resume [SPEC]` takes from the history at `location` (an empty `spec`: the
/// newest run that did not finish); says what it resumes.
pub fn resumable(
    location: &Location,
    spec: &str,
) -> Result<Arc<crate::history::Resumable>, Failure> {
    if *location == Location::Off {
        return Err(Failure::usage(anyhow::anyhow!(
            "--resume needs the history, which is off (--no-history, EVALHOST_HISTORY=off)"
        )));
    }
    let mut store = location.open_existing().map_err(Failure::usage)?;
    let spec = (!spec.is_empty()).then_some(spec);
    let resumable = store.resumable(spec).map_err(Failure::usage)?;
    if let Some(run) = &resumable.run {
        println!(
            "Resuming run {} ({}; cases with runs recorded: {}): the runs it recorded of unchanged cases are not made again.",
            run.short_id(),
            run.status.as_str(),
            resumable.cases.len()
        );
    }
    Ok(Arc::new(resumable))
}

/// Start recording a run into `location` (nothing when it is `off`). A store that cannot be
/// opened is a warning: the run goes on without history.
pub fn start_recording(
    location: &Location,
    run: crate::history::RecordedRun,
    ui: &super::ui::Ui,
) -> Option<Arc<Recorder>> {
    if *location == Location::Off {
        return None;
    }
    match Recorder::start(location, run) {
        Ok(recorder) => Some(recorder),
        Err(e) => {
            eprintln!(
                "{} not recording this run in the history: {e}",
                ui.warning_prefix()
            );
            None
        }
    }
}

/// The run is over: finish its record. The line saying where it is (print it after the
/// report), or nothing when the history is off or failed (a warning says why).
pub fn finish_recording(
    recorder: Option<Arc<Recorder>>,
    report: &crate::report::SuiteReport,
    ui: &super::ui::Ui,
) -> Option<String> {
    let recorder = recorder?;
    match recorder.finish(report) {
        Ok(()) => Some(format!(
            "Recorded as run {} in {} (evalhost history; evalhost view).",
            &recorder.run_id()[..8],
            recorder.location(),
        )),
        Err(e) => {
            eprintln!(
                "{} the history did not record all of this run: {e}",
                ui.warning_prefix()
            );
            None
        }
    }
}

/// `evalhost history`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: Option<HistoryCommand>,
    #[command(flatten)]
    pub list: ListArgs,
}

#[derive(Debug, clap::Subcommand)]
pub enum HistoryCommand {
    /// List recorded runs, newest first (the default).
    #[command(after_help = "Examples:
  evalhost history list --branch main -n 5
  evalhost history list --agent codex --json | jq -r .id

Exit status: 0 listed; 2 bad usage, or the store is missing, corrupt or from a newer evalhost.")]
    List(ListArgs),
    /// Bring in runs made elsewhere: `--out` directories or (merged) JSON reports.
    #[command(after_help = "Examples:
  evalhost history import shard-1/ shard-2/
  evalhost history import merged.json --history postgres://ci@db.internal/evals

Exit status: 0 imported (a run already in the store is said so and skipped); 2 a path is not a
report or `--out` directory, or the store cannot be written.")]
    Import(ImportArgs),
    /// Remove the runs a retention policy does not keep.
    #[command(after_help = "Examples:
  evalhost history gc --keep-runs 200
  evalhost history gc --keep-days 90 --dry-run

Exit status: 0 done; 2 no retention policy, or the store is missing or unreadable.")]
    Gc(GcArgs),
    /// Cases whose outcome varies between runs of the same content.
    #[command(after_help = "Examples:
  evalhost history flaky
  evalhost history flaky --json | jq -r '.[].name'

Exit status: 0 listed; 2 the store is missing or unreadable.")]
    Flaky(FlakyArgs),
}

#[derive(Debug, Default, clap::Args)]
pub struct ListArgs {
    /// Runs of this git branch.
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// Runs against this model.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Runs of this real agent (`codex`, `claude-code`, ...).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Runs that ran this case.
    #[arg(long, value_name = "NAME")]
    pub case: Option<String>,
    /// At most this many runs.
    #[arg(long, short = 'n', value_name = "N", default_value_t = 20)]
    pub limit: u32,
    /// Print JSON (one object per run) instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// `--out` directories or JSON report files.
    #[arg(required = true, value_name = "DIR|FILE")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, clap::Args)]
pub struct GcArgs {
    /// Keep the newest N runs (default: `[history] keep_runs`).
    #[arg(long, value_name = "N")]
    pub keep_runs: Option<u32>,
    /// Keep runs started in the last D days (default: `[history] keep_days`).
    #[arg(long, value_name = "D")]
    pub keep_days: Option<u32>,
    /// Say what would be removed, remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, clap::Args)]
pub struct FlakyArgs {
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn history(args: HistoryArgs) -> Result<u8, Failure> {
    match args.command {
        None => list(args.list),
        Some(HistoryCommand::List(list_args)) => list(list_args),
        Some(HistoryCommand::Import(import)) => import_runs(import),
        Some(HistoryCommand::Gc(gc)) => collect(gc),
        Some(HistoryCommand::Flaky(flaky_args)) => flaky(flaky_args),
    }
}

fn list(args: ListArgs) -> Result<u8, Failure> {
    let mut store = args.store.open()?;
    let runs = store
        .runs(&RunFilter {
            branch: args.branch,
            model: args.model,
            agent: args.agent,
            case: args.case,
            limit: args.limit,
            offset: 0,
        })
        .map_err(Failure::internal)?;
    if args.json {
        for run in &runs {
            println!("{}", serde_json::to_string(run).map_err(Failure::internal)?);
        }
        return Ok(exit::OK);
    }
    if runs.is_empty() {
        println!("No runs recorded in {} match.", store.location());
        return Ok(exit::OK);
    }
    println!(
        "{:<8}  {:<16}  {:<11}  {:<6}  {:<24}  {:<20}  {:>6}  {:>6}  {:>12}",
        "RUN",
        "STARTED (UTC)",
        "STATUS",
        "BY",
        "BRANCH@COMMIT",
        "MODEL",
        "CASES",
        "PASS",
        "RUNS PASSED"
    );
    for run in &runs {
        let git = run.git.as_ref().map_or_else(
            || "-".to_owned(),
            |g| {
                format!(
                    "{}@{}{}",
                    g.branch.as_deref().unwrap_or("(detached)"),
                    &g.commit[..g.commit.len().min(8)],
                    if g.dirty { "+" } else { "" }
                )
            },
        );
        println!(
            "{:<8}  {:<16}  {:<11}  {:<6}  {:<24}  {:<20}  {:>6}  {:>5.0}%  {:>12}",
            run.short_id(),
            utc(run.started_ms),
            run.status.as_str(),
            run.command,
            cut(&git, 24),
            cut(&run.model, 20),
            run.cases,
            run.pass_rate() * 100.0,
            format!("{}/{}", run.passed, run.runs),
        );
    }
    Ok(exit::OK)
}

fn import_runs(args: ImportArgs) -> Result<u8, Failure> {
    let location = args.store.location()?;
    let mut store = location.open().map_err(Failure::usage)?;
    for path in &args.paths {
        let imported = crate::history::import_path(&mut store, path).map_err(Failure::usage)?;
        if imported.new {
            println!(
                "Imported {} as run {}: {} cases, {}/{} runs passed{}.",
                path.display(),
                imported.run.short_id(),
                imported.run.cases,
                imported.run.passed,
                imported.run.runs,
                if imported.logs > 0 {
                    format!(", {} session logs", imported.logs)
                } else {
                    String::new()
                }
            );
        } else {
            println!(
                "{} is run {}, already in {}: nothing imported.",
                path.display(),
                imported.run.short_id(),
                store.location()
            );
        }
    }
    Ok(exit::OK)
}

fn collect(args: GcArgs) -> Result<u8, Failure> {
    let settings = ConfigSources::from_environment()
        .history()
        .map_err(Failure::usage)?;
    let retention = Retention {
        keep_runs: args.keep_runs.or(settings.keep_runs),
        keep_days: args.keep_days.or(settings.keep_days),
    };
    if retention == Retention::default() {
        return Err(Failure::usage(anyhow::anyhow!(
            "history gc: no retention policy: give --keep-runs N and/or --keep-days D, or set keep_runs / keep_days under [history] in evalhost.toml"
        )));
    }
    let mut store = args.store.open()?;
    let removed = crate::history::collect_garbage(
        &mut store,
        retention,
        crate::history::now_unix_ms(),
        args.dry_run,
    )
    .map_err(Failure::internal)?;
    let verb = if args.dry_run {
        "Would remove"
    } else {
        "Removed"
    };
    for run in &removed {
        println!("{verb} run {} ({})", run.short_id(), utc(run.started_ms));
    }
    println!("{verb} {} runs from {}.", removed.len(), store.location());
    Ok(exit::OK)
}

fn flaky(args: FlakyArgs) -> Result<u8, Failure> {
    let mut store = args.store.open()?;
    let flaky = store.flaky(None).map_err(Failure::internal)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&flaky).map_err(Failure::internal)?
        );
        return Ok(exit::OK);
    }
    if flaky.is_empty() {
        println!("No flaky cases in {}.", store.location());
        return Ok(exit::OK);
    }
    println!(
        "{:<40}  {:<12}  {:>10}  {:>12}  {:>9}  {:>5}",
        "CASE", "DIGEST", "SUITE RUNS", "RUNS PASSED", "PASS RATE", "FLIPS"
    );
    for case in &flaky {
        println!(
            "{:<40}  {:<12}  {:>10}  {:>12}  {:>8.0}%  {:>5}",
            cut(&case.name, 40),
            &case.digest[..case.digest.len().min(12)],
            case.suite_runs,
            format!("{}/{}", case.passed, case.runs),
            f64::from(case.passed) * 100.0 / f64::from(case.runs.max(1)),
            case.flips,
        );
    }
    Ok(exit::OK)
}

/// `2026-12-03 14:05`, UTC.
pub fn utc(ms: u64) -> String {
    chrono::DateTime::from_timestamp_millis(i64::try_from(ms).unwrap_or(0)).map_or_else(
        || "-".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M").to_string(),
    )
}

fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(width - 1).collect();
        cut.push('…');
        cut
    }
}
