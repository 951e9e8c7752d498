//! A suite as `evalhost run` runs it, for the CLI and for embedders alike: which cases (load,
//! `filter`, `tags`, `partition`), which agent (the cases' own, a command, a preset,
//! pi-agent-core), replay or live with its limits, grader bundles and trust, and the run
//! options; [`Suite::plan`] applies every policy and reports every problem before anything
//! runs, [`Plan::run`] runs what is left.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use evalhost::Suite;
//!
//! let plan = Suite::new(["cases/mino"]).filter("write").runs(2).plan()?;
//! for note in &plan.notes {
//!     println!("{note}");
//! }
//! let report = plan.run().await?;
//! assert_eq!(report.failed_cases()?, 0);
//! # Ok(())
//! # }
//! ```

mod agents;
mod error;
mod planner;

pub(crate) use agents::locate_agents;
pub use error::SuiteError;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::agent::Limits;
use crate::agent_preset::Preset;
use crate::api::Provider;
use crate::bundle::BundleResolver;
use crate::case::agentcompany::{FixtureOptions, PiAgentCore, PiAgentCoreError};
use crate::case::{
    CaseError, ExternalAgent, LoadOptions, RESIDENT_BYTES, Spool, load_each_spooled,
};
use crate::config::{ConfigSources, ProviderConfig};
use crate::environment::Environment;
use crate::grader::GraderHost;
use crate::model::LiveModel;
use crate::report::SuiteReport;
use crate::runner::{
    Jobs, Machine, Parking, Partition, PlannedCase, RunError, RunOptions, run_planned,
};
use planner::{Planner, Policies};

/// Runs per case in live mode unless `runs` says otherwise (replay: 1).
pub(crate) const DEFAULT_LIVE_RUNS: u32 = 3;

/// The agent every case that runs evalhost's own agent runs instead.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AgentOverride {
    /// A command line, run by `sh -c` (`--agent-cmd`).
    Command(String),
    /// A real agent's preset (`--agent codex`).
    Preset(Preset),
    /// AgentCompany fixtures through pi-agent-core's `Agent` (`--agent pi-agent-core`); the
    /// fixtures' `meta.piAgentCoreVersion` is checked against this adapter's version.
    PiAgentCore(PiAgentCore),
    /// Each case's own solution, as Harbor's oracle agent (`--agent oracle`): a Harbor task's
    /// `solution/solve.sh`, run in its container, proving the task solvable. A case without a
    /// solution or an environment is a plan error.
    Oracle,
}

/// A suite to plan and run. Every setter has the default of `evalhost run` without the flag.
#[derive(Debug)]
pub struct Suite {
    paths: Vec<PathBuf>,
    filter: Option<String>,
    tags: Vec<String>,
    partition: Option<Partition>,
    agent: Option<AgentOverride>,
    environment: Option<Environment>,
    expected_agent_core_version: Option<String>,
    live: Option<LiveProvider>,
    runs: Option<u32>,
    config: Option<ConfigSources>,
    bundles: BundleResolver,
    host: Option<GraderHost>,
    resident_case_bytes: usize,
    /// `--max-cost`, USD.
    max_cost: Option<f64>,
    /// `--jobs`; `None`: the plan chooses from the cases and the machine (`runner::Jobs`).
    jobs: Option<usize>,
    options: RunOptions,
}

/// A planned suite: its cases, prepared (graders bound and checked), and what the plan decided
/// that a user should read (pi-agent-core's version, the partition's share, skipped cases).
#[derive(Debug)]
#[non_exhaustive]
pub struct Plan {
    /// The cases that will run, in load order (those past the suite's memory budget wait in
    /// its spool: [`Suite::resident_case_bytes`]).
    pub cases: Vec<PlannedCase>,
    /// Lines to show before the runs, in order (`Partition hash:1/2: 8 cases in this shard.`).
    pub notes: Vec<String>,
    /// The options the runs get (runs, k, limits, live endpoint, located agents, ...).
    pub options: RunOptions,
}

impl Suite {
    /// The case files and directories of a suite (each as `evalhost run PATH...` takes them).
    pub fn new<P: Into<PathBuf>>(paths: impl IntoIterator<Item = P>) -> Self {
        Self {
            paths: paths.into_iter().map(Into::into).collect(),
            filter: None,
            tags: Vec::new(),
            partition: None,
            agent: None,
            environment: None,
            expected_agent_core_version: None,
            live: None,
            runs: None,
            config: None,
            bundles: BundleResolver::default(),
            host: None,
            resident_case_bytes: RESIDENT_BYTES,
            max_cost: None,
            jobs: None,
            options: RunOptions::default(),
        }
    }

