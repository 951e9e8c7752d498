//! How many runs a suite makes at once when `--jobs` does not say: four per core for
//! evalhost's own agent; for a suite with a case that runs an external agent (a program, a
//! preset's real agent, pi-agent-core's adapter), also four per core, but at most one run per
//! 512 MiB of the memory available, since each such run holds an agent process of its own.
//!
//! Measured with `bench/agents.sh` (docs/performance.md, "Real-agent suites (issue 40)"), 16
//! cases on 2 cores: Codex waits more than it computes (~0.17 CPU s a case against 0.3–0.45 s
//! of wall time alone) and was fastest from 8 runs at a time (four per core) on; pi's
//! start-up computes (~1.2 CPU s a case) and got most of its gain by 4 (two per core). Each
//! further run adds what its agent does not share with the others: ~13 MB (Codex), ~80 MB
//! (Claude Code), ~100 MB (pi), ~150 MB (Gemini CLI) of PSS; the largest agent process
//! measured peaked at 236 MB of RSS (mini-swe-agent). So the cores set the same default for
//! both kinds of suite, and memory bounds the external agents': a run is counted at
//! 256 MiB, and a suite may take half the memory available.

/// Runs in flight per core, for every kind of suite. evalhost's own agent mostly waits (on
/// the model endpoint, its tools, the file system), so one per core leaves the cores idle: a
/// 1,000-case replay suite on 2 cores took 2.1 s with 2 jobs, 1.6 s with 4 and 1.5 s with 8
/// (`docs/performance.md`). For external agents it is the knee of the agent that waits most
/// (Codex), where the one that computes most (pi) is already at its best.
const RUNS_PER_CORE: usize = 4;

/// What a run of an external agent is counted at: the largest agent process measured peaked
/// at 236 MB of RSS.
const EXTERNAL_RUN_BYTES: u64 = 256 << 20;

/// Of the memory available, the share a suite of external agents may take (the rest is the
/// system's, and the commands the agents run).
const EXTERNAL_MEMORY_SHARE: u64 = 2;

/// The default of a suite that runs only evalhost's own agent (or no agent): four per core.
pub(crate) fn default_jobs() -> usize {
    RUNS_PER_CORE * Machine::cores()
}

/// What the default concurrency is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Machine {
    /// Cores this process may use (`available_parallelism`: the affinity mask, a cgroup's
    /// CPU quota).
    pub cores: usize,
    /// Bytes of memory available: `MemAvailable`, or less when this process's cgroup has a
    /// limit closer; `None` when neither can be read.
    pub available: Option<u64>,
}

impl Machine {
    /// This machine, now.
    pub(crate) fn this() -> Self {
        Self {
            cores: Self::cores(),
            available: available_memory(),
        }
    }

    fn cores() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// How many runs a suite makes at once, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Jobs {
    /// Given (`--jobs`, `Suite::jobs`): always wins.
    Given(usize),
    /// No case runs an external agent: four per core.
    Default(usize),
    /// A case runs an external agent: four per core, at most one per 512 MiB available
    /// (`by_memory`: the memory set it, not the cores).
    External { jobs: usize, by_memory: bool },
}

impl Jobs {
    /// The concurrency of a suite with `external` cases that run an external agent.
    pub(crate) fn choose(given: Option<usize>, external: usize, machine: Machine) -> Self {
        if let Some(jobs) = given {
            return Self::Given(jobs);
        }
        let by_cores = RUNS_PER_CORE * machine.cores.max(1);
        if external == 0 {
            return Self::Default(by_cores);
        }
        let by_memory = machine.available.map_or(usize::MAX, |bytes| {
            let runs = bytes / EXTERNAL_MEMORY_SHARE / EXTERNAL_RUN_BYTES;
            usize::try_from(runs).unwrap_or(usize::MAX).max(1)
        });
        Self::External {
            jobs: by_cores.min(by_memory),
            by_memory: by_memory < by_cores,
        }
    }

    /// Runs in flight.
    pub(crate) fn get(self) -> usize {
        match self {
            Self::Given(jobs) | Self::Default(jobs) | Self::External { jobs, .. } => jobs,
        }
    }

    /// The plan's note for a default a user may not expect (a suite of external agents), as
    /// `Jobs: 8 runs at a time, ...`; `None` otherwise.
    pub(crate) fn note(self) -> Option<String> {
        let Self::External { jobs, by_memory } = self else {
            return None;
        };
        let why = if by_memory {
            "one per 512 MiB of memory available"
        } else {
            "four per core"
        };
        Some(format!(
            "Jobs: {jobs} runs at a time, the default of a suite that runs external agents \
             ({why}; --jobs N to change)."
        ))
    }
}

/// Bytes of memory this process may still use: `MemAvailable` of `/proc/meminfo`, or the
/// room under its cgroup's limit when that is less (a container's limit is not in meminfo).
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let available = meminfo.as_deref().and_then(mem_available);
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok();
    let room = cgroup.as_deref().and_then(cgroup_room);
    match (available, room) {
        (Some(a), Some(r)) => Some(a.min(r)),
        (a, r) => a.or(r),
    }
}

