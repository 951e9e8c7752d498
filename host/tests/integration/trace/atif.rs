//! Harbor's ATIF trajectories in (docs/traces.md): `cases/traces/atif/make_trajectory.py`
//! builds a trajectory with Harbor 0.26.0's own pydantic models (`harbor.models.trajectories`:
//! the task from the user, a `bash` call and its output, a call that fails, the final
//! message, each agent step's token usage) and checks it with Harbor's own validator; it
//! imports as one run whose evidence is what a grader sees: the prompt, the calls with their
//! arguments, statuses and outputs, the final text, the usage. The committed
//! `cases/traces/atif/trajectory.json` is valid ATIF and imports the same way, and a file
//! Harbor's validator refuses is refused at the bad field's line and column.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use evalhost::Evidence;
use evalhost::trace::{Imported, TraceFormat, import};

use crate::support::common::repo;
use crate::support::python::python_modules;

/// What `.ci/run` installs: Harbor 0.26.0 declares Python >= 3.12, but its ATIF models and
/// validator need only pydantic 2 (which the pinned SDKs install) and load on 3.11.
const INSTALL: &str = "pip install --no-deps --ignore-requires-python harbor==0.26.0";

/// The Harbor modules `make_trajectory.py` uses.
fn harbor_models() -> Option<()> {
    python_modules(
        "harbor.models.trajectories, harbor.utils.trajectory_validator",
        INSTALL,
    )
}

fn script() -> PathBuf {
    repo().join("cases/traces/atif/make_trajectory.py")
}

fn python(args: &[&Path]) -> Output {
    Command::new("python3")
        .arg(script())
        .args(args)
        .output()
        .expect("run python3")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A fresh trajectory from Harbor's models, in `dir`.
fn make_trajectory(dir: &Path) -> PathBuf {
    let path = dir.join("trajectory.json");
    let output = python(&[&path]);
    assert!(
        output.status.success(),
        "make_trajectory.py failed: {}",
        text(&output)
    );
    path
}

/// Harbor's validator on `path`: `Ok` or its errors.
fn harbor_validates(path: &Path) -> Result<(), String> {
    let output = python(&[Path::new("--validate"), path]);
    if output.status.success() {
        Ok(())
    } else {
        Err(text(&output))
    }
}

/// The one run of a trajectory, as a grader sees it.
fn evidence(imported: &Imported) -> Evidence {
    assert_eq!(imported.format, TraceFormat::Atif);
    assert_eq!(imported.runs.len(), 1);
    let run = &imported.runs[0];
    assert!(run.usage_recorded);
    Evidence::from_session(&run.records, Default::default())
}

#[test]
fn a_trajectory_built_with_harbors_models_imports_as_the_session_it_records() {
    let Some(()) = harbor_models() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = make_trajectory(dir.path());
    harbor_validates(&path).unwrap();

    let imported = import(&path).unwrap();
    let run = &imported.runs[0];
    assert_eq!(run.label, "session 0199e0a4-2b7c-7d1e-9a3f-5c2d8e6f1a40");
    assert_eq!(run.model, "openai/gpt-5-mini");
    // From the first step's timestamp to the last's.
    assert_eq!(run.duration_ms, 2_750);
    let evidence = evidence(&imported);
    assert_eq!(evidence.case_name, run.label);
    assert_eq!(evidence.mode, "trace");
    assert_eq!(evidence.model, "openai/gpt-5-mini");
    assert_eq!(evidence.prompt, "Print the greeting in greeting.txt.");
    let calls: Vec<_> = evidence
        .calls
        .iter()
        .map(|c| {
            (
                c.call_id.as_str(),
                c.name.as_str(),
                serde_json::from_str::<serde_json::Value>(&c.arguments).unwrap(),
                c.status.as_str(),
                c.started,
                c.output.as_str(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            (
                "call_1",
                "bash",
                serde_json::json!({"command": "cat greeting.txt"}),
                "completed",
                true,
                "Hello from Harbor!\n"
            ),
            (
                "call_2",
                "bash",
                serde_json::json!({"command": "cat greeting.md"}),
                "failed",
                true,
                "cat: greeting.md: No such file or directory\n"
            ),
        ]
    );
    assert_eq!(evidence.final_text, "greeting.txt says: Hello from Harbor!");
    assert_eq!(evidence.run_error, None);
    // Three agent steps, three model exchanges; their metrics summed (= `final_metrics`).
    assert_eq!(evidence.usage.requests, 3);
    assert_eq!(evidence.usage.input_tokens, 460);
    assert_eq!(evidence.usage.output_tokens, 38);
    assert_eq!(evidence.usage.cached_input_tokens, 240);
    assert_eq!(
        imported.unmapped,
        [
            "the agent's name and version (`agent.name`, `agent.version`): 1 run",
            "the agent's tool definitions (`agent.tool_definitions`): 1 run",
            "the agent's reasoning (`steps[].reasoning_content`): 1 step",
            "custom metadata (`steps[].observation.results[].extra`): 1 result",
        ]
    );
}

#[test]
fn the_committed_trajectory_is_valid_atif_and_imports_as_a_fresh_one() {
    let Some(()) = harbor_models() else {
        return;
    };
    let committed = repo().join("cases/traces/atif/trajectory.json");
    harbor_validates(&committed).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fresh = import(&make_trajectory(dir.path())).unwrap();
    let committed = import(&committed).unwrap();
    assert_eq!(evidence(&committed), evidence(&fresh));
    assert_eq!(committed.runs[0].records, fresh.runs[0].records);
    assert_eq!(committed.unmapped, fresh.unmapped);
}

#[test]
fn a_trajectory_harbor_refuses_is_refused_at_the_bad_field() {
    let Some(()) = harbor_models() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = make_trajectory(dir.path());
    // The first call's arguments as a string, not the object ATIF requires.
    let good = std::fs::read_to_string(&path).unwrap();
    let object = "{\n            \"command\": \"cat greeting.txt\"\n          }";
    assert!(good.contains(object), "{good}");
    let bad = good.replacen(object, "\"cat greeting.txt\"", 1);
    std::fs::write(&path, &bad).unwrap();

    let harbor = harbor_validates(&path).unwrap_err();
    assert!(
        harbor.contains("trajectory.steps.1.tool_calls.0.arguments"),
        "{harbor}"
    );
    let at = bad.find("\"cat greeting.txt\"").unwrap();
    let line = bad[..at].matches('\n').count() + 1;
    let column = at - bad[..at].rfind('\n').unwrap();
    assert_eq!(
        import(&path).unwrap_err().to_string(),
        format!(
            "{}:{line}:{column}: steps[1].tool_calls[0].arguments: expected an object, found a string",
            path.display()
        )
    );
}
