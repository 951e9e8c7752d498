//! Raw command-line arguments (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

const AFTER_HELP: &str = "\
Examples:
  evalhost run cases/mino
  evalhost check cases/mino cases/nexus
  evalhost list cases/nexus
  evalhost help run

Exit status:
  0  every case passed every run
  1  some case did not pass every run (`Error: Eval failed: ...`)
  2  bad usage, or an invalid case file or grader config
  3  evalhost itself failed (I/O, engine setup)
  130  interrupted (Ctrl-C / SIGTERM); the report of the runs that finished was printed";

/// Evaluate LLM agents; every grader is a sandboxed WebAssembly component.
#[derive(Debug, Parser)]
#[command(name = "evalhost", version, after_help = AFTER_HELP)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
    /// Colour pass/fail words and `Error:` lines: auto (only on a terminal, and not when
    /// NO_COLOR is set), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value_t = clap::ColorChoice::Auto)]
    pub color: clap::ColorChoice,
    /// No progress bar (the report and errors are printed as usual).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run eval cases and print the report.
    #[command(after_help = concat!("Examples:
  evalhost run cases/mino
  evalhost run --filter bash --out out/ cases/mino
  evalhost run --runs 3 cases/mino/bash-denied.yaml
  evalhost run --live --runs 5 --k 2 cases/mino
  evalhost run --junit junit.xml --html report.html cases/mino
  evalhost run --agent oracle cases/harbor
  evalhost run --environment debian:bookworm my-suite/

", "Exit status:
  0  every case passed every run
  1  some case did not pass every run
  2  bad usage, or an invalid case file or grader config
  3  evalhost itself failed
  130  interrupted (Ctrl-C / SIGTERM); the report of the runs that finished was printed"))]
    Run(Box<RunArgs>),
    /// List cases without running them: name, format, runs, tags and the graders each uses.
    #[command(after_help = "Examples:
  evalhost list cases/mino
  evalhost list cases/mino cases/nexus cases/agentcompany
  evalhost list --json cases/mino | jq -r '.[].name'

Exit status: 0 listed; 2 a path or case file is invalid.")]
    List(crate::cli::list::ListArgs),
    /// Validate cases, grader references and grader configs without running anything.
    #[command(after_help = "Examples:
  evalhost check cases/mino
  evalhost check cases/mino/bash-denied.yaml my-suite/

Exit status: 0 everything is valid (`ok: N cases, M grader entries`); 2 some case, grader
reference or config is invalid (each error is printed with file:line:col and field).")]
    Check(crate::cli::check::CheckArgs),
    /// List the graders evalhost provides, with a one-line summary each.
    #[command(after_help = "Examples:
  evalhost graders
  evalhost graders | grep ^tool_

Exit status: 0; 3 the built-in graders failed to load.")]
    Graders,
    /// Record a live run against the configured provider: a replay case or an AgentCompany fixture.
    ///
    /// `--live CASE` runs a case once (its agent, or a real agent with `--agent NAME`) and writes
    /// it as a replay case; without `--live`, it records an AgentCompany fixture. Needs the
    /// provider's API key.
    Record(crate::cli::record::RecordArgs),
    /// Turn a recorded session (evalhost session log or Nexus journal) into a Nexus case directory.
    #[command(after_help = "Examples:
  evalhost promote --session out/greet/run-1.jsonl --case greet
  evalhost promote --session ~/.nexus/sessions/20260501-1200/journal --case build-fix --force

