//! Cancelling a suite (Ctrl-C, SIGTERM): runs not started yet are not started, running ones
//! are dropped (the agent's bash children die with their process group), and the report of
//! what finished is still made.

use std::sync::Arc;

use tokio::sync::watch;

/// A cloneable cancellation flag. Every clone sees [`CancelToken::cancel`] from any other.
#[derive(Debug, Clone)]
pub struct CancelToken(Arc<watch::Sender<bool>>);

impl Default for CancelToken {
    fn default() -> Self {
        Self(Arc::new(watch::Sender::new(false)))
    }
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancel: wakes every [`CancelToken::cancelled`] waiter. Idempotent.
    pub fn cancel(&self) {
        self.0.send_replace(true);
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub(crate) fn is_cancelled(&self) -> bool {
        *self.0.borrow()
    }

    /// Completes once the token is cancelled (at once if it already is).
    pub async fn cancelled(&self) {
        let mut rx = self.0.subscribe();
        // The sender lives in `self`, so waiting cannot fail with a closed channel.
        let _ = rx.wait_for(|cancelled| *cancelled).await;
    }
}

#[cfg(test)]
mod tests {
    use super::CancelToken;

    #[tokio::test]
    async fn clones_see_cancel_and_waiters_wake() {
        let token = CancelToken::new();
        let clone = token.clone();
        assert!(!clone.is_cancelled());
        let waiter = tokio::spawn(async move { clone.cancelled().await });
        token.cancel();
        assert!(token.is_cancelled());
        let woke = tokio::time::timeout(std::time::Duration::from_secs(5), waiter).await;
        assert!(matches!(woke, Ok(Ok(()))));
        // Already cancelled: returns at once.
        token.cancelled().await;
    }
}
