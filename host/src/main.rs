//! The `evalhost` command line. Everything it does lives in the library (its `cli` module is
//! the edge where errors become messages and exit codes); this is only its entry point.

fn main() -> std::process::ExitCode {
    limit_malloc_arenas();
    // Before anything else: no descriptor the caller left open reaches a process a run starts.
    evalhost::internals::close_on_exec_inherited();
    evalhost::internals::cli_main()
}

/// Two of glibc's malloc arenas per core instead of its default eight. A thread that finds the
/// arenas busy takes a new one, up to the limit, and what is freed in one arena serves only
/// allocations made in it; a suite is parsed on every core and run on a runtime with a
/// blocking pool, so with eight arenas a core much of the memory freed as cases finish sat in
/// arenas that later allocations did not use. Peak RSS of the 10,000-case suite: 98 → 87 MB at
/// the same CPU; one arena a core saves more (80 MB) but costs ~8 % more CPU
/// (`docs/performance.md`, "Memory in suite size"). `MALLOC_ARENA_MAX` set in the environment
/// still decides.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn limit_malloc_arenas() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let arenas = libc::c_int::try_from(2 * cores).unwrap_or(libc::c_int::MAX);
    // SAFETY: `mallopt` sets a tunable of the C allocator; called first thing in `main`,
    // before evalhost starts any thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, arenas);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn limit_malloc_arenas() {}
