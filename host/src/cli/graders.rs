//! `evalhost graders`: the built-in graders, one row each (name, version, component, summary).

use crate::grader::GraderHost;
use crate::report::render_table;
use anyhow::Context;

use super::{Failure, exit};

pub fn list_graders() -> Result<u8, Failure> {
    let host = GraderHost::with_builtins()
        .context("failed to load the built-in graders")
        .map_err(Failure::internal)?;
    let rows: Vec<[&str; 4]> = host
        .graders()
        .map(|(info, component)| {
            [
                info.name.as_str(),
                info.version.as_str(),
                component.origin(),
                info.summary.as_str(),
            ]
        })
        .collect();
    print!("{}", graders_table(&rows));
    Ok(exit::OK)
}

/// The rows as columns as wide as their widest cell, so a long grader name (a bundle's, a
/// future built-in's) cannot push its row out of line.
fn graders_table(rows: &[[&str; 4]]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| (*cell).to_owned()).collect())
        .collect();
    render_table(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_longer_than_24_characters_keeps_the_columns_aligned() {
        let table = graders_table(&[
            [
                "tool_called",
                "1.0.0",
                "builtin",
                "a call has this tool name",
            ],
            [
                "a_grader_name_longer_than_24_chars",
                "0.2.0",
                "builtin",
                "long names fit",
            ],
        ]);
        assert_eq!(
            table,
            "tool_called                         1.0.0  builtin  a call has this tool name\n\
             a_grader_name_longer_than_24_chars  0.2.0  builtin  long names fit\n"
        );
    }
}
