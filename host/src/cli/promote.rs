//! `evalhost promote`: a recorded session to a Nexus case directory.

use std::path::PathBuf;

use super::{Failure, exit};
use evalhost::case::nexus::promote::{PromoteError, PromoteOptions, promote as promote_session};

/// Arguments of `evalhost promote`.
#[derive(Debug, clap::Args)]
pub struct PromoteArgs {
    /// An evalhost session log (`--out DIR/<case>/run-N.jsonl`), or a Nexus journal or session directory.
    #[arg(long, value_name = "PATH")]
    pub session: PathBuf,
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
    let options = PromoteOptions {
        session: args.session,
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
