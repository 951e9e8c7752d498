//! Every hostile-grader probe in one process, one after the other: the probe → outcome →
//! time table (printed; `--nocapture` shows it, and `docs/security.md` keeps a copy), the
//! worst overrun of a wall-clock deadline, and the host's memory after the 100 MiB probes.
//! A separate test binary, so no other test shares the process whose memory is measured.
//!
//! `cargo test -p evalhost --test integration hardening_probes:: -- --nocapture`

use std::path::Path;
use std::time::Duration;

use crate::support::hostile::{BUILTIN, Expect, Sandbox, evidence, host, probes, run};
use evalhost::grader::Limits;

/// The deadline the loop probes run under.
const DEADLINE: Duration = Duration::from_millis(500);

/// Generous bounds on the host's memory: resident now, and the peak over the whole run.
/// A guest's linear memory is capped at 256 MiB; a 100 MiB message or schema is copied
/// out of it once, then refused and dropped.
const RSS_BOUND_KIB: u64 = 512 << 10;
const PEAK_BOUND_KIB: u64 = 1536 << 10;

/// A `VmRSS`-style field of /proc/self/status, in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().strip_suffix("kB")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

#[test]
fn every_probe_is_contained_in_time_and_memory() {
    let mut rows = Vec::new();
    let mut worst_overrun = Duration::ZERO;
    for probe in probes(DEADLINE) {
        let outcome = run(&probe);
        if probe.expect == Expect::Deadline {
            let overrun = outcome.elapsed.saturating_sub(probe.limits.deadline);
            worst_overrun = worst_overrun.max(overrun);
        }
        let limit = match probe.expect {
            Expect::Fuel => format!("fuel {}", probe.limits.fuel),
            Expect::Deadline => format!("deadline {:?}", probe.limits.deadline),
            Expect::Table => format!("table cap {}", probe.limits.table_elements),
            _ => "defaults".to_owned(),
        };
        rows.push((probe.name, limit, outcome));
    }

    let rss = status_kib("VmRSS");
    let peak = status_kib("VmHWM");
    println!("\n| probe | limits | outcome | time |\n|---|---|---|---|");
    for (name, limit, outcome) in &rows {
        let error: String = outcome.error.chars().take(110).collect();
        let cut = if error.len() < outcome.error.len() {
            "…"
        } else {
            ""
        };
        println!(
            "| `{name}` | {limit} | {}{cut} | {:.1} ms |",
            error.replace('|', "\\|").replace('\n', " "),
            outcome.elapsed.as_secs_f64() * 1000.0
        );
    }
    println!(
        "\nworst overrun of the {DEADLINE:?} deadline: {:.1} ms; host memory after all probes: \
         {} MiB resident, {} MiB peak",
        worst_overrun.as_secs_f64() * 1000.0,
        rss >> 10,
        peak >> 10
    );

    // The epoch ticks every 10 ms; a trap is taken at the next loop back-edge or call.
    // A second is far beyond what was measured (see docs/security.md) yet still a bound.
    assert!(
        worst_overrun < Duration::from_secs(1),
        "a probe overran its deadline by {worst_overrun:?}"
    );
    assert!(rss < RSS_BOUND_KIB, "host resident memory {rss} KiB");
    assert!(peak < PEAK_BOUND_KIB, "host peak memory {peak} KiB");

    // After every probe, the same process still grades normally with the built-ins.
    let host = host(Limits::default());
    let builtin = host
        .load_component_file(Path::new(BUILTIN))
        .expect("built-ins load");
    let sandbox = Sandbox::new();
    let (verdict, _) = builtin.grade(
        "file_exists",
        r#""notes.md""#,
        &evidence(),
        Some(&sandbox.workspace),
    );
    assert!(verdict.expect("file_exists").pass);
}
