//! Real agents' runs explained as well as evalhost's own: each preset's real agent (Codex CLI,
//! Claude Code, pi, mini-swe-agent, Gemini CLI) and an OpenAI Python SDK program (an external
//! agent) run the same five cases, one suite in one `evalhost run --out --html`:
//!
//! - `expectation`: the second request misses the step's `expect_input_contains`. The run's
//!   error names request 2 and why, however often the agent retried it (retries counted as
//!   retries: `model_retry` records, not new requests), then the agent's own error;
//! - `no-script`: no script at all: request 1 is named, retried or not;
//! - `wrong-argument`: a call whose arguments the tool does not take;
//! - `refused`: a call the agent refuses under `approve: none`;
//! - `slow-tool`: a shell call that sleeps 2 s: its duration, from the answer that asked for
//!   it to the request that returned its result, is at least 2,000 ms and at most
//!   [`TOLERANCE_MS`] more; the records are timed when the endpoint saw them, and the
//!   `latency` grader sees the real turn.
//!
//! Each shows its cause, status and timing in the text report, the session log (and the
//! evidence) and the HTML report. An agent is one [`Row`] of data: the calls its tools take,
//! what it answers, the statuses that follows; a new preset is one more row.

use std::path::Path;

use serde_json::Value;

use crate::support::common::python_sdks;
use crate::support::evalhost::Evalhost;

/// How much longer than the 2 s it slept a slow tool call may be: the agent's own work
/// between running the tool and sending its result back (measured: 60–560 ms on an idle
/// 2-core machine), with room for a loaded one.
const TOLERANCE_MS: u64 = 5_000;

/// One agent of the matrix, as data.
struct Row {
    /// Its cases are named `NAME-expectation`, ...
    name: &'static str,
    /// What must be installed to run it.
    needs: Needs,
    /// The case's `agent:`.
    agent: String,
    /// The call step of its shell tool running a command (`{tool: ..., arguments: ...}`, with
    /// `COMMAND` in place of the command).
    shell: &'static str,
    /// The step that ends a run (a text, or mini-swe-agent's submission), and the one that
    /// ends it under `approve: none`.
    end: &'static str,
    end_refused: &'static str,
    /// What the run's final text is once `end` was answered.
    final_text: &'static str,
    /// A call with an argument its tool does not take, what the agent sends back, and the
    /// call's status.
    wrong: Call,
    /// A call the agent refuses under `approve: none`.
    refused: Call,
    /// Whether the agent retries a request the endpoint failed.
    retries: bool,
}

/// A call, what the agent's next request says of it, and the status it gets.
struct Call {
    step: &'static str,
    says: &'static str,
    status: &'static str,
    /// Whether the tool ran (`tool_start`): an agent that rejects the call itself never runs it.
    started: bool,
}

