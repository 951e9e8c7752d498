//! The case-file JSON Schema (`schema/case.schema.json`): up to date with the Rust types and
//! the built-in graders, accepting every shipped case file and refusing typos.

use std::path::{Path, PathBuf};

use crate::support::common::repo;
use crate::support::evalhost::Evalhost;

const REGENERATE: &str = "cargo run -p evalhost -- schema case > schema/case.schema.json";

fn committed() -> serde_json::Value {
    let path = repo().join("schema/case.schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; generate it with `{REGENERATE}`", path.display()));
    serde_json::from_str(&text).expect("the committed schema is JSON")
}

fn validator() -> jsonschema::Validator {
    let schema = committed();
    jsonschema::meta::validate(&schema).expect("the schema is a valid JSON Schema");
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

/// A YAML case file as the JSON value a YAML language server checks.
fn yaml_to_json(text: &str) -> serde_json::Value {
    serde_saphyr::from_str(text).expect("valid YAML")
}

/// The problems the schema finds in a case file's text.
fn problems(validator: &jsonschema::Validator, text: &str) -> Vec<String> {
    let value = yaml_to_json(text);
    validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect()
}

#[test]
fn the_committed_schema_matches_the_generated_one() {
    let output = Evalhost::new().args(["schema", "case"]).run();
    output.assert_code(0);
    let generated = output.stdout();
    let committed =
        std::fs::read_to_string(repo().join("schema/case.schema.json")).unwrap_or_default();
    assert!(
        committed == generated,
        "schema/case.schema.json is out of date with the case types or the built-in graders; \
         regenerate it with:\n  {REGENERATE}"
    );
}

/// Every YAML case file shipped under `cases/` (Nexus case directories hold their own
/// format and are not evalhost case files).
fn shipped_case_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for suite in std::fs::read_dir(repo().join("cases")).unwrap() {
        let suite = suite.unwrap().path();
        if !suite.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&suite).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                files.push(path);
            } else if path.is_dir() && suite.ends_with("agents") {
                // `cases/agents/<preset>/`.
                for entry in std::fs::read_dir(&path).unwrap() {
                    let path = entry.unwrap().path();
                    if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                        files.push(path);
                    }
                }
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_shipped_case_file_validates() {
    let validator = validator();
    let files = shipped_case_files();
    assert!(files.len() >= 10, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let found = problems(&validator, &text);
        assert!(found.is_empty(), "{}: {found:#?}", file.display());
    }
}

fn bash_denied() -> String {
    std::fs::read_to_string(Path::new(&repo()).join("cases/mino/bash-denied.yaml")).unwrap()
}

#[test]
fn a_typo_in_a_field_name_fails() {
    let validator = validator();
    let text = bash_denied();
    assert!(problems(&validator, &text).is_empty());
    let typo = text.replacen("prompt:", "promt:", 1);
    let found = problems(&validator, &typo);
    assert!(
        found.iter().any(|p| p.contains("promt")),
        "a misspelt field is reported: {found:?}"
    );
    let step_typo = text.replacen("expect_input_contains:", "expect_input_contain:", 1);
    assert!(!problems(&validator, &step_typo).is_empty());
}

#[test]
fn grader_names_and_configs_are_checked() {
    let validator = validator();
    let case =
        |graders: &str| format!("name: c\nprompt: Hi.\nmodel:\n  - text: hi\ngraders:\n{graders}");
    assert!(problems(&validator, &case("  - final_text_contains: hi\n")).is_empty());
    assert!(
        problems(
            &validator,
            &case("  - max_requests: 3\n  - tool_called: bash\n")
        )
        .is_empty()
    );
    // A component file or a bundle's grader takes any config.
    assert!(
        problems(
            &validator,
            &case("  - ../grader.wasm#no_secrets: {word: x}\n")
        )
        .is_empty()
    );
    assert!(problems(&validator, &case("  - security/no-secret-leak: {}\n")).is_empty());
    // Unknown built-in grader, a config of the wrong type, two graders in one entry.
    assert!(!problems(&validator, &case("  - final_text_containz: hi\n")).is_empty());
    assert!(!problems(&validator, &case("  - max_requests: lots\n")).is_empty());
    assert!(
        !problems(
            &validator,
            &case("  - {max_requests: 1, tool_called: bash}\n")
        )
        .is_empty()
    );
    assert!(!problems(&validator, "name: c\nprompt: Hi.\ngraders: []\n").is_empty());
    assert!(!problems(&validator, &case("  - max_requests: 1\nruns: 33\n")).is_empty());
}

/// Numbers and booleans where the parser reads text (`prompt: 2026`, `final_text_matches:
/// 2026`): a case that loads is one the schema accepts.
#[test]
fn scalars_the_parser_reads_as_text_are_valid() {
    let text = "name: 2026\ndescription: 1.5\nprompt: 2026\ninstructions: true\n\
                model:\n  - text: 42\n    expect_input_contains: 2026\n  - call: {tool: 7}\n\
                workspace:\n  files:\n    a.txt: 1\ntags: [1, true]\n\
                graders:\n  - final_text_matches: 2026\n  - final_text_contains: 2026\n";
    let case = evalhost::case::parse_case(Path::new("cases/2026.yaml"), text).expect("it loads");
    assert_eq!((case.name.as_str(), case.prompt.as_str()), ("2026", "2026"));
    assert_eq!(case.graders[0].config.value(), serde_json::json!(2026));
    assert_eq!(problems(&validator(), text), Vec::<String>::new());
}

/// A model step gives exactly one of `text`, `call` or `calls`: the schema and the parser
/// agree (both follow the one declaration of the format).
#[test]
fn a_step_gives_exactly_one_reply() {
    let validator = validator();
    let case = |step: &str| {
        format!("name: c\nprompt: Hi.\nmodel:\n  - {step}\ngraders:\n  - max_requests: 1\n")
    };
    let parses = |step: &str| evalhost::case::parse_case(Path::new("c.yaml"), &case(step)).is_ok();
    for step in [
        "text: hi",
        "call: {tool: bash}",
        "calls: [{tool: bash}, {tool: read_file, arguments: {path: a}}]",
        "{text: hi, expect_input_contains: Go}",
    ] {
        assert!(problems(&validator, &case(step)).is_empty(), "{step}");
        assert!(parses(step), "{step}");
    }
    for step in [
        "{text: hi, call: {tool: bash}}",
        "{call: {tool: bash}, calls: [{tool: bash}]}",
        "{expect_input_contains: Go}",
        "calls: []",
        "{text: hi, expect_input_contains: ''}",
        "{text: hi, shout: x}",
    ] {
        assert!(!problems(&validator, &case(step)).is_empty(), "{step}");
        assert!(!parses(step), "{step}");
    }
    // A null reply is no reply to the parser; the schema refuses it outright.
    assert!(!problems(&validator, &case("text: null")).is_empty());
    assert!(!problems(&validator, &case("{text: hi, call: null}")).is_empty());
}
