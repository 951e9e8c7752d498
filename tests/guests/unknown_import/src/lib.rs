//! A grader component that exports the grader world but also imports an interface
//! (`evalhost-test:unknown-import/secrets`) the grader sandbox does not provide. The host
//! must refuse it at load time with a named error, before any of its code runs.

#![allow(unsafe_code)] // the export macro's generated glue

wit_bindgen::generate!({
    path: "../../../wit/since_v0.1.0",
    inline: "
        package evalhost-test:unknown-import;

        interface secrets {
            host-secret: func(name: string) -> string;
        }

        world grader-with-secrets {
            include evalhost:grader/grader@0.1.0;
            import secrets;
        }
    ",
    world: "evalhost-test:unknown-import/grader-with-secrets",
    generate_all,
});

use evalhost_test::unknown_import::secrets::host_secret;

const NAME: &str = "leak";

struct Component;

impl Guest for Component {
    fn list_graders() -> Vec<GraderInfo> {
        vec![GraderInfo {
            name: NAME.into(),
            version: "0.1.0".into(),
            summary: "Passes with a secret only the host should know".into(),
            config_schema: "{}".into(),
        }]
    }

    fn check_config(_grader: String, _config: String) -> Result<(), GradeError> {
        Ok(())
    }

    fn grade(_grader: String, _config: String, _evidence: Evidence) -> Result<Verdict, GradeError> {
        // Calling the import keeps it in the component: an unused import would be dropped.
        Ok(Verdict {
            pass: true,
            score: 1.0,
            message: host_secret("API_KEY"),
        })
    }
}

export!(Component);