enum Needs {
    /// A program on PATH (a preset's agent, as `.ci/run` installs it).
    Program(&'static str),
    /// The official Python SDKs.
    PythonSdks,
}

fn rows() -> Vec<Row> {
    let sdk_agent =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/sdk_bash_agent.py");
    vec![
        Row {
            name: "codex",
            needs: Needs::Program("codex"),
            agent: "{preset: codex}".into(),
            shell: r#"{tool: exec_command, arguments: {cmd: "COMMAND"}}"#,
            end: "text: Done.",
            end_refused: "text: Done.",
            final_text: "Done.",
            wrong: Call {
                step: r#"{tool: exec_command, arguments: {command: "ls"}}"#,
                says: "failed to parse function arguments: missing field `cmd`",
                status: "failed",
                started: true,
            },
            refused: Call {
                // The workspace is read-only (evalhost's confinement, or Codex's sandbox).
                step: r#"{tool: exec_command, arguments: {cmd: "printf x > out.txt"}}"#,
                says: "out.txt: ",
                status: "failed",
                started: true,
            },
            retries: true,
        },
        Row {
            name: "claude-code",
            needs: Needs::Program("claude"),
            agent: "{preset: claude-code}".into(),
            shell: r#"{tool: Bash, arguments: {command: "COMMAND", description: Run it}}"#,
            end: "text: Done.",
            end_refused: "text: Done.",
            final_text: "Done.",
            wrong: Call {
                step: r#"{tool: Bash, arguments: {cmd: "ls"}}"#,
                says: "InputValidationError: Bash failed",
                status: "failed",
                started: true,
            },
            refused: Call {
                step: "{tool: Write, arguments: {file_path: out.txt, content: x}}",
                says: "Claude requested permissions to write to ",
                status: "failed",
                started: true,
            },
            retries: true,
        },
        Row {
            name: "pi",
            needs: Needs::Program("pi"),
            agent: "{preset: pi}".into(),
            shell: r#"{tool: bash, arguments: {command: "COMMAND"}}"#,
            end: "text: Done.",
            end_refused: "text: Done.",
            final_text: "Done.",
            wrong: Call {
                step: r#"{tool: bash, arguments: {cmd: "ls"}}"#,
                says: "Validation failed for tool \\\"bash\\\"",
                status: "failed",
                started: true,
            },
            refused: Call {
                step: r#"{tool: bash, arguments: {command: "printf x > out.txt"}}"#,
                says: "Tool bash not found",
                status: "failed",
                started: true,
            },
            retries: false,
        },
        Row {
            name: "mini-swe-agent",
            needs: Needs::Program("mini"),
            agent: "{preset: mini-swe-agent}".into(),
            shell: r#"{tool: bash, arguments: {command: "COMMAND"}}"#,
            // What follows the submission line is the final text.
            end: r#"call: {tool: bash, arguments: {command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo Done."}}"#,
            // Under `approve: none` only the bare submission is let through.
            end_refused: r#"call: {tool: bash, arguments: {command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}}"#,
            final_text: "Done.",
            wrong: Call {
                step: r#"{tool: bash, arguments: {cmd: "ls"}}"#,
                says: "Missing 'command' argument in bash tool call.",
                status: "failed",
                started: false,
            },
            refused: Call {
                step: r#"{tool: bash, arguments: {command: "printf x > out.txt"}}"#,
                says: r#"\"returncode\": -1"#,
                status: "failed",
                started: true,
            },
            retries: false,
        },
        Row {
            name: "gemini-cli",
            needs: Needs::Program("gemini"),
            agent: "{preset: gemini-cli}".into(),
            shell: r#"{tool: run_shell_command, arguments: {command: "COMMAND"}}"#,
            end: "text: Done.",
            end_refused: "text: Done.",
            final_text: "Done.",
            wrong: Call {
                step: r#"{tool: run_shell_command, arguments: {cmd: "ls"}}"#,
                says: "params must have required property 'command'",
                status: "failed",
                started: true,
            },
            refused: Call {
                // Under `approve: none` the shell tool is not declared.
                step: r#"{tool: run_shell_command, arguments: {command: "printf x > out.txt"}}"#,
                says: "Tool \\\"run_shell_command\\\" not found",
                status: "failed",
                started: true,
            },
            // The preset allows one attempt a request (`general.maxAttempts: 1`).
            retries: false,
        },
        Row {
            name: "sdk",
            needs: Needs::PythonSdks,
            agent: format!("{{command: [python3, \"{}\"]}}", sdk_agent.display()),
            shell: r#"{tool: bash, arguments: {command: "COMMAND"}}"#,
            end: "text: Done.",
            end_refused: "text: Done.",
            final_text: "Done.",
            // The program's own texts: a Responses `function_call_output` cannot say a call
            // failed, so its calls are `completed`.
            wrong: Call {
                step: r#"{tool: bash, arguments: {cmd: "ls"}}"#,
                says: "bash needs a `command` argument",
                status: "completed",
                started: true,
            },
            refused: Call {
                step: r#"{tool: bash, arguments: {command: "rm -f in.txt"}}"#,
                says: "refused: this agent does not run rm",
                status: "completed",
                started: true,
            },
            retries: false,
        },
    ]
}

impl Row {
    fn installed(&self) -> bool {
        match self.needs {
            Needs::Program(program) => super::presets::installed(&[program]).is_some(),
            Needs::PythonSdks => python_sdks().is_some(),
        }
    }

    fn shell(&self, command: &str) -> String {
        self.shell.replace("COMMAND", command)
    }

