//! A grader component targeting `evalhost:grader@0.5.0`, built with wit-bindgen directly so
//! that `begin-run` runs code of its own: it reads `/workspace/begin-run` and panics when the
//! file says `panic`, spins until a limit stops it when it says `spin`, and otherwise keeps
//! the evidence. `instance` passes with how many `begin-run` and `grade-in-run` calls this
//! instance answered and the final text it kept; `final_text_is` as in the other version
//! guests.

#![allow(unsafe_code)] // the export macro's generated glue

use std::cell::RefCell;

wit_bindgen::generate!({
    path: "../../../wit/since_v0.5.0",
    world: "evalhost:grader/grader@0.5.0",
});

const FINAL_TEXT_IS: &str = "final_text_is";
const INSTANCE: &str = "instance";

/// What this instance was handed and asked.
#[derive(Default)]
struct Run {
    begun: u32,
    graded: u32,
    evidence: Option<Evidence>,
}

thread_local! {
    static RUN: RefCell<Run> = RefCell::new(Run::default());
}

struct Component;

fn info(name: &str, summary: &str) -> GraderInfo {
    GraderInfo {
        name: name.into(),
        version: "1.0.0".into(),
        summary: summary.into(),
        config_schema: r#"{"type":"string"}"#.into(),
    }
}

fn check(grader: &str) -> Result<(), GradeError> {
    if grader == FINAL_TEXT_IS || grader == INSTANCE {
        Ok(())
    } else {
        Err(GradeError::UnknownGrader(grader.to_owned()))
    }
}

fn verdict(pass: bool, message: String) -> Verdict {
    Verdict {
        pass,
        score: if pass { 1.0 } else { 0.0 },
        message,
    }
}

fn grade_with(grader: &str, config: &str, evidence: &Evidence, run: &Run) -> Verdict {
    if grader == INSTANCE {
        return verdict(
            true,
            format!(
                "begin-run {} time(s), grade-in-run {} time(s), final text {:?}",
                run.begun, run.graded, evidence.final_text
            ),
        );
    }
    let want = config.trim_matches('"');
    let pass = evidence.final_text == want;
    verdict(
        pass,
        if pass {
            String::new()
        } else {
            format!(
                "{FINAL_TEXT_IS} {want:?}: final text {:?}",
                evidence.final_text
            )
        },
    )
}

impl Guest for Component {
    fn list_graders() -> Vec<GraderInfo> {
        vec![
            info(FINAL_TEXT_IS, "The final text is exactly the config string"),
            info(INSTANCE, "Passes, saying what this instance was handed"),
        ]
    }

    fn check_config(grader: String, _config: String) -> Result<(), GradeError> {
        check(&grader)
    }

    fn grade(grader: String, config: String, evidence: Evidence) -> Result<Verdict, GradeError> {
        check(&grader)?;
        RUN.with(|run| Ok(grade_with(&grader, &config, &evidence, &run.borrow())))
    }

    fn describe(grader: String, _config: String) -> Result<String, GradeError> {
        check(&grader)?;
        Ok(format!("{grader} (begin-run test guest)"))
    }

    fn begin_run(evidence: Evidence) {
        match std::fs::read_to_string("/workspace/begin-run").as_deref() {
            Ok("panic") => panic!("no evidence wanted"),
            Ok("spin") => {
                let mut n = 0u64;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            _ => {}
        }
        RUN.with(|run| {
            let mut run = run.borrow_mut();
            run.begun += 1;
            run.evidence = Some(evidence);
        });
    }

    fn grade_in_run(grader: String, config: String) -> Result<Verdict, GradeError> {
        check(&grader)?;
        RUN.with(|run| {
            let mut run = run.borrow_mut();
            run.graded += 1;
            let run = &*run;
            match &run.evidence {
                Some(evidence) => Ok(grade_with(&grader, &config, evidence, run)),
                None => Err(GradeError::Failed("grade-in-run before begin-run".into())),
            }
        })
    }
}

export!(Component);
