//! `evalhost baseline --against OLD.json NEW.json`: fail CI when a report regressed.

use std::path::PathBuf;

use super::{Failure, exit};
use evalhost::report::{Thresholds, compare_baseline, read_report, render_baseline};

/// `evalhost baseline`.
#[derive(Debug, clap::Args)]
pub struct BaselineArgs {
    /// The baseline JSON report (`report.json`, or the `--out` directory holding it).
    #[arg(long, value_name = "OLD.json")]
    pub against: PathBuf,
    /// The new JSON report.
    #[arg(value_name = "NEW.json")]
    pub new: PathBuf,
    /// Largest allowed drop of a case's pass rate (absolute: 0.05 = five points).
    #[arg(long, value_name = "RATE", default_value_t = 0.05, value_parser = non_negative)]
    pub max_drop: f64,
    /// Largest allowed growth of a case's mean tokens (input + output) per run (0.2 = 20%).
    #[arg(long, value_name = "RATIO", default_value_t = 0.2, value_parser = non_negative)]
    pub max_token_growth: f64,
    /// Largest allowed growth of a case's mean run duration (0.5 = 50%).
    #[arg(long, value_name = "RATIO", default_value_t = 0.5, value_parser = non_negative)]
    pub max_latency_growth: f64,
    /// Duration growth smaller than this is never a regression (milliseconds).
    #[arg(long, value_name = "MS", default_value_t = 100.0, value_parser = non_negative)]
    pub min_latency_growth_ms: f64,
}

/// A threshold: a number ≥ 0 (`inf` turns the check off).
fn non_negative(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(v) if v >= 0.0 => Ok(v),
        _ => Err("expected a number >= 0 (or `inf` to turn the check off)".to_owned()),
    }
}

pub fn baseline(args: BaselineArgs) -> Result<u8, Failure> {
    let old = read_report(&args.against).map_err(Failure::usage)?;
    let new = read_report(&args.new).map_err(Failure::usage)?;
    let thresholds = Thresholds {
        max_drop: args.max_drop,
        max_token_growth: args.max_token_growth,
        max_latency_growth: args.max_latency_growth,
        min_latency_growth_ms: args.min_latency_growth_ms,
    };
    let diff = compare_baseline(&old, &new, &thresholds).map_err(Failure::internal)?;
    println!(
        "Comparing {} ({} cases) with the baseline {} ({} cases).",
        args.new.display(),
        new.cases.len(),
        args.against.display(),
        old.cases.len()
    );
    print!("{}", render_baseline(&diff, &thresholds));
    let regressions = diff.regressions().count();
    if regressions == 0 {
        println!("No regressions.");
        Ok(exit::OK)
    } else {
        eprintln!(
            "Error: Baseline failed: {regressions} regression{} against {}",
            if regressions == 1 { "" } else { "s" },
            args.against.display()
        );
        Ok(exit::EVAL_FAILED)
    }
}
