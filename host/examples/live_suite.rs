//! Run a suite against the configured live model (`[provider]` in `evalhost.toml` or the
//! user's config, `EVALHOST_*`; docs/live.md), as `evalhost run --live` does: cases marked
//! `live: false` and recorded ones are skipped (the plan's notes say which), three runs each
//! unless told otherwise, pass@k and pass^k per case.
//!
//! ```sh
//! EVALHOST_PROVIDER=openai-responses EVALHOST_MODEL=gpt-5-mini EVALHOST_API_KEY_ENV=OPENAI_API_KEY \
//!   cargo run -p evalhost --example live_suite -- cases/mino
//! ```

use evalhost::{Suite, render_text};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        return Err("usage: live_suite CASE_PATH...".into());
    }
    let plan = Suite::new(paths).live_from_config().k(1).plan()?;
    for note in &plan.notes {
        println!("{note}");
    }
    let report = tokio::runtime::Runtime::new()?.block_on(plan.run())?;
    print!("{}", render_text(&report)?);
    Ok(())
}
