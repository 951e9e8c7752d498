//! Grading cost, WASM host vs native, on the evidence of a real `evalhost run --out`:
//! per grader kind (p50/p99 of single calls, fresh instance each) and for the whole suite
//! (every case's five graders, evidence conversion included, both ways; through the host
//! once with a fresh instance per call and once as a run grades, one instance per case and
//! component).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use evalhost::evidence::Evidence;
use evalhost::grader::{GraderComponent, GraderHost, GraderSession, PreparedEvidence};
use evalhost::runner::{PreparedCase, prepare_cases};

use crate::native;
use crate::stats::{Percentiles, micros};

/// One case ready to grade: bound graders, its evidence, and its rebuilt workspace.
pub struct GradedCase {
    pub prepared: PreparedCase,
    pub evidence: Evidence,
    pub sdk_evidence: evalhost_sdk::Evidence,
    pub workspace: tempfile::TempDir,
}

/// Load the cases under `dirs` and the evidence `evalhost run --out OUT` left for them.
pub fn load(host: &GraderHost, dirs: &[PathBuf], out: &Path) -> Result<Vec<GradedCase>, String> {
    let cases = evalhost::case::load_cases(dirs).map_err(|e| format!("{e}"))?;
    let prepared = prepare_cases(cases, host).map_err(|e| format!("{e}"))?;
    prepared
        .into_iter()
        .map(|prepared| {
            let path = out.join(&prepared.case.name).join("run-1.evidence.json");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("{}: {e} (run `evalhost run --out` first)", path.display()))?;
            let evidence: Evidence = serde_json::from_str(&text)
                .map_err(|e| format!("{}: not evidence JSON: {e}", path.display()))?;
            let workspace = rebuild_workspace(&prepared, &evidence).map_err(|e| {
                format!("case {}: rebuilding the workspace: {e}", prepared.case.name)
            })?;
            let sdk_evidence = native::sdk_evidence(&evidence, workspace.path());
            Ok(GradedCase {
                prepared,
                evidence,
                sdk_evidence,
                workspace,
            })
        })
        .collect()
}

/// The run's final workspace: the seeds, then the completed `write_file` / `edit_file`
/// calls of the evidence (the only tools the generated cases change files with).
fn rebuild_workspace(
    prepared: &PreparedCase,
    evidence: &Evidence,
) -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let write = |path: &str, content: &str| -> std::io::Result<()> {
        let full = dir.path().join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(full, content)
    };
    for seed in &prepared.case.workspace_files {
        write(&seed.path, &seed.content)?;
    }
    for call in evidence.calls.iter().filter(|c| c.status == "completed") {
        let Ok(args) = serde_json::from_str::<serde_json::Value>(&call.arguments) else {
            continue;
        };
        let text = |k: &str| args.get(k).and_then(|v| v.as_str()).unwrap_or_default();
        match call.name.as_str() {
            "write_file" => write(text("path"), text("content"))?,
            "edit_file" => {
                let path = dir.path().join(text("path"));
                let before = std::fs::read_to_string(&path)?;
                std::fs::write(
                    &path,
                    before.replacen(text("old_text"), text("new_text"), 1),
                )?;
            }
            _ => {}
        }
    }
    Ok(dir)
}

/// Per grader kind: p50/p99 of `calls` single calls through the WASM host (fresh instance
/// each) and natively, on the first case of each kind (notes, log, edit, bash) that uses it.
pub fn per_kind(cases: &[GradedCase], calls: usize) -> String {
    // Per grader and kind of case (the name's last word): the same grader on the small
    // evidences and on the 64 KiB one shows what lowering the evidence costs.
    let mut first: BTreeMap<(&str, &str), (&GradedCase, usize)> = BTreeMap::new();
    for case in cases {
        let kind = case
            .prepared
            .case
            .name
            .rsplit('-')
            .next()
            .unwrap_or_default();
        for (i, bound) in case.prepared.graders.iter().enumerate() {
            first.entry((&*bound.grader, kind)).or_insert((case, i));
        }
    }
    let mut table = String::from(
        "| grader | case | WASM p50 µs | WASM p99 µs | native p50 µs | native p99 µs | p50 ratio | fuel |\n|---|---|--:|--:|--:|--:|--:|--:|\n",
    );
    let mut untimed = Vec::new();
    for ((name, _), (case, i)) in first {
        let bound = &case.prepared.graders[i];
        // A call that cannot grade natively (a judged grader: no judge outside the host) has
        // no baseline to compare with: said below the table instead of timed.
        if let Err(error) =
            native::grade(&bound.grader, bound.spec.config.json(), &case.sdk_evidence)
        {
            untimed.push(format!(
                "- `{name}` ({}): not timed; natively it does not grade: {error}\n",
                case.prepared.case.name
            ));
            continue;
        }
        let prepared = PreparedEvidence::new(&case.evidence);
        let ws = Some(case.workspace.path());
        let mut fuel = 0;
        let wasm = Percentiles::of(time_calls(calls, || {
            let (_, stats) =
                bound
                    .component
                    .grade(&bound.grader, bound.spec.config.json(), &prepared, ws);
            fuel = stats.fuel_used;
        }));
        let native = Percentiles::of(time_calls(calls, || {
            let _ = native::grade(&bound.grader, bound.spec.config.json(), &case.sdk_evidence);
        }));
        table.push_str(&format!(
            "| `{name}` | {} | {:.1} | {:.1} | {:.2} | {:.2} | {:.0}× | {fuel} |\n",
            case.prepared.case.name,
            micros(wasm.p50),
            micros(wasm.p99),
            micros(native.p50),
            micros(native.p99),
            wasm.p50.as_secs_f64() / native.p50.as_secs_f64().max(1e-9),
        ));
    }
    if !untimed.is_empty() {
        table.push('\n');
        table.extend(untimed);
    }
    table
}

