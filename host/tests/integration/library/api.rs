//! The library as an embedder uses it: `evalhost::Suite` plans and runs a suite with the
//! policies of `evalhost run` (filter, tags, an agent override, live mode), without the CLI.

use std::path::{Path, PathBuf};

use evalhost::internals::wire::Api;
use evalhost::{AgentOverride, Suite, SuiteError};

use crate::support::live::{FakeProvider, Step, chat_text, provider};

fn suite_dir(cases: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in cases {
        std::fs::write(dir.path().join(format!("{name}.yaml")), text).expect("write case");
    }
    dir
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Runtime::new().expect("runtime")
}

fn greet(name: &str, extra: &str) -> String {
    format!(
        "name: {name}\n{extra}prompt: Say hello.\nmodel:\n  - text: Hello, world!\ngraders:\n  - final_text_contains: Hello\n"
    )
}

/// The built-in graders, compiled without a cache (no files outside the test's temp dirs).
/// The report's cases, each read back from the spool when it waits there.
fn cases_of(report: &evalhost::SuiteReport) -> Vec<evalhost::report::CaseReport> {
    report.cases.clone().into_vec().expect("cases read back")
}

fn with_builtins(suite: Suite) -> Suite {
    let mut host = evalhost::GraderHost::new(Default::default(), None).expect("engine");
    host.add_component(evalhost::grader::BUILTIN_GRADERS_WASM, "builtin")
        .expect("built-in graders load");
    suite.grader_host(host)
}

#[test]
fn a_suite_selects_by_tags_and_filter_and_replays_what_is_left() {
    let dir = suite_dir(&[
        ("alpha", &greet("alpha", "tags: [smoke]\n")),
        ("beta", &greet("beta", "")),
    ]);
    let plan = with_builtins(Suite::new([dir.path()]).tags(["smoke"]))
        .plan()
        .expect("plan");
    let names: Vec<String> = plan
        .cases
        .iter()
        .map(|c| c.prepared().expect("planned").case.name.clone())
        .collect();
    assert_eq!(names, ["alpha"]);
    let report = runtime().block_on(plan.run()).expect("run");
    assert_eq!(report.cases.len(), 1);
    assert!(
        cases_of(&report)[0].runs[0].pass,
        "{:?}",
        cases_of(&report)[0].runs[0]
    );

    let error = Suite::new([dir.path()])
        .filter("gamma")
        .plan()
        .expect_err("nothing matches");
    assert!(matches!(error, SuiteError::NoCaseMatchesFilter { .. }));
    assert_eq!(
        error.to_string(),
        "no case name contains `gamma` (--filter)"
    );
}

#[test]
fn a_suite_reports_every_problem_of_its_case_files_before_running() {
    let dir = suite_dir(&[
        ("good", &greet("good", "")),
        (
            "bad",
            "name: bad\nprompt: Hi.\nmodel:\n  - text: Hi\ngraders:\n  - no_such_grader: 1\n",
        ),
        (
            "empty",
            "name: empty\nprompt: Hi.\ngraders:\n  - max_requests: 1\n",
        ),
    ]);
    let error = with_builtins(Suite::new([dir.path()]))
        .plan()
        .expect_err("problems");
    let SuiteError::Cases(problems) = &error else {
        panic!("not the cases' problems: {error}");
    };
    let text = problems.to_string();
    assert!(
        text.contains("bad.yaml:6:") && text.contains("no_such_grader"),
        "{text}"
    );
    assert!(
        text.contains("empty.yaml:1:1") && text.contains("a replay case needs a model script"),
        "{text}"
    );
}

#[test]
fn a_suite_runs_every_agent_case_with_an_external_command() {
    let script: PathBuf =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external_agent/agent.py");
    let case = "name: plain
prompt: What does in.txt say? Write it to answer.txt.
workspace:
  files:
    in.txt: forty-two
model:
  - call: {tool: read_file, arguments: {path: in.txt}}
  - text: The file says forty-two.
graders:
  - final_text_contains: forty-two
  - file_contains: {path: answer.txt, text: The file says forty-two.}
";
    let dir = suite_dir(&[("plain", case)]);
    let command = format!("python3 '{}'", script.display());
    let plan = with_builtins(Suite::new([dir.path()]).agent(AgentOverride::Command(command)))
        .plan()
        .expect("plan");
    let report = runtime().block_on(plan.run()).expect("run");
    let run = &cases_of(&report)[0].runs[0];
    assert!(run.pass, "{run:?}");
}

