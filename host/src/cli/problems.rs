//! Cases with problems: every problem on its own line, then one `Error:` line counting them.

use crate::case::CaseError;
use anyhow::anyhow;

/// The error a command ends with when its cases do not load or their graders do not bind.
/// One problem is the error itself (`Error: FILE:LINE:COL: FIELD: ...`); several are printed
/// on stderr, one a line in load order, and the error counts them.
pub fn error(problem: CaseError) -> anyhow::Error {
    let mut problems = problem.into_problems();
    if problems.len() == 1
        && let Some(problem) = problems.pop()
    {
        return problem.into();
    }
    print(&problems);
    anyhow!(
        "{} in the cases (each shown above with its file, line and field)",
        count(problems.len())
    )
}

/// Every problem, one a line, on stderr.
pub fn print(problems: &[CaseError]) {
    for problem in problems {
        eprintln!("{problem}");
    }
}

/// `1 problem`, `N problems`.
pub fn count(n: usize) -> String {
    match n {
        1 => "1 problem".to_owned(),
        n => format!("{n} problems"),
    }
}
