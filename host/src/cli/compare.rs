//! `evalhost compare A B`: which cases changed between two runs of a suite, with the
//! statistics stated (docs/history.md, "Comparing two runs").

use std::collections::HashMap;
use std::path::Path;

use anyhow::anyhow;

use super::history::StoreArgs;
use super::ui::Ui;
use super::{Failure, exit};
use crate::history::Store;
use crate::report::{
    CompareOptions, Comparison, Flaky, Side, compare, read_report, render_comparison,
};

/// `evalhost compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The run compared against (the earlier one): a JSON report (`report.json`, or the `--out`
    /// directory holding it).
    #[arg(value_name = "A")]
    pub a: String,
    /// The run compared (the later one), likewise.
    #[arg(value_name = "B")]
    pub b: String,
    /// Print the comparison as JSON (every case, test, p- and q-value) instead of text.
    #[arg(long)]
    pub json: bool,
    /// The false-discovery rate: a case's change has evidence when its Benjamini–Hochberg
    /// q-value is at most this (above 0 and below 1).
    #[arg(long, value_name = "RATE", default_value_t = 0.05, value_parser = fdr_level)]
    pub alpha: f64,
    #[command(flatten)]
    pub store: super::history::StoreArgs,
}

/// `--alpha`: a rate in (0, 1).
pub(super) fn fdr_level(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err("expected a rate above 0 and below 1 (0.05 = 5%)".to_owned()),
    }
}

/// A side of a comparison with what is known of how it ran, for the notes on differences.
pub(super) struct Loaded {
    pub side: Side,
    /// Facts of the run's setup, by name (`mode`, `model`): a fact both sides have and that
    /// differs becomes a note.
    pub setup: Vec<(&'static str, String)>,
}

/// What an argument of `compare` names, read as a [`Side`]: a JSON report (a file, or the
/// `--out` directory holding `report.json`) when such a path exists; otherwise a run of the
/// history (`store`): an id or 4+ of its digits, `latest`, `BRANCH@latest`. An argument that
/// is neither is a usage error (exit 2).
pub(super) fn side(
    arg: &str,
    store: &mut Option<Store>,
    args: &StoreArgs,
) -> Result<Loaded, Failure> {
    let path = Path::new(arg);
    if path.exists() {
        return report_side(path, arg);
    }
    if store.is_none() {
        *store = Some(args.open().map_err(|failure| {
            Failure::usage(anyhow!(
                "`{arg}` is neither a report file nor a directory, and the history cannot be read: {:#}",
                failure.error
            ))
        })?);
    }
    let history = store.as_mut().expect("opened above");
    let run = history.resolve(arg).map_err(Failure::usage)?;
    let label = format!("{arg} (run {})", run.short_id());
    let side = history.side(&run.id, &label).map_err(Failure::usage)?;
    Ok(Loaded {
        side,
        setup: vec![("mode", run.mode.clone()), ("model", run.model.clone())],
    })
}

/// The side of the JSON report at `path` (a file or an `--out` directory), named `label`.
pub(super) fn report_side(path: &Path, label: &str) -> Result<Loaded, Failure> {
    let report = read_report(path).map_err(Failure::usage)?;
    let side = Side::of_report(label, &report).map_err(Failure::internal)?;
    Ok(Loaded {
        side,
        setup: vec![
            ("mode", report.mode.clone()),
            ("model", report.model.clone()),
        ],
    })
}

/// Compare two loaded sides and add the notes on their setups.
pub(super) fn compare_loaded(
    a: &Loaded,
    b: &Loaded,
    flaky: &HashMap<String, Flaky>,
    options: &CompareOptions,
) -> Result<Comparison, Failure> {
    let mut comparison = compare(&a.side, &b.side, flaky, options).map_err(Failure::usage)?;
    for (name, old) in &a.setup {
        if let Some((_, new)) = b.setup.iter().find(|(n, _)| n == name)
            && new != old
        {
            comparison
                .notes
                .push(format!("the {name} differs: A {old}, B {new}"));
        }
    }
    Ok(comparison)
}

pub fn compare_command(args: CompareArgs, ui: &Ui) -> Result<u8, Failure> {
    let mut store = None;
    let a = side(&args.a, &mut store, &args.store)?;
    let b = side(&args.b, &mut store, &args.store)?;
    let options = CompareOptions {
        alpha: args.alpha,
        ..CompareOptions::default()
    };
    // Flaky marks come from the history, when a side came from it.
    let flaky = match &mut store {
        Some(history) => history
            .flaky_marks(&a.side, &b.side)
            .map_err(Failure::internal)?,
        None => HashMap::new(),
    };
    let comparison = compare_loaded(&a, &b, &flaky, &options)?;
    if args.json {
        let json =
            serde_json::to_string_pretty(&comparison).map_err(|e| Failure::internal(anyhow!(e)))?;
        println!("{json}");
    } else {
        print!("{}", render_comparison(&comparison, ui.color_stdout));
    }
    let regressions = comparison.regressions().count();
    if regressions == 0 {
        return Ok(exit::OK);
    }
    eprintln!(
        "{} Compare failed: {regressions} case{} regressed with evidence (B {} against A {})",
        ui.error_prefix(),
        if regressions == 1 { "" } else { "s" },
        args.b,
        args.a
    );
    Ok(exit::EVAL_FAILED)
}
