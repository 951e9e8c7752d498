//! Command-line parsing and dispatch. Errors become `Error: ...` lines and exit codes:
//! 0 every case passed, 1 some case failed a run, 2 usage or case-file error, 3 internal error.

mod args;
mod baseline;
mod bundle;
mod check;
mod compare;
mod completions;
mod grade;
mod grade_trace;
mod grader;
mod graders;
mod history;
mod judge;
mod list;
mod otel;
mod pi_agent;
mod problems;
mod progress;
mod promote;
mod record;
mod record_live;
mod report;
mod report_files;
mod run;
mod schema;
mod signals;
mod ui;
mod view;

use std::process::ExitCode;

use clap::Parser;

pub use args::{Args, Command};

/// Exit codes, documented in `--help` and README.
pub mod exit {
    /// Every case passed every run.
    pub const OK: u8 = 0;
    /// Some case did not pass every run.
    pub const EVAL_FAILED: u8 = 1;
    /// Bad usage, or a case file or grader config is invalid.
    pub const USAGE: u8 = 2;
    /// evalhost itself failed (I/O, engine setup).
    pub const INTERNAL: u8 = 3;
    /// Ctrl-C or SIGTERM stopped `evalhost run`; the report of what finished was printed.
    pub const INTERRUPTED: u8 = 130;
}

/// A failure carrying the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl Failure {
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: exit::USAGE,
            error: error.into(),
        }
    }
    pub fn internal(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: exit::INTERNAL,
            error: error.into(),
        }
    }
}

/// Parse the command line, run the command, and return its exit status.
pub fn main() -> ExitCode {
    crate::tls::install_crypto_provider();
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let ui = ui::Ui::new(args.color, args.quiet);
    let result = match args.command {
        Command::Run(run) => run::run(*run, &ui),
        Command::List(list) => list::list(list),
        Command::Check(check) => check::check(check),
        Command::Completions(completions) => Ok(completions::completions(completions)),
        Command::Schema(schema) => schema::schema(schema),
        Command::Graders => graders::list_graders(),
        Command::Record(record) => record::record(record, &ui),
        Command::Promote(promote) => promote::promote(promote),
        Command::Grader(grader) => grader::grader(grader),
        Command::Bundle(args) => bundle::bundle(args),
        Command::Grade(grade) => grade::grade(grade),
        Command::Compare(args) => compare::compare_command(args, &ui),
        Command::Baseline(baseline) => baseline::baseline(baseline, &ui),
        Command::Report(report) => report::report(report),
        Command::History(args) => history::history(args),
        Command::View(args) => view::view(args, &ui),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("{} {:#}", ui.error_prefix(), failure.error);
            ExitCode::from(failure.code)
        }
    }
}
