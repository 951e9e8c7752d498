//! The run policies of a suite applied to its cases one at a time, as loading hands them over
//! (`load_each_spooled`): filter, tags, the replay check, pi-agent-core, the partition, the
//! agent override, live selection and `--k`; the cases kept are prepared a batch at a time
//! and parked in the suite's spool when past its memory budget ([`crate::runner::Parking`]).
//! So planning never holds every loaded case at once.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::agent_preset::Preset;
use crate::bundle::BundleResolver;
use crate::case::agentcompany::PiAgentCore;
use crate::case::{Case, CaseError, Execution, ExternalAgent, Location, Replaced};
use crate::environment::Environment;
use crate::grader::GraderHost;
use crate::runner::{Parking, Partition, PlannedCase, prepare_each};

/// Cases prepared at a time: each distinct (component, grader, config) of a batch is checked
/// once, on all cores.
const PREPARE_BATCH: usize = 1024;

/// Cases whose own agent was replaced that the plan's note names, at most.
pub(super) const REPLACED_NAMED: usize = 10;

/// What decides which cases a suite runs, and how.
pub(super) struct Policies {
    pub filter: Option<String>,
    pub tags: Vec<String>,
    pub live: bool,
    pub pi_agent_core: Option<PiAgentCore>,
    pub partition: Option<Partition>,
    pub replacement: Option<ExternalAgent>,
    /// The environment of every case that runs an agent and names none (`--environment`).
    pub environment: Option<Environment>,
    /// `--k`, and the runs of a case that does not say.
    pub k: Option<u32>,
    pub runs: u32,
}

/// The cases planned so far, and everything the plan has to say about the others.
pub(super) struct Planner<'a> {
    pub policies: Policies,
    host: &'a GraderHost,
    bundles: &'a mut BundleResolver,
    parking: Parking<'a>,
    /// Cases kept, waiting to be prepared.
    batch: Vec<Case>,
    pub planned: Vec<PlannedCase>,
    /// Every problem so far, in load order.
    pub problems: Vec<CaseError>,
    /// A problem of loading (a case file, the replay check), not of binding graders.
    pub load_failed: bool,
    /// Results left after `--filter`, and after `--tags` (problems count: they are reported).
    pub after_filter: usize,
    pub after_tags: usize,
    /// Cases reaching the partition (the slice scheme's index), and those in this shard.
    in_partition: usize,
    pub in_shard: usize,
    /// Files of cases that are not AgentCompany fixtures, with `--agent pi-agent-core`.
    pub not_fixtures: Vec<PathBuf>,
    /// Live: cases skipped as replay-only (`live: false`) or as recordings.
    pub replay_only: Vec<String>,
    pub recorded: Vec<String>,
    /// The first case whose runs are fewer than `--k`: its name and runs.
    pub k_exceeds: Option<(String, u32)>,
    /// The presets the kept cases run.
    pub presets: BTreeSet<Preset>,
    /// Kept cases whose own `agent:` the command line's agent replaced: how many, and the
    /// first [`REPLACED_NAMED`] as `NAME (preset codex)`.
    pub replaced: usize,
    pub replaced_named: Vec<String>,
    /// Cases kept to be prepared (whether or not their graders then bind).
    pub kept: usize,
    /// Kept cases that run an external agent (the default concurrency is theirs).
    pub external: usize,
}

impl<'a> Planner<'a> {
    pub(super) fn new(
        policies: Policies,
        host: &'a GraderHost,
        bundles: &'a mut BundleResolver,
        parking: Parking<'a>,
    ) -> Self {
        Self {
            policies,
            host,
            bundles,
            parking,
            batch: Vec::new(),
            planned: Vec::new(),
            problems: Vec::new(),
            load_failed: false,
            after_filter: 0,
            after_tags: 0,
            in_partition: 0,
            in_shard: 0,
            not_fixtures: Vec::new(),
            replay_only: Vec::new(),
            recorded: Vec::new(),
            k_exceeds: None,
            presets: BTreeSet::new(),
            replaced: 0,
            replaced_named: Vec::new(),
            kept: 0,
            external: 0,
        }
    }

