//! Loading Nexus case directories: the peer cases, discovery rules, and every class of
//! malformed input, each with its exact file:line error.

use std::path::{Path, PathBuf};

use crate::support::common::{copy_dir, repo};
use evalhost::case::{Execution, load_cases};

/// A copy of `cases/nexus/build-error-fix` in a temp dir, as `<tmp>/build-error-fix`.
fn copy_case() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("build-error-fix");
    copy_dir(&repo().join("cases/nexus/build-error-fix"), &dir);
    (tmp, dir)
}

/// The load error for `dir`, with the temp prefix replaced by `<case>`.
fn error(dir: &Path) -> String {
    let message = load_cases(&[dir.to_path_buf()]).unwrap_err().to_string();
    message.replace(&dir.display().to_string(), "<case>")
}

#[test]
fn the_five_peer_cases_load_as_recorded_cases() {
    let cases = load_cases(&[repo().join("cases/nexus")]).unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert!(names.starts_with(&[
        "build-error-fix",
        "multi-subagent-fanout",
        "provider-fallback",
        "react-planner-handoff",
    ]));
    let case = &cases[0];
    assert_eq!(case.tags, ["react", "tools", "mock"]);
    assert_eq!(case.prompt, "Why won't main.go build?");
    let graders: Vec<&str> = case.graders.iter().map(|g| &*g.name).collect();
    assert_eq!(
        graders,
        [
            "event_emitted",
            "event_emitted",
            "event_emitted",
            "event_count_bounds",
            "event_sequence_strict",
            "event_sequence_distance",
            "tool_invocation_parity",
            "token_budget",
            "latency",
        ]
    );
    // The golden journal is injected where it is needed, and only there.
    assert_eq!(
        case.graders[5].config.value()["golden"]
            .as_array()
            .unwrap()
            .len(),
        12
    );
    assert!(case.graders[0].config.value().get("golden").is_none());
    assert_eq!(case.graders[0].config.value()["count"]["max"], 2);
    let Execution::Recorded(evidence) = &case.execution else {
        panic!("not recorded")
    };
    assert_eq!(evidence.mode, "recorded");
    assert_eq!(evidence.events.len(), 12);
    assert_eq!(
        (evidence.events[1].kind.as_str(), evidence.events[1].at_ms),
        ("io.input", 10)
    );
    assert_eq!(evidence.events[11].at_ms, 110);
    assert_eq!(evidence.calls.len(), 1);
    assert_eq!(
        (
            evidence.calls[0].name.as_str(),
            evidence.calls[0].arguments.as_str()
        ),
        ("read_file", r#"{"path":"main.go"}"#)
    );
    assert_eq!(evidence.calls[0].status, "completed");
    assert_eq!(
        (
            evidence.usage.requests,
            evidence.usage.input_tokens,
            evidence.usage.output_tokens
        ),
        (3, 380, 160)
    );
    assert_eq!(evidence.final_text, "package main\n\nfunc main() {}\n");
}

#[test]
fn a_case_directory_path_loads_as_one_case_and_ignored_children_are_skipped() {
    let (tmp, dir) = copy_case();
    copy_dir(&dir, &tmp.path().join("_draft"));
    copy_dir(&dir, &tmp.path().join(".hidden"));
    let cases = load_cases(&[tmp.path().to_path_buf()]).unwrap();
    assert_eq!(cases.len(), 1);
    let cases = load_cases(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(cases[0].name, "build-error-fix");
    assert_eq!(cases[0].path, dir);
}

#[test]
fn rotated_zstd_segments_are_read_before_events_jsonl() {
    let (_tmp, dir) = copy_case();
    let journal = dir.join("journal");
    let text = std::fs::read_to_string(journal.join("events.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let segment = |n: &str, part: &[&str]| {
        let mut compressed = Vec::new();
        let joined = part.join("\n");
        ruzstd::encoding::compress(
            joined.as_bytes(),
            &mut compressed,
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        std::fs::write(journal.join(format!("events-{n}.jsonl.zst")), compressed).unwrap();
    };
    // Numbered order, not name order: 2 before 10.
    segment("10", &lines[4..8]);
    segment("2", &lines[..4]);
    std::fs::write(journal.join("events.jsonl"), lines[8..].join("\n")).unwrap();
    let cases = load_cases(&[dir]).unwrap();
    let Execution::Recorded(evidence) = &cases[0].execution else {
        panic!()
    };
    let seqs: Vec<u32> = evidence.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=12).collect::<Vec<_>>());
}

#[test]
fn a_corrupt_zstd_segment_is_an_error() {
    let (_tmp, dir) = copy_case();
    std::fs::write(dir.join("journal/events-001.jsonl.zst"), b"not zstd").unwrap();
    assert!(
        error(&dir).starts_with("<case>/journal/events-001.jsonl.zst: not a zstd stream"),
        "{}",
        error(&dir)
    );
}

#[test]
fn malformed_journals_are_reported_at_file_and_line() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "journal/header.json",
            "",
            "<case>/journal/header.json:1: invalid JSON: EOF while parsing a value",
        ),
        (
            "journal/header.json",
            r#"{"session_id":"x"}"#,
            "<case>/journal/header.json: missing field `schema_version`",
        ),
        (
            "journal/header.json",
            r#"{"schema_version":"2"}"#,
            r#"<case>/journal/header.json: schema_version "2" is not supported (supported: 1)"#,
        ),
        (
            "journal/events.jsonl",
            "{\"seq\":1,\"ts\":\"2026-05-01T12:00:00Z\",\"type\":\"io.input\"}\n{oops\n",
            "<case>/journal/events.jsonl:2: invalid journal envelope: key must be a string",
        ),
        (
            "journal/events.jsonl",
            "{\"seq\":1,\"ts\":\"2026-05-01T12:00:00Z\"}\n",
            "<case>/journal/events.jsonl:1: invalid journal envelope: missing field `type`",
        ),
        (
            "journal/events.jsonl",
            "{\"seq\":1,\"ts\":\"yesterday\",\"type\":\"io.input\"}\n",
            r#"<case>/journal/events.jsonl:1: ts "yesterday" is not an RFC 3339 timestamp"#,
        ),
    ];
    for (file, content, want) in cases {
        let (_tmp, dir) = copy_case();
        std::fs::write(dir.join(file), content).unwrap();
        assert_eq!(error(&dir), *want, "{file}: {content}");
    }
    let (_tmp, dir) = copy_case();
    std::fs::remove_file(dir.join("journal/header.json")).unwrap();
    assert_eq!(
        error(&dir),
        "<case>/journal/header.json: the journal has no header.json (it is required)"
    );
    let (_tmp, dir) = copy_case();
    std::fs::remove_file(dir.join("journal/events.jsonl")).unwrap();
    assert_eq!(
        error(&dir),
        "<case>/journal/events.jsonl: the journal has no events.jsonl and no events-NNN.jsonl.zst segment"
    );
}

