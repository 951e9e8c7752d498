//! `GraderHost::check_component` and `evalhost grader check|test` against real components:
//! the built-in graders, the hostile test component (imports sockets), a core module, a
//! component for another world, a component importing something the sandbox lacks, and
//! corrupt files.

use crate::support::evalhost::Evalhost;
use crate::support::guests;

use std::path::{Path, PathBuf};

use evalhost::grader::{CheckError, GraderHost, Limits};

const BUILTIN: &str = env!("EVALHOST_BUILTIN_GRADERS_WASM");

fn host() -> GraderHost {
    GraderHost::new(Limits::default(), None).expect("engine")
}

fn check(bytes: &[u8]) -> CheckError {
    match host().check_component(bytes, "test.wasm") {
        Ok((_, report)) => panic!("expected an error, got {report:?}"),
        Err(e) => e,
    }
}

#[test]
fn the_builtin_component_passes_with_its_graders_and_schemas() {
    let (component, report) = host()
        .check_component_file(Path::new(BUILTIN))
        .expect("builtin is valid");
    assert_eq!(report.world_version, "0.5.0");
    assert_eq!(report.digest, component.digest());
    assert!(
        report
            .imports
            .iter()
            .any(|i| i.starts_with("wasi:cli/environment@")),
        "Rust std imports the (empty) environment: {:?}",
        report.imports
    );
    assert!(
        !report.imports.iter().any(|i| i.starts_with("wasi:sockets")),
        "{:?}",
        report.imports
    );
    let contains = report
        .graders
        .iter()
        .find(|g| g.name == "file_contains")
        .expect("file_contains listed");
    let schema: serde_json::Value = serde_json::from_str(&contains.config_schema).unwrap();
    assert_eq!(schema["type"], "object", "{schema}");
}

#[test]
fn socket_imports_are_reported_as_denied_and_refused_when_strict() {
    let (_, report) = host()
        .check_component_file(Path::new(guests::hostile()))
        .expect("sockets are linked (and refused at run time), so the component loads");
    assert!(
        report
            .denied_imports
            .iter()
            .any(|i| i.starts_with("wasi:sockets/tcp@")),
        "{report:?}"
    );
    assert!(
        !report.imports.iter().any(|i| i.starts_with("wasi:sockets")),
        "{report:?}"
    );
    let error = report.strict().expect_err("strict refuses sockets");
    let message = error.to_string();
    assert!(
        matches!(error, CheckError::ForbiddenImports { .. }),
        "{message}"
    );
    assert!(message.contains("wasi:sockets/tcp@"), "{message}");
    assert!(
        message.contains("network access: the sandbox grants no sockets"),
        "{message}"
    );
    assert!(message.contains("evalhost_test_hostile.wasm"), "{message}");
}

#[test]
fn a_component_importing_a_non_wasi_interface_or_http_is_refused() {
    let wasm = wat::parse_str(
        r#"(component
            (import "env" (instance))
            (import "acme:secrets/env" (instance))
            (import "wasi:http/outgoing-handler@0.2.6" (instance)))"#,
    )
    .unwrap();
    let message = check(&wasm).to_string();
    assert!(
        message.contains("; env (not provided by the grader sandbox)"),
        "{message}"
    );
    assert!(
        message.contains("acme:secrets/env (not provided by the grader sandbox)"),
        "{message}"
    );
    assert!(
        message.contains(
            "wasi:http/outgoing-handler@0.2.6 (network access: the sandbox grants no HTTP)"
        ),
        "{message}"
    );
}

#[test]
fn a_component_for_another_world_is_refused() {
    let wasm = wat::parse_str(
        r#"(component
            (core module $m (func (export "run")))
            (core instance $i (instantiate $m))
            (func $run (canon lift (core func $i "run")))
            (export "run" (func $run)))"#,
    )
    .unwrap();
    let message = check(&wasm).to_string();
    assert!(
        message.contains("does not export the evalhost grader world"),
        "{message}"
    );
    assert!(message.contains("it exports: run"), "{message}");
}

