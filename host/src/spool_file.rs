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
use std::sync::{Arc, Mutex};

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

/// A memory budget in front of a spool file, for what is kept in order until a report is
/// written (`crate::report::CaseReports`, `crate::report::RunDetails`): while the budget lasts
/// each piece stays in memory; from the first piece that does not fit, every later one goes
/// to the file, made when first needed.
#[derive(Debug, Clone)]
pub(crate) struct Budgeted {
    resident_left: usize,
    file: Option<Arc<SpoolFile>>,
}

impl Budgeted {
    /// Up to `resident_bytes` kept in memory (0: everything goes to the file).
    pub(crate) fn new(resident_bytes: usize) -> Self {
        Self {
            resident_left: resident_bytes,
            file: None,
        }
    }

    /// Where a piece of `bytes` goes: `None`, memory (counted against the budget); else the
    /// file to append it to. A file that cannot be made is `None` too: memory, not the piece,
    /// is what is lost.
    pub(crate) fn place(&mut self, bytes: usize) -> Option<Arc<SpoolFile>> {
        if bytes <= self.resident_left {
            self.resident_left -= bytes;
            return None;
        }
        // Later pieces are not kept in memory, whatever their size.
        self.resident_left = 0;
        if self.file.is_none() {
            self.file = SpoolFile::new().ok().map(Arc::new);
        }
        self.file.clone()
    }

    /// The file, once a piece went there.
    pub(crate) fn file(&self) -> Option<&Arc<SpoolFile>> {
        self.file.as_ref()
    }
}
