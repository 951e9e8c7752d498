//! `evalhost-bench`: the Rust half of `bench/run.sh`.
//!
//! ```text
//! evalhost-bench gen DIR --cases N [--checks K]
//!                                         write N cases: DIR/evalhost/part-*/ (case files),
//!                                         DIR/promptfoo/, DIR/inspect/; print the case dirs;
//!                                         --checks K (1–5, default 5): each case's first K
//!                                         checks only (what a grader entry costs in a suite)
//! evalhost-bench grading --out OUT [--calls N] [--rounds R] [--component FILE#GRADER]...
//!                        [--run-wall SECONDS --jobs N] DIR...
//!                                         WASM vs native grading on the evidence in OUT;
//!                                         with --run-wall, the suite-level estimate
//! ```
//! Output is markdown, for `docs/performance.md`.

mod grading;
mod native;
mod peers;
mod stats;
mod suite;
mod yaml;

use std::path::PathBuf;
use std::process::ExitCode;

use evalhost::grader::GraderHost;

use crate::stats::micros;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("gen") => gen_command(&args[1..]),
        Some("grading") => grading_command(&args[1..]),
        _ => Err("usage: evalhost-bench gen DIR --cases N [--checks K] | evalhost-bench grading --out OUT [--calls N] [--rounds R] [--component FILE#GRADER]... DIR...".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("Error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `--name value` options and positional arguments.
struct Args {
    options: Vec<(String, String)>,
    positional: Vec<String>,
}

impl Args {
    fn parse(args: &[String]) -> Result<Self, String> {
        let mut options = Vec::new();
        let mut positional = Vec::new();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if let Some(name) = arg.strip_prefix("--") {
                let value = it.next().ok_or(format!("--{name} needs a value"))?;
                options.push((name.to_owned(), value.clone()));
            } else {
                positional.push(arg.clone());
            }
        }
        Ok(Self {
            options,
            positional,
        })
    }

    fn all(&self, name: &str) -> impl Iterator<Item = &str> {
        self.options
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn number(&self, name: &str, default: usize) -> Result<usize, String> {
        match self.all(name).last() {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{name} {v}: expected a whole number")),
        }
    }
}

fn gen_command(args: &[String]) -> Result<(), String> {
    let args = Args::parse(args)?;
    let [dir] = args.positional.as_slice() else {
        return Err("gen takes one directory".into());
    };
    let n = args.number("cases", 1000)?;
    let checks = args.number("checks", 5)?;
    if !(1..=5).contains(&checks) {
        return Err(format!("--checks {checks}: expected 1 to 5"));
    }
    let dir = PathBuf::from(dir);
    let mut cases = suite::suite(n);
    for case in &mut cases {
        case.checks.truncate(checks);
    }
    let dirs = yaml::write_cases(&dir.join("evalhost"), &cases)
        .map_err(|e| format!("writing cases under {}: {e}", dir.display()))?;
    peers::write_peers(&dir, &cases)
        .map_err(|e| format!("writing the peers' suite under {}: {e}", dir.display()))?;
    for d in dirs {
        println!("{}", d.display());
    }
    Ok(())
}

fn grading_command(args: &[String]) -> Result<(), String> {
    let args = Args::parse(args)?;
    let out = PathBuf::from(args.all("out").last().ok_or("grading needs --out OUT")?);
    let calls = args.number("calls", 2000)?;
    let rounds = args.number("rounds", 3)?;
    let dirs: Vec<PathBuf> = args.positional.iter().map(PathBuf::from).collect();
    let host = GraderHost::with_builtins().map_err(|e| e.to_string())?;
    let cases = grading::load(&host, &dirs, &out)?;
    let first = cases.first().ok_or("no cases")?;

    println!("### Built-in grader calls: WASM (fresh instance per call) vs native\n");
    println!(
        "{calls} calls each after a warm-up; evidence of the named case from `evalhost run --out`.\n"
    );
    print!("{}", grading::per_kind(&cases, calls));

    let suite = grading::suite(&cases, rounds);
    println!(
        "\n### Suite-level grading: {} cases, {} grader calls, one thread, median of {rounds}\n",
        cases.len(),
        suite.calls
    );
    println!("| path | total | per case | per call |\n|---|--:|--:|--:|");
    for (name, total) in [
        (
            "WASM host, one instance per case and component (as a run)",
            suite.wasm,
        ),
        ("WASM host, fresh instance per call", suite.wasm_fresh),
        ("native", suite.native),
    ] {
        println!(
            "| {name} | {:.1} ms | {:.1} µs | {:.1} µs |",
            total.as_secs_f64() * 1e3,
            micros(total) / cases.len() as f64,
            micros(total) / suite.calls.max(1) as f64
        );
    }
    println!(
        "\nWASM/native grading ratio: {:.1}× (fresh instance per call: {:.1}×); verdicts that differ: {}",
        suite.wasm.as_secs_f64() / suite.native.as_secs_f64().max(1e-9),
        suite.wasm_fresh.as_secs_f64() / suite.native.as_secs_f64().max(1e-9),
        suite.disagreements
    );
    if let Some(wall) = args.all("run-wall").last() {
        let wall: f64 = wall
            .parse()
            .map_err(|_| format!("--run-wall {wall}: expected seconds"))?;
        let jobs = args.number("jobs", 2)? as f64;
        // Grading runs on blocking threads beside other runs' agent work: with native
        // graders the suite would save the extra grading CPU, spread over `jobs` workers.
        let saved = (suite.wasm - suite.native).as_secs_f64() / jobs;
        println!(
            "Suite level: `evalhost run` took {wall:.2} s; with native grading it would take about {:.2} s \
             (wall − (WASM − native grading) ÷ {jobs}): WASM/native ≈ {:.2}×",
            wall - saved,
            wall / (wall - saved).max(1e-9)
        );
    }

    let components: Vec<&str> = args.all("component").collect();
    if !components.is_empty() {
        println!(
            "\n### Other languages: grader call, evidence of {}\n",
            first.prepared.case.name
        );
        println!(
            "Fresh instance per call, and five calls in one instance (a case with five entries of the component; per call).\n"
        );
        println!(
            "| component | grader | fresh p50 ms | fresh p99 ms | five per instance p50 ms | p99 ms |\n|---|---|--:|--:|--:|--:|"
        );
    }
    for spec in components {
        let (file, grader) = spec
            .split_once('#')
            .ok_or(format!("--component {spec}: expected FILE#GRADER"))?;
        let component = host
            .load_component_file(std::path::Path::new(file))
            .map_err(|e| e.to_string())?;
        let (p, five) =
            grading::component_calls(&component, grader, "null", first, calls.min(1000))?;
        println!(
            "| {file} | `{grader}` | {:.3} | {:.3} | {:.3} | {:.3} |",
            p.p50.as_secs_f64() * 1e3,
            p.p99.as_secs_f64() * 1e3,
            five.p50.as_secs_f64() * 1e3,
            five.p99.as_secs_f64() * 1e3
        );
    }
    Ok(())
}
