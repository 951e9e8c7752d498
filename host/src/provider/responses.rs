//! OpenAI Responses API: the request passes through with the configured model; the stream is
//! read with the agent's own collector.

use serde_json::Value;

use super::{ProviderError, ProviderReply};
use crate::agent::AgentError;
use crate::agent::reply::ReplyCollector;
use crate::model::SseEvent;
use crate::model::responses::ResponsesRequest;

/// `{base_url}/responses`.
pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/responses")
}

/// The request as the agent built it, with the provider's model.
pub(crate) fn body(request: &ResponsesRequest, model: &str) -> Value {
    let mut request = request.clone();
    request.model = model.to_owned();
    request.stream = true;
    serde_json::to_value(&request).unwrap_or(Value::Null)
}

/// Reads one Responses stream.
#[derive(Debug)]
pub(crate) struct Decoder {
    collector: ReplyCollector,
}

impl Decoder {
    pub(crate) fn new() -> Self {
        Self {
            collector: ReplyCollector::new(1),
        }
    }

    pub(crate) fn event(
        &mut self,
        event: SseEvent,
    ) -> Result<Option<ProviderReply>, ProviderError> {
        match self.collector.event(event) {
            None => Ok(None),
            Some(Ok(reply)) => Ok(Some(ProviderReply {
                output: reply.output,
                input_tokens: reply.input_tokens,
                output_tokens: reply.output_tokens,
            })),
            Some(Err(error)) => Err(convert(error)),
        }
    }

    pub(crate) fn end(self) -> ProviderError {
        ProviderError::Stream {
            message: "the stream ended before `response.completed`".to_owned(),
        }
    }
}

fn convert(error: AgentError) -> ProviderError {
    match error {
        AgentError::Malformed { message, .. } => ProviderError::Malformed { message },
        AgentError::ModelFailed { message, .. } => ProviderError::Failed {
            message,
            transient: false,
        },
        other => ProviderError::Failed {
            message: other.to_string(),
            transient: false,
        },
    }
}
