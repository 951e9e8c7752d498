//! The sandbox of one instance: a fresh store whose WASI context grants a read-only
//! `/workspace` and nothing else — no env, no args, no network, no inherited stdio — with a
//! virtual clock and seeded randomness so a grade is a pure function of its inputs.
//!
//! A store serves the calls of one run to one component ([`super::GraderSession`]); what is
//! per call — the fuel budget, the deadline, the judge's state, the captured output, the
//! limit hit — is reset by [`begin_call`] before each call.

use std::path::Path;
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, Store, UpdateDeadline};
use wasmtime_wasi::{
    FsPerms, HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView,
};

use super::judge_call::{JudgeCall, JudgeGrant};
use super::limits::{EPOCH_TICK, Limits};
use super::output::CapturedOutput;
use crate::evidence::WORKSPACE_GUEST_PATH;

/// The fixed instant graders see as "now": 2026-01-01T00:00:00Z.
const VIRTUAL_EPOCH_SECS: u64 = 1_767_225_600;

/// State of one instance's store.
pub(crate) struct SandboxState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: Limiter,
    /// When the current call started: its deadline counts from here.
    started: Instant,
    /// The current call's judge state: grant, questions asked, time waited, first refusal.
    pub judge: JudgeCall,
}

/// Which memory or table limit a grader hit, recorded before the trap unwinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LimitHit {
    Memory { desired: usize },
    Table { desired: usize },
}

struct Limiter {
    memory_bytes: usize,
    table_elements: usize,
    hit: Option<LimitHit>,
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            self.hit = Some(LimitHit::Memory { desired });
            return Err(wasmtime::Error::msg("memory limit"));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.table_elements {
            self.hit = Some(LimitHit::Table { desired });
            return Err(wasmtime::Error::msg("table limit"));
        }
        Ok(true)
    }
}

impl WasiView for SandboxState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Captured guest output of one instance (taken after every call).
pub(crate) struct Captured {
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
}

/// Build a fresh store for one instance, with the workspace (if any) preopened read-only,
/// ready for its first call (instantiation) without the judge.
pub(crate) fn new_store(
    engine: &wasmtime::Engine,
    limits: &Limits,
    workspace: Option<&Path>,
    seed: u64,
) -> std::io::Result<(Store<SandboxState>, Captured)> {
    let stdout = CapturedOutput::new("stdout", limits.output_bytes);
    let stderr = CapturedOutput::new("stderr", limits.output_bytes);
    let mut builder = WasiCtxBuilder::new();
    builder
        // Must precede `preopened_dir`: the preopen captures it. Grading runs on blocking
        // threads, so small file reads need not hop through a runtime.
        .allow_blocking_current_thread(true)
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .wall_clock(VirtualWallClock)
        .monotonic_clock(VirtualMonotonicClock)
        .secure_random(seeded_rng(seed))
        .insecure_random(seeded_rng(seed.rotate_left(32)))
        .insecure_random_seed(u128::from(seed));
    if let Some(workspace) = workspace {
        builder
            .preopened_dir(workspace, WORKSPACE_GUEST_PATH, FsPerms::ReadOnly)
            .map_err(|e| std::io::Error::other(format!("{e:#}")))?;
    }
    let mut table = ResourceTable::new();
    table.set_max_capacity(limits.handles);
    let state = SandboxState {
        wasi: builder.build(),
        table,
        limiter: Limiter {
            memory_bytes: limits.memory_bytes,
            table_elements: limits.table_elements,
            hit: None,
        },
        started: Instant::now(),
        judge: JudgeCall::new(None),
    };
    let mut store = Store::new(engine, state);
    store.limiter(|s| &mut s.limiter);
    begin_call(&mut store, limits, None).map_err(|e| std::io::Error::other(format!("{e:#}")))?;
    // At the deadline, the time the grader waited for the judge is given back: only the
    // grader's own time counts. Without judge calls this interrupts at the first deadline.
    let deadline = limits.deadline;
    store.epoch_deadline_callback(move |context| {
        let state = context.data();
        let spent = state.started.elapsed().saturating_sub(state.judge.waited);
        match deadline.checked_sub(spent) {
            Some(left) if !left.is_zero() => Ok(UpdateDeadline::Continue(ticks(left))),
            _ => Ok(UpdateDeadline::Interrupt),
        }
    });
    Ok((store, Captured { stdout, stderr }))
}

/// Ready `store` for its next call: the whole fuel budget, the deadline counted from now,
/// a fresh judge state (granted when `judge` is given) and no limit hit. Nothing of an
/// earlier call's budgets carries over; the instance's memory, tables and open handles do
/// (see [`super::GraderSession`]).
pub(crate) fn begin_call(
    store: &mut Store<SandboxState>,
    limits: &Limits,
    judge: Option<JudgeGrant>,
) -> wasmtime::Result<()> {
    store.set_fuel(limits.fuel)?;
    store.set_epoch_deadline(limits.deadline_ticks());
    let state = store.data_mut();
    state.started = Instant::now();
    state.judge = JudgeCall::new(judge);
    state.limiter.hit = None;
    Ok(())
}

/// `time` in epoch ticks, rounded up (at least one).
fn ticks(time: Duration) -> u64 {
    (time.as_micros().div_ceil(EPOCH_TICK.as_micros()) as u64).max(1)
}

/// What the call spent on the judge, and its first refusal; the store keeps no judge state.
pub(crate) fn take_judge_call(store: &mut Store<SandboxState>) -> JudgeCall {
    std::mem::take(&mut store.data_mut().judge)
}

/// The memory or table limit the call hit, if any.
pub(crate) fn limit_hit(store: &Store<SandboxState>) -> Option<LimitHit> {
    store.data().limiter.hit
}

fn seeded_rng(seed: u64) -> wasmtime_wasi::Deterministic {
    // A fixed, seed-derived byte cycle (splitmix64): graders get reproducible randomness.
    let mut state = seed;
    let bytes = (0..64)
        .flat_map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)).to_le_bytes()
        })
        .collect();
    wasmtime_wasi::Deterministic::new(bytes)
}

/// Wall clock frozen at [`VIRTUAL_EPOCH_SECS`].
struct VirtualWallClock;

impl HostWallClock for VirtualWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::from_secs(VIRTUAL_EPOCH_SECS)
    }
}

/// Monotonic clock frozen at zero.
struct VirtualMonotonicClock;

impl HostMonotonicClock for VirtualMonotonicClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}