Exit status: 0 promoted; 2 bad session or the case exists (use --force); 3 write failed.")]
    Promote(crate::cli::promote::PromoteArgs),
    /// Grader authors' tools: check a component, grade saved evidence, scaffold a grader.
    #[command(after_help = "Examples:
  evalhost grader new no-secrets --lang rust
  evalhost grader check grader.wasm
  evalhost grader test grader.wasm --evidence out/greet/run-1.evidence.json")]
    Grader(crate::cli::grader::GraderArgs),
    /// Vetted grader bundles: pack, sign, verify, install, push to and install from OCI registries.
    #[command(after_help = "Examples:
  evalhost bundle pack graders/bundles/acme-checks
  evalhost bundle sign acme-checks-1.0.0.tar.gz --key ~/.ssh/id_ed25519
  evalhost bundle install acme-checks-1.0.0.tar.gz --allowed-signers allowed_signers
  evalhost bundle push acme-checks-1.0.0.tar.gz oci://ghcr.io/acme/checks:1.0.0
  evalhost bundle install oci://ghcr.io/acme/checks:1.0.0")]
    Bundle(crate::cli::bundle::BundleArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "Examples:
  evalhost completions bash > ~/.local/share/bash-completion/completions/evalhost
  evalhost completions zsh > ~/.zfunc/_evalhost
  evalhost completions fish > ~/.config/fish/completions/evalhost.fish

Exit status: 0; 2 unknown shell.")]
    Completions(crate::cli::completions::CompletionsArgs),
    /// Print a JSON Schema: `case` is the case YAML format (for editors' YAML language server).
    #[command(after_help = "Examples:
  evalhost schema case > schema/case.schema.json
  # first line of a case file, for the YAML language server:
  # yaml-language-server: $schema=../../schema/case.schema.json

Exit status: 0; 2 unknown schema name.")]
    Schema(crate::cli::schema::SchemaArgs),
    /// Re-grade the saved evidence of `run --out DIR` with the graders of the case files, and
    /// print how the verdicts changed.
    #[command(
        after_help = "The agent and model do not run again: each saved run's evidence and \
workspace snapshot (DIR/<case>/run-N.evidence.json, run-N.workspace/) are graded with the graders \
the case files declare now. Cases are looked up by name in PATHS (default: the case paths \
recorded in DIR/report.json).

Examples:
  evalhost grade --evidence out/
  evalhost grade --evidence out/ cases/mino -o regraded.json

Exit status:
  0  every case passed every run
  1  some case did not pass every run
  2  bad usage, unreadable DIR, a case missing from PATHS, or an invalid grader config
  3  evalhost itself failed"
    )]
    Grade(crate::cli::grade::GradeArgs),
    /// Compare two runs of a suite case by case, with the statistics stated; fail when a case
    /// regressed with evidence.
    #[command(
        after_help = "A and B are JSON reports (`report.json`, or the `--out` directory holding \
it). Cases are matched by name. Per case: Fisher's exact test (two-sided) on the passes of each \
side, Benjamini-Hochberg q-values across the cases (--alpha, default 5%); each case regressed, \
improved, shows no evidence of a change, or has too few runs to tell (with the runs a side that \
would detect a 20-point change with 80% power). Over the suite: the Wilcoxon signed-rank test on \
the cases' pass-rate differences. Cases whose outcome changed come first. docs/history.md says \
how each number is computed.

Examples:
  evalhost compare main-out/ out/
  evalhost compare --json old/report.json new/report.json | jq '.cases[0]'

Exit status:
  0  no case regressed with evidence
  1  some case regressed with evidence (`Error: Compare failed: ...`)
  2  bad usage, or a report is unreadable or of another schema version"
    )]
    Compare(crate::cli::compare::CompareArgs),
    /// Compare a JSON report with a baseline report (`compare` with limits); fail on regressions.
    #[command(
        after_help = "The comparison of `evalhost compare`, with the baseline as A: a regression \
is a case whose pass rate dropped with evidence (Fisher's exact test, Benjamini-Hochberg at \
--alpha) by more than --max-drop, or whose mean tokens or duration per run grew beyond the limits \
(duration growth under --min-latency-growth-ms is ignored). Cases in one report only are listed.

Examples:
  evalhost baseline --against main/report.json out/report.json
  evalhost baseline --against main/ out/ --max-drop 0 --max-latency-growth inf

Exit status:
  0  no regression
  1  some regression (`Error: Baseline failed: ...`)
  2  bad usage, or a report is unreadable or of another schema version"
    )]
    Baseline(crate::cli::baseline::BaselineArgs),
    /// Work with saved JSON reports: merge the reports of a partitioned suite.
    #[command(after_help = "Examples:
  evalhost run --partition hash:1/2 --out shard-1 cases/
  evalhost run --partition hash:2/2 --out shard-2 cases/
  evalhost report merge shard-1/report.json shard-2/report.json -o report.json")]
    Report(crate::cli::report::ReportArgs),
    /// Runs remembered: list them, import runs made elsewhere, collect old ones, find flaky cases.
    #[command(
        after_help = "Every `evalhost run` is recorded in the history store (--no-history \
to skip): .evalhost/history.db in the project directory unless --history, EVALHOST_HISTORY or \
[history] store in evalhost.toml say otherwise (a SQLite file, or postgres://... for a team's \
shared history). docs/history.md.