    /// Live mode's budget (`--max-cost`): once the provider's requests cost `usd` (the price
    /// table's price of the model, retries included), no further request is sent and no
    /// further run starts (docs/cost.md). The model needs a price; replay is free and
    /// ignores it.
    pub fn max_cost(mut self, usd: f64) -> Self {
        self.max_cost = Some(usd);
        self
    }

    /// Only cases whose name contains `text` (`--filter`).
    pub fn filter(mut self, text: impl Into<String>) -> Self {
        self.filter = Some(text.into());
        self
    }

    /// Only cases that have every one of `tags` (`--tags`).
    pub fn tags<T: Into<String>>(mut self, tags: impl IntoIterator<Item = T>) -> Self {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Only this CI shard's cases (`--partition`).
    pub fn partition(mut self, partition: Partition) -> Self {
        self.partition = Some(partition);
        self
    }

    /// Run this agent in every case that runs an agent (`--agent-cmd`, `--agent`): instead of
    /// evalhost's own, and instead of the one a case's `agent:` names (the plan's notes name
    /// those cases); a case naming the same preset keeps its `args`.
    pub fn agent(mut self, agent: AgentOverride) -> Self {
        self.agent = Some(agent);
        self
    }

    /// Run every case that names no environment of its own in this one (`--environment`):
    /// its runs' commands execute in a container of this image (`crate::case::environment_arg`
    /// reads the flag's value). Cases that run no agent (recorded sessions, recorded tool
    /// results) are left as they are.
    pub fn environment(mut self, environment: Environment) -> Self {
        self.environment = Some(environment);
        self
    }

    /// The pi-agent-core version AgentCompany fixtures must record
    /// (`--expect-agent-core-version`); with [`AgentOverride::PiAgentCore`], the adapter's.
    pub fn expect_agent_core_version(mut self, version: impl Into<String>) -> Self {
        self.expected_agent_core_version = Some(version.into());
        self
    }

    /// Live mode (`--live`): runs talk to this provider instead of their case's script; cases
    /// marked `live: false` and recorded ones are skipped (a note says which), the agent's
    /// request timeout covers the provider's retries, and runs default to
    /// `DEFAULT_LIVE_RUNS`.
    pub fn live(mut self, provider: Provider) -> Self {
        self.live = Some(LiveProvider::Given(Box::new(provider)));
        self
    }

    /// [`Suite::live`] with the provider of the configuration (`[provider]`, `EVALHOST_*`,
    /// its API key), made when planning, after the cases are selected.
    pub fn live_from_config(mut self) -> Self {
        self.live = Some(LiveProvider::FromConfig);
        self
    }

    /// Runs per case unless the case sets `runs` (`--runs`).
    pub fn runs(mut self, runs: u32) -> Self {
        self.runs = Some(runs);
        self
    }

    /// k of pass@k and pass^k (`--k`); planning refuses a k above a case's runs.
    pub fn k(mut self, k: u32) -> Self {
        self.options.k = Some(k);
        self
    }

    /// Runs in flight (`--jobs`). Without it the plan chooses: four per core, and for a suite
    /// with a case that runs an external agent at most one run per 512 MiB of the memory
    /// available (docs/cli.md, "Where runs happen, and how many at once").
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = Some(jobs);
        self
    }

    /// Seconds every run's agent may take (`--timeout`), over each case's `timeout_secs`.
    pub fn timeout_secs(mut self, seconds: f64) -> Self {
        self.options.timeout_secs = Some(seconds);
        self
    }

    /// Fail a run on every not-evaluable verdict (`--strict`), also one the evidence cannot
    /// answer by its nature, which is otherwise a warning; a verdict whose grader needs
    /// something never recorded (a judgment) fails its run either way.
    pub fn strict(mut self) -> Self {
        self.options.strict = true;
        self
    }

    /// Where configuration comes from (`[agents]`, `EVALHOST_AGENT_*`); default: the process's.
    pub fn config(mut self, sources: ConfigSources) -> Self {
        self.config = Some(sources);
        self
    }

    /// Installed grader bundles, the lock and the trust policy that `bundle/grader` references
    /// and `.wasm` paths are bound with (default: none installed, default trust).
    pub fn bundles(mut self, bundles: BundleResolver) -> Self {
        self.bundles = bundles;
        self
    }

    /// The grader host (default: the built-in graders).
    pub fn grader_host(mut self, host: GraderHost) -> Self {
        self.host = Some(host);
        self
    }

