//! `no_endpoint_errors`: the agent never made a request the model endpoint could not serve.

use evalhost_sdk::message::count;
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};
use serde::Deserialize;

use crate::nexus::events::{field, payload, string_form};

/// The evidence event kind of a request the endpoint did not serve.
pub const ENDPOINT_ERROR: &str = "endpoint.error";

/// `no_endpoint_errors:` (no config, or `{}`)
pub struct NoEndpointErrors;

/// The grader takes no settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

impl Grader for NoEndpointErrors {
    type Config = Option<NoSettings>;
    const NAME: &'static str = "no_endpoint_errors";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "Every request the agent made was one the model endpoint serves (no unserved path, method or WebSocket upgrade)";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": ["object", "null"],
            "properties": {},
            "additionalProperties": false,
        })
    }

    fn grade(_config: &Option<NoSettings>, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(no_endpoint_errors(evidence))
    }
}

/// Fails listing each unserved request as `METHOD PATH (STATUS)`.
pub fn no_endpoint_errors(evidence: &Evidence) -> Verdict {
    let unserved: Vec<String> = evidence
        .events
        .iter()
        .filter(|event| event.kind == ENDPOINT_ERROR)
        .map(|event| {
            let data = payload(event);
            let part = |name| field(&data, name).map(string_form).unwrap_or_default();
            format!("{} {} ({})", part("Method"), part("Path"), part("Status"))
        })
        .collect();
    Verdict::pass_if(unserved.is_empty(), || {
        format!(
            "{}: {} not served: {}",
            NoEndpointErrors::NAME,
            count(unserved.len() as u64, "request", "requests"),
            unserved.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use evalhost_sdk::Event;

    use super::*;
    use crate::tests::{grade, invalid_config};

    fn event(kind: &str, data: &str) -> Event {
        Event {
            seq: 0,
            kind: kind.to_owned(),
            at_ms: 0,
            data: data.to_owned(),
        }
    }

    #[test]
    fn unserved_requests_fail_the_run_by_method_path_and_status() {
        let clean = Evidence {
            events: vec![event("llm.request", "{}")],
            ..Evidence::default()
        };
        assert_eq!(grade::<NoEndpointErrors>("null", &clean), Verdict::pass());
        assert_eq!(grade::<NoEndpointErrors>("{}", &clean), Verdict::pass());
        let broken = Evidence {
            events: vec![
                event(
                    ENDPOINT_ERROR,
                    r#"{"Method":"GET","Path":"/v1/responses","Status":404,"Error":"no"}"#,
                ),
                event(
                    ENDPOINT_ERROR,
                    r#"{"Method":"HEAD","Path":"/v1/messages","Status":405,"Error":"no"}"#,
                ),
            ],
            ..Evidence::default()
        };
        assert_eq!(
            grade::<NoEndpointErrors>("null", &broken),
            Verdict::fail(
                "no_endpoint_errors: 2 requests not served: GET /v1/responses (404), HEAD /v1/messages (405)"
            )
        );
        assert!(invalid_config::<NoEndpointErrors>(r#"{"x":1}"#).contains("unknown field"));
    }
}
