//! External agents: a program started in the run's workspace, confined like every process
//! of the run (`crate::confine`), pointed at the run's loopback
//! model endpoint through `OPENAI_BASE_URL` (and the Anthropic equivalents), given the prompt,
//! bounded by the run timeout (`timeout.rs`), and killed at the end with its whole process
//! group and every process that carries its marker (`process_group.rs`). Its session log is
//! written from the record of its endpoint session, so
//! [`crate::evidence::Evidence::from_session`] works unchanged: answers carry its tool calls,
//! the next request carries their results, in whichever API the agent speaks.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use tokio::io::AsyncWriteExt;

use super::timeout::RunTimeout;
use crate::agent_preset::{Launch, Preset, RunContext};
use crate::api::serve::tool_results;
use crate::case::{ExternalAgent, PromptVia};
use crate::confine::Reach;
use crate::model::{Exchange, Outcome};
use crate::process_group::ProcessGroup;
use crate::session::Approve;
use crate::session::CallStatus;
use crate::session::{Event, OutputItem, ToolCallRecords};

/// The placeholder key external agents get; the loopback endpoint ignores it.
pub(crate) const LOOPBACK_API_KEY: &str = "evalhost-loopback";

/// The variable marking every process an external agent starts, so that one that left its
/// process group is killed with it (`process_group.rs`).
const RUN_MARKER: &str = "EVALHOST_AGENT_RUN";

/// Most bytes of the agent's stderr quoted in an error.
const STDERR_TAIL_BYTES: usize = 2048;

/// Why an external agent's run failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExternalAgentError {
    #[error("external agent `{program}` could not be started: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    /// The run timeout passed; the agent's process group was killed.
    #[error(transparent)]
    Timeout(#[from] super::timeout::TimedOut),
    /// A preset's agent was not located before the suite (a library caller that did not
    /// pass it in `RunOptions::agents`).
    #[error("agent `{0}` was not located before the suite (RunOptions::agents)")]
    NotLocated(Preset),
    /// A preset's config files could not be written into the run's HOME.
    #[error("agent `{preset}`: failed to write its config into the run's HOME: {error}")]
    Config {
        preset: Preset,
        error: std::io::Error,
    },
    #[error("external agent `{program}` failed: {status}{stderr}")]
    Exit {
        program: String,
        status: String,
        stderr: String,
    },
}

/// What an external agent left: its standard output.
pub(crate) struct AgentExit {
    pub stdout: String,
}

/// Where the agent's model endpoint is, and which model it is told to ask for.
pub(crate) struct EndpointEnv<'a> {
    /// `OPENAI_BASE_URL`: the OpenAI SDKs append `/responses`, `/chat/completions`.
    pub openai_base_url: &'a str,
    /// `ANTHROPIC_BASE_URL`: the Anthropic SDKs and Claude Code append `/v1/messages`.
    pub anthropic_base_url: &'a str,
    pub model: &'a str,
    /// The run's session: it serves the endpoint inside the run's network namespace.
    pub session: &'a crate::model::Session,
}

/// How `agent` starts for one run: a command as written; a preset as its module says,
/// with its config files written into `home`.
fn launch(
    agent: &ExternalAgent,
    agents: &crate::agent_preset::InstalledAgents,
    prompt: &str,
    approve: Approve,
    home: &Path,
    confined: bool,
    endpoint: &EndpointEnv<'_>,
) -> Result<Launch, ExternalAgentError> {
    match agent {
        ExternalAgent::Oracle => Ok(Launch {
            program: "bash".into(),
            args: vec![crate::case::ORACLE_SCRIPT.to_owned()],
            env: Vec::new(),
            stdin: String::new(),
        }),
        ExternalAgent::Command {
            command,
            prompt: via,
        } => {
            let mut args = command[1..].to_vec();
            let stdin = match via {
                PromptVia::Stdin => prompt.to_owned(),
                PromptVia::Arg => {
                    args.push(prompt.to_owned());
                    String::new()
                }
            };
            Ok(Launch {
                program: command.first().cloned().unwrap_or_default().into(),
                args,
                env: Vec::new(),
                stdin,
            })
        }
        ExternalAgent::Preset { preset, args } => {
            let installed = agents
                .get(*preset)
                .ok_or(ExternalAgentError::NotLocated(*preset))?;
            let run = RunContext {
                program: &installed.program,
                args,
                prompt,
                approve,
                home,
                openai_base_url: endpoint.openai_base_url,
                model: endpoint.model,
                confined,
            };
            preset
                .launch(&run)
                .map_err(|error| ExternalAgentError::Config {
                    preset: *preset,
                    error,
                })
        }
    }
}

