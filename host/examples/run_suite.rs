//! Run a suite from a program, with the policies `evalhost run` has: the shipped Mino cases,
//! only those tagged `smoke` if any are (else all), replayed against their scripted models,
//! two runs each, pass@1 and pass^1 in the text table.
//!
//! ```sh
//! cargo run -p evalhost --example run_suite
//! ```
//!
//! `Suite` plans before anything runs (every problem of every case file at once), then
//! `Plan::run` runs the cases and grades every run in the wasm sandbox.

use evalhost::{Suite, SuiteError, render_text};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cases = concat!(env!("CARGO_MANIFEST_DIR"), "/../cases/mino");
    let plan = match Suite::new([cases]).tags(["smoke"]).runs(2).k(1).plan() {
        Err(SuiteError::NoCaseHasTags { .. }) => Suite::new([cases]).runs(2).k(1).plan()?,
        planned => planned?,
    };
    for note in &plan.notes {
        println!("{note}");
    }
    println!("{} cases planned", plan.cases.len());
    let report = tokio::runtime::Runtime::new()?.block_on(plan.run())?;
    print!("{}", render_text(&report)?);
    Ok(())
}
