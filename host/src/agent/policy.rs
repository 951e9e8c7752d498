//! The approval policy: protected paths, refused in every mode before any confirmation,
//! then the confirmation answer for tools that change things.

use std::path::{Component, Path, PathBuf};

use cap_std::fs::Dir;

use super::paths::ToolPath;
use crate::session::Approve;

/// The result text of a call the user declined.
pub const DECLINED: &str = "The user did not approve this call.";

/// Most symlink hops followed when checking where a dangling link would write.
const MAX_LINK_HOPS: usize = 8;

/// Whether one path component names a protected file or directory: `.env`, `.env.*`, `.git`.
fn is_protected_name(name: &str) -> bool {
    name == ".env" || name.starts_with(".env.") || name == ".git"
}

fn first_protected<'a>(mut names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    names.find(|name| is_protected_name(name))
}

/// Why a file tool may not touch `path`, or `None` when policy allows it.
///
/// Checked on the normalised path, then on where it really leads inside the workspace, so a
/// symlink to `.env` is as protected as `.env` itself.
pub(crate) fn protected_path(dir: &Dir, path: &ToolPath) -> Option<String> {
    if let Some(name) = first_protected(path.components.iter().map(String::as_str)) {
        return Some(blocked(&path.raw, name));
    }
    let relative = path.relative().ok()?;
    let resolved = resolve(dir, &relative)?;
    let names = resolved.components().filter_map(|c| match c {
        Component::Normal(name) => name.to_str(),
        _ => None,
    });
    first_protected(names).map(|name| {
        format!(
            "{} (it resolves to `{}`)",
            blocked(&path.raw, name),
            resolved.display()
        )
    })
}

fn blocked(raw: &str, name: &str) -> String {
    format!(
        "Blocked by policy: `{raw}` is a protected path (`{name}`). `.env` files and `.git/` are never accessible to tools, in any mode."
    )
}

/// Where `relative` leads inside the workspace, following symlinks; for a path that does
/// not exist yet, where a write would create it. `None` when it leads outside (cap-std
/// refuses those when the tool runs).
fn resolve(dir: &Dir, relative: &Path) -> Option<PathBuf> {
    let mut current = relative.to_path_buf();
    for _ in 0..MAX_LINK_HOPS {
        if let Ok(resolved) = dir.canonicalize(&current) {
            return Some(resolved);
        }
        let name = current.file_name()?.to_owned();
        let parent = match current.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir.canonicalize(p).ok()?,
            _ => PathBuf::new(),
        };
        // A dangling symlink: a write through it would create its target.
        match dir.read_link(&current) {
            Ok(target) => current = lexical(&parent.join(target))?,
            Err(_) => return Some(parent.join(name)),
        }
    }
    None
}

fn lexical(path: &Path) -> Option<PathBuf> {
    let text = path.to_str()?;
    ToolPath::parse(text).relative().ok()
}

/// Whether the harness approves a call that needs confirmation.
pub(crate) fn approves(approve: Approve) -> bool {
    match approve {
        Approve::None => false,
        Approve::All => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_names() {
        for name in [".env", ".env.local", ".git"] {
            assert!(is_protected_name(name), "{name}");
        }
        for name in [".envrc", "env", ".gitignore", "x.env"] {
            assert!(!is_protected_name(name), "{name}");
        }
    }
}
