//! A session's address on the endpoint: `/s/<n>-<secret>`, where `n` numbers the session
//! (it picks the session, and is no secret) and `secret` is 128 bits, 32 hex digits, compared
//! in constant time. A run knows only its own session's token, so it cannot reach another
//! run's session: guessing a secret is one chance in 2^128 a request.
//!
//! The server takes a 256-bit key from the operating system's random source when it starts;
//! session `n`'s secret is the first 128 bits of SHA-256(key ‖ n). A token tells nothing of
//! the key or of another session's secret, and opening a session cannot fail.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Bytes of a session's secret.
const SECRET_BYTES: usize = 16;

/// Why the server could not make its key.
#[derive(Debug, thiserror::Error)]
#[error("the operating system's random source failed: {0}")]
pub struct RandomError(String);

/// The server's key, from which each session's secret is made.
pub(crate) struct SessionKey([u8; 32]);

impl SessionKey {
    /// A key fresh from the operating system's random source.
    pub(crate) fn new() -> Result<Self, RandomError> {
        let mut key = [0u8; 32];
        getrandom::getrandom(&mut key).map_err(|e| RandomError(e.to_string()))?;
        Ok(Self(key))
    }

    /// Session `id`'s token.
    pub(crate) fn token(&self, id: u64) -> SessionToken {
        let digest = Sha256::new()
            .chain_update(self.0)
            .chain_update(id.to_le_bytes())
            .finalize();
        SessionToken {
            id,
            text: format!("{id}-{}", hex::encode(&digest[..SECRET_BYTES])),
        }
    }
}

/// One session's token.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct SessionToken {
    /// The session's number (not secret).
    pub(crate) id: u64,
    /// `<id>-<secret in hex>`: the path segment after `/s/`.
    text: String,
}

impl SessionToken {
    /// The path segment after `/s/`.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `given` (a path segment as a client sent it) is this token. The comparison
    /// takes the same time wherever the first difference is (only the length may show).
    pub(crate) fn matches(&self, given: &str) -> bool {
        self.text.as_bytes().ct_eq(given.as_bytes()).into()
    }
}

/// The session number a token names, when it has the shape of one (`<n>-<…>`); the secret is
/// checked by [`SessionToken::matches`].
pub(crate) fn session_id(given: &str) -> Option<u64> {
    let (id, _) = given.split_once('-')?;
    id.parse().ok()
}

impl std::fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret stays out of debug output.
        write!(f, "SessionToken({}-…)", self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_its_number_and_128_random_bits() {
        let token = SessionKey::new().unwrap().token(7);
        let (id, secret) = token.as_str().split_once('-').unwrap();
        assert_eq!(id, "7");
        assert_eq!(secret.len(), 2 * SECRET_BYTES);
        assert!(secret.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(session_id(token.as_str()), Some(7));
    }

    #[test]
    fn tokens_differ_between_sessions_and_between_servers() {
        let key = SessionKey::new().unwrap();
        let a = key.token(1);
        assert_eq!(a, key.token(1));
        let b = SessionKey::new().unwrap().token(1);
        assert_ne!(a.as_str(), b.as_str());
        assert!(!a.matches(b.as_str()));
        let c = key.token(2);
        assert_ne!(a.as_str()[2..], c.as_str()[2..]);
    }

    #[test]
    fn only_the_exact_token_matches() {
        let token = SessionKey::new().unwrap().token(3);
        let text = token.as_str().to_owned();
        assert!(token.matches(&text));
        assert!(!token.matches("3"));
        assert!(!token.matches("3-"));
        assert!(!token.matches(&text[..text.len() - 1]));
        assert!(!token.matches(&format!("{text}0")));
        let mut flipped = text.clone().into_bytes();
        let last = flipped.len() - 1;
        flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
        assert!(!token.matches(std::str::from_utf8(&flipped).unwrap()));
        assert!(!format!("{token:?}").contains(&text[2..]));
    }

    #[test]
    fn a_segment_without_a_number_names_no_session() {
        assert_eq!(session_id("0"), None);
        assert_eq!(session_id("x-abc"), None);
        assert_eq!(session_id(""), None);
        assert_eq!(session_id("12-"), Some(12));
    }
}