/// Start `launch` in `workspace`; kill its process group when it ends, times out, or this
/// future is dropped (cancellation).
pub(crate) async fn run_agent(
    launch: Launch,
    reach: Reach,
    timeout: RunTimeout,
    workspace: &Path,
    home: &Path,
    confinement: &crate::confine::RunConfinement,
    endpoint: EndpointEnv<'_>,
) -> Result<AgentExit, ExternalAgentError> {
    let program = launch.program.display().to_string();
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let marker = crate::process_group::new_marker();
    let spawn_error = |error| ExternalAgentError::Spawn {
        program: program.clone(),
        error,
    };
    let mut cmd = confinement
        .command(&launch.program, workspace, reach)
        .map_err(spawn_error)?;
    cmd.args(&launch.args)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("OPENAI_BASE_URL", endpoint.openai_base_url)
        .env("OPENAI_API_KEY", LOOPBACK_API_KEY)
        .env("OPENAI_MODEL", endpoint.model)
        .env("ANTHROPIC_BASE_URL", endpoint.anthropic_base_url)
        .env("ANTHROPIC_API_KEY", LOOPBACK_API_KEY)
        // The Google Gen AI SDKs and Gemini CLI append `/v1beta/models/...` to the same root.
        .env("GOOGLE_GEMINI_BASE_URL", endpoint.anthropic_base_url)
        .env("GEMINI_API_KEY", LOOPBACK_API_KEY)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .env(RUN_MARKER, &marker)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // `TMPDIR`, and the run's namespaces (or Landlock ruleset) from the first instruction.
    // In its network namespace the endpoint is served by the run's own session (as long as
    // the session lives), and a case's widened ports are relayed while `_forwarding` lives.
    let serve = |listener| {
        endpoint
            .session
            .serve_on(listener)
            .map_err(std::io::Error::other)
    };
    let running = confinement
        .spawn_serving(cmd, Some(&serve))
        .map_err(spawn_error)?;
    let mut child = running.child;
    let _forwarding = running.forwarding;
    // Killed with everything it started, however this function ends.
    let _group = child.id().map(|pid| {
        let group = ProcessGroup::new(pid, RUN_MARKER, marker);
        match confinement.has_pid_namespace() {
            true => group.leading_a_pid_namespace(),
            false => group,
        }
    });
    let stdin = child.stdin.take();
    let input = launch.stdin;
    let feed = async move {
        if let Some(mut stdin) = stdin {
            // An agent that never reads its stdin is not an error.
            let _ = stdin.write_all(input.as_bytes()).await;
        }
    };
    let waited = tokio::time::timeout(timeout.duration(), async {
        tokio::join!(feed, child.wait_with_output()).1
    })
    .await;
    let output = match waited {
        // `_group` kills the agent and everything it started on the way out.
        Err(_) => return Err(timeout.expired().into()),
        Ok(Err(source)) => {
            return Err(ExternalAgentError::Spawn {
                program,
                error: source,
            });
        }
        Ok(Ok(output)) => output,
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail = tail(stderr.trim(), STDERR_TAIL_BYTES);
        return Err(ExternalAgentError::Exit {
            program,
            status: output.status.to_string(),
            stderr: if tail.is_empty() {
                String::new()
            } else {
                format!("; stderr: {tail}")
            },
        });
    }
    Ok(AgentExit {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
    })
}

fn tail(text: &str, max: usize) -> &str {
    &text[text.ceil_char_boundary(text.len().saturating_sub(max))..]
}

