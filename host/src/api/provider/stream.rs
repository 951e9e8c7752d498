//! One provider response body, read as an event stream into a [`Reply`] by the decoder of
//! the provider's API.
//!
//! Synchronous and byte-oriented, so the HTTP client feeds it chunks as they arrive and the
//! fuzz targets feed it arbitrary bytes through the same code.

use super::ProviderError;
use crate::api::reply::Reply;
use crate::api::{anthropic, chat, gemini, responses};
use crate::wire::{Api, SseEvent, SseParser};

/// Reads the event stream of one response in a provider's API.
#[derive(Debug)]
pub(crate) struct ReplyStream {
    parser: SseParser,
    decoder: Decoder,
}

impl ReplyStream {
    /// A reader for a response body in `api`.
    pub fn new(api: Api) -> Self {
        Self {
            parser: SseParser::new(),
            decoder: Decoder::new(api),
        }
    }

    /// Feed the next chunk of the body; the reply once an event completes it (whatever
    /// follows is ignored, so a service that keeps the connection open cannot stall a turn).
    pub fn push(&mut self, chunk: &[u8]) -> Result<Option<Reply>, ProviderError> {
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
    pub fn finish(self) -> Result<Reply, ProviderError> {
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

/// The stream reader of each API.
#[derive(Debug)]
enum Decoder {
    Responses(responses::client::Decoder),
    Chat(chat::client::Decoder),
    Anthropic(anthropic::client::Decoder),
    Gemini(gemini::client::Decoder),
}

impl Decoder {
    fn new(api: Api) -> Self {
        match api {
            Api::Responses => Decoder::Responses(responses::client::Decoder::new()),
            Api::Chat => Decoder::Chat(chat::client::Decoder::new()),
            Api::Anthropic => Decoder::Anthropic(anthropic::client::Decoder::new()),
            Api::Gemini => Decoder::Gemini(gemini::client::Decoder::new()),
        }
    }

    fn event(&mut self, event: SseEvent) -> Result<Option<Reply>, ProviderError> {
        match self {
            Decoder::Responses(d) => d.event(event),
            Decoder::Chat(d) => d.event(event),
            Decoder::Anthropic(d) => d.event(event),
            Decoder::Gemini(d) => d.event(event),
        }
    }

    fn end(self) -> Result<Reply, ProviderError> {
        match self {
            Decoder::Responses(d) => Err(d.end()),
            Decoder::Chat(d) => d.end(),
            Decoder::Anthropic(d) => Err(d.end()),
            Decoder::Gemini(d) => d.end(),
        }
    }
}
