//! The benchmark suite as data: N replay cases, each a short agent transcript (a few tool
//! calls, a 64 KiB tool output in some) and five checks. The same cases are written out for
//! evalhost (YAML case files) and for the peers (`peers.rs`), so every tool grades the same
//! final texts and calls.

use serde_json::{Value, json};

/// Size of the seeded log the `big-log` cases read: a 64 KiB tool output.
pub const BIG_OUTPUT_BYTES: usize = 64 * 1024;

/// One generated case.
#[derive(Debug, Clone)]
pub struct BenchCase {
    pub name: String,
    pub prompt: String,
    /// Seeded workspace files: (path, content).
    pub seeds: Vec<(String, String)>,
    /// The scripted model: tool calls, then the final text.
    pub calls: Vec<Call>,
    pub final_text: String,
    /// Text the run's second request must contain (bash cases: the command's output).
    pub expect_input_contains: Option<String>,
    /// Exactly five checks.
    pub checks: Vec<Check>,
    /// Content of the files the checks name, after the run (what the peers are given).
    pub final_files: Vec<(String, String)>,
}

/// One scripted tool call and the result the agent's tool will produce.
#[derive(Debug, Clone)]
pub struct Call {
    pub tool: &'static str,
    pub arguments: Value,
    /// What the tool returns (for the peers, who run no tools).
    pub output: String,
}

