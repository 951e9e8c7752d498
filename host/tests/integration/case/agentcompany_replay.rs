//! Replay tools: calls answered from the recording by position; anything else ends the turn.

use crate::support::agent::{Harness, call, text};
use evalhost::case::{Location, ScriptReply, ScriptStep};
use evalhost::internals::session::{CallStatus, RecordedToolResult};
use serde_json::json;

fn recorded(name: &str, output: &str) -> RecordedToolResult {
    RecordedToolResult {
        name: name.into(),
        status: CallStatus::Completed,
        output: output.into(),
    }
}

#[tokio::test]
async fn recorded_results_answer_calls_without_running_tools() {
    let h = Harness::new().await;
    // Text and two calls in one response, as an AgentCompany assistant turn.
    let turn = ScriptStep {
        reply: ScriptReply::Items(vec![
            ScriptReply::Text("Hiring.".into()),
            ScriptReply::Call {
                tool: "hire_agent".into(),
                arguments: json!({"department": "design"}),
            },
            ScriptReply::Call {
                tool: "bash".into(),
                arguments: json!({"command": "touch made.txt"}),
            },
        ]),
        expect_input_contains: None,
        location: Location::default(),
        usage: None,
    };
    let steps = vec![turn, text("Done.")];
    let run = h
        .run_with(steps, |c| {
            c.replay_tools = Some(vec![
                recorded("hire_agent", "hired agent-7"),
                recorded("bash", "ok"),
            ])
        })
        .await;
    assert_eq!(run.outcome().final_text, "Done.");
    let evidence = run.evidence();
    let calls: Vec<(&str, &str, &str)> = evidence
        .calls
        .iter()
        .map(|c| (c.name.as_str(), c.status.as_str(), c.output.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("hire_agent", "completed", "hired agent-7"),
            ("bash", "completed", "ok")
        ]
    );
    assert!(
        !h.workspace.join("made.txt").exists(),
        "bash must not run in replay"
    );
    assert_eq!(evidence.messages[1].content, "Hiring.");
    // The recorded result reached the model.
    assert!(run.request_body(2).to_string().contains("hired agent-7"));
}

#[tokio::test]
async fn a_call_past_the_recording_is_a_run_error() {
    let h = Harness::new().await;
    let steps = vec![
        call("hire_agent", json!({})),
        call("hire_agent", json!({})),
        text("Done."),
    ];
    let run = h
        .run_with(steps, |c| {
            c.replay_tools = Some(vec![recorded("hire_agent", "ok")])
        })
        .await;
    assert_eq!(
        run.error(),
        "Replay tools: call 2 (hire_agent): replay exhausted: the recording has 1 tool result(s)"
    );
    assert_eq!(run.evidence().calls[1].status, "cancelled");
}

#[tokio::test]
async fn a_call_of_another_tool_is_a_run_error() {
    let h = Harness::new().await;
    let steps = vec![call("fire_agent", json!({})), text("Done.")];
    let run = h
        .run_with(steps, |c| {
            c.replay_tools = Some(vec![recorded("hire_agent", "ok")])
        })
        .await;
    assert_eq!(
        run.error(),
        "Replay tools: call 1 (fire_agent): the recording has a result for `hire_agent` at this position"
    );
}
