//! A live run turned into a replay case: the model's responses as received become the model
//! script, and what the agent sent before each later request becomes `expect_input_contains`,
//! so the recorded case replays green and keeps checking what the program hands the model.
//! The live model (`recorded: {model}`) and each response's usage (a step's `usage:`) are
//! kept too, so a replay reports the same token counts and what the recording cost
//! (docs/cost.md).

use crate::agent_preset::Preset;
use crate::session::{Event, OutputItem, Record};

use super::{Case, Execution, ExternalAgent, MAX_RECORDED_TOKENS, PromptVia, RecordedUsage};
use crate::session::Approve;

/// Longest `expect_input_contains` taken from a tool result.
const EXPECT_MAX_CHARS: usize = 60;

/// Why a run cannot become a replay case.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The run made no model request with a completed response.
    #[error("the live run recorded no model response")]
    NoResponses,
    /// The case made of a trace's run does not parse (a tool name the format refuses).
    #[error("the case made of the trace does not parse: {0}")]
    Invalid(String),
}

/// Render the replay case `name` (the file stem it will be written under, in directory `dir`)
/// for `case`, from the session log of one live run of it. A command agent's files under `dir`
/// are named relative to it, as a case file names the files beside it, so the recording can be
/// moved with its directory. A case with an environment keeps it, pinned to `image_digest`,
/// the id of the image the live run used (a tag that moves later is then a warning on replay);
/// a Harbor task's recording names the task (`task:`), which brings its prompt, environment
/// and verifier.
pub fn replay_case_yaml(
    case: &Case,
    name: &str,
    dir: &std::path::Path,
    records: &[Record],
    image_digest: Option<&str>,
) -> Result<String, RecordError> {
    let description = format!("Recorded live from {}: {}", case.name, case.description);
    replay_yaml(
        case,
        name,
        description.trim_end_matches(": "),
        dir,
        records,
        image_digest,
    )
}