/// Time `calls` calls of `f` one by one, after a warm-up.
pub fn time_calls(calls: usize, mut f: impl FnMut()) -> Vec<Duration> {
    for _ in 0..calls.min(200) {
        f();
    }
    (0..calls)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect()
}

/// Totals of grading every case of the suite once.
#[derive(Debug, Clone, Copy)]
pub struct SuiteGrading {
    /// Through the host as a run grades: one instance per case and component.
    pub wasm: Duration,
    /// Through the host with a fresh instance for every call.
    pub wasm_fresh: Duration,
    pub native: Duration,
    pub calls: usize,
    pub disagreements: usize,
}

/// Grade the whole suite through the WASM host and natively, `rounds` times each (median
/// round kept), on one thread: evidence conversion plus every grader of every case.
pub fn suite(cases: &[GradedCase], rounds: usize) -> SuiteGrading {
    let mut wasm_rounds = Vec::new();
    let mut fresh_rounds = Vec::new();
    let mut native_rounds = Vec::new();
    let mut wasm_passes = Vec::new();
    let mut fresh_passes = Vec::new();
    let mut native_passes = Vec::new();
    for _ in 0..rounds.max(1) {
        wasm_passes.clear();
        fresh_passes.clear();
        native_passes.clear();
        let started = Instant::now();
        for case in cases {
            let prepared = PreparedEvidence::new(&case.evidence);
            let ws = Some(case.workspace.path());
            // One session per component of the case (the generated cases use the built-ins).
            let mut sessions: Vec<GraderSession<'_>> = Vec::new();
            let mut owners: Vec<&GraderComponent> = Vec::new();
            for bound in &case.prepared.graders {
                let at = match owners
                    .iter()
                    .position(|c| c.same_component(&bound.component))
                {
                    Some(at) => at,
                    None => {
                        owners.push(&bound.component);
                        sessions.push(bound.component.session(ws));
                        sessions.len() - 1
                    }
                };
                let (verdict, _) = sessions[at].grade_with_judge(
                    &bound.grader,
                    bound.spec.config.json(),
                    &prepared,
                    None,
                );
                wasm_passes.push(verdict.map(|v| v.pass).ok());
            }
        }
        wasm_rounds.push(started.elapsed());
        let started = Instant::now();
        for case in cases {
            let prepared = PreparedEvidence::new(&case.evidence);
            for bound in &case.prepared.graders {
                let (verdict, _) = bound.component.grade(
                    &bound.grader,
                    bound.spec.config.json(),
                    &prepared,
                    Some(case.workspace.path()),
                );
                let pass = verdict.map(|v| v.pass).ok();
                assert_eq!(
                    Some(pass),
                    wasm_passes.get(fresh_passes.len()).copied(),
                    "case {}: a fresh instance and the run's instance disagree",
                    case.prepared.case.name
                );
                fresh_passes.push(pass);
            }
        }
        fresh_rounds.push(started.elapsed());
        let started = Instant::now();
        for case in cases {
            let evidence = native::sdk_evidence(&case.evidence, case.workspace.path());
            for bound in &case.prepared.graders {
                let verdict = native::grade(&bound.grader, bound.spec.config.json(), &evidence);
                native_passes.push(verdict.map(|v| v.pass).ok());
            }
        }
        native_rounds.push(started.elapsed());
    }
    wasm_rounds.sort();
    fresh_rounds.sort();
    native_rounds.sort();
    SuiteGrading {
        wasm: wasm_rounds[wasm_rounds.len() / 2],
        wasm_fresh: fresh_rounds[fresh_rounds.len() / 2],
        native: native_rounds[native_rounds.len() / 2],
        calls: wasm_passes.len(),
        disagreements: wasm_passes
            .iter()
            .zip(&native_passes)
            .filter(|(a, b)| a != b)
            .count(),
    }
}

/// A third-party component's grader on the first case's evidence: p50/p99 of single calls
/// (fresh instance each), and p50/p99 of five calls in one session (as a case with five of
/// its entries is graded), per call.
pub fn component_calls(
    component: &GraderComponent,
    grader: &str,
    config: &str,
    case: &GradedCase,
    calls: usize,
) -> Result<(Percentiles, Percentiles), String> {
    let prepared = PreparedEvidence::new(&case.evidence);
    let ws = Some(case.workspace.path());
    let (first, _) = component.grade(grader, config, &prepared, ws);
    first.map_err(|e| format!("{} {grader}: {e}", component.origin()))?;
    let single = Percentiles::of(time_calls(calls, || {
        let _ = component.grade(grader, config, &prepared, ws);
    }));
    let five = time_calls(calls / 5, || {
        let mut session = component.session(ws);
        for _ in 0..5 {
            let _ = session.grade_with_judge(grader, config, &prepared, None);
        }
    });
    Ok((
        single,
        Percentiles::of(five.into_iter().map(|t| t / 5).collect()),
    ))
}
