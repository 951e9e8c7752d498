//! `evalhost baseline --against OLD.json NEW.json`: `compare` of two reports (the same engine
//! and text), whose limits also flag growth of tokens and duration, for CI gates.

use std::path::PathBuf;

use super::compare::{compare_loaded, fdr_level, report_side};
use super::ui::Ui;
use super::{Failure, exit};
use crate::report::{CompareOptions, render_comparison};

/// `evalhost baseline`.
#[derive(Debug, clap::Args)]
pub struct BaselineArgs {
    /// The baseline JSON report (`report.json`, or the `--out` directory holding it).
    #[arg(long, value_name = "OLD.json")]
    pub against: PathBuf,
    /// The new JSON report.
    #[arg(value_name = "NEW.json")]
    pub new: PathBuf,
    /// The minimum effect: a change of a case's pass rate that the statistics find must also
    /// be larger than this (absolute: 0.05 = five points) to count as a regression or an
    /// improvement (`0` counts any change with evidence).
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
    /// The false-discovery rate of the per-case tests (as `compare --alpha`).
    #[arg(long, value_name = "RATE", default_value_t = 0.05, value_parser = fdr_level)]
    pub alpha: f64,
}

/// A threshold: a number ≥ 0 (`inf` turns the check off).
fn non_negative(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(v) if v >= 0.0 => Ok(v),
        _ => Err("expected a number >= 0 (or `inf` to turn the check off)".to_owned()),
    }
}

/// A growth limit: `inf` turns it off.
fn limit(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

pub fn baseline(args: BaselineArgs, ui: &Ui) -> Result<u8, Failure> {
    let old = report_side(&args.against, &args.against.display().to_string())?;
    let new = report_side(&args.new, &args.new.display().to_string())?;
    let options = CompareOptions {
        alpha: args.alpha,
        // No pass-rate change exceeds 1: `--max-drop 1` (or inf) counts none.
        min_effect: args.max_drop.min(1.0),
        max_token_growth: limit(args.max_token_growth),
        max_latency_growth: limit(args.max_latency_growth),
        min_latency_growth_ms: args.min_latency_growth_ms,
    };
    let comparison = compare_loaded(&old, &new, &std::collections::HashMap::new(), &options)?;
    println!(
        "Comparing {} ({} cases) with the baseline {} ({} cases).",
        args.new.display(),
        new.side.cases.len(),
        args.against.display(),
        old.side.cases.len()
    );
    print!("{}", render_comparison(&comparison, ui.color_stdout));
    let regressions = comparison.regressions().count();
    if regressions == 0 {
        return Ok(exit::OK);
    }
    eprintln!(
        "{} Baseline failed: {regressions} regression{} against {}",
        ui.error_prefix(),
        if regressions == 1 { "" } else { "s" },
        args.against.display()
    );
    Ok(exit::EVAL_FAILED)
}
