//! Files evalhost writes for people to read: reports (`--out`'s `report.json`, `--junit`,
//! `--html`, `grade -o`, `report merge -o`), session logs, evidence and workspace snapshots.
//!
//! They are private, as Mino's are: a session log, a transcript or a snapshot holds what the
//! agent read, a secret among it. Files are created mode 0600 and the directories evalhost
//! creates for them 0700 (the umask can only remove more). A directory that already exists
//! keeps its mode.
//!
//! Every file is written atomically (a temp file in the same directory, then a rename), so a
//! run killed mid-suite leaves each file either absent or complete, never half written.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Mode of every file written here.
pub(crate) const FILE_MODE: u32 = 0o600;
/// Mode of a workspace snapshot's file that its owner could execute.
pub(crate) const EXECUTABLE_MODE: u32 = 0o700;
/// Mode of every directory created here.
pub(crate) const DIR_MODE: u32 = 0o700;

/// Write `path` so that it is either absent, its old content, or all of `bytes`, never half
/// written: the bytes go to a temp file in the same directory, renamed over `path` once
/// complete. (Atomic against the process being killed; a power loss may still lose the file.)
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, |out| out.write_all(bytes))
}

/// [`write`] of what `write_to` writes, through a buffer: a large file (the JSON report of a
/// suite of 100,000 cases) is never held whole in memory.
pub fn write_with(
    path: &Path,
    write_to: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut temp = temp_beside(path)?;
    {
        let mut out = std::io::BufWriter::new(temp.as_file_mut());
        write_to(&mut out)?;
        out.flush()?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Copy the opened file `source` to the new file `to` (not atomically: for files inside a
/// directory that is itself renamed into place once complete), mode 0600, or 0700 when
/// `source` is executable by its owner (a script the agent wrote stays runnable). Copies at
/// most `limit` + 1 bytes and returns how many it copied (more than `limit`: the source is
/// over it).
pub(crate) fn copy_new_from(source: std::fs::File, to: &Path, limit: u64) -> std::io::Result<u64> {
    use std::io::Read;
    let executable = source.metadata()?.permissions().mode() & 0o100 != 0;
    let mut dest = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if executable {
            EXECUTABLE_MODE
        } else {
            FILE_MODE
        })
        .open(to)?;
    std::io::copy(&mut source.take(limit.saturating_add(1)), &mut dest)
}

/// Create `dir` and its missing parents, each mode 0700.
pub fn create_dir_all(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
}

/// A temp file in `path`'s directory (a rename across file systems would not be atomic),
/// mode 0600, named `.<file>.XXXXXX.tmp` so that a leftover one is recognisably not a result.
fn temp_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(FILE_MODE))
        .tempfile_in(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn files_are_0600_directories_0700_and_an_old_file_is_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        create_dir_all(&dir).unwrap();
        assert_eq!((mode(&tmp.path().join("a")), mode(&dir)), (0o700, 0o700));
        let file = dir.join("report.json");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        write(&file, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(mode(&file), 0o600);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temp file left"
        );
    }

    #[test]
    fn a_copied_executable_stays_executable_by_its_owner_only() {
        let tmp = tempfile::tempdir().unwrap();
        let script = tmp.path().join("run.sh");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let plain = tmp.path().join("notes.md");
        std::fs::write(&plain, "hi").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o664)).unwrap();
        let open = |p: &Path| std::fs::File::open(p).unwrap();
        let copied = copy_new_from(open(&script), &tmp.path().join("run.copy"), 100).unwrap();
        assert_eq!(copied, 10);
        // At most the limit and one byte, which tells the caller the source is over it.
        let copied = copy_new_from(open(&plain), &tmp.path().join("notes.copy"), 1).unwrap();
        assert_eq!(copied, 2);
        assert_eq!(mode(&tmp.path().join("run.copy")), 0o700);
        assert_eq!(mode(&tmp.path().join("notes.copy")), 0o600);
    }
}
