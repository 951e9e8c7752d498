//! Loading case files and directories: name order, limits, unique names, and errors that
//! name the file that broke.

use std::path::{Path, PathBuf};

use evalhost::case::{CaseError, MAX_CASES_PER_DIR, load_cases};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cases")
        .join(rel)
}

fn write_case(dir: &Path, file: &str, name: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(
        &path,
        format!("name: {name}\nprompt: Say hello.\ngraders:\n  - final_text_contains: hello\n"),
    )
    .unwrap();
    path
}

fn load_error(paths: &[PathBuf]) -> CaseError {
    match load_cases(paths) {
        Ok(cases) => panic!("should not load, got {} cases", cases.len()),
        Err(err) => err,
    }
}

#[test]
fn a_directory_loads_its_yaml_files_and_subdirectories_in_name_order() {
    // `order/` also holds README.md, a hidden .hidden.yaml and _drafts/d.yaml, all broken:
    // loading them would fail. Its subdirectories bb/ and nested/ load at their place in name
    // order (a.yml, b.yaml, bb/e.yaml, c.yaml, nested/d.yaml).
    let cases = load_cases(&[data("order")]).unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "e", "c", "d"]);
    assert!(cases[0].path.ends_with("order/a.yml"));
    assert!(cases[2].path.ends_with("order/bb/e.yaml"));
    assert!(cases[4].path.ends_with("order/nested/d.yaml"));
}

#[test]
fn the_limit_of_256_cases_is_per_directory() {
    // 256 cases in a directory and 256 more in its subdirectory: each directory is within
    // Mino's limit, so all 512 load.
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("more");
    std::fs::create_dir(&sub).unwrap();
    for i in 0..MAX_CASES_PER_DIR {
        write_case(dir.path(), &format!("a-{i:03}.yaml"), &format!("a-{i:03}"));
        write_case(&sub, &format!("b-{i:03}.yaml"), &format!("b-{i:03}"));
    }
    let cases = load_cases(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(cases.len(), 512);
    assert_eq!(cases[256].name, "b-000");
}

#[test]
fn a_symlink_loop_is_reported_not_followed_forever() {
    let dir = tempfile::tempdir().unwrap();
    write_case(dir.path(), "a.yaml", "a");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::os::unix::fs::symlink(dir.path(), sub.join("loop")).unwrap();
    let err = load_error(&[dir.path().to_path_buf()]);
    assert_eq!(
        err.to_string(),
        format!(
            "{}: a symlink loop: this directory is {}, which is being searched already",
            sub.join("loop").display(),
            dir.path().canonicalize().unwrap().display()
        )
    );
}

#[test]
fn every_problem_of_a_suite_is_reported_in_load_order() {
    let dir = tempfile::tempdir().unwrap();
    write_case(dir.path(), "a.yaml", "a");
    let b = write_case(dir.path(), "b.yaml", "not-b");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let c = sub.join("c.yaml");
    std::fs::write(
        &c,
        "name: c
prompt: Hi.
graderz: []
tags: [x, []]
",
    )
    .unwrap();
    let err = load_error(&[dir.path().to_path_buf()]);
    let lines: Vec<String> = err.problems().iter().map(|p| p.to_string()).collect();
    assert_eq!(
        lines,
        [
            format!(
                "{}:1:7: name: \"not-b\" does not match the file stem \"b\"",
                b.display()
            ),
            format!(
                "{}:3:1: graderz: unknown field, expected one of: name, description, prompt, instructions, approve, workspace, model, graders, runs, timeout_secs, live, tags, agent, confine, environment, task, recorded, tool_results, trace; did you mean `graders`?",
                c.display()
            ),
            format!(
                "{}:4:11: tags[1]: expected a string, found a list",
                c.display()
            ),
        ]
    );
    assert_eq!(err.to_string(), lines.join("\n"));
}

#[test]
fn paths_load_in_the_order_given() {
    let cases = load_cases(&[data("order/c.yaml"), data("valid"), data("order/a.yml")]).unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["c", "full", "a"]);
}