    /// One loaded case (or its problem), in load order.
    pub(super) fn take(&mut self, loaded: Result<Case, CaseError>) {
        let mut case = match loaded {
            Ok(case) => case,
            Err(problem) => {
                self.after_filter += 1;
                self.after_tags += 1;
                return self.load_problem(problem);
            }
        };
        let policies = &self.policies;
        if let Some(filter) = &policies.filter
            && !case.name.contains(filter.as_str())
        {
            return;
        }
        self.after_filter += 1;
        if !policies.tags.iter().all(|t| case.tags.contains(t)) {
            return;
        }
        self.after_tags += 1;
        if let Some(environment) = &policies.environment
            && case.environment.is_none()
            && matches!(case.execution, Execution::Agent | Execution::External(_))
        {
            case.environment = Some(environment.clone());
        }
        // The oracle replaces the agent before the replay check: it needs no script, but a
        // solution and a container to run it in.
        let oracle = matches!(policies.replacement, Some(ExternalAgent::Oracle));
        let replaced_first = if oracle {
            if let Err(problem) = oracle_can_run(&case) {
                return self.load_problem(problem);
            }
            Some(case.run_agent_instead(&ExternalAgent::Oracle))
        } else {
            None
        };
        if !policies.live
            && let Err(problem) = case.check_replayable()
        {
            return self.load_problem(problem);
        }
        if let Some(adapter) = &policies.pi_agent_core
            && !adapter.apply(&mut case)
        {
            self.not_fixtures.push(case.path);
            return;
        }
        if let Some(partition) = &policies.partition {
            let index = self.in_partition;
            self.in_partition += 1;
            if !partition.selects(index, &case.name) {
                return;
            }
            self.in_shard += 1;
        }
        // The command line's agent wins over the case's own (docs/cli.md); the plan's notes
        // name the cases whose `agent:` it replaced.
        let replaced = match (replaced_first, &policies.replacement) {
            (Some(replaced), _) => replaced,
            (None, Some(agent)) => case.run_agent_instead(agent),
            (None, None) => Replaced::NoAgent,
        };
        if policies.live {
            if !matches!(case.execution, Execution::Agent | Execution::External(_)) {
                self.recorded.push(case.name);
                return;
            }
            if !case.live {
                self.replay_only.push(case.name);
                return;
            }
        }
        let runs = case.runs.unwrap_or(policies.runs);
        if let Some(k) = policies.k
            && runs < k
            && self.k_exceeds.is_none()
        {
            self.k_exceeds = Some((case.name.clone(), runs));
        }
        if let Replaced::CasesAgent(own) = replaced {
            self.replaced += 1;
            if self.replaced_named.len() < REPLACED_NAMED {
                self.replaced_named.push(format!("{} ({own})", case.name));
            }
        }
        self.presets.extend(super::agents::preset_of(&case));
        if matches!(case.execution, Execution::External(_)) {
            self.external += 1;
        }
        self.kept += 1;
        self.batch.push(case);
        if self.batch.len() >= PREPARE_BATCH {
            self.prepare_batch();
        }
    }

    /// A problem loading a case, in its place among the others.
    fn load_problem(&mut self, problem: CaseError) {
        self.prepare_batch();
        self.problems.push(problem);
        self.load_failed = true;
    }

    /// Bind and check the graders of the cases waiting, and plan them.
    pub(super) fn prepare_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        for prepared in prepare_each(batch, self.host, self.bundles) {
            match prepared {
                Ok(prepared) => self.planned.push(self.parking.plan(prepared)),
                Err(problem) => self.problems.push(problem),
            }
        }
    }
}

/// Whether `--agent oracle` can run `case`: it runs the case's solution (a Harbor task's
/// `solution/solve.sh`), in the case's container.
fn oracle_can_run(case: &Case) -> Result<(), CaseError> {
    let missing = if case.solution.is_none() {
        "has no solution/solve.sh (a Harbor task's reference solution, which the oracle runs)"
    } else if case.environment.is_none() {
        "has no environment; the oracle runs its solution only in the case's container"
    } else {
        return Ok(());
    };
    Err(CaseError::Invalid {
        location: Location::line(&case.path, 0),
        field: String::new(),
        message: format!("--agent oracle: case {} {missing}", case.name),
    })
}
