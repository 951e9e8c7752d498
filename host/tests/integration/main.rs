//! The integration tests, one binary: each module is one behaviour area, run with
//! `cargo test -p evalhost --test integration MODULE::` (e.g. `hardening_probes::`).
//! One binary instead of one per file: each links wasmtime once, so the build is a
//! fraction of the disk and link time.

mod agent_support;
mod bundle_support;
mod common;
mod hostile_support;
mod live_support;
mod registry_support;

mod agent_bash;
mod agent_files;
mod agent_policy;
mod agent_presets;
mod agent_skills;
mod agent_turn;
mod agentcompany_cli;
mod agentcompany_load;
mod agentcompany_pi_agent_core;
mod agentcompany_replay;
mod baseline_cli;
mod beyond_cli;
mod builtin_graders;
mod bundle_cli;
mod bundle_registry;
mod bundle_tamper;
mod case_load;
mod case_parse;
mod case_schema;
mod cli_check;

mod cli_color;
mod cli_help;
mod cli_interrupt;
mod cli_list;
mod cli_load;
mod cli_reports;
mod cli_run;
mod confinement;
mod determinism;
mod external_agent;
mod external_agent_live;
mod fuzz_corpus;
mod grader_by_path;
mod grader_check;
mod grader_examples;
mod grader_sandbox;
mod grader_versions;
mod hardening_agent;
mod hardening_bad_input;
mod hardening_out;
mod hardening_probes;
mod judge;
mod layers;
mod library_api;
mod live_cli;
mod live_provider;
mod live_record;
mod model_server;
mod model_sse_parser;
mod nexus_cli;
mod nexus_load;
mod partition_cli;
mod perf_guard;
mod private_output;
mod regrade_cli;
mod report_formats;
mod report_schema;
mod report_stats;
mod run_timeout;
mod sdk_conformance;
mod skills_cli;
mod wheel;
