//! The wasmtime engine shared by every grading call, and the on-disk cache of precompiled
//! components keyed by component digest and engine settings.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, Linker};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig,
};

use super::GraderHostError;
use super::limits::{EPOCH_TICK, Limits};
use super::sandbox::SandboxState;

/// What every grading call shares: engine, linker with the sandbox's WASI, limits, and the
/// thread that advances the epoch for wall-clock deadlines.
pub(crate) struct Shared {
    pub engine: Engine,
    pub linker: Linker<SandboxState>,
    pub limits: Limits,
    cache_dir: Option<PathBuf>,
    engine_key: String,
    /// Components compiled (not loaded from the cache) by this host: the perf guard's
    /// deterministic count of compile work on the hot path.
    compilations: AtomicU64,
}

impl Shared {
    pub(crate) fn new(
        limits: Limits,
        cache_dir: Option<PathBuf>,
    ) -> Result<Arc<Self>, GraderHostError> {
        let mut config = Config::new();
        config
            .consume_fuel(true)
            .epoch_interruption(true)
            .cranelift_opt_level(OptLevel::Speed)
            .wasm_component_model(true);
        // The pooling allocator keeps instance slots (and the first pages of each linear
        // memory) mapped between calls: a fresh instance per call then costs no mmap/munmap,
        // no TLB shootdown and few page faults. Fall back to on-demand allocation where the
        // address-space reservation is refused.
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling(&limits)));
        let engine = match Engine::new(&config) {
            Ok(engine) => engine,
            Err(_) => {
                config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
                Engine::new(&config).map_err(GraderHostError::engine)?
            }
        };
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(GraderHostError::engine)?;
        super::bindings::add_judge_to_linker(&mut linker).map_err(GraderHostError::engine)?;
        let engine_key = engine_key(&engine);
        spawn_epoch_ticker(&engine);
        Ok(Arc::new(Self {
            engine,
            linker,
            limits,
            cache_dir,
            engine_key,
            compilations: AtomicU64::new(0),
        }))
    }

    /// Compile `bytes`, or load the precompiled form from the cache.
    ///
    /// Returns the component and its sha256 digest (lowercase hex).
    pub(crate) fn compile(
        &self,
        bytes: &[u8],
        origin: &str,
    ) -> Result<(Component, String), GraderHostError> {
        let digest = hex::encode(Sha256::digest(bytes));
        let cached = self
            .cache_dir
            .as_ref()
            .map(|dir| dir.join(format!("{digest}-{}.cwasm", self.engine_key)));
        if let Some(path) = &cached
            && path.is_file()
            && let Ok(component) = load_precompiled(&self.engine, path)
        {
            return Ok((component, digest));
        }
        self.compilations.fetch_add(1, Ordering::Relaxed);
        let component =
            Component::new(&self.engine, bytes).map_err(|e| GraderHostError::Compile {
                origin: origin.to_owned(),
                message: format!("{e:#}"),
            })?;
        if let Some(path) = &cached {
            // A cache we cannot write only costs time on the next run.
            let _ = store_precompiled(&component, path);
        }
        Ok((component, digest))
    }

    /// How many components this host has compiled rather than loaded precompiled.
    pub(crate) fn compilations(&self) -> u64 {
        self.compilations.load(Ordering::Relaxed)
    }
}

/// Grading calls in flight at once, across all components (the runner grades at most
/// `--jobs` runs concurrently, one call at a time each).
pub(crate) const MAX_CONCURRENT_CALLS: u32 = 128;

/// Smallest table slot of the pool (wasmtime's default is 20,000 elements).
const POOL_MIN_TABLE_ELEMENTS: usize = 20_000;

fn pooling(limits: &Limits) -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(MAX_CONCURRENT_CALLS)
        .total_core_instances(MAX_CONCURRENT_CALLS * 8)
        .total_memories(MAX_CONCURRENT_CALLS * 2)
        .total_tables(MAX_CONCURRENT_CALLS * 8)
        .max_memory_size(limits.memory_bytes)
        // Pool slots at least as large as the limiter's cap, so that `Limits::table_elements`
        // (a named error) is the table limit a grader meets, not the pool's.
        .table_elements(limits.table_elements.max(POOL_MIN_TABLE_ELEMENTS))
        .linear_memory_keep_resident(1 << 20)
        .table_keep_resident(64 << 10)
        .pagemap_scan(Enabled::Auto);
    pool
}

/// Load a precompiled component this host wrote itself.
#[allow(unsafe_code)]
fn load_precompiled(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    // SAFETY: the file was produced by `Component::serialize` of this same engine
    // configuration (the file name carries the engine key), written atomically under the
    // user's cache directory. wasmtime additionally checks the header for version and
    // settings compatibility.
    unsafe { Component::deserialize_file(engine, path) }
}

fn store_precompiled(component: &Component, path: &Path) -> std::io::Result<()> {
    let bytes = component
        .serialize()
        .map_err(|e| std::io::Error::other(format!("{e:#}")))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::fs::write(tmp.path(), bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A short key of everything that makes a precompiled component (in)compatible.
fn engine_key(engine: &Engine) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// Advance the engine's epoch every [`EPOCH_TICK`] until the engine is dropped.
fn spawn_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    let spawned = std::thread::Builder::new()
        .name("evalhost-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        });
    // Without a ticker the fuel budget still bounds every call.
    drop(spawned);
}

/// The default cache directory: `$XDG_CACHE_HOME/evalhost/components` or `~/.cache/...`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let env = std::env::vars().collect();
    Some(
        crate::config::cache_home(&env)?
            .join("evalhost")
            .join("components"),
    )
}
