//! Ctrl-C and SIGTERM during `evalhost run`: cancel the suite (no new runs, running ones
//! dropped) so the report of what finished is still printed and written.

use crate::runner::CancelToken;
use tokio::signal::unix::{SignalKind, signal};

/// Listen for SIGINT and SIGTERM on the current runtime; the first one cancels `token`.
/// Must be called inside the runtime. A listener that cannot be installed is skipped (the
/// signal then keeps its default action).
pub fn cancel_on_signal(token: CancelToken) {
    let interrupt = signal(SignalKind::interrupt()).ok();
    let terminate = signal(SignalKind::terminate()).ok();
    tokio::spawn(async move {
        let name = tokio::select! {
            Some(()) = recv(interrupt) => "SIGINT",
            Some(()) = recv(terminate) => "SIGTERM",
            else => return,
        };
        eprintln!("{name}: cancelling running runs; no new run starts");
        token.cancel();
    });
}

async fn recv(signal: Option<tokio::signal::unix::Signal>) -> Option<()> {
    match signal {
        Some(mut signal) => signal.recv().await,
        None => None,
    }
}