/// How an external agent's run went: what its session log is written from when it ends.
pub(crate) struct Finished<'a> {
    /// The prompt it was given.
    pub prompt: &'a str,
    /// Every exchange of its endpoint session, in arrival order.
    pub record: &'a [Exchange],
    /// When the agent was started, and when it ended (exited, failed or timed out).
    pub launched: Instant,
    pub ended: Instant,
    /// The final text the agent left itself (a preset's: mini-swe-agent's submission),
    /// which wins over the last text the model answered.
    pub own_final_text: Option<String>,
    /// What stands in for the final text when the model answered none: a command's
    /// standard output (a preset's is never its final text).
    pub stdout: Option<&'a str>,
    /// The agent's own failure (its exit status and stderr, a timeout), if any.
    pub failure: Option<String>,
    pub preset: Option<Preset>,
}

/// A call answered to the agent whose result has not come back yet.
struct Pending {
    name: String,
    /// When the answer asking for it was sent.
    answered: Instant,
    /// The slot of its `tool_start`, right after that answer, filled if the result comes back.
    start: usize,
}

/// The session-log events of an external agent's run, each with the time it happened, from
/// the record of its session: the prompt (when the agent started); for each model request the
/// tool results it carries (for calls of earlier answers, in any API; at the request's
/// arrival), the user's follow-up messages it carries after an answer without calls (a
/// multi-turn conversation), the request (at its arrival) and the answer (when it was ready),
/// each call of the answer that the agent ran (its `tool_start`, at the answer's time, so its
/// duration is from the answer that asked for it to the request that returned its result);
/// then the turn's end when the agent ended. A failed model request, or the agent's own
/// failure, ends the run with a `run_error` instead ([`run_error`]). A preset's agent also
/// marks failed calls in its results' text (`Preset::result_failed`), and may refuse the
/// calls of an answer in its next request instead of returning their results
/// (`Preset::calls_refused`: a failed `tool_result` alone, the tool never ran).
pub(crate) fn session_events(run: &Finished<'_>) -> Vec<(Instant, Event)> {
    let mut events = vec![Some((
        run.launched,
        Event::UserMessage {
            text: run.prompt.to_owned(),
        },
    ))];
    let mut pending: HashMap<String, Pending> = HashMap::new();
    // The calls of the last answer, which the agent may refuse all at once.
    let mut last_calls: Vec<String> = Vec::new();
    let mut last_text = String::new();
    // Whether the last answer ended a turn (it made no calls): the next request may then
    // carry the user's next message.
    let mut answered_turn = false;
    for exchange in run.record {
        let received = exchange.received;
        let (api, reply) = match &exchange.outcome {
            Outcome::Answered { api, reply, .. } => (Some(*api), Some(reply)),
            Outcome::Failed { api, .. } => (Some(*api), None),
            Outcome::Unserved { .. } => (None, None),
        };
        if let Some(api) = api {
            let request = exchange.request_json();
            for result in tool_results(api, &request) {
                let Some(call) = pending.remove(&result.call_id) else {
                    continue;
                };
                let failed =
                    result.failed || run.preset.is_some_and(|p| p.result_failed(&result.output));
                let status = if failed {
                    CallStatus::Failed
                } else {
                    CallStatus::Completed
                };
                let records = ToolCallRecords::new(&result.call_id, &call.name);
                let took = received.saturating_duration_since(call.answered);
                events[call.start] = Some((call.answered, records.started()));
                events.push(Some((
                    received,
                    records.ended(status, &result.output, took.as_millis() as u64),
                )));
            }
            let unanswered = last_calls.iter().any(|id| pending.contains_key(id));
            if let Some(refusal) = run
                .preset
                .filter(|_| unanswered)
                .and_then(|p| p.calls_refused(&request))
            {
                // Never run: a result alone, no `tool_start`.
                for id in &last_calls {
                    if let Some(call) = pending.remove(id) {
                        let records = ToolCallRecords::new(id, &call.name);
                        events.push(Some((
                            received,
                            records.ended(CallStatus::Failed, &refusal, 0),
                        )));
                    }
                }
            }
            if std::mem::take(&mut answered_turn) {
                for text in crate::api::serve::trailing_user_texts(api, &request) {
                    events.push(Some((received, Event::UserMessage { text })));
                }
            }
        }
        for event in exchange.log_events() {
            let at = match event {
                Event::ModelResponse { .. } => exchange.answered,
                _ => received,
            };
            events.push(Some((at, event)));
        }
        if let Some(reply) = reply {
            let text: String = reply.output.iter().filter_map(OutputItem::text).collect();
            if !text.is_empty() {
                last_text = text;
            }
            answered_turn = true;
            last_calls.clear();
            for (call_id, name, _) in reply.output.iter().filter_map(OutputItem::call) {
                last_calls.push(call_id.to_owned());
                pending.insert(
                    call_id.to_owned(),
                    Pending {
                        name: name.to_owned(),
                        answered: exchange.answered,
                        start: events.len(),
                    },
                );
                events.push(None);
                answered_turn = false;
            }
        }
    }
    let end = match run_error(run.record, run.failure.as_deref()) {
        Some(message) => Event::RunError { message },
        None => Event::TurnEnd {
            final_text: final_text(run, last_text),
        },
    };
    events.push(Some((run.ended, end)));
    events.into_iter().flatten().collect()
}