/// [`replay_case_yaml`] with the case's `description` given; a case whose calls are answered
/// from a recording (`Execution::ReplayTools`: a trace's, `super::from_trace`) keeps the
/// recording as `tool_results:`.
pub(super) fn replay_yaml(
    case: &Case,
    name: &str,
    description: &str,
    dir: &std::path::Path,
    records: &[Record],
    image_digest: Option<&str>,
) -> Result<String, RecordError> {
    let preset = match &case.execution {
        Execution::External(agent) => agent.preset(),
        _ => None,
    };
    let steps = script_steps(records, preset);
    if steps.is_empty() {
        return Err(RecordError::NoResponses);
    }
    let mut out = String::new();
    let line = |out: &mut String, key: &str, value: &str| {
        out.push_str(&format!("{key}: {}\n", json(value)));
    };
    line(&mut out, "name", name);
    line(&mut out, "description", description);
    let task = harbor_task(case);
    match &task {
        Some(task) => line(&mut out, "task", &beside_dir(task, dir)),
        None => line(&mut out, "prompt", &case.prompt),
    }
    if let Some(instructions) = &case.instructions {
        line(&mut out, "instructions", instructions);
    }
    out.push_str(match case.approve {
        Approve::All => "approve: all\n",
        Approve::None => "approve: none\n",
    });
    if let Execution::External(agent) = &case.execution {
        let words = |words: &[String]| -> String {
            let words: Vec<String> = words.iter().map(|word| json(word)).collect();
            format!("[{}]", words.join(", "))
        };
        out.push_str(&match agent {
            ExternalAgent::Command { command, prompt } => {
                let prompt = match prompt {
                    PromptVia::Stdin => "stdin",
                    PromptVia::Arg => "arg",
                };
                let command: Vec<String> = command
                    .iter()
                    .enumerate()
                    .map(|(index, word)| beside(word, dir, index == 0))
                    .collect();
                format!(
                    "agent: {{command: {}, prompt: {prompt}}}\n",
                    words(&command)
                )
            }
            ExternalAgent::Preset { preset, args } if args.is_empty() => {
                format!("agent: {{preset: {}}}\n", preset.as_str())
            }
            ExternalAgent::Preset { preset, args } => {
                format!(
                    "agent: {{preset: {}, args: {}}}\n",
                    preset.as_str(),
                    words(args)
                )
            }
            // The oracle sends no model request: there is nothing to record.
            ExternalAgent::Oracle => String::new(),
        });
    }
    if let (Some(secs), None) = (case.timeout_secs, &task) {
        out.push_str(&format!("timeout_secs: {secs}\n"));
    }
    if let (Some(environment), None) = (&case.environment, &task) {
        out.push_str(&format!(
            "environment: {}\n",
            environment_map(environment, dir, image_digest)
        ));
    }
    if !case.confine.is_empty() {
        out.push_str(&confine_line(&case.confine));
    }
    if !case.tags.is_empty() {
        out.push_str(&format!(
            "tags: {}\n",
            serde_json::Value::from(case.tags.clone())
        ));
    }
    if !case.workspace_files.is_empty() {
        out.push_str("workspace:\n  files:\n");
        for file in &case.workspace_files {
            out.push_str(&format!(
                "    {}: {}\n",
                json(&file.path),
                json(&file.content)
            ));
        }
    }
    // What pricing the recording needs: the live model (the session's), and below, each
    // step's usage as the provider reported it.
    if let Some(model) = live_model(records) {
        out.push_str(&format!("recorded: {{model: {}}}\n", json(model)));
    }
    out.push_str("model:\n");
    for step in &steps {
        match &step.reply {
            Reply::Text(text) => out.push_str(&format!("  - text: {}\n", json(text))),
            Reply::Calls(calls) => {
                let calls: Vec<String> = calls
                    .iter()
                    .map(|(name, arguments)| {
                        format!("{{tool: {}, arguments: {arguments}}}", json(name))
                    })
                    .collect();
                match calls.as_slice() {
                    [call] => out.push_str(&format!("  - call: {call}\n")),
                    several => out.push_str(&format!("  - calls: [{}]\n", several.join(", "))),
                }
            }
        }
        if let Some(expect) = &step.expect {
            out.push_str(&format!("    expect_input_contains: {}\n", json(expect)));
        }
        let usage = &step.usage;
        out.push_str(&format!(
            "    usage: {{input_tokens: {}, cached_input_tokens: {}, output_tokens: {}}}\n",
            usage.input_tokens, usage.cached_input_tokens, usage.output_tokens
        ));
    }
    if let Execution::ReplayTools(results) = &case.execution
        && !results.is_empty()
    {
        out.push_str("tool_results:\n");
        for result in results {
            out.push_str(&format!(
                "  - {{tool: {}, status: {}, output: {}}}\n",
                json(&result.name),
                result.status.as_str(),
                json(&result.output)
            ));
        }
    }
    // A task brings its `verifier_reward` entry; the case's own come after it.
    let own = match &task {
        Some(_) => case.graders.get(1..).unwrap_or_default(),
        None => &case.graders[..],
    };
    if !own.is_empty() {
        out.push_str("graders:\n");
    }
    for grader in own {
        out.push_str(&format!("  - {}: {}\n", grader.name, grader.config));
    }
    Ok(out)
}

/// The Harbor task directory a case runs (its verifier's `tests/` is in it, beside
/// `task.toml`).
fn harbor_task(case: &Case) -> Option<std::path::PathBuf> {
    let task = case.verifier.as_ref()?.tests.parent()?;
    task.join("task.toml").is_file().then(|| task.to_owned())
}