Examples:
  evalhost history
  evalhost history --branch main --limit 5
  evalhost history import ci-artifacts/shard-*/ merged-report.json
  evalhost history gc --keep-runs 200 --keep-days 90
  evalhost history flaky

Exit status: 0 done; 2 bad usage, or the store is missing, corrupt or from a newer evalhost."
    )]
    History(crate::cli::history::HistoryArgs),
    /// Browse the history in a web browser: runs, cases, transcripts, comparisons (a local,
    /// read-only server on 127.0.0.1).
    #[command(
        after_help = "Serves the history store (the one `evalhost history` reads) as web \
pages on 127.0.0.1 only, read-only, every asset built in (no network). Prints the address and \
runs until Ctrl-C. docs/history.md, \"evalhost view\".

Examples:
  evalhost view
  evalhost view --open --port 8700
  evalhost view --history postgres://ci@db.internal/evals

Exit status: 0 stopped by Ctrl-C / SIGTERM; 2 bad usage, a port in use, or the store is missing, corrupt or from a newer evalhost."
    )]
    View(crate::cli::view::ViewArgs),
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Case files, AgentCompany fixtures (`*.jsonl`), Nexus case directories, Harbor task
    /// directories (`task.toml`), or directories of them (searched recursively, in name order).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Runs per case (1–32; default 1, 3 with --live); a case's own `runs` field overrides it.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub runs: Option<u32>,
    /// Run against the configured provider (`[provider]` in evalhost.toml) instead of each
    /// case's model script; cases with `live: false` are skipped.
    #[arg(long)]
    pub live: bool,
    /// With --live: stop once the provider's requests cost USD (the price table's price of the
    /// model, retries included): no further request is sent, no further run starts, and the
    /// report covers what finished (docs/cost.md). The model needs a price.
    #[arg(long, value_name = "USD", requires = "live", value_parser = parse_usd)]
    pub max_cost: Option<f64>,
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
    /// of evalhost's own agent, for every case that would run the agent, and instead of the
    /// agent a case's own `agent:` names (a note names those cases).
    #[arg(long, value_name = "CMD", conflicts_with = "agent")]
    pub agent_cmd: Option<String>,
    /// Run this real agent against evalhost's loopback model endpoint, offline, instead of
    /// evalhost's own agent (docs/agents.md): `codex`, `claude-code`, `pi`, `mini-swe-agent`,
    /// `gemini-cli` for every case that would run the agent (installed on PATH, at `[agents]
    /// NAME = PATH` in evalhost.toml, or EVALHOST_AGENT_<NAME>); `pi-agent-core` replays AgentCompany
    /// fixtures through `@mariozechner/pi-agent-core`'s Agent loop (the Node adapter in
    /// agents/pi-agent-core; fixtures must be recorded with its installed version). A preset
    /// also runs instead of the agent a case's own `agent:` names; a note names those cases.
    /// `oracle` runs each case's solution instead (a Harbor task's `solution/solve.sh`, in
    /// its container), proving the task solvable (docs/harbor.md).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<AgentChoice>,
    /// Run every case that names no environment of its own in a container of this image
    /// (`NAME[:TAG]`, `NAME@sha256:DIGEST`), or of the environment map in this YAML file
    /// (a case's `environment:`; docs/case-format.md).
    #[arg(long, value_name = "IMAGE|FILE")]
    pub environment: Option<String>,
    /// Keep session logs, evidence and report.json in this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write the report as JUnit XML (one testcase per case) to this file, for CI.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write a self-contained HTML report (summary chart, transcripts, verdicts,
    /// workspace diffs) to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub otel: super::otel::OtelArgs,
    /// Seconds each run's agent may take (its turns, or the external agent; fractions
    /// allowed), overriding every case's `timeout_secs` (default: the case's, else 600). On
    /// expiry every process of the run is killed and the run errors: `turn failed: timed out
    /// after N s`.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    pub timeout: Option<f64>,
    /// Runs made concurrently (default: four per core; a suite with external agents at most
    /// one per 512 MiB of memory available; at most 128).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=128))]
    pub jobs: Option<u32>,
    /// Run only shard M of N: `hash:M/N` (by a hash of the case name; a case keeps its shard
    /// as the suite changes) or `slice:M/N` (round-robin in load order; even sizes). Applied
    /// after --filter and --tags. Merge the shards' reports with `evalhost report merge`.
    #[arg(long, value_name = "hash:M/N")]
    pub partition: Option<crate::runner::Partition>,
    #[command(flatten)]
    pub judge: crate::cli::judge::JudgeArgs,
    /// Fail a run on every not-evaluable verdict, also one the evidence cannot answer by
    /// its nature (an event a journal never holds), which is otherwise a warning; one whose
    /// grader needs something never recorded (a judgment) fails it anyway (docs/reports.md).
    #[arg(long)]
    pub strict: bool,
    /// Refuse a case whose environment's image is no longer the one it was recorded with
    /// (its `digest:`; a tag that moved), instead of warning (docs/environments.md).
    #[arg(long)]
    pub locked_images: bool,
    #[command(flatten)]
    pub history: crate::cli::history::RecordingArgs,
    /// Finish an interrupted run: the runs it recorded of cases with the same content
    /// (digest) are taken from it, not made again, and the report covers the whole suite.
    /// `--resume=RUN`: a run id (or 4+ of its digits), `latest`, `BRANCH@latest`; `--resume`
    /// alone: the newest run in the history that did not finish.
    #[arg(long, value_name = "RUN", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub resume: Option<String>,
    /// Let every run's processes also read (and execute) this path (repeatable); by default
    /// they read the system but not your home (docs/security.md).
    #[arg(long, value_name = "PATH")]
    pub confine_read: Vec<PathBuf>,
    /// Let every run's processes also write this path (repeatable); by default they write
    /// only the run's workspace, HOME and TMPDIR.
    #[arg(long, value_name = "PATH")]
    pub confine_write: Vec<PathBuf>,
    /// Let every run's processes also connect to this TCP port (repeatable), or to every
    /// port (`any`); by default only the model endpoint's.
    #[arg(long, value_name = "PORT|any", value_parser = parse_connect)]
    pub confine_connect: Vec<Connect>,
    /// Run the agent's processes unconfined, with your full rights.
    #[arg(long, conflicts_with_all = ["confine_read", "confine_write", "confine_connect", "require_confinement"])]
    pub no_confine: bool,
    /// Refuse to run (exit 2) when this kernel cannot give every protection of the
    /// confinement, instead of running with what it has.
    #[arg(long)]
    pub require_confinement: bool,
}

