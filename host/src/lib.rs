//! evalhost: evaluate LLM agents against scripted or live models, and grade every run
//! with sandboxed WebAssembly grader components.
//!
//! The modules follow the data flow and sit in layers, each using only lower ones (the table
//! is in `ARCHITECTURE.md`, checked by a test):
//!
//! ```text
//! case ──► runner ──► agent ⇄ model ──► session log ──► evidence ──► grader host ──► verdicts ──► report
//! ```
//!
//! The `evalhost` binary is a thin layer over this library (cargo feature `cli`, on by
//! default; an embedder turns default features off and compiles no clap, indicatif or
//! anyhow). The types an embedder needs are re-exported here:
//!
//! | to | use |
//! |---|---|
//! | run a suite as `evalhost run` does | [`Suite`] (load, filter, tags, partition, agent override, replay or live, bundles) → [`Plan`] → [`SuiteReport`] |
//! | load cases yourself | [`case::load_cases`], [`parse_case`]; then [`runner::prepare_cases`] and [`runner::run_suite`] with [`RunOptions`] |
//! | grade evidence | [`GraderHost::with_builtins`], [`GraderHost::find`], [`PreparedEvidence`], [`GraderComponent::grade`] |
//! | grade saved runs again | [`runner::regrade`] (`evalhost grade --evidence DIR`) |
//! | read reports | [`report::read_report`] (a saved `report.json`) → [`SuiteReport`], [`report::render_text`] |
//!
//! Examples, one per use: `host/examples/` (`cargo run -p evalhost --example NAME`).
//!
//! # Run a suite
//!
//! One case, replayed against its scripted model (a loopback server on 127.0.0.1), graded by
//! built-in graders in the wasm sandbox:
//!
//! ```
//! use evalhost::Suite;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(
//!     dir.path().join("greet.yaml"),
//!     "name: greet\nprompt: Say hello.\nmodel:\n  - text: Hello, world!\ngraders:\n  - final_text_contains: Hello\n  - max_requests: 1\n",
//! )?;
//! let plan = Suite::new([dir.path()]).plan()?;
//! let runtime = tokio::runtime::Runtime::new()?;
//! let report = runtime.block_on(plan.run())?;
//!
//! assert_eq!(report.failed_cases()?, 0);
//! // A large suite's finished cases wait on disk for the report: each is read back.
//! for case in report.cases.iter() {
//!     let run = &case?.runs[0];
//!     assert!(run.pass);
//!     assert_eq!(run.verdicts.len(), 2);
//! }
//! assert!(evalhost::report::render_text(&report)?.ends_with("All cases passed.\n"));
//! # Ok(())
//! # }
//! ```
//!
//! # Grade evidence
//!
//! A grader needs only evidence (what a run did), not a run. `host/examples/embed_grader_host.rs`
//! is a complete program; the core of it:
//!
//! ```
//! use evalhost::{Evidence, GraderHost, PreparedEvidence};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let host = GraderHost::with_builtins()?;
//! let evidence = Evidence {
//!     final_text: "The build is green.".into(),
//!     ..Default::default()
//! };
//! let grader = "final_text_contains";
//! let component = host.find(grader).expect("a built-in grader");
//! let config = serde_json::json!("red").to_string();
//! component.check_config(grader, &config)?;
//! let (verdict, _stats) = component.grade(grader, &config, &PreparedEvidence::new(&evidence), None);
//! let verdict = verdict?;
//! assert!(!verdict.pass);
//! assert!(verdict.message.starts_with("final_text_contains"), "{}", verdict.message);
//! # Ok(())
//! # }
//! ```

// Every public item is documented: it is what an embedder's rustdoc shows.
#![warn(missing_docs)]
// Built without `run` (an embedder that only grades), the parts of lower layers that only
// running agents uses are unused: that is expected, not dead code.
#![cfg_attr(not(feature = "run"), allow(dead_code, unused_imports))]

pub use case::{Case, CaseError, parse_case};
pub use evidence::Evidence;
pub use grader::{GraderComponent, GraderHost, PreparedEvidence, Verdict};
pub use report::{SuiteReport, render_text};
#[cfg(feature = "run")]
pub use runner::RunOptions;
#[cfg(feature = "run")]
pub use suite::{AgentOverride, Plan, Suite, SuiteError};

#[cfg(feature = "run")]
mod agent;
mod agent_preset;
#[cfg(feature = "run")]
mod api;
#[cfg(feature = "bundles")]
pub mod bundle;
pub mod case;
// The command line, inside the library so that it can use what an embedder does not see
// (`src/main.rs` calls `internals::cli_main`).
#[cfg(feature = "cli")]
mod cli;
pub mod config;
mod confine;
mod environment;
pub mod evidence;
#[cfg(feature = "run")]
mod fuzzing;
pub mod grader;
#[cfg(feature = "run")]
pub mod history;
mod inherited_fds;
#[doc(hidden)]
pub mod internals;
pub mod judge;
mod message;
#[cfg(feature = "run")]
mod model;
mod on_path;
mod parallel;
mod private_file;
mod process_group;
pub mod report;
#[cfg(feature = "run")]
pub mod runner;
mod scaffold;
mod session;
mod spool_file;
#[cfg(feature = "run")]
mod suite;
mod timestamp;
#[cfg(any(feature = "run", feature = "bundles"))]
mod tls;
pub mod trace;
#[cfg(feature = "run")]
mod view;
mod wire;
#[cfg(feature = "run")]
mod workspace_read;
