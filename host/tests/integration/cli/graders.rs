//! `evalhost graders` lists the embedded component's graders, `register_graders!`'s one list:
//! as many as graders/builtin/README.md says, each documented there and each a grader key of
//! the committed case schema (the builtin crate's `tests/one_list.rs` checks the same list
//! natively).

use std::collections::BTreeSet;

use crate::support::common::repo;
use crate::support::evalhost::Evalhost;

#[test]
fn evalhost_graders_lists_what_the_readme_and_the_case_schema_name() {
    let output = Evalhost::new().args(["graders"]).run();
    output.assert_code(0);
    let stdout = output.stdout();
    let listed: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();

    let readme = std::fs::read_to_string(repo().join("graders/builtin/README.md")).unwrap();
    let stated = format!("providing {} graders", listed.len());
    assert!(
        readme.contains(&stated),
        "graders/builtin/README.md must say {stated:?}: `evalhost graders` lists {listed:?}"
    );
    let undocumented: Vec<&&str> = listed
        .iter()
        .filter(|name| !readme.contains(&format!("`{name}`")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "not in graders/builtin/README.md: {undocumented:?}"
    );

    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schema/case.schema.json")).unwrap(),
    )
    .unwrap();
    let in_schema: BTreeSet<&str> = schema["$defs"]["GraderEntry"]["properties"]
        .as_object()
        .expect("the schema lists grader keys")
        .keys()
        .map(String::as_str)
        .filter(|key| *key != "judge")
        .collect();
    assert_eq!(
        in_schema,
        listed.iter().copied().collect::<BTreeSet<_>>(),
        "schema/case.schema.json's graders differ from `evalhost graders`"
    );
}
