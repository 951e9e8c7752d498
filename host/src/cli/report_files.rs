//! `evalhost run --junit FILE --html FILE`: the report in the formats CI systems and people
//! read, written after the run next to the text table.

use std::path::Path;

use anyhow::Context;

use super::Failure;
use evalhost::report::{RunDetail, SuiteReport, render_html, render_junit};

/// Write the JUnit XML and HTML reports that were asked for.
pub fn write(
    junit: Option<&Path>,
    html: Option<&Path>,
    report: &SuiteReport,
    details: &[RunDetail],
) -> Result<(), Failure> {
    if let Some(path) = junit {
        std::fs::write(path, render_junit(report))
            .with_context(|| format!("failed to write the JUnit report `{}`", path.display()))
            .map_err(Failure::internal)?;
    }
    if let Some(path) = html {
        std::fs::write(path, render_html(report, details))
            .with_context(|| format!("failed to write the HTML report `{}`", path.display()))
            .map_err(Failure::internal)?;
    }
    Ok(())
}
