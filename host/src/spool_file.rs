//! An append-only, unnamed temp file where evalhost puts what would otherwise be held in
//! memory for the whole suite: cases waiting for their runs (`crate::case::Spool`), finished
//! cases waiting for the report (`crate::report::CaseReports`), and runs' transcripts waiting
//! for the HTML page (`crate::report::RunDetails`).
//!
//! The file has no name and only evalhost holds it open, so what is read back is what was
//! written; it is gone when the last holder drops it. Writers on several threads each get
//! their own range, so they write side by side.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

#[derive(Debug)]
pub(crate) struct SpoolFile {
    file: File,
    /// Where the next write goes.
    end: Mutex<u64>,
}

impl SpoolFile {
    /// A new unnamed temp file (in `TMPDIR`).
    pub(crate) fn new() -> std::io::Result<Self> {
        Ok(Self {
            file: tempfile::tempfile()?,
            end: Mutex::new(0),
        })
    }

    /// Append `bytes`: the offset they went to.
    pub(crate) fn append(&self, bytes: &[u8]) -> std::io::Result<u64> {
        let offset = {
            let mut end = self.end.lock().unwrap_or_else(|e| e.into_inner());
            let offset = *end;
            *end += bytes.len() as u64;
            offset
        };
        self.file.write_all_at(bytes, offset)?;
        Ok(offset)
    }

    /// The `len` bytes written at `offset`.
    pub(crate) fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let mut bytes = vec![0; len];
        self.file.read_exact_at(&mut bytes, offset)?;
        Ok(bytes)
    }
}
