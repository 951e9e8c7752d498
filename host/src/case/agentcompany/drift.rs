//! Drift checks: the scenario files a fixture was recorded from must still produce it.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::lines::Meta;
use super::{FixtureOptions, invalid};
use crate::case::CaseError;
use crate::case::error::Problems;
use crate::case::read::read_text;

/// The scenario directory of a fixture: `scenarios/<fixtureId>/` next to the fixture, or
/// next to the fixture's directory (the seed's `fixtures/` + `scenarios/` layout).
pub(super) fn scenario_dir(path: &Path, fixture_id: &str) -> Result<PathBuf, CaseError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let candidates = [Some(dir), dir.parent()]
        .into_iter()
        .flatten()
        .map(|d| d.join("scenarios").join(fixture_id))
        .collect::<Vec<_>>();
    candidates
        .iter()
        .find(|c| c.is_dir())
        .cloned()
        .ok_or_else(|| {
            let looked: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
            invalid(
                path,
                1,
                "meta.fixtureId",
                format!("no scenario directory (looked in {})", looked.join(" and ")),
            )
        })
}

/// Check the meta header and scenario files; returns the system prompt. `prompt` is the
/// first user turn (`None` when the turns did not check out: it is then not compared).
/// Every problem is reported; the scenario files are looked up only for a well-formed id.
pub(super) fn check(
    path: &Path,
    meta: &Meta,
    prompt: Option<&str>,
    options: &FixtureOptions,
) -> Result<String, CaseError> {
    let mut problems = Problems::default();
    let id = &meta.fixture_id;
    let kebab = !id.is_empty()
        && !id.starts_with('-')
        && !id.ends_with('-')
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !kebab {
        problems.push(invalid(
            path,
            1,
            "meta.fixtureId",
            format!("{id:?} is not kebab-case (a-z, 0-9, -)"),
        ));
    }
    let hash = &meta.system_prompt_hash;
    let well_formed = hash.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
    });
    if !well_formed {
        problems.push(invalid(
            path,
            1,
            "meta.systemPromptHash",
            format!("{hash:?} is not \"sha256:\" and 64 lowercase hex digits"),
        ));
    }
    if let Some(expected) = &options.expected_agent_core_version
        && &meta.pi_agent_core_version != expected
    {
        problems.push(invalid(
            path,
            1,
            "meta.piAgentCoreVersion",
            format!(
                "recorded with {:?}, but {expected:?} is expected; re-record the fixture",
                meta.pi_agent_core_version
            ),
        ));
    }
    if !kebab {
        return problems.finish(None);
    }
    let Some(dir) = problems.keep(scenario_dir(path, id)) else {
        return problems.finish(None);
    };
    let system = problems.keep(read_scenario_file(&dir.join("system.txt")));
    if let Some(system) = &system
        && well_formed
    {
        let actual = format!("sha256:{}", hex::encode(Sha256::digest(system.as_bytes())));
        if &actual != hash {
            problems.push(invalid(
                path,
                1,
                "meta.systemPromptHash",
                format!(
                    "scenario drift: {} hashes to {actual}; the fixture was recorded with {hash}; re-record it",
                    dir.join("system.txt").display()
                ),
            ));
        }
    }
    let user_path = dir.join("user.txt");
    if let Some(user) = problems.keep(read_scenario_file(&user_path))
        && let Some(prompt) = prompt
        && user != prompt
    {
        problems.push(invalid(
            path,
            2,
            "turn.content",
            format!(
                "scenario drift: the first user turn differs from {}",
                user_path.display()
            ),
        ));
    }
    problems.finish(system)
}

/// A scenario file's text; missing, unreadable, not UTF-8 or empty files are errors.
fn read_scenario_file(path: &Path) -> Result<String, CaseError> {
    let text = read_text(path, "scenario file")?;
    if text.trim().is_empty() {
        return Err(CaseError::malformed(
            path,
            0,
            "the scenario file is empty; a fixture with no real prompt captures no real behaviour",
        ));
    }
    Ok(text)
}
