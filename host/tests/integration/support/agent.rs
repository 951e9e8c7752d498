//! Shared setup for the agent tests: a real scripted model server on 127.0.0.1, a temp run
//! root with workspace/ and home/, and a session log read back from disk.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use evalhost::case::{Location, ScriptReply, ScriptStep};
use evalhost::evidence::{Evidence, RunFacts, ToolCall};
use evalhost::internals::agent::{AgentConfig, AgentError, TurnOutcome, run_turn};
use evalhost::internals::model::ModelServer;
use evalhost::internals::session::Approve;
use evalhost::internals::session::{Event, Record, SessionLog, read_session_log};
use serde_json::Value;

/// A text step.
pub fn text(text: &str) -> ScriptStep {
    ScriptStep {
        reply: ScriptReply::Text(text.to_owned()),
        expect_input_contains: None,
        location: Location::default(),
        usage: None,
    }
}

/// A call step.
pub fn call(tool: &str, arguments: Value) -> ScriptStep {
    ScriptStep {
        reply: ScriptReply::Call {
            tool: tool.to_owned(),
            arguments,
        },
        expect_input_contains: None,
        location: Location::default(),
        usage: None,
    }
}

/// `step` with an `expect_input_contains`.
pub fn expecting(mut step: ScriptStep, expected: &str) -> ScriptStep {
    step.expect_input_contains = Some(expected.to_owned());
    step
}

/// One run's temp root and the server it talks to.
pub struct Harness {
    pub server: ModelServer,
    pub root: tempfile::TempDir,
    pub workspace: PathBuf,
    pub home: PathBuf,
}

/// What one turn left behind.
pub struct Run {
    pub result: Result<TurnOutcome, AgentError>,
    /// Read back from the log file, not from memory: the file is the durable record.
    pub records: Vec<Record>,
    pub failure: Option<String>,
}

impl Harness {
    pub async fn new() -> Self {
        let server = ModelServer::start().await.expect("server starts");
        let root = tempfile::tempdir().expect("temp dir");
        let workspace = root.path().join("workspace");
        let home = root.path().join("home");
        std::fs::create_dir(&workspace).expect("workspace");
        std::fs::create_dir(&home).expect("home");
        Self {
            server,
            root,
            workspace,
            home,
        }
    }

    /// Write a file into the workspace.
    pub fn seed(&self, path: &str, content: &str) {
        let path = self.workspace.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent dir");
        }
        std::fs::write(path, content).expect("seed file");
    }

    pub fn config(&self, base_url: &str, approve: Approve) -> AgentConfig {
        let mut config = AgentConfig::new(
            base_url.to_owned(),
            self.workspace.clone(),
            self.home.clone(),
        );
        config.approve = approve;
        config.limits.bash_timeout = Duration::from_secs(10);
        config
    }

    pub async fn run(&self, approve: Approve, steps: Vec<ScriptStep>) -> Run {
        self.run_with(steps, |config| config.approve = approve)
            .await
    }

    pub async fn run_with(
        &self,
        steps: Vec<ScriptStep>,
        adjust: impl FnOnce(&mut AgentConfig),
    ) -> Run {
        let script = self.server.script(steps);
        let mut config = self.config(script.base_url(), Approve::None);
        config.record = Some(script.endpoint_record());
        adjust(&mut config);
        let path = self.root.path().join("session.jsonl");
        let mut log = SessionLog::create(&path).expect("log");
        log.append(Event::SessionStart {
            case: "test".into(),
            run: 1,
            mode: "replay".into(),
            model: config.model.clone(),
        })
        .expect("session_start");
        let result = run_turn(&config, "Do the thing.", &mut log).await;
        log.flush().expect("flush");
        assert_eq!(
            read_session_log(&path).expect("read log").as_slice(),
            log.records(),
            "the file holds exactly what was appended"
        );
        Run {
            result,
            records: log.records().to_vec(),
            failure: script.failure(),
        }
    }
}

impl Run {
    pub fn kinds(&self) -> Vec<&'static str> {
        self.records.iter().map(|r| r.event.kind()).collect()
    }

    pub fn evidence(&self) -> Evidence {
        Evidence::from_session(&self.records, RunFacts::default())
    }

    /// The only call of the run.
    pub fn single_call(&self) -> ToolCall {
        let calls = self.evidence().calls;
        assert_eq!(calls.len(), 1, "{calls:#?}");
        calls.into_iter().next().expect("one call")
    }

    pub fn outcome(&self) -> &TurnOutcome {
        match &self.result {
            Ok(outcome) => outcome,
            Err(e) => panic!("turn failed: {e}\n{:#?}", self.records),
        }
    }

    pub fn error(&self) -> String {
        match &self.result {
            Ok(outcome) => panic!("turn succeeded: {outcome:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// The body of model request `n`.
    pub fn request_body(&self, n: u32) -> Value {
        self.records
            .iter()
            .find_map(|r| match &r.event {
                Event::ModelRequest { n: m, body } if *m == n => Some(body.to_value()),
                _ => None,
            })
            .expect("request recorded")
    }
}
