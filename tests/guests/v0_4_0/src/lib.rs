//! A grader component targeting `evalhost:grader@0.4.0` (the world of 0.3.0, documented as
//! the host sends it), built with wit-bindgen directly: the SDK targets a later version
//! (0.5.0, which hands the evidence once per instance), and the host must keep loading this
//! one and sending it the evidence with every `grade` call. `final_text_is` as in the 0.2.0
//! guest; `asks_judge` asks the judge (through `evalhost:grader/judge@0.4.0`) and passes
//! with its answer.

#![allow(unsafe_code)] // the export macro's generated glue

wit_bindgen::generate!({
    path: "../../../wit/since_v0.4.0",
    world: "evalhost:grader/grader@0.4.0",
});

// The world `use`s these from `types`, so they are in scope at the crate root.
const NAME: &str = "final_text_is";

struct Component;

use evalhost::grader::judge::{Question, ask};
use evalhost::grader::types::Message;

const ASKS_JUDGE: &str = "asks_judge";

fn check(grader: &str, config: &str) -> Result<String, GradeError> {
    if grader != NAME && grader != ASKS_JUDGE {
        return Err(GradeError::UnknownGrader(grader.to_owned()));
    }
    // The config is a JSON string without escapes, e.g. `"done"`.
    config
        .strip_prefix('"')
        .and_then(|c| c.strip_suffix('"'))
        .filter(|c| !c.contains(['"', '\\']))
        .map(str::to_owned)
        .ok_or_else(|| GradeError::InvalidConfig(format!("expected a plain string, got {config}")))
}

impl Guest for Component {
    fn list_graders() -> Vec<GraderInfo> {
        vec![
            GraderInfo {
                name: NAME.into(),
                version: "1.0.0".into(),
                summary: "The final text is exactly the config string".into(),
                config_schema: r#"{"type":"string"}"#.into(),
            },
            GraderInfo {
                name: ASKS_JUDGE.into(),
                version: "1.0.0".into(),
                summary: "Asks the judge the config string and passes with its answer".into(),
                config_schema: r#"{"type":"string"}"#.into(),
            },
        ]
    }

    fn check_config(grader: String, config: String) -> Result<(), GradeError> {
        check(&grader, &config).map(drop)
    }

    fn grade(grader: String, config: String, evidence: Evidence) -> Result<Verdict, GradeError> {
        let want = check(&grader, &config)?;
        if grader == ASKS_JUDGE {
            let question = Question {
                messages: vec![Message {
                    role: "user".into(),
                    content: want,
                }],
                schema: None,
                max_output_tokens: 16,
            };
            return match ask(&question) {
                Ok(answer) => Ok(Verdict {
                    pass: true,
                    score: 1.0,
                    message: answer.text,
                }),
                Err(e) => Err(GradeError::Failed(format!("{e:?}"))),
            };
        }
        let pass = evidence.final_text == want;
        Ok(Verdict {
            pass,
            score: if pass { 1.0 } else { 0.0 },
            message: if pass {
                String::new()
            } else {
                format!("{NAME} {want:?}: final text {:?}", evidence.final_text)
            },
        })
    }

    fn describe(grader: String, config: String) -> Result<String, GradeError> {
        let want = check(&grader, &config)?;
        Ok(format!("final text is exactly {want:?}"))
    }
}

export!(Component);