    /// The five cases: `(scenario, case file)`.
    fn cases(&self) -> Vec<(&'static str, String)> {
        let head = |prompt: &str, approve: &str| {
            format!(
                "agent: {}\nprompt: {prompt}\napprove: {approve}\nworkspace:\n  files:\n    in.txt: a\n",
                self.agent
            )
        };
        let expect = |says: &str| {
            format!(
                "    expect_input_contains: '{}'\n",
                says.replace('\'', "''")
            )
        };
        vec![
            (
                "expectation",
                format!(
                    "{}model:\n  - call: {}\n  - {}\n{}graders:\n  - final_text_contains: Done\n",
                    head("Print a = 1.", "all"),
                    self.shell("echo a = 1"),
                    self.end,
                    expect("b = 2"),
                ),
            ),
            (
                "no-script",
                format!(
                    "{}graders:\n  - final_text_contains: hi\n",
                    head("Say hi.", "all")
                ),
            ),
            (
                "wrong-argument",
                format!(
                    "{}model:\n  - call: {}\n  - {}\n{}graders:\n  - result_status: {{call: 1, status: {}}}\n",
                    head("List the files.", "all"),
                    self.wrong.step,
                    self.end,
                    expect(self.wrong.says),
                    self.wrong.status,
                ),
            ),
            (
                "refused",
                format!(
                    "{}model:\n  - call: {}\n  - {}\n{}graders:\n  - result_status: {{call: 1, status: {}}}\n",
                    head("Write x to out.txt.", "none"),
                    self.refused.step,
                    self.end_refused,
                    expect(self.refused.says),
                    self.refused.status,
                ),
            ),
            (
                "slow-tool",
                // The latency cap is under the 2 s the tool sleeps: the run's turn is timed,
                // so it fails, naming the turn's real latency.
                format!(
                    "{}model:\n  - call: {}\n  - {}\ngraders:\n  - result_status: {{call: 1, status: completed}}\n\
                     \x20 - final_text_contains: Done\n  - latency: {{p50_ms: 1999}}\n",
                    head("Sleep for two seconds.", "all"),
                    self.shell("sleep 2"),
                    self.end,
                ),
            ),
        ]
    }
}

/// What one case's run left: its line under the table, its session log, evidence and HTML.
struct Ran<'a> {
    case: String,
    /// The text report's line about the run (`  CASE run 1: ...`), if any.
    line: Option<&'a str>,
    log: Vec<Value>,
    evidence: Value,
    html: &'a str,
}

impl Ran<'_> {
    fn records(&self, kind: &str) -> Vec<&Value> {
        self.log.iter().filter(|r| r["type"] == kind).collect()
    }

    fn call(&self) -> &Value {
        &self.evidence["calls"][0]
    }

    /// The line's text after `  CASE run 1: `.
    fn said(&self) -> &str {
        let line = self
            .line
            .unwrap_or_else(|| panic!("{}: no line about the run", self.case));
        line.split_once(" run 1: ").map_or(line, |(_, said)| said)
    }
}

/// `text` as the HTML report escapes it.
fn html_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The retries a run's error counts: `N` of ` (retried N times)`, 1 for ` (retried once)`.
fn retries_said(error: &str) -> u32 {
    if error.contains(" (retried once)") {
        return 1;
    }
    error
        .split_once(" (retried ")
        .and_then(|(_, rest)| rest.split_once(" times)"))
        .map_or(0, |(n, _)| n.parse().expect("a count"))
}

