//! Variants inside one template: marked sections a project keeps or drops.
//!
//! A template is written once for every variant of its project. A line holding only
//! `{{#FLAG}}` opens a section kept when `FLAG` is set; `{{^FLAG}}` opens one kept when it is
//! not; `{{/FLAG}}` closes either. The marker lines themselves are dropped (leading spaces
//! are allowed, so a marker may sit at the indentation of what it marks). Sections do not
//! nest. The flags of a project are its language (`rust`, `python`, `js`, `c`) and `judge`
//! with `--judge`: the grader that asks the judge and the plain one share one text.

/// One marker line.
#[derive(Debug, PartialEq, Eq)]
enum Marker<'a> {
    /// `{{#FLAG}}`: kept when `FLAG` is set.
    If(&'a str),
    /// `{{^FLAG}}`: kept when `FLAG` is not set.
    Unless(&'a str),
    /// `{{/FLAG}}`: the end of the open section.
    End(&'a str),
}

fn marker(line: &str) -> Option<Marker<'_>> {
    let inner = line.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    let (kind, flag) = inner.split_at_checked(1)?;
    if flag.is_empty() || !flag.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
        return None;
    }
    match kind {
        "#" => Some(Marker::If(flag)),
        "^" => Some(Marker::Unless(flag)),
        "/" => Some(Marker::End(flag)),
        _ => None,
    }
}

/// `template` with the sections `flags` keep and without the others and the marker lines.
pub(crate) fn select(template: &str, flags: &[&str]) -> String {
    let mut out = String::with_capacity(template.len());
    // Whether the lines of the open section are kept; `None` outside a section.
    let mut keeping: Option<bool> = None;
    for line in template.split_inclusive('\n') {
        match marker(line) {
            Some(Marker::If(flag)) => keeping = Some(flags.contains(&flag)),
            Some(Marker::Unless(flag)) => keeping = Some(!flags.contains(&flag)),
            Some(Marker::End(_)) => keeping = None,
            None if keeping != Some(false) => out.push_str(line),
            None => {}
        }
    }
    out
}

/// What is wrong with the markers of `template`: a section opened inside another, an end
/// that closes no section or another flag's, a section left open. Each problem names its
/// line.
#[cfg(test)]
pub(crate) fn problems(template: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut open: Option<(&str, usize)> = None;
    for (index, line) in template.lines().enumerate() {
        let number = index + 1;
        match (marker(line), open) {
            (Some(Marker::If(flag) | Marker::Unless(flag)), Some((outer, at))) => problems.push(
                format!("line {number}: `{flag}` opened inside `{outer}` (line {at})"),
            ),
            (Some(Marker::If(flag) | Marker::Unless(flag)), None) => open = Some((flag, number)),
            (Some(Marker::End(flag)), Some((opened, _))) if flag == opened => open = None,
            (Some(Marker::End(flag)), Some((opened, at))) => problems.push(format!(
                "line {number}: `{flag}` closes the section of `{opened}` (line {at})"
            )),
            (Some(Marker::End(flag)), None) => {
                problems.push(format!("line {number}: `{flag}` closes no open section"))
            }
            (None, _) => {}
        }
    }
    if let Some((flag, at)) = open {
        problems.push(format!("line {at}: `{flag}` is never closed"));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "a\n{{#judge}}\njudge\n{{/judge}}\n  {{^judge}}\n  plain\n  {{/judge}}\n{{#c}}\nc\n{{/c}}\nz\n";

    #[test]
    fn sections_are_kept_by_their_flags() {
        assert_eq!(select(TEXT, &[]), "a\n  plain\nz\n");
        assert_eq!(select(TEXT, &["judge"]), "a\njudge\nz\n");
        assert_eq!(select(TEXT, &["judge", "c"]), "a\njudge\nc\nz\n");
        assert!(problems(TEXT).is_empty(), "{:?}", problems(TEXT));
    }

    #[test]
    fn text_that_only_looks_like_a_marker_is_kept() {
        let text = "{{name}}\n{{#Judge}}\n{{#}}\nx {{#judge}}\n";
        assert_eq!(select(text, &["judge"]), text);
    }

    #[test]
    fn misplaced_markers_are_named_by_line() {
        assert_eq!(
            problems("{{#judge}}\n{{^c}}\n{{/c}}\n{{/judge}}\n{{/judge}}\n{{#c}}\n"),
            [
                "line 2: `c` opened inside `judge` (line 1)",
                "line 3: `c` closes the section of `judge` (line 1)",
                "line 5: `judge` closes no open section",
                "line 6: `c` is never closed",
            ]
        );
    }
}
