use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{Event, Record};

/// Errors reading or writing a session log.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionLogError {
    /// The log could not be created or written.
    #[error("failed to write session log `{path}`")]
    Write {
        /// The log's file (an unnamed log: its label).
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The log could not be read.
    #[error("failed to read session log `{path}`")]
    Read {
        /// The log's file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// A line of the log is not a session record.
    #[error("{path}:{line}: invalid session record: {message}")]
    Parse {
        /// The log's file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// An append-only session log: records are kept in memory and written through to a JSONL file.
pub struct SessionLog {
    path: PathBuf,
    file: BufWriter<File>,
    started: Instant,
    records: Vec<Record>,
}

impl SessionLog {
    /// Create (truncate) the log file at `path`.
    pub fn create(path: &Path) -> Result<Self, SessionLogError> {
        let file = File::create(path).map_err(|source| SessionLogError::Write {
            path: path.to_owned(),
            source,
        })?;
        Ok(Self {
            path: path.to_owned(),
            file: BufWriter::new(file),
            started: Instant::now(),
            records: Vec::new(),
        })
    }

    /// Create the log as a file with no name in `dir` (`O_TMPFILE`): only evalhost, which holds
    /// it open, can reach it, never a process of the run (`docs/security.md`). `label` names
    /// it in errors; [`SessionLog::contents`] reads it back.
    pub(crate) fn unnamed(dir: &Path, label: PathBuf) -> Result<Self, SessionLogError> {
        let file = tempfile::tempfile_in(dir).map_err(|source| SessionLogError::Write {
            path: label.clone(),
            source,
        })?;
        Ok(Self {
            path: label,
            file: BufWriter::new(file),
            started: Instant::now(),
            records: Vec::new(),
        })
    }

    /// The log's file, every line flushed (how `--out` copies an unnamed log:
    /// [`read_whole`]).
    pub(crate) fn into_file(self) -> Result<File, SessionLogError> {
        let path = self.path;
        self.file.into_inner().map_err(|e| SessionLogError::Write {
            path,
            source: e.into_error(),
        })
    }

    /// Append one event, stamped with the time since the log was created.
    pub fn append(&mut self, event: Event) -> Result<(), SessionLogError> {
        self.append_at(event, Instant::now())
    }

    /// Append one event that happened at `at` (an event written after the fact, e.g. an
    /// external agent's, whose records are written from its endpoint's record when it ends),
    /// stamped with the time from the log's creation to `at` (0 when `at` is earlier).
    pub fn append_at(&mut self, event: Event, at: Instant) -> Result<(), SessionLogError> {
        let record = Record {
            at_ms: at.saturating_duration_since(self.started).as_millis() as u64,
            event,
        };
        // Encoded straight into the buffered file: a record can be a whole conversation.
        serde_json::to_writer(&mut self.file, &record)
            .map_err(std::io::Error::from)
            .and_then(|()| self.file.write_all(b"\n"))
            .map_err(|source| self.write_error(source))?;
        self.records.push(record);
        Ok(())
    }

    /// Append a record as it was made elsewhere, its `at_ms` kept (a trace's run, written
    /// into the log of the run that grades it).
    pub(crate) fn append_record(&mut self, record: Record) -> Result<(), SessionLogError> {
        serde_json::to_writer(&mut self.file, &record)
            .map_err(std::io::Error::from)
            .and_then(|()| self.file.write_all(b"\n"))
            .map_err(|source| self.write_error(source))?;
        self.records.push(record);
        Ok(())
    }

    /// Flush buffered lines to disk.
    pub fn flush(&mut self) -> Result<(), SessionLogError> {
        self.file.flush().map_err(|source| self.write_error(source))
    }

    /// Records appended so far.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Where the log is written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_error(&self, source: std::io::Error) -> SessionLogError {
        SessionLogError::Write {
            path: self.path.clone(),
            source,
        }
    }
}

/// Every byte of `file`, from its start (it may have no name to open it by again).
pub(crate) fn read_whole(file: &File) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match file.read_at(&mut chunk, bytes.len() as u64) {
            Ok(0) => return Ok(bytes),
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The records of a session log's bytes as [`SessionLog`] wrote them (a line that does not
/// parse, which evalhost never writes, is left out).
pub(crate) fn parse_records(bytes: &[u8]) -> Vec<Record> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.trim_ascii().is_empty())
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect()
}

/// Read a session log written by [`SessionLog`].
pub fn read_session_log(path: &Path) -> Result<Vec<Record>, SessionLogError> {
    let read_error = |source| SessionLogError::Read {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(read_error)?;
    let mut records = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(read_error)?;
        if line.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str(&line).map_err(|e| SessionLogError::Parse {
            path: path.to_owned(),
            line: index + 1,
            message: e.to_string(),
        })?;
        records.push(record);
    }
    Ok(records)
}