#[test]
fn each_agent_s_failures_statuses_and_timing_are_explained_in_every_report() {
    let rows: Vec<Row> = rows().into_iter().filter(Row::installed).collect();
    if rows.is_empty() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    for row in &rows {
        for (scenario, text) in row.cases() {
            let name = format!("{}-{scenario}", row.name);
            std::fs::write(
                dir.path().join(format!("cases/{name}.yaml")),
                format!("name: {name}\n{text}"),
            )
            .unwrap();
        }
    }
    let out = dir.path().join("out");
    let html = dir.path().join("report.html");
    let output = Evalhost::new()
        .args(["run", "--jobs", "5", "--out"])
        .arg(&out)
        .arg("--html")
        .arg(&html)
        .arg("cases")
        .current_dir(dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .run();
    // The expectation, no-script and slow-tool cases fail, by design.
    output.assert_code(1);
    let stdout = output.stdout();
    let html = std::fs::read_to_string(&html).unwrap();
    let ran = |row: &Row, scenario: &str| -> Ran<'_> {
        let case = format!("{}-{scenario}", row.name);
        let run = out.join(&case);
        let log = std::fs::read_to_string(run.join("run-1.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let evidence = serde_json::from_str(
            &std::fs::read_to_string(run.join("run-1.evidence.json")).unwrap(),
        )
        .unwrap();
        let prefix = format!("  {case} run 1: ");
        let section = html
            .split("<section class=\"case")
            .skip(1)
            .find(|s| s.contains(&format!("<h2>{case} ")))
            .unwrap_or_else(|| panic!("{case}: no section in the HTML report"));
        Ran {
            line: stdout.lines().find(|l| l.starts_with(&prefix)),
            case,
            log,
            evidence,
            html: section,
        }
    };
    for row in &rows {
        // The run's error names the request the endpoint could not answer and why, counts
        // the agent's retries of it, then quotes the agent; retries are no new requests.
        for (scenario, cause, requests) in [
            ("expectation", "Request 2 did not contain \"b = 2\"", 2),
            (
                "no-script",
                "Model script exhausted: request 1 has no scripted response",
                1,
            ),
        ] {
            let run = ran(row, scenario);
            let case = &run.case;
            let said = run.said();
            assert!(said.starts_with(cause), "{case}: {said}");
            assert!(
                said.contains("; then external agent "),
                "{case}: the agent's own error follows: {said}"
            );
            let retries = retries_said(said);
            assert_eq!(
                retries > 0,
                row.retries,
                "{case}: {} agent retries a failed request: {said}",
                if row.retries { "this" } else { "no" }
            );
            let numbers: Vec<u64> = run
                .records("model_request")
                .iter()
                .map(|r| r["n"].as_u64().unwrap())
                .collect();
            assert_eq!(numbers, (1..=requests).collect::<Vec<_>>(), "{case}");
            let retried: Vec<(u64, u64)> = run
                .records("model_retry")
                .iter()
                .map(|r| (r["n"].as_u64().unwrap(), r["attempt"].as_u64().unwrap()))
                .collect();
            assert_eq!(
                retried,
                (2..=u64::from(retries) + 1)
                    .map(|attempt| (requests, attempt))
                    .collect::<Vec<_>>(),
                "{case}: each retry a model_retry of request {requests}"
            );
            assert_eq!(run.evidence["usage"]["requests"], requests, "{case}");
            let error = run.records("run_error");
            assert_eq!(error.len(), 1, "{case}");
            // The agent's stderr may run over several lines; the report's line is the first.
            let message = error[0]["message"].as_str().unwrap();
            assert_eq!(
                message.lines().next(),
                Some(said),
                "{case}: the log says the same"
            );
            assert_eq!(run.evidence["run_error"], message, "{case}");
            assert!(
                run.html.contains(&html_text(said)),
                "{case}: the HTML report says the same"
            );
        }

        // A wrong argument and a refusal: the status the agent's answer means, its text.
        for (scenario, call) in [("wrong-argument", &row.wrong), ("refused", &row.refused)] {
            let run = ran(row, scenario);
            let case = &run.case;
            assert_eq!(run.line, None, "{case} passes: {stdout}");
            let evidence_call = run.call();
            assert_eq!(
                evidence_call["status"], call.status,
                "{case}: {evidence_call}"
            );
            assert_eq!(
                evidence_call["started"], call.started,
                "{case}: {evidence_call}"
            );
            let output = evidence_call["output"].as_str().unwrap();
            let says = call.says.replace("\\\"", "\"");
            assert!(output.contains(&says), "{case}: {output}");
            let results = run.records("tool_result");
            assert_eq!(results[0]["status"], call.status, "{case}");
            assert_eq!(
                run.records("tool_start").len(),
                usize::from(call.started),
                "{case}: a tool_start only when the tool ran"
            );
            let badge = if call.status == "completed" {
                "pass"
            } else {
                "fail"
            };
            let name = evidence_call["name"].as_str().unwrap();
            assert!(
                run.html.contains(&format!(
                    "#1 {name} <span class=\"badge {badge}\">{}</span>",
                    call.status
                )),
                "{case}: the HTML transcript shows the status"
            );
            assert!(run.html.contains(&html_text(&says)), "{case}");
        }

        // A tool that sleeps 2 s lasts 2 s, and every record carries its own time.
        let run = ran(row, "slow-tool");
        let case = &run.case;
        let call = run.call();
        assert_eq!(call["status"], "completed", "{case}: {call}");
        let duration = call["duration_ms"].as_u64().unwrap();
        assert!(
            (2000..2000 + TOLERANCE_MS).contains(&duration),
            "{case}: the call took {duration} ms"
        );
        assert_eq!(run.evidence["final_text"], row.final_text, "{case}");
        let at = |kind: &str| -> Vec<u64> {
            run.records(kind)
                .iter()
                .map(|r| r["at_ms"].as_u64().unwrap())
                .collect()
        };
        let (started, ended) = (at("tool_start"), at("tool_result"));
        assert!(
            ended[0].abs_diff(started[0] + duration) <= 1,
            "{case}: the result is logged when it came back (each time cut to the millisecond)"
        );
        assert_eq!(
            at("model_response")[0],
            started[0],
            "{case}: the tool started when the answer asking for it was sent"
        );
        assert_eq!(at("model_request")[1], ended[0], "{case}");
        let times: Vec<u64> = run
            .log
            .iter()
            .map(|r| r["at_ms"].as_u64().unwrap())
            .collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "{case}: records in time order: {times:?}"
        );
        assert!(
            at("user_message")[0] < at("model_request")[0] && at("turn_end")[0] >= ended[0],
            "{case}: the turn starts with the agent and ends when it exits: {times:?}"
        );
        // The latency grader sees the real turn, longer than the tool.
        let said = run.said();
        let p50: u64 = said
            .split_once("latency p50_ms 1999: p50 ")
            .and_then(|(_, rest)| rest.split_once(" ms over 1 turn"))
            .map(|(ms, _)| ms.parse().unwrap())
            .unwrap_or_else(|| panic!("{case}: {said}"));
        assert!(p50 >= duration, "{case}: {said}");
        assert!(
            run.html
                .contains(&format!("started at {} ms, took {duration} ms", started[0])),
            "{case}: the HTML transcript times the call"
        );
    }
}

