//! What a session keeps of the requests an agent sends it, so that an agent cannot make
//! evalhost hold what it pushes: a session keeps whole request bodies while their total stays
//! within [`KEPT_BODY_BYTES`]; past that a body is kept as a short JSON note of its size and
//! SHA-256 digest (`{"not_kept":{"bytes":…,"sha256":"…","reason":"…"}}`), which the session
//! log shows in place of the body. At most [`KEPT_EXCHANGES`] exchanges are kept; the requests
//! past that are only counted, and the record ends with one unserved exchange that says how
//! many there were (an `endpoint_error` in the session log). A path or message longer than
//! [`KEPT_TEXT`] bytes is cut there. The responder always answers from the whole body: only
//! what is kept afterwards is bounded.

use axum::body::Bytes;
use sha2::{Digest, Sha256};

use super::record::{Exchange, Outcome};

/// Bytes of request bodies a session keeps whole.
pub(crate) const KEPT_BODY_BYTES: usize = 32 << 20;

/// Exchanges a session keeps.
pub(crate) const KEPT_EXCHANGES: usize = 4096;

/// Longest path or message kept of an exchange.
pub(crate) const KEPT_TEXT: usize = 1024;

/// How much of one exchange is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// The whole body.
    Whole,
    /// The body's size and digest in its place.
    Digest,
    /// Nothing: only counted.
    Count,
}

/// A session's tally of what it has kept.
#[derive(Debug, Default)]
pub(crate) struct Keeping {
    exchanges: usize,
    body_bytes: usize,
    /// Requests only counted, and their bodies' bytes.
    counted: u64,
    counted_bytes: u64,
    /// Of those, the ones already told by [`Keeping::take_counted`].
    told: u64,
    told_bytes: u64,
}

impl Keeping {
    /// How much to keep of the next exchange, whose body is `body_len` bytes.
    pub(crate) fn admit(&mut self, body_len: usize) -> Keep {
        if self.exchanges >= KEPT_EXCHANGES {
            self.counted += 1;
            self.counted_bytes = self.counted_bytes.saturating_add(body_len as u64);
            return Keep::Count;
        }
        self.exchanges += 1;
        match self.body_bytes.checked_add(body_len) {
            Some(total) if total <= KEPT_BODY_BYTES => {
                self.body_bytes = total;
                Keep::Whole
            }
            _ => Keep::Digest,
        }
    }

    /// The note of every request only counted so far, if any.
    pub(crate) fn counted(&self) -> Option<Exchange> {
        counted_note(self.counted, self.counted_bytes)
    }

    /// The note of the requests only counted since the last call, if any.
    pub(crate) fn take_counted(&mut self) -> Option<Exchange> {
        let note = counted_note(
            self.counted - self.told,
            self.counted_bytes - self.told_bytes,
        );
        self.told = self.counted;
        self.told_bytes = self.counted_bytes;
        note
    }
}

fn counted_note(requests: u64, bytes: u64) -> Option<Exchange> {
    let now = std::time::Instant::now();
    (requests > 0).then(|| Exchange {
        received: now,
        answered: now,
        method: "*".to_owned(),
        path: "*".to_owned(),
        body: Bytes::new(),
        outcome: Outcome::Unserved {
            status: 429,
            message: format!(
                "{requests} more requests ({bytes} bytes of bodies) reached the session and were \
                 answered, but not kept: a session keeps at most {KEPT_EXCHANGES} exchanges"
            ),
        },
    })
}

/// What is kept of `exchange` (not [`Keep::Count`]): its body whole or as a note, its path
/// and message cut at [`KEPT_TEXT`].
pub(crate) fn kept(mut exchange: Exchange, keep: Keep) -> Exchange {
    if keep != Keep::Whole {
        exchange.body = note(&exchange.body);
    }
    cut(&mut exchange.path);
    match &mut exchange.outcome {
        Outcome::Failed { message, .. } | Outcome::Unserved { message, .. } => cut(message),
        Outcome::Answered { .. } => {}
    }
    exchange
}

