//! `evalhost schema NAME`: print a JSON Schema evalhost publishes.

use std::io::Write as _;

use anyhow::Context;

use super::{Failure, exit};
use crate::grader::GraderHost;

/// `evalhost schema`.
#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// Which schema.
    #[arg(value_enum)]
    pub name: SchemaName,
}

/// The schemas evalhost publishes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SchemaName {
    /// The case YAML format, with the config schema of every built-in grader
    /// (committed as `schema/case.schema.json`).
    Case,
}

/// Print the schema, pretty JSON with a final newline.
pub fn schema(args: SchemaArgs) -> Result<u8, Failure> {
    let schema = match args.name {
        SchemaName::Case => {
            let host = GraderHost::with_builtins()
                .context("failed to load the built-in graders")
                .map_err(Failure::internal)?;
            crate::case::case_schema(host.graders().map(|(info, _)| info))
        }
    };
    let mut text = serde_json::to_string_pretty(&schema).map_err(Failure::internal)?;
    text.push('\n');
    // A closed stdout (`| head`) is not an error worth a panic.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(exit::OK)
}
