//! The live responder: each model request, whatever its API, is given to the configured
//! provider (translated into the provider's API there), and the provider's answer comes
//! back as a [`Reply`]. Nothing is cached; each request is one provider call (with retries).

use tokio::sync::Semaphore;

use crate::api::serve::to_responses_request;
use crate::api::{Carried, Provider, Reply};
use crate::wire::Api;

/// A provider shared by every live session of a suite.
pub struct LiveModel {
    provider: Provider,
    /// Bounds requests in flight to the provider, whatever `--jobs` is.
    permits: Semaphore,
}

impl std::fmt::Debug for LiveModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveModel")
            .field("provider", &self.provider)
            .finish()
    }
}

impl LiveModel {
    /// Serve live sessions with `provider`.
    pub fn new(provider: Provider) -> Self {
        let permits = Semaphore::new(provider.config().max_concurrency);
        Self { provider, permits }
    }

    /// The provider's model name.
    pub fn model(&self) -> &str {
        &self.provider.config().model
    }

    /// The provider behind the endpoint.
    pub fn provider(&self) -> &Provider {
        &self.provider
    }

    /// The provider's answer to request `n`, a body in `api`, or why there is none;
    /// `carried` is the session's reasoning.
    pub(crate) async fn answer(
        &self,
        n: u32,
        api: Api,
        request: &serde_json::Value,
        carried: &Carried,
    ) -> Result<Reply, String> {
        let config = self.provider.config();
        let request = to_responses_request(api, request)
            .map_err(|e| format!("Request {n} is not a {} request: {e}", api.name()))?;
        let result = {
            let _permit = self.permits.acquire().await;
            self.provider.complete(&request, carried).await
        };
        match result {
            // The reasoning stays with the session's `Carried`; the record keeps the answer.
            Ok(reply) => Ok(Reply {
                reasoning: Vec::new(),
                ..reply
            }),
            Err(e) => Err(format!(
                "Provider {} (model {}) failed on request {n}: {e}",
                config.api, config.model
            )),
        }
    }
}
