//! `evalhost run --junit FILE --html FILE`: the report in the formats CI systems and people
//! read, written after the run next to the text table. Private and atomic like every report
//! file ([`crate::private_file`]).

use std::path::Path;

use anyhow::Context;

use super::Failure;
use crate::report::{RunDetails, SuiteReport, write_html, write_junit, write_text};

/// Refuse a report path (`--out`, `--junit`, `--html`, `-o`) inside evalhost's own
/// configuration, data or cache directory, as Mino refuses an `--out` inside `~/.mino`.
/// Checked before anything runs.
pub fn refuse_own_dirs<'a>(
    paths: impl IntoIterator<Item = (&'a str, Option<&'a Path>)>,
) -> Result<(), Failure> {
    let env = std::collections::HashMap::from_iter(std::env::vars());
    for (flag, path) in paths {
        let Some(path) = path else { continue };
        if let Some(own) = crate::config::own_dir_containing(path, &env) {
            return Err(Failure::usage(anyhow::anyhow!(
                "{flag} `{}` is inside {own}; write reports outside evalhost's configuration, data and cache directories",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Print the text report (in colour when `color`), a row at a time.
pub fn print_text(report: &SuiteReport, color: bool) -> Result<(), Failure> {
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    write_text(report, color, &mut stdout)
        .and_then(|()| std::io::Write::flush(&mut stdout))
        .context("failed to print the report")
        .map_err(Failure::internal)
}

/// How many cases of `report` did not pass every run.
pub fn failed_cases(report: &SuiteReport) -> Result<usize, Failure> {
    report
        .failed_cases()
        .context("failed to count the failed cases")
        .map_err(Failure::internal)
}

/// The closing `Eval failed: N of M cases did not pass every run` of `run` and `grade`; when
/// a grader needs something never recorded, it names the command that records it.
pub fn eval_failed(report: &SuiteReport, failed: usize) -> Result<String, Failure> {
    let commands = report
        .record_commands()
        .context("failed to read the report's cases back")
        .map_err(Failure::internal)?;
    let mut line = format!(
        "Eval failed: {failed} of {} cases did not pass every run",
        report.cases.len()
    );
    match commands.as_slice() {
        [] => {}
        [command] => line.push_str(&format!(
            "; what a grader needs was never recorded: record it with `{command}`"
        )),
        [first, rest @ ..] => line.push_str(&format!(
            "; what graders need was never recorded: record it with `{first}` and the {} more commands listed above",
            rest.len()
        )),
    }
    Ok(line)
}

/// Write the JUnit XML and HTML reports that were asked for.
pub fn write(
    junit: Option<&Path>,
    html: Option<&Path>,
    report: &SuiteReport,
    details: &RunDetails,
) -> Result<(), Failure> {
    if let Some(path) = junit {
        crate::private_file::write_with(path, |out| write_junit(report, out))
            .with_context(|| format!("failed to write the JUnit report `{}`", path.display()))
            .map_err(Failure::internal)?;
    }
    if let Some(path) = html {
        crate::private_file::write_with(path, |out| write_html(report, details, out))
            .with_context(|| format!("failed to write the HTML report `{}`", path.display()))
            .map_err(Failure::internal)?;
    }
    Ok(())
}
