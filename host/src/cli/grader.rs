//! `evalhost grader check|test|new`: the grader author's tools.

mod judge_answers;

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use clap::Subcommand;

use super::{Failure, exit};
use crate::evidence::Evidence;
use crate::grader::{
    ComponentReport, GraderComponent, GraderHost, Limits, PreparedEvidence, default_cache_dir,
};
use crate::scaffold::{Lang, ScaffoldOptions, scaffold};
use judge_answers::TestJudge;

/// `writeln!` into a `String` (which cannot fail).
macro_rules! outln {
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, $($arg)*);
    }};
}

/// Print `out` and return `code`. A closed stdout (`| head`) is not an error worth a panic.
fn print(out: String, code: u8) -> u8 {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    code
}

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
  evalhost grader test tone.wasm --evidence E.json --config C.json --judgments cases/judgments.jsonl
  evalhost grader test tone.wasm --evidence E.json --config C.json \\
      --judge-answer '{\"score\": 0.9, \"reason\": \"polite\"}'

A grader that asks the judge is answered from --judgments (keyed by [judge]'s model, as
`evalhost run` replays; without [judge], the model the file was recorded with) or by
--judge-answer (the Nth answers the Nth question of the call, the last every later one);
with neither, a judge question is an error naming both.

Exit status: 0 pass; 1 fail, a grader error or a judge question without an answer; 2 bad
input (files, config, a malformed judgments file).")]
    Test(TestArgs),
    /// Scaffold a grader project (build.sh, README, an example case) in one language.
    #[command(after_help = "Examples:
  evalhost grader new no-secrets --lang python
  evalhost grader new no-secrets --lang rust --sdk ~/src/evalhost/sdk
  evalhost grader new tone --lang c --judge
  cd no-secrets && ./build.sh && evalhost grader check grader.wasm && evalhost run cases/example.yaml

Every language targets the newest grader WIT, 0.5.0: the grader describes its config
(`describe`, shown by `grader test`), takes the run's evidence once (`begin-run`) and grades
each of the run's entries against it (`grade-in-run`), and gives a message on a pass as on
a fail. Python, JavaScript and C projects carry a copy of the WIT in wit/grader.wit; a Rust
project gets it from the evalhost-sdk crate.

Exit status: 0 created; 2 bad name, the directory exists, or the files could not be written.")]
    New(NewArgs),
}

/// `evalhost grader new`.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// Project name, kebab-case (the grader gets the snake_case name: `no-secrets` → `no_secrets`).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Language of the grader.
    #[arg(long, value_enum)]
    pub lang: Lang,
    /// Directory to create the project in.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Path of the evalhost-sdk crate (Rust; default: the `sdk/` of the source tree this
    /// evalhost was built from, when it exists).
    #[arg(long, value_name = "PATH")]
    pub sdk: Option<PathBuf>,
    /// Scaffold a grader that asks the judge model to score a rubric (any language), with an
    /// example case that grants it (`judge: true`) and a README on recording judgments.
    #[arg(long)]
    pub judge: bool,
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
    /// Grade this many times (fresh instance each) and print the time per call (p50, min, max).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub repeat: u32,
    /// Answer the grader's judge questions from these recorded judgments (`judgments.jsonl`,
    /// as `evalhost run --judge record` writes it); a question it lacks is not recorded.
    #[arg(long, value_name = "FILE.jsonl", conflicts_with = "judge_answer")]
    pub judgments: Option<PathBuf>,
    /// Answer the grader's judge questions with this text (`@FILE`: the file's text).
    /// Repeatable: the Nth answers the call's Nth question, the last every question after it.
    #[arg(long, value_name = "TEXT|@FILE")]
    pub judge_answer: Vec<String>,
}