/// `path` as a case file in `dir` names it: relative when under `dir`.
fn beside_dir(path: &std::path::Path, dir: &std::path::Path) -> String {
    match path.strip_prefix(dir) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// The `environment:` map as a case file writes it (JSON, which YAML reads), its image
/// pinned to the digest the recorded run used.
fn environment_map(
    environment: &crate::environment::Environment,
    dir: &std::path::Path,
    image_digest: Option<&str>,
) -> serde_json::Value {
    use crate::environment::ImageSource;
    use serde_json::json;
    let mut map = serde_json::Map::new();
    match &environment.image {
        ImageSource::Image(reference) => {
            map.insert("image".into(), json!(reference));
        }
        ImageSource::Build {
            dockerfile,
            context,
            ..
        } => {
            map.insert(
                "build".into(),
                json!({"dockerfile": beside_dir(dockerfile, dir), "context": beside_dir(context, dir)}),
            );
        }
    }
    if let Some(digest) = image_digest.or(environment.digest.as_deref()) {
        map.insert("digest".into(), json!(digest));
    }
    if let Some(workdir) = &environment.workdir {
        map.insert("workdir".into(), json!(workdir));
    }
    if !environment.env.is_empty() {
        map.insert("env".into(), json!(environment.env));
    }
    if !environment.setup.is_empty() {
        map.insert("setup".into(), json!(environment.setup));
    }
    if let Some(cpus) = environment.cpus {
        map.insert("cpus".into(), json!(cpus));
    }
    if let Some(bytes) = environment.memory_bytes {
        map.insert("memory".into(), json!(bytes.to_string()));
    }
    if let Some(pids) = environment.pids {
        map.insert("pids".into(), json!(pids));
    }
    map.insert("network".into(), json!(environment.network.as_str()));
    serde_json::Value::Object(map)
}

/// A command word as a case file in `dir` writes it: an absolute path under `dir` relative to
/// it (`./` in front of a program, which a bare name would look up on `PATH`), anything else
/// as it is.
fn beside(word: &str, dir: &std::path::Path, program: bool) -> String {
    match std::path::Path::new(word).strip_prefix(dir) {
        Ok(relative) if !relative.as_os_str().is_empty() => {
            let relative = relative.display().to_string();
            if program && !relative.contains('/') {
                format!("./{relative}")
            } else {
                relative
            }
        }
        _ => word.to_owned(),
    }
}

/// The case's `confine:` as it is written (the paths as expanded when the case was loaded).
fn confine_line(widen: &crate::confine::Widening) -> String {
    let paths = |paths: &[std::path::PathBuf]| -> String {
        let paths: Vec<String> = paths
            .iter()
            .map(|p| json(&p.display().to_string()))
            .collect();
        format!("[{}]", paths.join(", "))
    };
    let mut parts = Vec::new();
    if !widen.read.is_empty() {
        parts.push(format!("read: {}", paths(&widen.read)));
    }
    if !widen.write.is_empty() {
        parts.push(format!("write: {}", paths(&widen.write)));
    }
    if !widen.connect.is_empty() {
        parts.push(format!("connect: {:?}", widen.connect));
    }
    if widen.any_port {
        parts.push("network: any".to_owned());
    }
    format!("confine: {{{}}}\n", parts.join(", "))
}

enum Reply {
    Text(String),
    /// One or more calls (a response with several is one step with several calls), each
    /// `(tool, arguments)`.
    Calls(Vec<(String, serde_json::Value)>),
}

struct Step {
    reply: Reply,
    expect: Option<String>,
    /// The provider's usage of the response (counts past what a case may hold are capped).
    usage: RecordedUsage,
}

/// The model the session ran with (its `session_start`): the live model, in a live run.
fn live_model(records: &[Record]) -> Option<&str> {
    records.iter().find_map(|record| match &record.event {
        Event::SessionStart { model, .. } if !model.trim().is_empty() => Some(model.as_str()),
        _ => None,
    })
}

fn script_steps(records: &[Record], preset: Option<Preset>) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    // Tool results the agent sends with the next request: its distinctive content is what
    // the replayed request must contain again.
    let mut pending_result: Option<String> = None;
    // The request the last step answered: an agent that sent a request again while its first
    // attempt was still being answered got two answers to one request; the replay answers
    // every attempt with one step, the answer the agent went on with (the later one).
    let mut last_answered: Option<u32> = None;
    for record in records {
        match &record.event {
            Event::ToolResult { output, .. } if pending_result.is_none() => {
                pending_result = expectation(output, preset);
            }
            Event::ModelResponse {
                n,
                output,
                input_tokens,
                output_tokens,
                cached_input_tokens,
            } => {
                let calls: Vec<_> = output
                    .iter()
                    .filter_map(OutputItem::call)
                    .map(|(_, name, arguments)| {
                        let arguments = serde_json::from_str(arguments)
                            .unwrap_or_else(|_| serde_json::Value::String(arguments.to_owned()));
                        (name.to_owned(), arguments)
                    })
                    .collect();
                let reply = if calls.is_empty() {
                    Reply::Text(output.iter().filter_map(OutputItem::text).collect())
                } else {
                    Reply::Calls(calls)
                };
                let cap = |n: u64| n.min(MAX_RECORDED_TOKENS);
                let input_tokens = cap(*input_tokens);
                let step = Step {
                    reply,
                    expect: pending_result.take(),
                    usage: RecordedUsage {
                        input_tokens,
                        cached_input_tokens: cap(*cached_input_tokens).min(input_tokens),
                        output_tokens: cap(*output_tokens),
                    },
                };
                let again = last_answered.replace(*n) == Some(*n);
                match steps.last_mut() {
                    // The same request again: its one step is the later answer, expecting
                    // what the first attempt's request carried.
                    Some(previous) if again => {
                        let expect = previous.expect.take().or(step.expect);
                        *previous = Step { expect, ..step };
                    }
                    _ => steps.push(step),
                }
            }
            _ => {}
        }
    }
    steps
}

