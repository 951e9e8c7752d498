//! OTLP in (docs/traces.md): a real agent instrumented with OpenTelemetry's GenAI
//! instrumentation of the OpenAI client (`cases/traces/otel/agent.py`: the official `openai`
//! client, `opentelemetry-instrumentation-openai-v2`, the SDK's exporters) runs through
//! `evalhost run` against evalhost's endpoint; the OTLP it exports (to a collector this test
//! starts, or as files of its workspace) imports as the run the scripted model made: the
//! prompt, the `read_file` call with its arguments and output, the final text and the token
//! usage the script reported, in each of the instrumentation's content forms. The committed
//! example files import the same way.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use evalhost::Evidence;
use evalhost::trace::{Imported, TraceFormat, import};

use crate::support::common::repo;
use crate::support::evalhost::Evalhost;
use crate::support::python::python_modules;

/// What `.ci/run` installs. `opentelemetry-util-genai` is pinned: openai-v2 2.4b0 accepts any
/// later one, but from 1.0 it always takes the latest conventions (`--semconv legacy` would
/// not be the 1.30 conventions) and 1.2 drops a module it imports.
/// `httpx`: openai-v2 imports it, and openai 3.x no longer depends on it (it uses `httpx2`).
const INSTALL: &str = "pip install openai==3.51.0 httpx==0.29.0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2 opentelemetry-proto==1.45.2 opentelemetry-instrumentation-openai-v2==2.4b0 opentelemetry-util-genai==0.4b0 opentelemetry-exporter-otlp-json-common==0.66b1";

fn tools() -> Option<()> {
    python_modules(
        "openai, opentelemetry.instrumentation.openai_v2, opentelemetry.exporter.otlp.proto.http, opentelemetry.exporter.otlp.json.common",
        INSTALL,
    )
}

fn case_dir() -> PathBuf {
    repo().join("cases/traces/otel")
}

