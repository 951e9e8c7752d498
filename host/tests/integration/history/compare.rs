//! `evalhost compare` on runs of the history: named by id prefix, `latest` and
//! `BRANCH@latest`; a regression with evidence fails it; a case whose outcome flips between
//! runs of the same content is marked flaky there and listed by `history flaky`.

use std::path::Path;
use std::process::Command;

use super::records::recorded_id;
use crate::support::evalhost::Evalhost;

const STEADY: &str = "name: steady
prompt: Say done.
model:
  - text: done
graders:
  - final_text_contains: done
";

/// Passes about half its runs: the agent's command writes the file on a coin flip.
const COIN: &str = "name: coin
prompt: Flip a coin.
approve: all
model:
  - call: {tool: bash, arguments: {command: \"if [ $((RANDOM % 2)) -eq 0 ]; then echo heads > coin.txt; fi\"}}
  - text: flipped
graders:
  - file_exists: coin.txt
";

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=feature",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(status.status.success(), "git {args:?}: {status:?}");
}

#[test]
fn compare_names_runs_of_the_history_and_marks_flaky_cases() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    std::fs::write(cases.join("steady.yaml"), STEADY).unwrap();
    std::fs::write(cases.join("coin.yaml"), COIN).unwrap();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "cases"]);
    git(dir.path(), &["commit", "-q", "-m", "cases"]);
    let db = dir.path().join("h.db");
    let run = || {
        let output = Evalhost::new()
            .args(["run", "--runs", "20", "--history"])
            .arg(&db)
            .arg(&cases)
            .current_dir(dir.path())
            .run();
        recorded_id(output.stdout())
    };
    let first = run();
    // `steady` now fails every run.
    std::fs::write(
        cases.join("steady.yaml"),
        STEADY.replace("- text: done", "- text: nope"),
    )
    .unwrap();
    // The flaky mark is shown on a case whose pass rate changed: run again (rarely) until the
    // coin's differs from the first run's (equal counts of 20 flips: p ~ 0.125 a try).
    let coin_passed = |id: &str| {
        let mut store = super::records::store(&db);
        let run = store.resolve(id).unwrap();
        store.case(&run.id, "coin").unwrap().unwrap().0.passed
    };
    let first_coin = coin_passed(&first);
    let mut second = run();
    for _ in 0..8 {
        if coin_passed(&second) != first_coin {
            break;
        }
        second = run();
    }
    assert_ne!(
        coin_passed(&second),
        first_coin,
        "the coin never changed its count"
    );

    let compared = Evalhost::new()
        .args(["compare", &first, "feature@latest", "--history"])
        .arg(&db)
        .current_dir(dir.path())
        .run();
    compared.assert_code(1);
    let out = compared.stdout();
    assert!(out.contains(&format!("A: {first} (run {first})")), "{out}");
    assert!(
        out.contains(&format!("B: feature@latest (run {second})")),
        "{out}"
    );
    let steady = out.lines().find(|l| l.starts_with("steady ")).expect(out);
    assert!(
        steady.contains("20/20") && steady.contains("0/20") && steady.contains("regressed"),
        "{steady}"
    );
    assert!(out.contains("case changed"), "{out}");
    let flaky = out
        .lines()
        .find(|l| l.contains("flaky:"))
        .unwrap_or_else(|| panic!("coin is not marked flaky:\n{out}"));
    assert!(
        flaky.starts_with("coin ") && flaky.contains(" flips in ") && flaky.ends_with("0 runs"),
        "{flaky}"
    );
    compared.assert_stderr_contains("Compare failed: 1 case regressed with evidence");

    let listed = Evalhost::new()
        .args(["history", "flaky", "--json", "--history"])
        .arg(&db)
        .run();
    listed.assert_code(0);
    let flaky: serde_json::Value = serde_json::from_str(listed.stdout()).unwrap();
    let names: Vec<&str> = flaky
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["coin"], "steady never flips within a digest");
    assert_eq!(
        flaky[0]["runs"].as_u64().unwrap() % 20,
        0,
        "every run of the coin's digest"
    );
    assert!(flaky[0]["flips"].as_u64().unwrap() > 0);

    // Names that are neither a report nor a run are a usage error.
    let unknown = Evalhost::new()
        .args(["compare", "nosuchrun", "latest", "--history"])
        .arg(&db)
        .run();
    unknown.assert_code(2);
    unknown.assert_stderr_contains("`nosuchrun` names no run");
}
