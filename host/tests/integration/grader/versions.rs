//! The WIT version story: a component built against the first released WIT (0.1.0) keeps
//! loading and grading, a 0.2.0 component (which adds `describe`) loads beside it, a 0.3.0
//! component (which adds the `judge` import) still asks the judge, a 0.4.0 component (0.3.0
//! documented as the host really sends it) still gets the evidence with every call, and the
//! built-ins and the hostile probes (the SDK) target 0.5.0 (the evidence handed once per
//! instance, `begin-run`). `grader check` names the version a component targets and what it
//! misses against the newest (the compatibility table of docs/writing-graders.md).

use crate::support::evalhost::Evalhost;
use crate::support::guests;
use std::path::Path;

use evalhost::evidence::{Evidence, RunFacts};
use evalhost::grader::{
    GraderHost, Limits, NEWEST_WORLD_VERSION, PreparedEvidence, WORLD_VERSIONS,
};

const BUILTIN: &str = env!("EVALHOST_BUILTIN_GRADERS_WASM");

fn host() -> GraderHost {
    GraderHost::new(Limits::default(), None).expect("engine")
}

fn evidence(final_text: &str) -> PreparedEvidence {
    let mut evidence = Evidence::from_session(&[], RunFacts::default());
    evidence.final_text = final_text.to_owned();
    PreparedEvidence::new(&evidence)
}

#[test]
fn every_released_wit_version_has_a_frozen_copy() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for version in WORLD_VERSIONS {
        let wit = repo.join(format!("wit/since_v{version}/grader.wit"));
        let text = std::fs::read_to_string(&wit).unwrap();
        assert!(
            text.contains(&format!("package evalhost:grader@{version};")),
            "{}",
            wit.display()
        );
    }
}