/// A Nexus case file is checked as a case file is (one toolkit): every problem of the file
/// at once, duplicate keys with where the first was given, typos with a suggestion.
#[test]
fn every_problem_of_a_case_yaml_is_reported_at_once() {
    let (_tmp, dir) = copy_case();
    std::fs::write(
        dir.join("case.yaml"),
        "name: build-error-fix\ntags: react\nname: again\nownr: me\n",
    )
    .unwrap();
    assert_eq!(
        error(&dir),
        "<case>/case.yaml:2:7: tags: expected a list, found a string\n\
         <case>/case.yaml:3:1: name: duplicate key (first given at line 1, column 1)\n\
         <case>/case.yaml:4:1: ownr: unknown field, expected one of: name, description, tags, owner, freshness_days, model_baseline, recorded_at; did you mean `owner`?"
    );
}

#[test]
fn malformed_case_and_assertion_files_are_reported_at_file_line_col() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "assertions.yaml",
            "deterministic:\n  - kind: event_emited\n    type: x\n",
            "<case>/assertions.yaml:2:11: deterministic[0].kind: unknown assertion kind `event_emited` (known kinds: event_emitted, event_count_bounds, event_sequence_strict, event_sequence_distance, tool_invocation_parity, token_budget, latency)",
        ),
        (
            "assertions.yaml",
            "deterministic:\n  - type: io.input\n",
            "<case>/assertions.yaml:2:5: deterministic[0]: missing field `kind`",
        ),
        (
            "assertions.yaml",
            "deterministic:\n  - io.input\n",
            "<case>/assertions.yaml:2:5: deterministic[0]: expected a map with `kind`, found a string",
        ),
        (
            "assertions.yaml",
            "deterministic: []\nphase5: []\n",
            "<case>/assertions.yaml:2:1: phase5: unknown field, expected one of: deterministic, semantic",
        ),
        (
            "assertions.yaml",
            "deterministic: []\nsemantic: []\n",
            "<case>/assertions.yaml:1:1: deterministic: no assertions; a case needs at least one",
        ),
        (
            "assertions.yaml",
            "deterministic:\n  - kind: latency\n    golden: []\n",
            "<case>/assertions.yaml:3:13: deterministic[0].golden: `golden` is filled in from the case's journal; remove it",
        ),
        (
            "assertions.yaml",
            "deterministic: [\n",
            "<case>/assertions.yaml:1:16: invalid YAML: unclosed bracket '['",
        ),
        (
            "case.yaml",
            "name: other\n",
            r#"<case>/case.yaml:1:7: name: "other" does not match the directory name "build-error-fix""#,
        ),
        (
            "case.yaml",
            "name: build-error-fix\nowners: [a]\n",
            "<case>/case.yaml:2:1: owners: unknown field, expected one of: name, description, tags, owner, freshness_days, model_baseline, recorded_at; did you mean `owner`?",
        ),
        (
            "case.yaml",
            "tags: react\n",
            "<case>/case.yaml:1:7: tags: expected a list, found a string",
        ),
        (
            "case.yaml",
            "- a\n",
            "<case>/case.yaml:1:1: expected a map of fields, found a list",
        ),
        (
            "input/inputs.yaml",
            "inputs: {a: 1}\n",
            "<case>/input/inputs.yaml:1:9: inputs: expected a list, found a map",
        ),
    ];
    for (file, content, want) in cases {
        let (_tmp, dir) = copy_case();
        std::fs::write(dir.join(file), content).unwrap();
        let got = error(&dir);
        assert!(
            got.starts_with(want),
            "{file}: {content}\n got: {got}\nwant: {want}"
        );
    }
}

#[test]
fn semantic_entries_become_semantic_graders() {
    let (_tmp, dir) = copy_case();
    std::fs::write(
        dir.join("assertions.yaml"),
        "deterministic: []\nsemantic:\n  - rubric: helpful\n",
    )
    .unwrap();
    let cases = load_cases(&[dir]).unwrap();
    assert_eq!(&*cases[0].graders[0].name, "semantic");
    assert_eq!(cases[0].graders[0].config.value()["rubric"], "helpful");
}