/// A `--confine-connect` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connect {
    Port(u16),
    Any,
}

fn parse_connect(text: &str) -> Result<Connect, String> {
    match text.trim() {
        "any" => Ok(Connect::Any),
        port => match port.parse::<u16>() {
            Ok(port) if port > 0 => Ok(Connect::Port(port)),
            _ => Err(format!(
                "expected a TCP port (1 to 65535) or `any`, found `{text}`"
            )),
        },
    }
}

/// `--timeout SECS`: as a case's `timeout_secs`.
/// `--max-cost`: an amount of USD above 0 (`0.50`, `$2`).
fn parse_usd(text: &str) -> Result<f64, String> {
    let amount: f64 = text
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("expected an amount of USD, found `{text}`"))?;
    if amount.is_finite() && amount > 0.0 {
        Ok(amount)
    } else {
        Err(format!("{amount} is not an amount of USD above 0"))
    }
}

fn parse_timeout(text: &str) -> Result<f64, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of seconds, found `{text}`"))?;
    crate::case::check_timeout_secs(secs)
}

/// What `--agent NAME` names: a real agent's preset, or pi-agent-core's Agent loop for
/// AgentCompany fixtures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentChoice {
    Preset(crate::agent_preset::Preset),
    PiAgentCore,
    /// Each case's own solution (a Harbor task's `solution/solve.sh`).
    Oracle,
}

/// What `--agent oracle` names.
pub const ORACLE: &str = "oracle";

impl std::str::FromStr for AgentChoice {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        use crate::agent_preset::Preset;
        use crate::case::agentcompany::pi_agent_core::AGENT_NAME;
        if name == AGENT_NAME {
            return Ok(Self::PiAgentCore);
        }
        if name == ORACLE {
            return Ok(Self::Oracle);
        }
        name.parse().map(Self::Preset).map_err(|_| {
            let known: Vec<&str> = Preset::ALL.iter().map(|p| p.as_str()).collect();
            format!(
                "unknown agent `{name}` (known: {}, {AGENT_NAME}, {ORACLE})",
                known.join(", ")
            )
        })
    }
}
