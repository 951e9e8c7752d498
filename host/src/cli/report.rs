//! `evalhost report merge`: one report from the reports of a partitioned suite's shards.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;

use super::{Failure, exit};
use crate::report::{merge_reports, read_report};

/// `evalhost report ...`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    #[command(subcommand)]
    pub command: ReportCommand,
}

/// What can be done with saved JSON reports.
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Merge the JSON reports of a suite's shards (`run --partition`) into one report.
    #[command(
        after_help = "Cases are ordered by case path; case and suite summaries are recomputed. \
Every report must come from the same evalhost version, mode, model, --runs and --k, and a case \
may be in only one report.

Examples:
  evalhost report merge shard-1/report.json shard-2/report.json -o report.json
  evalhost report merge shards/*/ -o report.json   # --out directories work too

Exit status:
  0  merged (whether or not its cases passed: the shards and `evalhost baseline` are the gates)
  2  a report is unreadable, or the reports cannot be merged (the error says why)
  3  the merged report could not be written"
    )]
    Merge(MergeArgs),
}

/// `evalhost report merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// JSON reports (`report.json`, or the `--out` directory holding it).
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// Write the merged JSON report here (default: print it as JSON on stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Run an `evalhost report` subcommand.
pub fn report(args: ReportArgs) -> Result<u8, Failure> {
    match args.command {
        ReportCommand::Merge(merge) => self::merge(merge),
    }
}

fn merge(args: MergeArgs) -> Result<u8, Failure> {
    super::report_files::refuse_own_dirs([("--out", args.out.as_deref())])?;
    let reports = args
        .reports
        .iter()
        .map(|path| read_report(path).map(|r| (path.clone(), r)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::usage)?;
    let merged = merge_reports(reports).map_err(Failure::usage)?;
    match &args.out {
        Some(path) => {
            crate::private_file::write_with(path, |out| merged.write_json(out))
                .with_context(|| format!("failed to write `{}`", path.display()))
                .map_err(Failure::internal)?;
            super::report_files::print_text(&merged, false)?;
        }
        None => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            merged
                .write_json(&mut stdout)
                .and_then(|()| writeln!(stdout))
                .and_then(|()| stdout.flush())
                .context("failed to print the merged report")
                .map_err(Failure::internal)?;
        }
    }
    Ok(exit::OK)
}