#[test]
fn a_live_suite_asks_the_provider_and_skips_replay_only_cases() {
    let fake = FakeProvider::start(
        vec![],
        Step::Sse(chat_text("Hello from the provider", 5, 3)),
    );
    let dir = suite_dir(&[
        ("alpha", &greet("alpha", "")),
        ("beta", &greet("beta", "live: false\n")),
    ]);
    let plan = with_builtins(Suite::new([dir.path()]).live(provider(Api::Chat, &fake)))
        .plan()
        .expect("plan");
    assert_eq!(
        plan.notes,
        ["Skipped replay-only cases (live: false): beta"]
    );
    let report = runtime().block_on(plan.run()).expect("run");
    assert_eq!(report.cases.len(), 1);
    let runs = &cases_of(&report)[0].runs;
    assert_eq!(runs.len(), 3, "live runs default to 3");
    assert!(runs.iter().all(|r| r.pass), "{runs:?}");
    assert_eq!(fake.received().len(), 3, "one provider request per run");
}

#[test]
fn saved_runs_are_graded_again_with_the_graders_the_case_declares_now() {
    let dir = suite_dir(&[("alpha", &greet("alpha", ""))]);
    let out = dir.path().join("out");
    let plan = with_builtins(Suite::new([dir.path().join("alpha.yaml")]))
        .options(|options| options.out = Some(out.clone()))
        .plan()
        .expect("plan");
    let runtime = runtime();
    let report = runtime.block_on(plan.run()).expect("run");
    assert!(cases_of(&report)[0].runs[0].pass);

    // The case now expects another greeting; its saved run is graded again, nothing runs.
    std::fs::write(
        dir.path().join("alpha.yaml"),
        greet("alpha", "").replace("final_text_contains: Hello", "final_text_contains: Goodbye"),
    )
    .expect("rewrite case");
    let saved = evalhost::report::read_report(&out).expect("saved report");
    let paths = evalhost::runner::recorded_case_paths(&saved).expect("paths");
    let loaded = evalhost::case::load_cases(&paths).expect("load");
    let cases = evalhost::runner::cases_of_report(&saved, loaded, &paths).expect("cases");
    let mut host = evalhost::GraderHost::new(Default::default(), None).expect("engine");
    host.add_component(evalhost::grader::BUILTIN_GRADERS_WASM, "builtin")
        .expect("built-in graders load");
    let prepared = evalhost::runner::prepare_cases(cases, &host).expect("prepare");
    let regraded = runtime
        .block_on(evalhost::runner::regrade(
            &out,
            &saved,
            prepared,
            1,
            evalhost::RunOptions::default().judge,
            false,
        ))
        .expect("regrade");
    let run = &cases_of(&regraded.report)[0].runs[0];
    assert!(!run.pass, "{run:?}");
    assert!(
        run.verdicts[0].message.contains("Goodbye"),
        "{}",
        run.verdicts[0].message
    );
}

/// A case whose run reads a seeded file, edits it and is graded on both.
fn seeded(name: &str, content: &str) -> String {
    format!(
        r#"name: {name}
prompt: Read the notes, then add a line.
approve: all
workspace:
  files:
    "notes.md": "{content}"
model:
  - call: {{tool: read_file, arguments: {{"path": "notes.md"}}}}
  - call: {{tool: edit_file, arguments: {{"path": "notes.md", "old_text": "{content}", "new_text": "{content}\nchecked"}}}}
  - text: "The notes say: {content}"
graders:
  - final_text_contains: "{content}"
  - file_contains: {{"path": "notes.md", "text": "checked"}}
  - result_status: {{"call": 2, "status": "completed"}}
"#
    )
}

/// Three cases, `note-0` to `note-2`, each reading and editing its note `release {i} is green`:
/// (name, case file text).
fn note_cases() -> Vec<(String, String)> {
    (0..3)
        .map(|i| {
            let name = format!("note-{i}");
            let text = seeded(&name, &format!("release {i} is green"));
            (name, text)
        })
        .collect()
}

/// A suite directory of `cases` (name, case file text).
fn note_suite(cases: &[(String, String)]) -> tempfile::TempDir {
    let borrowed: Vec<(&str, &str)> = cases
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    suite_dir(&borrowed)
}