/// The first non-blank line of a tool result that is the same on every run, cut to
/// [`EXPECT_MAX_CHARS`] characters.
fn expectation(output: &str, preset: Option<Preset>) -> Option<String> {
    // Lines naming the run's temp directory differ on every run, as do a preset agent's
    // volatile lines: never expect them.
    let line = output.lines().map(str::trim).find(|l| {
        !l.is_empty()
            && !l.contains("evalhost-run-")
            && !preset.is_some_and(|p| p.volatile_result_line(l))
    })?;
    Some(line.chars().take(EXPECT_MAX_CHARS).collect())
}

/// A YAML double-quoted scalar (JSON string syntax is valid YAML).
fn json(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use crate::confine::Widening;

    /// The recording keeps what pricing needs: the session's model and each response's
    /// usage, which parse back into the replay case.
    #[test]
    fn a_recording_keeps_the_live_model_and_each_responses_usage() {
        use crate::case::RecordedUsage;
        use crate::session::{Event, OutputItem, Record};

        let live = "name: c\nprompt: Go.\ngraders:\n  - final_text_contains: ok\n";
        let case = crate::case::parse_case(Path::new("c.yaml"), live).unwrap();
        let record = |event| Record { at_ms: 0, event };
        let response = |n, output, input_tokens, cached_input_tokens, output_tokens| {
            record(Event::ModelResponse {
                n,
                output: vec![output],
                input_tokens,
                output_tokens,
                cached_input_tokens,
            })
        };
        let records = vec![
            record(Event::SessionStart {
                case: "c".into(),
                run: 1,
                mode: "live".into(),
                model: "gpt-5.4".into(),
            }),
            response(
                1,
                OutputItem::FunctionCall {
                    call_id: "call_1".into(),
                    name: "list_files".into(),
                    arguments: "{}".into(),
                },
                40,
                0,
                5,
            ),
            // Request 2 answered twice (an agent's retry while the first attempt was being
            // answered): one step, the later answer.
            response(
                2,
                OutputItem::Message {
                    text: "first".into(),
                },
                60,
                32,
                2,
            ),
            response(2, OutputItem::Message { text: "ok".into() }, 60, 32, 2),
        ];
        let yaml =
            super::replay_case_yaml(&case, "c-recorded", Path::new("/cases"), &records, None)
                .unwrap();
        assert!(!yaml.contains("first"), "one step for request 2: {yaml}");
        assert!(
            yaml.contains("recorded: {model: \"gpt-5.4\"}\nmodel:\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains(
                "  - text: \"ok\"\n    usage: {input_tokens: 60, cached_input_tokens: 32, output_tokens: 2}\n"
            ),
            "{yaml}"
        );
        let replay = crate::case::parse_case(Path::new("c-recorded.yaml"), &yaml).unwrap();
        assert_eq!(replay.recorded_model.as_deref(), Some("gpt-5.4"));
        assert_eq!(
            replay.recorded_usage(),
            Some(RecordedUsage {
                input_tokens: 100,
                cached_input_tokens: 32,
                output_tokens: 7,
            })
        );
    }

    /// A case with an environment keeps it in its recording, pinned to the digest of the
    /// image the live run used; loading the recording reads the same environment back.
    #[test]
    fn a_recorded_environment_is_kept_and_pinned_to_the_runs_image() {
        use crate::session::{Event, OutputItem, Record};

        let live = "name: c\nprompt: Go.\nenvironment:\n  image: debian:bookworm\n  setup: [\"apt-get install -y jq\"]\n  memory: 512m\n  network: none\ngraders:\n  - final_text_contains: ok\n";
        let case = crate::case::parse_case(Path::new("c.yaml"), live).unwrap();
        let records = vec![Record {
            at_ms: 0,
            event: Event::ModelResponse {
                n: 1,
                output: vec![OutputItem::Message { text: "ok".into() }],
                input_tokens: 1,
                output_tokens: 1,
                cached_input_tokens: 0,
            },
        }];
        let digest = format!("sha256:{}", "ab".repeat(32));
        let yaml = super::replay_case_yaml(
            &case,
            "c-recorded",
            Path::new("/cases"),
            &records,
            Some(&digest),
        )
        .unwrap();
        let replay = crate::case::parse_case(Path::new("c-recorded.yaml"), &yaml).unwrap();
        let mut expected = case.environment.clone().unwrap();
        expected.digest = Some(digest);
        assert_eq!(replay.environment, Some(expected), "{yaml}");
    }

    /// A command agent's files in the recording's directory are written relative to it, so
    /// the recording moves with its directory; loading it names them by absolute path again.
    #[test]
    fn a_recorded_command_names_the_files_in_its_directory_relatively() {
        let dir = Path::new("/cases");
        assert_eq!(
            super::beside("/cases/my_agent.py", dir, false),
            "my_agent.py"
        );
        assert_eq!(super::beside("/cases/run.sh", dir, true), "./run.sh");
        assert_eq!(super::beside("/cases/bin/run.sh", dir, true), "bin/run.sh");
        assert_eq!(super::beside("/opt/agent.py", dir, false), "/opt/agent.py");
        assert_eq!(super::beside("python3", dir, true), "python3");
        assert_eq!(super::beside("/cases", dir, false), "/cases");
    }

    #[test]
    fn a_recorded_confine_line_parses_back_to_the_same_widening() {
        let widen = Widening {
            read: vec![PathBuf::from("/opt/da ta")],
            write: vec![PathBuf::from("/var/x")],
            connect: vec![5432, 8080],
            any_port: true,
        };
        let line = super::confine_line(&widen);
        assert_eq!(
            line,
            "confine: {read: [\"/opt/da ta\"], write: [\"/var/x\"], connect: [5432, 8080], network: any}\n"
        );
        let yaml = format!(
            "name: c\nprompt: Go.\nmodel:\n  - text: ok\ngraders:\n  - final_text_contains: ok\n{line}"
        );
        let case = crate::case::parse_case(Path::new("c.yaml"), &yaml).unwrap();
        assert_eq!(case.confine, widen);
    }
}