#[test]
fn a_directory_holds_at_most_256_cases() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..MAX_CASES_PER_DIR {
        write_case(
            dir.path(),
            &format!("case-{i:03}.yaml"),
            &format!("case-{i:03}"),
        );
    }
    let cases = load_cases(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(cases.len(), 256);
    assert_eq!(cases[255].name, "case-255");

    write_case(dir.path(), "case-256.yaml", "case-256");
    let err = load_error(&[dir.path().to_path_buf()]);
    assert!(matches!(
        err,
        CaseError::TooManyCases {
            count: 257,
            max: 256,
            ..
        }
    ));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: too many cases: 257 (at most 256 a directory)",
            dir.path().display()
        )
    );
}

#[test]
fn the_error_names_the_file_that_broke() {
    let dir = tempfile::tempdir().unwrap();
    write_case(dir.path(), "a.yaml", "a");
    let broken = write_case(dir.path(), "b.yaml", "not-b");
    write_case(dir.path(), "c.yaml", "c");
    let err = load_error(&[dir.path().to_path_buf()]);
    assert_eq!(
        err.to_string(),
        format!(
            "{}:1:7: name: \"not-b\" does not match the file stem \"b\"",
            broken.display()
        )
    );
}

#[test]
fn case_names_are_unique_across_paths() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let first = write_case(one.path(), "same.yaml", "same");
    let second = write_case(two.path(), "same.yaml", "same");
    let err = load_error(&[one.path().to_path_buf(), two.path().to_path_buf()]);
    assert_eq!(
        err.to_string(),
        format!(
            "{}:1:7: name: case \"same\" is already defined in {}; case names must be unique",
            second.display(),
            first.display()
        )
    );
}

/// A suite is loaded a chunk of files at a time (1,024): a name is still unique across
/// chunks, and every case comes in load order.
#[test]
fn case_names_are_unique_across_a_large_suite() {
    let root = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..5)
        .map(|d| {
            let dir = root.path().join(format!("part-{d}"));
            std::fs::create_dir(&dir).unwrap();
            for i in 0..220 {
                write_case(
                    &dir,
                    &format!("c-{d}-{i:03}.yaml"),
                    &format!("c-{d}-{i:03}"),
                );
            }
            dir
        })
        .collect();
    let cases = load_cases(&dirs).unwrap();
    assert_eq!(cases.len(), 1100);
    assert_eq!(cases[1099].name, "c-4-219");
    // The 1,101st file repeats the first case's name.
    let again = root.path().join("part-again");
    std::fs::create_dir(&again).unwrap();
    let second = write_case(&again, "c-0-000.yaml", "c-0-000");
    let mut paths = dirs.clone();
    paths.push(again);
    let err = load_error(&paths);
    assert_eq!(
        err.to_string(),
        format!(
            "{}:1:7: name: case \"c-0-000\" is already defined in {}; case names must be unique",
            second.display(),
            dirs[0].join("c-0-000.yaml").display()
        )
    );
}

#[test]
fn yaml_and_yml_of_one_stem_clash() {
    let dir = tempfile::tempdir().unwrap();
    write_case(dir.path(), "x.yaml", "x");
    write_case(dir.path(), "x.yml", "x");
    let err = load_error(&[dir.path().to_path_buf()]);
    assert!(
        err.to_string()
            .contains("name: case \"x\" is already defined in"),
        "{err}"
    );
}

#[test]
fn a_directory_without_cases_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a case").unwrap();
    let err = load_error(&[dir.path().to_path_buf()]);
    assert_eq!(
        err.to_string(),
        format!(
            "{}: no case files (*.yaml, *.yml, *.jsonl) or Nexus case directories found, in it or its subdirectories",
            dir.path().display()
        )
    );
}

#[test]
fn a_missing_path_is_a_read_error() {
    let path = data("no-such-directory");
    let err = load_error(std::slice::from_ref(&path));
    assert!(matches!(err, CaseError::Read { .. }));
    assert!(
        err.to_string()
            .starts_with(&format!("{}: ", path.display()))
    );
}

