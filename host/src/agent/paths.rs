//! Lexical normalisation of the paths the model gives file tools.
//!
//! Normalising first means policy sees `./.env` and `a/../.env` as `.env`, and an escape
//! such as `../x` gets a clear message before cap-std would refuse it anyway. cap-std stays
//! the enforcement: symlinks are only visible to it.

use std::path::PathBuf;

/// A tool path after removing `.` and resolving `..` lexically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolPath {
    /// The path as the model wrote it.
    pub raw: String,
    /// Remaining components, root first (for an escaping path, those left after the climb).
    pub components: Vec<String>,
    /// The path started at `/`.
    pub absolute: bool,
    /// A `..` climbed above the starting directory.
    pub escapes: bool,
}

impl ToolPath {
    /// Normalise `raw`; an empty path means the workspace root.
    pub fn parse(raw: &str) -> Self {
        let mut components: Vec<String> = Vec::new();
        let mut escapes = false;
        for part in raw.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if components.pop().is_none() {
                        escapes = true;
                    }
                }
                other => components.push(other.to_owned()),
            }
        }
        Self {
            raw: raw.to_owned(),
            components,
            absolute: raw.starts_with('/'),
            escapes,
        }
    }

    /// The workspace-relative path (`.` for the root), or why it is not inside the workspace.
    pub fn relative(&self) -> Result<PathBuf, String> {
        let raw = &self.raw;
        if raw.contains('\0') {
            return Err(format!(
                "Path `{}` contains a NUL byte.",
                raw.escape_debug()
            ));
        }
        if self.absolute {
            return Err(format!(
                "Path `{raw}` is outside the workspace: absolute paths are not allowed; use a path relative to the workspace root."
            ));
        }
        if self.escapes {
            return Err(format!(
                "Path `{raw}` is outside the workspace: `..` climbs above the workspace root."
            ));
        }
        if self.components.is_empty() {
            return Ok(PathBuf::from("."));
        }
        Ok(self.components.iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_dots() {
        let path = ToolPath::parse("./a/../b//c/.");
        assert_eq!(path.components, ["b", "c"]);
        assert_eq!(path.relative(), Ok(PathBuf::from("b/c")));
        assert_eq!(ToolPath::parse("").relative(), Ok(PathBuf::from(".")));
    }

    #[test]
    fn refuses_escapes_and_absolute_paths() {
        assert!(ToolPath::parse("../x").relative().is_err());
        assert!(ToolPath::parse("a/../../x").relative().is_err());
        assert!(ToolPath::parse("/etc/passwd").relative().is_err());
        assert!(ToolPath::parse("a\0b").relative().is_err());
    }
}