/// `cases/traces/otel/record.yaml` in `dir`, its agent given `args` before the prompt.
fn case_with_args(dir: &Path, args: &[&str]) -> PathBuf {
    let text = std::fs::read_to_string(case_dir().join("record.yaml")).unwrap();
    let agent = case_dir().join("agent.py");
    let mut command = format!("[python3, '{}'", agent.display());
    for arg in args {
        command.push_str(&format!(", '{arg}'"));
    }
    command.push(']');
    let mut text = text.replace("[python3, agent.py]", &command);
    assert!(
        text.contains(&command),
        "record.yaml names its agent as expected"
    );
    if args.contains(&"--otlp-endpoint") {
        // Sent, not written: no files in the workspace to grade.
        text = text
            .replace("  - file_exists: otel/traces.pb\n", "")
            .replace("  - file_exists: otel/otlp.jsonl\n", "");
        assert!(!text.contains("file_exists"), "{text}");
    }
    let path = dir.join("record.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `evalhost run --out OUT CASE ARGS`, which must pass; the run's workspace.
fn run_case(case: &Path, out: &Path, args: &[&str]) -> PathBuf {
    Evalhost::new()
        .args(["run", "--out"])
        .arg(out)
        .arg(case)
        .args(args)
        .run()
        .assert_success();
    out.join("record/run-1.workspace")
}

fn imported(path: &Path) -> Imported {
    import(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The one run of `imported`, as graders see it.
fn evidence(imported: &Imported) -> Evidence {
    assert_eq!(imported.format, TraceFormat::Otlp);
    assert_eq!(
        imported.runs.len(),
        1,
        "one trace, one run: {:?}",
        imported.runs
    );
    let run = &imported.runs[0];
    assert!(
        run.label.starts_with("trace ") && run.label.len() == 6 + 32,
        "{}",
        run.label
    );
    assert!(run.usage_recorded, "the spans carry the usage");
    Evidence::from_session(&run.records, Default::default())
}

/// What the scripted model of record.yaml made, as a grader sees it.
fn assert_the_scripted_run(evidence: &Evidence, what: &Path) {
    let what = what.display();
    assert_eq!(
        evidence.prompt, "What is the launch code in notes.txt? Answer in one sentence.",
        "{what}"
    );
    assert_eq!(evidence.model, "scripted", "{what}");
    assert_eq!(evidence.calls.len(), 1, "{what}: {:?}", evidence.calls);
    let call = &evidence.calls[0];
    assert_eq!(call.name, "read_file", "{what}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&call.arguments).unwrap(),
        serde_json::json!({"path": "notes.txt"}),
        "{what}"
    );
    assert_eq!(call.output, "launch code: tangerine-42\n", "{what}");
    assert_eq!(call.status, "completed", "{what}");
    assert!(call.started, "{what}");
    assert_eq!(
        evidence.final_text, "The launch code in notes.txt is tangerine-42.",
        "{what}"
    );
    // The script's `usage:` (120 + 164 in, 18 + 11 out); openai-v2 records no cached tokens.
    assert_eq!(evidence.usage.requests, 2, "{what}");
    assert_eq!(
        (evidence.usage.input_tokens, evidence.usage.output_tokens),
        (284, 29),
        "{what}"
    );
    assert_eq!(
        evidence.usage.cached_input_tokens, 0,
        "{what}: the script's 96 cached tokens are not recorded by openai-v2 2.4b0"
    );
    assert_eq!(evidence.run_error, None, "{what}");
}

/// What a run's evidence says, without what differs from run to run (ids, times).
fn comparable(mut evidence: Evidence) -> Evidence {
    evidence.case_name.clear();
    evidence.events.clear();
    for call in &mut evidence.calls {
        call.duration_ms = 0;
    }
    evidence
}

/// The committed record.yaml, run as it is: the agent writes the OTLP its exporters' encoders
/// made to the workspace (`otel/traces.pb`, `otel/otlp.jsonl`), and each imports as the run.
/// The committed `trace.pb` and `trace.otlp.json` (such a run's) and `legacy.otlp.ndjson` (a run
/// with `--semconv legacy`: content in log events) import the same way.
#[test]
fn the_instrumented_agent_s_otlp_files_import_as_the_run_the_script_made() {
    let Some(()) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let workspace = run_case(
        &case_dir().join("record.yaml"),
        &dir.path().join("out"),
        &[],
    );
    let fresh = workspace.join("otel/traces.pb");
    let fresh_evidence = evidence(&imported(&fresh));
    assert_the_scripted_run(&fresh_evidence, &fresh);
    let lines = workspace.join("otel/otlp.jsonl");
    assert_eq!(
        comparable(evidence(&imported(&lines))),
        comparable(fresh_evidence.clone()),
        "the JSON lines hold the protobuf's run"
    );
    for committed in ["trace.pb", "trace.otlp.json", "legacy.otlp.ndjson"] {
        let path = case_dir().join(committed);
        let committed_evidence = evidence(&imported(&path));
        assert_the_scripted_run(&committed_evidence, &path);
        assert_eq!(
            comparable(committed_evidence),
            comparable(fresh_evidence.clone()),
            "{committed} imports as a fresh run does"
        );
    }
}

/// The collector, killed when dropped.
struct Collector {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Collector {
    fn start(dir: &Path) -> Collector {
        let mut child = Command::new("python3")
            .arg(case_dir().join("collector.py"))
            .arg(dir)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the collector");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the collector's port");
        Collector {
            child,
            port,
            dir: dir.to_owned(),
        }
    }

    /// The bodies received for `signal` (`traces`, `logs`), in arrival order.
    fn received(&self, signal: &str) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| name.ends_with(&format!("-{signal}.pb")))
            })
            .collect();
        paths.sort();
        paths
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The SDK's OTLP/HTTP exporter sends to a collector outside the run, whose port the run may
/// reach only because `--confine-connect` widens it: the request it POSTed imports as the run.
#[test]
fn the_agent_exports_over_http_to_a_collector_whose_port_is_widened() {
    let Some(()) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let collector = Collector::start(&dir.path().join("received"));
    let url = format!("http://127.0.0.1:{}", collector.port);
    let case = case_with_args(dir.path(), &["--otlp-endpoint", &url]);
    let port = collector.port.to_string();
    let workspace = run_case(
        &case,
        &dir.path().join("out"),
        &["--confine-connect", &port],
    );
    assert!(
        !workspace.join("otel").exists(),
        "the agent sent its telemetry, it wrote none"
    );
    let traces = collector.received("traces");
    assert_eq!(traces.len(), 1, "one batch, sent at shutdown: {traces:?}");
    assert_the_scripted_run(&evidence(&imported(&traces[0])), &traces[0]);
    assert!(
        collector.received("logs").is_empty(),
        "the latest conventions put the content on the spans: no log events"
    );
}

/// The instrumentation's other content forms: the inference details event
/// (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=event_only`) and the 1.30 conventions'
/// per-message log events (no opt-in), each a log record joined to its chat span by trace and
/// span id in the JSON lines that mix traces and logs. The traces alone have no content: the
/// run has its counts, and the file says the content was not captured.
#[test]
fn content_as_log_events_is_joined_to_its_spans() {
    let Some(()) = tools() else { return };
    for semconv in ["events", "legacy"] {
        let dir = tempfile::tempdir().unwrap();
        let case = case_with_args(dir.path(), &["--semconv", semconv]);
        let workspace = run_case(&case, &dir.path().join("out"), &[]);
        let lines = workspace.join("otel/otlp.jsonl");
        let text = std::fs::read_to_string(&lines).unwrap();
        assert!(
            text.contains("\"resourceLogs\"") && text.contains("\"resourceSpans\""),
            "{semconv}: traces and logs mixed: {text}"
        );
        assert_the_scripted_run(&evidence(&imported(&lines)), &lines);

        let traces = workspace.join("otel/traces.pb");
        let spans_only = imported(&traces);
        let evidence = evidence(&spans_only);
        assert_eq!(evidence.prompt, "", "{semconv}: no content on the spans");
        assert_eq!(evidence.calls.len(), 1, "{semconv}: the execute_tool span");
        assert_eq!(evidence.calls[0].name, "read_file");
        assert_eq!(evidence.calls[0].output, "launch code: tangerine-42\n");
        assert_eq!(evidence.usage.requests, 2);
        assert_eq!(
            (evidence.usage.input_tokens, evidence.usage.output_tokens),
            (284, 29)
        );
        assert!(
            spans_only.unmapped.iter().any(|note| note
                .starts_with("model request spans without content (message content not captured")
                && note.ends_with(": 2")),
            "{semconv}: {:?}",
            spans_only.unmapped
        );
    }
}