    /// Keep at most this many bytes of planned cases in memory while the suite runs, counted
    /// as their bulky parts (seeded files, scripts, later user turns, recordings) plus ~2 KB a
    /// case; past it, each case waits whole in a temp file and is read back for each run
    /// (default [`RESIDENT_BYTES`]; [`PlannedCase::is_parked`]).
    pub fn resident_case_bytes(mut self, bytes: usize) -> Self {
        self.resident_case_bytes = bytes;
        self
    }

    /// Change any other run option (`--out`, the judge, confinement, progress, details,
    /// the cancel token).
    pub fn options(mut self, change: impl FnOnce(&mut RunOptions)) -> Self {
        let jobs = self.options.jobs;
        change(&mut self.options);
        // Jobs changed here are given, as by `jobs`.
        if self.options.jobs != jobs {
            self.jobs = Some(self.options.jobs);
        }
        self
    }

    /// Load, select and prepare the suite's cases. Every problem of loading (including cases
    /// filtered out) and of the graders of the cases that loaded is reported at once.
    pub fn plan(self) -> Result<Plan, SuiteError> {
        let Suite {
            paths,
            filter,
            tags,
            partition,
            agent,
            environment,
            expected_agent_core_version,
            live: live_provider,
            runs,
            config,
            mut bundles,
            host,
            resident_case_bytes,
            max_cost,
            jobs,
            mut options,
        } = self;
        let live = live_provider.is_some();
        let load_options = LoadOptions {
            fixtures: FixtureOptions {
                expected_agent_core_version: match &agent {
                    Some(AgentOverride::PiAgentCore(adapter)) => Some(adapter.version().to_owned()),
                    _ => expected_agent_core_version,
                },
            },
        };
        let host = match host {
            Some(host) => host,
            None => GraderHost::with_builtins().map_err(SuiteError::BuiltinGraders)?,
        };
        let mut notes = Vec::new();
        // The flag whose agent replaces the cases' own, as the note names it.
        let replacing = match &agent {
            Some(AgentOverride::Command(_)) => "--agent-cmd".to_owned(),
            Some(AgentOverride::Preset(preset)) => format!("--agent {preset}"),
            Some(AgentOverride::Oracle) => "--agent oracle".to_owned(),
            _ => String::new(),
        };
        let (pi_agent_core, replacement) = match agent {
            Some(AgentOverride::PiAgentCore(adapter)) => {
                notes.push(format!(
                    "Agent: {} {} (the adapter in {}).",
                    crate::case::agentcompany::pi_agent_core::AGENT_NAME,
                    adapter.version(),
                    adapter.dir().display()
                ));
                (Some(adapter), None)
            }
            Some(AgentOverride::Command(command)) => (None, Some(ExternalAgent::shell(&command))),
            Some(AgentOverride::Oracle) => (None, Some(ExternalAgent::Oracle)),
            Some(AgentOverride::Preset(preset)) => (
                None,
                Some(ExternalAgent::Preset {
                    preset,
                    args: Vec::new(),
                }),
            ),
            None => (None, None),
        };
        options.runs = runs.unwrap_or(if live { DEFAULT_LIVE_RUNS } else { 1 });
        let policies = Policies {
            filter,
            tags,
            live,
            pi_agent_core,
            partition,
            replacement,
            environment,
            k: options.k,
            runs: options.runs,
        };
        let spool = Spool::with_budget(resident_case_bytes);
        let mut planner = Planner::new(policies, &host, &mut bundles, Parking::new(&spool));
        load_each_spooled(&paths, &load_options, &spool, |loaded| planner.take(loaded));
        planner.prepare_batch();
        let Planner {
            policies,
            planned: cases,
            problems,
            load_failed,
            after_filter,
            after_tags,
            in_shard,
            not_fixtures,
            replay_only,
            recorded,
            k_exceeds,
            presets,
            replaced,
            replaced_named,
            kept,
            external,
            ..
        } = planner;
        if let Some(filter) = policies.filter
            && after_filter == 0
        {
            return Err(SuiteError::NoCaseMatchesFilter { filter });
        }
        if !policies.tags.is_empty() && after_tags == 0 {
            return Err(SuiteError::NoCaseHasTags {
                tags: policies.tags,
            });
        }
        if load_failed {
            return Err(SuiteError::Cases(CaseError::several(problems)));
        }
        if !not_fixtures.is_empty() {
            return Err(SuiteError::PiAgentCore(PiAgentCoreError::NotFixtures {
                paths: not_fixtures,
            }));
        }
        if replaced > 0 {
            notes.push(replaced_note(&replacing, replaced, &replaced_named));
        }
        if let Some(partition) = &policies.partition {
            // An empty shard is not an error: a suite may have fewer cases than CI has shards.
            notes.push(format!(
                "Partition {partition}: {in_shard} cases in this shard."
            ));
        }
        if live {
            notes.extend(live_notes(&replay_only, &recorded));
            if kept == 0 {
                return Err(SuiteError::NothingToRunLive);
            }
        }
        if let (Some(k), Some((case, runs))) = (options.k, k_exceeds) {
            return Err(SuiteError::KExceedsRuns { k, runs, case });
        }
        let jobs = Jobs::choose(jobs, external, Machine::this());
        options.jobs = jobs.get();
        notes.extend(jobs.note());
        let config = config.unwrap_or_else(ConfigSources::from_environment);
        options.agents = Arc::new(agents::locate_presets(
            presets.into_iter().collect(),
            &config,
        )?);
        let provider = match live_provider {
            Some(LiveProvider::Given(provider)) => Some(*provider),
            Some(LiveProvider::FromConfig) => Some(provider_from_config(&config)?),
            None => None,
        };
        // The price table (docs/cost.md): every run's cost, and `--max-cost`'s budget.
        let prices = match options.prices.take() {
            Some(prices) => prices,
            None => Arc::new(config.prices().map_err(SuiteError::Config)?),
        };
        let provider = match (provider, max_cost) {
            (Some(provider), Some(limit)) => {
                if !(limit.is_finite() && limit > 0.0) {
                    return Err(SuiteError::InvalidMaxCost { limit });
                }
                let model = &provider.config().model;
                let price = prices.price(model).ok_or_else(|| SuiteError::NoPrice {
                    model: model.clone(),
                    as_of: prices.as_of().to_owned(),
                })?;
                let budget = Arc::new(crate::api::CostBudget::new(limit, price));
                options.budget = Some(budget.clone());
                Some(provider.with_budget(budget))
            }
            (provider, _) => provider,
        };
        options.prices = Some(prices);
        if let Some(provider) = provider {
            options.agent_limits = live_agent_limits(provider.config());
            options.live = Some(Arc::new(LiveModel::new(provider)));
        }
        if !problems.is_empty() {
            return Err(SuiteError::Cases(CaseError::several(problems)));
        }
        Ok(Plan {
            cases,
            notes,
            options,
        })
    }
}