/// Run an `evalhost grader` subcommand.
pub fn grader(args: GraderArgs) -> Result<u8, Failure> {
    match args.command {
        GraderCommand::Check(check) => self::check(check),
        GraderCommand::Test(test) => self::test(test),
        GraderCommand::New(new) => self::new(new),
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
    let mut out = String::new();
    let host = host()?;
    let (_, report) = load(&host, &args.file)?;
    if args.strict {
        report.strict().map_err(Failure::usage)?;
    }
    if args.json {
        let json = serde_json::to_string_pretty(&report)
            .context("failed to encode the report")
            .map_err(Failure::internal)?;
        outln!(out, "{json}");
        return Ok(print(out, exit::OK));
    }
    outln!(out, "ok: {} is an evalhost grader component", report.origin);
    if report.world_version == report.newest_world_version {
        outln!(
            out,
            "  world:   evalhost:grader@{} (the newest)",
            report.world_version
        );
    } else {
        outln!(
            out,
            "  world:   evalhost:grader@{} (newest: {}; docs/writing-graders.md#compatibility)",
            report.world_version,
            report.newest_world_version
        );
        for (i, missing) in report.missing.iter().enumerate() {
            let label = if i == 0 { "missing:" } else { "" };
            outln!(out, "  {label:<8} {missing}");
        }
    }
    outln!(out, "  sha256:  {}", report.digest);
    outln!(out, "  size:    {} bytes", report.size);
    outln!(
        out,
        "  imports: {} (all granted by the sandbox)",
        if report.imports.is_empty() {
            "none".to_owned()
        } else {
            report.imports.join(", ")
        }
    );
    if !report.denied_imports.is_empty() {
        outln!(
            out,
            "  denied:  {} (linked, but every call is refused: no network)",
            report.denied_imports.join(", ")
        );
    }
    outln!(out, "  graders:");
    for info in &report.graders {
        outln!(out, "    {} {}: {}", info.name, info.version, info.summary);
        outln!(out, "      config schema: {}", info.config_schema);
    }
    Ok(print(out, exit::OK))
}

fn test(args: TestArgs) -> Result<u8, Failure> {
    let mut out = String::new();
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
    let judge = TestJudge::from_args(args.judgments.as_deref(), &args.judge_answer)?;
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
    let description = component.describe(&grader, &config);
    let prepared = PreparedEvidence::new(&evidence);
    let grade = || {
        component.grade_with_judge(
            &grader,
            &config,
            &prepared,
            Some(workspace),
            Some(judge.grant()),
        )
    };
    let (result, stats) = grade();
    outln!(out, "grader:    {grader} ({})", args.file.display());
    match description {
        Some(Ok(text)) => outln!(out, "checks:    {text}"),
        Some(Err(error)) => outln!(out, "checks:    (describe failed: {error})"),
        None => {}
    }
    if let Some(answered) = judge.answered(stats.judge.calls) {
        outln!(out, "judge:     {answered}");
    }
    let code = match result {
        Ok(verdict) => {
            outln!(
                out,
                "verdict:   {} (score {:.2})",
                if verdict.pass { "pass" } else { "fail" },
                verdict.score
            );
            if !verdict.message.is_empty() {
                outln!(out, "message:   {}", verdict.message);
            }
            if verdict.pass {
                exit::OK
            } else {
                exit::EVAL_FAILED
            }
        }
        Err(error) => {
            outln!(out, "verdict:   error: {error}");
            if let Some(hint) = judge.hint(&error) {
                outln!(out, "hint:      {hint}");
            }
            exit::EVAL_FAILED
        }
    };
    outln!(
        out,
        "fuel used: {} of {}",
        stats.fuel_used,
        host.limits().fuel
    );
    outln!(
        out,
        "time:      {:.3} ms",
        stats.duration.as_secs_f64() * 1e3
    );
    if args.repeat > 1 {
        let mut times: Vec<std::time::Duration> =
            (1..args.repeat).map(|_| grade().1.duration).collect();
        times.push(stats.duration);
        times.sort();
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        outln!(
            out,
            "per call:  p50 {:.3} ms, min {:.3} ms, max {:.3} ms over {} calls",
            ms(times[times.len() / 2]),
            ms(times[0]),
            ms(times[times.len() - 1]),
            times.len()
        );
    }
    for (name, text) in [("stdout", &stats.stdout), ("stderr", &stats.stderr)] {
        if !text.is_empty() {
            outln!(out, "{name}:\n{text}");
        }
    }
    Ok(print(out, code))
}

fn new(args: NewArgs) -> Result<u8, Failure> {
    let mut out = String::new();
    let sdk = args.sdk.or_else(|| {
        let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
        built_from
            .join("Cargo.toml")
            .is_file()
            .then(|| built_from.canonicalize().unwrap_or(built_from))
    });
    let options = ScaffoldOptions {
        name: args.name,
        lang: args.lang,
        parent: args.dir,
        sdk,
        judge: args.judge,
    };
    let (dir, files) = scaffold(&options).map_err(Failure::usage)?;
    outln!(
        out,
        "created {} ({} grader `{}`):",
        dir.display(),
        options.lang.as_str(),
        crate::scaffold::grader_name(&options.name)
    );
    for file in files {
        outln!(out, "  {file}");
    }
    if options.judge {
        outln!(
            out,
            "next: cd {} && ./build.sh && evalhost grader check grader.wasm; set [judge] in evalhost.toml, then evalhost run --judge record cases/example.yaml (once) and evalhost run cases/example.yaml (replays)",
            dir.display()
        );
    } else {
        outln!(
            out,
            "next: cd {} && ./build.sh && evalhost grader check grader.wasm && evalhost run cases/example.yaml",
            dir.display()
        );
    }
    Ok(print(out, exit::OK))
}
