//! `evalhost check`: validate every case, grader reference and config without running.

use crate::support::evalhost::Evalhost;

#[test]
fn the_shipped_suites_are_valid() {
    for suite in [
        "cases/mino",
        "cases/beyond",
        "cases/nexus",
        "cases/agentcompany",
    ] {
        let output = Evalhost::new().args(["check", suite]).run();
        output.assert_code(0);
        let (stdout, stderr) = (output.stdout(), output.stderr());
        assert!(stderr.is_empty(), "{suite}: {stderr}");
        // The counts agree with what `list` sees.
        let output = Evalhost::new().args(["list", "--json", suite]).run();
        let listed = output.stdout();
        let cases: serde_json::Value = serde_json::from_str(listed).expect("JSON");
        let cases = cases.as_array().expect("an array");
        let entries: usize = cases
            .iter()
            .map(|c| c["graders"].as_array().unwrap().len())
            .sum();
        assert!(cases.len() >= 3, "{listed}");
        assert_eq!(
            stdout,
            format!("ok: {} cases, {entries} grader entries\n", cases.len()),
            "{suite}"
        );
    }
}

#[test]
fn a_case_name_defined_twice_is_found() {
    // A Nexus case and a YAML case of the same name, each valid on its own.
    let tmp = tempfile::tempdir().unwrap();
    let nexus = tmp.path().join("nexus");
    crate::support::common::copy_dir(
        &crate::support::common::repo().join("cases/nexus/build-error-fix"),
        &nexus.join("build-error-fix"),
    );
    let yaml = tmp.path().join("yaml");
    std::fs::create_dir(&yaml).unwrap();
    std::fs::write(
        yaml.join("build-error-fix.yaml"),
        "name: build-error-fix\nprompt: Hi.\nmodel:\n  - text: hi\ngraders:\n  - final_text_contains: hi\n",
    )
    .unwrap();
    let (n, y) = (nexus.to_str().unwrap(), yaml.to_str().unwrap());
    let output = Evalhost::new().args(["check", n, y]).run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(
        stderr,
        format!(
            "{y}/build-error-fix.yaml:1:7: name: case \"build-error-fix\" is already defined in {n}/build-error-fix; case names must be unique\n\
             Error: check failed: 1 problem (each shown above with its file, line and field)\n"
        )
    );
}

#[test]
fn every_broken_case_is_reported_with_its_location_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write(
        "bad-regex.yaml",
        "name: bad-regex\nprompt: Hi.\nmodel:\n  - text: hi\ngraders:\n  - final_text_matches: \"(\"\n",
    );
    write(
        "no-such-grader.yaml",
        "name: no-such-grader\nprompt: Hi.\nmodel:\n  - text: hi\ngraders:\n  - max_requests: 3\n  - final_text_containz: hi\n",
    );
    write("typo.yaml", "name: typo\nprompt: Hi.\ngraderz: []\n");
    // Would create `ran` in its workspace if check ran agents; a valid case otherwise.
    let marker = dir.path().join("ran");
    write(
        "external.yaml",
        &format!(
            "name: external\nprompt: Hi.\nagent: {{command: [touch, {}]}}\ngraders:\n  - max_requests: 3\n",
            marker.display()
        ),
    );
    let output = Evalhost::new()
        .args(["check", dir.path().to_str().unwrap()])
        .run();
    output.assert_code(2);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert!(stdout.is_empty(), "{stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(
        lines[0].ends_with(
            "/bad-regex.yaml:6:5: graders[0].final_text_matches: invalid config: invalid regular expression \"(\": found open group without closing ')'"
        ),
        "{stderr}"
    );
    assert!(
        lines[1].contains("no-such-grader.yaml:7:5: graders[1].final_text_containz: unknown grader `final_text_containz`"),
        "{stderr}"
    );
    assert!(
        lines[2].contains("typo.yaml:3:1: graderz: unknown field"),
        "{stderr}"
    );
    assert_eq!(
        lines[3],
        "Error: check failed: 3 problems (each shown above with its file, line and field)"
    );
    assert!(!marker.exists(), "check must not start the case's agent");
}

#[test]
fn a_missing_path_is_a_usage_error() {
    let output = Evalhost::new().args(["check", "cases/no-such-suite"]).run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains("cases/no-such-suite"), "{stderr}");
}

/// A suite's configs are checked many to an instance (one per thread and component): each
/// entry still gets its own config's answer. 48 distinct configs (enough to check on every
/// core), a third of them broken regular expressions, each named with its own text; the
/// rest pass. Control: the same suite with every regex mended checks clean.
#[test]
fn configs_checked_in_shared_instances_each_get_their_own_answer() {
    let write_suite = |broken: bool| {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..48 {
            let regex = if broken && i % 3 == 0 {
                format!("(unclosed{i}")
            } else {
                format!("ok{i}")
            };
            std::fs::write(
                dir.path().join(format!("c{i:02}.yaml")),
                format!(
                    "name: c{i:02}\nprompt: Hi.\nmodel:\n  - text: ok{i}\ngraders:\n  - final_text_contains: \"ok{i}\"\n  - final_text_matches: \"{regex}\"\n  - max_requests: {}\n",
                    i + 1
                ),
            )
            .unwrap();
        }
        dir
    };
    let broken = write_suite(true);
    let output = Evalhost::new()
        .args(["check", broken.path().to_str().unwrap()])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    let problems: Vec<&str> = stderr.lines().filter(|l| l.contains("graders[")).collect();
    assert_eq!(problems.len(), 16, "{stderr}");
    for i in (0..48).step_by(3) {
        assert!(
            problems.iter().any(|l| l.contains(&format!("/c{i:02}.yaml:7:5: graders[1].final_text_matches: invalid config: invalid regular expression \"(unclosed{i}\""))),
            "case c{i:02} is not reported with its own regex:\n{stderr}"
        );
    }

    let mended = write_suite(false);
    Evalhost::new()
        .args(["check", mended.path().to_str().unwrap()])
        .run()
        .assert_code(0);
}
