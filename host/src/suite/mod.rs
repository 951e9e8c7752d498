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
//! assert_eq!(report.failed_cases(), 0);
//! # Ok(())
//! # }
//! ```

mod agents;
mod error;

pub use agents::locate_agents;
pub use error::SuiteError;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::agent::Limits;
use crate::agent_preset::Preset;
use crate::bundle::BundleResolver;
use crate::case::agentcompany::{FixtureOptions, PiAgentCore};
use crate::case::{
    Case, CaseError, Execution, ExternalAgent, LoadOptions, RESIDENT_BYTES, Spool,
    load_each_spooled,
};
use crate::config::{ConfigSources, ProviderConfig};
use crate::grader::GraderHost;
use crate::model::LiveModel;
use crate::provider::Provider;
use crate::report::SuiteReport;
use crate::runner::{
    Partition, PreparedCase, RunError, RunOptions, prepare_cases_with, prepare_loaded, run_suite,
};

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
}

/// A suite to plan and run. Every setter has the default of `evalhost run` without the flag.
#[derive(Debug)]
pub struct Suite {
    paths: Vec<PathBuf>,
    filter: Option<String>,
    tags: Vec<String>,
    partition: Option<Partition>,
    agent: Option<AgentOverride>,
    expected_agent_core_version: Option<String>,
    live: Option<LiveProvider>,
    runs: Option<u32>,
    config: Option<ConfigSources>,
    bundles: BundleResolver,
    host: Option<GraderHost>,
    resident_case_bytes: usize,
    options: RunOptions,
}

/// A planned suite: its cases, prepared (graders bound and checked), and what the plan decided
/// that a user should read (pi-agent-core's version, the partition's share, skipped cases).
#[derive(Debug)]
#[non_exhaustive]
pub struct Plan {
    /// The cases that will run, in load order.
    pub cases: Vec<PreparedCase>,
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
            expected_agent_core_version: None,
            live: None,
            runs: None,
            config: None,
            bundles: BundleResolver::default(),
            host: None,
            resident_case_bytes: RESIDENT_BYTES,
            options: RunOptions::default(),
        }
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

    /// Run this agent in every case that runs evalhost's own (`--agent-cmd`, `--agent`).
    pub fn agent(mut self, agent: AgentOverride) -> Self {
        self.agent = Some(agent);
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
    /// [`DEFAULT_LIVE_RUNS`].
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

    /// Runs in flight (`--jobs`).
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.options.jobs = jobs;
        self
    }

    /// Seconds every run's agent may take (`--timeout`), over each case's `timeout_secs`.
    pub fn timeout_secs(mut self, seconds: f64) -> Self {
        self.options.timeout_secs = Some(seconds);
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

    /// Keep at most this many bytes of the cases' bulky parts (seeded files, scripts, later
    /// user turns, recordings) in memory while the suite runs; the rest wait in a temp file and
    /// are read back for each run (default [`RESIDENT_BYTES`]: the memory of a suite stays
    /// about flat in its size).
    pub fn resident_case_bytes(mut self, bytes: usize) -> Self {
        self.resident_case_bytes = bytes;
        self
    }

    /// Change any other run option (`--out`, the judge, confinement, progress, details,
    /// the cancel token).
    pub fn options(mut self, change: impl FnOnce(&mut RunOptions)) -> Self {
        change(&mut self.options);
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
            expected_agent_core_version,
            live: live_provider,
            runs,
            config,
            mut bundles,
            host,
            resident_case_bytes,
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
        let spool = Spool::with_budget(resident_case_bytes);
        let mut loaded = load_each_spooled(&paths, &load_options, &spool);
        if let Some(filter) = &filter {
            loaded.retain(|c| {
                c.as_ref()
                    .map_or(true, |c| c.name.contains(filter.as_str()))
            });
            if loaded.is_empty() {
                return Err(SuiteError::NoCaseMatchesFilter {
                    filter: filter.clone(),
                });
            }
        }
        if !tags.is_empty() {
            loaded.retain(|c| {
                c.as_ref()
                    .map_or(true, |c| tags.iter().all(|t| c.tags.contains(t)))
            });
            if loaded.is_empty() {
                return Err(SuiteError::NoCaseHasTags { tags });
            }
        }
        if !live {
            for slot in loaded.iter_mut() {
                if let Ok(case) = slot
                    && let Err(problem) = case.check_replayable()
                {
                    *slot = Err(problem);
                }
            }
        }
        let host = match host {
            Some(host) => host,
            None => GraderHost::with_builtins().map_err(SuiteError::BuiltinGraders)?,
        };
        if loaded.iter().any(Result::is_err) {
            let problems = prepare_loaded(loaded, &host, &mut bundles)
                .into_iter()
                .filter_map(Result::err)
                .collect();
            return Err(SuiteError::Cases(CaseError::several(problems)));
        }
        let mut cases: Vec<Case> = loaded.into_iter().flatten().collect();
        let mut notes = Vec::new();
        let replacement = match agent {
            Some(AgentOverride::PiAgentCore(adapter)) => {
                adapter.apply(&mut cases).map_err(SuiteError::PiAgentCore)?;
                notes.push(format!(
                    "Agent: {} {} (the adapter in {}).",
                    crate::case::agentcompany::pi_agent_core::AGENT_NAME,
                    adapter.version(),
                    adapter.dir().display()
                ));
                None
            }
            Some(AgentOverride::Command(command)) => Some(ExternalAgent::shell(&command)),
            Some(AgentOverride::Preset(preset)) => Some(ExternalAgent::Preset {
                preset,
                args: Vec::new(),
            }),
            None => None,
        };
        if let Some(partition) = &partition {
            // An empty shard is not an error: a suite may have fewer cases than CI has shards.
            cases = partition.select(cases, |c| c.name.as_str());
            notes.push(format!(
                "Partition {partition}: {} cases in this shard.",
                cases.len()
            ));
        }
        if let Some(agent) = replacement {
            for case in cases.iter_mut() {
                if case.execution == Execution::Agent {
                    case.execution = Execution::External(agent.clone());
                }
            }
        }
        options.runs = runs.unwrap_or(if live { DEFAULT_LIVE_RUNS } else { 1 });
        if live {
            let (live_cases, skipped) = select_live(cases)?;
            cases = live_cases;
            notes.extend(skipped);
        }
        if let Some(k) = options.k
            && let Some(case) = cases.iter().find(|c| c.runs.unwrap_or(options.runs) < k)
        {
            return Err(SuiteError::KExceedsRuns {
                k,
                runs: case.runs.unwrap_or(options.runs),
                case: case.name.clone(),
            });
        }
        let config = config.unwrap_or_else(ConfigSources::from_environment);
        options.agents = Arc::new(locate_agents(&cases, &config)?);
        let provider = match live_provider {
            Some(LiveProvider::Given(provider)) => Some(*provider),
            Some(LiveProvider::FromConfig) => Some(provider_from_config(&config)?),
            None => None,
        };
        if let Some(provider) = provider {
            options.agent_limits = live_agent_limits(provider.config());
            options.live = Some(Arc::new(LiveModel::new(provider)));
        }
        let cases = prepare_cases_with(cases, &host, &mut bundles).map_err(SuiteError::Cases)?;
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
        run_suite(self.cases, &self.options).await
    }
}

