//! The names of the cases a suite has loaded so far, each with the file that defined it: the
//! duplicate-name check of loading ([`super::load_each`]). Held compactly — every name and
//! path back to back in one buffer, a table of positions — because the check outlives each
//! case: as a map of small strings it held ~130 bytes a case (13 MB at 100,000 generated
//! cases), this ~85 plus its buffers' room to grow (11.7 MB there, heaptrack).

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
    entries: Vec<Entry>,
    /// Indices into `entries`, by the hash of their name.
    table: HashTable<u32>,
    hasher: std::hash::RandomState,
}

/// Where one name and its path are in [`Names::text`].
struct Entry {
    start: usize,
    name_len: u32,
    path_len: u32,
}

impl Names {
    /// Add `name`, defined in `path`; when an earlier case already had the name, nothing is
    /// added and the earlier case's path is returned.
    pub(super) fn insert(&mut self, name: &str, path: &Path) -> Result<(), &Path> {
        let hash = self.hasher.hash_one(name.as_bytes());
        let Self {
            text,
            entries,
            table,
            hasher,
        } = self;
        let found = table.find(hash, |&i| {
            entry_name(text, &entries[i as usize]) == name.as_bytes()
        });
        if let Some(&i) = found {
            return Err(entry_path(text, &entries[i as usize]));
        }
        let (Ok(index), Ok(name_len), Ok(path_len)) = (
            u32::try_from(entries.len()),
            u32::try_from(name.len()),
            u32::try_from(path.as_os_str().len()),
        ) else {
            // Past 4 billion cases or a 4 GiB name: such a suite never loads this far.
            return Ok(());
        };
        entries.push(Entry {
            start: text.len(),
            name_len,
            path_len,
        });
        text.extend_from_slice(name.as_bytes());
        text.extend_from_slice(path.as_os_str().as_bytes());
        table.insert_unique(hash, index, |&i| {
            hasher.hash_one(entry_name(text, &entries[i as usize]))
        });
        Ok(())
    }
}

fn entry_name<'a>(text: &'a [u8], entry: &Entry) -> &'a [u8] {
    &text[entry.start..entry.start + entry.name_len as usize]
}

fn entry_path<'a>(text: &'a [u8], entry: &Entry) -> &'a Path {
    let start = entry.start + entry.name_len as usize;
    Path::new(OsStr::from_bytes(
        &text[start..start + entry.path_len as usize],
    ))
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