/// The run's final text: the agent's own, else the last text the model answered, else (a
/// command's) its standard output.
fn final_text(run: &Finished<'_>, last_text: String) -> String {
    match &run.own_final_text {
        Some(own) if !own.trim().is_empty() => own.trim().to_owned(),
        _ if !last_text.is_empty() => last_text,
        _ => run.stdout.unwrap_or_default().trim().to_owned(),
    }
}

/// The run's error: the first model request the endpoint could not answer and why (however
/// often the agent retried it), then what the agent said of it (its exit status and stderr, a
/// timeout); or the agent's failure alone, after the first request the endpoint did not serve
/// if there was one.
pub(crate) fn run_error(record: &[Exchange], failure: Option<&str>) -> Option<String> {
    let cause = record.iter().find_map(|exchange| match &exchange.outcome {
        Outcome::Failed { n, message, .. } => Some(format!("{message}{}", retried(record, *n))),
        _ => None,
    });
    let cause = cause.or_else(|| {
        failure?;
        record
            .iter()
            .flat_map(Exchange::log_events)
            .find_map(|event| event.endpoint_warning())
    });
    match (cause, failure) {
        (Some(cause), Some(failure)) => Some(format!("{cause}; then {failure}")),
        (cause, failure) => cause.or_else(|| failure.map(str::to_owned)),
    }
}

/// ` (retried 4 times)` when the agent sent request `n` again, unchanged.
fn retried(record: &[Exchange], n: u32) -> String {
    let attempts = record
        .iter()
        .filter_map(Exchange::attempt)
        .filter(|(request, _)| *request == n)
        .map(|(_, attempt)| attempt)
        .max()
        .unwrap_or(1);
    match attempts - 1 {
        0 => String::new(),
        1 => " (retried once)".to_owned(),
        retries => format!(" (retried {retries} times)"),
    }
}

/// Most bytes of a file read for a preset's own final text.
const MAX_FINAL_TEXT_FILE: u64 = 32 << 20;

/// The final text `preset`'s agent left in the run's `home` (`Preset::final_text_file`),
/// read beneath HOME without following a symlink, capped; `None` when there is none.
fn own_final_text(preset: Preset, home: &Path) -> Option<String> {
    let file = preset.final_text_file()?;
    let read = crate::workspace_read::Tree::open(home)
        .ok()?
        .read(Path::new(file), MAX_FINAL_TEXT_FILE)
        .ok()?;
    if read.over {
        return None;
    }
    preset.final_text(&read.bytes)
}