impl Plan {
    /// Run every planned case (`options.runs` times unless a case says otherwise) and grade
    /// each run; the report covers what finished, also when cancelled.
    pub async fn run(self) -> Result<SuiteReport, RunError> {
        run_planned(self.cases, &self.options).await
    }
}

/// Where a live suite's provider comes from.
#[derive(Debug)]
enum LiveProvider {
    Given(Box<Provider>),
    FromConfig,
}

/// The configured provider (`[provider]`, `EVALHOST_*`), with its API key.
pub(crate) fn provider_from_config(sources: &ConfigSources) -> Result<Provider, SuiteError> {
    let config = sources.provider().map_err(SuiteError::NoProvider)?;
    let key = config.api_key(&sources.env).map_err(SuiteError::NoApiKey)?;
    Provider::new(config, key).map_err(SuiteError::ProviderClient)
}

/// `Agent: --agent pi runs instead of the agent 2 cases name: a (preset codex), b (command
/// python3 agent.py).`: the command line's agent wins over a case's own.
fn replaced_note(flag: &str, replaced: usize, named: &[String]) -> String {
    let more = replaced - named.len();
    let more = if more > 0 {
        format!(", and {more} more")
    } else {
        String::new()
    };
    let cases = if replaced == 1 {
        "case names"
    } else {
        "cases name"
    };
    format!(
        "Agent: {flag} runs instead of the agent {replaced} {cases}: {}{more}.",
        named.join(", ")
    )
}

/// The notes of a live suite naming the cases it skips: replay-only cases (`live: false`)
/// and cases that replay a recording (nothing to run live).
fn live_notes(replay_only: &[String], recorded: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    if !replay_only.is_empty() {
        notes.push(format!(
            "Skipped replay-only cases (live: false): {}",
            replay_only.join(", ")
        ));
    }
    if !recorded.is_empty() {
        notes.push(format!(
            "Skipped cases that replay a recording (nothing to run live): {}",
            recorded.join(", ")
        ));
    }
    notes
}

/// The agent's limits in live mode: a request may take the provider's every attempt and
/// backoff, plus a margin.
pub(crate) fn live_agent_limits(config: &ProviderConfig) -> Limits {
    let attempts = config.retry.max_retries + 1;
    let budget = config.timeout * attempts + config.retry.max_delay * config.retry.max_retries;
    Limits {
        request_timeout: budget + Duration::from_secs(5),
        ..Limits::default()
    }
}