/// `MemAvailable:` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The room under the memory limit of the cgroup `/proc/self/cgroup` names (v2's
/// `memory.max` − `memory.current`, v1's `memory.limit_in_bytes` − `memory.usage_in_bytes`);
/// `None` without a limit or a readable cgroup.
fn cgroup_room(self_cgroup: &str) -> Option<u64> {
    let read = |path: String| std::fs::read_to_string(path).ok();
    for line in self_cgroup.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let (limit, usage) = if controllers.is_empty() {
            let dir = format!("/sys/fs/cgroup{path}");
            (
                read(format!("{dir}/memory.max")),
                read(format!("{dir}/memory.current")),
            )
        } else if controllers.split(',').any(|c| c == "memory") {
            let dir = format!("/sys/fs/cgroup/memory{path}");
            (
                read(format!("{dir}/memory.limit_in_bytes")),
                read(format!("{dir}/memory.usage_in_bytes")),
            )
        } else {
            continue;
        };
        if let Some(room) = room_under(limit.as_deref(), usage.as_deref()) {
            return Some(room);
        }
    }
    None
}

/// The room under a cgroup's limit, from its files' texts: `None` when there is no limit
/// (`max`, or v1's "unlimited" near `i64::MAX`) or a text is missing.
fn room_under(limit: Option<&str>, usage: Option<&str>) -> Option<u64> {
    /// v1 says "no limit" as `PAGE_COUNTER_MAX` pages; anything past 2^60 bytes is no limit.
    const NO_LIMIT: u64 = 1 << 60;
    let limit: u64 = limit?.trim().parse().ok()?;
    let usage: u64 = usage?.trim().parse().ok()?;
    (limit < NO_LIMIT).then(|| limit.saturating_sub(usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn machine(cores: usize, available: Option<u64>) -> Machine {
        Machine { cores, available }
    }

    #[test]
    fn a_suite_of_the_built_in_agent_keeps_four_runs_per_core_whatever_the_memory() {
        let jobs = Jobs::choose(None, 0, machine(2, Some(GIB / 4)));
        assert_eq!(jobs, Jobs::Default(8));
        assert_eq!(jobs.note(), None);
    }

    #[test]
    fn a_suite_of_external_agents_runs_four_per_core_when_memory_allows() {
        let jobs = Jobs::choose(None, 16, machine(2, Some(24 * GIB)));
        assert_eq!(
            jobs,
            Jobs::External {
                jobs: 8,
                by_memory: false
            }
        );
        assert_eq!(
            jobs.note().unwrap(),
            "Jobs: 8 runs at a time, the default of a suite that runs external agents (four per core; --jobs N to change)."
        );
    }

    #[test]
    fn memory_bounds_a_suite_of_external_agents_at_one_run_per_512_mib() {
        // 64 cores would be 256 runs; 8 GiB available allows 16.
        let jobs = Jobs::choose(None, 300, machine(64, Some(8 * GIB)));
        assert_eq!(
            jobs,
            Jobs::External {
                jobs: 16,
                by_memory: true
            }
        );
        assert!(
            jobs.note()
                .unwrap()
                .contains("(one per 512 MiB of memory available;"),
            "{:?}",
            jobs.note()
        );
        // Never none at all, however little is available.
        assert_eq!(Jobs::choose(None, 1, machine(4, Some(GIB / 8))).get(), 1);
        // Unknown memory: the cores alone.
        assert_eq!(Jobs::choose(None, 1, machine(4, None)).get(), 16);
    }

    #[test]
    fn one_external_case_makes_a_mixed_suite_a_suite_of_external_agents() {
        let mixed = Jobs::choose(None, 1, machine(16, Some(4 * GIB)));
        assert_eq!(mixed.get(), 8);
        assert_eq!(Jobs::choose(None, 0, machine(16, Some(4 * GIB))).get(), 64);
    }

    #[test]
    fn given_jobs_always_win() {
        for external in [0, 1, 100] {
            let jobs = Jobs::choose(Some(3), external, machine(64, Some(GIB / 8)));
            assert_eq!(jobs, Jobs::Given(3));
            assert_eq!(jobs.note(), None);
        }
    }

    #[test]
    fn memory_available_is_read_from_meminfo_and_a_cgroup_limit() {
        let meminfo =
            "MemTotal:       24000000 kB\nMemFree:        1000 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(mem_available(meminfo), Some(2048 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(
            room_under(Some("1073741824\n"), Some("73741824\n")),
            Some(1_000_000_000)
        );
        assert_eq!(room_under(Some("max\n"), Some("5\n")), None);
        assert_eq!(room_under(Some("9223372036854771712\n"), Some("5\n")), None);
        assert_eq!(room_under(Some("100\n"), Some("200\n")), Some(0));
        assert_eq!(room_under(None, Some("5\n")), None);
    }
}
