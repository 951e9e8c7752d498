//! The bench-only native path: the built-in graders' own Rust code (the `graders/builtin`
//! crate compiled for the host) called in-process on the same evidence the WASM host gets.
//! This is the baseline of the WASM/native ratios; evalhost itself never grades this way.

use std::path::Path;

use evalhost::evidence::Evidence;
use evalhost_builtin_graders as builtin;
use evalhost_sdk as sdk;

/// The host's evidence in the graders' own type, with the workspace at `workspace` (a
/// native grader reads the real directory; in the sandbox it is `/workspace`).
pub fn sdk_evidence(e: &Evidence, workspace: &Path) -> sdk::Evidence {
    sdk::Evidence {
        case_name: e.case_name.clone(),
        run: e.run,
        mode: e.mode.clone(),
        model: e.model.clone(),
        prompt: e.prompt.clone(),
        final_text: e.final_text.clone(),
        messages: e
            .messages
            .iter()
            .map(|m| sdk::Message {
                role: m.role.clone(),
                content: m.content.clone(),
            })
            .collect(),
        calls: e
            .calls
            .iter()
            .map(|c| sdk::ToolCall {
                index: c.index,
                call_id: c.call_id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                status: c.status.clone(),
                output: c.output.clone(),
                started: c.started,
                duration_ms: c.duration_ms,
            })
            .collect(),
        usage: sdk::Usage {
            requests: e.usage.requests,
            input_tokens: e.usage.input_tokens,
            output_tokens: e.usage.output_tokens,
            synthetic: e.usage.synthetic,
        },
        events: e
            .events
            .iter()
            .map(|ev| sdk::Event {
                seq: ev.seq,
                kind: ev.kind.clone(),
                at_ms: ev.at_ms,
                data: ev.data.clone(),
            })
            .collect(),
        duration_ms: e.duration_ms,
        run_error: e.run_error.clone(),
        workspace: workspace.display().to_string(),
        seeded_files: e
            .seeded_files
            .iter()
            .map(|f| sdk::SeededFile {
                path: f.path.clone(),
                sha256: f.sha256.clone(),
                size: f.size,
            })
            .collect(),
    }
}

/// Grade natively: parse and check the config, then grade, exactly as the component's
/// `grade` export does (the same dispatch, `register_graders!`'s, compiled for the host), but
/// by reference (no copy of the evidence). Every built-in is here by construction.
///
/// A grader that asks the judge gets no answer natively (the SDK's native judge is "not
/// configured"), so `rubric` and a judged `semantic` or `semantic_rubric` entry fail or are
/// not evaluable here; [`crate::grading::per_kind`] leaves such calls untimed and says why.
pub fn grade(
    grader: &str,
    config: &str,
    evidence: &sdk::Evidence,
) -> Result<sdk::Verdict, sdk::GradeError> {
    builtin::Registered::grade_named(grader, config, evidence).unwrap_or_else(|| {
        Err(sdk::GradeError::UnknownGrader(format!(
            "{grader} is not a built-in grader; the built-ins: {}",
            builtin::Registered::NAMES.join(", ")
        )))
    })
}

#[cfg(test)]
mod tests {
    use evalhost::grader::{BUILTIN_GRADERS_WASM, GraderHost, Limits};

    use super::*;

    /// The embedded component (what `evalhost graders` lists) and the native dispatch are the
    /// same list, in the same order, and the native path grades every one of them.
    #[test]
    fn the_native_path_grades_every_grader_the_component_lists() {
        let mut host = GraderHost::new(Limits::default(), None).expect("engine");
        host.add_component(BUILTIN_GRADERS_WASM, "builtin")
            .expect("built-in graders load");
        let listed: Vec<&str> = host.graders().map(|(info, _)| info.name.as_str()).collect();
        assert_eq!(listed, builtin::Registered::NAMES);
        for name in listed {
            let outcome = grade(name, "{}", &sdk::Evidence::default());
            assert!(
                !matches!(outcome, Err(sdk::GradeError::UnknownGrader(_))),
                "{name}: {outcome:?}"
            );
        }
        assert!(matches!(
            grade("no_such_grader", "{}", &sdk::Evidence::default()),
            Err(sdk::GradeError::UnknownGrader(message)) if message.starts_with("no_such_grader is not a built-in grader; the built-ins: final_text_contains, ")
        ));
    }
}
