//! What a case name may be. A case's name names its directory under `--out`
//! (`DIR/<case>/run-N.jsonl`), so it must be one plain path component: not empty, not `.` or
//! `..`, without `/` or `\`, and without control characters (NUL among them). A YAML case
//! file's name is its file stem (`...yaml` is the case `..`), a Nexus case's its directory's
//! name; both are checked here when the case is loaded.

/// Why `name` cannot be a case name, if it cannot.
pub(crate) fn problem(name: &str) -> Option<String> {
    let why = if name.is_empty() {
        "a case name must not be empty"
    } else if name == "." || name == ".." {
        "a case name must not be \".\" or \"..\" (it names the case's directory under --out)"
    } else if name.contains(['/', '\\']) {
        "a case name must not contain \"/\" or \"\\\" (it names one directory under --out)"
    } else if name.chars().any(char::is_control) {
        "a case name must not contain control characters"
    } else {
        return None;
    };
    Some(format!("{name:?}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn plain_names_are_case_names() {
        for name in ["fix-the-bug", "a.b", "...", ".hidden", "café", "a b", "-x"] {
            assert_eq!(problem(name), None, "{name}");
        }
    }

    #[test]
    fn names_that_are_not_one_plain_component_are_refused() {
        for name in [
            "",
            ".",
            "..",
            "a/b",
            "/",
            "..\\x",
            "a\0b",
            "tab\there",
            "nl\n",
            "\u{7f}",
        ] {
            assert!(problem(name).is_some(), "{name:?}");
        }
        assert_eq!(
            problem("..").unwrap(),
            "\"..\": a case name must not be \".\" or \"..\" (it names the case's directory under --out)"
        );
    }
}