/// The endpoint's side, without an agent: a request sent again before an answer got through
/// (the same conversation, whatever else changed: key order, settings, a system note, cache
/// markers) is an attempt of that request, answered as it is, and not a new request; once
/// answered, the same conversation again is a new request.
#[tokio::test]
async fn a_retry_is_an_attempt_of_its_request_not_a_new_one() {
    use evalhost::case::{Location, ScriptReply, ScriptStep};
    use evalhost::internals::model::{ModelServer, Outcome};
    use serde_json::json;

    let step = |text: &str, expect: Option<&str>| ScriptStep {
        reply: ScriptReply::Text(text.to_owned()),
        expect_input_contains: expect.map(str::to_owned),
        location: Location::default(),
        usage: None,
    };
    let server = ModelServer::start().await.expect("start");
    let session = server.script(vec![step("one", None), step("two", Some("b = 2"))]);
    let url = format!(
        "{}/messages",
        session.anthropic_base_url().to_owned() + "/v1"
    );
    evalhost::internals::tls::install_crypto_provider();
    let client = reqwest::Client::new();
    let post = |body: Value| {
        let request = client
            .post(&url)
            .header("content-type", "application/json")
            .body(body.to_string());
        async move { request.send().await.expect("request").status().as_u16() }
    };
    let first =
        json!({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "Go."}]});
    let second = |thinking: &str, note: bool| {
        let mut messages = vec![
            json!({"role": "user", "content": "Go."}),
            json!({"role": "assistant", "content": "one"}),
            json!({"role": "user", "content": [{"type": "text", "text": "a = 1",
                "cache_control": {"type": "ephemeral"}}]}),
        ];
        if note {
            messages[2]["content"][0]
                .as_object_mut()
                .unwrap()
                .remove("cache_control");
            messages
                .push(json!({"role": "system", "content": "ToolSearch is no longer available."}));
        }
        json!({"thinking": {"type": thinking}, "messages": messages, "max_tokens": 9, "model": "m"})
    };
    assert_eq!(post(first.clone()).await, 200);
    assert_eq!(post(second("adaptive", false)).await, 400);
    assert_eq!(
        post(second("adaptive", false)).await,
        400,
        "the same body again"
    );
    assert_eq!(
        post(second("enabled", true)).await,
        400,
        "settings, a note, markers changed"
    );
    assert_eq!(session.requests(), 2, "three attempts of request 2");
    assert_eq!(
        session.failure().as_deref(),
        Some("Request 2 did not contain \"b = 2\"")
    );
    let attempts: Vec<(u32, u32, bool)> = session
        .record()
        .iter()
        .filter_map(|exchange| match &exchange.outcome {
            Outcome::Answered { n, attempt, .. } => Some((*n, *attempt, true)),
            Outcome::Failed { n, attempt, .. } => Some((*n, *attempt, false)),
            Outcome::Unserved { .. } => None,
        })
        .collect();
    assert_eq!(
        attempts,
        [(1, 1, true), (2, 1, false), (2, 2, false), (2, 3, false)]
    );
    // Once answered, the same conversation again is a new request.
    let again = server.script(vec![step("one", None), step("two", None)]);
    let url = format!("{}/v1/messages", again.anthropic_base_url());
    for _ in 0..2 {
        let request = client
            .post(&url)
            .header("content-type", "application/json")
            .body(first.to_string());
        assert_eq!(
            request.send().await.expect("request").status().as_u16(),
            200
        );
    }
    assert_eq!(again.requests(), 2);
    assert_eq!(again.unused_steps(), 0);
}
