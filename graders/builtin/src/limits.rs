//! Graders of how much the run used.

use evalhost_sdk::message::count;
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};

use crate::config::limit_schema;

/// `max_requests: 2`
pub struct MaxRequests;

impl Grader for MaxRequests {
    type Config = u32;
    const NAME: &'static str = "max_requests";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "The turn used at most this many model requests";

    fn config_schema() -> serde_json::Value {
        limit_schema("Most model requests the run may make")
    }

    fn grade(limit: &u32, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(max_requests(*limit, evidence))
    }
}

/// Passes when the run made at most `limit` model requests.
pub fn max_requests(limit: u32, evidence: &Evidence) -> Verdict {
    let used = evidence.usage.requests;
    Verdict::pass_if(used <= limit, || {
        format!(
            "{} {limit}: {}",
            MaxRequests::NAME,
            count(used.into(), "request", "requests")
        )
    })
}

/// `max_tool_calls: 0`
pub struct MaxToolCalls;

impl Grader for MaxToolCalls {
    type Config = u32;
    const NAME: &'static str = "max_tool_calls";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "The model requested at most this many tool calls";

    fn config_schema() -> serde_json::Value {
        limit_schema("Most tool calls the model may request")
    }

    fn grade(limit: &u32, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(max_tool_calls(*limit, evidence))
    }
}

/// Passes when the model requested at most `limit` tool calls.
pub fn max_tool_calls(limit: u32, evidence: &Evidence) -> Verdict {
    let used = evidence.calls.len() as u64;
    Verdict::pass_if(used <= u64::from(limit), || {
        format!(
            "{} {limit}: {}",
            MaxToolCalls::NAME,
            count(used, "tool call", "tool calls")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{grade, invalid_config};
    use evalhost_sdk::{ToolCall, Usage};

    #[test]
    fn max_requests_counts_requests() {
        let evidence = |requests| Evidence {
            usage: Usage {
                requests,
                ..Usage::default()
            },
            ..Evidence::default()
        };
        assert_eq!(grade::<MaxRequests>("2", &evidence(2)), Verdict::pass());
        assert_eq!(
            grade::<MaxRequests>("2", &evidence(3)),
            Verdict::fail("max_requests 2: 3 requests")
        );
        assert_eq!(
            grade::<MaxRequests>("0", &evidence(1)),
            Verdict::fail("max_requests 0: 1 request")
        );
        assert_eq!(
            invalid_config::<MaxRequests>("-1"),
            "invalid value: integer `-1`, expected u32"
        );
        assert_eq!(
            invalid_config::<MaxRequests>(r#""2""#),
            "invalid type: string \"2\", expected u32"
        );
    }

    #[test]
    fn max_tool_calls_counts_calls() {
        let evidence = |n: u32| Evidence {
            calls: (1..=n).map(|i| ToolCall::completed(i, "bash")).collect(),
            ..Evidence::default()
        };
        assert_eq!(grade::<MaxToolCalls>("0", &evidence(0)), Verdict::pass());
        assert_eq!(
            grade::<MaxToolCalls>("0", &evidence(1)),
            Verdict::fail("max_tool_calls 0: 1 tool call")
        );
        assert_eq!(
            grade::<MaxToolCalls>("1", &evidence(3)),
            Verdict::fail("max_tool_calls 1: 3 tool calls")
        );
        assert_eq!(
            invalid_config::<MaxToolCalls>("1.5"),
            "invalid type: floating point `1.5`, expected u32"
        );
    }
}