/// What one run of an external agent is given.
pub(crate) struct ExternalRun<'a> {
    /// The presets' agents, located before the suite.
    pub agents: &'a crate::agent_preset::InstalledAgents,
    pub timeout: RunTimeout,
    pub prompt: &'a str,
    pub approve: Approve,
    pub workspace: &'a Path,
    pub home: &'a Path,
    /// The run's temp dir and Landlock ruleset, applied before the agent's `exec`.
    pub confinement: &'a crate::confine::RunConfinement,
}

/// One run of an external agent: start it against `endpoint`, then append the session-log
/// events rebuilt from what crossed the endpoint. Returns the run's error, if any.
pub(crate) async fn external_turn(
    agent: &ExternalAgent,
    run: ExternalRun<'_>,
    endpoint: &super::live::RunEndpoint,
    log: &mut crate::session::SessionLog,
) -> Result<Option<String>, crate::session::SessionLogError> {
    let ExternalRun {
        agents,
        timeout,
        prompt,
        approve,
        workspace,
        home,
        confinement,
    } = run;
    let session = endpoint.session();
    let env = EndpointEnv {
        openai_base_url: session.base_url(),
        anthropic_base_url: session.anthropic_base_url(),
        model: endpoint.model(),
        session,
    };
    let confined = confinement.is_confined();
    let launched = Instant::now();
    let in_container = confinement.in_container().is_some();
    let limits_before = confinement.limit_counts();
    let exit = match launch(agent, agents, prompt, approve, home, confined, &env) {
        Ok(mut launch) => {
            // In a container, the agent's program as the container has it.
            if let (true, Some(preset)) = (in_container, agent.preset()) {
                match preset.in_container(&launch.program) {
                    crate::agent_preset::InContainer::Mounted { program, args, .. } => {
                        launch.program = program.into();
                        launch.args.splice(0..0, args);
                    }
                    crate::agent_preset::InContainer::OnImagePath(name) => {
                        launch.program = name.into();
                    }
                }
            }
            // The oracle asks no model: it gets no endpoint.
            let reach = match agent {
                ExternalAgent::Oracle => Reach::Nothing,
                _ => Reach::Endpoint,
            };
            run_agent(launch, reach, timeout, workspace, home, confinement, env).await
        }
        Err(e) => Err(e),
    };
    let ended = Instant::now();
    let exchanges = session.take_unlogged();
    let (stdout, mut failure) = match exit {
        Ok(exit) => (exit.stdout, None),
        Err(e) => (String::new(), Some(e.to_string())),
    };
    // A limit of the run's container the agent ran into is named first.
    if let Some(failed) = &failure
        && let Some(hit) = confinement.limit_hit(limits_before)
    {
        failure = Some(format!("{hit}; {failed}"));
    }
    let preset = agent.preset();
    let finished = Finished {
        prompt,
        record: &exchanges,
        launched,
        ended,
        own_final_text: preset.and_then(|p| own_final_text(p, home)),
        stdout: preset.is_none().then_some(stdout.as_str()),
        failure,
        preset,
    };
    let mut error = None;
    for (at, event) in session_events(&finished) {
        if let Event::RunError { message } = &event {
            error = Some(message.clone());
        }
        log.append_at(event, at)?;
    }
    Ok(error)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::body::Bytes;
    use serde_json::json;

    use super::*;
    use crate::api::Reply;
    use crate::wire::Api;

    /// A model request in the Responses API, `ms` after `start`, answered 10 ms later.
    fn exchange(start: Instant, ms: u64, input: serde_json::Value, outcome: Outcome) -> Exchange {
        let received = start + Duration::from_millis(ms);
        Exchange {
            method: "POST".to_owned(),
            path: "/v1/responses".to_owned(),
            body: Bytes::from(json!({"model": "m", "input": input}).to_string()),
            outcome,
            received,
            answered: received + Duration::from_millis(10),
        }
    }

    fn answered(n: u32, output: Vec<OutputItem>) -> Outcome {
        Outcome::Answered {
            n,
            attempt: 1,
            api: Api::Responses,
            reply: Reply {
                output,
                ..Reply::default()
            },
        }
    }

    fn failed(n: u32, attempt: u32, message: &str) -> Outcome {
        Outcome::Failed {
            n,
            attempt,
            api: Api::Responses,
            message: message.to_owned(),
        }
    }

    fn bash_call() -> OutputItem {
        OutputItem::FunctionCall {
            call_id: "call_1".to_owned(),
            name: "bash".to_owned(),
            arguments: r#"{"command":"sleep 2"}"#.to_owned(),
        }
    }

    fn finished<'a>(start: Instant, record: &'a [Exchange], end_ms: u64) -> Finished<'a> {
        Finished {
            prompt: "Sleep.",
            record,
            launched: start,
            ended: start + Duration::from_millis(end_ms),
            own_final_text: None,
            stdout: None,
            failure: None,
            preset: None,
        }
    }

    /// `(ms since the start, type)` of each event, and the events.
    fn timed(start: Instant, events: &[(Instant, Event)]) -> Vec<(u64, &'static str)> {
        events
            .iter()
            .map(|(at, event)| (at.duration_since(start).as_millis() as u64, event.kind()))
            .collect()
    }

    #[test]
    fn each_record_is_timed_when_the_endpoint_saw_it_and_a_call_lasts_until_its_result() {
        let start = Instant::now();
        let prompt = json!([{"role": "user", "content": "Sleep."}]);
        let returned = json!([{"role": "user", "content": "Sleep."},
            {"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "slept"}]);
        let record = [
            exchange(start, 100, prompt, answered(1, vec![bash_call()])),
            exchange(
                start,
                2110,
                returned,
                answered(
                    2,
                    vec![OutputItem::Message {
                        text: "Done.".into(),
                    }],
                ),
            ),
        ];
        let events = session_events(&finished(start, &record, 2200));
        assert_eq!(
            timed(start, &events),
            [
                (0, "user_message"),
                (100, "model_request"),
                (110, "model_response"),
                (110, "tool_start"),
                (2110, "tool_result"),
                (2110, "model_request"),
                (2120, "model_response"),
                (2200, "turn_end"),
            ]
        );
        let Some((_, Event::ToolResult { duration_ms, .. })) = events.get(4) else {
            panic!("a tool result: {events:?}")
        };
        assert_eq!(
            *duration_ms, 2000,
            "from the answer to the request returning the result"
        );
        assert_eq!(
            events.last().map(|(_, e)| e),
            Some(&Event::TurnEnd {
                final_text: "Done.".into()
            })
        );
    }

    #[test]
    fn the_error_names_the_first_failed_request_and_its_retries_before_the_agent_s_own() {
        let start = Instant::now();
        let prompt = json!([{"role": "user", "content": "Go."}]);
        let message = "Request 2 did not contain \"b = 2\"";
        let record = [
            exchange(start, 10, prompt.clone(), answered(1, vec![bash_call()])),
            exchange(start, 20, prompt.clone(), failed(2, 1, message)),
            exchange(start, 30, prompt.clone(), failed(2, 2, message)),
            exchange(start, 40, prompt, failed(2, 3, message)),
        ];
        let agent = "external agent `claude` failed: exit status: 1; stderr: unknown model";
        assert_eq!(
            run_error(&record, Some(agent)).as_deref(),
            Some(
                "Request 2 did not contain \"b = 2\" (retried 2 times); then external agent \
                 `claude` failed: exit status: 1; stderr: unknown model"
            )
        );
        assert_eq!(
            run_error(&record[..2], None).as_deref(),
            Some(message),
            "an agent that exits 0 after it: the endpoint's cause alone"
        );
        assert_eq!(run_error(&record[..1], Some(agent)).as_deref(), Some(agent));
        assert_eq!(run_error(&record[..1], None), None);
        // The log: one request 2, then its retries.
        let run = Finished {
            failure: Some(agent.to_owned()),
            ..finished(start, &record, 50)
        };
        let kinds: Vec<&str> = session_events(&run).iter().map(|(_, e)| e.kind()).collect();
        assert_eq!(
            kinds,
            [
                "user_message",
                "model_request",
                "model_response",
                "model_request",
                "model_retry",
                "model_retry",
                "run_error"
            ]
        );
    }

    #[test]
    fn an_unserved_request_is_named_before_the_agent_s_failure() {
        let start = Instant::now();
        let unserved = Exchange {
            method: "GET".to_owned(),
            path: "/v1/responses".to_owned(),
            body: Bytes::new(),
            outcome: Outcome::Unserved {
                status: 404,
                message: "WebSocket upgrade to /v1/responses is not served".to_owned(),
            },
            received: start,
            answered: start,
        };
        assert_eq!(
            run_error(
                std::slice::from_ref(&unserved),
                Some("external agent `x` failed: exit status: 1")
            )
            .as_deref(),
            Some(
                "model endpoint: GET /v1/responses answered 404: WebSocket upgrade to \
                 /v1/responses is not served; then external agent `x` failed: exit status: 1"
            )
        );
        assert_eq!(run_error(&[unserved], None), None, "a warning only");
    }

    #[test]
    fn a_preset_s_final_text_is_its_own_else_the_model_s_never_its_stdout() {
        let start = Instant::now();
        let prompt = json!([{"role": "user", "content": "Go."}]);
        let record = [exchange(start, 10, prompt, answered(1, vec![bash_call()]))];
        let final_text = |run: &Finished<'_>| match session_events(run).pop() {
            Some((_, Event::TurnEnd { final_text })) => final_text,
            other => panic!("a turn end: {other:?}"),
        };
        let stdout = "System prompt ... Submitted!";
        let preset = Finished {
            stdout: None,
            preset: Some(Preset::MiniSweAgent),
            ..finished(start, &record, 20)
        };
        assert_eq!(final_text(&preset), "", "no text, no submission: nothing");
        let submitted = Finished {
            own_final_text: Some("the submission\n".into()),
            ..preset
        };
        assert_eq!(final_text(&submitted), "the submission");
        let command = Finished {
            stdout: Some(stdout),
            ..finished(start, &record, 20)
        };
        assert_eq!(final_text(&command), stdout, "a command's stdout stands in");
    }

    #[test]
    fn calls_mini_swe_agent_refuses_have_a_failed_result_and_never_ran() {
        let start = Instant::now();
        let error =
            "Tool call error:\n\n<error>\nMissing 'command' argument in bash tool call.\n</error>";
        let chat = |messages: serde_json::Value, outcome| {
            let mut exchange = exchange(start, 10, json!(null), outcome);
            exchange.path = "/v1/chat/completions".to_owned();
            exchange.body = Bytes::from(json!({"model": "m", "messages": messages}).to_string());
            exchange
        };
        let chat_answer = |n, output| match answered(n, output) {
            Outcome::Answered {
                n, attempt, reply, ..
            } => Outcome::Answered {
                n,
                attempt,
                api: Api::Chat,
                reply,
            },
            other => other,
        };
        let record = [
            chat(
                json!([{"role": "user", "content": "List."}]),
                chat_answer(1, vec![bash_call()]),
            ),
            chat(
                json!([{"role": "user", "content": "List."}, {"role": "user", "content": error}]),
                chat_answer(
                    2,
                    vec![OutputItem::Message {
                        text: "Done.".into(),
                    }],
                ),
            ),
        ];
        let run = Finished {
            preset: Some(Preset::MiniSweAgent),
            ..finished(start, &record, 30)
        };
        let events: Vec<Event> = session_events(&run).into_iter().map(|(_, e)| e).collect();
        assert!(
            !events.iter().any(|e| e.kind() == "tool_start"),
            "the tool never ran: {events:?}"
        );
        assert!(
            events.contains(&Event::ToolResult {
                call_id: "call_1".into(),
                name: "bash".into(),
                status: CallStatus::Failed,
                output: error.into(),
                duration_ms: 0,
            }),
            "{events:?}"
        );
        // Any other external agent: no result (it sent none).
        let command = finished(start, &record, 30);
        assert!(
            !session_events(&command)
                .iter()
                .any(|(_, e)| e.kind() == "tool_result")
        );
    }
}