/// Every shipped case of every format (YAML, AgentCompany fixtures with recorded tool results,
/// Nexus journals) comes back whole from the spool: seeded files, script, later user turns and
/// recordings read back equal what was loaded, and what plan-time checks ask of the script is
/// answered without reading it back.
#[test]
fn every_shipped_case_comes_back_whole_from_the_spool() {
    use evalhost::case::{LoadOptions, Spool, load_each, load_each_spooled};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let paths: Vec<PathBuf> = [
        "cases/mino",
        "cases/beyond",
        "cases/agentcompany",
        "cases/nexus",
    ]
    .iter()
    .map(|dir| root.join(dir))
    .collect();
    let options = LoadOptions::default();
    let loaded: Vec<_> = load_each(&paths, &options)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let spool = Spool::with_budget(0);
    let mut spooled = Vec::new();
    load_each_spooled(&paths, &options, &spool, |case| spooled.push(case.unwrap()));
    assert_eq!(loaded.len(), spooled.len());
    assert!(loaded.len() > 10, "{} cases", loaded.len());
    let mut moved = 0;
    for (loaded, spooled) in loaded.iter().zip(&spooled) {
        moved += usize::from(spooled.workspace_files.len() < loaded.workspace_files.len());
        assert!(
            spooled.model.is_empty(),
            "{}: the script went to the spool",
            spooled.name
        );
        assert_eq!(
            spooled.script_steps(),
            loaded.model.len(),
            "{}",
            loaded.name
        );
        assert_eq!(
            spooled.has_recorded_usage(),
            loaded.has_recorded_usage(),
            "{}",
            loaded.name
        );
        assert_eq!(
            spooled.check_replayable().is_ok(),
            loaded.check_replayable().is_ok(),
            "{}",
            loaded.name
        );
        let whole = spooled.whole().expect("read back");
        assert_eq!(
            format!("{:?}", *whole),
            format!("{loaded:?}"),
            "{}",
            loaded.name
        );
        // Parked whole until its runs (as a plan does), it comes back the same.
        let parked = spool.park(spooled).expect("parked");
        let unparked = parked.unpark().expect("read back");
        assert_eq!(unparked.script_steps(), loaded.model.len());
        let whole = unparked.whole().expect("read back");
        assert_eq!(
            format!("{:?}", *whole),
            format!("{loaded:?}"),
            "{} parked",
            loaded.name
        );
    }
    assert!(moved > 0, "some shipped case seeds files");
}

/// A case another spool loaded is not parked in this one (its bulky parts are in the
/// other's file): the plan keeps it in memory instead.
#[test]
fn a_spool_parks_only_the_cases_it_loaded() {
    use evalhost::case::{LoadOptions, Spool, load_each_spooled};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let paths = [root.join("cases/mino")];
    let (loader, other) = (Spool::with_budget(0), Spool::with_budget(0));
    let mut cases = Vec::new();
    load_each_spooled(&paths, &LoadOptions::default(), &loader, |case| {
        cases.push(case.unwrap())
    });
    let seeded = cases
        .into_iter()
        .find(|c| c.body.is_spooled() && !c.whole().unwrap().workspace_files.is_empty())
        .expect("a mino case seeds files");
    assert!(other.park(&seeded).is_none(), "not this spool's case");
    assert!(loader.park(&seeded).is_some());
}

/// The cases of a suite loaded through one spool hold each equal grader name and config
/// once: two cases' `max_requests: 3` entries share one name and one config text, their
/// `final_text_contains` entries one name and two configs. Loaded without a spool (`check`,
/// `list`), each case keeps its own.
#[test]
fn equal_grader_names_and_configs_of_a_suite_are_held_once() {
    use evalhost::case::{LoadOptions, Spool, load_each, load_each_spooled};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("one", "hello"), ("two", "bye")] {
        std::fs::write(
            dir.path().join(format!("{name}.yaml")),
            format!(
                "name: {name}\nprompt: Say {text}.\nmodel:\n  - text: {text}\ngraders:\n  - final_text_contains: {text}\n  - max_requests: 3\n"
            ),
        )
        .unwrap();
    }
    let paths = [dir.path().to_owned()];
    let spool = Spool::default();
    let mut cases = Vec::new();
    load_each_spooled(&paths, &LoadOptions::default(), &spool, |case| {
        cases.push(case.unwrap())
    });
    let (one, two) = (&cases[0].graders, &cases[1].graders);
    assert!(Arc::ptr_eq(&one[0].name, &two[0].name));
    assert!(Arc::ptr_eq(&one[1].name, &two[1].name));
    assert!(std::ptr::eq(one[1].config.json(), two[1].config.json()));
    assert_eq!(one[1].config.json(), "3");
    assert_ne!(one[0].config, two[0].config);
    let own: Vec<_> = load_each(&paths, &LoadOptions::default())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(!Arc::ptr_eq(
        &own[0].graders[1].name,
        &own[1].graders[1].name
    ));
    assert_eq!(own[0].graders[1], cases[0].graders[1]);
}
