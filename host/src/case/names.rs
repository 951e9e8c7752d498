//! The names of the cases a suite has loaded so far, each with the file that defined it: the
//! duplicate-name check of loading ([`super::load_each`]). Held compactly — every name and
//! path back to back in one buffer, a table of positions — because the check outlives each
//! case: as a map of small strings it held ~130 bytes a case (13 MB at 100,000 generated
//! cases), this ~90 plus its buffers' room to grow (12.2 MB there, heaptrack).

use std::ffi::OsStr;
use std::hash::BuildHasher;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use hashbrown::HashTable;

/// The names loaded so far, each with the path of the file that defined it.
#[derive(Default)]
pub(super) struct Names {
    /// Each name followed by its path, back to back.
    text: Vec<u8>,
    /// Where each name starts in `text`, and its length; its path runs from there to the next
    /// entry's start (or the end of `text`).
    entries: Vec<Entry>,
    /// Indices into `entries`, by the hash of their name.
    table: HashTable<usize>,
    hasher: std::hash::RandomState,
}

struct Entry {
    start: usize,
    name_len: usize,
}

impl Names {
    /// Add `name`, defined in `path`; when an earlier case already had the name, nothing is
    /// added and the earlier case's path is returned.
    pub(super) fn insert(&mut self, name: &str, path: &Path) -> Result<(), &Path> {
        let hash = self.hasher.hash_one(name.as_bytes());
        if let Some(&i) = self.table.find(hash, |&i| self.name(i) == name.as_bytes()) {
            return Err(self.path(i));
        }
        let index = self.entries.len();
        self.entries.push(Entry {
            start: self.text.len(),
            name_len: name.len(),
        });
        self.text.extend_from_slice(name.as_bytes());
        self.text.extend_from_slice(path.as_os_str().as_bytes());
        let Self {
            text,
            entries,
            table,
            hasher,
        } = self;
        table.insert_unique(hash, index, |&i| {
            hasher.hash_one(&text[entries[i].start..][..entries[i].name_len])
        });
        Ok(())
    }

    fn name(&self, i: usize) -> &[u8] {
        let entry = &self.entries[i];
        &self.text[entry.start..][..entry.name_len]
    }

    fn path(&self, i: usize) -> &Path {
        let entry = &self.entries[i];
        let end = self
            .entries
            .get(i + 1)
            .map_or(self.text.len(), |next| next.start);
        Path::new(OsStr::from_bytes(
            &self.text[entry.start + entry.name_len..end],
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_defined_again_names_the_first_file() {
        let mut names = Names::default();
        assert_eq!(names.insert("greeting", Path::new("cases/a.yaml")), Ok(()));
        assert_eq!(names.insert("farewell", Path::new("cases/b.yaml")), Ok(()));
        assert_eq!(names.insert("greet", Path::new("cases/c.yaml")), Ok(()));
        assert_eq!(
            names.insert("greeting", Path::new("other/a.yaml")),
            Err(Path::new("cases/a.yaml"))
        );
        assert_eq!(
            names.insert("farewell", Path::new("cases/b.yaml")),
            Err(Path::new("cases/b.yaml"))
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
            Err(Path::new("x.yaml"))
        );
        assert_eq!(names.insert("case 10000", Path::new("y.yaml")), Ok(()));
    }
}
