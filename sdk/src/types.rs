//! Helpers on the WIT types a grader reads and returns.
//!
//! The types themselves are generated from `wit/since_v0.5.0/grader.wit` and
//! re-exported at the crate root; their fields are documented there.

use crate::{Evidence, GradeError, Message, ToolCall, Usage, Verdict};

impl Verdict {
    /// A plain pass: score 1.0, no message.
    pub fn pass() -> Self {
        Self {
            pass: true,
            score: 1.0,
            message: String::new(),
        }
    }

    /// A pass with a message, e.g. what the grader measured.
    pub fn pass_with(message: impl Into<String>) -> Self {
        Self {
            pass: true,
            score: 1.0,
            message: message.into(),
        }
    }

    /// A plain fail: score 0.0 and `message`, in the shape
    /// `<grader> <arg>: <what was seen>` (see [`crate::message`]).
    pub fn fail(message: impl Into<String>) -> Self {
        Self {
            pass: false,
            score: 0.0,
            message: message.into(),
        }
    }

    /// [`Verdict::pass`] when `passed`, otherwise [`Verdict::fail`] with the
    /// message `failure` builds (only called on failure).
    ///
    /// ```
    /// use evalhost_sdk::Verdict;
    /// let calls = 3;
    /// let verdict = Verdict::pass_if(calls <= 2, || format!("max_tool_calls 2: {calls} tool calls"));
    /// assert!(!verdict.pass);
    /// assert_eq!(verdict.message, "max_tool_calls 2: 3 tool calls");
    /// ```
    pub fn pass_if(passed: bool, failure: impl FnOnce() -> String) -> Self {
        if passed {
            Self::pass()
        } else {
            Self::fail(failure())
        }
    }

    /// The same verdict with a partial score, clamped to 0.0–1.0 (NaN becomes 0.0).
    pub fn with_score(mut self, score: f64) -> Self {
        self.score = if score.is_nan() {
            0.0
        } else {
            score.clamp(0.0, 1.0)
        };
        self
    }
}

impl GradeError {
    /// The error's text, without its kind.
    pub fn message(&self) -> &str {
        match self {
            GradeError::UnknownGrader(m)
            | GradeError::InvalidConfig(m)
            | GradeError::Failed(m)
            | GradeError::NotEvaluable(m) => m,
        }
    }
}

/// A failed file read or similar while grading: [`GradeError::Failed`] with
/// the OS error text.
impl From<std::io::Error> for GradeError {
    fn from(error: std::io::Error) -> Self {
        GradeError::Failed(error.to_string())
    }
}

impl Evidence {
    /// The recorded call at 1-based `position`, as case files count calls.
    pub fn call(&self, position: u32) -> Option<&ToolCall> {
        let index = usize::try_from(position.checked_sub(1)?).ok()?;
        self.calls.get(index)
    }

    /// Names of the recorded calls, in the order the model requested them.
    pub fn call_names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.calls.iter().map(|call| call.name.as_str())
    }
}

/// An empty replay run of a case named `case` with the workspace at
/// [`crate::WORKSPACE`]: a starting point for native unit tests.
impl Default for Evidence {
    fn default() -> Self {
        Self {
            case_name: "case".to_owned(),
            run: 1,
            mode: "replay".to_owned(),
            model: "scripted".to_owned(),
            prompt: String::new(),
            final_text: String::new(),
            messages: Vec::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            events: Vec::new(),
            duration_ms: 0,
            run_error: None,
            workspace: crate::WORKSPACE.to_owned(),
            seeded_files: Vec::new(),
        }
    }
}

/// No requests and no tokens.
impl Default for Usage {
    fn default() -> Self {
        Self {
            requests: 0,
            input_tokens: 0,
            output_tokens: 0,
            synthetic: false,
        }
    }
}

impl ToolCall {
    /// A completed call of `name` at 1-based `index` with `{}` as arguments: a
    /// starting point for native unit tests.
    pub fn completed(index: u32, name: impl Into<String>) -> Self {
        Self {
            index,
            call_id: format!("call_{index}"),
            name: name.into(),
            arguments: "{}".to_owned(),
            status: "completed".to_owned(),
            output: String::new(),
            started: true,
            duration_ms: 0,
        }
    }
}

impl Message {
    /// A message with this role and content.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: content.into(),
        }
    }
}
