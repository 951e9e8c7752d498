//! One provider response body, read as an event stream into a [`ProviderReply`].
//!
//! Synchronous and byte-oriented, so the HTTP client feeds it chunks as they arrive and the
//! fuzz targets feed it arbitrary bytes through the same code.

use super::{Decoder, ProviderError, ProviderReply};
use crate::config::ProviderKind;
use crate::wire::SseParser;

/// Reads the event stream of one response in a provider's dialect.
#[derive(Debug)]
pub struct ReplyStream {
    parser: SseParser,
    decoder: Decoder,
}

impl ReplyStream {
    /// A reader for a response body in the dialect of `kind`.
    pub fn new(kind: ProviderKind) -> Self {
        Self {
            parser: SseParser::new(),
            decoder: Decoder::new(kind),
        }
    }

    /// Feed the next chunk of the body; the reply once an event completes it (whatever
    /// follows is ignored, so a service that keeps the connection open cannot stall a turn).
    pub fn push(&mut self, chunk: &[u8]) -> Result<Option<ProviderReply>, ProviderError> {
        let events = self
            .parser
            .push(chunk)
            .map_err(|e| ProviderError::Malformed {
                message: e.to_string(),
            })?;
        for event in events {
            if let Some(reply) = self.decoder.event(event)? {
                return Ok(Some(reply));
            }
        }
        Ok(None)
    }

    /// The body ended: the reply its last, unterminated event completes, or why there is none.
    pub fn finish(self) -> Result<ProviderReply, ProviderError> {
        let Self {
            parser,
            mut decoder,
        } = self;
        if let Some(event) = parser.finish()
            && let Some(reply) = decoder.event(event)?
        {
            return Ok(reply);
        }
        decoder.end()
    }
}