/// One check, in the built-in graders' terms.
#[derive(Debug, Clone)]
pub enum Check {
    FinalTextContains(String),
    FinalTextNotContains(String),
    FinalTextMatches(String),
    ToolCalled(&'static str),
    ToolNotCalled(&'static str),
    ToolOrder(Vec<&'static str>),
    ResultStatus { call: u32, status: &'static str },
    FileExists(String),
    FileContains { path: String, text: String },
    MaxRequests(u32),
    MaxToolCalls(u32),
}

impl Check {
    /// The built-in grader and its config, as a case file names them.
    pub fn grader(&self) -> (&'static str, Value) {
        match self {
            Check::FinalTextContains(t) => ("final_text_contains", json!(t)),
            Check::FinalTextNotContains(t) => ("final_text_not_contains", json!(t)),
            Check::FinalTextMatches(r) => ("final_text_matches", json!(r)),
            Check::ToolCalled(t) => ("tool_called", json!(t)),
            Check::ToolNotCalled(t) => ("tool_not_called", json!(t)),
            Check::ToolOrder(ts) => ("tool_order", json!(ts)),
            Check::ResultStatus { call, status } => {
                ("result_status", json!({"call": call, "status": status}))
            }
            Check::FileExists(p) => ("file_exists", json!(p)),
            Check::FileContains { path, text } => {
                ("file_contains", json!({"path": path, "text": text}))
            }
            Check::MaxRequests(n) => ("max_requests", json!(n)),
            Check::MaxToolCalls(n) => ("max_tool_calls", json!(n)),
        }
    }
}

/// The `n` cases of a suite; case `i` is the same in every suite size.
pub fn suite(n: usize) -> Vec<BenchCase> {
    (0..n).map(case).collect()
}

/// Case `i`: 40 % write-then-read, 30 % read a 64 KiB log, 20 % edit, 10 % bash.
fn case(i: usize) -> BenchCase {
    match i % 10 {
        0..=3 => write_then_read(i),
        4..=6 => big_log(i),
        7 | 8 => edit(i),
        _ => bash(i),
    }
}

fn write_then_read(i: usize) -> BenchCase {
    let path = format!("notes/build-{i}.md");
    let content = format!("# Build {i}\n\nStatus: green\nTests: 412 passed, 0 failed\n");
    BenchCase {
        name: format!("bench-{i:05}-notes"),
        prompt: format!("Write the release note for build {i} to {path}, then read it back."),
        seeds: Vec::new(),
        calls: vec![
            Call {
                tool: "write_file",
                arguments: json!({"path": path, "content": content}),
                output: format!("wrote {} bytes to {path}", content.len()),
            },
            Call {
                tool: "read_file",
                arguments: json!({"path": path}),
                output: content.clone(),
            },
        ],
        final_text: format!("Wrote {path} and read it back: build {i} is green."),
        expect_input_contains: None,
        checks: vec![
            Check::FinalTextContains(format!("build {i} is green")),
            Check::FileExists(path.clone()),
            Check::FileContains {
                path: path.clone(),
                text: "Status: green".into(),
            },
            Check::ToolOrder(vec!["write_file", "read_file"]),
            Check::MaxRequests(3),
        ],
        final_files: vec![(path, content)],
    }
}

fn big_log(i: usize) -> BenchCase {
    let path = format!("logs/app-{i}.log");
    let error_line = 300 + i % 400;
    let log = log_text(i, error_line);
    BenchCase {
        name: format!("bench-{i:05}-log"),
        prompt: format!("Find the errors in {path}."),
        calls: vec![
            Call {
                tool: "list_files",
                arguments: json!({"path": "logs"}),
                output: format!("app-{i}.log\n"),
            },
            Call {
                tool: "read_file",
                arguments: json!({"path": path}),
                output: log.clone(),
            },
        ],
        seeds: vec![(path, log)],
        final_text: format!(
            "The log has one error: ERROR disk full at line {error_line}. Everything else is INFO."
        ),
        expect_input_contains: None,
        checks: vec![
            Check::FinalTextContains("one error".into()),
            Check::FinalTextMatches("ERROR disk full at line [0-9]+".into()),
            Check::FinalTextNotContains("password".into()),
            Check::ResultStatus {
                call: 2,
                status: "completed",
            },
            Check::MaxToolCalls(3),
        ],
        final_files: Vec::new(),
    }
}

/// Exactly [`BIG_OUTPUT_BYTES`] of INFO lines with one ERROR line.
fn log_text(i: usize, error_line: usize) -> String {
    let mut log = String::with_capacity(BIG_OUTPUT_BYTES);
    let mut line = 1;
    while log.len() < BIG_OUTPUT_BYTES {
        let next = if line == error_line {
            format!(
                "2026-11-29T10:{:02}:{:02}Z ERROR disk full at line {line}\n",
                line / 60 % 60,
                line % 60
            )
        } else {
            format!(
                "2026-11-29T10:{:02}:{:02}Z INFO app-{i} request {line} served in {} ms\n",
                line / 60 % 60,
                line % 60,
                (line * 7 + i) % 90 + 3
            )
        };
        log.push_str(&next);
        line += 1;
    }
    log.truncate(BIG_OUTPUT_BYTES - 1);
    log.push('\n');
    log
}

fn edit(i: usize) -> BenchCase {
    let path = format!("config/service-{i}.toml");
    let before = format!("[service]\nname = \"svc-{i}\"\nport = 8080\nworkers = 4\n");
    let after = before.replace("port = 8080", "port = 9090");
    BenchCase {
        name: format!("bench-{i:05}-edit"),
        prompt: format!("Change the port in {path} to 9090."),
        calls: vec![
            Call {
                tool: "edit_file",
                arguments: json!({"path": path, "old_text": "port = 8080", "new_text": "port = 9090"}),
                output: format!("edited {path}"),
            },
            Call {
                tool: "read_file",
                arguments: json!({"path": path}),
                output: after.clone(),
            },
        ],
        seeds: vec![(path.clone(), before)],
        final_text: format!("Changed the port of svc-{i} to 9090."),
        expect_input_contains: None,
        checks: vec![
            Check::FinalTextContains("9090".into()),
            Check::FileContains {
                path: path.clone(),
                text: "port = 9090".into(),
            },
            Check::ToolCalled("edit_file"),
            Check::ToolNotCalled("bash"),
            Check::ResultStatus {
                call: 1,
                status: "completed",
            },
        ],
        final_files: vec![(path, after)],
    }
}

fn bash(i: usize) -> BenchCase {
    let printed = format!("build-{i} ok");
    BenchCase {
        name: format!("bench-{i:05}-bash"),
        prompt: format!("Run `echo build-{i} ok` and tell me what it printed."),
        seeds: Vec::new(),
        calls: vec![Call {
            tool: "bash",
            arguments: json!({"command": format!("echo build-{i} ok")}),
            output: format!("{printed}\n"),
        }],
        final_text: format!("The command printed {printed}."),
        expect_input_contains: Some(printed.clone()),
        checks: vec![
            Check::FinalTextContains(printed),
            Check::ToolCalled("bash"),
            Check::ResultStatus {
                call: 1,
                status: "completed",
            },
            Check::MaxToolCalls(1),
            Check::MaxRequests(2),
        ],
        final_files: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_has_five_checks_and_the_logs_are_64_kib() {
        for case in suite(20) {
            assert_eq!(case.checks.len(), 5, "{}", case.name);
            for (path, content) in &case.seeds {
                if path.starts_with("logs/") {
                    assert_eq!(content.len(), BIG_OUTPUT_BYTES);
                    assert_eq!(content.matches("ERROR").count(), 1);
                }
            }
        }
    }
}
