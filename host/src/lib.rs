//! evalhost: evaluate LLM agents against scripted or live models, and grade every run
//! with sandboxed WebAssembly grader components.
//!
//! The modules follow the data flow (see `ARCHITECTURE.md`):
//!
//! ```text
//! case ──► runner ──► agent ⇄ model ──► session log ──► evidence ──► grader host ──► verdicts ──► report
//! ```
//!
//! The `evalhost` binary is a thin shell over this library; everything it does can be done
//! from Rust:
//!
//! | step | API |
//! |---|---|
//! | load a suite | [`case::load_cases`] (files and directories of the three formats), [`case::parse_case`] (one YAML text) |
//! | bind graders | [`grader::GraderHost::with_builtins`], then [`runner::prepare_cases`] (each config checked by its component) |
//! | run | [`runner::run_suite`] with [`runner::RunOptions`] (runs, jobs, `--out`, a [`runner::Progress`] observer) |
//! | grade evidence | [`grader::GraderHost::find`], [`grader::PreparedEvidence`], [`grader::GraderComponent::grade`] |
//! | read reports | [`report::read_report`] (a saved `report.json`) → [`report::SuiteReport`], [`report::render_text`] (the text table) |
//!
//! # Run a tiny suite
//!
//! One case, replayed against its scripted model (a loopback server on 127.0.0.1), graded by
//! a built-in grader in the wasm sandbox:
//!
//! ```
//! use std::path::Path;
//!
//! use evalhost::case::parse_case;
//! use evalhost::grader::GraderHost;
//! use evalhost::runner::{RunOptions, prepare_cases, run_suite};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let yaml = "\
//! name: greet
//! prompt: Say hello.
//! model:
//!   - text: Hello, world!
//! graders:
//!   - final_text_contains: Hello
//!   - max_requests: 1
//! ";
//! let case = parse_case(Path::new("greet.yaml"), yaml)?;
//! let host = GraderHost::with_builtins()?;
//! let prepared = prepare_cases(vec![case], &host)?;
//! let runtime = tokio::runtime::Runtime::new()?;
//! let report = runtime.block_on(run_suite(prepared, &RunOptions::default()))?;
//!
//! assert_eq!(report.failed_cases(), 0);
//! let run = &report.cases[0].runs[0];
//! assert!(run.pass);
//! assert_eq!(run.verdicts.len(), 2);
//! assert!(evalhost::report::render_text(&report).ends_with("All cases passed.\n"));
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
//! use evalhost::evidence::Evidence;
//! use evalhost::grader::{GraderHost, PreparedEvidence};
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

pub mod agent;
pub mod agent_preset;
pub mod bundle;
pub mod case;
pub mod config;
pub mod confine;
mod error_chain;
pub mod evidence;
#[doc(hidden)]
pub mod fuzzing;
pub mod grader;
pub mod judge;
pub mod model;
mod parallel;
pub mod private_file;
mod process_group;
pub mod provider;
pub mod report;
pub mod runner;
pub mod scaffold;
pub mod session;
pub mod tls;
pub mod wire;
