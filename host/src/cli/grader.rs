//! `evalhost grader check|test|new`: the grader author's tools.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use clap::Subcommand;

use super::{Failure, exit};
use evalhost::evidence::Evidence;
use evalhost::grader::{
    ComponentReport, GraderComponent, GraderHost, Limits, PreparedEvidence, default_cache_dir,
};

/// `evalhost grader ...`.
#[derive(Debug, clap::Args)]
pub struct GraderArgs {
    #[command(subcommand)]
    pub command: GraderCommand,
}

/// The grader author's subcommands.
#[derive(Debug, Subcommand)]
pub enum GraderCommand {
    /// Check that a .wasm file is a grader component evalhost can run, and list its graders.
    #[command(after_help = "Examples:
  evalhost grader check grader.wasm
  evalhost grader check --json grader.wasm

Exit status: 0 the component is valid; 2 it is not (the error says why).")]
    Check(CheckArgs),
    /// Grade one saved evidence file (as `evalhost run --out` writes them) with a grader.
    #[command(after_help = "Examples:
  evalhost grader test grader.wasm --evidence out/greet/run-1.evidence.json
  evalhost grader test grader.wasm --evidence E.json --config C.json --workspace ws/

Exit status: 0 pass; 1 fail or a grader error; 2 bad input (files, config).")]
    Test(TestArgs),
}

/// `evalhost grader check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The component file.
    #[arg(value_name = "FILE.wasm")]
    pub file: PathBuf,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also refuse imports the sandbox links only to deny (`wasi:sockets/*`).
    #[arg(long)]
    pub strict: bool,
}

/// `evalhost grader test`.
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// The component file.
    #[arg(value_name = "FILE.wasm")]
    pub file: PathBuf,
    /// Evidence JSON, e.g. `DIR/<case>/run-1.evidence.json` from `evalhost run --out DIR`.
    #[arg(long, value_name = "E.json")]
    pub evidence: PathBuf,
    /// The grader's config as a JSON file (default: `null`).
    #[arg(long, value_name = "C.json")]
    pub config: Option<PathBuf>,
    /// Which grader of the component (default: its only one).
    #[arg(long, value_name = "NAME")]
    pub grader: Option<String>,
    /// Directory preopened read-only at /workspace (default: an empty directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

/// Run an `evalhost grader` subcommand.
pub fn grader(args: GraderArgs) -> Result<u8, Failure> {
    match args.command {
        GraderCommand::Check(check) => self::check(check),
        GraderCommand::Test(test) => self::test(test),
    }
}

fn host() -> Result<GraderHost, Failure> {
    GraderHost::new(Limits::default(), default_cache_dir())
        .context("failed to set up the grader host")
        .map_err(Failure::internal)
}

fn load(host: &GraderHost, file: &Path) -> Result<(GraderComponent, ComponentReport), Failure> {
    host.check_component_file(file).map_err(Failure::usage)
}

fn check(args: CheckArgs) -> Result<u8, Failure> {
    let host = host()?;
    let (_, report) = load(&host, &args.file)?;
    if args.strict {
        report.strict().map_err(Failure::usage)?;
    }
    if args.json {
        let json = serde_json::to_string_pretty(&report)
            .context("failed to encode the report")
            .map_err(Failure::internal)?;
        println!("{json}");
        return Ok(exit::OK);
    }
    println!("ok: {} is an evalhost grader component", report.origin);
    println!("  world:   evalhost:grader@{}", report.world_version);
    println!("  sha256:  {}", report.digest);
    println!("  size:    {} bytes", report.size);
    println!(
        "  imports: {} (all granted by the sandbox)",
        if report.imports.is_empty() {
            "none".to_owned()
        } else {
            report.imports.join(", ")
        }
    );
    if !report.denied_imports.is_empty() {
        println!(
            "  denied:  {} (linked, but every call is refused: no network)",
            report.denied_imports.join(", ")
        );
    }
    println!("  graders:");
    for info in &report.graders {
        println!("    {} {}: {}", info.name, info.version, info.summary);
        println!("      config schema: {}", info.config_schema);
    }
    Ok(exit::OK)
}

fn test(args: TestArgs) -> Result<u8, Failure> {
    let evidence_text = std::fs::read_to_string(&args.evidence)
        .with_context(|| format!("failed to read evidence `{}`", args.evidence.display()))
        .map_err(Failure::usage)?;
    let evidence: Evidence = serde_json::from_str(&evidence_text)
        .with_context(|| {
            format!(
                "`{}` is not an evidence file (as `evalhost run --out` writes them)",
                args.evidence.display()
            )
        })
        .map_err(Failure::usage)?;
    let config = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("failed to read config `{}`", path.display()))
                .map_err(Failure::usage)?;
            let value: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("config `{}` is not JSON", path.display()))
                .map_err(Failure::usage)?;
            value.to_string()
        }
        None => "null".to_owned(),
    };
    let host = host()?;
    let (component, _) = load(&host, &args.file)?;
    let grader = match &args.grader {
        Some(name) => name.clone(),
        None => match component.graders() {
            [only] => only.name.clone(),
            many => {
                let names: Vec<&str> = many.iter().map(|g| g.name.as_str()).collect();
                return Err(Failure::usage(anyhow!(
                    "`{}` provides {} graders ({}); pick one with --grader",
                    args.file.display(),
                    names.len(),
                    names.join(", ")
                )));
            }
        },
    };
    if !component.graders().iter().any(|g| g.name == grader) {
        let names: Vec<&str> = component
            .graders()
            .iter()
            .map(|g| g.name.as_str())
            .collect();
        return Err(Failure::usage(anyhow!(
            "`{}` provides no grader `{grader}` (it provides: {})",
            args.file.display(),
            names.join(", ")
        )));
    }
    component
        .check_config(&grader, &config)
        .with_context(|| format!("grader {grader}: config {config}"))
        .map_err(Failure::usage)?;
    let empty;
    let workspace = match &args.workspace {
        Some(dir) => dir.as_path(),
        None => {
            empty = tempfile::tempdir()
                .context("failed to create an empty workspace")
                .map_err(Failure::internal)?;
            empty.path()
        }
    };
    let prepared = PreparedEvidence::new(&evidence);
    let (result, stats) = component.grade(&grader, &config, &prepared, Some(workspace));
    println!("grader:    {grader} ({})", args.file.display());
    let code = match result {
        Ok(verdict) => {
            println!(
                "verdict:   {} (score {:.2})",
                if verdict.pass { "pass" } else { "fail" },
                verdict.score
            );
            if !verdict.message.is_empty() {
                println!("message:   {}", verdict.message);
            }
            if verdict.pass {
                exit::OK
            } else {
                exit::EVAL_FAILED
            }
        }
        Err(error) => {
            println!("verdict:   error: {error}");
            exit::EVAL_FAILED
        }
    };
    println!("fuel used: {} of {}", stats.fuel_used, host.limits().fuel);
    println!("time:      {:.3} ms", stats.duration.as_secs_f64() * 1e3);
    for (name, text) in [("stdout", &stats.stdout), ("stderr", &stats.stderr)] {
        if !text.is_empty() {
            println!("{name}:\n{text}");
        }
    }
    Ok(code)
}