#[test]
fn a_0_1_0_component_still_loads_and_grades() {
    let host = host();
    let (component, report) = host
        .check_component_file(Path::new(guests::v0_1_0()))
        .unwrap();
    assert_eq!(report.world_version, "0.1.0");
    assert!(
        report
            .imports
            .iter()
            .any(|i| i == "evalhost:grader/types@0.1.0"),
        "{:?}",
        report.imports
    );
    let (verdict, _) = component.grade("final_text_is", r#""done""#, &evidence("done"), None);
    assert!(verdict.unwrap().pass);
    // 0.1.0 has no `describe`: the host asks nothing of it.
    assert!(component.describe("final_text_is", r#""done""#).is_none());
}

#[test]
fn a_0_2_0_component_loads_beside_0_1_0_and_describes() {
    let mut host = GraderHost::with_builtins().unwrap();
    let bytes = std::fs::read(guests::v0_2_0()).unwrap();
    let component = host.add_component(&bytes, "v0.2.0 test").unwrap().clone();
    assert_eq!(component.world_version(), "0.2.0");
    assert_eq!(
        host.find("final_text_is").map(|c| c.world_version()),
        Some("0.2.0")
    );
    assert_eq!(
        host.find("final_text_contains").map(|c| c.world_version()),
        Some("0.5.0")
    );
    assert_eq!(
        component.describe("final_text_is", r#""done""#),
        Some(Ok(r#"final text is exactly "done""#.to_owned()))
    );
    assert!(matches!(
        component.describe("final_text_is", "42"),
        Some(Err(evalhost::grader::GraderError::InvalidConfig(_)))
    ));
    let (pass, _) = component.grade("final_text_is", r#""done""#, &evidence("done"), None);
    assert!(pass.unwrap().pass);
    let (fail, _) = component.grade("final_text_is", r#""done""#, &evidence("nope"), None);
    assert_eq!(
        fail.unwrap().message,
        r#"final_text_is "done": final text "nope""#
    );
}

#[test]
fn a_0_3_0_component_still_loads_and_asks_the_judge() {
    let host = host();
    let (component, report) = host
        .check_component_file(Path::new(guests::v0_3_0()))
        .unwrap();
    assert_eq!(report.world_version, "0.3.0");
    assert!(
        report
            .imports
            .iter()
            .any(|i| i == "evalhost:grader/judge@0.3.0"),
        "{:?}",
        report.imports
    );
    let (verdict, _) = component.grade("final_text_is", r#""done""#, &evidence("done"), None);
    assert!(verdict.unwrap().pass);
    assert_eq!(
        component.describe("final_text_is", r#""done""#),
        Some(Ok(r#"final text is exactly "done""#.to_owned()))
    );
    // Its question reaches the host's judge through `judge@0.3.0`, which refuses it: the
    // grader was not granted the judge.
    let (verdict, _) = component.grade("asks_judge", r#""polite?""#, &evidence("hi"), None);
    assert!(
        verdict
            .unwrap_err()
            .to_string()
            .starts_with("judge not granted: this grader may not ask the judge"),
    );
}

#[test]
fn a_0_4_0_component_still_loads_and_grades_with_the_evidence_of_each_call() {
    let host = host();
    let (component, report) = host
        .check_component_file(Path::new(guests::v0_4_0()))
        .unwrap();
    assert_eq!(report.world_version, "0.4.0");
    assert!(
        report
            .imports
            .iter()
            .any(|i| i == "evalhost:grader/judge@0.4.0"),
        "{:?}",
        report.imports
    );
    let (verdict, _) = component.grade("final_text_is", r#""done""#, &evidence("done"), None);
    assert!(verdict.unwrap().pass);
    // In one session, each call grades the evidence it is given.
    let (done, nope) = (evidence("done"), evidence("nope"));
    let mut session = component.session(None);
    let (first, _) = session.grade_with_judge("final_text_is", r#""done""#, &done, None);
    let (again, _) = session.grade_with_judge("final_text_is", r#""done""#, &done, None);
    assert!(first.unwrap().pass && again.unwrap().pass);
    let (fail, _) = session.grade_with_judge("final_text_is", r#""done""#, &nope, None);
    assert_eq!(
        fail.unwrap().message,
        r#"final_text_is "done": final text "nope""#
    );
    assert_eq!(
        component.describe("final_text_is", r#""done""#),
        Some(Ok(r#"final text is exactly "done""#.to_owned()))
    );
    let (verdict, _) = component.grade("asks_judge", r#""polite?""#, &evidence("hi"), None);
    assert!(
        verdict
            .unwrap_err()
            .to_string()
            .starts_with("judge not granted: this grader may not ask the judge"),
    );
}

#[test]
fn the_sdk_targets_0_5_0_which_imports_the_judge_and_describes() {
    let host = host();
    let (component, report) = host.check_component_file(Path::new(BUILTIN)).unwrap();
    assert_eq!(report.world_version, "0.5.0");
    assert!(
        report
            .imports
            .iter()
            .any(|i| i == "evalhost:grader/judge@0.5.0"),
        "{:?}",
        report.imports
    );
    // Every SDK grader describes itself; the default is its name and summary.
    assert_eq!(
        component.describe("max_requests", "2"),
        Some(Ok(
            "max_requests: The turn used at most this many model requests".to_owned()
        ))
    );
    assert_eq!(
        component.describe("rubric", r#"{"rubric": "names fruits"}"#),
        Some(Ok(
            r#"the judge scores the final text against "names fruits" at 0.50 or more"#.to_owned()
        ))
    );
    let (verdict, _) = component.grade(
        "final_text_contains",
        r#""done""#,
        &evidence("all done"),
        None,
    );
    assert!(verdict.unwrap().pass);
    // Graded without a judge grant, a rubric's question is refused and errors the call.
    let (verdict, stats) = component.grade("rubric", r#"{"rubric": "x"}"#, &evidence("a"), None);
    assert_eq!(
        verdict.unwrap_err().to_string(),
        "judge not granted: this grader may not ask the judge: give its case entry `judge: true` (a component named by path), declare the `judge` capability in its bundle, or use a built-in grader"
    );
    assert_eq!(stats.judge.calls, 0);
}

#[test]
fn grader_check_and_test_show_the_version_and_description() {
    let output = Evalhost::new()
        .args(["grader", "check", guests::v0_2_0()])
        .run();
    output.assert_success();
    let stdout = output.stdout();
    assert!(
        stdout.contains("world:   evalhost:grader@0.2.0"),
        "{stdout}"
    );

    let dir = tempfile::tempdir().unwrap();
    let evidence_path = dir.path().join("e.json");
    let mut e = Evidence::from_session(&[], RunFacts::default());
    e.final_text = "done".into();
    std::fs::write(&evidence_path, serde_json::to_string(&e).unwrap()).unwrap();
    let config = dir.path().join("c.json");
    std::fs::write(&config, r#""done""#).unwrap();
    let output = Evalhost::new()
        .args(["grader", "test", guests::v0_2_0(), "--evidence"])
        .arg(&evidence_path)
        .arg("--config")
        .arg(&config)
        .run();
    output.assert_success();
    let stdout = output.stdout();
    assert!(
        stdout.contains(r#"checks:    final text is exactly "done""#),
        "{stdout}"
    );
    assert!(stdout.contains("verdict:   pass"), "{stdout}");
}

/// The `missing:` block of `grader check`'s text: each line's version and items, e.g.
/// `0.2.0 export `describe``, in order.
fn missing_lines(stdout: &str) -> Vec<String> {
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("  missing: "));
    let Some(first) = lines.next() else {
        return Vec::new();
    };
    std::iter::once(first.trim_start_matches("  missing: "))
        .chain(lines.map_while(|l| l.strip_prefix("           ")))
        .map(|l| l.split(':').next().unwrap().to_owned())
        .collect()
}

#[test]
fn grader_check_names_the_version_and_what_an_older_component_misses() {
    // When a version is added, these expectations grow with it.
    assert_eq!(NEWEST_WORLD_VERSION, "0.5.0");
    let describe = "0.2.0 export `describe`";
    let judge = "0.3.0 import `judge`";
    let begin_run = "0.5.0 exports `begin-run`, `grade-in-run`";
    let cases: [(&str, &str, &[&str]); 4] = [
        (guests::v0_1_0(), "0.1.0", &[describe, judge, begin_run]),
        (guests::v0_2_0(), "0.2.0", &[judge, begin_run]),
        (guests::v0_3_0(), "0.3.0", &[begin_run]),
        // 0.4.0 only documented the contract: a 0.3.0 component lacks nothing of it.
        (guests::v0_4_0(), "0.4.0", &[begin_run]),
    ];
    for (path, version, missing) in cases {
        let output = Evalhost::new().args(["grader", "check", path]).run();
        output.assert_success();
        let stdout = output.stdout();
        assert!(
            stdout.contains(&format!(
                "  world:   evalhost:grader@{version} (newest: 0.5.0; docs/writing-graders.md#compatibility)\n"
            )),
            "{stdout}"
        );
        assert_eq!(missing_lines(stdout), missing, "{stdout}");
        assert!(
            stdout.contains("shown by `evalhost grader test`") == missing.contains(&describe),
            "each missing item says what it brings: {stdout}"
        );

        let output = Evalhost::new()
            .args(["grader", "check", "--json", path])
            .run();
        output.assert_success();
        let json: serde_json::Value = serde_json::from_str(output.stdout()).unwrap();
        assert_eq!(json["world_version"], version);
        assert_eq!(json["newest_world_version"], "0.5.0");
        let listed: Vec<String> = json["missing"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let items: Vec<&str> = m["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.as_str().unwrap())
                    .collect();
                format!("{} {} {}", m["version"], m["kind"], items.join(","))
            })
            .collect();
        let expected: Vec<String> = missing
            .iter()
            .map(|line| match *line {
                l if l == describe => r#""0.2.0" "export" describe"#.to_owned(),
                l if l == judge => r#""0.3.0" "import" judge"#.to_owned(),
                _ => r#""0.5.0" "export" begin-run,grade-in-run"#.to_owned(),
            })
            .collect();
        assert_eq!(listed, expected, "{}", output.stdout());
    }
}

#[test]
fn grader_check_says_a_component_of_the_newest_version_is_current() {
    for path in [guests::begin_run(), BUILTIN] {
        let output = Evalhost::new().args(["grader", "check", path]).run();
        output.assert_success();
        let stdout = output.stdout();
        assert!(
            stdout.contains(&format!(
                "  world:   evalhost:grader@{NEWEST_WORLD_VERSION} (the newest)\n"
            )),
            "{stdout}"
        );
        assert!(!stdout.contains("missing:"), "{stdout}");

        let output = Evalhost::new()
            .args(["grader", "check", "--json", path])
            .run();
        output.assert_success();
        let json: serde_json::Value = serde_json::from_str(output.stdout()).unwrap();
        assert_eq!(json["world_version"], NEWEST_WORLD_VERSION);
        assert_eq!(json["missing"], serde_json::json!([]));
    }
}