/// Runs of a suite whose cases' bulky parts (seeded files, scripts) wait on disk give the same
/// verdicts as runs with everything in memory, and they run what was loaded: a case file
/// edited after planning changes nothing.
#[test]
fn cases_spooled_out_of_memory_run_as_loaded() {
    let cases = note_cases();
    let dir = note_suite(&cases);
    let outcomes = |report: &evalhost::SuiteReport| -> Vec<(String, bool, Vec<String>)> {
        cases_of(report)
            .iter()
            .map(|c| {
                let run = &c.runs[0];
                let verdicts = run
                    .verdicts
                    .iter()
                    .map(|v| format!("{}: {:?} {}", v.grader, v.outcome, v.message))
                    .collect();
                (c.name.clone(), run.pass, verdicts)
            })
            .collect()
    };
    let in_memory = with_builtins(Suite::new([dir.path()]))
        .plan()
        .expect("plan");
    assert!(in_memory.cases.iter().all(|c| !c.is_parked()));
    let in_memory = runtime().block_on(in_memory.run()).expect("run");

    let spooled = with_builtins(Suite::new([dir.path()]).resident_case_bytes(0))
        .plan()
        .expect("plan");
    // Each case waits in the spool; read back, its bulky parts are still there.
    for planned in &spooled.cases {
        let prepared = planned.prepared().expect("read back");
        assert!(planned.is_parked(), "{} is in memory", prepared.case.name);
        assert_eq!(prepared.graders.len(), 3);
        assert!(prepared.case.workspace_files.is_empty() && prepared.case.model.is_empty());
        assert_eq!(prepared.case.script_steps(), 3);
    }
    // Edited after planning: the runs still get the seeded notes and script that were loaded.
    for (name, _) in &cases {
        std::fs::write(
            dir.path().join(format!("{name}.yaml")),
            seeded(name, "changed"),
        )
        .expect("edit");
    }
    let spooled = runtime().block_on(spooled.run()).expect("run");

    assert_eq!(outcomes(&spooled), outcomes(&in_memory));
    assert_eq!(
        spooled.failed_cases().expect("count"),
        0,
        "{:#?}",
        outcomes(&spooled)
    );
    assert_eq!(spooled.cases.len(), 3);
}

/// A suite whose finished cases wait on disk for the report reports exactly what one held in
/// memory does: the same table and failure lines, the same verdicts in `report.json`, and
/// JUnit with the same cases.
#[test]
fn finished_cases_spooled_out_of_memory_report_as_held() {
    // Two pass, one fails (its note lacks the text the grader wants), one runs twice.
    let mut cases = note_cases();
    cases[1].1 = cases[1].1.replace(
        "final_text_contains: \"release 1 is green\"",
        "final_text_contains: \"release 1 is red\"",
    );
    cases[2].1 = format!("runs: 2\n{}", cases[2].1);
    let dir = note_suite(&cases);
    let run = |resident_report_bytes: usize, out: &Path| {
        let plan = with_builtins(Suite::new([dir.path()]))
            .options(|options| {
                options.resident_report_bytes = resident_report_bytes;
                options.out = Some(out.to_owned());
            })
            .plan()
            .expect("plan");
        runtime().block_on(plan.run()).expect("run")
    };
    let outs = tempfile::tempdir().expect("temp dir");
    let (held_out, spooled_out) = (outs.path().join("held"), outs.path().join("spooled"));
    let held = run(evalhost::report::RESIDENT_BYTES, &held_out);
    let spooled = run(0, &spooled_out);
    assert_eq!(held.cases.spooled(), 0);
    assert_eq!(
        spooled.cases.spooled(),
        3,
        "every finished case waits on disk"
    );

    let text = evalhost::render_text(&spooled).expect("text");
    assert_eq!(text, evalhost::render_text(&held).expect("text"));
    assert!(text.contains("1 of 3 cases failed"), "{text}");
    assert!(text.contains("note-1 run 1: graders[0]"), "{text}");
    assert_eq!(spooled.failed_cases().expect("count"), 1);
    assert_eq!((spooled.summary.runs, spooled.summary.passed), (4, 3));

    // report.json: the same cases, runs and verdicts (timings aside).
    // (case, run, pass, its verdicts: grader, message, fuel).
    type Run = (String, u32, bool, Vec<(String, String, u64)>);
    let verdicts = |dir: &Path| -> Vec<Run> {
        let report = evalhost::report::read_report(dir).expect("report.json");
        cases_of(&report)
            .into_iter()
            .flat_map(|case| {
                case.runs.into_iter().map(move |run| {
                    let verdicts = run
                        .verdicts
                        .iter()
                        .map(|v| (v.grader.to_string(), v.message.clone(), v.fuel_used))
                        .collect();
                    (case.name.clone(), run.run, run.pass, verdicts)
                })
            })
            .collect()
    };
    let written = verdicts(&spooled_out);
    assert_eq!(written.len(), 4);
    assert_eq!(written, verdicts(&held_out));

    let junit = evalhost::report::render_junit(&spooled);
    for name in ["note-0", "note-1", "note-2"] {
        assert!(
            junit.contains(&format!("<testcase name=\"{name}\"")),
            "{junit}"
        );
    }
    assert!(junit.contains("tests=\"3\" failures=\"1\""), "{junit}");
}

