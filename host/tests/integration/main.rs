//! The integration tests, one binary: each folder is one area and each module in it one
//! behaviour, run with `cargo test -p evalhost --test integration AREA::MODULE::` (e.g.
//! `hardening::probes::`, or `grader::` for an area). One binary instead of one per file:
//! each links wasmtime once, so the build is a fraction of the disk and link time.
//! `support/` holds what the tests share (`support::evalhost::Evalhost` runs the binary).

/// What the tests share: the repository root, the `evalhost` command builder, the test guest components, fake providers and registries, Docker and its images.
mod support {
    pub mod agent;
    pub mod bundle;
    pub mod common;
    pub mod docker;
    pub mod evalhost;
    pub mod guests;
    pub mod hostile;
    pub mod live;
    pub mod postgres;
    pub mod python;
    pub mod registry;
}

/// The command line on the shipped suites: run, check, list, load, help, colour, interrupts, partitions, baselines and comparisons, re-grading, timeouts.
mod cli {
    mod baseline;
    mod beyond;
    mod check;
    mod color;
    mod compare;
    mod graders;
    mod help;
    mod interrupt;
    mod list;
    mod load;
    mod partition;
    mod regrade;
    mod run;
    mod timeout;
}

/// The history store: every run recorded, Ctrl-C and resume, imports, broken stores, PostgreSQL.
mod history {
    mod compare;
    mod gc;
    mod import;
    mod postgres;
    mod records;
    mod resume;
    mod store_errors;
}

/// The built-in agent loop: tools, approval policy, skills, turns.
mod agent {
    mod bash;
    mod files;
    mod policy;
    mod skills;
    mod skills_cli;
    mod turn;
}

/// Agents evalhost runs: the presets (real Codex CLI, Claude Code, pi, mini-swe-agent, Gemini CLI), external agents, the pi-agent-core adapter.
mod agents {
    mod command_line_agent;
    mod explained;
    mod external;
    mod external_live;
    mod pi_agent_core;
    pub(crate) mod presets;
}

/// evalhost's model endpoint: the scripted model server, the SSE parser, the official SDKs as its conformance test.
mod endpoint {
    mod model_server;
    mod sdk_conformance;
    mod session_tokens;
    mod sse_parser;
}

/// Case sources: load, parse, the JSON Schema, Nexus, AgentCompany and Harbor.
mod case {
    mod agentcompany;
    mod agentcompany_cli;
    mod agentcompany_replay;
    mod harbor;
    mod load;
    mod nexus;
    mod nexus_cli;
    mod parse;
    mod schema;
}

/// The grader host: the sandbox, WIT versions, check, the examples, the built-ins, graders by path, the judge (and `grader test` answering it), a verifier's reward.
mod grader {
    mod builtin;
    mod by_path;
    mod check;
    mod examples;
    mod file_absent;
    mod judge;
    mod sandbox;
    mod session;
    mod test_judge;
    mod verifier;
    mod versions;
}

/// Grader bundles: pack, sign, install, tamper, OCI registries.
mod bundle {
    mod cli;
    mod registry;
    mod tamper;
}

/// Environments: a case's agent in a container; the images and registry the tests use.
mod environment {
    mod agents;
    mod images;
    mod lifecycle;
    mod live;
    mod pins;
    mod run;
}

/// Traces in and out: OTLP export to a collector the test starts; OTLP, Inspect AI and ATIF
/// traces made by the real tools, graded and promoted to replay cases.
mod trace {
    mod atif;
    mod grade;
    mod inspect;
    mod otlp_in;
    mod otlp_out;
    mod promote;
}

/// Live mode against fake providers on 127.0.0.1: the CLI, the provider streams, record.
mod live {
    mod cli;
    mod cost;
    mod provider;
    mod record;
}

/// Reports: JUnit and HTML, the report schema, statistics, what the reports say.
mod report {
    mod cli;
    mod formats;
    mod not_evaluable;
    mod schema;
    mod stats;
}

/// Hostile input and hostile processes: bad input, probes, confinement, post-run reads, private output, nothing lost, determinism, the fuzz corpora.
mod hardening {
    mod agent;
    mod bad_input;
    mod case_names;
    mod confinement;
    mod determinism;
    mod fuzz_corpus;
    mod inherited_fds;
    mod out;
    mod post_run_reads;
    mod private_output;
    mod probes;
    mod session_secrets;
}

/// `evalhost view`: its pages and security over plain HTTP, and what a person sees in a real browser.
mod view {
    mod browser;
    mod server;
    pub(crate) mod store;
}

/// The library as an embedder and a newcomer meet it: `Suite` without the CLI, the layers of
/// `host/src` as `ARCHITECTURE.md` lists them, one folder per model API, the public API as
/// its snapshot lists it.
mod library {
    mod api;
    mod api_folders;
    mod layers;
    mod outside_project;
    mod public_api;
}

mod perf_guard;
mod wheel;