/// Where a live suite's provider comes from.
#[derive(Debug)]
enum LiveProvider {
    Given(Box<Provider>),
    FromConfig,
}

/// The configured provider (`[provider]`, `EVALHOST_*`), with its API key.
pub fn provider_from_config(sources: &ConfigSources) -> Result<Provider, SuiteError> {
    let config = sources.provider().map_err(SuiteError::NoProvider)?;
    let key = config.api_key(&sources.env).map_err(SuiteError::NoApiKey)?;
    Provider::new(config, key).map_err(SuiteError::ProviderClient)
}

/// The cases a live suite runs, and the notes naming those it skips: replay-only cases
/// (`live: false`) and cases that replay a recording (nothing to run live).
fn select_live(cases: Vec<Case>) -> Result<(Vec<Case>, Vec<String>), SuiteError> {
    let mut replay_only = Vec::new();
    let mut recorded = Vec::new();
    let mut live = Vec::new();
    for case in cases {
        if !matches!(case.execution, Execution::Agent | Execution::External(_)) {
            recorded.push(case.name);
        } else if !case.live {
            replay_only.push(case.name);
        } else {
            live.push(case);
        }
    }
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
    if live.is_empty() {
        return Err(SuiteError::NothingToRunLive);
    }
    Ok((live, notes))
}

/// The agent's limits in live mode: a request may take the provider's every attempt and
/// backoff, plus a margin.
pub fn live_agent_limits(config: &ProviderConfig) -> Limits {
    let attempts = config.retry.max_retries + 1;
    let budget = config.timeout * attempts + config.retry.max_delay * config.retry.max_retries;
    Limits {
        request_timeout: budget + Duration::from_secs(5),
        ..Limits::default()
    }
}