#[test]
fn a_core_module_is_refused_with_how_to_make_a_component() {
    let wasm = wat::parse_str(r#"(module (func (export "grade")))"#).unwrap();
    let error = check(&wasm);
    assert!(matches!(error, CheckError::CoreModule { .. }), "{error}");
    assert!(
        error.to_string().contains("wasm-tools component new"),
        "{error}"
    );
}

#[test]
fn corrupt_and_truncated_files_are_refused() {
    let error = check(b"#!/bin/sh\necho not wasm\n");
    assert_eq!(
        error.to_string(),
        "`test.wasm` is not a WebAssembly file (it starts with bytes 23 21 2f 62, not the wasm magic 00 61 73 6d)"
    );
    assert!(check(b"").to_string().contains("the file is empty"));
    let builtin = std::fs::read(BUILTIN).unwrap();
    let truncated = check(&builtin[..builtin.len() / 2]).to_string();
    assert!(
        truncated.contains("is not a valid WebAssembly component"),
        "{truncated}"
    );
}

#[test]
fn cli_check_lists_graders_and_fails_with_exit_2() {
    let output = Evalhost::new().args(["grader", "check", BUILTIN]).run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains("is an evalhost grader component"),
        "{stdout}"
    );
    assert!(
        stdout.contains("world:   evalhost:grader@0.5.0"),
        "{stdout}"
    );
    assert!(stdout.contains("    file_contains "), "{stdout}");
    assert!(stdout.contains("      config schema: {"), "{stdout}");

    let output = Evalhost::new()
        .args(["grader", "check", "--json", BUILTIN])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    let json: serde_json::Value = serde_json::from_str(stdout).unwrap();
    assert_eq!(json["world_version"], "0.5.0");

    let output = Evalhost::new()
        .args(["grader", "check", guests::hostile()])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("  denied:  wasi:sockets/"), "{stdout}");
    let output = Evalhost::new()
        .args(["grader", "check", "--strict", guests::hostile()])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.starts_with("Error: `"), "{stderr}");
    assert!(stderr.contains("wasi:sockets/tcp@"), "{stderr}");

    let output = Evalhost::new()
        .args(["grader", "check", "no/such/file.wasm"])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("failed to read `no/such/file.wasm`"),
        "{stderr}"
    );
}

/// Evidence as `evalhost run --out` writes it, for the `write-then-read` Mino case.
fn saved_evidence(out: &Path) -> PathBuf {
    let output = Evalhost::new()
        .args([
            "run",
            "--out",
            out.to_str().unwrap(),
            "--filter",
            "write-then-read",
            "cases/mino",
        ])
        .run();
    output.assert_code(0);
    out.join("write-then-read/run-1.evidence.json")
}

#[test]
fn cli_test_grades_saved_evidence_with_verdict_fuel_and_time() {
    let out = tempfile::tempdir().unwrap();
    let evidence = saved_evidence(out.path());
    let evidence = evidence.to_str().unwrap();
    let config = out.path().join("config.json");

    std::fs::write(&config, r#""write_file""#).unwrap();
    let output = Evalhost::new()
        .args([
            "grader",
            "test",
            BUILTIN,
            "--grader",
            "tool_called",
            "--evidence",
            evidence,
            "--config",
            config.to_str().unwrap(),
        ])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("verdict:   pass (score 1.00)"), "{stdout}");
    let fuel = stdout
        .lines()
        .find_map(|l| l.strip_prefix("fuel used: "))
        .expect("fuel line");
    let used: u64 = fuel.split(' ').next().unwrap().parse().unwrap();
    assert!(used > 0, "{stdout}");
    assert!(stdout.contains("time:      "), "{stdout}");

    std::fs::write(&config, r#""delete_file""#).unwrap();
    let output = Evalhost::new()
        .args([
            "grader",
            "test",
            BUILTIN,
            "--grader",
            "tool_called",
            "--evidence",
            evidence,
            "--config",
            config.to_str().unwrap(),
        ])
        .run();
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(stdout.contains("verdict:   fail (score 0.00)"), "{stdout}");
    assert!(stdout.contains("message:   tool_called"), "{stdout}");

    // A config the grader refuses, a grader the component lacks, and no --grader with many.
    std::fs::write(&config, r#"{"nope": 1}"#).unwrap();
    let output = Evalhost::new()
        .args([
            "grader",
            "test",
            BUILTIN,
            "--grader",
            "tool_called",
            "--evidence",
            evidence,
            "--config",
            config.to_str().unwrap(),
        ])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains("invalid config"), "{stderr}");
    let output = Evalhost::new()
        .args([
            "grader",
            "test",
            BUILTIN,
            "--grader",
            "nope",
            "--evidence",
            evidence,
        ])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains("provides no grader `nope`"), "{stderr}");
    let output = Evalhost::new()
        .args(["grader", "test", BUILTIN, "--evidence", evidence])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains("pick one with --grader"), "{stderr}");
    let output = Evalhost::new()
        .args(["grader", "test", BUILTIN, "--evidence", BUILTIN])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains("failed to read evidence"), "{stderr}");
}
