//! A grader component whose `list-graders` answers with a 100 MiB config schema. The host
//! must refuse the listing with a named error instead of keeping 100 MiB per grader.

#![allow(unsafe_code)] // the export macro's generated glue

wit_bindgen::generate!({
    path: "../../../wit/since_v0.1.0",
    world: "evalhost:grader/grader@0.1.0",
});

/// Size of the schema: 100 MiB of description text.
const SCHEMA_BYTES: usize = 100 << 20;

struct Component;

impl Guest for Component {
    fn list_graders() -> Vec<GraderInfo> {
        // Built in place by doubling (`memory.copy`): cheap in fuel, unlike a byte-by-byte
        // loop, and one 100 MiB buffer, well within the 256 MiB memory cap.
        let mut schema = String::with_capacity(SCHEMA_BYTES + 32);
        schema.push_str("{\"description\":\"x");
        let start = schema.len() - 1;
        while schema.len() - start < SCHEMA_BYTES {
            let have = schema.len() - start;
            let more = have.min(SCHEMA_BYTES - have);
            schema.extend_from_within(start..start + more);
        }
        schema.push_str("\"}");
        vec![GraderInfo {
            name: "huge-schema".into(),
            version: "0.1.0".into(),
            summary: "Lists a 100 MiB config schema".into(),
            config_schema: schema,
        }]
    }

    fn check_config(_grader: String, _config: String) -> Result<(), GradeError> {
        Ok(())
    }

    fn grade(_grader: String, _config: String, _evidence: Evidence) -> Result<Verdict, GradeError> {
        Ok(Verdict {
            pass: true,
            score: 1.0,
            message: String::new(),
        })
    }
}

export!(Component);
