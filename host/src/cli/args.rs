//! Raw command-line arguments (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

const EXIT_CODES: &str = "\
Exit status:
  0  every case passed every run
  1  some case did not pass every run (`Error: Eval failed: ...`)
  2  bad usage, or an invalid case file or grader config
  3  evalhost itself failed (I/O, engine setup)
  130  interrupted (Ctrl-C / SIGTERM); the report of the runs that finished was printed";

/// Evaluate LLM agents; every grader is a sandboxed WebAssembly component.
#[derive(Debug, Parser)]
#[command(name = "evalhost", version, after_help = EXIT_CODES)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run eval cases and print the report.
    #[command(after_help = concat!("Examples:
  evalhost run cases/mino
  evalhost run --filter bash --out out/ cases/mino
  evalhost run --runs 3 cases/mino/bash-denied.yaml
  evalhost run --live --runs 5 --k 2 cases/mino

", "Exit status:
  0  every case passed every run
  1  some case did not pass every run
  2  bad usage, or an invalid case file or grader config
  3  evalhost itself failed
  130  interrupted (Ctrl-C / SIGTERM); the report of the runs that finished was printed"))]
    Run(RunArgs),
    /// List the graders evalhost provides, with a one-line summary each.
    Graders,
    /// Record an AgentCompany fixture against a live provider (needs the provider's API key).
    Record(crate::cli::record::RecordArgs),
    /// Turn a recorded session (evalhost session log or Nexus journal) into a Nexus case directory.
    #[command(after_help = "Examples:
  evalhost promote --session out/greet/run-1.jsonl --case greet
  evalhost promote --session ~/.nexus/sessions/20260501-1200/journal --case build-fix --force")]
    Promote(crate::cli::promote::PromoteArgs),
    /// Grader authors' tools: check a component, grade saved evidence, scaffold a grader.
    Grader(crate::cli::grader::GraderArgs),
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Case files or directories of case files (`*.yaml`, loaded in name order).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Runs per case (1–32; default 1, 3 with --live); a case's own `runs` field overrides it.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub runs: Option<u32>,
    /// Run against the configured provider (`[provider]` in evalhost.toml) instead of each
    /// case's model script; cases with `live: false` are skipped.
    #[arg(long)]
    pub live: bool,
    /// k of pass@k and pass^k (1–32; default: each case's number of runs); must not exceed
    /// any case's runs.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=32))]
    pub k: Option<u32>,
    /// Only run cases whose name contains this substring.
    #[arg(long, value_name = "SUBSTR")]
    pub filter: Option<String>,
    /// Only run cases whose tags include every one of these (comma-separated).
    #[arg(long, value_name = "TAG,...", value_delimiter = ',')]
    pub tags: Vec<String>,
    /// AgentCompany fixtures must have been recorded with this agent core version
    /// (`meta.piAgentCoreVersion`); unchecked when not given.
    #[arg(long, value_name = "VERSION")]
    pub expect_agent_core_version: Option<String>,
    /// Run this external agent command (`sh -c CMD` in the workspace, the prompt on stdin,
    /// OPENAI_BASE_URL/OPENAI_API_KEY pointing at evalhost's loopback model endpoint) instead
    /// of evalhost's own agent, for every case that would run the agent.
    #[arg(long, value_name = "CMD")]
    pub agent_cmd: Option<String>,
    /// Keep session logs, evidence and report.json in this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Runs made concurrently (default: number of cores; at most 128).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=128))]
    pub jobs: Option<u32>,
}