/// The HTML page of a suite whose runs' transcripts waited on disk (`RunDetails` with no
/// memory budget) is the page of one that held them (timings aside): each run's transcript
/// and workspace diff in its own case's section, in the report's order.
#[test]
fn html_details_spooled_out_of_memory_render_as_held() {
    let dir = note_suite(&note_cases());
    let page = |details: evalhost::report::RunDetails| {
        let details = std::sync::Arc::new(details);
        let plan = with_builtins(Suite::new([dir.path()]).runs(2))
            .options(|options| options.details = Some(details.clone()))
            .plan()
            .expect("plan");
        let report = runtime().block_on(plan.run()).expect("run");
        let mut html = Vec::new();
        evalhost::report::write_html(&report, &details, &mut html).expect("page");
        String::from_utf8(html).expect("UTF-8")
    };
    let held = page(evalhost::report::RunDetails::new());
    let spooled = page(evalhost::report::RunDetails::with_budget(0));
    assert_eq!(without_timings(&spooled), without_timings(&held));
    for i in 0..3 {
        let start = spooled.find(&format!(r#"id="case-{i}""#)).expect("section");
        let end = spooled[start..]
            .find("</section>")
            .map_or(spooled.len(), |e| start + e);
        let section = &spooled[start..end];
        let said = format!("The notes say: release {i} is green");
        assert_eq!(section.matches(&said).count(), 2, "{section}");
        assert_eq!(
            section
                .matches(r#"<span class="add">+checked</span>"#)
                .count(),
            2,
            "{section}"
        );
        let other = format!("release {} is green", (i + 1) % 3);
        assert!(!section.contains(&other), "{section}");
    }
}

/// `text` with every number before ` ms` or ` µs` masked.
fn without_timings(text: &str) -> String {
    let timing = regex::Regex::new(r"\d+ (ms|µs)").expect("pattern");
    timing.replace_all(text, "N $1").into_owned()
}

#[test]
fn a_descriptor_the_embedder_left_open_does_not_reach_a_run() {
    use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl, open};
    use std::os::fd::AsRawFd;
    // A run first: what evalhost does once per process is done by then.
    let first = suite_dir(&[(
        "first",
        "name: first\nprompt: Go.\nagent: {command: [bash, -c, 'echo ran']}\ngraders:\n  - final_text_contains: ran\n",
    )]);
    let plan = with_builtins(Suite::new([first.path()]))
        .plan()
        .expect("plan");
    runtime().block_on(plan.run()).expect("run");
    let dir = tempfile::tempdir().expect("temp dir");
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "embedder-secret").expect("write");
    // Opened after it, the way a C library or an older program would: inheritable by every
    // child.
    let fd = open(&secret, OFlag::O_RDONLY, nix::sys::stat::Mode::empty()).expect("open");
    let inheritable = |fd: &std::os::fd::OwnedFd| {
        !FdFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFD).expect("flags"))
            .contains(FdFlag::FD_CLOEXEC)
    };
    assert!(inheritable(&fd), "control: a child would get it");
    let n = fd.as_raw_fd();
    let case = format!(
        "name: peek\nprompt: Peek.\nagent: {{command: [bash, -c, 'cat /dev/fd/{n} 2>/dev/null || echo closed']}}\ngraders:\n  - final_text_contains: closed\n"
    );
    let cases = suite_dir(&[("peek", &case)]);
    let plan = with_builtins(Suite::new([cases.path()]))
        .plan()
        .expect("plan");
    let report = runtime().block_on(plan.run()).expect("run");
    let run = &cases_of(&report)[0].runs[0];
    assert!(run.pass, "{run:?}");
    assert!(
        !inheritable(&fd),
        "marked close-on-exec before the run's process started"
    );
}