/// The note kept in place of `body`.
fn note(body: &[u8]) -> Bytes {
    let note = serde_json::json!({
        "not_kept": {
            "bytes": body.len(),
            "sha256": hex::encode(Sha256::digest(body)),
            "reason": format!(
                "a session keeps request bodies whole up to {} MiB in total; past that, their \
                 size and SHA-256 digest",
                KEPT_BODY_BYTES >> 20
            ),
        }
    });
    Bytes::from(note.to_string())
}

fn cut(text: &mut String) {
    if text.len() > KEPT_TEXT {
        let end = text.floor_char_boundary(KEPT_TEXT);
        text.truncate(end);
        text.push('…');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(body: Vec<u8>) -> Exchange {
        let now = std::time::Instant::now();
        Exchange {
            received: now,
            answered: now,
            method: "POST".to_owned(),
            path: "/v1/responses".to_owned(),
            body: Bytes::from(body),
            outcome: Outcome::Unserved {
                status: 404,
                message: "no".to_owned(),
            },
        }
    }

    #[test]
    fn bodies_are_kept_whole_up_to_the_budget_then_as_a_digest() {
        let mut keeping = Keeping::default();
        assert_eq!(keeping.admit(KEPT_BODY_BYTES - 10), Keep::Whole);
        assert_eq!(keeping.admit(11), Keep::Digest);
        assert_eq!(keeping.admit(10), Keep::Whole);
        assert_eq!(keeping.admit(1), Keep::Digest);
        assert_eq!(keeping.admit(0), Keep::Whole);
    }

    #[test]
    fn a_digest_note_names_the_size_and_sha256() {
        let kept = kept(exchange(b"hello".to_vec()), Keep::Digest);
        let note: serde_json::Value = serde_json::from_slice(&kept.body).unwrap();
        assert_eq!(note["not_kept"]["bytes"], 5);
        assert_eq!(
            note["not_kept"]["sha256"],
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        let whole = super::kept(exchange(b"hello".to_vec()), Keep::Whole);
        assert_eq!(&whole.body[..], b"hello");
    }

    #[test]
    fn past_the_exchange_cap_requests_are_counted_and_told_once() {
        let mut keeping = Keeping::default();
        for _ in 0..KEPT_EXCHANGES {
            assert_ne!(keeping.admit(1), Keep::Count);
        }
        assert!(keeping.counted().is_none());
        assert_eq!(keeping.admit(7), Keep::Count);
        assert_eq!(keeping.admit(8), Keep::Count);
        let Some(Exchange {
            outcome: Outcome::Unserved { message, .. },
            ..
        }) = keeping.take_counted()
        else {
            panic!("a note of the counted requests")
        };
        assert!(
            message.starts_with("2 more requests (15 bytes"),
            "{message}"
        );
        assert!(keeping.take_counted().is_none());
        assert_eq!(keeping.admit(1), Keep::Count);
        assert!(keeping.take_counted().is_some());
        let Some(Exchange {
            outcome: Outcome::Unserved { message, .. },
            ..
        }) = keeping.counted()
        else {
            panic!("a note of every counted request")
        };
        assert!(
            message.starts_with("3 more requests (16 bytes"),
            "{message}"
        );
    }

    #[test]
    fn long_paths_and_messages_are_cut() {
        let mut long = exchange(Vec::new());
        long.path = "é".repeat(KEPT_TEXT);
        long.outcome = Outcome::Unserved {
            status: 404,
            message: "x".repeat(10 * KEPT_TEXT),
        };
        let kept = kept(long, Keep::Whole);
        assert!(kept.path.len() <= KEPT_TEXT + '…'.len_utf8());
        let Outcome::Unserved { message, .. } = kept.outcome else {
            unreachable!()
        };
        assert_eq!(message.len(), KEPT_TEXT + '…'.len_utf8());
    }
}
