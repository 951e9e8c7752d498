//! Embed evalhost's grader host in another program: load the built-in graders component,
//! grade one evidence value with a few graders, print each verdict.
//!
//! ```sh
//! cargo run -p evalhost --example embed_grader_host
//! ```
//!
//! Every call runs in a fresh sandboxed instance of the component (no network, no
//! environment, bounded fuel and memory), exactly as `evalhost run` grades a run.

use evalhost::evidence::{Evidence, Message, ToolCall};
use evalhost::grader::{GraderHost, PreparedEvidence};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let host = GraderHost::with_builtins()?;
    let evidence = evidence();
    // Converted once, shared by every grader of the run.
    let prepared = PreparedEvidence::new(&evidence);
    // The last check fails on purpose: a failure is a verdict with a message, not an error.
    let checks = [
        ("final_text_contains", json!("evalhost-42")),
        ("tool_called", json!("bash")),
        ("result_status", json!({"call": 1, "status": "completed"})),
        ("max_tool_calls", json!(0)),
    ];
    for (grader, config) in checks {
        let component = host
            .find(grader)
            .ok_or_else(|| format!("no grader named {grader}"))?;
        let config = config.to_string();
        // What `evalhost check` does for a case's grader entry.
        component.check_config(grader, &config)?;
        let (verdict, stats) = component.grade(grader, &config, &prepared, None);
        match verdict {
            Ok(verdict) => {
                let outcome = if verdict.pass { "pass" } else { "fail" };
                println!(
                    "{grader:<20} {outcome:<5} score {:.2}  fuel {:<7} {}",
                    verdict.score, stats.fuel_used, verdict.message
                );
            }
            // A grader's own error, a trap or a limit hit (fuel, memory, deadline).
            Err(error) => println!("{grader:<20} error {error}"),
        }
    }
    Ok(())
}

/// What one run of `cases/mino/bash-approved.yaml` leaves as evidence: one bash call and
/// the final answer.
fn evidence() -> Evidence {
    Evidence {
        case_name: "bash-approved".into(),
        run: 1,
        mode: "replay".into(),
        model: "scripted".into(),
        prompt:
            "Run exactly this shell command and tell me what it printed: echo evalhost-$((6*7))"
                .into(),
        final_text: "The command printed evalhost-42.".into(),
        messages: vec![Message {
            role: "assistant".into(),
            content: "The command printed evalhost-42.".into(),
        }],
        calls: vec![ToolCall {
            index: 1,
            call_id: "call_1".into(),
            name: "bash".into(),
            arguments: json!({"command": "echo evalhost-$((6*7))"}).to_string(),
            status: "completed".into(),
            output: "evalhost-42\n".into(),
            started: true,
            duration_ms: 3,
        }],
        ..Default::default()
    }
}
