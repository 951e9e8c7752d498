//! `evalhost run --junit FILE --html FILE`: the report in the formats CI systems and people
//! read, written after the run next to the text table. Private and atomic like every report
//! file ([`evalhost::private_file`]).

use std::path::Path;

use anyhow::Context;

use super::Failure;
use evalhost::report::{RunDetail, SuiteReport, render_html, write_junit};

/// Refuse a report path (`--out`, `--junit`, `--html`, `-o`) inside evalhost's own
/// configuration, data or cache directory, as Mino refuses an `--out` inside `~/.mino`.
/// Checked before anything runs.
pub fn refuse_own_dirs<'a>(
    paths: impl IntoIterator<Item = (&'a str, Option<&'a Path>)>,
) -> Result<(), Failure> {
    let env = std::collections::HashMap::from_iter(std::env::vars());
    for (flag, path) in paths {
        let Some(path) = path else { continue };
        if let Some(own) = evalhost::config::own_dir_containing(path, &env) {
            return Err(Failure::usage(anyhow::anyhow!(
                "{flag} `{}` is inside {own}; write reports outside evalhost's configuration, data and cache directories",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Write the JUnit XML and HTML reports that were asked for.
pub fn write(
    junit: Option<&Path>,
    html: Option<&Path>,
    report: &SuiteReport,
    details: &[RunDetail],
) -> Result<(), Failure> {
    if let Some(path) = junit {
        evalhost::private_file::write_with(path, |out| write_junit(report, out))
            .with_context(|| format!("failed to write the JUnit report `{}`", path.display()))
            .map_err(Failure::internal)?;
    }
    if let Some(path) = html {
        evalhost::private_file::write(path, render_html(report, details).as_bytes())
            .with_context(|| format!("failed to write the HTML report `{}`", path.display()))
            .map_err(Failure::internal)?;
    }
    Ok(())
}
