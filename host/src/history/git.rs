//! The project's git state when a run starts: commit, branch, dirty. Asked of the `git`
//! program (three short commands, only when the directory is in a repository); a machine
//! without git, or a directory outside a repository, records none.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::report::GitState;

/// Variables CI systems set to the branch when they check out a detached HEAD, in the order
/// they are asked: GitHub Actions (a pull request's head, then the ref), GitLab, Buildkite,
/// Jenkins.
const CI_BRANCH_VARIABLES: &[&str] = &[
    "GITHUB_HEAD_REF",
    "GITHUB_REF_NAME",
    "CI_COMMIT_REF_NAME",
    "BUILDKITE_BRANCH",
    "BRANCH_NAME",
];

/// The git state of the repository holding `dir`, or `None` outside one.
pub fn git_state(dir: &Path) -> Option<GitState> {
    let commit = git(dir, &["rev-parse", "--verify", "-q", "HEAD"])?;
    let branch = git(dir, &["symbolic-ref", "--short", "-q", "HEAD"]).or_else(|| {
        CI_BRANCH_VARIABLES.iter().find_map(|name| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        })
    });
    let dirty = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .is_some_and(|o| o.status.success() && !o.stdout.is_empty());
    Some(GitState {
        commit,
        branch,
        dirty,
    })
}

/// `git -C dir ARGS`'s trimmed output when it succeeds and says something.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (output.status.success() && !text.is_empty()).then_some(text)
}
