//! `run --partition` and `report merge`: shards cover every case once, and merging their
//! reports gives the report of the unpartitioned run.

use std::path::Path;

use crate::support::common::repo;
use crate::support::evalhost::{Evalhost, Output};
use serde_json::Value;

const SUITE: [&str; 2] = ["cases/mino", "cases/nexus"];

fn run_into(out: &Path, extra: &[&str]) -> Output {
    let out = out.to_str().expect("utf-8 temp path");
    let mut args = vec!["run", "--out", out];
    args.extend_from_slice(extra);
    args.extend_from_slice(&SUITE);
    Evalhost::new().args(args).run()
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("report written");
    serde_json::from_str(&text).expect("report is JSON")
}

fn case_names(report: &Value) -> Vec<String> {
    report["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_owned())
        .collect()
}

/// The report without what differs between two runs of the same suite: timings.
fn without_timings(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("duration_ms");
                map.remove("duration_us");
                // Each run has its own id and times (the merged report's id is derived
                // from its shards').
                map.remove("run_id");
                map.remove("started_unix_ms");
                map.remove("finished_unix_ms");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

#[test]
fn four_hash_shards_cover_every_case_once_and_merge_into_the_whole_report() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let whole = tmp.path().join("whole");
    let output = run_into(&whole, &[]);
    output.assert_code(0);
    let whole_report = read_json(&whole.join("report.json"));
    let all = case_names(&whole_report);
    assert!(all.len() >= 10, "{all:?}");

    let mut seen: Vec<String> = Vec::new();
    let mut shard_reports = Vec::new();
    for m in 1..=4 {
        let dir = tmp.path().join(format!("shard-{m}"));
        let partition = format!("hash:{m}/4");
        let output = run_into(&dir, &["--partition", &partition]);
        output.assert_code(0);
        let stdout = output.stdout();
        let names = case_names(&read_json(&dir.join("report.json")));
        assert!(
            stdout.contains(&format!(
                "Partition {partition}: {} cases in this shard.",
                names.len()
            )),
            "{stdout}"
        );
        seen.extend(names);
        shard_reports.push(dir.join("report.json"));
    }
    let mut sorted_seen = seen.clone();
    sorted_seen.sort();
    let mut sorted_all = all.clone();
    sorted_all.sort();
    assert_eq!(sorted_seen, sorted_all, "every case in exactly one shard");

    let merged = tmp.path().join("merged.json");
    let mut args = vec!["report", "merge"];
    let shard_args: Vec<&str> = shard_reports
        .iter()
        .map(|p| p.to_str().expect("utf-8"))
        .collect();
    args.extend(shard_args);
    args.extend(["-o", merged.to_str().expect("utf-8")]);
    let output = Evalhost::new().args(args).run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("All cases passed"), "{stdout}");
    assert_eq!(
        without_timings(read_json(&merged)),
        without_timings(whole_report),
        "the merged shards equal the unpartitioned run apart from timings"
    );
}

#[test]
fn a_shard_is_stable_and_slices_are_even() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut sizes = Vec::new();
    for m in 1..=3 {
        let dir = tmp.path().join(format!("slice-{m}"));
        let partition = format!("slice:{m}/3");
        let output = run_into(&dir, &["--partition", &partition]);
        output.assert_code(0);
        sizes.push(case_names(&read_json(&dir.join("report.json"))).len());
    }
    let (min, max) = (sizes.iter().min(), sizes.iter().max());
    assert!(max.zip(min).is_some_and(|(a, b)| a - b <= 1), "{sizes:?}");

    // The hash shard of a case does not depend on which other cases are loaded.
    let alone = tmp.path().join("alone");
    let output = Evalhost::new()
        .args([
            "run",
            "--partition",
            "hash:2/4",
            "--out",
            alone.to_str().expect("utf-8"),
            "cases/mino",
        ])
        .run();
    let stdout = output.stdout();
    let with_nexus = tmp.path().join("with-nexus");
    let _ = run_into(&with_nexus, &["--partition", "hash:2/4"]);
    let mino_alone = case_names(&read_json(&alone.join("report.json")));
    assert!(!mino_alone.is_empty(), "{stdout}");
    let mino_among: Vec<String> = case_names(&read_json(&with_nexus.join("report.json")))
        .into_iter()
        .filter(|n| repo().join(format!("cases/mino/{n}.yaml")).exists())
        .collect();
    assert_eq!(mino_alone, mino_among, "{stdout}");
}

#[test]
fn bad_partitions_are_usage_errors() {
    for (value, message) in [
        ("hash:5/4", "1 <= M <= N"),
        ("hash:0/4", "1 <= M <= N"),
        ("count:1/2", "expected `hash:M/N` or `slice:M/N`"),
    ] {
        let output = Evalhost::new()
            .args(["run", "--partition", value, "cases/mino"])
            .run();
        output.assert_code(2);
        let stderr = output.stderr();
        assert!(stderr.contains(message), "{value}: {stderr}");
    }
}

#[test]
fn merge_refuses_overlapping_shards_and_reports_of_different_runs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("one");
    let output = run_into(&dir, &["--partition", "hash:1/2"]);
    output.assert_code(0);
    let report = dir.join("report.json");
    let report_arg = report.to_str().expect("utf-8");

    let output = Evalhost::new()
        .args(["report", "merge", report_arg, report_arg])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("is in both") && stderr.contains("shards must not overlap"),
        "{stderr}"
    );

    let mut other = read_json(&report);
    other["model"] = Value::from("gpt-9");
    other["cases"] = Value::Array(Vec::new());
    let other_path = tmp.path().join("other.json");
    std::fs::write(&other_path, other.to_string()).expect("write");
    let output = Evalhost::new()
        .args([
            "report",
            "merge",
            report_arg,
            other_path.to_str().expect("utf-8"),
        ])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("model is gpt-9, but") && stderr.contains("has scripted"),
        "{stderr}"
    );

    let broken = tmp.path().join("broken.json");
    std::fs::write(&broken, "{\"schema_version\": 1,\n \"mode\": 3}").expect("write");
    let output = Evalhost::new()
        .args(["report", "merge", broken.to_str().expect("utf-8")])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains("broken.json:2:"), "{stderr}");
}
