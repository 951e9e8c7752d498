//! evalhost: evaluate LLM agents against scripted or live models, and grade every run
//! with sandboxed WebAssembly grader components.
//!
//! The modules follow the data flow (see `ARCHITECTURE.md`):
//!
//! ```text
//! case ──► runner ──► agent ⇄ model ──► session log ──► evidence ──► grader host ──► verdicts ──► report
//! ```

pub mod agent;
pub mod case;
pub mod config;
pub mod evidence;
pub mod grader;
pub mod model;
pub mod provider;
pub mod report;
pub mod runner;
pub mod scaffold;
pub mod session;
