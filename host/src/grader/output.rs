//! Guest stdout/stderr: captured in memory, capped. Writing past the cap traps the grader
//! with [`OutputLimitExceeded`], so a flood is a named error rather than silent truncation.

use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// A grader wrote more than its output cap to stdout or stderr.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("output limit: wrote more than {cap} bytes to {stream}")]
pub struct OutputLimitExceeded {
    /// `stdout` or `stderr`.
    pub stream: &'static str,
    /// The cap, in bytes.
    pub cap: usize,
}

/// One captured output stream of one instance, taken (and emptied) after every call.
#[derive(Clone)]
pub(crate) struct CapturedOutput {
    name: &'static str,
    cap: usize,
    buffer: Arc<Mutex<BytesMut>>,
}

impl CapturedOutput {
    pub(crate) fn new(name: &'static str, cap: usize) -> Self {
        Self {
            name,
            cap,
            buffer: Arc::default(),
        }
    }

    /// Everything written since the last take, lossily decoded; the buffer is emptied, so
    /// the next call into the same instance starts with the whole cap again.
    pub(crate) fn take_text(&self) -> String {
        let mut buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(&buffer).into_owned();
        buffer.clear();
        text
    }
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        // Only the p2 stream is used by p2 guests; the async form discards, never blocks.
        Box::new(tokio::io::sink())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        let mut buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        if buffer.len() + bytes.len() > self.cap {
            return Err(StreamError::Trap(wasmtime::Error::new(
                OutputLimitExceeded {
                    stream: self.name,
                    cap: self.cap,
                },
            )));
        }
        buffer.extend_from_slice(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        // Always offer room, so the guest's next write reaches `write` and trips the cap
        // there with a named error, instead of seeing a closed stream and panicking.
        Ok(64 * 1024)
    }
}
