//! `evalhost promote`: a recorded session to a Nexus case directory; `--from-trace`: a run
//! read from a trace to a replay case file (docs/traces.md).

use std::path::PathBuf;

use super::{Failure, exit};
use crate::case::nexus::promote::{PromoteError, PromoteOptions, promote as promote_session};

/// Arguments of `evalhost promote`.
#[derive(Debug, clap::Args)]
pub struct PromoteArgs {
    /// An evalhost session log (`--out DIR/<case>/run-N.jsonl`), or a Nexus journal or session directory.
    #[arg(
        long,
        value_name = "PATH",
        required_unless_present = "from_trace",
        conflicts_with = "from_trace"
    )]
    pub session: Option<PathBuf>,
    /// A trace (OTLP, an Inspect AI log, an ATIF trajectory; docs/traces.md): one of its runs
    /// becomes a replay case file, ID.yaml in the cases directory, whose scripted model
    /// replays the trace's model turns and whose tool calls are answered from its results.
    #[arg(long, value_name = "FILE")]
    pub from_trace: Option<PathBuf>,
    /// With --from-trace: which of the trace's runs, by number (1-based, in the order `grade
    /// --trace` numbers them) or by its label (`sample 3 epoch 1`); needed when it has several.
    #[arg(long, value_name = "N|LABEL", requires = "from_trace")]
    pub run: Option<String>,
    /// Id of the new case: the name of its directory.
    #[arg(long = "case", value_name = "ID")]
    pub case_id: String,
    /// Directory the case directory is created in.
    #[arg(long, value_name = "DIR", default_value = "tests/eval/cases")]
    pub cases_dir: PathBuf,
    /// Overwrite an existing case directory.
    #[arg(long)]
    pub force: bool,
    /// Tags for case.yaml (comma-separated).
    #[arg(long, value_name = "TAG,...", value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Description for case.yaml.
    #[arg(long)]
    pub description: Option<String>,
}

/// Run `evalhost promote`.
pub fn promote(args: PromoteArgs) -> Result<u8, Failure> {
    let Some(session) = args.session else {
        return promote_trace(args);
    };
    let options = PromoteOptions {
        session,
        case_id: args.case_id,
        cases_dir: args.cases_dir,
        force: args.force,
        tags: args.tags,
        description: args.description,
    };
    let promoted = promote_session(&options).map_err(|e| match e {
        PromoteError::Write { .. } => Failure::internal(e),
        other => Failure::usage(other),
    })?;
    for warning in &promoted.warnings {
        eprintln!("Warning: {warning}");
    }
    println!("Promoted to {}", promoted.dir.display());
    Ok(exit::OK)
}

/// `evalhost promote --from-trace FILE --case ID`: the replay case `CASES_DIR/ID.yaml`.
fn promote_trace(args: PromoteArgs) -> Result<u8, Failure> {
    use anyhow::Context;
    let path = args
        .from_trace
        .as_deref()
        .unwrap_or(std::path::Path::new(""));
    let trace = crate::trace::import(path).map_err(Failure::usage)?;
    let labels = || {
        trace
            .runs
            .iter()
            .enumerate()
            .map(|(i, run)| format!("{} `{}`", i + 1, run.label))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let run = match (&args.run, trace.runs.as_slice()) {
        (None, [only]) => only,
        (None, _) => {
            return Err(Failure::usage(anyhow::anyhow!(
                "{} holds {} runs: choose one with --run N or --run LABEL ({})",
                path.display(),
                trace.runs.len(),
                labels()
            )));
        }
        (Some(wanted), runs) => {
            let by_number = wanted
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| runs.get(i));
            by_number
                .or_else(|| runs.iter().find(|run| run.label == *wanted))
                .ok_or_else(|| {
                    Failure::usage(anyhow::anyhow!(
                        "{} has no run `{wanted}`: its runs are {}",
                        path.display(),
                        labels()
                    ))
                })?
        }
    };
    let output = args.cases_dir.join(format!("{}.yaml", args.case_id));
    if output.exists() && !args.force {
        return Err(Failure::usage(anyhow::anyhow!(
            "{} exists (--force overwrites it)",
            output.display()
        )));
    }
    let source = format!("{} ({})", path.display(), trace.format);
    let yaml = crate::case::trace_case_yaml(run, &args.case_id, &source, &args.cases_dir)
        .map_err(Failure::usage)?;
    crate::private_file::create_dir_all(&args.cases_dir)
        .and_then(|()| std::fs::write(&output, yaml))
        .with_context(|| format!("failed to write {}", output.display()))
        .map_err(Failure::internal)?;
    for note in &trace.unmapped {
        println!("Not mapped from the trace: {note}");
    }
    println!(
        "Promoted {} of {} to {}: its graders pin what the trace did; edit them to say what should happen (`evalhost run {}` replays it offline).",
        run.label,
        path.display(),
        output.display(),
        output.display()
    );
    Ok(exit::OK)
}
