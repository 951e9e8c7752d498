//! A streamed answer's body, as every API's server codec sends it: each event its own body
//! frame, texts and argument strings split into a few deltas.

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};

/// How many deltas a text or an argument string is split into, at most.
pub(crate) const DELTAS: usize = 3;

/// A `200 OK` event stream sending each chunk as its own body frame, as a live service does.
pub(crate) fn sse(chunks: Vec<Bytes>) -> Response {
    let chunks = chunks.into_iter().map(Ok::<_, Infallible>);
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(futures_util::stream::iter(chunks)),
    )
        .into_response()
}

/// Split text into up to [`DELTAS`] non-empty pieces on character boundaries.
pub(crate) fn split_deltas(text: &str) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(DELTAS);
    let mut start = 0;
    for k in 1..DELTAS {
        let cut = text.ceil_char_boundary(text.len() * k / DELTAS);
        if cut > start {
            pieces.push(&text[start..cut]);
            start = cut;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// A response's whole body, for the codecs' tests.
#[cfg(test)]
pub(crate) fn body(response: Response) -> Vec<u8> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let bytes = runtime.block_on(axum::body::to_bytes(response.into_body(), usize::MAX));
    bytes.unwrap().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_rejoin_to_the_text() {
        for text in ["", "a", "ab", "hello world", "ééé", "日本語のテキスト"] {
            let pieces = split_deltas(text);
            assert_eq!(pieces.concat(), text);
            assert!(pieces.iter().all(|p| !p.is_empty()));
            assert!(pieces.len() <= DELTAS);
        }
        assert_eq!(split_deltas("hello world").len(), 3);
    }
}
