//! An external agent in live mode: the same Python test agent talks to evalhost's recording
//! pass-through endpoint, which forwards to a fake provider on 127.0.0.1; the evidence comes
//! from what crossed the endpoint, plus the workspace.

use std::path::Path;

use crate::live_support::{FakeProvider, Project, Step, chat_call, chat_text};
use serde_json::json;

#[test]
fn an_external_agent_runs_live_through_the_recording_endpoint() {
    let fake = FakeProvider::start(
        vec![
            Step::Sse(chat_call(
                "call_q",
                "read_file",
                &json!({"path": "in.txt"}),
                30,
                4,
            )),
            Step::Sse(chat_text("The file says forty-two.", 41, 6)),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-chat", &fake, "");
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external_agent/agent.py");
    project.case(
        "external",
        &format!(
            "prompt: What does in.txt say? Write it to answer.txt.\nruns: 1\n\
             agent: {{command: [python3, \"{}\"], prompt: stdin, timeout_secs: 20}}\n\
             workspace:\n  files:\n    in.txt: forty-two\n\
             graders:\n  - tool_called: read_file\n  - final_text_contains: forty-two\n\
             \x20 - file_contains: {{path: answer.txt, text: forty-two}}\n",
            agent.display()
        ),
    );
    let out = project.path().join("out");
    let (code, stdout, stderr) =
        project.evalhost(&["run", "--live", "--out", out.to_str().unwrap(), "cases"]);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("Eval live mode: 1 cases, 1 runs each, model fake-model."),
        "the header counts the runs the case set, not --runs: {stdout}"
    );
    assert!(
        stdout.contains("\nexternal  1     1 "),
        "the case's own runs: 1 wins: {stdout}"
    );
    // The provider saw the tool result the agent sent back on its second request.
    let received = fake.received();
    assert_eq!(received.len(), 2);
    assert!(
        received[1].body.to_string().contains("forty-two"),
        "{:?}",
        received[1].body
    );
    // Usage is the provider's, summed over the two requests.
    let evidence: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("external/run-1.evidence.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(evidence["usage"]["input_tokens"], 71);
    assert_eq!(evidence["usage"]["output_tokens"], 10);
    assert_eq!(evidence["calls"][0]["name"], "read_file");
}
