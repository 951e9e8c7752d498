//! A grader component targeting `evalhost:grader@0.1.0`, the first released WIT, built with
//! wit-bindgen directly. The host must keep loading it as the WIT grows (the SDK and the
//! built-ins target the newest version).

#![allow(unsafe_code)] // the export macro's generated glue

wit_bindgen::generate!({
    path: "../../../wit/since_v0.1.0",
    world: "evalhost:grader/grader@0.1.0",
});

// The world `use`s these from `types`, so they are in scope at the crate root.
const NAME: &str = "final_text_is";

struct Component;

fn check(grader: &str, config: &str) -> Result<String, GradeError> {
    if grader != NAME {
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
        vec![GraderInfo {
            name: NAME.into(),
            version: "1.0.0".into(),
            summary: "The final text is exactly the config string".into(),
            config_schema: r#"{"type":"string"}"#.into(),
        }]
    }

    fn check_config(grader: String, config: String) -> Result<(), GradeError> {
        check(&grader, &config).map(drop)
    }

    fn grade(grader: String, config: String, evidence: Evidence) -> Result<Verdict, GradeError> {
        let want = check(&grader, &config)?;
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
}

export!(Component);
