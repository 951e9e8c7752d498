//! The names of the cases a suite has loaded so far, each with the file that defined it: the
//! duplicate-name check of loading ([`super::load_each`]).
//!
//! The check outlives each case, so it is held in a few bytes a case: a table of each name's
//! hash and where its record is. The records (name and path) stay in memory up to
//! [`Names::RESIDENT_BYTES`] at a time; past that they go to an unnamed temp file, read back
//! only when a name's hash matches an earlier one's (a duplicate, or a hash collision, which
//! the names then tell apart). As a map of small strings the check held ~130 bytes a case
//! (13 MB at 100,000 generated cases); this holds ~17, plus at most 1 MiB of records
//! (`docs/performance.md`, "Memory in suite size").

use std::ffi::OsString;
use std::hash::BuildHasher;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use hashbrown::HashTable;

use crate::spool_file::SpoolFile;

/// The names loaded so far, each with the path of the file that defined it.
#[derive(Default)]
pub(super) struct Names {
    /// Each name's hash, and where its record is.
    table: HashTable<Entry>,
    hasher: std::hash::RandomState,
    /// The records from `written` on: each is the name's and the path's lengths (u32, little
    /// endian), the name, the path.
    pending: Vec<u8>,
    /// Records before `written` are in `file`.
    written: u64,
    file: Option<SpoolFile>,
    /// A write to `file` failed: the records stay in memory from then on (a failed append
    /// still takes its range of the file, so later records would not be where `written` says).
    unwritable: bool,
}

struct Entry {
    hash: u64,
    /// Where the record starts, counting the file's bytes, then `pending`'s.
    at: u64,
}

/// Bytes of a record before the name and path: their lengths.
const RECORD_HEAD: usize = 8;

impl Names {
    /// Records kept in memory, at most, before they go to the file.
    const RESIDENT_BYTES: usize = 1 << 20;

    /// Add `name`, defined in `path`; when an earlier case already had the name, nothing is
    /// added and the earlier case's path is returned.
    pub(super) fn insert(&mut self, name: &str, path: &Path) -> Result<(), PathBuf> {
        let hash = self.hasher.hash_one(name.as_bytes());
        let mut earlier = None;
        for entry in self.table.iter_hash(hash) {
            if entry.hash != hash {
                continue;
            }
            match self.record(entry.at) {
                Ok((kept, path)) if kept == name.as_bytes() => {
                    earlier = Some(path);
                    break;
                }
                Ok(_) => {}
                // The hashes match, so the names almost surely do: say so, and why no path.
                Err(error) => {
                    earlier = Some(PathBuf::from(format!(
                        "an earlier case file (not read back from evalhost's spool: {error})"
                    )));
                    break;
                }
            }
        }
        if let Some(earlier) = earlier {
            return Err(earlier);
        }
        let at = self.written + self.pending.len() as u64;
        let path = path.as_os_str().as_bytes();
        for len in [name.len(), path.len()] {
            let len = u32::try_from(len).unwrap_or(u32::MAX);
            self.pending.extend_from_slice(&len.to_le_bytes());
        }
        self.pending.extend_from_slice(name.as_bytes());
        self.pending.extend_from_slice(path);
        self.table
            .insert_unique(hash, Entry { hash, at }, |entry| entry.hash);
        if self.pending.len() >= Self::RESIDENT_BYTES {
            self.write_pending();
        }
        Ok(())
    }

    /// Move the records in memory to the file; a file that cannot be made or written leaves
    /// them in memory (memory, not correctness, is what is lost).
    fn write_pending(&mut self) {
        if self.unwritable {
            return;
        }
        if self.file.is_none() {
            self.file = SpoolFile::new().ok();
        }
        match self.file.as_ref().map(|file| file.append(&self.pending)) {
            Some(Ok(_)) => {
                self.written += self.pending.len() as u64;
                self.pending = Vec::new();
            }
            Some(Err(_)) | None => self.unwritable = true,
        }
    }

    /// The name and path of the record at `at`.
    fn record(&self, at: u64) -> std::io::Result<(Vec<u8>, PathBuf)> {
        let (name_len, mut bytes) = match at.checked_sub(self.written) {
            Some(start) => {
                let record = &self.pending[start as usize..];
                let (name_len, path_len) = lengths(record);
                let body = &record[RECORD_HEAD..][..name_len + path_len];
                (name_len, body.to_vec())
            }
            None => {
                let file = self.file.as_ref().ok_or(std::io::ErrorKind::NotFound)?;
                let (name_len, path_len) = lengths(&file.read_at(at, RECORD_HEAD)?);
                let body = file.read_at(at + RECORD_HEAD as u64, name_len + path_len)?;
                (name_len, body)
            }
        };
        let path = bytes.split_off(name_len);
        Ok((bytes, PathBuf::from(OsString::from_vec(path))))
    }
}

/// The name's and the path's lengths at the head of a record.
fn lengths(head: &[u8]) -> (usize, usize) {
    let len = |i: usize| {
        let bytes: [u8; 4] = head[i..i + 4].try_into().unwrap_or_default();
        u32::from_le_bytes(bytes) as usize
    };
    (len(0), len(4))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(path: &str) -> Result<(), PathBuf> {
        Err(PathBuf::from(path))
    }

    #[test]
    fn a_name_defined_again_names_the_first_file() {
        let mut names = Names::default();
        assert_eq!(names.insert("greeting", Path::new("cases/a.yaml")), Ok(()));
        assert_eq!(names.insert("farewell", Path::new("cases/b.yaml")), Ok(()));
        assert_eq!(names.insert("greet", Path::new("cases/c.yaml")), Ok(()));
        assert_eq!(
            names.insert("greeting", Path::new("other/a.yaml")),
            first("cases/a.yaml")
        );
        assert_eq!(
            names.insert("farewell", Path::new("cases/b.yaml")),
            first("cases/b.yaml")
        );
        // Many names: the table grows and still finds each one.
        for i in 0..10_000 {
            assert_eq!(
                names.insert(&format!("case {i}"), Path::new("x.yaml")),
                Ok(())
            );
        }
        assert_eq!(
            names.insert("case 9999", Path::new("y.yaml")),
            first("x.yaml")
        );
        assert_eq!(names.insert("case 10000", Path::new("y.yaml")), Ok(()));
    }

    /// Past the memory bound the records are in the file, and a duplicate of a name written
    /// there still names its file.
    #[test]
    fn names_whose_records_went_to_the_file_are_still_found() {
        let mut names = Names::default();
        let dir = "cases/".to_owned() + &"d".repeat(200);
        let count = 3 * Names::RESIDENT_BYTES / 220;
        for i in 0..count {
            let path = format!("{dir}/{i}.yaml");
            assert_eq!(names.insert(&format!("case {i}"), Path::new(&path)), Ok(()));
        }
        assert!(names.written > 0, "records went to the file");
        assert!(names.pending.len() < Names::RESIDENT_BYTES);
        for i in [0, 1, count / 2, count - 1] {
            assert_eq!(
                names.insert(&format!("case {i}"), Path::new("again.yaml")),
                first(&format!("{dir}/{i}.yaml"))
            );
        }
        assert_eq!(names.insert("case new", Path::new("new.yaml")), Ok(()));
    }
}
